//! The per-entity filters the reference's clients use most (Event `begindate`/`enddate`/`sort`, Accommodation `typefilter`/`categoryfilter`/
//! `boardfilter`/`featurefilter`, HubActivityPoi `type`/`subtype`/`poitype`/
//! `activitytype`, Article `articletype`, Tag `validforentity`/`types`, Source
//! `typelist`).
//!
//! Bitmask parameters accept the reference's numbers or the names of the flags (comma
//! list); each becomes an `in(…)` raw filter over the document field, so a value matches
//! a single field or any element of an array field.
//!
//! Owns: turning a dataset's parameter group ([`EntityListQuery`]) into filters. Must
//! not touch the common parameters (`crate::list_query`, `crate::params`).

use hub_model::EntityType;
use hub_query::content::rawfilter::{CompareOp, JsonPath, Literal, RawFilter};
use hub_query::content::tagfilter::{TagFilter, TagGroup};
use hub_query::content::{ContentFilter, ContentOrder};

use crate::error::ContentError;
use crate::list_query::EntityListQuery;

fn invalid(parameter: &str, detail: impl Into<String>) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.into(),
        detail: detail.into(),
    }
}

/// Adds the filters of the dataset's own parameters to `filters`; answers the Event
/// order when `sort` asks one (it comes after `rawsort` and before the common orders).
pub fn apply(
    query: &EntityListQuery,
    filters: &mut Vec<ContentFilter>,
) -> Result<Option<ContentOrder>, ContentError> {
    match query {
        EntityListQuery::Event(q) => return crate::event_filters::apply(q, filters),
        EntityListQuery::Accommodation(q) => {
            for (name, value, field, flags) in [
                ("typefilter", &q.typefilter, "AccoTypeId", ACCO_TYPES),
                (
                    "categoryfilter",
                    &q.categoryfilter,
                    "AccoCategoryId",
                    ACCO_CATEGORIES,
                ),
                ("boardfilter", &q.boardfilter, "BoardIds", ACCO_BOARDS),
                (
                    "featurefilter",
                    &q.featurefilter,
                    "Features.[*].Name",
                    ACCO_FEATURES,
                ),
            ] {
                if let Some(values) = bitmask(name, value.as_deref(), flags)? {
                    filters.push(in_filter(field, values));
                }
            }
            if let Some(v) = q.idfilter.as_deref() {
                crate::params::check_list("idfilter", v)?;
                filters.push(ContentFilter::IdIn(
                    comma_list(v).map(str::to_lowercase).collect(),
                ));
            }
        }
        EntityListQuery::Poi(q) => {
            // The reference's German category names are HubTags ids (indexed as `hubtag`).
            if let Some(values) = bitmask("type", q.main_type.as_deref(), POI_MAIN_TYPES)? {
                filters.push(hub_tags_any(values));
            }
            // Fixed flag tables in the reference (unlike `subtype`, whose bits depend on
            // the first main type).
            for (name, value, flags) in [
                ("activitytype", &q.activitytype, POI_ACTIVITY_TYPES),
                ("poitype", &q.poitype, POI_POI_TYPES),
            ] {
                if let Some(values) = number_or_names(name, value.as_deref(), flags)? {
                    filters.push(hub_tags_any(values));
                }
            }
            if let Some(values) = names_only("subtype", q.subtype.as_deref())? {
                filters.push(hub_tags_any(values));
            }
            if let Some(v) = q.odhtagfilter_and.as_deref() {
                crate::params::check_list("odhtagfilter_and", v)?;
                let tags: Vec<String> = comma_list(v).map(str::to_lowercase).collect();
                filters.push(ContentFilter::Tags {
                    kind: "hubtag",
                    filter: TagFilter {
                        groups: vec![TagGroup { all: true, tags }],
                    },
                });
            }
            if let Some(flag) = crate::params::bool_value("highlight", q.highlight.as_deref())? {
                filters.push(raw(RawFilter::Compare {
                    op: CompareOp::Eq,
                    path: path("Highlight"),
                    value: Literal::Bool(flag),
                    position: 1,
                }));
            }
            if let Some(flag) = crate::params::bool_value("hasimage", q.hasimage.as_deref())? {
                // An image is a first gallery entry with a URL.
                filters.push(raw(RawFilter::IsNull {
                    path: path("ImageGallery.0.ImageUrl"),
                    negated: flag,
                }));
            }
        }
        EntityListQuery::Article(q) => {
            if let Some(values) = bitmask("articletype", q.articletype.as_deref(), ARTICLE_TYPES)? {
                filters.push(in_filter("Type", values));
            }
        }
        EntityListQuery::Tag(q) => {
            if let Some(v) = q.validforentity.as_deref() {
                crate::params::check_list("validforentity", v)?;
                filters.push(in_filter("ValidForEntity", entity_type_names(v)));
            }
            if let Some(v) = q.types.as_deref() {
                crate::params::check_list("types", v)?;
                filters.push(in_filter(
                    "Types",
                    comma_list(v).map(str::to_lowercase).collect(),
                ));
            }
        }
        EntityListQuery::Source(q) => {
            // `typelist`: sources delivering any of these entity types (their `Types`).
            if let Some(v) = q.typelist.as_deref() {
                crate::params::check_list("typelist", v)?;
                let values = entity_type_names(v);
                if values.is_empty() {
                    return Err(invalid(
                        "typelist",
                        "give a comma list of entity types, such as typelist=accommodation,event",
                    ));
                }
                filters.push(in_filter("Types", values));
            }
        }
        EntityListQuery::VisibleInSearch(q) => {
            let flag = crate::params::bool_value("visibleinsearch", q.visibleinsearch.as_deref())?;
            if let Some(flag) = flag {
                filters.push(raw(RawFilter::Compare {
                    op: CompareOp::Eq,
                    path: path("VisibleInSearch"),
                    value: Literal::Bool(flag),
                    position: 1,
                }));
            }
        }
        EntityListQuery::None => {}
    }
    Ok(None)
}

