//! History answers read narrow on PostgreSQL (see `crate::timeseries::narrow`): the
//! series read, then their histories. One series within one window — the usual read, a
//! station's values over days or weeks — is read outside any transaction, its history
//! in one statement that streams its rows ([`one_series`]). Several series, or windows,
//! are read in one read-only snapshot with one portal per series (per time window of a
//! few series), each fetched a part at a time as the merge ([`Merge`]) asks for it. All
//! on the read's own task: the portals are bound together and their first parts asked
//! for at once (pipelined on the one connection), so a week of a few series costs the
//! same round trips as one; parts are read as their rows arrive ([`Fetches`]). A read
//! within one month names that month's bounds, so the generic plan reads the month's
//! partition alone, in index order ([`NarrowHistory::history_within`]); a read across
//! months that all have a partition names their bounds together and is one window,
//! its partitions read one after the other, in order ([`literal_bounds`]).
//!
//! Must not: decide what to read (`hub-query`'s `NarrowHistory` does) or order rows
//! itself (`Merge` does).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use futures::future::try_join_all;
use futures::StreamExt;
use hub_query::timeseries::NarrowHistory;
use hub_query::SqlValue;
use tokio_postgres::{RowStream, Statement};

use super::partitions::PartitionState;
use super::{query_error, row_cells};
use crate::batches::BatchSender;
use crate::postgres::session::{Conn, Stmt, Tx};
use crate::postgres::{bind, bound_statement_cache, refs, Queries};
use crate::timeseries::history::Month;
use crate::timeseries::narrow::{Merge, Provenances, Pull, Step};
use crate::timeseries::provenance::{ProvenanceCache, REVISION_SQL};
use crate::timeseries::selections::{Kept, Selection, SeriesSelections, REVISIONS_SQL};
use crate::timeseries::{Cell, SharedText, WideSeriesReads};
use crate::Result;

/// The plan when this connection can read it narrow: a history's portals need named
/// statements, which a transaction-mode pooler rules out (the compiled query answers
/// there; latest values need no portal), and its series read was not found too wide a
/// moment ago.
fn usable(
    conn: &Conn,
    plan: Option<NarrowHistory>,
    wide: &WideSeriesReads,
) -> Option<NarrowHistory> {
    plan.filter(|p| {
        (p.reads_latest() || conn.prepares_statements()) && !wide.is_wide(p, Instant::now())
    })
}

/// Rows buffered across all series' portals at most (about 13 MB of cells).
const BUFFERED_ROWS: usize = 65_536;

/// Rows fetched from each portal at a time when `parts` portals are read at once: one
/// round trip for a week of one series (2,016 five-minute values), a bounded buffer for
/// many.
fn fetch_rows(parts: usize) -> i32 {
    (BUFFERED_ROWS / parts.max(1)).clamp(128, 16_384) as i32
}

/// Series merged at most for their histories to be read window by window.
const WINDOWED_SERIES: usize = 4;

/// The most windows one series' history is read in.
const MAX_WINDOWS: i64 = 36;

/// `[from, to)` cut at the starts of UTC months (the history's partitions), into at most
/// [`MAX_WINDOWS`] windows of whole months (several each for a long range); `[from, to)`
/// whole when it is not cut. PostgreSQL sorts a partitioned history read before its
/// first row (with a DEFAULT partition, a generic plan cannot append partitions in
/// order); a window is sorted alone, while the rows of the one before it are read.
fn windows(from: i64, to: i64) -> Vec<(i64, i64)> {
    let (Some(first), Some(last)) = (Month::of_ms(from), Month::of_ms(to.saturating_sub(1))) else {
        return vec![(from, to)];
    };
    let months = first.months_to(last);
    if from >= to || months <= 1 {
        return vec![(from, to)];
    }
    let step = (months + MAX_WINDOWS - 1) / MAX_WINDOWS;
    let mut out = Vec::new();
    let mut start = from;
    let mut k = step;
    while k < months {
        match first.plus(k).start_ms() {
            Some(cut) if cut > start && cut < to => {
                out.push((start, cut));
                start = cut;
            }
            _ => break,
        }
        k += step;
    }
    out.push((start, to));
    out
}

/// The bounds of the UTC month (the history's partition) that holds all of `[from, to)`,
/// when one does.
fn month_of(from: i64, to: i64) -> Option<(i64, i64)> {
    let month = Month::of_ms(from)?;
    (from < to && Month::of_ms(to - 1)? == month)
        .then(|| month.bounds_ms())
        .flatten()
}

