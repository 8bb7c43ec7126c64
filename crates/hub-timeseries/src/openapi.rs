//! `GET /v2/apispec`: a hand-built OpenAPI 3 description of the read routes; the query
//! parameters come from `params::QUERY_PARAMETERS`, the description of the parsed query,
//! with the parsers' own limits; the error answers are described as they are sent (the
//! reference's `{message, timestamp, code, error}` body from this API, problem+json from
//! the server's edge and the bearer check).
//!
//! Owns the document's shape only; must not describe a parameter the parser lacks.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::TimeseriesState;

/// Spellings of the `representation` segment for `dataset` (`node`, `edge`, `event`;
/// None: all): the shape alone means stations. The parser accepts the same words in any
/// order, case and spacing.
fn representations(dataset: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for shape in ["flat", "tree"] {
        if matches!(dataset, None | Some("node")) {
            out.push(shape.to_string());
        }
        for d in ["node", "edge", "event"] {
            if dataset.is_none_or(|wanted| wanted == d) {
                out.push(format!("{shape},{d}"));
                out.push(format!("{d},{shape}"));
            }
        }
    }
    out
}

/// The query parameters of level ≥ 2 routes.
fn query_parameters() -> Vec<Value> {
    crate::params::QUERY_PARAMETERS
        .iter()
        .map(|d| {
            let mut schema = json!({"type": d.schema_type});
            if d.schema_type == "integer" {
                // Parsed as a 64-bit integer.
                schema["format"] = json!("int64");
                schema["minimum"] = json!(i64::MIN);
                schema["maximum"] = json!(i64::MAX);
            }
            if let Some(default) = d.default {
                schema["default"] = serde_json::from_str(default).expect("a JSON default");
            }
            if let Some(max) = d.max_length {
                schema["maxLength"] = json!(max);
            }
            if !d.values.is_empty() {
                schema["enum"] = json!(d.values);
            }
            json!({"name": d.name, "in": "query", "required": false, "description": d.description, "schema": schema})
        })
        .collect()
}

/// The answers every read can give besides 200.
fn error_responses(with_parameters: bool) -> Value {
    let own = |description: &str| json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    let edge = |description: &str| json!({"description": description, "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}});
    let mut responses = json!({
        "401": edge("The bearer token is not valid (without a token the caller is anonymous)"),
        "414": {"description": "The request target (encoded) is longer than the server accepts (16 KiB); a problem+json body, or none when the HTTP layer refuses it before the server reads it"},
        "431": {"description": "The request headers are larger than the server accepts; a problem+json body, or none when the HTTP layer refuses them before the server reads them"},
        "429": edge("Rate limit reached; Retry-After says when to come back"),
        "503": {"description": "Overloaded or the store is unavailable; Retry-After says when to come back", "content": {
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}},
            "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
        }},
    });
    if with_parameters {
        responses["400"] = own("A path segment or parameter was not accepted");
        responses["404"] = own("No such route for this representation (edges and events have fewer levels than stations)");
    }
    responses
}

pub async fn apispec(State(st): State<TimeseriesState>) -> Json<Value> {
    let server = st.config.base_url.trim_end_matches("/v2").to_string();
    Json(document(&server))
}

