//! Handlers of `/v1`, `/v1/{EntityType}` and `/v1/{EntityType}/{id}`.

use std::borrow::Cow;

use crate::utility::json_response;
use axum::extract::{Path, RawQuery as AxumRawQuery, State};
use axum::http::Uri;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use hub_model::{EntityType, ENTITY_TYPES};
use hub_query::content::{ContentOrder, ContentQuery, Page};
use hub_store::ContentRepo;
use serde_json::json;

use crate::error::ContentError;
use crate::formats::Format;
use crate::geojson::{Place, Places};
use crate::list_query::ListQuery;
use crate::params::{Projection, RawQuery};
use crate::shape::{shaped, Envelope};
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
                .delete(crate::writes::write_path)
                .options(crate::writes::options_path)
                // Any other method: 405 with this resource's own `Allow`.
                .fallback(crate::writes::write_path),
        )
        .merge(crate::tags::routes())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::formats::convert,
        ))
        // Outside the conversion: a cached answer is the converted bytes.
        .layer(axum::middleware::from_fn_with_state(
            crate::response_cache::CacheLayer {
                cache: state.cache.clone(),
                content: state.content.clone(),
            },
            crate::response_cache::serve,
        ))
        .with_state(state)
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
                "Type": match state.naming {
                    hub_model::Naming::Odh => hub_model::naming::odh_type(e.meta_type),
                    hub_model::Naming::Hub => e.meta_type,
                },
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
        total_estimated: false,
    };
    Ok(json_response(envelope.render(&items)))
}

async fn entity_path(
    State(state): State<ContentState>,
    Path(path): Path<String>,
    uri: Uri,
    AxumRawQuery(query): AxumRawQuery,
    principal: Option<axum::Extension<hub_auth::Principal>>,
    format: Option<axum::Extension<Format>>,
) -> Result<Response, ContentError> {
    let principal = principal.map(|axum::Extension(p)| p);
    let format = format.map_or(Format::Json, |axum::Extension(f)| f);
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
    // A list or a document is a function of the request, the access level and the
    // entity's documents (handlers below opt out when the clock or chance decide).
    crate::response_cache::cacheable();
    crate::closed::with_access(full, async {
        match id {
            None => list_entities(state, entity, uri.path(), &query, format).await,
            Some(id) => get_entity(state, entity, id, &path, &query).await,
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
    format: Format,
) -> Result<Response, ContentError> {
    crate::odh_parameters::refuse_unsupported(entity, raw)?;
    let mut params = ListQuery::read(raw, entity).parse()?;
    params.projection = std::mem::take(&mut params.projection).in_naming(request_naming(
        &state,
        path.trim_start_matches("/v1/"),
        raw,
    ));
    crate::closed::apply_availability(&state, entity, raw, &mut params.filters).await?;
    let mut filters = params.filters;
    params.geo.resolve(&*state.content, &mut filters).await?;
    if params.as_id_array {
        let ids = id_array(&state, entity, filters, params.order.clone()).await?;
        return Ok(json_response(serde_json::Value::from(ids).to_string()));
    }
    let query = ContentQuery {
        entity: entity.name,
        filters,
        order: params.order.clone(),
        page: params.page,
        count_limit: state.count_limit,
    };
    if params.whole_dataset {
        let docs = crate::whole::stream_visible(&*state.content, entity, query).await?;
        if format == Format::Csv {
            return crate::csv_stream::csv_response(docs, params.projection).await;
        }
        return Ok(crate::whole::envelope_response(
            docs,
            params.seed,
            params.projection,
        ));
    }
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
        total_estimated: page.total_estimated,
    };
    // Borrowed where the projection leaves a document as stored: the page is copied once,
    // into the envelope.
    let items = page
        .docs
        .iter()
        .map(|d| shaped(d, &params.projection))
        .collect::<Result<Vec<_>, _>>()?;
    let mut response = json_response(envelope.render(&items));
    if page.total_estimated {
        response.headers_mut().insert(
            crate::shape::TOTAL_ESTIMATED_HEADER,
            http::HeaderValue::from_static("true"),
        );
    }
    Ok(with_places(response, || {
        page.docs.iter().map(|d| Place::of(d)).collect()
    }))
}

/// Most ids `getasidarray=true` answers; a larger result is a 400 asking for filters.
pub const MAX_ID_ARRAY: u64 = 100_000;

/// The ids of every matching document, in list order, read a page of 1,000 at a time so
/// only the ids are kept (the reference answers them without paging).
async fn id_array(
    state: &ContentState,
    entity: &'static EntityType,
    filters: Vec<hub_query::content::ContentFilter>,
    order: ContentOrder,
) -> Result<Vec<String>, ContentError> {
    const CHUNK: u32 = crate::params::MAX_PAGE_SIZE;
    let mut ids = Vec::new();
    for number in 1.. {
        let query = ContentQuery {
            entity: entity.name,
            filters: filters.clone(),
            order: order.clone(),
            page: Page {
                size: CHUNK,
                number,
            },
            count_limit: None,
        };
        let page = crate::closed::list_visible(&*state.content, entity, query).await?;
        if page.total > MAX_ID_ARRAY {
            return Err(ContentError::InvalidParameter {
                parameter: "getasidarray".into(),
                detail: format!(
                    "{} documents match; getasidarray answers at most {MAX_ID_ARRAY} ids, narrow the list with filters",
                    page.total
                ),
            });
        }
        for doc in &page.docs {
            // Only `Id` is kept; the rest of the document is skipped while parsing.
            #[derive(serde::Deserialize)]
            struct IdOnly {
                #[serde(rename = "Id")]
                id: Option<serde_json::Value>,
            }
            let parsed: IdOnly = serde_json::from_str(doc).map_err(hub_store::StoreError::from)?;
            match parsed.id {
                Some(serde_json::Value::String(id)) => ids.push(id),
                Some(other @ serde_json::Value::Number(_)) => ids.push(other.to_string()),
                _ => {}
            }
        }
        if page.docs.len() < CHUNK as usize || ids.len() as u64 >= page.total {
            break;
        }
    }
    Ok(ids)
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
    route: &str,
    raw: &RawQuery,
) -> Result<Response, ContentError> {
    let projection = Projection::parse(&raw.typed())?.in_naming(request_naming(&state, route, raw));
    let stored = state.content.get(entity.name, id).await?.ok_or_else(|| {
        ContentError::NotFound(format!("{} has no document with id '{id}'", entity.route))
    })?;
    let stored = crate::closed::visible(entity, stored)?;
    let places = crate::geojson::wanted().then(|| vec![Place::of(&stored)]);
    // The stored text is the answer itself when the projection leaves it as it is.
    let body = match shaped(&stored, &projection)? {
        Cow::Owned(shaped) => shaped,
        Cow::Borrowed(_) => stored,
    };
    let response = json_response(body);
    Ok(with_places(response, || places.unwrap_or_default()))
}

/// Attaches the places of the answer's documents when GeoJSON was asked for.
fn with_places(mut response: Response, places: impl FnOnce() -> Vec<Place>) -> Response {
    if crate::geojson::wanted() {
        response.extensions_mut().insert(Places(places()));
    }
    response
}

/// The spelling of this request's answer: the deployment's, or ODH when the route below
/// `/v1/` or a parameter name is spelled the ODH way.
pub(crate) fn request_naming(
    state: &ContentState,
    route: &str,
    raw: &RawQuery,
) -> hub_model::Naming {
    hub_model::Naming::for_request(state.naming, route, raw.names())
}
