//! Content API queries: what a list request asks of the document store, and its
//! compilation to SQL.
//!
//! The compiled SQL expects this layout (created by `hub-store`'s migrations):
//!
//! | table | columns |
//! |---|---|
//! | `content` | `entity`, `id_key` (lower-case id), `id`, `sort_key` (folded Shortname), `source` (lower case), `active`, `last_change` (normalised UTC text), `latitude`, `longitude`, `shortname` (the document's `Shortname` text, for map points), `doc` (the JSON document), `docb` (its JSONB copy, read by `rawfilter`) |
//! | `content_language` | `entity`, `id_key`, `lang` — one row per language of `HasLanguage` |
//! | `content_title` | `entity`, `id_key`, `lang`, `folded` — one row per title field and language, case-folded |
//! | `content_title_fts` | SQLite only: FTS5 trigram index of `content_title.folded`, rowid = `content_title`'s rowid (PostgreSQL: a `pg_trgm` index on the column) |
//! | `content_tag` | `entity`, `id_key`, `kind`, `tag` — lower-case tag ids (also as `source.id`), place and area ids, and the values of the fields in [`value_tags`] (kind `value:<path>`, case kept) |

use crate::sql::{Dialect, SqlBuilder, SqlValue};

pub mod bookmarks;
pub mod checks;
pub mod cql2;
mod cursor;
mod filter_sql;
pub mod geo;
pub mod points;
pub mod polygon;
pub mod prefixed;
pub mod rawfilter;
pub mod rawfilter_index;
mod rawfilter_pg;
pub mod rawfilter_sql;
pub mod sorted_whole;
pub mod tagfilter;
pub mod value_tags;
mod walk;

use checks::CheckTable;
use filter_sql::compile_filter;
pub(crate) use filter_sql::Form;
pub use filter_sql::MIN_TRIGRAM_CHARS;
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
    /// Count at most this many matches exactly; `None` counts every match. A capped
    /// count stops after `limit + 1` matches (and [`COUNT_SLACK`] more), so a list page
    /// never walks a whole large collection for its `TotalResults` (see
    /// [`Total::settle`]).
    pub count_limit: Option<u64>,
}

/// Matches a capped count reads past its limit, so that the total it settles on
/// outlives that many written documents (see [`Total::slack`]): a live deployment
/// writes a few documents at a time, and counting a dense filter's 10,001 matches again
/// after each write cost 20–60 ms at scale 10. Reading 256 more costs about 2.5 % of
/// such a count.
pub const COUNT_SLACK: u64 = 256;

/// The total of a list: exact, or — when the count stopped at the query's
/// `count_limit` — an estimate that is at least `limit + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Total {
    pub value: u64,
    pub estimated: bool,
}

impl Total {
    pub fn exact(value: u64) -> Self {
        Total {
            value,
            estimated: false,
        }
    }

    /// The one rule both backends apply to a count from [`CompiledList::count`]:
    /// below or at `count_limit` it is exact; above, the count was cut short and the
    /// total is the backend's `estimate` (PostgreSQL: the planner's row estimate;
    /// SQLite has none) but never less than `limit + 1`, what a count stopping there
    /// gives (a capped count reads up to [`COUNT_SLACK`] matches further).
    pub fn settle(counted: u64, count_limit: Option<u64>, estimate: Option<u64>) -> Self {
        match count_limit {
            Some(limit) if counted > limit => Total {
                value: estimate
                    .unwrap_or(0)
                    .max(counted.min(limit.saturating_add(1))),
                estimated: true,
            },
            _ => Total::exact(counted),
        }
    }

    /// How many documents may be written before a total settled from `counted` could
    /// change: a write changes whether at most the documents it writes match, so a
    /// count that went `n` matches past `limit + 1` still reaches it after `n` of them.
    /// An exact total outlives none.
    pub fn slack(counted: u64, count_limit: Option<u64>) -> u64 {
        count_limit.map_or(0, |limit| counted.saturating_sub(limit.saturating_add(1)))
    }

    /// True when a count of `counted` needs the backend's estimate (see [`Total::settle`]).
    pub fn needs_estimate(counted: u64, count_limit: Option<u64>) -> bool {
        count_limit.is_some_and(|limit| counted > limit)
    }
}

/// Pages of an unfiltered list in the default order up to this one read their
/// documents straight along the order index.
const PAGES_READ_IN_ORDER: u32 = 5;

