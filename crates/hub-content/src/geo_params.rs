//! The geographic parameters of Content API lists: `latitude`/`longitude`/`radius`,
//! `polygon`, `locfilter` and `areafilter`. Parsing is synchronous and validates every
//! value; GeoShape references and area tokens need the store and are resolved by
//! [`GeoParams::resolve`] just before the query runs.

use hub_geo::relate::Relation;
use hub_geo::{geojson::from_geojson, Srid};
use hub_query::content::geo::{GeoArea, GeoCircle};
use hub_query::content::polygon::{parse_polygon, PolygonSpec, ShapeRef};
use hub_query::content::{ContentFilter, ContentOrder};
use hub_store::ContentRepo;
use serde_json::Value;

use crate::error::ContentError;
use crate::list_query::CommonListQuery;

/// Radius when `latitude` and `longitude` come without `radius`, as the reference does.
pub const DEFAULT_RADIUS_M: f64 = 150_000.0;
/// Half the earth's circumference: every point is within it.
pub const MAX_RADIUS_M: f64 = 20_037_509.0;

pub const LOCATION_PREFIXES: [&str; 4] = ["reg", "tvs", "mun", "fra"];
pub const AREA_PREFIXES: [&str; 5] = ["reg", "tvs", "skr", "ska", "are"];

/// What the geographic parameters ask, before store lookups.
#[derive(Debug, Clone, Default)]
pub struct GeoParams {
    pub circle: Option<GeoCircle>,
    pub polygon: Option<PolygonSpec>,
    /// `locfilter` tokens, lower case (`regabc…`).
    pub locations: Option<Vec<String>>,
    /// `areafilter` tokens: (prefix, id as given).
    pub areas: Option<Vec<(String, String)>>,
}

fn invalid(parameter: &str, detail: impl Into<String>) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.into(),
        detail: detail.into(),
    }
}

fn number(
    name: &str,
    value: Option<&str>,
    range: std::ops::RangeInclusive<f64>,
    form: &str,
) -> Result<Option<f64>, ContentError> {
    value
        .map(|v| match v.parse::<f64>() {
            Ok(n) if range.contains(&n) => Ok(n),
            _ => Err(invalid(name, format!("'{v}' is not accepted; use {form}"))),
        })
        .transpose()
}

/// Splits a comma list into (1-based position, token) pairs, skipping empty tokens.
fn tokens(value: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 1;
    for part in value.split(',') {
        let lead = part.chars().count() - part.trim_start().chars().count();
        if !part.trim().is_empty() {
            out.push((at + lead, part.trim()));
        }
        at += part.chars().count() + 1;
    }
    out
}

/// Reads `<prefix><id>` tokens whose prefix is one of `prefixes`.
fn prefixed(
    parameter: &str,
    value: &str,
    prefixes: &[&str],
) -> Result<Vec<(String, String)>, ContentError> {
    crate::params::check_list(parameter, value)?;
    tokens(value)
        .into_iter()
        .map(|(position, token)| {
            let prefix = token.get(..3).map(str::to_ascii_lowercase).filter(|p| prefixes.contains(&p.as_str()));
            match (prefix, token.get(3..)) {
                (Some(p), Some(id)) if !id.is_empty() => Ok((p, id.to_string())),
                _ => Err(ContentError::Parse {
                    parameter: parameter.into(),
                    position,
                    detail: format!("'{token}' is not a <type><id> token; the type is one of {} (GET /v1/Location lists them)", prefixes.join(", ")),
                }),
            }
        })
        .collect()
}

/// The `locfilter` tokens, lower case (`regabc…`); Find and Location read it too.
pub fn locations(value: &str) -> Result<Vec<String>, ContentError> {
    prefixed("locfilter", value, &LOCATION_PREFIXES).map(|l| {
        l.into_iter()
            .map(|(p, id)| format!("{p}{}", id.to_lowercase()))
            .collect()
    })
}

