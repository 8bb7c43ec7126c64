//! # hub-store
//!
//! Persistence for every Hub API, with two backends:
//! SQLite (embedded, the default; WAL mode, a pool of read connections and one writer)
//! and PostgreSQL with PostGIS (for deployments that outgrow one machine; a later
//! backend variant). Callers hand it `hub-query` ASTs and get rows back; they never see
//! a connection or write SQL. [`Store`] opens a backend and hands out per-domain
//! repositories — [`Store::content`] → [`ContentRepo`], [`Store::auth`] →
//! [`auth::AuthRepo`], [`Store::timeseries`] → [`timeseries::TimeSeriesRepo`] — each a
//! trait with a SQLite and a PostgreSQL implementation side by side (`sqlite/`,
//! `postgres/`). Decisions both backends need are pure functions in the domain modules;
//! a backend only moves rows. Errors are one type, [`StoreError`], which tells client
//! faults from server faults.
//!
//! Owns: schema migrations with a version table, content documents with their indexed
//! columns ([`index`]), and the blocking-thread discipline (SQLite work never runs on an
//! async task). Must not: shape HTTP responses, know query-parameter syntax, or build
//! SQL from client text (all SQL comes from `hub-query` with bound parameters).

pub mod auth;
pub mod batches;
pub mod budget_lru;
mod coalesce;
pub mod content;
pub mod copy;
mod error;
mod geo_functions;
pub mod index;
pub mod location_tags;
mod migrations;
pub mod postgres;
mod rawfilter_functions;
mod rawfilter_indexes;
mod schema;
mod sqlite;
pub mod test_snapshot;
pub mod timeseries;

use std::path::Path;
use std::sync::Arc;

pub use batches::Batches;
pub use content::{ContentPage, ContentRepo, DocumentStream, Extent, MapPoint, PutOutcome};
pub use error::{QueryError, Result, StoreError};
pub use hub_query::content::rawfilter_index::IndexedPath as RawfilterIndexPath;
pub use index::IndexedDocument;
pub use postgres::{PgSettings, ReplicaStatus};
pub use sqlite::SqliteTuning;

/// How busy one of the store's connection pools is (for `/metrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolUsage {
    /// `sqlite_readers`, `sqlite_writer`, `postgres_primary` or `postgres_replica`.
    pub pool: &'static str,
    /// Connections the pool may hold.
    pub max: usize,
    /// Connections open now.
    pub open: usize,
    /// Connections lent out to a request now.
    pub in_use: usize,
    /// Requests waiting for a connection now.
    pub waiting: usize,
}

/// The document store. Cheap to clone; clones share one pool.
#[derive(Clone)]
pub struct Store {
    backend: Arc<Backend>,
    /// List totals shared by every content repository of this store.
    counts: Arc<content::count_cache::CountCache>,
    /// Marks of deep pages shared by every content repository of this store.
    orders: Arc<content::KeptOrders>,
}

/// The backends are shared with the repositories `Store` hands out.
enum Backend {
    Sqlite(Arc<sqlite::SqliteBackend>),
    Postgres(Arc<postgres::PgBackend>),
}

