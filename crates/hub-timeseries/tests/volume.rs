//! The volume set's generator on a tiny parameterisation: 3 series × 100 points every
//! 12 hours (49.5 days, three calendar months) give 300 measurements, readable through
//! the API over the whole span and as three latest values; on PostgreSQL (when
//! `HUB_TEST_DATABASE` is set) every month the data reaches has its own `ts_history`
//! partition, made by the push path, and nothing is left in the DEFAULT partition.

mod support;

use axum::http::StatusCode;
use chrono::TimeZone;
use hub_store::Store;
use hub_timeseries::{load_volume, TimeseriesConfig, TimeseriesState, VolumeOptions};
use serde_json::Value;

fn tiny() -> VolumeOptions {
    VolumeOptions {
        stations: 3,
        types: 1,
        points: 100,
        interval_s: 12 * 3600,
        // The span is 2026-01-19 12:00 .. 2026-03-10 00:00 (UTC).
        end: chrono::Utc.with_ymd_and_hms(2026, 3, 10, 0, 0, 0).unwrap(),
        steps_per_push: 7,
        ..VolumeOptions::odh(chrono::Utc::now())
    }
}

async fn get(state: &TimeseriesState, uri: &str) -> Value {
    let (status, _, bytes) = support::send(state, "GET", uri, None, None).await;
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    body
}

/// Loads the tiny set into `store` with `writers` pushing at once and checks what the
/// API answers.
async fn load_and_read(store: &Store, writers: u32) {
    let opts = VolumeOptions { writers, ..tiny() };
    let mut pushes_seen = Vec::new();
    let sum = load_volume(&*store.timeseries(), &opts, |n| pushes_seen.push(n))
        .await
        .unwrap();
    assert_eq!((sum.stations, sum.series, sum.records), (3, 3, 300));
    if writers == 1 {
        // 100 steps in pushes of 7: 15 pushes, each of every series.
        assert_eq!(sum.pushes, 15);
        assert_eq!(pushes_seen.first(), Some(&21));
    } else {
        // As many pushes per writer, each of its share of the series.
        assert_eq!(sum.pushes, 15 * writers as u64);
        assert!(pushes_seen.windows(2).all(|w| w[0] < w[1]));
    }
    assert_eq!(pushes_seen.last(), Some(&300));

    let state = TimeseriesState::new(
        store.timeseries(),
        TimeseriesConfig {
            base_url: "http://hub.test/v2".into(),
            ..Default::default()
        },
    );
    let all = get(
        &state,
        "/v2/flat/MeteoStation/air-temperature/2026-01-01/2026-04-01?limit=-1&select=scode,mvalidtime,mvalue",
    )
    .await;
    let rows = all["data"].as_array().unwrap();
    assert_eq!(rows.len(), 300);
    let one: Vec<&Value> = rows.iter().filter(|r| r["scode"] == "VOL00001").collect();
    assert_eq!(one.len(), 100);
    let times: Vec<&str> = one
        .iter()
        .map(|r| r["mvalidtime"].as_str().unwrap())
        .collect();
    assert!(times.contains(&"2026-01-19 12:00:00.000+0000"), "{times:?}");
    assert!(times.contains(&"2026-03-10 00:00:00.000+0000"), "{times:?}");
    // 300 provenances (40 collectors' releases): the first collector's 8 releases push
    // the set, one after another over its time.
    let releases = get(
        &state,
        "/v2/flat/MeteoStation/air-temperature/2026-01-01/2026-04-01?limit=-1&where=scode.eq.%22VOL00001%22&select=mvalidtime,prname,prversion",
    )
    .await;
    let releases = releases["data"].as_array().unwrap();
    assert_eq!(releases.len(), 100);
    assert!(releases.iter().all(|r| r["prname"] == "volume-collector-0"));
    let first = &releases[0];
    let last = &releases[99];
    assert_eq!(
        (first["mvalidtime"].as_str(), first["prversion"].as_str()),
        (Some("2026-01-19 12:00:00.000+0000"), Some("1.0"))
    );
    assert_eq!(last["prversion"], "1.7");

    let latest = get(
        &state,
        "/v2/flat/MeteoStation/air-temperature/latest?limit=-1&select=scode,mvalidtime",
    )
    .await;
    let latest = latest["data"].as_array().unwrap();
    assert_eq!(latest.len(), 3);
    assert!(latest
        .iter()
        .all(|r| r["mvalidtime"] == "2026-03-10 00:00:00.000+0000"));
}

#[tokio::test]
async fn the_tiny_volume_set_has_every_measurement_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(dir.path()).unwrap();
    load_and_read(&store, 1).await;
}

#[tokio::test]
async fn the_tiny_volume_set_gets_a_partition_per_month_on_postgres() {
    let admin = match std::env::var("HUB_TEST_DATABASE") {
        Ok(a) if !a.trim().is_empty() => a,
        _ => {
            println!("skipped: HUB_TEST_DATABASE not set");
            return;
        }
    };
    let name = format!("hub_test_volume_{}", std::process::id());
    let database = hub_store::postgres::ThrowawayDatabase::create(admin.trim(), &name).unwrap();
    let url = database.url();
    let store = Store::open_postgres_with(url, &hub_store::PgSettings::for_tests()).unwrap();
    load_and_read(&store, 1).await;

    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let rows = client
        .query(
            "SELECT c.relname::text, (SELECT count(*) FROM ts_history h WHERE h.tableoid = c.oid) \
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
             WHERE i.inhparent = 'ts_history'::regclass ORDER BY 1",
            &[],
        )
        .await
        .unwrap();
    let layout: Vec<(String, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    let count = |name: &str| layout.iter().find(|(n, _)| n == name).map(|(_, c)| *c);
    // 2026-01-19 12:00 .. 01-31 12:00 = 25 steps, February 56, March 1 .. 10 = 19.
    assert_eq!(count("ts_history_y2026m01"), Some(3 * 25), "{layout:?}");
    assert_eq!(count("ts_history_y2026m02"), Some(3 * 56), "{layout:?}");
    assert_eq!(count("ts_history_y2026m03"), Some(3 * 19), "{layout:?}");
    assert_eq!(count("ts_history_default"), Some(0), "{layout:?}");
}

/// Two writers pushing their shares of the stations at once (on PostgreSQL racing to
/// make the same months' partitions) load the same set.
#[tokio::test]
async fn the_tiny_volume_set_loads_alike_with_two_writers() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    load_and_read(&store, 2).await;
}
