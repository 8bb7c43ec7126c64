//! The embedded SQLite backend: one writer connection, a pool of readers (WAL lets them
//! read while the writer writes), every call on a blocking thread.
//!
//! A connection loads the planner's statistics (`sqlite_stat1`) when it first reads the
//! schema and keeps them: an `ANALYZE` by another connection reaches none of the open
//! readers, and a read-only connection cannot reload them itself. So every `ANALYZE`
//! Hub runs moves a statistics generation on, and a reader opened before it is replaced
//! by a new connection when it is next taken from the pool ([`Inner::current`]).
//!
//! The bundled SQLite is built with the flags in `.cargo/config.toml`: no process-wide
//! lock per page or allocation, and no STAT4 (which compiled a statement again whenever
//! a bound value changed); the tests at the end of this file check both.

pub(crate) mod auth;
pub(crate) mod timeseries;
mod timeseries_rows;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};
use hub_query::SqlValue;
use md5::{Digest, Md5};
use rusqlite::functions::FunctionFlags;
use rusqlite::{params, Connection, OpenFlags, ToSql};

use crate::migrations::MIGRATIONS;
use crate::{Result, StoreError};

mod content;
mod wal_index;

pub(crate) use content::SqliteContent;

/// The store's database file in its directory.
pub(crate) const DATABASE_FILE: &str = "hub.sqlite3";

pub(crate) struct SqliteBackend {
    inner: Arc<Inner>,
}

/// Fields drop in order: the readers close before the writer, so the writer is the last
/// connection and checkpoints the log into the database file and removes it (a
/// read-only connection cannot, and would leave the log behind at shutdown).
struct Inner {
    readers_tx: Sender<Reader>,
    readers_rx: Receiver<Reader>,
    /// The connections of [`SqliteBackend::read_quick`], one per core.
    quick_readers: Vec<Mutex<Connection>>,
    writer: Mutex<Connection>,
    readers: usize,
    /// Calls waiting for a reader or for the writer (for `/metrics`).
    waiting_readers: AtomicUsize,
    waiting_writers: AtomicUsize,
    /// Content revisions kept while the database is unchanged (response-cache hits).
    revisions: wal_index::RevisionMemory,
    /// The provenances of history answers read narrow, by their revision.
    ts_provenances: crate::timeseries::ProvenanceCache,
    /// The series reads found too wide for a history answer read narrow.
    ts_wide_series: crate::timeseries::WideSeriesReads,
    /// Moved on by every `ANALYZE` Hub runs; readers opened at an older one are replaced.
    statistics: AtomicU64,
    /// The statistics (`statistics_digest`) the last optimization found, to tell when
    /// they changed since, by this process or another sharing the file.
    statistics_seen: Mutex<String>,
    /// Where and how readers are opened.
    file: PathBuf,
    tuning: SqliteTuning,
}

/// A pooled reader and the statistics generation it was opened at.
struct Reader {
    conn: Connection,
    statistics: u64,
}

impl Inner {
    /// `reader`, or a new connection in its place when the planner's statistics changed
    /// since it was opened (it keeps the old one if a new one cannot be opened).
    fn current(&self, reader: Reader) -> Reader {
        let now = self.statistics.load(Ordering::Acquire);
        if reader.statistics == now {
            return reader;
        }
        match open_reader(&self.file, self.tuning) {
            Ok(conn) => Reader {
                conn,
                statistics: now,
            },
            Err(e) => {
                tracing::warn!(error = %e, "could not reopen a reader for new planner statistics");
                reader
            }
        }
    }

    /// The next free reader, waiting for one.
    fn take_reader(&self) -> Result<Reader> {
        let waiting = Waiting::start(&self.waiting_readers);
        let reader = self
            .readers_rx
            .recv()
            .map_err(|e| StoreError::Task(e.to_string()))?;
        drop(waiting);
        Ok(self.current(reader))
    }
}

/// A read-only connection to `file`.
fn open_reader(file: &Path, tuning: SqliteTuning) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        file,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    configure(&conn, tuning)?;
    Ok(conn)
}

/// Most [`SqliteBackend::read_quick`] connections a store keeps.
const QUICK_READERS_MAX: usize = 8;

/// A small number that differs between threads, to spread waiting callers.
fn thread_slot() -> usize {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::thread::current().id().hash(&mut hasher);
    hasher.finish() as usize
}

