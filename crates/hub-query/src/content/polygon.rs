//! The `polygon` parameter of Content API lists, in every form the spec names:
//!
//! | form | example |
//! |---|---|
//! | WKT, any OGC type | `POLYGON((11 46, 12 46, 12 47, 11 46))` |
//! | box, lon lat pairs | `bbi(11 46, 12 46, 12 47, 11 47)` (`bbc` = covers) |
//! | GeoShape id | `41_istat` |
//! | `Country.Type.IdOrName` | `IT.municipality.Bolzano/Bozen` |
//!
//! Coordinates may carry an SRID, as the suffix `;SRID=3857` or the EWKT prefix
//! `SRID=3857;`; they are transformed to EPSG:4326 here. Shape references are resolved
//! by the API layer (they need the store).

use hub_geo::relate::Relation;
use hub_geo::srid::{transform, SUPPORTED};
use hub_geo::wkt::{looks_like_wkt, parse_wkt, WKT_TYPES};
use hub_geo::{Geometry, Srid};

/// Longest accepted `polygon` value; longer shapes belong in a GeoShape.
pub const MAX_POLYGON_CHARS: usize = 200_000;

/// A parsed `polygon` value.
#[derive(Debug, Clone, PartialEq)]
pub enum PolygonSpec {
    /// Coordinates given by the client: `geometry` in EPSG:4326, `original` as sent in `srid`.
    Coordinates {
        relation: Relation,
        geometry: Geometry<f64>,
        original: Geometry<f64>,
        srid: Srid,
    },
    /// A GeoShape to look up.
    Shape(ShapeRef),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeRef {
    /// A GeoShape id (`41_istat`).
    Id(String),
    /// `Country.Type.IdOrName`: country compared upper case, type lower case, the last
    /// part an id or a name (case-insensitive).
    Path {
        country: String,
        kind: String,
        id_or_name: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct PolygonError {
    /// 1-based position in the parameter value.
    pub position: usize,
    pub message: String,
}

fn error(position: usize, message: impl Into<String>) -> PolygonError {
    PolygonError {
        position,
        message: message.into(),
    }
}

/// Parses a `polygon` value (already trimmed).
pub fn parse_polygon(value: &str) -> Result<PolygonSpec, PolygonError> {
    if value.chars().count() > MAX_POLYGON_CHARS {
        return Err(error(MAX_POLYGON_CHARS + 1, format!("the value is longer than {MAX_POLYGON_CHARS} characters; store large shapes as a GeoShape")));
    }
    let (body, body_offset, srid) = split_srid(value)?;
    let lower = body.to_ascii_lowercase();
    let spec = if lower.starts_with("bbc") || lower.starts_with("bbi") {
        let relation = if lower.starts_with("bbc") {
            Relation::Covers
        } else {
            Relation::Intersects
        };
        let geometry =
            parse_box(&body[3..]).map_err(|e| error(body_offset + 3 + e.position, e.message))?;
        PolygonSpec::Coordinates {
            relation,
            original: geometry.clone(),
            geometry,
            srid: srid.unwrap_or(Srid::Wgs84),
        }
    } else if looks_like_wkt(body) || body.contains('(') {
        let geometry = parse_wkt(body).map_err(|e| error(body_offset + e.position, e.message))?;
        PolygonSpec::Coordinates {
            relation: Relation::Intersects,
            original: geometry.clone(),
            geometry,
            srid: srid.unwrap_or(Srid::Wgs84),
        }
    } else {
        if srid.is_some() {
            return Err(error(
                body_offset + body.chars().count() + 1,
                "an SRID applies to coordinates, not to a GeoShape reference",
            ));
        }
        let parts: Vec<&str> = body.splitn(3, '.').collect();
        if body.is_empty() {
            return Err(error(
                1,
                format!("expected WKT ({WKT_TYPES}), bbc(…)/bbi(…) or a GeoShape id"),
            ));
        }
        PolygonSpec::Shape(match parts.as_slice() {
            [country, kind, id_or_name]
                if !country.is_empty() && !kind.is_empty() && !id_or_name.is_empty() =>
            {
                ShapeRef::Path {
                    country: country.to_ascii_uppercase(),
                    kind: kind.to_lowercase(),
                    id_or_name: id_or_name.to_string(),
                }
            }
            _ => ShapeRef::Id(body.to_string()),
        })
    };
    match spec {
        PolygonSpec::Coordinates {
            relation,
            original,
            srid,
            ..
        } => {
            let geometry = transform(&original, srid, Srid::Wgs84)
                .map_err(|e| error(body_offset + 1, e.to_string()))?;
            let outside = geo::CoordsIter::coords_iter(&geometry)
                .find(|c| !(-180.0..=180.0).contains(&c.x) || !(-90.0..=90.0).contains(&c.y));
            if let Some(c) = outside {
                return Err(error(
                    body_offset + 1,
                    format!("the position ({} {}) is outside longitude -180..180, latitude -90..90; positions are 'lon lat' (or give ;SRID=)", c.x, c.y),
                ));
            }
            Ok(PolygonSpec::Coordinates {
                relation,
                geometry,
                original,
                srid,
            })
        }
        shape => Ok(shape),
    }
}

/// Splits off `;SRID=n` (suffix) or `SRID=n;` (EWKT prefix). Returns the body, the
/// 1-based offset correction of the body within `value` (0 when it starts at 1) and the SRID.
fn split_srid(value: &str) -> Result<(&str, usize, Option<Srid>), PolygonError> {
    let lower = value.to_ascii_lowercase();
    let read = |code: &str, at: usize| {
        Srid::parse(code).ok_or_else(|| {
            error(
                at,
                format!(
                    "SRID '{}' is not supported; use one of {SUPPORTED}",
                    code.trim()
                ),
            )
        })
    };
    if let Some(i) = lower.rfind(";srid=") {
        let code = &value[i + 6..];
        let srid = read(code, value[..i + 6].chars().count() + 1)?;
        return Ok((value[..i].trim_end(), 0, Some(srid)));
    }
    if lower.starts_with("srid=") {
        let end = value
            .find(';')
            .ok_or_else(|| error(1, "an SRID prefix ends with ';' before the geometry"))?;
        let srid = read(&value[5..end], 6)?;
        let rest = &value[end + 1..];
        let trimmed = rest.trim_start();
        let offset =
            value[..end + 1].chars().count() + (rest.chars().count() - trimmed.chars().count());
        return Ok((trimmed, offset, Some(srid)));
    }
    Ok((value, 0, None))
}

/// `(lon lat, lon lat, …)`: two pairs are opposite corners of a box; three or more are
/// the ring of a polygon (closed here when the client did not close it).
fn parse_box(text: &str) -> Result<Geometry<f64>, PolygonError> {
    let trimmed = text.trim_end();
    let inner = trimmed.trim_start();
    let lead = text.len() - inner.len();
    if !inner.starts_with('(') {
        return Err(error(
            lead + 1,
            "expected '(' and a list of 'lon lat' pairs",
        ));
    }
    if !inner.ends_with(')') {
        return Err(error(
            lead + inner.chars().count() + 1,
            "expected ')' after the last 'lon lat' pair",
        ));
    }
    let pairs = &inner[1..inner.len() - 1];
    let mut coords = Vec::new();
    let mut at = lead + 2; // 1-based position of the current pair within `text`
    for pair in pairs.split(',') {
        let numbers: Vec<&str> = pair.split_whitespace().collect();
        let parsed: Option<Vec<f64>> = numbers
            .iter()
            .map(|n| n.parse::<f64>().ok().filter(|f| f.is_finite()))
            .collect();
        match parsed {
            Some(v) if v.len() == 2 => coords.push(geo::Coord { x: v[0], y: v[1] }),
            _ => {
                return Err(error(
                    at + (pair.len() - pair.trim_start().len()),
                    format!("'{}' is not a 'lon lat' pair", pair.trim()),
                ))
            }
        }
        at += pair.chars().count() + 1;
    }
    match coords.len() {
        2 => {
            let rect = geo::Rect::new(coords[0], coords[1]);
            Ok(Geometry::Polygon(rect.to_polygon()))
        }
        n if n >= 3 => {
            if coords.first() != coords.last() {
                coords.push(coords[0]);
            }
            Ok(Geometry::Polygon(geo::Polygon::new(
                geo::LineString(coords),
                vec![],
            )))
        }
        _ => Err(error(
            lead + 1,
            "give two corners or at least three 'lon lat' pairs",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_geo::wkt::to_wkt;

    fn coordinates(value: &str) -> (Relation, String, Srid) {
        match parse_polygon(value).unwrap_or_else(|e| panic!("{value}: {e:?}")) {
            PolygonSpec::Coordinates {
                relation,
                geometry,
                srid,
                ..
            } => (relation, to_wkt(&geometry), srid),
            other => panic!("{value}: {other:?}"),
        }
    }

    #[test]
    fn every_form_of_the_spec() {
        assert_eq!(
            coordinates("POLYGON((11 46,12 46,12 47,11 46))"),
            (
                Relation::Intersects,
                "POLYGON((11 46,12 46,12 47,11 46))".into(),
                Srid::Wgs84
            )
        );
        assert_eq!(
            coordinates("linestring(11 46, 12 47)").1,
            "LINESTRING(11 46,12 47)"
        );
        assert_eq!(coordinates("POINT(11 46);SRID=4326").1, "POINT(11 46)");
        assert_eq!(
            coordinates("bbi(11 46, 12 47)"),
            (
                Relation::Intersects,
                "POLYGON((12 46,12 47,11 47,11 46,12 46))".into(),
                Srid::Wgs84
            )
        );
        assert_eq!(
            coordinates("BBC(11 46,12 46,12 47)"),
            (
                Relation::Covers,
                "POLYGON((11 46,12 46,12 47,11 46))".into(),
                Srid::Wgs84
            )
        );
        assert_eq!(
            parse_polygon("41_istat"),
            Ok(PolygonSpec::Shape(ShapeRef::Id("41_istat".into())))
        );
        assert_eq!(
            parse_polygon("it.Municipality.Bolzano/Bozen"),
            Ok(PolygonSpec::Shape(ShapeRef::Path {
                country: "IT".into(),
                kind: "municipality".into(),
                id_or_name: "Bolzano/Bozen".into()
            }))
        );
    }

    #[test]
    fn srids_are_transformed_to_wgs84() {
        // 9° E 45° N in UTM 32N and Web Mercator.
        for value in [
            "POINT(500000 4982950.4);SRID=32632",
            "SRID=32632;POINT(500000 4982950.4)",
            "POINT(500000 4982950.4);srid=25832",
            "POINT(1001875.417 5621521.486);SRID=3857",
        ] {
            let (_, wkt, _) = coordinates(value);
            let g = hub_geo::wkt::parse_wkt(&wkt).unwrap();
            let Geometry::Point(p) = g else { panic!() };
            assert!(
                (p.x() - 9.0).abs() < 1e-6 && (p.y() - 45.0).abs() < 1e-6,
                "{value}: {wkt}"
            );
        }
    }

    #[test]
    fn errors_name_the_position() {
        let cases = [
            (
                "POLYGON((11 46,12 46,12 47,11 46)",
                34,
                "expected ',' or ')'",
            ),
            ("POLYGON((11 46,12 x,12 47,11 46))", 19, "expected a number"),
            ("POLYGON((11 46,12 46));SRID=4326", 9, "at least 4"),
            ("SRID=32632; POLYGON((1 2,3 x))", 28, "expected a number"),
            ("POINT(1 2);SRID=2056", 17, "not supported"),
            ("bbi(11 46, 12)", 12, "'12' is not a 'lon lat' pair"),
            ("bbc(11 46)", 4, "two corners"),
            ("bbc 11 46", 5, "expected '('"),
            ("bbi(11 46, 12 47", 17, "expected ')'"),
            ("CIRCLE(11 46, 5)", 1, "not a WKT geometry type"),
            ("41_istat;SRID=3857", 9, "not to a GeoShape"),
            ("POINT(46 200)", 1, "outside longitude"),
        ];
        for (value, position, phrase) in cases {
            let e = parse_polygon(value).expect_err(value);
            assert_eq!(e.position, position, "{value}: {e:?}");
            assert!(e.message.contains(phrase), "{value}: {e:?}");
        }
    }
}
