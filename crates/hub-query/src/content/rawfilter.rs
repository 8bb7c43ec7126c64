//! The filter expression language of `rawfilter` (and `GET /v1/Filter?expression=`) and
//! the sort list of `rawsort`: the reference grammar (`eq, ne, gt, ge, lt, le, like,
//! likein, in, nin, isnull, isnotnull, and, or`, `dt'…'` dates, `[*]` array paths,
//! numeric segments) parsed into an AST whose errors carry a 1-based character position.
//! Compilation to SQL lives in [`super::rawfilter_sql`].
//!
//! Differences from the reference, on purpose: spaces are allowed around every token
//! (the reference only after commas); keywords are case-insensitive; `ident[n]` / `[n]`
//! index segments are accepted besides numeric segments; a path may not start with `[*]`.

use super::cursor::FilterCursor;

/// One segment of a field path.
#[derive(Debug, Clone, PartialEq)]
pub enum PathSegment {
    /// An object key (`Detail`), restricted to `[A-Za-z0-9_\-@]`.
    Key(String),
    /// An array position, from a numeric segment (`GpsInfo.0`) or `[0]`.
    Index(u32),
    /// Every element of an array (`[*]` or `[]`).
    AnyElement,
}

/// A field path as written, with its 1-based start position.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    pub segments: Vec<PathSegment>,
    pub text: String,
    pub position: usize,
}

impl JsonPath {
    pub fn has_wildcard(&self) -> bool {
        self.segments.contains(&PathSegment::AnyElement)
    }
}

/// A literal value of the language.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Bool(bool),
    Number(f64),
    Text(String),
    /// `dt'…'`, normalised to `YYYY-MM-DD HH:MM:SS` (UTC when an offset was given).
    Date(String),
    /// `[]` or `[*]`: the empty array.
    EmptyArray,
}

impl Literal {
    /// What a client would call the literal's type, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Literal::Bool(_) => "a boolean",
            Literal::Number(_) => "a number",
            Literal::Text(_) => "a text",
            Literal::Date(_) => "a date",
            Literal::EmptyArray => "an array",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// A parsed filter expression.
#[derive(Debug, Clone, PartialEq)]
pub enum RawFilter {
    And(Vec<RawFilter>),
    Or(Vec<RawFilter>),
    /// The negation of a condition (no `rawfilter` spelling; CQL2's `NOT` builds it). A
    /// condition that is unknown for a document (its field missing) counts as false
    /// before negation, so `NOT a = 1` also matches documents without `a`.
    Not(Box<RawFilter>),
    /// A typed comparison; `position` is where the value starts (type errors point there).
    Compare {
        op: CompareOp,
        path: JsonPath,
        value: Literal,
        position: usize,
    },
    /// Case-insensitive substring of a text value.
    Like {
        path: JsonPath,
        text: String,
    },
    /// Any of these case-insensitive regular expressions matches a text value.
    LikeIn {
        path: JsonPath,
        patterns: Vec<String>,
    },
    /// The value (or, for an array, any element) equals one of `values`; `negated` = `nin`.
    In {
        path: JsonPath,
        values: Vec<Literal>,
        negated: bool,
    },
    /// Missing or JSON null; `negated` = `isnotnull`.
    IsNull {
        path: JsonPath,
        negated: bool,
    },
}

/// One key of a `rawsort` list.
#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub path: JsonPath,
    pub descending: bool,
}

/// A syntax error: what was expected, at a 1-based character position.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} at position {position}")]
pub struct RawFilterError {
    pub position: usize,
    pub message: String,
}

/// Longest expression accepted, in characters (bounds work and SQL size).
pub const MAX_EXPRESSION_CHARS: usize = 4000;
const MAX_DEPTH: usize = 32;
/// Longest `likein` pattern; patterns are compiled with a size limit too.
pub const MAX_PATTERN_CHARS: usize = 200;

const STATEMENTS: &str =
    "and, or, eq, ne, gt, ge, lt, le, like, likein, in, nin, isnull or isnotnull";

