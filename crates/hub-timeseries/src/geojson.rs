//! GeoJSON of the flat answers (`format=geojson` or `Accept: application/geo+json`) and
//! flat rows for other APIs (the OGC station collections read stations and their latest
//! measurements through [`flat_rows`], so the closed-data rules stay in one place).
//!
//! A GeoJSON answer is built in memory (a FeatureCollection's features are written after
//! its head, like a flat answer, but the rows are shaped as values first), so it is capped
//! at `max_tree_rows` rows like a tree.

use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use hub_model::Principal;
use hub_query::timeseries::{compile_query, Route, TsQuery, Where};
use serde_json::{json, Map, Value};

use crate::access::rules_for;
use crate::params::Zone;
use crate::{shape, ApiError, TimeseriesState};

pub const GEOJSON: &str = "application/geo+json";

/// Whether the caller asked for GeoJSON: `format=geojson` wins over `Accept`.
pub fn wants_geojson(format: Option<&str>, headers: &HeaderMap) -> Result<bool, ApiError> {
    match format.map(|f| f.trim().to_ascii_lowercase()) {
        Some(f) if f == "geojson" => Ok(true),
        Some(f) if f == "json" => Ok(false),
        Some(f) => Err(ApiError::bad(format!(
            "Parameter 'format' must be json or geojson, not '{f}'"
        ))),
        None => Ok(headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.to_ascii_lowercase().contains(GEOJSON))),
    }
}

type Rows = (
    Vec<hub_query::timeseries::OutColumn>,
    Vec<Vec<hub_store::timeseries::Cell>>,
);

/// Rows of a compiled query, at most `max` (more is a 400 asking for a narrower request).
pub(crate) async fn collect_rows(
    st: &TimeseriesState,
    compiled: hub_query::timeseries::CompiledTs,
    max: usize,
) -> Result<Rows, ApiError> {
    let columns = compiled.columns.clone();
    let mut batches = st.store.query_batches(compiled);
    let mut rows = Vec::new();
    while let Some(batch) = batches.next().await {
        rows.extend(batch?);
        if rows.len() > max {
            return Err(ApiError::bad(format!(
                "GEOJSON: Response of more than {max} rows. Please rephrase your request: use WHERE, LIMIT with OFFSET, or the JSON answer (it is streamed, of any size)."
            )));
        }
    }
    Ok((columns, rows))
}

/// The flat rows of `route` over `types` (and `data_types`, and a parsed `where`)
/// exactly as the flat JSON answer shapes them for `principal` (times in UTC, no nulls),
/// at most `max` rows.
pub async fn flat_rows(
    st: &TimeseriesState,
    principal: Option<&Principal>,
    route: Route,
    types: Option<Vec<String>>,
    data_types: Option<Vec<String>>,
    filter: Option<Where>,
    max: usize,
) -> Result<Vec<Map<String, Value>>, ApiError> {
    let q = TsQuery {
        route,
        tree: false,
        types,
        data_types,
        filter,
        select: None,
        distinct: true,
        limit: 0,
        offset: 0,
        access: rules_for(&st.config, principal),
    };
    let compiled = compile_query(&q, st.store.dialect())?;
    let (columns, rows) = collect_rows(st, compiled, max).await?;
    Ok(objects(shape::flat(&columns, &rows, utc(), false)))
}

pub(crate) fn utc() -> Zone {
    Zone::Fixed(chrono::FixedOffset::east_opt(0).expect("zero offset"))
}

pub(crate) fn objects(flat: Value) -> Vec<Map<String, Value>> {
    match flat {
        Value::Array(rows) => rows
            .into_iter()
            .filter_map(|r| match r {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A Point from a flat row's `{x, y, srid}` coordinate (x = longitude, y = latitude).
pub fn point(coordinate: Option<&Value>) -> Value {
    match coordinate.map(|c| {
        (
            c.get("x").and_then(Value::as_f64),
            c.get("y").and_then(Value::as_f64),
        )
    }) {
        Some((Some(x), Some(y))) => {
            json!({"type": "Point", "coordinates": [shape::number(x), shape::number(y)]})
        }
        _ => Value::Null,
    }
}

/// An edge's line geometry without the legacy `crs` and `bbox` members (GeoJSON
/// coordinates are WGS 84 longitude/latitude already).
fn line(geometry: Option<&Value>) -> Value {
    match geometry {
        Some(g) if g.get("coordinates").is_some() => {
            json!({"type": g.get("type").cloned().unwrap_or(Value::Null), "coordinates": g["coordinates"]})
        }
        _ => Value::Null,
    }
}

/// The FeatureCollection of a flat answer: one feature per row, its properties the row.
pub(crate) fn feature_collection(
    route: &Route,
    rows: Vec<Map<String, Value>>,
    offset: i64,
    limit: i64,
) -> Response {
    let features: Vec<Value> = rows
        .into_iter()
        .map(|row| {
            let geometry = match route {
                Route::Edges => line(row.get("egeometry")),
                _ => point(row.get("scoordinate")),
            };
            json!({"type": "Feature", "geometry": geometry, "properties": row})
        })
        .collect();
    let body = json!({
        "type": "FeatureCollection",
        "offset": offset,
        "limit": limit,
        "numberReturned": features.len(),
        "features": features,
    });
    let mut r = serde_json::to_vec(&body)
        .unwrap_or_default()
        .into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(GEOJSON));
    r
}
