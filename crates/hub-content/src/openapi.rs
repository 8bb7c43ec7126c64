//! The OpenAPI 3.1 document of the Content API, generated from the handlers' annotations
//! and expanded to one path per dataset of the registry.

use hub_model::ENTITY_TYPES;

use crate::list_query::EntityListQuery;
use utoipa::openapi::path::PathItem;
use utoipa::{OpenApi, ToSchema};

/// The list envelope.
#[allow(dead_code, non_snake_case)]
#[derive(ToSchema)]
pub struct EnvelopeDoc {
    /// Number of matches; exact up to the server's exact-count limit (10,000 by default).
    TotalResults: u64,
    TotalPages: u64,
    /// Present (true) only when the count stopped at the exact-count limit: `TotalResults`
    /// is then an estimate of at least the limit + 1 (also sent as the header
    /// `Hub-Total-Estimated: true`).
    #[schema(required = false)]
    TotalResultsEstimated: bool,
    CurrentPage: u32,
    /// Absolute URL of the previous page, repeating the query.
    PreviousPage: Option<String>,
    /// Absolute URL of the next page, repeating the query.
    NextPage: Option<String>,
    /// The normalised seed when a seeded order is active.
    Seed: Option<String>,
    Items: Vec<serde_json::Value>,
}

/// An RFC 7807 problem.
#[allow(dead_code)]
#[derive(ToSchema)]
pub struct ProblemDoc {
    #[schema(rename = "type")]
    kind: String,
    title: String,
    status: u16,
    detail: String,
    /// The parameter that was not accepted.
    parameter: Option<String>,
    /// 1-based character position in the parameter value, for parse errors.
    position: Option<usize>,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Hub Content API",
        description = "Tourism documents: one URL pattern, one envelope, paging, field selection and language projection."
    ),
    paths(
        crate::routes::list_datasets,
        crate::routes::list_entities,
        crate::routes::get_entity,
        utility_paths::create_entity,
        utility_paths::update_entity,
        utility_paths::delete_entity,
        utility_paths::hub_tag,
        utility_paths::filter,
        utility_paths::find,
        utility_paths::distinct,
        utility_paths::location,
        utility_paths::location_skiarea,
        utility_paths::geoshapes,
        utility_paths::geoshape,
        utility_paths::kml_get,
        utility_paths::kml_post,
        utility_paths::gpx_get,
        utility_paths::gpx_post,
        utility_paths::deprecated,
    ),
    components(schemas(EnvelopeDoc, ProblemDoc))
)]
struct ContentApiDoc;

/// The served document: [`openapi`] with the parameters' limits and enums, the bearer
/// security scheme and the error answers every operation can give
/// ([`crate::openapi_contract`]).
pub fn document() -> serde_json::Value {
    let mut doc = serde_json::to_value(openapi()).expect("the OpenAPI document serializes");
    crate::openapi_contract::refine(&mut doc);
    doc
}

/// The OpenAPI document: the generic `{EntityType}` operations repeated for each dataset.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ContentApiDoc::openapi();
    let generic_list = doc.paths.paths.remove("/v1/{EntityType}");
    let generic_single = doc.paths.paths.remove("/v1/{EntityType}/{id}");
    // Aliases answer like the routes they stand for.
    for (alias, of) in [
        ("/v1/ODHTag", "/v1/HubTag"),
        ("/v1/Location/SkiArea", "/v1/Location/Skiarea"),
        ("/v1/GeoShape", "/v1/GeoShapes"),
        ("/v1/GeoShape/{id}", "/v1/GeoShapes/{id}"),
    ] {
        if let Some(item) = doc.paths.paths.get(of).cloned() {
            doc.paths
                .paths
                .insert(alias.to_string(), alias_of(item, alias));
        }
    }
    for entity in ENTITY_TYPES {
        for (generic, suffix, verb) in [
            (&generic_list, "", "list"),
            (&generic_single, "/{id}", "get"),
        ] {
            if let Some(item) = generic {
                let key = format!("/v1/{}{}", entity.route, suffix);
                // A static route of the utility router answers here (GeoShapes): its own
                // description stands, named like the other datasets' operations.
                if let Some(mut own) = doc.paths.paths.get(&key).cloned() {
                    if let Some(op) = own.get.as_mut() {
                        op.operation_id = Some(format!("{verb}{}", entity.name));
                    }
                    doc.paths.paths.insert(key, own);
                    continue;
                }
                let mut item = specialise(item, entity.name, verb, entity.description);
                if let (Some(op), "list") = (item.get.as_mut(), verb) {
                    op.parameters
                        .get_or_insert_with(Vec::new)
                        .extend(EntityListQuery::documented(entity.name));
                }
                doc.paths.paths.insert(key, item);
            }
        }
    }
    doc
}

