//! Compilation of `rawfilter` / `rawsort` ASTs to SQL over the `doc` column. Paths and
//! values are always bound parameters (paths are validated identifiers first).
//!
//! SQLite: `json_extract` / `json_type` on `c.docb` (the JSONB copy of `doc`); a `[*]` segment becomes
//! `EXISTS (SELECT 1 FROM json_each(…) jN WHERE …)`. Comparisons are typed: the JSON type
//! of the value must match the literal (boolean, number, text or date as text, array for
//! `[]`); a missing or null value does not match. A value of another type is a client
//! error, raised by the store's registered `hub_rf_check(type, kinds, position,
//! parameter)` function while the query runs (the store turns it into a 400).
//! `like` uses `hub_rf_contains` (Unicode case folding), `likein` uses `hub_rf_regexp`.
//! `in`/`nin`/`likein` on an array value match when any element matches.
//!
//! PostgreSQL: `#>` / `#>>` with a `text[]` path and casts for plain paths (a cast error,
//! SQLSTATE 22023/22P02, is the type mismatch the backend reports as 400), and
//! `jsonb_path_exists` with a bound jsonpath for `[*]` paths and `in`/`likein` (lax mode
//! unwraps arrays, giving the same any-element semantics).

use serde_json::{json, Map, Value};

use super::rawfilter::{CompareOp, JsonPath, Literal, PathSegment, RawFilter, SortKey};
use crate::sql::{escape_like, Dialect, SqlBuilder, SqlValue};

/// Appends the condition for `filter`; `parameter` names the query parameter in errors.
pub fn compile_rawfilter(q: &mut SqlBuilder, filter: &RawFilter, parameter: &str) {
    let mut ctx = Ctx {
        parameter: parameter.to_string(),
        next_alias: 0,
    };
    match q.dialect {
        Dialect::Sqlite => sqlite_filter(q, &mut ctx, filter),
        Dialect::Postgres => pg_filter(q, filter),
    }
}

/// Appends `key1, key2, ` (each followed by `, `) for an ORDER BY; missing values last.
pub fn compile_rawsort(q: &mut SqlBuilder, keys: &[SortKey]) {
    for key in keys {
        let dir = if key.descending { " DESC" } else { " ASC" };
        match q.dialect {
            Dialect::Sqlite => {
                let path = sqlite_path(&key.path.segments);
                q.sql("json_extract(c.doc, ")
                    .text(path.clone())
                    .sql(") IS NULL, json_extract(c.doc, ")
                    .text(path)
                    .sql(")")
                    .sql(dir)
                    .sql(", ");
            }
            Dialect::Postgres => {
                q.sql("c.doc #> ")
                    .text(pg_path(&key.path.segments))
                    .sql("::text[]")
                    .sql(dir)
                    .sql(" NULLS LAST, ");
            }
        }
    }
}

struct Ctx {
    parameter: String,
    next_alias: usize,
}

impl Ctx {
    fn alias(&mut self) -> usize {
        self.next_alias += 1;
        self.next_alias
    }
}

fn op_sql(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Eq => " = ",
        CompareOp::Ne => " <> ",
        CompareOp::Gt => " > ",
        CompareOp::Ge => " >= ",
        CompareOp::Lt => " < ",
        CompareOp::Le => " <= ",
    }
}

/// `$."a"."b"[0]`; keys are `[A-Za-z0-9_\-@]+`, so quoting them is safe.
fn sqlite_path(segments: &[PathSegment]) -> String {
    let mut out = String::from("$");
    for s in segments {
        match s {
            PathSegment::Key(k) => out.push_str(&format!(".\"{k}\"")),
            PathSegment::Index(n) => out.push_str(&format!("[{n}]")),
            PathSegment::AnyElement => out.push_str("[*]"),
        }
    }
    out
}

// ---------------------------------------------------------------- SQLite

/// Where a JSON value lives: the document, or an element `jN` of a `json_each`, plus the
/// path below it (`None` = the element itself).
#[derive(Clone)]
enum Operand {
    Doc(String),
    Elem(usize, Option<String>),
}

const CONTAINER: &str = " IN ('object','array') THEN ";

impl Operand {
    fn value(&self, q: &mut SqlBuilder) {
        match self {
            Operand::Doc(p) => {
                q.sql("json_extract(c.docb, ").text(p.clone()).sql(")");
            }
            Operand::Elem(n, None) => {
                q.sql(&format!("j{n}.value"));
            }
            Operand::Elem(n, Some(p)) => {
                q.sql(&format!("CASE WHEN j{n}.type{CONTAINER}json_extract(j{n}.value, "))
                    .text(p.clone())
                    .sql(") END");
            }
        }
    }