/// The bounds a read of `[from, to)` names as literals (see `history_within`), so that
/// PostgreSQL prunes the partitions when it plans and reads the months left in time
/// order: the month holding all of it, or else the whole months from `from`'s to `to`'s
/// when `held(first, last)` says each has a partition and they are at most
/// [`MAX_WINDOWS`] (the DEFAULT partition, which may hold any time, is pruned then, and
/// the months' index reads are appended in order, nothing sorted). `None`: a read of
/// the range sorts what it reads, so a long one is read in windows.
fn literal_bounds(
    from: i64,
    to: i64,
    held: impl FnOnce(Month, Month) -> bool,
) -> Option<(i64, i64)> {
    if let Some(month) = month_of(from, to) {
        return Some(month);
    }
    let (first, last) = (Month::of_ms(from)?, Month::of_ms(to.checked_sub(1)?)?);
    let months = first.months_to(last);
    if from >= to || months > MAX_WINDOWS || !held(first, last) {
        return None;
    }
    Some((first.bounds_ms()?.0, last.bounds_ms()?.1))
}

/// [`literal_bounds`] with the partitions this process knows of.
fn bounds_known(span: Option<(i64, i64)>, partitions: &PartitionState) -> Option<(i64, i64)> {
    let (from, to) = span?;
    literal_bounds(from, to, |first, last| partitions.hold_every(first, last))
}

