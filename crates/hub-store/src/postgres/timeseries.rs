//! Time series on PostgreSQL: the read queries `hub_query::timeseries` compiles for the
//! PostgreSQL dialect, the level-1 lists, and the writer's operations. Every write call
//! is one transaction; bulk parts are array statements (`unnest`) and upserts
//! (`ON CONFLICT`), so two processes writing the same stations or series at once neither
//! fail nor duplicate rows. Rows are locked in a fixed order (codes, series ids) so
//! concurrent writers do not deadlock.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hub_query::timeseries::CompiledTs;

mod catalog_answers;
mod history_copy;
mod narrow;
pub(crate) mod partitions;
mod push;
mod rows;
mod windows;

use super::{PgBackend, Queries, Tx};
use crate::timeseries::history::{HistoryMaintenance, HistoryPolicy};
use crate::timeseries::plan::{self, SyncFlags};
use crate::timeseries::{
    edge_line, geometry_bbox, now_ms, value_columns, Cell, DataTypeInput, EdgeInput, EventInput,
    ProvenanceInput, PushSummary, QueryLog, RecordInput, SharedText, StationInput, SyncSummary,
    TimeSeriesRepo, TypeList,
};
use crate::{Result, StoreError};
pub(super) use narrow::NarrowCaches;
use narrow::{narrow_rows, narrow_stream, Sink};
use rows::{query_error, row_cells, row_stream, unordered_rows};
use windows::{all_rows, windowed_rows};

/// The PostgreSQL Time Series repository; shares the store's pools.
pub(crate) struct PgTimeSeries {
    backend: Arc<PgBackend>,
}

impl PgTimeSeries {
    pub(crate) fn new(backend: Arc<PgBackend>) -> Self {
        PgTimeSeries { backend }
    }

    fn db(&self) -> &PgBackend {
        &self.backend
    }
}

/// Rows per array statement of a record push.
const RECORD_CHUNK: usize = 50_000;

async fn station_id(tx: &Tx<'_>, stype: &str, code: &str) -> Result<Option<i64>> {
    let stmt = tx
        .prepare_cached("SELECT id FROM ts_station WHERE stationtype = $1 AND stationcode = $2")
        .await?;
    Ok(tx
        .query_opt(&stmt, &[&stype, &code])
        .await?
        .map(|r| r.get(0)))
}

