//! # hub-ogc
//!
//! OGC API – Features (`/ogc`) over the Content API's datasets and the Time Series API's
//! stations: landing page, conformance, the OpenAPI 3.0 document, one collection per
//! Content dataset (its id the dataset's lower-case type, `hubactivitypoi`), then one per
//! Time Series station type (`station-parkingstation`), items as GeoJSON with `bbox`,
//! `bbox-crs`, `crs`, `limit`/`offset` paging, `datetime`, property filters, CQL2 text
//! `filter`, single features, and queryables; and OGC API –
//! Tiles vector tiles of every collection (`/ogc/collections/{id}/tiles/WebMercatorQuad/
//! {z}/{x}/{y}`, Mapbox Vector Tiles of the located features, with the tileset and
//! `WebMercatorQuad` tile matrix set documents).
//!
//! Owns: the OGC request and response shapes (`params` reads the parameters into the
//! Content API's `ContentFilter`s, `meta` the descriptive documents, `stations` the
//! station collections' parameters, filtering and features, `tiles` tile addressing,
//! projection into tile units and the MVT encoding). Must not: write SQL, parse
//! filters itself (CQL2 is `hub_query::content::cql2`, compiled by the one `rawfilter`
//! compiler for Content collections and, rewritten into a `where`, by the Time Series
//! compiler for station collections), build Content features (that is `hub_content::geojson`), or decide what an
//! unauthorised caller sees (every Content page goes through
//! `hub_content::closed::list_visible`, every document through `closed::visible`; every
//! station read through `hub_timeseries::geojson::flat_rows`, which applies the Time
//! Series API's closed-data rules for the caller).

mod meta;
pub mod params;
pub mod stations;
pub mod tiles;

use axum::extract::{FromRef, Path, RawQuery as AxumRawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hub_content::geojson::{feature_text, write_feature, Place};
use hub_content::params::RawQuery;
use hub_content::ContentState;
use hub_model::{EntityType, Problem, ENTITY_TYPES};
use hub_query::content::{ContentOrder, ContentQuery, Page};
use hub_timeseries::TimeseriesState;
use serde_json::json;

use params::{crs_uri, parse_items, ItemsRequest};

pub const GEOJSON: &str = "application/geo+json";

/// What the routes read: Content datasets and Time Series stations.
#[derive(Clone)]
pub struct OgcState {
    pub content: ContentState,
    pub timeseries: TimeseriesState,
    extents: meta::Extents,
}

impl FromRef<OgcState> for meta::Extents {
    fn from_ref(state: &OgcState) -> Self {
        state.extents.clone()
    }
}

impl FromRef<OgcState> for ContentState {
    fn from_ref(state: &OgcState) -> Self {
        state.content.clone()
    }
}

impl FromRef<OgcState> for TimeseriesState {
    fn from_ref(state: &OgcState) -> Self {
        state.timeseries.clone()
    }
}

/// The OGC API routes, ready to be merged into the server's router.
pub fn router(content: ContentState, timeseries: TimeseriesState) -> Router {
    // The items of Content collections are cached like the Content API's lists (the
    // layer leaves every other path alone).
    let cache = hub_content::response_cache::CacheLayer {
        cache: content.cache.clone(),
        content: content.content.clone(),
    };
    let state = OgcState {
        content,
        timeseries,
        extents: meta::Extents::default(),
    };
    Router::new()
        .route("/ogc", get(meta::landing))
        .route("/ogc/", get(meta::landing))
        .route("/ogc/conformance", get(meta::conformance))
        .route("/ogc/api", get(meta::api))
        .route("/ogc/collections", get(meta::collections))
        .route("/ogc/collections/{collection}", get(meta::collection))
        .route(
            "/ogc/collections/{collection}/queryables",
            get(meta::queryables),
        )
        .route("/ogc/collections/{collection}/items", get(items))
        .route("/ogc/collections/{collection}/items/{feature}", get(item))
        .route("/ogc/collections/{collection}/tiles", get(tiles::tilesets))
        .route(
            "/ogc/collections/{collection}/tiles/{tms}",
            get(tiles::tileset_doc),
        )
        .route(
            "/ogc/collections/{collection}/tiles/{tms}/{z}/{x}/{y}",
            get(tiles::tile),
        )
        .route("/ogc/tileMatrixSets", get(tiles::tile_matrix_sets))
        .route("/ogc/tileMatrixSets/{tms}", get(tiles::tile_matrix_set_doc))
        .layer(axum::middleware::from_fn_with_state(
            cache,
            hub_content::response_cache::serve,
        ))
        .with_state(state)
}

/// The dataset a collection id names (its `_Meta.Type`, case-insensitive).
pub fn dataset(collection: &str) -> Result<&'static EntityType, Problem> {
    ENTITY_TYPES
        .iter()
        .find(|e| e.meta_type.eq_ignore_ascii_case(collection))
        .ok_or_else(|| {
            Problem::not_found(format!(
                "'{collection}' is not a collection; GET /ogc/collections lists them"
            ))
        })
}

