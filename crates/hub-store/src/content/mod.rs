//! Content documents: the [`ContentRepo`] the Content API, the traffic feed, the demo
//! loader and `hub import` use, and the decisions both backends share.
//!
//! Owns: the repository trait, its value types ([`ContentPage`], [`PutOutcome`]), and
//! every decision that does not depend on the database (the tracked save in [`put`],
//! which revisions a write bumps, how a failed query check becomes a client error).
//! Must not: hold SQL or connections — the implementations are `sqlite/content.rs` and
//! `postgres/content.rs`, which only move rows.

pub(crate) mod bookmarks;
pub(crate) mod count_cache;
pub mod document_cache;
pub(crate) mod event_dates;
pub(crate) mod kept_lists;
pub(crate) mod prefixes;
pub(crate) mod put;

use async_trait::async_trait;
use hub_query::content::checks::{CheckTable, FailedCheck};
use hub_query::content::points::CompiledPoints;
use hub_query::content::{CompiledList, ContentQuery, PageAttempt};
use serde_json::Value;

use crate::{Result, StoreError};

/// What the store keeps of list orders between requests, each held to the entity's
/// write revision: deep-page bookmarks and prefixes of seeded and `rawsort` orders.
#[derive(Default)]
pub(crate) struct KeptOrders {
    pub(crate) bookmarks: bookmarks::PageBookmarks,
    pub(crate) prefixes: prefixes::OrderPrefixes,
}

/// One page of documents and the total number of matches.
#[derive(Debug, Clone)]
pub struct ContentPage {
    pub total: u64,
    /// The count stopped at the query's `count_limit`: `total` is an estimate (at least
    /// the limit + 1), not the exact number of matches.
    pub total_estimated: bool,
    /// Documents as stored JSON text, in order.
    pub docs: Vec<String>,
}

impl ContentPage {
    /// The page of `docs` of a list of `total` matches.
    pub(crate) fn of(total: hub_query::content::Total, docs: Vec<String>) -> ContentPage {
        ContentPage {
            total: total.value,
            total_estimated: total.estimated,
            docs,
        }
    }
}

/// A located document as a map point, from its row's columns (see
/// `hub_query::content::points`).
#[derive(Debug, Clone, PartialEq)]
pub struct MapPoint {
    pub id: String,
    pub latitude: f64,
    pub longitude: f64,
    /// The document's `Shortname`, when it is text.
    pub shortname: Option<String>,
}

/// Every document of a query, for answers of any size: the number of matches, then the
/// stored texts in the query's order, in batches (see [`crate::batches`]).
pub struct DocumentStream {
    pub total: u64,
    pub docs: crate::Batches<String>,
}

/// What saving one document did.
#[derive(Debug, Clone, PartialEq)]
pub struct PutOutcome {
    pub entity: &'static str,
    pub id: String,
    /// No document with this id existed.
    pub created: bool,
    /// The content differs from the stored one (always true when created).
    pub changed: bool,
    /// A create-only save found the id taken and wrote nothing.
    pub existed: bool,
}

/// The spatial and temporal extent of an entity's documents (see [`ContentRepo::extent`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extent {
    /// `[west, south, east, north]` in degrees (EPSG:4326), when any document has a position.
    pub bbox: Option<[f64; 4]>,
    /// Earliest and latest `_Meta.LastChange` (UTC, `YYYY-MM-DDTHH:MM:SS`), when known.
    pub changed: Option<(String, String)>,
}

/// The one statement both backends run for [`ContentRepo::extent`] (`?1`/`$1`: entity).
pub(crate) fn extent_sql(placeholder: &str) -> String {
    format!(
        "SELECT min(longitude), min(latitude), max(longitude), max(latitude), \
         min(last_change), max(last_change) FROM content WHERE entity = {placeholder}"
    )
}

/// The extent from the statement's six columns.
pub(crate) fn extent_of(
    box_columns: [Option<f64>; 4],
    changed: (Option<String>, Option<String>),
) -> Extent {
    let bbox = match box_columns {
        [Some(w), Some(s), Some(e), Some(n)] => Some([w, s, e, n]),
        _ => None,
    };
    let changed = match changed {
        (Some(first), Some(last)) => Some((first, last)),
        _ => None,
    };
    Extent { bbox, changed }
}

/// The content documents of one store. Ids match case-insensitively everywhere.
#[async_trait]
pub trait ContentRepo: Send + Sync {
    /// A page of documents matching `query`, and the total count. A query whose
    /// expression meets data of another type fails with [`StoreError::Query`].
    async fn list(&self, query: ContentQuery) -> Result<ContentPage>;