/// Upserts stations of one type (codes must be distinct) with their parents and
/// metadata; returns code → (id, created).
async fn upsert_stations(
    tx: &Tx<'_>,
    stype: &str,
    stations: &[&StationInput],
    now: i64,
) -> Result<HashMap<String, (i64, bool)>> {
    let mut sorted: Vec<&StationInput> = stations.to_vec();
    sorted.sort_by(|a, b| a.code.cmp(&b.code));
    let codes: Vec<&str> = sorted.iter().map(|s| s.code.as_str()).collect();
    let names: Vec<&str> = sorted.iter().map(|s| s.name.as_str()).collect();
    let origins: Vec<Option<&str>> = sorted.iter().map(|s| s.origin.as_deref()).collect();
    let xs: Vec<Option<f64>> = sorted.iter().map(|s| s.coordinate.map(|c| c.0)).collect();
    let ys: Vec<Option<f64>> = sorted.iter().map(|s| s.coordinate.map(|c| c.1)).collect();
    let srids: Vec<Option<i32>> = sorted.iter().map(|s| s.coordinate.map(|_| 4326)).collect();
    let ptypes: Vec<Option<&str>> = sorted
        .iter()
        .map(|s| s.parent.as_ref().map(|p| p.0.as_str()))
        .collect();
    let pcodes: Vec<Option<&str>> = sorted
        .iter()
        .map(|s| s.parent.as_ref().map(|p| p.1.as_str()))
        .collect();
    let stmt = tx
        .prepare_cached(
            "INSERT INTO ts_station (stationcode, stationtype, name, origin, x, y, srid, parent_id, active, available) \
             SELECT u.code, $1, u.name, u.origin, u.x, u.y, u.srid, \
                    (SELECT p.id FROM ts_station p WHERE p.stationtype = u.ptype AND p.stationcode = u.pcode), true, true \
             FROM unnest($2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[], $7::int4[], $8::text[], $9::text[]) \
                  WITH ORDINALITY AS u(code, name, origin, x, y, srid, ptype, pcode, ord) ORDER BY u.ord \
             ON CONFLICT (stationtype, stationcode) DO UPDATE SET name = excluded.name, origin = excluded.origin, x = excluded.x, \
                  y = excluded.y, srid = excluded.srid, parent_id = excluded.parent_id, active = true \
             RETURNING id, stationcode, (xmax = 0)",
        )
        .await?;
    let rows = tx
        .query(
            &stmt,
            &[
                &stype, &codes, &names, &origins, &xs, &ys, &srids, &ptypes, &pcodes,
            ],
        )
        .await?;
    let mut out = HashMap::with_capacity(rows.len());
    for r in &rows {
        out.insert(
            r.get::<_, String>(1),
            (r.get::<_, i64>(0), r.get::<_, bool>(2)),
        );
    }
    // Parents: those created by this very call were invisible to the insert above.
    let with_parent: Vec<&StationInput> = stations
        .iter()
        .copied()
        .filter(|s| s.parent.is_some())
        .collect();
    if !with_parent.is_empty() {
        let ids: Vec<i64> = with_parent
            .iter()
            .map(|s| out.get(&s.code).map(|x| x.0).unwrap_or(0))
            .collect();
        let pt: Vec<&str> = with_parent
            .iter()
            .map(|s| s.parent.as_ref().map(|p| p.0.as_str()).unwrap_or(""))
            .collect();
        let pc: Vec<&str> = with_parent
            .iter()
            .map(|s| s.parent.as_ref().map(|p| p.1.as_str()).unwrap_or(""))
            .collect();
        let existing: HashSet<(String, String)> = tx
            .query(
                "SELECT p.stationtype, p.stationcode FROM ts_station p JOIN unnest($1::text[], $2::text[]) AS u(pt, pc) \
                 ON p.stationtype = u.pt AND p.stationcode = u.pc",
                &[&pt, &pc],
            )
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        if let Some(e) = plan::first_missing_parent(&with_parent, &existing) {
            return Err(e);
        }
        tx.execute(
            "UPDATE ts_station s SET parent_id = p.id FROM unnest($1::int8[], $2::text[], $3::text[]) AS u(id, pt, pc) \
             JOIN ts_station p ON p.stationtype = u.pt AND p.stationcode = u.pc \
             WHERE s.id = u.id AND s.parent_id IS DISTINCT FROM p.id",
            &[&ids, &pt, &pc],
        )
        .await?;
    }
    // Metadata: a new history row when the document changed.
    let with_meta: Vec<(i64, String)> = sorted
        .iter()
        .filter_map(|s| Some((out.get(&s.code)?.0, s.metadata.as_ref()?.to_string())))
        .collect();
    if !with_meta.is_empty() {
        let ids: Vec<i64> = with_meta.iter().map(|m| m.0).collect();
        let docs: Vec<&str> = with_meta.iter().map(|m| m.1.as_str()).collect();
        let stmt = tx
            .prepare_cached(
                "WITH input AS (SELECT * FROM unnest($1::int8[], $2::text[]) WITH ORDINALITY AS u(station_id, json, ord)), \
                 changed AS (SELECT i.station_id, i.json, i.ord FROM input i JOIN ts_station s ON s.id = i.station_id \
                             LEFT JOIN ts_metadata m ON m.id = s.meta_data_id WHERE m.json IS DISTINCT FROM i.json), \
                 ins AS (INSERT INTO ts_metadata (station_id, created_on, json) SELECT station_id, $3, json FROM changed ORDER BY ord \
                         RETURNING id, station_id) \
                 UPDATE ts_station s SET meta_data_id = ins.id FROM ins WHERE s.id = ins.station_id",
            )
            .await?;
        tx.execute(&stmt, &[&ids, &docs, &now]).await?;
    }
    Ok(out)
}

#[async_trait::async_trait]
impl TimeSeriesRepo for PgTimeSeries {
    fn dialect(&self) -> hub_query::Dialect {
        hub_query::Dialect::Postgres
    }

