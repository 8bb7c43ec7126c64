//! Well-known text: a reader for the seven OGC types (`POINT`, `LINESTRING`, `POLYGON`,
//! `MULTIPOINT`, `MULTILINESTRING`, `MULTIPOLYGON`, `GEOMETRYCOLLECTION`, with optional
//! `Z`, `M`, `ZM`) and a writer. Errors name the 1-based character position, so a
//! client can see where a long polygon went wrong. Third and fourth ordinates are read
//! and dropped: filters work in two dimensions.

use geo::{
    Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint, MultiPolygon,
    Point, Polygon,
};
use std::fmt::Write as _;

/// Nesting limit for `GEOMETRYCOLLECTION`, so a hostile value cannot exhaust the stack.
const MAX_DEPTH: usize = 16;

pub const WKT_TYPES: &str =
    "POINT, LINESTRING, POLYGON, MULTIPOINT, MULTILINESTRING, MULTIPOLYGON, GEOMETRYCOLLECTION";

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} at position {position}")]
pub struct WktError {
    /// 1-based character position in the text given to [`parse_wkt`].
    pub position: usize,
    pub message: String,
}

/// True when `text` starts with a WKT type keyword (so it should be read as WKT and
/// its errors reported, rather than taken for a shape name).
pub fn looks_like_wkt(text: &str) -> bool {
    let word: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let upper = word.to_ascii_uppercase();
    WKT_TYPES.split(", ").any(|t| t == upper)
}

