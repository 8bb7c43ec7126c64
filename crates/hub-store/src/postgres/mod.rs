//! The PostgreSQL + PostGIS backend: two connection pools (the primary for writes, an
//! optional read replica for reads), schema migrations under an advisory lock so several
//! `hub serve` processes can start together, and a runtime of its own.
//!
//! Why a runtime of its own: a pooled connection's socket belongs to the runtime that
//! opened it. Hub calls the store from the server's runtime, from per-test runtimes and
//! from blocking commands; running every database future on this backend's runtime
//! keeps connections valid whichever runtime asks, and lets blocking callers wait with
//! a plain executor (the same discipline the SQLite backend keeps with its threads).
//! `hub serve`, whose runtime outlives the store and is the only one that reads, hands
//! the backend that runtime instead ([`PgSettings::runtime`]): a request, its read and
//! the connection's task then take turns on the same workers rather than waking the
//! threads of a second runtime (docs/decisions.md, "PostgreSQL reads on the server's
//! runtime").

mod admin;
pub(crate) mod auth;
mod bind;
mod connections;
pub(crate) mod content;
mod migrations;
pub(crate) mod path_values;
mod rawfilter;
mod replica;
mod revision_watch;
mod session;
mod shared_reads;
pub(crate) mod timeseries;
mod tls;

pub(crate) use content::PgContent;

pub(crate) use migrations::describe;

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::Pool;

pub(crate) use bind::{bind, refs};
use connections::{connection_config, pool, session_sql};

use crate::{Result, StoreError};

pub(crate) use session::{Conn, Queries, Tx};
use session::{StatementMode, TypeCache};

pub use admin::{
    create_database, drop_database, sweep_test_databases, url_with_database, ThrowawayDatabase,
};
pub use replica::ReplicaStatus;
pub use revision_watch::LISTENER_NAME as REVISION_LISTENER_NAME;

/// How Hub connects to PostgreSQL beyond the primary's URL (see `docs/deployment.md`).
#[derive(Debug, Clone)]
pub struct PgSettings {
    /// URL of a read replica (streaming replication of the primary).
    pub replica: Option<String>,
    /// Reads fall back to the primary while the replica lags by more than this.
    pub replica_max_lag: Duration,
    /// The URLs lead through a transaction-mode pooler (PgBouncer `pool_mode =
    /// transaction`): no named statements, no session state.
    pub transaction_pooler: bool,
    /// Connections per pool (primary, and replica) of this process.
    pub pool_size: usize,
    /// Keep content revisions in memory from `LISTEN`/`NOTIFY` instead of reading them
    /// on every response-cache hit (see `revision_watch`): no round trip per hit; a
    /// write by another process is seen once its notification arrives. Needs a direct
    /// connection (no transaction-mode pooler) and no replica.
    pub revision_notify: bool,
    /// Each prepared statement is planned once per connection, for any parameter values
    /// (`plan_cache_mode = force_generic_plan`), instead of PostgreSQL's choice, which
    /// re-plans Hub's paged and partitioned reads on every execution (see
    /// `postgres::session_sql`). Not applied behind a transaction-mode pooler.
    pub generic_plans: bool,
    /// Connections of the primary's pool that every request shares for reads of a few
    /// rows by key (see `postgres::shared_reads`): their statements are pipelined. At
    /// most half of `pool_size`; 0 gives each read a connection of its own. Not used
    /// behind a transaction-mode pooler or with a replica.
    pub shared_connections: usize,
    /// Bytes of documents kept in this process by their row version (see
    /// `content::document_cache`): list pages and reads by id then select each
    /// document's key and version, and read only the texts not kept. 0 reads every text.
    pub document_cache_bytes: usize,
    /// Run the backend's tasks and its connections on this runtime (the server's)
    /// instead of one of its own: a read and its connection then share the caller's
    /// worker threads, with no hand-off between runtimes. The caller keeps the runtime
    /// alive while the store lives and never blocks one of its workers on the store.
    pub runtime: Option<tokio::runtime::Handle>,
}

