//! The token service's HTTP surface under `/auth/realms/{realm}/`.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http::{header, HeaderMap, StatusCode};

use crate::error::AuthError;
use crate::service::AuthService;

/// Routes of the token service (merge into the server's router; they carry their state).
pub fn router(service: AuthService) -> Router {
    Router::new()
        .route(
            "/auth/realms/{realm}/protocol/openid-connect/token",
            post(token),
        )
        .route(
            "/auth/realms/{realm}/protocol/openid-connect/certs",
            get(certs),
        )
        .route(
            "/auth/realms/{realm}/.well-known/openid-configuration",
            get(discovery),
        )
        .with_state(service)
}

// A response is what every handler returns on this path; boxing it buys nothing.
#[allow(clippy::result_large_err)]
fn check_realm(service: &AuthService, realm: &str) -> Result<(), Response> {
    if realm == service.config().realm {
        return Ok(());
    }
    let body = serde_json::json!({"error": "Realm does not exist"}).to_string();
    Err((
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response())
}

/// `client_secret_basic`: `Authorization: Basic base64(urlencode(id):urlencode(secret))`.
fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, AuthError> {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return Ok(None);
    };
    let Some((scheme, rest)) = value.trim().split_once(' ') else {
        return Ok(None);
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Ok(None);
    }
    let bad = || AuthError::oauth("invalid_client", "the Basic credentials are not readable");
    let decoded =
        String::from_utf8(STANDARD.decode(rest.trim()).map_err(|_| bad())?).map_err(|_| bad())?;
    let (id, secret) = decoded.split_once(':').ok_or_else(bad)?;
    let unescape = |s: &str| percent_decode(s);
    Ok(Some((unescape(id), unescape(secret))))
}

fn percent_decode(s: &str) -> String {
    form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

async fn token(
    State(service): State<AuthService>,
    Path(realm): Path<String>,
    connection: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(r) = check_realm(&service, &realm) {
        return r;
    }
    let form_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
        .unwrap_or(false);
    if !form_type {
        return AuthError::oauth(
            "invalid_request",
            "the body must be application/x-www-form-urlencoded",
        )
        .into_response();
    }
    let form: Vec<(String, String)> = form_urlencoded::parse(&body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let basic = match basic_credentials(&headers) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let client_ip = connection.map(|c| c.0 .0.ip());
    match service.token_from(&form, basic, client_ip).await {
        Ok(response) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "no-store"),
                (header::PRAGMA, "no-cache"),
            ],
            serde_json::to_string(&response).expect("token responses serialize"),
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

async fn certs(State(service): State<AuthService>, Path(realm): Path<String>) -> Response {
    if let Err(r) = check_realm(&service, &realm) {
        return r;
    }
    match service.jwks().await {
        Ok(jwks) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "max-age=60"),
            ],
            jwks,
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

async fn discovery(State(service): State<AuthService>, Path(realm): Path<String>) -> Response {
    if let Err(r) = check_realm(&service, &realm) {
        return r;
    }
    (
        [(header::CONTENT_TYPE, "application/json")],
        service.discovery().to_string(),
    )
        .into_response()
}