impl GeoParams {
    pub fn parse(q: &CommonListQuery) -> Result<GeoParams, ContentError> {
        let latitude = number(
            "latitude",
            q.latitude.as_deref(),
            -90.0..=90.0,
            "a latitude in degrees from -90 to 90",
        )?;
        let longitude = number(
            "longitude",
            q.longitude.as_deref(),
            -180.0..=180.0,
            "a longitude in degrees from -180 to 180",
        )?;
        let radius = number(
            "radius",
            q.radius.as_deref(),
            0.0..=MAX_RADIUS_M,
            &format!("a distance in metres from 0 to {MAX_RADIUS_M}"),
        )?;
        let circle = match (latitude, longitude) {
            (Some(latitude), Some(longitude)) => Some(GeoCircle {
                latitude,
                longitude,
                metres: radius.unwrap_or(DEFAULT_RADIUS_M),
            }),
            (Some(_), None) => return Err(invalid("longitude", "latitude needs longitude too")),
            (None, Some(_)) => return Err(invalid("latitude", "longitude needs latitude too")),
            (None, None) if radius.is_some() => {
                return Err(invalid("radius", "radius needs latitude and longitude"))
            }
            (None, None) => None,
        };
        let polygon = q
            .polygon
            .as_deref()
            .map(|v| {
                parse_polygon(v).map_err(|e| ContentError::Parse {
                    parameter: "polygon".into(),
                    position: e.position,
                    detail: e.message,
                })
            })
            .transpose()?;
        let locations = q.locfilter.as_deref().map(locations).transpose()?;
        let areas = q
            .areafilter
            .as_deref()
            .map(|v| prefixed("areafilter", v, &AREA_PREFIXES))
            .transpose()?;
        Ok(GeoParams {
            circle,
            polygon,
            locations,
            areas,
        })
    }

    /// Distance order when a radius search is asked; it overrides `seed` and the default.
    pub fn order(&self) -> Option<ContentOrder> {
        self.circle.as_ref().map(|c| ContentOrder::Distance {
            latitude: c.latitude,
            longitude: c.longitude,
        })
    }

    /// Appends the filters, looking up GeoShapes and areas in `store`.
    pub async fn resolve(
        &self,
        store: &dyn ContentRepo,
        filters: &mut Vec<ContentFilter>,
    ) -> Result<(), ContentError> {
        if let Some(circle) = &self.circle {
            filters.push(ContentFilter::Radius(circle.clone()));
        }
        match &self.polygon {
            Some(PolygonSpec::Coordinates {
                relation,
                geometry,
                original,
                srid,
            }) => filters.push(ContentFilter::Area(GeoArea {
                relation: *relation,
                geometry: geometry.clone(),
                original: original.clone(),
                srid: *srid,
            })),
            Some(PolygonSpec::Shape(shape)) => {
                let geometry = resolve_shape(store, shape).await?;
                filters.push(ContentFilter::Area(GeoArea {
                    relation: Relation::Intersects,
                    original: geometry.clone(),
                    geometry,
                    srid: Srid::Wgs84,
                }));
            }
            None => {}
        }
        if let Some(locations) = &self.locations {
            filters.push(ContentFilter::LocationIn(locations.clone()));
        }
        if let Some(areas) = &self.areas {
            filters.push(ContentFilter::AreaIn(resolve_areas(store, areas).await?));
        }
        Ok(())
    }
}

fn str_eq(doc: &Value, key: &str, id: &str) -> bool {
    doc[key]
        .as_str()
        .is_some_and(|v| v.eq_ignore_ascii_case(id))
}

/// Finds the GeoShape a `polygon` value names and returns its geometry (EPSG:4326).
pub async fn resolve_shape(
    store: &dyn ContentRepo,
    shape: &ShapeRef,
) -> Result<hub_geo::Geometry<f64>, ContentError> {
    crate::response_cache::depends_on(store, "GeoShape").await?;
    let doc: Option<Value> = match shape {
        ShapeRef::Id(id) => store
            .get("GeoShape", id)
            .await?
            .map(|d| serde_json::from_str(&d))
            .transpose()
            .map_err(hub_store::StoreError::from)?,
        ShapeRef::Path {
            country,
            kind,
            id_or_name,
        } => store.all("GeoShape").await?.into_iter().find(|d| {
            str_eq(d, "Country", country)
                && str_eq(d, "Type", kind)
                && (str_eq(d, "Id", id_or_name)
                    || str_eq(d, "Name", id_or_name)
                    || d["Mapping"]
                        .as_object()
                        .is_some_and(|m| m.values().any(|v| str_eq(v, "id", id_or_name))))
        }),
    };
    let described = match shape {
        ShapeRef::Id(id) => format!("id '{id}'"),
        ShapeRef::Path {
            country,
            kind,
            id_or_name,
        } => format!("country '{country}', type '{kind}' and id or name '{id_or_name}'"),
    };
    let doc = doc.ok_or_else(|| {
        invalid(
            "polygon",
            format!("there is no GeoShape with {described}; GET /v1/GeoShapes lists them"),
        )
    })?;
    from_geojson(&doc["Geometry"]).ok_or_else(|| {
        invalid(
            "polygon",
            format!("the GeoShape with {described} has no readable geometry"),
        )
    })
}

