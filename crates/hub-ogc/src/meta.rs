//! The descriptive documents: landing page, conformance, collections, queryables and the
//! OpenAPI 3.0 description of `/ogc`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use hub_content::ContentState;
use hub_model::{EntityType, Problem, ENTITY_TYPES};
use hub_store::Extent;
use hub_timeseries::TimeseriesState;
use serde_json::{json, Value};

use crate::params::{crs_uris, CRS84, DEFAULT_LIMIT, MAX_LIMIT, PROPERTY_FILTERS};
use crate::stations::{collection_id, station_type, station_types, STATION_FILTERS};
use crate::tiles::{BUFFER, EXTENT, MAX_FEATURES, MAX_ZOOM, MVT, WEB_MERCATOR_QUAD};
use crate::{dataset, json_answer, GEOJSON};

const JSON: &str = "application/json";
/// The link relation from a collection to its vector tilesets (OGC API – Tiles).
const TILESETS: &str = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector";
const OPENAPI: &str = "application/vnd.oai.openapi+json;version=3.0";

/// The conformance classes Hub claims (see docs/decisions.md, issue 16, for why these).
pub const CONFORMANCE: &[&str] = &[
    "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
    "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
    "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
    "http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
    "http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
    "http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
    "http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
    "http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions",
];

fn ok_json(value: Value) -> Response {
    json_answer(JSON, value.to_string())
}

pub(crate) async fn landing(State(state): State<ContentState>) -> Response {
    let base = format!("{}/ogc", state.base_url);
    ok_json(json!({
        "title": "Hub OGC API – Features",
        "description": "Tourism content of the Hub Content API and the stations of the Time Series API as OGC API – Features collections: one per dataset, then one per station type.",
        "links": [
            {"rel": "self", "type": JSON, "title": "this document", "href": base},
            {"rel": "service-desc", "type": OPENAPI, "title": "the API definition", "href": format!("{base}/api")},
            {"rel": "conformance", "type": JSON, "title": "conformance classes", "href": format!("{base}/conformance")},
            {"rel": "data", "type": JSON, "title": "the collections", "href": format!("{base}/collections")},
        ],
    }))
}

pub(crate) async fn conformance() -> Response {
    ok_json(json!({ "conformsTo": CONFORMANCE }))
}

