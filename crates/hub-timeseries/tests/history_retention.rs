//! The measurement history over long spans, through the API: records two years apart
//! are pushed through the writer and read back from both months (on PostgreSQL each
//! lands in a monthly partition made on demand), and the retention removes the old
//! month's measurements from every answer while the recent ones and the latest values
//! stay. Runs on SQLite, or on PostgreSQL when `HUB_TEST_DATABASE` is set.

mod support;

use axum::http::StatusCode;
use hub_store::timeseries::HistoryPolicy;
use hub_store::Store;
use hub_timeseries::{TimeseriesConfig, TimeseriesState};
use serde_json::{json, Value};

async fn call(
    state: &TimeseriesState,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let roles: Option<&[&str]> = (method == "POST").then_some(&["WRITER"]);
    let (status, _, bytes) = support::send(state, method, uri, body, roles).await;
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

async fn write(state: &TimeseriesState, uri: &str, body: Value) {
    let (s, v) = call(state, "POST", uri, Some(body)).await;
    assert!(s.is_success(), "{uri}: {s} {v}");
}

/// The `mvalue`s of free places at station 1 in `[from, to)`.
async fn values(state: &TimeseriesState, from: &str, to: &str) -> Vec<Value> {
    let uri = format!("/v2/flat/ParkingStation/free/{from}/{to}?select=mvalue&limit=-1");
    let (s, v) = call(state, "GET", &uri, None).await;
    assert_eq!(s, StatusCode::OK, "{uri}: {v}");
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["mvalue"].clone())
        .collect()
}

fn ms(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .timestamp_millis()
}

#[tokio::test]
async fn records_two_years_apart_are_kept_and_the_retention_drops_the_old_month() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let config = TimeseriesConfig {
        base_url: "http://hub.test/v2".into(),
        ..Default::default()
    };
    let state = TimeseriesState::new(store.timeseries(), config);
    write(
        &state,
        "/v2/json/syncDataTypes",
        json!([{"name": "free", "description": "free places"}]),
    )
    .await;
    write(
        &state,
        "/v2/json/syncStations/ParkingStation",
        json!([{"id": "1", "name": "P1", "origin": "TEST", "latitude": 46.5, "longitude": 11.35}]),
    )
    .await;
    let rec = |t: &str, v: i64| json!({"timestamp": ms(t), "value": v, "period": 600});
    // Two pushes two years apart, then one reaching both an old and a new month: the
    // latter's old record is older than the series' latest value and is skipped (the
    // writer's rule), its new one lands.
    for data in [
        json!([
            rec("2023-03-10T08:00:00Z", 11),
            rec("2023-03-31T23:59:59.999Z", 12)
        ]),
        json!([rec("2025-03-10T08:00:00Z", 21)]),
        json!([
            rec("2024-01-01T00:00:00Z", 99),
            rec("2025-04-01T00:00:00Z", 22)
        ]),
    ] {
        write(
            &state,
            "/v2/json/pushRecords/ParkingStation",
            json!({"name": "(default)", "branch": {"1": {"branch": {"free": {"data": data}}}}}),
        )
        .await;
    }
    assert_eq!(
        values(&state, "2023-03-01", "2023-04-01").await,
        [json!(11), json!(12)]
    );
    assert_eq!(
        values(&state, "2025-03-01", "2025-05-01").await,
        [json!(21), json!(22)]
    );
    assert_eq!(
        values(&state, "2023-12-01", "2024-02-01").await,
        Vec::<Value>::new()
    );
    assert_eq!(values(&state, "2020-01-01", "2030-01-01").await.len(), 4);

    // Keeping twelve months at 2025-04-20: March 2023 goes, 2025 stays.
    let done = store
        .timeseries()
        .maintain_history(
            ms("2025-04-20T12:00:00Z"),
            HistoryPolicy {
                months_ahead: 3,
                retention_months: 12,
            },
        )
        .await
        .unwrap();
    let removed = done.dropped.len() as u64 + done.deleted_rows;
    assert!(removed > 0, "{done:?}");
    assert_eq!(
        values(&state, "2023-03-01", "2023-04-01").await,
        Vec::<Value>::new()
    );
    assert_eq!(
        values(&state, "2020-01-01", "2030-01-01").await,
        [json!(21), json!(22)]
    );
    let (s, latest) = call(
        &state,
        "GET",
        "/v2/flat/ParkingStation/free/latest?select=mvalue",
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let latest = latest["data"].as_array().unwrap();
    assert_eq!(
        (latest.len(), &latest[0]["mvalue"]),
        (1, &json!(22)),
        "{latest:?}"
    );
}
