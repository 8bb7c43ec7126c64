//! The series a latest answer read narrow covers, kept between reads. A latest answer
//! for a station type is one row per series, and most of each row (station, parent,
//! type, period) is the same in every answer until the catalog changes. Read with the
//! compiled query, PostgreSQL joins the catalog to every latest row each time: a
//! quarter of its work per answer. Triggers count every change of the catalog's tables
//! (`ts_station`, `ts_metadata`, `ts_type`, `ts_type_metadata`, `ts_series`) in
//! `ts_catalog_revision`, in the changing transaction; a read asks for that count, and
//! the series kept with the same count stand: their rows are read by id from
//! `ts_latest` alone. When the count differs, the series are read again and kept.
//!
//! The same holds for an answer that reads the catalog alone (a station type's stations:
//! `CompiledTs::catalog_only`), kept whole, its rows as a [`Selection`] without ids.
//!
//! The key is the series read's (or the answer's) SQL with its parameters: the
//! closed-data rules of the caller are among them, so what one caller's read kept is
//! never another's answer.
//!
//! Owns: the rule that kept series stand only at the revision read before them, and the
//! bound on what is kept. Must not: touch a connection (a backend reads the revision
//! and, when [`SeriesSelections::get`] has nothing, the series, and hands them to
//! [`SeriesSelections::keep`]).

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap as HashMap;

use hub_query::SqlBuilder;

use super::Cell;
use crate::budget_lru::BudgetLru;

/// The catalog's revision, then the provenances' (see `provenance::REVISION_SQL`), as a
/// read narrow asks for them: one statement (PostgreSQL).
pub(crate) const REVISIONS_SQL: &str = "SELECT c.revision, p.revision \
     FROM ts_catalog_revision c CROSS JOIN ts_provenance_revision p WHERE c.id = 1 AND p.id = 1";

/// Bytes of series kept at most, over every select list and filter: 1,000 stations'
/// series with their station, type and metadata columns are about 1 MB.
pub(crate) const SELECTIONS_BUDGET_BYTES: usize = 8 << 20;

/// The series one series read found: ids, and each one's row of the answer with the
/// measurement's cells NULL; or an answer that reads the catalog alone: its rows, and no
/// ids.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    pub ids: Vec<i64>,
    pub templates: Vec<Vec<Cell>>,
    /// Position in `ids` by id.
    index: HashMap<i64, usize>,
}

impl Selection {
    pub(crate) fn new(ids: Vec<i64>, templates: Vec<Vec<Cell>>) -> Self {
        let index = ids.iter().enumerate().map(|(k, &id)| (id, k)).collect();
        Selection {
            ids,
            templates,
            index,
        }
    }

    /// Where series `id` is in [`Selection::ids`].
    pub(crate) fn position(&self, id: i64) -> Option<usize> {
        self.index.get(&id).copied()
    }

    /// About the bytes it holds.
    fn cost(&self) -> usize {
        let cells: usize = self
            .templates
            .iter()
            .flatten()
            .map(|c| {
                std::mem::size_of::<Cell>()
                    + match c {
                        Cell::Text(t) => t.len(),
                        _ => 0,
                    }
            })
            .sum();
        cells + self.ids.len() * 40
    }
}

/// The series read by one statement with its parameters.
fn key(series: &SqlBuilder) -> String {
    format!("{}\u{0}{:?}", series.as_sql(), series.params())
}

/// What a series read found, and the catalog revision read before it.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    revision: i64,
    pub selection: Arc<Selection>,
}

impl Kept {
    /// Whether the kept series are what the series read finds with the catalog at
    /// `revision` (read after them, by a later read).
    pub(crate) fn stands_at(&self, revision: i64) -> bool {
        self.revision == revision
    }
}

/// Series kept by the read that found them, each with the catalog revision read before.
#[derive(Default)]
pub(crate) struct SeriesSelections {
    kept: Mutex<BudgetLru<String, Kept>>,
}

impl SeriesSelections {
    /// What `series` found when last read, to be used only where it
    /// [stands](Kept::stands_at).
    pub(crate) fn get(&self, series: &SqlBuilder) -> Option<Kept> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(&key(series)).cloned()
    }

    /// Keeps what `series` found, read after the catalog stood at `revision`; a change
    /// committed in between only makes the next read see a newer revision and read the
    /// series again.
    pub(crate) fn keep(&self, series: &SqlBuilder, revision: i64, found: Arc<Selection>) {
        let cost = found.cost() + series.as_sql().len();
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let entry = Kept {
            revision,
            selection: found,
        };
        kept.insert(key(series), entry, cost, SELECTIONS_BUDGET_BYTES);
    }
}

#[cfg(test)]
#[path = "selections_tests.rs"]
mod tests;
