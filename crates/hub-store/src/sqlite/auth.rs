//! The token service's tables on SQLite: [`SqliteAuth`] implements
//! [`AuthRepo`] by moving rows; every decision is `crate::auth`'s. One writer
//! connection serialises the writes, so the rotation needs no locks of its own.
//!
//! Owns: the SQLite statements of the auth tables. Must not: decide (rotation,
//! retention), or run on an async task (work goes through the backend's threads).

use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};

use super::SqliteBackend;
use crate::auth::{
    client_exists, decide_rotation, forget_sessions_ended_before, retired_signing_keys,
    user_exists, AuthRepo, ClientRecord, NextRefresh, RefreshOutcome, RefreshPresentation,
    RefreshRecord, RoleChange, Rotation, SigningKeyRecord, StoredRefresh, UserRecord,
};
use crate::{Result, StoreError};

/// [`AuthRepo`] on the SQLite backend.
pub(crate) struct SqliteAuth {
    db: Arc<SqliteBackend>,
}

impl SqliteAuth {
    pub(crate) fn new(db: Arc<SqliteBackend>) -> Self {
        SqliteAuth { db }
    }
}

/// Roles of a user (`auth_user_role`) or a client (`auth_client_role`), sorted.
fn roles_of(conn: &Connection, sql: &str, key: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(sql)?;
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
            u.roles = roles_of(
                conn,
                "SELECT role FROM auth_user_role WHERE username = ?1 ORDER BY role",
                &u.username,
            )?;
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
            c.roles = roles_of(
                conn,
                "SELECT role FROM auth_client_role WHERE client_id = ?1 ORDER BY role",
                &c.client_id,
            )?;
            Ok(Some(c))
        }
        None => Ok(None),
    }
}

/// Whether an insert replaces an existing row of that key or must be new.
#[derive(Clone, Copy, PartialEq)]
enum Insert {
    New,
    Replace,
}

