//! The Time Series repository's vocabulary: what writers hand in (stations, data types,
//! provenance, records, edges, events), what they get back (summaries), and what a read
//! returns (rows of [`Cell`]s). Plain data; no SQL and no decisions.

use serde_json::Value;

/// One SQL value of a result row. Text is shared: rows of one series repeat their
/// station's and data type's texts, which a cursor hands out once (see `cells`).
#[derive(Debug, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(std::sync::Arc<str>),
}

impl Clone for Cell {
    fn clone(&self) -> Self {
        match self {
            Cell::Null => Cell::Null,
            Cell::Int(i) => Cell::Int(*i),
            Cell::Real(r) => Cell::Real(*r),
            Cell::Text(t) => Cell::Text(std::sync::Arc::clone(t)),
        }
    }

    /// A row filled again from its series' row keeps the texts it already shares with
    /// it: no reference count changes (`Vec::clone_from` clones element by element).
    fn clone_from(&mut self, source: &Self) {
        if let (Cell::Text(mine), Cell::Text(theirs)) = (&*self, source) {
            if std::sync::Arc::ptr_eq(mine, theirs) {
                return;
            }
        }
        *self = source.clone();
    }
}

/// What a level-1 list enumerates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeList {
    StationTypes,
    EdgeTypes,
    EventOrigins,
}

#[derive(Debug, Clone, Default)]
pub struct StationInput {
    pub code: String,
    pub name: String,
    pub origin: Option<String>,
    /// Longitude and latitude in EPSG:4326.
    pub coordinate: Option<(f64, f64)>,
    /// Parent station as (station type, code); must exist.
    pub parent: Option<(String, String)>,
    pub metadata: Option<Value>,
}

#[derive(Debug, Clone, Default)]
pub struct DataTypeInput {
    pub name: String,
    pub unit: Option<String>,
    pub description: Option<String>,
    pub rtype: Option<String>,
    pub metadata: Option<Value>,
}

#[derive(Debug, Clone, Default)]
pub struct ProvenanceInput {
    /// Used when the (lineage, collector, version) triple is new.
    pub uuid: String,
    pub lineage: String,
    pub data_collector: String,
    pub data_collector_version: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RecordValue {
    Double(f64),
    Text(String),
    /// JSON text.
    Json(String),
}

impl RecordValue {
    /// Which value table (and series) a record belongs to: 0 double, 1 text, 2 JSON.
    pub fn table(&self) -> i64 {
        match self {
            RecordValue::Double(_) => 0,
            RecordValue::Text(_) => 1,
            RecordValue::Json(_) => 2,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RecordInput {
    pub station_code: String,
    pub data_type: String,
    pub period: i64,
    /// Epoch milliseconds.
    pub timestamp: i64,
    pub value: RecordValue,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PushSummary {
    pub inserted: u64,
    /// Records not newer than the series' latest value (ignored, as the reference does).
    pub skipped_older: u64,
    pub unknown_stations: u64,
    pub unknown_types: u64,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SyncSummary {
    pub created: u64,
    pub updated: u64,
    pub deactivated: u64,
}

#[derive(Debug, Clone, Default)]
pub struct EdgeInput {
    /// The station describing the edge (its type is the edge type).
    pub station_type: String,
    pub station: StationInput,
    pub begin: Option<(String, String)>,
    pub end: Option<(String, String)>,
    pub directed: bool,
    /// Line vertices, lon/lat.
    pub line: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Default)]
pub struct EventInput {
    pub uuid: String,
    pub origin: String,
    pub category: String,
    pub series_uuid: String,
    pub name: String,
    pub description: Option<String>,
    pub metadata: Option<Value>,
    pub location_description: Option<String>,
    /// GeoJSON geometry in EPSG:4326.
    pub geometry: Option<Value>,
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub provenance_uuid: Option<String>,
}

/// The values of a record as the three value columns (double, text, JSON text).
pub(crate) fn value_columns(v: &RecordValue) -> (Option<f64>, Option<&str>, Option<&str>) {
    match v {
        RecordValue::Double(x) => (Some(*x), None, None),
        RecordValue::Text(s) => (None, Some(s.as_str()), None),
        RecordValue::Json(s) => (None, None, Some(s.as_str())),
    }
}

pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
