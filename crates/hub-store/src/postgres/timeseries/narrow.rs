//! History answers read narrow on PostgreSQL (see `crate::timeseries::narrow`): the
//! series read, then one portal per series in one read-only snapshot, each fetched a
//! part at a time as the merge pulls its rows. Runs on a blocking thread of the
//! backend's runtime (the merge pulls rows synchronously; each fetch is waited for).
//!
//! Must not: decide what to read (`hub-query`'s `NarrowHistory` does) or order rows
//! itself (`merge_history` does).

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};

use hub_query::timeseries::NarrowHistory;
use hub_query::SqlValue;
use tokio::runtime::Handle;
use tokio_postgres::{Portal, RowStream};

use super::{query_error, row_cells};
use crate::postgres::session::{Conn, Stmt, Tx};
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

/// One series' portal: the fetch being read, rows taken out of it early, and whether
/// the portal has no rows left.
#[derive(Default)]
struct Part {
    stream: Option<Pin<Box<RowStream>>>,
    /// Rows of the current fetch so far (fewer than asked for means the portal ended).
    got: usize,
    asked: usize,
    buffered: VecDeque<Vec<Cell>>,
    ended: bool,
    shared: SharedText,
}

impl Part {
    fn start(&mut self, handle: &Handle, tx: &Tx<'_>, portal: &Portal, rows: i32) -> Result<()> {
        let stream = handle
            .block_on(tx.fetch_stream(portal, rows))
            .map_err(query_error)?;
        self.stream = Some(Box::pin(stream));
        self.got = 0;
        self.asked = rows as usize;
        Ok(())
    }

    /// The next row of the current fetch, `None` at its end (which marks the portal
    /// ended when the fetch came short). A row already received is taken without
    /// waiting; only when none is there does the thread wait for the connection.
    fn next_row(&mut self, handle: &Handle) -> Result<Option<Vec<Cell>>> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(None);
        };
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        let next = match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(next) => next,
            Poll::Pending => handle.block_on(stream.next()),
        };
        match next {
            Some(row) => {
                self.got += 1;
                Ok(Some(row_cells(
                    &row.map_err(query_error)?,
                    &mut self.shared,
                )?))
            }
            None => {
                self.stream = None;
                self.ended = self.got < self.asked;
                Ok(None)
            }
        }
    }

    /// Reads the rest of the current fetch into `buffered`.
    fn drain(&mut self, handle: &Handle) -> Result<()> {
        while let Some(row) = self.next_row(handle)? {
            self.buffered.push_back(row);
        }
        Ok(())
    }
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
    let mut parts: Vec<Part> = ids.iter().map(|_| Part::default()).collect();
    // The series whose fetch is being read (at most one: the connection answers in order).
    let mut streaming: Option<usize> = None;
    narrow::merge_history(
        plan,
        &templates,
        |k| loop {
            if let Some(row) = parts[k].buffered.pop_front() {
                return Ok(Some(row));
            }
            if streaming == Some(k) {
                match parts[k].next_row(handle)? {
                    Some(row) => return Ok(Some(row)),
                    None => {
                        streaming = None;
                        continue;
                    }
                }
            }
            if parts[k].ended {
                return Ok(None);
            }
            // Another series' fetch is read to its end first (its rows kept for later):
            // this series' rows arrive only after it.
            if let Some(j) = streaming.take() {
                parts[j].drain(handle)?;
            }
            parts[k].start(handle, &tx, &portals[k], fetch)?;
            streaming = Some(k);
        },
        emit,
    )?;
    // A fetch a limit left unread is dropped: the connection discards its rows.
    drop(parts);
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