fn insert_user(conn: &Connection, user: &UserRecord, mode: Insert) -> Result<()> {
    let sql = match mode {
        Insert::Replace => "INSERT OR REPLACE INTO auth_user (id, username, password_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
        Insert::New => "INSERT INTO auth_user (id, username, password_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
    };
    conn.execute(
        sql,
        params![user.id, user.username, user.password_hash, user.created_at],
    )
    .map_err(|e| conflict(e, || user_exists(&user.username)))?;
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

fn insert_client(conn: &Connection, client: &ClientRecord, mode: Insert) -> Result<()> {
    let sql = match mode {
        Insert::Replace => "INSERT OR REPLACE INTO auth_client (client_id, secret_hash, description, created_at) VALUES (?1, ?2, ?3, ?4)",
        Insert::New => "INSERT INTO auth_client (client_id, secret_hash, description, created_at) VALUES (?1, ?2, ?3, ?4)",
    };
    conn.execute(
        sql,
        params![
            client.client_id,
            client.secret_hash,
            client.description,
            client.created_at
        ],
    )
    .map_err(|e| conflict(e, || client_exists(&client.client_id)))?;
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

/// A constraint violation is the caller's conflict (`StoreError::Invalid`).
fn conflict(e: rusqlite::Error, conflict: impl FnOnce() -> StoreError) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            conflict()
        }
        other => other.into(),
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

fn stored_refresh(conn: &Connection, token_hash: &str) -> Result<Option<StoredRefresh>> {
    Ok(conn
        .query_row(
            "SELECT token_hash, family, username, client_id, scope, issued_at, expires_at, session_expires_at, used_at, revoked \
             FROM auth_refresh_token WHERE token_hash = ?1",
            [token_hash],
            |r| {
                Ok(StoredRefresh {
                    record: RefreshRecord {
                        token_hash: r.get(0)?,
                        family: r.get(1)?,
                        username: r.get(2)?,
                        client_id: r.get(3)?,
                        scope: r.get(4)?,
                        issued_at: r.get(5)?,
                        expires_at: r.get(6)?,
                        session_expires_at: r.get(7)?,
                    },
                    used_at: r.get(8)?,
                    revoked: r.get(9)?,
                })
            },
        )
        .optional()?)
}

/// Every row's key of `sql` (a one-column listing).
fn keys(conn: &Connection, sql: &str) -> Result<Vec<String>> {
    Ok(conn
        .prepare_cached(sql)?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

#[async_trait::async_trait]
impl AuthRepo for SqliteAuth {
    async fn user_add(&self, user: UserRecord) -> Result<()> {
        self.db
            .write(move |conn| {
                let tx = conn.transaction()?;
                insert_user(&tx, &user, Insert::New)?;
                tx.commit()?;
                Ok(())
            })
            .await
    }

    fn upsert_blocking(&self, users: &[UserRecord], clients: &[ClientRecord]) -> Result<()> {
        self.db.write_blocking(|conn| {
            let tx = conn.transaction()?;
            for u in users {
                match user_row(&tx, &u.username)? {
                    // Keep the subject id stable across reloads.
                    Some(old) => insert_user(
                        &tx,
                        &UserRecord {
                            id: old.id,
                            ..u.clone()
                        },
                        Insert::Replace,
                    )?,
                    None => insert_user(&tx, u, Insert::New)?,
                }
            }
            for c in clients {
                insert_client(&tx, c, Insert::Replace)?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    async fn user(&self, username: &str) -> Result<Option<UserRecord>> {
        let username = username.to_string();
        self.db.read(move |conn| user_row(conn, &username)).await
    }

    async fn users(&self) -> Result<Vec<UserRecord>> {
        self.db
            .read(|conn| {
                let names = keys(conn, "SELECT username FROM auth_user ORDER BY username")?;
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

    async fn user_remove(&self, username: &str) -> Result<bool> {
        let username = username.to_string();
        self.db
            .write(move |conn| {
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

    async fn user_set_password(&self, username: &str, password_hash: String) -> Result<bool> {
        let username = username.to_string();
        self.db
            .write(move |conn| {
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

    async fn user_roles(
        &self,
        username: &str,
        roles: Vec<String>,
        change: RoleChange,
    ) -> Result<bool> {
        let username = username.to_string();
        self.db
            .write(move |conn| {
                let tx = conn.transaction()?;
                if user_row(&tx, &username)?.is_none() {
                    return Ok(false);
                }
                let sql = match change {
                    RoleChange::Grant => {
                        "INSERT OR IGNORE INTO auth_user_role (username, role) VALUES (?1, ?2)"
                    }
                    RoleChange::Revoke => {
                        "DELETE FROM auth_user_role WHERE username = ?1 AND role = ?2"
                    }
                };
                for role in &roles {
                    tx.execute(sql, params![username, role])?;
                }
                tx.commit()?;
                Ok(true)
            })
            .await
    }

    async fn client_add(&self, client: ClientRecord) -> Result<()> {
        self.db
            .write(move |conn| {
                let tx = conn.transaction()?;
                insert_client(&tx, &client, Insert::New)?;
                tx.commit()?;
                Ok(())
            })
            .await
    }

    async fn client(&self, client_id: &str) -> Result<Option<ClientRecord>> {
        let client_id = client_id.to_string();
        self.db.read(move |conn| client_row(conn, &client_id)).await
    }

    async fn clients(&self) -> Result<Vec<ClientRecord>> {
        self.db
            .read(|conn| {
                let ids = keys(conn, "SELECT client_id FROM auth_client ORDER BY client_id")?;
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

    async fn client_remove(&self, client_id: &str) -> Result<bool> {
        let client_id = client_id.to_string();
        self.db
            .write(move |conn| {
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

    async fn refresh_insert(&self, record: RefreshRecord) -> Result<()> {
        self.db
            .write(move |conn| insert_refresh(conn, &record))
            .await
    }

    async fn refresh_rotate(
        &self,
        presented: RefreshPresentation,
        next: NextRefresh,
    ) -> Result<RefreshOutcome> {
        self.db
            .write(move |conn| {
                let RefreshPresentation {
                    token_hash,
                    client_id,
                    now,
                } = presented;
                let tx = conn.transaction()?;
                let stored = stored_refresh(&tx, &token_hash)?;
                let outcome = match (decide_rotation(stored.as_ref(), &client_id, now), stored) {
                    (Rotation::Rotate, Some(stored)) => {
                        let old = stored.record;
                        let new = next(&old);
                        tx.execute(
                            "UPDATE auth_refresh_token SET used_at = ?2 WHERE token_hash = ?1",
                            params![old.token_hash, now],
                        )?;
                        insert_refresh(&tx, &new)?;
                        RefreshOutcome::Rotated(new)
                    }
                    (Rotation::ReuseDetected, Some(stored)) => {
                        tx.execute(
                            "UPDATE auth_refresh_token SET revoked = 1 WHERE family = ?1",
                            [&stored.record.family],
                        )?;
                        RefreshOutcome::Reused
                    }
                    (refused, _) => refused.refused(),
                };
                tx.execute(
                    "DELETE FROM auth_refresh_token WHERE session_expires_at < ?1",
                    [forget_sessions_ended_before(now)],
                )?;
                tx.commit()?;
                Ok(outcome)
            })
            .await
    }

    async fn signing_keys(&self) -> Result<Vec<SigningKeyRecord>> {
        self.db
            .read(|conn| {
                let mut stmt = conn.prepare_cached("SELECT kid, private_der, created_at FROM auth_signing_key ORDER BY created_at DESC, rowid DESC")?;
                let rows = stmt.query_map([], |r| {
                    Ok(SigningKeyRecord {
                        kid: r.get(0)?,
                        private_der: r.get(1)?,
                        created_at: r.get(2)?,
                    })
                })?;
                Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
            })
            .await
    }

    async fn signing_key_insert(&self, key: SigningKeyRecord, keep: usize) -> Result<()> {
        self.db
            .write(move |conn| {
                let tx = conn.transaction()?;
                tx.execute(
                    "INSERT INTO auth_signing_key (kid, private_der, created_at) VALUES (?1, ?2, ?3)",
                    params![key.kid, key.private_der, key.created_at],
                )?;
                let newest_first = keys(
                    &tx,
                    "SELECT kid FROM auth_signing_key ORDER BY created_at DESC, rowid DESC",
                )?;
                for kid in retired_signing_keys(&newest_first, keep) {
                    tx.execute("DELETE FROM auth_signing_key WHERE kid = ?1", [kid])?;
                }
                tx.commit()?;
                Ok(())
            })
            .await
    }
}
