//! Content negotiation of the OGC API's HTML views: a browser (or `f=html`) asking for
//! the landing page, the collections, a collection, its items or one feature gets the
//! page whose script draws that resource from its JSON; `f=json` and every other client
//! get the JSON answer unchanged. The JSON handler still runs first, so the page carries
//! its status (a missing collection is a 404 page showing the problem).

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;

use crate::landing::wants_html;

/// `/ogc`, `/ogc/collections`, `/ogc/collections/{id}`, `…/items`, `…/items/{featureId}`
/// (not the OpenAPI document, conformance, queryables or tiles).
fn has_view(path: &str) -> bool {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    matches!(
        segments.as_slice(),
        ["ogc"]
            | ["ogc", "collections"]
            | ["ogc", "collections", _]
            | ["ogc", "collections", _, "items"]
            | ["ogc", "collections", _, "items", _]
    )
}

/// The `f` parameter's value, if the query has one.
fn format_parameter(query: Option<&str>) -> Option<String> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == "f")
        .map(|(_, v)| v.into_owned())
}

/// Middleware for the OGC routes.
pub async fn ogc_html(request: Request, next: Next) -> Response {
    if request.method() != Method::GET || !has_view(request.uri().path()) {
        return next.run(request).await;
    }
    let html = match format_parameter(request.uri().query()).as_deref() {
        Some("html") => true,
        Some(_) => false,
        None => wants_html(request.headers()),
    };
    let answer = next.run(request).await;
    let mut answer = if html {
        crate::with_security_headers(
            crate::assets::ogc_page(answer.status()),
            crate::CONTENT_SECURITY_POLICY,
        )
        .await
    } else {
        answer
    };
    // The same URL answers a page or JSON by `Accept`: caches must keep them apart.
    answer
        .headers_mut()
        .append(header::VARY, HeaderValue::from_static("Accept"));
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_cover_the_browsable_resources_only() {
        for (path, view) in [
            ("/ogc", true),
            ("/ogc/", true),
            ("/ogc/collections", true),
            ("/ogc/collections/hubactivitypoi", true),
            ("/ogc/collections/hubactivitypoi/items", true),
            ("/ogc/collections/hubactivitypoi/items/ABC", true),
            ("/ogc/api", false),
            ("/ogc/conformance", false),
            ("/ogc/collections/hubactivitypoi/queryables", false),
            (
                "/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad/0/0/0",
                false,
            ),
            ("/ogcx", false),
        ] {
            assert_eq!(has_view(path), view, "{path}");
        }
        assert_eq!(
            format_parameter(Some("limit=1&f=json")).as_deref(),
            Some("json")
        );
        assert_eq!(format_parameter(Some("f=html")).as_deref(), Some("html"));
        assert_eq!(format_parameter(None), None);
    }
}
