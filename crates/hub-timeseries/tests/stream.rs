//! Large answers: a flat answer longer than one store batch is streamed and equals the
//! same rows read page by page; a tree answer over `max_tree_rows` is a 400 naming the
//! limit. The real router against a real store (SQLite, or PostgreSQL with
//! `HUB_TEST_DATABASE`).

mod support;

use axum::http::{header, StatusCode};
use hub_store::Store;
use hub_timeseries::{TimeseriesConfig, TimeseriesState};
use serde_json::{json, Value};

const T0: i64 = 1_705_312_800_000; // 2024-01-15T10:00:00Z
const RECORDS: i64 = 1_234; // more than two store batches
const TREE_LIMIT: usize = 1_000;

async fn call(
    state: &TimeseriesState,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Option<String>, Vec<u8>) {
    call_as(state, method, uri, body, Some(&["WRITER"])).await
}

/// `roles: None` calls anonymously.
/// A writer request that must succeed.
async fn post(state: &TimeseriesState, path: &str, body: Value) {
    let (s, _, b) = call(state, "POST", path, Some(body)).await;
    assert!(
        s.is_success(),
        "{path}: {s} {}",
        String::from_utf8_lossy(&b)
    );
}

async fn call_as(
    state: &TimeseriesState,
    method: &str,
    uri: &str,
    body: Option<Value>,
    roles: Option<&[&str]>,
) -> (StatusCode, Option<String>, Vec<u8>) {
    let (status, headers, bytes) = support::send(state, method, uri, body, roles).await;
    let length = headers
        .get(header::CONTENT_LENGTH)
        .map(|v| v.to_str().unwrap().to_string());
    (status, length, bytes)
}