pub(crate) fn json_answer(content_type: &'static str, body: String) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

type Principal = Option<axum::Extension<hub_auth::Principal>>;

/// `GET /ogc/collections/{id}/items`.
async fn items(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
    Path(collection): Path<String>,
    AxumRawQuery(query): AxumRawQuery,
    principal: Principal,
) -> Response {
    let raw = RawQuery::parse(query.as_deref());
    let result = async {
        if let Some(stype) = stations::station_type(&ts, &collection).await? {
            let caller = principal.as_ref().map(|axum::Extension(p)| p);
            return station_page(&state.base_url, &ts, caller, &stype, &raw).await;
        }
        let entity = dataset(&collection)?;
        let request = parse_items(&raw)?;
        // Its `timeStamp` is when the answer was made, which a cached answer keeps.
        hub_content::response_cache::cacheable();
        let full = hub_auth::policy::can_read_closed(
            principal.as_ref().map(|axum::Extension(p)| p),
            entity.name,
        );
        hub_content::closed::with_access(full, page(&state, entity, &collection, &raw, request))
            .await
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}

/// The documents `[offset, offset + limit)` in the Content API's default order. Pages of
/// the store are numbered by size; an offset that is not a multiple of the limit reads
/// the two pages that cover it.
async fn page(
    state: &ContentState,
    entity: &'static EntityType,
    collection: &str,
    raw: &RawQuery,
    request: ItemsRequest,
) -> Result<Response, Problem> {
    let ItemsRequest {
        limit,
        offset,
        crs,
        filters,
    } = request;
    let first = (offset / limit as u64) as u32 + 1;
    let skip = (offset % limit as u64) as usize;
    let query = |number: u32| ContentQuery {
        entity: entity.name,
        filters: filters.clone(),
        order: ContentOrder::Default,
        page: Page {
            size: limit,
            number,
        },
        count_limit: None,
    };
    let fetch = |number| hub_content::closed::list_visible(&*state.content, entity, query(number));
    let mut page = fetch(first).await.map_err(|e| e.to_problem())?;
    if skip > 0 && page.docs.len() == limit as usize {
        let next = fetch(first + 1).await.map_err(|e| e.to_problem())?;
        page.docs.extend(next.docs);
    }
    let docs: Vec<&String> = page.docs.iter().skip(skip).take(limit as usize).collect();
    // Each visible document is a feature's properties as stored, written once into the page.
    let mut features = String::with_capacity(docs.iter().map(|d| d.len() + 128).sum());
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            features.push(',');
        }
        write_feature(&mut features, &Place::of(doc), doc, crs);
    }
    let body = feature_collection(
        &state.base_url,
        collection,
        raw,
        (limit, offset, page.total),
        (&features, docs.len()),
    );
    Ok(with_crs(json_answer(GEOJSON, body), crs))
}

/// A page of a station collection: all stations of the type read, filtered and paged.
async fn station_page(
    base_url: &str,
    ts: &TimeseriesState,
    caller: Option<&hub_auth::Principal>,
    stype: &str,
    raw: &RawQuery,
) -> Result<Response, Problem> {
    let mut request = stations::parse_items(raw)?;
    let all = stations::stations(ts, caller, stype, request.filter.take()).await?;
    let matched: Vec<&stations::Station> = all.iter().filter(|s| request.matches(s)).collect();
    let (limit, offset) = (request.limit, request.offset);
    let features: Vec<String> = matched
        .iter()
        .skip(offset.min(usize::MAX as u64) as usize)
        .take(limit as usize)
        .map(|s| stations::feature(s, request.crs).to_string())
        .collect();
    let collection = stations::collection_id(stype);
    let body = feature_collection(
        base_url,
        &collection,
        raw,
        (limit, offset, matched.len() as u64),
        (&features.join(","), features.len()),
    );
    Ok(with_crs(json_answer(GEOJSON, body), request.crs))
}

