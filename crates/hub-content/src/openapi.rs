//! The OpenAPI 3.1 document of the Content API, generated from the handlers' annotations
//! and expanded to one path per dataset of the registry.

use hub_model::ENTITY_TYPES;
use utoipa::openapi::path::PathItem;
use utoipa::{IntoParams, OpenApi, ToSchema};

/// Query parameters of list requests.
#[allow(dead_code)]
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQueryDoc {
    /// Items per page, 1 to 1000 (default 10).
    pagesize: Option<u32>,
    /// Page to return, from 1 (default 1).
    pagenumber: Option<u32>,
    /// Comma-separated paths to return (`Detail.de.Title`, `HubTags.[*].Id`); each becomes a key named by its path.
    fields: Option<String>,
    /// Keep only this language in every multilingual field (de, it, en, cs, fr, nl, pl, ru, ld).
    language: Option<String>,
    /// Keep only documents available in all these languages (comma-separated).
    langfilter: Option<String>,
    /// Case-insensitive substring of a title in any language (or the `language`), or an exact id.
    searchfilter: Option<String>,
    /// Omit null, empty-string, empty-array and empty-object fields.
    removenullvalues: Option<bool>,
    /// Only documents changed on or after this date (yyyy-MM-dd).
    updatefrom: Option<String>,
    /// Only documents from these sources (comma-separated, case-insensitive).
    source: Option<String>,
    /// Only active (true) or inactive (false) documents.
    active: Option<bool>,
    /// Only documents with these ids (comma-separated, case-insensitive).
    idlist: Option<String>,
    /// A stable pseudo-random order for this integer seed (0 picks one); echoed as Seed.
    seed: Option<i64>,
}

/// Query parameters of single-document requests.
#[allow(dead_code)]
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SingleQueryDoc {
    /// Comma-separated paths to return.
    fields: Option<String>,
    /// Keep only this language in every multilingual field.
    language: Option<String>,
    /// Omit null and empty fields.
    removenullvalues: Option<bool>,
}

/// The list envelope.
#[allow(dead_code, non_snake_case)]
#[derive(ToSchema)]
pub struct EnvelopeDoc {
    TotalResults: u64,
    TotalPages: u64,
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
    info(title = "Hub Content API", description = "Tourism documents: one URL pattern, one envelope, paging, field selection and language projection."),
    paths(crate::routes::list_datasets, crate::routes::list_entities, crate::routes::get_entity),
    components(schemas(EnvelopeDoc, ProblemDoc))
)]
struct ContentApiDoc;

/// The OpenAPI document: the generic `{EntityType}` operations repeated for each dataset.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ContentApiDoc::openapi();
    let generic_list = doc.paths.paths.remove("/v1/{EntityType}");
    let generic_single = doc.paths.paths.remove("/v1/{EntityType}/{id}");
    for entity in ENTITY_TYPES {
        for (generic, suffix, verb) in [(&generic_list, "", "list"), (&generic_single, "/{id}", "get")] {
            if let Some(item) = generic {
                doc.paths.paths.insert(format!("/v1/{}{}", entity.route, suffix), specialise(item, entity.name, verb, entity.description));
            }
        }
    }
    doc
}

fn specialise(item: &PathItem, name: &str, verb: &str, description: &str) -> PathItem {
    let mut item = item.clone();
    if let Some(op) = item.get.as_mut() {
        op.operation_id = Some(format!("{verb}{name}"));
        op.tags = Some(vec![name.to_string()]);
        op.description = Some(description.to_string());
        if let Some(params) = op.parameters.as_mut() {
            params.retain(|p| p.name != "EntityType");
        }
    }
    item
}

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
            assert!(list["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "pagesize"));
            assert!(!list["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "EntityType"));
            assert!(json["paths"][format!("/v1/{}/{{id}}", e.route)]["get"].is_object());
        }
    }
}
