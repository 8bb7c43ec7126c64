//! History answers read narrow on PostgreSQL (see `crate::timeseries::narrow`): the
//! series read, then one portal per series in one read-only snapshot, each fetched a
//! part at a time as the merge pulls its rows. Runs on a blocking thread of the
//! backend's runtime (the merge pulls rows synchronously; each fetch is waited for).
//!
//! Must not: decide what to read (`hub-query`'s `NarrowHistory` does) or order rows
//! itself (`merge_history` does).

use std::collections::VecDeque;

use hub_query::timeseries::NarrowHistory;
use hub_query::SqlValue;
use tokio::runtime::Handle;

use super::{query_error, row_cells};
use crate::postgres::session::{Conn, Stmt};
use crate::postgres::{bind, refs, Queries};
use crate::timeseries::{narrow, Cell, SharedText};
use crate::{Result, StoreError};

/// The plan when this connection can read it narrow: portals need named statements,
/// which a transaction-mode pooler rules out (the compiled query answers there).
fn usable(conn: &Conn, plan: Option<NarrowHistory>) -> Option<NarrowHistory> {
    plan.filter(|_| conn.prepares_statements())
}

/// Rows buffered across all series' portals at most (about 13 MB of cells).
const BUFFERED_ROWS: usize = 65_536;

/// Rows fetched from each portal at a time when `series` are merged: one round trip
/// for a week of one series (2,016 five-minute values), a bounded buffer for many.
fn fetch_rows(series: usize) -> i32 {
    (BUFFERED_ROWS / series.max(1)).clamp(128, 16_384) as i32
}

/// Answers a history query read narrow, handing each row to `emit` (which returns
/// `false` to stop). `Ok(false)`: not read narrow and nothing emitted — more series
/// match than a merge takes; the compiled query answers instead. Callers pass only
/// connections that prepare named statements (see [`usable`]).
pub(super) fn read_narrow(
    handle: &Handle,
    conn: &mut Conn,
    plan: &NarrowHistory,
    emit: impl FnMut(Vec<Cell>) -> bool,
) -> Result<bool> {
    let tx = handle.block_on(conn.snapshot())?;
    let (ids, templates) = handle.block_on(async {
        let stmt = tx.prepare_cached(plan.series.as_sql()).await?;
        let bound = bind(plan.series.params());
        let rows = tx.query(&stmt, &refs(&bound)).await.map_err(query_error)?;
        let mut ids = Vec::with_capacity(rows.len());
        let mut templates = Vec::with_capacity(rows.len());
        let mut shared = SharedText::default();
        for row in &rows {
            ids.push(row.try_get::<_, i64>(0)?);
            let mut cells = row_cells(row, &mut shared)?;
            cells.remove(0);
            templates.push(cells);
        }
        Result::<(Vec<i64>, Vec<Vec<Cell>>)>::Ok((ids, templates))
    })?;
    if !plan.merges(ids.len()) {
        return Ok(false);
    }
    let history = handle.block_on(tx.prepare_cached(plan.history.as_sql()))?;
    let Stmt::Named(statement) = &history else {
        return Ok(false);
    };
    let mut params = plan.history.params().to_vec();
    let mut portals = Vec::with_capacity(ids.len());
    for id in &ids {
        params[0] = SqlValue::Int(*id);
        let bound = bind(&params);
        portals.push(
            handle
                .block_on(tx.portal(statement, &refs(&bound)))
                .map_err(query_error)?,
        );
    }
    let fetch = fetch_rows(ids.len());
    let mut buffered: Vec<VecDeque<Vec<Cell>>> = ids.iter().map(|_| VecDeque::new()).collect();
    let mut ended = vec![false; ids.len()];
    let mut shared: Vec<SharedText> = ids.iter().map(|_| SharedText::default()).collect();
    narrow::merge_history(
        plan,
        &templates,
        |k| {
            if buffered[k].is_empty() && !ended[k] {
                let rows = handle
                    .block_on(tx.fetch(&portals[k], fetch))
                    .map_err(query_error)?;
                ended[k] = rows.len() < fetch as usize;
                for row in &rows {
                    buffered[k].push_back(row_cells(row, &mut shared[k])?);
                }
            }
            Ok(buffered[k].pop_front())
        },
        emit,
    )?;
    drop(portals);
    handle.block_on(tx.commit())?;
    Ok(true)
}

/// A history answer read narrow on a blocking thread : its rows, or the
/// connection back when the compiled query must answer.
pub(super) async fn narrow_rows(
    conn: Conn,
    plan: Option<hub_query::timeseries::NarrowHistory>,
) -> Result<std::result::Result<Vec<Vec<Cell>>, Conn>> {
    let Some(plan) = usable(&conn, plan) else {
        return Ok(Err(conn));
    };
    let handle = tokio::runtime::Handle::current();
    let (conn, read) = tokio::task::spawn_blocking(move || {
        let mut conn = conn;
        let mut rows = Vec::new();
        let read = read_narrow(&handle, &mut conn, &plan, |row| {
            rows.push(row);
            true
        });
        (conn, read.map(|done| done.then_some(rows)))
    })
    .await
    .map_err(|e| StoreError::Task(e.to_string()))?;
    Ok(read?.ok_or(conn))
}

/// A history answer read narrow and streamed to `tx` on a blocking thread, which
/// finishes `tx` (its error included); the connection and `tx` back, untouched, when
/// the compiled query must answer.
pub(super) async fn narrow_stream(
    conn: Conn,
    plan: Option<hub_query::timeseries::NarrowHistory>,
    tx: crate::batches::BatchSender<Vec<Cell>>,
) -> Option<(Conn, crate::batches::BatchSender<Vec<Cell>>)> {
    let Some(plan) = usable(&conn, plan) else {
        return Some((conn, tx));
    };
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let (mut conn, mut tx) = (conn, tx);
        match read_narrow(&handle, &mut conn, &plan, |row| {
            tx.push_blocking(row).is_ok()
        }) {
            Ok(false) => Some((conn, tx)),
            Ok(true) => {
                tx.finish_blocking(Ok(()));
                None
            }
            Err(e) => {
                tx.finish_blocking(Err(e));
                None
            }
        }
    })
    .await
    .unwrap_or(None)
}

#[cfg(test)]
mod tests {
    #[test]
    fn few_series_fetch_much_at_once_many_series_a_bounded_part() {
        // (series merged, rows fetched per round trip)
        let table = [
            (0, 16_384),
            (1, 16_384),
            (4, 16_384),
            (8, 8_192),
            (100, 655),
            (512, 128),
        ];
        for (series, rows) in table {
            assert_eq!(super::fetch_rows(series), rows, "{series} series");
        }
    }
}
