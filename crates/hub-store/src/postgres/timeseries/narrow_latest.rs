//! Latest values read narrow on PostgreSQL: the series an answer covers are kept
//! between reads at the catalog's revision (`crate::timeseries::selections`), and their
//! latest rows are read by id from `ts_latest` alone, in the round trip that reads the
//! catalog's and the provenances' revisions (one statement). Only when the revision moved (or nothing is kept) is
//! the series read run again, and the latest rows read after it.
//!
//! Must not: order rows (`Merge` does, as for a history) or decide which series an
//! answer covers (the plan's series read does).

use super::*;

/// Answers a latest query read narrow into `sink`. `Ok(false)`: more series match than
/// a merge takes, and nothing was taken (the compiled query answers).
pub(super) async fn read(
    conn: &Conn,
    plan: &NarrowHistory,
    provenances: &ProvenanceCache,
    selections: &SeriesSelections,
    sink: &mut Sink<'_>,
) -> Result<bool> {
    let kept = selections.get(&plan.series);
    let (revisions, rows) = futures::try_join!(read_revisions(conn), async {
        match &kept {
            Some(kept) => latest_rows(conn, plan, &kept.selection.ids).await.map(Some),
            None => Ok(None),
        }
    })?;
    let provenances = provenances_at(conn, plan, provenances, revisions.provenances);
    let ((selection, rows), provenances) = match (kept, rows) {
        (Some(kept), Some(rows)) if kept.stands_at(revisions.catalog) => {
            ((kept.selection, rows), provenances.await?)
        }
        (kept, _) => {
            let (selection, provenances) = futures::try_join!(
                series_at(conn, plan, selections, kept, revisions.catalog),
                provenances
            )?;
            let Some(selection) = selection else {
                return Ok(false);
            };
            let rows = latest_rows(conn, plan, &selection.ids).await?;
            ((selection, rows), provenances)
        }
    };
    // At most one latest row per series (the key of `ts_latest`), its id last.
    let mut by_series: Vec<Option<Vec<Cell>>> = (0..selection.ids.len()).map(|_| None).collect();
    for row in rows {
        if let Some(k) = row.last().and_then(|id| match id {
            Cell::Int(id) => selection.position(*id),
            _ => None,
        }) {
            by_series[k] = Some(row);
        }
    }
    let mut merge = Merge::new(plan, &selection.templates, &provenances);
    loop {
        let step = merge.next(|k| {
            Ok(match by_series[k].take() {
                Some(row) => Pull::Row(row),
                None => Pull::End,
            })
        })?;
        match step {
            Step::Row(row) => {
                if !sink.take(row, merge.spare_rows()).await {
                    break;
                }
            }
            // Every series' row is at hand: nothing is fetched.
            Step::Done | Step::Fetch(_) => break,
        }
    }
    Ok(true)
}

/// The latest rows of the series `ids`, in no order, each ending with its series id.
async fn latest_rows(
    q: &impl Queries,
    plan: &NarrowHistory,
    ids: &[i64],
) -> Result<Vec<Vec<Cell>>> {
    let stmt = q.prepare_cached(plan.history.as_sql()).await?;
    let bound = bind(plan.history.params());
    let mut params = refs(&bound);
    params[plan.series_param] = &ids;
    let rows = q.query(&stmt, &params).await.map_err(query_error)?;
    let mut shared = SharedText::default();
    rows.iter().map(|row| row_cells(row, &mut shared)).collect()
}
