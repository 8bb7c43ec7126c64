//! Filtered pages in the default order, found by walking the order index.
//!
//! A filtered page sorted by Shortname used to read every match, sort them and keep ten:
//! a cost that grows with the number of matches (a tag carried by a fifth of 70,000
//! documents is 14,000 sort-key reads for a page of ten). The documents are already in
//! that order in the `(entity, sort_key, id_key)` index, so a page of a filter that
//! matches often is found by walking the index from the start and testing each
//! document ([`Form::Probe`]: one index probe per side-table filter) until the page is
//! full — a cost that grows with the page and the filter's density, not with the data.
//!
//! Whether a walk pays depends on how dense the matches are, which only their count
//! tells, so the store counts first (the total is needed anyway, and is kept until the
//! next write) and asks [`CountedWalk::attempt`]: [`walk_rows`] weighs the documents a
//! walk passes against the matches the page statement reads. The walk is bounded: it
//! looks only at a prefix of the order, the first `rows` documents ([`prefix_rows`]), so
//! what it finds is exactly the start of the full answer. When that prefix holds fewer matches than the page needs, the store
//! runs the ordinary page statement instead (matches first, sorted).
//!
//! Owns: the walk statement, its bound and the rule choosing it. Must not: decide
//! totals (the separate count statement and [`super::Total::settle`] do).

use super::{compile_filter, ContentFilter, ContentOrder, ContentQuery, Form, Total};
use crate::sql::{escape_like, Dialect, SqlBuilder, SqlValue};

/// The shortest prefix a walk looks at: a page near the start still finds its matches
/// when they are unevenly spread over the first documents.
const MIN_ROWS: u64 = 1_000;
/// Documents a walk may pass, at most: a failed walk (matches bunched late in the
/// order) costs this many probes before the page statement runs.
const MAX_ROWS: u64 = 50_000;

/// A cheaper statement for a page that answers it only when the data allows: it
/// selects the page's documents (one column, the stored text) from a prefix of the
/// query's order — the first documents of a walk ([`CountedWalk`]), the matches nearest
/// the centre (`geo::compile_nearest`'s rings). A full page from a prefix is the page;
/// fewer than [`PageAttempt::size`] rows means the prefix did not hold it, and the
/// next attempt, finally the ordinary page statement, runs instead.
#[derive(Debug)]
pub struct PageAttempt {
    pub page: SqlBuilder,
    /// The page size: an attempt that returned this many rows answered the page.
    pub size: u64,
    /// For an attempt that looks at part of the list's area (a ring around a radius's
    /// centre), what share of the list's matches it sees where they are spread evenly,
    /// and how many it needs (the page's end): see [`PageAttempt::worth_trying`].
    pub(crate) odds: Option<AttemptOdds>,
}

/// What an attempt over part of a list's area may expect to find.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct AttemptOdds {
    /// The share of the list's matches its part holds where they are spread evenly.
    pub(crate) share: f64,
    /// The share of the part tried after it when it falls short (the whole list's is 1).
    pub(crate) next_share: f64,
    /// The matches it needs to see to answer the page (the page's end).
    pub(crate) needed: u64,
}

/// How much denser than the list's average the matches of an attempt's part may be and
/// still be worth its statement: a radius's centre is usually denser than its edge (a
/// town in its valley), so a ring is tried unless even four times its even share falls
/// short of the page.
const DENSER_AT_THE_CENTRE: f64 = 4.0;

/// The matches the next part would hold, where they are spread evenly, for which a part
/// that holds the page only if its matches are denser than average is worth a
/// statement. Such a part often falls short, and then costs a statement and its own
/// matches; when it holds the page, it spares sorting most of the next part's. A
/// statement costs about as much as a hundred or two geodesics, so below a thousand
/// the bet does not pay: at scale 1, with 370 POIs within 10 km of Bolzano, a page of
/// 10 tried the 1.25 km circle (5.8 expected, none held enough) before the 2.5 km one,
/// and PostgreSQL's CPU per request grew from 242 to 379 µs.
const SPECULATE_FROM: f64 = 1_000.0;

