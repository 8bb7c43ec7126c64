//! Compilation of `rawfilter` / `rawsort` ASTs to SQL over the `doc` column. Paths and
//! values are always bound parameters (paths are validated identifiers first).
//!
//! SQLite: `json_extract` / `json_type` on `c.docb` (the JSONB copy of `doc`); a `[*]` segment becomes
//! `EXISTS (SELECT 1 FROM json_each(…) jN WHERE …)`. Comparisons are typed: the JSON type
//! of the value must match the literal (boolean, number, text or date as text, array for
//! `[]`); a missing or null value does not match. A value of another type is a client
//! error, raised by the store's registered `hub_rf_check(type, kinds, check)` function
//! while the query runs: it reports only the check id (see [`super::checks`]), which
//! the store resolves to the parameter and position through the compiled query's
//! [`CheckTable`] and answers as a 400.
//! `like` uses `hub_rf_contains` (Unicode case folding), `likein` uses `hub_rf_regexp`.
//! `in`/`nin`/`likein` on an array value match when any element matches.
//!
//! PostgreSQL gives the same matches, order and errors over `c.docb` (`jsonb`), with
//! the functions of the store's `content_functions.sql`: each path is read once per row
//! (`#>`, or a strict jsonpath where an index segment could meet an object), every
//! comparison is guarded by its `jsonb_typeof` test, a mismatch calls `hub_rf_fail`
//! (SQLSTATE HR001 carrying only the check id and the type found; the store makes it a
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

use super::checks::{wanted_description, CheckTable, QueryCheck};
use super::rawfilter::{CompareOp, JsonPath, Literal, PathSegment, RawFilter, SortKey};
use crate::sql::{Dialect, SqlBuilder, SqlValue};

/// Appends the condition for `filter`; `parameter` names the query parameter the text
/// came from. Each typed comparison registers a check in `checks`; only its id goes
/// into the SQL.
pub fn compile_rawfilter(
    q: &mut SqlBuilder,
    filter: &RawFilter,
    parameter: &'static str,
    checks: &mut CheckTable,
) {
    checks.note_parameter(parameter);
    let mut ctx = Ctx {
        parameter,
        checks,
        next_alias: 0,
    };
    match q.dialect {
        Dialect::Sqlite => sqlite_filter(q, &mut ctx, filter),
        Dialect::Postgres => super::rawfilter_pg::pg_filter(q, &mut ctx, filter),
    }
}

/// Appends `key1, key2, ` (each followed by `, `) for an ORDER BY; missing values last.
pub fn compile_rawsort(q: &mut SqlBuilder, keys: &[SortKey]) {
    rawsort_terms(q, keys, &mut |q, descending| {
        q.sql(if descending { " DESC, " } else { " ASC, " });
    });
}

/// Appends the terms of the same order as columns `o0, o1, …` of a SELECT (each
/// followed by `, `), and returns whether each is descending, for an ORDER BY over them.
pub fn compile_rawsort_columns(q: &mut SqlBuilder, keys: &[SortKey]) -> Vec<bool> {
    let mut descending = Vec::new();
    rawsort_terms(q, keys, &mut |q, term_descending| {
        q.sql(&format!(" AS o{}, ", descending.len()));
        descending.push(term_descending);
    });
    descending
}

/// Writes the terms of the order of `keys`, calling `end` after each with whether it is
/// descending.
fn rawsort_terms(q: &mut SqlBuilder, keys: &[SortKey], end: &mut dyn FnMut(&mut SqlBuilder, bool)) {
    for key in keys {
        let column = text_column(&key.path);
        match q.dialect {
            Dialect::Sqlite => {
                let path = sqlite_path(&key.path.segments);
                // The binary copy: the same values as from the text, without parsing
                // every document of the list; a configured path from its index. A
                // column holding the path's text is read first, and the document (by
                // rowid, so that an index holding the column still covers the list)
                // only where the column is NULL.
                let value = |q: &mut SqlBuilder| match column {
                    Some(column) => {
                        q.sql("COALESCE(")
                            .sql(column)
                            .sql(", (SELECT json_extract(d.docb, ")
                            .text(path.clone())
                            .sql(") FROM content d WHERE d.rowid = c.rowid))");
                    }
                    // A configured path reads from its index (`rawfilter_index`).
                    None => Operand::Doc(path.clone()).value(q),
                };
                value(q);
                q.sql(" IS NULL");
                end(q, false);
                value(q);
                end(q, key.descending);
            }
            Dialect::Postgres => super::rawfilter_pg::pg_rawsort_key(q, key, column, end),
        }
    }
}

/// Whether the order of `keys` reads only columns of text (`rawsort=-Shortname`) and
/// starts descending. The name column's bytes sort nearly as the folded names of
/// `c.sort_key`, the order the entity's index hands out its rows in, so such an order
/// takes the rows of a whole list nearly in reverse.
pub(super) fn descending_along_columns(keys: &[SortKey]) -> bool {
    keys.first().is_some_and(|key| key.descending)
        && keys.iter().all(|key| text_column(&key.path).is_some())
}

/// The column of `content` holding the value at `path` wherever that value is text
/// (NULL where it is anything else or missing): `Shortname`, the name lists are most
/// often sorted by, is `c.shortname`. Reading it spares reading each document.
fn text_column(path: &JsonPath) -> Option<&'static str> {
    match path.segments.as_slice() {
        [PathSegment::Key(key)] if key == "Shortname" => Some("c.shortname"),
        _ => None,
    }
}