/// Where the merged rows go: into memory, or batch by batch to a streamed answer.
pub(super) enum Sink<'a> {
    Rows(&'a mut Vec<Vec<Cell>>),
    Stream(&'a mut BatchSender<Vec<Cell>>),
}

impl Sink<'_> {
    /// Takes a row; `false` when the streamed answer's reader has gone. Rows the reader
    /// is done with go to `spare`, to be filled again.
    pub(super) async fn take(&mut self, row: Vec<Cell>, spare: &mut Vec<Vec<Cell>>) -> bool {
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

/// The time range of the history read, from its parameters.
fn range(plan: &NarrowHistory) -> Option<(i64, i64)> {
    let params = plan.history.params();
    let (from, to) = plan.range_params?;
    match (params.get(from), params.get(to)) {
        (Some(SqlValue::Int(from)), Some(SqlValue::Int(to))) => Some((*from, *to)),
        _ => None,
    }
}

/// Answers a history query read narrow into `sink`. `Ok(false)`: not read narrow and
/// nothing taken — more series match than a merge takes; the compiled query answers
/// instead. Callers pass only connections that prepare named statements ([`usable`]).
///
/// A range within one window is read outside any transaction first: the series read
/// (with the provenances' revision), then, for one series, its history in one
/// statement ([`one_series::read`]). Portals need a transaction, so several series, or
/// several windows, are read in a snapshot ([`read_histories`]). A snapshot is
/// read-only, so it ends by being dropped: its `ROLLBACK` goes out without waiting for
/// the answer, ahead of whatever the connection runs next.
async fn read_narrow(
    conn: &mut Conn,
    plan: &NarrowHistory,
    caches: &NarrowCaches<'_>,
    mut sink: Sink<'_>,
) -> Result<bool> {
    let NarrowCaches {
        provenances,
        wide,
        selections,
        partitions,
    } = *caches;
    bound_statement_cache(conn);
    if plan.reads_latest() {
        let read = latest::read(conn, plan, provenances, selections, &mut sink).await?;
        if !read {
            wide.remember(plan, Instant::now());
        }
        return Ok(read);
    }
    let whole = range(plan);
    let bounds = bounds_known(whole, partitions);
    let one_window =
        bounds.is_some() || whole.is_none_or(|(from, to)| windows(from, to).len() == 1);
    if !one_window {
        let tx = conn.snapshot().await?;
        let Some(found) = read_series(&tx, plan, caches).await? else {
            wide.remember(plan, Instant::now());
            return Ok(false);
        };
        return read_histories(&tx, plan, found, whole, None, partitions, sink).await;
    }
    let Some(found) = read_series(&*conn, plan, caches).await? else {
        wide.remember(plan, Instant::now());
        return Ok(false);
    };
    // A row may have to be read again from its time on (see `one_series::read`).
    let restartable = plan.provenance.is_none() || (plan.time_column.is_some() && whole.is_some());
    if let ([_], true) = (found.series.ids.as_slice(), restartable) {
        let sql = history_sql(plan, bounds);
        one_series::read(conn, plan, &sql, provenances, &found, &mut sink, whole).await?;
        return Ok(true);
    }
    let tx = conn.snapshot().await?;
    read_histories(&tx, plan, found, whole, Some(provenances), partitions, sink).await
}

/// What a narrow read keeps between reads, the backend's.
#[derive(Clone, Copy)]
pub(in crate::postgres) struct NarrowCaches<'a> {
    pub provenances: &'a ProvenanceCache,
    pub wide: &'a WideSeriesReads,
    pub selections: &'a SeriesSelections,
    /// The months known to have a partition (see [`literal_bounds`]).
    pub partitions: &'a PartitionState,
}

/// What the series read found: each series' id and its row with the measurement cells
/// NULL, and the provenances the answer shows.
struct Found {
    series: Arc<Selection>,
    provenances: Arc<Provenances>,
}

/// The series read (or the series kept from it, where the catalog has not changed
/// since) and the provenances the answer shows (or those kept, where they have not
/// changed): both revisions in one statement, then what changed read in one round trip.
/// `None`: more series match than a merge takes.
async fn read_series(
    q: &impl Queries,
    plan: &NarrowHistory,
    caches: &NarrowCaches<'_>,
) -> Result<Option<Found>> {
    let kept = caches.selections.get(&plan.series);
    let revisions = read_revisions(q).await?;
    let (series, provenances) = futures::try_join!(
        series_at(q, plan, caches.selections, kept, revisions.catalog),
        provenances_at(q, plan, caches.provenances, revisions.provenances)
    )?;
    Ok(series.map(|series| Found {
        series,
        provenances,
    }))
}

/// The catalog's and the provenances' revisions at one moment.
pub(super) struct Revisions {
    pub catalog: i64,
    pub provenances: i64,
}

/// Both revisions now, by one statement.
pub(super) async fn read_revisions(q: &impl Queries) -> Result<Revisions> {
    let stmt = q.prepare_cached(REVISIONS_SQL).await?;
    let row = q.query_one(&stmt, &[]).await.map_err(query_error)?;
    Ok(Revisions {
        catalog: row.try_get(0)?,
        provenances: row.try_get(1)?,
    })
}

/// The series `plan` reads with the catalog at `revision`: those `kept` where they
/// stand at it, or else read and kept. `None`: more series match than a merge takes.
async fn series_at(
    q: &impl Queries,
    plan: &NarrowHistory,
    selections: &SeriesSelections,
    kept: Option<Kept>,
    revision: i64,
) -> Result<Option<Arc<Selection>>> {
    if let Some(kept) = kept.filter(|k| k.stands_at(revision)) {
        return Ok(Some(kept.selection));
    }
    let Some((ids, templates)) = series_rows(q, plan).await? else {
        return Ok(None);
    };
    let selection = Arc::new(Selection::new(ids, templates));
    selections.keep(&plan.series, revision, selection.clone());
    Ok(Some(selection))
}

/// The series `plan` reads: their ids, and their rows with the measurement cells NULL;
/// `None` when more match than a merge takes.
async fn series_rows(
    q: &impl Queries,
    plan: &NarrowHistory,
) -> Result<Option<(Vec<i64>, Vec<Vec<Cell>>)>> {
    let series = q.prepare_cached(plan.series.as_sql()).await?;
    let bound = bind(plan.series.params());
    let rows = q.query(&series, &refs(&bound)).await.map_err(query_error)?;
    let mut ids = Vec::with_capacity(rows.len());
    let mut templates = Vec::with_capacity(rows.len());
    let mut shared = SharedText::default();
    for row in &rows {
        ids.push(row.try_get::<_, i64>(0)?);
        let mut cells = row_cells(row, &mut shared)?;
        cells.remove(0);
        templates.push(cells);
    }
    Ok(plan.merges(ids.len()).then_some((ids, templates)))
}

/// The history statement naming `bounds` (see [`literal_bounds`] and `history_within`).
fn history_sql(plan: &NarrowHistory, bounds: Option<(i64, i64)>) -> Cow<'_, str> {
    match bounds {
        Some((start, end)) => Cow::Owned(plan.history_within(start, end)),
        None => Cow::Borrowed(plan.history.as_sql()),
    }
}

