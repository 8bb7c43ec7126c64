//! One series' history within one window (one month, or months that all have a
//! partition), read outside any transaction ([`read`]): the usual history read, and the
//! one where a snapshot's two extra exchanges cost most.
//!
//! Must not: read several series or windows (portals, and so a snapshot, do that).

use super::*;

/// The history of `found`'s one series, by `sql` (the plan's history statement naming
/// the range's months, see `literal_bounds`), outside any transaction: one statement
/// streams its rows, so the read costs no `START TRANSACTION` and no `ROLLBACK`. The
/// provenances were read before the history, not in its snapshot: a row naming one
/// they do not hold (created since, or gone) ends that statement, and the rest of the
/// history, from that row's time on, is read in a snapshot together with the
/// provenances as they are in it.
pub(super) async fn read(
    conn: &mut Conn,
    plan: &NarrowHistory,
    sql: &str,
    cache: &ProvenanceCache,
    found: &Found,
    sink: &mut Sink<'_>,
    whole: Option<(i64, i64)>,
) -> Result<()> {
    let Some(&id) = found.series.ids.first() else {
        return Ok(());
    };
    let statement = conn.prepare_cached(sql).await?;
    let params = history_params(plan, id, None);
    let bound = bind(&params);
    let rows = conn
        .query_raw(&statement, refs(&bound))
        .await
        .map_err(query_error)?;
    let merge = Merge::new(plan, &found.series.templates, &found.provenances);
    let known = plan.provenance.is_some().then_some(&*found.provenances);
    let (merge, from) = match stream_series(rows, merge, plan, known, sink).await? {
        Streamed::Done => return Ok(()),
        Streamed::Unknown(merge, from) => (merge, from),
    };
    let to = whole.map_or(from, |(_, to)| to);
    let tx = conn.snapshot().await?;
    let provenances = read_provenances_from(&tx, plan, cache, false).await?;
    let statement = tx.prepare_cached(sql).await?;
    let params = history_params(plan, id, Some((from, to)));
    let bound = bind(&params);
    let rows = tx
        .query_raw(&statement, refs(&bound))
        .await
        .map_err(query_error)?;
    stream_series(
        rows,
        (*merge).with_provenances(&provenances),
        plan,
        None,
        sink,
    )
    .await?;
    Ok(())
}

/// How [`stream_series`] ended.
enum Streamed<'p> {
    /// The answer is complete, or its reader has gone.
    Done,
    /// A row named a provenance not `known`: the merge, to go on from that row's time.
    Unknown(Box<Merge<'p>>, i64),
}

/// Merges the rows of one series' history statement into `sink`, row by row as they
/// arrive; with `known`, stops at the first row whose provenance is not in it.
async fn stream_series<'p>(
    rows: RowStream,
    mut merge: Merge<'p>,
    plan: &NarrowHistory,
    known: Option<&Provenances>,
    sink: &mut Sink<'_>,
) -> Result<Streamed<'p>> {
    let mut rows = Box::pin(rows);
    let mut next: Option<Vec<Cell>> = None;
    let mut ended = false;
    let mut shared = SharedText::default();
    loop {
        let step = merge.next(|_| {
            Ok(match next.take() {
                Some(row) => Pull::Row(row),
                None if ended => Pull::End,
                None => Pull::Pending,
            })
        })?;
        match step {
            Step::Row(row) => {
                if !sink.take(row, merge.spare_rows()).await {
                    return Ok(Streamed::Done);
                }
            }
            Step::Done => return Ok(Streamed::Done),
            Step::Fetch(_) => match rows.next().await {
                None => ended = true,
                Some(row) => {
                    let cells = row_cells(&row.map_err(query_error)?, &mut shared)?;
                    if let (Some(known), Some(Cell::Int(provenance))) =
                        (known, cells.get(plan.read_columns))
                    {
                        if !known.contains_key(provenance) {
                            if let Some(&Cell::Int(time)) =
                                plan.time_column.and_then(|at| cells.get(at))
                            {
                                return Ok(Streamed::Unknown(Box::new(merge), time));
                            }
                        }
                    }
                    next = Some(cells);
                }
            },
        }
    }
}
