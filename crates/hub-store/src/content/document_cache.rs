//! Documents kept in memory by their row version, for a backend whose documents cross a
//! connection (PostgreSQL).
//!
//! A list page on PostgreSQL spent most of both processes' time moving documents: the
//! server decompressing and sending each page's ten 5 KB texts, Hub receiving and
//! checking them, on every request, though the same pages are read again and again. A
//! statement that selects each document's key and row version instead of its text
//! costs a fraction of that; the texts then come from here, and only those not kept
//! (or kept at another version) are read, by key, in a second statement.
//!
//! The version is the row's own (PostgreSQL's `xmin`, the transaction that wrote it):
//! any write, by this process, another one or plain SQL, gives the row a new version,
//! so a kept text is never served for a row that has since changed, and nothing needs
//! telling of writes. A write to one document leaves every other kept document (unlike
//! the response cache, whose answers go with any write to their entity).
//!
//! Owns: the cache's keys, versions, budget and counters (its eviction, least recently
//! used first, is `budget_lru`'s). Must not: run statements (the backend reads keys, versions and texts and hands them
//! here).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::budget_lru::BudgetLru;

/// What an entry costs beyond its key and text, for the budget.
const ENTRY_OVERHEAD: usize = 96;

/// A document's identity: its entity and lower-cased id (`content.id_key`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocumentKey {
    pub entity: String,
    pub id_key: String,
}

/// A document as a keyed statement names it: which, and at which row version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedKey {
    pub key: DocumentKey,
    pub version: i64,
}

/// A kept document: its row version and text.
type Kept = (i64, Arc<str>);

/// The documents one store keeps (shared by every request).
pub struct DocumentCache {
    budget: usize,
    lru: Mutex<BudgetLru<DocumentKey, Kept>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// What `/metrics` reports of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentCacheStats {
    pub budget: usize,
    pub bytes: usize,
    pub documents: usize,
    pub hits: u64,
    pub misses: u64,
}

impl DocumentCache {
    /// A cache of at most `budget` bytes (texts, keys and bookkeeping); 0 keeps nothing.
    pub fn new(budget: usize) -> Self {
        DocumentCache {
            budget,
            lru: Mutex::new(BudgetLru::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Whether anything is kept: with no budget, statements select the texts directly.
    pub fn enabled(&self) -> bool {
        self.budget > 0
    }

    fn lru(&self) -> MutexGuard<'_, BudgetLru<DocumentKey, Kept>> {
        self.lru.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kept text of each of `wanted` at its version, in order; `None` where none is.
    pub fn lookup(&self, wanted: &[VersionedKey]) -> Vec<Option<Arc<str>>> {
        let found: Vec<_> = {
            let mut lru = self.lru();
            wanted
                .iter()
                .map(|w| match lru.get(&w.key) {
                    Some((version, text)) if *version == w.version => Some(text.clone()),
                    _ => None,
                })
                .collect()
        };
        let hits = found.iter().filter(|f| f.is_some()).count() as u64;
        self.hits.fetch_add(hits, Ordering::Relaxed);
        self.misses
            .fetch_add(found.len() as u64 - hits, Ordering::Relaxed);
        found
    }

    /// The kept text of one document when it is kept at `version`.
    pub fn get(&self, wanted: &VersionedKey) -> Option<Arc<str>> {
        self.lookup(std::slice::from_ref(wanted)).pop().flatten()
    }

    /// The version and text kept of one document, whichever version it is; counted as
    /// neither a hit nor a miss (see [`DocumentCache::record`]).
    pub fn latest(&self, key: &DocumentKey) -> Option<Kept> {
        self.lru().get(key).cloned()
    }

    /// Counts one document answered from the cache (`hit`) or read, for a caller that
    /// looked it up with [`DocumentCache::latest`].
    pub fn record(&self, hit: bool) {
        let counter = if hit { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Keeps `text` as the document's at `found.version` (replacing another version),
    /// dropping the least recently used documents as the budget needs. A text larger
    /// than the budget is not kept.
    pub fn keep(&self, found: VersionedKey, text: Arc<str>) {
        if !self.enabled() {
            return;
        }
        let key = found.key;
        let cost = ENTRY_OVERHEAD + key.entity.len() + key.id_key.len() + text.len();
        self.lru()
            .insert(key, (found.version, text), cost, self.budget);
    }

    pub fn stats(&self) -> DocumentCacheStats {
        let lru = self.lru();
        DocumentCacheStats {
            budget: self.budget,
            bytes: lru.used(),
            documents: lru.len(),
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
#[path = "document_cache_tests.rs"]
mod tests;
