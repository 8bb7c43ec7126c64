//! # hub-timeseries
//!
//! The Time Series API (`/v2/...`, the reference's "Ninja" mobility API) and its writer
//! (ingestion) endpoints: route dispatch by segment count, parameter parsing, closed-data
//! rules per role, flat and tree response builders, GeoJSON of flat answers (and flat
//! rows for the OGC station collections), the reference's error bodies, the OpenAPI
//! description, imports from JSON files, the demo mobility data and the volume set
//! (`volume`, many series over a year, for benchmarks).
//!
//! Owns: HTTP shapes of `/v2` and `/v2/json/...`. Must not: build SQL (that is
//! `hub_query::timeseries`), touch connections (that is `hub_store`), or verify tokens
//! (the auth layer puts a `hub_model::Principal` into the request extensions; absent =
//! anonymous; its roles are matched with `Principal::has_series_role`).
//!
//! Wiring: `hub_timeseries::router(TimeseriesState::new(store.timeseries(), config))`,
//! nested at the server root (routes already start with `/v2`). The state holds only the
//! Time Series repository (`Arc<dyn TimeSeriesRepo>`), not the whole store.

mod access;
pub mod demo;
mod error;
mod flat_writer;
pub mod geojson;
mod import;
mod openapi;
mod params;
mod read;
mod shape;
pub mod volume;
mod writer;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;
use hub_query::timeseries::AccessRule;
use hub_store::timeseries::TimeSeriesRepo;
use serde::{Deserialize, Serialize};

pub use demo::load_demo;
pub use error::{problem_response, ApiError};
pub use hub_query::timeseries::Route;
pub use import::{import_file, import_value, ImportError, ImportSummary};
pub use volume::{load_volume, VolumeOptions, VolumeSummary};

/// Configuration of the Time Series API. Every field has a default; the defaults match
/// the demo data (its closed series are the A22 traffic sensors and the meteo
/// precipitation series).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimeseriesConfig {
    /// Public base of the API used in `self` links, without trailing slash
    /// (default `http://127.0.0.1:8080/v2`; the binary sets it from `mobility_base_url`).
    pub base_url: String,
    /// Open-data rules: measurements matching any of them are visible to everyone
    /// (the reference's GUEST rules). A measurement matching none is closed.
    pub open_rules: Vec<AccessRule>,
    /// Extra rules per role name: a caller with the role also sees what they match.
    pub role_rules: BTreeMap<String, Vec<AccessRule>>,
    /// A caller with this role sees every measurement (default `ADMIN`).
    pub admin_role: String,
    /// Role required by the writer endpoints `/v2/json/...` (default `WRITER`; the admin
    /// role is accepted too).
    pub writer_role: String,
    /// Largest number of rows a tree response is built from; more is a 400 asking for a
    /// narrower request (default 100,000: a tree is built in memory, unlike a flat answer,
    /// which is streamed; a week of the demo's whole history, about 500,000 rows, made
    /// about 380 MB per tree request).
    pub max_tree_rows: usize,
}

impl Default for TimeseriesConfig {
    fn default() -> Self {
        let types = |t: &[&str]| AccessRule {
            station_types: t.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let mut open = vec![types(&[
            "ParkingStation",
            "EChargingStation",
            "EChargingPlug",
            "BikesharingStation",
            "LinkStation",
        ])];
        open.push(AccessRule {
            station_types: vec!["MeteoStation".into()],
            data_types: vec![
                "air-temperature".into(),
                "air-humidity".into(),
                "wind-speed".into(),
                "weather-report".into(),
            ],
            ..Default::default()
        });
        open.push(AccessRule {
            station_types: vec!["TrafficSensor".into()],
            origins: vec!["FAMAS-traffic".into()],
            ..Default::default()
        });
        let mut roles = BTreeMap::new();
        roles.insert(
            "A22".to_string(),
            vec![AccessRule {
                origins: vec!["A22".into()],
                ..Default::default()
            }],
        );
        roles.insert(
            "METEO".to_string(),
            vec![AccessRule {
                station_types: vec!["MeteoStation".into()],
                ..Default::default()
            }],
        );
        TimeseriesConfig {
            base_url: "http://127.0.0.1:8080/v2".into(),
            open_rules: open,
            role_rules: roles,
            admin_role: "ADMIN".into(),
            writer_role: "WRITER".into(),
            max_tree_rows: 100_000,
        }
    }
}

/// Shared state of the routes. Cheap to clone.
#[derive(Clone)]
pub struct TimeseriesState {
    pub store: Arc<dyn TimeSeriesRepo>,
    pub config: Arc<TimeseriesConfig>,
}

impl TimeseriesState {
    pub fn new(store: Arc<dyn TimeSeriesRepo>, config: TimeseriesConfig) -> Self {
        TimeseriesState {
            store,
            config: Arc::new(config),
        }
    }
}

/// All routes of the Time Series API and its writer, under `/v2`.
pub fn router(state: TimeseriesState) -> Router {
    Router::new()
        .route("/v2", get(read::root))
        .route("/v2/", get(read::root))
        .route("/v2/apispec", get(openapi::apispec))
        .route("/v2/json/provenance", post(writer::provenance))
        .route("/v2/json/syncStations/{stype}", post(writer::sync_stations))
        .route("/v2/json/syncDataTypes", post(writer::sync_data_types))
        .route("/v2/json/pushRecords", post(writer::push_records_all))
        .route("/v2/json/pushRecords/{stype}", post(writer::push_records))
        .route(
            "/v2/json/getDateOfLastRecord/{stype}",
            get(writer::date_of_last_record),
        )
        .route("/v2/{*rest}", get(read::dispatch))
        .with_state(state)
}
