//! `GET /v1/Find?q=…` (also `term=`): one search across entity types. For each type, the
//! documents whose title (any language) contains the term, or whose id is the term,
//! ordered by Shortname, at most `limitto` (default 5, up to 100) per type. The answer
//! counts every match per type:
//! `{totalResults, searchTerm, detailedResults: {type: n}, Items: [{Id, <title path>, _Meta.Type, Self}]}`.
//!
//! `type` (also `hubtype`, `odhtype`) narrows the types (comma list); `language` (default
//! `en`) picks the title path shown.
//!
//! Also (reference §6): `searchbasetext=true` searches the texts too
//! (`Detail.{lang}.BaseText`, for accommodations `AccoDetail.{lang}.Longdesc`, every
//! language); `filteronfields` is a comma list of further paths to search (rawsort path
//! syntax, `[*]` allowed); `locfilter` keeps documents of these locations (as on lists);
//! `fields` adds these paths to each item (flat keys named by path); `rawfilter` and
//! `rawsort` filter and order within each type. With `searchbasetext` or
//! `filteronfields` the search is one `or(like(…))` over all those paths (case-folded
//! substring) or the id equal to the term as written, lower- or upper-case.

use axum::extract::{RawQuery as AxumRawQuery, State};
use axum::response::Response;
use futures::{StreamExt, TryStreamExt};
use hub_model::language::{fold, parse_language, LANGUAGES};
use hub_model::EntityType;
use hub_query::content::rawfilter::{parse_rawfilter, parse_rawsort, JsonPath, Literal, RawFilter};
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
use hub_query::fields::parse_fields;
use serde_json::{Map, Value};

use super::{json_response, UtilityState};
use crate::error::ContentError;
use crate::list_query::{rawfilter_param, rawsort_param};
use crate::params::{bool_value, RawQuery};

/// A registry path (`Detail.de.Title`) as a rawfilter path.
fn json_path(text: &str) -> Option<JsonPath> {
    parse_rawsort(text).ok()?.into_iter().next().map(|k| k.path)
}

/// The search as a rawfilter: a case-folded substring of any of `paths` (`{lang}`
/// expanded to every language), or the id equal to the term.
fn search_filter(term: &str, paths: &[String], extra: &[JsonPath]) -> RawFilter {
    let mut any: Vec<RawFilter> = extra
        .iter()
        .map(|path| RawFilter::Like {
            path: path.clone(),
            text: term.to_string(),
        })
        .collect();
    for p in paths {
        let expanded: Vec<String> = if p.contains("{lang}") {
            LANGUAGES.iter().map(|l| p.replace("{lang}", l)).collect()
        } else {
            vec![p.clone()]
        };
        any.extend(
            expanded
                .iter()
                .filter_map(|t| json_path(t))
                .map(|path| RawFilter::Like {
                    path,
                    text: term.to_string(),
                }),
        );
    }
    let mut ids = vec![term.to_string(), term.to_lowercase(), term.to_uppercase()];
    ids.dedup();
    if let Some(path) = json_path("Id") {
        any.push(RawFilter::In {
            path,
            values: ids.into_iter().map(Literal::Text).collect(),
            negated: false,
        });
    }
    RawFilter::Or(any)
}

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

/// Types one `Find` searches at once: one per core, up to four (each holds a store
/// connection others may be waiting for; SQLite keeps two readers per core).
fn searches_at_once() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4))
}

fn invalid(parameter: &str, detail: impl Into<String>) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.into(),
        detail: detail.into(),
    }
}

/// The query of Find; also its OpenAPI parameters.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FindQuery {
    /// The text to search (also term)
    #[param(value_type = String, required = true)]
    pub q: Option<String>,
    /// Alias of q
    pub term: Option<String>,
    /// Comma list of entity types (also hubtype, odhtype)
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub entity_type: Option<String>,
    /// Language of the title shown (default en)
    pub language: Option<String>,
    /// Documents per type, 1 to 100 (default 5)
    #[param(value_type = Option<u32>)]
    pub limitto: Option<String>,
    /// Also search Detail.{lang}.BaseText (accommodations: AccoDetail.{lang}.Longdesc)
    #[param(value_type = Option<bool>)]
    pub searchbasetext: Option<String>,
    /// Comma list of further paths to search ([*] allowed)
    pub filteronfields: Option<String>,
    /// Comma list of reg/tvs/mun/fra tokens; documents in any of them
    pub locfilter: Option<String>,
    /// Comma list of paths added to each item
    pub fields: Option<String>,
    /// A rawfilter expression applied within each type
    pub rawfilter: Option<String>,
    /// Sort keys (rawsort syntax) within each type
    pub rawsort: Option<String>,
    /// Alias of type
    pub hubtype: Option<String>,
    /// Alias of type
    pub odhtype: Option<String>,
}

