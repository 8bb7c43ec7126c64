//! Pages of a computed order (a seed, `rawsort`), and of filtered lists a walk does not
//! answer, from a kept prefix of that order.
//!
//! `seed=N` orders a list by `md5(id || N)`, ODH's random but stable order; `rawsort`
//! orders it by values inside the documents. No index holds either order, so every
//! such page computes the order key of every match and keeps the best: for a seed
//! 22 ms (SQLite) and 44 ms (PostgreSQL) for page 3 of the 70,000 POIs of the scale-10
//! demo, for `rawsort=Shortname` 0.7 s on both (it reads every document), a cost in
//! proportion to the data. ODH normalises seeds to a few dozen values, a site showing
//! "random" entries asks for the first pages of a few of them over and over, and a data
//! browser sorting a table by a column asks for the same pages as the previous visitor.
//! So the store keeps the first [`PREFIX`] keys of such an order, read by one statement
//! that orders only keys, and answers the pages inside that prefix by reading their
//! documents by key.
//!
//! A client that pages on through the list would otherwise order every match for every
//! page past the prefix. A page further on asks for a deeper prefix
//! ([`PrefixedPage::depth`]: 8, then 64 times as many positions, at most [`DEEPEST`]),
//! so a walk through the whole list reads the order four times, not once per page.
//! Pages past [`DEEPEST`] run their ordinary statement.
//!
//! A filtered list in the default order has an index for its order, and a page of a
//! filter whose matches are dense along it is found by walking that index
//! (`super::walk`). A walk costs nothing to keep, so such lists keep no prefix. When
//! the matches are rare, or bunched where the walk does not look (`searchfilter=hotel`
//! on accommodations: most "Hotel …" names sort together, far from the start), the page
//! statement reads and sorts every match for every page, 35–50 ms at scale 10. Those
//! lists keep a prefix too ([`PrefixedPage::filtered`]): the store reads it where it
//! would have run that statement, and answers later pages from it before it walks.
//!
//! Like bookmarks (`super::bookmarks`), every statement returns the entity's write
//! revision with its rows, from the same snapshot: a prefix is used only while its
//! documents come back with the revision it was read at.
//!
//! Owns: which pages qualify and the statements. Must not: keep prefixes (the store's
//! `content::prefixes` does).

use super::bookmarks::{read_revision, revision, MAX_SCOPE_BYTES};
use super::rawfilter_sql::{compile_rawsort, compile_rawsort_columns, descending_along_columns};
use super::walk::answered_by_an_index;
use super::{next_begin, seed_order_key, ContentOrder, ContentQuery};
use crate::sql::{Dialect, SqlBuilder, SqlValue};

/// Positions of a computed order kept for the pages near its start (100 pages of 10):
/// the shortest prefix read.
pub const PREFIX: u64 = 1_000;

/// The deepest prefix read: pages ending past this position run their ordinary
/// statement.
pub const DEEPEST: u64 = 128_000;

/// Each deeper prefix is this many times the one before: 1,000, 8,000, 64,000, then
/// [`DEEPEST`].
const GROWTH: u64 = 8;

/// A page of a seeded or `rawsort` order, or of a filtered list in the default order,
/// that ends within the first [`DEEPEST`] positions of its order.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefixedPage {
    query: ContentQuery,
    /// The list and order the prefix is of: its WHERE clause and values, and the seed,
    /// the `rawsort` expressions or the default order.
    scope: String,
}

impl PrefixedPage {
    /// The page of a seeded or `rawsort` order `query` asks for, when it qualifies: such
    /// a page always reads its prefix.
    pub fn of(query: &ContentQuery) -> Option<PrefixedPage> {
        let order = match &query.order {
            ContentOrder::Seed(seed) => format!("seed {seed}"),
            ContentOrder::Raw(keys) => {
                let mut order = SqlBuilder::new(Dialect::Sqlite);
                compile_rawsort(&mut order, keys);
                format!("rawsort {}\n{:?}", order.as_sql(), order.params())
            }
            // Not the time it is measured from: a prefix read at one time holds at
            // another while no date range ends between them (`Prefix::span`).
            ContentOrder::NextBegin { descending, .. } => format!("next begin {descending}"),
            _ => return None,
        };
        Self::scoped(query, order)
    }

