//! The `where` filter language of the Time Series API, parsed exactly as the reference's
//! hand-written scanner does (one character of look-ahead, a virtual end-of-line, the
//! JSON-selector heuristic that steps back over numbers), so that accepted inputs,
//! rejected inputs and the reported error positions are the same.
//!
//! Error positions are the reference's (0-based index of the offending character, `-1`
//! before the start); AST positions ([`Clause::position`]) are 1-based.

use chrono::{DateTime, FixedOffset};

use super::datetime::parse_datetime;
use super::java_numbers::{java_parse_double, java_parse_int};
use super::TsQueryError;

const EOL: char = '\0';

/// Longest `where` accepted, in characters; checked before scanning.
pub const MAX_WHERE_CHARS: usize = 8000;
/// Deepest nesting of `and(`/`or(` groups; checked before each group recurses, so a
/// hostile `and(and(…` cannot overflow the stack.
pub const MAX_WHERE_DEPTH: usize = 32;
/// Most clauses in one `where` (each becomes SQL; SQLite's expression depth is 1000).
pub const MAX_WHERE_CLAUSES: usize = 200;
/// Most values in one `in`/`nin`/`bbi`/`bbc`/`dlt` list.
pub const MAX_WHERE_LIST_VALUES: usize = 1000;

/// The limit a `where` exceeds, if any (pure; the scanner reports it as it counts).
fn limit_error(detail: String) -> TsQueryError {
    TsQueryError::Limit {
        parameter: "where",
        detail,
    }
}

/// A syntax error, with the reference's message and marked input.
#[derive(Debug, Clone, PartialEq)]
pub struct WhereSyntaxError {
    /// Reference position: 0-based index of the offending character (`-1` = before the start).
    pub position: i64,
    /// The offending character, `<EOL>` at the end.
    pub character: String,
    /// What was expected, e.g. `OPERATOR expected`.
    pub expected: String,
    /// The input with `--->c<---` around the offending character.
    pub input_marked: String,
    pub input_origin: String,
}

impl WhereSyntaxError {
    /// `PARSING ERROR: Syntax error at position <i> with character <c>: <msg>`.
    pub fn message(&self) -> String {
        format!(
            "PARSING ERROR: Syntax error at position {} with character {}: {}",
            self.position, self.character, self.expected
        )
    }
}

impl std::fmt::Display for WhereSyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// A whole `where` expression: an implicit AND of its items.
#[derive(Debug, Clone, PartialEq)]
pub struct Where {
    pub items: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Clause(Clause),
    And(Vec<Node>),
    Or(Vec<Node>),
}

/// `alias[.jsonpath].op.value`
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub alias: String,
    pub json_path: Option<String>,
    pub op: String,
    pub value: Operand,
    /// 1-based position of the alias in the input.
    pub position: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Single(Value),
    List(Vec<Value>),
}

/// A typed value; `raw` is the text after unescaping (None for `""`).
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub raw: Option<String>,
    pub typed: Typed,
    pub quoted: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
    Date(DateTime<FixedOffset>),
    /// `None` for the quoted empty string `""` (matches nothing, as in the reference).
    Str(Option<String>),
}

impl Typed {
    /// The reference's type name: NULL, BOOLEAN, NUMBER, DATE, STRING.
    pub fn type_name(&self) -> &'static str {
        match self {
            Typed::Null => "NULL",
            Typed::Bool(_) => "BOOLEAN",
            Typed::Int(_) | Typed::Double(_) => "NUMBER",
            Typed::Date(_) => "DATE",
            Typed::Str(_) => "STRING",
        }
    }
}

impl Where {
    /// The reference's token notation, e.g. `AND{CLAUSE{{ALIAS=a}{OP=eq}{NUMBER=1}}}`.
    pub fn format(&self) -> String {
        let mut s = String::new();
        format_group("AND", &self.items, &mut s);
        s
    }
}

