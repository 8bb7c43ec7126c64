//! The SQL of each list filter: the WHERE clause a [`ContentFilter`] adds to a list
//! query, as a set of keys or as a probe per document ([`Form`]).

use super::checks::CheckTable;
use super::{geo, rawfilter_sql, value_tags, walk, ContentFilter};
use crate::sql::{escape_like, Dialect, SqlBuilder};

/// How a filter over a side table (tags, titles, event dates) is written. Both forms
/// select the same documents; they differ in which plan they leave the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `c.id_key IN (SELECT …)`: the matching keys as a set, read once from the side
    /// table's index — the plan when the matches drive the query (counts, sorts).
    Set,
    /// `EXISTS (SELECT … WHERE … = c.id_key)`: one index probe per document — the plan
    /// when an ordered walk of the documents stops after a page (`walk`).
    Probe,
}

/// A filter over side table `table` (aliased `alias`, keyed by `entity, id_key`) in
/// `form`: the entity's rows that `conditions` (each ` AND …`) select. Every side-table
/// filter needs both forms: a probe alone, run once per document, made a rare value
/// (a place, a language no document has) walk the whole entity on SQLite for the page
/// and again for its count.
fn side_table_filter(
    q: &mut SqlBuilder,
    form: Form,
    table: &str,
    alias: &str,
    entity: &'static str,
    conditions: impl FnOnce(&mut SqlBuilder),
) {
    match form {
        Form::Set => q
            .sql("c.id_key IN (SELECT ")
            .sql(alias)
            .sql(".id_key FROM "),
        Form::Probe => q.sql("EXISTS (SELECT 1 FROM "),
    };
    q.sql(table)
        .sql(" ")
        .sql(alias)
        .sql(" WHERE ")
        .sql(alias)
        .sql(".entity = ")
        .text(entity);
    if form == Form::Probe {
        q.sql(" AND ").sql(alias).sql(".id_key = c.id_key");
    }
    conditions(q);
    match form {
        Form::Set => {
            q.sql(")");
        }
        Form::Probe => walk::close_probe(q),
    }
}

/// Documents carrying one of `tags` of `kind` in `content_tag` (location ids, area ids,
/// indexed field values), in `form` like the tag filters.
fn side_tags(q: &mut SqlBuilder, entity: &'static str, kind: &str, tags: &[String], form: Form) {
    if tags.is_empty() {
        q.sql("0 = 1");
        return;
    }
    side_table_filter(q, form, "content_tag", "t", entity, |q| {
        q.sql(" AND t.kind = ")
            .text(kind)
            .sql(" AND t.tag IN ")
            .list(tags.iter().cloned());
    });
}

pub(super) fn compile_filter(
    q: &mut SqlBuilder,
    filter: &ContentFilter,
    entity: &'static str,
    form: Form,
    checks: &mut CheckTable,
) {
    match filter {
        ContentFilter::IdIn(ids) => {
            q.sql("c.id_key IN ").list(ids.iter().cloned());
        }
        ContentFilter::SourceIn(sources) => {
            q.sql("c.source IN ").list(sources.iter().cloned());
        }
        ContentFilter::Active(active) => {
            q.sql("c.active = ").bool_param(*active);
        }
        ContentFilter::ChangedSince(ts) => {
            q.sql("c.last_change >= ").text(ts.clone());
        }
        ContentFilter::ChangedUntil(ts) => {
            q.sql("c.last_change <= ").text(ts.clone());
        }
        ContentFilter::HasAllLanguages(langs) => {
            q.sql("(");
            for (i, lang) in langs.iter().enumerate() {
                if i > 0 {
                    q.sql(" AND ");
                }
                side_table_filter(q, form, "content_language", "l", entity, |q| {
                    q.sql(" AND l.lang = ").text(lang.clone());
                });
            }
            q.sql(")");
        }
        ContentFilter::Search {
            folded_term,
            id_key,
            languages,
        } => match form {
            Form::Set => compile_search(q, entity, folded_term, id_key, languages.as_deref()),
            Form::Probe => walk::probe_search(q, entity, folded_term, id_key, languages.as_deref()),
        },
        ContentFilter::Raw { filter, parameter } => match value_tags::as_field_tags(filter) {
            Some((kind, values)) => side_tags(q, entity, kind, &values, form),
            None => rawfilter_sql::compile_rawfilter(q, filter, parameter, checks),
        },
        ContentFilter::Tags { kind, filter } => match form {
            Form::Set => filter.compile(q, entity, kind),
            Form::Probe => filter.compile_probe(q, entity, kind),
        },
        ContentFilter::DateOverlap { begin, end } => {
            side_table_filter(q, form, "content_date", "d", entity, |q| {
                if let Some(begin) = begin {
                    q.sql(" AND d.date_end >= ").text(begin.clone());
                }
                if let Some(end) = end {
                    q.sql(" AND d.date_begin < ").text(end.clone());
                }
            });
        }
        ContentFilter::Radius(circle) => geo::compile_circle(q, circle),
        ContentFilter::Area(area) => geo::compile_area(q, area, form),
        ContentFilter::LocationIn(ids) => side_tags(q, entity, "location", ids, form),
        ContentFilter::AreaIn(ids) => side_tags(q, entity, "area", ids, form),
    }
}

/// Shortest term the SQLite trigram index answers (FTS5 `trigram` indexes 3-character
/// sequences; a shorter term reads every title of the entity).
pub const MIN_TRIGRAM_CHARS: usize = 3;

/// `searchfilter`: the documents with a title (in `languages`, or any) containing the
/// folded term, plus the one whose id is the term. The substring test is always the
/// `LIKE` on `content_title.folded`; the index only narrows which titles it reads:
/// on SQLite the FTS5 trigram table `content_title_fts` (candidates by rowid, a
/// superset of the matches: its per-character case folding keeps every substring a
/// substring), on PostgreSQL the `pg_trgm` GIN index on the same column, which the
/// planner picks for the `LIKE` itself. Driven from the matching titles, not from
/// every document of the entity.
fn compile_search(
    q: &mut SqlBuilder,
    entity: &'static str,
    folded_term: &str,
    id_key: &str,
    languages: Option<&[String]>,
) {
    q.sql("c.id_key IN (SELECT t.id_key FROM content_title t WHERE ");
    if q.dialect == Dialect::Sqlite && folded_term.chars().count() >= MIN_TRIGRAM_CHARS {
        q.sql("t.rowid IN (SELECT rowid FROM content_title_fts WHERE content_title_fts MATCH ")
            .text(fts_phrase(folded_term))
            .sql(") AND ");
    }
    q.sql("t.entity = ").text(entity);
    if let Some(langs) = languages {
        q.sql(" AND t.lang IN ").list(langs.iter().cloned());
    }
    q.sql(" AND t.folded LIKE ")
        .text(format!("%{}%", escape_like(folded_term)))
        .sql(" ESCAPE '\\' UNION ALL SELECT ")
        .text(id_key.to_string())
        .sql(")");
}

/// An FTS5 query matching `term` as one phrase: every character literal (a double
/// quote doubled), so no FTS5 operator or column filter can come from the client.
fn fts_phrase(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}
