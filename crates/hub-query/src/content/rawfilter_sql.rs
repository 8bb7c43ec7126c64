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
//! PostgreSQL gives the same matches, order and errors over `c.docb` (`jsonb`), with
//! the functions of the store's `content_functions.sql`: each path is read once per row
//! (`#>`, or a strict jsonpath where an index segment could meet an object), every
//! comparison is guarded by its `jsonb_typeof` test, a mismatch calls `hub_rf_mismatch`
//! (SQLSTATE HR001 with SQLite's message, parameter and position; the store makes it a
//! 400), `[*]` walks `hub_rf_each` (`json_each`'s values), `like` compares
//! `hub_fold` (ICU lower case, ß → ss) with the needle folded by `hub_model::fold`,
//! `likein` runs the pattern (translated by `pg_regex`) case-insensitively under an
//! ICU collation, dates go through `hub_rf_datetime` (SQLite's `datetime`). `in`/`nin`
//! on a key path with text or boolean values is jsonb containment (`@>`), which the GIN
//! index on `docb` answers; `eq` stays a guarded comparison, since containment would
//! skip the documents whose mismatching type must raise the error.
//!
//! Known differences: which mismatching document a 400 names ("the field holds …"),
//! and whether documents another condition excludes are checked at all, follow each
//! engine's evaluation order (parameter and position are the same); `likein` patterns
//! using what PostgreSQL's regular expressions lack (`\p{…}`, flags after the start)
//! fail there; numbers compare as doubles on both, but JSON numbers beyond the double
//! range fail the cast on PostgreSQL; folding follows the server's ICU Unicode version.

use serde_json::{json, Map, Value};

use super::rawfilter::{CompareOp, JsonPath, Literal, PathSegment, RawFilter, SortKey};
use crate::sql::{Dialect, SqlBuilder, SqlValue};

