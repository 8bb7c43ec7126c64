//! CQL2 text (OGC API – Features Part 3, `filter-lang=cql2-text`), the subset Hub
//! implements, parsed into the `rawfilter` AST so one compiler serves both languages:
//!
//! | CQL2 | becomes |
//! |---|---|
//! | `a = v`, `<>`, `<`, `<=`, `>`, `>=` | typed comparison (`eq` … `le`) |
//! | `a [NOT] LIKE 'p%t_n'` | `likein` with the anchored regular expression (`%` any text, `_` one character, `\` escapes) |
//! | `a [NOT] IN (v, …)` | `in` / `nin` |
//! | `a [NOT] BETWEEN x AND y` | `ge` and `le` |
//! | `a IS [NOT] NULL` | `isnull` / `isnotnull` |
//! | `AND`, `OR`, `NOT`, parentheses | boolean groups, [`RawFilter::Not`] |
//! | `S_INTERSECTS(geometry, BBOX(…) \| WKT)` | an area condition ([`Cql2Filter::areas`]) |
//!
//! Values: `'text'` (`''` is a quote), numbers, `TRUE`/`FALSE`, `TIMESTAMP('…')`,
//! `DATE('…')`. Property names are `rawfilter` paths (`Detail.de.Title`), optionally in
//! double quotes. Keywords are case-insensitive.
//!
//! Differences from CQL2, on purpose: `LIKE` is case-insensitive (as `rawfilter`'s
//! `like`); `S_INTERSECTS` may appear only as a top-level `AND` member, since the area
//! test runs on the indexed position, outside the expression; comparisons are typed as in
//! `rawfilter` (a number compared with text is a 400, not "no match").

use super::cursor::FilterCursor;
use hub_geo::wkt::parse_wkt;
use hub_geo::Geometry;

use super::rawfilter::{
    normalize_date, parse_field_path, validate_pattern, CompareOp, JsonPath, Literal, RawFilter,
    RawFilterError,
};

/// Longest filter accepted, in characters (WKT polygons make it longer than `rawfilter`).
pub const MAX_CQL2_CHARS: usize = 20_000;
/// Deepest nesting of groups and `NOT`.
pub const MAX_CQL2_DEPTH: usize = 32;
/// Most values in one `IN` list.
pub const MAX_IN_VALUES: usize = 1_000;
/// Most `S_INTERSECTS` conditions in one filter.
pub const MAX_AREAS: usize = 8;

/// A parsed CQL2 filter: the attribute part (if any) and the areas every match must
/// intersect (geometry as written, x = longitude in the filter's CRS).
#[derive(Debug, Clone, PartialEq)]
pub struct Cql2Filter {
    pub filter: Option<RawFilter>,
    pub areas: Vec<Geometry<f64>>,
}

/// Parses a CQL2 text filter; errors carry a 1-based character position.
pub fn parse_cql2(text: &str) -> Result<Cql2Filter, RawFilterError> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > MAX_CQL2_CHARS {
        return Err(RawFilterError {
            position: MAX_CQL2_CHARS + 1,
            message: format!("the filter is longer than {MAX_CQL2_CHARS} characters"),
        });
    }
    let mut p = Parser { chars, i: 0 };
    p.skip_spaces();
    if p.peek().is_none() {
        return Err(p.error_at(0, "expected a filter, found nothing"));
    }
    let expr = p.or_expr(0)?;
    p.skip_spaces();
    if p.peek().is_some() {
        return Err(p.expected("AND, OR or the end of the filter"));
    }
    split_areas(expr)
}

/// A parsed expression before the areas are taken out.
enum Expr {
    Filter(RawFilter),
    Intersects { geometry: Geometry<f64>, at: usize },
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
}

fn split_areas(expr: Expr) -> Result<Cql2Filter, RawFilterError> {
    let members = match expr {
        Expr::And(members) => members,
        other => vec![other],
    };
    let mut areas = Vec::new();
    let mut filters = Vec::new();
    for member in members {
        match member {
            Expr::Intersects { geometry, at } => {
                if areas.len() == MAX_AREAS {
                    return Err(error(
                        at,
                        format!("a filter has at most {MAX_AREAS} S_INTERSECTS conditions"),
                    ));
                }
                areas.push(geometry)
            }
            other => filters.push(attribute_filter(other)?),
        }
    }
    let filter = match filters.len() {
        0 => None,
        1 => filters.pop(),
        _ => Some(RawFilter::And(filters)),
    };
    Ok(Cql2Filter { filter, areas })
}