fn format_group(name: &str, items: &[Node], out: &mut String) {
    if items.is_empty() {
        out.push_str(&format!("{{{name}}}"));
        return;
    }
    out.push_str(name);
    out.push('{');
    for n in items {
        match n {
            Node::And(v) => format_group("AND", v, out),
            Node::Or(v) => format_group("OR", v, out),
            Node::Clause(c) => {
                out.push_str(&format!("CLAUSE{{{{ALIAS={}}}", c.alias));
                if let Some(j) = &c.json_path {
                    out.push_str(&format!("{{JSONSEL={j}}}"));
                }
                out.push_str(&format!("{{OP={}}}", c.op));
                match &c.value {
                    Operand::Single(v) => format_value(v, out),
                    Operand::List(vs) => {
                        out.push_str("LIST{");
                        vs.iter().for_each(|v| format_value(v, out));
                        out.push('}');
                    }
                }
                out.push('}');
            }
        }
    }
    out.push('}');
}

fn format_value(v: &Value, out: &mut String) {
    match (&v.typed, &v.raw) {
        (Typed::Null, _) => out.push_str("{NULL}"),
        (t, Some(r)) => out.push_str(&format!("{{{}={r}}}", t.type_name())),
        (t, None) => out.push_str(&format!("{{{}}}", t.type_name())),
    }
}

/// Parses a `where` expression. An empty input is an empty AND (no filter). Syntax
/// errors are [`TsQueryError::Syntax`]; inputs over a `MAX_WHERE_*` limit are
/// [`TsQueryError::Limit`].
pub fn parse_where(input: &str) -> Result<Where, TsQueryError> {
    if input.is_empty() {
        return Ok(Where { items: Vec::new() });
    }
    let chars = input.chars().count();
    if chars > MAX_WHERE_CHARS {
        return Err(limit_error(format!(
            "'where' has {chars} characters; at most {MAX_WHERE_CHARS} are accepted"
        )));
    }
    let mut p = Scanner {
        s: input.chars().chain(std::iter::once(EOL)).collect(),
        i: 0,
        depth: 0,
        clauses: 0,
        limit: None,
    };
    let parsed = p.parse_all();
    match (parsed, p.limit.take()) {
        (_, Some(limit)) => Err(limit),
        (Ok(w), None) => Ok(w),
        (Err(e), None) => Err(TsQueryError::Syntax(e)),
    }
}

struct Scanner {
    s: Vec<char>,
    i: usize,
    /// Current `and(`/`or(` nesting.
    depth: usize,
    /// Clauses read so far.
    clauses: usize,
    /// Set when a `MAX_WHERE_*` limit stops the scan (the scan then fails at once).
    limit: Option<TsQueryError>,
}

fn java_is_letter(c: char) -> bool {
    c != EOL && c.is_alphabetic()
}

impl Scanner {
    fn parse_all(&mut self) -> Result<Where, WhereSyntaxError> {
        let mut items = Vec::new();
        loop {
            items.extend(self.clause_or_logical_op()?);
            if !self.match_consume(',') {
                break;
            }
        }
        self.expect(EOL)?;
        Ok(Where { items })
    }

    /// Records an exceeded limit and stops the scan (the caller reports the limit).
    fn stop(&mut self, detail: String) -> WhereSyntaxError {
        self.limit = Some(limit_error(detail));
        self.error("limit exceeded")
    }

