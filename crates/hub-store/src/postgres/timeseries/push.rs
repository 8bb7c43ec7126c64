//! `pushRecords` on PostgreSQL: the writer's hot path, in its own module for size.
//! Batched array statements, and binary COPY for the history rows of a large push; rows
//! are locked in a fixed order so that concurrent pushers from several processes wait
//! for each other instead of deadlocking.

use bytes::Bytes;
use futures::SinkExt;

use super::history_copy::{HistoryCopy, HISTORY_COLUMNS, MESSAGE_BYTES};
use super::*;

/// History rows from which a push copies instead of inserting: COPY costs two round
/// trips more than the cached array statement, which small pushes would notice, and
/// saves the server most of its per-row work on large ones.
const COPY_MIN_ROWS: usize = 1_000;

pub(super) async fn push_records(
    db: &PgBackend,
    stype: String,
    provenance: Option<String>,
    mut records: Vec<RecordInput>,
) -> Result<PushSummary> {
    db.write(move |mut conn| async move {
            let tx = conn.transaction().await?;
            let now = now_ms();
            let prov: Option<i64> = match &provenance {
                Some(u) => Some(
                    tx.query_opt("SELECT id FROM ts_provenance WHERE uuid = $1", &[u])
                        .await?
                        .map(|r| r.get(0))
                        .ok_or_else(|| plan::missing_provenance(u))?,
                ),
                None => None,
            };
            plan::sort_records(&mut records);
            let (codes, names) = plan::push_names(&records);
            let stations: HashMap<String, i64> = tx
                .query("SELECT stationcode, id FROM ts_station WHERE stationtype = $1 AND stationcode = ANY($2)", &[&stype, &codes])
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            let types: HashMap<String, i64> = tx
                .query("SELECT cname, id FROM ts_type WHERE cname = ANY($1)", &[&names])
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();

            // Series of the known records (sorted keys), created when missing.
            let resolved = plan::resolve_push(&records, &stations, &types);
            let keys = &resolved.series;
            let mut series: HashMap<plan::SeriesKey, (i64, i64)> = HashMap::with_capacity(keys.len()); // -> (id, latest ts)
            if !keys.is_empty() {
                let a: Vec<i64> = keys.iter().map(|k| k.0).collect();
                let b: Vec<i64> = keys.iter().map(|k| k.1).collect();
                let c: Vec<i64> = keys.iter().map(|k| k.2).collect();
                let d: Vec<i64> = keys.iter().map(|k| k.3).collect();
                let p = [&a as &(dyn tokio_postgres::types::ToSql + Sync), &b, &c, &d];
                tx.execute(
                    "INSERT INTO ts_series (station_id, type_id, period, value_table) \
                     SELECT * FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[]) ON CONFLICT DO NOTHING",
                    &p,
                )
                .await?;
                let rows = tx
                    .query(
                        "SELECT s.id, u.a, u.b, u.c, u.d FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[]) AS u(a, b, c, d) \
                         JOIN ts_series s ON s.station_id = u.a AND s.type_id = u.b AND s.period = u.c AND s.value_table = u.d",
                        &p,
                    )
                    .await?;
                let mut ids: Vec<i64> = Vec::with_capacity(rows.len());
                for r in &rows {
                    let id: i64 = r.get(0);
                    ids.push(id);
                    series.insert((r.get(1), r.get(2), r.get(3), r.get(4)), (id, i64::MIN));
                }
                ids.sort_unstable();
                // Locks the latest rows: a concurrent push of the same series waits here.
                let latest: HashMap<i64, i64> = tx
                    .query("SELECT series_id, timestamp FROM ts_latest WHERE series_id = ANY($1) ORDER BY series_id FOR UPDATE", &[&ids])
                    .await?
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
                for v in series.values_mut() {
                    if let Some(t) = latest.get(&v.0) {
                        v.1 = *t;
                    }
                }
                if series.len() != keys.len() {
                    return Err(StoreError::Task("series vanished during a push".into()));
                }
            }
            let push = plan::plan_push(&records, &resolved, &series);
            let keep = &push.history;

            // History rows: only timestamps newer than the locked latest values, so a
            // conflict is impossible unless the tables disagree (hand-edited data). A
            // plain write (COPY for a large push, else the array insert) is much faster
            // than `ON CONFLICT DO NOTHING`, which remains the fallback (SQLite's
            // `INSERT OR IGNORE`) behind a savepoint, so both behave alike.
            tx.batch_execute("SAVEPOINT ts_history_insert").await?;
            let written = if keep.len() >= COPY_MIN_ROWS {
                copy_history(&tx, keep, &records, now, prov).await
            } else {
                insert_history(&tx, keep, &records, now, prov, false).await
            };
            match written {
                Ok(()) => tx.batch_execute("RELEASE SAVEPOINT ts_history_insert").await?,
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
                    tx.batch_execute("ROLLBACK TO SAVEPOINT ts_history_insert").await?;
                    insert_history(&tx, keep, &records, now, prov, true).await?;
                }
                Err(e) => return Err(e.into()),
            }
            if !push.latest.is_empty() {
                let (sids, ts, ds, xs, js) = row_arrays(&push.latest, &records);
                let up = tx
                    .prepare_cached(
                        "INSERT INTO ts_latest (series_id, timestamp, created_on, double_value, string_value, json_value, provenance_id) \
                         SELECT u.s, u.t, $3, u.d, u.x, u.j, $7 FROM unnest($1::int8[], $2::int8[], $4::float8[], $5::text[], $6::text[]) AS u(s, t, d, x, j) \
                         ON CONFLICT (series_id) DO UPDATE SET timestamp = excluded.timestamp, double_value = excluded.double_value, \
                         string_value = excluded.string_value, json_value = excluded.json_value, provenance_id = excluded.provenance_id \
                         WHERE excluded.timestamp > ts_latest.timestamp",
                    )
                    .await?;
                tx.execute(&up, &[&sids, &ts, &now, &ds, &xs, &js, &prov]).await?;
            }
            tx.commit().await?;
            Ok(push.summary)
        })
        .await
}