pub fn parse_wkt(text: &str) -> Result<Geometry<f64>, WktError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
    };
    let g = p.geometry(0)?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.error("unexpected text after the geometry"));
    }
    Ok(g)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn error(&self, message: impl Into<String>) -> WktError {
        WktError {
            position: self.pos + 1,
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    fn expect(&mut self, c: char) -> Result<(), WktError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected '{c}'")))
        }
    }

    fn word(&mut self) -> String {
        self.skip_ws();
        let start = self.pos;
        while self
            .chars
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphabetic())
        {
            self.pos += 1;
        }
        self.chars[start..self.pos]
            .iter()
            .collect::<String>()
            .to_ascii_uppercase()
    }

    fn geometry(&mut self, depth: usize) -> Result<Geometry<f64>, WktError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!(
                "geometry collections nest deeper than {MAX_DEPTH} levels"
            )));
        }
        self.skip_ws();
        let start = self.pos;
        let kind = self.word();
        if kind.is_empty() {
            return Err(self.error(format!("expected a geometry type ({WKT_TYPES})")));
        }
        // Optional dimension marker: Z, M or ZM.
        let save = self.pos;
        let dims = match self.word().as_str() {
            "Z" | "M" => Some(3),
            "ZM" => Some(4),
            "EMPTY" => {
                return Err(WktError {
                    position: start + 1,
                    message: "an EMPTY geometry selects nothing; give coordinates".into(),
                })
            }
            "" => None,
            other => {
                self.pos = save;
                return Err(self.error(format!("unexpected word '{other}'; expected '('")));
            }
        };
        let g = match kind.as_str() {
            "POINT" => {
                self.expect('(')?;
                let c = self.coord(dims)?;
                self.expect(')')?;
                Geometry::Point(Point(c))
            }
            "LINESTRING" => Geometry::LineString(self.line(dims, 2)?),
            "POLYGON" => Geometry::Polygon(self.polygon(dims)?),
            "MULTIPOINT" => {
                self.expect('(')?;
                let mut points = Vec::new();
                loop {
                    // Both `MULTIPOINT (1 2, 3 4)` and `MULTIPOINT ((1 2), (3 4))` are valid.
                    if self.peek() == Some('(') {
                        self.pos += 1;
                        points.push(Point(self.coord(dims)?));
                        self.expect(')')?;
                    } else {
                        points.push(Point(self.coord(dims)?));
                    }
                    if !self.comma()? {
                        break;
                    }
                }
                Geometry::MultiPoint(MultiPoint(points))
            }
            "MULTILINESTRING" => {
                Geometry::MultiLineString(MultiLineString(self.list(|p| p.line(dims, 2))?))
            }
            "MULTIPOLYGON" => Geometry::MultiPolygon(MultiPolygon(self.list(|p| p.polygon(dims))?)),
            "GEOMETRYCOLLECTION" => Geometry::GeometryCollection(GeometryCollection(
                self.list(|p| p.geometry(depth + 1))?,
            )),
            other => {
                return Err(WktError {
                    position: start + 1,
                    message: format!(
                        "'{other}' is not a WKT geometry type; use one of {WKT_TYPES}"
                    ),
                })
            }
        };
        Ok(g)
    }

    /// After an element of a list: true for `,`, false for the closing `)`.
    fn comma(&mut self) -> Result<bool, WktError> {
        match self.peek() {
            Some(',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(')') => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.error("expected ',' or ')'")),
        }
    }

    fn list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, WktError>,
    ) -> Result<Vec<T>, WktError> {
        self.expect('(')?;
        let mut out = Vec::new();
        loop {
            out.push(item(self)?);
            if !self.comma()? {
                return Ok(out);
            }
        }
    }

    fn line(&mut self, dims: Option<usize>, min: usize) -> Result<LineString<f64>, WktError> {
        self.skip_ws();
        let start = self.pos;
        let coords = self.list(|p| p.coord(dims))?;
        if coords.len() < min {
            return Err(WktError {
                position: start + 1,
                message: format!("needs at least {min} positions, found {}", coords.len()),
            });
        }
        Ok(LineString(coords))
    }

    fn polygon(&mut self, dims: Option<usize>) -> Result<Polygon<f64>, WktError> {
        let mut rings = Vec::new();
        self.expect('(')?;
        loop {
            self.skip_ws();
            let start = self.pos;
            let ring = self.line(dims, 4)?;
            if ring.0.first() != ring.0.last() {
                return Err(WktError {
                    position: start + 1,
                    message: "a polygon ring must end where it starts".into(),
                });
            }
            rings.push(ring);
            if !self.comma()? {
                break;
            }
        }
        let exterior = rings.remove(0);
        Ok(Polygon::new(exterior, rings))
    }

    fn coord(&mut self, dims: Option<usize>) -> Result<Coord<f64>, WktError> {
        let x = self.number()?;
        let y = self.number()?;
        let mut n = 2;
        while matches!(self.peek(), Some(c) if c == '-' || c == '+' || c == '.' || c.is_ascii_digit())
        {
            self.number()?;
            n += 1;
            if n > 4 {
                return Err(self.error("a position has at most four ordinates"));
            }
        }
        if let Some(d) = dims {
            if n != d {
                return Err(self.error(format!("expected {d} ordinates per position, found {n}")));
            }
        }
        Ok(Coord { x, y })
    }

    fn number(&mut self) -> Result<f64, WktError> {
        self.skip_ws();
        let start = self.pos;
        while self
            .chars
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => {
                self.pos = start;
                Err(self.error(if text.is_empty() {
                    "expected a number".to_string()
                } else {
                    format!("'{text}' is not a number")
                }))
            }
        }
    }
}

/// Writes `g` as WKT (two dimensions, shortest round-trip numbers).
pub fn to_wkt(g: &Geometry<f64>) -> String {
    let mut out = String::new();
    write_geometry(&mut out, g);
    out
}

fn coords(out: &mut String, line: &LineString<f64>) {
    out.push('(');
    for (i, c) in line.0.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{} {}", c.x, c.y);
    }
    out.push(')');
}

fn polygon(out: &mut String, p: &Polygon<f64>) {
    out.push('(');
    coords(out, p.exterior());
    for ring in p.interiors() {
        out.push(',');
        coords(out, ring);
    }
    out.push(')');
}

