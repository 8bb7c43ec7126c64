//! # Time series storage
//!
//! Tables `ts_*` (migration 2): stations with current metadata and its history, data
//! types, provenance, series (station × type × period × value kind), one latest row per
//! series (`ts_latest`) and the history clustered by (series, timestamp)
//! (`ts_history`, `WITHOUT ROWID`), edges with GeoJSON line geometry and bounding-box
//! columns, events with locations. Times are epoch milliseconds (UTC). The PostgreSQL
//! schema is the twin (`postgres/sql/timeseries.sql`).
//!
//! Owns: the [`TimeSeriesRepo`] trait the Time Series API uses, its vocabulary
//! ([`model`]), every decision both backends share (pure functions: [`plan`],
//! [`history`] for the history's months and retention, `narrow` for merging a history
//! answer read narrow, `unordered` for sorting latest values read in any order,
//! `catalog` for their station, type and provenance columns kept between reads,
//! `provenance` for the provenances of history answers kept between reads,
//! `wide_series` for the series reads found too wide for a narrow read), and
//! the SQL functions SQLite needs for the compiled queries. The implementations only
//! move rows: `sqlite/timeseries.rs` and `postgres/timeseries.rs`.
//! Must not: build SQL from client text, shape HTTP responses or know route syntax.

mod catalog;
mod cells;
mod functions;
mod geometry;
pub mod history;
pub mod model;
pub(crate) mod narrow;
pub mod plan;
pub(crate) mod provenance;
pub(crate) mod selections;
pub(crate) mod unordered;
mod wide_series;

use hub_query::timeseries::CompiledTs;

use crate::Result;

pub use functions::{geometry_intersects_box, haversine};
pub use history::{HistoryMaintenance, HistoryPolicy};
pub use hub_query::timeseries::REGEX_SIZE_LIMIT;
pub use model::*;
pub use plan::SyncFlags;

pub(crate) use catalog::Catalog;
pub(crate) use cells::SharedText;
pub(crate) use functions::register as register_functions;
pub(crate) use geometry::{edge_line, geometry_bbox};
pub(crate) use provenance::ProvenanceCache;
pub(crate) use wide_series::WideSeriesReads;

/// The Time Series API's storage: reads of compiled queries and level-1 lists, and the
/// writer's operations (every write call is one transaction).
#[async_trait::async_trait]
pub trait TimeSeriesRepo: Send + Sync {
    /// Which SQL dialect [`TimeSeriesRepo::query`] expects compiled queries in.
    fn dialect(&self) -> hub_query::Dialect;

    /// Runs a compiled Time Series query; rows hold one cell per SQL column.
    async fn query(&self, compiled: CompiledTs) -> Result<Vec<Vec<Cell>>>;

    /// Runs a compiled Time Series query as a cursor: its rows in batches (see
    /// [`crate::batches`]), for answers of any size. The first batch (or the error)
    /// arrives once the query has started, so a failing query can still be answered
    /// with an error status.
    fn query_batches(&self, compiled: CompiledTs) -> crate::Batches<Vec<Cell>>;

    /// Distinct station types (of available stations), edge types or event origins, sorted.
    async fn type_list(&self, what: TypeList) -> Result<Vec<String>>;

    /// Upserts stations of one type by code; with `sync_state`, other active stations of
    /// this type and of the first station's origin become inactive (unless `only_activation`).
    async fn sync_stations(
        &self,
        stype: String,
        stations: Vec<StationInput>,
        flags: SyncFlags,
    ) -> Result<SyncSummary>;

    /// Upserts data types by name; a new type-metadata row when the metadata changed.
    async fn sync_data_types(&self, types: Vec<DataTypeInput>) -> Result<SyncSummary>;

    /// The uuid of the provenance with this (lineage, collector, version), created when new.
    async fn provenance(&self, p: ProvenanceInput) -> Result<String>;

    /// Stores records of stations of `stype`. Per series only records newer than its latest
    /// value are kept (older or equal ones are counted as skipped); the latest row follows.
    async fn push_records(
        &self,
        stype: String,
        provenance: Option<String>,
        records: Vec<RecordInput>,
    ) -> Result<PushSummary>;

    /// Epoch ms of the newest latest value of a station (optionally of one type/period),
    /// with the reference's sentinels ([`plan::last_record_answer`]).
    async fn last_record(
        &self,
        stype: String,
        code: String,
        dtype: Option<String>,
        period: Option<i64>,
    ) -> Result<i64>;

    /// Inserts or replaces edges (their describing stations are upserted first).
    async fn put_edges(&self, edges: Vec<EdgeInput>) -> Result<u64>;

    /// Inserts or replaces events by uuid.
    async fn put_events(&self, events: Vec<EventInput>) -> Result<u64>;

    /// One maintenance pass over the measurement history at `now_ms` (see [`history`]):
    /// on PostgreSQL the monthly partitions of the current month and `months_ahead`
    /// after it are made and rows waiting in the DEFAULT partition get their months;
    /// on both backends history rows before the retention cutoff are removed (latest
    /// values stay). Safe to run from several processes at once.
    async fn maintain_history(
        &self,
        now_ms: i64,
        policy: HistoryPolicy,
    ) -> Result<HistoryMaintenance>;
}

/// The SQL and its time for `HUB_LOG=hub_store::sql=debug` (the backend benchmark reads
/// them to tell the database's share of a request from the API's own).
pub(crate) struct QueryLog(Option<(std::time::Instant, String, String)>);

impl QueryLog {
    pub(crate) fn start(compiled: &CompiledTs) -> QueryLog {
        QueryLog(
            tracing::enabled!(target: "hub_store::sql", tracing::Level::DEBUG).then(|| {
                (
                    std::time::Instant::now(),
                    compiled.sql.as_sql().to_string(),
                    format!("{:?}", compiled.sql.params()),
                )
            }),
        )
    }

    pub(crate) fn finish(self) {
        if let Some((started, sql, params)) = self.0 {
            tracing::debug!(target: "hub_store::sql", micros = started.elapsed().as_micros() as u64, sql = %sql, params = %params, "ts_query");
        }
    }
}
