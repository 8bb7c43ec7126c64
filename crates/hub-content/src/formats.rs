//! Output formats by `Accept` or `format=`: JSON (default, also for `*/*`, `application/*`
//! and no `Accept`), CSV (`text/csv`, `format=csv`) and JSON-LD (`application/ld+json`,
//! `format=jsonld|json-ld`) and GeoJSON (`application/geo+json`, `format=geojson`, see
//! [`crate::geojson`]). A layer over the Content API routes: handlers always
//! produce JSON; a successful JSON answer is converted here. Any other `Accept` is a 406
//! problem listing the supported types; an unknown `format` value is a 400.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hub_model::{EntityType, Problem};
use serde_json::Value;

use crate::params::RawQuery;
use crate::ContentState;

pub const SUPPORTED: &str = "application/json, text/csv, application/ld+json, application/geo+json";
/// Largest JSON body converted (a page of 1000 documents fits comfortably).
const MAX_BODY: usize = 256 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Json,
    Csv,
    JsonLd,
    GeoJson,
}

/// The format asked for; `format=` wins over `Accept`.
pub fn negotiate(query: &RawQuery, accept: Option<&str>) -> Result<Format, Problem> {
    if let Some(f) = query.get("format") {
        return match f.to_ascii_lowercase().as_str() {
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "jsonld" | "json-ld" | "ld+json" => Ok(Format::JsonLd),
            "geojson" | "geo+json" => Ok(Format::GeoJson),
            _ => Err(Problem::invalid_parameter(
                "format",
                format!("'{f}' is not a format; use json, csv, jsonld or geojson"),
            )),
        };
    }
    let Some(accept) = accept.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok(Format::Json);
    };
    let mut best: Option<(f32, usize, Format)> = None;
    for (i, range) in accept.split(',').enumerate() {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .or_else(|| p.trim().strip_prefix("Q="))
            })
            .find_map(|v| v.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        let format = match media.as_str() {
            "application/json" | "application/*" | "*/*" | "text/json" => Format::Json,
            "text/csv" | "text/*" => Format::Csv,
            "application/ld+json" => Format::JsonLd,
            "application/geo+json" => Format::GeoJson,
            _ => continue,
        };
        // Highest q wins; on a tie, the more specific range, then the first listed.
        let specific = usize::from(!media.ends_with("/*"));
        if q > 0.0 && best.is_none_or(|(bq, bs, _)| q > bq || (q == bq && specific > bs)) {
            best = Some((q, specific, format));
        }
        let _ = i;
    }
    best.map(|(_, _, f)| f).ok_or_else(|| {
        Problem::new(
            406,
            "not-acceptable",
            "Not Acceptable",
            format!("'{accept}' cannot be produced; the supported types are {SUPPORTED}"),
        )
    })
}