/// `limitto`: documents per type, 1 to 100 (default 5); Filter reads it too.
pub(crate) fn limitto(value: Option<&str>) -> Result<u32, ContentError> {
    match value {
        None => Ok(DEFAULT_LIMIT),
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                invalid(
                    "limitto",
                    format!("'{v}' is not accepted; use a whole number from 1 to {MAX_LIMIT}"),
                )
            }),
    }
}

/// Entity types named by a `type`/`hubtype`/`odhtype` comma list.
/// Most paths in `filteronfields` (each adds a `like` per language to the search).
pub const MAX_FILTERONFIELDS: usize = 32;

/// The named types, each once, in the order first named (a repeated type would be
/// queried and counted again).
pub(crate) fn entity_types(
    named: [(&'static str, Option<&str>); 3],
    default: &[&str],
) -> Result<Vec<&'static EntityType>, ContentError> {
    let named = named.into_iter().find_map(|(p, v)| v.map(|v| (p, v)));
    match named {
        None => Ok(default
            .iter()
            .filter_map(|n| EntityType::by_name(n))
            .collect()),
        Some((parameter, v)) => {
            crate::params::check_list(parameter, v)?;
            let mut types: Vec<&'static EntityType> = Vec::new();
            for t in v.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let entity = EntityType::by_meta_type(t).ok_or_else(|| {
                    invalid(
                        parameter,
                        format!("'{t}' is not an entity type; GET /v1 lists them"),
                    )
                })?;
                if !types.iter().any(|known| known.name == entity.name) {
                    types.push(entity);
                }
            }
            Ok(types)
        }
    }
}