    async fn query(&self, compiled: CompiledTs) -> Result<Vec<Vec<Cell>>> {
        let log = QueryLog::start(&compiled);
        let backend = self.backend.clone();
        let rows = self
            .db()
            .read(move |conn| async move {
                let mut compiled = compiled;
                let conn = match narrow_rows(conn, compiled.narrow.take(), &backend.narrow_caches())
                    .await?
                {
                    Ok(rows) => return Ok(rows),
                    Err(conn) => conn,
                };
                if let Some(rows) =
                    unordered_rows(&conn, compiled.unordered.take(), &backend.ts_catalog).await?
                {
                    return Ok(rows);
                }
                if let Some(rows) = windowed_rows(&conn, compiled.windows.as_ref()).await? {
                    return Ok(rows);
                }
                if compiled.catalog_only {
                    let mut rows = Vec::new();
                    let sink = &mut Sink::Rows(&mut rows);
                    catalog_answers::read(&conn, &compiled.sql, &backend.ts_selections, sink)
                        .await?;
                    return Ok(rows);
                }
                all_rows(&conn, &compiled.sql).await
            })
            .await;
        log.finish();
        rows
    }

    fn query_batches(&self, compiled: CompiledTs) -> crate::Batches<Vec<Cell>> {
        let (tx, rx) = crate::batches::channel();
        let backend = self.backend.clone();
        self.db().spawn_read(move |conn| async move {
            let mut compiled = compiled;
            let log = QueryLog::start(&compiled);
            let (conn, mut tx) = match conn {
                Ok(conn) => {
                    match narrow_stream(conn, compiled.narrow.take(), tx, &backend.narrow_caches())
                        .await
                    {
                        Some(compiled_answers) => compiled_answers,
                        None => {
                            log.finish();
                            return;
                        }
                    }
                }
                Err(e) => {
                    log.finish();
                    tx.finish(Err(e)).await;
                    return;
                }
            };
            let unordered = compiled.unordered.take();
            let result = async {
                let kept = match unordered_rows(&conn, unordered, &backend.ts_catalog).await? {
                    Some(rows) => Some(rows),
                    None => windowed_rows(&conn, compiled.windows.as_ref()).await?,
                };
                if let Some(rows) = kept {
                    for row in rows {
                        if tx.push(row).await.is_err() {
                            break;
                        }
                    }
                    return Ok(());
                }
                if compiled.catalog_only {
                    let sink = &mut Sink::Stream(&mut tx);
                    return catalog_answers::read(
                        &conn,
                        &compiled.sql,
                        &backend.ts_selections,
                        sink,
                    )
                    .await;
                }
                let rows = row_stream(&conn, compiled.sql).await?;
                futures::pin_mut!(rows);
                let mut shared = SharedText::default();
                while let Some(row) = futures::StreamExt::next(&mut rows).await {
                    let row = row.map_err(query_error)?;
                    let cells = row_cells(&row, &mut shared)?;
                    if tx.push(cells).await.is_err() {
                        break;
                    }
                }
                Ok(())
            }
            .await;
            log.finish();
            tx.finish(result).await;
        });
        rx
    }

    async fn type_list(&self, what: TypeList) -> Result<Vec<String>> {
        self.db()
            .read(move |conn| async move {
                let stmt = conn.prepare_cached(plan::type_list_sql(what)).await?;
                Ok(conn
                    .query(&stmt, &[])
                    .await?
                    .iter()
                    .map(|r| r.get::<_, String>(0))
                    .collect())
            })
            .await
    }

    async fn sync_stations(
        &self,
        stype: String,
        stations: Vec<StationInput>,
        flags: SyncFlags,
    ) -> Result<SyncSummary> {
        self.db().write(move |mut conn| async move {
            let tx = conn.transaction().await?;
            // Locks the active stations in scope (in code order) so concurrent syncs queue.
            let active: Vec<String> = match plan::deactivation_scope(&stations, flags) {
                Some(origin) => tx
                    .query(
                        "SELECT stationcode FROM ts_station WHERE stationtype = $1 AND active \
                         AND origin IS NOT DISTINCT FROM $2 ORDER BY stationcode FOR UPDATE",
                        &[&stype, &origin],
                    )
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect(),
                None => Vec::new(),
            };
            let sync = plan::plan_station_sync(&active, &stations, flags);
            let mut sum = SyncSummary::default();
            if !sync.upsert.is_empty() {
                let done = upsert_stations(&tx, &stype, &sync.upsert, now_ms()).await?;
                sum.created = done.values().filter(|d| d.1).count() as u64;
                sum.updated = done.len() as u64 - sum.created;
            }
            if !sync.deactivate.is_empty() {
                sum.deactivated = tx
                    .execute(
                        "UPDATE ts_station SET active = false WHERE stationtype = $1 AND stationcode = ANY($2)",
                        &[&stype, &sync.deactivate],
                    )
                    .await?;
            }
            tx.commit().await?;
            Ok(sum)
        })
        .await
    }