/// The history statement's parameters for series `id`, over `span` when given.
fn history_params(plan: &NarrowHistory, id: i64, span: Option<(i64, i64)>) -> Vec<SqlValue> {
    let mut params = plan.history.params().to_vec();
    params[plan.series_param] = SqlValue::Int(id);
    if let (Some((from, to)), Some((from_at, to_at))) = (span, plan.range_params) {
        params[from_at] = SqlValue::Int(from);
        params[to_at] = SqlValue::Int(to);
    }
    params
}

/// The histories of `found`'s series over `whole` in snapshot `tx`: one portal per
/// series and window, or one statement for one series in one window. `reread`: the
/// provenances were read before the snapshot, so they are read again in it (with the
/// portals' binds, one round trip).
async fn read_histories(
    tx: &Tx<'_>,
    plan: &NarrowHistory,
    found: Found,
    whole: Option<(i64, i64)>,
    reread: Option<&ProvenanceCache>,
    partitions: &PartitionState,
    mut sink: Sink<'_>,
) -> Result<bool> {
    let Found {
        series,
        provenances,
    } = found;
    let (ids, templates) = (&series.ids, &series.templates);
    // Each series' reads: its windows, or its whole range when it is not cut (or its
    // months all have partitions, read in order).
    let spans: Vec<Option<(i64, i64)>> = match whole {
        Some((from, to))
            if ids.len() <= WINDOWED_SERIES && bounds_known(whole, partitions).is_none() =>
        {
            windows(from, to).into_iter().map(Some).collect()
        }
        _ => vec![None],
    };
    // A read names its months' bounds (see `literal_bounds`): one statement per month or
    // span of months, their statements prepared together (one round trip).
    let sqls: Vec<Cow<'_, str>> = spans
        .iter()
        .map(|span| history_sql(plan, bounds_known(span.or(whole), partitions)))
        .collect();
    let statements = try_join_all(sqls.iter().map(|sql| tx.prepare_cached(sql))).await?;
    let mut named = Vec::with_capacity(statements.len());
    for statement in &statements {
        let Stmt::Named(statement) = statement else {
            return Ok(false);
        };
        named.push(statement);
    }
    let bindings: Vec<(&Statement, Vec<SqlValue>)> = ids
        .iter()
        .flat_map(|&id| {
            spans
                .iter()
                .zip(&named)
                .map(move |(span, statement)| (*statement, history_params(plan, id, *span)))
        })
        .collect();
    let per_series = spans.len();
    let ahead = usize::from(per_series > 1);
    let mut fetches = Fetches {
        size: fetch_rows(ids.len() * (1 + ahead)),
        in_flight: VecDeque::new(),
        series: Vec::with_capacity(ids.len()),
    };
    let reread = async {
        match reread {
            Some(cache) => read_provenances(tx, plan, cache).await.map(Some),
            None => Ok(None),
        }
    };
    let provenances = if let [(_, params)] = bindings.as_slice() {
        // One window of one series needs no portal: one statement streams its rows,
        // bound and executed in one round trip instead of two. The provenances come
        // first: an answer queued behind the rows would wait for all of them.
        let provenances = reread.await?.unwrap_or(provenances);
        let bound = bind(params);
        let rows = tx
            .query_raw(&statements[0], refs(&bound))
            .await
            .map_err(query_error)?;
        fetches
            .series
            .push(SeriesRead::of(vec![Window::new(None, true)]));
        fetches.in_flight.push_back((0, 0, Box::pin(rows), 0));
        provenances
    } else {
        // Every window of every series bound (one round trip, no rows yet); a portal
        // per window.
        let (portals, reread) = futures::try_join!(
            async {
                try_join_all(bindings.iter().map(|(statement, params)| async move {
                    let bound = bind(params);
                    tx.portal(statement, &refs(&bound)).await
                }))
                .await
                .map_err(query_error)
            },
            reread,
        )?;
        let mut portals = portals.into_iter();
        for _ in ids {
            let windows = portals
                .by_ref()
                .take(per_series)
                .map(|portal| Window::new(Some(portal), false))
                .collect();
            fetches.series.push(SeriesRead::of(windows));
        }
        reread.unwrap_or(provenances)
    };
    // Every series' first window asked for at once, then every second one, ahead.
    for w in 0..=ahead {
        for k in 0..ids.len() {
            fetches.send(tx, k, w).await?;
        }
    }
    let mut merge = Merge::new(plan, templates, &provenances);
    loop {
        match merge.next(|k| Ok(fetches.pull(k)))? {
            Step::Row(row) => {
                if !sink.take(row, merge.spare_rows()).await {
                    break;
                }
            }
            Step::Done => break,
            Step::Fetch(k) => fetches.more(tx, k).await?,
        }
    }
    Ok(true)
}