    fn json_type(&self, q: &mut SqlBuilder) {
        match self {
            Operand::Doc(p) => {
                q.sql("json_type(c.docb, ").text(p.clone()).sql(")");
            }
            Operand::Elem(n, None) => {
                q.sql(&format!("j{n}.type"));
            }
            Operand::Elem(n, Some(p)) => {
                q.sql(&format!("CASE WHEN j{n}.type{CONTAINER}json_type(j{n}.value, "))
                    .text(p.clone())
                    .sql(") END");
            }
        }
    }

    /// Arguments of a `json_each` over this value.
    fn container(&self, q: &mut SqlBuilder) {
        match self {
            Operand::Doc(p) => {
                q.sql("c.docb, ").text(p.clone());
            }
            Operand::Elem(n, None) => {
                q.sql(&format!("CASE WHEN j{n}.type{CONTAINER}j{n}.value END"));
            }
            Operand::Elem(n, Some(p)) => {
                q.sql(&format!("CASE WHEN j{n}.type{CONTAINER}j{n}.value END, ")).text(p.clone());
            }
        }
    }
}

type Leaf<'a> = &'a dyn Fn(&mut SqlBuilder, &mut Ctx, &Operand);

/// Walks `path`, opening one `EXISTS (… json_each …)` per `[*]`, and emits `leaf` for
/// the operand the path ends at.
fn along_path(q: &mut SqlBuilder, ctx: &mut Ctx, path: &JsonPath, leaf: Leaf) {
    let groups: Vec<&[PathSegment]> = path.segments.split(|s| *s == PathSegment::AnyElement).collect();
    let mut operand = Operand::Doc(sqlite_path(groups[0]));
    let mut opened = 0;
    for group in &groups[1..] {
        let n = ctx.alias();
        q.sql("EXISTS (SELECT 1 FROM json_each(");
        operand.container(q);
        q.sql(&format!(") j{n} WHERE "));
        operand = Operand::Elem(n, (!group.is_empty()).then(|| sqlite_path(group)));
        opened += 1;
    }
    leaf(q, ctx, &operand);
    for _ in 0..opened {
        q.sql(")");
    }
}

/// `cond` on the value itself, or, when the value is an array, on any of its elements.
fn value_or_any_element(q: &mut SqlBuilder, ctx: &mut Ctx, operand: &Operand, cond: Leaf) {
    q.sql("COALESCE((");
    cond(q, ctx, operand);
    q.sql(") OR CASE WHEN ");
    operand.json_type(q);
    let n = ctx.alias();
    q.sql(" = 'array' THEN EXISTS (SELECT 1 FROM json_each(");
    operand.container(q);
    q.sql(&format!(") j{n} WHERE "));
    cond(q, ctx, &Operand::Elem(n, None));
    q.sql(") ELSE 0 END, 0)");
}

/// The JSON types a literal compares with, as `json_type` names them.
fn kinds(value: &Literal) -> &'static str {
    match value {
        Literal::Bool(_) => "true,false",
        Literal::Number(_) => "integer,real",
        Literal::Text(_) | Literal::Date(_) => "text",
        Literal::EmptyArray => "array",
    }
}

/// `value = ?` for one literal, with the type condition, as two-valued SQL.
fn sqlite_equals(q: &mut SqlBuilder, operand: &Operand, value: &Literal) {
    q.sql("(");
    operand.json_type(q);
    match value {
        Literal::Bool(b) => {
            q.sql(" IN ('true','false') AND ");
            operand.value(q);
            q.sql(" = ").param(SqlValue::Int(*b as i64));
        }
        Literal::Number(n) => {
            q.sql(" IN ('integer','real') AND ");
            operand.value(q);
            q.sql(" = ").param(SqlValue::Real(*n));
        }
        Literal::Text(t) => {
            q.sql(" = 'text' AND ");
            operand.value(q);
            q.sql(" = ").text(t.clone());
        }
        Literal::Date(d) => {
            q.sql(" = 'text' AND datetime(");
            operand.value(q);
            q.sql(") = ").text(d.clone());
        }
        Literal::EmptyArray => {
            q.sql(" = 'array' AND ");
            operand.value(q);
            q.sql(" = '[]'");
        }
    }
    q.sql(")");
}

