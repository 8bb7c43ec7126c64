//! The PostgreSQL + PostGIS backend: two connection pools (the primary for writes, an
//! optional read replica for reads), schema migrations under an advisory lock so several
//! `hub serve` processes can start together, and a runtime of its own.
//!
//! Why a runtime of its own: a pooled connection's socket belongs to the runtime that
//! opened it. Hub calls the store from the server's runtime, from per-test runtimes and
//! from blocking commands; running every database future on this backend's runtime
//! keeps connections valid whichever runtime asks, and lets blocking callers wait with
//! a plain executor (the same discipline the SQLite backend keeps with its threads).

pub(crate) mod auth;
mod bind;
pub(crate) mod content;
mod migrations;
mod rawfilter;
pub(crate) mod timeseries;

pub(crate) use content::PgContent;

pub(crate) use migrations::describe;

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

pub(crate) use bind::{bind, refs};

use crate::{Result, StoreError};

/// A pooled connection.
pub(crate) type Conn = deadpool_postgres::Object;

pub(crate) struct PgBackend {
    runtime: RuntimeHolder,
    primary: Pool,
    replica: Option<Pool>,
    /// The `ts_history` partitions this process knows of (see `timeseries::partitions`).
    partitions: std::sync::Arc<timeseries::partitions::PartitionState>,
}

/// Owns the backend's runtime and shuts it down without blocking: a store may be dropped
/// inside another runtime, where a blocking shutdown would panic.
struct RuntimeHolder(Option<tokio::runtime::Runtime>);

impl Drop for RuntimeHolder {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

impl RuntimeHolder {
    fn handle(&self) -> &tokio::runtime::Handle {
        self.0.as_ref().expect("runtime lives until drop").handle()
    }
}

impl PgBackend {
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
            pools.push(usage("postgres_replica", replica));
        }
        pools
    }
}

/// Pool size per process: enough for the server's concurrency, small enough that a
/// handful of processes stay under PostgreSQL's default `max_connections` (100).
const POOL_SIZE: usize = 16;

fn pool(url: &str, rt: &tokio::runtime::Runtime) -> Result<Pool> {
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e: tokio_postgres::Error| StoreError::Config(format!("{}: {e}", redact(url))))?;
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let _guard = rt.enter();
    Pool::builder(manager)
        .max_size(POOL_SIZE)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(Some(Duration::from_secs(30)))
        .create_timeout(Some(Duration::from_secs(10)))
        .build()
        .map_err(|e| StoreError::Config(e.to_string()))
}

impl PgBackend {
    /// Connects to `url` (and `replica_url` for reads, when given) and migrates the schema.
    pub(crate) fn open(url: &str, replica_url: Option<&str>) -> Result<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("hub-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Task(e.to_string()))?;
        let primary = pool(url, &rt)?;
        let replica = replica_url.map(|u| pool(u, &rt)).transpose()?;
        let backend = PgBackend {
            runtime: RuntimeHolder(Some(rt)),
            primary,
            replica,
            partitions: std::sync::Arc::new(timeseries::partitions::PartitionState::new()),
        };
        backend.write_blocking(|conn| async move { migrations::migrate(conn).await })?;
        Ok(backend)
    }

    async fn run<T, F, Fut>(&self, pool: Pool, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Conn) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        self.runtime
            .handle()
            .spawn(async move {
                let conn = pool.get().await.map_err(pool_error)?;
                work(conn).await
            })
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Runs `work` with a connection from the read pool (the replica when configured).
    pub(crate) async fn read<T, F, Fut>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Conn) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        let pool = self.replica.as_ref().unwrap_or(&self.primary).clone();
        self.run(pool, work).await
    }

    /// Starts `work` with a connection from the read pool without waiting for it (a
    /// cursor feeding a [`crate::batches::Batches`]). A pool failure is handed to `work`.
    pub(crate) fn spawn_read<F, Fut>(&self, work: F)
    where
        F: FnOnce(Result<Conn>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let pool = self.replica.as_ref().unwrap_or(&self.primary).clone();
        self.runtime.handle().spawn(async move {
            let conn = pool.get().await.map_err(pool_error);
            work(conn).await
        });
    }

    /// Runs `work` with a connection to the primary.
    pub(crate) async fn write<T, F, Fut>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Conn) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        self.run(self.primary.clone(), work).await
    }

    /// Like [`PgBackend::write`], waiting on the calling thread (commands, bulk loads,
    /// and callers inside another runtime that must not await).
    pub(crate) fn write_blocking<T, F, Fut>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Conn) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        let pool = self.primary.clone();
        let task = self.runtime.handle().spawn(async move {
            let conn = pool.get().await.map_err(pool_error)?;
            work(conn).await
        });
        futures::executor::block_on(task).map_err(|e| StoreError::Task(e.to_string()))?
    }
}

/// Prepared statements kept per pooled connection before the cache is emptied.
const STATEMENT_CACHE_LIMIT: usize = 500;

/// Prepares a compiled read query once per connection: its text varies only with the
/// request's shape (values are bound), so repeated requests skip the parse round trip
/// and PostgreSQL's parsing. Clients can vary shapes at will, so the cache is bounded.
pub(crate) async fn prepare_bounded(
    conn: &Conn,
    sql: &str,
) -> std::result::Result<tokio_postgres::Statement, tokio_postgres::Error> {
    if conn.statement_cache.size() >= STATEMENT_CACHE_LIMIT {
        conn.statement_cache.clear();
    }
    conn.prepare_cached(sql).await
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

/// Creates database `name` through the server at `admin_url` (for tests and `hub migrate`
/// targets), dropping an existing one first when `replace` is set. `name` must be a plain
/// identifier (letters, digits, underscores).
pub fn create_database(admin_url: &str, name: &str, replace: bool) -> Result<String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(StoreError::Config(format!(
            "not a plain database name: {name:?}"
        )));
    }
    let admin: tokio_postgres::Config = admin_url
        .parse()
        .map_err(|e: tokio_postgres::Error| StoreError::Config(e.to_string()))?;
    let run = async {
        let (client, connection) = admin.connect(NoTls).await?;
        let driver = tokio::spawn(connection);
        if replace {
            // The name was checked to be a plain identifier above.
            client
                .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await?;
        }
        client.batch_execute(&format!("CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")).await?;
        drop(client);
        let _ = driver.await;
        Ok::<_, tokio_postgres::Error>(())
    };
    // On a thread of its own: the caller may be inside another runtime, which must
    // neither block on nor drop a runtime.
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| StoreError::Task(e.to_string()))?;
            rt.block_on(run).map_err(StoreError::from)
        })
        .join()
    })
    .map_err(|_| StoreError::Task("database creation panicked".into()))??;
    Ok(url_with_database(admin_url, name))
}

/// `url` with its database name replaced by `name`.
pub fn url_with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let after_scheme = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[after_scheme..].find('/') {
        Some(slash) => &base[..after_scheme + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}