/// The Area ids an `areafilter` names (lower case): `are` is an area itself; `reg`/`tvs`
/// the areas of a region or tourism association; `ska` the areas of a ski area; `skr`
/// those of every ski area of a ski region.
async fn resolve_areas(
    store: &dyn ContentRepo,
    tokens: &[(String, String)],
) -> Result<Vec<String>, ContentError> {
    let needs_areas = tokens.iter().any(|(p, _)| p != "are");
    let needs_ski = tokens.iter().any(|(p, _)| p == "ska" || p == "skr");
    let areas = if needs_areas {
        crate::response_cache::depends_on(store, "Area").await?;
        store.all("Area").await?
    } else {
        Vec::new()
    };
    let ski_areas = if needs_ski {
        crate::response_cache::depends_on(store, "SkiArea").await?;
        store.all("SkiArea").await?
    } else {
        Vec::new()
    };
    let ids_of = |doc: &Value, key: &str| -> Vec<String> {
        doc[key]
            .as_array()
            .map(|l| {
                l.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_lowercase)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for (prefix, id) in tokens {
        match prefix.as_str() {
            "are" => out.push(id.to_lowercase()),
            "reg" | "tvs" => {
                let key = if prefix == "reg" {
                    "RegionId"
                } else {
                    "TourismvereinId"
                };
                out.extend(
                    areas
                        .iter()
                        .filter(|a| str_eq(a, key, id))
                        .filter_map(|a| a["Id"].as_str())
                        .map(str::to_lowercase),
                );
            }
            _ => {
                let chosen: Vec<&Value> = ski_areas
                    .iter()
                    .filter(|s| {
                        if prefix == "ska" {
                            str_eq(s, "Id", id)
                        } else {
                            str_eq(s, "SkiRegionId", id)
                        }
                    })
                    .collect();
                for ski in chosen {
                    out.extend(ids_of(ski, "AreaId"));
                    let ski_id = ski["Id"].as_str().unwrap_or_default();
                    out.extend(
                        areas
                            .iter()
                            .filter(|a| str_eq(a, "SkiAreaID", ski_id))
                            .filter_map(|a| a["Id"].as_str())
                            .map(str::to_lowercase),
                    );
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<GeoParams, ContentError> {
        GeoParams::parse(&crate::params::RawQuery::parse(Some(s)).typed())
    }

    #[test]
    fn radius_defaults_to_150_km_and_orders_by_distance() {
        let p = parse("latitude=46.5&longitude=11.3").unwrap();
        assert_eq!(
            p.circle,
            Some(GeoCircle {
                latitude: 46.5,
                longitude: 11.3,
                metres: 150_000.0
            })
        );
        assert_eq!(
            p.order(),
            Some(ContentOrder::Distance {
                latitude: 46.5,
                longitude: 11.3
            })
        );
        assert_eq!(
            parse("latitude=46.5&longitude=11.3&radius=2500")
                .unwrap()
                .circle
                .unwrap()
                .metres,
            2500.0
        );
        assert!(parse("").unwrap().order().is_none());
    }

    #[test]
    fn location_tokens_are_lower_cased_and_checked() {
        let p = parse("locfilter=regABC,%20tvsX,mun1,fraD").unwrap();
        assert_eq!(p.locations.unwrap(), ["regabc", "tvsx", "mun1", "frad"]);
        let p = parse("areafilter=skaS1,areA").unwrap();
        assert_eq!(
            p.areas.unwrap(),
            [
                ("ska".to_string(), "S1".to_string()),
                ("are".into(), "A".into())
            ]
        );
    }

    #[test]
    fn bad_values_name_parameter_and_position() {
        let cases = [
            ("latitude=91&longitude=11", "latitude", None),
            ("latitude=46&longitude=east", "longitude", None),
            ("latitude=46", "longitude", None),
            ("longitude=11", "latitude", None),
            ("radius=100", "radius", None),
            ("latitude=46&longitude=11&radius=-5", "radius", None),
            ("polygon=POLYGON((1 2,3 4", "polygon", Some(17)),
            ("locfilter=reg1,xyz2", "locfilter", Some(6)),
            ("locfilter=reg", "locfilter", Some(1)),
            ("areafilter=mun1", "areafilter", Some(1)),
        ];
        for (input, parameter, position) in cases {
            match parse(input) {
                Err(ContentError::InvalidParameter { parameter: p, .. }) => {
                    assert_eq!((p.as_str(), None), (parameter, position), "{input}")
                }
                Err(ContentError::Parse {
                    parameter: p,
                    position: at,
                    ..
                }) => assert_eq!((p.as_str(), Some(at)), (parameter, position), "{input}"),
                other => panic!("{input}: {other:?}"),
            }
        }
    }
}
