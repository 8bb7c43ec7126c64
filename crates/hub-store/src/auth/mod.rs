//! Persistence of the token service: users with Argon2 password hashes and roles,
//! confidential clients with hashed secrets and roles, refresh tokens (only their
//! SHA-256 is stored) grouped in families for rotation and reuse detection, and the RSA
//! signing keys. The hashing itself happens in `hub-auth`; this module stores what it
//! is given and never sees a clear-text secret.

use rusqlite::{params, Connection, OptionalExtension};

use crate::{Backend, Result, Store, StoreError};

/// A user as stored: the password hash is a PHC string (`$argon2id$…`).
#[derive(Debug, Clone, PartialEq)]
pub struct UserRecord {
    /// Stable subject id (`sub` claim), a UUID assigned at creation.
    pub id: String,
    pub username: String,
    pub password_hash: String,
    pub roles: Vec<String>,
    pub created_at: i64,
}

/// A confidential client: `secret_hash` is the hex SHA-256 of its generated secret.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRecord {
    pub client_id: String,
    pub secret_hash: String,
    pub description: String,
    pub roles: Vec<String>,
    pub created_at: i64,
}

/// One refresh token (by the SHA-256 of its value) of a login session (`family`).
#[derive(Debug, Clone, PartialEq)]
pub struct RefreshRecord {
    pub token_hash: String,
    pub family: String,
    /// The user's name, or empty for client sessions.
    pub username: String,
    pub client_id: String,
    pub scope: String,
    pub issued_at: i64,
    pub expires_at: i64,
    /// The session cannot be refreshed beyond this instant, however often it rotates.
    pub session_expires_at: i64,
}

/// What presenting a refresh token did.
#[derive(Debug, Clone, PartialEq)]
pub enum RefreshOutcome {
    /// The token was current: it is now used, `next` replaced it.
    Rotated(RefreshRecord),
    /// The token had been used before: the whole family is revoked.
    Reused,
    /// Unknown, expired or revoked.
    Invalid,
}

/// An RSA signing key: PKCS#1 DER of the private key.
#[derive(Debug, Clone, PartialEq)]
pub struct SigningKeyRecord {
    pub kid: String,
    pub private_der: Vec<u8>,
    pub created_at: i64,
}

fn roles_of(
    conn: &Connection,
    table: &str,
    key_column: &str,
    key: &str,
) -> rusqlite::Result<Vec<String>> {
    let sql = format!("SELECT role FROM {table} WHERE {key_column} = ?1 ORDER BY role");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([key], |r| r.get::<_, String>(0))?;
    rows.collect()
}

fn user_row(conn: &Connection, username: &str) -> Result<Option<UserRecord>> {
    let row = conn
        .prepare_cached(
            "SELECT id, username, password_hash, created_at FROM auth_user WHERE username = ?1",
        )?
        .query_row([username], |r| {
            Ok(UserRecord {
                id: r.get(0)?,
                username: r.get(1)?,
                password_hash: r.get(2)?,
                roles: Vec::new(),
                created_at: r.get(3)?,
            })
        })
        .optional()?;
    match row {
        Some(mut u) => {
            u.roles = roles_of(conn, "auth_user_role", "username", &u.username)?;
            Ok(Some(u))
        }
        None => Ok(None),
    }
}

fn client_row(conn: &Connection, client_id: &str) -> Result<Option<ClientRecord>> {
    let row = conn
        .prepare_cached("SELECT client_id, secret_hash, description, created_at FROM auth_client WHERE client_id = ?1")?
        .query_row([client_id], |r| {
            Ok(ClientRecord { client_id: r.get(0)?, secret_hash: r.get(1)?, description: r.get(2)?, roles: Vec::new(), created_at: r.get(3)? })
        })
        .optional()?;
    match row {
        Some(mut c) => {
            c.roles = roles_of(conn, "auth_client_role", "client_id", &c.client_id)?;
            Ok(Some(c))
        }
        None => Ok(None),
    }
}