fn attribute_filter(expr: Expr) -> Result<RawFilter, RawFilterError> {
    Ok(match expr {
        Expr::Filter(f) => f,
        Expr::Intersects { at, .. } => {
            return Err(error(
                at,
                "S_INTERSECTS may only be combined with AND at the top level of the filter",
            ))
        }
        Expr::And(m) => RawFilter::And(
            m.into_iter()
                .map(attribute_filter)
                .collect::<Result<_, _>>()?,
        ),
        Expr::Or(m) => RawFilter::Or(
            m.into_iter()
                .map(attribute_filter)
                .collect::<Result<_, _>>()?,
        ),
        Expr::Not(inner) => RawFilter::Not(Box::new(attribute_filter(*inner)?)),
    })
}

fn error(index: usize, message: impl Into<String>) -> RawFilterError {
    RawFilterError {
        position: index + 1,
        message: message.into(),
    }
}

struct Parser {
    chars: Vec<char>,
    i: usize,
}

impl FilterCursor for Parser {
    fn chars(&self) -> &[char] {
        &self.chars
    }

    fn at(&self) -> usize {
        self.i
    }

    fn set_at(&mut self, index: usize) {
        self.i = index;
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.i += 1;
        }
    }
}

const COMPARISONS: &str = "=, <>, <, <=, >, >=, LIKE, IN, BETWEEN or IS";