pub(super) struct Ctx<'a> {
    parameter: &'static str,
    checks: &'a mut CheckTable,
    next_alias: usize,
}

impl Ctx<'_> {
    pub(super) fn alias(&mut self) -> usize {
        self.next_alias += 1;
        self.next_alias
    }

    /// Registers the type check of the literal at `position` and binds its id.
    pub(super) fn check_id(&mut self, q: &mut SqlBuilder, position: usize, value: &Literal) {
        let id = self.checks.register(QueryCheck {
            parameter: self.parameter,
            position,
            wanted: wanted_description(value),
        });
        q.param(SqlValue::Int(id as i64));
    }
}

pub(super) fn op_sql(op: CompareOp) -> &'static str {
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
pub(super) fn sqlite_path(segments: &[PathSegment]) -> String {
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
            Operand::Doc(p) if super::rawfilter_index::is_literal(p) => {
                // The same SQL value as `json_extract`, in the form the index holds.
                q.sql("(c.docb ->> '").sql(p).sql("')");
            }
            Operand::Doc(p) => {
                q.sql("json_extract(c.docb, ").text(p.clone()).sql(")");
            }
            Operand::Elem(n, None) => {
                q.sql(&format!("j{n}.value"));
            }
            Operand::Elem(n, Some(p)) => {
                q.sql(&format!(
                    "CASE WHEN j{n}.type{CONTAINER}json_extract(j{n}.value, "
                ))
                .text(p.clone())
                .sql(") END");
            }
        }
    }

    fn json_type(&self, q: &mut SqlBuilder) {
        match self {
            Operand::Doc(p) => {
                q.sql("json_type(c.docb, ");
                doc_path(q, p);
                q.sql(")");
            }
            Operand::Elem(n, None) => {
                q.sql(&format!("j{n}.type"));
            }
            Operand::Elem(n, Some(p)) => {
                q.sql(&format!(
                    "CASE WHEN j{n}.type{CONTAINER}json_type(j{n}.value, "
                ))
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
                q.sql(&format!("CASE WHEN j{n}.type{CONTAINER}j{n}.value END, "))
                    .text(p.clone());
            }
        }
    }
}

/// A document path: bound, or — for a path of a configured index — written as the
/// literal the index's expressions hold, so that SQLite reads the type from the index
/// (see [`super::rawfilter_index`]).
fn doc_path(q: &mut SqlBuilder, path: &str) {
    if super::rawfilter_index::is_literal(path) {
        q.sql("'").sql(path).sql("'");
    } else {
        q.text(path.to_string());
    }
}

type Leaf<'a> = &'a dyn Fn(&mut SqlBuilder, &mut Ctx, &Operand);

/// Walks `path`, opening one `EXISTS (… json_each …)` per `[*]`, and emits `leaf` for
/// the operand the path ends at.
fn along_path(q: &mut SqlBuilder, ctx: &mut Ctx, path: &JsonPath, leaf: Leaf) {
    let groups: Vec<&[PathSegment]> = path
        .segments
        .split(|s| *s == PathSegment::AnyElement)
        .collect();
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

/// `(a AND b …)` or `(a OR b …)`: the boolean skeleton both dialects share; `part`
/// compiles each member in the dialect at hand.
pub(super) fn boolean_group(
    q: &mut SqlBuilder,
    ctx: &mut Ctx,
    all: bool,
    parts: &[RawFilter],
    part: fn(&mut SqlBuilder, &mut Ctx, &RawFilter),
) {
    q.sql("(");
    for (i, member) in parts.iter().enumerate() {
        if i > 0 {
            q.sql(if all { " AND " } else { " OR " });
        }
        part(q, ctx, member);
    }
    q.sql(")");
}

fn sqlite_filter(q: &mut SqlBuilder, ctx: &mut Ctx, filter: &RawFilter) {
    match filter {
        RawFilter::And(parts) | RawFilter::Or(parts) => boolean_group(
            q,
            ctx,
            matches!(filter, RawFilter::And(_)),
            parts,
            sqlite_filter,
        ),
        RawFilter::Not(inner) => {
            q.sql("NOT COALESCE(");
            sqlite_filter(q, ctx, inner);
            q.sql(", 0)");
        }
        RawFilter::Compare {
            op,
            path,
            value,
            position,
        } => {
            let leaf = |q: &mut SqlBuilder, ctx: &mut Ctx, operand: &Operand| {
                q.sql("CASE WHEN hub_rf_check(");
                operand.json_type(q);
                q.sql(", ").text(kinds(value)).sql(", ");
                ctx.check_id(q, *position, value);
                q.sql(") THEN ");
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
            along_path(q, ctx, path, &|q, ctx, operand| {
                value_or_any_element(q, ctx, operand, &cond)
            });
        }
        RawFilter::In {
            path,
            values,
            negated,
        } => {
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
            along_path(q, ctx, path, &|q, ctx, operand| {
                value_or_any_element(q, ctx, operand, &cond)
            });
            q.sql(", 0)");
        }
        RawFilter::IsNull { path, negated } => {
            let leaf = |q: &mut SqlBuilder, _: &mut Ctx, operand: &Operand| {
                q.sql("COALESCE(");
                operand.json_type(q);
                q.sql(", 'null')")
                    .sql(if *negated { " <> 'null'" } else { " = 'null'" });
            };
            along_path(q, ctx, path, &leaf);
        }
    }
}
