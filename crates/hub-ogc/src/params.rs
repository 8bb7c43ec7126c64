//! The query parameters of `/ogc/collections/{id}/items`, each parsed with its limits into
//! the Content API's query vocabulary (`ContentFilter`s); every mistake is a 400 problem
//! naming the parameter.

use hub_content::geojson::OutputCrs;
use hub_content::params::RawQuery;
use hub_geo::srid::transform;
use hub_geo::{Geometry, Rect, Srid};
use hub_model::Problem;
use hub_query::content::cql2::parse_cql2;
use hub_query::content::geo::GeoArea;
use hub_query::content::rawfilter::{
    CompareOp, JsonPath, Literal, PathSegment, RawFilter, RawFilterError,
};
use hub_query::content::ContentFilter;

/// Items per page when `limit` is absent.
pub const DEFAULT_LIMIT: u32 = 10;
/// Largest `limit` (OGC API – Features recommends a maximum; more is a 400).
pub const MAX_LIMIT: u32 = 10_000;
/// Largest `offset` (keeps the page arithmetic far from overflow).
pub const MAX_OFFSET: u64 = 10_000_000;

pub const CRS84: &str = "http://www.opengis.net/def/crs/OGC/1.3/CRS84";

/// The CRS URIs a collection offers, CRS84 (the default) first.
pub fn crs_uris() -> Vec<String> {
    std::iter::once(CRS84.to_string())
        .chain(
            [4326, 3857, 32632, 25832]
                .iter()
                .map(|c| format!("http://www.opengis.net/def/crs/EPSG/0/{c}")),
        )
        .collect()
}

/// Reads a CRS URI (or `EPSG:n`, `OGC:CRS84`): EPSG:4326 by URI is latitude first.
pub fn parse_crs(parameter: &str, value: &str) -> Result<OutputCrs, Problem> {
    let v = value.trim().trim_start_matches('[').trim_end_matches(']');
    let lower = v.to_ascii_lowercase();
    if lower == CRS84.to_ascii_lowercase()
        || lower == "ogc:crs84"
        || lower == "crs84"
        || lower == "http://www.opengis.net/def/crs/ogc/0/crs84"
    {
        return Ok(OutputCrs::CRS84);
    }
    let code = lower
        .strip_prefix("http://www.opengis.net/def/crs/epsg/0/")
        .or_else(|| lower.strip_prefix("epsg:"))
        .and_then(|c| c.parse::<u32>().ok())
        .and_then(Srid::from_code)
        .ok_or_else(|| {
            Problem::invalid_parameter(
                parameter,
                format!(
                    "'{value}' is not a supported CRS; use one of {}",
                    crs_uris().join(", ")
                ),
            )
        })?;
    Ok(OutputCrs {
        srid: code,
        latitude_first: code == Srid::Wgs84,
    })
}

/// The URI of a CRS as the `Content-Crs` header names it.
pub fn crs_uri(crs: OutputCrs) -> String {
    if crs == OutputCrs::CRS84 {
        CRS84.to_string()
    } else {
        format!("http://www.opengis.net/def/crs/EPSG/0/{}", crs.srid.code())
    }
}

/// The parsed items request.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemsRequest {
    pub limit: u32,
    pub offset: u64,
    pub crs: OutputCrs,
    pub filters: Vec<ContentFilter>,
}

/// Fields every collection can be filtered on by name (`Shortname=Alm`), with their type.
pub const PROPERTY_FILTERS: &[(&str, &str)] = &[
    ("Id", "string"),
    ("Shortname", "string"),
    ("Active", "boolean"),
    ("Source", "string"),
];

fn count(parameter: &str, value: &str, max: u64) -> Result<u64, Problem> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n <= max)
        .ok_or_else(|| {
            Problem::invalid_parameter(
                parameter,
                format!("'{value}' is not a whole number from 0 to {max}"),
            )
        })
}

/// `limit` (1 to [`MAX_LIMIT`], default [`DEFAULT_LIMIT`]) and `offset`.
pub fn paging(raw: &RawQuery) -> Result<(u32, u64), Problem> {
    let limit = match raw.get("limit") {
        None => DEFAULT_LIMIT,
        Some(v) => match count("limit", v, MAX_LIMIT as u64)? {
            0 => return Err(Problem::invalid_parameter("limit", "limit is at least 1")),
            n => n as u32,
        },
    };
    let offset = raw
        .get("offset")
        .map(|v| count("offset", v, MAX_OFFSET))
        .transpose()?
        .unwrap_or(0);
    Ok((limit, offset))
}

