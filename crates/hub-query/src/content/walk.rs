//! Filtered pages in the default order, found by walking the order index.
//!
//! A filtered page sorted by Shortname used to read every match, sort them and keep ten:
//! a cost that grows with the number of matches (a tag carried by a fifth of 70,000
//! documents is 14,000 sort-key reads for a page of ten). The documents are already in
//! that order in the `(entity, sort_key, id_key)` index, so the first page of a filter
//! that matches often is found by walking the index from the start and testing each
//! document ([`Form::Probe`]: one index probe per side-table filter) until the page is
//! full — a cost that grows with the page, not with the data.
//!
//! A filter that matches rarely would walk far, so the walk is bounded: it looks only at
//! the first [`walk_rows`] documents in order (those whose sort key is at most the sort
//! key of the `rows`-th document, a prefix of the order, so what it finds is exactly
//! the start of the full answer). When that prefix holds fewer matches than the page
//! needs, the store runs the ordinary page statement instead (matches first, sorted),
//! which is cheap precisely because the matches are then few.
//!
//! Owns: the walk statement and its bound. Must not: decide totals (the separate count
//! statement and [`super::Total::settle`] do).

use super::{compile_filter, ContentFilter, ContentOrder, ContentQuery, Form};
use crate::sql::{escape_like, Dialect, SqlBuilder, SqlValue};

/// Documents the walk may look at per document of the page's end (`offset + size`):
/// enough for filters matching at least 1 % of the documents.
const ROWS_PER_PAGE_ROW: u64 = 100;
/// Bounds on the walk's length: short pages still get a useful prefix, deep pages do not
/// walk a large part of the collection before falling back.
const MIN_ROWS: u64 = 1_000;
const MAX_ROWS: u64 = 20_000;

/// A cheaper statement for a page that answers it only when the data allows: it
/// selects the page's documents (one column, the stored text) from a prefix of the
/// query's order — the first documents of a walk ([`compile`]), the matches nearest
/// the centre (`geo::compile_nearest`'s rings). A full page from a prefix is the page;
/// fewer than [`PageAttempt::size`] rows means the prefix did not hold it, and the
/// next attempt, finally the ordinary page statement, runs instead.
#[derive(Debug)]
pub struct PageAttempt {
    pub page: SqlBuilder,
    /// The page size: an attempt that returned this many rows answered the page.
    pub size: u64,
}

/// The number of documents a walk for a page ending at `page_end` looks at, or `None`
/// when the page lies too deep for a walk to pay off.
pub(crate) fn walk_rows(page_end: u64) -> Option<u64> {
    let rows = page_end.saturating_mul(ROWS_PER_PAGE_ROW).max(MIN_ROWS);
    (rows <= MAX_ROWS).then_some(rows)
}

/// Whether `query` is a filtered page in the default order that a walk can answer.
fn walkable(query: &ContentQuery) -> bool {
    query.order == ContentOrder::Default
        && !query.filters.is_empty()
        && !query.filters.iter().any(answered_by_an_index)
}

fn page_end(query: &ContentQuery) -> u64 {
    query
        .page
        .offset()
        .saturating_add(u64::from(query.page.size))
}

/// The walk for `query`, when it is a filtered page in the default order within the
/// walk's fixed reach.
pub(crate) fn compile(query: &ContentQuery, dialect: Dialect) -> Option<PageAttempt> {
    if !walkable(query) {
        return None;
    }
    let rows = walk_rows(page_end(query))?;
    Some(compile_prefix(query, dialect, rows))
}

/// A filtered page in the default order past the walk's fixed reach (a deep page:
/// [`walk_rows`] gives none). Its page statement reads every match's row for its sort
/// key: 40–160 ms for a common filter's page 30 at ODH's size. Whether a walk pays
/// depends on how dense the matches are, which only their count tells, so the store
/// counts first (the total is needed anyway) and asks [`DeepWalk::attempt`].
#[derive(Debug, Clone)]
pub struct DeepWalk {
    query: ContentQuery,
    dialect: Dialect,
}

