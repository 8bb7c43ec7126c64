//! `hub migrate`: copies a SQLite store into a PostgreSQL one, table by table, resumably.
//!
//! Generic by design: the tables come from SQLite's catalogue (`sqlite_master`) and the
//! columns and their types from PostgreSQL's (`information_schema.columns`), so a table
//! added to both schemas is copied without a change here. Each value is converted by the
//! target column's type (0/1 to boolean, blobs to bytea, JSON text to jsonb, ...);
//! generated columns (PostGIS geometry) are left to PostgreSQL, and `content.docb` (a
//! SQLite JSONB blob in the source) is filled from `content.doc`.
//!
//! Resumption: rows go in key order (SQLite `rowid` order, or primary-key order for
//! WITHOUT ROWID tables) in chunks; each chunk is sent with `COPY ... FROM STDIN` and
//! committed in one PostgreSQL transaction together with its mark in `hub_copy_progress`
//! (table, last key copied, rows copied, done). A run that stops anywhere leaves the
//! target exactly at a chunk boundary that the bookkeeping names, and the next run
//! continues after that key: no duplicates, no gaps. The mark is read `FOR UPDATE` and
//! compared with what this run expects, so two runs against one target cannot both
//! write a chunk. Tables go parents first (PostgreSQL's foreign keys); a table with a
//! foreign key to itself goes in one chunk. The source must not be written while a copy
//! is unfinished (stop the server; the final count check catches a violation).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use bytes::Bytes;
use futures::SinkExt;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Connection;
use serde_json::{json, Value};

use crate::postgres::Queries;
use crate::{Backend, Result, Store, StoreError};

/// The SQLite backend's database file in its directory (see `sqlite.rs`).
const SQLITE_FILE: &str = "hub.sqlite3";
/// Rows per chunk (one PostgreSQL transaction each).
pub const CHUNK_ROWS: usize = 2_000;
/// Test-only: with this variable set to N, the copy fails (rolling back the chunk in
/// flight) once more than N rows would have been copied by this run; for the tests of
/// resumption. Never set it in production.
pub const STOP_AFTER_ROWS_VAR: &str = "HUB_COPY_STOP_AFTER_ROWS";
/// The bookkeeping table in the target.
pub const PROGRESS_TABLE: &str = "hub_copy_progress";

