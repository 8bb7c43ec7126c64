//! History answers read narrow on PostgreSQL (see `crate::timeseries::narrow`): the
//! series read, then one portal per series in one read-only snapshot, each fetched a
//! part at a time as the merge ([`Merge`]) asks for it. All on the read's own task: the
//! portals are bound together and their first parts asked for at once (pipelined on the
//! one connection), so a week of a few series costs the same round trips as one; parts
//! are read as their rows arrive ([`Fetches`]).
//!
//! Must not: decide what to read (`hub-query`'s `NarrowHistory` does) or order rows
//! itself (`Merge` does).

use std::collections::VecDeque;
use std::pin::Pin;

use futures::future::try_join_all;
use futures::{FutureExt, StreamExt};
use hub_query::timeseries::NarrowHistory;
use hub_query::SqlValue;
use tokio_postgres::{Portal, RowStream};

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
    /// Takes a row; `false` when the streamed answer's reader has gone. Rows the reader
    /// is done with go to `spare`, to be filled again.
    async fn take(&mut self, row: Vec<Cell>, spare: &mut Vec<Vec<Cell>>) -> bool {
        match self {
            Sink::Rows(rows) => {
                rows.push(row);
                true
            }
            Sink::Stream(tx) => {
                let taken = tx.push(row).await.is_ok();
                tx.take_spare_rows(spare);
                taken
            }
        }
    }
}

/// The parts of the series' portals asked for and not yet read, and the rows read.
/// The connection answers in the order it was asked, so the part in front is read first
/// (its rows kept for later when another series is wanted); a part is read as its rows
/// arrive, so Hub decodes and merges while PostgreSQL still produces the rest.
struct Fetches {
    /// Rows asked for per part.
    size: i32,
    /// (series, its part's rows, rows read of it so far), in the order asked.
    in_flight: VecDeque<(usize, Pin<Box<RowStream>>, usize)>,
    buffered: Vec<VecDeque<Vec<Cell>>>,
    /// A part of the series came back short: its portal has no more rows.
    ended: Vec<bool>,
    shared: Vec<SharedText>,
}

impl Fetches {
    /// Asks for the next part of series k's portal (answered after those in flight).
    async fn send(&mut self, tx: &Tx<'_>, portal: &Portal, k: usize) -> Result<()> {
        let rows = tx
            .fetch_stream(portal, self.size)
            .await
            .map_err(query_error)?;
        self.in_flight.push_back((k, Box::pin(rows), 0));
        Ok(())
    }

    /// Reads at least one more row of series k, or learns that it has ended: parts in
    /// front of its own are read to their ends first; its part's rows already received
    /// are taken too, without waiting for more.
    async fn more(&mut self, tx: &Tx<'_>, portal: &Portal, k: usize) -> Result<()> {
        if !self.in_flight.iter().any(|(s, _, _)| *s == k) {
            self.send(tx, portal, k).await?;
        }
        // Series k's part is in flight until its end is read below.
        while let Some((series, rows, read)) = self.in_flight.front_mut() {
            let series = *series;
            match rows.next().await {
                Some(row) => {
                    *read += 1;
                    let row = row.map_err(query_error)?;
                    self.buffered[series].push_back(row_cells(&row, &mut self.shared[series])?);
                    if series == k {
                        // A finished part must not be polled again (its answer channel
                        // is closed): its end is taken here too when it has arrived.
                        loop {
                            match rows.next().now_or_never() {
                                Some(Some(row)) => {
                                    *read += 1;
                                    let row = row.map_err(query_error)?;
                                    self.buffered[k]
                                        .push_back(row_cells(&row, &mut self.shared[k])?);
                                }
                                Some(None) => {
                                    let read = *read;
                                    self.in_flight.pop_front();
                                    self.ended[k] = read < self.size as usize;
                                    return Ok(());
                                }
                                None => return Ok(()),
                            }
                        }
                    }
                }
                None => {
                    let read = *read;
                    self.in_flight.pop_front();
                    self.ended[series] = read < self.size as usize;
                    if series == k {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
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
    // Every portal bound (one round trip), then every first part asked for at once.
    let portals = try_join_all(ids.iter().map(|&id| {
        let mut params = plan.history.params().to_vec();
        params[plan.series_param] = SqlValue::Int(id);
        async move {
            let bound = bind(&params);
            tx.portal(statement, &refs(&bound)).await
        }
    }))
    .await
    .map_err(query_error)?;
    let mut fetches = Fetches {
        size: fetch,
        in_flight: VecDeque::with_capacity(ids.len()),
        buffered: ids.iter().map(|_| VecDeque::new()).collect(),
        ended: vec![false; ids.len()],
        shared: ids.iter().map(|_| SharedText::default()).collect(),
    };
    for (k, portal) in portals.iter().enumerate() {
        fetches.send(tx, portal, k).await?;
    }
    let mut merge = Merge::new(plan, &templates, &provenances);
    loop {
        let step = merge.next(|k| {
            Ok(match fetches.buffered[k].pop_front() {
                Some(measured) => Pull::Row(measured),
                None if fetches.ended[k] => Pull::End,
                None => Pull::Pending,
            })
        })?;
        match step {
            Step::Row(row) => {
                if !sink.take(row, merge.spare_rows()).await {
                    break;
                }
            }
            Step::Done => break,
            Step::Fetch(k) => fetches.more(tx, &portals[k], k).await?,
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