impl DeepWalk {
    pub(crate) fn new(query: &ContentQuery, dialect: Dialect) -> Option<DeepWalk> {
        (walkable(query) && walk_rows(page_end(query)).is_none()).then(|| DeepWalk {
            query: query.clone(),
            dialect,
        })
    }

    /// The entity's unfiltered list: its total is the number of documents a walk
    /// passes through.
    pub fn documents(&self) -> ContentQuery {
        ContentQuery {
            filters: Vec::new(),
            ..self.query.clone()
        }
    }

    /// The walk for the page, given the filter's total and the entity's document
    /// count, when it is expected to be cheaper than reading every match.
    pub fn attempt(&self, matched: super::Total, documents: u64) -> Option<PageAttempt> {
        let rows = deep_walk_rows(page_end(&self.query), matched.value, documents)?;
        Some(compile_prefix(&self.query, self.dialect, rows))
    }
}

/// Documents a deep walk may pass, at most: a failed walk (matches bunched late in
/// the order) costs this many probes before the page statement runs.
const MAX_DEEP_ROWS: u64 = 50_000;

/// How far a walk to `page_end` may look when `matched` of `documents` match (a total
/// is at least the matches counted, so an estimate errs towards walking less): twice
/// the documents it passes if the matches are spread evenly. `None` when that is more
/// documents than there are matches (each costs a probe; the page statement reads
/// each match once) or more than [`MAX_DEEP_ROWS`].
pub(crate) fn deep_walk_rows(page_end: u64, matched: u64, documents: u64) -> Option<u64> {
    if matched < page_end || documents == 0 {
        return None;
    }
    let expected = page_end.saturating_mul(documents).div_ceil(matched);
    (expected <= matched && expected <= MAX_DEEP_ROWS)
        .then(|| expected.saturating_mul(2).min(documents))
}

/// The walk over the first `rows` documents of the order.
fn compile_prefix(query: &ContentQuery, dialect: Dialect, rows: u64) -> PageAttempt {
    let size = u64::from(query.page.size);
    let offset = query.page.offset();
    // SQLite's planner has no statistics here and would drive the walk from a side
    // table; name the order index. PostgreSQL plans it from its statistics.
    let order_index = match dialect {
        Dialect::Sqlite => " INDEXED BY content_order",
        Dialect::Postgres => "",
    };
    let mut page = SqlBuilder::new(dialect);
    page.sql("SELECT c.doc FROM (SELECT c.id_key AS k, c.sort_key AS o FROM content c")
        .sql(order_index);
    let mut checks = super::CheckTable::default();
    page.sql(" WHERE c.entity = ").text(query.entity);
    page.sql(" AND c.sort_key <= (SELECT b.sort_key FROM content b")
        .sql(order_index)
        .sql(" WHERE b.entity = ")
        .text(query.entity)
        .sql(" ORDER BY b.sort_key, b.id_key LIMIT 1 OFFSET ")
        .param(SqlValue::Int(rows as i64 - 1))
        .sql(")");
    for filter in &query.filters {
        page.sql(" AND ");
        compile_filter(&mut page, filter, query.entity, Form::Probe, &mut checks);
    }
    page.sql(" ORDER BY o, k LIMIT ")
        .param(SqlValue::Int(size as i64))
        .sql(" OFFSET ")
        .param(SqlValue::Int(offset as i64))
        .sql(") p JOIN content c ON c.entity = ")
        .text(query.entity)
        .sql(" AND c.id_key = p.k ORDER BY p.o, p.k");
    PageAttempt { page, size }
}

/// Closes a [`Form::Probe`] subquery. On PostgreSQL `OFFSET 0` keeps the planner from
/// turning `EXISTS` into a semi-join, which would read every match of the side table
/// first — the cost the walk exists to avoid; SQLite runs `EXISTS` per row anyway.
pub(crate) fn close_probe(q: &mut SqlBuilder) {
    if q.dialect == Dialect::Postgres {
        q.sql(" OFFSET 0");
    }
    q.sql(")");
}

/// Filters whose matches an index finds directly and that are usually narrow (an id
/// list, a place on the map): their matches are few, so sorting them beats walking —
/// and a walk would read each walked document's row for its position.
fn answered_by_an_index(filter: &ContentFilter) -> bool {
    matches!(
        filter,
        ContentFilter::IdIn(_) | ContentFilter::Radius(_) | ContentFilter::Area(_)
    )
}

