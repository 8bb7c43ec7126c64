//! RFC 7807 problem details: the one shape of every `application/problem+json` body of
//! Hub (Content API, token service bearer failures, traffic feed, server fallbacks).
//! Each layer's error converts into a `Problem`; its one `IntoResponse` (feature `http`)
//! renders it. Owns the body's fields and their order (the golden corpus pins them);
//! must not decide which error gets which status — that is each API crate's error type.

use serde::Serialize;

/// An RFC 7807 problem (`application/problem+json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    /// A URI naming the kind of problem (`urn:hub:problem:invalid-parameter`).
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// The query parameter that was wrong, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// 1-based character position inside the parameter value, for parse errors (`u32`
    /// keeps `Problem` small enough for `Err` variants; query strings are far shorter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// Further members (RFC 7807 §3.2), after the standard ones; empty for most problems
    /// (boxed: a `Problem` travels in `Err` variants and should stay small).
    #[serde(flatten)]
    pub extensions: Box<serde_json::Map<String, serde_json::Value>>,
}

impl Problem {
    pub fn new(status: u16, kind: &str, title: &str, detail: impl Into<String>) -> Self {
        Problem {
            kind: format!("urn:hub:problem:{kind}"),
            title: title.to_string(),
            status,
            detail: detail.into(),
            parameter: None,
            position: None,
            extensions: Box::default(),
        }
    }

    /// The problem with one more extension member.
    pub fn with(mut self, member: &str, value: serde_json::Value) -> Self {
        self.extensions.insert(member.to_string(), value);
        self
    }

    /// 400 for a query parameter whose value is not accepted.
    pub fn invalid_parameter(parameter: &str, detail: impl Into<String>) -> Self {
        Problem {
            parameter: Some(parameter.to_string()),
            ..Problem::new(400, "invalid-parameter", "Invalid parameter", detail)
        }
    }

    /// 400 for a value that failed to parse at a position (1-based, in characters).
    pub fn parse_error(parameter: &str, position: usize, detail: impl Into<String>) -> Self {
        Problem {
            parameter: Some(parameter.to_string()),
            position: Some(saturating_u32(position)),
            ..Problem::new(400, "parse-error", "Invalid expression", detail)
        }
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Problem::new(404, "not-found", "Not Found", detail)
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        Problem::new(500, "internal", "Internal Server Error", detail)
    }

    pub fn unavailable(detail: impl Into<String>) -> Self {
        Problem::new(503, "unavailable", "Service Unavailable", detail)
    }

    /// 503 for a data store that is unreachable or overloaded: the client may retry (the
    /// HTTP edge adds `Retry-After` to every 503).
    pub fn store_unavailable() -> Self {
        Problem::unavailable(
            "the data store is temporarily unavailable; retry after the indicated time",
        )
    }

    /// 503 for a data store out of space: writes wait for an operator, reads go on.
    pub fn store_full() -> Self {
        Problem::unavailable(
            "the data store is full: no space is left for writes until an operator frees some (reads still work); retry after the indicated time",
        )
    }
}

/// A character position as stored in [`Problem::position`].
pub fn saturating_u32(position: usize) -> u32 {
    u32::try_from(position).unwrap_or(u32::MAX)
}

/// The media type of every problem body.
pub const PROBLEM_CONTENT_TYPE: &str = "application/problem+json";

#[cfg(feature = "http")]
impl axum::response::IntoResponse for Problem {
    fn into_response(self) -> axum::response::Response {
        let status = http::StatusCode::from_u16(self.status)
            .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).expect("problems serialize");
        (
            status,
            [(http::header::CONTENT_TYPE, PROBLEM_CONTENT_TYPE)],
            body,
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Problem → exact body: field order and omitted fields are part of the contract.
    #[test]
    fn bodies_keep_their_field_order() {
        let cases = [
            (
                Problem::not_found("no such thing"),
                r#"{"type":"urn:hub:problem:not-found","title":"Not Found","status":404,"detail":"no such thing"}"#,
            ),
            (
                Problem::parse_error("rawfilter", 3, "bad"),
                r#"{"type":"urn:hub:problem:parse-error","title":"Invalid expression","status":400,"detail":"bad","parameter":"rawfilter","position":3}"#,
            ),
            (
                Problem::new(400, "x", "X", "d").with("info", serde_json::json!({"a": 1})),
                r#"{"type":"urn:hub:problem:x","title":"X","status":400,"detail":"d","info":{"a":1}}"#,
            ),
            (
                Problem::invalid_parameter("pagesize", "too big"),
                r#"{"type":"urn:hub:problem:invalid-parameter","title":"Invalid parameter","status":400,"detail":"too big","parameter":"pagesize"}"#,
            ),
        ];
        for (problem, body) in cases {
            assert_eq!(serde_json::to_string(&problem).unwrap(), body);
        }
    }
}
