//! [`TimeSeriesRepo`] on SQLite: loads the rows the shared decisions of
//! `timeseries::plan` look at and writes what they return, one transaction per write
//! call on the writer connection. Must not decide anything both backends need.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hub_query::timeseries::CompiledTs;
use rusqlite::{params, OptionalExtension, Transaction};

use super::timeseries_rows::{all_rows, cells, read_narrow, unordered_rows, windowed_rows};
use super::SqliteBackend;
use crate::timeseries::history::{self, HistoryMaintenance, HistoryPolicy};
use crate::timeseries::plan::{self, SeriesKey, SyncFlags};
use crate::timeseries::{
    edge_line, geometry_bbox, now_ms, value_columns, Cell, DataTypeInput, EdgeInput, EventInput,
    ProvenanceInput, PushSummary, QueryLog, RecordInput, SharedText, StationInput, SyncSummary,
    TimeSeriesRepo, TypeList,
};
use crate::Result;

/// The SQLite Time Series repository; shares the store's pools.
pub(crate) struct SqliteTimeSeries {
    backend: Arc<SqliteBackend>,
}

impl SqliteTimeSeries {
    pub(crate) fn new(backend: Arc<SqliteBackend>) -> Self {
        SqliteTimeSeries { backend }
    }

    fn db(&self) -> &SqliteBackend {
        &self.backend
    }

    /// One transaction on the writer connection.
    async fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.db()
            .write(move |conn| {
                let tx = conn.transaction()?;
                let out = work(&tx)?;
                tx.commit()?;
                Ok(out)
            })
            .await
    }
}

fn station_id(tx: &Transaction<'_>, stype: &str, code: &str) -> Result<Option<i64>> {
    Ok(tx
        .prepare_cached("SELECT id FROM ts_station WHERE stationtype = ?1 AND stationcode = ?2")?
        .query_row(params![stype, code], |r| r.get(0))
        .optional()?)
}

fn provenance_id(tx: &Transaction<'_>, uuid: &str) -> Result<Option<i64>> {
    Ok(tx
        .prepare_cached("SELECT id FROM ts_provenance WHERE uuid = ?1")?
        .query_row([uuid], |r| r.get(0))
        .optional()?)
}

/// Upserts stations of one type (codes distinct), then their parents (which may be
/// among them) and metadata; returns code → (id, created).
fn upsert_stations(
    tx: &Transaction<'_>,
    stype: &str,
    stations: &[&StationInput],
    now: i64,
) -> Result<HashMap<String, (i64, bool)>> {
    let mut out = HashMap::with_capacity(stations.len());
    for s in stations {
        let (x, y) = s
            .coordinate
            .map(|(x, y)| (Some(x), Some(y)))
            .unwrap_or((None, None));
        let srid = s.coordinate.map(|_| 4326);
        let existing = station_id(tx, stype, &s.code)?;
        let id = match existing {
            Some(id) => {
                tx.prepare_cached(
                    "UPDATE ts_station SET name = ?2, origin = ?3, x = ?4, y = ?5, srid = ?6, parent_id = NULL, active = 1 WHERE id = ?1",
                )?
                .execute(params![id, s.name, s.origin, x, y, srid])?;
                id
            }
            None => {
                tx.prepare_cached(
                    "INSERT INTO ts_station (stationcode, stationtype, name, origin, x, y, srid, parent_id, active, available) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, 1, 1)",
                )?
                .execute(params![s.code, stype, s.name, s.origin, x, y, srid])?;
                tx.last_insert_rowid()
            }
        };
        out.insert(s.code.clone(), (id, existing.is_none()));
    }
    let mut parents = HashMap::new();
    for (ptype, pcode) in stations.iter().filter_map(|s| s.parent.as_ref()) {
        if let Some(id) = station_id(tx, ptype, pcode)? {
            parents.insert((ptype.clone(), pcode.clone()), id);
        }
    }
    let existing: HashSet<(String, String)> = parents.keys().cloned().collect();
    if let Some(e) = plan::first_missing_parent(stations, &existing) {
        return Err(e);
    }
    for s in stations {
        if let Some(parent) = s.parent.as_ref().and_then(|p| parents.get(p)) {
            tx.prepare_cached("UPDATE ts_station SET parent_id = ?2 WHERE id = ?1")?
                .execute(params![out[&s.code].0, parent])?;
        }
        if let Some(meta) = &s.metadata {
            let id = out[&s.code].0;
            let text = meta.to_string();
            let current: Option<String> = tx
                .prepare_cached("SELECT m.json FROM ts_station s JOIN ts_metadata m ON m.id = s.meta_data_id WHERE s.id = ?1")?
                .query_row([id], |r| r.get(0))
                .optional()?;
            if plan::metadata_changed(current.as_deref(), &text) {
                tx.prepare_cached(
                    "INSERT INTO ts_metadata (station_id, created_on, json) VALUES (?1, ?2, ?3)",
                )?
                .execute(params![id, now, text])?;
                let mid = tx.last_insert_rowid();
                tx.prepare_cached("UPDATE ts_station SET meta_data_id = ?2 WHERE id = ?1")?
                    .execute(params![id, mid])?;
            }
        }
    }
    Ok(out)
}