/// Copies the history rows `keep` (series id, record index) into `ts_history`.
async fn copy_history(
    tx: &Tx<'_>,
    keep: &[(i64, usize)],
    records: &[RecordInput],
    now: i64,
    prov: Option<i64>,
) -> std::result::Result<(), tokio_postgres::Error> {
    let sink = tx
        .copy_in::<Bytes>(&format!(
            "COPY {HISTORY_COLUMNS} FROM STDIN (FORMAT binary)"
        ))
        .await?;
    futures::pin_mut!(sink);
    let rows = keep
        .iter()
        .map(|&(series, k)| (series, records[k].timestamp, &records[k].value));
    for message in HistoryCopy::new(rows, now, prov, MESSAGE_BYTES) {
        sink.send(message).await?;
    }
    sink.finish().await?;
    Ok(())
}

/// Inserts the history rows `keep` with array statements of [`RECORD_CHUNK`] rows;
/// `ignoring` skips rows whose series and timestamp are stored already.
async fn insert_history(
    tx: &Tx<'_>,
    keep: &[(i64, usize)],
    records: &[RecordInput],
    now: i64,
    prov: Option<i64>,
    ignoring: bool,
) -> std::result::Result<(), tokio_postgres::Error> {
    let statement = tx
        .prepare_cached(&format!(
            "INSERT INTO {HISTORY_COLUMNS} \
             SELECT u.s, u.t, $3, u.d, u.x, u.j, $7 FROM unnest($1::int8[], $2::int8[], $4::float8[], $5::text[], $6::text[]) AS u(s, t, d, x, j){}",
            if ignoring { " ON CONFLICT DO NOTHING" } else { "" }
        ))
        .await?;
    for chunk in keep.chunks(RECORD_CHUNK) {
        let (sids, ts, ds, xs, js) = row_arrays(chunk, records);
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
            [&sids, &ts, &now, &ds, &xs, &js, &prov];
        tx.execute(&statement, &params).await?;
    }
    Ok(())
}

/// The array parameters of rows `(series id, record index)`: series ids, timestamps,
/// and the double, string and JSON value columns.
#[allow(clippy::type_complexity)]
fn row_arrays<'r>(
    rows: &[(i64, usize)],
    records: &'r [RecordInput],
) -> (
    Vec<i64>,
    Vec<i64>,
    Vec<Option<f64>>,
    Vec<Option<&'r str>>,
    Vec<Option<&'r str>>,
) {
    let mut arrays = (
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
    );
    for &(series, k) in rows {
        let (d, x, j) = value_columns(&records[k].value);
        arrays.0.push(series);
        arrays.1.push(records[k].timestamp);
        arrays.2.push(d);
        arrays.3.push(x);
        arrays.4.push(j);
    }
    arrays
}
