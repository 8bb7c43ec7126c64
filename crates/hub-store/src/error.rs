//! The storage layer's one error type, [`StoreError`].
//!
//! Owns: the split between client faults (a query the data rejects, a document or
//! record the store refuses) and server faults (everything else), so the HTTP edge
//! maps an error without looking at its text. Must not: render HTTP or parse messages.

use thiserror::Error;

pub use hub_query::content::checks::QueryError;

/// Errors of the storage layer. Two of them are the client's fault and say so through
/// [`StoreError::is_client_fault`]: [`StoreError::Query`] (a query the stored data
/// rejects while it runs; the API answers 400 naming the parameter and position) and
/// [`StoreError::Invalid`] (a document or record the store refuses; 400/409 as the API
/// decides). Every other variant is a server fault: the HTTP edge answers 500/503 and
/// logs it.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("PostgreSQL error: {}", crate::postgres::describe(.0))]
    Postgres(#[from] tokio_postgres::Error),
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    #[error("database configuration: {0}")]
    Config(String),
    #[error("schema migration {version} failed: {detail}")]
    Migration { version: i64, detail: String },
    #[error("stored document is not valid JSON: {0}")]
    Corrupt(#[from] serde_json::Error),
    #[error("cannot open the data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("a storage task failed: {0}")]
    Task(String),
    #[error("the database schema is at version {found}, newer than this program knows ({known}); upgrade Hub")]
    SchemaTooNew { found: i64, known: i64 },
    /// Client fault: a document or record the store refuses (not an object, no id, an
    /// unknown entity type, a reference to something missing).
    #[error("document rejected: {0}")]
    Invalid(String),
    /// Client fault: the query's expression meets stored data it cannot compare with
    /// (a `rawfilter` value of another JSON type than the field), or holds a value the
    /// database cannot use.
    #[error(transparent)]
    Query(#[from] QueryError),
}

impl StoreError {
    /// True for errors the client caused ([`StoreError::Query`], [`StoreError::Invalid`]);
    /// false for failures of the server or its database.
    pub fn is_client_fault(&self) -> bool {
        matches!(self, StoreError::Query(_) | StoreError::Invalid(_))
    }

    /// True when the disk (or the store's size cap) is full.
    pub fn is_storage_full(&self) -> bool {
        use tokio_postgres::error::SqlState;
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                e.code == rusqlite::ErrorCode::DiskFull
            }
            StoreError::Postgres(e) => e.code() == Some(&SqlState::DISK_FULL),
            _ => false,
        }
    }

    /// The 503 problem for an outage ([`StoreError::is_unavailable`]), saying whether
    /// the store is full; `None` for any other error.
    pub fn outage_problem(&self) -> Option<hub_model::Problem> {
        if self.is_storage_full() {
            Some(hub_model::Problem::store_full())
        } else if self.is_unavailable() {
            Some(hub_model::Problem::store_unavailable())
        } else {
            None
        }
    }

    /// True for server faults that should pass by themselves — the database unreachable,
    /// shutting down or read-only during a failover, its pool exhausted, its disk full, SQLite busy past its
    /// timeout — which the HTTP edge answers 503 + `Retry-After` rather than 500.
    pub fn is_unavailable(&self) -> bool {
        use rusqlite::ErrorCode;
        use tokio_postgres::error::SqlState;
        match self {
            StoreError::Unavailable(_) => true,
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                ErrorCode::DiskFull
                    | ErrorCode::DatabaseBusy
                    | ErrorCode::DatabaseLocked
                    | ErrorCode::SystemIoFailure
                    | ErrorCode::CannotOpen
                    | ErrorCode::OutOfMemory
            ),
            StoreError::Postgres(e) => match e.code() {
                Some(code) => [
                    SqlState::DISK_FULL,
                    SqlState::OUT_OF_MEMORY,
                    SqlState::TOO_MANY_CONNECTIONS,
                    SqlState::CANNOT_CONNECT_NOW,
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CONNECTION_FAILURE,
                    SqlState::CONNECTION_EXCEPTION,
                    // A write reached a standby: during a failover, before the pool
                    // has reconnected to the promoted primary.
                    SqlState::READ_ONLY_SQL_TRANSACTION,
                ]
                .contains(code),
                // No SQLSTATE: the connection itself failed or was closed.
                None => true,
            },
            _ => false,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outages_are_told_apart_from_other_server_faults() {
        let sqlite = |code: i32| {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(code),
                None,
            ))
        };
        let cases = [
            (StoreError::Unavailable("pool timed out".into()), true),
            (sqlite(rusqlite::ffi::SQLITE_FULL), true),
            (sqlite(rusqlite::ffi::SQLITE_BUSY), true),
            (sqlite(rusqlite::ffi::SQLITE_CONSTRAINT), false),
            (StoreError::Task("panicked".into()), false),
            (StoreError::Invalid("no id".into()), false),
        ];
        for (error, expected) in cases {
            assert_eq!(error.is_unavailable(), expected, "{error}");
        }
    }

    #[test]
    fn only_queries_and_refused_documents_are_client_faults() {
        let query = QueryError {
            parameter: "rawfilter".into(),
            position: 3,
            detail: "x".into(),
        };
        let cases = [
            (StoreError::Query(query), true),
            (StoreError::Invalid("no Id".into()), true),
            (StoreError::Unavailable("down".into()), false),
            (StoreError::Task("panic".into()), false),
            (StoreError::Config("bad url".into()), false),
            (StoreError::SchemaTooNew { found: 9, known: 5 }, false),
        ];
        for (error, client) in cases {
            assert_eq!(error.is_client_fault(), client, "{error}");
        }
    }
}
