//! HTTP hygiene at the edge: requests whose target or headers are too large are refused
//! before any API sees them (414/431), as are targets holding a NUL (400); every error
//! the server or its middleware writes itself (axum's rejections such as 405/413/415,
//! load shedding) leaves as an `application/problem+json` body; every 503 says when to
//! come back (`Retry-After`).
//!
//! Owns: [`MAX_URI_BYTES`], [`MAX_HEADER_BYTES`], [`RETRY_AFTER_SECS`], [`nul_in_target`]
//! and the rewrite of plain-text error bodies. Must not: touch bodies an API wrote (JSON,
//! problem, XML), or decide any API's statuses.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hub_model::Problem;

/// Longest request target (path and query) accepted, in bytes: far above any query the
/// APIs document, far below what would cost memory. Longer answers 414.
pub const MAX_URI_BYTES: usize = 16 * 1024;
/// Most header bytes (names and values) accepted in one request. More answers 431.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Seconds a client is asked to wait after a 503 (overload, store unavailable).
pub const RETRY_AFTER_SECS: u64 = 5;
/// Longest plain-text rejection copied into a problem's `detail`.
const MAX_DETAIL_BYTES: usize = 1024;

/// Which edge limit a request breaks, if any: (uri bytes, header bytes) → status.
pub fn edge_limit(uri_bytes: usize, header_bytes: usize) -> Option<StatusCode> {
    if uri_bytes > MAX_URI_BYTES {
        Some(StatusCode::URI_TOO_LONG)
    } else if header_bytes > MAX_HEADER_BYTES {
        Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
    } else {
        None
    }
}

/// The problem `type` suffix for a status the server writes itself.
pub fn problem_kind(status: StatusCode) -> &'static str {
    match status.as_u16() {
        405 => "method-not-allowed",
        408 => "timeout",
        413 => "payload-too-large",
        414 => "uri-too-long",
        415 => "unsupported-media-type",
        422 => "unprocessable",
        429 => "too-many-requests",
        431 => "headers-too-large",
        503 => "unavailable",
        s if s >= 500 => "internal",
        _ => "bad-request",
    }
}

/// A request whose path or query holds a percent-encoded NUL (`%00`): 400 naming where.
/// No resource, id, station or parameter value has one, and PostgreSQL cannot even
/// compare text holding one, so it is refused before any API or store sees it (the same
/// request answered 404 on one backend and 500 on the other before). Only requests whose
/// target contains `%00` at all are decoded.
pub fn nul_in_target(path: &str, query: Option<&str>) -> Option<Problem> {
    const NUL: &str = "%00";
    if let Some(at) = path.find(NUL) {
        let before = percent_encoding::percent_decode_str(&path[..at]).decode_utf8_lossy();
        let position = before.chars().count() + 1;
        return Some(nul_problem(
            "path",
            position,
            format!("the request path holds a NUL character (%00) at position {position}; no resource has one"),
        ));
    }
    let query = query.filter(|q| q.contains(NUL))?;
    form_urlencoded::parse(query.as_bytes()).find_map(|(name, value)| {
        let (parameter, position) = match name.find('\0') {
            Some(at) => (name.replace('\0', "\\0"), name[..at].chars().count() + 1),
            None => (
                name.to_string(),
                value[..value.find('\0')?].chars().count() + 1,
            ),
        };
        Some(nul_problem(
            &parameter,
            position,
            format!("parameter '{parameter}' holds a NUL character (%00) at position {position}"),
        ))
    })
}

fn nul_problem(parameter: &str, position: usize, detail: String) -> Problem {
    Problem {
        position: Some(hub_model::problem::saturating_u32(position)),
        ..Problem::invalid_parameter(parameter, detail)
    }
}

/// A problem for `status` with `detail`, titled by the status's reason phrase.
pub fn server_problem(status: StatusCode, detail: impl Into<String>) -> Problem {
    let title = status.canonical_reason().unwrap_or("Error");
    Problem::new(status.as_u16(), problem_kind(status), title, detail)
}

