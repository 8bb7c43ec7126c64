//! `rawfilter` / `rawsort` for PostgreSQL, split from `rawfilter_sql` (which holds the
//! entry points and the SQLite branch, the specification this branch follows).
//!
//! The same structure over `c.docb` (`jsonb`): `jsonb_typeof` stands for `json_type`
//! (`number` for `integer`/`real`, `string` for `text`), `hub_rf_each` for `json_each`
//! (array elements, object member values, or a scalar itself), and a mismatch calls
//! `hub_rf_fail(check, type)`, which raises SQLSTATE HR001 carrying only the check id
//! and the type found (see `hub-store/src/postgres/sql/content_functions_v5.sql`). Every comparison is guarded by
//! its type test in a `CASE`, so no cast can fail on another type.

use serde_json::{json, Map, Value};

use super::rawfilter::{CompareOp, JsonPath, Literal, PathSegment, RawFilter, SortKey};
use super::rawfilter_index;
use super::rawfilter_sql::{boolean_group, op_sql, sqlite_path, Ctx};
use crate::sql::{SqlBuilder, SqlValue};

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
/// document's key order), for a value `pg_get` found to be a container; read by the
/// row's key (`through_key`, or for a configured path) so that an index can cover the
/// statement (see [`by_key`]).
fn pg_json_text(q: &mut SqlBuilder, segments: &[PathSegment], through_key: bool) {
    let items: Vec<String> = segments
        .iter()
        .map(|s| match s {
            PathSegment::Key(k) => k.clone(),
            PathSegment::Index(n) => n.to_string(),
            PathSegment::AnyElement => String::new(),
        })
        .collect();
    let through_key = through_key || configured_member(segments).is_some();
    of_row(q, through_key, |q, row| {
        q.sql(&format!("({row}.doc::json #> ("))
            .text(text_array(&items))
            .sql("::text)::text[])::text");
    });
}

/// The member of `c.path_values` holding the value at `segments`, if the path is a
/// configured one (see `rawfilter_index`).
fn configured_member(segments: &[PathSegment]) -> Option<String> {
    let member = sqlite_path(segments);
    (!segments.is_empty() && rawfilter_index::is_configured(&member)).then_some(member)
}

/// `value` of the row read again by its key, as `d`. A statement over configured paths
/// (or sorted by a column's text) names no other column of `c` than its key,
/// `shortname` and `path_values`, which the index `content_order_values` holds, so
/// PostgreSQL answers it from that index alone (70,000 POIs: 70 ms against 215 ms
/// through the rows, whose documents fill 380 MB).
fn by_key(q: &mut SqlBuilder, value: impl FnOnce(&mut SqlBuilder)) {
    q.sql("(SELECT ");
    value(q);
    q.sql(" FROM content d WHERE d.entity = c.entity AND d.id_key = c.id_key)");
}

/// `value` over the row's columns as named by the alias it is given: `c`, or with
/// `through_key` the row read again by its key ([`by_key`]).
fn of_row(q: &mut SqlBuilder, through_key: bool, value: impl FnOnce(&mut SqlBuilder, &str)) {
    if through_key {
        by_key(q, |q| value(q, "d"));
    } else {
        value(q, "c");
    }
}

/// The `jsonb` value at `segments` below the `jsonb` expression `base`.
fn pg_get(q: &mut SqlBuilder, base: &str, segments: &[PathSegment]) {
    if segments.is_empty() {
        q.sql(base);
        return;
    }
    match pg_plain_keys(segments) {
        Some(keys) => {
            q.sql(&format!("({base} #> ("))
                .text(keys)
                .sql("::text)::text[])");
        }
        None => {
            q.sql(&format!("jsonb_path_query_first({base}, ("))
                .text(format!("strict {}", sqlite_path(segments)))
                .sql("::text)::jsonpath, '{}'::jsonb, true)");
        }
    }
}

/// The `jsonb` value at `segments` of the row's document. A configured path (see
/// `rawfilter_index`) is read from `c.path_values`, which holds it as `[value]` (`[]`
/// where the path finds nothing) without detoasting the document: one such clause over
/// 70,000 POIs took 560 ms from `docb` and 70 ms from the column (scale 10, `psql`). A
/// row whose column lacks the member (written before the configuration named the path)
/// reads its document, so the answer never depends on the column being filled. Any
/// other path is read from `c`, or by the row's key with `through_key`.
fn pg_document_value(q: &mut SqlBuilder, segments: &[PathSegment], through_key: bool) {
    let docb = |q: &mut SqlBuilder, row: &str| pg_get(q, &format!("{row}.docb"), segments);
    let Some(member) = configured_member(segments) else {
        of_row(q, through_key, docb);
        return;
    };
    q.sql("CASE WHEN c.path_values -> ")
        .text(member.clone())
        .sql("::text IS NULL THEN ");
    of_row(q, true, docb);
    q.sql(" ELSE c.path_values -> ")
        .text(member)
        .sql("::text -> 0 END");
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
                q.sql(&format!(
                    "CASE WHEN jsonb_typeof(j{n}.v) IN ('object','array') THEN j{n}.v END"
                ));
            }
            _ => self.value(q),
        }
    }
}