    /// The page of a filtered list in the default order `query` asks for, when it
    /// qualifies: the filters are those a walk may answer (the others are found by
    /// their index and are narrow). The store reads its prefix only where the walk did
    /// not answer the page (see the module's comment).
    pub fn filtered(query: &ContentQuery) -> Option<PrefixedPage> {
        let walkable = query.order == ContentOrder::Default
            && !query.filters.is_empty()
            && !query.filters.iter().any(answered_by_an_index);
        walkable
            .then(|| Self::scoped(query, "default".into()))
            .flatten()
    }

    /// The page of `query` in `order` (named in the scope), when it ends within
    /// [`DEEPEST`] and its scope is short enough to keep.
    fn scoped(query: &ContentQuery, order: String) -> Option<PrefixedPage> {
        let end = query
            .page
            .offset()
            .saturating_add(u64::from(query.page.size));
        if end > DEEPEST {
            return None;
        }
        let mut clause = SqlBuilder::new(Dialect::Sqlite);
        query.where_clause(&mut clause);
        let scope = format!("{}\n{:?}\n{order}", clause.as_sql(), clause.params());
        (scope.len() <= MAX_SCOPE_BYTES).then(|| PrefixedPage {
            query: query.clone(),
            scope,
        })
    }

    /// The list and seed: pages with the same scope share a prefix.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The position the page ends at.
    fn end(&self) -> u64 {
        self.query
            .page
            .offset()
            .saturating_add(u64::from(self.query.page.size))
    }

    /// How many positions of the order the prefix this page reads holds: the shortest
    /// of [`PREFIX`], 8 times that, 64 times that, … and [`DEEPEST`] that reaches the
    /// page's end.
    pub fn depth(&self) -> u64 {
        let mut depth = PREFIX;
        while depth < self.end() {
            depth = depth.saturating_mul(GROWTH);
        }
        depth.min(DEEPEST)
    }

    /// Whether a kept prefix of `kept` keys, read `depth` positions deep, holds this
    /// page: it reaches the page's end, or it holds the whole list (fewer keys than it
    /// was read for).
    pub fn within(&self, kept: usize, depth: u64) -> bool {
        kept as u64 >= self.end() || (kept as u64) < depth
    }

