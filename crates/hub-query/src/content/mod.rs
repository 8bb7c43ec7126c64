//! Content API queries: what a list request asks of the document store, and its
//! compilation to SQL.
//!
//! The compiled SQL expects this layout (created by `hub-store`'s migrations):
//!
//! | table | columns |
//! |---|---|
//! | `content` | `entity`, `id_key` (lower-case id), `id`, `sort_key` (folded Shortname), `source` (lower case), `active`, `last_change` (normalised UTC text), `latitude`, `longitude`, `doc` (the JSON document), `docb` (its JSONB copy, read by `rawfilter`) |
//! | `content_language` | `entity`, `id_key`, `lang` — one row per language of `HasLanguage` |
//! | `content_title` | `entity`, `id_key`, `lang`, `folded` — one row per title field and language, case-folded |
//! | `content_tag` | `entity`, `id_key`, `tag` — lower-case tag ids, also as `source.id` |

use crate::sql::{escape_like, Dialect, SqlBuilder, SqlValue};

pub mod checks;
pub mod cql2;
mod cursor;
pub mod geo;
pub mod polygon;
pub mod rawfilter;
mod rawfilter_pg;
pub mod rawfilter_sql;
pub mod tagfilter;

use checks::CheckTable;
use rawfilter::{RawFilter, SortKey};
use tagfilter::TagFilter;

/// One condition of a list query; a query's conditions are combined with AND.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentFilter {
    /// Ids, already lower-cased (ids match case-insensitively).
    IdIn(Vec<String>),
    /// `_Meta.Source` values, lower case.
    SourceIn(Vec<String>),
    Active(bool),
    /// Last change at or after this normalised timestamp.
    ChangedSince(String),
    /// Last change at or before this normalised timestamp (OGC `datetime` intervals).
    ChangedUntil(String),
    /// The document has every one of these languages.
    HasAllLanguages(Vec<String>),
    /// Case-folded substring of a title field (in `languages`, or in any language when
    /// `None`), or the exact id.
    Search {
        folded_term: String,
        id_key: String,
        languages: Option<Vec<String>>,
    },
    /// A `rawfilter` expression; `parameter` names the query parameter its text came
    /// from (`rawfilter`, `expression`, `filteronfields`), which errors name.
    Raw {
        filter: RawFilter,
        parameter: &'static str,
    },
    /// A tag filter over `content_tag` rows of `kind` (`tag` or `hubtag`).
    Tags {
        kind: &'static str,
        filter: TagFilter,
    },
    /// An `EventDate` range (table `content_date`) overlaps `[begin, end)`; bounds are
    /// `YYYY-MM-DD HH:MM:SS`, either may be open.
    DateOverlap {
        begin: Option<String>,
        end: Option<String>,
    },
    /// Position within a radius (`latitude`, `longitude`, `radius`).
    Radius(geo::GeoCircle),
    /// Position related to an area (`polygon`).
    Area(geo::GeoArea),
    /// `LocationInfo` ids as `reg…`/`tvs…`/`mun…`/`fra…` tokens, lower case; any matches.
    LocationIn(Vec<String>),
    /// `AreaIds`, lower case; any matches.
    AreaIn(Vec<String>),
}

/// The order of a list.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentOrder {
    /// Shortname (folded), then id.
    Default,
    /// A stable pseudo-random permutation for this seed, then id.
    Seed(String),
    /// `rawsort` keys (missing values last), then id.
    Raw(Vec<SortKey>),
    /// Next `EventDate` begin at or after `now` (events without one last), then id.
    NextBegin { descending: bool, now: String },
    /// Distance from a centre, nearest first, then id.
    Distance { latitude: f64, longitude: f64 },
}

/// A page request: 1-based page number and page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub size: u32,
    pub number: u32,
}

impl Page {
    pub fn offset(&self) -> u64 {
        (self.number as u64 - 1) * self.size as u64
    }
}

/// A list request against one entity type.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentQuery {
    pub entity: &'static str,
    pub filters: Vec<ContentFilter>,
    pub order: ContentOrder,
    pub page: Page,
}

/// The SQL for the page of documents and for the total count.
pub struct CompiledList {
    pub page: SqlBuilder,
    pub count: SqlBuilder,
    /// When true, every page row carries the total as its second column, so `count`
    /// is needed only when the page is empty (a page past the last).
    pub page_has_total: bool,
    /// The checks both statements leave to the database (the same ids in both: they
    /// share one WHERE clause), to resolve a failed one to the client's parameter.
    pub checks: CheckTable,
}

