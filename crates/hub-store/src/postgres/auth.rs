//! The token service's tables on PostgreSQL: [`PgAuth`] implements
//! [`AuthRepo`] by moving rows; every decision is `crate::auth`'s, the same functions
//! the SQLite backend calls.
//!
//! Several processes share the database, so what one SQLite writer serialises for free
//! is done with locks here, always taken in the same order (user row, client row,
//! session family, token row) so that they cannot deadlock:
//! - rotating a refresh token holds the family's advisory lock and the token's row lock,
//!   so of two presentations of one token exactly one rotates and the other sees it used
//!   (reuse: the whole family is revoked, including the successor just committed);
//! - it also holds a share lock on its user's and client's rows, so a password change or
//!   a removal (which lock those rows first) never misses a token rotated concurrently;
//! - housekeeping skips rows another transaction holds.
//!
//! Every auth query, reads included, goes to the primary, never to a read replica: a
//! removed user or a changed password must take effect at once, not after the
//! replica's lag.
//!
//! Owns: the PostgreSQL statements and locks of the auth tables. Must not: decide
//! (rotation, retention).

use std::sync::Arc;

use tokio_postgres::error::SqlState;
use tokio_postgres::Row;

use super::{PgBackend, Queries, Tx};
use crate::auth::{
    client_exists, decide_rotation, forget_sessions_ended_before, retired_signing_keys,
    user_exists, AuthRepo, ClientRecord, NextRefresh, RefreshOutcome, RefreshPresentation,
    RefreshRecord, RoleChange, Rotation, SigningKeyRecord, StoredRefresh, UserRecord,
};
use crate::{Result, StoreError};

/// Class of the two-key advisory locks that serialise work on one refresh-token family
/// (the migration lock uses the one-key space, which is distinct).
const FAMILY_LOCK_CLASS: i32 = 0x4855_4241; // "HUBA"

/// [`AuthRepo`] on the PostgreSQL backend.
pub(crate) struct PgAuth {
    db: Arc<PgBackend>,
}

impl PgAuth {
    pub(crate) fn new(db: Arc<PgBackend>) -> Self {
        PgAuth { db }
    }
}

/// A unique violation is the caller's conflict (`StoreError::Invalid`), like SQLite's
/// constraint violations.
fn conflict(e: tokio_postgres::Error, conflict: impl FnOnce() -> StoreError) -> StoreError {
    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        conflict()
    } else {
        e.into()
    }
}

async fn roles_of<C: Queries>(conn: &C, sql: &str, key: &str) -> Result<Vec<String>> {
    let stmt = conn.prepare_cached(sql).await?;
    Ok(conn
        .query(&stmt, &[&key])
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?)
}

async fn user_row<C: Queries>(conn: &C, username: &str) -> Result<Option<UserRecord>> {
    let stmt = conn
        .prepare_cached(
            "SELECT id, username, password_hash, created_at FROM auth_user WHERE username = $1",
        )
        .await?;
    match conn.query_opt(&stmt, &[&username]).await? {
        Some(r) => {
            let username: String = r.try_get(1)?;
            let roles = roles_of(
                conn,
                "SELECT role FROM auth_user_role WHERE username = $1 ORDER BY role",
                &username,
            )
            .await?;
            Ok(Some(UserRecord {
                id: r.try_get(0)?,
                username,
                password_hash: r.try_get(2)?,
                roles,
                created_at: r.try_get(3)?,
            }))
        }
        None => Ok(None),
    }
}

async fn client_row<C: Queries>(conn: &C, client_id: &str) -> Result<Option<ClientRecord>> {
    let stmt = conn.prepare_cached("SELECT client_id, secret_hash, description, created_at FROM auth_client WHERE client_id = $1").await?;
    match conn.query_opt(&stmt, &[&client_id]).await? {
        Some(r) => {
            let client_id: String = r.try_get(0)?;
            let roles = roles_of(
                conn,
                "SELECT role FROM auth_client_role WHERE client_id = $1 ORDER BY role",
                &client_id,
            )
            .await?;
            Ok(Some(ClientRecord {
                client_id,
                secret_hash: r.try_get(1)?,
                description: r.try_get(2)?,
                roles,
                created_at: r.try_get(3)?,
            }))
        }
        None => Ok(None),
    }
}

