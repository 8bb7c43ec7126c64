//! Errors of the Content API layer and their one conversion to an HTTP response.

use axum::response::{IntoResponse, Response};
use hub_model::Problem;
use hub_store::StoreError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ContentError {
    #[error("{parameter}: {detail}")]
    InvalidParameter { parameter: String, detail: String },
    #[error("{parameter}: {detail} at position {position}")]
    Parse { parameter: String, position: usize, detail: String },
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ContentError {
    pub fn to_problem(&self) -> Problem {
        match self {
            ContentError::InvalidParameter { parameter, detail } => Problem::invalid_parameter(parameter, detail.clone()),
            ContentError::Parse { parameter, position, detail } => {
                Problem::parse_error(parameter, *position, format!("{detail} at position {position}"))
            }
            ContentError::NotFound(detail) => Problem::not_found(detail.clone()),
            ContentError::Store(e) => {
                tracing::error!(error = %e, "storage failure");
                Problem::internal("the data store failed to answer; the failure has been logged")
            }
        }
    }
}

/// Renders a problem as `application/problem+json`.
pub fn problem_response(problem: &Problem) -> Response {
    let status = http::StatusCode::from_u16(problem.status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(problem).expect("problems serialize");
    (status, [(http::header::CONTENT_TYPE, "application/problem+json")], body).into_response()
}

impl IntoResponse for ContentError {
    fn into_response(self) -> Response {
        problem_response(&self.to_problem())
    }
}
