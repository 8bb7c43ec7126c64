//! The audit of the Open Data Hub's list parameters: every query parameter the ODH
//! OpenAPI slices (`fixtures/odh-openapi/content/*.json`, shared material) declare for
//! a list Hub serves, and the rule that none of them is silently ignored. A parameter
//! Hub reads for the dataset works as documented; any other parameter of the audit is a
//! 400 naming it as unsupported ([`refuse_unsupported`]). Parameters outside the audit
//! (cache busters, `format`) are not refused.
//!
//! Owns: the audit table and the refusal. Must not: parse or apply parameters (the typed
//! queries in `crate::list_query` do; what they declare is what counts as read).

use std::collections::HashMap;
use std::sync::OnceLock;

use hub_model::{EntityType, ENTITY_TYPES};
use utoipa::IntoParams;

use crate::error::ContentError;
use crate::list_query::{CommonListQuery, EntityListQuery, FilterLanguageQuery};
use crate::params::RawQuery;

/// (slice file, route below `/v1/`, the list's query parameters), from the ODH slices.
/// One route per line (rustfmt would give every name a line of its own).
#[rustfmt::skip]
pub const ODH_LIST_PARAMETERS: &[(&str, &str, &[&str])] = &[
    ("accommodation.json", "Accommodation", &["pagenumber", "pagesize", "seed", "categoryfilter", "typefilter", "boardfilter", "featurefilter", "featureidfilter", "themefilter", "badgefilter", "idfilter", "locfilter", "altitudefilter", "odhtagfilter", "source", "odhactive", "active", "bookablefilter", "arrival", "departure", "roominfo", "bokfilter", "msssource", "availabilitychecklanguage", "detail", "availabilitycheck", "latitude", "longitude", "radius", "polygon", "publishedon", "language", "langfilter", "updatefrom", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("accommodation.json", "AccommodationRoom", &["accoid", "idsource", "source", "pagenumber", "pagesize", "idlist", "getall", "fields", "language", "langfilter", "updatefrom", "seed", "publishedon", "searchfilter", "rawfilter", "rawsort", "removenullvalues"]),
    ("announcement.json", "Announcement", &["pagenumber", "pagesize", "language", "langfilter", "idlist", "source", "active", "begin", "end", "tagfilter", "publishedon", "updatefrom", "seed", "latitude", "longitude", "radius", "polygon", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("article.json", "Article", &["language", "pagenumber", "pagesize", "articletype", "articlesubtype", "idlist", "langfilter", "sortbyarticledate", "odhtagfilter", "odhactive", "active", "updatefrom", "startdate", "enddate", "seed", "publishedon", "source", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("common.json", "Region", &["pagenumber", "pagesize", "idlist", "odhtagfilter", "active", "odhactive", "source", "latitude", "longitude", "radius", "polygon", "fields", "language", "langfilter", "updatefrom", "seed", "publishedon", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("common.json", "TourismAssociation", &["pagenumber", "pagesize", "idlist", "odhtagfilter", "active", "odhactive", "source", "latitude", "longitude", "radius", "polygon", "fields", "language", "langfilter", "updatefrom", "seed", "publishedon", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("common.json", "Municipality", &["pagenumber", "pagesize", "visibleinsearch", "idlist", "odhtagfilter", "active", "odhactive", "source", "latitude", "longitude", "radius", "polygon", "fields", "language", "langfilter", "updatefrom", "seed", "publishedon", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("common.json", "District", &["pagenumber", "pagesize", "idlist", "odhtagfilter", "active", "odhactive", "source", "visibleinsearch", "latitude", "longitude", "radius", "polygon", "fields", "language", "langfilter", "updatefrom", "seed", "publishedon", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("common.json", "Area", &["pagenumber", "pagesize", "idlist", "odhtagfilter", "active", "odhactive", "source", "fields", "language", "langfilter", "updatefrom", "seed", "publishedon", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("common.json", "SkiRegion", &["pagenumber", "pagesize", "idlist", "odhtagfilter", "active", "odhactive", "source", "fields", "language", "langfilter", "updatefrom", "seed", "publishedon", "latitude", "longitude", "radius", "polygon", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("common.json", "SkiArea", &["pagenumber", "pagesize", "idlist", "odhtagfilter", "active", "odhactive", "source", "fields", "language", "langfilter", "updatefrom", "seed", "publishedon", "searchfilter", "latitude", "longitude", "radius", "polygon", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("event.json", "Event", &["language", "pagenumber", "pagesize", "idlist", "locfilter", "rancfilter", "topicfilter", "orgfilter", "odhtagfilter", "active", "odhactive", "begindate", "enddate", "sort", "updatefrom", "seed", "publishedon", "langfilter", "source", "latitude", "longitude", "radius", "polygon", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("eventshort.json", "EventShort", &["pagenumber", "pagesize", "startdate", "enddate", "datetimeformat", "source", "eventlocation", "onlyactive", "websiteactive", "communityactive", "active", "eventids", "webaddress", "sortorder", "seed", "language", "langfilter", "optimizedates", "latitude", "longitude", "radius", "polygon", "fields", "lastchange", "publishedon", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("geo.json", "GeoShapes", &["pagenumber", "pagesize", "srid", "source", "type", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues"]),
    ("geo.json", "GeoShape", &["pagenumber", "pagesize", "srid", "source", "type", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues"]),
    ("odhactivitypoi.json", "ODHActivityPoi", &["language", "pagenumber", "pagesize", "type", "activitytype", "poitype", "subtype", "level3type", "idlist", "locfilter", "langfilter", "areafilter", "highlight", "source", "odhtagfilter", "odhtagfilter_and", "odhactive", "active", "categorycodefilter", "dishcodefilter", "ceremonycodefilter", "facilitycodefilter", "cuisinecodefilter", "difficultyfilter", "distancefilter", "altitudefilter", "durationfilter", "hasimage", "tagfilter", "publishedon", "updatefrom", "seed", "latitude", "longitude", "radius", "polygon", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("odhtag.json", "ODHTag", &["pagenumber", "pagesize", "language", "validforentity", "mainentity", "displayascategory", "source", "publishedon", "fields", "searchfilter", "rawfilter", "rawsort", "localizationlanguage", "removenullvalues", "getasidarray"]),
    ("source.json", "Source", &["pagenumber", "pagesize", "language", "idlist", "typelist", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("tag.json", "Tag", &["pagenumber", "pagesize", "language", "validforentity", "types", "displayascategory", "publishedon", "source", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
    ("weather.json", "Weather/District", &["pagenumber", "pagesize", "locfilter", "language", "source", "fields"]),
    ("weather.json", "Weather/Realtime", &["pagenumber", "pagesize", "language", "latitude", "longitude", "radius", "fields"]),
    ("weather.json", "Weather/Forecast", &["pagenumber", "pagesize", "locfilter", "language", "fields", "latitude", "longitude", "radius", "polygon"]),
    ("webcaminfo.json", "WebcamInfo", &["language", "pagenumber", "pagesize", "source", "idlist", "active", "odhactive", "seed", "latitude", "longitude", "radius", "polygon", "updatefrom", "publishedon", "fields", "searchfilter", "rawfilter", "rawsort", "removenullvalues", "getasidarray"]),
];

/// What `GET /v1/GeoShapes` reads (paging, projection, idlist, source, searchfilter,
/// polygon, srid, type).
pub const GEOSHAPE_LIST_PARAMETERS: &[&str] = &[
    "pagesize",
    "pagenumber",
    "fields",
    "language",
    "removenullvalues",
    "idlist",
    "source",
    "searchfilter",
    "polygon",
    "srid",
    "type",
];

/// The entity a route of the audit lists (`ODHTag` lists the Tag documents).
fn audited_entity(route: &str) -> Option<&'static EntityType> {
    match route {
        "ODHTag" => EntityType::by_name("Tag"),
        _ => EntityType::resolve_path(route).map(|(e, _)| e),
    }
}

/// The names of the parameters Hub reads on `entity`'s list: the typed queries'
/// fields (also its OpenAPI parameters), so "read" and "documented" cannot differ.
pub fn read_parameters(entity: &EntityType) -> Vec<String> {
    let query = || Some(utoipa::openapi::path::ParameterIn::Query);
    if entity.name == "GeoShape" {
        // Its own handler (`utility::geoshapes::list`) reads these.
        return GEOSHAPE_LIST_PARAMETERS
            .iter()
            .map(|p| p.to_string())
            .collect();
    }
    let mut params = CommonListQuery::into_params(query);
    params.extend(FilterLanguageQuery::into_params(query));
    params.extend(EntityListQuery::documented(entity.name));
    params
        .into_iter()
        .map(|p| p.name.to_ascii_lowercase())
        .collect()
}

/// Audited parameters of `entity`'s list that Hub does not read, lower case.
pub fn unsupported(entity: &EntityType) -> Vec<&'static str> {
    let read = read_parameters(entity);
    let mut out: Vec<&'static str> = ODH_LIST_PARAMETERS
        .iter()
        .filter(|(_, route, _)| audited_entity(route).is_some_and(|e| e.name == entity.name))
        .flat_map(|(_, _, params)| params.iter().copied())
        .filter(|p| !read.iter().any(|r| r.eq_ignore_ascii_case(p)))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A 400 naming the first audited parameter of the request that Hub does not support on
/// this list, so an ODH client is told instead of getting an unfiltered answer.
pub fn refuse_unsupported(entity: &EntityType, raw: &RawQuery) -> Result<(), ContentError> {
    // The list is built from the typed queries' OpenAPI parameters, which allocates a
    // description for each: 4.6 % of a SQLite list page's CPU when done per request.
    static BY_ENTITY: OnceLock<HashMap<&'static str, Vec<&'static str>>> = OnceLock::new();
    let by_entity = BY_ENTITY.get_or_init(|| {
        ENTITY_TYPES
            .iter()
            .map(|e| (e.name, unsupported(e)))
            .collect()
    });
    let computed;
    let unsupported = match by_entity.get(entity.name) {
        Some(known) => known,
        None => {
            computed = unsupported(entity);
            &computed
        }
    };
    match raw
        .names()
        .find(|name| unsupported.iter().any(|u| u.eq_ignore_ascii_case(name)))
    {
        None => Ok(()),
        Some(name) => Err(ContentError::InvalidParameter {
            parameter: name.to_string(),
            detail: format!(
                "{name} is a parameter of the Open Data Hub that Hub does not support on /v1/{}; it is refused rather than ignored (docs/decisions.md lists the differences)",
                entity.route
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_audited_parameter_is_read_or_refused() {
        let mut refused = 0;
        for (_, route, params) in ODH_LIST_PARAMETERS {
            let entity = audited_entity(route).unwrap_or_else(|| panic!("{route} is served"));
            let read = read_parameters(entity);
            for param in *params {
                let query = RawQuery::parse(Some(&format!("{param}=x")));
                let outcome = refuse_unsupported(entity, &query);
                if read.iter().any(|r| r == &param.to_ascii_lowercase()) {
                    assert!(outcome.is_ok(), "{route}: {param} is read, not refused");
                } else {
                    refused += 1;
                    match outcome {
                        Err(ContentError::InvalidParameter { parameter, .. }) => {
                            assert_eq!(parameter, *param, "{route}")
                        }
                        other => panic!("{route}: {param} is neither read nor refused: {other:?}"),
                    }
                }
            }
        }
        assert!(refused > 0, "the audit refuses what Hub lacks");
    }

    #[test]
    fn parameters_outside_the_audit_pass() {
        let poi = EntityType::by_name("HubActivityPoi").unwrap();
        assert!(refuse_unsupported(poi, &RawQuery::parse(Some("_=123&format=csv"))).is_ok());
        let refused =
            refuse_unsupported(poi, &RawQuery::parse(Some("pagesize=2&DurationFilter=1,2")));
        assert!(
            matches!(refused, Err(ContentError::InvalidParameter { parameter, .. }) if parameter == "DurationFilter")
        );
    }

    /// The table above is the slices' list, when the shared fixtures are at hand.
    #[test]
    fn the_audit_matches_the_odh_slices() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/odh-openapi/content");
        if !dir.is_dir() {
            assert!(
                std::env::var_os("HUB_REQUIRE_TOOLS").is_none(),
                "HUB_REQUIRE_TOOLS is set and the ODH OpenAPI fixtures are missing at {}",
                dir.display()
            );
            eprintln!("skipped: no ODH OpenAPI fixtures at {}", dir.display());
            return;
        }
        for (file, route, params) in ODH_LIST_PARAMETERS {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            let declared: Vec<&str> = doc["paths"][format!("/v1/{route}")]["get"]["parameters"]
                .as_array()
                .unwrap_or_else(|| panic!("{file} has no GET /v1/{route}"))
                .iter()
                .filter(|p| p["in"] == "query")
                .filter_map(|p| p["name"].as_str())
                .collect();
            assert_eq!(declared, *params, "{file} /v1/{route}");
        }
    }
}