    /// The page's keys within `prefix` (the kept keys, in order): empty when the page
    /// lies past the list's end.
    pub fn keys<'a>(&self, prefix: &'a [String]) -> &'a [String] {
        let start = (self.query.page.offset() as usize).min(prefix.len());
        let end = start
            .saturating_add(self.query.page.size as usize)
            .min(prefix.len());
        &prefix[start..end]
    }

    /// The first [`PrefixedPage::depth`] keys of the page's order, one row each: `id_key,
    /// revision, total, span from, span to`. The total counts every match (the order
    /// reads them all anyway), exact at the revision. The span is where the order was
    /// read from, for the next-begin order (see [`PrefixedPage::holds`]), else null.
    pub fn prefix(&self, dialect: Dialect) -> SqlBuilder {
        let mut q = SqlBuilder::new(dialect);
        let entity = self.query.entity;
        let columns = |q: &mut SqlBuilder, key: &str| {
            q.sql("SELECT ").sql(key).sql(", ");
            revision(q, entity);
            q.sql(", ");
            self.span(q);
        };
        match &self.query.order {
            ContentOrder::Raw(keys) => {
                // The order's terms are columns of the matches, so that the count
                // keeps only them and the key, not the documents they were read from:
                // PostgreSQL carried those into the count otherwise (190 MB of
                // temporary files for 70,000 POIs), and moves the terms above it
                // without `OFFSET 0`. The keys are ordered at the top, beside the
                // revision (computed once, it is uncorrelated).
                columns(&mut q, "p.k");
                q.sql(", ");
                self.total(&mut q);
                q.sql(" FROM (SELECT ");
                let descending = compile_rawsort_columns(&mut q, keys);
                q.sql("c.id_key AS k FROM content c");
                self.query
                    .where_clause_as(&mut q, self.query.every_match_form(dialect));
                if self.query.filters.is_empty() && descending_along_columns(keys) {
                    // The prefix keeps the best `depth` keys as it reads the matches.
                    // Rows in the index's ascending order would each beat the worst
                    // key kept and replace it (the bounded sort's most costly case);
                    // read backwards, most lose to it at once. Page 50 of `rawsort=
                    // -Shortname` over 70,000 POIs after a write: 184 → 66 ms of
                    // statement on PostgreSQL, 194 → 55 ms on SQLite. Only where the
                    // rows come from the entity's index alone: a filter's own index, or
                    // a term read from the documents, costs more read this way.
                    q.sql(" ORDER BY c.sort_key DESC, c.id_key DESC");
                    if dialect == Dialect::Sqlite {
                        // Kept as a subquery, read in this order: SQLite would
                        // otherwise merge it into the outer statement and drop its
                        // order (a window kept it apart before).
                        q.sql(" LIMIT -1");
                    }
                }
                if dialect == Dialect::Postgres {
                    q.sql(" OFFSET 0");
                }
                q.sql(") p ORDER BY ");
                for (term, descending) in descending.iter().enumerate() {
                    let direction = if *descending { "DESC" } else { "ASC" };
                    q.sql(&format!("p.o{term} {direction}, "));
                }
                q.sql("p.k LIMIT ")
                    .param(SqlValue::Int(self.depth() as i64));
            }
            order => {
                columns(&mut q, "p.k");
                q.sql(", p.n FROM (SELECT c.id_key AS k, ");
                self.total(&mut q);
                q.sql(" AS n, ");
                let mut nulls_last = "";
                match order {
                    ContentOrder::Seed(seed) => seed_order_key(&mut q, seed),
                    ContentOrder::NextBegin { descending, now } => {
                        next_begin(&mut q, entity, now);
                        nulls_last = if *descending {
                            " DESC NULLS LAST"
                        } else {
                            " ASC NULLS LAST"
                        };
                    }
                    _ => {
                        q.sql("c.sort_key");
                    }
                }
                // The default order has an index, and PostgreSQL's planner, pricing the
                // `LIMIT` as if a walk along it could stop early, tests every document of
                // the entity in order; this prefix is read only where a walk did not pay.
                // `OFFSET 0` makes it find the matches first, as the page statement does.
                let fence = *order == ContentOrder::Default && dialect == Dialect::Postgres;
                q.sql(" AS o FROM ");
                q.sql(if fence {
                    "(SELECT c.id_key, c.sort_key FROM content c"
                } else {
                    "content c"
                });
                self.query
                    .where_clause_as(&mut q, self.query.every_match_form(dialect));
                if fence {
                    q.sql(" OFFSET 0) c");
                }
                q.sql(&format!(" ORDER BY o{nulls_last}, k LIMIT "))
                    .param(SqlValue::Int(self.depth() as i64))
                    .sql(&format!(") p ORDER BY p.o{nulls_last}, p.k"));
            }
        }
        q
    }

    /// The total of the prefix's list, with each of its rows. A filtered list counts
    /// its matches as the prefix reads them (a window), which costs less than finding
    /// them again. A whole list is counted from the entity's index on its own, once:
    /// buffering 70,000 rows for the window and reading them back cost more, 20 ms of a
    /// 67 ms prefix by `-Shortname` on PostgreSQL at scale 10.
    fn total(&self, q: &mut SqlBuilder) {
        if self.query.filters.is_empty() {
            q.sql("(SELECT COUNT(*) FROM content c");
            self.query.where_clause(q);
            q.sql(")");
        } else {
            q.sql("COUNT(*) OVER ()");
        }
    }

    /// The span of times the next-begin order read at `now` holds for: after the last
    /// date range that ended before `now`, up to the end of the first that had not. In
    /// it the same ranges are over, so every event has the same next begin. Two nulls
    /// for the other orders (and a bound no range sets).
    fn span(&self, q: &mut SqlBuilder) {
        let ContentOrder::NextBegin { now, .. } = &self.query.order else {
            q.sql("CAST(NULL AS TEXT), CAST(NULL AS TEXT)");
            return;
        };
        let bound = |q: &mut SqlBuilder, aggregate: &str, compare: &str| {
            q.sql(&format!(
                "(SELECT {aggregate}(d.date_end) FROM content_date d"
            ))
            .sql(" WHERE d.entity = ")
            .text(self.query.entity)
            .sql(&format!(" AND d.date_end {compare} "))
            .text(now.clone())
            .sql(")");
        };
        bound(q, "MAX", "<");
        q.sql(", ");
        bound(q, "MIN", ">=");
    }

    /// Whether a prefix read for the span `(after, until)` holds this page's order: it
    /// does unless the page's next-begin order is measured from a time outside it.
    pub fn holds(&self, (after, until): (Option<&str>, Option<&str>)) -> bool {
        let ContentOrder::NextBegin { now, .. } = &self.query.order else {
            return true;
        };
        let now = now.as_str();
        after.is_none_or(|after| now > after) && until.is_none_or(|until| now <= until)
    }

    /// The entity's revision as a statement of its own: a page past the end of a kept
    /// whole list is empty while it is still the revision the list was read at.
    pub fn read_revision(&self, dialect: Dialect) -> SqlBuilder {
        read_revision(self.query.entity, dialect)
    }

    /// The documents of `keys`, in no order: `id_key, doc, revision`.
    pub fn documents(&self, keys: &[String], dialect: Dialect) -> SqlBuilder {
        let mut q = SqlBuilder::new(dialect);
        q.sql("SELECT c.id_key, c.doc, ");
        revision(&mut q, self.query.entity);
        of_keys(&mut q, self.query.entity, keys);
        q
    }
}