fn insert_user(conn: &Connection, user: &UserRecord, replace: bool) -> Result<()> {
    let verb = if replace {
        "INSERT OR REPLACE"
    } else {
        "INSERT"
    };
    conn.execute(
        &format!("{verb} INTO auth_user (id, username, password_hash, created_at) VALUES (?1, ?2, ?3, ?4)"),
        params![user.id, user.username, user.password_hash, user.created_at],
    )
    .map_err(|e| conflict(e, &format!("user '{}' exists already", user.username)))?;
    conn.execute(
        "DELETE FROM auth_user_role WHERE username = ?1",
        [&user.username],
    )?;
    for role in &user.roles {
        conn.execute(
            "INSERT OR IGNORE INTO auth_user_role (username, role) VALUES (?1, ?2)",
            params![user.username, role],
        )?;
    }
    Ok(())
}

fn insert_client(conn: &Connection, client: &ClientRecord, replace: bool) -> Result<()> {
    let verb = if replace {
        "INSERT OR REPLACE"
    } else {
        "INSERT"
    };
    conn.execute(
        &format!("{verb} INTO auth_client (client_id, secret_hash, description, created_at) VALUES (?1, ?2, ?3, ?4)"),
        params![client.client_id, client.secret_hash, client.description, client.created_at],
    )
    .map_err(|e| conflict(e, &format!("client '{}' exists already", client.client_id)))?;
    conn.execute(
        "DELETE FROM auth_client_role WHERE client_id = ?1",
        [&client.client_id],
    )?;
    for role in &client.roles {
        conn.execute(
            "INSERT OR IGNORE INTO auth_client_role (client_id, role) VALUES (?1, ?2)",
            params![client.client_id, role],
        )?;
    }
    Ok(())
}

fn conflict(e: rusqlite::Error, message: &str) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            StoreError::Invalid(message.to_string())
        }
        other => other.into(),
    }
}

impl Store {
    /// Creates a user; an existing name is `StoreError::Invalid`.
    pub async fn auth_user_add(&self, user: UserRecord) -> Result<()> {
        match &*self.backend {
            Backend::Postgres(b) => b.auth_user_add(user).await,
            Backend::Sqlite(b) => {
                b.write(move |conn| {
                    let tx = conn.transaction()?;
                    insert_user(&tx, &user, false)?;
                    tx.commit()?;
                    Ok(())
                })
                .await
            }
        }
    }