impl PgSettings {
    /// The defaults, in the transaction-pooler mode when the tests are pointed at one
    /// (`HUB_TEST_DATABASE_POOLER=transaction`, see [`crate::Store::open_for_tests`]).
    pub fn for_tests() -> Self {
        PgSettings {
            transaction_pooler: std::env::var("HUB_TEST_DATABASE_POOLER")
                .is_ok_and(|mode| mode.trim() == "transaction"),
            ..PgSettings::default()
        }
    }
}

impl Default for PgSettings {
    fn default() -> Self {
        PgSettings {
            replica: None,
            replica_max_lag: Duration::from_secs(5),
            transaction_pooler: false,
            pool_size: POOL_SIZE,
            revision_notify: false,
            generic_plans: true,
            shared_connections: shared_connections_for_cores(),
            document_cache_bytes: DOCUMENT_CACHE_BYTES,
            runtime: None,
        }
    }
}

pub(crate) struct PgBackend {
    runtime: RuntimeHolder,
    primary: Pool,
    replica: Option<replica::Replica>,
    mode: StatementMode,
    /// Connections shared by reads of a few rows by key (none with a replica or behind a
    /// transaction-mode pooler).
    shared: Option<shared_reads::SharedReads>,
    /// The `ts_history` partitions this process knows of (see `timeseries::partitions`).
    partitions: std::sync::Arc<timeseries::partitions::PartitionState>,
    /// Every entity's write revision, read once for all concurrent callers (the
    /// response cache asks on every hit; see [`content`]).
    revisions: crate::coalesce::Coalesced<crate::content::Revisions>,
    /// How many times `revisions` was read from the database (for `/metrics`).
    revision_reads: std::sync::atomic::AtomicU64,
    /// The revisions kept from notifications, in the `revision_notify` mode.
    revision_watch: Option<revision_watch::RevisionWatch>,
    /// Station, type and provenance rows of latest reads (see `CatalogRead`).
    ts_catalog: crate::timeseries::Catalog,
    /// The provenances of history answers read narrow, by their revision.
    ts_provenances: crate::timeseries::ProvenanceCache,
    /// The series reads found too wide for a history answer read narrow.
    ts_wide_series: crate::timeseries::WideSeriesReads,
    /// The series latest answers read narrow cover, by the catalog's revision.
    ts_selections: crate::timeseries::selections::SeriesSelections,
    /// Documents read, by their row version (see `content::document_cache`).
    pub(crate) documents: std::sync::Arc<crate::content::document_cache::DocumentCache>,
    /// A test's database, dropped with the backend (see `Store::open_for_tests`). Last:
    /// the runtime and pools above are dropped before it.
    throwaway: Option<ThrowawayDatabase>,
}

/// The runtime the backend's tasks run on: its own, shut down without blocking (a store
/// may be dropped inside another runtime, where a blocking shutdown would panic), or the
/// caller's (see [`PgSettings::runtime`]).
enum RuntimeHolder {
    Own(Option<tokio::runtime::Runtime>),
    Caller(tokio::runtime::Handle),
}

impl Drop for RuntimeHolder {
    fn drop(&mut self) {
        if let RuntimeHolder::Own(own) = self {
            if let Some(rt) = own.take() {
                rt.shutdown_background();
            }
        }
    }
}

