//! The one error type of the HTTP edge and its body, the reference's
//! `{message, timestamp, code, error, description?, info?}` (timestamp ISO-8601).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message, description, info) = match self {
            ApiError::BadRequest {
                message,
                description,
                info,
            } => (StatusCode::BAD_REQUEST, message, description, info),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, m, None, None),
            ApiError::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                "Authentication required: send a bearer token of a client with the writer role"
                    .into(),
                None,
                None,
            ),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, m, None, None),
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
                    StatusCode::BAD_REQUEST,
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
                (StatusCode::BAD_REQUEST, e.to_string(), None, info)
            }
            ApiError::Store(StoreError::Invalid(m)) => (StatusCode::BAD_REQUEST, m, None, None),
            ApiError::Store(e) => {
                tracing::error!(error = %e, "time series storage failure");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal storage error; the server log has details".to_string(),
                    None,
                    None,
                )
            }
        };
        let mut body = Map::new();
        body.insert("message".into(), json!(message.replace('"', "'")));
        body.insert(
            "timestamp".into(),
            json!(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        );
        body.insert("code".into(), json!(status.as_u16()));
        body.insert(
            "error".into(),
            json!(status.canonical_reason().unwrap_or("")),
        );
        if let Some(d) = description {
            body.insert("description".into(), json!(d));
        }
        if let Some(i) = info {
            body.insert("info".into(), Value::Object(i));
        }
        let mut resp = (status, axum::Json(Value::Object(body))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                "www-authenticate",
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        resp
    }
}