#[tokio::test]
async fn large_flat_answers_are_streamed_and_equal_paged_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let config = TimeseriesConfig {
        max_tree_rows: TREE_LIMIT,
        ..Default::default()
    };
    let state = TimeseriesState::new(store.timeseries(), config);
    post(
        &state,
        "/v2/json/syncDataTypes",
        json!([{"name": "free", "description": "free"}]),
    )
    .await;
    post(
        &state,
        "/v2/json/syncStations/ParkingStation",
        json!([{"id": "103", "name": "P03", "origin": "FAMAS", "latitude": 46.49, "longitude": 11.35}]),
    )
    .await;
    let data: Vec<Value> = (0..RECORDS)
        .map(|i| json!({"timestamp": T0 + i * 60_000, "value": i as f64 / 2.0, "period": 60}))
        .collect();
    post(
        &state,
        "/v2/json/pushRecords/ParkingStation",
        json!({"name": "(default)", "data": [], "branch": {"103": {"branch": {"free": {"data": data}}}}}),
    )
    .await;
    let range = "2024-01-15/2024-01-17";

    let (s, length, whole) = call(
        &state,
        "GET",
        &format!("/v2/flat/ParkingStation/free/{range}?limit=-1"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&whole));
    assert_eq!(length, None, "an answer of {RECORDS} rows is streamed");
    let whole: Value = serde_json::from_slice(&whole).expect("the streamed answer is JSON");
    assert_eq!(whole["offset"], json!(0));
    assert_eq!(whole["limit"], json!(-1));
    let rows = whole["data"].as_array().unwrap();
    assert_eq!(rows.len() as i64, RECORDS);

    // The same rows page by page (each page small enough to be answered in one piece).
    let mut paged = Vec::new();
    for offset in (0..RECORDS).step_by(300) {
        let (s, length, page) = call(
            &state,
            "GET",
            &format!("/v2/flat/ParkingStation/free/{range}?limit=300&offset={offset}"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::OK);
        assert!(length.is_some(), "a page of 300 rows comes whole");
        let page: Value = serde_json::from_slice(&page).unwrap();
        paged.extend(page["data"].as_array().unwrap().iter().cloned());
    }
    assert_eq!(rows, &paged, "streamed rows equal the paged rows");
    let values: Vec<f64> = rows.iter().map(|r| r["mvalue"].as_f64().unwrap()).collect();
    assert_eq!(
        values,
        (0..RECORDS).map(|i| i as f64 / 2.0).collect::<Vec<_>>()
    );

    // Trees are built in memory: over the limit is a 400 naming it, under it an answer.
    let (s, _, body) = call(
        &state,
        "GET",
        &format!("/v2/tree/ParkingStation/free/{range}?limit=-1"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.contains(&format!("more than {TREE_LIMIT} rows")),
        "{text}"
    );
    assert!(text.contains("flat representation"), "{text}");
    let (s, _, body) = call(
        &state,
        "GET",
        &format!("/v2/tree/ParkingStation/free/{range}?limit={TREE_LIMIT}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let tree: Value = serde_json::from_slice(&body).unwrap();
    let measurements =
        &tree["data"]["ParkingStation"]["stations"]["103"]["sdatatypes"]["free"]["tmeasurements"];
    assert_eq!(measurements.as_array().map(Vec::len), Some(TREE_LIMIT));
}

/// Rows of several series interleaved in time, streamed: every row carries its own
/// station's code, name and metadata and its own data type (the store shares repeated
/// texts between rows, the writer reuses their JSON), in time order then station code,
/// and closed data types stay out of an anonymous answer.
#[tokio::test]
async fn streamed_rows_of_interleaved_series_keep_their_own_station_and_type() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let state = support::state_opening(&store, &["ParkingStation"], &["free"]);
    post(
        &state,
        "/v2/json/syncDataTypes",
        json!([{"name": "free", "unit": "spaces"}, {"name": "occupied", "unit": "cars"}]),
    )
    .await;
    // Codes, names and metadata share prefixes, so a text kept from another row would
    // show.
    let stations = [
        ("A1", "Alpha", "Bolzano"),
        ("A10", "Alpha 10", "Bolzano Sud"),
        ("B2", "Beta", "Merano"),
    ];
    post(
        &state,
        "/v2/json/syncStations/ParkingStation",
        Value::Array(
            stations
                .iter()
                .map(|(code, name, city)| json!({"id": code, "name": name, "origin": "FAMAS", "latitude": 46.49, "longitude": 11.35, "metaData": {"city": city}}))
                .collect(),
        ),
    )
    .await;
    const STEPS: i64 = 400; // 3 stations x 400 = 1,200 open rows, more than two batches
    let value = |station: usize, dtype: usize, i: i64| {
        (station * 10_000 + dtype * 1_000) as f64 + i as f64 / 4.0
    };
    let mut branch = serde_json::Map::new();
    for (k, (code, _, _)) in stations.iter().enumerate() {
        let series = |dtype: usize| {
            let data: Vec<Value> = (0..STEPS)
                .map(|i| json!({"timestamp": T0 + i * 60_000, "value": value(k, dtype, i), "period": 60}))
                .collect();
            json!({"data": data})
        };
        branch.insert(
            code.to_string(),
            json!({"branch": {"free": series(0), "occupied": series(1)}}),
        );
    }
    post(
        &state,
        "/v2/json/pushRecords/ParkingStation",
        json!({"name": "(default)", "data": [], "branch": branch}),
    )
    .await;

    let uri = "/v2/flat/ParkingStation/*/2024-01-15/2024-01-17?limit=-1";
    for (roles, types) in [
        (None, &["free"][..]),
        (Some(&["ADMIN"][..]), &["free", "occupied"][..]),
    ] {
        let (s, length, body) = call_as(&state, "GET", uri, None, roles).await;
        assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        assert_eq!(length, None, "the answer is streamed");
        let body: Value = serde_json::from_slice(&body).expect("the streamed answer is JSON");
        let rows = body["data"].as_array().unwrap();
        let mut expected = Vec::new();
        for i in 0..STEPS {
            // Station codes sort as text: A1, A10, B2.
            for (k, (code, name, city)) in stations.iter().enumerate() {
                for dtype in types {
                    let (unit, dindex) = if *dtype == "free" {
                        ("spaces", 0)
                    } else {
                        ("cars", 1)
                    };
                    expected.push((
                        i,
                        code.to_string(),
                        name.to_string(),
                        city.to_string(),
                        dtype.to_string(),
                        unit.to_string(),
                        value(k, dindex, i),
                    ));
                }
            }
        }
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                let t = chrono::NaiveDateTime::parse_from_str(
                    &r["mvalidtime"].as_str().unwrap()[..19],
                    "%Y-%m-%d %H:%M:%S",
                )
                .unwrap()
                .and_utc()
                .timestamp_millis();
                (
                    (t - T0) / 60_000,
                    r["scode"].as_str().unwrap().to_string(),
                    r["sname"].as_str().unwrap().to_string(),
                    r["smetadata"]["city"].as_str().unwrap().to_string(),
                    r["tname"].as_str().unwrap().to_string(),
                    r["tunit"].as_str().unwrap().to_string(),
                    r["mvalue"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got.len(), expected.len(), "rows for {roles:?}");
        assert_eq!(got, expected, "rows for {roles:?}");
    }
}
