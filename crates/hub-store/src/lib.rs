//! # hub-store
//!
//! Persistence for every Hub API behind one interface, [`Store`], with two backends:
//! SQLite (embedded, the default; WAL mode, a pool of read connections and one writer)
//! and PostgreSQL with PostGIS (for deployments that outgrow one machine; a later
//! backend variant). Callers hand it `hub-query` ASTs and get rows back; they never see
//! a connection or write SQL.
//!
//! Owns: schema migrations with a version table, content documents with their indexed
//! columns ([`index`]), and the blocking-thread discipline (SQLite work never runs on an
//! async task). Must not: shape HTTP responses, know query-parameter syntax, or build
//! SQL from client text (all SQL comes from `hub-query` with bound parameters).

pub mod index;
mod migrations;
mod sqlite;
pub mod timeseries;

use std::path::Path;
use std::sync::Arc;

use hub_query::content::ContentQuery;
use serde_json::Value;
use thiserror::Error;

pub use index::IndexedDocument;

/// Errors of the storage layer. None of them is a client's fault; the HTTP edge maps
/// them to 500/503 and logs them.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("stored document is not valid JSON: {0}")]
    Corrupt(#[from] serde_json::Error),
    #[error("cannot open the data directory {path}: {source}")]
    DataDir { path: String, source: std::io::Error },
    #[error("a storage task failed: {0}")]
    Task(String),
    #[error("the database schema is at version {found}, newer than this program knows ({known}); upgrade Hub")]
    SchemaTooNew { found: i64, known: i64 },
    #[error("document rejected: {0}")]
    Invalid(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// One page of documents and the total number of matches.
#[derive(Debug, Clone)]
pub struct ContentPage {
    pub total: u64,
    /// Documents as stored JSON text, in order.
    pub docs: Vec<String>,
}

/// The document store. Cheap to clone; clones share one pool.
#[derive(Clone)]
pub struct Store {
    backend: Arc<Backend>,
}

enum Backend {
    Sqlite(sqlite::SqliteBackend),
}

impl Store {
    /// Opens (creating if needed) the SQLite store in `dir` and migrates its schema.
    pub fn open_sqlite(dir: &Path) -> Result<Store> {
        Ok(Store { backend: Arc::new(Backend::Sqlite(sqlite::SqliteBackend::open(dir)?)) })
    }

    /// Which SQL dialect the backend speaks.
    pub fn dialect(&self) -> hub_query::Dialect {
        match &*self.backend {
            Backend::Sqlite(_) => hub_query::Dialect::Sqlite,
        }
    }

    /// A page of documents matching `query`, and the total count.
    pub async fn list_content(&self, query: ContentQuery) -> Result<ContentPage> {
        match &*self.backend {
            Backend::Sqlite(b) => b.list_content(query).await,
        }
    }

    /// One document by entity name and id (case-insensitive).
    pub async fn get_content(&self, entity: &'static str, id: &str) -> Result<Option<String>> {
        match &*self.backend {
            Backend::Sqlite(b) => b.get_content(entity, id.to_lowercase()).await,
        }
    }

    /// Every document of one entity type, parsed, in id order (for feeds that render a
    /// whole collection, such as the traffic situations).
    pub async fn all_content(&self, entity: &'static str) -> Result<Vec<Value>> {
        let docs = match &*self.backend {
            Backend::Sqlite(b) => b.all_content(entity).await?,
        };
        docs.iter().map(|d| serde_json::from_str(d).map_err(StoreError::from)).collect()
    }

    /// Number of documents per entity name.
    pub async fn content_counts(&self) -> Result<Vec<(String, u64)>> {
        match &*self.backend {
            Backend::Sqlite(b) => b.content_counts().await,
        }
    }

    /// True when no content document is stored (a fresh data directory).
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.content_counts().await?.iter().all(|(_, n)| *n == 0))
    }

    /// Inserts or replaces documents in one transaction; blocking (for bulk loads from
    /// a command or a blocking thread). `progress` is called with the number written so far.
    pub fn put_content_batch(&self, docs: &[(&'static str, Value)], progress: &mut dyn FnMut(u64)) -> Result<()> {
        let indexed = docs.iter().map(|(entity, doc)| IndexedDocument::from_document(entity, doc)).collect::<Result<Vec<_>>>()?;
        match &*self.backend {
            Backend::Sqlite(b) => b.put_content_batch(&indexed, progress),
        }
    }
}
