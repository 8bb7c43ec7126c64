//! RFC 7807 problem details: the one shape of every client and server error body of
//! the Content API. Each layer's error converts into a `Problem`; the HTTP edge renders it.

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
    /// 1-based character position inside the parameter value, for parse errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<usize>,
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
        }
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
            position: Some(position),
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
}
