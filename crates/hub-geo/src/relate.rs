//! Exact predicates between a filter geometry and a document's position, applied by the
//! store after its bounding-box prefilter; and distance on the sphere.

use geo::{Distance, Geometry, Haversine, Intersects, Point};

/// Mean earth radius (IUGG), the radius of `geo`'s haversine distance.
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// Tolerance, in degrees, for points and lines: the reference snaps both sides to a
/// 1e-8 grid before comparing, so a position "on" a line matches.
pub const LINEAR_TOLERANCE_DEG: f64 = 1e-8;

/// How the filter geometry relates to a document position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Any contact, boundary included (`bbi`, WKT, shapes).
    Intersects,
    /// The position lies inside or on the boundary (`bbc`). For a point item this is the
    /// same set as `Intersects`; the two differ only for items with an extent.
    Covers,
}

/// Great-circle distance in metres between two (latitude, longitude) positions.
pub fn distance_m(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    Haversine::distance(Point::new(lon1, lat1), Point::new(lon2, lat2))
}

/// True when the position (lon, lat) is related to `area` as asked.
pub fn relates(area: &Geometry<f64>, _relation: Relation, lon: f64, lat: f64) -> bool {
    let p = Point::new(lon, lat);
    if area.intersects(&p) {
        return true;
    }
    // Points and lines have no interior: compare with a small tolerance instead.
    if is_areal(area) {
        return false;
    }
    near(area, &p)
}

fn is_areal(g: &Geometry<f64>) -> bool {
    matches!(
        g,
        Geometry::Polygon(_)
            | Geometry::MultiPolygon(_)
            | Geometry::Rect(_)
            | Geometry::Triangle(_)
    )
}

fn near(g: &Geometry<f64>, p: &Point<f64>) -> bool {
    use geo::Euclidean;
    match g {
        Geometry::GeometryCollection(c) => c.0.iter().any(|g| !is_areal(g) && near(g, p)),
        Geometry::Point(q) => Euclidean::distance(*q, *p) <= LINEAR_TOLERANCE_DEG,
        Geometry::MultiPoint(m) => {
            m.0.iter()
                .any(|q| Euclidean::distance(*q, *p) <= LINEAR_TOLERANCE_DEG)
        }
        Geometry::LineString(l) => Euclidean::distance(l, p) <= LINEAR_TOLERANCE_DEG,
        Geometry::MultiLineString(m) => {
            m.0.iter()
                .any(|l| Euclidean::distance(l, p) <= LINEAR_TOLERANCE_DEG)
        }
        Geometry::Line(l) => Euclidean::distance(l, p) <= LINEAR_TOLERANCE_DEG,
        _ => false,
    }
}

/// The bounding box (min lon, min lat, max lon, max lat) of every position within
/// `metres` of (lat, lon), a little enlarged; the whole longitude range near the poles
/// or across the antimeridian.
pub fn radius_bbox(lat: f64, lon: f64, metres: f64) -> [f64; 4] {
    let dlat = (metres / EARTH_RADIUS_M).to_degrees() * 1.01;
    let (min_lat, max_lat) = ((lat - dlat).max(-90.0), (lat + dlat).min(90.0));
    let cos = min_lat.to_radians().cos().min(max_lat.to_radians().cos());
    if cos < 1e-6 || metres >= EARTH_RADIUS_M {
        return [-180.0, min_lat, 180.0, max_lat];
    }
    let dlon = (metres / (EARTH_RADIUS_M * cos)).to_degrees() * 1.01;
    if lon - dlon < -180.0 || lon + dlon > 180.0 {
        return [-180.0, min_lat, 180.0, max_lat];
    }
    [lon - dlon, min_lat, lon + dlon, max_lat]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wkt::parse_wkt;

    #[test]
    fn distance_on_the_sphere() {
        // Bolzano to Merano: about 24.5 km.
        let d = distance_m(46.4983, 11.3548, 46.6713, 11.1594);
        assert!((d - 24_400.0).abs() < 500.0, "{d}");
        assert_eq!(distance_m(1.0, 2.0, 1.0, 2.0), 0.0);
    }

    #[test]
    fn polygons_lines_and_points() {
        let square = parse_wkt("POLYGON((11 46,12 46,12 47,11 47,11 46))").unwrap();
        assert!(relates(&square, Relation::Intersects, 11.5, 46.5));
        assert!(
            relates(&square, Relation::Covers, 11.0, 46.5),
            "boundary counts"
        );
        assert!(!relates(&square, Relation::Intersects, 12.5, 46.5));
        let line = parse_wkt("LINESTRING(11 46,12 47)").unwrap();
        assert!(relates(&line, Relation::Intersects, 11.5, 46.5));
        assert!(!relates(&line, Relation::Intersects, 11.5, 46.6));
        let point = parse_wkt("POINT(11.3 46.5)").unwrap();
        assert!(relates(&point, Relation::Intersects, 11.300000001, 46.5));
        assert!(!relates(&point, Relation::Intersects, 11.3001, 46.5));
    }

    #[test]
    fn radius_boxes_contain_the_circle() {
        let [min_lon, min_lat, max_lon, max_lat] = radius_bbox(46.5, 11.3, 10_000.0);
        for (lat, lon) in [
            (46.5 + 0.0899, 11.3),
            (46.5, 11.3 + 0.1305),
            (46.5, 11.3 - 0.1305),
        ] {
            assert!(distance_m(46.5, 11.3, lat, lon) < 10_000.0);
            assert!(
                (min_lon..=max_lon).contains(&lon) && (min_lat..=max_lat).contains(&lat),
                "{lat} {lon}"
            );
        }
        assert_eq!(radius_bbox(89.9, 0.0, 50_000.0)[0], -180.0);
    }
}