/// Series ids of `keys` (created when missing) with their latest timestamps.
fn load_series(tx: &Transaction<'_>, keys: &[SeriesKey]) -> Result<HashMap<SeriesKey, (i64, i64)>> {
    let mut out = HashMap::with_capacity(keys.len());
    for key in keys {
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
        out.insert(*key, (id, latest));
    }
    Ok(out)
}

#[async_trait::async_trait]
impl TimeSeriesRepo for SqliteTimeSeries {
    fn dialect(&self) -> hub_query::Dialect {
        hub_query::Dialect::Sqlite
    }

    async fn query(&self, compiled: CompiledTs) -> Result<Vec<Vec<Cell>>> {
        let log = QueryLog::start(&compiled);
        let backend = self.backend.clone();
        let rows = self
            .db()
            .read(move |conn| {
                let mut out = Vec::new();
                if let Some(plan) = &compiled.narrow {
                    if read_narrow(
                        conn,
                        plan,
                        backend.ts_provenances(),
                        backend.ts_wide_series(),
                        |row, _| {
                            out.push(row);
                            true
                        },
                    )? {
                        return Ok(out);
                    }
                }
                if let Some(rows) = unordered_rows(conn, compiled.unordered.as_ref())? {
                    return Ok(rows);
                }
                if let Some(rows) = windowed_rows(conn, compiled.windows.as_ref())? {
                    return Ok(rows);
                }
                all_rows(conn, &compiled.sql)
            })
            .await;
        log.finish();
        rows
    }

    fn query_batches(&self, compiled: CompiledTs) -> crate::Batches<Vec<Cell>> {
        let (mut tx, rx) = crate::batches::channel();
        let backend = self.backend.clone();
        self.db().spawn_read(move |conn| {
            let log = QueryLog::start(&compiled);
            let run = |tx: &mut crate::batches::BatchSender<Vec<Cell>>| -> Result<()> {
                let conn = conn?;
                if let Some(plan) = &compiled.narrow {
                    let emit = |row, spare: &mut Vec<Vec<Cell>>| {
                        let taken = tx.push_blocking(row).is_ok();
                        tx.take_spare_rows(spare);
                        taken
                    };
                    if read_narrow(
                        conn,
                        plan,
                        backend.ts_provenances(),
                        backend.ts_wide_series(),
                        emit,
                    )? {
                        return Ok(());
                    }
                }
                let kept = match unordered_rows(conn, compiled.unordered.as_ref())? {
                    Some(rows) => Some(rows),
                    None => windowed_rows(conn, compiled.windows.as_ref())?,
                };
                if let Some(rows) = kept {
                    for row in rows {
                        if tx.push_blocking(row).is_err() {
                            break;
                        }
                    }
                    return Ok(());
                }
                let (sql, params) = compiled.sql.into_parts();
                let mut stmt = conn.prepare_cached(&sql)?;
                let n = stmt.column_count();
                let bound = super::bind(&params);
                let mut rows = stmt.query(bound.as_slice())?;
                let mut shared = SharedText::default();
                while let Some(row) = rows.next()? {
                    if tx.push_blocking(cells(row, n, &mut shared)?).is_err() {
                        break;
                    }
                }
                Ok(())
            };
            let result = run(&mut tx);
            log.finish();
            tx.finish_blocking(result);
        });
        rx
    }

