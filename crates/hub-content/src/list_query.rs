//! The typed query of Content API lists: one struct per parameter group, each deriving
//! `serde::Deserialize` (the handler reads the query into it) and `utoipa::IntoParams`
//! (the OpenAPI document lists its fields), so the documented parameters are the parsed
//! ones by construction. Values stay text here; [`ListQuery::parse`] validates them,
//! with the messages and positions of the reference, in one pass.
//!
//! Owns: which parameters a list accepts, their validation and the resulting filters and
//! order. Must not touch: the store (geo lookups and availability run after parsing, in
//! the handler) or the shaping of answers.

use hub_model::EntityType;
use hub_query::content::rawfilter::{parse_rawfilter, parse_rawsort, RawFilterError, SortKey};
use hub_query::content::tagfilter::parse_tagfilter;
use hub_query::content::{ContentFilter, ContentOrder};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::ContentError;
use crate::params::ListParams;

/// Parameters every list accepts. Values are kept as sent (trimmed; `null` and empty
/// count as absent) and validated by [`ListQuery::parse`].
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CommonListQuery {
    /// Items per page, 1 to 1000 (default 10).
    #[param(value_type = Option<u32>)]
    pub pagesize: Option<String>,
    /// Page to return, from 1 (default 1).
    #[param(value_type = Option<u32>)]
    pub pagenumber: Option<String>,
    /// Comma-separated paths to return (`Detail.de.Title`, `HubTags.[*].Id`); each becomes a key named by its path.
    pub fields: Option<String>,
    /// Keep only this language in every multilingual field (de, it, en, cs, fr, nl, pl, ru, ld).
    pub language: Option<String>,
    /// Keep only documents available in all these languages (comma-separated).
    pub langfilter: Option<String>,
    /// Case-insensitive substring of a title in any language (or the `language`), or an exact id.
    pub searchfilter: Option<String>,
    /// Omit null, empty-string, empty-array and empty-object fields.
    #[param(value_type = Option<bool>)]
    pub removenullvalues: Option<String>,
    /// Only documents changed on or after this date (yyyy-MM-dd).
    pub updatefrom: Option<String>,
    /// Only documents from these sources (comma-separated, case-insensitive).
    pub source: Option<String>,
    /// Only active (true) or inactive (false) documents.
    #[param(value_type = Option<bool>)]
    pub active: Option<String>,
    /// Only documents with these ids (comma-separated, case-insensitive).
    pub idlist: Option<String>,
    /// A stable pseudo-random order for this integer seed (0 picks one); echoed as Seed.
    #[param(value_type = Option<i64>)]
    pub seed: Option<String>,
    /// Only documents within `radius` metres of this point (degrees, with longitude); ordered by distance.
    #[param(value_type = Option<f64>)]
    pub latitude: Option<String>,
    /// Longitude of the radius search (degrees, with latitude).
    #[param(value_type = Option<f64>)]
    pub longitude: Option<String>,
    /// Radius of the search in metres (default 150000).
    #[param(value_type = Option<f64>)]
    pub radius: Option<String>,
    /// Only documents intersecting this area (WKT, bbc/bbi, or a stored shape).
    pub polygon: Option<String>,
    /// Comma list of reg/tvs/mun/fra tokens; documents in any of them.
    pub locfilter: Option<String>,
    /// Comma list of reg/tvs/skr/ska/are tokens; documents in any of these areas.
    pub areafilter: Option<String>,
    /// Only documents published on one of these channels (comma list, matched against `PublishedOn`).
    pub publishedon: Option<String>,
    /// true: answer a plain JSON array of the ids of every matching document (in list
    /// order, no paging; at most 100,000), instead of the envelope.
    #[param(value_type = Option<bool>)]
    pub getasidarray: Option<String>,
}

/// The filter-language parameters of dataset lists (not of GeoShapes).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FilterLanguageQuery {
    /// A rawfilter expression, such as and(eq(Active,true),isnotnull(GpsInfo)).
    pub rawfilter: Option<String>,
    /// Sort keys (rawsort syntax), such as -Shortname; overrides every other order.
    pub rawsort: Option<String>,
    /// Only documents with these tags (tagfilter syntax, such as and(a,b)).
    pub tagfilter: Option<String>,
    /// Only documents with these HubTags (tagfilter syntax).
    pub odhtagfilter: Option<String>,
}