/// A page of features as a FeatureCollection: the counts, the links (self, collection,
/// next and prev by `offset` with the request's other parameters kept), and the
/// features, already written as JSON and separated by commas, with their number.
/// `(limit, offset, matched)` describe the page.
fn feature_collection(
    base_url: &str,
    collection: &str,
    raw: &RawQuery,
    (limit, offset, matched): (u32, u64, u64),
    (features, returned): (&str, usize),
) -> String {
    let base = format!("{base_url}/ogc/collections/{collection}/items");
    let link = |rel: &str, offset: u64| {
        json!({"rel": rel, "type": GEOJSON, "title": rel,
            "href": format!("{base}?{}", raw.with(&[("offset", offset.to_string()), ("limit", limit.to_string())]))})
    };
    let mut links = vec![
        json!({"rel": "self", "type": GEOJSON, "title": "this page",
            "href": match raw_query_text(raw) { q if q.is_empty() => base.clone(), q => format!("{base}?{q}") }}),
        json!({"rel": "collection", "type": "application/json", "title": "the collection",
            "href": format!("{base_url}/ogc/collections/{collection}")}),
    ];
    let returned = returned as u64;
    if offset + returned < matched {
        links.push(link("next", offset + limit as u64));
    }
    if offset > 0 {
        links.push(link("prev", offset.saturating_sub(limit as u64)));
    }
    let head = json!({
        "type": "FeatureCollection",
        "numberMatched": matched,
        "numberReturned": returned,
        "timeStamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "links": links,
    })
    .to_string();
    let mut body = String::with_capacity(head.len() + features.len() + 16);
    body.push_str(&head[..head.len() - 1]);
    body.push_str(",\"features\":[");
    body.push_str(features);
    body.push_str("]}");
    body
}

/// A path segment with everything but unreserved characters percent-encoded.
fn path_segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn raw_query_text(raw: &RawQuery) -> String {
    raw.with(&[])
}

fn with_crs(mut response: Response, crs: hub_content::geojson::OutputCrs) -> Response {
    if let Ok(value) = HeaderValue::from_str(&format!("<{}>", crs_uri(crs))) {
        response.headers_mut().insert("content-crs", value);
    }
    response
}

/// `GET /ogc/collections/{id}/items/{featureId}`: the feature id is the document id (the
/// station code in a station collection).
async fn item(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
    Path((collection, feature)): Path<(String, String)>,
    AxumRawQuery(query): AxumRawQuery,
    principal: Principal,
) -> Response {
    let raw = RawQuery::parse(query.as_deref());
    let result = async {
        let crs = raw
            .get("crs")
            .map(|v| params::parse_crs("crs", v))
            .transpose()?
            .unwrap_or(hub_content::geojson::OutputCrs::CRS84);
        if let Some(stype) = stations::station_type(&ts, &collection).await? {
            let caller = principal.as_ref().map(|axum::Extension(p)| p);
            let all = stations::stations(&ts, caller, &stype, None).await?;
            let station = all.iter().find(|s| s.code == feature).ok_or_else(|| {
                Problem::not_found(format!("{collection} has no feature with id '{feature}'"))
            })?;
            let mut doc = stations::feature(station, crs);
            let base = format!(
                "{}/ogc/collections/{}",
                state.base_url,
                stations::collection_id(&stype)
            );
            doc["links"] = json!([
                {"rel": "self", "type": GEOJSON, "href": format!("{base}/items/{}", path_segment(&feature))},
                {"rel": "collection", "type": "application/json", "href": base},
            ]);
            return Ok(with_crs(json_answer(GEOJSON, doc.to_string()), crs));
        }
        let entity = dataset(&collection)?;
        hub_content::response_cache::cacheable();
        let full = hub_auth::policy::can_read_closed(
            principal.as_ref().map(|axum::Extension(p)| p),
            entity.name,
        );
        let stored = state
            .content
            .get(entity.name, &feature)
            .await
            .map_err(|e| hub_content::ContentError::Store(e).to_problem())?
            .ok_or_else(|| {
                Problem::not_found(format!("{collection} has no feature with id '{feature}'"))
            })?;
        let stored = hub_content::closed::with_access(full, async {
            hub_content::closed::visible(entity, stored)
        })
        .await
        .map_err(|e| hub_content::ContentError::Store(e).to_problem())?;
        let base = format!("{}/ogc/collections/{collection}", state.base_url);
        let links = json!([
            {"rel": "self", "type": GEOJSON, "href": format!("{base}/items/{}", path_segment(&feature))},
            {"rel": "collection", "type": "application/json", "href": base},
        ]);
        // The feature as a page writes it, with `links` as its last member.
        let mut body = feature_text(&Place::of(&stored), &stored, crs);
        body.pop();
        body.push_str(",\"links\":");
        body.push_str(&links.to_string());
        body.push('}');
        Ok::<_, Problem>(with_crs(json_answer(GEOJSON, body), crs))
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}