type PgLeaf<'a> = &'a dyn Fn(&mut SqlBuilder, &mut Ctx, &PgOperand);

fn pg_along_path(q: &mut SqlBuilder, ctx: &mut Ctx, path: &JsonPath, leaf: PgLeaf) {
    let groups: Vec<&[PathSegment]> = path
        .segments
        .split(|s| *s == PathSegment::AnyElement)
        .collect();
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
    pg_document_value(q, groups[0], false);
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
fn pg_kind(value: &Literal) -> &'static str {
    match value {
        Literal::Bool(_) => "boolean",
        Literal::Number(_) => "number",
        Literal::Text(_) | Literal::Date(_) => "string",
        Literal::EmptyArray => "array",
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
            q.sql(")::boolean")
                .sql(op_sql(op))
                .param(SqlValue::Bool(*b));
        }
        Literal::Number(n) => {
            q.sql("(");
            operand.value(q);
            q.sql(")::float8").sql(op_sql(op)).param(SqlValue::Real(*n));
        }
        Literal::Text(t) => {
            q.sql("(");
            operand.value(q);
            q.sql(" #>> '{}') COLLATE \"C\"")
                .sql(op_sql(op))
                .text(t.clone());
        }
        Literal::Date(d) => {
            q.sql("hub_rf_datetime(");
            operand.value(q);
            q.sql(" #>> '{}') COLLATE \"C\"")
                .sql(op_sql(op))
                .text(d.clone());
        }
        Literal::EmptyArray => {
            q.sql("CASE WHEN jsonb_array_length(");
            operand.value(q);
            q.sql(") = 0 THEN 0 WHEN jsonb_typeof(");
            operand.value(q);
            q.sql(" -> 0) IN ('object','boolean','null') THEN 1 ELSE -1 END")
                .sql(op_sql(op))
                .sql("0");
        }
    }
}