fn write_geometry(out: &mut String, g: &Geometry<f64>) {
    match g {
        Geometry::Point(p) => {
            let _ = write!(out, "POINT({} {})", p.x(), p.y());
        }
        Geometry::LineString(l) => {
            out.push_str("LINESTRING");
            coords(out, l);
        }
        Geometry::Polygon(p) => {
            out.push_str("POLYGON");
            polygon(out, p);
        }
        Geometry::MultiPoint(m) => {
            out.push_str("MULTIPOINT(");
            for (i, p) in m.0.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "({} {})", p.x(), p.y());
            }
            out.push(')');
        }
        Geometry::MultiLineString(m) => {
            out.push_str("MULTILINESTRING(");
            for (i, l) in m.0.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                coords(out, l);
            }
            out.push(')');
        }
        Geometry::MultiPolygon(m) => {
            out.push_str("MULTIPOLYGON(");
            for (i, p) in m.0.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                polygon(out, p);
            }
            out.push(')');
        }
        Geometry::GeometryCollection(c) => {
            out.push_str("GEOMETRYCOLLECTION(");
            for (i, g) in c.0.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_geometry(out, g);
            }
            out.push(')');
        }
        // The reader never produces these; write their polygon equivalent.
        Geometry::Line(l) => {
            write_geometry(out, &Geometry::LineString(LineString(vec![l.start, l.end])))
        }
        Geometry::Rect(r) => write_geometry(out, &Geometry::Polygon(r.to_polygon())),
        Geometry::Triangle(t) => write_geometry(out, &Geometry::Polygon(t.to_polygon())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_ogc_type_and_writes_it_back() {
        let cases = [
            ("POINT (11.3 46.5)", "POINT(11.3 46.5)"),
            ("point z (1 2 3)", "POINT(1 2)"),
            ("POINT ZM (1 2 3 4)", "POINT(1 2)"),
            ("LINESTRING(1 2, 3 4)", "LINESTRING(1 2,3 4)"),
            (
                "POLYGON((0 0,1 0,1 1,0 0),(0.1 0.1,0.2 0.1,0.2 0.2,0.1 0.1))",
                "POLYGON((0 0,1 0,1 1,0 0),(0.1 0.1,0.2 0.1,0.2 0.2,0.1 0.1))",
            ),
            ("MULTIPOINT (1 2, 3 4)", "MULTIPOINT((1 2),(3 4))"),
            ("MULTIPOINT ((1 2), (3 4))", "MULTIPOINT((1 2),(3 4))"),
            (
                "MULTILINESTRING ((1 2, 3 4), (5 6, 7 8))",
                "MULTILINESTRING((1 2,3 4),(5 6,7 8))",
            ),
            (
                "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))",
                "MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))",
            ),
            (
                "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (1 2, 3 4))",
                "GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(1 2,3 4))",
            ),
            ("  POINT(-1.5e1 +2)  ", "POINT(-15 2)"),
        ];
        for (input, expected) in cases {
            let g = parse_wkt(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(to_wkt(&g), expected, "{input}");
            assert_eq!(parse_wkt(&to_wkt(&g)).unwrap(), g);
        }
    }

    #[test]
    fn errors_carry_the_position() {
        let cases = [
            ("POLYGON((0 0, 1 0, 1 1, 0 0)", 29, "expected ',' or ')'"),
            ("POLYGON((0 0, 1 x, 1 1, 0 0))", 17, "expected a number"),
            (
                "POLYGON((0 0, 1 0, 1 1, 0 1))",
                9,
                "must end where it starts",
            ),
            ("POLYGON((0 0, 1 0, 0 0))", 9, "at least 4 positions"),
            ("CIRCLE(1 2)", 1, "not a WKT geometry type"),
            ("POINT(1 2) extra", 12, "unexpected text"),
            ("POINT Z (1 2)", 13, "expected 3 ordinates"),
            ("POINT EMPTY", 1, "EMPTY"),
            ("LINESTRING(1 2)", 11, "at least 2 positions"),
            ("POINT(1 2 3 4 5)", 16, "at most four"),
            ("POINT(1..2 3)", 7, "'1..2' is not a number"),
        ];
        for (input, position, phrase) in cases {
            let e = parse_wkt(input).expect_err(input);
            assert_eq!(e.position, position, "{input}: {e}");
            assert!(e.message.contains(phrase), "{input}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!(
            "{}POINT(1 2){}",
            "GEOMETRYCOLLECTION(".repeat(40),
            ")".repeat(40)
        );
        assert!(parse_wkt(&text).unwrap_err().message.contains("nest"));
    }

    #[test]
    fn recognises_wkt_by_its_keyword() {
        assert!(looks_like_wkt("polygon((1 2))"));
        assert!(looks_like_wkt("MULTIPOLYGON"));
        assert!(!looks_like_wkt("it.municipality.Bolzano/Bozen"));
        assert!(!looks_like_wkt("41_istat"));
    }
}