/// Whether a page is read straight along the `(entity, sort_key, id_key)` index, each
/// row's document fetched as the index passes it, rather than keys first and documents
/// joined by key after. Straight along, every skipped row costs a document fetch, but
/// the page's rows need no second index search. Measured on the scale-1 demo, page
/// size 10: the straight read costs PostgreSQL 30 % less at page 1, still less at
/// offset 100, more from about offset 150 (its heap is not in index order); on SQLite
/// 31 against 51 µs at page 1, 31 against 87 at page 5, and about even at offset 3,000.
/// Only an unfiltered list qualifies: a filtered page walks the index anyway
/// ([`CountedWalk`]) and carries its count.
fn reads_documents_in_order(query: &ContentQuery) -> bool {
    query.is_whole_list_in_default_order() && query.page.number <= PAGES_READ_IN_ORDER
}

/// The SQL for the page of documents and for the total count.
pub struct CompiledList {
    /// The entity listed: its write revision stamps the kept totals of `count`.
    pub entity: &'static str,
    pub page: SqlBuilder,
    pub count: SqlBuilder,
    /// When true, every page row carries the total as its second column, so `count`
    /// is needed only when the page is empty (a page past the last).
    pub page_has_total: bool,
    /// The checks both statements leave to the database (the same ids in both: they
    /// share one WHERE clause), to resolve a failed one to the client's parameter.
    pub checks: CheckTable,
    /// The query's `count_limit`: what `count` stops at, for [`Total::settle`].
    pub count_limit: Option<u64>,
    /// Cheaper statements for the page, tried in order before `page` (see
    /// [`PageAttempt`]); the first that returns a full page answers it.
    pub attempts: Vec<PageAttempt>,
    /// A filtered page's walk of the order index, decided once the total is known
    /// (see [`CountedWalk`]); tried after `attempts`, before `page`.
    pub walk: Option<CountedWalk>,
}

pub use walk::{CountedWalk, PageAttempt, WholeWalk};

impl ContentQuery {
    /// No filters and the default order: the entity's `(entity, sort_key, id_key)`
    /// index read as it is, the same rows for every caller.
    pub(crate) fn is_whole_list_in_default_order(&self) -> bool {
        self.filters.is_empty() && matches!(self.order, ContentOrder::Default)
    }

    /// The limit the count of this query stops at. An unfiltered list counts the
    /// entity exactly: one pass over its index entries (3 ms for 70,000 documents),
    /// paid once per write because the store keeps totals until the content changes,
    /// where a capped count would leave SQLite, which has no estimate, answering the
    /// lower bound `limit + 1` for every large collection.
    pub fn effective_count_limit(&self) -> Option<u64> {
        if self.filters.is_empty() {
            None
        } else {
            self.count_limit
        }
    }

    /// The SQL of a page: its keys found first where the order allows (Shortname,
    /// seed), otherwise the same statement as [`ContentQuery::compile_whole`] with the
    /// page's `LIMIT`.
    pub fn compile(&self, dialect: Dialect) -> CompiledList {
        if reads_documents_in_order(self) {
            return self.compile_documents_in_order(dialect);
        }
        if let Some((page, checks)) = self.compile_keys_first(dialect) {
            let page_has_total = !self.filters.is_empty();
            return CompiledList {
                entity: self.entity,
                page,
                count: self.compile_count(dialect),
                page_has_total,
                checks,
                count_limit: self.effective_count_limit(),
                attempts: Vec::new(),
                walk: CountedWalk::new(self, dialect),
            };
        }
        self.compile_whole(dialect)
    }

    /// The SQL of a whole read (`pagesize=-1`, the store's document stream): every
    /// match in the query's order, read in one pass. Unlike [`ContentQuery::compile`]
    /// it never finds the keys first: for a page that saves sorting every matching
    /// document to keep a few, but when every document is read anyway the second,
    /// outer sort has to order every document again (both backends sorted the whole
    /// documents through temporary files: most of the time of a CSV of every POI).
    pub fn compile_whole(&self, dialect: Dialect) -> CompiledList {
        if let ContentOrder::Distance {
            latitude,
            longitude,
        } = self.order
        {
            return geo::compile_nearest(self, dialect, latitude, longitude);
        }
        self.compile_documents_in_order(dialect)
    }

