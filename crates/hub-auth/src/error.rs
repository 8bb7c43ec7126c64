//! The one error type of the auth layer and its one conversion to a response: OAuth
//! errors of the token endpoint as RFC 6749 §5.2 JSON, bearer failures of the APIs as
//! RFC 7807 problem bodies with an RFC 6750 `WWW-Authenticate` challenge.

use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};
use hub_model::Problem;
use hub_store::StoreError;
use serde_json::json;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum AuthError {
    /// A token endpoint error (`invalid_request`, `invalid_client`, `invalid_grant`,
    /// `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`).
    #[error("{error}: {description}")]
    OAuth {
        error: &'static str,
        description: String,
    },
    /// A bearer token that is expired, malformed, wrongly signed or from an unknown issuer.
    #[error("invalid token: {0}")]
    InvalidToken(String),
    /// A resource that needs a token was asked for without one.
    #[error("{0}")]
    MissingToken(String),
    /// The token is good but lacks the role.
    #[error("{0}")]
    Forbidden(String),
    /// Too many failed password logins for this user or from this IP: wait.
    #[error("too many failed logins; retry in {retry_after} s")]
    Throttled { retry_after: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
}

impl AuthError {
    pub(crate) fn oauth(error: &'static str, description: impl Into<String>) -> Self {
        AuthError::OAuth {
            error,
            description: description.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            AuthError::OAuth {
                error: "invalid_client",
                ..
            } => StatusCode::UNAUTHORIZED,
            AuthError::OAuth { .. } => StatusCode::BAD_REQUEST,
            AuthError::InvalidToken(_) | AuthError::MissingToken(_) => StatusCode::UNAUTHORIZED,
            AuthError::Forbidden(_) => StatusCode::FORBIDDEN,
            AuthError::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
            AuthError::Store(e) if e.is_unavailable() => StatusCode::SERVICE_UNAVAILABLE,
            AuthError::Store(_) | AuthError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect()
}

/// A bearer failure: the shared problem body plus, for 401/403, the RFC 6750 challenge.
fn problem(
    status: StatusCode,
    kind: &str,
    title: &str,
    detail: String,
    challenge: Option<String>,
) -> Response {
    let mut response = Problem::new(status.as_u16(), kind, title, detail).into_response();
    if let Some(c) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, c);
    }
    response
}

impl IntoResponse for AuthError {
    fn into_response(self) -> Response {
        let status = self.status();
        match self {
            AuthError::OAuth { error, description } => {
                let body = json!({"error": error, "error_description": description}).to_string();
                let mut response = (
                    status,
                    [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store"), (header::PRAGMA, "no-cache")],
                    body,
                )
                    .into_response();
                if error == "invalid_client" {
                    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"token\""));
                }
                response
            }
            AuthError::InvalidToken(detail) => problem(
                status,
                "invalid-token",
                "Unauthorized",
                format!("the bearer token was not accepted: {detail}; obtain a new one from the token service"),
                Some(format!("Bearer error=\"invalid_token\", error_description=\"{}\"", quoted(&detail))),
            ),
            AuthError::MissingToken(detail) => problem(status, "unauthorized", "Unauthorized", detail, Some("Bearer".into())),
            AuthError::Forbidden(detail) => {
                problem(status, "forbidden", "Forbidden", detail, Some("Bearer error=\"insufficient_scope\"".into()))
            }
            AuthError::Throttled { retry_after } => {
                let mut response = problem(status, "too-many-requests", "Too Many Requests", format!("too many failed logins for this user or from this address; retry in {retry_after} seconds"), None);
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
                response
            }
            AuthError::Store(e) if e.is_unavailable() => {
                tracing::error!(error = %e, "data store unavailable in the auth layer");
                let mut response = e.outage_problem().unwrap_or_else(Problem::store_unavailable).into_response();
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                response
            }
            AuthError::Store(e) => {
                tracing::error!(error = %e, "storage failure in the auth layer");
                problem(status, "internal", "Internal Server Error", "the data store failed to answer; the failure has been logged".into(), None)
            }
            AuthError::Internal(e) => {
                tracing::error!(error = %e, "auth failure");
                problem(status, "internal", "Internal Server Error", "the request failed unexpectedly; the failure has been logged".into(), None)
            }
        }
    }
}
