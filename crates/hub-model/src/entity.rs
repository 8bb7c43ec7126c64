//! The registry of Content API entity types.

/// How a Content API entity type is named, routed and searched.
#[derive(Debug, PartialEq, Eq)]
pub struct EntityType {
    /// Canonical name, also the key under which documents are stored (`HubActivityPoi`).
    pub name: &'static str,
    /// Path below `/v1/` (`Weather/District`).
    pub route: &'static str,
    /// Other routes that reach the same data (`ODHActivityPoi`).
    pub route_aliases: &'static [&'static str],
    /// Lower-case type name as written in `_Meta.Type` and in parameter values.
    pub meta_type: &'static str,
    /// Other lower-case spellings accepted in parameter values (`odhactivitypoi`).
    pub meta_aliases: &'static [&'static str],
    /// Title fields searched by `searchfilter`; `{lang}` stands for a language code.
    pub title_paths: &'static [&'static str],
    /// One sentence for the dataset list and the OpenAPI document.
    pub description: &'static str,
}

const DETAIL_TITLE: &[&str] = &["Detail.{lang}.Title"];

macro_rules! entity {
    ($name:literal, $route:literal, [$($alias:literal),*], $meta:literal, [$($malias:literal),*], $titles:expr, $desc:literal) => {
        EntityType {
            name: $name,
            route: $route,
            route_aliases: &[$($alias),*],
            meta_type: $meta,
            meta_aliases: &[$($malias),*],
            title_paths: $titles,
            description: $desc,
        }
    };
}

/// Every entity type of the Content API, in the order `GET /v1` lists them.
pub static ENTITY_TYPES: &[EntityType] = &[
    entity!(
        "Accommodation",
        "Accommodation",
        [],
        "accommodation",
        [],
        &["AccoDetail.{lang}.Name", "Detail.{lang}.Title"],
        "Hotels, guesthouses, farm stays and camp sites."
    ),
    entity!(
        "AccommodationRoom",
        "AccommodationRoom",
        [],
        "accommodationroom",
        [],
        &["AccoRoomDetail.{lang}.Name"],
        "Rooms and apartments of accommodations (closed data)."
    ),
    entity!(
        "HubActivityPoi",
        "HubActivityPoi",
        ["ODHActivityPoi"],
        "hubactivitypoi",
        ["odhactivitypoi", "smgpoi"],
        DETAIL_TITLE,
        "Activities, points of interest and gastronomy."
    ),
    entity!(
        "Event",
        "Event",
        [],
        "event",
        [],
        DETAIL_TITLE,
        "Cultural, sports and seasonal events."
    ),
    entity!(
        "EventShort",
        "EventShort",
        [],
        "eventshort",
        [],
        &["EventTitle.{lang}", "Detail.{lang}.Title"],
        "Short events and room bookings of venues."
    ),
    entity!(
        "Article",
        "Article",
        [],
        "article",
        [],
        DETAIL_TITLE,
        "Editorial content: articles, recipes, press releases."
    ),
    entity!(
        "WebcamInfo",
        "WebcamInfo",
        [],
        "webcam",
        ["webcaminfo"],
        &["Webcamname.{lang}", "Detail.{lang}.Title"],
        "Webcam streams and their metadata."
    ),
    entity!(
        "WeatherDistrict",
        "Weather/District",
        [],
        "weatherdistrict",
        [],
        &["DistrictName.{lang}", "Detail.{lang}.Title"],
        "Weather forecast by district."
    ),
    entity!(
        "WeatherForecast",
        "Weather/Forecast",
        [],
        "weatherforecast",
        [],
        &["MunicipalityName.{lang}", "Detail.{lang}.Title"],
        "Weather forecast by municipality."
    ),
    entity!(
        "WeatherRealtime",
        "Weather/Realtime",
        [],
        "weatherrealtime",
        [],
        &["Detail.{lang}.Title"],
        "Real-time readings of weather stations."
    ),
    entity!(
        "Region",
        "Region",
        [],
        "region",
        [],
        DETAIL_TITLE,
        "Tourism regions."
    ),
    entity!(
        "Municipality",
        "Municipality",
        [],
        "municipality",
        [],
        DETAIL_TITLE,
        "Municipalities."
    ),
    entity!(
        "District",
        "District",
        [],
        "district",
        [],
        DETAIL_TITLE,
        "Districts (fractions) of municipalities."
    ),
    entity!(
        "Area",
        "Area",
        [],
        "area",
        [],
        DETAIL_TITLE,
        "Areas such as ski or hiking areas."
    ),
    entity!(
        "SkiArea",
        "SkiArea",
        [],
        "skiarea",
        [],
        DETAIL_TITLE,
        "Ski resort areas."
    ),
    entity!(
        "SkiRegion",
        "SkiRegion",
        [],
        "skiregion",
        [],
        DETAIL_TITLE,
        "Ski regions grouping ski areas."
    ),
    entity!(
        "TourismAssociation",
        "TourismAssociation",
        [],
        "tourismassociation",
        ["tvs"],
        DETAIL_TITLE,
        "Local tourism organisations."
    ),
    entity!(
        "Tag",
        "Tag",
        [],
        "tag",
        [],
        &["TagName.{lang}"],
        "Tags used for categorisation."
    ),
    entity!(
        "Source",
        "Source",
        [],
        "source",
        [],
        &["Name.{lang}"],
        "Identifiers of the data sources."
    ),
    entity!(
        "GeoShape",
        "GeoShapes",
        ["GeoShape"],
        "geoshape",
        [],
        &["Name"],
        "Geographic shapes (provinces, districts, municipalities) with GeoJSON geometry."
    ),
    entity!(
        "Announcement",
        "Announcement",
        [],
        "announcement",
        [],
        DETAIL_TITLE,
        "Traffic situations and other announcements."
    ),
];