pub fn parse_items(raw: &RawQuery) -> Result<ItemsRequest, Problem> {
    let (limit, offset) = paging(raw)?;
    let crs = raw
        .get("crs")
        .map(|v| parse_crs("crs", v))
        .transpose()?
        .unwrap_or(OutputCrs::CRS84);
    let mut filters = Vec::new();
    if let Some(bbox) = raw.get("bbox") {
        let bbox_crs = raw
            .get("bbox-crs")
            .map(|v| parse_crs("bbox-crs", v))
            .transpose()?
            .unwrap_or(OutputCrs::CRS84);
        filters.push(ContentFilter::Area(parse_bbox(bbox, bbox_crs)?));
    } else if raw.get("bbox-crs").is_some() {
        return Err(Problem::invalid_parameter(
            "bbox-crs",
            "bbox-crs needs a bbox",
        ));
    }
    if let Some(datetime) = raw.get("datetime") {
        filters.extend(parse_datetime(datetime)?);
    }
    if let Some(text) = raw.get("filter") {
        filters.extend(parse_filter(raw, text)?);
    } else if raw.get("filter-lang").is_some() || raw.get("filter-crs").is_some() {
        return Err(Problem::invalid_parameter(
            "filter",
            "filter-lang and filter-crs need a filter",
        ));
    }
    for (name, kind) in PROPERTY_FILTERS {
        if let Some(value) = raw.get(name) {
            filters.push(property_filter(name, kind, value)?);
        }
    }
    Ok(ItemsRequest {
        limit,
        offset,
        crs,
        filters,
    })
}

/// `bbox=minx,miny,maxx,maxy` (a 6-number box drops its heights) in `crs`.
pub fn parse_bbox(value: &str, crs: OutputCrs) -> Result<GeoArea, Problem> {
    let invalid = |detail: String| Problem::invalid_parameter("bbox", detail);
    let numbers = value
        .split(',')
        .map(|n| n.trim().parse::<f64>().ok().filter(|f| f.is_finite()))
        .collect::<Option<Vec<f64>>>()
        .ok_or_else(|| invalid(format!("'{value}' is not a list of numbers")))?;
    let [x0, y0, x1, y1] = match numbers[..] {
        [a, b, c, d] => [a, b, c, d],
        [a, b, _, d, e, _] => [a, b, d, e],
        _ => return Err(invalid("a bbox has 4 numbers (or 6 with heights)".into())),
    };
    // EPSG:4326 by URI is latitude first: the box is minlat, minlon, maxlat, maxlon.
    let [x0, y0, x1, y1] = if crs.latitude_first {
        [y0, x0, y1, x1]
    } else {
        [x0, y0, x1, y1]
    };
    if x0 > x1 {
        return Err(invalid(
            "boxes across the antimeridian (minx > maxx) are not supported".into(),
        ));
    }
    if y0 > y1 {
        return Err(invalid(
            "the lower corner lies above the upper corner".into(),
        ));
    }
    let original = Geometry::Polygon(Rect::new((x0, y0), (x1, y1)).to_polygon());
    let geometry =
        transform(&original, crs.srid, Srid::Wgs84).map_err(|e| invalid(e.to_string()))?;
    Ok(GeoArea {
        relation: hub_geo::relate::Relation::Intersects,
        geometry,
        original,
        srid: crs.srid,
    })
}

/// The box `[west, south, east, north]` (WGS 84 degrees) as the same area `bbox` makes,
/// so a tile and an items request for the tile's box select the same documents.
pub fn lonlat_area([x0, y0, x1, y1]: [f64; 4]) -> GeoArea {
    let polygon = Geometry::Polygon(Rect::new((x0, y0), (x1, y1)).to_polygon());
    GeoArea {
        relation: hub_geo::relate::Relation::Intersects,
        geometry: polygon.clone(),
        original: polygon,
        srid: Srid::Wgs84,
    }
}