/// Event lists: date window and order by next date.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventListQuery {
    /// Only events with a date on or after this day (yyyy-MM-dd).
    pub begindate: Option<String>,
    /// Only events with a date on or before this day (yyyy-MM-dd).
    pub enddate: Option<String>,
    /// asc or upcoming (next date first), desc.
    pub sort: Option<String>,
}

/// Accommodation lists: the reference's bitmask filters and the availability search.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AccommodationListQuery {
    /// Accommodation types: a bitmask or a comma list of names (HotelPension, BedBreakfast, …).
    pub typefilter: Option<String>,
    /// Categories: a bitmask or a comma list of names (3stars, …).
    pub categoryfilter: Option<String>,
    /// Boards: a bitmask or a comma list of names (breakfast, half board, …).
    pub boardfilter: Option<String>,
    /// Features: a bitmask or a comma list of names (Wellness, WLAN, …).
    pub featurefilter: Option<String>,
    /// true: only accommodations available for the stay (needs a reading role; else ignored).
    #[param(value_type = Option<bool>)]
    pub availabilitycheck: Option<String>,
    /// First night of the stay (YYYY-MM-DD), with availabilitycheck.
    pub arrival: Option<String>,
    /// Day of departure (YYYY-MM-DD), at most 60 nights after arrival.
    pub departure: Option<String>,
    /// Only accommodations with these ids (the reference's name of `idlist` here).
    pub idfilter: Option<String>,
}

/// HubActivityPoi lists: categories (HubTags ids).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PoiListQuery {
    /// Main categories: a bitmask or a comma list of HubTags ids.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub main_type: Option<String>,
    /// Comma list of subcategory names (HubTags ids).
    pub subtype: Option<String>,
    /// POI categories: the reference's bitmask (1 Ärzte, Apotheken … 1024 Unternehmen; 2047 = all) or a comma list of names.
    pub poitype: Option<String>,
    /// Activity categories: the reference's bitmask (1 Berg … 512 Aufstiegsanlagen; 1023 = all) or a comma list of names.
    pub activitytype: Option<String>,
    /// Only documents with every one of these HubTags (comma list; odhtagfilter is any of them).
    pub odhtagfilter_and: Option<String>,
    /// true: only highlights (`Highlight`); false: only the others.
    #[param(value_type = Option<bool>)]
    pub highlight: Option<String>,
    /// true: only documents with an image (`ImageGallery`); false: only those without.
    #[param(value_type = Option<bool>)]
    pub hasimage: Option<String>,
}

/// Article lists.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ArticleListQuery {
    /// Article types: a bitmask or a comma list of names (basisartikel, …).
    pub articletype: Option<String>,
}

/// Tag lists (also the deprecated HubTag list).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TagListQuery {
    /// Comma list of entity types the tags are valid for
    pub validforentity: Option<String>,
    /// Comma list of tag types
    pub types: Option<String>,
}

/// Municipality and District lists.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VisibleInSearchQuery {
    /// true: only entries shown in searches (`VisibleInSearch`); false: only the hidden ones.
    #[param(value_type = Option<bool>)]
    pub visibleinsearch: Option<String>,
}

/// Source lists.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SourceListQuery {
    /// Comma list of entity types; sources delivering any of them (their Types)
    pub typelist: Option<String>,
}

/// The parameters of one dataset beyond the common ones.
#[derive(Debug, Clone)]
pub enum EntityListQuery {
    Event(EventListQuery),
    Accommodation(AccommodationListQuery),
    Poi(PoiListQuery),
    Article(ArticleListQuery),
    Tag(TagListQuery),
    Source(SourceListQuery),
    VisibleInSearch(VisibleInSearchQuery),
    None,
}