impl RuntimeHolder {
    fn for_settings(settings: &PgSettings) -> Result<Self> {
        if let Some(handle) = &settings.runtime {
            return Ok(RuntimeHolder::Caller(handle.clone()));
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("hub-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Task(e.to_string()))?;
        Ok(RuntimeHolder::Own(Some(rt)))
    }

    fn handle(&self) -> &tokio::runtime::Handle {
        match self {
            RuntimeHolder::Own(own) => own.as_ref().expect("runtime lives until drop").handle(),
            RuntimeHolder::Caller(handle) => handle,
        }
    }
}

impl PgBackend {
    /// What the Time Series reads read narrow keep between reads.
    fn narrow_caches(&self) -> timeseries::NarrowCaches<'_> {
        timeseries::NarrowCaches {
            provenances: &self.ts_provenances,
            wide: &self.ts_wide_series,
            selections: &self.ts_selections,
            partitions: &self.partitions,
        }
    }

    /// The primary's pool and the replica's, as `/metrics` reports them.
    pub(crate) fn pool_usage(&self) -> Vec<crate::PoolUsage> {
        let usage = |name, pool: &Pool| {
            let status = pool.status();
            crate::PoolUsage {
                pool: name,
                max: status.max_size,
                open: status.size,
                in_use: status.size.saturating_sub(status.available),
                waiting: status.waiting,
            }
        };
        let mut pools = vec![usage("postgres_primary", &self.primary)];
        if let Some(replica) = &self.replica {
            pools.push(usage("postgres_replica", &replica.pool));
        }
        pools
    }

    /// The revisions kept from notifications, when they may answer a cache hit.
    pub(crate) fn notified_revisions(&self) -> Option<crate::content::Revisions> {
        self.revision_watch.as_ref()?.fresh()
    }

    /// How many times the content revisions were read from the database.
    pub(crate) fn revision_reads(&self) -> u64 {
        self.revision_reads
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// This process committed a content write (see `revision_watch`).
    pub(crate) fn content_written(&self) {
        if let Some(watch) = &self.revision_watch {
            watch.written();
        }
    }

    /// The replica's reachability and lag, when one is configured.
    pub(crate) fn replica_status(&self) -> Option<ReplicaStatus> {
        self.replica.as_ref().map(|r| r.status())
    }
}

/// The pools a read tries, in order (see [`PgBackend::read_route`]).
struct ReadRoute {
    first: Pool,
    then: Option<Pool>,
    /// The replica's state when the replica is tried first.
    replica_first: Option<std::sync::Arc<replica::ReplicaState>>,
    mode: StatementMode,
}

/// Pool size per process: enough for the server's concurrency, small enough that a
/// handful of processes stay under PostgreSQL's default `max_connections` (100).
const POOL_SIZE: usize = 16;

/// The default budget of the document cache: 32 MiB, about 6,000 documents of the
/// demo's typical 5 KB (a list page holds ten).
pub const DOCUMENT_CACHE_BYTES: usize = 32 << 20;

/// Shared connections for this machine: one per four cores, at least one. One server
/// process answers about 30,000 reads by key a second (33 µs of its CPU each, measured on
/// two cores), about what four cores serve with Hub's part of each read (78 µs) beside
/// it. On two cores, one shared connection was faster than two (fewer reads per wake-up).
pub fn shared_connections_for_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| cores.get().div_ceil(4))
}

/// Revision reads that may run at once (see [`crate::coalesce`]).
const REVISION_READERS: usize = 2;

impl PgBackend {
    /// Opens `database` as [`PgBackend::open`] does, and drops it with the backend.
    pub(crate) fn open_throwaway(
        database: ThrowawayDatabase,
        settings: &PgSettings,
    ) -> Result<Self> {
        let mut backend = PgBackend::open(database.url(), settings)?;
        backend.throwaway = Some(database);
        Ok(backend)
    }

