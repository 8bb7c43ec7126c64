//! GeoJSON geometry objects (RFC 7946 §3.1) to and from `geo` geometry, two dimensions.

use geo::{
    Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint, MultiPolygon,
    Point, Polygon,
};
use serde_json::{json, Value};

fn position(c: &Coord<f64>) -> Value {
    json!([c.x, c.y])
}

fn line(l: &LineString<f64>) -> Value {
    Value::Array(l.0.iter().map(position).collect())
}

fn polygon(p: &Polygon<f64>) -> Value {
    Value::Array(
        std::iter::once(p.exterior())
            .chain(p.interiors())
            .map(line)
            .collect(),
    )
}

/// The GeoJSON geometry object of `g`.
pub fn to_geojson(g: &Geometry<f64>) -> Value {
    match g {
        Geometry::Point(p) => json!({"type": "Point", "coordinates": position(&p.0)}),
        Geometry::LineString(l) => json!({"type": "LineString", "coordinates": line(l)}),
        Geometry::Polygon(p) => json!({"type": "Polygon", "coordinates": polygon(p)}),
        Geometry::MultiPoint(m) => {
            json!({"type": "MultiPoint", "coordinates": m.0.iter().map(|p| position(&p.0)).collect::<Vec<_>>()})
        }
        Geometry::MultiLineString(m) => {
            json!({"type": "MultiLineString", "coordinates": m.0.iter().map(line).collect::<Vec<_>>()})
        }
        Geometry::MultiPolygon(m) => {
            json!({"type": "MultiPolygon", "coordinates": m.0.iter().map(polygon).collect::<Vec<_>>()})
        }
        Geometry::GeometryCollection(c) => {
            json!({"type": "GeometryCollection", "geometries": c.0.iter().map(to_geojson).collect::<Vec<_>>()})
        }
        Geometry::Line(l) => to_geojson(&Geometry::LineString(LineString(vec![l.start, l.end]))),
        Geometry::Rect(r) => to_geojson(&Geometry::Polygon(r.to_polygon())),
        Geometry::Triangle(t) => to_geojson(&Geometry::Polygon(t.to_polygon())),
    }
}

fn read_position(v: &Value) -> Option<Coord<f64>> {
    let a = v.as_array()?;
    Some(Coord {
        x: a.first()?.as_f64()?,
        y: a.get(1)?.as_f64()?,
    })
}

fn read_line(v: &Value) -> Option<LineString<f64>> {
    v.as_array()?
        .iter()
        .map(read_position)
        .collect::<Option<Vec<_>>>()
        .map(LineString)
}

fn read_polygon(v: &Value) -> Option<Polygon<f64>> {
    let mut rings = v
        .as_array()?
        .iter()
        .map(read_line)
        .collect::<Option<Vec<_>>>()?;
    if rings.is_empty() {
        return None;
    }
    let exterior = rings.remove(0);
    Some(Polygon::new(exterior, rings))
}

fn list<T>(v: &Value, item: fn(&Value) -> Option<T>) -> Option<Vec<T>> {
    v.as_array()?.iter().map(item).collect()
}

/// Reads a GeoJSON geometry object; `None` when it is not one.
pub fn from_geojson(v: &Value) -> Option<Geometry<f64>> {
    let c = &v["coordinates"];
    Some(match v.get("type")?.as_str()? {
        "Point" => Geometry::Point(Point(read_position(c)?)),
        "LineString" => Geometry::LineString(read_line(c)?),
        "Polygon" => Geometry::Polygon(read_polygon(c)?),
        "MultiPoint" => Geometry::MultiPoint(MultiPoint(list(c, |p| read_position(p).map(Point))?)),
        "MultiLineString" => Geometry::MultiLineString(MultiLineString(list(c, read_line)?)),
        "MultiPolygon" => Geometry::MultiPolygon(MultiPolygon(list(c, read_polygon)?)),
        "GeometryCollection" => {
            Geometry::GeometryCollection(GeometryCollection(list(&v["geometries"], from_geojson)?))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wkt::parse_wkt;

    #[test]
    fn round_trips_every_type() {
        for wkt in [
            "POINT(1 2)",
            "LINESTRING(1 2,3 4)",
            "POLYGON((0 0,1 0,1 1,0 0))",
            "MULTIPOINT((1 2),(3 4))",
            "MULTILINESTRING((1 2,3 4))",
            "MULTIPOLYGON(((0 0,1 0,1 1,0 0)))",
            "GEOMETRYCOLLECTION(POINT(1 2))",
        ] {
            let g = parse_wkt(wkt).unwrap();
            assert_eq!(from_geojson(&to_geojson(&g)), Some(g), "{wkt}");
        }
        assert_eq!(
            to_geojson(&parse_wkt("POINT(1.5 2)").unwrap()),
            json!({"type": "Point", "coordinates": [1.5, 2.0]})
        );
        assert_eq!(from_geojson(&json!({"type": "Circle"})), None);
    }
}
