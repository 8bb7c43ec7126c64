//! # Time series storage
//!
//! Tables `ts_*` (migration 2): stations with current metadata and its history, data
//! types, provenance, series (station × type × period × value kind), one latest row per
//! series (`ts_latest`) and the history clustered by (series, timestamp)
//! (`ts_history`, `WITHOUT ROWID`), edges with GeoJSON line geometry and bounding-box
//! columns, events with locations. Times are epoch milliseconds (UTC). The PostgreSQL
//! backend has the same tables (`postgres/sql/timeseries.sql`) and its own
//! implementations (`postgres/timeseries.rs`); the methods here dispatch.
//!
//! Owns: running the SQL that `hub_query::timeseries` compiles, the writer's upserts
//! (one transaction per call), and the SQL functions SQLite needs for those queries.
//! Must not: build SQL from client text, shape HTTP responses or know route syntax.

mod functions;
mod write;

use hub_query::timeseries::CompiledTs;
use rusqlite::types::ValueRef;

use crate::{Backend, Result, Store};

pub use functions::{geometry_intersects_box, haversine, REGEX_SIZE_LIMIT};
pub use write::*;

pub(crate) use functions::register as register_functions;

/// One SQL value of a result row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

/// What a level-1 list enumerates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeList {
    StationTypes,
    EdgeTypes,
    EventOrigins,
}

impl Store {
    /// Runs a compiled Time Series query; rows hold one cell per SQL column.
    pub async fn ts_query(&self, compiled: CompiledTs) -> Result<Vec<Vec<Cell>>> {
        // The SQL and its time for `HUB_LOG=hub_store::sql=debug` (see `list_content`).
        let sql_log =
            tracing::enabled!(target: "hub_store::sql", tracing::Level::DEBUG).then(|| {
                (
                    std::time::Instant::now(),
                    compiled.sql.as_sql().to_string(),
                    format!("{:?}", compiled.sql.params()),
                )
            });
        let rows = self.ts_query_on_backend(compiled).await;
        if let Some((started, sql, params)) = sql_log {
            tracing::debug!(target: "hub_store::sql", micros = started.elapsed().as_micros() as u64, sql = %sql, params = %params, "ts_query");
        }
        rows
    }

    async fn ts_query_on_backend(&self, compiled: CompiledTs) -> Result<Vec<Vec<Cell>>> {
        match &*self.backend {
            Backend::Postgres(b) => b.ts_query(compiled).await,
            Backend::Sqlite(b) => {
                b.read(move |conn| {
                    let (sql, params) = compiled.sql.into_parts();
                    let mut stmt = conn.prepare_cached(&sql)?;
                    let n = stmt.column_count();
                    let bound = crate::sqlite::bind(&params);
                    let mut rows = stmt.query(bound.as_slice())?;
                    let mut out = Vec::new();
                    while let Some(row) = rows.next()? {
                        let mut cells = Vec::with_capacity(n);
                        for i in 0..n {
                            cells.push(match row.get_ref(i)? {
                                ValueRef::Null => Cell::Null,
                                ValueRef::Integer(v) => Cell::Int(v),
                                ValueRef::Real(v) => Cell::Real(v),
                                ValueRef::Text(t) | ValueRef::Blob(t) => {
                                    Cell::Text(String::from_utf8_lossy(t).into_owned())
                                }
                            });
                        }
                        out.push(cells);
                    }
                    Ok(out)
                })
                .await
            }
        }
    }

    /// Distinct station types (of available stations), edge types or event origins, sorted.
    pub async fn ts_type_list(&self, what: TypeList) -> Result<Vec<String>> {
        let sql = match what {
            TypeList::StationTypes => "SELECT DISTINCT stationtype FROM ts_station WHERE available = 1 ORDER BY 1",
            TypeList::EdgeTypes => {
                "SELECT DISTINCT i.stationtype FROM ts_edge e JOIN ts_station i ON i.id = e.edge_data_id WHERE i.available = 1 ORDER BY 1"
            }
            TypeList::EventOrigins => "SELECT DISTINCT origin FROM ts_event ORDER BY 1",
        };
        match &*self.backend {
            Backend::Postgres(b) => b.ts_type_list(what).await,
            Backend::Sqlite(b) => {
                b.read(move |conn| {
                    let mut stmt = conn.prepare_cached(sql)?;
                    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
                })
                .await
            }
        }
    }
}