/// Every provenance's columns the answer selects, when the plan reads them apart: those
/// kept at the revision this read sees, or else read (and kept).
async fn read_provenances(
    tx: &impl Queries,
    plan: &NarrowHistory,
    cache: &ProvenanceCache,
) -> Result<Arc<Provenances>> {
    read_provenances_from(tx, plan, cache, true).await
}

/// [`read_provenances`]; with `use_kept` false, read from the table whatever is kept
/// (where a row has named a provenance that what was kept lacks).
async fn read_provenances_from(
    tx: &impl Queries,
    plan: &NarrowHistory,
    cache: &ProvenanceCache,
    use_kept: bool,
) -> Result<Arc<Provenances>> {
    if plan.provenance.is_none() {
        return Ok(Arc::default());
    }
    let stmt = tx.prepare_cached(REVISION_SQL).await?;
    let revision: i64 = tx
        .query_one(&stmt, &[])
        .await
        .map_err(query_error)?
        .try_get(0)?;
    if use_kept {
        provenances_at(tx, plan, cache, revision).await
    } else {
        read_provenance_rows(tx, plan, cache, revision).await
    }
}

/// The provenances the answer shows with their table at `revision` (read before): those
/// kept at it, or else read and kept.
async fn provenances_at(
    q: &impl Queries,
    plan: &NarrowHistory,
    cache: &ProvenanceCache,
    revision: i64,
) -> Result<Arc<Provenances>> {
    match &plan.provenance {
        None => Ok(Arc::default()),
        Some(read) => match cache.get(read, revision) {
            Some(kept) => Ok(kept),
            None => read_provenance_rows(q, plan, cache, revision).await,
        },
    }
}

/// Every provenance's columns the answer selects, read now and kept as of `revision`.
async fn read_provenance_rows(
    q: &impl Queries,
    plan: &NarrowHistory,
    cache: &ProvenanceCache,
    revision: i64,
) -> Result<Arc<Provenances>> {
    let Some(read) = &plan.provenance else {
        return Ok(Arc::default());
    };
    let mut provenances = Provenances::default();
    let stmt = q.prepare_cached(read.sql.as_sql()).await?;
    let bound = bind(read.sql.params());
    let mut shared = SharedText::default();
    for row in q.query(&stmt, &refs(&bound)).await.map_err(query_error)? {
        let mut cells = row_cells(&row, &mut shared)?;
        let Cell::Int(id) = cells.remove(0) else {
            continue;
        };
        provenances.insert(id, cells);
    }
    Ok(cache.keep(read, revision, provenances))
}

/// A history answer read narrow: its rows, or the connection back when the compiled
/// query must answer.
pub(super) async fn narrow_rows(
    conn: Conn,
    plan: Option<NarrowHistory>,
    caches: &NarrowCaches<'_>,
) -> Result<std::result::Result<Vec<Vec<Cell>>, Conn>> {
    let Some(plan) = usable(&conn, plan, caches.wide) else {
        return Ok(Err(conn));
    };
    let mut conn = conn;
    let mut rows = Vec::new();
    if !read_narrow(&mut conn, &plan, caches, Sink::Rows(&mut rows)).await? {
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
    caches: &NarrowCaches<'_>,
) -> Option<(Conn, BatchSender<Vec<Cell>>)> {
    let Some(plan) = usable(&conn, plan, caches.wide) else {
        return Some((conn, tx));
    };
    let (mut conn, mut tx) = (conn, tx);
    match read_narrow(&mut conn, &plan, caches, Sink::Stream(&mut tx)).await {
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

#[path = "narrow_fetches.rs"]
mod fetches;
use fetches::{Fetches, SeriesRead, Window};

#[path = "narrow_one_series.rs"]
mod one_series;

#[path = "narrow_latest.rs"]
mod latest;

#[cfg(test)]
#[path = "narrow_tests.rs"]
pub(super) mod tests;

#[cfg(test)]
#[path = "narrow_latest_tests.rs"]
mod latest_tests;