fn sqlite_filter(q: &mut SqlBuilder, ctx: &mut Ctx, filter: &RawFilter) {
    match filter {
        RawFilter::And(parts) | RawFilter::Or(parts) => {
            let joiner = if matches!(filter, RawFilter::And(_)) { " AND " } else { " OR " };
            q.sql("(");
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    q.sql(joiner);
                }
                sqlite_filter(q, ctx, part);
            }
            q.sql(")");
        }
        RawFilter::Compare { op, path, value, position } => {
            let leaf = |q: &mut SqlBuilder, ctx: &mut Ctx, operand: &Operand| {
                q.sql("CASE WHEN hub_rf_check(");
                operand.json_type(q);
                q.sql(", ")
                    .text(kinds(value))
                    .sql(", ")
                    .param(SqlValue::Int(*position as i64))
                    .sql(", ")
                    .text(ctx.parameter.clone())
                    .sql(") THEN ");
                match value {
                    Literal::Date(d) => {
                        q.sql("datetime(");
                        operand.value(q);
                        q.sql(")").sql(op_sql(*op)).text(d.clone());
                    }
                    Literal::EmptyArray => {
                        operand.value(q);
                        q.sql(op_sql(*op)).sql("'[]'");
                    }
                    Literal::Bool(b) => {
                        operand.value(q);
                        q.sql(op_sql(*op)).param(SqlValue::Int(*b as i64));
                    }
                    Literal::Number(n) => {
                        operand.value(q);
                        q.sql(op_sql(*op)).param(SqlValue::Real(*n));
                    }
                    Literal::Text(t) => {
                        operand.value(q);
                        q.sql(op_sql(*op)).text(t.clone());
                    }
                }
                q.sql(" END");
            };
            along_path(q, ctx, path, &leaf);
        }
        RawFilter::Like { path, text } => {
            let leaf = |q: &mut SqlBuilder, _: &mut Ctx, operand: &Operand| {
                q.sql("CASE WHEN ");
                operand.json_type(q);
                q.sql(" = 'text' THEN hub_rf_contains(");
                operand.value(q);
                q.sql(", ").text(text.clone()).sql(") END");
            };
            along_path(q, ctx, path, &leaf);
        }
        RawFilter::LikeIn { path, patterns } => {
            let cond = |q: &mut SqlBuilder, _: &mut Ctx, operand: &Operand| {
                q.sql("CASE WHEN ");
                operand.json_type(q);
                q.sql(" = 'text' THEN (");
                for (i, p) in patterns.iter().enumerate() {
                    if i > 0 {
                        q.sql(" OR ");
                    }
                    q.sql("hub_rf_regexp(").text(p.clone()).sql(", ");
                    operand.value(q);
                    q.sql(")");
                }
                q.sql(") ELSE 0 END");
            };
            along_path(q, ctx, path, &|q, ctx, operand| value_or_any_element(q, ctx, operand, &cond));
        }
        RawFilter::In { path, values, negated } => {
            let cond = |q: &mut SqlBuilder, _: &mut Ctx, operand: &Operand| {
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        q.sql(" OR ");
                    }
                    sqlite_equals(q, operand, v);
                }
            };
            if *negated {
                q.sql("NOT ");
            }
            q.sql("COALESCE(");
            along_path(q, ctx, path, &|q, ctx, operand| value_or_any_element(q, ctx, operand, &cond));
            q.sql(", 0)");
        }
        RawFilter::IsNull { path, negated } => {
            let leaf = |q: &mut SqlBuilder, _: &mut Ctx, operand: &Operand| {
                q.sql("COALESCE(");
                operand.json_type(q);
                q.sql(", 'null')").sql(if *negated { " <> 'null'" } else { " = 'null'" });
            };
            along_path(q, ctx, path, &leaf);
        }
    }
}

// ---------------------------------------------------------------- PostgreSQL

