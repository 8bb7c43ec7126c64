//! The totals of list pages on SQLite: the stamp read and the count statement, run in
//! the page's read.
//!
//! Owns: those two statements. Must not: decide whether a kept total holds
//! (`crate::content::count_cache` does).

use hub_query::content::{CompiledList, Total};
use hub_query::Dialect;
use rusqlite::Connection;

use super::super::bind;
use crate::content::count_cache::{stamp_statement, CountCache, Stamp};
use crate::Result;

/// The list's total from its count statement, kept in `counts` while it holds.
pub(super) fn count(
    conn: &Connection,
    compiled: &CompiledList,
    counts: &CountCache,
) -> Result<Total> {
    kept_or_counted(conn, compiled, counts, CountCache::get)
}

/// The entity's documents (`all`, a walk's unfiltered list), for choosing a plan only:
/// the total kept while it is near enough ([`CountCache::hint`]), else counted.
pub(super) fn documents_for_plan(
    conn: &Connection,
    all: &CompiledList,
    counts: &CountCache,
) -> Result<Total> {
    kept_or_counted(conn, all, counts, CountCache::hint)
}

/// The total `kept` finds in `counts` at the stamp read now, else the count
/// statement's, kept.
fn kept_or_counted(
    conn: &Connection,
    compiled: &CompiledList,
    counts: &CountCache,
    kept: fn(&CountCache, &hub_query::SqlBuilder, Stamp) -> Option<Total>,
) -> Result<Total> {
    let stamp = read_stamp(conn, compiled)?;
    if let Some(total) = kept(counts, &compiled.count, stamp) {
        return Ok(total);
    }
    let counted: i64 = conn
        .prepare_cached(compiled.count.as_sql())?
        .query_row(bind(compiled.count.params()).as_slice(), |r| r.get(0))?;
    // SQLite keeps no statistics that estimate a filtered count cheaply: past the limit
    // the total is the lower bound the capped count reached.
    let (counted, limit) = (counted as u64, compiled.count_limit);
    let total = Total::settle(counted, limit, None);
    counts.put(&compiled.count, stamp, total, Total::slack(counted, limit));
    Ok(total)
}

/// The stamp of `compiled`'s totals (see `count_cache`).
fn read_stamp(conn: &Connection, compiled: &CompiledList) -> Result<Stamp> {
    let stamp_sql = stamp_statement(compiled, Dialect::Sqlite);
    let mut statement = conn.prepare_cached(stamp_sql.as_sql())?;
    let stamp = statement.query_row(bind(stamp_sql.params()).as_slice(), |r| {
        Ok(Stamp {
            revision: r.get(0)?,
            written: r.get(1)?,
        })
    })?;
    Ok(stamp)
}