    /// Creates or replaces users and clients in one transaction (demo principals);
    /// blocking, like the other bulk loads.
    pub fn auth_upsert_blocking(
        &self,
        users: &[UserRecord],
        clients: &[ClientRecord],
    ) -> Result<()> {
        let b = match &*self.backend {
            Backend::Postgres(b) => {
                return b.auth_upsert_blocking(users.to_vec(), clients.to_vec())
            }
            Backend::Sqlite(b) => b,
        };
        b.write_blocking(|conn| {
            let tx = conn.transaction()?;
            for u in users {
                if let Some(old) = user_row(&tx, &u.username)? {
                    // Keep the subject id stable across reloads.
                    insert_user(
                        &tx,
                        &UserRecord {
                            id: old.id,
                            ..u.clone()
                        },
                        true,
                    )?;
                } else {
                    insert_user(&tx, u, false)?;
                }
            }
            for c in clients {
                insert_client(&tx, c, true)?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    pub async fn auth_user(&self, username: &str) -> Result<Option<UserRecord>> {
        let username = username.to_string();
        match &*self.backend {
            Backend::Postgres(b) => b.auth_user(username).await,
            Backend::Sqlite(b) => b.read(move |conn| user_row(conn, &username)).await,
        }
    }

    pub async fn auth_users(&self) -> Result<Vec<UserRecord>> {
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_users().await,
            Backend::Sqlite(b) => b,
        };
        b.read(|conn| {
            let names: Vec<String> = conn
                .prepare_cached("SELECT username FROM auth_user ORDER BY username")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let mut users = Vec::with_capacity(names.len());
            for n in &names {
                // A user removed since the listing is left out.
                if let Some(u) = user_row(conn, n)? {
                    users.push(u);
                }
            }
            Ok(users)
        })
        .await
    }

    /// Removes a user, its roles and its refresh tokens. False when there was none.
    pub async fn auth_user_remove(&self, username: &str) -> Result<bool> {
        let username = username.to_string();
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_user_remove(username).await,
            Backend::Sqlite(b) => b,
        };
        b.write(move |conn| {
            let tx = conn.transaction()?;
            tx.execute(
                "DELETE FROM auth_user_role WHERE username = ?1",
                [&username],
            )?;
            tx.execute(
                "DELETE FROM auth_refresh_token WHERE username = ?1",
                [&username],
            )?;
            let n = tx.execute("DELETE FROM auth_user WHERE username = ?1", [&username])?;
            tx.commit()?;
            Ok(n > 0)
        })
        .await
    }

    /// Replaces a user's password hash and ends its sessions. False when no such user.
    pub async fn auth_user_set_password(
        &self,
        username: &str,
        password_hash: String,
    ) -> Result<bool> {
        let username = username.to_string();
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_user_set_password(username, password_hash).await,
            Backend::Sqlite(b) => b,
        };
        b.write(move |conn| {
            let tx = conn.transaction()?;
            let n = tx.execute(
                "UPDATE auth_user SET password_hash = ?2 WHERE username = ?1",
                params![username, password_hash],
            )?;
            tx.execute(
                "UPDATE auth_refresh_token SET revoked = 1 WHERE username = ?1",
                [&username],
            )?;
            tx.commit()?;
            Ok(n > 0)
        })
        .await
    }

    /// Adds (`grant = true`) or removes roles of a user. False when no such user.
    pub async fn auth_user_roles(
        &self,
        username: &str,
        roles: Vec<String>,
        grant: bool,
    ) -> Result<bool> {
        let username = username.to_string();
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_user_roles(username, roles, grant).await,
            Backend::Sqlite(b) => b,
        };
        b.write(move |conn| {
            let tx = conn.transaction()?;
            if user_row(&tx, &username)?.is_none() {
                return Ok(false);
            }
            for role in &roles {
                if grant {
                    tx.execute(
                        "INSERT OR IGNORE INTO auth_user_role (username, role) VALUES (?1, ?2)",
                        params![username, role],
                    )?;
                } else {
                    tx.execute(
                        "DELETE FROM auth_user_role WHERE username = ?1 AND role = ?2",
                        params![username, role],
                    )?;
                }
            }
            tx.commit()?;
            Ok(true)
        })
        .await
    }

    /// Creates a client; an existing id is `StoreError::Invalid`.
    pub async fn auth_client_add(&self, client: ClientRecord) -> Result<()> {
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_client_add(client).await,
            Backend::Sqlite(b) => b,
        };
        b.write(move |conn| {
            let tx = conn.transaction()?;
            insert_client(&tx, &client, false)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    pub async fn auth_client(&self, client_id: &str) -> Result<Option<ClientRecord>> {
        let client_id = client_id.to_string();
        match &*self.backend {
            Backend::Postgres(b) => b.auth_client(client_id).await,
            Backend::Sqlite(b) => b.read(move |conn| client_row(conn, &client_id)).await,
        }
    }

    pub async fn auth_clients(&self) -> Result<Vec<ClientRecord>> {
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_clients().await,
            Backend::Sqlite(b) => b,
        };
        b.read(|conn| {
            let ids: Vec<String> = conn
                .prepare_cached("SELECT client_id FROM auth_client ORDER BY client_id")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let mut clients = Vec::with_capacity(ids.len());
            for id in &ids {
                // A client removed since the listing is left out.
                if let Some(c) = client_row(conn, id)? {
                    clients.push(c);
                }
            }
            Ok(clients)
        })
        .await
    }

    /// Removes a client, its roles and its refresh tokens. False when there was none.
    pub async fn auth_client_remove(&self, client_id: &str) -> Result<bool> {
        let client_id = client_id.to_string();
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_client_remove(client_id).await,
            Backend::Sqlite(b) => b,
        };
        b.write(move |conn| {
            let tx = conn.transaction()?;
            tx.execute(
                "DELETE FROM auth_client_role WHERE client_id = ?1",
                [&client_id],
            )?;
            tx.execute(
                "DELETE FROM auth_refresh_token WHERE client_id = ?1",
                [&client_id],
            )?;
            let n = tx.execute("DELETE FROM auth_client WHERE client_id = ?1", [&client_id])?;
            tx.commit()?;
            Ok(n > 0)
        })
        .await
    }

