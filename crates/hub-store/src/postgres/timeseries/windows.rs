//! Time Series history pages read from windows at the start of their range on
//! PostgreSQL (`hub_query::timeseries::HistoryWindows` decides the windows), and the
//! rows of a compiled statement as cells. Must not: decide what to read or order rows.

use hub_query::timeseries::HistoryWindows;
use hub_query::SqlBuilder;

use super::super::{bind, refs, Conn, Queries};
use super::{query_error, row_cells};
use crate::timeseries::{Cell, SharedText};
use crate::Result;

/// The page of a history a window at the start of its range holds whole (see
/// `HistoryWindows`), or `None` when none of the windows tried does.
pub(super) async fn windowed_rows(
    conn: &Conn,
    windows: Option<&HistoryWindows>,
) -> Result<Option<Vec<Vec<Cell>>>> {
    let Some(windows) = windows else {
        return Ok(None);
    };
    let mut window = windows.first();
    while let Some(tried) = window {
        let rows = all_rows(conn, &tried.sql).await?;
        if rows.len() >= windows.limit() {
            return Ok(Some(rows));
        }
        window = if rows.is_empty() && tried.is_first() {
            let start = match query_rows(conn, &windows.first_value()).await?.first() {
                Some(row) => row.try_get(0)?,
                None => None,
            };
            windows.located(&tried, start)
        } else {
            windows.after(&tried, rows.len())
        };
    }
    Ok(None)
}

/// Every row of a Time Series statement, as cells.
pub(super) async fn all_rows(conn: &Conn, sql: &SqlBuilder) -> Result<Vec<Vec<Cell>>> {
    let rows = query_rows(conn, sql).await?;
    let mut out = Vec::with_capacity(rows.len());
    let mut shared = SharedText::default();
    for row in &rows {
        out.push(row_cells(row, &mut shared)?);
    }
    Ok(out)
}

/// The rows of a Time Series statement; its failure is the query's.
async fn query_rows(conn: &Conn, sql: &SqlBuilder) -> Result<Vec<tokio_postgres::Row>> {
    let bound = bind(sql.params());
    let stmt = super::super::prepare_bounded(conn, sql.as_sql())
        .await
        .map_err(query_error)?;
    conn.query(&stmt, &refs(&bound)).await.map_err(query_error)
}