impl EntityListQuery {
    /// Reads the group of `entity` from the query.
    pub fn read(raw: &crate::params::RawQuery, entity: &EntityType) -> Self {
        match entity.name {
            "Event" => Self::Event(raw.typed()),
            "Accommodation" => Self::Accommodation(raw.typed()),
            "HubActivityPoi" => Self::Poi(raw.typed()),
            "Article" => Self::Article(raw.typed()),
            "Tag" => Self::Tag(raw.typed()),
            "Source" => Self::Source(raw.typed()),
            "Municipality" | "District" => Self::VisibleInSearch(raw.typed()),
            _ => Self::None,
        }
    }

    /// The OpenAPI parameters of `entity`'s group (what [`Self::read`] reads for it).
    pub fn documented(entity: &str) -> Vec<utoipa::openapi::path::Parameter> {
        let query = || Some(utoipa::openapi::path::ParameterIn::Query);
        match entity {
            "Event" => EventListQuery::into_params(query),
            "Accommodation" => AccommodationListQuery::into_params(query),
            "HubActivityPoi" => PoiListQuery::into_params(query),
            "Article" => ArticleListQuery::into_params(query),
            "Tag" => TagListQuery::into_params(query),
            "Source" => SourceListQuery::into_params(query),
            "Municipality" | "District" => VisibleInSearchQuery::into_params(query),
            _ => Vec::new(),
        }
    }
}

/// A whole list query: the common parameters and the dataset's group.
#[derive(Debug, Clone)]
pub struct ListQuery {
    pub common: CommonListQuery,
    pub filter: FilterLanguageQuery,
    pub entity: EntityListQuery,
}

impl ListQuery {
    pub fn read(raw: &crate::params::RawQuery, entity: &EntityType) -> Self {
        ListQuery {
            common: raw.typed(),
            filter: raw.typed(),
            entity: EntityListQuery::read(raw, entity),
        }
    }

    /// Validates every value and builds the filters and the order. Errors come in the
    /// reference's order: paging, projection, common filters, seed, geography, then
    /// rawfilter, tag filters, the dataset's filters and rawsort.
    pub fn parse(&self) -> Result<ListParams, ContentError> {
        let mut params = ListParams::parse(&self.common)?;
        let f = &self.filter;
        if let Some(filter) = rawfilter_param("rawfilter", f.rawfilter.as_deref())? {
            params.filters.push(filter);
        }
        params.filters.extend(tag_filters(
            f.tagfilter.as_deref(),
            f.odhtagfilter.as_deref(),
        )?);
        let event_order = crate::entity_filters::apply(&self.entity, &mut params.filters)?;
        let rawsort = rawsort_param("rawsort", f.rawsort.as_deref())?;
        if event_order.is_some() {
            // The reference forgets the seed once events are ordered by date.
            params.seed = None;
        }
        params.order = list_order(rawsort, event_order, params.order);
        Ok(params)
    }
}

/// Order precedence: a radius search's distance order (as in the reference, where the
/// geo branch comes first: a client that asks "nearest" gets nearest), then `rawsort`,
/// then Event `sort`, then what the common parameters chose (seed or the default).
pub fn list_order(
    rawsort: Option<Vec<SortKey>>,
    event_order: Option<ContentOrder>,
    common: ContentOrder,
) -> ContentOrder {
    if matches!(common, ContentOrder::Distance { .. }) {
        return common;
    }
    match (rawsort, event_order) {
        (Some(keys), _) => ContentOrder::Raw(keys),
        (None, Some(order)) => order,
        (None, None) => common,
    }
}

/// A syntax error of a filter-language parameter, with its 1-based position.
pub(crate) fn parse_error(parameter: &str, e: RawFilterError) -> ContentError {
    ContentError::Parse {
        parameter: parameter.into(),
        position: e.position,
        detail: e.message,
    }
}

/// A rawfilter expression sent as `parameter` (`rawfilter`, or Filter's `expression`).
pub(crate) fn rawfilter_param(
    parameter: &'static str,
    value: Option<&str>,
) -> Result<Option<ContentFilter>, ContentError> {
    value
        .map(|v| {
            parse_rawfilter(v)
                .map(|filter| ContentFilter::Raw { filter, parameter })
                .map_err(|e| parse_error(parameter, e))
        })
        .transpose()
}