/// Appends the condition for `filter`; `parameter` names the query parameter in errors.
pub fn compile_rawfilter(q: &mut SqlBuilder, filter: &RawFilter, parameter: &str) {
    let mut ctx = Ctx {
        parameter: parameter.to_string(),
        next_alias: 0,
    };
    match q.dialect {
        Dialect::Sqlite => sqlite_filter(q, &mut ctx, filter),
        Dialect::Postgres => pg_filter(q, &mut ctx, filter),
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
            Dialect::Postgres => pg_rawsort_key(q, key),
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
//
// The same structure over `c.docb` (`jsonb`): `jsonb_typeof` stands for `json_type`
// (`number` for `integer`/`real`, `string` for `text`), `hub_rf_each` for `json_each`
// (array elements, object member values, or a scalar itself), and a mismatch calls
// `hub_rf_mismatch`, which raises SQLSTATE HR001 with SQLite's message (see
// `hub-store/src/postgres/sql/content_functions.sql`). Every comparison is guarded by
// its type test in a `CASE`, so no cast can fail on another type.

/// A path is read with `#>` when every segment is an object key that `#>` cannot take
/// for an array index; otherwise with a strict jsonpath, which (like SQLite) finds
/// nothing where an index meets an object or a key meets an array.
fn pg_plain_keys(segments: &[PathSegment]) -> Option<String> {
    let mut keys = Vec::with_capacity(segments.len());
    for s in segments {
        match s {
            PathSegment::Key(k) if k.parse::<i64>().is_err() => keys.push(k.clone()),
            _ => return None,
        }
    }
    Some(text_array(&keys))
}

/// `{"a","b"}`: quoted, so that a key such as `null` stays a key. Keys and indexes hold
/// no quotes or backslashes.
fn text_array(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|k| format!("\"{k}\"")).collect();
    format!("{{{}}}", quoted.join(","))
}

/// The `json` text of the document's value at `segments` (as written, so in the
/// document's key order), for a value `pg_get` found to be a container.
fn pg_json_text(q: &mut SqlBuilder, segments: &[PathSegment]) {
    let items: Vec<String> = segments
        .iter()
        .map(|s| match s {
            PathSegment::Key(k) => k.clone(),
            PathSegment::Index(n) => n.to_string(),
            PathSegment::AnyElement => String::new(),
        })
        .collect();
    q.sql("(c.doc::json #> (").text(text_array(&items)).sql("::text)::text[])::text");
}

/// The `jsonb` value at `segments` below the `jsonb` expression `base`.
fn pg_get(q: &mut SqlBuilder, base: &str, segments: &[PathSegment]) {
    if segments.is_empty() {
        q.sql(base);
        return;
    }
    match pg_plain_keys(segments) {
        Some(keys) => {
            q.sql(&format!("({base} #> (")).text(keys).sql("::text)::text[])");
        }
        None => {
            q.sql(&format!("jsonb_path_query_first({base}, ("))
                .text(format!("strict {}", sqlite_path(segments)))
                .sql("::text)::jsonpath, '{}'::jsonb, true)");
        }
    }
}

/// Where a value lives: `jN.v`, the document's value at the path's first part (read
/// once per row in a subquery: every `#>` on `docb` would detoast the whole document
/// again), or an element of a `hub_rf_each`/`jsonb_array_elements` plus the path below it.
enum PgOperand {
    Top(usize),
    Elem(usize, Vec<PathSegment>),
}

impl PgOperand {
    fn value(&self, q: &mut SqlBuilder) {
        match self {
            PgOperand::Top(n) => {
                q.sql(&format!("j{n}.v"));
            }
            PgOperand::Elem(n, p) => pg_get(q, &format!("j{n}.v"), p),
        }
    }

    fn json_type(&self, q: &mut SqlBuilder) {
        q.sql("jsonb_typeof(");
        self.value(q);
        q.sql(")");
    }

    /// The `jsonb` whose `hub_rf_each` values a `[*]` visits: on the document any value
    /// (a scalar visits itself), below an element only a container.
    fn container(&self, q: &mut SqlBuilder) {
        match self {
            PgOperand::Elem(n, p) if p.is_empty() => {
                q.sql(&format!("CASE WHEN jsonb_typeof(j{n}.v) IN ('object','array') THEN j{n}.v END"));
            }
            _ => self.value(q),
        }
    }
}

type PgLeaf<'a> = &'a dyn Fn(&mut SqlBuilder, &mut Ctx, &PgOperand);

fn pg_along_path(q: &mut SqlBuilder, ctx: &mut Ctx, path: &JsonPath, leaf: PgLeaf) {
    let groups: Vec<&[PathSegment]> = path.segments.split(|s| *s == PathSegment::AnyElement).collect();
    let top = ctx.alias();
    q.sql("(SELECT ");
    let mut operand = PgOperand::Top(top);
    for group in &groups[1..] {
        let n = ctx.alias();
        q.sql("EXISTS (SELECT 1 FROM hub_rf_each(");
        operand.container(q);
        q.sql(&format!(") AS j{n}(v) WHERE "));
        operand = PgOperand::Elem(n, group.to_vec());
    }
    leaf(q, ctx, &operand);
    for _ in 1..groups.len() {
        q.sql(")");
    }
    // OFFSET 0 keeps the planner from inlining the value into every use.
    q.sql(" FROM (SELECT ");
    pg_get(q, "c.docb", groups[0]);
    q.sql(&format!(" AS v OFFSET 0) AS j{top})"));
}

fn pg_value_or_any_element(q: &mut SqlBuilder, ctx: &mut Ctx, operand: &PgOperand, cond: PgLeaf) {
    q.sql("COALESCE((");
    cond(q, ctx, operand);
    q.sql(") OR CASE WHEN ");
    operand.json_type(q);
    let n = ctx.alias();
    q.sql(" = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(");
    operand.value(q);
    q.sql(&format!(") AS j{n}(v) WHERE "));
    cond(q, ctx, &PgOperand::Elem(n, Vec::new()));
    q.sql(") ELSE false END, false)");
}

/// The `jsonb_typeof` a literal compares with, and how the error names the literal.
fn pg_kind(value: &Literal) -> (&'static str, &'static str) {
    match value {
        Literal::Bool(_) => ("boolean", "a boolean (true or false)"),
        Literal::Number(_) => ("number", "a number"),
        Literal::Text(_) | Literal::Date(_) => ("string", "a quoted text or a dt'…' date"),
        Literal::EmptyArray => ("array", "[]"),
    }
}

/// `value OP literal` for a value of the literal's type, as SQLite compares them:
/// booleans as 0/1, numbers as doubles, text bytewise, dates through `datetime`, and an
/// array as its JSON text against `'[]'` (decided by the character after `[`).
fn pg_compare(q: &mut SqlBuilder, operand: &PgOperand, op: CompareOp, value: &Literal) {
    match value {
        Literal::Bool(b) => {
            q.sql("(");
            operand.value(q);
            q.sql(")::boolean").sql(op_sql(op)).param(SqlValue::Bool(*b));
        }
        Literal::Number(n) => {
            q.sql("(");
            operand.value(q);
            q.sql(")::float8").sql(op_sql(op)).param(SqlValue::Real(*n));
        }
        Literal::Text(t) => {
            q.sql("(");
            operand.value(q);
            q.sql(" #>> '{}') COLLATE \"C\"").sql(op_sql(op)).text(t.clone());
        }
        Literal::Date(d) => {
            q.sql("hub_rf_datetime(");
            operand.value(q);
            q.sql(" #>> '{}') COLLATE \"C\"").sql(op_sql(op)).text(d.clone());
        }
        Literal::EmptyArray => {
            q.sql("CASE WHEN jsonb_array_length(");
            operand.value(q);
            q.sql(") = 0 THEN 0 WHEN jsonb_typeof(");
            operand.value(q);
            q.sql(" -> 0) IN ('object','boolean','null') THEN 1 ELSE -1 END").sql(op_sql(op)).sql("0");
        }
    }
}

/// `value = literal` without a type error (the conditions of `in`/`nin`).
fn pg_equals(q: &mut SqlBuilder, operand: &PgOperand, value: &Literal) {
    match value {
        Literal::Bool(_) | Literal::Text(_) | Literal::EmptyArray => {
            q.sql("(");
            operand.value(q);
            q.sql(" = ").text(literal_json(value).to_string()).sql("::jsonb)");
        }
        Literal::Number(_) | Literal::Date(_) => {
            q.sql("CASE WHEN ");
            operand.json_type(q);
            q.sql(&format!(" = '{}' THEN ", pg_kind(value).0));
            pg_compare(q, operand, CompareOp::Eq, value);
            q.sql(" ELSE false END");
        }
    }
}

fn literal_json(value: &Literal) -> Value {
    match value {
        Literal::Bool(b) => json!(b),
        Literal::Number(n) => json!(n),
        Literal::Text(t) | Literal::Date(t) => json!(t),
        Literal::EmptyArray => json!([]),
    }
}

/// `{"a":{"b":value}}` for the key path `a.b`.
fn nested(keys: &[PathSegment], value: Value) -> Value {
    keys.iter().rev().fold(value, |inner, s| match s {
        PathSegment::Key(k) => {
            let mut m = Map::new();
            m.insert(k.clone(), inner);
            Value::Object(m)
        }
        _ => inner,
    })
}

fn pg_filter(q: &mut SqlBuilder, ctx: &mut Ctx, filter: &RawFilter) {
    match filter {
        RawFilter::And(parts) | RawFilter::Or(parts) => {
            let joiner = if matches!(filter, RawFilter::And(_)) { " AND " } else { " OR " };
            q.sql("(");
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    q.sql(joiner);
                }
                pg_filter(q, ctx, part);
            }
            q.sql(")");
        }
        RawFilter::Compare { op, path, value, position } => {
            let leaf = |q: &mut SqlBuilder, ctx: &mut Ctx, operand: &PgOperand| {
                let (kind, wanted) = pg_kind(value);
                q.sql("CASE ");
                operand.json_type(q);
                q.sql(&format!(" WHEN '{kind}' THEN "));
                pg_compare(q, operand, *op, value);
                q.sql(" WHEN 'null' THEN NULL ELSE hub_rf_mismatch(");
                operand.json_type(q);
                q.sql(", ")
                    .text(wanted)
                    .sql(", ")
                    .param(SqlValue::Int(*position as i64))
                    .sql(", ")
                    .text(ctx.parameter.clone())
                    .sql(") END");
            };
            pg_along_path(q, ctx, path, &leaf);
        }
        RawFilter::Like { path, text } => {
            let leaf = |q: &mut SqlBuilder, _: &mut Ctx, operand: &PgOperand| {
                q.sql("CASE WHEN ");
                operand.json_type(q);
                q.sql(" = 'string' THEN strpos(hub_fold(");
                operand.value(q);
                q.sql(" #>> '{}'), ").text(hub_model::language::fold(text)).sql(") > 0 END");
            };
            pg_along_path(q, ctx, path, &leaf);
        }
        RawFilter::LikeIn { path, patterns } => {
            let cond = |q: &mut SqlBuilder, _: &mut Ctx, operand: &PgOperand| {
                q.sql("CASE WHEN ");
                operand.json_type(q);
                q.sql(" = 'string' THEN (");
                for (i, p) in patterns.iter().enumerate() {
                    if i > 0 {
                        q.sql(" OR ");
                    }
                    q.sql("(");
                    operand.value(q);
                    q.sql(" #>> '{}') COLLATE \"und-x-icu\" ~* ").text(pg_regex(p));
                }
                q.sql(") ELSE false END");
            };
            pg_along_path(q, ctx, path, &|q, ctx, operand| pg_value_or_any_element(q, ctx, operand, &cond));
        }
        RawFilter::In { path, values, negated } => {
            if *negated {
                q.sql("NOT ");
            }
            let containment = !path.segments.is_empty()
                && pg_plain_keys(&path.segments).is_some()
                && values.iter().all(|v| matches!(v, Literal::Text(_) | Literal::Bool(_)));
            if containment {
                // The value equals one, or is an array with an element equal to one:
                // exactly jsonb containment, which the `docb` GIN index answers.
                q.sql("(");
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        q.sql(" OR ");
                    }
                    let literal = literal_json(v);
                    q.sql("c.docb @> ")
                        .text(nested(&path.segments, literal.clone()).to_string())
                        .sql("::jsonb OR c.docb @> ")
                        .text(nested(&path.segments, json!([literal])).to_string())
                        .sql("::jsonb");
                }
                q.sql(")");
                return;
            }
            let cond = |q: &mut SqlBuilder, _: &mut Ctx, operand: &PgOperand| {
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        q.sql(" OR ");
                    }
                    pg_equals(q, operand, v);
                }
            };
            q.sql("COALESCE(");
            pg_along_path(q, ctx, path, &|q, ctx, operand| pg_value_or_any_element(q, ctx, operand, &cond));
            q.sql(", false)");
        }
        RawFilter::IsNull { path, negated } => {
            let leaf = |q: &mut SqlBuilder, _: &mut Ctx, operand: &PgOperand| {
                q.sql("COALESCE(");
                operand.json_type(q);
                q.sql(", 'null')").sql(if *negated { " <> 'null'" } else { " = 'null'" });
            };
            pg_along_path(q, ctx, path, &leaf);
        }
    }
}