/// The layer: negotiates, runs the handler, converts a successful JSON answer.
pub async fn convert(State(state): State<ContentState>, request: Request, next: Next) -> Response {
    let query = RawQuery::parse(request.uri().query());
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let format = match negotiate(&query, accept.as_deref()) {
        Ok(f) => f,
        Err(problem) => return problem.into_response(),
    };
    let path = request.uri().path().to_string();
    let self_url = format!("{}{}", state.base_url, request.uri());
    // The list handler streams CSV itself for `pagesize=-1` (it cannot be converted from
    // a streamed JSON body without holding it).
    let mut request = request;
    request.extensions_mut().insert(format);
    let mut response = if format == Format::GeoJson {
        crate::geojson::scope(next.run(request)).await
    } else {
        next.run(request).await
    };
    response
        .headers_mut()
        .append(header::VARY, HeaderValue::from_static("accept"));
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if format == Format::Json || !response.status().is_success() || !is_json {
        return response;
    }
    if response
        .extensions()
        .get::<crate::whole::StreamedList>()
        .is_some()
    {
        return Problem::invalid_parameter(
            "pagesize",
            "pagesize=-1 (every document, streamed) is answered as JSON or CSV only; read JSON-LD or GeoJSON page by page (pagesize up to 1000)",
        )
        .into_response();
    }
    let places = response.extensions_mut().remove::<crate::geojson::Places>();
    if format == Format::GeoJson && places.is_none() {
        return geojson_not_offered(&path);
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return Problem::internal("the response was too large to convert").into_response();
    };
    let entity = path
        .strip_prefix("/v1/")
        .and_then(EntityType::resolve_path)
        .map(|(e, _)| e);
    let language = query
        .get("language")
        .and_then(hub_model::language::parse_language)
        .unwrap_or("en");
    // CSV flattens, GeoJSON wraps and a JSON-LD list reads its items straight from the
    // text (a page of 1,000 documents need not become whole `Value`s); anything else, or
    // text they do not read, is parsed.
    let text = std::str::from_utf8(&bytes).ok();
    let from_text = match format {
        Format::Csv => crate::csv::render_slice(&bytes),
        Format::GeoJson => text.and_then(|text| {
            let places = places.as_ref().map_or(&[][..], |p| &p.0[..]);
            crate::geojson::render_content(text, places, &self_url)
        }),
        Format::JsonLd => text.and_then(|text| {
            crate::jsonld::render_list_text(text, entity, &state.base_url, language)
                .map(|graph| graph.to_string())
        }),
        Format::Json => None,
    };
    let value = match from_text {
        Some(_) => Value::Null,
        None => match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) => value,
            Err(_) => return Response::from_parts(parts, Body::from(bytes)),
        },
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    let (content_type, body) = match format {
        Format::GeoJson => match from_text {
            Some(text) => ("application/geo+json", text),
            None => return geojson_not_offered(&path),
        },
        Format::Csv => (
            "text/csv; charset=utf-8; header=present",
            from_text.unwrap_or_else(|| crate::csv::render(&value)),
        ),
        _ => (
            "application/ld+json",
            from_text.unwrap_or_else(|| {
                crate::jsonld::render(&value, entity, &state.base_url, language).to_string()
            }),
        ),
    };
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    (parts, body).into_response()
}

/// GeoJSON of an answer that is not a list or a document (the dataset list, tags).
fn geojson_not_offered(path: &str) -> Response {
    Problem::new(
        406,
        "not-acceptable",
        "Not Acceptable",
        format!("{path} has no GeoJSON form; lists and documents of /v1/{{dataset}} have"),
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(accept: Option<&str>, query: &str) -> Result<Format, u16> {
        negotiate(&RawQuery::parse(Some(query)), accept).map_err(|p| p.status)
    }

    #[test]
    fn negotiates_by_accept_and_format() {
        assert_eq!(fmt(None, ""), Ok(Format::Json));
        assert_eq!(fmt(Some("*/*"), ""), Ok(Format::Json));
        assert_eq!(fmt(Some("application/*"), ""), Ok(Format::Json));
        assert_eq!(fmt(Some("text/csv"), ""), Ok(Format::Csv));
        assert_eq!(fmt(Some("application/ld+json"), ""), Ok(Format::JsonLd));
        assert_eq!(
            fmt(Some("text/html, application/ld+json;q=0.9, */*;q=0.1"), ""),
            Ok(Format::JsonLd)
        );
        assert_eq!(fmt(Some("*/*, text/csv"), ""), Ok(Format::Csv));
        assert_eq!(fmt(Some("text/html"), ""), Err(406));
        assert_eq!(fmt(Some("text/csv;q=0"), ""), Err(406));
        assert_eq!(fmt(Some("text/html"), "format=csv"), Ok(Format::Csv));
        assert_eq!(fmt(None, "format=JSON-LD"), Ok(Format::JsonLd));
        assert_eq!(fmt(None, "format=xml"), Err(400));
        assert_eq!(fmt(Some("application/geo+json"), ""), Ok(Format::GeoJson));
        assert_eq!(fmt(None, "format=GeoJSON"), Ok(Format::GeoJson));
    }
}