/// Parses a `rawfilter` expression.
pub fn parse_rawfilter(text: &str) -> Result<RawFilter, RawFilterError> {
    let mut p = Parser::new(text)?;
    p.skip_spaces();
    let filter = p.statement(0)?;
    p.skip_spaces();
    p.expect_end("the end of the expression")?;
    Ok(filter)
}

/// Most keys in one `rawsort` list.
pub const MAX_SORT_KEYS: usize = 32;

/// Parses a `rawsort` list: `[-]field(,[-]field)*`.
pub fn parse_rawsort(text: &str) -> Result<Vec<SortKey>, RawFilterError> {
    let mut p = Parser::new(text)?;
    let mut keys = Vec::new();
    loop {
        p.skip_spaces();
        let descending = p.eat('-');
        let path = p.path()?;
        if path.has_wildcard() {
            return Err(p.error_at(
                path.position - 1,
                "a sort field cannot contain [*]; name one value, such as GpsInfo.0.Altitude",
            ));
        }
        if keys.len() == MAX_SORT_KEYS {
            return Err(p.error_at(
                path.position - 1,
                format!("a sort list has at most {MAX_SORT_KEYS} keys"),
            ));
        }
        keys.push(SortKey { path, descending });
        p.skip_spaces();
        if p.eat(',') {
            continue;
        }
        p.expect_end("',' or the end of the sort list")?;
        return Ok(keys);
    }
}

/// Parses one field path (`Detail.de.Title`, `GpsInfo[0].Altitude`) with the grammar of
/// `rawfilter` paths; the other filter languages (CQL2) name fields through it.
pub fn parse_field_path(text: &str) -> Result<JsonPath, RawFilterError> {
    let mut p = Parser::new(text)?;
    let path = p.path()?;
    p.expect_end("the end of the field name")?;
    Ok(path)
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
        while self.peek().is_some_and(|c| c == ' ') {
            self.i += 1;
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '@')
}

impl Parser {
    fn new(text: &str) -> Result<Self, RawFilterError> {
        let chars: Vec<char> = text.chars().collect();
        if chars.len() > MAX_EXPRESSION_CHARS {
            return Err(RawFilterError {
                position: MAX_EXPRESSION_CHARS + 1,
                message: format!("the expression is longer than {MAX_EXPRESSION_CHARS} characters"),
            });
        }
        if chars.iter().all(|c| c.is_whitespace()) {
            return Err(RawFilterError {
                position: 1,
                message: "expected an expression, found nothing".into(),
            });
        }
        Ok(Parser { chars, i: 0 })
    }

