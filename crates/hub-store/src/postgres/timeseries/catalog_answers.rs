//! Answers that read the catalog alone (a station type's stations, their data types,
//! their metadata history, an edge type's edges: `CompiledTs::catalog_only`), kept
//! between reads on
//! PostgreSQL at the catalog's revision, as the series of narrow reads are
//! (`crate::timeseries::selections`). A read asks for the revision; the rows kept at the
//! same revision are the answer. Otherwise the compiled query runs in the same round
//! trip, after the revision read, and its rows are answered as they arrive and kept
//! when they are at most [`MAX_KEPT_ROWS`] and the answer was read to its end.
//!
//! Must not: decide which queries read the catalog alone (`hub-query` does) or change
//! the rows (they are the compiled query's, in its order).

use std::sync::Arc;

use futures::StreamExt;
use hub_query::SqlBuilder;

use super::narrow::{read_revisions, Sink};
use super::{query_error, row_cells, row_stream};
use crate::postgres::Conn;
use crate::timeseries::selections::{Selection, SeriesSelections};
use crate::timeseries::SharedText;
use crate::Result;

/// Rows of an answer kept at most: a longer one is answered as it arrives and not kept.
pub(super) const MAX_KEPT_ROWS: usize = 10_000;

/// Answers the catalog-only query `sql` into `sink`: the rows kept at the catalog's
/// revision, or else the query's rows (kept for the next read).
pub(super) async fn read(
    conn: &Conn,
    sql: &SqlBuilder,
    selections: &SeriesSelections,
    sink: &mut Sink<'_>,
) -> Result<()> {
    let kept = selections.get(sql);
    let mut spare = Vec::new();
    let (revision, rows) = match kept {
        Some(kept) => {
            let revision = read_revisions(conn).await?.catalog;
            if kept.stands_at(revision) {
                for row in &kept.selection.templates {
                    let mut answered: Vec<_> = spare.pop().unwrap_or_default();
                    answered.clone_from(row);
                    if !sink.take(answered, &mut spare).await {
                        break;
                    }
                }
                return Ok(());
            }
            (revision, row_stream(conn, sql.clone()).await?)
        }
        // The revision is read first, in the same round trip as the rows.
        None => {
            let (revisions, rows) =
                futures::try_join!(read_revisions(conn), row_stream(conn, sql.clone()))?;
            (revisions.catalog, rows)
        }
    };
    let mut rows = Box::pin(rows);
    let mut shared = SharedText::default();
    let mut copy = Some(Vec::new());
    while let Some(row) = rows.next().await {
        let cells = row_cells(&row.map_err(query_error)?, &mut shared)?;
        copy = copy.filter(|c: &Vec<_>| c.len() < MAX_KEPT_ROWS);
        if let Some(copy) = copy.as_mut() {
            copy.push(cells.clone());
        }
        if !sink.take(cells, &mut spare).await {
            // The reader has gone: what was read is not the whole answer.
            return Ok(());
        }
    }
    if let Some(rows) = copy {
        selections.keep(sql, revision, Arc::new(Selection::new(Vec::new(), rows)));
    }
    Ok(())
}