    /// The documents selected, sorted and paged in one statement.
    fn compile_documents_in_order(&self, dialect: Dialect) -> CompiledList {
        let mut page = SqlBuilder::new(dialect);
        page.sql("SELECT ").document().sql(" FROM content c");
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
            entity: self.entity,
            page,
            count: self.compile_count(dialect),
            page_has_total: false,
            checks,
            count_limit: self.effective_count_limit(),
            attempts: Vec::new(),
            walk: None,
        }
    }

    pub(crate) fn compile_count(&self, dialect: Dialect) -> SqlBuilder {
        let mut count = SqlBuilder::new(dialect);
        match self.effective_count_limit() {
            None => {
                count.sql("SELECT COUNT(*) FROM content c");
                self.where_clause_as(&mut count, self.every_match_form(dialect));
            }
            Some(limit) => {
                count.sql("SELECT COUNT(*) FROM (SELECT 1 FROM content c");
                let form = if self.counts_by_probing(dialect) {
                    Form::Probe
                } else {
                    Form::Set
                };
                self.where_clause_as(&mut count, form);
                let read = limit.saturating_add(1).saturating_add(COUNT_SLACK);
                count
                    .sql(" LIMIT ")
                    .param(SqlValue::Int(read.min(i64::MAX as u64) as i64))
                    .sql(") capped");
            }
        }
        count
    }

    /// Whether a capped count tests document after document ([`Form::Probe`]) rather
    /// than collect the matches first: for a search no index narrows (a term shorter
    /// than [`MIN_TRIGRAM_CHARS`]), beside conditions on the document's own columns
    /// only. Collecting read every title of the entity before the first match counted
    /// (`searchfilter=i` over 40,000 accommodations: 310 ms PostgreSQL, 143 ms SQLite);
    /// probing stops at the cap (31 and 30 ms). A term that never reaches the cap is
    /// probed through every document: on PostgreSQL still cheaper than collecting (`qx`:
    /// 241 → 117 ms); on SQLite, which collects from a covering index, dearer (79 → 122
    /// ms), and two letters reach the cap only half the time, so SQLite probes single
    /// letters only.
    fn counts_by_probing(&self, dialect: Dialect) -> bool {
        let shortest_collected = match dialect {
            Dialect::Sqlite => 2,
            Dialect::Postgres => MIN_TRIGRAM_CHARS,
        };
        let short_search = |f: &ContentFilter| {
            matches!(f, ContentFilter::Search { folded_term, .. }
                if folded_term.chars().count() < shortest_collected)
        };
        self.filters.iter().any(short_search)
            && self.filters.iter().all(|f| {
                short_search(f)
                    || matches!(
                        f,
                        ContentFilter::Active(_)
                            | ContentFilter::SourceIn(_)
                            | ContentFilter::ChangedSince(_)
                            | ContentFilter::ChangedUntil(_)
                    )
            })
    }

    /// The form of a statement that reads every match (an exact count, the prefix of
    /// an order). Where a capped count probes ([`ContentQuery::counts_by_probing`]),
    /// PostgreSQL probes here too: pg_trgm reads its whole index for a term without a
    /// trigram (720,000 entries at scale 10, 210 ms before the first title, whatever
    /// the entity), while probing costs in proportion to the entity's documents (`h`
    /// over 70,000 POIs 364 → 164 ms, over 3,000 webcams 210 → 7 ms). SQLite collects
    /// from its covering index.
    pub(crate) fn every_match_form(&self, dialect: Dialect) -> Form {
        if dialect == Dialect::Postgres && self.counts_by_probing(dialect) {
            Form::Probe
        } else {
            Form::Set
        }
    }

    /// The statement whose planned row count is the estimate of an uncapped total
    /// (PostgreSQL: `EXPLAIN (FORMAT JSON)` of it); same WHERE clause as the count.
    pub fn compile_estimate(&self, dialect: Dialect) -> SqlBuilder {
        let mut rows = SqlBuilder::new(dialect);
        rows.sql("SELECT 1 FROM content c");
        self.where_clause(&mut rows);
        rows
    }

    /// For orders computed from indexed columns: find the page's keys first (from the
    /// `(entity, sort_key, id_key)` index where possible), then read only those
    /// documents. Sorting whole documents of every match is what made filtered pages slow.
    fn compile_keys_first(&self, dialect: Dialect) -> Option<(SqlBuilder, CheckTable)> {
        // With filters, the total comes from the same pass (a window count) instead of
        // evaluating the filters a second time; a plain list counts from the index.
        let with_total = !self.filters.is_empty();
        let mut page = SqlBuilder::new(dialect);
        page.sql("SELECT ").document().sql(if with_total {
            ", p.n FROM (SELECT c.id_key AS k, COUNT(*) OVER () AS n, "
        } else {
            " FROM (SELECT c.id_key AS k, "
        });
        // The order's key and how it sorts (the next begin: events without one last).
        let mut descending = false;
        match &self.order {
            ContentOrder::Default => {
                page.sql("c.sort_key");
            }
            ContentOrder::Seed(seed) => seed_order_key(&mut page, seed),
            ContentOrder::NextBegin {
                descending: down,
                now,
            } => {
                next_begin(&mut page, self.entity, now);
                descending = *down;
            }
            _ => return None,
        }
        let next_begin = matches!(self.order, ContentOrder::NextBegin { .. });
        // PostgreSQL takes an output column in ORDER BY only on its own, so events
        // without a next begin go last by `NULLS LAST`, which both backends read as
        // `o IS NULL, o` (the whole read's spelling).
        let order_by = |alias: &str| match (next_begin, descending) {
            (false, _) => format!("{alias}o, {alias}k"),
            (true, false) => format!("{alias}o ASC NULLS LAST, {alias}k"),
            (true, true) => format!("{alias}o DESC NULLS LAST, {alias}k"),
        };
        // PostgreSQL's planner prices `LIMIT` over a window count as if it could stop
        // early, so it walks `content_order` and tests every document of the entity; the
        // count needs every match anyway. `OFFSET 0` makes it find the matches first by
        // their cheapest index (a polygon at scale 10: 46 ms → 0.7 ms), then sort.
        let fence = with_total && dialect == Dialect::Postgres;
        page.sql(" AS o FROM ");
        if fence {
            page.sql("(SELECT c.id_key, c.sort_key FROM content c");
        } else {
            page.sql("content c");
        }
        let checks = self.where_clause(&mut page);
        if fence {
            page.sql(" OFFSET 0) c");
        }
        page.sql(&format!(" ORDER BY {} LIMIT ", order_by("")))
            .param(SqlValue::Int(self.page.size as i64))
            .sql(" OFFSET ")
            .param(SqlValue::Int(self.page.offset() as i64))
            .sql(") p JOIN content c ON c.entity = ")
            .text(self.entity)
            .sql(&format!(" AND c.id_key = p.k ORDER BY {}", order_by("p.")));
        Some((page, checks))
    }

    /// Appends the WHERE clause; returns the checks it leaves to the database. The
    /// clause is deterministic, so every statement of one query gets the same ids.
    pub(crate) fn where_clause(&self, q: &mut SqlBuilder) -> CheckTable {
        self.where_clause_as(q, Form::Set)
    }

    /// [`ContentQuery::where_clause`] with the side-table filters in `form`.
    pub(crate) fn where_clause_as(&self, q: &mut SqlBuilder, form: Form) -> CheckTable {
        let mut checks = CheckTable::default();
        q.sql(" WHERE c.entity = ").text(self.entity);
        for filter in &self.filters {
            q.sql(" AND ");
            compile_filter(q, filter, self.entity, form, &mut checks);
        }
        checks
    }
}

