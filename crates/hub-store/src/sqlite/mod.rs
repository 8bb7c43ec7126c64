//! The embedded SQLite backend: one writer connection, a pool of readers (WAL lets them
//! read while the writer writes), every call on a blocking thread.

pub(crate) mod auth;
pub(crate) mod timeseries;

use std::path::Path;
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};
use hub_query::SqlValue;
use md5::{Digest, Md5};
use rusqlite::functions::FunctionFlags;
use rusqlite::{params, Connection, OpenFlags, ToSql};

use crate::migrations::MIGRATIONS;
use crate::{Result, StoreError};

mod content;

pub(crate) use content::SqliteContent;

const DATABASE_FILE: &str = "hub.sqlite3";

pub(crate) struct SqliteBackend {
    inner: Arc<Inner>,
}

struct Inner {
    writer: Mutex<Connection>,
    readers_tx: Sender<Connection>,
    readers_rx: Receiver<Connection>,
}

impl SqliteBackend {
    pub(crate) fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
            path: dir.display().to_string(),
            source,
        })?;
        let file = dir.join(DATABASE_FILE);
        let mut writer = Connection::open(&file)?;
        configure(&writer)?;
        migrate(&mut writer)?;
        let readers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(2, 8)
            * 2;
        let (readers_tx, readers_rx) = crossbeam_channel::bounded(readers);
        for _ in 0..readers {
            let conn = Connection::open_with_flags(
                &file,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            configure(&conn)?;
            readers_tx.send(conn).expect("channel sized for the pool");
        }
        Ok(SqliteBackend {
            inner: Arc::new(Inner {
                writer: Mutex::new(writer),
                readers_tx,
                readers_rx,
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
            let conn = inner
                .readers_rx
                .recv()
                .map_err(|e| StoreError::Task(e.to_string()))?;
            let result = work(&conn);
            let _ = inner.readers_tx.send(conn);
            result
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Starts `work` with a reader connection on a blocking thread without waiting for
    /// it (a cursor feeding a [`crate::batches::Batches`]); the connection goes back to
    /// the pool when `work` returns. A pool failure is handed to `work` instead.
    pub(crate) fn spawn_read<F>(&self, work: F)
    where
        F: FnOnce(Result<&Connection>) + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || match inner.readers_rx.recv() {
            Ok(conn) => {
                work(Ok(&conn));
                let _ = inner.readers_tx.send(conn);
            }
            Err(e) => work(Err(StoreError::Task(e.to_string()))),
        });
    }

    /// Runs `work` with the writer connection on a blocking thread.
    pub(crate) async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = inner
                .writer
                .lock()
                .map_err(|e| StoreError::Task(e.to_string()))?;
            work(&mut conn)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
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

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32000; PRAGMA mmap_size = 268435456;")?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_key_is_the_first_fifteen_hex_digits_of_md5() {
        // `printf abc7 | md5sum` = b10a12a4c02c49e80059781f82c19ea4
        assert_eq!(
            seed_key("abc", "7"),
            i64::from_str_radix("b10a12a4c02c49e", 16).unwrap()
        );
    }
}