/// A `rawsort` key in SQLite's order of `json_extract` values: present values first
/// (missing and JSON null last in both directions), then numbers and booleans (as 0/1)
/// by value, then text bytewise, arrays and objects as their JSON text among the text.
/// One record per row, so the document is read once per key: (absent, rank, number,
/// UTF-8 bytes); for a descending key the first field is "present", so that absent
/// values still come last.
fn pg_rawsort_key(q: &mut SqlBuilder, key: &SortKey) {
    let segments = &key.path.segments;
    q.sql(if key.descending {
        "(SELECT ROW(COALESCE(t, 'null') <> 'null', "
    } else {
        "(SELECT ROW(COALESCE(t, 'null') = 'null', "
    });
    q.sql(
        "CASE t WHEN 'number' THEN 1 WHEN 'boolean' THEN 1 WHEN 'string' THEN 2 WHEN 'array' THEN 2 WHEN 'object' THEN 2 END, \
         CASE t WHEN 'number' THEN v::float8 WHEN 'boolean' THEN CASE WHEN v::boolean THEN 1 ELSE 0 END END, \
         convert_to(CASE t WHEN 'string' THEN v #>> '{}' WHEN 'array' THEN ",
    );
    pg_json_text(q, segments);
    q.sql(" WHEN 'object' THEN ");
    pg_json_text(q, segments);
    q.sql(" END, 'UTF8')) FROM (SELECT v, jsonb_typeof(v) AS t FROM (SELECT ");
    pg_get(q, "c.docb", segments);
    q.sql(" AS v OFFSET 0) AS a) AS b)").sql(if key.descending { " DESC, " } else { " ASC, " });
}