/// Orders by the first `EventDate` begin among ranges not yet over at `now`; events
/// without one come last in both directions.
fn next_begin_order(q: &mut SqlBuilder, entity: &'static str, descending: bool, now: &str) {
    for suffix in [" IS NULL, ", if descending { " DESC, " } else { " ASC, " }] {
        next_begin(q, entity, now);
        q.sql(suffix);
    }
    q.sql("c.id_key");
}

/// An event's next begin: the earliest begin of its dates that end at or after `now`.
pub(crate) fn next_begin(q: &mut SqlBuilder, entity: &'static str, now: &str) {
    q.sql("(SELECT MIN(d.date_begin) FROM content_date d WHERE d.entity = ")
        .text(entity)
        .sql(" AND d.id_key = c.id_key AND d.date_end >= ")
        .text(now)
        .sql(")");
}

/// The seeded order key: the first 15 hex digits of `md5(id_key || seed)` as an integer.
/// SQLite gets the same function registered by the store, so both backends agree.
fn seed_order_key(q: &mut SqlBuilder, seed: &str) {
    match q.dialect {
        Dialect::Sqlite => {
            q.sql("hub_seed(c.id_key, ").text(seed).sql(")");
        }
        Dialect::Postgres => {
            // The same 15 hex digits `hub_seed` reads as a number, compared as bytes:
            // fixed-length lowercase hex sorts in byte order as its value does, so the
            // order (and its ties, broken by id) is SQLite's. Converting them to a
            // number first (`('x' || …)::bit(60)::bigint`) cost 10 % of PostgreSQL's
            // CPU for a seeded page.
            q.sql("substr(md5(c.id_key || ")
                .text(seed)
                .sql(r#"), 1, 15) COLLATE "C""#);
        }
    }
}

#[cfg(test)]
mod tests;
