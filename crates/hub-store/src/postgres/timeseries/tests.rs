use crate::timeseries::{DataTypeInput, RecordInput, RecordValue, StationInput, SyncFlags};
use crate::{Backend, Store};

/// A double value of the free places of station `S` (10-minute period) at `t`.
pub(super) fn record(t: i64, v: f64) -> RecordInput {
    RecordInput {
        station_code: "S".into(),
        data_type: "free".into(),
        period: 600,
        timestamp: t,
        value: RecordValue::Double(v),
    }
}

/// A history row newer than the latest value (tables that disagree) does not fail a
/// push: the insert falls back to ignoring conflicts, as SQLite's INSERT OR IGNORE does.
#[test]
fn push_survives_history_rows_newer_than_latest() {
    use crate::postgres::Queries;
    if std::env::var("HUB_TEST_DATABASE")
        .map(|v| v.trim().is_empty())
        .unwrap_or(true)
    {
        println!("skipped: HUB_TEST_DATABASE not set");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ts = store.timeseries();
    rt.block_on(async {
        one_station(&store).await;
        ts.push_records("P".into(), None, vec![record(1000, 1.0)]).await.unwrap();
        let Backend::Postgres(b) = &*store.backend else { panic!("not PostgreSQL") };
        b.write(|conn| async move {
            conn.execute("INSERT INTO ts_history (series_id, timestamp, created_on, double_value) SELECT series_id, 3000, 0, 99 FROM ts_latest", &[])
                .await?;
            Ok(())
        })
        .await
        .unwrap();
        let sum = ts.push_records("P".into(), None, vec![record(2000, 2.0), record(3000, 3.0)]).await.unwrap();
        assert_eq!((sum.inserted, sum.skipped_older), (2, 0));
        assert_eq!(ts.last_record("P".into(), "S".into(), None, None).await.unwrap(), 3000);
        let kept: f64 = b
            .read(|conn| async move { Ok(conn.query_one("SELECT double_value FROM ts_history WHERE timestamp = 3000", &[]).await?.get(0)) })
            .await
            .unwrap();
        assert_eq!(kept, 99.0);
    });
}

/// Station `S` of type `P` and the data type `free`, in a store.
pub(super) async fn one_station(store: &Store) {
    stations_of_p(store, &[("S", "s")]).await;
}

/// Stations (code, name) of type `P`, synced as the whole list of that type, and the
/// data type `free`, in a store.
pub(super) async fn stations_of_p(store: &Store, stations: &[(&str, &str)]) {
    let ts = store.timeseries();
    ts.sync_data_types(vec![DataTypeInput {
        name: "free".into(),
        ..Default::default()
    }])
    .await
    .unwrap();
    let list = stations
        .iter()
        .map(|(code, name)| StationInput {
            code: code.to_string(),
            name: name.to_string(),
            ..Default::default()
        })
        .collect();
    ts.sync_stations("P".into(), list, SyncFlags::default())
        .await
        .unwrap();
}

pub(super) use crate::postgres::test_server::admin as test_admin;

/// Runs `sql` on the backend as an operator's plain SQL would, outside Hub's writes.
pub(super) async fn plain_sql(backend: &crate::postgres::PgBackend, sql: &'static str) {
    backend
        .write(move |conn| async move {
            crate::postgres::Queries::batch_execute(&conn, sql).await?;
            Ok(())
        })
        .await
        .unwrap()
}

/// Station `S0`…`S{stations-1}` with type `free`, in a store.
/// A PostgreSQL store (`HUB_TEST_DATABASE`) and an SQLite store side by side, with a
/// runtime to drive both; `None` (the test returns) without PostgreSQL.
struct BesideSqlite {
    rt: tokio::runtime::Runtime,
    pg: Store,
    lite: Store,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

impl BesideSqlite {
    fn open() -> Option<BesideSqlite> {
        test_admin()?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (dir, lite_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let pg = Store::open_for_tests(dir.path()).unwrap();
        let lite = Store::open_sqlite(lite_dir.path()).unwrap();
        Some(BesideSqlite {
            rt,
            pg,
            lite,
            _dirs: (dir, lite_dir),
        })
    }
}

async fn stations(ts: &dyn crate::timeseries::TimeSeriesRepo, stations: usize) {
    ts.sync_data_types(vec![DataTypeInput {
        name: "free".into(),
        ..Default::default()
    }])
    .await
    .unwrap();
    let list = (0..stations)
        .map(|n| StationInput {
            code: format!("S{n}"),
            name: format!("s{n}"),
            ..Default::default()
        })
        .collect();
    ts.sync_stations("P".into(), list, SyncFlags::default())
        .await
        .unwrap();
}

/// Records of stations `S0`…, timestamps `from..to` (seconds as ms), value t/1000 + n.
fn records(stations: usize, from: i64, to: i64) -> Vec<RecordInput> {
    let mut out = Vec::new();
    for n in 0..stations {
        for t in from..to {
            out.push(RecordInput {
                station_code: format!("S{n}"),
                data_type: "free".into(),
                period: 600,
                timestamp: t * 1000,
                value: if t % 7 == 0 {
                    RecordValue::Text(format!("text {t} ü"))
                } else {
                    RecordValue::Double(t as f64 + n as f64)
                },
            });
        }
    }
    out
}

/// (history rows, sum of timestamps, sum of double values) and the latest timestamps per
/// series, as SQL sees them: what a push stored.
const STORED_SQL: [&str; 2] = [
    "SELECT count(*), CAST(sum(timestamp) AS BIGINT), CAST(sum(double_value) AS DOUBLE PRECISION), count(string_value) FROM ts_history",
    "SELECT timestamp FROM ts_latest ORDER BY series_id",
];

/// A push large enough to be copied in several messages, whose records partly repeat
/// stored history, stores only the new ones and sums up exactly as SQLite does; and when
/// a history row the latest value does not know of is in the way (hand-edited tables),
/// the copy falls back to skipping it, keeping the stored row.
#[test]
fn large_pushes_store_and_sum_up_as_sqlite_does() {
    use crate::postgres::Queries;
    let Some(pair) = BesideSqlite::open() else {
        return;
    };
    let (rt, pg, lite) = (&pair.rt, &pair.pg, &pair.lite);
    let (Backend::Postgres(b), Backend::Sqlite(l)) = (&*pg.backend, &*lite.backend) else {
        panic!("not PostgreSQL and SQLite")
    };
    rt.block_on(async {
        for store in [&pg, &lite] {
            stations(&*store.timeseries(), 4).await;
        }
        // 4 x 10,000 rows (about 2.4 MB of COPY data), then 4 x 10,000 of which half
        // are stored already, then a push that meets a history row unknown to ts_latest.
        let pushes = [records(4, 0, 10_000), records(4, 5_000, 15_000), records(4, 15_000, 17_000)];
        for (k, push) in pushes.iter().enumerate() {
            if k == 2 {
                b.write(|conn| async move {
                    conn.execute("INSERT INTO ts_history (series_id, timestamp, created_on, double_value) SELECT series_id, 16000000, 0, -1 FROM ts_latest WHERE double_value IS NOT NULL", &[]).await?;
                    Ok(())
                })
                .await
                .unwrap();
                l.write(|conn| {
                    conn.execute("INSERT INTO ts_history (series_id, timestamp, created_on, double_value) SELECT series_id, 16000000, 0, -1 FROM ts_latest WHERE double_value IS NOT NULL", [])?;
                    Ok(())
                })
                .await
                .unwrap();
            }
            let on_pg = pg.timeseries().push_records("P".into(), None, push.clone()).await.unwrap();
            let on_sqlite = lite.timeseries().push_records("P".into(), None, push.clone()).await.unwrap();
            assert_eq!(on_pg, on_sqlite, "push {k}");
        }
        let pg_stored = b
            .read(|conn| async move {
                let r = conn.query_one(STORED_SQL[0], &[]).await?;
                let latest: Vec<i64> = conn.query(STORED_SQL[1], &[]).await?.iter().map(|r| r.get(0)).collect();
                Ok((r.get::<_, i64>(0), r.get::<_, i64>(1), r.get::<_, f64>(2), r.get::<_, i64>(3), latest))
            })
            .await
            .unwrap();
        let lite_stored = l
            .read(|conn| {
                let r = conn.query_row(STORED_SQL[0], [], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, f64>(2)?, r.get::<_, i64>(3)?)))?;
                let mut st = conn.prepare(STORED_SQL[1])?;
                let latest = st.query_map([], |r| r.get::<_, i64>(0))?.collect::<std::result::Result<Vec<i64>, _>>()?;
                Ok((r.0, r.1, r.2, r.3, latest))
            })
            .await
            .unwrap();
        assert_eq!(pg_stored, lite_stored);
        // Every distinct timestamp once per station (in its series of doubles or of
        // texts), the hand-made rows instead of the pushed ones at their time.
        assert_eq!(pg_stored.0, 4 * 17_000);
        assert_eq!(pg_stored.4, [16_999_000, 16_996_000].repeat(4));
        let kept: Vec<f64> = b
            .read(|conn| async move { Ok(conn.query("SELECT double_value FROM ts_history WHERE timestamp = 16000000", &[]).await?.iter().map(|r| r.get(0)).collect()) })
            .await
            .unwrap();
        assert_eq!(kept, vec![-1.0; 4]);
    });
}

/// Two stores (as two `hub serve` processes) pushing large, overlapping windows of the
/// same series at once: both finish (the fixed lock order, no deadlock), every
/// timestamp is stored once, and the latest values are the newest pushed.
#[test]
fn concurrent_large_pushes_from_two_stores_keep_every_row_once() {
    use crate::postgres::{PgSettings, Queries};
    let Some(admin) = test_admin() else { return };
    let name = format!("hub_test_{}_concurrent_pushes", std::process::id());
    let database = crate::postgres::ThrowawayDatabase::create(&admin, &name).unwrap();
    let url = database.url();
    let one = Store::open_postgres_with(url, &PgSettings::for_tests()).unwrap();
    let two = Store::open_postgres_with(url, &PgSettings::for_tests()).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        stations(&*one.timeseries(), 6).await;
        let mut inserted = 0;
        for round in 0..4i64 {
            // 6 series x 2,000 records each, the second store's window half over the first's.
            let base = round * 3_000;
            let (a, b) = (one.timeseries(), two.timeseries());
            let first = tokio::spawn(async move { a.push_records("P".into(), None, records(6, base, base + 2_000)).await });
            let second = tokio::spawn(async move { b.push_records("P".into(), None, records(6, base + 1_000, base + 3_000)).await });
            let (first, second) = (first.await.unwrap().unwrap(), second.await.unwrap().unwrap());
            // Each store skips what the other stored first, and nothing else.
            assert_eq!(first.inserted + first.skipped_older + second.inserted + second.skipped_older, 24_000);
            inserted += first.inserted + second.inserted;
        }
        let Backend::Postgres(b) = &*one.backend else { panic!("not PostgreSQL") };
        let (rows, distinct, latest, newest) = b
            .read(|conn| async move {
                let r = conn.query_one("SELECT count(*), count(DISTINCT (series_id, timestamp)) FROM ts_history", &[]).await?;
                let latest: Vec<i64> = conn.query(STORED_SQL[1], &[]).await?.iter().map(|r| r.get(0)).collect();
                let newest: Vec<i64> = conn
                    .query("SELECT max(timestamp) FROM ts_history GROUP BY series_id ORDER BY series_id", &[])
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                Ok((r.get::<_, i64>(0), r.get::<_, i64>(1), latest, newest))
            })
            .await
            .unwrap();
        assert_eq!(rows, distinct);
        assert_eq!(rows as u64, inserted);
        assert_eq!(latest, newest);
        // Per station a series of doubles and one of texts (every 7th second), each
        // ending at the last pushed time of its kind.
        let mut ends = latest.clone();
        ends.sort_unstable();
        assert_eq!(ends, [vec![11_998_000; 6], vec![11_999_000; 6]].concat());
    });
}