/// A `likein` pattern (Rust `regex` syntax, validated by the parser) in PostgreSQL's
/// ARE syntax, for the constructs that are spelled differently: `\b`/`\B` (word
/// boundaries) are `\y`/`\Y`, `\z` is `\Z`, named groups become plain groups, and `.`
/// outside brackets does not match a newline. What ARE lacks (`\p{…}` classes, inline
/// flags after the start) stays as written and fails to compile on PostgreSQL.
fn pg_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push('\\');
                    break;
                };
                match (in_class, e) {
                    (false, 'b') => out.push_str("\\y"),
                    (false, 'B') => out.push_str("\\Y"),
                    (false, 'z') => out.push_str("\\Z"),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                class_start = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                continue;
            }
            ']' if in_class && !class_start => {
                in_class = false;
                out.push(']');
            }
            '.' if !in_class => out.push_str("[^\\n]"),
            '(' if !in_class && chars.peek() == Some(&'?') => {
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with("?P<") || (rest.starts_with("?<") && !rest.starts_with("?<=") && !rest.starts_with("?<!")) {
                    // Skip the group's name.
                    for n in chars.by_ref() {
                        if n == '>' {
                            break;
                        }
                    }
                    out.push('(');
                } else {
                    out.push('(');
                }
            }
            other => out.push(other),
        }
        class_start = false;
    }
    out
}

#[cfg(test)]
pub(crate) fn pg_regex_for_tests(pattern: &str) -> String {
    pg_regex(pattern)
}