/// Counts a caller as waiting until it has its connection.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn start(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Waiting(counter)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Memory the embedded store may use for caching, per the deployment's configuration.
/// Both bound the server's resident memory: each connection (one writer, the readers)
/// keeps up to `cache_mib` of pages, and pages read through the memory map count as
/// resident while the kernel keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteTuning {
    /// Page cache per connection, in MiB (`PRAGMA cache_size`).
    pub cache_mib: u32,
    /// Bytes of the database file read through `mmap`, in MiB (`PRAGMA mmap_size`; 0 =
    /// plain reads).
    pub mmap_mib: u32,
    /// Largest size the database file may grow to, in MiB (0 = no cap). Writes beyond it
    /// fail as on a full disk (503 + `Retry-After`), so a store can be kept from filling
    /// a volume it shares.
    pub max_size_mib: u32,
}

impl Default for SqliteTuning {
    fn default() -> Self {
        SqliteTuning {
            cache_mib: 8,
            mmap_mib: 0,
            max_size_mib: 0,
        }
    }
}

impl SqliteBackend {
    pub(crate) fn open(dir: &Path, tuning: SqliteTuning) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
            path: dir.display().to_string(),
            source,
        })?;
        let file = dir.join(DATABASE_FILE);
        let mut writer = Connection::open(&file)?;
        configure(&writer, tuning)?;
        migrate(&mut writer)?;
        let readers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(2, 8)
            * 2;
        let (readers_tx, readers_rx) = crossbeam_channel::bounded(readers);
        for _ in 0..readers {
            let conn = open_reader(&file, tuning)?;
            readers_tx
                .send(Reader {
                    conn,
                    statistics: 0,
                })
                .expect("channel sized for the pool");
        }
        // One per core: the async workers calling at once each find one free instead of
        // waiting on a shared lock (a futex sleep and wake-up per contended hit).
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let quick_readers = (0..cores.clamp(1, QUICK_READERS_MAX))
            .map(|_| {
                let conn = open_reader(&file, tuning)?;
                // It runs on an async worker: give up soon rather than stall it
                // (callers fall back to the pool or recompute).
                conn.busy_timeout(std::time::Duration::from_millis(50))?;
                Ok(Mutex::new(conn))
            })
            .collect::<Result<Vec<_>>>()?;
        let statistics_seen = Mutex::new(statistics_digest(&writer));
        // After the writer has put the database in WAL mode: the index exists now.
        let revisions = wal_index::RevisionMemory::open(&file);
        Ok(SqliteBackend {
            inner: Arc::new(Inner {
                quick_readers,
                writer: Mutex::new(writer),
                readers_tx,
                readers_rx,
                readers,
                waiting_readers: AtomicUsize::new(0),
                waiting_writers: AtomicUsize::new(0),
                revisions,
                ts_provenances: Default::default(),
                ts_wide_series: Default::default(),
                statistics: AtomicU64::new(0),
                statistics_seen,
                file,
                tuning,
            }),
        })
    }

    /// Runs `work` with a reader connection on a blocking thread.
    pub(crate) async fn read<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let reader = inner.take_reader()?;
            let result = work(&reader.conn);
            let _ = inner.readers_tx.send(reader);
            result
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Runs `work`, a read of microseconds (a primary-key lookup in a table of a few
    /// rows), on the calling thread with a connection of its own: handing it to the
    /// blocking pool would cost more than the read (two thread switches per call, which
    /// is what a response-cache hit would otherwise spend most of its time on).
    pub(crate) fn read_quick<T>(&self, work: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        for reader in &self.inner.quick_readers {
            match reader.try_lock() {
                Ok(conn) => return work(&conn),
                Err(std::sync::TryLockError::Poisoned(e)) => return work(&e.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
        }
        // All busy (more callers than cores): wait for the one this thread maps to.
        let index = thread_slot() % self.inner.quick_readers.len();
        let conn = self.inner.quick_readers[index]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        work(&conn)
    }

    /// The provenances of history answers read narrow, kept between reads.
    pub(crate) fn ts_provenances(&self) -> &crate::timeseries::ProvenanceCache {
        &self.inner.ts_provenances
    }

    /// The series reads found too wide for a history answer read narrow, kept a while.
    pub(crate) fn ts_wide_series(&self) -> &crate::timeseries::WideSeriesReads {
        &self.inner.ts_wide_series
    }

    /// Every entity's content revision: kept in memory while the database is unchanged
    /// (see [`wal_index`]), else read on the calling thread.
    pub(crate) fn revisions(&self) -> Result<crate::content::Revisions> {
        self.inner.revisions.revisions(|| {
            self.read_quick(|conn| {
                let mut stmt = conn.prepare_cached(crate::content::REVISIONS_SQL)?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                Ok(Arc::new(rows.collect::<rusqlite::Result<_>>()?))
            })
        })
    }

    /// How many times the content revisions were read from the database.
    pub(crate) fn revision_reads(&self) -> u64 {
        self.inner.revisions.reads()
    }

    /// Starts `work` with a reader connection on a blocking thread without waiting for
    /// it (a cursor feeding a [`crate::batches::Batches`]); the connection goes back to
    /// the pool when `work` returns. A pool failure is handed to `work` instead.
    pub(crate) fn spawn_read<F>(&self, work: F)
    where
        F: FnOnce(Result<&Connection>) + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || match inner.take_reader() {
            Ok(reader) => {
                work(Ok(&reader.conn));
                let _ = inner.readers_tx.send(reader);
            }
            Err(e) => work(Err(e)),
        });
    }

    /// Tells the readers that the planner's statistics changed (an `ANALYZE` ran): each
    /// is replaced by a new connection, which loads them, when next taken.
    pub(crate) fn statistics_changed(&self) {
        self.inner.statistics.fetch_add(1, Ordering::AcqRel);
    }

    /// `PRAGMA optimize` on the writer: SQLite analyzes the tables whose size changed
    /// much since their statistics were taken (nothing, mostly), within a bounded
    /// sample. `0x10002`: every table, not only those this connection queried (the
    /// writer writes; the readers query). The readers are told only when the
    /// statistics differ from those the last optimization found, whoever changed them.
    pub(crate) async fn optimize_statistics(&self) -> Result<()> {
        let now = self
            .write(|conn| {
                conn.execute_batch("PRAGMA optimize = 0x10002")?;
                Ok(statistics_digest(conn))
            })
            .await?;
        let mut seen = self
            .inner
            .statistics_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if *seen != now {
            *seen = now;
            self.statistics_changed();
        }
        Ok(())
    }

    /// Runs `work` with the writer connection on a blocking thread.
    pub(crate) async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let waiting = Waiting::start(&inner.waiting_writers);
            let mut conn = inner
                .writer
                .lock()
                .map_err(|e| StoreError::Task(e.to_string()))?;
            drop(waiting);
            work(&mut conn)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// The reader pool and the writer, as `/metrics` reports them.
    pub(crate) fn pool_usage(&self) -> Vec<crate::PoolUsage> {
        let inner = &self.inner;
        let writer_busy = match inner.writer.try_lock() {
            Ok(_) => 0,
            Err(_) => 1,
        };
        vec![
            crate::PoolUsage {
                pool: "sqlite_readers",
                max: inner.readers,
                open: inner.readers,
                in_use: inner.readers - inner.readers_rx.len().min(inner.readers),
                waiting: inner.waiting_readers.load(Ordering::Relaxed),
            },
            crate::PoolUsage {
                pool: "sqlite_writer",
                max: 1,
                open: 1,
                in_use: writer_busy,
                waiting: inner.waiting_writers.load(Ordering::Relaxed),
            },
        ]
    }

    /// Runs `work` with the writer connection on the calling thread (commands, bulk loads).
    pub(crate) fn write_blocking<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T>,
    ) -> Result<T> {
        let mut conn = self
            .inner
            .writer
            .lock()
            .map_err(|e| StoreError::Task(e.to_string()))?;
        work(&mut conn)
    }
}