impl EntityType {
    /// Finds the entity type for a path below `/v1/`, case-insensitively, aliases included.
    pub fn by_route(route: &str) -> Option<&'static EntityType> {
        ENTITY_TYPES.iter().find(|e| {
            e.route.eq_ignore_ascii_case(route)
                || e.route_aliases
                    .iter()
                    .any(|a| a.eq_ignore_ascii_case(route))
        })
    }

    /// Finds the entity type by its canonical name (exact).
    pub fn by_name(name: &str) -> Option<&'static EntityType> {
        ENTITY_TYPES.iter().find(|e| e.name == name)
    }

    /// Finds the entity type by a lower-case type name as clients write it in parameter
    /// values (`hubactivitypoi`, `odhactivitypoi`), case-insensitively.
    pub fn by_meta_type(value: &str) -> Option<&'static EntityType> {
        ENTITY_TYPES.iter().find(|e| {
            e.meta_type.eq_ignore_ascii_case(value)
                || e.meta_aliases.iter().any(|a| a.eq_ignore_ascii_case(value))
                || e.name.eq_ignore_ascii_case(value)
        })
    }

    /// Title paths with `{lang}` replaced by each of `languages`.
    pub fn title_paths_for<'a>(
        &'a self,
        languages: &'a [&'a str],
    ) -> impl Iterator<Item = (&'a str, String)> + 'a {
        self.title_paths
            .iter()
            .flat_map(move |p| languages.iter().map(move |l| (*l, p.replace("{lang}", l))))
    }

    /// Splits a path below `/v1/` into entity type and optional id. Routes with a slash
    /// (`Weather/District`) are tried before the one-segment reading.
    pub fn resolve_path(path: &str) -> Option<(&'static EntityType, Option<&str>)> {
        let path = path.trim_matches('/');
        ENTITY_TYPES
            .iter()
            .flat_map(|e| {
                std::iter::once(e.route)
                    .chain(e.route_aliases.iter().copied())
                    .map(move |r| (e, r))
            })
            .filter_map(|(e, r)| {
                let head = path.get(..r.len())?;
                if !head.eq_ignore_ascii_case(r) {
                    return None;
                }
                match &path[r.len()..] {
                    "" => Some((r.len(), e, None)),
                    rest => {
                        let id = rest.strip_prefix('/')?;
                        (!id.is_empty() && !id.contains('/')).then_some((r.len(), e, Some(id)))
                    }
                }
            })
            .max_by_key(|(len, _, _)| *len)
            .map(|(_, e, id)| (e, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_routes_aliases_and_ids() {
        // (path, expected (entity name, rest of the path))
        type Case<'a> = (&'a str, Option<(&'a str, Option<&'a str>)>);
        let cases: &[Case] = &[
            ("Accommodation", Some(("Accommodation", None))),
            ("accommodation/", Some(("Accommodation", None))),
            ("Accommodation/ABC", Some(("Accommodation", Some("ABC")))),
            ("ODHActivityPoi/x1", Some(("HubActivityPoi", Some("x1")))),
            ("Weather/District", Some(("WeatherDistrict", None))),
            ("weather/district/3", Some(("WeatherDistrict", Some("3")))),
            ("Weather", None),
            ("AccommodationX", None),
            ("Accommodation/a/b", None),
            ("Nothing", None),
        ];
        for (input, expected) in cases {
            let got = EntityType::resolve_path(input).map(|(e, id)| (e.name, id));
            assert_eq!(got, *expected, "path {input}");
        }
    }

    #[test]
    fn meta_type_accepts_odh_spellings() {
        assert_eq!(
            EntityType::by_meta_type("odhactivitypoi").unwrap().name,
            "HubActivityPoi"
        );
        assert_eq!(
            EntityType::by_meta_type("HubActivityPoi").unwrap().name,
            "HubActivityPoi"
        );
        assert!(EntityType::by_meta_type("nothing").is_none());
    }

    #[test]
    fn names_routes_and_meta_types_are_unique() {
        let mut owner = std::collections::HashMap::new();
        for e in ENTITY_TYPES {
            let keys = [e.name, e.route, e.meta_type]
                .into_iter()
                .chain(e.route_aliases.iter().copied())
                .chain(e.meta_aliases.iter().copied());
            for key in keys {
                let previous = owner.insert(key.to_ascii_lowercase(), e.name);
                assert!(
                    previous.is_none() || previous == Some(e.name),
                    "{key} names both {previous:?} and {}",
                    e.name
                );
            }
        }
    }
}
