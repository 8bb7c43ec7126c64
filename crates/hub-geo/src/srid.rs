//! The coordinate reference systems Hub accepts and their transforms to and from
//! WGS 84 (EPSG:4326), computed by the pure-Rust `proj4rs` with the PROJ definitions
//! of each code. Documents are stored in EPSG:4326; other systems exist only at the
//! edges (a client's polygon, a GeoShape's output).

use geo::{Geometry, MapCoords};
use proj4rs::proj::Proj;

/// A supported spatial reference identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Srid {
    /// WGS 84 longitude/latitude in degrees.
    Wgs84,
    /// Web Mercator (Google, OpenStreetMap tiles), metres.
    WebMercator,
    /// WGS 84 / UTM zone 32N, metres (the ISTAT shapes of South Tyrol).
    Utm32N,
    /// ETRS89 / UTM zone 32N, metres (official Italian and German cartography).
    Etrs89Utm32N,
}

pub const SUPPORTED: &str = "4326, 3857, 32632, 25832";

impl Srid {
    pub fn code(self) -> u32 {
        match self {
            Srid::Wgs84 => 4326,
            Srid::WebMercator => 3857,
            Srid::Utm32N => 32632,
            Srid::Etrs89Utm32N => 25832,
        }
    }

    pub fn from_code(code: u32) -> Option<Srid> {
        match code {
            4326 => Some(Srid::Wgs84),
            3857 | 900913 => Some(Srid::WebMercator),
            32632 => Some(Srid::Utm32N),
            25832 => Some(Srid::Etrs89Utm32N),
            _ => None,
        }
    }

    /// Reads `4326`, `EPSG:4326`, `epsg:3857`, and the names the reference accepts
    /// (`wgs84`, `mercator`).
    pub fn parse(text: &str) -> Option<Srid> {
        let t = text.trim().to_ascii_lowercase();
        match t.as_str() {
            "wgs84" => return Some(Srid::Wgs84),
            "mercator" => return Some(Srid::WebMercator),
            _ => {}
        }
        let digits = t.strip_prefix("epsg:").unwrap_or(&t);
        digits.parse().ok().and_then(Srid::from_code)
    }

    fn proj_string(self) -> &'static str {
        match self {
            Srid::Wgs84 => "+proj=longlat +datum=WGS84 +no_defs",
            Srid::WebMercator => "+proj=merc +a=6378137 +b=6378137 +lat_ts=0 +lon_0=0 +x_0=0 +y_0=0 +k=1 +units=m +no_defs",
            Srid::Utm32N => "+proj=utm +zone=32 +datum=WGS84 +units=m +no_defs",
            Srid::Etrs89Utm32N => "+proj=utm +zone=32 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs",
        }
    }

    fn proj(self) -> Proj {
        Proj::from_proj_string(self.proj_string()).expect("built-in PROJ definitions parse")
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the coordinate ({x}, {y}) cannot be transformed from EPSG:{from} to EPSG:{to}")]
pub struct TransformError {
    pub x: f64,
    pub y: f64,
    pub from: u32,
    pub to: u32,
}

/// Transforms every coordinate of `g` from `from` to `to`.
pub fn transform(g: &Geometry<f64>, from: Srid, to: Srid) -> Result<Geometry<f64>, TransformError> {
    if from == to {
        return Ok(g.clone());
    }
    let (src, dst) = (from.proj(), to.proj());
    g.try_map_coords(|c| {
        let err = TransformError {
            x: c.x,
            y: c.y,
            from: from.code(),
            to: to.code(),
        };
        let (mut x, mut y) = (c.x, c.y);
        if from == Srid::Wgs84 {
            if !(-180.0..=180.0).contains(&x) || !(-90.0..=90.0).contains(&y) {
                return Err(err);
            }
            (x, y) = (x.to_radians(), y.to_radians());
        }
        let mut p = (x, y, 0.0);
        proj4rs::transform::transform(&src, &dst, &mut p).map_err(|_| err.clone())?;
        let (mut x, mut y) = (p.0, p.1);
        if to == Srid::Wgs84 {
            (x, y) = (x.to_degrees(), y.to_degrees());
        }
        if x.is_finite() && y.is_finite() {
            Ok(geo::Coord { x, y })
        } else {
            Err(err)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::Point;

    fn point(x: f64, y: f64) -> Geometry<f64> {
        Geometry::Point(Point::new(x, y))
    }

    fn xy(g: &Geometry<f64>) -> (f64, f64) {
        match g {
            Geometry::Point(p) => (p.x(), p.y()),
            _ => unreachable!(),
        }
    }

    #[test]
    fn known_coordinates() {
        // Textbook values: Web Mercator x = R·λ, y = R·ln tan(π/4 + φ/2) with R = 6378137;
        // UTM on the central meridian (9° E in zone 32) northing = 0.9996 × meridian arc
        // (45° → 4,984,944.378 m); 3° off the meridian on the equator easting = 833,978.556 m.
        let cases = [
            (Srid::WebMercator, 11.0, 46.0, 1224514.398, 5780349.220),
            (Srid::Utm32N, 9.0, 0.0, 500000.0, 0.0),
            (Srid::Utm32N, 9.0, 45.0, 500000.0, 4982950.400),
            (Srid::Utm32N, 12.0, 0.0, 833978.556, 0.0),
            (Srid::Etrs89Utm32N, 9.0, 45.0, 500000.0, 4982950.400),
        ];
        for (srid, lon, lat, x, y) in cases {
            let (px, py) = xy(&transform(&point(lon, lat), Srid::Wgs84, srid).unwrap());
            assert!(
                (px - x).abs() < 0.01 && (py - y).abs() < 0.01,
                "{srid:?}: {px} {py}"
            );
            let (blon, blat) = xy(&transform(&point(px, py), srid, Srid::Wgs84).unwrap());
            assert!(
                (blon - lon).abs() < 1e-9 && (blat - lat).abs() < 1e-9,
                "{srid:?} round trip: {blon} {blat}"
            );
        }
    }

    #[test]
    fn parses_codes_and_names() {
        assert_eq!(Srid::parse("EPSG:32632"), Some(Srid::Utm32N));
        assert_eq!(Srid::parse("3857"), Some(Srid::WebMercator));
        assert_eq!(Srid::parse("wgs84"), Some(Srid::Wgs84));
        assert_eq!(Srid::parse("25832"), Some(Srid::Etrs89Utm32N));
        assert_eq!(Srid::parse("2056"), None);
        assert!(transform(&point(200.0, 0.0), Srid::Wgs84, Srid::Utm32N).is_err());
    }
}