/// Each Content collection's extent with the write revision it was read at: the
/// aggregate reads every row of the dataset, the revision one row, so it is read again
/// only after a write to that dataset (by any process sharing the store).
#[derive(Clone, Default)]
pub struct Extents(Arc<Mutex<HashMap<&'static str, (i64, Extent)>>>);

impl Extents {
    async fn of(
        &self,
        state: &ContentState,
        entity: &'static EntityType,
    ) -> Result<Extent, Problem> {
        let store = |e: hub_store::StoreError| hub_content::ContentError::Store(e).to_problem();
        let revision = state.content.revision(entity.name).await.map_err(store)?;
        if let Some((seen, extent)) = self.0.lock().ok().and_then(|m| m.get(entity.name).cloned()) {
            if seen == revision {
                return Ok(extent);
            }
        }
        let extent = state.content.extent(entity.name).await.map_err(store)?;
        if let Ok(mut cache) = self.0.lock() {
            cache.insert(entity.name, (revision, extent.clone()));
        }
        Ok(extent)
    }
}

/// The `extent` member of a collection: the box of the located documents (CRS84) and the
/// interval of their last changes. A box needs four numbers (the OGC schema), so a
/// dataset without located documents has no `spatial` part; one without documents no
/// extent at all.
fn extent_doc(extent: &Extent) -> Option<Value> {
    let mut doc = serde_json::Map::new();
    if let Some(bbox) = extent.bbox {
        doc.insert("spatial".into(), json!({"bbox": [bbox], "crs": CRS84}));
    }
    if let Some((first, last)) = &extent.changed {
        doc.insert(
            "temporal".into(),
            json!({
                "interval": [[format!("{first}Z"), format!("{last}Z")]],
                "trs": "http://www.opengis.net/def/uom/ISO-8601/0/Gregorian",
            }),
        );
    }
    (!doc.is_empty()).then_some(Value::Object(doc))
}

fn collection_doc(base_url: &str, entity: &EntityType, extent: &Extent) -> Value {
    let href = format!("{base_url}/ogc/collections/{}", entity.meta_type);
    let mut doc = json!({
        "id": entity.meta_type,
        "title": entity.name,
        "description": entity.description,
        "itemType": "feature",
        "crs": crs_uris(),
        "storageCrs": CRS84,
        "links": [
            {"rel": "self", "type": JSON, "title": "this collection", "href": href},
            {"rel": "items", "type": GEOJSON, "title": "its features", "href": format!("{href}/items")},
            {"rel": "http://www.opengis.net/def/rel/ogc/1.0/queryables", "type": "application/schema+json", "title": "what the filter may name", "href": format!("{href}/queryables")},
            {"rel": "describedby", "type": JSON, "title": "the same data in the Content API", "href": format!("{base_url}/v1/{}", entity.route)},
            {"rel": TILESETS, "type": JSON, "title": "its vector tiles", "href": format!("{href}/tiles")},
        ],
    });
    if let Some(extent) = extent_doc(extent) {
        doc["extent"] = extent;
    }
    doc
}

fn station_collection_doc(base_url: &str, ts_base: &str, stype: &str) -> Value {
    let id = collection_id(stype);
    let href = format!("{base_url}/ogc/collections/{id}");
    json!({
        "id": id,
        "title": format!("{stype} stations"),
        "description": format!("The {stype} stations of the Time Series API, each with the latest measurement of every data type (latest: data type → value, time, period)."),
        "itemType": "feature",
        "crs": crs_uris(),
        "storageCrs": CRS84,
        "links": [
            {"rel": "self", "type": JSON, "title": "this collection", "href": href},
            {"rel": "items", "type": GEOJSON, "title": "its features", "href": format!("{href}/items")},
            {"rel": "http://www.opengis.net/def/rel/ogc/1.0/queryables", "type": "application/schema+json", "title": "what the property parameters may name", "href": format!("{href}/queryables")},
            {"rel": "describedby", "type": JSON, "title": "the same stations in the Time Series API", "href": format!("{ts_base}/flat/{stype}")},
            {"rel": TILESETS, "type": JSON, "title": "its vector tiles", "href": format!("{href}/tiles")},
        ],
    })
}

pub(crate) async fn collections(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
    State(extents): State<Extents>,
) -> Response {
    let base = format!("{}/ogc/collections", state.base_url);
    let mut list = Vec::with_capacity(ENTITY_TYPES.len());
    for entity in ENTITY_TYPES {
        match extents.of(&state, entity).await {
            Ok(extent) => list.push(collection_doc(&state.base_url, entity, &extent)),
            Err(problem) => return problem.into_response(),
        }
    }
    match station_types(&ts).await {
        Ok(types) => list.extend(
            types
                .iter()
                .map(|t| station_collection_doc(&state.base_url, &ts.config.base_url, t)),
        ),
        Err(problem) => return problem.into_response(),
    }
    ok_json(json!({
        "links": [{"rel": "self", "type": JSON, "title": "this document", "href": base}],
        "collections": list,
    }))
}

pub(crate) async fn collection(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
    State(extents): State<Extents>,
    Path(collection): Path<String>,
) -> Response {
    let result = async {
        if let Some(stype) = station_type(&ts, &collection).await? {
            return Ok(station_collection_doc(
                &state.base_url,
                &ts.config.base_url,
                &stype,
            ));
        }
        let entity = dataset(&collection)?;
        let extent = extents.of(&state, entity).await?;
        Ok::<_, Problem>(collection_doc(&state.base_url, entity, &extent))
    }
    .await;
    match result {
        Ok(doc) => ok_json(doc),
        Err(problem) => problem.into_response(),
    }
}

/// A collection's queryables document: its point geometry and the property filters it
/// takes; `open` says whether other names may be queried too.
fn queryables_schema(id: String, title: &str, filters: &[(&str, &str)], open: bool) -> Response {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "geometry".into(),
        json!({"title": "position", "format": "geometry-point", "x-ogc-role": "primary-geometry"}),
    );
    for (name, kind) in filters {
        properties.insert((*name).into(), json!({"title": name, "type": kind}));
    }
    json_answer(
        "application/schema+json",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": id,
            "type": "object",
            "title": title,
            "properties": properties,
            "additionalProperties": open,
        })
        .to_string(),
    )
}

