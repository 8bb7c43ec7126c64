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

pub mod auth;
mod content_write;
pub mod copy;
mod geo_functions;
pub mod index;
pub mod location_tags;
mod migrations;
pub mod postgres;
mod rawfilter_functions;
mod schema;
mod sqlite;
pub mod timeseries;

use std::path::Path;
use std::sync::Arc;

use hub_query::content::ContentQuery;
use serde_json::Value;
use thiserror::Error;

pub use content_write::PutOutcome;
pub use index::IndexedDocument;

/// Errors of the storage layer. None of them is a client's fault; the HTTP edge maps
/// them to 500/503 and logs them.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("PostgreSQL error: {}", postgres::describe(.0))]
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
    #[error("document rejected: {0}")]
    Invalid(String),
    /// The one client fault detected while a query runs: a `rawfilter` comparison whose
    /// value has another JSON type than the field (the API answers 400).
    #[error("{parameter}: {detail} (at position {position})")]
    QueryRejected {
        parameter: String,
        position: usize,
        detail: String,
    },
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
    Postgres(postgres::PgBackend),
}

impl Store {
    /// Opens (creating if needed) the SQLite store in `dir` and migrates its schema.
    pub fn open_sqlite(dir: &Path) -> Result<Store> {
        Ok(Store {
            backend: Arc::new(Backend::Sqlite(sqlite::SqliteBackend::open(dir)?)),
        })
    }

    /// Connects to PostgreSQL at `url` (reads go to `replica_url` when given) and
    /// migrates its schema; several processes may do this at once.
    pub fn open_postgres(url: &str, replica_url: Option<&str>) -> Result<Store> {
        Ok(Store {
            backend: Arc::new(Backend::Postgres(postgres::PgBackend::open(
                url,
                replica_url,
            )?)),
        })
    }

    /// The store an API test suite runs on: with `HUB_TEST_DATABASE` set to a PostgreSQL
    /// server URL, a fresh database there (`hub_test_<pid>_<n>`, replacing a leftover of
    /// that name); otherwise SQLite in `dir`. One set of tests, two backends.
    pub fn open_for_tests(dir: &Path) -> Result<Store> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        match std::env::var("HUB_TEST_DATABASE") {
            Ok(admin) if !admin.trim().is_empty() => {
                let name = format!(
                    "hub_test_{}_{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                );
                let url = postgres::create_database(admin.trim(), &name, true)?;
                Store::open_postgres(&url, None)
            }
            _ => Store::open_sqlite(dir),
        }
    }

    /// Brings the planner's statistics up to date after a bulk load. On PostgreSQL this is
    /// `VACUUM (ANALYZE)`: until a table is vacuumed its visibility map is empty, and the
    /// index-only scans that tag filters and counts rely on must visit every row's page
    /// (measured: a tag filter took 226 ms right after the demo load, 6 ms after the vacuum).
    pub async fn refresh_statistics(&self) -> Result<()> {
        match &*self.backend {
            Backend::Sqlite(b) => b.write(|conn| Ok(conn.execute_batch("ANALYZE")?)).await,
            Backend::Postgres(b) => {
                b.write(|conn| async move { Ok(conn.batch_execute("VACUUM (ANALYZE)").await?) })
                    .await
            }
        }
    }

    /// Which backend this is, for logs and messages (`sqlite` or `postgres`).
    pub fn backend_name(&self) -> &'static str {
        match &*self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Which SQL dialect the backend speaks.
    pub fn dialect(&self) -> hub_query::Dialect {
        match &*self.backend {
            Backend::Sqlite(_) => hub_query::Dialect::Sqlite,
            Backend::Postgres(_) => hub_query::Dialect::Postgres,
        }
    }

    /// A page of documents matching `query`, and the total count.
    pub async fn list_content(&self, query: ContentQuery) -> Result<ContentPage> {
        let compiled = query.compile(self.dialect());
        // The SQL and its time, for `HUB_LOG=hub_store::sql=debug`: the backend benchmark
        // reads them to tell the database's share of a request from the API's own.
        let sql_log =
            tracing::enabled!(target: "hub_store::sql", tracing::Level::DEBUG).then(|| {
                (
                    std::time::Instant::now(),
                    compiled.page.as_sql().to_string(),
                    format!("{:?}", compiled.page.params()),
                )
            });
        let page = match &*self.backend {
            Backend::Sqlite(b) => b.list_content(compiled).await,
            Backend::Postgres(b) => b.list_content(compiled).await,
        };
        if let Some((started, sql, params)) = sql_log {
            tracing::debug!(target: "hub_store::sql", micros = started.elapsed().as_micros() as u64, sql = %sql, params = %params, "list_content");
        }
        page
    }

