//! Ingestion benchmark: records/s through the writer endpoint (`POST
//! /v2/json/pushRecords/{type}`: JSON parsing, validation, one transaction per push)
//! into a fresh SQLite store; also the demo loader's rate. Prints figures.
//! With `HUB_DATABASE` set to a PostgreSQL server URL, the stores are fresh databases
//! there instead (`hub_ts_ingest_bench_1`, `_2`, replaced on every run).
//!
//!   cargo run --release -p hub-timeseries --example ts_ingest_bench
//!   HUB_DATABASE=postgres://postgres@127.0.0.1:55432/postgres cargo run --release -p hub-timeseries --example ts_ingest_bench

use std::time::Instant;

use axum::body::Body;
use axum::http::Request;
use hub_model::Principal;
use hub_store::Store;
use hub_timeseries::{router, TimeseriesConfig, TimeseriesState};
use serde_json::{json, Map, Value};
use tower::ServiceExt;

/// A fresh store: SQLite in `dir`, or database `hub_ts_ingest_bench_{n}` on the
/// PostgreSQL server of `HUB_DATABASE`.
fn fresh_store(dir: &std::path::Path, n: u32) -> Store {
    match std::env::var("HUB_DATABASE") {
        Ok(url) if !url.trim().is_empty() => {
            let db = hub_store::postgres::create_database(
                url.trim(),
                &format!("hub_ts_ingest_bench_{n}"),
                true,
            )
            .expect("create database");
            Store::open_postgres(&db, None).expect("open PostgreSQL store")
        }
        _ => Store::open_sqlite(dir).expect("open SQLite store"),
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_store(dir.path(), 1);
    println!("backend: {}", store.backend_name());
    let state = TimeseriesState::new(store.timeseries(), TimeseriesConfig::default());
    let app = router(state);
    let post = |uri: String, body: Value| {
        let app = app.clone();
        async move {
            let mut req = Request::post(uri)
                .header("content-type", "application/json")
                .body(Body::from(body.to_string()))
                .unwrap();
            req.extensions_mut()
                .insert(Principal::with_roles("bench", &["WRITER"]));
            let resp = app.oneshot(req).await.unwrap();
            assert!(resp.status().is_success(), "{}", resp.status());
        }
    };
    let stations = 1000;
    post(
        "/v2/json/syncDataTypes".into(),
        json!([{"name": "free"}, {"name": "occupied"}]),
    )
    .await;
    let dtos: Vec<Value> = (0..stations)
        .map(|i| json!({"id": format!("S{i}"), "name": format!("station {i}"), "origin": "BENCH", "latitude": 46.5, "longitude": 11.3}))
        .collect();
    post(
        "/v2/json/syncStations/ParkingStation".into(),
        Value::Array(dtos),
    )
    .await;
    let t0 = 1_700_000_000_000i64;
    let per_push_steps = 10; // 1000 stations x 2 types x 10 steps = 20,000 records per push
    let pushes = 25;
    let mut total = 0u64;
    let started = Instant::now();
    for p in 0..pushes {
        let mut root = Map::new();
        for i in 0..stations {
            let mut types = Map::new();
            for t in ["free", "occupied"] {
                let recs: Vec<Value> = (0..per_push_steps)
                    .map(|k| json!({"timestamp": t0 + ((p * per_push_steps + k) as i64) * 300_000, "value": (i * k) as f64 * 0.5, "period": 300}))
                    .collect();
                total += recs.len() as u64;
                types.insert(t.into(), Value::Array(recs));
            }
            root.insert(format!("S{i}"), Value::Object(types));
        }
        post(
            "/v2/json/pushRecords/ParkingStation".into(),
            Value::Object(root),
        )
        .await;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "writer API: {total} records in {secs:.2} s = {:.0} records/s ({} pushes of {} records)",
        total as f64 / secs,
        pushes,
        total / pushes as u64
    );

    let dir2 = tempfile::tempdir().unwrap();
    let store2 = fresh_store(dir2.path(), 2);
    let started = Instant::now();
    let sum = hub_timeseries::load_demo(&*store2.timeseries(), 1, chrono::Utc::now())
        .await
        .unwrap();
    let secs = started.elapsed().as_secs_f64();
    println!(
        "demo loader (scale 1): {} records in {secs:.2} s = {:.0} records/s",
        sum.records,
        sum.records as f64 / secs
    );
}