/// The lower-case names of a comma list of entity types, with the other spellings of
/// known types (documents store either, such as `odhactivitypoi` and `hubactivitypoi`).
fn entity_type_names(v: &str) -> Vec<String> {
    let mut values = Vec::new();
    for name in comma_list(v) {
        let lower = name.to_lowercase();
        if let Some(e) = EntityType::by_meta_type(&lower) {
            values.push(e.meta_type.to_string());
            values.extend(e.meta_aliases.iter().map(|a| a.to_string()));
        }
        values.push(lower);
    }
    values.sort();
    values.dedup();
    values
}

pub(crate) fn comma_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty())
}

fn path(text: &str) -> JsonPath {
    JsonPath {
        segments: hub_query::content::value_tags::path_segments(text),
        text: text.to_string(),
        position: 1,
    }
}

fn raw(filter: RawFilter) -> ContentFilter {
    ContentFilter::Raw {
        filter,
        parameter: "filter",
    }
}

/// `in(field, values…)`: equal to one of them, or an array with one of them.
pub(crate) fn in_filter(field: &str, values: Vec<String>) -> ContentFilter {
    let filter = RawFilter::In {
        path: path(field),
        values: values.into_iter().map(Literal::Text).collect(),
        negated: false,
    };
    ContentFilter::Raw {
        filter,
        parameter: "filter",
    }
}