    /// Stores a new refresh token (the first of a session).
    pub async fn auth_refresh_insert(&self, record: RefreshRecord) -> Result<()> {
        match &*self.backend {
            Backend::Postgres(b) => b.auth_refresh_insert(record).await,
            Backend::Sqlite(b) => b.write(move |conn| insert_refresh(conn, &record)).await,
        }
    }

    /// Atomically checks the presented token (by hash) and rotates it: a current token is
    /// marked used and `next` (built from the old record) is stored in the same family; a
    /// token used before revokes its whole family (reuse of a stolen token).
    /// A token presented by another client than the one it was issued to is `Invalid`
    /// and left untouched.
    pub async fn auth_refresh_rotate<F>(
        &self,
        token_hash: String,
        client_id: String,
        now: i64,
        next: F,
    ) -> Result<RefreshOutcome>
    where
        F: FnOnce(&RefreshRecord) -> RefreshRecord + Send + 'static,
    {
        let b = match &*self.backend {
            Backend::Postgres(b) => {
                return b
                    .auth_refresh_rotate(token_hash, client_id, now, next)
                    .await
            }
            Backend::Sqlite(b) => b,
        };
        b.write(move |conn| {
            let tx = conn.transaction()?;
            let row = tx
                .query_row(
                    "SELECT token_hash, family, username, client_id, scope, issued_at, expires_at, session_expires_at, used_at, revoked \
                     FROM auth_refresh_token WHERE token_hash = ?1",
                    [&token_hash],
                    |r| {
                        Ok((
                            RefreshRecord {
                                token_hash: r.get(0)?,
                                family: r.get(1)?,
                                username: r.get(2)?,
                                client_id: r.get(3)?,
                                scope: r.get(4)?,
                                issued_at: r.get(5)?,
                                expires_at: r.get(6)?,
                                session_expires_at: r.get(7)?,
                            },
                            r.get::<_, Option<i64>>(8)?,
                            r.get::<_, bool>(9)?,
                        ))
                    },
                )
                .optional()?;
            let outcome = match row {
                None => RefreshOutcome::Invalid,
                Some((_, _, true)) => RefreshOutcome::Invalid,
                Some((old, _, _)) if old.client_id != client_id => RefreshOutcome::Invalid,
                Some((old, Some(_), false)) => {
                    tx.execute("UPDATE auth_refresh_token SET revoked = 1 WHERE family = ?1", [&old.family])?;
                    RefreshOutcome::Reused
                }
                Some((old, None, false)) if old.expires_at <= now || old.session_expires_at <= now => RefreshOutcome::Invalid,
                Some((old, None, false)) => {
                    let new = next(&old);
                    tx.execute("UPDATE auth_refresh_token SET used_at = ?2 WHERE token_hash = ?1", params![old.token_hash, now])?;
                    insert_refresh(&tx, &new)?;
                    RefreshOutcome::Rotated(new)
                }
            };
            // Housekeeping: sessions over for a day are forgotten.
            tx.execute("DELETE FROM auth_refresh_token WHERE session_expires_at < ?1", [now - 86_400])?;
            tx.commit()?;
            Ok(outcome)
        })
        .await
    }