/// The planner's statistics as text (empty before the first `ANALYZE`), to tell whether
/// an `ANALYZE` changed them.
fn statistics_digest(conn: &Connection) -> String {
    conn.query_row(
        "SELECT group_concat(s, ';') FROM \
         (SELECT tbl || ' ' || ifnull(idx, '') || ' ' || stat AS s FROM sqlite_stat1 ORDER BY s)",
        [],
        |r| r.get::<_, Option<String>>(0),
    )
    .ok()
    .flatten()
    .unwrap_or_default()
}

fn configure(conn: &Connection, tuning: SqliteTuning) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")?;
    // A negative cache_size is KiB rather than pages.
    conn.pragma_update(None, "cache_size", -i64::from(tuning.cache_mib) * 1024)?;
    conn.pragma_update(None, "mmap_size", i64::from(tuning.mmap_mib) * 1024 * 1024)?;
    if tuning.max_size_mib > 0 {
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let pages = i64::from(tuning.max_size_mib) * 1024 * 1024 / page_size.max(512);
        conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))?;
    }
    if !conn.is_readonly(rusqlite::DatabaseName::Main)? {
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    conn.create_scalar_function(
        "hub_seed",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let id: String = ctx.get(0)?;
            let seed: String = ctx.get(1)?;
            Ok(seed_key(&id, &seed))
        },
    )?;
    crate::timeseries::register_functions(conn)?;
    crate::geo_functions::register(conn)?;
    crate::rawfilter_functions::register(conn)?;
    Ok(())
}