/// Progress of a copy, for a progress bar.
#[derive(Debug, Clone)]
pub enum CopyProgress {
    /// The plan: rows in all source tables, and how many an earlier run already copied.
    Start {
        total_rows: u64,
        already_copied: u64,
        resuming: bool,
    },
    /// Rows copied so far over all tables (earlier runs included), and the current table.
    Rows { table: String, copied: u64 },
    /// A closing step ("verifying row counts", "resetting sequences", "analyzing").
    Step(&'static str),
}

/// One copied table.
#[derive(Debug, Clone)]
pub struct TableReport {
    pub table: String,
    /// Rows in the table (source = target, verified).
    pub rows: u64,
    /// Rows this run copied (less than `rows` when it resumed an earlier run).
    pub copied_now: u64,
    /// Seconds this run spent copying the table.
    pub seconds: f64,
}

/// What a copy did.
#[derive(Debug, Clone)]
pub struct CopyReport {
    pub tables: Vec<TableReport>,
    /// SQLite tables PostgreSQL has no table for (not copied).
    pub skipped_tables: Vec<String>,
    /// True when this run continued an interrupted one.
    pub resumed: bool,
    /// Rows this run had found copied already.
    pub resumed_rows: u64,
    pub seconds: f64,
}

impl CopyReport {
    pub fn total_rows(&self) -> u64 {
        self.tables.iter().map(|t| t.rows).sum()
    }
    pub fn copied_now(&self) -> u64 {
        self.tables.iter().map(|t| t.copied_now).sum()
    }
}

/// How a target column gets its value.
struct TargetColumn {
    name: String,
    data_type: String,
    /// Index into the source columns selected.
    source: usize,
}

/// One table to copy, with its columns on both sides.
struct TablePlan {
    name: String,
    /// Key columns in SQLite (`rowid`, or the primary key of a WITHOUT ROWID table).
    key: Vec<String>,
    /// Source columns selected after the key columns.
    source_columns: Vec<String>,
    target: Vec<TargetColumn>,
    source_rows: u64,
    /// Rows per chunk: [`CHUNK_ROWS`], or all rows in one for a table with a foreign key
    /// to itself (a child may come before its parent in key order; PostgreSQL checks
    /// foreign keys at the end of each COPY, so one statement must hold both).
    chunk_rows: usize,
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn config(msg: impl Into<String>) -> StoreError {
    StoreError::Config(msg.into())
}

/// Copies every table of the SQLite store in `sqlite_dir` into the PostgreSQL database at
/// `pg_url` (migrating both schemas first), resuming an interrupted copy of the same
/// source. Refuses a target that holds other data. Blocking: call it from a plain thread.
pub fn copy_sqlite_to_postgres(
    sqlite_dir: &Path,
    pg_url: &str,
    progress: &mut dyn FnMut(CopyProgress),
) -> Result<CopyReport> {
    let started = Instant::now();
    let file = sqlite_dir.join(SQLITE_FILE);
    if !file.is_file() {
        return Err(config(format!(
            "{} holds no Hub SQLite store ({} is missing)",
            sqlite_dir.display(),
            SQLITE_FILE
        )));
    }
    let source_id = std::fs::canonicalize(&file)
        .map_err(|source| StoreError::DataDir {
            path: file.display().to_string(),
            source,
        })?
        .display()
        .to_string();
    let stop_after = match std::env::var(STOP_AFTER_ROWS_VAR) {
        Ok(v) if !v.trim().is_empty() => Some(
            v.trim()
                .parse::<u64>()
                .map_err(|_| config(format!("{STOP_AFTER_ROWS_VAR} must be a number of rows")))?,
        ),
        _ => None,
    };

    let source_store = Store::open_sqlite(sqlite_dir)?;
    let target_store = Store::open_postgres(pg_url, None)?;
    let Backend::Sqlite(src) = &*source_store.backend else {
        return Err(config("the source is not a SQLite store"));
    };
    let Backend::Postgres(pg) = &*target_store.backend else {
        return Err(config("the target is not a PostgreSQL store"));
    };

    // Catalogues of both sides.
    let source_tables = src.write_blocking(|conn| sqlite_tables(conn))?;
    let names: Vec<String> = source_tables.iter().map(|t| t.0.clone()).collect();
    let (target_columns, foreign_keys) = pg.write_blocking(move |conn| async move {
        let mut columns: BTreeMap<String, Vec<(String, String, bool, bool)>> = BTreeMap::new();
        let rows = conn
            .query(
                "SELECT table_name::text, column_name::text, data_type::text, is_generated::text = 'ALWAYS', \
                 (is_nullable::text = 'YES' OR column_default IS NOT NULL OR is_identity::text = 'YES') \
                 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name::text = ANY($1) \
                 ORDER BY table_name, ordinal_position",
                &[&names],
            )
            .await?;
        for r in rows {
            columns.entry(r.get(0)).or_default().push((r.get(1), r.get(2), r.get(3), r.get(4)));
        }
        let fks = conn
            .query(
                "SELECT c.relname::text, p.relname::text FROM pg_constraint k \
                 JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid \
                 WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace",
                &[],
            )
            .await?
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)))
            .collect::<Vec<_>>();
        Ok((columns, fks))
    })?;

    // Plans: matching tables and columns; mismatches are errors (no data is dropped silently).
    let mut plans = Vec::new();
    let mut skipped_tables = Vec::new();
    let mut mismatches = Vec::new();
    for (name, key, columns) in source_tables {
        let Some(target) = target_columns.get(&name) else {
            skipped_tables.push(name);
            continue;
        };
        let mut source_columns: Vec<String> = Vec::new();
        let mut used = BTreeSet::new();
        let mut plan_target = Vec::new();
        for (column, data_type, generated, optional) in target {
            if *generated {
                continue;
            }
            // `content.docb` is SQLite JSONB in the source; PostgreSQL's is `doc::jsonb`.
            let from = if name == "content" && column == "docb" {
                "doc"
            } else {
                column.as_str()
            };
            if columns.iter().any(|c| c == from) {
                used.insert(from.to_string());
                let source = match source_columns.iter().position(|c| c == from) {
                    Some(i) => i,
                    None => {
                        source_columns.push(from.to_string());
                        source_columns.len() - 1
                    }
                };
                plan_target.push(TargetColumn {
                    name: column.clone(),
                    data_type: data_type.clone(),
                    source,
                });
            } else if !optional {
                mismatches.push(format!("PostgreSQL column {name}.{column} (NOT NULL, no default) has no SQLite counterpart"));
            }
        }
        for c in &columns {
            if !(used.contains(c) || name == "content" && c == "docb") {
                mismatches.push(format!(
                    "SQLite column {name}.{c} has no PostgreSQL counterpart"
                ));
            }
        }
        plans.push(TablePlan {
            name,
            key,
            source_columns,
            target: plan_target,
            source_rows: 0,
            chunk_rows: CHUNK_ROWS,
        });
    }
    if !mismatches.is_empty() {
        return Err(config(format!(
            "the schemas do not match: {}",
            mismatches.join("; ")
        )));
    }
    order_by_foreign_keys(&mut plans, &foreign_keys);
    for plan in &mut plans {
        if foreign_keys
            .iter()
            .any(|(child, parent)| child == &plan.name && parent == &plan.name)
        {
            plan.chunk_rows = usize::MAX;
        }
    }
    for plan in &mut plans {
        let sql = format!("SELECT count(*) FROM {}", quote(&plan.name));
        plan.source_rows = src
            .write_blocking(|conn| Ok(conn.query_row(&sql, [], |r| r.get::<_, i64>(0))? as u64))?;
    }

    // Bookkeeping: what an earlier run did, and whether this target may be written.
    let table_names: Vec<String> = plans.iter().map(|p| p.name.clone()).collect();
    let source_for_check = source_id.clone();
    let state = pg.write_blocking(move |mut conn| async move {
        let tx = conn.transaction().await?;
        tx.batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {PROGRESS_TABLE} (table_name text PRIMARY KEY, source text NOT NULL, last_key text, \
             rows_copied bigint NOT NULL DEFAULT 0, done boolean NOT NULL DEFAULT false, seconds double precision NOT NULL DEFAULT 0, \
             started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)"
        ))
        .await?;
        tx.execute(&format!("LOCK TABLE {PROGRESS_TABLE} IN SHARE ROW EXCLUSIVE MODE"), &[]).await?;
        let rows = tx.query(&format!("SELECT table_name, source, last_key, rows_copied, done, finished_at IS NOT NULL FROM {PROGRESS_TABLE}"), &[]).await?;
        let mut state: HashMap<String, (Option<String>, u64, bool)> = HashMap::new();
        for r in &rows {
            let source: String = r.get(1);
            if source != source_for_check {
                return Err(config(format!("the target database holds a copy of another store ({source}); copy into an empty database")));
            }
            if r.get::<_, bool>(5) {
                return Err(config("the target database already holds a finished copy of this store; copy into an empty database"));
            }
            state.insert(r.get(0), (r.get(2), r.get::<_, i64>(3) as u64, r.get(4)));
        }
        for table in &table_names {
            let held: i64 = tx.query_one(&format!("SELECT count(*) FROM {}", quote(table)), &[]).await?.get(0);
            match state.get(table) {
                Some((_, copied, _)) if *copied == held as u64 => {}
                Some((_, copied, _)) => {
                    return Err(config(format!("table {table} holds {held} rows but the unfinished copy recorded {copied}; something else wrote to the target")))
                }
                None if held > 0 => {
                    return Err(config(format!("table {table} already holds {held} rows that did not come from a copy of this store; copy into an empty database")))
                }
                None => {
                    tx.execute(&format!("INSERT INTO {PROGRESS_TABLE} (table_name, source) VALUES ($1, $2)"), &[table, &source_for_check]).await?;
                    state.insert(table.clone(), (None, 0, false));
                }
            }
        }
        tx.commit().await?;
        Ok(state)
    })?;
    let already: u64 = state.values().map(|s| s.1).sum();
    let resuming = state.values().any(|s| s.1 > 0 || s.2);
    let total_rows: u64 = plans.iter().map(|p| p.source_rows).sum();
    progress(CopyProgress::Start {
        total_rows,
        already_copied: already,
        resuming,
    });

    // The copy.
    let mut copied_all = already;
    let mut copied_run = 0u64;
    let mut reports = Vec::new();
    for plan in &plans {
        let (mut last_key, _, done) = state.get(&plan.name).cloned().unwrap_or((None, 0, false));
        let table_started = Instant::now();
        let mut copied_now = 0u64;
        if !done {
            let copy_sql = format!(
                "COPY {} ({}) FROM STDIN",
                quote(&plan.name),
                plan.target
                    .iter()
                    .map(|c| quote(&c.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            loop {
                let key = match &last_key {
                    Some(k) => Some(decode_key(k)?),
                    None => None,
                };
                let chunk_started = Instant::now();
                let chunk = src.write_blocking(|conn| read_chunk(conn, plan, key.as_deref()))?;
                let finished = chunk.rows < plan.chunk_rows;
                // A short chunk is the last: it also marks the table done (an empty one too).
                let stop = stop_after.is_some_and(|n| copied_run + chunk.rows as u64 > n);
                let (table, sql, expected, new_key) = (
                    plan.name.clone(),
                    copy_sql.clone(),
                    last_key.clone(),
                    chunk.last_key.clone().or(last_key.clone()),
                );
                let (rows, data) = (chunk.rows as i64, chunk.data);
                pg.write_blocking(move |mut conn| async move {
                    let tx = conn.transaction().await?;
                    let mark = tx.query_opt(&format!("SELECT last_key, done FROM {PROGRESS_TABLE} WHERE table_name = $1 FOR UPDATE"), &[&table]).await?;
                    match mark {
                        Some(r) if r.get::<_, Option<String>>(0) == expected && !r.get::<_, bool>(1) => {}
                        _ => return Err(config(format!("the progress of table {table} changed under this run: is another `hub migrate` writing this target?"))),
                    }
                    if rows > 0 {
                        let sink = tx.copy_in::<Bytes>(&sql).await?;
                        futures::pin_mut!(sink);
                        sink.send(Bytes::from(data)).await?;
                        sink.finish().await?;
                    }
                    if stop {
                        // Dropping the transaction rolls the chunk back.
                        return Err(StoreError::Task(format!("copy stopped in table {table} as {STOP_AFTER_ROWS_VAR} asks (test only)")));
                    }
                    let seconds = chunk_started.elapsed().as_secs_f64();
                    tx.execute(
                        &format!("UPDATE {PROGRESS_TABLE} SET last_key = $2, rows_copied = rows_copied + $3, done = $4, seconds = seconds + $5 WHERE table_name = $1"),
                        &[&table, &new_key, &rows, &finished, &seconds],
                    )
                    .await?;
                    tx.commit().await?;
                    Ok(())
                })?;
                last_key = chunk.last_key.or(last_key);
                copied_now += chunk.rows as u64;
                copied_run += chunk.rows as u64;
                copied_all += chunk.rows as u64;
                progress(CopyProgress::Rows {
                    table: plan.name.clone(),
                    copied: copied_all,
                });
                if finished {
                    break;
                }
            }
        }
        reports.push(TableReport {
            table: plan.name.clone(),
            rows: plan.source_rows,
            copied_now,
            seconds: table_started.elapsed().as_secs_f64(),
        });
    }

    // Verification, sequences, statistics, and the finish mark.
    progress(CopyProgress::Step("verifying row counts"));
    let mut wrong = Vec::new();
    for plan in &plans {
        let sql = format!("SELECT count(*) FROM {}", quote(&plan.name));
        let source_now = src
            .write_blocking(|conn| Ok(conn.query_row(&sql, [], |r| r.get::<_, i64>(0))? as u64))?;
        let target = pg.write_blocking(move |conn| async move {
            Ok(conn.query_one(&sql, &[]).await?.get::<_, i64>(0) as u64)
        })?;
        if source_now != target || source_now != plan.source_rows {
            wrong.push(format!(
                "{}: {} rows in SQLite, {} in PostgreSQL",
                plan.name, source_now, target
            ));
        }
    }
    if !wrong.is_empty() {
        return Err(config(format!(
            "row counts differ after the copy (was the source written meanwhile?): {}",
            wrong.join("; ")
        )));
    }
    progress(CopyProgress::Step("resetting sequences"));
    let seq_tables: Vec<(String, Vec<String>)> = plans
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                p.target.iter().map(|c| c.name.clone()).collect(),
            )
        })
        .collect();
    pg.write_blocking(move |conn| async move {
        for (table, columns) in seq_tables {
            for column in columns {
                let seq: Option<String> = conn
                    .query_one(
                        "SELECT pg_get_serial_sequence(quote_ident($1), $2)",
                        &[&table, &column],
                    )
                    .await?
                    .get(0);
                if let Some(seq) = seq {
                    let max: Option<i64> = conn
                        .query_one(
                            &format!(
                                "SELECT max({})::int8 FROM {}",
                                quote(&column),
                                quote(&table)
                            ),
                            &[],
                        )
                        .await?
                        .get(0);
                    let (value, called) = match max {
                        Some(m) => (m, true),
                        None => (1, false),
                    };
                    conn.execute(
                        "SELECT setval($1::text::regclass, $2, $3)",
                        &[&seq, &value, &called],
                    )
                    .await?;
                }
            }
        }
        Ok(())
    })?;
    progress(CopyProgress::Step("analyzing"));
    let analyze: Vec<String> = plans.iter().map(|p| p.name.clone()).collect();
    pg.write_blocking(move |conn| async move {
        for table in analyze {
            // VACUUM too: it fills the visibility map index-only scans need.
            conn.batch_execute(&format!("VACUUM (ANALYZE) {}", quote(&table)))
                .await?;
        }
        conn.execute(
            &format!("UPDATE {PROGRESS_TABLE} SET finished_at = now()"),
            &[],
        )
        .await?;
        Ok(())
    })?;
    Ok(CopyReport {
        tables: reports,
        skipped_tables,
        resumed: resuming,
        resumed_rows: already,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A table's name, key columns and columns.
type TableColumns = (String, Vec<String>, Vec<String>);

/// SQLite's tables (name, key columns, columns) without its own, the bookkeeping each
/// store keeps for itself (`schema_version`; `ts_provenance_revision`, which the
/// target's triggers count as the provenances arrive), virtual tables and their shadow
/// tables.
fn sqlite_tables(conn: &Connection) -> Result<Vec<TableColumns>> {
    let mut stmt = conn.prepare(
        "SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         AND name NOT IN ('schema_version', 'ts_provenance_revision') ORDER BY name",
    )?;
    let all: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let virtual_tables: Vec<&String> = all
        .iter()
        .filter(|(_, sql)| sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL"))
        .map(|(n, _)| n)
        .collect();
    let mut tables = Vec::new();
    for (name, sql) in &all {
        if sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL")
            || virtual_tables
                .iter()
                .any(|v| name.starts_with(&format!("{v}_")))
        {
            continue;
        }
        let mut columns = Vec::new();
        let mut pk: Vec<(i64, String)> = Vec::new();
        let mut info = conn.prepare("SELECT name, pk FROM pragma_table_info(?1) ORDER BY cid")?;
        for row in info.query_map([name], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })? {
            let (column, pk_pos) = row?;
            if pk_pos > 0 {
                pk.push((pk_pos, column.clone()));
            }
            columns.push(column);
        }
        pk.sort();
        // A WITHOUT ROWID table has no `rowid` to select.
        let has_rowid = conn
            .prepare(&format!("SELECT rowid FROM {} LIMIT 0", quote(name)))
            .is_ok();
        let key = if has_rowid {
            vec!["rowid".to_string()]
        } else {
            pk.into_iter().map(|(_, c)| c).collect()
        };
        if key.is_empty() {
            return Err(config(format!(
                "SQLite table {name} has neither a rowid nor a primary key"
            )));
        }
        tables.push((name.clone(), key, columns));
    }
    Ok(tables)
}

/// Parents before children, so foreign keys hold after every chunk; otherwise SQLite's
/// (alphabetical) order. Cycles and self-references keep their place.
fn order_by_foreign_keys(plans: &mut Vec<TablePlan>, fks: &[(String, String)]) {
    let mut ordered: Vec<TablePlan> = Vec::with_capacity(plans.len());
    let mut rest: Vec<TablePlan> = std::mem::take(plans);
    while !rest.is_empty() {
        let ready = rest.iter().position(|p| {
            !fks.iter().any(|(child, parent)| {
                child == &p.name && parent != &p.name && rest.iter().any(|q| &q.name == parent)
            })
        });
        let next = rest.remove(ready.unwrap_or(0));
        ordered.push(next);
    }
    *plans = ordered;
}

/// The chunk query: the first chunk (`after_key` false) or the one after a key (`?1`...).
fn select_sql(plan: &TablePlan, after_key: bool) -> String {
    let key_list = plan
        .key
        .iter()
        .map(|k| if k == "rowid" { k.clone() } else { quote(k) })
        .collect::<Vec<_>>();
    let columns = key_list
        .iter()
        .cloned()
        .chain(plan.source_columns.iter().map(|c| quote(c)))
        .collect::<Vec<_>>()
        .join(", ");
    let condition = if after_key {
        let params = (1..=plan.key.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!("WHERE ({}) > ({params}) ", key_list.join(", "))
    } else {
        String::new()
    };
    // LIMIT -1: no limit.
    let limit = i64::try_from(plan.chunk_rows).unwrap_or(-1);
    format!(
        "SELECT {columns} FROM {table} {condition}ORDER BY {order} LIMIT {limit}",
        table = quote(&plan.name),
        order = key_list.join(", ")
    )
}

struct Chunk {
    rows: usize,
    data: Vec<u8>,
    last_key: Option<String>,
}

/// Reads the next chunk after `after` (all keys when `None`) and encodes it as COPY text.
fn read_chunk(conn: &Connection, plan: &TablePlan, after: Option<&[SqlValue]>) -> Result<Chunk> {
    let mut stmt = conn.prepare_cached(&select_sql(plan, after.is_some()))?;
    let mut rows = stmt.query(rusqlite::params_from_iter(after.unwrap_or(&[]).iter()))?;
    let nkey = plan.key.len();
    let mut data = Vec::with_capacity(64 * 1024);
    let mut count = 0;
    let mut last = None;
    while let Some(row) = rows.next()? {
        let mut key = Vec::with_capacity(nkey);
        for i in 0..nkey {
            key.push(row.get_ref(i)?.into());
        }
        for (n, column) in plan.target.iter().enumerate() {
            if n > 0 {
                data.push(b'\t');
            }
            let value = row.get_ref(nkey + column.source)?;
            encode(&mut data, value, &column.data_type).map_err(|detail| {
                config(format!(
                    "{}.{} at key {}: {detail}",
                    plan.name,
                    column.name,
                    encode_key(&key)
                ))
            })?;
        }
        data.push(b'\n');
        count += 1;
        last = Some(key);
    }
    Ok(Chunk {
        rows: count,
        data,
        last_key: last.map(|k| encode_key(&k)),
    })
}

/// A key as JSON text: integers as numbers, text as strings, reals and blobs tagged.
fn encode_key(key: &[SqlValue]) -> String {
    Value::Array(
        key.iter()
            .map(|v| match v {
                SqlValue::Null => Value::Null,
                SqlValue::Integer(i) => json!(i),
                SqlValue::Real(f) => json!({ "real": f }),
                SqlValue::Text(s) => json!(s),
                SqlValue::Blob(b) => json!({ "blob": hex(b) }),
            })
            .collect(),
    )
    .to_string()
}

fn decode_key(text: &str) -> Result<Vec<SqlValue>> {
    let bad = || config(format!("unreadable key in {PROGRESS_TABLE}: {text}"));
    let Value::Array(items) = serde_json::from_str::<Value>(text).map_err(|_| bad())? else {
        return Err(bad());
    };
    items
        .into_iter()
        .map(|v| match v {
            Value::Null => Ok(SqlValue::Null),
            Value::Number(n) => n.as_i64().map(SqlValue::Integer).ok_or_else(bad),
            Value::String(s) => Ok(SqlValue::Text(s)),
            Value::Object(o) => match (
                o.get("real").and_then(Value::as_f64),
                o.get("blob").and_then(Value::as_str),
            ) {
                (Some(f), _) => Ok(SqlValue::Real(f)),
                (_, Some(h)) => unhex(h).map(SqlValue::Blob).ok_or_else(bad),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Appends `text` escaped for COPY's text format.
fn escape(out: &mut Vec<u8>, text: &[u8]) {
    for &b in text {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.push(b),
        }
    }
}

fn float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        // Rust prints the shortest text that reads back as the same double.
        format!("{f}")
    }
}

/// Appends one SQLite value in COPY text form for a column of PostgreSQL type `data_type`.
fn encode(
    out: &mut Vec<u8>,
    value: ValueRef<'_>,
    data_type: &str,
) -> std::result::Result<(), String> {
    let kind = |v: &ValueRef<'_>| match v {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "integer",
        ValueRef::Real(_) => "real",
        ValueRef::Text(_) => "text",
        ValueRef::Blob(_) => "blob",
    };
    let refuse = |v: &ValueRef<'_>| {
        Err(format!(
            "cannot store a SQLite {} in a {data_type} column",
            kind(v)
        ))
    };
    match (data_type, value) {
        (_, ValueRef::Null) => out.extend_from_slice(b"\\N"),
        ("boolean", ValueRef::Integer(i)) => out.push(if i != 0 { b't' } else { b'f' }),
        ("boolean", ValueRef::Real(f)) => out.push(if f != 0.0 { b't' } else { b'f' }),
        ("boolean", ValueRef::Text(t)) => escape(out, t),
        ("smallint" | "integer" | "bigint", ValueRef::Integer(i)) => {
            out.extend_from_slice(i.to_string().as_bytes())
        }
        ("smallint" | "integer" | "bigint", ValueRef::Real(f))
            if f.fract() == 0.0 && f.abs() < 9.2e18 =>
        {
            out.extend_from_slice((f as i64).to_string().as_bytes())
        }
        ("smallint" | "integer" | "bigint", ValueRef::Text(t)) => escape(out, t),
        ("double precision" | "real" | "numeric", ValueRef::Integer(i)) => {
            out.extend_from_slice(i.to_string().as_bytes())
        }
        ("double precision" | "real" | "numeric", ValueRef::Real(f)) => {
            out.extend_from_slice(float(f).as_bytes())
        }
        ("double precision" | "real" | "numeric", ValueRef::Text(t)) => escape(out, t),
        ("bytea", ValueRef::Blob(b) | ValueRef::Text(b)) => {
            out.extend_from_slice(b"\\\\x");
            out.extend_from_slice(hex(b).as_bytes());
        }
        ("jsonb" | "json", ValueRef::Text(t)) => escape(out, t),
        ("jsonb" | "json", ValueRef::Integer(i)) => out.extend_from_slice(i.to_string().as_bytes()),
        ("jsonb" | "json", ValueRef::Real(f)) if f.is_finite() => {
            out.extend_from_slice(float(f).as_bytes())
        }
        (
            "boolean" | "smallint" | "integer" | "bigint" | "double precision" | "real" | "numeric"
            | "bytea" | "jsonb" | "json",
            v,
        ) => return refuse(&v),
        // Text and every other type: PostgreSQL reads the value's text form.
        (_, ValueRef::Text(t)) => escape(out, t),
        (_, ValueRef::Integer(i)) => out.extend_from_slice(i.to_string().as_bytes()),
        (_, ValueRef::Real(f)) => out.extend_from_slice(float(f).as_bytes()),
        (_, ValueRef::Blob(b)) => match std::str::from_utf8(b) {
            Ok(t) => escape(out, t.as_bytes()),
            Err(_) => return refuse(&value),
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        let key = vec![
            SqlValue::Integer(-5),
            SqlValue::Text("a\"b".into()),
            SqlValue::Real(1.5),
            SqlValue::Blob(vec![0, 255]),
            SqlValue::Null,
        ];
        assert_eq!(decode_key(&encode_key(&key)).unwrap(), key);
    }

    #[test]
    fn values_encode_for_copy() {
        let mut out = Vec::new();
        encode(&mut out, ValueRef::Integer(0), "boolean").unwrap();
        encode(&mut out, ValueRef::Text(b"a\tb\\c\n"), "text").unwrap();
        encode(&mut out, ValueRef::Blob(&[1, 171]), "bytea").unwrap();
        encode(&mut out, ValueRef::Real(0.1), "double precision").unwrap();
        encode(&mut out, ValueRef::Null, "jsonb").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "fa\\tb\\\\c\\n\\\\x01ab0.1\\N"
        );
        assert!(encode(&mut Vec::new(), ValueRef::Blob(&[1]), "jsonb").is_err());
    }
}