    async fn type_list(&self, what: TypeList) -> Result<Vec<String>> {
        self.db()
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(plan::type_list_sql(what))?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
            })
            .await
    }

    async fn sync_stations(
        &self,
        stype: String,
        stations: Vec<StationInput>,
        flags: SyncFlags,
    ) -> Result<SyncSummary> {
        self.write(move |tx| {
            let active = match plan::deactivation_scope(&stations, flags) {
                Some(origin) => tx
                    .prepare_cached("SELECT stationcode FROM ts_station WHERE stationtype = ?1 AND active = 1 AND origin IS ?2 ORDER BY stationcode")?
                    .query_map(params![stype, origin], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()?,
                None => Vec::new(),
            };
            let sync = plan::plan_station_sync(&active, &stations, flags);
            let done = upsert_stations(tx, &stype, &sync.upsert, now_ms())?;
            let created = done.values().filter(|d| d.1).count() as u64;
            for code in &sync.deactivate {
                tx.prepare_cached("UPDATE ts_station SET active = 0 WHERE stationtype = ?1 AND stationcode = ?2")?
                    .execute(params![stype, code])?;
            }
            Ok(SyncSummary {
                created,
                updated: done.len() as u64 - created,
                deactivated: sync.deactivate.len() as u64,
            })
        })
        .await
    }

    async fn sync_data_types(&self, types: Vec<DataTypeInput>) -> Result<SyncSummary> {
        self.write(move |tx| {
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
                    if plan::metadata_changed(current.as_deref(), &text) {
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

    async fn provenance(&self, p: ProvenanceInput) -> Result<String> {
        self.write(move |tx| {
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

    async fn push_records(
        &self,
        stype: String,
        provenance: Option<String>,
        mut records: Vec<RecordInput>,
    ) -> Result<PushSummary> {
        self.write(move |tx| {
            let now = now_ms();
            let prov = match &provenance {
                Some(u) => Some(provenance_id(tx, u)?.ok_or_else(|| plan::missing_provenance(u))?),
                None => None,
            };
            plan::sort_records(&mut records);
            let (codes, names) = plan::push_names(&records);
            let mut stations = HashMap::new();
            for code in codes {
                if let Some(id) = station_id(tx, &stype, &code)? {
                    stations.insert(code, id);
                }
            }
            let mut types = HashMap::new();
            for name in names {
                let id: Option<i64> = tx
                    .prepare_cached("SELECT id FROM ts_type WHERE cname = ?1")?
                    .query_row([&name], |x| x.get(0))
                    .optional()?;
                if let Some(id) = id {
                    types.insert(name, id);
                }
            }
            let resolved = plan::resolve_push(&records, &stations, &types);
            let series = load_series(tx, &resolved.series)?;
            let push = plan::plan_push(&records, &resolved, &series);
            // Whole chunks go through one multi-row statement (one execution instead of
            // `HISTORY_ROWS_PER_INSERT`), the rest row by row; the rows and their order
            // are the same either way.
            let mut many = tx.prepare_cached(&history_insert_sql(HISTORY_ROWS_PER_INSERT))?;
            let mut one = tx.prepare_cached(&history_insert_sql(1))?;
            for chunk in push.history.chunks(HISTORY_ROWS_PER_INSERT) {
                let (stmt, per_statement) = if chunk.len() == HISTORY_ROWS_PER_INSERT {
                    (&mut many, HISTORY_ROWS_PER_INSERT)
                } else {
                    (&mut one, 1)
                };
                for rows in chunk.chunks(per_statement) {
                    for (r, (sid, k)) in rows.iter().enumerate() {
                        let (d, s, j) = value_columns(&records[*k].value);
                        let at = r * 7;
                        stmt.raw_bind_parameter(at + 1, sid)?;
                        stmt.raw_bind_parameter(at + 2, records[*k].timestamp)?;
                        stmt.raw_bind_parameter(at + 3, now)?;
                        stmt.raw_bind_parameter(at + 4, d)?;
                        stmt.raw_bind_parameter(at + 5, s)?;
                        stmt.raw_bind_parameter(at + 6, j)?;
                        stmt.raw_bind_parameter(at + 7, prov)?;
                    }
                    stmt.raw_execute()?;
                }
            }
            let mut latest = tx.prepare_cached(
                "INSERT INTO ts_latest (series_id, timestamp, created_on, double_value, string_value, json_value, provenance_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                 ON CONFLICT (series_id) DO UPDATE SET timestamp = excluded.timestamp, double_value = excluded.double_value, \
                 string_value = excluded.string_value, json_value = excluded.json_value, provenance_id = excluded.provenance_id",
            )?;
            for (sid, k) in &push.latest {
                let (d, s, j) = value_columns(&records[*k].value);
                latest.execute(params![sid, records[*k].timestamp, now, d, s, j, prov])?;
            }
            Ok(push.summary)
        })
        .await
    }

    async fn last_record(
        &self,
        stype: String,
        code: String,
        dtype: Option<String>,
        period: Option<i64>,
    ) -> Result<i64> {
        self.db()
            .read(move |conn| {
                let sid: Option<i64> = conn
                    .prepare_cached("SELECT id FROM ts_station WHERE stationtype = ?1 AND stationcode = ?2")?
                    .query_row(params![stype, code], |r| r.get(0))
                    .optional()?;
                let newest: Option<i64> = match sid {
                    Some(sid) => conn
                        .prepare_cached(
                            "SELECT MAX(me.timestamp) FROM ts_latest me JOIN ts_series ts ON ts.id = me.series_id JOIN ts_type t ON t.id = ts.type_id \
                             WHERE ts.station_id = ?1 AND (?2 IS NULL OR t.cname = ?2) AND (?3 IS NULL OR ts.period = ?3)",
                        )?
                        .query_row(params![sid, dtype, period], |r| r.get(0))?,
                    None => None,
                };
                let asked = dtype.is_some() || period.is_some();
                Ok(plan::last_record_answer(sid.is_some(), newest, asked))
            })
            .await
    }

    async fn put_edges(&self, edges: Vec<EdgeInput>) -> Result<u64> {
        self.write(move |tx| {
            let now = now_ms();
            for e in &edges {
                let done = upsert_stations(tx, &e.station_type, &[&e.station], now)?;
                let id = done[&e.station.code].0;
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

    async fn put_events(&self, events: Vec<EventInput>) -> Result<u64> {
        self.write(move |tx| {
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
                let prov = match &e.provenance_uuid {
                    Some(u) => provenance_id(tx, u)?,
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

    /// SQLite keeps one table: only the retention applies, in chunks so pushes get the
    /// writer between them.
    async fn maintain_history(
        &self,
        now_ms: i64,
        policy: HistoryPolicy,
    ) -> Result<HistoryMaintenance> {
        let mut done = HistoryMaintenance::default();
        let Some(cutoff) = history::retention_cutoff_ms(now_ms, policy) else {
            return Ok(done);
        };
        loop {
            let deleted = self
                .write(move |tx| {
                    Ok(tx
                        .prepare_cached(
                            "DELETE FROM ts_history WHERE (series_id, timestamp) IN \
                             (SELECT series_id, timestamp FROM ts_history WHERE timestamp < ?1 LIMIT ?2)",
                        )?
                        .execute(params![cutoff, RETENTION_CHUNK])? as u64)
                })
                .await?;
            done.deleted_rows += deleted;
            if deleted < RETENTION_CHUNK {
                return Ok(done);
            }
        }
    }
}

/// History rows per multi-row INSERT of a push (7 parameters each, far below SQLite's
/// limit of 32,766).
const HISTORY_ROWS_PER_INSERT: usize = 64;

/// `INSERT OR IGNORE INTO ts_history … VALUES (…), …` for `rows` rows, parameters in row
/// order.
fn history_insert_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT OR IGNORE INTO ts_history (series_id, timestamp, created_on, double_value, string_value, json_value, provenance_id) VALUES ",
    );
    for r in 0..rows {
        if r > 0 {
            sql.push_str(", ");
        }
        let at = r * 7;
        sql.push_str(&format!(
            "(?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{})",
            at + 1,
            at + 2,
            at + 3,
            at + 4,
            at + 5,
            at + 6,
            at + 7
        ));
    }
    sql
}

/// History rows the retention deletes per write transaction.
const RETENTION_CHUNK: u64 = 10_000;