    fn expect_end(&self, what: &str) -> Result<(), RawFilterError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.expected(what)),
        }
    }

    fn word(&mut self) -> String {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.i += 1;
        }
        self.chars[start..self.i]
            .iter()
            .collect::<String>()
            .to_ascii_lowercase()
    }

    fn statement(&mut self, depth: usize) -> Result<RawFilter, RawFilterError> {
        if depth > MAX_DEPTH {
            return Err(self.error_at(
                self.i,
                format!("expressions nest at most {MAX_DEPTH} levels deep"),
            ));
        }
        let start = self.i;
        let name = self.word();
        let known = matches!(
            name.as_str(),
            "and"
                | "or"
                | "eq"
                | "ne"
                | "gt"
                | "ge"
                | "lt"
                | "le"
                | "like"
                | "likein"
                | "in"
                | "nin"
                | "isnull"
                | "isnotnull"
        );
        if !known {
            return Err(self.error_at(start, format!("expected one of {STATEMENTS}")));
        }
        self.expect('(', &format!("'(' after {name}"))?;
        self.skip_spaces();
        let statement = match name.as_str() {
            "and" | "or" => {
                let mut parts = vec![self.statement(depth + 1)?];
                while self.list_continues()? {
                    parts.push(self.statement(depth + 1)?);
                }
                if name == "and" {
                    RawFilter::And(parts)
                } else {
                    RawFilter::Or(parts)
                }
            }
            "isnull" | "isnotnull" => {
                let path = self.path()?;
                self.expect(')', "')'")?;
                RawFilter::IsNull {
                    path,
                    negated: name == "isnotnull",
                }
            }
            "in" | "nin" | "likein" => {
                let path = self.path()?;
                self.expect(',', &format!("',' and a value after the field of {name}"))?;
                let mut values = vec![self.value()?];
                while self.list_continues()? {
                    values.push(self.value()?);
                }
                if name == "likein" {
                    let patterns = values
                        .into_iter()
                        .map(|(pos, v)| match v {
                            Literal::Text(t) => validate_pattern(&t)
                                .map(|_| t)
                                .map_err(|m| self.error_at(pos, m)),
                            other => Err(self.error_at(
                                pos,
                                format!(
                                    "likein takes text values (regular expressions), not {}",
                                    other.kind()
                                ),
                            )),
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    RawFilter::LikeIn { path, patterns }
                } else {
                    RawFilter::In {
                        path,
                        values: values.into_iter().map(|(_, v)| v).collect(),
                        negated: name == "nin",
                    }
                }
            }
            _ => {
                let path = self.path()?;
                self.expect(',', &format!("',' and a value after the field of {name}"))?;
                let (position, value) = self.value()?;
                self.expect(')', "')'")?;
                if name == "like" {
                    match value {
                        Literal::Text(text) => RawFilter::Like { path, text },
                        other => {
                            return Err(self.error_at(
                                position,
                                format!("like takes a text value, not {}", other.kind()),
                            ))
                        }
                    }
                } else {
                    let op = match name.as_str() {
                        "eq" => CompareOp::Eq,
                        "ne" => CompareOp::Ne,
                        "gt" => CompareOp::Gt,
                        "ge" => CompareOp::Ge,
                        "lt" => CompareOp::Lt,
                        _ => CompareOp::Le,
                    };
                    if value == Literal::EmptyArray && !matches!(op, CompareOp::Eq | CompareOp::Ne)
                    {
                        return Err(self.error_at(position, "only eq and ne compare with []"));
                    }
                    RawFilter::Compare {
                        op,
                        path,
                        value,
                        position: position + 1,
                    }
                }
            }
        };
        Ok(statement)
    }

    /// After an item of a parenthesised list: true on `,`, false on the closing `)`.
    fn list_continues(&mut self) -> Result<bool, RawFilterError> {
        self.skip_spaces();
        if self.eat(',') {
            self.skip_spaces();
            Ok(true)
        } else if self.eat(')') {
            Ok(false)
        } else {
            Err(self.expected("',' or ')'"))
        }
    }

    fn path(&mut self) -> Result<JsonPath, RawFilterError> {
        self.skip_spaces();
        let start = self.i;
        let mut segments = Vec::new();
        loop {
            let seg_start = self.i;
            if self.peek() == Some('[') {
                if segments.is_empty() {
                    return Err(
                        self.error_at(seg_start, "a field path starts with a name, not [*]")
                    );
                }
                segments.push(self.bracket()?);
            } else {
                while self.peek().is_some_and(is_ident) {
                    self.i += 1;
                }
                if self.i == seg_start {
                    return Err(self.expected("a field name (letters, digits, _, - or @)"));
                }
                let ident: String = self.chars[seg_start..self.i].iter().collect();
                match ident.parse::<u32>() {
                    Ok(n) if !segments.is_empty() => segments.push(PathSegment::Index(n)),
                    // Documents are stored in Hub's spelling; an ODH name reads the same field.
                    _ => segments.push(PathSegment::Key(
                        hub_model::naming::hub_key(&ident)
                            .map(str::to_string)
                            .unwrap_or(ident),
                    )),
                }
                while self.peek() == Some('[') {
                    segments.push(self.bracket()?);
                }
            }
            if !self.eat('.') {
                break;
            }
        }
        let text = self.chars[start..self.i].iter().collect();
        Ok(JsonPath {
            segments,
            text,
            position: start + 1,
        })
    }

    /// `[*]`, `[]` or `[n]`.
    fn bracket(&mut self) -> Result<PathSegment, RawFilterError> {
        self.i += 1; // '['
        if self.eat(']') {
            return Ok(PathSegment::AnyElement);
        }
        if self.eat('*') {
            return if self.eat(']') {
                Ok(PathSegment::AnyElement)
            } else {
                Err(self.expected("']' after [*"))
            };
        }
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let digits: String = self.chars[start..self.i].iter().collect();
        match (digits.parse::<u32>(), self.eat(']')) {
            (Ok(n), true) => Ok(PathSegment::Index(n)),
            _ => Err(self.error_at(start, "expected [*], [] or [n] with a position n")),
        }
    }

    /// A literal and its 0-based start index.
    fn value(&mut self) -> Result<(usize, Literal), RawFilterError> {
        self.skip_spaces();
        let start = self.i;
        let expected = "a value: true, false, a number, 'text', dt'date' or []";
        match self.peek() {
            Some('\'') | Some('"') => Ok((start, Literal::Text(self.quoted()?))),
            Some('[') => {
                self.i += 1;
                self.eat('*');
                if self.eat(']') {
                    Ok((start, Literal::EmptyArray))
                } else {
                    Err(self.expected("']' closing the empty array []"))
                }
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
                {
                    self.i += 1;
                }
                let text: String = self.chars[start..self.i].iter().collect();
                match text.parse::<f64>() {
                    Ok(n) if n.is_finite() => Ok((start, Literal::Number(n))),
                    _ => Err(self.error_at(start, format!("'{text}' is not a number"))),
                }
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let word = self.word();
                match word.as_str() {
                    "true" => Ok((start, Literal::Bool(true))),
                    "false" => Ok((start, Literal::Bool(false))),
                    "dt" if matches!(self.peek(), Some('\'') | Some('"')) => {
                        let quote_at = self.i;
                        let text = self.quoted()?;
                        let date = normalize_date(&text).ok_or_else(|| {
                            self.error_at(
                                quote_at + 1,
                                format!(
                                    "'{text}' is not a date; use yyyy-MM-dd or yyyy-MM-ddTHH:mm:ss"
                                ),
                            )
                        })?;
                        Ok((start, Literal::Date(date)))
                    }
                    _ => Err(self.error_at(
                        start,
                        format!("expected {expected}; text values are quoted ('{word}')"),
                    )),
                }
            }
            _ => Err(self.expected(expected)),
        }
    }

    /// `'…'` or `"…"`, no escapes (as the reference).
    fn quoted(&mut self) -> Result<String, RawFilterError> {
        let start = self.i;
        let quote = self.chars[start];
        self.i += 1;
        let close = self.chars[self.i..]
            .iter()
            .position(|c| *c == quote)
            .ok_or_else(|| self.error_at(start, "unterminated quoted value"))?;
        let text: String = self.chars[self.i..self.i + close].iter().collect();
        self.i += close + 1;
        Ok(text)
    }
}

/// Accepts `yyyy-MM-dd`, `yyyy-MM-ddTHH:mm[:ss[.f]]` (also with a space) and an optional
/// offset; returns `YYYY-MM-DD HH:MM:SS`, the form SQLite's `datetime()` produces.
pub fn normalize_date(text: &str) -> Option<String> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    let t = text.trim();
    let naive = if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        d.and_hms_opt(0, 0, 0)?
    } else if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        dt.naive_utc()
    } else {
        let t = t.replace(' ', "T");
        ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(&t, f).ok())?
    };
    Some(naive.format("%Y-%m-%d %H:%M:%S").to_string())
}

/// A `likein` pattern must be a regular expression of bounded size.
pub(crate) fn validate_pattern(pattern: &str) -> Result<(), String> {
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(format!(
            "a likein pattern has at most {MAX_PATTERN_CHARS} characters"
        ));
    }
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .map(|_| ())
        .map_err(|e| {
            format!(
                "not a valid regular expression: {}",
                e.to_string()
                    .lines()
                    .last()
                    .unwrap_or("syntax error")
                    .trim()
            )
        })
}

#[cfg(test)]
#[path = "rawfilter_tests.rs"]
mod tests;
