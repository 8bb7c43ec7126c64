//! Test only: the query parameters the OpenAPI document lists for each GET route are
//! exactly the names its handler's typed query reads (serde's own field list of each
//! query struct), so documentation and parsing cannot drift apart.
//!
//! Owns nothing at run time; must not touch the handlers.

use std::collections::BTreeSet;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};

use crate::filter_endpoint::FilterQuery;
use crate::list_query::{
    AccommodationListQuery, ArticleListQuery, CommonListQuery, EventListQuery, FilterLanguageQuery,
    PoiListQuery, SourceListQuery, TagListQuery, VisibleInSearchQuery,
};
use crate::params::SingleQuery;
use crate::utility::distinct::DistinctQuery;
use crate::utility::find::FindQuery;
use crate::utility::geoshapes::{ShapeTypeQuery, SridQuery};
use crate::utility::location::{LocationQuery, SkiareaLocationQuery};

/// A deserializer that only records the field names a struct asks for.
struct FieldNames(&'static [&'static str]);

impl<'de> Deserializer<'de> for &mut FieldNames {
    type Error = de::value::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = fields;
        Err(de::Error::custom("field names recorded"))
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("a query is a struct"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

/// The query parameter names a typed query reads.
fn reads<T: DeserializeOwned>() -> Vec<&'static str> {
    let mut names = FieldNames(&[]);
    let _ = T::deserialize(&mut names);
    assert!(
        !names.0.is_empty(),
        "{} is not a struct",
        std::any::type_name::<T>()
    );
    names.0.to_vec()
}

/// The names a dataset list reads: common, filter language, the dataset's group.
fn list_reads(entity: &str) -> Vec<&'static str> {
    let mut names = reads::<CommonListQuery>();
    names.extend(reads::<FilterLanguageQuery>());
    names.extend(match entity {
        "Event" => reads::<EventListQuery>(),
        "Accommodation" => reads::<AccommodationListQuery>(),
        "HubActivityPoi" => reads::<PoiListQuery>(),
        "Article" => reads::<ArticleListQuery>(),
        "Tag" => reads::<TagListQuery>(),
        "Source" => reads::<SourceListQuery>(),
        "Municipality" | "District" => reads::<VisibleInSearchQuery>(),
        _ => Vec::new(),
    });
    names
}

/// What the handler of `GET path` reads from the query, or None for an unknown route.
fn handler_reads(path: &str) -> Option<Vec<&'static str>> {
    let cat = |parts: &[Vec<&'static str>]| Some(parts.concat());
    match path {
        "/v1" | "/v1/Deprecated" => Some(Vec::new()),
        "/v1/HubTag" | "/v1/ODHTag" => Some(list_reads("Tag")),
        "/v1/Filter" => Some(reads::<FilterQuery>()),
        "/v1/Find" => Some(reads::<FindQuery>()),
        "/v1/Distinct" => Some(reads::<DistinctQuery>()),
        "/v1/Location" => Some(reads::<LocationQuery>()),
        "/v1/Location/Skiarea" | "/v1/Location/SkiArea" => Some(reads::<SkiareaLocationQuery>()),
        "/v1/GeoShapes" | "/v1/GeoShape" => cat(&[
            reads::<CommonListQuery>(),
            reads::<ShapeTypeQuery>(),
            reads::<SridQuery>(),
        ]),
        "/v1/GeoShapes/{id}" | "/v1/GeoShape/{id}" => {
            cat(&[reads::<SridQuery>(), reads::<SingleQuery>()])
        }
        // The converters' `url` is read by geoconverter.rs (not a typed query yet).
        "/v1/GeoConverter/KmlToGeoJson" | "/v1/GeoConverter/GpxToGeoJson" => Some(vec!["url"]),
        _ => hub_model::ENTITY_TYPES.iter().find_map(|e| {
            let list = format!("/v1/{}", e.route);
            if path == list {
                Some(list_reads(e.name))
            } else if path == format!("{list}/{{id}}") {
                Some(reads::<SingleQuery>())
            } else {
                None
            }
        }),
    }
}

#[test]
fn documented_query_parameters_are_the_parsed_ones() {
    let json = serde_json::to_value(super::openapi()).unwrap();
    for (path, item) in json["paths"].as_object().unwrap() {
        let Some(get) = item.get("get") else { continue };
        let documented: Vec<&str> = get["parameters"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|p| p["in"] == "query")
                    .map(|p| p["name"].as_str().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        let parsed =
            handler_reads(path).unwrap_or_else(|| panic!("GET {path}: say what its handler reads"));
        let documented_set: BTreeSet<&str> = documented.iter().copied().collect();
        assert_eq!(
            documented.len(),
            documented_set.len(),
            "GET {path}: a parameter twice"
        );
        let parsed: BTreeSet<&str> = parsed.into_iter().collect();
        assert_eq!(documented_set, parsed, "GET {path}: documented vs parsed");
    }
}

#[test]
fn field_names_are_the_query_names() {
    // Renamed fields record their query name.
    assert!(reads::<PoiListQuery>().contains(&"type"));
    assert!(reads::<FindQuery>().contains(&"type"));
    assert!(!reads::<FindQuery>().contains(&"entity_type"));
}