    async fn sync_data_types(&self, types: Vec<DataTypeInput>) -> Result<SyncSummary> {
        self.db().write(move |mut conn| async move {
            let tx = conn.transaction().await?;
            let now = now_ms();
            let mut sum = SyncSummary::default();
            let upsert = tx
                .prepare_cached(
                    "INSERT INTO ts_type (cname, cunit, description, rtype, created_on) VALUES ($1, $2, $3, $4, $5) \
                     ON CONFLICT (cname) DO UPDATE SET cunit = excluded.cunit, description = excluded.description, rtype = excluded.rtype \
                     RETURNING id, (xmax = 0)",
                )
                .await?;
            for t in &types {
                let row = tx.query_one(&upsert, &[&t.name, &t.unit, &t.description, &t.rtype, &now]).await?;
                let (id, created): (i64, bool) = (row.get(0), row.get(1));
                if created {
                    sum.created += 1
                } else {
                    sum.updated += 1
                }
                if let Some(meta) = &t.metadata {
                    let text = meta.to_string();
                    let current: Option<String> = tx
                        .query_one(
                            "SELECT tm.json FROM ts_type t LEFT JOIN ts_type_metadata tm ON tm.id = t.meta_data_id WHERE t.id = $1",
                            &[&id],
                        )
                        .await?
                        .get(0);
                    if plan::metadata_changed(current.as_deref(), &text) {
                        let mid: i64 = tx
                            .query_one(
                                "INSERT INTO ts_type_metadata (type_id, created_on, json) VALUES ($1, $2, $3) RETURNING id",
                                &[&id, &now, &text],
                            )
                            .await?
                            .get(0);
                        tx.execute("UPDATE ts_type SET meta_data_id = $2 WHERE id = $1", &[&id, &mid]).await?;
                    }
                }
            }
            tx.commit().await?;
            Ok(sum)
        })
        .await
    }

    async fn provenance(&self, p: ProvenanceInput) -> Result<String> {
        self.db().write(move |mut conn| async move {
            let tx = conn.transaction().await?;
            tx.execute(
                "INSERT INTO ts_provenance (uuid, lineage, data_collector, data_collector_version) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (lineage, data_collector, data_collector_version) DO NOTHING",
                &[&p.uuid, &p.lineage, &p.data_collector, &p.data_collector_version],
            )
            .await?;
            let uuid: String = tx
                .query_one(
                    "SELECT uuid FROM ts_provenance WHERE lineage = $1 AND data_collector = $2 AND data_collector_version = $3",
                    &[&p.lineage, &p.data_collector, &p.data_collector_version],
                )
                .await?
                .get(0);
            tx.commit().await?;
            Ok(uuid)
        })
        .await
    }

    async fn push_records(
        &self,
        stype: String,
        provenance: Option<String>,
        records: Vec<RecordInput>,
    ) -> Result<PushSummary> {
        partitions::ensure_for_push(self.db(), &records, now_ms()).await;
        push::push_records(self.db(), stype, provenance, records).await
    }

    async fn maintain_history(
        &self,
        now_ms: i64,
        policy: HistoryPolicy,
    ) -> Result<HistoryMaintenance> {
        partitions::maintain(self.db(), now_ms, policy).await
    }

    async fn last_record(
        &self,
        stype: String,
        code: String,
        dtype: Option<String>,
        period: Option<i64>,
    ) -> Result<i64> {
        self.db().read(move |conn| async move {
            let sid: Option<i64> = conn
                .query_opt("SELECT id FROM ts_station WHERE stationtype = $1 AND stationcode = $2", &[&stype, &code])
                .await?
                .map(|r| r.get(0));
            let Some(sid) = sid else {
                return Ok(plan::last_record_answer(false, None, dtype.is_some() || period.is_some()));
            };
            let newest: Option<i64> = conn
                .query_one(
                    "SELECT MAX(me.timestamp) FROM ts_latest me JOIN ts_series ts ON ts.id = me.series_id JOIN ts_type t ON t.id = ts.type_id \
                     WHERE ts.station_id = $1 AND ($2::text IS NULL OR t.cname = $2) AND ($3::int8 IS NULL OR ts.period = $3)",
                    &[&sid, &dtype, &period],
                )
                .await?
                .get(0);
            Ok(plan::last_record_answer(true, newest, dtype.is_some() || period.is_some()))
        })
        .await
    }