/// `datetime`: an instant or an interval `start/end` (`..` or empty = open), compared
/// with the documents' last change.
pub fn parse_datetime(value: &str) -> Result<Vec<ContentFilter>, Problem> {
    let bound = |text: &str| -> Result<Option<String>, Problem> {
        let t = text.trim();
        if t.is_empty() || t == ".." {
            return Ok(None);
        }
        hub_model::time::normalize_timestamp(t)
            .map(Some)
            .ok_or_else(|| {
                Problem::invalid_parameter(
                    "datetime",
                    format!("'{t}' is not an RFC 3339 date-time or date"),
                )
            })
    };
    let (start, end) = match value.split_once('/') {
        Some((a, b)) => (bound(a)?, bound(b)?),
        None => {
            let at = bound(value)?.ok_or_else(|| {
                Problem::invalid_parameter("datetime", "an instant cannot be open ('..')")
            })?;
            (Some(at.clone()), Some(at))
        }
    };
    if let (Some(a), Some(b)) = (&start, &end) {
        if a > b {
            return Err(Problem::invalid_parameter(
                "datetime",
                "the interval ends before it starts",
            ));
        }
    }
    Ok(start
        .map(ContentFilter::ChangedSince)
        .into_iter()
        .chain(end.map(ContentFilter::ChangedUntil))
        .collect())
}

/// `filter` with `filter-lang` (only `cql2-text`) and `filter-crs` (of its geometries):
/// the attribute condition and the areas (in EPSG:4326) every match must intersect.
pub(crate) fn parse_cql2_parameter(
    raw: &RawQuery,
    text: &str,
) -> Result<(Option<RawFilter>, Vec<GeoArea>), Problem> {
    if let Some(lang) = raw.get("filter-lang") {
        // `cql-text` is the draft's name, which GDAL before 3.7 sends; its comparisons,
        // LIKE, IN, BETWEEN and boolean logic read the same.
        if !lang.eq_ignore_ascii_case("cql2-text") && !lang.eq_ignore_ascii_case("cql-text") {
            return Err(Problem::invalid_parameter(
                "filter-lang",
                format!("'{lang}' is not supported; use cql2-text"),
            ));
        }
    }
    let crs = raw
        .get("filter-crs")
        .map(|v| parse_crs("filter-crs", v))
        .transpose()?
        .unwrap_or(OutputCrs::CRS84);
    let parsed = parse_cql2(text).map_err(|e| filter_error(&e))?;
    let mut areas = Vec::new();
    for area in parsed.areas {
        let original = if crs.latitude_first {
            use hub_geo::geo::MapCoords;
            area.map_coords(|c| hub_geo::geo::Coord { x: c.y, y: c.x })
        } else {
            area
        };
        let geometry = transform(&original, crs.srid, Srid::Wgs84)
            .map_err(|e| Problem::invalid_parameter("filter", e.to_string()))?;
        areas.push(GeoArea {
            relation: hub_geo::relate::Relation::Intersects,
            geometry,
            original,
            srid: crs.srid,
        });
    }
    Ok((parsed.filter, areas))
}

/// A 400 naming `filter` and the position of the fault.
pub(crate) fn filter_error(e: &RawFilterError) -> Problem {
    Problem::parse_error(
        "filter",
        e.position,
        format!("{} at position {}", e.message, e.position),
    )
}

/// The CQL2 `filter` of a Content collection as Content API filters.
fn parse_filter(raw: &RawQuery, text: &str) -> Result<Vec<ContentFilter>, Problem> {
    let (filter, areas) = parse_cql2_parameter(raw, text)?;
    let mut filters = Vec::new();
    if let Some(filter) = filter {
        filters.push(ContentFilter::Raw {
            filter,
            parameter: "filter",
        });
    }
    filters.extend(areas.into_iter().map(ContentFilter::Area));
    Ok(filters)
}