/// First 15 hex digits of `md5(id || seed)` as an integer; PostgreSQL computes the same.
pub(crate) fn seed_key(id: &str, seed: &str) -> i64 {
    let digest = Md5::new()
        .chain_update(id.as_bytes())
        .chain_update(seed.as_bytes())
        .finalize();
    // 15 hex digits = the top 60 bits of the digest.
    let top = u64::from_be_bytes(digest[..8].try_into().expect("md5 has 16 bytes"));
    (top >> 4) as i64
}

fn migrate(conn: &mut Connection) -> Result<()> {
    conn.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")?;
    let current: i64 = conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )?;
    let known = MIGRATIONS.last().map(|m| m.version).unwrap_or(0);
    if current > known {
        return Err(StoreError::SchemaTooNew {
            found: current,
            known,
        });
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > current) {
        let tx = conn.transaction()?;
        tx.execute_batch(m.sqlite)?;
        tx.execute(
            "INSERT INTO schema_version (version, name, applied_at) VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
            params![m.version, m.name],
        )?;
        tx.commit()?;
        tracing::info!(
            version = m.version,
            name = m.name,
            "applied schema migration"
        );
    }
    Ok(())
}

pub(crate) fn bind(values: &[SqlValue]) -> Vec<&dyn ToSql> {
    values
        .iter()
        .map(|v| -> &dyn ToSql {
            match v {
                SqlValue::Null => &rusqlite::types::Null,
                SqlValue::Bool(b) => b,
                SqlValue::Int(i) => i,
                SqlValue::Real(f) => f,
                SqlValue::Text(s) => s,
            }
        })
        .collect()
}

/// The plan SQLite makes for `sql` with `params`, one line per step (tests hold a
/// statement's plan against the indexes it should read).
#[cfg(test)]
pub(crate) fn query_plan(
    conn: &Connection,
    sql: &str,
    params: &[SqlValue],
) -> rusqlite::Result<String> {
    let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
    let params = bind(params);
    let mut rows = st.query(params.as_slice())?;
    let mut plan = String::new();
    while let Some(row) = rows.next()? {
        plan.push_str(&row.get::<_, String>(3)?);
        plan.push('\n');
    }
    Ok(plan)
}

/// The SQLite backend of `store`, for tests of its plans and connections.
#[cfg(test)]
pub(crate) fn backend_of(store: &crate::Store) -> &SqliteBackend {
    match &*store.backend {
        crate::Backend::Sqlite(backend) => backend,
        crate::Backend::Postgres(_) => panic!("not SQLite"),
    }
}

/// The plan SQLite makes for `statement` in `store` ([`query_plan`]).
#[cfg(test)]
pub(crate) async fn statement_plan(
    store: &crate::Store,
    statement: &hub_query::SqlBuilder,
) -> String {
    let (sql, params) = (statement.as_sql().to_string(), statement.params().to_vec());
    backend_of(store)
        .read(move |conn| Ok(query_plan(conn, &sql, &params)?))
        .await
        .unwrap()
}

#[cfg(test)]
#[path = "statistics_tests.rs"]
mod statistics_tests;

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "position_tests.rs"]
pub(crate) mod position_tests;
