//! Series reads that matched more series than a narrow history read merges, kept for a
//! while: a history page over many series (`/v2/flat/ParkingStation/free/…`, 1,000
//! series) first read up to 513 series rows, each with its station, parent and type
//! columns, and dropped them for the compiled query (about 3 ms of PostgreSQL's 19 ms
//! at scale 10). The same read in the next request now goes to the compiled query
//! straight away.
//!
//! A kept read is forgotten after [`KEPT_FOR`], so a set of series that shrinks below
//! the bound gets its narrow read back. Until then its answers come from the compiled
//! query, which gives the same rows: a stale entry costs time, never a different answer.
//!
//! Owns: which series reads are known to match too many series, and for how long. Must
//! not: touch a connection or decide an answer (a backend asks [`WideSeriesReads::is_wide`]
//! before its series read and tells [`WideSeriesReads::remember`] when the read found
//! more series than [`NarrowHistory::merges`] takes).

use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustc_hash::{FxHashMap as HashMap, FxHasher};

use hub_query::timeseries::NarrowHistory;
use hub_query::SqlValue;

/// How long a series read stays known as too wide.
pub(crate) const KEPT_FOR: Duration = Duration::from_secs(60);

/// Reads kept at most; the memo starts again empty when full.
const MAX_KEPT: usize = 256;

/// One series read: its SQL and parameters, compared whole (the hash only finds it).
#[derive(Debug)]
struct Kept {
    sql: String,
    params: Vec<SqlValue>,
    since: Instant,
}

/// The series reads of one process found too wide for a narrow read.
#[derive(Debug, Default)]
pub(crate) struct WideSeriesReads {
    kept: Mutex<HashMap<u64, Kept>>,
}

/// Asked on every history request that may read narrow: hashed in place, no text made.
fn key(plan: &NarrowHistory) -> u64 {
    let mut hasher = FxHasher::default();
    plan.series.as_sql().hash(&mut hasher);
    // `SqlValue` holds floats, so it has no `Hash` of its own.
    for value in plan.series.params() {
        match value {
            SqlValue::Null => 0u8.hash(&mut hasher),
            SqlValue::Bool(b) => (1u8, b).hash(&mut hasher),
            SqlValue::Int(i) => (2u8, i).hash(&mut hasher),
            SqlValue::Real(r) => (3u8, r.to_bits()).hash(&mut hasher),
            SqlValue::Text(t) => (4u8, t).hash(&mut hasher),
        }
    }
    hasher.finish()
}

impl WideSeriesReads {
    /// Whether `plan`'s series read matched more series than a merge takes less than
    /// [`KEPT_FOR`] before `now`.
    pub(crate) fn is_wide(&self, plan: &NarrowHistory, now: Instant) -> bool {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(&key(plan)).is_some_and(|k| {
            now.saturating_duration_since(k.since) < KEPT_FOR
                && k.sql == plan.series.as_sql()
                && k.params == plan.series.params()
        })
    }

    /// Keeps that `plan`'s series read, made at `now`, matched more series than a merge
    /// takes.
    pub(crate) fn remember(&self, plan: &NarrowHistory, now: Instant) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= MAX_KEPT {
            kept.clear();
        }
        kept.insert(
            key(plan),
            Kept {
                sql: plan.series.as_sql().to_string(),
                params: plan.series.params().to_vec(),
                since: now,
            },
        );
    }
}

#[cfg(test)]
#[path = "wide_series_tests.rs"]
mod tests;