impl Parser {
    /// The next word (letters, digits, `_`) upper-cased, without consuming it.
    fn peek_word(&self) -> String {
        self.chars[self.i..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
            .collect::<String>()
            .to_ascii_uppercase()
    }

    /// Consumes `word` (a keyword) if it comes next as a whole word.
    fn keyword(&mut self, word: &str) -> bool {
        self.skip_spaces();
        if self.peek_word() == word {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    fn depth_check(&self, depth: usize) -> Result<(), RawFilterError> {
        if depth > MAX_CQL2_DEPTH {
            Err(self.error_at(
                self.i,
                format!("filters nest at most {MAX_CQL2_DEPTH} levels deep"),
            ))
        } else {
            Ok(())
        }
    }

    fn or_expr(&mut self, depth: usize) -> Result<Expr, RawFilterError> {
        self.depth_check(depth)?;
        let mut parts = vec![self.and_expr(depth)?];
        while self.keyword("OR") {
            parts.push(self.and_expr(depth)?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            Expr::Or(parts)
        })
    }

    fn and_expr(&mut self, depth: usize) -> Result<Expr, RawFilterError> {
        let mut parts = vec![self.not_expr(depth)?];
        while self.keyword("AND") {
            parts.push(self.not_expr(depth)?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            Expr::And(parts)
        })
    }

    fn not_expr(&mut self, depth: usize) -> Result<Expr, RawFilterError> {
        if self.keyword("NOT") {
            self.depth_check(depth + 1)?;
            return Ok(Expr::Not(Box::new(self.not_expr(depth + 1)?)));
        }
        self.skip_spaces();
        if self.eat('(') {
            let inner = self.or_expr(depth + 1)?;
            self.expect(')', "')' closing the group")?;
            return Ok(inner);
        }
        if self.peek_word() == "S_INTERSECTS" {
            return self.intersects();
        }
        self.predicate()
    }

    /// `S_INTERSECTS(property, BBOX(…) | WKT)`.
    fn intersects(&mut self) -> Result<Expr, RawFilterError> {
        let at = self.i;
        self.i += "S_INTERSECTS".len();
        self.expect('(', "'(' after S_INTERSECTS")?;
        self.property()?;
        self.expect(',', "',' and a geometry after the property of S_INTERSECTS")?;
        self.skip_spaces();
        let geometry = if self.peek_word() == "BBOX" {
            self.bbox()?
        } else {
            self.wkt()?
        };
        self.expect(')', "')' closing S_INTERSECTS")?;
        Ok(Expr::Intersects { geometry, at })
    }

    /// `BBOX(minx, miny, maxx, maxy)` as a rectangle polygon.
    fn bbox(&mut self) -> Result<Geometry<f64>, RawFilterError> {
        self.i += "BBOX".len();
        self.expect('(', "'(' after BBOX")?;
        let start = self.i;
        let mut numbers = Vec::new();
        loop {
            self.skip_spaces();
            let (at, value) = self.literal()?;
            match value {
                Literal::Number(n) => numbers.push(n),
                other => {
                    return Err(
                        self.error_at(at, format!("BBOX takes numbers, not {}", other.kind()))
                    )
                }
            }
            self.skip_spaces();
            if self.eat(')') {
                break;
            }
            if !self.eat(',') {
                return Err(self.expected("',' or ')' in BBOX"));
            }
        }
        let [x0, y0, x1, y1] = numbers[..] else {
            return Err(self.error_at(start, "BBOX takes four numbers: minx, miny, maxx, maxy"));
        };
        if x0 > x1 || y0 > y1 {
            return Err(self.error_at(start, "BBOX takes minx, miny, maxx, maxy with min ≤ max"));
        }
        Ok(Geometry::Polygon(
            hub_geo::Rect::new((x0, y0), (x1, y1)).to_polygon(),
        ))
    }

    /// A WKT geometry: the keyword and its balanced parentheses.
    fn wkt(&mut self) -> Result<Geometry<f64>, RawFilterError> {
        let start = self.i;
        let mut depth = 0usize;
        let mut opened = false;
        while let Some(c) = self.peek() {
            match c {
                '(' => {
                    depth += 1;
                    opened = true;
                }
                ')' if depth == 0 => break,
                ')' => depth -= 1,
                _ => {}
            }
            self.i += 1;
            if opened && depth == 0 {
                break;
            }
        }
        let text: String = self.chars[start..self.i].iter().collect();
        parse_wkt(&text).map_err(|e| self.error_at(start + e.position - 1, e.message))
    }

    /// A property name: a `rawfilter` path, bare or in double quotes.
    fn property(&mut self) -> Result<JsonPath, RawFilterError> {
        self.skip_spaces();
        let start = self.i;
        let quoted = self.eat('"');
        let name_start = self.i;
        while self.peek().is_some_and(|c| {
            if quoted {
                c != '"'
            } else {
                c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '@' | '.' | '[' | ']' | '*')
            }
        }) {
            self.i += 1;
        }
        let name: String = self.chars[name_start..self.i].iter().collect();
        if quoted && !self.eat('"') {
            return Err(self.error_at(start, "unterminated quoted property name"));
        }
        if name.is_empty() {
            return Err(self.expected("a property name"));
        }
        let mut path = parse_field_path(&name)
            .map_err(|e| self.error_at(name_start + e.position - 1, e.message))?;
        path.position = name_start + 1;
        Ok(path)
    }

    /// `property op value` and the other predicates on one property.
    fn predicate(&mut self) -> Result<Expr, RawFilterError> {
        let path = self.property()?;
        self.skip_spaces();
        let op_at = self.i;
        let op = if self.eat('=') {
            Some(CompareOp::Eq)
        } else if self.eat('<') {
            Some(if self.eat('>') {
                CompareOp::Ne
            } else if self.eat('=') {
                CompareOp::Le
            } else {
                CompareOp::Lt
            })
        } else if self.eat('>') {
            Some(if self.eat('=') {
                CompareOp::Ge
            } else {
                CompareOp::Gt
            })
        } else {
            None
        };
        if let Some(op) = op {
            self.skip_spaces();
            let (at, value) = self.literal()?;
            return Ok(Expr::Filter(RawFilter::Compare {
                op,
                path,
                value,
                position: at + 1,
            }));
        }
        if self.keyword("IS") {
            let negated = self.keyword("NOT");
            if !self.keyword("NULL") {
                return Err(self.expected("NULL after IS"));
            }
            return Ok(Expr::Filter(RawFilter::IsNull { path, negated }));
        }
        let negated = self.keyword("NOT");
        let filter = if self.keyword("LIKE") {
            self.skip_spaces();
            let (at, value) = self.literal()?;
            let Literal::Text(pattern) = value else {
                return Err(self.error_at(
                    at,
                    format!("LIKE takes a text pattern, not {}", value.kind()),
                ));
            };
            let regex = like_to_regex(&pattern);
            validate_pattern(&regex).map_err(|m| self.error_at(at, m))?;
            RawFilter::LikeIn {
                path,
                patterns: vec![regex],
            }
        } else if self.keyword("IN") {
            self.expect('(', "'(' and a list of values after IN")?;
            let mut values = Vec::new();
            loop {
                self.skip_spaces();
                let (at, value) = self.literal()?;
                if values.len() == MAX_IN_VALUES {
                    return Err(
                        self.error_at(at, format!("an IN list has at most {MAX_IN_VALUES} values"))
                    );
                }
                values.push(value);
                self.skip_spaces();
                if self.eat(')') {
                    break;
                }
                if !self.eat(',') {
                    return Err(self.expected("',' or ')' in the IN list"));
                }
            }
            return Ok(Expr::Filter(RawFilter::In {
                path,
                values,
                negated,
            }));
        } else if self.keyword("BETWEEN") {
            self.skip_spaces();
            let (low_at, low) = self.literal()?;
            if !self.keyword("AND") {
                return Err(self.expected("AND between the bounds of BETWEEN"));
            }
            self.skip_spaces();
            let (high_at, high) = self.literal()?;
            RawFilter::And(vec![
                RawFilter::Compare {
                    op: CompareOp::Ge,
                    path: path.clone(),
                    value: low,
                    position: low_at + 1,
                },
                RawFilter::Compare {
                    op: CompareOp::Le,
                    path,
                    value: high,
                    position: high_at + 1,
                },
            ])
        } else {
            return Err(self.error_at(op_at, format!("expected {COMPARISONS} after the property")));
        };
        Ok(Expr::Filter(if negated {
            RawFilter::Not(Box::new(filter))
        } else {
            filter
        }))
    }

    /// A literal and its 0-based start index.
    fn literal(&mut self) -> Result<(usize, Literal), RawFilterError> {
        let start = self.i;
        match self.peek() {
            Some('\'') => Ok((start, Literal::Text(self.quoted()?))),
            Some(c) if c.is_ascii_digit() || matches!(c, '-' | '+' | '.') => {
                self.i += 1;
                while self.peek().is_some_and(|c| {
                    c.is_ascii_digit()
                        || matches!(c, '.' | 'e' | 'E')
                        || (matches!(c, '-' | '+') && matches!(self.chars[self.i - 1], 'e' | 'E'))
                }) {
                    self.i += 1;
                }
                let text: String = self.chars[start..self.i].iter().collect();
                match text.parse::<f64>() {
                    Ok(n) if n.is_finite() => Ok((start, Literal::Number(n))),
                    _ => Err(self.error_at(start, format!("'{text}' is not a number"))),
                }
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let word = self.peek_word();
                self.i += word.len();
                match word.as_str() {
                    "TRUE" => Ok((start, Literal::Bool(true))),
                    "FALSE" => Ok((start, Literal::Bool(false))),
                    "TIMESTAMP" | "DATE" => {
                        self.expect('(', &format!("'(' after {word}"))?;
                        self.skip_spaces();
                        let at = self.i;
                        if self.peek() != Some('\'') {
                            return Err(self.expected("a quoted date"));
                        }
                        let text = self.quoted()?;
                        let date = normalize_date(&text).ok_or_else(|| {
                            self.error_at(at, format!("'{text}' is not a date; use YYYY-MM-DD or an RFC 3339 timestamp"))
                        })?;
                        self.expect(')', &format!("')' closing {word}"))?;
                        Ok((start, Literal::Date(date)))
                    }
                    _ => Err(self.error_at(
                        start,
                        format!("expected a value: 'text', a number, TRUE, FALSE, TIMESTAMP('…') or DATE('…'); found {word}"),
                    )),
                }
            }
            _ => Err(self
                .expected("a value: 'text', a number, TRUE, FALSE, TIMESTAMP('…') or DATE('…')")),
        }
    }

    /// `'…'` with `''` standing for one quote.
    fn quoted(&mut self) -> Result<String, RawFilterError> {
        let start = self.i;
        self.i += 1;
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(self.error_at(start, "unterminated text value")),
                Some('\'') if self.chars.get(self.i + 1) == Some(&'\'') => {
                    text.push('\'');
                    self.i += 2;
                }
                Some('\'') => {
                    self.i += 1;
                    return Ok(text);
                }
                Some(c) => {
                    text.push(c);
                    self.i += 1;
                }
            }
        }
    }
}

/// A LIKE pattern as an anchored regular expression: `%` any text, `_` one character,
/// `\` takes the next character literally; everything else is literal.
pub fn like_to_regex(pattern: &str) -> String {
    let mut out = String::from("^");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => out.push_str(".*"),
            '_' => out.push('.'),
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push_str(&regex::escape(&next.to_string()));
                }
            }
            other => out.push_str(&regex::escape(&other.to_string())),
        }
    }
    out.push('$');
    out
}

#[cfg(test)]
#[path = "cql2_tests.rs"]
mod tests;