/// `value = literal` without a type error (the conditions of `in`/`nin`).
fn pg_equals(q: &mut SqlBuilder, operand: &PgOperand, value: &Literal) {
    match value {
        Literal::Bool(_) | Literal::Text(_) | Literal::EmptyArray => {
            q.sql("(");
            operand.value(q);
            q.sql(" = ")
                .text(literal_json(value).to_string())
                .sql("::jsonb)");
        }
        Literal::Number(_) | Literal::Date(_) => {
            q.sql("CASE WHEN ");
            operand.json_type(q);
            q.sql(&format!(" = '{}' THEN ", pg_kind(value)));
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

pub(super) fn pg_filter(q: &mut SqlBuilder, ctx: &mut Ctx, filter: &RawFilter) {
    match filter {
        RawFilter::And(parts) | RawFilter::Or(parts) => boolean_group(
            q,
            ctx,
            matches!(filter, RawFilter::And(_)),
            parts,
            pg_filter,
        ),
        RawFilter::Not(inner) => {
            q.sql("NOT COALESCE(");
            pg_filter(q, ctx, inner);
            q.sql(", false)");
        }
        RawFilter::Compare {
            op,
            path,
            value,
            position,
        } => {
            let leaf = |q: &mut SqlBuilder, ctx: &mut Ctx, operand: &PgOperand| {
                let kind = pg_kind(value);
                q.sql("CASE ");
                operand.json_type(q);
                q.sql(&format!(" WHEN '{kind}' THEN "));
                pg_compare(q, operand, *op, value);
                q.sql(" WHEN 'null' THEN NULL ELSE hub_rf_fail(");
                ctx.check_id(q, *position, value);
                q.sql(", ");
                operand.json_type(q);
                q.sql(") END");
            };
            pg_along_path(q, ctx, path, &leaf);
        }
        RawFilter::Like { path, text } => {
            let leaf = |q: &mut SqlBuilder, _: &mut Ctx, operand: &PgOperand| {
                q.sql("CASE WHEN ");
                operand.json_type(q);
                q.sql(" = 'string' THEN strpos(hub_fold(");
                operand.value(q);
                q.sql(" #>> '{}'), ")
                    .text(hub_model::language::fold(text))
                    .sql(") > 0 END");
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
                    q.sql(" #>> '{}') COLLATE \"und-x-icu\" ~* ")
                        .text(pg_regex(p));
                }
                q.sql(") ELSE false END");
            };
            pg_along_path(q, ctx, path, &|q, ctx, operand| {
                pg_value_or_any_element(q, ctx, operand, &cond)
            });
        }
        RawFilter::In {
            path,
            values,
            negated,
        } => {
            if *negated {
                q.sql("NOT ");
            }
            let containment = !path.segments.is_empty()
                && pg_plain_keys(&path.segments).is_some()
                && values
                    .iter()
                    .all(|v| matches!(v, Literal::Text(_) | Literal::Bool(_)));
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
            pg_along_path(q, ctx, path, &|q, ctx, operand| {
                pg_value_or_any_element(q, ctx, operand, &cond)
            });
            q.sql(", false)");
        }
        RawFilter::IsNull { path, negated } => {
            let leaf = |q: &mut SqlBuilder, _: &mut Ctx, operand: &PgOperand| {
                q.sql("COALESCE(");
                operand.json_type(q);
                q.sql(", 'null')")
                    .sql(if *negated { " <> 'null'" } else { " = 'null'" });
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
///
/// A path whose text a column holds (`text_column`) is four keys instead, the parts of
/// that record, each the column's part where it holds the value and the document's
/// otherwise: no document is read for a row with the column set, and four plain keys
/// sort in less than half the time of one record (70,000 names: 85 against 195 ms).
/// The document is read by the row's key, so that `content_order_values`, which holds
/// the column, covers the statement (70,000 names: 455 → 65 ms).
pub(super) fn pg_rawsort_key(
    q: &mut SqlBuilder,
    key: &SortKey,
    column: Option<&str>,
    end: &mut dyn FnMut(&mut SqlBuilder, bool),
) {
    let segments = &key.path.segments;
    let absent = if key.descending {
        "COALESCE(t, 'null') <> 'null'"
    } else {
        "COALESCE(t, 'null') = 'null'"
    };
    let Some(column) = column else {
        q.sql("(SELECT ROW(")
            .sql(absent)
            .sql(", ")
            .sql(RANK)
            .sql(", ")
            .sql(NUMBER)
            .sql(", ");
        sort_bytes(q, segments, false);
        q.sql(") ");
        sort_value_source(q, segments, false);
        q.sql(")");
        end(q, key.descending);
        return;
    };
    // The record's parts for a text value: (absent, rank 2, no number, its bytes).
    let text_absent = if key.descending { "true" } else { "false" };
    let text_bytes = format!("convert_to({column}, 'UTF8')");
    // Each part from the column, and from the document (`None`: its bytes).
    let parts: [(&str, Option<&str>); 4] = [
        (text_absent, Some(absent)),
        ("2", Some(RANK)),
        ("NULL::float8", Some(NUMBER)),
        (&text_bytes, None),
    ];
    for (from_column, from_document) in parts {
        q.sql("CASE WHEN ")
            .sql(column)
            .sql(" IS NOT NULL THEN ")
            .sql(from_column)
            .sql(" ELSE (SELECT ");
        match from_document {
            Some(part) => {
                q.sql(part);
            }
            None => sort_bytes(q, segments, true),
        }
        q.sql(" ");
        sort_value_source(q, segments, true);
        q.sql(") END");
        end(q, key.descending);
    }
}

/// The rank of a sort value's type `t`: numbers and booleans, then text and containers.
const RANK: &str = "CASE t WHEN 'number' THEN 1 WHEN 'boolean' THEN 1 WHEN 'string' THEN 2 WHEN 'array' THEN 2 WHEN 'object' THEN 2 END";

/// A number or boolean sort value `v` as a number.
const NUMBER: &str =
    "CASE t WHEN 'number' THEN v::float8 WHEN 'boolean' THEN CASE WHEN v::boolean THEN 1 ELSE 0 END END";

/// A text or container sort value `v` as UTF-8 bytes (containers as written).
fn sort_bytes(q: &mut SqlBuilder, segments: &[PathSegment], through_key: bool) {
    q.sql("convert_to(CASE t WHEN 'string' THEN v #>> '{}' WHEN 'array' THEN ");
    pg_json_text(q, segments, through_key);
    q.sql(" WHEN 'object' THEN ");
    pg_json_text(q, segments, through_key);
    q.sql(" END, 'UTF8')");
}

/// `FROM …` giving the value at `segments` as `v` and its type as `t`, reading the
/// document once (every `#>` on `docb` would detoast it again).
fn sort_value_source(q: &mut SqlBuilder, segments: &[PathSegment], through_key: bool) {
    q.sql("FROM (SELECT v, jsonb_typeof(v) AS t FROM (SELECT ");
    pg_document_value(q, segments, through_key);
    q.sql(" AS v OFFSET 0) AS a) AS b");
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
                if rest.starts_with("?P<")
                    || (rest.starts_with("?<")
                        && !rest.starts_with("?<=")
                        && !rest.starts_with("?<!"))
                {
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
