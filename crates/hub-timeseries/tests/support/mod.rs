//! The Time Series API tests' shared parts: one request through the real router, and a state
//! with some data open to everyone.
// Each test file compiles this module and uses a part of it.
#![allow(dead_code)]

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use hub_model::Principal;
use hub_query::timeseries::AccessRule;
use hub_store::Store;
use hub_timeseries::{router, TimeseriesConfig, TimeseriesState};
use serde_json::Value;
use tower::ServiceExt;

/// Sends `method uri`, with `body` as JSON when given, as a caller holding `roles`
/// (`None`: anonymous); answers the status, headers and body bytes.
pub async fn send(
    state: &TimeseriesState,
    method: &str,
    uri: &str,
    body: Option<Value>,
    roles: Option<&[&str]>,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut req = Request::builder().method(method).uri(uri);
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let mut req = req
        .body(
            body.map(|b| Body::from(b.to_string()))
                .unwrap_or_else(Body::empty),
        )
        .unwrap();
    if let Some(roles) = roles {
        req.extensions_mut()
            .insert(Principal::with_roles("test", roles));
    }
    let resp = router(state.clone()).oneshot(req).await.unwrap();
    let (status, headers) = (resp.status(), resp.headers().clone());
    let bytes = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .unwrap()
        .to_bytes();
    (status, headers, bytes.to_vec())
}

/// The API over `store` with the data types `data_types` of stations of
/// `station_types` open to everyone (everything else closed).
pub fn state_opening(
    store: &Store,
    station_types: &[&str],
    data_types: &[&str],
) -> TimeseriesState {
    let config = TimeseriesConfig {
        open_rules: vec![AccessRule {
            station_types: station_types.iter().map(|s| s.to_string()).collect(),
            data_types: data_types.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }],
        ..Default::default()
    };
    TimeseriesState::new(store.timeseries(), config)
}

/// A store with the data type `temp` and a meteo station of each code (origin `O`, one
/// hundredth of a degree apart), no values yet.
pub async fn meteo_stations(codes: &[String]) -> (tempfile::TempDir, Store) {
    use hub_store::timeseries::{DataTypeInput, StationInput, SyncFlags};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let ts = store.timeseries();
    ts.sync_data_types(vec![DataTypeInput {
        name: "temp".into(),
        unit: Some("°C".into()),
        ..Default::default()
    }])
    .await
    .unwrap();
    let stations = codes
        .iter()
        .enumerate()
        .map(|(n, code)| StationInput {
            code: code.clone(),
            name: format!("Meteo {n}"),
            origin: Some("O".into()),
            coordinate: Some((11.0 + n as f64 / 100.0, 46.5)),
            ..Default::default()
        })
        .collect();
    ts.sync_stations("MeteoStation".into(), stations, SyncFlags::default())
        .await
        .unwrap();
    (dir, store)
}