/// A push naming series that exist and series that do not yet (a new station and, for
/// the known stations, their first text values) stores both kinds, sums up and leaves
/// the same latest values as SQLite; a push of only older records changes nothing.
#[test]
fn pushes_of_known_and_new_series_store_and_sum_up_as_sqlite_does() {
    use crate::postgres::Queries;
    let Some(pair) = BesideSqlite::open() else {
        return;
    };
    let (rt, pg, lite) = (&pair.rt, &pair.pg, &pair.lite);
    let (Backend::Postgres(b), Backend::Sqlite(l)) = (&*pg.backend, &*lite.backend) else {
        panic!("not PostgreSQL and SQLite")
    };
    // (series, timestamp, double, text) of every latest row, by station code and value table.
    const LATEST_SQL: &str = "SELECT st.stationcode, s.value_table, l.timestamp, l.double_value, l.string_value \
         FROM ts_latest l JOIN ts_series s ON s.id = l.series_id JOIN ts_station st ON st.id = s.station_id \
         ORDER BY st.stationcode, s.value_table";
    rt.block_on(async {
        for store in [&pg, &lite] {
            stations(&*store.timeseries(), 3).await;
        }
        let doubles = |stations: usize, from: i64, to: i64| -> Vec<RecordInput> {
            records(stations, from, to)
                .into_iter()
                .filter(|r| matches!(r.value, RecordValue::Double(_)))
                .collect()
        };
        let pushes = [
            // Doubles of S0 and S1 only: their series are new.
            doubles(2, 1, 50),
            // S0 and S1 go on (known), their text values and all of S2 are new.
            records(3, 40, 120),
            // Older records only: skipped, nothing changes.
            records(3, 60, 100),
        ];
        for (k, push) in pushes.iter().enumerate() {
            let on_pg = pg
                .timeseries()
                .push_records("P".into(), None, push.clone())
                .await
                .unwrap();
            let on_sqlite = lite
                .timeseries()
                .push_records("P".into(), None, push.clone())
                .await
                .unwrap();
            assert_eq!(on_pg, on_sqlite, "push {k}");
        }
        type Latest = Vec<(String, i64, i64, Option<f64>, Option<String>)>;
        let pg_latest: Latest = b
            .read(|conn| async move {
                Ok(conn
                    .query(LATEST_SQL, &[])
                    .await?
                    .iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
                    .collect())
            })
            .await
            .unwrap();
        let lite_latest: Latest = l
            .read(|conn| {
                let mut st = conn.prepare(LATEST_SQL)?;
                let rows = st.query_map([], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?;
                Ok(rows.collect::<std::result::Result<Latest, _>>()?)
            })
            .await
            .unwrap();
        assert_eq!(pg_latest, lite_latest);
        // Per station a series of doubles ending at 118 s and one of texts at 119 s (every
        // 7th second is a text).
        let ends: Vec<(&str, i64)> = pg_latest.iter().map(|r| (r.0.as_str(), r.2)).collect();
        assert_eq!(
            ends,
            [
                ("S0", 118_000),
                ("S0", 119_000),
                ("S1", 118_000),
                ("S1", 119_000),
                ("S2", 118_000),
                ("S2", 119_000)
            ]
        );
        assert_eq!(
            (pg_latest[2].3, pg_latest[3].4.as_deref()),
            (Some(119.0), Some("text 119 ü"))
        );
    });
}

/// Pushes rewrite a series' latest row on its own page: no page of `ts_latest` fills up
/// with versions, so the rows stay where they are and the table does not grow with each
/// push (with full pages every rewritten row would move and the table grow, in every
/// run). A version is pruned only once no snapshot may still see it, and another test's
/// connection starting up or an autovacuum can hold one for a moment (a row moved once
/// in a loaded CI run): so three runs on fresh databases, of which one must keep every
/// row in place.
#[test]
fn pushes_rewrite_latest_rows_on_their_pages() {
    let mut moved = Vec::new();
    for _ in 0..3 {
        match latest_rows_after_pushes() {
            Ok(()) => return,
            Err(e) => moved.push(e),
        }
    }
    panic!("rows moved in every run: {moved:#?}");
}

/// One run of [`pushes_rewrite_latest_rows_on_their_pages`]: `Err` names the push after
/// which a row had moved or the table had grown.
fn latest_rows_after_pushes() -> Result<(), String> {
    use crate::postgres::Queries;
    let Some(_) = test_admin() else { return Ok(()) };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let Backend::Postgres(b) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    // Per latest row the page it is on, and the table's pages.
    let layout = || {
        b.read(|conn| async move {
            let pages: Vec<String> = conn
                .query(
                    "SELECT (ctid::text::point)[0]::int8::text FROM ts_latest ORDER BY series_id",
                    &[],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            let size: i64 = conn
                .query_one("SELECT pg_relation_size('ts_latest')", &[])
                .await?
                .get(0);
            Ok((pages, size))
        })
    };
    rt.block_on(async {
        // 300 series of doubles: several pages of latest rows.
        let doubles = |from: i64, to: i64| -> Vec<RecordInput> {
            records(300, from, to)
                .into_iter()
                .filter(|r| matches!(r.value, RecordValue::Double(_)))
                .collect()
        };
        stations(&*store.timeseries(), 300).await;
        store
            .timeseries()
            .push_records("P".into(), None, doubles(1, 3))
            .await
            .unwrap();
        let first = layout().await.unwrap();
        assert_eq!(first.0.len(), 300);
        assert!(first.1 >= 3 * 8192, "{} bytes", first.1);
        for round in 1..6 {
            store
                .timeseries()
                .push_records("P".into(), None, doubles(round * 10, round * 10 + 3))
                .await
                .unwrap();
            let now = layout().await.unwrap();
            if now != first {
                return Err(format!("after push {round}: {now:?}, first {first:?}"));
            }
        }
        Ok(())
    })
}
