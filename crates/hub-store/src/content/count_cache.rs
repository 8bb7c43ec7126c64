//! Totals of list queries, kept until the next write to their entity.
//!
//! A filtered list counts its matches (up to the count limit) on every page: paging
//! through a search counts the same matches again for page 2, 3, …, and at a few
//! hundred thousand documents that count is most of a page's cost. The count depends
//! only on the count statement (the entity, the caller's filters and visibility are in
//! its text and parameters) and on that entity's documents and the rows written with
//! them, so it is kept with the entity's write revision (its *stamp*), which grows with
//! every committed write to the entity by any process sharing the database, and used
//! while the stamp is unchanged. A write to another entity leaves it: a live deployment
//! imports events all day while its visitors page through points of interest.
//!
//! The stamp is read before the count, in the same read: a write that lands between the
//! two leaves an entry stamped older than what it counted, which the next read finds
//! out of date; never an old count under a new stamp.
//!
//! Owns: the cache, its key and the stamp's statement. Must not: run statements (the
//! backends read the stamp and count, and hand both here).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use hub_query::content::bookmarks::read_revision;
use hub_query::content::{CompiledList, Total};
use hub_query::{Dialect, SqlBuilder};

/// Entries kept; beyond this the least recently stored half is dropped.
const MAX_ENTRIES: usize = 4_096;
/// Statements longer than this (long id lists, large polygons) are not kept.
const MAX_KEY_BYTES: usize = 8 * 1024;

/// The statement both backends run for the stamp of `compiled`'s totals: its entity's
/// write revision, one row.
pub(crate) fn stamp_statement(compiled: &CompiledList, dialect: Dialect) -> SqlBuilder {
    read_revision(compiled.entity, dialect)
}

/// Counts by statement, each valid for one stamp of its entity.
#[derive(Default)]
pub(crate) struct CountCache {
    inner: Mutex<Inner>,
    /// Totals counted and handed here, kept or not (for `/metrics`).
    counted: AtomicU64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    /// Increases with every store; orders entries for eviction.
    tick: u64,
}

struct Entry {
    stamp: i64,
    total: Total,
    stored: u64,
}

impl CountCache {
    /// The kept total of `count` when it was counted at `stamp`.
    pub(crate) fn get(&self, count: &SqlBuilder, stamp: i64) -> Option<Total> {
        let key = key(count)?;
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .entries
            .get(&key)
            .filter(|e| e.stamp == stamp)
            .map(|e| e.total)
    }

    /// The total last kept for `count`, at whatever stamp: a hint for choosing how to
    /// run a statement whose answer does not depend on it, never a total to answer with.
    pub(crate) fn last(&self, count: &SqlBuilder) -> Option<Total> {
        let key = key(count)?;
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.entries.get(&key).map(|e| e.total)
    }

    /// How many totals were counted: each one a count statement run.
    pub(crate) fn counted(&self) -> u64 {
        self.counted.load(Ordering::Relaxed)
    }

    /// Keeps `total`, counted by `count` at `stamp`.
    pub(crate) fn put(&self, count: &SqlBuilder, stamp: i64, total: Total) {
        self.counted.fetch_add(1, Ordering::Relaxed);
        let Some(key) = key(count) else { return };
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.tick += 1;
        let stored = inner.tick;
        let entries = &mut inner.entries;
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&key) {
            // Drop everything stored before the median: amortised O(1) per insert.
            let mut ticks: Vec<u64> = entries.values().map(|e| e.stored).collect();
            let median = *ticks.select_nth_unstable(MAX_ENTRIES / 2).1;
            entries.retain(|_, e| e.stored >= median);
        }
        entries.insert(
            key,
            Entry {
                stamp,
                total,
                stored,
            },
        );
    }
}

/// The statement text and its parameters, or `None` when too long to keep.
fn key(count: &SqlBuilder) -> Option<String> {
    let sql = count.as_sql();
    if sql.len() > MAX_KEY_BYTES {
        return None;
    }
    let key = format!("{sql}\u{0}{:?}", count.params());
    (key.len() <= MAX_KEY_BYTES).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_query::SqlValue;

    fn count(entity: &str) -> SqlBuilder {
        let mut q = SqlBuilder::new(Dialect::Sqlite);
        q.sql("SELECT COUNT(*) FROM content c WHERE c.entity = ")
            .param(SqlValue::Text(entity.into()));
        q
    }

    #[test]
    fn a_total_is_used_only_under_the_stamp_it_was_counted_at() {
        let cache = CountCache::default();
        cache.put(&count("Poi"), 7, Total::exact(40));
        assert_eq!(cache.get(&count("Poi"), 7), Some(Total::exact(40)));
        assert_eq!(cache.get(&count("Poi"), 8), None, "a write since");
        assert_eq!(cache.get(&count("Event"), 7), None, "other parameters");
        cache.put(&count("Poi"), 8, Total::exact(41));
        assert_eq!(cache.get(&count("Poi"), 8), Some(Total::exact(41)));
    }

    #[test]
    fn the_last_total_is_a_hint_at_any_stamp() {
        let cache = CountCache::default();
        assert_eq!(cache.last(&count("Poi")), None, "never counted");
        cache.put(&count("Poi"), 7, Total::exact(40));
        assert_eq!(cache.last(&count("Poi")), Some(Total::exact(40)));
        cache.put(&count("Poi"), 9, Total::exact(38));
        assert_eq!(cache.last(&count("Poi")), Some(Total::exact(38)));
        assert_eq!(cache.last(&count("Event")), None, "other parameters");
    }

    #[test]
    fn it_stays_bounded_and_skips_long_statements() {
        let cache = CountCache::default();
        for i in 0..(MAX_ENTRIES * 2) {
            cache.put(&count(&format!("E{i}")), 1, Total::exact(i as u64));
        }
        let kept = cache.inner.lock().unwrap().entries.len();
        assert!(kept <= MAX_ENTRIES, "{kept}");
        // The most recent survive.
        let last = MAX_ENTRIES * 2 - 1;
        assert_eq!(
            cache.get(&count(&format!("E{last}")), 1),
            Some(Total::exact(last as u64))
        );
        let long = count(&"x".repeat(MAX_KEY_BYTES));
        cache.put(&long, 1, Total::exact(1));
        assert_eq!(cache.get(&long, 1), None);
    }
}