/// Inserts `user`, or with `replace` updates the user of that name keeping its id (the
/// only use of replacing: SQLite's caller passes the old id back in), and sets its roles.
async fn insert_user(tx: &Tx<'_>, user: &UserRecord, replace: bool) -> Result<()> {
    let sql = if replace {
        "INSERT INTO auth_user (id, username, password_hash, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (username) DO UPDATE SET password_hash = EXCLUDED.password_hash, created_at = EXCLUDED.created_at"
    } else {
        "INSERT INTO auth_user (id, username, password_hash, created_at) VALUES ($1, $2, $3, $4)"
    };
    tx.execute(
        sql,
        &[
            &user.id,
            &user.username,
            &user.password_hash,
            &user.created_at,
        ],
    )
    .await
    .map_err(|e| conflict(e, || user_exists(&user.username)))?;
    tx.execute(
        "DELETE FROM auth_user_role WHERE username = $1",
        &[&user.username],
    )
    .await?;
    grant(
        tx,
        "INSERT INTO auth_user_role (username, role) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &user.username,
        &user.roles,
    )
    .await
}

async fn insert_client(tx: &Tx<'_>, client: &ClientRecord, replace: bool) -> Result<()> {
    let sql = if replace {
        "INSERT INTO auth_client (client_id, secret_hash, description, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (client_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, description = EXCLUDED.description, created_at = EXCLUDED.created_at"
    } else {
        "INSERT INTO auth_client (client_id, secret_hash, description, created_at) VALUES ($1, $2, $3, $4)"
    };
    tx.execute(
        sql,
        &[
            &client.client_id,
            &client.secret_hash,
            &client.description,
            &client.created_at,
        ],
    )
    .await
    .map_err(|e| conflict(e, || client_exists(&client.client_id)))?;
    tx.execute(
        "DELETE FROM auth_client_role WHERE client_id = $1",
        &[&client.client_id],
    )
    .await?;
    grant(
        tx,
        "INSERT INTO auth_client_role (client_id, role) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &client.client_id,
        &client.roles,
    )
    .await
}

async fn grant(tx: &Tx<'_>, sql: &str, key: &str, roles: &[String]) -> Result<()> {
    if roles.is_empty() {
        return Ok(());
    }
    let stmt = tx.prepare_cached(sql).await?;
    for role in roles {
        tx.execute(&stmt, &[&key, role]).await?;
    }
    Ok(())
}