    /// Signing keys, newest first.
    pub async fn auth_signing_keys(&self) -> Result<Vec<SigningKeyRecord>> {
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_signing_keys().await,
            Backend::Sqlite(b) => b,
        };
        b.read(|conn| {
            let mut stmt = conn.prepare_cached("SELECT kid, private_der, created_at FROM auth_signing_key ORDER BY created_at DESC, rowid DESC")?;
            let rows = stmt.query_map([], |r| Ok(SigningKeyRecord { kid: r.get(0)?, private_der: r.get(1)?, created_at: r.get(2)? }))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    /// Stores a new signing key, keeping only the `keep` newest (the active one and
    /// its predecessors, which stay in the JWKS so tokens signed before a rotation verify).
    pub async fn auth_signing_key_insert(&self, key: SigningKeyRecord, keep: usize) -> Result<()> {
        let b = match &*self.backend {
            Backend::Postgres(b) => return b.auth_signing_key_insert(key, keep).await,
            Backend::Sqlite(b) => b,
        };
        b.write(move |conn| {
            let tx = conn.transaction()?;
            tx.execute(
                "INSERT INTO auth_signing_key (kid, private_der, created_at) VALUES (?1, ?2, ?3)",
                params![key.kid, key.private_der, key.created_at],
            )?;
            tx.execute(
                "DELETE FROM auth_signing_key WHERE kid NOT IN (SELECT kid FROM auth_signing_key ORDER BY created_at DESC, rowid DESC LIMIT ?1)",
                [keep as i64],
            )?;
            tx.commit()?;
            Ok(())
        })
        .await
    }
}

fn insert_refresh(conn: &Connection, r: &RefreshRecord) -> Result<()> {
    conn.execute(
        "INSERT INTO auth_refresh_token (token_hash, family, username, client_id, scope, issued_at, expires_at, session_expires_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![r.token_hash, r.family, r.username, r.client_id, r.scope, r.issued_at, r.expires_at, r.session_expires_at],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refresh(hash: &str, family: &str, now: i64) -> RefreshRecord {
        RefreshRecord {
            token_hash: hash.into(),
            family: family.into(),
            username: "u".into(),
            client_id: "c".into(),
            scope: "openid".into(),
            issued_at: now,
            expires_at: now + 100,
            session_expires_at: now + 1000,
        }
    }

    #[tokio::test]
    async fn refresh_tokens_rotate_once_and_reuse_revokes_the_family() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_for_tests(dir.path()).unwrap();
        store
            .auth_refresh_insert(refresh("h1", "f", 0))
            .await
            .unwrap();
        let out = store
            .auth_refresh_rotate("h1".into(), "c".into(), 10, |_| refresh("h2", "f", 10))
            .await
            .unwrap();
        assert!(matches!(out, RefreshOutcome::Rotated(ref r) if r.token_hash == "h2"));
        assert_eq!(
            store
                .auth_refresh_rotate("h1".into(), "c".into(), 11, |_| refresh("h3", "f", 11))
                .await
                .unwrap(),
            RefreshOutcome::Reused
        );
        // The successor was revoked with its family.
        assert_eq!(
            store
                .auth_refresh_rotate("h2".into(), "c".into(), 12, |_| refresh("h4", "f", 12))
                .await
                .unwrap(),
            RefreshOutcome::Invalid
        );
        assert_eq!(
            store
                .auth_refresh_rotate("nope".into(), "c".into(), 12, |_| refresh("h5", "f", 12))
                .await
                .unwrap(),
            RefreshOutcome::Invalid
        );
    }

    #[tokio::test]
    async fn users_roles_and_duplicate_names() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_for_tests(dir.path()).unwrap();
        let user = UserRecord {
            id: "1".into(),
            username: "ann".into(),
            password_hash: "h".into(),
            roles: vec!["B".into(), "A".into()],
            created_at: 0,
        };
        store.auth_user_add(user.clone()).await.unwrap();
        assert!(matches!(
            store.auth_user_add(user).await,
            Err(StoreError::Invalid(_))
        ));
        assert!(store
            .auth_user_roles("ann", vec!["C".into()], true)
            .await
            .unwrap());
        assert!(store
            .auth_user_roles("ann", vec!["A".into()], false)
            .await
            .unwrap());
        assert_eq!(
            store.auth_user("ann").await.unwrap().unwrap().roles,
            ["B", "C"]
        );
        assert!(store.auth_user_remove("ann").await.unwrap());
        assert!(store.auth_user("ann").await.unwrap().is_none());
    }