fn alias_of(mut item: PathItem, alias: &str) -> PathItem {
    let suffix = alias
        .trim_start_matches("/v1/")
        .replace(['/', '{', '}'], "");
    for op in [item.get.as_mut(), item.post.as_mut()]
        .into_iter()
        .flatten()
    {
        op.operation_id = op
            .operation_id
            .take()
            .map(|id| format!("{id}Alias{suffix}"));
    }
    item
}

fn specialise(item: &PathItem, name: &str, verb: &str, description: &str) -> PathItem {
    let mut item = item.clone();
    let ops = [
        (item.get.as_mut(), verb),
        (item.post.as_mut(), "create"),
        (item.put.as_mut(), "update"),
        (item.delete.as_mut(), "delete"),
    ];
    for (op, verb) in ops {
        let Some(op) = op else { continue };
        op.operation_id = Some(format!("{verb}{name}"));
        op.tags = Some(vec![name.to_string()]);
        if verb == "list" || verb == "get" {
            op.description = Some(description.to_string());
        }
        if let Some(params) = op.parameters.as_mut() {
            params.retain(|p| p.name != "EntityType");
        }
    }
    item
}

/// Descriptions of the routes whose handlers are not plain annotated functions: the
/// utility endpoints and the writes, which are dispatched by hand (the `/v1/{*path}`
/// catch-all) or take extractors that utoipa cannot describe. Each function here only
/// carries the `#[utoipa::path]` of one route; the router in `routes.rs`,
/// `tags.rs` and `utility/mod.rs` is what answers.
#[allow(dead_code)]
mod utility_paths {
    use super::ProblemDoc;

