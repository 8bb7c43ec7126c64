//! The token service's storage domain: users with Argon2 password hashes and roles,
//! confidential clients with hashed secrets and roles, refresh tokens (only their
//! SHA-256 is stored) grouped in families for rotation and reuse detection, and the RSA
//! signing keys.
//!
//! Owns: the record types, the [`AuthRepo`] trait both backends implement
//! (`crate::sqlite::auth::SqliteAuth`, `crate::postgres::auth::PgAuth`), and every
//! decision the two share as a pure function ([`rotation`], [`retention`]), so a
//! backend only loads rows, asks, and writes rows.
//! Must not: hash or see a clear-text secret (that happens in `hub-auth`), hold a
//! connection, or know SQL.

pub mod retention;
pub mod rotation;
#[cfg(test)]
mod tests;

use crate::{Result, StoreError};

pub use retention::retired_signing_keys;
pub use rotation::{decide_rotation, forget_sessions_ended_before, Rotation, StoredRefresh};

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
    /// The token was current: it is now used, and this successor replaced it.
    Rotated(RefreshRecord),
    /// The token had been used before: the whole family is revoked.
    Reused,
    /// Unknown, expired, revoked, or presented by another client.
    Invalid,
}

/// An RSA signing key: PKCS#1 DER of the private key.
#[derive(Debug, Clone, PartialEq)]
pub struct SigningKeyRecord {
    pub kid: String,
    pub private_der: Vec<u8>,
    pub created_at: i64,
}

/// A refresh token presented for rotation, by hash, with who presents it and when.
#[derive(Debug, Clone, PartialEq)]
pub struct RefreshPresentation {
    pub token_hash: String,
    pub client_id: String,
    pub now: i64,
}

/// Builds the successor of a token being rotated from the stored one (called inside the
/// rotating transaction, only when the decision is to rotate).
pub type NextRefresh = Box<dyn FnOnce(&RefreshRecord) -> RefreshRecord + Send>;

/// Whether a role change adds roles or takes them away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleChange {
    Grant,
    Revoke,
}

/// The token service's tables, on whichever backend the store runs.
#[async_trait::async_trait]
pub trait AuthRepo: Send + Sync {
    /// Creates a user; an existing name is `StoreError::Invalid`.
    async fn user_add(&self, user: UserRecord) -> Result<()>;

    /// Creates or replaces users and clients in one transaction (demo principals),
    /// keeping the subject id of a user that exists already; blocking, like the other
    /// bulk loads, and callable from inside a runtime.
    fn upsert_blocking(&self, users: &[UserRecord], clients: &[ClientRecord]) -> Result<()>;

    async fn user(&self, username: &str) -> Result<Option<UserRecord>>;

    /// Every user, by name.
    async fn users(&self) -> Result<Vec<UserRecord>>;

    /// Removes a user, its roles and its refresh tokens. False when there was none.
    async fn user_remove(&self, username: &str) -> Result<bool>;

    /// Replaces a user's password hash and ends its sessions. False when no such user.
    async fn user_set_password(&self, username: &str, password_hash: String) -> Result<bool>;

    /// Adds or removes roles of a user. False when no such user.
    async fn user_roles(
        &self,
        username: &str,
        roles: Vec<String>,
        change: RoleChange,
    ) -> Result<bool>;

    /// Creates a client; an existing id is `StoreError::Invalid`.
    async fn client_add(&self, client: ClientRecord) -> Result<()>;

    async fn client(&self, client_id: &str) -> Result<Option<ClientRecord>>;

    /// Every client, by id.
    async fn clients(&self) -> Result<Vec<ClientRecord>>;

    /// Removes a client, its roles and its refresh tokens. False when there was none.
    async fn client_remove(&self, client_id: &str) -> Result<bool>;

    /// Stores a new refresh token (the first of a session).
    async fn refresh_insert(&self, record: RefreshRecord) -> Result<()>;

    /// Atomically checks the presented token and acts on [`decide_rotation`]: a current
    /// token is marked used and `next` (built from it) is stored in the same family; a
    /// token used before revokes its whole family (reuse of a stolen token); anything
    /// else is `Invalid` and left untouched. Sessions over for a while are forgotten on
    /// the way ([`forget_sessions_ended_before`]).
    async fn refresh_rotate(
        &self,
        presented: RefreshPresentation,
        next: NextRefresh,
    ) -> Result<RefreshOutcome>;

    /// Signing keys, newest first.
    async fn signing_keys(&self) -> Result<Vec<SigningKeyRecord>>;

    /// Stores a new signing key, keeping only the `keep` newest (see
    /// [`retired_signing_keys`]).
    async fn signing_key_insert(&self, key: SigningKeyRecord, keep: usize) -> Result<()>;
}

/// The conflict a second user of one name is.
pub(crate) fn user_exists(username: &str) -> StoreError {
    StoreError::Invalid(format!("user '{username}' exists already"))
}

/// The conflict a second client of one id is.
pub(crate) fn client_exists(client_id: &str) -> StoreError {
    StoreError::Invalid(format!("client '{client_id}' exists already"))
}
