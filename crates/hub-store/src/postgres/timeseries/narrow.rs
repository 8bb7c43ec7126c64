//! History answers read narrow on PostgreSQL (see `crate::timeseries::narrow`): the
//! series read, then one portal per series in one read-only snapshot, each fetched a
//! part at a time as the merge ([`Merge`]) asks for it. All on the read's own task: the
//! portals are bound and their first parts fetched together (pipelined on the one
//! connection), so a week of a few series costs the same round trips as one.
//!
//! Must not: decide what to read (`hub-query`'s `NarrowHistory` does) or order rows
//! itself (`Merge` does).

use std::collections::VecDeque;

use futures::future::try_join_all;
use hub_query::timeseries::NarrowHistory;
use hub_query::SqlValue;

use super::{query_error, row_cells};
use crate::batches::BatchSender;
use crate::postgres::session::{Conn, Stmt, Tx};
use crate::postgres::{bind, refs, Queries};
use crate::timeseries::narrow::{Merge, Provenances, Pull, Step};
use crate::timeseries::{Cell, SharedText};
use crate::Result;

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

/// Where the merged rows go: into memory, or batch by batch to a streamed answer.
enum Sink<'a> {
    Rows(&'a mut Vec<Vec<Cell>>),
    Stream(&'a mut BatchSender<Vec<Cell>>),
}

impl Sink<'_> {
    /// Takes a row; `false` when the streamed answer's reader has gone.
    async fn take(&mut self, row: Vec<Cell>) -> bool {
        match self {
            Sink::Rows(rows) => {
                rows.push(row);
                true
            }
            Sink::Stream(tx) => tx.push(row).await.is_ok(),
        }
    }
}

/// Answers a history query read narrow into `sink`. `Ok(false)`: not read narrow and
/// nothing taken — more series match than a merge takes; the compiled query answers
/// instead. Callers pass only connections that prepare named statements ([`usable`]).
///
/// The snapshot is read-only, so it ends by being dropped: its `ROLLBACK` goes out
/// without waiting for the answer, ahead of whatever the connection runs next.
async fn read_narrow(conn: &mut Conn, plan: &NarrowHistory, mut sink: Sink<'_>) -> Result<bool> {
    let tx = conn.snapshot().await?;
    let series = tx.prepare_cached(plan.series.as_sql()).await?;
    let bound = bind(plan.series.params());
    // The provenance read (when apart) goes out with the series read: one round trip.
    let (rows, provenances) = futures::try_join!(
        async { tx.query(&series, &refs(&bound)).await.map_err(query_error) },
        read_provenances(&tx, plan),
    )?;
    let mut ids = Vec::with_capacity(rows.len());
    let mut templates = Vec::with_capacity(rows.len());
    let mut shared = SharedText::default();
    for row in &rows {
        ids.push(row.try_get::<_, i64>(0)?);
        let mut cells = row_cells(row, &mut shared)?;
        cells.remove(0);
        templates.push(cells);
    }
    drop(rows);
    if !plan.merges(ids.len()) {
        return Ok(false);
    }
    let history = tx.prepare_cached(plan.history.as_sql()).await?;
    let Stmt::Named(statement) = &history else {
        return Ok(false);
    };
    let fetch = fetch_rows(ids.len());
    let tx = &tx;
    let firsts = try_join_all(ids.iter().map(|&id| {
        let mut params = plan.history.params().to_vec();
        params[0] = SqlValue::Int(id);
        async move {
            let bound = bind(&params);
            let portal = tx.portal(statement, &refs(&bound)).await?;
            let rows = tx.fetch(&portal, fetch).await?;
            Ok::<_, tokio_postgres::Error>((portal, rows))
        }
    }))
    .await
    .map_err(query_error)?;
    let mut portals = Vec::with_capacity(ids.len());
    let mut buffered: Vec<VecDeque<Vec<Cell>>> = Vec::with_capacity(ids.len());
    let mut ended = Vec::with_capacity(ids.len());
    let mut shared: Vec<SharedText> = ids.iter().map(|_| SharedText::default()).collect();
    for (k, (portal, rows)) in firsts.into_iter().enumerate() {
        ended.push(rows.len() < fetch as usize);
        buffered.push(
            rows.iter()
                .map(|row| row_cells(row, &mut shared[k]))
                .collect::<Result<_>>()?,
        );
        portals.push(portal);
    }
    let mut merge = Merge::new(plan, &templates, &provenances);
    loop {
        let step = merge.next(|k| {
            Ok(match buffered[k].pop_front() {
                Some(measured) => Pull::Row(measured),
                None if ended[k] => Pull::End,
                None => Pull::Pending,
            })
        })?;
        match step {
            Step::Row(row) => {
                if !sink.take(row).await {
                    break;
                }
            }
            Step::Done => break,
            Step::Fetch(k) => {
                let rows = tx.fetch(&portals[k], fetch).await.map_err(query_error)?;
                ended[k] = rows.len() < fetch as usize;
                for row in &rows {
                    buffered[k].push_back(row_cells(row, &mut shared[k])?);
                }
            }
        }
    }
    Ok(true)
}

/// Every provenance's columns the answer selects, when the plan reads them apart.
async fn read_provenances(tx: &Tx<'_>, plan: &NarrowHistory) -> Result<Provenances> {
    let mut provenances = Provenances::new();
    if let Some(read) = &plan.provenance {
        let stmt = tx.prepare_cached(read.sql.as_sql()).await?;
        let bound = bind(read.sql.params());
        let mut shared = SharedText::default();
        for row in tx.query(&stmt, &refs(&bound)).await.map_err(query_error)? {
            let mut cells = row_cells(&row, &mut shared)?;
            let Cell::Int(id) = cells.remove(0) else {
                continue;
            };
            provenances.insert(id, cells);
        }
    }
    Ok(provenances)
}

/// A history answer read narrow: its rows, or the connection back when the compiled
/// query must answer.
pub(super) async fn narrow_rows(
    conn: Conn,
    plan: Option<NarrowHistory>,
) -> Result<std::result::Result<Vec<Vec<Cell>>, Conn>> {
    let Some(plan) = usable(&conn, plan) else {
        return Ok(Err(conn));
    };
    let mut conn = conn;
    let mut rows = Vec::new();
    if !read_narrow(&mut conn, &plan, Sink::Rows(&mut rows)).await? {
        return Ok(Err(conn));
    }
    Ok(Ok(rows))
}

/// A history answer read narrow and streamed to `tx`, which it finishes (its error
/// included); the connection and `tx` back, untouched, when the compiled query must
/// answer.
pub(super) async fn narrow_stream(
    conn: Conn,
    plan: Option<NarrowHistory>,
    tx: BatchSender<Vec<Cell>>,
) -> Option<(Conn, BatchSender<Vec<Cell>>)> {
    let Some(plan) = usable(&conn, plan) else {
        return Some((conn, tx));
    };
    let (mut conn, mut tx) = (conn, tx);
    match read_narrow(&mut conn, &plan, Sink::Stream(&mut tx)).await {
        Ok(false) => Some((conn, tx)),
        Ok(true) => {
            tx.finish(Ok(())).await;
            None
        }
        Err(e) => {
            tx.finish(Err(e)).await;
            None
        }
    }
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
