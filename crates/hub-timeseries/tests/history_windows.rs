//! Pages of a flat history over many series (`limit`, `offset`): the store may answer one
//! from a window at the start of the range when that window holds the whole page. Every
//! page must be the slice of the whole answer (`limit=-1`) it names, wherever the data
//! starts in the range, however dense it is, with ties between series at one time. The
//! real router against a real store (SQLite, or PostgreSQL with `HUB_TEST_DATABASE`).

mod support;

use axum::http::StatusCode;
use hub_store::timeseries::{RecordInput, RecordValue};
use hub_timeseries::TimeseriesState;
use serde_json::Value;

const T0: i64 = 1_705_312_800_000; // 2024-01-15T10:00:00Z, ten hours into the range
const MIN: i64 = 60_000;
const DAY: i64 = 1_440 * MIN;
/// More series than a history is merged from in the store
/// (`hub_query::timeseries::MAX_NARROW_SERIES`), so the compiled statement answers.
const SERIES: i64 = 600;
const ROWS: i64 = 100;

/// 600 stations with one series each. Periods of 5, 10 and 15 minutes; series 0, 100,
/// 200, … share their times exactly (ties broken by station code), the others are a
/// second apart; series 450 and on start three days later.
async fn store() -> (tempfile::TempDir, TimeseriesState) {
    let code = |n: i64| format!("W{n:03}");
    let codes: Vec<String> = (0..SERIES).map(code).collect();
    let (dir, store) = support::meteo_stations(&codes).await;
    let ts = store.timeseries();
    let records: Vec<RecordInput> = (0..SERIES)
        .flat_map(|n| {
            let period = 5 + (n % 3) * 5;
            let start = match n {
                _ if n >= 450 => T0 + 3 * DAY + n * 1_000,
                _ if n % 100 == 0 => T0,
                _ => T0 + n * 1_000,
            };
            let station = code(n);
            (0..ROWS).map(move |i| RecordInput {
                station_code: station.clone(),
                data_type: "temp".into(),
                period: period * 60,
                timestamp: start + i * period * MIN,
                value: RecordValue::Double(((i * 13 + n * 7) % 40) as f64 / 4.0),
            })
        })
        .collect();
    let pushed = ts
        .push_records("MeteoStation".into(), None, records)
        .await
        .unwrap();
    assert_eq!(pushed.inserted, (SERIES * ROWS) as u64);
    let state = support::state_opening(&store, &["MeteoStation"], &["temp"]);
    (dir, state)
}

async fn data(state: &TimeseriesState, uri: &str) -> Vec<Value> {
    let (status, _, body) = support::send(state, "GET", uri, None, None).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{uri}: {}",
        String::from_utf8_lossy(&body)
    );
    let v: Value = serde_json::from_slice(&body).unwrap();
    v["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn every_page_of_a_history_over_many_series_is_its_slice_of_the_whole() {
    let (_dir, state) = store().await;
    for (range, select) in [
        // A month whose data starts ten hours in; four years, the first three empty
        // (the windows start where the values do); two weeks from the first values.
        ("2024-01-15/2024-02-15", ""),
        ("2020-01-01/2024-02-15", ""),
        (
            "2024-01-15T10:00:00.000Z/2024-01-29",
            "&select=scode,mvalidtime,mvalue",
        ),
    ] {
        let base = format!("/v2/flat/MeteoStation/temp/{range}?distinct=true{select}");
        let whole = data(&state, &format!("{base}&limit=-1")).await;
        assert!(whole.len() > 40_000, "{base}: {}", whole.len());
        assert_eq!(whole[0]["scode"], "W000", "{base}");
        assert_eq!(whole[1]["scode"], "W100", "{base}: a tie at the first time");
        let total = whole.len();
        for (limit, offset) in [
            (200, 0),
            (200, 200),
            (7, 0),
            (50, 1_000),
            (1_000, 5_000),
            (3, 20_011),
            (200, total - 100),
            (200, total + 5),
        ] {
            let uri = format!("{base}&limit={limit}&offset={offset}");
            let page = data(&state, &uri).await;
            let start = offset.min(total);
            let end = (offset + limit).min(total);
            assert_eq!(page.len(), end - start, "{uri}");
            assert!(
                page == whole[start..end],
                "{uri}: not the slice of the whole"
            );
        }
    }
}
