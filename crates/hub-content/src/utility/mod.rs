//! Utility endpoints of the Content API (spec: "Content API: utility endpoints"):
//!
//! | route | module |
//! |---|---|
//! | `GET /v1/GeoShapes[/{id}]`, alias `/v1/GeoShape[/{id}]` | [`geoshapes`] |
//! | `GET/POST /v1/GeoConverter/KmlToGeoJson`, `…/GpxToGeoJson` | [`geoconverter`] |
//! | `GET /v1/Location`, `GET /v1/Location/Skiarea` | [`location`] |
//! | `GET /v1/Find` | [`find`] |
//! | `GET /v1/Distinct` | [`distinct`] |
//!
//! `/v1/Source` is an entity type of the registry and served by the generic routes.
//! These routes are static paths, so axum prefers them to the `/v1/{*path}` catch-all
//! of the entity routes whatever the order of merging.

pub mod distinct;
pub mod find;
pub mod geoconverter;
pub mod geoshapes;
pub mod location;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

use hub_store::ContentRepo;

pub use geoconverter::GeoConverterConfig;

/// What the utility handlers share.
#[derive(Clone)]
pub struct UtilityState {
    /// The document store's content repository.
    pub content: Arc<dyn ContentRepo>,
    /// Absolute base of links, without trailing slash.
    pub base_url: String,
    pub geoconverter: GeoConverterConfig,
    /// The deployment's spelling of documents (`--naming`), as in `ContentState`.
    pub naming: hub_model::Naming,
}

/// The utility routes, ready to be merged into the server's router.
pub fn router(state: UtilityState) -> Router {
    let limit = state.geoconverter.max_bytes;
    Router::new()
        .route("/v1/GeoShapes", get(geoshapes::list))
        .route("/v1/GeoShape", get(geoshapes::list))
        .route("/v1/GeoShapes/{id}", get(geoshapes::single))
        .route("/v1/GeoShape/{id}", get(geoshapes::single))
        .route(
            "/v1/GeoConverter/KmlToGeoJson",
            get(geoconverter::kml_from_url).post(geoconverter::kml_from_body),
        )
        .route(
            "/v1/GeoConverter/GpxToGeoJson",
            get(geoconverter::gpx_from_url).post(geoconverter::gpx_from_body),
        )
        .route("/v1/Location", get(location::list))
        .route("/v1/Location/Skiarea", get(location::skiareas))
        .route("/v1/Location/SkiArea", get(location::skiareas))
        .route("/v1/Find", get(find::find))
        .route("/v1/Distinct", get(distinct::distinct))
        // Uploads beyond the converter's limit are refused before they are read whole;
        // the handler checks again and answers with a problem body.
        .layer(axum::extract::DefaultBodyLimit::max(limit + 64 * 1024))
        .with_state(state)
}

/// The `locfilter` tokens of a query (lower case), validated as on lists; the other
/// geographic parameters of lists are not read.
pub(crate) fn locfilter(
    value: Option<&str>,
) -> Result<Option<Vec<String>>, crate::error::ContentError> {
    value.map(crate::geo_params::locations).transpose()
}

pub(crate) fn json_response(body: String) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body,
    )
        .into_response()
}
