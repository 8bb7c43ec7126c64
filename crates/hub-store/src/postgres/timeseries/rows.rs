//! Reading a Time Series query's rows on PostgreSQL: result columns of any type as
//! [`Cell`]s, a compiled read as a stream or bounded, latest values read unordered and
//! sorted here, and PostgreSQL's refusals that are the client's fault.

use std::error::Error;

use hub_query::timeseries::UnorderedRead;
use tokio_postgres::types::{FromSql, Type};

use super::super::{bind, refs, Conn, Queries};
use crate::timeseries::unordered::Unordered;
use crate::timeseries::{Catalog, Cell, SharedText};
use crate::{Result, StoreError};

/// A result cell of any column type the Time Series queries produce, its text still in
/// the row's buffer (made a [`Cell`] by [`row_cells`]).
enum AnyCell<'a> {
    Cell(Cell),
    Text(&'a [u8]),
}

impl<'a> FromSql<'a> for AnyCell<'a> {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(match *ty {
            Type::INT8 => AnyCell::Cell(Cell::Int(i64::from_sql(ty, raw)?)),
            Type::INT4 => AnyCell::Cell(Cell::Int(i32::from_sql(ty, raw)? as i64)),
            Type::INT2 => AnyCell::Cell(Cell::Int(i16::from_sql(ty, raw)? as i64)),
            Type::BOOL => AnyCell::Cell(Cell::Int(bool::from_sql(ty, raw)? as i64)),
            Type::FLOAT8 => AnyCell::Cell(Cell::Real(f64::from_sql(ty, raw)?)),
            Type::FLOAT4 => AnyCell::Cell(Cell::Real(f32::from_sql(ty, raw)? as f64)),
            Type::JSONB => AnyCell::Text(raw.get(1..).unwrap_or_default()),
            // A row version (`xmin`): four bytes, network order.
            Type::XID => {
                let bytes: [u8; 4] = raw.try_into().map_err(|_| "an xid of other than 4 bytes")?;
                AnyCell::Cell(Cell::Int(u32::from_be_bytes(bytes) as i64))
            }
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
                AnyCell::Text(raw)
            }
            ref other => {
                return Err(format!("time series query returned a column of type {other}").into())
            }
        })
    }

    fn from_sql_null(_: &Type) -> std::result::Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(AnyCell::Cell(Cell::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// One result row as cells; texts repeating the cursor's previous row are shared.
pub(in crate::postgres) fn row_cells(
    row: &tokio_postgres::Row,
    shared: &mut SharedText,
) -> Result<Vec<Cell>> {
    let mut cells = Vec::with_capacity(row.len());
    for i in 0..row.len() {
        cells.push(match row.try_get::<_, AnyCell<'_>>(i)? {
            AnyCell::Cell(c) => c,
            AnyCell::Text(t) => shared.cell(i, t),
        });
    }
    Ok(cells)
}

/// Latest values read in any order and sorted here, their station, type and provenance
/// columns from the catalog when the plan has a catalog read; `None` when there is no
/// such plan, the rows are more than it sorts in memory or an entity changed between
/// the reads (the compiled query answers then).
pub(super) async fn unordered_rows(
    conn: &Conn,
    plan: Option<UnorderedRead>,
    catalog: &Catalog,
) -> Result<Option<Vec<Vec<Cell>>>> {
    let Some(plan) = plan else {
        return Ok(None);
    };
    let sql = plan.catalog.as_ref().map_or(&plan.sql, |read| &read.sql);
    let Some(mut rows) = rows_up_to(conn, sql, plan.max_rows).await? else {
        return Ok(None);
    };
    if let Some(read) = &plan.catalog {
        let (mut answer, missing) = catalog.lookup(read, &rows);
        for (kind, ids) in missing {
            let stmt = super::super::prepare_bounded(conn, kind.sql())
                .await
                .map_err(query_error)?;
            let found = conn.query(&stmt, &[&ids]).await.map_err(query_error)?;
            let mut shared = SharedText::default();
            let found = found
                .iter()
                .map(|row| row_cells(row, &mut shared))
                .collect::<Result<Vec<_>>>()?;
            catalog.keep(&mut answer, kind, found);
        }
        let Some(made) = rows.into_iter().map(|row| answer.row(row)).collect() else {
            return Ok(None);
        };
        rows = made;
    }
    let mut unordered = Unordered::new(&plan);
    for row in rows {
        // `rows_up_to` kept to the plan's bound.
        _ = unordered.take(row);
    }
    Ok(Some(unordered.finish()))
}

/// The rows of a compiled read as they arrive (its statement prepared once per
/// connection).
pub(super) async fn row_stream(
    conn: &Conn,
    sql: hub_query::SqlBuilder,
) -> Result<tokio_postgres::RowStream> {
    let (text, params) = sql.into_parts();
    let bound = bind(&params);
    let stmt = super::super::prepare_bounded(conn, &text)
        .await
        .map_err(query_error)?;
    conn.query_raw(&stmt, refs(&bound))
        .await
        .map_err(query_error)
}

/// The rows of `sql`, or `None` when they are more than `max`.
async fn rows_up_to(
    conn: &Conn,
    sql: &hub_query::SqlBuilder,
    max: usize,
) -> Result<Option<Vec<Vec<Cell>>>> {
    let rows = row_stream(conn, sql.clone()).await?;
    futures::pin_mut!(rows);
    let mut shared = SharedText::default();
    let mut out = Vec::new();
    while let Some(row) = futures::StreamExt::next(&mut rows).await {
        if out.len() == max {
            return Ok(None);
        }
        out.push(row_cells(&row.map_err(query_error)?, &mut shared)?);
    }
    Ok(Some(out))
}

/// A regular expression PostgreSQL refuses (its dialect differs from the regex crate's,
/// which validated it) is the client's fault, not a server error.
pub(in crate::postgres) fn query_error(e: tokio_postgres::Error) -> StoreError {
    match e.code() {
        Some(c) if *c == tokio_postgres::error::SqlState::INVALID_REGULAR_EXPRESSION => {
            StoreError::Invalid(format!(
                "Invalid regular expression in a re/ire/nre/nire filter value: {}",
                super::super::describe(&e)
            ))
        }
        _ => StoreError::Postgres(e),
    }
}