impl ContentQuery {
    pub fn compile(&self, dialect: Dialect) -> CompiledList {
        if let ContentOrder::Distance {
            latitude,
            longitude,
        } = self.order
        {
            return geo::compile_nearest(self, dialect, latitude, longitude);
        }
        if let Some((page, checks)) = self.compile_keys_first(dialect) {
            let page_has_total = !self.filters.is_empty();
            return CompiledList {
                page,
                count: self.compile_count(dialect),
                page_has_total,
                checks,
            };
        }
        let mut page = SqlBuilder::new(dialect);
        page.sql("SELECT c.doc FROM content c");
        let checks = self.where_clause(&mut page);
        page.sql(" ORDER BY ");
        match &self.order {
            ContentOrder::Default => {
                page.sql("c.sort_key, c.id_key");
            }
            ContentOrder::Seed(seed) => {
                seed_order_key(&mut page, seed);
                page.sql(", c.id_key");
            }
            ContentOrder::Raw(keys) => {
                rawfilter_sql::compile_rawsort(&mut page, keys);
                page.sql("c.id_key");
            }
            ContentOrder::NextBegin { descending, now } => {
                next_begin_order(&mut page, self.entity, *descending, now);
            }
            ContentOrder::Distance {
                latitude,
                longitude,
            } => {
                geo::compile_distance_order(&mut page, *latitude, *longitude);
                page.sql(", c.id_key");
            }
        }
        page.sql(" LIMIT ")
            .param(SqlValue::Int(self.page.size as i64))
            .sql(" OFFSET ")
            .param(SqlValue::Int(self.page.offset() as i64));

        CompiledList {
            page,
            count: self.compile_count(dialect),
            page_has_total: false,
            checks,
        }
    }

    fn compile_count(&self, dialect: Dialect) -> SqlBuilder {
        let mut count = SqlBuilder::new(dialect);
        count.sql("SELECT COUNT(*) FROM content c");
        self.where_clause(&mut count);
        count
    }

    /// For orders computed from indexed columns: find the page's keys first (from the
    /// `(entity, sort_key, id_key)` index where possible), then read only those
    /// documents. Sorting whole documents of every match is what made filtered pages slow.
    fn compile_keys_first(&self, dialect: Dialect) -> Option<(SqlBuilder, CheckTable)> {
        // With filters, the total comes from the same pass (a window count) instead of
        // evaluating the filters a second time; a plain list counts from the index.
        let with_total = !self.filters.is_empty();
        let mut page = SqlBuilder::new(dialect);
        page.sql(if with_total {
            "SELECT c.doc, p.n FROM (SELECT c.id_key AS k, COUNT(*) OVER () AS n, "
        } else {
            "SELECT c.doc FROM (SELECT c.id_key AS k, "
        });
        match &self.order {
            ContentOrder::Default => {
                page.sql("c.sort_key");
            }
            ContentOrder::Seed(seed) => seed_order_key(&mut page, seed),
            _ => return None,
        }
        page.sql(" AS o FROM content c");
        let checks = self.where_clause(&mut page);
        page.sql(" ORDER BY o, k LIMIT ")
            .param(SqlValue::Int(self.page.size as i64))
            .sql(" OFFSET ")
            .param(SqlValue::Int(self.page.offset() as i64))
            .sql(") p JOIN content c ON c.entity = ")
            .text(self.entity)
            .sql(" AND c.id_key = p.k ORDER BY p.o, p.k");
        Some((page, checks))
    }

    /// Appends the WHERE clause; returns the checks it leaves to the database. The
    /// clause is deterministic, so every statement of one query gets the same ids.
    pub(crate) fn where_clause(&self, q: &mut SqlBuilder) -> CheckTable {
        let mut checks = CheckTable::default();
        q.sql(" WHERE c.entity = ").text(self.entity);
        for filter in &self.filters {
            q.sql(" AND ");
            compile_filter(q, filter, self.entity, &mut checks);
        }
        checks
    }
}

