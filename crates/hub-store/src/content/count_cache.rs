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
//! imports events all day while its visitors page through points of interest. A total
//! estimated past the count limit also outlives as many written documents as its count
//! read matches past the limit (see [`Stamp::holds_at`]): a busy entity's large lists
//! are not counted again after every edit.
//!
//! The stamp is read before the count, in the same read: a write that lands between the
//! two leaves an entry stamped older than what it counted, which the next read finds
//! out of date (or counts its documents among those written since); never an old count
//! under a new stamp.
//!
//! Owns: the cache, its key and the stamp's statement. Must not: run statements (the
//! backends read the stamp and count, and hand both here).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use hub_query::content::{CompiledList, Total};
use hub_query::{Dialect, SqlBuilder};

/// Entries kept; beyond this the least recently stored half is dropped.
const MAX_ENTRIES: usize = 4_096;
/// A total chooses plans while fewer than this share of it were written since
/// ([`CountCache::hint`]).
const HINT_SHARE: u64 = 16;
/// Statements longer than this (long id lists, large polygons) are not kept.
const MAX_KEY_BYTES: usize = 8 * 1024;

/// Where an entity's writes stood when a total was counted: its write revision, and
/// how many documents its writes have written in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub revision: i64,
    pub written: i64,
}

impl Stamp {
    /// Whether a total counted at `self`, with `slack` matches read past its limit,
    /// holds at `now`: nothing was written since, or no more documents than its slack
    /// (each written document changes whether at most itself matches). Every write
    /// counts at least one document; one that counted none (a process from before
    /// migration 16/18 writing to the same database) leaves fewer documents than
    /// writes, and then nothing holds.
    fn holds_at(self, now: Stamp, slack: u64) -> bool {
        let writes = now.revision.wrapping_sub(self.revision);
        let written = now.written.wrapping_sub(self.written);
        writes == 0 || ((1..=written).contains(&writes) && written <= slack as i64)
    }
}

/// The statement both backends run for the stamp of `compiled`'s totals: its entity's
/// write revision and documents written, one row of two columns (zeros before the
/// entity's first write), from one probe of the table's key.
pub(crate) fn stamp_statement(compiled: &CompiledList, dialect: Dialect) -> SqlBuilder {
    let mut q = SqlBuilder::new(dialect);
    q.sql("SELECT COALESCE(MAX(r.revision), 0), COALESCE(MAX(r.written), 0) FROM content_revision r WHERE r.entity = ")
        .text(compiled.entity);
    q
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
    stamp: Stamp,
    total: Total,
    /// Matches the count read past its limit (see [`Total::slack`]).
    slack: u64,
    stored: u64,
}

impl CountCache {
    /// The kept total of `count` when it still holds at `stamp` ([`Stamp::holds_at`]).
    pub(crate) fn get(&self, count: &SqlBuilder, stamp: Stamp) -> Option<Total> {
        self.kept(count, |e| e.stamp.holds_at(stamp, e.slack))
    }

    /// The kept total of `count` for choosing a plan, never for an answer: it holds as
    /// [`CountCache::get`]'s does, or while the documents written since are at most a
    /// [`HINT_SHARE`]th of it. A walk weighs a filter's matches against the entity's
    /// documents; after a write to a large entity, counting them all again (3–4 ms for
    /// 70,000) was most of a walked page.
    pub(crate) fn hint(&self, count: &SqlBuilder, stamp: Stamp) -> Option<Total> {
        self.kept(count, |e| {
            let near = e.slack.max(e.total.value / HINT_SHARE);
            e.stamp.holds_at(stamp, near)
        })
    }

    /// The total last kept for `count`, at whatever stamp: a hint for choosing how to
    /// run a statement whose answer does not depend on it, never a total to answer with.
    pub(crate) fn last(&self, count: &SqlBuilder) -> Option<Total> {
        self.kept(count, |_| true)
    }

    /// The total kept for `count` when its entry passes `holds`.
    fn kept(&self, count: &SqlBuilder, holds: impl Fn(&Entry) -> bool) -> Option<Total> {
        let key = key(count)?;
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .entries
            .get(&key)
            .filter(|e| holds(e))
            .map(|e| e.total)
    }

    /// How many totals were counted: each one a count statement run.
    pub(crate) fn counted(&self) -> u64 {
        self.counted.load(Ordering::Relaxed)
    }