/// ` FROM content c WHERE …`: the documents of `entity` whose keys are `keys`.
pub(crate) fn of_keys(q: &mut SqlBuilder, entity: &'static str, keys: &[String]) {
    q.sql(" FROM content c WHERE c.entity = ")
        .text(entity)
        .sql(" AND c.id_key IN ")
        .list(keys.iter().cloned());
}

#[cfg(test)]
mod tests {
    use super::super::{ContentFilter, Page};
    use super::*;

    fn page(number: u32, size: u32, order: ContentOrder) -> ContentQuery {
        ContentQuery {
            entity: "Event",
            filters: vec![ContentFilter::Active(true)],
            order,
            page: Page { size, number },
            count_limit: None,
        }
    }

    #[test]
    fn prefixed_pages_ending_within_the_deepest_prefix_qualify_and_read_the_shortest_reaching_them()
    {
        let seed = || ContentOrder::Seed("7".into());
        // (query, the depth of the prefix it reads, or none when it does not qualify)
        let cases = [
            (page(1, 10, seed()), Some(1_000)),
            (page(100, 10, seed()), Some(1_000)),
            (page(101, 10, seed()), Some(8_000)),
            (page(1, 1_000, seed()), Some(1_000)),
            (page(2, 1_000, seed()), Some(8_000)),
            (page(800, 10, seed()), Some(8_000)),
            (page(801, 10, seed()), Some(64_000)),
            (page(6_401, 10, seed()), Some(128_000)),
            (page(1_280, 100, seed()), Some(128_000)),
            (page(1_281, 100, seed()), None),
            (page(u32::MAX, 1_000, seed()), None),
            (page(1, 10, ContentOrder::Default), None),
            (page(3, 10, rawsort("Shortname")), Some(1_000)),
            (page(1_281, 100, rawsort("Shortname")), None),
        ];
        for (query, depth) in cases {
            let found = PrefixedPage::of(&query);
            assert_eq!(found.as_ref().map(PrefixedPage::depth), depth, "{query:?}");
            if let Some(found) = found {
                assert!(
                    found
                        .prefix(Dialect::Sqlite)
                        .params()
                        .contains(&SqlValue::Int(found.depth() as i64)),
                    "{query:?}"
                );
            }
        }
    }

    fn rawsort(keys: &str) -> ContentOrder {
        ContentOrder::Raw(super::super::rawfilter::parse_rawsort(keys).unwrap())
    }