impl PageAttempt {
    /// Whether the attempt is worth a statement when the list's matches were last
    /// counted at `kept_total` (before the last write, say: the total only chooses a
    /// statement, and an attempt that falls short gives way to the next). Without a
    /// kept total, with one that was cut short, or for an attempt without odds, it is
    /// tried: a count cut short at its limit says only that there are more matches,
    /// not how many (SQLite keeps the limit itself), so it cannot tell a ring too
    /// sparse. Weighed as if exact, 10,001 of the 50 km around Merano skipped the
    /// 3.1 km ring that held 447, and page 20 sorted the 8,969 of 12.5 km instead.
    pub fn worth_trying(&self, kept_total: Option<Total>) -> bool {
        match (self.odds, kept_total) {
            (Some(odds), Some(total)) if !total.estimated => {
                let total = total.value as f64;
                let needed = odds.needed as f64;
                let even = total * odds.share;
                even >= needed
                    || (even * DENSER_AT_THE_CENTRE >= needed
                        && total * odds.next_share >= SPECULATE_FROM)
            }
            _ => true,
        }
    }
}

/// A filtered page in the default order that a walk may answer, once its total and the
/// entity's document count are known.
#[derive(Debug, Clone)]
pub struct CountedWalk {
    query: ContentQuery,
    dialect: Dialect,
}