    /// Connects to `url` (and the replica for reads, when given) and migrates the schema.
    pub(crate) fn open(url: &str, settings: &PgSettings) -> Result<Self> {
        if settings.revision_notify && (settings.transaction_pooler || settings.replica.is_some()) {
            // A transaction-mode pooler drops a session's LISTEN, and a replica's data
            // may lag the primary's notifications.
            return Err(StoreError::Config(
                "revision notifications need a direct connection to the primary: not with a transaction-mode pooler or a read replica".into(),
            ));
        }
        let runtime = RuntimeHolder::for_settings(settings)?;
        let rt = runtime.handle().clone();
        let mode = if settings.transaction_pooler {
            StatementMode::Unnamed(std::sync::Arc::new(TypeCache::default()))
        } else {
            StatementMode::Prepared
        };
        let primary = pool(url, settings.pool_size, session_sql(settings), &rt)?;
        let replica = match &settings.replica {
            Some(u) => Some(replica::Replica {
                pool: pool(u, settings.pool_size, session_sql(settings), &rt)?,
                max_lag: settings.replica_max_lag,
                state: Default::default(),
            }),
            None => None,
        };
        // A replica is chosen read by read (by its lag), and a transaction-mode pooler may
        // hand pipelined statements to different server connections.
        let shared = (replica.is_none() && !settings.transaction_pooler)
            .then(|| {
                shared_reads::SharedReads::new(
                    primary.clone(),
                    settings.pool_size,
                    mode.clone(),
                    settings.shared_connections,
                )
            })
            .flatten();
        let mut backend = PgBackend {
            runtime,
            primary,
            replica,
            mode,
            shared,
            partitions: std::sync::Arc::new(timeseries::partitions::PartitionState::new()),
            revisions: crate::coalesce::Coalesced::new(REVISION_READERS),
            revision_reads: Default::default(),
            revision_watch: None,
            ts_catalog: Default::default(),
            ts_provenances: Default::default(),
            ts_wide_series: Default::default(),
            ts_selections: Default::default(),
            documents: std::sync::Arc::new(crate::content::document_cache::DocumentCache::new(
                settings.document_cache_bytes,
            )),
            throwaway: None,
        };
        backend.write_blocking(|conn| async move { migrations::migrate(conn).await })?;
        // Listening starts after the migrations: the trigger that notifies is one.
        if settings.revision_notify {
            let (config, connector) = connection_config(url)?;
            backend.revision_watch = Some(revision_watch::RevisionWatch::start(
                backend.runtime.handle(),
                config,
                connector,
            ));
        }
        if let Some(r) = &backend.replica {
            // Know the replica's position before the first read, then keep watching it.
            let (pool, mode, state) = (r.pool.clone(), backend.mode.clone(), r.state.clone());
            let first = backend.runtime.handle().spawn(async move {
                replica::check(&pool, &mode, &state).await;
                tokio::spawn(replica::watch(pool, mode, state));
            });
            futures::executor::block_on(first).map_err(|e| StoreError::Task(e.to_string()))?;
        }
        Ok(backend)
    }

    /// Where a read goes now: the replica when it may serve it (see [`replica`]), else
    /// the primary; and where it goes when that does not answer. A read meant for the
    /// primary (the replica lags or lacks this process's latest write) is served by the
    /// replica when the primary is restarting or failing over: possibly stale rather
    /// than no answer at all.
    fn read_route(&self) -> ReadRoute {
        match &self.replica {
            Some(r) if r.serves_reads() => ReadRoute {
                first: r.pool.clone(),
                then: Some(self.primary.clone()),
                replica_first: Some(r.state.clone()),
                mode: self.mode.clone(),
            },
            Some(r) => ReadRoute {
                first: self.primary.clone(),
                then: Some(r.pool.clone()),
                replica_first: None,
                mode: self.mode.clone(),
            },
            None => ReadRoute {
                first: self.primary.clone(),
                then: None,
                replica_first: None,
                mode: self.mode.clone(),
            },
        }
    }

