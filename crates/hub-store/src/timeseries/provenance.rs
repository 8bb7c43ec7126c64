//! The provenances a history answer read narrow shows, kept between reads: a merged row
//! takes its provenance columns by id from every provenance ([`Provenances`]), and
//! reading the whole table for each answer cost in proportion to it (300 provenances
//! halved the throughput of a short history read on both backends). Triggers count
//! every change of `ts_provenance` in `ts_provenance_revision`, in the changing
//! transaction; a read asks for that count in its snapshot and takes the provenances
//! kept with the same count, reading them (in the same snapshot) only when it differs.
//!
//! Owns: the rule that kept provenances stand for a snapshot only at the revision read
//! with them, and the bound on what is kept. Must not: touch a connection (a backend
//! reads the revision and, when [`ProvenanceCache::get`] has nothing, the provenances,
//! and hands them to [`ProvenanceCache::keep`]).

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap as HashMap;

use hub_query::timeseries::ProvenanceRead;

use super::narrow::Provenances;

/// The revision a read asks for in its snapshot (the same SQL on both backends).
pub(crate) const REVISION_SQL: &str = "SELECT revision FROM ts_provenance_revision WHERE id = 1";

/// Select lists kept at most: an answer selects some of a provenance's three columns in
/// some order, so a handful at most in practice; the cache starts again empty when full.
const MAX_SHAPES: usize = 32;

/// Provenances read by one select list, and the revision they were read at.
#[derive(Debug)]
struct Kept {
    revision: i64,
    provenances: Arc<Provenances>,
}

/// The provenances of one process, by the SQL that read them.
#[derive(Debug, Default)]
pub(crate) struct ProvenanceCache {
    kept: Mutex<HashMap<String, Kept>>,
}

/// Whether a read's provenances may be kept: its SQL alone names its rows (a select
/// list with parameters, such as a JSON path, is read each time).
fn keepable(read: &ProvenanceRead) -> bool {
    read.sql.params().is_empty()
}

impl ProvenanceCache {
    /// The provenances `read` gave at `revision`, when kept.
    pub(crate) fn get(&self, read: &ProvenanceRead, revision: i64) -> Option<Arc<Provenances>> {
        if !keepable(read) {
            return None;
        }
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(read.sql.as_sql())
            .filter(|k| k.revision == revision)
            .map(|k| Arc::clone(&k.provenances))
    }

    /// Keeps what `read` gave at `revision` for later reads; returns it shared.
    pub(crate) fn keep(
        &self,
        read: &ProvenanceRead,
        revision: i64,
        provenances: Provenances,
    ) -> Arc<Provenances> {
        let provenances = Arc::new(provenances);
        if !keepable(read) {
            return provenances;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= MAX_SHAPES && !kept.contains_key(read.sql.as_sql()) {
            kept.clear();
        }
        // The last read is kept, even at an older revision than the one it replaces (its
        // snapshot began before a change): a counter restored from a backup runs through
        // the same numbers again, and provenances read before the restore must not stand
        // for them. A later read at the newer revision reads and keeps that one again.
        kept.insert(
            read.sql.as_sql().to_owned(),
            Kept {
                revision,
                provenances: Arc::clone(&provenances),
            },
        );
        provenances
    }
}

#[cfg(test)]
#[path = "provenance_tests.rs"]
mod tests;
