//! Handlers of `/v1`, `/v1/{EntityType}` and `/v1/{EntityType}/{id}`.

use axum::extract::{Path, RawQuery as AxumRawQuery, State};
use axum::http::{header, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hub_model::{EntityType, ENTITY_TYPES};
use hub_query::content::{ContentOrder, ContentQuery, Page};
use hub_store::ContentRepo;
use serde_json::json;

use crate::error::ContentError;
use crate::list_query::ListQuery;
use crate::params::{Projection, RawQuery};
use crate::shape::{shape_document, Envelope};
use crate::ContentState;

/// The Content API routes, ready to be merged into the server's router.
pub fn router(state: ContentState) -> Router {
    Router::new()
        .route("/v1", get(list_datasets))
        .route("/v1/", get(list_datasets))
        .route(
            "/v1/{*path}",
            get(entity_path)
                .post(crate::writes::write_path)
                .put(crate::writes::write_path)
                .delete(crate::writes::write_path),
        )
        .merge(crate::tags::routes())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::formats::convert,
        ))
        .with_state(state)
}

fn json_response(body: String) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Every dataset of the registry with its number of stored records, in registry order:
/// the numbers `GET /v1` reports (the web landing page shows the same ones).
pub async fn dataset_counts(
    content: &dyn ContentRepo,
) -> Result<Vec<(&'static EntityType, u64)>, hub_store::StoreError> {
    let counts = content.counts().await?;
    Ok(ENTITY_TYPES
        .iter()
        .map(|e| {
            let count = counts
                .iter()
                .find(|(name, _)| name == e.name)
                .map(|(_, n)| *n)
                .unwrap_or(0);
            (e, count)
        })
        .collect())
}

/// `GET /v1`: the datasets, with their paths and number of records.
#[utoipa::path(get, path = "/v1", tag = "Datasets",
    responses((status = 200, description = "Envelope whose Items are the datasets: Id, Shortname, Type, ApiUrl, PathParam, ApiDescription, RecordCount")))]
pub(crate) async fn list_datasets(
    State(state): State<ContentState>,
) -> Result<Response, ContentError> {
    let items: Vec<String> = dataset_counts(&*state.content)
        .await?
        .into_iter()
        .map(|(e, count)| {
            json!({
                "Id": e.name,
                "Shortname": e.name,
                "Type": e.meta_type,
                "ApiUrl": format!("{}/v1/{}", state.base_url, e.route),
                "PathParam": std::iter::once("v1").chain(e.route.split('/')).collect::<Vec<_>>(),
                "Aliases": e.route_aliases,
                "ApiDescription": {"en": e.description},
                "RecordCount": {"open": count},
            })
            .to_string()
        })
        .collect();
    let envelope = Envelope {
        total_results: items.len() as u64,
        total_pages: 1,
        current_page: 1,
        previous_page: None,
        next_page: None,
        seed: None,
    };
    Ok(json_response(envelope.render(&items)))
}

async fn entity_path(
    State(state): State<ContentState>,
    Path(path): Path<String>,
    uri: Uri,
    AxumRawQuery(query): AxumRawQuery,
    principal: Option<axum::Extension<hub_auth::Principal>>,
) -> Result<Response, ContentError> {
    let principal = principal.map(|axum::Extension(p)| p);
    if path
        .trim_end_matches('/')
        .eq_ignore_ascii_case("deprecated")
    {
        return crate::deprecated::handler(principal.as_ref());
    }
    let (entity, id) = EntityType::resolve_path(&path).ok_or_else(|| {
        ContentError::NotFound(format!(
            "/v1/{path} is not a dataset of this API; GET /v1 lists the datasets"
        ))
    })?;
    let query = RawQuery::parse(query.as_deref());
    let full = hub_auth::policy::can_read_closed(principal.as_ref(), entity.name);
    crate::closed::with_access(full, async {
        match id {
            None => list_entities(state, entity, uri.path(), &query).await,
            Some(id) => get_entity(state, entity, id, &query).await,
        }
    })
    .await
}

/// `GET /v1/{EntityType}`: one page of documents in the list envelope.
#[utoipa::path(get, path = "/v1/{EntityType}", tag = "Content",
    params(("EntityType" = String, Path, description = "Dataset path"), crate::list_query::CommonListQuery, crate::list_query::FilterLanguageQuery),
    responses(
        (status = 200, description = "The list envelope", body = crate::openapi::EnvelopeDoc),
        (status = 400, description = "A parameter was not accepted", body = crate::openapi::ProblemDoc, content_type = "application/problem+json"),
    ))]
pub(crate) async fn list_entities(
    state: ContentState,
    entity: &'static EntityType,
    path: &str,
    raw: &RawQuery,
) -> Result<Response, ContentError> {
    let mut params = ListQuery::read(raw, entity).parse()?;
    crate::closed::apply_availability(&state, entity, raw, &mut params.filters).await?;
    let mut filters = params.filters;
    params.geo.resolve(&*state.content, &mut filters).await?;
    let query = ContentQuery {
        entity: entity.name,
        filters,
        order: params.order.clone(),
        page: params.page,
    };
    let page = crate::closed::list_visible(&*state.content, entity, query).await?;
    let Page { size, number } = params.page;
    let total_pages = page.total.div_ceil(size as u64);
    let link = |n: u32| {
        let mut replacements = vec![("pagenumber", n.to_string())];
        if let (ContentOrder::Seed(_), Some(seed)) = (&params.order, &params.seed) {
            replacements.push(("seed", seed.clone()));
        }
        format!("{}{}?{}", state.base_url, path, raw.with(&replacements))
    };
    let envelope = Envelope {
        total_results: page.total,
        total_pages,
        current_page: number,
        previous_page: (number > 1 && number as u64 <= total_pages).then(|| link(number - 1)),
        next_page: ((number as u64) < total_pages).then(|| link(number + 1)),
        seed: params.seed.as_deref(),
    };
    let items = page
        .docs
        .iter()
        .map(|d| shape_document(d, &params.projection))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json_response(envelope.render(&items)))
}

/// `GET /v1/{EntityType}/{id}`: one document (ids match case-insensitively).
#[utoipa::path(get, path = "/v1/{EntityType}/{id}", tag = "Content",
    params(("EntityType" = String, Path, description = "Dataset path"), ("id" = String, Path, description = "Document id, case-insensitive"), crate::params::SingleQuery),
    responses(
        (status = 200, description = "The document"),
        (status = 404, description = "No document with this id", body = crate::openapi::ProblemDoc, content_type = "application/problem+json"),
    ))]
pub(crate) async fn get_entity(
    state: ContentState,
    entity: &'static EntityType,
    id: &str,
    raw: &RawQuery,
) -> Result<Response, ContentError> {
    let projection = Projection::parse(&raw.typed())?;
    let stored = state.content.get(entity.name, id).await?.ok_or_else(|| {
        ContentError::NotFound(format!("{} has no document with id '{id}'", entity.route))
    })?;
    let stored = crate::closed::visible(entity, stored)?;
    Ok(json_response(shape_document(&stored, &projection)?))
}
