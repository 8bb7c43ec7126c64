//! `GET /v1/HubTag` (alias `/v1/ODHTag`): deprecated, still answering. It lists the Tag
//! documents — the vocabulary that superseded the HubTags categories — with every
//! parameter of `/v1/Tag` (`validforentity`, `source`, `types`, paging, …), and says so
//! with `Deprecation: true` and `Link: </v1/Tag>; rel="successor-version"`.
//! `GET /v1/Tag` itself is the generic entity list (its filters are in
//! [`crate::entity_filters`]).

use axum::extract::{RawQuery as AxumRawQuery, State};
use axum::http::{HeaderValue, Uri};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use hub_model::EntityType;

use crate::error::ContentError;
use crate::params::RawQuery;
use crate::ContentState;

pub fn routes() -> Router<ContentState> {
    Router::new()
        .route("/v1/HubTag", get(hub_tags))
        .route("/v1/HubTag/", get(hub_tags))
        .route("/v1/ODHTag", get(hub_tags))
        .route("/v1/ODHTag/", get(hub_tags))
        .route("/v1/Filter", get(crate::filter_endpoint::filter))
        .route("/v1/Filter/", get(crate::filter_endpoint::filter))
}

async fn hub_tags(
    State(state): State<ContentState>,
    uri: Uri,
    AxumRawQuery(query): AxumRawQuery,
    format: Option<axum::Extension<crate::formats::Format>>,
) -> Result<Response, ContentError> {
    let tag = EntityType::by_name("Tag").expect("Tag is registered");
    let format = format.map_or(crate::formats::Format::Json, |axum::Extension(f)| f);
    let raw = RawQuery::parse(query.as_deref());
    let mut response = crate::routes::list_entities(state, tag, uri.path(), &raw, format).await?;
    let headers = response.headers_mut();
    headers.insert("deprecation", HeaderValue::from_static("true"));
    headers.insert(
        "link",
        HeaderValue::from_static("</v1/Tag>; rel=\"successor-version\""),
    );
    Ok(response)
}