/// The name of this process's next test database on the server at `admin`,
/// `hub_test_<pid>_<n>`. The first call drops those left by processes gone (see
/// [`postgres::sweep_test_databases`]).
fn next_test_database_name(admin: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        if let Err(e) = postgres::sweep_test_databases(admin) {
            eprintln!("could not drop earlier runs' test databases: {e}");
        }
    });
    format!(
        "hub_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl Store {
    /// Opens (creating if needed) the SQLite store in `dir` and migrates its schema.
    pub fn open_sqlite(dir: &Path) -> Result<Store> {
        Store::open_sqlite_tuned(dir, SqliteTuning::default())
    }

    /// [`Store::open_sqlite`] with the given cache sizes.
    pub fn open_sqlite_tuned(dir: &Path, tuning: SqliteTuning) -> Result<Store> {
        Ok(Store {
            backend: Arc::new(Backend::Sqlite(Arc::new(sqlite::SqliteBackend::open(
                dir, tuning,
            )?))),
            counts: Arc::default(),
            orders: Arc::default(),
        })
    }

    /// Connects to PostgreSQL at `url` (reads go to `replica_url` when given) and
    /// migrates its schema; several processes may do this at once.
    pub fn open_postgres(url: &str, replica_url: Option<&str>) -> Result<Store> {
        Store::open_postgres_with(
            url,
            &PgSettings {
                replica: replica_url.map(str::to_string),
                ..PgSettings::default()
            },
        )
    }

    /// [`Store::open_postgres`] with every PostgreSQL setting (replica and its lag bound,
    /// a transaction-mode pooler, pool sizes).
    pub fn open_postgres_with(url: &str, settings: &PgSettings) -> Result<Store> {
        Ok(Store {
            backend: Arc::new(Backend::Postgres(Arc::new(postgres::PgBackend::open(
                url, settings,
            )?))),
            counts: Arc::default(),
            orders: Arc::default(),
        })
    }

    /// The read replica's reachability and lag (PostgreSQL with a replica only).
    pub fn replica_status(&self) -> Option<ReplicaStatus> {
        match &*self.backend {
            Backend::Postgres(b) => b.replica_status(),
            Backend::Sqlite(_) => None,
        }
    }

    /// The store an API test suite runs on: with `HUB_TEST_DATABASE` set to a PostgreSQL
    /// server URL, a fresh database there (`hub_test_<pid>_<n>`, replacing a leftover of
    /// that name, and dropped with the store's last handle, repositories included; the
    /// first in a process drops those left by processes gone, see
    /// [`postgres::sweep_test_databases`]); otherwise SQLite in `dir`. One set of tests,
    /// two backends. In a test pass with snapshots ([`test_snapshot::pass_dir`]) the
    /// fresh PostgreSQL database is a copy of one migrated once per pass. With
    /// `HUB_TEST_DATABASE_POOLER=transaction` the URL leads through a transaction-mode
    /// pooler (PgBouncer) and the store runs in its mode (see [`PgSettings`]).
    pub fn open_for_tests(dir: &Path) -> Result<Store> {
        match std::env::var("HUB_TEST_DATABASE") {
            Ok(admin) if !admin.trim().is_empty() => {
                let admin = admin.trim();
                if let Some(pass) = test_snapshot::pass_dir() {
                    return test_snapshot::migrated_copy(&pass, dir);
                }
                let name = next_test_database_name(admin);
                Store::open_throwaway(postgres::ThrowawayDatabase::create(admin, &name)?)
            }
            _ => Store::open_sqlite(dir),
        }
    }

    /// A store on a test's database, dropped with the store's last handle.
    fn open_throwaway(database: postgres::ThrowawayDatabase) -> Result<Store> {
        let backend = postgres::PgBackend::open_throwaway(database, &PgSettings::for_tests())?;
        Ok(Store {
            backend: Arc::new(Backend::Postgres(Arc::new(backend))),
            counts: Arc::default(),
            orders: Arc::default(),
        })
    }

    /// The token service's tables (users, clients, refresh tokens, signing keys).
    pub fn auth(&self) -> Arc<dyn auth::AuthRepo> {
        match &*self.backend {
            Backend::Sqlite(b) => Arc::new(sqlite::auth::SqliteAuth::new(b.clone())),
            Backend::Postgres(b) => Arc::new(postgres::auth::PgAuth::new(b.clone())),
        }
    }

    /// Brings the planner's statistics up to date after a bulk load. On PostgreSQL this is
    /// `VACUUM (ANALYZE)`: until a table is vacuumed its visibility map is empty, and the
    /// index-only scans that tag filters and counts rely on must visit every row's page
    /// (measured: a tag filter took 226 ms right after the demo load, 6 ms after the vacuum).
    pub async fn refresh_statistics(&self) -> Result<()> {
        match &*self.backend {
            Backend::Sqlite(b) => {
                b.write(|conn| Ok(conn.execute_batch("ANALYZE")?)).await?;
                b.statistics_changed();
                Ok(())
            }
            Backend::Postgres(b) => {
                b.write(|conn| async move {
                    Ok(postgres::Queries::batch_execute(&conn, "VACUUM (ANALYZE)").await?)
                })
                .await
            }
        }
    }

    /// Keeps the planner's statistics current while data grows, cheaply enough to run
    /// every hour: on SQLite `PRAGMA optimize` (an `ANALYZE` of the tables whose size
    /// changed much since their statistics were taken), and readers that loaded the old
    /// statistics are replaced. Without it a server that started with 5,000 series kept
    /// planning latest values for them after 245,000 more were pushed (2.7 → 6.4 ms for
    /// 1,000 stations; 2.9 ms once restarted). On PostgreSQL nothing: autovacuum analyzes
    /// changed tables, and an `ANALYZE` invalidates the plans built on the old figures.
    pub async fn optimize_statistics(&self) -> Result<()> {
        match &*self.backend {
            Backend::Sqlite(b) => b.optimize_statistics().await,
            Backend::Postgres(_) => Ok(()),
        }
    }

    /// The connection pools' usage right now.
    pub fn pool_usage(&self) -> Vec<PoolUsage> {
        match &*self.backend {
            Backend::Sqlite(b) => b.pool_usage(),
            Backend::Postgres(b) => b.pool_usage(),
        }
    }

    /// What the PostgreSQL backend's document cache holds and has answered
    /// (`content::document_cache`); `None` on SQLite, which keeps no documents.
    pub fn document_cache(&self) -> Option<content::document_cache::DocumentCacheStats> {
        match &*self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(b) => Some(b.documents.stats()),
        }
    }

    /// How many times the content write revisions were read from the database (each
    /// response-cache hit needs them; memory answers while it may).
    pub fn revision_reads(&self) -> u64 {
        match &*self.backend {
            Backend::Sqlite(b) => b.revision_reads(),
            Backend::Postgres(b) => b.revision_reads(),
        }
    }

    /// How many list totals were counted by a statement: a total kept since its
    /// entity's last write is counted by none.
    pub fn list_counts(&self) -> u64 {
        self.counts.counted()
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

    /// The Time Series repository over this store's backend.
    pub fn timeseries(&self) -> Arc<dyn timeseries::TimeSeriesRepo> {
        match &*self.backend {
            Backend::Sqlite(b) => Arc::new(sqlite::timeseries::SqliteTimeSeries::new(b.clone())),
            Backend::Postgres(b) => Arc::new(postgres::timeseries::PgTimeSeries::new(b.clone())),
        }
    }

    /// The content documents.
    pub fn content(&self) -> Arc<dyn ContentRepo> {
        match &*self.backend {
            Backend::Sqlite(b) => Arc::new(sqlite::SqliteContent {
                backend: b.clone(),
                counts: self.counts.clone(),
                orders: self.orders.clone(),
            }),
            Backend::Postgres(b) => Arc::new(postgres::PgContent {
                backend: b.clone(),
                counts: self.counts.clone(),
                orders: self.orders.clone(),
            }),
        }
    }
}