/// A bitmask or a comma list of names; `mask_all` (every bit) means no filter.
fn bitmask(
    name: &str,
    value: Option<&str>,
    flags: &[(u64, &str)],
) -> Result<Option<Vec<String>>, ContentError> {
    let Some(v) = value else {
        return Ok(None);
    };
    crate::params::check_list(name, v)?;
    let values: Vec<String> = if let Ok(mask) = v.parse::<u64>() {
        let all: u64 = flags.iter().map(|(bit, _)| bit).fold(0, |a, b| a | b);
        if mask == 0 || mask & !all != 0 {
            return Err(invalid(
                name,
                format!(
                    "'{v}' is not a valid bitmask; use a sum of {} (or names)",
                    flags
                        .iter()
                        .map(|(b, n)| format!("{b} {n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if mask == all {
            return Ok(None);
        }
        flags
            .iter()
            .filter(|(bit, _)| mask & bit != 0)
            .map(|(_, n)| n.to_string())
            .collect()
    } else {
        comma_list(v)
            .map(|item| {
                flags
                    .iter()
                    .find(|(_, n)| n.eq_ignore_ascii_case(item))
                    .map(|(_, n)| n.to_string())
                    .ok_or_else(|| {
                        invalid(
                            name,
                            format!(
                                "'{item}' is not known; use one of {} or their bitmask",
                                flags.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", ")
                            ),
                        )
                    })
            })
            .collect::<Result<_, _>>()?
    };
    // Each flag once: a name repeated a thousand times is one value, not a thousand
    // alternatives in the query (SQLite refuses expressions that deep).
    let mut values = values;
    values.sort();
    values.dedup();
    Ok(Some(values))
}

/// A bitmask over `flags` (their names), or a comma list of HubTags ids as they are.
fn number_or_names(
    name: &str,
    value: Option<&str>,
    flags: &[(u64, &str)],
) -> Result<Option<Vec<String>>, ContentError> {
    match value {
        Some(v) if v.parse::<u64>().is_ok() => bitmask(name, value, flags),
        Some(v) => Ok(Some(comma_list(v).map(str::to_lowercase).collect())),
        None => Ok(None),
    }
}

fn hub_tags_any(tags: Vec<String>) -> ContentFilter {
    let tags = tags.into_iter().map(|t| t.to_lowercase()).collect();
    ContentFilter::Tags {
        kind: "hubtag",
        filter: TagFilter {
            groups: vec![TagGroup { all: false, tags }],
        },
    }
}

/// Subtypes are names (HubTags ids) only: their reference bitmasks depend on the first
/// main type and are not reproduced.
fn names_only(name: &str, value: Option<&str>) -> Result<Option<Vec<String>>, ContentError> {
    let Some(v) = value else {
        return Ok(None);
    };
    crate::params::check_list(name, v)?;
    if v.parse::<u64>().is_ok() {
        return Err(invalid(
            name,
            format!("'{v}': {name} takes category names (HubTags ids, as listed by /v1/HubTag), not a bitmask"),
        ));
    }
    let mut names: Vec<String> = comma_list(v).map(str::to_lowercase).collect();
    names.sort();
    names.dedup();
    // The names become a tag filter: held to the tag filter's own limit.
    let most = hub_query::content::tagfilter::MAX_TAGFILTER_TAGS;
    if names.len() > most {
        return Err(invalid(
            name,
            format!(
                "{} different names are too many; at most {most} are accepted",
                names.len()
            ),
        ));
    }
    Ok(Some(names))
}

/// HubActivityPoi `activitytype`: the reference's activity flags, matched as HubTags ids
/// (lower-cased) like `type`.
pub const POI_ACTIVITY_TYPES: &[(u64, &str)] = &[
    (1, "Berg"),
    (2, "Radfahren"),
    (4, "Stadtrundgang"),
    (8, "Pferdesport"),
    (16, "Wandern"),
    (32, "Laufen und Fitness"),
    (64, "Loipen"),
    (128, "Rodelbahnen"),
    (256, "Piste"),
    (512, "Aufstiegsanlagen"),
];

/// HubActivityPoi `poitype`: the reference's POI flags, matched as HubTags ids.
pub const POI_POI_TYPES: &[(u64, &str)] = &[
    (1, "Ärzte, Apotheken"),
    (2, "Geschäfte"),
    (4, "Kultur und Sehenswürdigkeiten"),
    (8, "Nachtleben und Unterhaltung"),
    (16, "Öffentliche Einrichtungen"),
    (32, "Sport und Freizeit"),
    (64, "Verkehr und Transport"),
    (128, "Dienstleister"),
    (256, "Kunsthandwerker"),
    (512, "Vereine"),
    (1024, "Unternehmen"),
];

/// Accommodation `typefilter` (`AccoTypeId`), reference §1.1.
pub const ACCO_TYPES: &[(u64, &str)] = &[
    (1, "HotelPension"),
    (2, "BedBreakfast"),
    (4, "Farm"),
    (8, "Camping"),
    (16, "Youth"),
    (32, "Mountain"),
    (64, "Apartment"),
    (128, "Notdefined"),
];
/// Accommodation `categoryfilter` (`AccoCategoryId`).
pub const ACCO_CATEGORIES: &[(u64, &str)] = &[
    (1, "Not categorized"),
    (2, "1star"),
    (4, "1flower"),
    (8, "1sun"),
    (16, "2stars"),
    (32, "2flowers"),
    (64, "2suns"),
    (128, "3stars"),
    (256, "3flowers"),
    (512, "3suns"),
    (1024, "3sstars"),
    (2048, "4stars"),
    (4096, "4flowers"),
    (8192, "4suns"),
    (16384, "4sstars"),
    (32768, "5stars"),
    (65536, "5flowers"),
    (131072, "5suns"),
];
/// Accommodation `boardfilter` (`BoardIds`); the reference's 0 = all is "no filter".
pub const ACCO_BOARDS: &[(u64, &str)] = &[
    (1, "without board"),
    (2, "breakfast"),
    (4, "half board"),
    (8, "full board"),
    (16, "All inclusive"),
];
/// Accommodation `featurefilter` (`Features[].Name`), the reference's first twelve flags.
pub const ACCO_FEATURES: &[(u64, &str)] = &[
    (1, "Group-friendly"),
    (2, "Meeting point"),
    (4, "Wellness"),
    (8, "Swimming pool"),
    (16, "Garage"),
    (32, "Pick-up service"),
    (64, "WLAN"),
    (128, "Barrier-free"),
    (256, "Special menu for allergy sufferers"),
    (512, "Pets welcome"),
    (1024, "Parking"),
    (2048, "Restaurant"),
];
/// HubActivityPoi `type`: the main categories (HubTags ids, lower case).
pub const POI_MAIN_TYPES: &[(u64, &str)] = &[
    (1, "wellness entspannung"),
    (2, "winter"),
    (4, "sommer"),
    (8, "kultur sehenswürdigkeiten"),
    (16, "anderes"),
    (32, "essen trinken"),
    (64, "mobilität"),
    (128, "geschäfte und dienstleister"),
];
/// Article `articletype` (`Type`).
pub const ARTICLE_TYPES: &[(u64, &str)] = &[
    (1, "basisartikel"),
    (2, "buchtippartikel"),
    (4, "contentartikel"),
    (8, "veranstaltungsartikel"),
    (16, "presseartikel"),
    (32, "rezeptartikel"),
    (64, "reiseveranstalter"),
    (128, "b2bartikel"),
    (256, "idmartikel"),
    (512, "specialannouncement"),
    (1024, "newsfeednoi"),
];