    /// Two stores on one PostgreSQL database stand for two `hub serve` processes; each
    /// round presents one refresh token through both at once.
    #[test]
    fn concurrent_rotations_of_one_token_rotate_once_and_revoke_the_family() {
        let admin = match std::env::var("HUB_TEST_DATABASE") {
            Ok(url) if !url.trim().is_empty() => url.trim().to_string(),
            _ => {
                println!(
                    "skipped: racing refresh rotations needs PostgreSQL (set HUB_TEST_DATABASE)"
                );
                return;
            }
        };
        let name = format!("hub_test_race_{}", std::process::id());
        let url = crate::postgres::create_database(&admin, &name, true).unwrap();
        let a = Store::open_postgres(&url, None).unwrap();
        let b = Store::open_postgres(&url, None).unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            for round in 0..25 {
                let family = format!("f{round}");
                let first = format!("{family}-h1");
                a.auth_refresh_insert(refresh(&first, &family, 0))
                    .await
                    .unwrap();
                let (next_a, next_b) = (format!("{family}-a"), format!("{family}-b"));
                let fam_a = family.clone();
                let fam_b = family.clone();
                let ra = a.auth_refresh_rotate(first.clone(), "c".into(), 10, move |_| {
                    refresh(&next_a, &fam_a, 10)
                });
                let rb = b.auth_refresh_rotate(first.clone(), "c".into(), 10, move |_| {
                    refresh(&next_b, &fam_b, 10)
                });
                // Each store runs its half on its own runtime and connection.
                let (ra, rb) = tokio::join!(ra, rb);
                let outcomes = [ra.unwrap(), rb.unwrap()];
                let rotated: Vec<&RefreshRecord> = outcomes
                    .iter()
                    .filter_map(|o| match o {
                        RefreshOutcome::Rotated(r) => Some(r),
                        _ => None,
                    })
                    .collect();
                assert_eq!(
                    rotated.len(),
                    1,
                    "round {round}: exactly one rotation succeeds: {outcomes:?}"
                );
                assert!(
                    outcomes.contains(&RefreshOutcome::Reused),
                    "round {round}: the other is reuse: {outcomes:?}"
                );
                // Reuse revoked the whole family, the successor just issued included.
                let successor = rotated[0].token_hash.clone();
                let again = a
                    .auth_refresh_rotate(successor, "c".into(), 11, move |_| {
                        refresh("never", "f", 11)
                    })
                    .await
                    .unwrap();
                assert_eq!(
                    again,
                    RefreshOutcome::Invalid,
                    "round {round}: the successor is revoked"
                );

                // A used token presented while its successor rotates: the reuse revokes
                // the family, including whatever that rotation issues.
                let family = format!("g{round}");
                let (h0, h1) = (format!("{family}-h0"), format!("{family}-h1"));
                a.auth_refresh_insert(refresh(&h0, &family, 0))
                    .await
                    .unwrap();
                let (h1_next, fam) = (h1.clone(), family.clone());
                let out = a
                    .auth_refresh_rotate(h0.clone(), "c".into(), 5, move |_| {
                        refresh(&h1_next, &fam, 5)
                    })
                    .await
                    .unwrap();
                assert!(matches!(out, RefreshOutcome::Rotated(_)));
                let (h2, fam) = (format!("{family}-h2"), family.clone());
                let (h0_next, fam0) = (format!("{family}-x"), family.clone());
                let (rotation, reuse) = tokio::join!(
                    a.auth_refresh_rotate(h1.clone(), "c".into(), 10, move |_| refresh(
                        &h2, &fam, 10
                    )),
                    b.auth_refresh_rotate(h0.clone(), "c".into(), 10, move |_| refresh(
                        &h0_next, &fam0, 10
                    )),
                );
                assert_eq!(reuse.unwrap(), RefreshOutcome::Reused, "round {round}");
                match rotation.unwrap() {
                    RefreshOutcome::Rotated(r) => {
                        let again = a
                            .auth_refresh_rotate(r.token_hash, "c".into(), 11, move |_| {
                                refresh("never", "g", 11)
                            })
                            .await
                            .unwrap();
                        assert_eq!(
                            again,
                            RefreshOutcome::Invalid,
                            "round {round}: the concurrent successor is revoked"
                        );
                    }
                    other => assert_eq!(other, RefreshOutcome::Invalid, "round {round}"),
                }
            }
        });
        drop((a, b));
        rt.shutdown_background();
    }
}
