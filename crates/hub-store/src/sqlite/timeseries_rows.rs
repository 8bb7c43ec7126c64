//! Rows of Time Series reads on SQLite: result rows as cells, a history answer read
//! narrow (the series read, one cursor per series, merged by
//! `timeseries::narrow::merge_history`) and latest values read in any order (sorted by
//! `timeseries::unordered`), and a history page read from windows at the start of its
//! range. Must not: decide what to read (`hub-query`'s `NarrowHistory`, `UnorderedRead`
//! and `HistoryWindows` do) or order rows itself.

use std::sync::Arc;
use std::time::Instant;

use hub_query::timeseries::{NarrowHistory, UnorderedRead};
use hub_query::SqlValue;
use rusqlite::types::ValueRef;

use crate::timeseries::provenance::{ProvenanceCache, REVISION_SQL};
use crate::timeseries::unordered::Unordered;
use crate::timeseries::{narrow, Cell, SharedText, WideSeriesReads};
use crate::Result;

/// One result row as cells; texts repeating the cursor's previous row are shared.
pub(super) fn cells(
    row: &rusqlite::Row<'_>,
    n: usize,
    shared: &mut SharedText,
) -> Result<Vec<Cell>> {
    cells_from(row, 0, n, shared)
}

/// Latest values read in any order and sorted; `None` when there is no such plan or the
/// rows are more than it sorts in memory (the compiled query answers then).
pub(super) fn unordered_rows(
    conn: &rusqlite::Connection,
    plan: Option<&UnorderedRead>,
) -> Result<Option<Vec<Vec<Cell>>>> {
    let Some(plan) = plan else {
        return Ok(None);
    };
    let (sql, params) = plan.sql.clone().into_parts();
    let mut stmt = conn.prepare_cached(&sql)?;
    let n = stmt.column_count();
    let bound = super::bind(&params);
    let mut rows = stmt.query(bound.as_slice())?;
    let mut shared = SharedText::default();
    let mut unordered = Unordered::new(plan);
    while let Some(row) = rows.next()? {
        if !unordered.take(cells(row, n, &mut shared)?) {
            return Ok(None);
        }
    }
    Ok(Some(unordered.finish()))
}

/// The cells of columns `from..n` of a row.
fn cells_from(
    row: &rusqlite::Row<'_>,
    from: usize,
    n: usize,
    shared: &mut SharedText,
) -> Result<Vec<Cell>> {
    let mut cells = Vec::with_capacity(n - from);
    for i in from..n {
        cells.push(match row.get_ref(i)? {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(v) => Cell::Int(v),
            ValueRef::Real(v) => Cell::Real(v),
            ValueRef::Text(t) | ValueRef::Blob(t) => shared.cell(i, t),
        });
    }
    Ok(cells)
}

/// Every provenance's columns the answer selects, when the plan reads them apart: those
/// kept at the revision this snapshot reads, or else read in it (and kept).
fn read_provenances(
    conn: &rusqlite::Connection,
    plan: &NarrowHistory,
    cache: &ProvenanceCache,
) -> Result<Arc<narrow::Provenances>> {
    let Some(read) = &plan.provenance else {
        return Ok(Arc::default());
    };
    let revision: i64 = conn
        .prepare_cached(REVISION_SQL)?
        .query_row([], |row| row.get(0))?;
    if let Some(kept) = cache.get(read, revision) {
        return Ok(kept);
    }
    let mut provenances = narrow::Provenances::default();
    let mut stmt = conn.prepare_cached(read.sql.as_sql())?;
    let n = stmt.column_count();
    let bound = super::bind(read.sql.params());
    let mut rows = stmt.query(bound.as_slice())?;
    let mut shared = SharedText::default();
    while let Some(row) = rows.next()? {
        provenances.insert(row.get(0)?, cells_from(row, 1, n, &mut shared)?);
    }
    Ok(cache.keep(read, revision, provenances))
}