/// `searchfilter` per document: a title (in `languages`, or any) containing the folded
/// term, or the id equal to it — the same documents as `compile_search`'s set.
pub(crate) fn probe_search(
    q: &mut SqlBuilder,
    entity: &'static str,
    folded_term: &str,
    id_key: &str,
    languages: Option<&[String]>,
) {
    q.sql("(EXISTS (SELECT 1 FROM content_title t WHERE t.entity = ")
        .text(entity)
        .sql(" AND t.id_key = c.id_key");
    if let Some(langs) = languages {
        q.sql(" AND t.lang IN ").list(langs.iter().cloned());
    }
    q.sql(" AND t.folded LIKE ")
        .text(format!("%{}%", escape_like(folded_term)))
        .sql(" ESCAPE '\\'");
    close_probe(q);
    q.sql(" OR c.id_key = ").text(id_key.to_string()).sql(")");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::geo::GeoCircle;
    use crate::content::{tagfilter, Page};

    fn query(filters: Vec<ContentFilter>, order: ContentOrder, number: u32) -> ContentQuery {
        ContentQuery {
            entity: "HubActivityPoi",
            filters,
            order,
            page: Page { size: 10, number },
            count_limit: Some(10_000),
        }
    }

    fn tags(text: &str) -> ContentFilter {
        ContentFilter::Tags {
            kind: "tag",
            filter: tagfilter::parse_tagfilter(text).unwrap(),
        }
    }

    #[test]
    fn walks_only_filtered_default_order_pages_that_are_not_too_deep() {
        let circle = ContentFilter::Radius(GeoCircle {
            latitude: 46.5,
            longitude: 11.3,
            metres: 1_000.0,
        });
        let cases: [(Vec<ContentFilter>, ContentOrder, u32, Option<u64>); 8] = [
            (vec![tags("a"), circle], ContentOrder::Default, 1, None),
            (
                vec![ContentFilter::IdIn(vec!["x".into()])],
                ContentOrder::Default,
                1,
                None,
            ),
            (
                vec![tags("and(a,b)")],
                ContentOrder::Default,
                1,
                Some(1_000),
            ),
            (vec![tags("a")], ContentOrder::Default, 20, Some(20_000)),
            (vec![tags("a")], ContentOrder::Default, 21, None),
            (vec![], ContentOrder::Default, 1, None),
            (vec![tags("a")], ContentOrder::Seed("1".into()), 1, None),
            (vec![tags("a")], ContentOrder::Raw(vec![]), 1, None),
        ];
        for (filters, order, number, rows) in cases {
            let q = query(filters, order.clone(), number);
            let attempts = q.compile(Dialect::Sqlite).attempts;
            // The bound's OFFSET is the third parameter: rows - 1.
            let walked = attempts.first().map(|w| w.page.params()[2].clone());
            assert_eq!(
                walked,
                rows.map(|r| SqlValue::Int(r as i64 - 1)),
                "{order:?} page {number}"
            );
            assert!(attempts.iter().all(|w| w.size == 10));
        }
    }

    #[test]
    fn a_deep_page_is_walked_only_when_its_matches_are_dense() {
        // (page end, matches, documents) → the documents the walk may pass.
        let cases = [
            ((300, 40_000, 40_000), Some(600)),
            // A capped count is a lower bound: the walk looks further.
            ((300, 10_001, 40_000), Some(2_400)),
            ((3_000, 30_000, 40_000), Some(8_000)),
            ((40_000, 60_000, 60_000), Some(60_000)),
            // Passing 12,000 documents for 1,000 matches: reading the matches is cheaper.
            ((300, 1_000, 40_000), None),
            ((30_000, 40_000, 60_000), None),
            // Past the matches, or too long a walk however dense.
            ((300, 299, 40_000), None),
            ((60_000, 200_000, 200_000), None),
            ((300, 40_000, 0), None),
        ];
        for ((page_end, matched, documents), rows) in cases {
            assert_eq!(
                deep_walk_rows(page_end, matched, documents),
                rows,
                "{page_end} {matched} {documents}"
            );
        }
        let deep = |filters, order, number| {
            DeepWalk::new(&query(filters, order, number), Dialect::Sqlite).is_some()
        };
        assert!(deep(vec![tags("a")], ContentOrder::Default, 21));
        assert!(
            !deep(vec![tags("a")], ContentOrder::Default, 20),
            "the fixed walk reaches it"
        );
        assert!(!deep(vec![], ContentOrder::Default, 30));
        assert!(!deep(vec![tags("a")], ContentOrder::Seed("1".into()), 30));
        assert!(!deep(
            vec![ContentFilter::IdIn(vec!["x".into()])],
            ContentOrder::Default,
            30
        ));
        // The walk it gives bounds its prefix by the rows decided, like the fixed walk.
        let walk = DeepWalk::new(
            &query(vec![tags("a")], ContentOrder::Default, 30),
            Dialect::Sqlite,
        )
        .unwrap()
        .attempt(crate::content::Total::exact(40_000), 40_000)
        .unwrap();
        assert_eq!(walk.page.params()[2], SqlValue::Int(599));
        assert_eq!(walk.size, 10);
    }

    #[test]
    fn the_walk_reads_a_bounded_prefix_of_the_order_index() {
        let q = query(vec![tags("and(hiking,summer)")], ContentOrder::Default, 2);
        let sqlite = q.compile(Dialect::Sqlite).attempts.remove(0);
        let sql = sqlite.page.as_sql();
        assert!(
            sql.starts_with("SELECT c.doc FROM (SELECT c.id_key AS k, c.sort_key AS o FROM content c INDEXED BY content_order WHERE c.entity = ?1 AND c.sort_key <= (SELECT b.sort_key FROM content b INDEXED BY content_order WHERE b.entity = ?2 ORDER BY b.sort_key, b.id_key LIMIT 1 OFFSET ?3)"),
            "{sql}"
        );
        assert_eq!(sqlite.page.params()[2], SqlValue::Int(1_999));
        // One primary-key probe per tag of an `and` group, values bound.
        assert_eq!(
            sql.matches("EXISTS (SELECT 1 FROM content_tag t").count(),
            2
        );
        assert!(sqlite
            .page
            .params()
            .contains(&SqlValue::Text("hiking".into())));
        assert!(sql.ends_with("ORDER BY p.o, p.k"), "{sql}");
        let pg = q.compile(Dialect::Postgres).attempts.remove(0);
        assert!(
            !pg.page.as_sql().contains("INDEXED BY"),
            "{}",
            pg.page.as_sql()
        );
        assert!(
            pg.page.as_sql().contains("OFFSET $3)"),
            "{}",
            pg.page.as_sql()
        );
        assert_eq!(
            pg.page
                .as_sql()
                .matches("AND t.id_key = c.id_key OFFSET 0)")
                .count(),
            2,
            "{}",
            pg.page.as_sql()
        );
    }

    #[test]
    fn probed_search_tests_titles_per_document_with_the_term_bound() {
        let q = query(
            vec![ContentFilter::Search {
                folded_term: "50%'; drop".into(),
                id_key: "50%'; drop".into(),
                languages: Some(vec!["de".into()]),
            }],
            ContentOrder::Default,
            1,
        );
        let walk = q.compile(Dialect::Sqlite).attempts.remove(0);
        let sql = walk.page.as_sql();
        assert!(!sql.contains("drop"), "{sql}");
        assert!(!sql.contains("content_title_fts"), "{sql}");
        assert!(sql.contains("AND t.id_key = c.id_key AND t.lang IN (?5) AND t.folded LIKE ?6 ESCAPE '\\') OR c.id_key = ?7)"), "{sql}");
        assert_eq!(
            walk.page.params()[5],
            SqlValue::Text("%50\\%'; drop%".into())
        );
    }

    #[test]
    fn walk_bounds_grow_with_the_page_end() {
        assert_eq!(walk_rows(10), Some(1_000));
        assert_eq!(walk_rows(50), Some(5_000));
        assert_eq!(walk_rows(200), Some(20_000));
        assert_eq!(walk_rows(201), None);
        assert_eq!(walk_rows(u64::MAX), None);
    }
}