    /// Runs `work` with a connection from the read pool (the replica when it may
    /// serve); a read that finds its server unavailable runs once more on the other.
    pub(crate) async fn read<T, F, Fut>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Conn) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        let route = self.read_route();
        self.runtime
            .handle()
            .spawn(async move {
                let again = work.clone();
                let first = match route.first.get().await {
                    Ok(object) => work(Conn::new(object, route.mode.clone())).await,
                    Err(e) => Err(pool_error(e)),
                };
                match (first, route.then) {
                    (Err(e), Some(then)) if e.is_unavailable() => {
                        if let Some(state) = &route.replica_first {
                            state.mark_unreachable();
                        }
                        let object = then.get().await.map_err(|_| e)?;
                        again(Conn::new(object, route.mode)).await
                    }
                    (result, _) => result,
                }
            })
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Runs `work`, a read of a few rows by key, on a shared connection (see
    /// [`shared_reads`]), or as [`PgBackend::read`] does where there is none. Not
    /// spawned: should the caller go away, the connection still reads the answer and drops
    /// it, and the reads pipelined behind it are not disturbed.
    pub(crate) async fn point_read<T, F, Fut>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(std::sync::Arc<Conn>) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        match &self.shared {
            Some(shared) => work(shared.conn(self.runtime.handle()).await?).await,
            None => self.read(move |conn| work(std::sync::Arc::new(conn))).await,
        }
    }

    /// Starts `work` with a connection from the read pool without waiting for it (a
    /// cursor feeding a [`crate::batches::Batches`]). A pool failure is handed to `work`.
    pub(crate) fn spawn_read<F, Fut>(&self, work: F)
    where
        F: FnOnce(Result<Conn>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let route = self.read_route();
        self.runtime.handle().spawn(async move {
            let conn = match (route.first.get().await, route.then) {
                (Ok(object), _) => Ok(object),
                (Err(e), Some(then)) => {
                    if let Some(state) = &route.replica_first {
                        state.mark_unreachable();
                    }
                    then.get().await.map_err(|_| pool_error(e))
                }
                (Err(e), None) => Err(pool_error(e)),
            };
            work(conn.map(|object| Conn::new(object, route.mode))).await
        });
    }

    /// `work` on a primary connection, then (with a replica) the primary's WAL position
    /// noted for read-your-writes.
    fn write_task<T, F, Fut>(&self, work: F) -> impl Future<Output = Result<T>> + Send + 'static
    where
        T: Send + 'static,
        F: FnOnce(Conn) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        let pool = self.primary.clone();
        let mode = self.mode.clone();
        let state = self.replica.as_ref().map(|r| r.state.clone());
        async move {
            let object = pool.get().await.map_err(pool_error)?;
            let out = work(Conn::new(object, mode.clone())).await?;
            if let Some(state) = state {
                // The insert position is server-wide: any connection to the primary
                // reports one at or past the write's commit. Should the primary vanish
                // right after the commit, the position stays unknown and only this
                // write's read-your-writes is not ensured (documented).
                if let Ok(object) = pool.get().await {
                    if let Some(lsn) = replica::primary_position(&Conn::new(object, mode)).await {
                        state.wrote_at(lsn);
                    }
                }
            }
            Ok(out)
        }
    }

    /// Runs `work` with a connection to the primary.
    pub(crate) async fn write<T, F, Fut>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Conn) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        self.runtime
            .handle()
            .spawn(self.write_task(work))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Like [`PgBackend::write`], waiting on the calling thread (commands, bulk loads,
    /// and callers inside another runtime that must not await).
    pub(crate) fn write_blocking<T, F, Fut>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Conn) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        let task = self.runtime.handle().spawn(self.write_task(work));
        futures::executor::block_on(task).map_err(|e| StoreError::Task(e.to_string()))?
    }
}

/// Prepares a compiled read query once per connection: its text varies only with the
/// request's shape (values are bound), so repeated requests skip the parse round trip
/// and PostgreSQL's parsing. Clients can vary shapes at will, so the cache is bounded
/// (the unnamed mode bounds its own cache of parameter types).
pub(crate) async fn prepare_bounded(
    conn: &Conn,
    sql: &str,
) -> std::result::Result<session::Stmt, tokio_postgres::Error> {
    bound_statement_cache(conn);
    conn.prepare_cached(sql).await
}

/// Empties the connection's statement cache when it is full, before statements of
/// shapes clients choose are added to it.
pub(crate) fn bound_statement_cache(conn: &Conn) {
    if conn.cached_statements().size() >= session::STATEMENT_CACHE_LIMIT {
        conn.cached_statements().clear();
    }
}

fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => StoreError::Postgres(e),
        other => StoreError::Unavailable(other.to_string()),
    }
}

/// A database URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}://{}@{}", &url[..scheme], user, &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
#[path = "session_sql_tests.rs"]
mod session_sql_tests;

#[cfg(test)]
#[path = "never_null_tests.rs"]
mod never_null_tests;

#[cfg(test)]
#[path = "pool_tests.rs"]
mod pool_tests;
#[cfg(test)]
#[path = "shared_reads_tests.rs"]
mod shared_reads_tests;

#[cfg(test)]
#[path = "row_layout_tests.rs"]
mod row_layout_tests;

#[cfg(test)]
#[path = "path_values_tests.rs"]
mod path_values_tests;

#[cfg(test)]
#[path = "position_tests.rs"]
mod position_tests;

#[cfg(test)]
pub(crate) mod test_server;

#[cfg(test)]
#[path = "document_cache_tests.rs"]
mod document_cache_tests;
