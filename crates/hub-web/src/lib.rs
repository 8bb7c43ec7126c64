//! # hub-web
//!
//! The web face of Hub, for people with a browser: the landing page at `/` (an index of
//! the APIs as JSON for API clients), the interactive API documentation (Swagger UI for
//! both OpenAPI documents, served from the `utoipa-swagger-ui` crate's vendored assets)
//! and the data explorer, a few small static pages whose scripts call the public JSON
//! APIs of the same server from the browser.
//!
//! The OGC API's resources also have HTML views ([`ogc_html`], a layer on those routes):
//! a browser gets a page whose script draws the resource from its JSON.
//!
//! Owns: HTML, CSS and JavaScript of these pages, the content negotiation of `/` and the
//! Content-Security-Policy they are served with. Must not: read data the APIs could serve
//! (the explorer only calls `/v1`, `/v2`, `/ogc`, `/datex/2` and the token service like any other
//! client; the landing page reads the dataset counts through the same function as `GET
//! /v1` and the station types through the Time Series repository's type list), touch SQL,
//! or decide who may see closed data (the APIs do, from the bearer token the browser sends).

mod assets;
mod docs;
mod landing;
mod ogc_view;

use std::sync::Arc;

use axum::http::{header, HeaderValue};
use axum::routing::get;
use axum::Router;
use hub_store::timeseries::TimeSeriesRepo;
use hub_store::ContentRepo;

pub use landing::{wants_html, IndexLinks};
pub use ogc_view::ogc_html;

/// What the web pages need from the server.
#[derive(Clone)]
pub struct WebState {
    /// For the record counts of the landing page (the same numbers as `GET /v1`).
    pub content: Arc<dyn ContentRepo>,
    /// For the station types of the landing page (the same list as `GET /v2/flat`).
    pub timeseries: Arc<dyn TimeSeriesRepo>,
    /// Names of the traffic feed's providers (`/datex/2/{name}/…`).
    pub datex_providers: Vec<String>,
    /// Absolute links of the JSON index.
    pub links: Arc<IndexLinks>,
}

/// Only this server's own origin: no script, style, image, font or request may come from
/// or go to anywhere else, no plugin, no framing, no inline script. `data:` images are
/// allowed for Swagger UI's icons (they are part of its own stylesheet, not another origin).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// Swagger UI sets `style` attributes in the markup it renders (its React components),
/// which `style-src 'self'` would block; scripts stay same-origin only.
const DOCS_CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// `/`, `/explorer`, `/web/{asset}`, `/favicon.ico` and `/docs/…`, each answer with the security headers.
pub fn router(state: WebState) -> Router {
    let pages = Router::new()
        .route("/", get(landing::root))
        .route("/explorer", get(assets::explorer_page))
        .route("/web/{file}", get(assets::asset))
        .route("/favicon.ico", get(assets::favicon))
        .with_state(state)
        .layer(axum::middleware::map_response(|r| {
            with_security_headers(r, CONTENT_SECURITY_POLICY)
        }));
    let docs = Router::from(docs::swagger_ui()).layer(axum::middleware::map_response(|r| {
        with_security_headers(r, DOCS_CONTENT_SECURITY_POLICY)
    }));
    pages.merge(docs)
}

pub(crate) async fn with_security_headers(
    mut response: axum::response::Response,
    policy: &'static str,
) -> axum::response::Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(policy),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}