    /// Keeps `total`, counted by `count` at `stamp` with `slack` matches read past its
    /// limit.
    pub(crate) fn put(&self, count: &SqlBuilder, stamp: Stamp, total: Total, slack: u64) {
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
                slack,
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

    fn at(revision: i64, written: i64) -> Stamp {
        Stamp { revision, written }
    }

    #[test]
    fn a_total_holds_at_its_stamp_and_while_fewer_documents_than_its_slack_were_written() {
        let capped = Total {
            value: 101,
            estimated: true,
        };
        // (slack, the stamp now, whether the total counted at (7, 30) holds)
        let cases = [
            (0, at(7, 30), true),
            (0, at(8, 31), false),
            (3, at(7, 30), true),
            (3, at(8, 31), true),
            (3, at(9, 33), true),
            (3, at(10, 34), false),
            (3, at(8, 36), false),
            // Writes that counted no document: a process from before the column.
            (3, at(8, 30), false),
            (3, at(9, 31), false),
            (3, at(6, 29), false),
        ];
        for (slack, now, holds) in cases {
            let cache = CountCache::default();
            cache.put(&count("Poi"), at(7, 30), capped, slack);
            let kept = cache.get(&count("Poi"), now);
            assert_eq!(kept, holds.then_some(capped), "slack {slack}, {now:?}");
            assert_eq!(
                cache.get(&count("Event"), at(7, 30)),
                None,
                "other parameters"
            );
        }
        let cache = CountCache::default();
        cache.put(&count("Poi"), at(7, 30), Total::exact(40), 0);
        cache.put(&count("Poi"), at(8, 31), Total::exact(41), 0);
        assert_eq!(cache.get(&count("Poi"), at(8, 31)), Some(Total::exact(41)));
        assert_eq!(cache.counted(), 2);
    }

    #[test]
    fn a_total_chooses_plans_while_a_sixteenth_of_it_was_written_since() {
        let cache = CountCache::default();
        cache.put(&count("Poi"), at(7, 30), Total::exact(160), 0);
        // (the stamp now, whether it answers, whether it chooses plans)
        let cases = [
            (at(7, 30), true, true),
            (at(8, 31), false, true),
            (at(12, 40), false, true),
            (at(12, 41), false, false),
            (at(8, 30), false, false),
        ];
        for (now, answers, chooses) in cases {
            let kept = Some(Total::exact(160));
            assert_eq!(
                cache.get(&count("Poi"), now),
                answers.then_some(kept).flatten(),
                "{now:?}"
            );
            assert_eq!(
                cache.hint(&count("Poi"), now),
                chooses.then_some(kept).flatten(),
                "{now:?}"
            );
        }
        // A small total: its slack, or nothing.
        cache.put(&count("Event"), at(7, 30), Total::exact(15), 0);
        assert_eq!(cache.hint(&count("Event"), at(8, 31)), None);
    }

    #[test]
    fn the_last_total_is_a_hint_at_any_stamp() {
        let cache = CountCache::default();
        assert_eq!(cache.last(&count("Poi")), None, "never counted");
        cache.put(&count("Poi"), at(7, 30), Total::exact(40), 0);
        assert_eq!(cache.last(&count("Poi")), Some(Total::exact(40)));
        cache.put(&count("Poi"), at(9, 32), Total::exact(38), 0);
        assert_eq!(cache.last(&count("Poi")), Some(Total::exact(38)));
        assert_eq!(cache.last(&count("Event")), None, "other parameters");
    }

    #[test]
    fn it_stays_bounded_and_skips_long_statements() {
        let cache = CountCache::default();
        for i in 0..(MAX_ENTRIES * 2) {
            cache.put(
                &count(&format!("E{i}")),
                at(1, 1),
                Total::exact(i as u64),
                0,
            );
        }
        let kept = cache.inner.lock().unwrap().entries.len();
        assert!(kept <= MAX_ENTRIES, "{kept}");
        // The most recent survive.
        let last = MAX_ENTRIES * 2 - 1;
        assert_eq!(
            cache.get(&count(&format!("E{last}")), at(1, 1)),
            Some(Total::exact(last as u64))
        );
        let long = count(&"x".repeat(MAX_KEY_BYTES));
        cache.put(&long, at(1, 1), Total::exact(1), 0);
        assert_eq!(cache.get(&long, at(1, 1)), None);
    }
}
