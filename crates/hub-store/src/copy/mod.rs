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

mod plan;
mod text;

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use bytes::Bytes;
use futures::SinkExt;

use crate::postgres::{PgBackend, Queries};
use crate::sqlite::{SqliteBackend, DATABASE_FILE};
use crate::{Backend, Result, Store, StoreError};
use plan::TablePlan;

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
    let source_id = source_id(sqlite_dir)?;
    let stop_after = stop_after_rows()?;

    let source_store = Store::open_sqlite(sqlite_dir)?;
    let target_store = Store::open_postgres(pg_url, None)?;
    let Backend::Sqlite(src) = &*source_store.backend else {
        return Err(config("the source is not a SQLite store"));
    };
    let Backend::Postgres(pg) = &*target_store.backend else {
        return Err(config("the target is not a PostgreSQL store"));
    };

    let (plans, skipped_tables) = plan::plan_tables(src, pg)?;
    let marks = claim_target(pg, &plans, &source_id)?;
    let already: u64 = marks.values().map(|m| m.rows_copied).sum();
    let resuming = marks.values().any(|m| m.rows_copied > 0 || m.done);
    progress(CopyProgress::Start {
        total_rows: plans.iter().map(|p| p.source_rows).sum(),
        already_copied: already,
        resuming,
    });

    let mut counts = RunCounts {
        copied_all: already,
        copied_run: 0,
        stop_after,
    };
    let mut reports = Vec::new();
    for plan in &plans {
        let mark = marks.get(&plan.name).cloned().unwrap_or_default();
        reports.push(copy_table(src, pg, plan, mark, &mut counts, progress)?);
    }

    progress(CopyProgress::Step("verifying row counts"));
    verify_row_counts(src, pg, &plans)?;
    progress(CopyProgress::Step("resetting sequences"));
    reset_sequences(pg, &plans)?;
    progress(CopyProgress::Step("analyzing"));
    analyze_and_mark_finished(pg, &plans)?;
    Ok(CopyReport {
        tables: reports,
        skipped_tables,
        resumed: resuming,
        resumed_rows: already,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The source's identity in the bookkeeping: its file's canonical path.
fn source_id(sqlite_dir: &Path) -> Result<String> {
    let file = sqlite_dir.join(DATABASE_FILE);
    if !file.is_file() {
        return Err(config(format!(
            "{} holds no Hub SQLite store ({} is missing)",
            sqlite_dir.display(),
            DATABASE_FILE
        )));
    }
    Ok(std::fs::canonicalize(&file)
        .map_err(|source| StoreError::DataDir {
            path: file.display().to_string(),
            source,
        })?
        .display()
        .to_string())
}

/// [`STOP_AFTER_ROWS_VAR`], when the tests of resumption set it.
fn stop_after_rows() -> Result<Option<u64>> {
    match std::env::var(STOP_AFTER_ROWS_VAR) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| config(format!("{STOP_AFTER_ROWS_VAR} must be a number of rows"))),
        _ => Ok(None),
    }
}

/// Where an earlier run left a table.
#[derive(Debug, Clone, Default)]
struct Mark {
    /// The last key copied (see `text::decode_key`), none before the first chunk.
    last_key: Option<String>,
    rows_copied: u64,
    done: bool,
}

/// Reads what an earlier run did and claims every table for this source, in one
/// transaction under a lock: a target holding another store's copy, a finished copy, or
/// rows no copy accounts for is refused.
fn claim_target(
    pg: &PgBackend,
    plans: &[TablePlan],
    source_id: &str,
) -> Result<HashMap<String, Mark>> {
    let table_names: Vec<String> = plans.iter().map(|p| p.name.clone()).collect();
    let source_for_check = source_id.to_string();
    pg.write_blocking(move |mut conn| async move {
        let tx = conn.transaction().await?;
        tx.batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {PROGRESS_TABLE} (table_name text PRIMARY KEY, source text NOT NULL, last_key text, \
             rows_copied bigint NOT NULL DEFAULT 0, done boolean NOT NULL DEFAULT false, seconds double precision NOT NULL DEFAULT 0, \
             started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)"
        ))
        .await?;
        tx.execute(&format!("LOCK TABLE {PROGRESS_TABLE} IN SHARE ROW EXCLUSIVE MODE"), &[]).await?;
        let rows = tx.query(&format!("SELECT table_name, source, last_key, rows_copied, done, finished_at IS NOT NULL FROM {PROGRESS_TABLE}"), &[]).await?;
        let mut marks: HashMap<String, Mark> = HashMap::new();
        for r in &rows {
            let source: String = r.get(1);
            if source != source_for_check {
                return Err(config(format!("the target database holds a copy of another store ({source}); copy into an empty database")));
            }
            if r.get::<_, bool>(5) {
                return Err(config("the target database already holds a finished copy of this store; copy into an empty database"));
            }
            let mark = Mark {
                last_key: r.get(2),
                rows_copied: r.get::<_, i64>(3) as u64,
                done: r.get(4),
            };
            marks.insert(r.get(0), mark);
        }
        for table in &table_names {
            let held: i64 = tx.query_one(&format!("SELECT count(*) FROM {}", quote(table)), &[]).await?.get(0);
            match marks.get(table) {
                Some(mark) if mark.rows_copied == held as u64 => {}
                Some(mark) => {
                    return Err(config(format!("table {table} holds {held} rows but the unfinished copy recorded {}; something else wrote to the target", mark.rows_copied)))
                }
                None if held > 0 => {
                    return Err(config(format!("table {table} already holds {held} rows that did not come from a copy of this store; copy into an empty database")))
                }
                None => {
                    tx.execute(&format!("INSERT INTO {PROGRESS_TABLE} (table_name, source) VALUES ($1, $2)"), &[table, &source_for_check]).await?;
                    marks.insert(table.clone(), Mark::default());
                }
            }
        }
        tx.commit().await?;
        Ok(marks)
    })
}