    /// `POST /v1/{EntityType}`.
    #[utoipa::path(post, path = "/v1/{EntityType}", tag = "Content",
        params(("EntityType" = String, Path, description = "Dataset path")),
        request_body(content = serde_json::Value, description = "The document (a JSON object); Id is generated when missing", content_type = "application/json"),
        responses(
            (status = 201, description = "Created; Location names the document"),
            (status = 400, description = "The document is not valid", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 401, description = "No bearer token", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 403, description = "The token lacks the {EntityType}_Create role", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 409, description = "A document with this id exists", body = ProblemDoc, content_type = "application/problem+json"),
        ),
        security(("bearer" = [])))]
    pub fn create_entity() {}

    /// `PUT /v1/{EntityType}/{id}`.
    #[utoipa::path(put, path = "/v1/{EntityType}/{id}", tag = "Content",
        params(("EntityType" = String, Path, description = "Dataset path"), ("id" = String, Path, description = "Document id, case-insensitive")),
        request_body(content = serde_json::Value, description = "The whole document; its Id, when given, must be the path's", content_type = "application/json"),
        responses(
            (status = 200, description = "Replaced (or created)"),
            (status = 400, description = "The document is not valid", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 401, description = "No bearer token", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 403, description = "The token lacks the {EntityType}_Update role", body = ProblemDoc, content_type = "application/problem+json"),
        ),
        security(("bearer" = [])))]
    pub fn update_entity() {}

    /// `DELETE /v1/{EntityType}/{id}`.
    #[utoipa::path(delete, path = "/v1/{EntityType}/{id}", tag = "Content",
        params(("EntityType" = String, Path, description = "Dataset path"), ("id" = String, Path, description = "Document id, case-insensitive")),
        responses(
            (status = 200, description = "Deleted"),
            (status = 401, description = "No bearer token", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 403, description = "The token lacks the {EntityType}_Delete role", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 404, description = "No document with this id", body = ProblemDoc, content_type = "application/problem+json"),
        ),
        security(("bearer" = [])))]
    pub fn delete_entity() {}

    /// `GET /v1/HubTag` (alias `/v1/ODHTag`): deprecated list of the Tag documents.
    #[utoipa::path(get, path = "/v1/HubTag", tag = "Utility", operation_id = "listHubTag",
        params(crate::list_query::CommonListQuery, crate::list_query::FilterLanguageQuery, crate::list_query::TagListQuery),
        responses(
            (status = 200, description = "The list envelope of Tag documents, with Deprecation: true and a successor-version Link to /v1/Tag", body = crate::openapi::EnvelopeDoc),
            (status = 400, description = "A parameter was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn hub_tag() {}

    /// `GET /v1/Filter`: one rawfilter expression over several entity types.
    #[utoipa::path(get, path = "/v1/Filter", tag = "Utility", operation_id = "filter",
        params(crate::filter_endpoint::FilterQuery),
        responses(
            (status = 200, description = "{totalResults, expression, detailedResults: {type: n}, Items}"),
            (status = 400, description = "A parameter was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn filter() {}

    /// `GET /v1/Find`: search titles across entity types.
    #[utoipa::path(get, path = "/v1/Find", tag = "Utility", operation_id = "find",
        params(crate::utility::find::FindQuery),
        responses(
            (status = 200, description = "{totalResults, searchTerm, detailedResults: {type: n}, Items: [{Id, <title path>, _Meta.Type, Self}]}"),
            (status = 400, description = "A parameter was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn find() {}

    /// `GET /v1/Distinct`: distinct values of document fields.
    #[utoipa::path(get, path = "/v1/Distinct", tag = "Utility", operation_id = "distinct",
        params(crate::utility::distinct::DistinctQuery),
        responses(
            (status = 200, description = "A sorted JSON array of {field: value} objects, or of values"),
            (status = 400, description = "A parameter was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn distinct() {}

    /// `GET /v1/Location`.
    #[utoipa::path(get, path = "/v1/Location", tag = "Utility", operation_id = "listLocations",
        params(crate::utility::location::LocationQuery),
        responses(
            (status = 200, description = "A JSON array of {typ, name, id}; typ + id is a locfilter token"),
            (status = 400, description = "A parameter was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn location() {}

    /// `GET /v1/Location/Skiarea`.
    #[utoipa::path(get, path = "/v1/Location/Skiarea", tag = "Utility", operation_id = "listSkiareaLocations",
        params(crate::utility::location::SkiareaLocationQuery),
        responses(
            (status = 200, description = "A JSON array of {typ: \"ska\", name, id}"),
            (status = 400, description = "A parameter was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn location_skiarea() {}

    /// `GET /v1/GeoShapes` (alias `/v1/GeoShape`).
    #[utoipa::path(get, path = "/v1/GeoShapes", tag = "Utility", operation_id = "listGeoShapes",
        params(crate::list_query::CommonListQuery,
            crate::utility::geoshapes::ShapeTypeQuery,
            crate::utility::geoshapes::SridQuery),
        responses(
            (status = 200, description = "The list envelope of shapes, geometry as GeoJSON", body = crate::openapi::EnvelopeDoc),
            (status = 400, description = "A parameter was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn geoshapes() {}

    /// `GET /v1/GeoShapes/{id}` (alias `/v1/GeoShape/{id}`).
    #[utoipa::path(get, path = "/v1/GeoShapes/{id}", tag = "Utility", operation_id = "getGeoShape",
        params(("id" = String, Path, description = "Shape id, case-insensitive"),
            crate::utility::geoshapes::SridQuery, crate::params::SingleQuery),
        responses(
            (status = 200, description = "The shape, geometry as GeoJSON"),
            (status = 400, description = "A parameter was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 404, description = "No shape with this id", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn geoshape() {}

    /// `GET /v1/GeoConverter/KmlToGeoJson?url=`.
    #[utoipa::path(get, path = "/v1/GeoConverter/KmlToGeoJson", tag = "Utility", operation_id = "kmlToGeoJsonFromUrl",
        params(("url" = String, Query, description = "Public http(s) address of a KML file")),
        responses(
            (status = 200, description = "A GeoJSON geometry", content_type = "application/geo+json"),
            (status = 400, description = "The url or the file was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn kml_get() {}

    /// `POST /v1/GeoConverter/KmlToGeoJson`.
    #[utoipa::path(post, path = "/v1/GeoConverter/KmlToGeoJson", tag = "Utility", operation_id = "kmlToGeoJsonFromFile",
        request_body(content = String, description = "The KML file, as the raw body or the first file of a multipart/form-data body", content_type = "application/vnd.google-earth.kml+xml"),
        responses(
            (status = 200, description = "A GeoJSON geometry", content_type = "application/geo+json"),
            (status = 400, description = "The file was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 413, description = "The file is too large", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn kml_post() {}

    /// `GET /v1/GeoConverter/GpxToGeoJson?url=`.
    #[utoipa::path(get, path = "/v1/GeoConverter/GpxToGeoJson", tag = "Utility", operation_id = "gpxToGeoJsonFromUrl",
        params(("url" = String, Query, description = "Public http(s) address of a GPX file")),
        responses(
            (status = 200, description = "A GeoJSON geometry", content_type = "application/geo+json"),
            (status = 400, description = "The url or the file was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn gpx_get() {}

    /// `POST /v1/GeoConverter/GpxToGeoJson`.
    #[utoipa::path(post, path = "/v1/GeoConverter/GpxToGeoJson", tag = "Utility", operation_id = "gpxToGeoJsonFromFile",
        request_body(content = String, description = "The GPX file, as the raw body or the first file of a multipart/form-data body", content_type = "application/gpx+xml"),
        responses(
            (status = 200, description = "A GeoJSON geometry", content_type = "application/geo+json"),
            (status = 400, description = "The file was not accepted", body = ProblemDoc, content_type = "application/problem+json"),
            (status = 413, description = "The file is too large", body = ProblemDoc, content_type = "application/problem+json"),
        ))]
    pub fn gpx_post() {}

    /// `GET /v1/Deprecated`.
    #[utoipa::path(get, path = "/v1/Deprecated", tag = "Utility", operation_id = "listDeprecated",
        responses(
            (status = 200, description = "Deprecated fields by lower-case entity name: [{Name, Type, Description, DeprecationDate, RemovedAfter}]"),
            (status = 401, description = "No valid bearer token", body = ProblemDoc, content_type = "application/problem+json"),
        ),
        security(("bearer" = [])))]
    pub fn deprecated() {}
}

#[cfg(test)]
#[path = "openapi_drift.rs"]
mod drift;

#[cfg(test)]
mod tests {
    #[test]
    fn every_dataset_has_list_and_single_paths() {
        let doc = super::openapi();
        let json = serde_json::to_value(&doc).unwrap();
        assert!(json["openapi"].as_str().unwrap().starts_with("3.1"));
        for e in hub_model::ENTITY_TYPES {
            let list = &json["paths"][format!("/v1/{}", e.route)]["get"];
            assert_eq!(list["operationId"], format!("list{}", e.name));
            assert!(list["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "pagesize"));
            assert!(!list["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "EntityType"));
            assert!(json["paths"][format!("/v1/{}/{{id}}", e.route)]["get"].is_object());
            if e.name == "GeoShape" {
                // Served by the utility router (read-only), described there.
                continue;
            }
            assert_eq!(
                json["paths"][format!("/v1/{}", e.route)]["post"]["operationId"],
                format!("create{}", e.name)
            );
            assert_eq!(
                json["paths"][format!("/v1/{}/{{id}}", e.route)]["put"]["operationId"],
                format!("update{}", e.name)
            );
            assert_eq!(
                json["paths"][format!("/v1/{}/{{id}}", e.route)]["delete"]["operationId"],
                format!("delete{}", e.name)
            );
        }
        assert!(json["paths"].get("/v1/{EntityType}").is_none());
    }

    /// Every static route of the routers under /v1 is described, with its parameters.
    #[test]
    fn utility_routes_are_described() {
        let json = serde_json::to_value(super::openapi()).unwrap();
        let params = |path: &str, method: &str| -> Vec<String> {
            let op = &json["paths"][path][method];
            assert!(op.is_object(), "{method} {path} is not described");
            op["parameters"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| p["name"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default()
        };
        for (path, method, expected) in [
            ("/v1", "get", &[][..]),
            ("/v1/HubTag", "get", &["pagesize", "validforentity"][..]),
            ("/v1/ODHTag", "get", &["pagesize"][..]),
            (
                "/v1/Filter",
                "get",
                &["expression", "type", "limitto", "rawsort"][..],
            ),
            (
                "/v1/Find",
                "get",
                &[
                    "q",
                    "term",
                    "type",
                    "language",
                    "limitto",
                    "searchbasetext",
                    "filteronfields",
                    "locfilter",
                    "fields",
                    "rawfilter",
                    "rawsort",
                ][..],
            ),
            (
                "/v1/Distinct",
                "get",
                &[
                    "type",
                    "fields",
                    "getasarray",
                    "source",
                    "rawfilter",
                    "tagfilter",
                    "rawsort",
                ][..],
            ),
            (
                "/v1/Location",
                "get",
                &["language", "type", "showall", "locfilter"][..],
            ),
            (
                "/v1/Location/Skiarea",
                "get",
                &["language", "showall", "locfilter"][..],
            ),
            ("/v1/Location/SkiArea", "get", &["language"][..]),
            ("/v1/GeoShapes", "get", &["pagesize", "srid"][..]),
            ("/v1/GeoShape", "get", &["srid"][..]),
            ("/v1/GeoShapes/{id}", "get", &["id", "srid"][..]),
            ("/v1/GeoShape/{id}", "get", &["id"][..]),
            ("/v1/GeoConverter/KmlToGeoJson", "get", &["url"][..]),
            ("/v1/GeoConverter/KmlToGeoJson", "post", &[][..]),
            ("/v1/GeoConverter/GpxToGeoJson", "get", &["url"][..]),
            ("/v1/GeoConverter/GpxToGeoJson", "post", &[][..]),
            ("/v1/Deprecated", "get", &[][..]),
            ("/v1/Tag", "get", &["pagesize"][..]),
            ("/v1/Source", "get", &["pagesize", "typelist"][..]),
        ] {
            let names = params(path, method);
            for p in expected {
                assert!(
                    names.iter().any(|n| n == p),
                    "{method} {path} lacks parameter {p}: {names:?}"
                );
            }
        }
        assert!(json["paths"]["/v1/GeoConverter/KmlToGeoJson"]["post"]["requestBody"].is_object());
        // operation ids are unique
        let mut ids = Vec::new();
        for item in json["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                if let Some(id) = op.get("operationId").and_then(|v| v.as_str()) {
                    assert!(!ids.contains(&id.to_string()), "duplicate operationId {id}");
                    ids.push(id.to_string());
                }
            }
        }
    }
}