/// `name=value`: equality on a top-level field, typed by the queryable.
fn property_filter(name: &'static str, kind: &str, value: &str) -> Result<ContentFilter, Problem> {
    let literal = match kind {
        "boolean" => match value.to_ascii_lowercase().as_str() {
            "true" => Literal::Bool(true),
            "false" => Literal::Bool(false),
            _ => {
                return Err(Problem::invalid_parameter(
                    name,
                    format!("'{value}' is not true or false"),
                ))
            }
        },
        _ => Literal::Text(value.to_string()),
    };
    Ok(ContentFilter::Raw {
        filter: RawFilter::Compare {
            op: CompareOp::Eq,
            path: JsonPath {
                segments: vec![PathSegment::Key(name.to_string())],
                text: name.to_string(),
                position: 1,
            },
            value: literal,
            position: 1,
        },
        parameter: name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(query: &str) -> Result<ItemsRequest, Problem> {
        parse_items(&RawQuery::parse(Some(query)))
    }

    fn status(query: &str) -> (u16, Option<String>) {
        let p = items(query).expect_err(query);
        (p.status, p.parameter)
    }

    #[test]
    fn limit_and_offset_have_defaults_and_bounds() {
        let r = items("").unwrap();
        assert_eq!((r.limit, r.offset, r.crs), (10, 0, OutputCrs::CRS84));
        assert_eq!(items("limit=10000&offset=30").unwrap().limit, 10_000);
        assert_eq!(status("limit=10001"), (400, Some("limit".into())));
        assert_eq!(status("limit=0"), (400, Some("limit".into())));
        assert_eq!(status("offset=-1"), (400, Some("offset".into())));
    }

    #[test]
    fn bbox_in_crs84_latitude_first_4326_and_metres() {
        let r = items("bbox=11,46,12,47").unwrap();
        let ContentFilter::Area(a) = &r.filters[0] else {
            panic!()
        };
        let rect = hub_geo::geo::BoundingRect::bounding_rect(&a.geometry).unwrap();
        assert_eq!(
            (rect.min().x, rect.min().y, rect.max().x, rect.max().y),
            (11.0, 46.0, 12.0, 47.0)
        );
        let r =
            items("bbox=46,11,47,12&bbox-crs=http://www.opengis.net/def/crs/EPSG/0/4326").unwrap();
        let ContentFilter::Area(b) = &r.filters[0] else {
            panic!()
        };
        assert_eq!(a.geometry, b.geometry);
        let r = items("bbox=1224514,5780349,1335833,5942074&bbox-crs=EPSG:3857").unwrap();
        let ContentFilter::Area(m) = &r.filters[0] else {
            panic!()
        };
        let rect = hub_geo::geo::BoundingRect::bounding_rect(&m.geometry).unwrap();
        assert!((rect.min().x - 11.0).abs() < 0.001 && (rect.max().y - 47.0).abs() < 0.001);
        assert_eq!(status("bbox=1,2,3"), (400, Some("bbox".into())));
        assert_eq!(status("bbox=12,46,11,47"), (400, Some("bbox".into())));
        assert_eq!(
            status("bbox=1,2,3,4&bbox-crs=EPSG:2056"),
            (400, Some("bbox-crs".into()))
        );
    }

    #[test]
    fn datetime_instants_and_open_intervals() {
        assert_eq!(
            parse_datetime("2024-01-01T00:00:00Z/..").unwrap(),
            [ContentFilter::ChangedSince("2024-01-01T00:00:00".into())]
        );
        assert_eq!(
            parse_datetime("../2024-01-02").unwrap(),
            [ContentFilter::ChangedUntil("2024-01-02T00:00:00".into())]
        );
        assert_eq!(
            parse_datetime("2024-01-01T10:00:00+01:00").unwrap().len(),
            2
        );
        assert!(parse_datetime("2024-02-01/2024-01-01").is_err());
        assert!(parse_datetime("yesterday").is_err());
        assert!(parse_datetime("..").is_err());
    }

    #[test]
    fn filter_language_and_errors_name_the_parameter() {
        let r = items(
            "filter=Shortname%20%3D%20%27A%27%20AND%20S_INTERSECTS(geometry,BBOX(11,46,12,47))",
        )
        .unwrap();
        assert!(matches!(
            r.filters[0],
            ContentFilter::Raw {
                parameter: "filter",
                ..
            }
        ));
        assert!(matches!(r.filters[1], ContentFilter::Area(_)));
        let p = items("filter=a%20%3D").unwrap_err();
        assert_eq!(
            (p.status, p.parameter.as_deref(), p.position),
            (400, Some("filter"), Some(4))
        );
        assert_eq!(
            status("filter=a=1&filter-lang=cql2-json"),
            (400, Some("filter-lang".into()))
        );
        assert_eq!(status("Active=maybe"), (400, Some("Active".into())));
        assert_eq!(items("Active=true&Shortname=x").unwrap().filters.len(), 2);
    }
}