/// Rows copied so far, for progress and for [`STOP_AFTER_ROWS_VAR`].
struct RunCounts {
    /// Over all tables, earlier runs included.
    copied_all: u64,
    /// By this run.
    copied_run: u64,
    stop_after: Option<u64>,
}

/// Copies one table chunk by chunk from where `mark` left it (nothing when it is done).
fn copy_table(
    src: &SqliteBackend,
    pg: &PgBackend,
    plan: &TablePlan,
    mark: Mark,
    counts: &mut RunCounts,
    progress: &mut dyn FnMut(CopyProgress),
) -> Result<TableReport> {
    let table_started = Instant::now();
    let mut copied_now = 0u64;
    let mut last_key = mark.last_key;
    if !mark.done {
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
                Some(k) => Some(text::decode_key(k)?),
                None => None,
            };
            let chunk_started = Instant::now();
            let chunk = src.write_blocking(|conn| text::read_chunk(conn, plan, key.as_deref()))?;
            // A short chunk is the last: it also marks the table done (an empty one too).
            let finished = chunk.rows < plan.chunk_rows;
            let rows = chunk.rows as u64;
            let stop = counts
                .stop_after
                .is_some_and(|n| counts.copied_run + rows > n);
            let new_key = chunk.last_key.clone().or(last_key.clone());
            commit_chunk(
                pg,
                ChunkCommit {
                    table: plan.name.clone(),
                    copy_sql: copy_sql.clone(),
                    expected_key: last_key,
                    new_key: new_key.clone(),
                    rows: chunk.rows as i64,
                    data: chunk.data,
                    finished,
                    stop,
                    started: chunk_started,
                },
            )?;
            last_key = new_key;
            copied_now += rows;
            counts.copied_run += rows;
            counts.copied_all += rows;
            progress(CopyProgress::Rows {
                table: plan.name.clone(),
                copied: counts.copied_all,
            });
            if finished {
                break;
            }
        }
    }
    Ok(TableReport {
        table: plan.name.clone(),
        rows: plan.source_rows,
        copied_now,
        seconds: table_started.elapsed().as_secs_f64(),
    })
}

/// One chunk and the mark that goes with it.
struct ChunkCommit {
    table: String,
    copy_sql: String,
    /// The mark this run left last: anything else means another run wrote the target.
    expected_key: Option<String>,
    new_key: Option<String>,
    rows: i64,
    /// The rows as COPY text.
    data: Vec<u8>,
    finished: bool,
    /// Roll the chunk back and stop ([`STOP_AFTER_ROWS_VAR`]).
    stop: bool,
    started: Instant,
}

/// Sends a chunk with `COPY` and moves its table's mark, in one transaction.
fn commit_chunk(pg: &PgBackend, chunk: ChunkCommit) -> Result<()> {
    pg.write_blocking(move |mut conn| async move {
        let ChunkCommit { table, copy_sql, expected_key, new_key, rows, data, finished, stop, started } = chunk;
        let tx = conn.transaction().await?;
        let mark = tx.query_opt(&format!("SELECT last_key, done FROM {PROGRESS_TABLE} WHERE table_name = $1 FOR UPDATE"), &[&table]).await?;
        match mark {
            Some(r) if r.get::<_, Option<String>>(0) == expected_key && !r.get::<_, bool>(1) => {}
            _ => return Err(config(format!("the progress of table {table} changed under this run: is another `hub migrate` writing this target?"))),
        }
        if rows > 0 {
            let sink = tx.copy_in::<Bytes>(&copy_sql).await?;
            futures::pin_mut!(sink);
            sink.send(Bytes::from(data)).await?;
            sink.finish().await?;
        }
        if stop {
            // Dropping the transaction rolls the chunk back.
            return Err(StoreError::Task(format!("copy stopped in table {table} as {STOP_AFTER_ROWS_VAR} asks (test only)")));
        }
        let seconds = started.elapsed().as_secs_f64();
        tx.execute(
            &format!("UPDATE {PROGRESS_TABLE} SET last_key = $2, rows_copied = rows_copied + $3, done = $4, seconds = seconds + $5 WHERE table_name = $1"),
            &[&table, &new_key, &rows, &finished, &seconds],
        )
        .await?;
        tx.commit().await?;
        Ok(())
    })
}

/// Both sides hold as many rows as the plan counted before the copy.
fn verify_row_counts(src: &SqliteBackend, pg: &PgBackend, plans: &[TablePlan]) -> Result<()> {
    let mut wrong = Vec::new();
    for plan in plans {
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
    Ok(())
}

/// Every serial column's sequence continues after the largest value copied.
fn reset_sequences(pg: &PgBackend, plans: &[TablePlan]) -> Result<()> {
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
    })
}

/// Statistics and visibility maps for every table, then the finish mark.
fn analyze_and_mark_finished(pg: &PgBackend, plans: &[TablePlan]) -> Result<()> {
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
    })
}