/// Answers a history query read narrow (see `timeseries::narrow`): the series read, one
/// cursor per series, merged. `Ok(false)` when more series match than a merge takes
/// (nothing was emitted; the compiled query answers instead).
pub(super) fn read_narrow(
    conn: &rusqlite::Connection,
    plan: &NarrowHistory,
    cache: &ProvenanceCache,
    wide: &WideSeriesReads,
    emit: impl FnMut(Vec<Cell>, &mut Vec<Vec<Cell>>) -> bool,
) -> Result<bool> {
    if wide.is_wide(plan, Instant::now()) {
        return Ok(false);
    }
    // One snapshot for every read (ended by dropping it: nothing was written).
    let _snapshot = conn.unchecked_transaction()?;
    let mut stmt = conn.prepare_cached(plan.series.as_sql())?;
    let n = stmt.column_count();
    let bound = super::bind(plan.series.params());
    let mut rows = stmt.query(bound.as_slice())?;
    let mut ids = Vec::new();
    let mut templates = Vec::new();
    let mut shared = SharedText::default();
    while let Some(row) = rows.next()? {
        ids.push(row.get::<_, i64>(0)?);
        templates.push(cells_from(row, 1, n, &mut shared)?);
    }
    drop(rows);
    if !plan.merges(ids.len()) {
        wide.remember(plan, Instant::now());
        return Ok(false);
    }
    let mut statements = Vec::with_capacity(ids.len());
    for _ in &ids {
        statements.push(conn.prepare_cached(plan.history.as_sql())?);
    }
    let mut params = plan.history.params().to_vec();
    let mut cursors = Vec::with_capacity(ids.len());
    for (stmt, id) in statements.iter_mut().zip(&ids) {
        params[plan.series_param] = SqlValue::Int(*id);
        let bound = super::bind(&params);
        cursors.push(stmt.query(bound.as_slice())?);
    }
    let provenances = read_provenances(conn, plan, cache)?;
    let width = plan.history_columns();
    let mut shared: Vec<SharedText> = ids.iter().map(|_| SharedText::default()).collect();
    narrow::merge_history(
        plan,
        &templates,
        &provenances,
        |k| match cursors[k].next()? {
            Some(row) => Ok(Some(cells(row, width, &mut shared[k])?)),
            None => Ok(None),
        },
        emit,
    )?;
    Ok(true)
}

/// The page of a history a window at the start of its range holds whole (see
/// `HistoryWindows`), or `None` when none of the windows tried does.
pub(super) fn windowed_rows(
    conn: &rusqlite::Connection,
    windows: Option<&hub_query::timeseries::HistoryWindows>,
) -> Result<Option<Vec<Vec<Cell>>>> {
    let Some(windows) = windows else {
        return Ok(None);
    };
    let mut window = windows.first();
    while let Some(tried) = window {
        let rows = all_rows(conn, &tried.sql)?;
        if rows.len() >= windows.limit() {
            return Ok(Some(rows));
        }
        window = if rows.is_empty() && tried.is_first() {
            let first = windows.first_value();
            let start = conn
                .prepare_cached(first.as_sql())?
                .query_row(super::bind(first.params()).as_slice(), |r| r.get(0))?;
            windows.located(&tried, start)
        } else {
            windows.after(&tried, rows.len())
        };
    }
    Ok(None)
}

/// Every row of a Time Series statement, as cells.
pub(super) fn all_rows(
    conn: &rusqlite::Connection,
    sql: &hub_query::SqlBuilder,
) -> Result<Vec<Vec<Cell>>> {
    let mut stmt = conn.prepare_cached(sql.as_sql())?;
    let n = stmt.column_count();
    let bound = super::bind(sql.params());
    let mut rows = stmt.query(bound.as_slice())?;
    let mut shared = SharedText::default();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(cells(row, n, &mut shared)?);
    }
    Ok(out)
}
