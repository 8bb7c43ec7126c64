//! `GET /v2/apispec`: a hand-built OpenAPI 3 description of the read routes; the query
//! parameters come from `params::QUERY_PARAMETERS`, the description of the parsed query.
//!
//! Owns the document's shape only; must not describe a parameter the parser lacks.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::TimeseriesState;

pub async fn apispec(State(st): State<TimeseriesState>) -> Json<Value> {
    let server = st.config.base_url.trim_end_matches("/v2").to_string();
    let p = |name: &str, desc: &str, schema: Value| json!({"name": name, "in": "query", "required": false, "description": desc, "schema": schema});
    // The parameters `TsQueryParams` reads, described once in `params.rs`.
    let params: Vec<Value> = crate::params::QUERY_PARAMETERS
        .iter()
        .map(|d| {
            let mut schema = json!({"type": d.schema_type});
            if let Some(default) = d.default {
                schema["default"] = serde_json::from_str(default).expect("a JSON default");
            }
            p(d.name, d.description, schema)
        })
        .collect();
    let seg = |name: &str, desc: &str| json!({"name": name, "in": "path", "required": true, "description": desc, "schema": {"type": "string"}});
    let repr = seg(
        "representation",
        "flat or tree, optionally with node (default), edge or event, comma-separated in any order",
    );
    let st_ = seg("stationTypes", "Comma-separated station types, * = all");
    let dt = seg("dataTypes", "Comma-separated data types, * = all");
    let from = seg(
        "from",
        "yyyy-MM-dd[THH[:mm[:ss[.SSS]]]][offset|zone], included",
    );
    let to = seg("to", "Same format, excluded (half-open range)");
    let ok = json!({"200": {"description": "Envelope {offset, limit, data}"}, "400": {"description": "{message, timestamp, code, error, description?, info?}"}});
    let op = |summary: &str, path_params: Vec<Value>| {
        let mut all = path_params;
        all.extend(params.iter().cloned());
        json!({"get": {"summary": summary, "parameters": all, "responses": ok}})
    };
    Json(json!({
        "openapi": "3.0.3",
        "info": {"title": "Hub Time Series API", "version": "2", "description": "Mobility stations, data types, measurements, edges and events. Closed measurements need a bearer token with a reading role."},
        "servers": [{"url": server}],
        "paths": {
            "/v2": {"get": {"summary": "Entry points", "responses": {"200": {"description": "List of representations"}}}},
            "/v2/{representation}": {"get": {"summary": "Station types, edge types or event origins", "parameters": [repr], "responses": ok}},
            "/v2/{representation}/{stationTypes}": op("Stations (or edges, events)", vec![repr.clone(), st_.clone()]),
            "/v2/{representation}/{stationTypes}/{dataTypes}": op("Stations with their data types", vec![repr.clone(), st_.clone(), dt.clone()]),
            "/v2/{representation}/{stationTypes}/{dataTypes}/latest": op("Latest measurement per time series", vec![repr.clone(), st_.clone(), dt.clone()]),
            "/v2/{representation}/{stationTypes}/{dataTypes}/{from}/{to}": op("Measurements in [from, to)", vec![repr.clone(), st_.clone(), dt, from.clone(), to.clone()]),
            "/v2/{representation}/{stationTypes}/metadata/{from}/{to}": op("Station metadata history (deprecated)", vec![repr, st_, from, to]),
        },
        // Optional bearer authentication (anonymous callers see open data): lets the API
        // docs' "Authorize" send a token from the token service with "Try it out".
        "components": {"securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "Access token of the token service (password or client_credentials grant); without one, closed measurements are left out."}}},
        "security": [{}, {"bearerAuth": []}],
    }))
}