    #[test]
    fn each_rawsort_has_its_own_prefix_ordered_by_its_keys_then_id() {
        let by_title = PrefixedPage::of(&page(2, 10, rawsort("Detail.de.Title"))).unwrap();
        let by_title_down = PrefixedPage::of(&page(2, 10, rawsort("-Detail.de.Title"))).unwrap();
        let by_name = PrefixedPage::of(&page(7, 10, rawsort("Shortname"))).unwrap();
        assert_ne!(by_title.scope(), by_title_down.scope());
        assert_ne!(by_title.scope(), by_name.scope());
        let seeded = PrefixedPage::of(&page(2, 10, ContentOrder::Seed("7".into()))).unwrap();
        assert_ne!(by_title.scope(), seeded.scope());

        let sql = by_title_down.prefix(Dialect::Sqlite);
        assert!(
            sql.as_sql().contains(
                "FROM (SELECT json_extract(c.docb, ?2) IS NULL AS o0, json_extract(c.docb, ?3) \
                 AS o1, c.id_key AS k FROM content c WHERE c.entity = ?4 AND c.active = ?5) p \
                 ORDER BY p.o0 ASC, p.o1 DESC, p.k LIMIT ?6"
            ),
            "{}",
            sql.as_sql()
        );
        assert!(sql
            .as_sql()
            .starts_with("SELECT p.k, COALESCE((SELECT r.revision"));
        // A name: the four parts of PostgreSQL's sort record, computed below the count.
        let sql = by_name.prefix(Dialect::Postgres);
        assert!(
            sql.as_sql().contains(
                " OFFSET 0) p ORDER BY p.o0 ASC, p.o1 ASC, p.o2 ASC, p.o3 ASC, p.k LIMIT $"
            ),
            "{}",
            sql.as_sql()
        );
        assert!(sql.params().contains(&SqlValue::Int(PREFIX as i64)));
    }

    /// Page 2 of the whole list, unfiltered, in `order`.
    fn whole(order: ContentOrder) -> ContentQuery {
        ContentQuery {
            filters: Vec::new(),
            ..page(2, 10, order)
        }
    }

    #[test]
    fn a_whole_list_by_name_descending_is_read_along_its_index_backwards() {
        // (query, whether its prefix reads the entity's rows in descending order)
        let cases = [
            (whole(rawsort("-Shortname")), true),
            (whole(rawsort("Shortname")), false),
            // A filter's own index may hand out the matches.
            (page(2, 10, rawsort("-Shortname")), false),
            // Terms read from the documents.
            (whole(rawsort("-Shortname,Id")), false),
            (whole(rawsort("-Detail.de.Title")), false),
        ];
        for (query, backwards) in cases {
            for dialect in [Dialect::Sqlite, Dialect::Postgres] {
                let sql = PrefixedPage::of(&query).unwrap().prefix(dialect);
                let read = sql
                    .as_sql()
                    .contains(" ORDER BY c.sort_key DESC, c.id_key DESC");
                assert_eq!(read, backwards, "{dialect:?} {query:?}: {}", sql.as_sql());
                // Kept apart from the outer statement, which would drop its order.
                let fenced = sql.as_sql().contains(match dialect {
                    Dialect::Sqlite => " DESC LIMIT -1) p ",
                    Dialect::Postgres => " DESC OFFSET 0) p ",
                });
                assert_eq!(fenced, backwards, "{dialect:?} {query:?}: {}", sql.as_sql());
            }
        }
    }

    #[test]
    fn a_whole_list_is_counted_on_its_own_and_a_filtered_one_as_its_prefix_is_read() {
        // (query, whether the prefix counts its matches with a window over its rows)
        let cases = [
            (whole(rawsort("-Shortname")), false),
            (whole(rawsort("Shortname,Id")), false),
            (whole(ContentOrder::Seed("7".into())), false),
            (page(2, 10, rawsort("-Shortname")), true),
            (page(2, 10, ContentOrder::Seed("7".into())), true),
        ];
        for (query, window) in cases {
            for dialect in [Dialect::Sqlite, Dialect::Postgres] {
                let sql = PrefixedPage::of(&query).unwrap().prefix(dialect);
                let sql = sql.as_sql();
                assert_eq!(
                    sql.contains("COUNT(*) OVER ()"),
                    window,
                    "{dialect:?}: {sql}"
                );
                let counted = sql.contains("(SELECT COUNT(*) FROM content c WHERE c.entity = ");
                assert_eq!(counted, !window, "{dialect:?}: {sql}");
            }
        }
    }

