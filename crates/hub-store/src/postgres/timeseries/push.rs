//! `pushRecords` on PostgreSQL: the writer's hot path, in its own module for size.
//! Batched array statements, and binary COPY for the history rows of a large push; rows
//! are locked in a fixed order so that concurrent pushers from several processes wait
//! for each other instead of deadlocking.

use bytes::Bytes;
use futures::SinkExt;
use tokio_postgres::types::ToSql;

use super::history_copy::{HistoryCopy, HISTORY_COLUMNS, MESSAGE_BYTES};
use super::*;

/// History rows from which a push copies instead of inserting: COPY costs a round trip
/// more than the cached array statement (its start is answered before the rows go out),
/// which small pushes would notice, and saves the server most of its per-row work on
/// large ones.
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
            // The provenance, stations and types are asked for together (one round trip).
            let (codes, names) = plan::push_names(&records);
            let (station_params, type_params) = ([&stype as &(dyn ToSql + Sync), &codes], [&names as &(dyn ToSql + Sync)]);
            let (prov, stations, types) = futures::try_join!(
                provenance_id(&tx, provenance.as_deref()),
                name_ids(&tx, STATION_IDS, &station_params),
                name_ids(&tx, TYPE_IDS, &type_params),
            )?;
            plan::sort_records(&mut records);

            // Series of the known records (sorted keys), created when missing, and their
            // latest rows locked: a concurrent push of the same series waits here.
            let resolved = plan::resolve_push(&records, &stations, &types);
            let keys = &resolved.series;
            let mut series: HashMap<plan::SeriesKey, (i64, i64)> = HashMap::with_capacity(keys.len()); // -> (id, latest ts)
            let mut has_latest: HashSet<i64> = HashSet::new();
            if !keys.is_empty() {
                let ids = series_ids(&tx, keys).await?;
                if ids.len() != keys.len() {
                    return Err(StoreError::Task("series vanished during a push".into()));
                }
                let mut sorted: Vec<i64> = ids.values().copied().collect();
                sorted.sort_unstable();
                let lock = tx
                    .prepare_cached("SELECT series_id, timestamp FROM ts_latest WHERE series_id = ANY($1) ORDER BY series_id FOR UPDATE")
                    .await?;
                let latest: HashMap<i64, i64> = tx
                    .query(&lock, &[&sorted])
                    .await?
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
                has_latest.extend(latest.keys().copied());
                series.extend(ids.into_iter().map(|(key, id)| (key, (id, latest.get(&id).copied().unwrap_or(i64::MIN)))));
            }
            let push = plan::plan_push(&records, &resolved, &series);
            let keep = &push.history;

            // History rows: only timestamps newer than the locked latest values, so a
            // conflict is impossible unless the tables disagree (hand-edited data). A
            // plain write (COPY for a large push, else the array insert) is much faster
            // than `ON CONFLICT DO NOTHING`, which remains the fallback (SQLite's
            // `INSERT OR IGNORE`) behind a savepoint, so both behave alike. The savepoint
            // goes out with the write, its release with the latest rows' write (the
            // server runs them in order; the release comes first, so the latest rows are
            // updated by the transaction that locked them, not by a subtransaction).
            let (saved, written) = futures::join!(tx.batch_execute("SAVEPOINT ts_history_insert"), async {
                if keep.len() >= COPY_MIN_ROWS {
                    copy_history(&tx, keep, &records, now, prov).await
                } else {
                    insert_history(&tx, keep, &records, now, prov, false).await
                }
            });
            saved?;
            match written {
                Ok(()) => {}
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
                    tx.batch_execute("ROLLBACK TO SAVEPOINT ts_history_insert").await?;
                    insert_history(&tx, keep, &records, now, prov, true).await?;
                }
                Err(e) => return Err(e.into()),
            }
            let (released, latest) = futures::join!(
                tx.batch_execute("RELEASE SAVEPOINT ts_history_insert"),
                write_latest(&tx, &push.latest, &has_latest, &records, now, prov),
            );
            released?;
            latest?;
            tx.commit().await?;
            Ok(push.summary)
        })
        .await
}

/// The stations of one type among codes `$2`, by code.
const STATION_IDS: &str = "SELECT s.stationcode, s.id FROM unnest($2::text[]) AS c(code) \
     JOIN ts_station s ON s.stationtype = $1 AND s.stationcode = c.code";

/// The data types among names `$1`, by name.
const TYPE_IDS: &str =
    "SELECT t.cname, t.id FROM unnest($1::text[]) AS n(name) JOIN ts_type t ON t.cname = n.name";

/// The id of the provenance `uuid` (none without one), or the error naming it.
async fn provenance_id(tx: &Tx<'_>, uuid: Option<&str>) -> Result<Option<i64>> {
    let Some(uuid) = uuid else { return Ok(None) };
    let statement = tx
        .prepare_cached("SELECT id FROM ts_provenance WHERE uuid = $1")
        .await?;
    match tx.query_opt(&statement, &[&uuid]).await? {
        Some(row) => Ok(Some(row.get(0))),
        None => Err(plan::missing_provenance(uuid)),
    }
}

