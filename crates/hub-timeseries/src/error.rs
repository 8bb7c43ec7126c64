//! The one error type of the HTTP edge and its body, the reference's
//! `{message, timestamp, code, error, description?, info?}` (timestamp ISO-8601),
//! written from the shared `hub_model::Problem` the error converts into.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hub_model::Problem;
use hub_query::timeseries::TsQueryError;
use hub_store::StoreError;
use serde_json::{json, Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A client error with the reference's message, optional description and info.
    #[error("{message}")]
    BadRequest {
        message: String,
        description: Option<String>,
        info: Option<Map<String, Value>>,
    },
    #[error("{0}")]
    NotFound(String),
    #[error("authentication required")]
    Unauthorized,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Query(#[from] TsQueryError),
    #[error("{0}")]
    Store(#[from] StoreError),
}

impl ApiError {
    pub fn bad(message: impl Into<String>) -> Self {
        ApiError::BadRequest {
            message: message.into(),
            description: None,
            info: None,
        }
    }
}

impl ApiError {
    /// The shared problem of this error: status and message, with the reference's
    /// `description` and `info` as extension members. Logs storage failures.
    pub fn to_problem(self) -> Problem {
        // An input over a size limit names its parameter (a `parameter` member).
        let limited = match &self {
            ApiError::Query(TsQueryError::Limit { parameter, .. }) => Some(*parameter),
            _ => None,
        };
        let (status, kind, message, description, info) = match self {
            ApiError::BadRequest {
                message,
                description,
                info,
            } => (400, "invalid-request", message, description, info),
            ApiError::NotFound(m) => (404, "not-found", m, None, None),
            ApiError::Unauthorized => (
                401,
                "unauthorized",
                "Authentication required: send a bearer token of a client with the writer role"
                    .into(),
                None,
                None,
            ),
            ApiError::Forbidden(m) => (403, "forbidden", m, None, None),
            ApiError::Query(TsQueryError::Syntax(e)) => {
                let mut info = Map::new();
                info.insert("position".into(), json!(e.position));
                info.insert("input_marked".into(), json!(e.input_marked));
                info.insert("input_origin".into(), json!(e.input_origin));
                info.insert(
                    "hint".into(),
                    json!("You need to escape the following characters ()', within the value part of your filters"),
                );
                (
                    400,
                    "parse-error",
                    e.message(),
                    Some("Syntax error in WHERE-clause".to_string()),
                    Some(info),
                )
            }
            ApiError::Query(e) => {
                let info = match &e {
                    TsQueryError::SelectKey { name, .. } => {
                        let mut m = Map::new();
                        m.insert("targetName".into(), json!(name));
                        Some(m)
                    }
                    _ => None,
                };
                (400, "invalid-request", e.to_string(), None, info)
            }
            ApiError::Store(StoreError::Invalid(m)) => (400, "invalid-request", m, None, None),
            ApiError::Store(e) if e.is_unavailable() => {
                tracing::error!(error = %e, "time series store unavailable");
                (
                    503,
                    "unavailable",
                    e.outage_problem().map(|p| p.detail).unwrap_or_default(),
                    None,
                    None,
                )
            }
            ApiError::Store(e) => {
                tracing::error!(error = %e, "time series storage failure");
                (
                    500,
                    "internal",
                    "Internal storage error; the server log has details".to_string(),
                    None,
                    None,
                )
            }
        };
        let title = StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let mut problem = Problem::new(status, kind, title, message);
        if let Some(d) = description {
            problem = problem.with("description", json!(d));
        }
        if let Some(i) = info {
            problem = problem.with("info", Value::Object(i));
        }
        if let Some(parameter) = limited {
            problem = problem.with("parameter", json!(parameter));
        }
        problem
    }
}

/// The reference's body for a problem: `message` (the detail, double quotes made
/// single), `timestamp`, `code` (status), `error` (title), then the extension members.
fn odh_body(problem: Problem, now: chrono::DateTime<chrono::Utc>) -> Value {
    let mut body = Map::new();
    body.insert("message".into(), json!(problem.detail.replace('"', "'")));
    body.insert(
        "timestamp".into(),
        json!(now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
    );
    body.insert("code".into(), json!(problem.status));
    body.insert("error".into(), json!(problem.title));
    body.extend(*problem.extensions);
    Value::Object(body)
}

/// Any problem in this API's body (the edge refuses some `/v2` requests before the API
/// sees them, and its clients read one shape): `parameter` and `position` stay members.
pub fn problem_response(mut problem: Problem) -> Response {
    if let Some(parameter) = problem.parameter.take() {
        problem = problem.with("parameter", json!(parameter));
    }
    if let Some(position) = problem.position.take() {
        problem = problem.with("position", json!(position));
    }
    let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(odh_body(problem, chrono::Utc::now()))).into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut resp = problem_response(self.to_problem());
        if resp.status() == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                "www-authenticate",
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Error → exact reference body (timestamp fixed).
    #[test]
    fn errors_keep_the_reference_body() {
        let now = chrono::DateTime::parse_from_rfc3339("2024-01-02T03:04:05Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let t = r#""timestamp":"2024-01-02T03:04:05.000Z""#;
        let cases = [
            (
                ApiError::bad("no \"x\""),
                format!(r#"{{"message":"no 'x'",{t},"code":400,"error":"Bad Request"}}"#),
            ),
            (
                ApiError::NotFound("gone".into()),
                format!(r#"{{"message":"gone",{t},"code":404,"error":"Not Found"}}"#),
            ),
            (
                ApiError::BadRequest {
                    message: "m".into(),
                    description: Some("d".into()),
                    info: Some(Map::from_iter([("k".to_string(), json!(1))])),
                },
                format!(
                    r#"{{"message":"m",{t},"code":400,"error":"Bad Request","description":"d","info":{{"k":1}}}}"#
                ),
            ),
        ];
        for (error, body) in cases {
            assert_eq!(odh_body(error.to_problem(), now).to_string(), body);
        }
    }
}
