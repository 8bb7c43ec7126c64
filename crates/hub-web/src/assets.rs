//! The explorer's static files, compiled into the binary.

use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};

/// Name, media type and content of every file under `/web/`.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "favicon.svg",
        "image/svg+xml",
        include_str!("../assets/favicon.svg"),
    ),
    (
        "hub.css",
        "text/css; charset=utf-8",
        include_str!("../assets/hub.css"),
    ),
    (
        "explorer.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/explorer.js"),
    ),
    (
        "views.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/views.js"),
    ),
    (
        "timeseries.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/timeseries.js"),
    ),
    (
        "dom.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/dom.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/api.js"),
    ),
    (
        "map.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/map.js"),
    ),
    (
        "ogc.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/ogc.js"),
    ),
    (
        "chart.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/chart.js"),
    ),
];

/// Cached briefly: the files change only with the binary.
const CACHE: &str = "public, max-age=300";

pub(crate) async fn explorer_page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, CACHE),
        ],
        include_str!("../assets/explorer.html"),
    )
        .into_response()
}

/// The HTML view of an OGC API resource (its script reads the same URL as JSON), with
/// the status the JSON answer had.
pub(crate) fn ogc_page(status: axum::http::StatusCode) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, CACHE),
        ],
        include_str!("../assets/ogc.html"),
    )
        .into_response()
}

/// Browsers ask for `/favicon.ico` on their own; the SVG icon answers it.
pub(crate) async fn favicon() -> Response {
    asset(Path("favicon.svg".to_string())).await
}

pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, media, body)) => (
            [
                (header::CONTENT_TYPE, *media),
                (header::CACHE_CONTROL, CACHE),
            ],
            *body,
        )
            .into_response(),
        None => hub_model::Problem::not_found(format!("/web/{file} is not a file of the explorer"))
            .into_response(),
    }
}