    fn la(&self, hops: i64) -> char {
        let j = self.i as i64 + hops;
        if j < 0 {
            return EOL;
        }
        self.s.get(j as usize).copied().unwrap_or(EOL)
    }
    fn c(&self) -> char {
        self.la(0)
    }
    fn consume(&mut self) -> bool {
        if self.i + 1 < self.s.len() {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn go_back(&mut self, steps: usize) {
        if self.i >= steps {
            self.i -= steps;
        }
    }
    fn is(&self, c: char) -> bool {
        self.c() == c
    }
    fn match_consume(&mut self, c: char) -> bool {
        let m = self.is(c);
        if m {
            self.consume();
        }
        m
    }
    fn match_consume_str(&mut self, t: &str) -> bool {
        let m = t.chars().enumerate().all(|(k, ch)| self.la(k as i64) == ch);
        if m {
            for _ in 0..t.chars().count() {
                self.consume();
            }
        }
        m
    }
    fn encode(c: char) -> String {
        if c == EOL {
            "<EOL>".into()
        } else {
            c.to_string()
        }
    }
    fn origin(&self) -> String {
        self.s[..self.s.len() - 1].iter().collect()
    }
    fn error_at(&self, position: i64, ch: char, expected: &str) -> WhereSyntaxError {
        let i = position.max(0) as usize;
        let before: String = self.s[..i.min(self.s.len())].iter().collect();
        let after: String = if self.s.len() > i + 1 {
            self.s[i + 1..self.s.len() - 1].iter().collect()
        } else {
            String::new()
        };
        WhereSyntaxError {
            position,
            character: Self::encode(ch),
            expected: expected.replace(EOL, "<EOL>"),
            input_marked: format!("{before}--->{}<---{after}", Self::encode(ch)),
            input_origin: self.origin(),
        }
    }
    fn error(&self, expected: &str) -> WhereSyntaxError {
        self.error_at(self.i as i64, self.c(), expected)
    }
    fn expect(&self, c: char) -> Result<(), WhereSyntaxError> {
        if self.c() != c {
            return Err(self.error(&format!("{c} expected")));
        }
        Ok(())
    }
    fn expect_consume(&mut self, c: char) -> Result<(), WhereSyntaxError> {
        self.expect(c)?;
        self.consume();
        Ok(())
    }

    /// Returns the items of one CLAUSE_OR_LOGICAL_OP (itself plus comma-joined followers).
    /// A loop, not the grammar's tail recursion: a long comma list must not grow the stack.
    fn clause_or_logical_op(&mut self) -> Result<Vec<Node>, WhereSyntaxError> {
        let mut out = Vec::new();
        loop {
            if self.match_consume_str("and(") {
                let group = self.nested_group()?;
                out.push(Node::And(group));
            } else if self.match_consume_str("or(") {
                let group = self.nested_group()?;
                out.push(Node::Or(group));
            } else {
                self.clauses += 1;
                if self.clauses > MAX_WHERE_CLAUSES {
                    return Err(self.stop(format!(
                        "'where' has more than {MAX_WHERE_CLAUSES} clauses (at position {})",
                        self.i + 1
                    )));
                }
                out.push(Node::Clause(self.clause()?));
                if !self.is(',') && !self.is(')') && !self.is(EOL) {
                    return Err(
                        self.error(&format!("One of the following characters ,){EOL} expected"))
                    );
                }
            }
            if !self.match_consume(',') {
                return Ok(out);
            }
        }
    }

    /// One `and(`/`or(` group, refused before recursing past [`MAX_WHERE_DEPTH`].
    fn nested_group(&mut self) -> Result<Vec<Node>, WhereSyntaxError> {
        if self.depth >= MAX_WHERE_DEPTH {
            return Err(self.stop(format!(
                "'where' nests and(/or( groups more than {MAX_WHERE_DEPTH} levels deep (at position {})",
                self.i
            )));
        }
        self.depth += 1;
        let group = self.logical_group();
        self.depth -= 1;
        group
    }

    fn logical_group(&mut self) -> Result<Vec<Node>, WhereSyntaxError> {
        let mut items = Vec::new();
        loop {
            items.extend(self.clause_or_logical_op()?);
            if self.match_consume(',') {
                items.extend(self.clause_or_logical_op()?);
            }
            // clashConsume(')') inside doWhile: consume if not ')', then doWhile consumes again.
            if self.is(')') {
                break;
            }
            self.consume();
            if !self.consume() {
                break;
            }
        }
        self.expect_consume(')')?;
        Ok(items)
    }

    fn alias(&mut self) -> Result<String, WhereSyntaxError> {
        let mut v = String::new();
        loop {
            let c = self.c();
            if !java_is_letter(c) && c != '_' {
                break;
            }
            v.push(c);
            if !self.consume() {
                break;
            }
        }
        if v.is_empty() {
            return Err(self.error_at(self.i as i64 - 1, self.la(-1), "ALIAS expected"));
        }
        Ok(v)
    }

    fn clause(&mut self) -> Result<Clause, WhereSyntaxError> {
        let position = self.i + 1;
        let alias = self.alias()?;
        self.expect_consume('.')?;
        let json_path = self.json_selector();
        if json_path.is_some() {
            self.expect_consume('.')?;
        }
        let op = self.operator()?;
        self.expect_consume('.')?;
        let value = if self.match_consume('(') {
            let mut list = Vec::new();
            loop {
                if list.len() == MAX_WHERE_LIST_VALUES {
                    return Err(self.stop(format!(
                        "a 'where' list has more than {MAX_WHERE_LIST_VALUES} values (at position {})",
                        self.i + 1
                    )));
                }
                list.push(self.value()?);
                if !self.match_consume(',') {
                    break;
                }
            }
            self.expect(')')?;
            self.expect_consume(')')?;
            Operand::List(list)
        } else {
            Operand::Single(self.value()?)
        };
        Ok(Clause {
            alias,
            json_path,
            op,
            value,
            position,
        })
    }

    fn json_selector(&mut self) -> Option<String> {
        let mut v: Vec<char> = Vec::new();
        loop {
            let c = self.c();
            if !java_is_letter(c) && c != '_' && c != '-' && c != '.' && !c.is_ascii_digit() {
                break;
            }
            v.push(c);
            if !self.consume() {
                break;
            }
        }
        let last_index_of = |from: i64| -> i64 {
            if from < 0 {
                return -1;
            }
            let from = (from as usize).min(v.len().saturating_sub(1));
            (0..=from)
                .rev()
                .find(|&k| v.get(k) == Some(&'.'))
                .map(|k| k as i64)
                .unwrap_or(-1)
        };
        let last = last_index_of(v.len() as i64 - 1);
        let mut before_op = last_index_of(last - 1);
        let candidate: String = v[(before_op + 1) as usize..].iter().collect();
        if java_parse_double(&candidate).is_some() {
            before_op = last_index_of(before_op - 1);
        }
        if v.is_empty() || before_op < 0 {
            self.go_back(v.len());
            return None;
        }
        self.go_back(v.len() - before_op as usize);
        Some(v[..before_op as usize].iter().collect())
    }

    fn operator(&mut self) -> Result<String, WhereSyntaxError> {
        let mut v = String::new();
        loop {
            let c = self.c();
            if !java_is_letter(c) {
                break;
            }
            v.push(c);
            if !self.consume() {
                break;
            }
        }
        if v.is_empty() {
            return Err(self.error_at(self.i as i64 - 1, self.la(-1), "OPERATOR expected"));
        }
        Ok(v)
    }

    fn value(&mut self) -> Result<Value, WhereSyntaxError> {
        let quoted = self.match_consume('"');
        let mut raw: Option<String> = None;
        loop {
            let c = self.c();
            let escaped = self.la(-1) == '\\';
            if (c == ')' || c == ',' || (c == '"' && quoted)) && !escaped {
                break;
            } else if (c == '(' || c == '\'' || c == '"') && !escaped {
                return Err(self.error("Characters ('\" must be escaped within a filter VALUE"));
            }
            self.match_consume('\\');
            let c = self.c();
            if c != EOL {
                raw.get_or_insert_with(String::new).push(c);
            }
            if !self.consume() {
                break;
            }
        }
        let typed = if quoted {
            self.expect_consume('"')?;
            Typed::Str(raw.clone())
        } else {
            match raw.as_deref() {
                None => {
                    raw = Some(String::new());
                    Typed::Str(Some(String::new()))
                }
                Some("null") => Typed::Null,
                Some(t) if t.eq_ignore_ascii_case("true") => Typed::Bool(true),
                Some(t) if t.eq_ignore_ascii_case("false") => Typed::Bool(false),
                Some(t) => {
                    if let Some(n) = java_parse_int(t) {
                        Typed::Int(n)
                    } else if let Some(d) = java_parse_double(t) {
                        Typed::Double(d)
                    } else if let Ok(d) = parse_datetime(t) {
                        Typed::Date(d)
                    } else {
                        Typed::Str(Some(t.to_string()))
                    }
                }
            }
        };
        if typed == Typed::Null {
            raw = None;
        }
        Ok(Value { raw, typed, quoted })
    }
}