/// `{a,b,0}` for `#>`; keys are validated identifiers, so no quoting is needed.
fn pg_path(segments: &[PathSegment]) -> String {
    let parts: Vec<String> = segments
        .iter()
        .filter_map(|s| match s {
            PathSegment::Key(k) => Some(k.clone()),
            PathSegment::Index(n) => Some(n.to_string()),
            PathSegment::AnyElement => None,
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// A jsonpath string literal (`"…"`), escaped.
fn jsonpath_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn literal_json(value: &Literal) -> Value {
    match value {
        Literal::Bool(b) => json!(b),
        Literal::Number(n) => json!(n),
        Literal::Text(t) => json!(t),
        Literal::Date(d) => json!(d.replace(' ', "T")),
        Literal::EmptyArray => json!([]),
    }
}

fn jsonpath_op(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Eq => "==",
        CompareOp::Ne => "!=",
        CompareOp::Gt => ">",
        CompareOp::Ge => ">=",
        CompareOp::Lt => "<",
        CompareOp::Le => "<=",
    }
}

/// `jsonb_path_exists(c.doc, '<path> ? (<predicate>)', vars)`, all bound.
fn pg_path_exists(q: &mut SqlBuilder, path: &JsonPath, predicate: &str, vars: Map<String, Value>) {
    let jsonpath = format!("{} ? ({predicate})", sqlite_path(&path.segments));
    q.sql("jsonb_path_exists(c.doc, ")
        .text(jsonpath)
        .sql("::jsonpath, ")
        .text(Value::Object(vars).to_string())
        .sql("::jsonb)");
}

fn pg_filter(q: &mut SqlBuilder, filter: &RawFilter) {
    match filter {
        RawFilter::And(parts) | RawFilter::Or(parts) => {
            let joiner = if matches!(filter, RawFilter::And(_)) { " AND " } else { " OR " };
            q.sql("(");
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    q.sql(joiner);
                }
                pg_filter(q, part);
            }
            q.sql(")");
        }
        RawFilter::Compare { op, path, value, .. } if path.has_wildcard() => {
            let mut vars = Map::new();
            vars.insert("v".into(), literal_json(value));
            pg_path_exists(q, path, &format!("@ {} $v", jsonpath_op(*op)), vars);
        }
        RawFilter::Compare { op, path, value, .. } => {
            let p = pg_path(&path.segments);
            match value {
                Literal::Bool(b) => {
                    q.sql("(c.doc #> ").text(p).sql("::text[])::boolean").sql(op_sql(*op)).param(SqlValue::Bool(*b));
                }
                Literal::Number(n) => {
                    q.sql("(c.doc #> ").text(p).sql("::text[])::float8").sql(op_sql(*op)).param(SqlValue::Real(*n));
                }
                Literal::Text(t) => {
                    q.sql("(c.doc #>> ").text(p).sql("::text[])").sql(op_sql(*op)).text(t.clone());
                }
                Literal::Date(d) => {
                    q.sql("(c.doc #>> ")
                        .text(p)
                        .sql("::text[])::timestamp")
                        .sql(op_sql(*op))
                        .text(d.clone())
                        .sql("::timestamp");
                }
                Literal::EmptyArray => {
                    q.sql("(c.doc #> ").text(p).sql("::text[])").sql(op_sql(*op)).sql("'[]'::jsonb");
                }
            }
        }
        RawFilter::Like { path, text } if path.has_wildcard() => {
            let predicate = format!("@ like_regex {} flag \"iq\"", jsonpath_string(text));
            pg_path_exists(q, path, &predicate, Map::new());
        }
        RawFilter::Like { path, text } => {
            q.sql("(c.doc #>> ")
                .text(pg_path(&path.segments))
                .sql("::text[]) ILIKE ")
                .text(format!("%{}%", escape_like(text)))
                .sql(" ESCAPE '\\'");
        }
        RawFilter::LikeIn { path, patterns } => {
            let predicate = patterns
                .iter()
                .map(|p| format!("@ like_regex {} flag \"i\"", jsonpath_string(p)))
                .collect::<Vec<_>>()
                .join(" || ");
            pg_path_exists(q, path, &predicate, Map::new());
        }
        RawFilter::In { path, values, negated } => {
            let mut vars = Map::new();
            let mut predicate = Vec::new();
            for (i, v) in values.iter().enumerate() {
                vars.insert(format!("v{i}"), literal_json(v));
                predicate.push(format!("@ == $v{i}"));
            }
            if *negated {
                q.sql("NOT ");
            }
            pg_path_exists(q, path, &predicate.join(" || "), vars);
        }
        RawFilter::IsNull { path, negated } if path.has_wildcard() => {
            if *negated {
                pg_path_exists(q, path, "@ != null", Map::new());
            } else {
                pg_path_exists(q, path, "@ == null", Map::new());
            }
        }
        RawFilter::IsNull { path, negated } => {
            q.sql("(c.doc #>> ")
                .text(pg_path(&path.segments))
                .sql("::text[]) IS ")
                .sql(if *negated { "NOT NULL" } else { "NULL" });
        }
    }
}