    #[test]
    fn filtered_lists_in_the_default_order_keep_a_prefix_of_their_sort_keys() {
        let filtered = page(3, 10, ContentOrder::Default);
        let found = PrefixedPage::filtered(&filtered).unwrap();
        assert_eq!(found.depth(), PREFIX);
        // Only where a walk did not answer: never read first like a seed's.
        assert!(PrefixedPage::of(&filtered).is_none());
        let mut whole = filtered.clone();
        whole.filters.clear();
        let mut by_id = filtered.clone();
        by_id.filters.push(ContentFilter::IdIn(vec!["a".into()]));
        let mut seeded = filtered.clone();
        seeded.order = ContentOrder::Seed("7".into());
        for other in [
            whole,
            by_id,
            seeded,
            page(1_281, 100, ContentOrder::Default),
        ] {
            assert!(PrefixedPage::filtered(&other).is_none(), "{other:?}");
        }
        let seeded = PrefixedPage::of(&page(3, 10, ContentOrder::Seed("7".into()))).unwrap();
        assert_ne!(found.scope(), seeded.scope());

        let sql = found.prefix(Dialect::Sqlite);
        assert!(
            sql.as_sql().contains(
                "(SELECT c.id_key AS k, COUNT(*) OVER () AS n, c.sort_key AS o FROM content c WHERE"
            ),
            "{}",
            sql.as_sql()
        );
        assert!(
            sql.as_sql().contains("ORDER BY o, k LIMIT ?"),
            "{}",
            sql.as_sql()
        );
        let sql = found.prefix(Dialect::Postgres);
        assert!(
            sql.as_sql()
                .contains("c.sort_key AS o FROM (SELECT c.id_key, c.sort_key FROM content c WHERE"),
            "{}",
            sql.as_sql()
        );
        assert!(
            sql.as_sql().contains(" OFFSET 0) c ORDER BY o, k LIMIT $"),
            "{}",
            sql.as_sql()
        );
    }

    /// A prefix reads every match: PostgreSQL probes a search no index narrows
    /// (`ContentQuery::every_match_form`), SQLite and longer terms collect.
    #[test]
    fn prefixes_of_short_searches_probe_on_postgresql() {
        let search = |term: &str, order: ContentOrder| {
            let mut query = page(3, 10, order);
            query.filters.push(ContentFilter::Search {
                folded_term: term.into(),
                id_key: term.into(),
                languages: None,
            });
            query
        };
        let probes = "EXISTS (SELECT 1 FROM content_title t";
        for (term, on_postgres) in [("h", true), ("ho", true), ("hot", false)] {
            for order in [ContentOrder::Default, rawsort("Shortname")] {
                let query = search(term, order.clone());
                let found = PrefixedPage::of(&query)
                    .or_else(|| PrefixedPage::filtered(&query))
                    .unwrap();
                for (dialect, expected) in
                    [(Dialect::Sqlite, false), (Dialect::Postgres, on_postgres)]
                {
                    let sql = found.prefix(dialect);
                    assert_eq!(
                        sql.as_sql().contains(probes),
                        expected,
                        "{term} {order:?} {dialect:?}: {}",
                        sql.as_sql()
                    );
                }
            }
        }
    }

