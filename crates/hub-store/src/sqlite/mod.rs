//! The embedded SQLite backend: one writer connection, a pool of readers (WAL lets them
//! read while the writer writes), every call on a blocking thread.

pub(crate) mod timeseries;

use std::path::Path;
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};
use hub_query::content::CompiledList;
use hub_query::SqlValue;
use md5::{Digest, Md5};
use rusqlite::functions::FunctionFlags;
use rusqlite::{params, Connection, OpenFlags, ToSql};

use crate::migrations::MIGRATIONS;
use crate::{ContentPage, IndexedDocument, Result, StoreError};

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

    pub(crate) async fn list_content(&self, compiled: CompiledList) -> Result<ContentPage> {
        self.read(move |conn| {
            let count = |conn: &Connection| -> Result<i64> {
                Ok(conn
                    .prepare_cached(compiled.count.as_sql())?
                    .query_row(bind(compiled.count.params()).as_slice(), |r| r.get(0))?)
            };
            let mut stmt = conn.prepare_cached(compiled.page.as_sql())?;
            let mut total_in_page = None;
            let docs = stmt
                .query_map(bind(compiled.page.params()).as_slice(), |r| {
                    if compiled.page_has_total {
                        total_in_page = Some(r.get::<_, i64>(1)?);
                    }
                    r.get::<_, String>(0)
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let total = match total_in_page {
                Some(n) => n,
                None => count(conn)?,
            };
            Ok(ContentPage {
                total: total as u64,
                docs,
            })
        })
        .await
        .map_err(crate::rawfilter_functions::client_error)
    }

    pub(crate) async fn get_content(
        &self,
        entity: &'static str,
        id_key: String,
    ) -> Result<Option<String>> {
        self.read(move |conn| {
            let mut stmt =
                conn.prepare_cached("SELECT doc FROM content WHERE entity = ?1 AND id_key = ?2")?;
            let mut rows = stmt.query(params![entity, id_key])?;
            Ok(match rows.next()? {
                Some(row) => Some(row.get(0)?),
                None => None,
            })
        })
        .await
    }

    pub(crate) async fn all_content(&self, entity: &'static str) -> Result<Vec<String>> {
        self.read(move |conn| {
            let mut stmt =
                conn.prepare_cached("SELECT doc FROM content WHERE entity = ?1 ORDER BY id_key")?;
            let rows = stmt.query_map([entity], |r| r.get::<_, String>(0))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    pub(crate) async fn content_revision(&self, entity: &'static str) -> Result<i64> {
        self.read(move |conn| {
            let mut stmt =
                conn.prepare_cached("SELECT revision FROM content_revision WHERE entity = ?1")?;
            let mut rows = stmt.query([entity])?;
            Ok(match rows.next()? {
                Some(row) => row.get(0)?,
                None => 0,
            })
        })
        .await
    }

    pub(crate) async fn content_counts(&self) -> Result<Vec<(String, u64)>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT entity, COUNT(*) FROM content GROUP BY entity ORDER BY entity",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    pub(crate) fn put_content_batch(
        &self,
        docs: &[IndexedDocument],
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let mut conn = self
            .inner
            .writer
            .lock()
            .map_err(|e| StoreError::Task(e.to_string()))?;
        let tx = conn.transaction()?;
        {
            let mut delete_side = [
                tx.prepare_cached(
                    "DELETE FROM content_language WHERE entity = ?1 AND id_key = ?2",
                )?,
                tx.prepare_cached("DELETE FROM content_title WHERE entity = ?1 AND id_key = ?2")?,
                tx.prepare_cached("DELETE FROM content_tag WHERE entity = ?1 AND id_key = ?2")?,
            ];
            let mut upsert = tx.prepare_cached(
                "INSERT OR REPLACE INTO content (entity, id_key, id, sort_key, source, active, last_change, latitude, longitude, doc, docb) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, jsonb(?10))",
            )?;
            let mut language = tx.prepare_cached(
                "INSERT INTO content_language (entity, id_key, lang) VALUES (?1, ?2, ?3)",
            )?;
            let mut title = tx.prepare_cached(
                "INSERT INTO content_title (entity, id_key, lang, folded) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut tag = tx.prepare_cached("INSERT OR IGNORE INTO content_tag (entity, id_key, kind, tag) VALUES (?1, ?2, ?3, ?4)")?;
            for (n, d) in docs.iter().enumerate() {
                for stmt in delete_side.iter_mut() {
                    stmt.execute(params![d.entity, d.id_key])?;
                }
                upsert.execute(params![
                    d.entity,
                    d.id_key,
                    d.id,
                    d.sort_key,
                    d.source,
                    d.active,
                    d.last_change,
                    d.latitude,
                    d.longitude,
                    d.doc
                ])?;
                for lang in &d.languages {
                    language.execute(params![d.entity, d.id_key, lang])?;
                }
                for (lang, folded) in &d.titles {
                    title.execute(params![d.entity, d.id_key, lang, folded])?;
                }
                for (kind, t) in &d.tags {
                    tag.execute(params![d.entity, d.id_key, kind, t])?;
                }
                if n % 1000 == 999 {
                    progress(n as u64 + 1);
                }
            }
        }
        bump_revisions(&tx, docs.iter().map(|d| d.entity))?;
        tx.commit()?;
        // Bulk loads change the shape of the data: refresh the planner's statistics so
        // it keeps choosing the selective indexes (tags by id, not by document).
        if docs.len() >= 1000 {
            conn.execute_batch("ANALYZE")?;
        }
        progress(docs.len() as u64);
        Ok(())
    }
}

/// Counts writes per entity type, in the writing transaction, so caches of derived
/// views (the traffic feed) can tell cheaply whether anything changed.
pub(crate) fn bump_revisions<'a>(
    tx: &Connection,
    entities: impl Iterator<Item = &'a str>,
) -> Result<()> {
    let mut touched: Vec<&str> = entities.collect();
    touched.sort_unstable();
    touched.dedup();
    let mut stmt = tx.prepare_cached(
        "INSERT INTO content_revision (entity, revision) VALUES (?1, 1) ON CONFLICT (entity) DO UPDATE SET revision = revision + 1",
    )?;
    for entity in touched {
        stmt.execute([entity])?;
    }
    Ok(())
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
