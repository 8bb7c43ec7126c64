//! Writer operations of the Time Series API (what data collectors call): sync stations
//! and data types, provenance, push records, date of the last record; plus edges and
//! events for demo data and imports. Every call is one transaction.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;

use crate::{Backend, Result, Store, StoreError};

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
    fn table(&self) -> i64 {
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

pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn station_id(tx: &Transaction<'_>, stype: &str, code: &str) -> Result<Option<i64>> {
    Ok(tx
        .prepare_cached("SELECT id FROM ts_station WHERE stationtype = ?1 AND stationcode = ?2")?
        .query_row(params![stype, code], |r| r.get(0))
        .optional()?)
}

fn upsert_station(
    tx: &Transaction<'_>,
    stype: &str,
    s: &StationInput,
    now: i64,
) -> Result<(i64, bool)> {
    let parent = match &s.parent {
        Some((pt, pc)) => Some(station_id(tx, pt, pc)?.ok_or_else(|| {
            StoreError::Invalid(format!(
                "station '{}': parent station '{pc}' of type '{pt}' does not exist",
                s.code
            ))
        })?),
        None => None,
    };
    let (x, y) = s
        .coordinate
        .map(|(x, y)| (Some(x), Some(y)))
        .unwrap_or((None, None));
    let srid = s.coordinate.map(|_| 4326);
    let existing = station_id(tx, stype, &s.code)?;
    let id = match existing {
        Some(id) => {
            tx.prepare_cached(
                "UPDATE ts_station SET name = ?2, origin = ?3, x = ?4, y = ?5, srid = ?6, parent_id = ?7, active = 1 WHERE id = ?1",
            )?
            .execute(params![id, s.name, s.origin, x, y, srid, parent])?;
            id
        }
        None => {
            tx.prepare_cached(
                "INSERT INTO ts_station (stationcode, stationtype, name, origin, x, y, srid, parent_id, active, available) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, 1)",
            )?
            .execute(params![s.code, stype, s.name, s.origin, x, y, srid, parent])?;
            tx.last_insert_rowid()
        }
    };
    if let Some(meta) = &s.metadata {
        let text = meta.to_string();
        let current: Option<String> = tx
            .prepare_cached("SELECT m.json FROM ts_station s JOIN ts_metadata m ON m.id = s.meta_data_id WHERE s.id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        if current.as_deref() != Some(text.as_str()) {
            tx.prepare_cached(
                "INSERT INTO ts_metadata (station_id, created_on, json) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![id, now, text])?;
            let mid = tx.last_insert_rowid();
            tx.prepare_cached("UPDATE ts_station SET meta_data_id = ?2 WHERE id = ?1")?
                .execute(params![id, mid])?;
        }
    }
    Ok((id, existing.is_none()))
}

impl Store {
    /// One SQLite transaction (the PostgreSQL backend has its own methods, called first).
    async fn ts_write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        match &*self.backend {
            Backend::Postgres(_) => Err(StoreError::Task(
                "a SQLite transaction was asked of the PostgreSQL backend".into(),
            )),
            Backend::Sqlite(b) => {
                b.write(move |conn| {
                    let tx = conn.transaction()?;
                    let out = work(&tx)?;
                    tx.commit()?;
                    Ok(out)
                })
                .await
            }
        }
    }

    /// Upserts stations of one type by code; with `sync_state`, other active stations of
    /// this type and of the first station's origin become inactive (unless `only_activation`).
    pub async fn ts_sync_stations(
        &self,
        stype: String,
        stations: Vec<StationInput>,
        sync_state: bool,
        only_activation: bool,
    ) -> Result<SyncSummary> {
        if let Backend::Postgres(b) = &*self.backend {
            return b
                .ts_sync_stations(stype, stations, sync_state, only_activation)
                .await;
        }
        self.ts_write(move |tx| {
            let now = now_ms();
            let mut sum = SyncSummary::default();
            let mut seen = Vec::new();
            for s in &stations {
                if seen.contains(&s.code) {
                    continue;
                }
                seen.push(s.code.clone());
                let (_, created) = upsert_station(tx, &stype, s, now)?;
                if created {
                    sum.created += 1
                } else {
                    sum.updated += 1
                }
            }
            if sync_state && !only_activation {
                if let Some(first) = stations.first() {
                    let mut stmt =
                        tx.prepare_cached("SELECT stationcode FROM ts_station WHERE stationtype = ?1 AND active = 1 AND origin IS ?2")?;
                    let codes = stmt
                        .query_map(params![stype, first.origin], |r| r.get::<_, String>(0))?
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    for c in codes.iter().filter(|c| !seen.contains(c)) {
                        tx.prepare_cached("UPDATE ts_station SET active = 0 WHERE stationtype = ?1 AND stationcode = ?2")?
                            .execute(params![stype, c])?;
                        sum.deactivated += 1;
                    }
                }
            }
            Ok(sum)
        })
        .await
    }

    /// Upserts data types by name; a new type-metadata row when the metadata changed.
    pub async fn ts_sync_data_types(&self, types: Vec<DataTypeInput>) -> Result<SyncSummary> {
        if let Backend::Postgres(b) = &*self.backend {
            return b.ts_sync_data_types(types).await;
        }
        self.ts_write(move |tx| {
            let now = now_ms();
            let mut sum = SyncSummary::default();
            for t in &types {
                let id: Option<i64> = tx
                    .prepare_cached("SELECT id FROM ts_type WHERE cname = ?1")?
                    .query_row([&t.name], |r| r.get(0))
                    .optional()?;
                let id = match id {
                    Some(id) => {
                        tx.prepare_cached("UPDATE ts_type SET cunit = ?2, description = ?3, rtype = ?4 WHERE id = ?1")?
                            .execute(params![id, t.unit, t.description, t.rtype])?;
                        sum.updated += 1;
                        id
                    }
                    None => {
                        tx.prepare_cached(
                            "INSERT INTO ts_type (cname, cunit, description, rtype, created_on) VALUES (?1, ?2, ?3, ?4, ?5)",
                        )?
                        .execute(params![t.name, t.unit, t.description, t.rtype, now])?;
                        sum.created += 1;
                        tx.last_insert_rowid()
                    }
                };
                if let Some(meta) = &t.metadata {
                    let text = meta.to_string();
                    let current: Option<String> = tx
                        .prepare_cached("SELECT tm.json FROM ts_type t JOIN ts_type_metadata tm ON tm.id = t.meta_data_id WHERE t.id = ?1")?
                        .query_row([id], |r| r.get(0))
                        .optional()?;
                    if current.as_deref() != Some(text.as_str()) {
                        tx.prepare_cached("INSERT INTO ts_type_metadata (type_id, created_on, json) VALUES (?1, ?2, ?3)")?
                            .execute(params![id, now, text])?;
                        let mid = tx.last_insert_rowid();
                        tx.prepare_cached("UPDATE ts_type SET meta_data_id = ?2 WHERE id = ?1")?
                            .execute(params![id, mid])?;
                    }
                }
            }
            Ok(sum)
        })
        .await
    }

    /// Returns the uuid of the provenance with this (lineage, collector, version), creating it.
    pub async fn ts_provenance(&self, p: ProvenanceInput) -> Result<String> {
        if let Backend::Postgres(b) = &*self.backend {
            return b.ts_provenance(p).await;
        }
        self.ts_write(move |tx| {
            let found: Option<String> = tx
                .prepare_cached(
                    "SELECT uuid FROM ts_provenance WHERE lineage = ?1 AND data_collector = ?2 AND data_collector_version = ?3",
                )?
                .query_row(params![p.lineage, p.data_collector, p.data_collector_version], |r| r.get(0))
                .optional()?;
            if let Some(u) = found {
                return Ok(u);
            }
            tx.prepare_cached("INSERT INTO ts_provenance (uuid, lineage, data_collector, data_collector_version) VALUES (?1, ?2, ?3, ?4)")?
                .execute(params![p.uuid, p.lineage, p.data_collector, p.data_collector_version])?;
            Ok(p.uuid)
        })
        .await
    }

    /// Stores records of stations of `stype`. Per series only records newer than its latest
    /// value are kept (older or equal ones are counted as skipped); the latest row follows.
    pub async fn ts_push_records(
        &self,
        stype: String,
        provenance: Option<String>,
        mut records: Vec<RecordInput>,
    ) -> Result<PushSummary> {
        if let Backend::Postgres(b) = &*self.backend {
            return b.ts_push_records(stype, provenance, records).await;
        }
        self.ts_write(move |tx| {
            let now = now_ms();
            let prov: Option<i64> = match &provenance {
                Some(u) => Some(
                    tx.prepare_cached("SELECT id FROM ts_provenance WHERE uuid = ?1")?
                        .query_row([u], |r| r.get(0))
                        .optional()?
                        .ok_or_else(|| StoreError::Invalid(format!("provenance '{u}' does not exist; create it with POST /json/provenance")))?,
                ),
                None => None,
            };
            records.sort_by(|a, b| (&a.station_code, &a.data_type, a.period, a.timestamp).cmp(&(&b.station_code, &b.data_type, b.period, b.timestamp)));
            let mut sum = PushSummary::default();
            let mut stations: HashMap<String, Option<i64>> = HashMap::new();
            let mut types: HashMap<String, Option<i64>> = HashMap::new();
            let mut series: HashMap<(i64, i64, i64, i64), (i64, i64)> = HashMap::new(); // -> (id, latest ts)
            let mut latest_new: HashMap<i64, usize> = HashMap::new();
            let mut ins = tx.prepare_cached(
                "INSERT OR IGNORE INTO ts_history (series_id, timestamp, created_on, double_value, string_value, json_value, provenance_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for (k, r) in records.iter().enumerate() {
                let sid = match stations.get(&r.station_code) {
                    Some(v) => *v,
                    None => {
                        let v = station_id(tx, &stype, &r.station_code)?;
                        stations.insert(r.station_code.clone(), v);
                        v
                    }
                };
                let Some(sid) = sid else {
                    sum.unknown_stations += 1;
                    continue;
                };
                let tid = match types.get(&r.data_type) {
                    Some(v) => *v,
                    None => {
                        let v = tx.prepare_cached("SELECT id FROM ts_type WHERE cname = ?1")?.query_row([&r.data_type], |x| x.get(0)).optional()?;
                        types.insert(r.data_type.clone(), v);
                        v
                    }
                };
                let Some(tid) = tid else {
                    sum.unknown_types += 1;
                    continue;
                };
                let key = (sid, tid, r.period, r.value.table());
                let entry = match series.get_mut(&key) {
                    Some(e) => e,
                    None => {
                        let found: Option<i64> = tx
                            .prepare_cached("SELECT id FROM ts_series WHERE station_id = ?1 AND type_id = ?2 AND period = ?3 AND value_table = ?4")?
                            .query_row(params![key.0, key.1, key.2, key.3], |x| x.get(0))
                            .optional()?;
                        let id = match found {
                            Some(id) => id,
                            None => {
                                tx.prepare_cached("INSERT INTO ts_series (station_id, type_id, period, value_table) VALUES (?1, ?2, ?3, ?4)")?
                                    .execute(params![key.0, key.1, key.2, key.3])?;
                                tx.last_insert_rowid()
                            }
                        };
                        let latest: i64 = tx
                            .prepare_cached("SELECT timestamp FROM ts_latest WHERE series_id = ?1")?
                            .query_row([id], |x| x.get(0))
                            .optional()?
                            .unwrap_or(i64::MIN);
                        series.entry(key).or_insert((id, latest))
                    }
                };
                if r.timestamp <= entry.1 {
                    sum.skipped_older += 1;
                    continue;
                }
                entry.1 = r.timestamp;
                let (d, s, j) = match &r.value {
                    RecordValue::Double(v) => (Some(*v), None, None),
                    RecordValue::Text(v) => (None, Some(v.as_str()), None),
                    RecordValue::Json(v) => (None, None, Some(v.as_str())),
                };
                ins.execute(params![entry.0, r.timestamp, now, d, s, j, prov])?;
                latest_new.insert(entry.0, k);
                sum.inserted += 1;
            }
            let mut up = tx.prepare_cached(
                "INSERT INTO ts_latest (series_id, timestamp, created_on, double_value, string_value, json_value, provenance_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                 ON CONFLICT (series_id) DO UPDATE SET timestamp = excluded.timestamp, double_value = excluded.double_value, \
                 string_value = excluded.string_value, json_value = excluded.json_value, provenance_id = excluded.provenance_id",
            )?;
            for (sid, k) in latest_new {
                let r = &records[k];
                let (d, s, j) = match &r.value {
                    RecordValue::Double(v) => (Some(*v), None, None),
                    RecordValue::Text(v) => (None, Some(v.as_str()), None),
                    RecordValue::Json(v) => (None, None, Some(v.as_str())),
                };
                up.execute(params![sid, r.timestamp, now, d, s, j, prov])?;
            }
            Ok(sum)
        })
        .await
    }

    /// Epoch ms of the newest latest value of a station (optionally of one type/period);
    /// the reference's sentinels: 0 when the station is unknown or nothing was asked
    /// beyond it and it has no data, -1 when the station exists but not that series.
    pub async fn ts_last_record(
        &self,
        stype: String,
        code: String,
        dtype: Option<String>,
        period: Option<i64>,
    ) -> Result<i64> {
        match &*self.backend {
            Backend::Postgres(b) => b.ts_last_record(stype, code, dtype, period).await,
            Backend::Sqlite(b) => {
                b.read(move |conn| {
                    let sid: Option<i64> = conn
                        .prepare_cached("SELECT id FROM ts_station WHERE stationtype = ?1 AND stationcode = ?2")?
                        .query_row(params![stype, code], |r| r.get(0))
                        .optional()?;
                    let Some(sid) = sid else { return Ok(0) };
                    let max: Option<i64> = conn
                        .prepare_cached(
                            "SELECT MAX(me.timestamp) FROM ts_latest me JOIN ts_series ts ON ts.id = me.series_id JOIN ts_type t ON t.id = ts.type_id \
                             WHERE ts.station_id = ?1 AND (?2 IS NULL OR t.cname = ?2) AND (?3 IS NULL OR ts.period = ?3)",
                        )?
                        .query_row(params![sid, dtype, period], |r| r.get(0))?;
                    Ok(match max {
                        Some(m) => m,
                        None if dtype.is_none() && period.is_none() => 0,
                        None => -1,
                    })
                })
                .await
            }
        }
    }

    /// Inserts or replaces edges (their describing stations are upserted first).
    pub async fn ts_put_edges(&self, edges: Vec<EdgeInput>) -> Result<u64> {
        if let Backend::Postgres(b) = &*self.backend {
            return b.ts_put_edges(edges).await;
        }
        self.ts_write(move |tx| {
            let now = now_ms();
            for e in &edges {
                let (id, _) = upsert_station(tx, &e.station_type, &e.station, now)?;
                let find = |p: &Option<(String, String)>| -> Result<Option<i64>> {
                    match p {
                        Some((t, c)) => station_id(tx, t, c),
                        None => Ok(None),
                    }
                };
                let (o, d) = (find(&e.begin)?, find(&e.end)?);
                let (geom, (minx, miny, maxx, maxy)) = edge_line(e);
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO ts_edge (edge_data_id, origin_id, destination_id, directed, linegeometry, minx, miny, maxx, maxy) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?
                .execute(params![id, o, d, e.directed, geom, minx, miny, maxx, maxy])?;
            }
            Ok(edges.len() as u64)
        })
        .await
    }

    /// Inserts or replaces events by uuid.
    pub async fn ts_put_events(&self, events: Vec<EventInput>) -> Result<u64> {
        if let Backend::Postgres(b) = &*self.backend {
            return b.ts_put_events(events).await;
        }
        self.ts_write(move |tx| {
            let now = now_ms();
            for e in &events {
                let loc = match (&e.geometry, &e.location_description) {
                    (None, None) => None,
                    (g, d) => {
                        let bbox = g.as_ref().map(geometry_bbox);
                        tx.prepare_cached("INSERT INTO ts_location (description, geometry, minx, miny, maxx, maxy) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
                            .execute(params![d, g.as_ref().map(|g| g.to_string()), bbox.map(|b| b.0), bbox.map(|b| b.1), bbox.map(|b| b.2), bbox.map(|b| b.3)])?;
                        Some(tx.last_insert_rowid())
                    }
                };
                let meta = match &e.metadata {
                    Some(m) => {
                        tx.prepare_cached("INSERT INTO ts_metadata (station_id, created_on, json) VALUES (NULL, ?1, ?2)")?.execute(params![now, m.to_string()])?;
                        Some(tx.last_insert_rowid())
                    }
                    None => None,
                };
                let prov: Option<i64> = match &e.provenance_uuid {
                    Some(u) => tx.prepare_cached("SELECT id FROM ts_provenance WHERE uuid = ?1")?.query_row([u], |r| r.get(0)).optional()?,
                    None => None,
                };
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO ts_event (uuid, origin, category, event_series_uuid, name, description, created_on, event_start, event_end, location_id, meta_data_id, provenance_id) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )?
                .execute(params![e.uuid, e.origin, e.category, e.series_uuid, e.name, e.description, now, e.start, e.end, loc, meta, prov])?;
            }
            Ok(events.len() as u64)
        })
        .await
    }
}

/// `(min x, min y, max x, max y)` of points; `(MAX, MAX, MIN, MIN)` when there are none.
fn points_bbox(points: impl IntoIterator<Item = (f64, f64)>) -> (f64, f64, f64, f64) {
    points.into_iter().fold(
        (f64::MAX, f64::MAX, f64::MIN, f64::MIN),
        |(a, b, c, d), (x, y)| (a.min(x), b.min(y), c.max(x), d.max(y)),
    )
}

/// The bounding box of a GeoJSON geometry's coordinates, at any nesting depth (both
/// backends store it beside an event location for the bounding-box filters).
pub(crate) fn geometry_bbox(g: &Value) -> (f64, f64, f64, f64) {
    fn collect(c: &Value, out: &mut Vec<(f64, f64)>) {
        if let Some(a) = c.as_array() {
            if let (Some(x), Some(y)) = (
                a.first().and_then(Value::as_f64),
                a.get(1).and_then(Value::as_f64),
            ) {
                out.push((x, y));
            } else {
                a.iter().for_each(|v| collect(v, out));
            }
        }
    }
    let mut all = Vec::new();
    collect(g.get("coordinates").unwrap_or(&Value::Null), &mut all);
    points_bbox(all)
}

/// An edge's line as GeoJSON text and its bounding box.
pub(crate) fn edge_line(e: &EdgeInput) -> (String, (f64, f64, f64, f64)) {
    let coords: Vec<[f64; 2]> = e.line.iter().map(|(x, y)| [*x, *y]).collect();
    let geom = serde_json::json!({"type": "LineString", "coordinates": coords}).to_string();
    (geom, points_bbox(e.line.iter().copied()))
}