async fn insert_refresh<C: Queries>(conn: &C, r: &RefreshRecord) -> Result<()> {
    let stmt = conn
        .prepare_cached(
            "INSERT INTO auth_refresh_token (token_hash, family, username, client_id, scope, issued_at, expires_at, session_expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .await?;
    conn.execute(
        &stmt,
        &[
            &r.token_hash,
            &r.family,
            &r.username,
            &r.client_id,
            &r.scope,
            &r.issued_at,
            &r.expires_at,
            &r.session_expires_at,
        ],
    )
    .await?;
    Ok(())
}

fn refresh_record(r: &Row) -> Result<RefreshRecord> {
    Ok(RefreshRecord {
        token_hash: r.try_get(0)?,
        family: r.try_get(1)?,
        username: r.try_get(2)?,
        client_id: r.try_get(3)?,
        scope: r.try_get(4)?,
        issued_at: r.try_get(5)?,
        expires_at: r.try_get(6)?,
        session_expires_at: r.try_get(7)?,
    })
}

#[async_trait::async_trait]
impl AuthRepo for PgAuth {
    async fn user_add(&self, user: UserRecord) -> Result<()> {
        self.db
            .write(move |mut conn| async move {
                let tx = conn.transaction().await?;
                insert_user(&tx, &user, false).await?;
                tx.commit().await?;
                Ok(())
            })
            .await
    }

    fn upsert_blocking(&self, users: &[UserRecord], clients: &[ClientRecord]) -> Result<()> {
        let (users, clients) = (users.to_vec(), clients.to_vec());
        self.db.write_blocking(move |mut conn| async move {
            let tx = conn.transaction().await?;
            // Upserting by name keeps the subject id of an existing user stable.
            for u in &users {
                insert_user(&tx, u, true).await?;
            }
            for c in &clients {
                insert_client(&tx, c, true).await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    async fn user(&self, username: &str) -> Result<Option<UserRecord>> {
        let username = username.to_string();
        self.db
            .write(move |conn| async move { user_row(&conn, &username).await })
            .await
    }

    async fn users(&self) -> Result<Vec<UserRecord>> {
        self.db.write(|conn| async move {
            let rows = conn
                .query(
                    "SELECT u.id, u.username, u.password_hash, u.created_at, \
                            COALESCE(array_agg(r.role ORDER BY r.role) FILTER (WHERE r.role IS NOT NULL), '{}') \
                     FROM auth_user u LEFT JOIN auth_user_role r ON r.username = u.username \
                     GROUP BY u.username ORDER BY u.username",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(UserRecord { id: r.try_get(0)?, username: r.try_get(1)?, password_hash: r.try_get(2)?, created_at: r.try_get(3)?, roles: r.try_get(4)? })
                })
                .collect()
        })
        .await
    }

    async fn user_remove(&self, username: &str) -> Result<bool> {
        let username = username.to_string();
        self.db
            .write(move |mut conn| async move {
                let tx = conn.transaction().await?;
                // The user row first: it waits for rotations of the user's tokens in flight,
                // so the token deletion below sees their successors.
                let n = tx
                    .execute("DELETE FROM auth_user WHERE username = $1", &[&username])
                    .await?;
                tx.execute(
                    "DELETE FROM auth_refresh_token WHERE username = $1",
                    &[&username],
                )
                .await?;
                tx.execute(
                    "DELETE FROM auth_user_role WHERE username = $1",
                    &[&username],
                )
                .await?;
                tx.commit().await?;
                Ok(n > 0)
            })
            .await
    }

    async fn user_set_password(&self, username: &str, password_hash: String) -> Result<bool> {
        let username = username.to_string();
        self.db
            .write(move |mut conn| async move {
                let tx = conn.transaction().await?;
                let n = tx
                    .execute(
                        "UPDATE auth_user SET password_hash = $2 WHERE username = $1",
                        &[&username, &password_hash],
                    )
                    .await?;
                tx.execute(
                "UPDATE auth_refresh_token SET revoked = true WHERE username = $1 AND NOT revoked",
                &[&username],
            )
            .await?;
                tx.commit().await?;
                Ok(n > 0)
            })
            .await
    }

    async fn user_roles(
        &self,
        username: &str,
        roles: Vec<String>,
        change: RoleChange,
    ) -> Result<bool> {
        let username = username.to_string();
        self.db.write(move |mut conn| async move {
            let tx = conn.transaction().await?;
            // Locking the user row keeps a concurrent removal from leaving roles behind.
            if tx.query_opt("SELECT 1 FROM auth_user WHERE username = $1 FOR SHARE", &[&username]).await?.is_none() {
                return Ok(false);
            }
            if change == RoleChange::Grant {
                grant(&tx, "INSERT INTO auth_user_role (username, role) VALUES ($1, $2) ON CONFLICT DO NOTHING", &username, &roles).await?;
            } else {
                tx.execute("DELETE FROM auth_user_role WHERE username = $1 AND role = ANY($2)", &[&username, &roles]).await?;
            }
            tx.commit().await?;
            Ok(true)
        })
        .await
    }

    async fn client_add(&self, client: ClientRecord) -> Result<()> {
        self.db
            .write(move |mut conn| async move {
                let tx = conn.transaction().await?;
                insert_client(&tx, &client, false).await?;
                tx.commit().await?;
                Ok(())
            })
            .await
    }

    async fn client(&self, client_id: &str) -> Result<Option<ClientRecord>> {
        let client_id = client_id.to_string();
        self.db
            .write(move |conn| async move { client_row(&conn, &client_id).await })
            .await
    }

    async fn clients(&self) -> Result<Vec<ClientRecord>> {
        self.db.write(|conn| async move {
            let rows = conn
                .query(
                    "SELECT c.client_id, c.secret_hash, c.description, c.created_at, \
                            COALESCE(array_agg(r.role ORDER BY r.role) FILTER (WHERE r.role IS NOT NULL), '{}') \
                     FROM auth_client c LEFT JOIN auth_client_role r ON r.client_id = c.client_id \
                     GROUP BY c.client_id ORDER BY c.client_id",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(ClientRecord { client_id: r.try_get(0)?, secret_hash: r.try_get(1)?, description: r.try_get(2)?, created_at: r.try_get(3)?, roles: r.try_get(4)? })
                })
                .collect()
        })
        .await
    }

    async fn client_remove(&self, client_id: &str) -> Result<bool> {
        let client_id = client_id.to_string();
        self.db
            .write(move |mut conn| async move {
                let tx = conn.transaction().await?;
                // The client row first, for the same reason as a user's.
                let n = tx
                    .execute(
                        "DELETE FROM auth_client WHERE client_id = $1",
                        &[&client_id],
                    )
                    .await?;
                tx.execute(
                    "DELETE FROM auth_refresh_token WHERE client_id = $1",
                    &[&client_id],
                )
                .await?;
                tx.execute(
                    "DELETE FROM auth_client_role WHERE client_id = $1",
                    &[&client_id],
                )
                .await?;
                tx.commit().await?;
                Ok(n > 0)
            })
            .await
    }

    async fn refresh_insert(&self, record: RefreshRecord) -> Result<()> {
        self.db
            .write(move |conn| async move { insert_refresh(&conn, &record).await })
            .await
    }

    async fn refresh_rotate(
        &self,
        presented: RefreshPresentation,
        next: NextRefresh,
    ) -> Result<RefreshOutcome> {
        self.db.write(move |mut conn| async move {
            let RefreshPresentation { token_hash, client_id, now } = presented;
            let tx = conn.transaction().await?;
            // Who the token belongs to never changes, so it may be read before locking.
            let owner = tx
                .query_opt("SELECT family, username, client_id FROM auth_refresh_token WHERE token_hash = $1", &[&token_hash])
                .await?;
            let stored = match owner {
                None => None,
                Some(owner) => {
                    let (family, username, owner_client): (String, String, String) = (owner.try_get(0)?, owner.try_get(1)?, owner.try_get(2)?);
                    tx.execute("SELECT 1 FROM auth_user WHERE username = $1 FOR SHARE", &[&username]).await?;
                    tx.execute("SELECT 1 FROM auth_client WHERE client_id = $1 FOR SHARE", &[&owner_client]).await?;
                    tx.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", &[&FAMILY_LOCK_CLASS, &family]).await?;
                    // Read again under the locks: a rotation that held them before has committed.
                    let row = tx
                        .query_opt(
                            "SELECT token_hash, family, username, client_id, scope, issued_at, expires_at, session_expires_at, used_at, revoked \
                             FROM auth_refresh_token WHERE token_hash = $1 FOR UPDATE",
                            &[&token_hash],
                        )
                        .await?;
                    match row {
                        Some(r) => Some(StoredRefresh { record: refresh_record(&r)?, used_at: r.try_get(8)?, revoked: r.try_get(9)? }),
                        None => None,
                    }
                }
            };
            let outcome = match (decide_rotation(stored.as_ref(), &client_id, now), stored) {
                (Rotation::Rotate, Some(stored)) => {
                    let old = stored.record;
                    let new = next(&old);
                    tx.execute("UPDATE auth_refresh_token SET used_at = $2 WHERE token_hash = $1", &[&old.token_hash, &now]).await?;
                    insert_refresh(&tx, &new).await?;
                    RefreshOutcome::Rotated(new)
                }
                (Rotation::ReuseDetected, Some(stored)) => {
                    tx.execute("UPDATE auth_refresh_token SET revoked = true WHERE family = $1", &[&stored.record.family]).await?;
                    RefreshOutcome::Reused
                }
                (refused, _) => refused.refused(),
            };
            // Housekeeping: ended sessions are forgotten. Rows another transaction holds
            // are left for a later pass rather than waited for.
            tx.execute(
                "DELETE FROM auth_refresh_token WHERE token_hash IN \
                 (SELECT token_hash FROM auth_refresh_token WHERE session_expires_at < $1 FOR UPDATE SKIP LOCKED)",
                &[&forget_sessions_ended_before(now)],
            )
            .await?;
            tx.commit().await?;
            Ok(outcome)
        })
        .await
    }

    async fn signing_keys(&self) -> Result<Vec<SigningKeyRecord>> {
        self.db.write(|conn| async move {
            let stmt = conn.prepare_cached("SELECT kid, private_der, created_at FROM auth_signing_key ORDER BY created_at DESC, seq DESC").await?;
            conn.query(&stmt, &[])
                .await?
                .iter()
                .map(|r| Ok(SigningKeyRecord { kid: r.try_get(0)?, private_der: r.try_get(1)?, created_at: r.try_get(2)? }))
                .collect()
        })
        .await
    }

    async fn signing_key_insert(&self, key: SigningKeyRecord, keep: usize) -> Result<()> {
        self.db.write(move |mut conn| async move {
            let tx = conn.transaction().await?;
            tx.execute("INSERT INTO auth_signing_key (kid, private_der, created_at) VALUES ($1, $2, $3)", &[&key.kid, &key.private_der, &key.created_at])
                .await?;
            let newest_first: Vec<String> = tx
                .query("SELECT kid FROM auth_signing_key ORDER BY created_at DESC, seq DESC", &[])
                .await?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()?;
            let retired = retired_signing_keys(&newest_first, keep);
            if !retired.is_empty() {
                tx.execute("DELETE FROM auth_signing_key WHERE kid = ANY($1)", &[&retired]).await?;
            }
            tx.commit().await?;
            Ok(())
        })
        .await
    }
}
