//! One request through the real Time Series router, as every API test sends it.

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use hub_model::Principal;
use hub_timeseries::{router, TimeseriesState};
use serde_json::Value;
use tower::ServiceExt;

/// Sends `method uri`, with `body` as JSON when given, as a caller holding `roles`
/// (`None`: anonymous); answers the status, headers and body bytes.
pub async fn send(
    state: &TimeseriesState,
    method: &str,
    uri: &str,
    body: Option<Value>,
    roles: Option<&[&str]>,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut req = Request::builder().method(method).uri(uri);
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let mut req = req
        .body(
            body.map(|b| Body::from(b.to_string()))
                .unwrap_or_else(Body::empty),
        )
        .unwrap();
    if let Some(roles) = roles {
        req.extensions_mut()
            .insert(Principal::with_roles("test", roles));
    }
    let resp = router(state.clone()).oneshot(req).await.unwrap();
    let (status, headers) = (resp.status(), resp.headers().clone());
    let bytes = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .unwrap()
        .to_bytes();
    (status, headers, bytes.to_vec())
}