impl CountedWalk {
    /// The walk of `query`, when it is a filtered page in the default order whose
    /// filters an index does not answer directly.
    pub(crate) fn new(query: &ContentQuery, dialect: Dialect) -> Option<CountedWalk> {
        let walkable = query.order == ContentOrder::Default
            && !query.filters.is_empty()
            && !query.filters.iter().any(answered_by_an_index);
        walkable.then(|| CountedWalk {
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

    /// Whether the page starts at or past the last of `matched`, an exact total: it is
    /// empty, and no statement need look for it. A common search term that no title of
    /// a small collection holds still reads every title holding it in any collection
    /// (the trigram index is shared), 15 ms at scale 10 for each of Find's empty types.
    pub fn past_the_end(&self, matched: Total) -> bool {
        !matched.estimated && matched.value <= self.query.page.offset()
    }

    /// The walk for the page, given the filter's total and the entity's document
    /// count, when it is expected to be cheaper than reading every match.
    pub fn attempt(&self, matched: Total, documents: u64) -> Option<PageAttempt> {
        let page_end = self
            .query
            .page
            .offset()
            .saturating_add(u64::from(self.query.page.size));
        let rows = walk_rows(page_end, matched.value, documents)?;
        Some(compile_prefix(&self.query, self.dialect, rows))
    }

    /// The walk for the query's first `limit` map points, given the filter's total and
    /// the entity's document count, when it is expected to be cheaper than reading
    /// every match ([`walk_rows`], with the limit for the page's end).
    pub fn points(
        &self,
        matched: Total,
        documents: u64,
        limit: u64,
    ) -> Option<super::points::CompiledPoints> {
        let rows = walk_rows(limit, matched.value, documents)?;
        Some(self.query.compile_points_walk(self.dialect, limit, rows))
    }
}

/// A whole read walks when at least one document in this many matches: SQLite sorted
/// the matches' documents at about 40 µs each (through temporary files), where a walk
/// tests a document that does not match in 1–2 µs.
const WHOLE_WALK_SHARE: u64 = 16;

/// The whole read (`pagesize=-1`, every match in the default order) of a filtered list on
/// SQLite, walked along the order index instead of sorting the matches' documents,
/// once the count shows the matches dense enough. `polygon=bbi(…)` over 48,000 of the
/// 70,000 POIs of the scale-10 demo took 3.7 s sorted, where all 70,000 in order take
/// 1.9 s. PostgreSQL plans the sort or the walk from its statistics.
#[derive(Debug, Clone)]
pub struct WholeWalk {
    query: ContentQuery,
}

impl WholeWalk {
    /// The walk of `query`'s whole read, when its filters may be tested per document
    /// (see [`CountedWalk::new`]).
    pub fn of(query: &ContentQuery) -> Option<WholeWalk> {
        CountedWalk::new(query, Dialect::Sqlite).map(|_| WholeWalk {
            query: query.clone(),
        })
    }

    /// The entity's unfiltered list: its total is the number of documents a walk passes.
    pub fn documents(&self) -> ContentQuery {
        ContentQuery {
            filters: Vec::new(),
            count_limit: None,
            ..self.query.clone()
        }
    }

    /// The walk, when `matched` of `documents` match densely enough for it to pay: every
    /// document in order, each tested ([`Form::Probe`]); the same documents in the same
    /// order as the sorted read.
    pub fn statement(&self, matched: u64, documents: u64) -> Option<SqlBuilder> {
        let dense = matched > 0 && matched.saturating_mul(WHOLE_WALK_SHARE) >= documents;
        dense.then(|| {
            let mut q = SqlBuilder::new(Dialect::Sqlite);
            q.sql("SELECT ")
                .document()
                .sql(" FROM content c")
                .sql(walk_index(Dialect::Sqlite, &self.query.filters));
            self.query.where_clause_as(&mut q, Form::Probe);
            q.sql(" ORDER BY c.sort_key, c.id_key");
            q
        })
    }
}

/// How far a walk to `page_end` may look when `matched` of `documents` match (a total
/// is at least the matches counted, so an estimate errs towards walking less): twice
/// the documents it passes if the matches are spread evenly, at least [`MIN_ROWS`],
/// at most every document. `None` when that is more documents than there are matches
/// (each costs a probe; the page statement reads each match once), more than
/// [`MAX_ROWS`], or the page lies past the matches.
pub(crate) fn walk_rows(page_end: u64, matched: u64, documents: u64) -> Option<u64> {
    if matched < page_end || documents == 0 {
        return None;
    }
    let expected = passed(page_end, matched, documents);
    (expected <= u128::from(matched) && expected <= u128::from(MAX_ROWS))
        .then(|| (expected as u64 * 2).max(MIN_ROWS).min(documents))
}

/// Whether testing each document along the order ([`Form::Probe`]) to pass `span`
/// matches costs less than reading all `matched` as a set ([`Form::Set`]): the same
/// weighing as [`walk_rows`], for a read that has no prefix to give up at (a seek from a
/// bookmark stops after its rows whatever the density).
pub(crate) fn probes_pay(span: u64, matched: u64, documents: u64) -> bool {
    matched > 0 && passed(span, matched, documents) <= u128::from(matched)
}

/// The documents an ordered walk passes to find `span` of `matched` matches spread
/// evenly over `documents` (`matched` > 0). In 128 bits: the product of two counts
/// never overflows.
fn passed(span: u64, matched: u64, documents: u64) -> u128 {
    (u128::from(span) * u128::from(documents)).div_ceil(u128::from(matched))
}

/// SQLite's planner has no statistics for an ordered walk and would drive it from a side
/// table; the walk names the order index. PostgreSQL plans it from its statistics.
pub(crate) fn order_index(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => " INDEXED BY content_order",
        Dialect::Postgres => "",
    }
}

/// The index a walk along the order names for `filters` on SQLite: the one that also
/// holds each document's position when a filter is a box in WGS 84 degrees, so the walk
/// tests the box in the index instead of reading each row it passes
/// (`content_order_points`, the index dense tiles walk).
pub(crate) fn walk_index(dialect: Dialect, filters: &[ContentFilter]) -> &'static str {
    let tests_a_box = filters
        .iter()
        .any(|f| matches!(f, ContentFilter::Area(area) if super::geo::lonlat_box(area).is_some()));
    match dialect {
        Dialect::Sqlite if tests_a_box => " INDEXED BY content_order_points",
        _ => order_index(dialect),
    }
}

/// The walk over the first `rows` documents of the order.
fn compile_prefix(query: &ContentQuery, dialect: Dialect, rows: u64) -> PageAttempt {
    let size = u64::from(query.page.size);
    let offset = query.page.offset();
    let mut page = SqlBuilder::new(dialect);
    page.sql("SELECT ")
        .document()
        .sql(" FROM (SELECT c.id_key AS k, c.sort_key AS o FROM ");
    prefix_rows(
        &mut page,
        query.entity,
        walk_index(dialect, &query.filters),
        rows,
    );
    let mut checks = super::CheckTable::default();
    page.sql(" WHERE c.entity = ").text(query.entity);
    within_prefix(&mut page, query.entity, rows);
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
    PageAttempt {
        page,
        size,
        odds: None,
    }
}

/// The rows `c` a walk over the first `rows` documents of `entity`'s order passes, as
/// the source of its `FROM`; [`within_prefix`] in its `WHERE` completes the bound.
///
/// On PostgreSQL they are a `LIMIT` subquery of the order, which the walk reads only
/// as far as it needs: the planner keeps only the columns the statement names, so it
/// stays in an index of the order where that holds them. A bound by the `rows`-th key
/// would pass those documents once more before the walk: 1.1 of 1.4 ms for a tag
/// filter's page 1 at scale 1, 19 of 29 ms for a zoom-6 tile at scale 10.
///
/// SQLite reads every column of such a subquery's rows (311 ms for that tile), so the
/// walk names `index`, an index in the order's key order, and stops at the `rows`-th
/// key.
pub(crate) fn prefix_rows(q: &mut SqlBuilder, entity: &'static str, index: &str, rows: u64) {
    match q.dialect {
        Dialect::Postgres => {
            q.sql("(SELECT * FROM content c WHERE c.entity = ")
                .text(entity)
                .sql(" ORDER BY c.sort_key, c.id_key LIMIT ")
                .param(SqlValue::Int(i64::try_from(rows).unwrap_or(i64::MAX)))
                .sql(") c");
        }
        Dialect::Sqlite => {
            q.sql("content c").sql(index);
        }
    }
}

/// ` AND` the row lies within the first `rows` documents of the entity's order on SQLite
/// (its sort key at most the `rows`-th's, so the rows passed are exactly a start of the
/// order); on PostgreSQL [`prefix_rows`] holds no others.
pub(crate) fn within_prefix(q: &mut SqlBuilder, entity: &'static str, rows: u64) {
    if q.dialect == Dialect::Postgres {
        return;
    }
    let index = order_index(q.dialect);
    q.sql(" AND c.sort_key <= (SELECT b.sort_key FROM content b")
        .sql(index)
        .sql(" WHERE b.entity = ")
        .text(entity)
        .sql(" ORDER BY b.sort_key, b.id_key LIMIT 1 OFFSET ")
        .param(SqlValue::Int(
            rows.saturating_sub(1).min(i64::MAX as u64) as i64
        ))
        .sql(")");
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
/// and a walk would test each walked document's position with a geometry. A box in
/// WGS 84 degrees is not one of them: a GIS client asks for large ones and pages
/// through them, and its test is two ranges on the row (`geo::lonlat_box`), as cheap
/// per document as an attribute's, so its density decides as for other filters.
pub(crate) fn answered_by_an_index(filter: &ContentFilter) -> bool {
    match filter {
        ContentFilter::IdIn(_) | ContentFilter::Radius(_) => true,
        ContentFilter::Area(area) => super::geo::lonlat_box(area).is_none(),
        _ => false,
    }
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

/// The walk of `query` in `dialect` as the store gets it when every one of 100,000
/// documents matches (for tests of the statement's text).
#[cfg(test)]
pub(crate) fn test_walk_in(query: &ContentQuery, dialect: Dialect) -> PageAttempt {
    CountedWalk::new(query, dialect)
        .expect("a walkable query")
        .attempt(Total::exact(100_000), 100_000)
        .expect("a walk")
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
