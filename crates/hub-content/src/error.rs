//! Errors of the Content API layer and their one conversion to an HTTP response: a
//! `hub_model::Problem` (rendered by its shared `IntoResponse`), except auth failures,
//! which `hub-auth` renders with their `WWW-Authenticate` challenge.

use axum::response::{IntoResponse, Response};
use hub_model::Problem;
use hub_store::{QueryError, StoreError};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ContentError {
    #[error("{parameter}: {detail}")]
    InvalidParameter { parameter: String, detail: String },
    #[error("{parameter}: {detail} at position {position}")]
    Parse {
        parameter: String,
        position: usize,
        detail: String,
    },
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A utility endpoint could not do its work for a reason outside the parameters
    /// (a remote file that failed, a body too large): `status` 404, 413, 502 or 504.
    #[error("{detail}")]
    Upstream {
        status: u16,
        kind: &'static str,
        title: &'static str,
        detail: String,
    },
    /// 401/403 from the auth policy; rendered by `hub-auth` (with `WWW-Authenticate`).
    #[error(transparent)]
    Auth(#[from] hub_auth::AuthError),
    /// A written document was not accepted (400).
    #[error("{0}")]
    InvalidDocument(String),
    /// A created document's id is taken (409).
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    MethodNotAllowed(String),
}

impl ContentError {
    pub fn to_problem(&self) -> Problem {
        match self {
            ContentError::InvalidParameter { parameter, detail } => {
                Problem::invalid_parameter(parameter, detail.clone())
            }
            ContentError::Parse {
                parameter,
                position,
                detail,
            } => Problem::parse_error(
                parameter,
                *position,
                format!("{detail} at position {position}"),
            ),
            ContentError::NotFound(detail) => Problem::not_found(detail.clone()),
            ContentError::Auth(e) => Problem::new(
                e.status().as_u16(),
                "unauthorized",
                "Unauthorized",
                e.to_string(),
            ),
            ContentError::InvalidDocument(detail) => {
                Problem::new(400, "invalid-document", "Invalid document", detail.clone())
            }
            ContentError::Conflict(detail) => {
                Problem::new(409, "conflict", "Conflict", detail.clone())
            }
            ContentError::MethodNotAllowed(detail) => Problem::new(
                405,
                "method-not-allowed",
                "Method Not Allowed",
                detail.clone(),
            ),
            ContentError::Upstream {
                status,
                kind,
                title,
                detail,
            } => Problem::new(*status, kind, title, detail.clone()),
            ContentError::Store(StoreError::Query(QueryError {
                parameter,
                position,
                detail,
            })) => Problem {
                parameter: Some(parameter.clone()),
                position: Some(hub_model::problem::saturating_u32(*position)),
                ..Problem::new(
                    400,
                    "type-mismatch",
                    "Type mismatch",
                    format!("{detail} (the value at position {position})"),
                )
            },
            // The store's other client fault: a document it refuses.
            ContentError::Store(StoreError::Invalid(detail)) => {
                Problem::new(400, "invalid-document", "Invalid document", detail.clone())
            }
            ContentError::Store(e) if e.is_unavailable() => {
                tracing::error!(error = %e, "data store unavailable");
                e.outage_problem()
                    .unwrap_or_else(Problem::store_unavailable)
            }
            ContentError::Store(e) => {
                tracing::error!(error = %e, "storage failure");
                Problem::internal("the data store failed to answer; the failure has been logged")
            }
        }
    }
}

impl IntoResponse for ContentError {
    fn into_response(self) -> Response {
        if let ContentError::Auth(e) = self {
            return e.into_response();
        }
        self.to_problem().into_response()
    }
}