    #[test]
    fn the_next_begin_order_keeps_a_prefix_for_the_span_it_was_read_in() {
        let at = |now: &str, descending| ContentOrder::NextBegin {
            descending,
            now: now.into(),
        };
        let noon = PrefixedPage::of(&page(2, 10, at("2026-11-30 12:00:00", false))).unwrap();
        let later = PrefixedPage::of(&page(7, 10, at("2026-11-30 16:00:00", false))).unwrap();
        let down = PrefixedPage::of(&page(2, 10, at("2026-11-30 12:00:00", true))).unwrap();
        // One prefix whatever the time; the direction is another order.
        assert_eq!(noon.scope(), later.scope());
        assert_ne!(noon.scope(), down.scope());

        // (span the prefix was read for, holds the page at 16:00)
        let cases = [
            ((None, None), true),
            (
                (Some("2026-11-30 12:00:00"), Some("2026-11-30 17:00:00")),
                true,
            ),
            (
                (Some("2026-11-30 12:00:00"), Some("2026-11-30 16:00:00")),
                true,
            ),
            ((Some("2026-11-30 16:00:00"), None), false),
            ((None, Some("2026-11-30 15:59:59")), false),
        ];
        for (span, holds) in cases {
            assert_eq!(later.holds(span), holds, "{span:?}");
        }
        let seeded = PrefixedPage::of(&page(2, 10, ContentOrder::Seed("7".into()))).unwrap();
        assert!(seeded.holds((Some("9999"), Some("0000"))));

        let sql = down.prefix(Dialect::Postgres);
        let text = sql.as_sql();
        assert!(
            text.contains("ORDER BY o DESC NULLS LAST, k LIMIT $"),
            "{text}"
        );
        assert!(
            text.ends_with("p ORDER BY p.o DESC NULLS LAST, p.k"),
            "{text}"
        );
        assert!(
            text.contains("(SELECT MAX(d.date_end) FROM content_date d"),
            "{text}"
        );
        assert!(
            text.contains("(SELECT MIN(d.date_end) FROM content_date d"),
            "{text}"
        );
        let seeded = seeded.prefix(Dialect::Sqlite);
        assert!(
            seeded
                .as_sql()
                .contains("CAST(NULL AS TEXT), CAST(NULL AS TEXT), p.n FROM"),
            "{}",
            seeded.as_sql()
        );
    }

    #[test]
    fn a_kept_prefix_holds_a_page_it_reaches_or_when_it_holds_the_whole_list() {
        let seed = || ContentOrder::Seed("7".into());
        let hundredth = PrefixedPage::of(&page(100, 10, seed())).unwrap();
        let next = PrefixedPage::of(&page(101, 10, seed())).unwrap();
        // (page, keys kept, the depth they were read at, holds)
        let cases = [
            (&hundredth, 1_000, 1_000, true),
            (&next, 1_000, 1_000, false),
            (&next, 999, 1_000, true),
            (&next, 8_000, 8_000, true),
            (&next, 1_005, 8_000, true),
            (&hundredth, 0, 1_000, true),
        ];
        for (page, kept, depth, holds) in cases {
            assert_eq!(page.within(kept, depth), holds, "{page:?} {kept} {depth}");
        }
    }

    #[test]
    fn each_seed_and_filter_has_its_own_prefix_and_pages_slice_it() {
        let seven = PrefixedPage::of(&page(3, 10, ContentOrder::Seed("7".into()))).unwrap();
        let eight = PrefixedPage::of(&page(3, 10, ContentOrder::Seed("8".into()))).unwrap();
        let mut all = page(5, 10, ContentOrder::Seed("7".into()));
        all.filters.clear();
        let unfiltered = PrefixedPage::of(&all).unwrap();
        assert_ne!(seven.scope(), eight.scope());
        assert_ne!(seven.scope(), unfiltered.scope());
        let later = PrefixedPage::of(&page(9, 10, ContentOrder::Seed("7".into()))).unwrap();
        assert_eq!(seven.scope(), later.scope());

        let prefix: Vec<String> = (0..25).map(|n| format!("k{n}")).collect();
        assert_eq!(seven.keys(&prefix), &prefix[20..25]);
        assert!(later.keys(&prefix).is_empty());

        let sql = seven.prefix(Dialect::Postgres);
        assert!(
            sql.as_sql().contains("md5(c.id_key || $"),
            "{}",
            sql.as_sql()
        );
        assert!(sql.as_sql().contains("c.active = $"), "{}", sql.as_sql());
        assert!(sql.params().contains(&SqlValue::Int(PREFIX as i64)));
        let docs = seven.documents(&prefix[20..25], Dialect::Sqlite);
        assert!(
            docs.as_sql()
                .ends_with("AND c.id_key IN (?3, ?4, ?5, ?6, ?7)"),
            "{}",
            docs.as_sql()
        );
    }
}