/// The whole document, for a server at `server`.
pub fn document(server: &str) -> Value {
    let params = query_parameters();
    let seg = |name: &str, desc: &str, schema: Value| json!({"name": name, "in": "path", "required": true, "description": desc, "schema": schema});
    let repr_of = |dataset: Option<&str>| {
        seg(
            "representation",
            "flat or tree, optionally with node (default), edge or event, comma-separated in any order",
            json!({"type": "string", "enum": representations(dataset)}),
        )
    };
    let repr = repr_of(Some("node"));
    let types = |name: &str, desc: &str| {
        seg(
            name,
            desc,
            json!({"type": "string", "minLength": 1, "pattern": "^[^/]+$"}),
        )
    };
    let st_ = types("stationTypes", "Comma-separated station types, * = all");
    let dt = types("dataTypes", "Comma-separated data types, * = all");
    let time =
        |name: &str, desc: &str| seg(name, desc, json!({"type": "string", "format": "date"}));
    let from = time(
        "from",
        "yyyy-MM-dd[THH[:mm[:ss[.SSS]]]][offset|zone], included",
    );
    let to = time("to", "Same format, excluded (half-open range)");
    let envelope = json!({"description": "Envelope {offset, limit, data}", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Envelope"}}}});
    let with = |ok: &Value, with_parameters: bool| {
        let mut responses = error_responses(with_parameters);
        responses["200"] = ok.clone();
        responses
    };
    // `format` only where GeoJSON is offered (a schema-valid `format=geojson` on a tree
    // is rejected, so those operations do not document it).
    let op = |summary: &str, path_params: Vec<Value>| {
        let mut all = path_params;
        all.extend(params.iter().filter(|p| p["name"] != "format").cloned());
        json!({"get": {"summary": summary, "parameters": all, "responses": with(&envelope, true), "security": [{}, {"bearer": []}]}})
    };
    // Flat stations, latest measurements and edges also answer GeoJSON (`format=geojson`
    // or `Accept: application/geo+json`): they get paths of their own (a literal `flat`
    // matches before the `{representation}` template), as trees answer JSON only.
    let mut geo_envelope = envelope.clone();
    geo_envelope["content"][crate::geojson::GEOJSON] =
        json!({"schema": {"$ref": "#/components/schemas/FeatureCollection"}});
    let geo_op = |summary: &str, path_params: Vec<Value>| {
        let mut operation = op(summary, path_params);
        operation["get"]["responses"]["200"] = geo_envelope.clone();
        if let Some(list) = operation["get"]["parameters"].as_array_mut() {
            list.extend(params.iter().filter(|p| p["name"] == "format").cloned());
        }
        operation
    };
    let listing =
        json!({"description": "The list", "content": {"application/json": {"schema": {}}}});
    let origins = types("origins", "Comma-separated event origins, * = all");
    let edge_types = types("edgeTypes", "Comma-separated edge types, * = all");
    let mut paths = json!({
        "/v2": {"get": {"summary": "Entry points", "responses": with(&listing, false)}},
        "/v2/{representation}": {"get": {"summary": "Station types, edge types or event origins", "parameters": [repr_of(None)], "responses": with(&listing, true), "security": [{}, {"bearer": []}]}},
        "/v2/{representation}/{stationTypes}": op("Stations", vec![repr.clone(), st_.clone()]),
        "/v2/flat/{stationTypes}": geo_op("Stations, flat: JSON or GeoJSON", vec![st_.clone()]),
        "/v2/flat/{stationTypes}/{dataTypes}/latest": geo_op("Latest measurement per time series, flat: JSON or GeoJSON", vec![st_.clone(), dt.clone()]),
        "/v2/{representation}/{stationTypes}/{dataTypes}": op("Stations with their data types", vec![repr.clone(), st_.clone(), dt.clone()]),
        "/v2/{representation}/{stationTypes}/{dataTypes}/latest": op("Latest measurement per time series", vec![repr.clone(), st_.clone(), dt.clone()]),
        "/v2/{representation}/{stationTypes}/{dataTypes}/{from}/{to}": op("Measurements in [from, to)", vec![repr.clone(), st_.clone(), dt, from.clone(), to.clone()]),
        "/v2/{representation}/{stationTypes}/metadata/{from}/{to}": op("Station metadata history (deprecated)", vec![repr, st_, from.clone(), to.clone()]),
    });
    // Edges and events have routes of their own shape: one path per representation.
    for shape in ["flat", "tree"] {
        let edges = format!("/v2/{shape},edge/{{edgeTypes}}");
        paths[edges] = if shape == "flat" {
            geo_op("Edges", vec![edge_types.clone()])
        } else {
            op("Edges", vec![edge_types.clone()])
        };
        let events = format!("/v2/{shape},event/{{origins}}");
        paths[events.clone()] = op("Events", vec![origins.clone()]);
        paths[format!("{events}/latest")] =
            op("Latest version of each event", vec![origins.clone()]);
        paths[format!("{events}/{{at}}")] = op(
            "Events valid at a moment",
            vec![
                origins.clone(),
                time("at", "yyyy-MM-dd[THH[:mm[:ss[.SSS]]]][offset|zone]"),
            ],
        );
        paths[format!("{events}/{{from}}/{{to}}")] = op(
            "Events valid in [from, to)",
            vec![origins.clone(), from.clone(), to.clone()],
        );
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Hub Time Series API", "version": "2", "description": "Mobility stations, data types, measurements, edges and events. Closed measurements need a bearer token with a reading role."},
        "servers": [{"url": server}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "An access token of the token service; reading roles unlock closed measurements"}},
            "schemas": {
                "FeatureCollection": {"type": "object", "required": ["type", "features"], "properties": {
                    "type": {"type": "string", "enum": ["FeatureCollection"]}, "features": {"type": "array", "items": {"type": "object"}},
                    "offset": {"type": "integer"}, "limit": {"type": "integer"}, "numberReturned": {"type": "integer"}
                }},
                "Envelope": {"type": "object", "required": ["offset", "data"], "properties": {
                    "offset": {"type": "integer"}, "limit": {"type": "integer"}, "data": {}
                }},
                "Error": {"type": "object", "required": ["message", "timestamp", "code", "error"], "properties": {
                    "message": {"type": "string"}, "timestamp": {"type": "string"}, "code": {"type": "integer"},
                    "error": {"type": "string"}, "description": {"type": "string"}, "info": {}
                }},
                "Problem": {"type": "object", "required": ["type", "title", "status"], "properties": {
                    "type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
                    "detail": {"type": "string"}, "parameter": {"type": "string"}, "position": {"type": "integer"}
                }}
            }
        },
        "paths": paths,
    })
}