    /// Every document matching `query` (its page is ignored), in its order, as a cursor.
    /// The count and the cursor read one snapshot of the store, so `total` is exactly the
    /// number of documents that follow, each once, whatever is written meanwhile.
    async fn stream(&self, query: ContentQuery) -> Result<DocumentStream>;

    /// The first `limit` located documents `query` matches, in the default order, as
    /// points (its order and page are not used). Fails as [`ContentRepo::list`] does.
    async fn points(&self, query: ContentQuery, limit: u64) -> Result<Vec<MapPoint>>;

    /// One document (its stored JSON text) by entity name and id.
    async fn get(&self, entity: &'static str, id: &str) -> Result<Option<String>>;

    /// Every document of one entity type, parsed, in id order (for feeds that render a
    /// whole collection, such as the traffic situations).
    async fn all(&self, entity: &'static str) -> Result<Vec<Value>>;

    /// A number that grows with every write to documents of `entity` (0 before the
    /// first), for caches of views derived from a whole collection.
    async fn revision(&self, entity: &'static str) -> Result<i64>;

    /// Where and when the documents of `entity` are: the box around their positions and
    /// the range of their last changes (positions and change times are open data).
    async fn extent(&self, entity: &'static str) -> Result<Extent>;

    /// Number of documents per entity name, by name.
    async fn counts(&self) -> Result<Vec<(String, u64)>>;

    /// True when no content document is stored (a fresh data directory).
    async fn is_empty(&self) -> Result<bool> {
        Ok(self.counts().await?.iter().all(|(_, n)| *n == 0))
    }

    /// Saves one document (insert or replace) atomically, stamping `_Meta.LastUpdate`
    /// with `now` and `_Meta.LastChange` only when the content really changed. With
    /// `create_only`, an existing id is left alone (`PutOutcome::existed`).
    async fn put(
        &self,
        entity: &'static str,
        doc: Value,
        now: String,
        create_only: bool,
    ) -> Result<PutOutcome>;

    /// Like [`ContentRepo::put`] for many documents in one transaction (all or none);
    /// blocking, for `hub import`. `progress` gets the number written so far.
    fn put_tracked_blocking(
        &self,
        docs: Vec<(&'static str, Value)>,
        now: &str,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Vec<PutOutcome>>;

    /// Deletes one document; false when there was none.
    async fn delete(&self, entity: &'static str, id: &str) -> Result<bool>;

    /// Inserts or replaces documents as given (no `_Meta` bookkeeping) in one
    /// transaction; blocking, for bulk loads. `progress` gets the number written so far.
    fn put_batch_blocking(
        &self,
        docs: &[(&'static str, Value)],
        progress: &mut dyn FnMut(u64),
    ) -> Result<()>;
}

/// Parses stored documents.
/// Every entity's write revision (an entity never written is absent: revision 0).
pub(crate) type Revisions = std::sync::Arc<std::collections::HashMap<String, i64>>;

/// Reads every entity's revision (a table of a few rows, read whole so one read answers
/// whichever entity a waiting request asks for).
pub(crate) const REVISIONS_SQL: &str = "SELECT entity, revision FROM content_revision";

pub(crate) fn parse_documents(docs: Vec<String>) -> Result<Vec<Value>> {
    docs.iter()
        .map(|d| serde_json::from_str(d).map_err(StoreError::from))
        .collect()
}

/// The error of a list query whose database run failed: a failed check becomes the
/// client's [`StoreError::Query`] naming the parameter and position the API compiled;
/// an unknown check id stays the server's fault.
pub(crate) fn failed_check_error(checks: &CheckTable, failed: FailedCheck) -> StoreError {
    match checks.resolve(failed) {
        Some(e) => StoreError::Query(e),
        None => StoreError::Task(format!(
            "the database reported check {} that the query never issued",
            failed.id
        )),
    }
}

/// Logs a list query's SQL and time for `HUB_LOG=hub_store::sql=debug`: the backend
/// benchmark reads them to tell the database's share of a request from the API's own.
pub(crate) struct ListLog(Option<(std::time::Instant, String, String)>);

impl ListLog {
    pub(crate) fn start(compiled: &CompiledList) -> ListLog {
        ListLog(
            tracing::enabled!(target: "hub_store::sql", tracing::Level::DEBUG).then(|| {
                (
                    std::time::Instant::now(),
                    compiled.page.as_sql().to_string(),
                    format!("{:?}", compiled.page.params()),
                )
            }),
        )
    }

    pub(crate) fn finish(self) {
        if let Some((started, sql, params)) = self.0 {
            tracing::debug!(target: "hub_store::sql", micros = started.elapsed().as_micros() as u64, sql = %sql, params = %params, "list_content");
        }
    }
}

/// The query of [`ContentRepo::stream`]: `query` with one page holding every match.
fn unpaged(mut query: ContentQuery) -> ContentQuery {
    query.page = hub_query::content::Page {
        size: u32::MAX,
        number: 1,
    };
    // A stream's total is the number of documents that follow: always exact.
    query.count_limit = None;
    query
}

/// Compiles the whole read of `query` (every match, [`unpaged`]) for `dialect` as
/// [`ContentQuery::compile_whole`] does, logging as [`ListLog`] does.
pub(crate) fn compile_stream(
    query: ContentQuery,
    dialect: hub_query::Dialect,
) -> (CompiledList, ListLog) {
    let compiled = unpaged(query).compile_whole(dialect);
    let log = ListLog::start(&compiled);
    (compiled, log)
}

/// Compiles `query` for `dialect`, logging as [`ListLog`] does.
pub(crate) fn compile(
    query: &ContentQuery,
    dialect: hub_query::Dialect,
) -> (CompiledList, ListLog) {
    let compiled = query.compile(dialect);
    let log = ListLog::start(&compiled);
    (compiled, log)
}

/// Most documents of a page that [`reads_a_bounded_page`] may answer.
pub(crate) const BOUNDED_PAGE_SIZE: u32 = 100;
/// How deep into its list a page that [`reads_a_bounded_page`] may start: a page past
/// the first [`hub_query::content::bookmarks::STRIDE`] entries seeks from a kept mark,
/// and reads the marks up to it (this many index entries at most) when none is kept or
/// a write made them out of date.
pub(crate) const BOUNDED_PAGE_DEPTH: u64 = 10_000;

/// Whether every statement of `query`'s page reads a bounded number of rows along an
/// index, whatever the store holds: the whole list (no filter: a filter may scan) in the
/// default order, at most [`BOUNDED_PAGE_SIZE`] documents, starting within the first
/// [`BOUNDED_PAGE_DEPTH`] entries. (Its total, kept until the entity's next write, is an
/// index count of the entity.) A store may run such a page where a slow statement would
/// hold up others, as PostgreSQL's shared connections.
pub(crate) fn reads_a_bounded_page(query: &ContentQuery) -> bool {
    query.filters.is_empty()
        && query.order == hub_query::content::ContentOrder::Default
        && query.page.size <= BOUNDED_PAGE_SIZE
        && query.page.offset() < BOUNDED_PAGE_DEPTH
}

/// The attempts at `listed`'s page (see [`hub_query::content::PageAttempt`]) worth a
/// statement, as the total last kept for its count tells, at whatever stamp: the total
/// only chooses statements, and an attempt that falls short gives way to the next.
pub(crate) fn attempts_worth_trying<'a>(
    counts: &count_cache::CountCache,
    listed: &'a CompiledList,
) -> impl Iterator<Item = &'a PageAttempt> {
    let kept = if listed.attempts.is_empty() {
        None
    } else {
        counts.last(&listed.count)
    };
    listed.attempts.iter().filter(move |a| a.worth_trying(kept))
}

/// What the totals last kept for a list's count (`listed`) and its entity's (`all`), at
/// whatever stamp (before the last write, say), say about reading the list's first
/// `limit` map points. The counts only choose a statement, and the answer never depends
/// on them: a walk that finds too few points gives way, and a read of the matches is
/// the answer whatever their number.
pub(crate) enum KeptPoints {
    /// The walk they pick.
    Walk(CompiledPoints),
    /// Fewer matches than the limit: no walk could answer, so the matches are read
    /// without counting them again. A read that reaches the limit shows the total stale,
    /// and the store counts afresh for the next tile.
    Matches,
    /// Nothing kept, or totals that pick no walk: the store counts afresh and decides.
    Count,
}

/// See [`KeptPoints`]: both stores decide by this one function.
pub(crate) fn kept_points(
    counts: &count_cache::CountCache,
    listed: &CompiledList,
    all: &CompiledList,
    limit: u64,
) -> KeptPoints {
    let (Some(walk), Some(total)) = (listed.walk.as_ref(), counts.last(&listed.count)) else {
        return KeptPoints::Count;
    };
    if total.value < limit {
        return KeptPoints::Matches;
    }
    let walked = counts
        .last(&all.count)
        .and_then(|documents| walk.points(total, documents.value, limit));
    match walked {
        Some(walked) => KeptPoints::Walk(walked),
        None => KeptPoints::Count,
    }
}

#[cfg(test)]
#[path = "points_tests.rs"]
mod points_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use hub_query::content::checks::{FoundType, QueryCheck};
    use hub_query::content::{ContentFilter, ContentOrder, Page, Total};
    use hub_query::Dialect;

    #[test]
    fn a_page_is_bounded_only_unfiltered_in_the_default_order_and_near_the_start() {
        let page = |filters: Vec<ContentFilter>, order, size, number| ContentQuery {
            entity: "HubActivityPoi",
            filters,
            order,
            page: Page { size, number },
            count_limit: None,
        };
        let plain = |size, number| page(Vec::new(), ContentOrder::Default, size, number);
        let table = [
            ("page 1 of 10", plain(10, 1), true),
            ("page 1 of 100", plain(100, 1), true),
            ("page 1 of 101", plain(101, 1), false),
            ("page 300 of 10, offset 2,990", plain(10, 300), true),
            ("last page before the depth", plain(100, 100), true),
            ("first page at the depth", plain(100, 101), false),
            ("page 1,001 of 10, offset 10,000", plain(10, 1001), false),
            (
                "filtered",
                page(
                    vec![ContentFilter::Active(true)],
                    ContentOrder::Default,
                    10,
                    1,
                ),
                false,
            ),
            (
                "seeded",
                page(Vec::new(), ContentOrder::Seed("7".into()), 10, 1),
                false,
            ),
        ];
        for (name, query, bounded) in table {
            assert_eq!(reads_a_bounded_page(&query), bounded, "{name}");
        }
    }

    #[test]
    fn kept_totals_choose_how_map_points_are_read() {
        let listed = ContentQuery {
            entity: "HubActivityPoi",
            filters: vec![ContentFilter::Active(true)],
            order: ContentOrder::Default,
            page: Page {
                size: 10,
                number: 1,
            },
            count_limit: None,
        };
        let all = ContentQuery {
            filters: Vec::new(),
            ..listed.clone()
        };
        let (listed, all) = (
            listed.compile(Dialect::Sqlite),
            all.compile(Dialect::Sqlite),
        );
        // (the list's kept total, the entity's, the limit) → the choice.
        let choice = |total: Option<u64>, documents: Option<u64>, limit: u64| {
            let counts = count_cache::CountCache::default();
            if let Some(n) = total {
                counts.put(
                    &listed.count,
                    count_cache::Stamp {
                        revision: 1,
                        written: 1,
                    },
                    Total::exact(n),
                    0,
                );
            }
            if let Some(n) = documents {
                counts.put(
                    &all.count,
                    count_cache::Stamp {
                        revision: 1,
                        written: 1,
                    },
                    Total::exact(n),
                    0,
                );
            }
            match kept_points(&counts, &listed, &all, limit) {
                KeptPoints::Walk(_) => "walk",
                KeptPoints::Matches => "matches",
                KeptPoints::Count => "count",
            }
        };
        for (total, documents, limit, expected) in [
            (None, None, 100, "count"),
            (None, Some(3_000), 100, "count"),
            // Fewer matches than the limit: the entity's count does not matter.
            (Some(99), None, 100, "matches"),
            (Some(0), Some(3_000), 100, "matches"),
            (Some(100), None, 100, "count"),
            // Dense: walked; sparse: counted afresh (the totals rule nothing out).
            (Some(1_000), Some(3_000), 100, "walk"),
            (Some(100), Some(3_000), 100, "count"),
        ] {
            assert_eq!(
                choice(total, documents, limit),
                expected,
                "{total:?} of {documents:?}, limit {limit}"
            );
        }
    }

    #[test]
    fn failed_checks_are_client_faults_only_when_the_query_issued_them() {
        let mut checks = CheckTable::default();
        checks.register(QueryCheck {
            parameter: "expression",
            position: 26,
            wanted: "a number",
        });
        let cases = [(1, true), (2, false), (0, false)];
        for (id, client) in cases {
            let e = failed_check_error(
                &checks,
                FailedCheck {
                    id,
                    found: FoundType::Text,
                },
            );
            assert_eq!(e.is_client_fault(), client, "{id}: {e}");
        }
    }
}
