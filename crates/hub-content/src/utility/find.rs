//! `GET /v1/Find?q=…` (also `term=`): one search across entity types. For each type, the
//! documents whose title (any language) contains the term, or whose id is the term,
//! ordered by Shortname, at most `limitto` (default 5, up to 100) per type. The answer
//! counts every match per type:
//! `{totalResults, searchTerm, detailedResults: {type: n}, Items: [{Id, <title path>, _Meta.Type, Self}]}`.
//!
//! `type` (also `hubtype`, `odhtype`) narrows the types (comma list); `language` (default
//! `en`) picks the title path shown.

use axum::extract::{RawQuery as AxumRawQuery, State};
use axum::response::Response;
use hub_model::language::{fold, parse_language, LANGUAGES};
use hub_model::EntityType;
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
use serde_json::{Map, Value};

use super::{json_response, UtilityState};
use crate::error::ContentError;
use crate::params::RawQuery;

pub const DEFAULT_TYPES: [&str; 7] = [
    "Accommodation",
    "HubActivityPoi",
    "Event",
    "Region",
    "SkiArea",
    "TourismAssociation",
    "WebcamInfo",
];
pub const DEFAULT_LIMIT: u32 = 5;
pub const MAX_LIMIT: u32 = 100;

fn invalid(parameter: &str, detail: impl Into<String>) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.into(),
        detail: detail.into(),
    }
}

/// Entity types named by a `type`/`hubtype`/`odhtype` comma list.
pub(crate) fn entity_types(
    raw: &RawQuery,
    default: &[&str],
) -> Result<Vec<&'static EntityType>, ContentError> {
    let named = ["type", "hubtype", "odhtype"]
        .iter()
        .find_map(|p| raw.get(p).map(|v| (*p, v)));
    match named {
        None => Ok(default
            .iter()
            .filter_map(|n| EntityType::by_name(n))
            .collect()),
        Some((parameter, v)) => v
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                EntityType::by_meta_type(t).ok_or_else(|| {
                    invalid(
                        parameter,
                        format!("'{t}' is not an entity type; GET /v1 lists them"),
                    )
                })
            })
            .collect(),
    }
}

pub(crate) async fn find(
    State(state): State<UtilityState>,
    AxumRawQuery(query): AxumRawQuery,
) -> Result<Response, ContentError> {
    let raw = RawQuery::parse(query.as_deref());
    let term = raw
        .get("q")
        .or_else(|| raw.get("term"))
        .ok_or_else(|| invalid("q", "give the text to search as q= (or term=)"))?
        .to_string();
    let language = match raw.get("language") {
        None => "en",
        Some(v) => parse_language(v).ok_or_else(|| {
            invalid(
                "language",
                format!(
                    "'{v}' is not a known language; use one of {}",
                    LANGUAGES.join(", ")
                ),
            )
        })?,
    };
    let limit = match raw.get("limitto") {
        None => DEFAULT_LIMIT,
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                invalid(
                    "limitto",
                    format!("'{v}' is not accepted; use a whole number from 1 to {MAX_LIMIT}"),
                )
            })?,
    };
    let types = entity_types(&raw, &DEFAULT_TYPES)?;

    let mut total = 0u64;
    let mut detailed = Map::new();
    let mut items = Vec::new();
    for entity in types {
        let filters = vec![ContentFilter::Search {
            folded_term: fold(&term),
            id_key: term.to_lowercase(),
            languages: None,
        }];
        let query = ContentQuery {
            entity: entity.name,
            filters,
            order: ContentOrder::Default,
            page: Page {
                size: limit,
                number: 1,
            },
        };
        let page = state.store.list_content(query).await?;
        total += page.total;
        detailed.insert(entity.meta_type.to_string(), Value::from(page.total));
        let title_path = entity
            .title_paths
            .first()
            .map(|p| p.replace("{lang}", language))
            .unwrap_or_else(|| "Shortname".into());
        for stored in &page.docs {
            let doc: Value = serde_json::from_str(stored).map_err(hub_store::StoreError::from)?;
            let id = doc["Id"].clone();
            let title = title_path
                .split('.')
                .try_fold(&doc, |v, k| v.get(k))
                .cloned()
                .unwrap_or(Value::Null);
            let mut item = Map::new();
            item.insert("Id".into(), id.clone());
            item.insert(title_path.clone(), title);
            item.insert(
                "_Meta.Type".into(),
                Value::String(entity.meta_type.to_string()),
            );
            item.insert(
                "Self".into(),
                Value::String(format!(
                    "{}/v1/{}/{}",
                    state.base_url,
                    entity.route,
                    id.as_str().unwrap_or_default()
                )),
            );
            items.push(Value::Object(item));
        }
    }
    let body = serde_json::json!({"totalResults": total, "searchTerm": term, "detailedResults": detailed, "Items": items});
    Ok(json_response(body.to_string()))
}
