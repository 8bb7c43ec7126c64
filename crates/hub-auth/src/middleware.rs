//! Bearer authentication as an axum middleware: the caller's [`Principal`] goes into
//! the request extensions; no `Authorization` header means anonymous.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap};

use crate::error::AuthError;
use crate::service::AuthService;
/// The caller, shared by every API (defined with its role checks in `hub-model`).
pub use hub_model::Principal;

/// The token of an `Authorization: Bearer …` header (scheme word case-insensitive).
/// `Ok(None)` without the header; an error for another scheme or an empty token.
pub fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, AuthError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| {
        AuthError::InvalidToken("the Authorization header is not readable text".into())
    })?;
    let (scheme, token) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::InvalidToken(
            "the Authorization header must use the Bearer scheme".into(),
        ));
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(AuthError::InvalidToken(
            "the Authorization header has no token".into(),
        ));
    }
    Ok(Some(token))
}

/// Middleware: verifies a bearer token if one is sent and inserts its [`Principal`];
/// answers 401 (`WWW-Authenticate: Bearer error="invalid_token"`) for a bad one.
pub async fn authenticate(
    State(service): State<AuthService>,
    mut request: Request,
    next: Next,
) -> Response {
    let principal = match bearer_token(request.headers()) {
        Ok(None) => None,
        Ok(Some(token)) => match service.verify(token).await {
            Ok(p) => Some(p),
            Err(e) => return e.into_response(),
        },
        Err(e) => return e.into_response(),
    };
    if let Some(p) = principal {
        request.extensions_mut().insert(p);
    }
    next.run(request).await
}