fn compile_filter(
    q: &mut SqlBuilder,
    filter: &ContentFilter,
    entity: &'static str,
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
                q.sql("EXISTS (SELECT 1 FROM content_language l WHERE l.entity = c.entity AND l.id_key = c.id_key AND l.lang = ")
                    .text(lang.clone())
                    .sql(")");
            }
            q.sql(")");
        }
        ContentFilter::Search {
            folded_term,
            id_key,
            languages,
        } => {
            q.sql("(EXISTS (SELECT 1 FROM content_title t WHERE t.entity = c.entity AND t.id_key = c.id_key");
            if let Some(langs) = languages {
                q.sql(" AND t.lang IN ").list(langs.iter().cloned());
            }
            q.sql(" AND t.folded LIKE ")
                .text(format!("%{}%", escape_like(folded_term)))
                .sql(" ESCAPE '\\') OR c.id_key = ")
                .text(id_key.clone())
                .sql(")");
        }
        ContentFilter::Raw { filter, parameter } => {
            rawfilter_sql::compile_rawfilter(q, filter, parameter, checks);
        }
        ContentFilter::Tags { kind, filter } => {
            filter.compile(q, entity, kind);
        }
        ContentFilter::DateOverlap { begin, end } => {
            q.sql("c.id_key IN (SELECT d.id_key FROM content_date d WHERE d.entity = ")
                .text(entity);
            if let Some(begin) = begin {
                q.sql(" AND d.date_end >= ").text(begin.clone());
            }
            if let Some(end) = end {
                q.sql(" AND d.date_begin < ").text(end.clone());
            }
            q.sql(")");
        }
        ContentFilter::Radius(circle) => geo::compile_circle(q, circle),
        ContentFilter::Area(area) => geo::compile_area(q, area),
        ContentFilter::LocationIn(ids) => geo::compile_side_tags(q, "location", ids),
        ContentFilter::AreaIn(ids) => geo::compile_side_tags(q, "area", ids),
    }
}

/// Orders by the first `EventDate` begin among ranges not yet over at `now`; events
/// without one come last in both directions.
fn next_begin_order(q: &mut SqlBuilder, entity: &'static str, descending: bool, now: &str) {
    for suffix in [" IS NULL, ", if descending { " DESC, " } else { " ASC, " }] {
        q.sql("(SELECT MIN(d.date_begin) FROM content_date d WHERE d.entity = ")
            .text(entity)
            .sql(" AND d.id_key = c.id_key AND d.date_end >= ")
            .text(now)
            .sql(")")
            .sql(suffix);
    }
    q.sql("c.id_key");
}

/// The seeded order key: the first 15 hex digits of `md5(id_key || seed)` as an integer.
/// SQLite gets the same function registered by the store, so both backends agree.
fn seed_order_key(q: &mut SqlBuilder, seed: &str) {
    match q.dialect {
        Dialect::Sqlite => {
            q.sql("hub_seed(c.id_key, ").text(seed).sql(")");
        }
        Dialect::Postgres => {
            q.sql("('x' || substr(md5(c.id_key || ")
                .text(seed)
                .sql("), 1, 15))::bit(60)::bigint");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(filters: Vec<ContentFilter>, order: ContentOrder) -> ContentQuery {
        ContentQuery {
            entity: "Event",
            filters,
            order,
            page: Page {
                size: 10,
                number: 3,
            },
        }
    }

    #[test]
    fn compiles_filters_with_bound_values_only() {
        let q = query(
            vec![
                ContentFilter::SourceIn(vec!["lts".into()]),
                ContentFilter::Active(true),
                ContentFilter::Search {
                    folded_term: "50%'; drop".into(),
                    id_key: "x".into(),
                    languages: Some(vec!["de".into()]),
                },
            ],
            ContentOrder::Default,
        );
        let compiled = q.compile(Dialect::Sqlite);
        let sql = compiled.page.as_sql();
        assert!(!sql.contains("drop"), "{sql}");
        assert!(sql.ends_with("ORDER BY o, k LIMIT ?7 OFFSET ?8) p JOIN content c ON c.entity = ?9 AND c.id_key = p.k ORDER BY p.o, p.k"), "{sql}");
        assert_eq!(
            compiled.page.params()[4],
            SqlValue::Text("%50\\%'; drop%".into())
        );
        assert_eq!(compiled.page.params()[7], SqlValue::Int(20));
        assert!(!compiled.count.as_sql().contains("LIMIT"));
    }

    #[test]
    fn seed_order_differs_per_dialect_but_binds_the_seed() {
        let q = query(vec![], ContentOrder::Seed("7".into()));
        let sqlite = q.compile(Dialect::Sqlite);
        assert!(
            sqlite.page.as_sql().contains("hub_seed(c.id_key, ?1)"),
            "{}",
            sqlite.page.as_sql()
        );
        assert_eq!(sqlite.page.params()[0], SqlValue::Text("7".into()));
        assert!(q
            .compile(Dialect::Postgres)
            .page
            .as_sql()
            .contains("md5(c.id_key || $1)"));
    }
}