    /// One document by entity name and id (case-insensitive).
    pub async fn get_content(&self, entity: &'static str, id: &str) -> Result<Option<String>> {
        match &*self.backend {
            Backend::Sqlite(b) => b.get_content(entity, id.to_lowercase()).await,
            Backend::Postgres(b) => b.get_content(entity, id.to_lowercase()).await,
        }
    }

    /// Every document of one entity type, parsed, in id order (for feeds that render a
    /// whole collection, such as the traffic situations).
    pub async fn all_content(&self, entity: &'static str) -> Result<Vec<Value>> {
        let docs = match &*self.backend {
            Backend::Sqlite(b) => b.all_content(entity).await?,
            Backend::Postgres(b) => b.all_content(entity).await?,
        };
        docs.iter()
            .map(|d| serde_json::from_str(d).map_err(StoreError::from))
            .collect()
    }

    /// A number that grows with every write to documents of `entity` (0 before the
    /// first), for caches of views derived from a whole collection.
    pub async fn content_revision(&self, entity: &'static str) -> Result<i64> {
        match &*self.backend {
            Backend::Sqlite(b) => b.content_revision(entity).await,
            Backend::Postgres(b) => b.content_revision(entity).await,
        }
    }

    /// Number of documents per entity name.
    pub async fn content_counts(&self) -> Result<Vec<(String, u64)>> {
        match &*self.backend {
            Backend::Sqlite(b) => b.content_counts().await,
            Backend::Postgres(b) => b.content_counts().await,
        }
    }

    /// True when no content document is stored (a fresh data directory).
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.content_counts().await?.iter().all(|(_, n)| *n == 0))
    }

    /// Saves one document (insert or replace) atomically, stamping `_Meta.LastUpdate`
    /// with `now` and `_Meta.LastChange` only when the content really changed. With
    /// `create_only`, an existing id is left alone (`PutOutcome::existed`).
    pub async fn put_content(
        &self,
        entity: &'static str,
        doc: Value,
        now: String,
        create_only: bool,
    ) -> Result<PutOutcome> {
        match &*self.backend {
            Backend::Sqlite(b) => {
                let mut out = b
                    .write(move |conn| {
                        content_write::put_tracked(
                            conn,
                            vec![(entity, doc)],
                            &now,
                            create_only,
                            &mut |_| {},
                        )
                    })
                    .await?;
                Ok(out.pop().expect("one document in, one outcome out"))
            }
            Backend::Postgres(b) => {
                let mut out = b.put_tracked(vec![(entity, doc)], now, create_only).await?;
                Ok(out.pop().expect("one document in, one outcome out"))
            }
        }
    }

    /// Like [`Store::put_content`] for many documents in one transaction (all or none);
    /// blocking, for `hub import`.
    pub fn put_content_tracked_blocking(
        &self,
        docs: Vec<(&'static str, Value)>,
        now: &str,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Vec<PutOutcome>> {
        match &*self.backend {
            Backend::Sqlite(b) => b.write_blocking(|conn| {
                content_write::put_tracked(conn, docs, now, false, progress)
            }),
            Backend::Postgres(b) => b.put_tracked_blocking(docs, now, progress),
        }
    }

    /// Deletes one document by id (case-insensitive); false when there was none.
    pub async fn delete_content(&self, entity: &'static str, id: &str) -> Result<bool> {
        let id_key = id.to_lowercase();
        match &*self.backend {
            Backend::Sqlite(b) => {
                b.write(move |conn| content_write::delete(conn, entity, &id_key))
                    .await
            }
            Backend::Postgres(b) => b.delete_content(entity, id_key).await,
        }
    }

    /// Inserts or replaces documents in one transaction; blocking (for bulk loads from
    /// a command or a blocking thread). `progress` is called with the number written so far.
    pub fn put_content_batch(
        &self,
        docs: &[(&'static str, Value)],
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let indexed = docs
            .iter()
            .map(|(entity, doc)| IndexedDocument::from_document(entity, doc))
            .collect::<Result<Vec<_>>>()?;
        match &*self.backend {
            Backend::Sqlite(b) => b.put_content_batch(&indexed, progress),
            Backend::Postgres(b) => b.put_content_batch(indexed, progress),
        }
    }
}
