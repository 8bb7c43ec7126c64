//! The catalog of latest reads ([`CatalogRead`]): station, type and provenance rows kept
//! by id with their row version, and the compiled query's rows made from a read's rows
//! and them.
//!
//! Owns: which catalog rows an answer needs, the bound on rows kept, and the rule that
//! a catalog row stands for a read's entity only at the version read. Must not: touch a
//! connection (a backend reads the rows [`Catalog::lookup`] asks for and hands them to
//! [`Catalog::keep`]).

use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use hub_query::timeseries::{CatalogKind, CatalogRead, CellSource};

use super::Cell;

/// The most rows a catalog keeps; it starts again empty when full (a few tens of
/// megabytes at most: a station row is ten cells).
pub(crate) const MAX_CATALOG_ROWS: usize = 50_000;

/// A catalog row: its version and its cells ([`CatalogKind::columns`]).
#[derive(Debug, Clone)]
struct CatalogRow {
    version: i64,
    cells: Arc<[Cell]>,
}

type Key = (CatalogKind, i64);

/// Catalog rows of one process, shared by its reads.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    rows: Mutex<HashMap<Key, CatalogRow>>,
}

/// The catalog rows one answer uses.
pub(crate) struct CatalogAnswer<'p> {
    plan: &'p CatalogRead,
    rows: HashMap<Key, CatalogRow>,
}

/// An entity's id and version in a read's row (`None`: no such entity, as a station
/// without parent or a value without provenance).
fn entity(plan: &CatalogRead, row: &[Cell], entity: usize) -> Option<(i64, i64)> {
    let at = plan.read_columns + 2 * entity;
    match (row.get(at), row.get(at + 1)) {
        (Some(&Cell::Int(id)), Some(&Cell::Int(version))) => Some((id, version)),
        _ => None,
    }
}

impl Catalog {
    /// The catalog rows `rows` need at the versions read, and per kind the ids the
    /// catalog lacks (or holds at another version), to be read and [`Catalog::keep`]t.
    pub(crate) fn lookup<'p>(
        &self,
        plan: &'p CatalogRead,
        rows: &[Vec<Cell>],
    ) -> (CatalogAnswer<'p>, Vec<(CatalogKind, Vec<i64>)>) {
        // Keys are database ids: a multiply-and-rotate hash (`rustc-hash`), not SipHash
        // (a fifth of a 1,000-station answer's catalog time went to hashing).
        let mut answer = CatalogAnswer {
            plan,
            rows: HashMap::default(),
        };
        let mut missing: HashSet<Key> = HashSet::default();
        {
            let kept = self.rows.lock().unwrap_or_else(|e| e.into_inner());
            for row in rows {
                for (k, kind) in plan.entities.iter().enumerate() {
                    let Some((id, version)) = entity(plan, row, k) else {
                        continue;
                    };
                    let key = (*kind, id);
                    if answer.rows.contains_key(&key) || missing.contains(&key) {
                        continue;
                    }
                    match kept.get(&key) {
                        Some(r) if r.version == version => {
                            answer.rows.insert(key, r.clone());
                        }
                        _ => {
                            missing.insert(key);
                        }
                    }
                }
            }
        }
        let mut by_kind: Vec<(CatalogKind, Vec<i64>)> = Vec::new();
        for (kind, id) in missing {
            match by_kind.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, ids)) => ids.push(id),
                None => by_kind.push((kind, vec![id])),
            }
        }
        for (_, ids) in &mut by_kind {
            ids.sort_unstable();
        }
        (answer, by_kind)
    }

    /// Keeps rows of `kind` as its catalog SQL reads them (id, version, columns), for
    /// this answer and later ones. Rows of another shape are ignored.
    pub(crate) fn keep(
        &self,
        answer: &mut CatalogAnswer<'_>,
        kind: CatalogKind,
        rows: Vec<Vec<Cell>>,
    ) {
        let mut kept = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        for mut row in rows {
            if row.len() != 2 + kind.columns().len() {
                continue;
            }
            let (Cell::Int(id), Cell::Int(version)) = (&row[0], &row[1]) else {
                continue;
            };
            let key = (kind, *id);
            let version = *version;
            let cells: Arc<[Cell]> = row.drain(2..).collect();
            let entry = CatalogRow { version, cells };
            if kept.len() >= MAX_CATALOG_ROWS && !kept.contains_key(&key) {
                kept.clear();
            }
            kept.insert(key, entry.clone());
            answer.rows.insert(key, entry);
        }
    }
}

impl CatalogAnswer<'_> {
    /// The compiled query's row from a read's row; `None` when an entity's catalog row
    /// is missing or of another version than read (changed between the two reads: the
    /// compiled query answers instead).
    pub(crate) fn row(&self, read: Vec<Cell>) -> Option<Vec<Cell>> {
        let plan = self.plan;
        // A station, its parent, a type and a provenance at most.
        let mut entities: [Option<&Arc<[Cell]>>; 4] = [None; 4];
        for (k, kind) in plan.entities.iter().enumerate() {
            *entities.get_mut(k)? = match entity(plan, &read, k) {
                None => None,
                Some((id, version)) => match self.rows.get(&(*kind, id)) {
                    Some(r) if r.version == version => Some(&r.cells),
                    _ => return None,
                },
            };
        }
        let mut out = Vec::with_capacity(plan.sources.len());
        for source in &plan.sources {
            out.push(match *source {
                // Copied: a column read once may stand in several places.
                CellSource::Read(i) => read.get(i)?.clone(),
                CellSource::Catalog { entity, column } => match entities.get(entity)? {
                    Some(cells) => cells.get(column)?.clone(),
                    None => Cell::Null,
                },
            });
        }
        Some(out)
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