/// The sort keys of a rawsort parameter.
pub(crate) fn rawsort_param(
    parameter: &str,
    value: Option<&str>,
) -> Result<Option<Vec<SortKey>>, ContentError> {
    value
        .map(|v| parse_rawsort(v).map_err(|e| parse_error(parameter, e)))
        .transpose()
}

/// `tagfilter` (tags) and `odhtagfilter` (HubTags), in this order.
pub(crate) fn tag_filters(
    tagfilter: Option<&str>,
    odhtagfilter: Option<&str>,
) -> Result<Vec<ContentFilter>, ContentError> {
    let mut filters = Vec::new();
    for (name, kind, value) in [
        ("tagfilter", "tag", tagfilter),
        ("odhtagfilter", "hubtag", odhtagfilter),
    ] {
        if let Some(v) = value {
            let filter = parse_tagfilter(v).map_err(|e| parse_error(name, e))?;
            filters.push(ContentFilter::Tags { kind, filter });
        }
    }
    Ok(filters)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::RawQuery;

    fn parse(entity: &str, query: &str) -> Result<ListParams, ContentError> {
        let entity = EntityType::by_name(entity).unwrap();
        ListQuery::read(&RawQuery::parse(Some(query)), entity).parse()
    }

    fn error_parameter(entity: &str, query: &str) -> String {
        match parse(entity, query) {
            Err(ContentError::InvalidParameter { parameter, .. })
            | Err(ContentError::Parse { parameter, .. }) => parameter,
            other => panic!("{query}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn order_precedence() {
        let key = || parse_rawsort("Shortname").unwrap();
        let next = || ContentOrder::NextBegin {
            descending: false,
            now: "x".into(),
        };
        let seed = || ContentOrder::Seed("7".into());
        for (rawsort, event, common, expected) in [
            (Some(key()), Some(next()), seed(), ContentOrder::Raw(key())),
            (None, Some(next()), seed(), next()),
            (None, None, seed(), seed()),
            (
                Some(key()),
                None,
                ContentOrder::Default,
                ContentOrder::Raw(key()),
            ),
        ] {
            assert_eq!(
                format!("{:?}", list_order(rawsort, event, common)),
                format!("{expected:?}")
            );
        }
    }

    #[test]
    fn errors_name_the_first_bad_parameter_in_reference_order() {
        for (entity, query, parameter) in [
            ("Event", "pagesize=0&rawfilter=eq(", "pagesize"),
            ("Event", "rawfilter=eq(&sort=x", "rawfilter"),
            ("Event", "sort=x&rawsort=,", "sort"),
            ("Event", "tagfilter=and(&rawsort=,", "tagfilter"),
            ("Accommodation", "typefilter=0", "typefilter"),
            ("Accommodation", "odhtagfilter=or(", "odhtagfilter"),
            ("HubActivityPoi", "type=foo", "type"),
            ("HubActivityPoi", "subtype=3", "subtype"),
            ("Article", "articletype=99999", "articletype"),
            ("Source", "typelist=,", "typelist"),
            ("Article", "rawsort=,", "rawsort"),
            ("Article", "latitude=100", "latitude"),
        ] {
            assert_eq!(error_parameter(entity, query), parameter, "{query}");
        }
    }

    #[test]
    fn entity_groups_are_read_only_for_their_dataset() {
        // `sort` is an Event parameter: elsewhere it is not read, so not refused.
        assert!(parse("Article", "sort=x").is_ok());
        assert!(parse("Event", "sort=x").is_err());
        let events = parse("Event", "seed=7&sort=desc").unwrap();
        assert!(events.seed.is_none());
        assert!(matches!(events.order, ContentOrder::NextBegin { .. }));
        let seeded = parse("Article", "seed=7&rawsort=Shortname").unwrap();
        assert_eq!(seeded.seed.as_deref(), Some("7"));
        assert!(matches!(seeded.order, ContentOrder::Raw(_)));
    }
}
