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
        q.sql("SELECT c.id_key, ").document().sql(", ");
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
#[path = "prefixed_tests.rs"]
mod tests;