pub(crate) async fn find(
    State(state): State<UtilityState>,
    AxumRawQuery(query): AxumRawQuery,
    principal: Option<axum::Extension<hub_auth::Principal>>,
) -> Result<Response, ContentError> {
    let principal = principal.map(|axum::Extension(p)| p);
    let raw = RawQuery::parse(query.as_deref());
    let q: FindQuery = raw.typed();
    let naming = hub_model::Naming::for_request(state.naming, "Find", raw.names());
    let type_name = |entity: &EntityType| match naming {
        hub_model::Naming::Odh => hub_model::naming::odh_type(entity.meta_type),
        hub_model::Naming::Hub => entity.meta_type,
    };
    let term =
        q.q.as_deref()
            .or(q.term.as_deref())
            .ok_or_else(|| invalid("q", "give the text to search as q= (or term=)"))?
            .to_string();
    let term_parameter = if q.q.is_some() { "q" } else { "term" };
    crate::params::check_text(term_parameter, &term, crate::params::MAX_SEARCH_CHARS)?;
    let language = match q.language.as_deref() {
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
    let limit = limitto(q.limitto.as_deref())?;
    let types = entity_types(
        [
            ("type", q.entity_type.as_deref()),
            ("hubtype", q.hubtype.as_deref()),
            ("odhtype", q.odhtype.as_deref()),
        ],
        &DEFAULT_TYPES,
    )?;
    let search_base_text =
        bool_value("searchbasetext", q.searchbasetext.as_deref())?.unwrap_or(false);
    let extra_paths: Vec<JsonPath> = match q.filteronfields.as_deref() {
        None => Vec::new(),
        Some(v) => {
            crate::params::check_text("filteronfields", v, crate::params::MAX_LIST_CHARS)?;
            let count = v.split(',').count();
            if count > MAX_FILTERONFIELDS {
                return Err(invalid(
                    "filteronfields",
                    format!(
                        "{count} paths are too many; at most {MAX_FILTERONFIELDS} are accepted"
                    ),
                ));
            }
            // Each entry is parsed alone as the path of `isnull(…)`: rawfilter path
            // syntax, `[*]` allowed; anything beyond one path is refused.
            let mut paths = Vec::new();
            let mut offset = 0;
            for entry in v.split(',') {
                let trimmed = entry.trim();
                if !trimmed.is_empty() {
                    const PREFIX: &str = "isnull(";
                    let at = offset + entry.chars().take_while(|c| c.is_whitespace()).count();
                    match parse_rawfilter(&format!("{PREFIX}{trimmed})")) {
                        Ok(RawFilter::IsNull { path, .. }) => paths.push(path),
                        Ok(_) => {
                            return Err(invalid(
                                "filteronfields",
                                format!("'{trimmed}' is not a field path"),
                            ))
                        }
                        Err(e) => {
                            return Err(ContentError::Parse {
                                parameter: "filteronfields".into(),
                                position: (at + e.position.saturating_sub(PREFIX.len()))
                                    .max(1)
                                    .min(at + trimmed.chars().count()),
                                detail: format!("'{trimmed}' is not a field path: {}", e.message),
                            })
                        }
                    }
                } else {
                    return Err(invalid("filteronfields", "an empty path in the list; give comma-separated paths such as Detail.de.BaseText"));
                }
                offset += entry.chars().count() + 1;
            }
            paths
        }
    };
    let fields = match q.fields.as_deref() {
        None => Vec::new(),
        Some(v) => parse_fields(v).map_err(|e| ContentError::Parse {
            parameter: "fields".into(),
            position: e.position,
            detail: e.message,
        })?,
    };
    let rawfilter = rawfilter_param("rawfilter", q.rawfilter.as_deref())?;
    let order = rawsort_param("rawsort", q.rawsort.as_deref())?
        .map_or(ContentOrder::Default, ContentOrder::Raw);
    let locations = crate::geo_params::GeoParams {
        locations: super::locfilter(q.locfilter.as_deref())?,
        ..Default::default()
    };

    // One search per type, side by side, a few at a time (each holds a store
    // connection), answered in the types' order: each type counts all its matches, and a
    // short term's counts read most of every collection (`q=h`: 2.1 s on PostgreSQL, one
    // type after another).
    let (state, locations, rawfilter, order) = (&state, &locations, &rawfilter, &order);
    let (term, extra_paths) = (&term, &extra_paths);
    let mut searches = Vec::with_capacity(types.len());
    for entity in types {
        let full = hub_auth::policy::can_read_closed(principal.as_ref(), entity.name);
        let mut filters = if search_base_text || !extra_paths.is_empty() {
            // Title paths the caller may not see (a room's) are not searched.
            let mut paths: Vec<String> = entity
                .title_paths
                .iter()
                .filter(|p| {
                    full || !crate::closed_query::path_is_closed(entity.name, p.split('.').next())
                })
                .map(|p| p.to_string())
                .collect();
            if search_base_text {
                paths.push(
                    if entity.name == "Accommodation" {
                        "AccoDetail.{lang}.Longdesc"
                    } else {
                        "Detail.{lang}.BaseText"
                    }
                    .to_string(),
                );
            }
            vec![ContentFilter::Raw {
                filter: search_filter(term, &paths, extra_paths),
                parameter: "filteronfields",
            }]
        } else {
            vec![ContentFilter::Search {
                folded_term: fold(term),
                id_key: term.to_lowercase(),
                languages: None,
            }]
        };
        filters.extend(rawfilter.iter().cloned());
        searches.push(async move {
            locations.resolve(&*state.content, &mut filters).await?;
            let query = ContentQuery {
                entity: entity.name,
                filters,
                order: order.clone(),
                page: Page {
                    size: limit,
                    number: 1,
                },
                count_limit: None,
            };
            // Closed parts (accommodation rooms, availability) stay hidden, as on lists.
            let page = crate::closed::with_access(
                full,
                crate::closed::list_visible(&*state.content, entity, query),
            )
            .await?;
            Ok::<_, ContentError>((entity, page))
        });
    }
    let pages: Vec<_> = futures::stream::iter(searches)
        .buffered(searches_at_once())
        .try_collect()
        .await?;
    let mut total = 0u64;
    let mut detailed = Map::new();
    let mut items = Vec::new();
    for (entity, page) in pages {
        total += page.total;
        detailed.insert(type_name(entity).to_string(), Value::from(page.total));
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
                Value::String(type_name(entity).to_string()),
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
            for f in &fields {
                let mut value = f.select(&doc);
                if naming == hub_model::Naming::Odh {
                    hub_model::naming::to_odh(&mut value);
                }
                item.insert(f.text.clone(), value);
            }
            items.push(Value::Object(item));
        }
    }
    let body = serde_json::json!({"totalResults": total, "searchTerm": term, "detailedResults": detailed, "Items": items});
    Ok(json_response(body.to_string()))
}