/// JSON Schema of what `filter` and the property parameters may name. Any other
/// `rawfilter` path is accepted too (documents are schemaless), hence
/// `additionalProperties`.
pub(crate) async fn queryables(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
    Path(collection): Path<String>,
) -> Response {
    match station_type(&ts, &collection).await {
        Ok(Some(stype)) => {
            // Station collections take only their property parameters (no CQL2).
            return queryables_schema(
                format!(
                    "{}/ogc/collections/{}/queryables",
                    state.base_url,
                    collection_id(&stype)
                ),
                &format!("{stype} stations"),
                STATION_FILTERS,
                false,
            );
        }
        Ok(None) => {}
        Err(problem) => return problem.into_response(),
    }
    let entity = match dataset(&collection) {
        Ok(e) => e,
        Err(problem) => return problem.into_response(),
    };
    queryables_schema(
        format!(
            "{}/ogc/collections/{}/queryables",
            state.base_url, entity.meta_type
        ),
        entity.name,
        PROPERTY_FILTERS,
        true,
    )
}

/// The OpenAPI 3.0 document of `/ogc`.
pub(crate) async fn api(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
) -> Response {
    let stypes = match station_types(&ts).await {
        Ok(t) => t,
        Err(problem) => return problem.into_response(),
    };
    let collections: Vec<String> = ENTITY_TYPES
        .iter()
        .map(|e| e.meta_type.to_string())
        .chain(stypes.iter().map(|t| collection_id(t)))
        .collect();
    let param = |name: &str, description: &str, schema: Value| json!({"name": name, "in": "query", "required": false, "description": description, "schema": schema});
    let collection_id = json!({"name": "collectionId", "in": "path", "required": true, "schema": {"type": "string", "enum": collections}});
    let problem = json!({"description": "A parameter was not accepted", "content": {"application/problem+json": {"schema": {"type": "object"}}}});
    let doc_ok = |description: &str, media: &str| json!({"200": {"description": description, "content": {media: {"schema": {"type": "object"}}}}});
    let mut items_responses = doc_ok("A page of features", GEOJSON);
    items_responses["400"] = problem.clone();
    items_responses["404"] = json!({"description": "No such collection"});
    let mut item_responses = doc_ok("One feature", GEOJSON);
    item_responses["404"] = json!({"description": "No such collection or feature"});
    let mut tile_responses = json!({"200": {"description": format!("A Mapbox Vector Tile: one layer named after the collection, a point per located feature (Content: Id, Shortname; stations: scode, sname), extent {EXTENT}, {BUFFER} units of buffer, at most {MAX_FEATURES} features; a tile with none is an empty layer"), "content": {MVT: {"schema": {"type": "string", "format": "binary"}}}}});
    tile_responses["400"] = problem.clone();
    tile_responses["404"] = json!({"description": "No such collection or tile matrix set"});
    let tms_id = json!({"name": "tileMatrixSetId", "in": "path", "required": true, "schema": {"type": "string", "enum": [WEB_MERCATOR_QUAD]}});
    let last_tile = (1u32 << MAX_ZOOM) - 1;
    let path_int = |name: &str, description: &str, max: u32| json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "integer", "minimum": 0, "maximum": max}});
    let body = json!({
        "openapi": "3.0.3",
        "info": {"title": "Hub OGC API – Features", "version": env!("CARGO_PKG_VERSION"),
                 "license": {"name": "AGPL-3.0-or-later"}},
        "servers": [{"url": format!("{}/ogc", state.base_url)}],
        "paths": {
            "/": {"get": {"operationId": "getLandingPage", "summary": "Landing page", "responses": doc_ok("The landing page", JSON)}},
            "/conformance": {"get": {"operationId": "getConformance", "summary": "Conformance classes", "responses": doc_ok("The conformance classes", JSON)}},
            "/api": {"get": {"operationId": "getApi", "summary": "This document", "responses": doc_ok("The OpenAPI document", OPENAPI)}},
            "/collections": {"get": {"operationId": "getCollections", "summary": "The collections", "responses": doc_ok("One collection per Content dataset, then one per Time Series station type", JSON)}},
            "/collections/{collectionId}": {"get": {"operationId": "describeCollection", "parameters": [collection_id], "responses": doc_ok("The collection", JSON)}},
            "/collections/{collectionId}/queryables": {"get": {"operationId": "getQueryables", "parameters": [collection_id], "responses": doc_ok("JSON Schema of the queryables", "application/schema+json")}},
            "/collections/{collectionId}/items": {"get": {
                "operationId": "getFeatures",
                "parameters": [
                    collection_id,
                    param("limit", &format!("Features per page (default {DEFAULT_LIMIT}, at most {MAX_LIMIT})"), json!({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT})),
                    param("offset", "Features to skip", json!({"type": "integer", "minimum": 0, "default": 0})),
                    param("bbox", "minx,miny,maxx,maxy in bbox-crs (default CRS84)", json!({"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 6})),
                    param("bbox-crs", "CRS of bbox", json!({"type": "string", "format": "uri", "enum": crs_uris()})),
                    param("crs", "CRS of the answer's coordinates", json!({"type": "string", "format": "uri", "enum": crs_uris()})),
                    param("datetime", "Content collections: last change; station collections: time of a latest measurement. An instant or an interval start/end, '..' open", json!({"type": "string"})),
                    param("filter", "CQL2 text filter (Content collections: paths of the documents; station collections: the properties of `/v2` where)", json!({"type": "string"})),
                    param("filter-lang", "cql2-text (cql-text: the draft's name, read the same)", json!({"type": "string", "enum": ["cql2-text", "cql-text"], "default": "cql2-text"})),
                    param("filter-crs", "CRS of the filter's geometries", json!({"type": "string", "format": "uri", "enum": crs_uris()})),
                    param("Id", "Equal to this document id", json!({"type": "string"})),
                    param("Shortname", "Equal to this short name", json!({"type": "string"})),
                    param("Active", "Active or not", json!({"type": "boolean"})),
                    param("Source", "Equal to this source", json!({"type": "string"})),
                    param("scode", "Station collections: equal to this station code", json!({"type": "string"})),
                    param("sname", "Station collections: equal to this station name", json!({"type": "string"})),
                    param("sorigin", "Station collections: equal to this origin", json!({"type": "string"})),
                    param("sactive", "Station collections: active or not", json!({"type": "boolean"})),
                ],
                "responses": items_responses,
            }},
            "/collections/{collectionId}/items/{featureId}": {"get": {
                "operationId": "getFeature",
                "parameters": [collection_id, {"name": "featureId", "in": "path", "required": true, "schema": {"type": "string"}},
                    param("crs", "CRS of the answer's coordinates", json!({"type": "string", "format": "uri", "enum": crs_uris()}))],
                "responses": item_responses,
            }},
            "/collections/{collectionId}/tiles": {"get": {"operationId": "getTileSetsList", "summary": "The collection's vector tilesets (one: WebMercatorQuad)", "parameters": [collection_id], "responses": doc_ok("The tilesets", JSON)}},
            "/collections/{collectionId}/tiles/{tileMatrixSetId}": {"get": {"operationId": "describeTileset", "parameters": [collection_id, tms_id], "responses": doc_ok("The tileset", JSON)}},
            "/collections/{collectionId}/tiles/{tileMatrixSetId}/{tileMatrix}/{tileCol}/{tileRow}": {"get": {
                "operationId": "getTile",
                "summary": "A vector tile (path order z/x/y: column before row)",
                "parameters": [collection_id, tms_id,
                    path_int("tileMatrix", &format!("Zoom level z, 0 to {MAX_ZOOM}"), MAX_ZOOM),
                    path_int("tileCol", "Column x, below 2^z", last_tile),
                    path_int("tileRow", "Row y from the top, below 2^z", last_tile)],
                "responses": tile_responses,
            }},
            "/tileMatrixSets": {"get": {"operationId": "getTileMatrixSetsList", "responses": doc_ok("The tile matrix sets (one: WebMercatorQuad)", JSON)}},
            "/tileMatrixSets/{tileMatrixSetId}": {"get": {"operationId": "getTileMatrixSet", "parameters": [tms_id], "responses": doc_ok("The tile matrix set's definition", JSON)}},
        },
    });
    json_answer(OPENAPI, body.to_string())
}