/// Rows (name, id) of `sql` (a [`STATION_IDS`] or [`TYPE_IDS`]) as a map.
async fn name_ids(
    tx: &Tx<'_>,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<HashMap<String, i64>> {
    let statement = tx.prepare_cached(sql).await?;
    Ok(tx
        .query(&statement, params)
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
}

/// The ids of `keys` (sorted, distinct): looked up, and only the missing ones inserted
/// (`ON CONFLICT DO NOTHING`: a concurrent push may create them first) and looked up
/// again. Inserting every key on each push would make the server check each against
/// the unique index and draw an identity value for it, thousands per large push.
async fn series_ids(
    tx: &Tx<'_>,
    keys: &[plan::SeriesKey],
) -> Result<HashMap<plan::SeriesKey, i64>> {
    let select = tx
        .prepare_cached(
            "SELECT s.id, u.a, u.b, u.c, u.d FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[]) AS u(a, b, c, d) \
             JOIN ts_series s ON s.station_id = u.a AND s.type_id = u.b AND s.period = u.c AND s.value_table = u.d",
        )
        .await?;
    let columns = |keys: &[plan::SeriesKey]| -> [Vec<i64>; 4] {
        [
            keys.iter().map(|k| k.0).collect(),
            keys.iter().map(|k| k.1).collect(),
            keys.iter().map(|k| k.2).collect(),
            keys.iter().map(|k| k.3).collect(),
        ]
    };
    let lookup = |rows: Vec<tokio_postgres::Row>, ids: &mut HashMap<plan::SeriesKey, i64>| {
        for r in &rows {
            ids.insert((r.get(1), r.get(2), r.get(3), r.get(4)), r.get(0));
        }
    };
    let mut ids = HashMap::with_capacity(keys.len());
    let [a, b, c, d] = columns(keys);
    lookup(tx.query(&select, &[&a, &b, &c, &d]).await?, &mut ids);
    if ids.len() < keys.len() {
        let missing: Vec<plan::SeriesKey> = keys
            .iter()
            .filter(|k| !ids.contains_key(*k))
            .copied()
            .collect();
        let [a, b, c, d] = columns(&missing);
        let insert = tx
            .prepare_cached(
                "INSERT INTO ts_series (station_id, type_id, period, value_table) \
                 SELECT * FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[]) ON CONFLICT DO NOTHING",
            )
            .await?;
        tx.execute(&insert, &[&a, &b, &c, &d]).await?;
        lookup(tx.query(&select, &[&a, &b, &c, &d]).await?, &mut ids);
    }
    Ok(ids)
}

/// Writes the new latest rows `latest` (series id, record index): an update of the rows
/// the push locked (`locked`, the series that had a latest row), an upsert of the
/// others (a concurrent push may insert one first; the newer timestamp wins).
async fn write_latest(
    tx: &Tx<'_>,
    latest: &[(i64, usize)],
    locked: &HashSet<i64>,
    records: &[RecordInput],
    now: i64,
    prov: Option<i64>,
) -> Result<()> {
    let (update, insert): (Vec<_>, Vec<_>) = latest
        .iter()
        .partition(|(series, _)| locked.contains(series));
    if !update.is_empty() {
        let (sids, ts, ds, xs, js) = row_arrays(&update, records);
        let statement = tx
            .prepare_cached(
                "UPDATE ts_latest l SET timestamp = u.t, double_value = u.d, string_value = u.x, json_value = u.j, provenance_id = $3 \
                 FROM unnest($1::int8[], $2::int8[], $4::float8[], $5::text[], $6::text[]) AS u(s, t, d, x, j) \
                 WHERE l.series_id = u.s AND u.t > l.timestamp",
            )
            .await?;
        tx.execute(&statement, &[&sids, &ts, &prov, &ds, &xs, &js])
            .await?;
    }
    if !insert.is_empty() {
        let (sids, ts, ds, xs, js) = row_arrays(&insert, records);
        let statement = tx
            .prepare_cached(
                "INSERT INTO ts_latest (series_id, timestamp, created_on, double_value, string_value, json_value, provenance_id) \
                 SELECT u.s, u.t, $3, u.d, u.x, u.j, $7 FROM unnest($1::int8[], $2::int8[], $4::float8[], $5::text[], $6::text[]) AS u(s, t, d, x, j) \
                 ON CONFLICT (series_id) DO UPDATE SET timestamp = excluded.timestamp, double_value = excluded.double_value, \
                 string_value = excluded.string_value, json_value = excluded.json_value, provenance_id = excluded.provenance_id \
                 WHERE excluded.timestamp > ts_latest.timestamp",
            )
            .await?;
        tx.execute(&statement, &[&sids, &ts, &now, &ds, &xs, &js, &prov])
            .await?;
    }
    Ok(())
}

/// The statement [`copy_history`] runs.
static COPY_HISTORY: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("COPY {HISTORY_COLUMNS} FROM STDIN (FORMAT binary)"));

/// Copies the history rows `keep` (series id, record index) into `ts_history`.
async fn copy_history(
    tx: &Tx<'_>,
    keep: &[(i64, usize)],
    records: &[RecordInput],
    now: i64,
    prov: Option<i64>,
) -> std::result::Result<(), tokio_postgres::Error> {
    let sink = tx.copy_in::<Bytes>(&COPY_HISTORY).await?;
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