    async fn put_edges(&self, edges: Vec<EdgeInput>) -> Result<u64> {
        self.db().write(move |mut conn| async move {
            let tx = conn.transaction().await?;
            let now = now_ms();
            let insert = tx
                .prepare_cached(
                    "INSERT INTO ts_edge (edge_data_id, origin_id, destination_id, directed, linegeometry, minx, miny, maxx, maxy) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                     ON CONFLICT (edge_data_id) DO UPDATE SET origin_id = excluded.origin_id, destination_id = excluded.destination_id, \
                     directed = excluded.directed, linegeometry = excluded.linegeometry, minx = excluded.minx, miny = excluded.miny, \
                     maxx = excluded.maxx, maxy = excluded.maxy",
                )
                .await?;
            for e in &edges {
                let done = upsert_stations(&tx, &e.station_type, &[&e.station], now).await?;
                let id = done.get(&e.station.code).map(|x| x.0).ok_or_else(|| StoreError::Task("edge station not written".into()))?;
                let o = match &e.begin {
                    Some((t, c)) => station_id(&tx, t, c).await?,
                    None => None,
                };
                let d = match &e.end {
                    Some((t, c)) => station_id(&tx, t, c).await?,
                    None => None,
                };
                let (geom, (minx, miny, maxx, maxy)) = edge_line(e);
                tx.execute(&insert, &[&id, &o, &d, &e.directed, &geom, &minx, &miny, &maxx, &maxy]).await?;
            }
            tx.commit().await?;
            Ok(edges.len() as u64)
        })
        .await
    }

    async fn put_events(&self, events: Vec<EventInput>) -> Result<u64> {
        self.db().write(move |mut conn| async move {
            let tx = conn.transaction().await?;
            let now = now_ms();
            let location = tx
                .prepare_cached("INSERT INTO ts_location (description, geometry, minx, miny, maxx, maxy) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id")
                .await?;
            let metadata = tx.prepare_cached("INSERT INTO ts_metadata (station_id, created_on, json) VALUES (NULL, $1, $2) RETURNING id").await?;
            let provenance = tx.prepare_cached("SELECT id FROM ts_provenance WHERE uuid = $1").await?;
            // Replacing deletes and inserts, as SQLite's INSERT OR REPLACE does: the new row
            // gets a new (higher) id, which breaks ties in the latest-event order.
            let delete = tx.prepare_cached("DELETE FROM ts_event WHERE uuid = $1").await?;
            let insert = tx
                .prepare_cached(
                    "INSERT INTO ts_event (uuid, origin, category, event_series_uuid, name, description, created_on, event_start, event_end, \
                     location_id, meta_data_id, provenance_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                )
                .await?;
            for e in &events {
                let loc: Option<i64> = match (&e.geometry, &e.location_description) {
                    (None, None) => None,
                    (g, d) => {
                        let bbox = g.as_ref().map(geometry_bbox);
                        let text = g.as_ref().map(|g| g.to_string());
                        let row = tx
                            .query_one(
                                &location,
                                &[d, &text, &bbox.map(|b| b.0), &bbox.map(|b| b.1), &bbox.map(|b| b.2), &bbox.map(|b| b.3)],
                            )
                            .await?;
                        Some(row.get(0))
                    }
                };
                let meta: Option<i64> = match &e.metadata {
                    Some(m) => Some(tx.query_one(&metadata, &[&now, &m.to_string()]).await?.get(0)),
                    None => None,
                };
                let prov: Option<i64> = match &e.provenance_uuid {
                    Some(u) => tx.query_opt(&provenance, &[u]).await?.map(|r| r.get(0)),
                    None => None,
                };
                tx.execute(&delete, &[&e.uuid]).await?;
                tx.execute(
                    &insert,
                    &[&e.uuid, &e.origin, &e.category, &e.series_uuid, &e.name, &e.description, &now, &e.start, &e.end, &loc, &meta, &prov],
                )
                .await?;
            }
            tx.commit().await?;
            Ok(events.len() as u64)
        })
        .await
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "timeseries/catalog_answers_tests.rs"]
mod catalog_answers_tests;