/// Middleware: refuses oversize targets and headers, then rewrites the response.
pub async fn hygiene(request: Request, next: Next) -> Response {
    // The request target as sent: origin form is the path and query; absolute form adds
    // scheme and authority (measured without rendering the URI on every request).
    let uri = request.uri();
    let uri_bytes = uri.path_and_query().map_or(0, |pq| pq.as_str().len())
        + uri.scheme_str().map_or(0, |s| s.len() + 3)
        + uri.authority().map_or(0, |a| a.as_str().len());
    let header_bytes: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    if let Some(status) = edge_limit(uri_bytes, header_bytes) {
        let detail = match status {
            StatusCode::URI_TOO_LONG => {
                format!("the request target is longer than {MAX_URI_BYTES} bytes")
            }
            _ => format!("the request headers are larger than {MAX_HEADER_BYTES} bytes"),
        };
        return server_problem(status, detail).into_response();
    }
    let path = request.uri().path();
    // The token service checks its own fields and answers in OAuth's shape.
    if !path.starts_with("/auth/") {
        if let Some(problem) = nul_in_target(path, request.uri().query()) {
            // Each API's clients read its own error body.
            return if path.starts_with("/v2/") {
                hub_timeseries::problem_response(problem)
            } else {
                problem.into_response()
            };
        }
    }
    let response = next.run(request).await;
    with_problem_body(response).await
}

/// A plain-text or body-less error (axum's own rejections, a 405 from a method router)
/// becomes a problem with the same status and headers (`Allow` stays); a 503 gains
/// `Retry-After`. Bodies an API wrote (JSON, problems, XML) are untouched.
async fn with_problem_body(response: Response) -> Response {
    let status = response.status();
    let plain_or_none = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().is_ok_and(|v| v.starts_with("text/plain")))
        .unwrap_or(true);
    let mut response = if status.as_u16() >= 400 && plain_or_none {
        let (mut parts, body) = response.into_parts();
        let text = axum::body::to_bytes(body, MAX_DETAIL_BYTES)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let detail = if text.is_empty() {
            status.canonical_reason().unwrap_or("error").to_string()
        } else {
            text
        };
        let problem = server_problem(status, detail).into_response();
        let (problem_parts, problem_body) = problem.into_parts();
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.headers.insert(
            header::CONTENT_TYPE,
            problem_parts.headers[header::CONTENT_TYPE].clone(),
        );
        Response::from_parts(parts, Body::new(problem_body))
    } else {
        response
    };
    if status == StatusCode::SERVICE_UNAVAILABLE
        && !response.headers().contains_key(header::RETRY_AFTER)
    {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nul_in_the_target_is_refused_by_name_and_position() {
        type Case<'a> = (&'a str, Option<&'a str>, Option<(&'a str, u32)>);
        let cases: &[Case] = &[
            (
                "/v1/Article/abc",
                Some("pagesize=10&searchfilter=h%C3%BCtte"),
                None,
            ),
            ("/v1/Article/a%00b", None, Some(("path", 14))),
            ("/v1/Article/%C3%BC%00", Some("x=%00"), Some(("path", 14))),
            (
                "/v2/flat/X",
                Some("where=sname.eq.%22a%00%22"),
                Some(("where", 12)),
            ),
            (
                "/v2/flat/X",
                Some("limit=1&sel%00ect=a"),
                Some(("sel\\0ect", 4)),
            ),
            ("/v2/flat/X", Some("a=%C3%BC%C3%BC%00"), Some(("a", 3))),
            ("/v2/flat/X", Some("a=%2500"), None),
        ];
        for (path, query, expected) in cases {
            let found = nul_in_target(path, *query).map(|p| {
                (
                    p.parameter.clone().unwrap_or_default(),
                    p.position.unwrap_or_default(),
                )
            });
            let expected = expected.map(|(name, at)| (name.to_string(), at));
            assert_eq!(found, expected, "{path}?{query:?}");
        }
    }

    #[test]
    fn edge_limits() {
        let cases = [
            (100, 100, None),
            (MAX_URI_BYTES, MAX_HEADER_BYTES, None),
            (MAX_URI_BYTES + 1, 0, Some(StatusCode::URI_TOO_LONG)),
            (
                0,
                MAX_HEADER_BYTES + 1,
                Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE),
            ),
            (
                MAX_URI_BYTES + 1,
                MAX_HEADER_BYTES + 1,
                Some(StatusCode::URI_TOO_LONG),
            ),
        ];
        for (uri, headers, expected) in cases {
            assert_eq!(edge_limit(uri, headers), expected, "{uri} {headers}");
        }
    }

    #[test]
    fn kinds_of_server_problems() {
        let cases = [
            (405, "method-not-allowed"),
            (413, "payload-too-large"),
            (414, "uri-too-long"),
            (415, "unsupported-media-type"),
            (429, "too-many-requests"),
            (431, "headers-too-large"),
            (400, "bad-request"),
            (500, "internal"),
            (503, "unavailable"),
        ];
        for (status, kind) in cases {
            assert_eq!(problem_kind(StatusCode::from_u16(status).unwrap()), kind);
        }
    }
}
