//! The merge of a history answer read narrow ([`NarrowHistory`]): one row per series
//! with its series columns, each series' measurements in time order, merged by the
//! answer's ordering keys into the rows and order the compiled query would answer, then
//! `distinct`, `offset` and `limit` as SQL applies them.
//!
//! Owns: [`merge_history`] and the SQL order of cells ([`compare_cells`]). Must not:
//! touch a connection (a backend hands it its rows through `pull`).

use std::cmp::Ordering;

use hub_query::timeseries::NarrowHistory;
use rustc_hash::FxHashMap;

use super::Cell;
use crate::Result;

/// The order SQL gives two cells of one column (ascending, NULL first, as SQLite orders
/// and the compiled PostgreSQL queries ask with `NULLS FIRST`): numbers by value before
/// texts, texts by their bytes (SQLite's BINARY collation, PostgreSQL's "C").
pub(crate) fn compare_cells(a: &Cell, b: &Cell) -> Ordering {
    fn rank(c: &Cell) -> u8 {
        match c {
            Cell::Null => 0,
            Cell::Int(_) | Cell::Real(_) => 1,
            Cell::Text(_) => 2,
        }
    }
    match (a, b) {
        (Cell::Int(x), Cell::Int(y)) => x.cmp(y),
        (Cell::Real(x), Cell::Real(y)) => x.total_cmp(y),
        (Cell::Int(x), Cell::Real(y)) => (*x as f64).total_cmp(y),
        (Cell::Real(x), Cell::Int(y)) => x.total_cmp(&(*y as f64)),
        // Rows read in a row share a repeated text (`SharedText`): no bytes to compare.
        (Cell::Text(x), Cell::Text(y)) if std::sync::Arc::ptr_eq(x, y) => Ordering::Equal,
        (Cell::Text(x), Cell::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => rank(a).cmp(&rank(b)),
    }
}

pub(crate) fn compare_rows(order: &[usize], a: &[Cell], b: &[Cell]) -> Ordering {
    order
        .iter()
        .map(|&k| compare_cells(&a[k], &b[k]))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn same_row(a: &[Cell], b: &[Cell]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| compare_cells(x, y).is_eq())
}

/// The series' current rows and a binary min-heap of the series that have one.
struct Heads<'p> {
    order: &'p [usize],
    rows: Vec<Option<Vec<Cell>>>,
    heap: Vec<usize>,
}

impl Heads<'_> {
    /// Series `a`'s row comes before series `b`'s (ties by series, never met: the
    /// ordering keys of a history answer tell its rows apart).
    fn before(&self, a: usize, b: usize) -> bool {
        match (&self.rows[a], &self.rows[b]) {
            (Some(x), Some(y)) => compare_rows(self.order, x, y).then(a.cmp(&b)).is_lt(),
            _ => a < b,
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        loop {
            let (l, r) = (2 * at + 1, 2 * at + 2);
            let mut least = at;
            if l < self.heap.len() && self.before(self.heap[l], self.heap[least]) {
                least = l;
            }
            if r < self.heap.len() && self.before(self.heap[r], self.heap[least]) {
                least = r;
            }
            if least == at {
                return;
            }
            self.heap.swap(at, least);
            at = least;
        }
    }
}

/// Every provenance's columns that an answer selects, by id (read apart when the plan
/// has a [`hub_query::timeseries::ProvenanceRead`]; empty otherwise). Looked up for
/// every row of a history, by ids the store assigned: hashed by `FxHash` (SipHash was
/// 3 % of a week's read).
pub(crate) type Provenances = FxHashMap<i64, Vec<Cell>>;

/// What a merge's source has of one series' next row.
pub(crate) enum Pull {
    /// Its measurement cells (in `plan.measured` order).
    Row(Vec<Cell>),
    /// The series has no more rows.
    End,
    /// Not at hand yet: the source fetches more of that series, then the merge goes on.
    Pending,
}

/// What [`Merge::next`] found.
pub(crate) enum Step {
    /// The next row of the answer.
    Row(Vec<Cell>),
    /// Series k's source said [`Pull::Pending`]: fetch more of it and call again.
    Fetch(usize),
    /// The answer is complete.
    Done,
}

/// The merge of a history answer read narrow, one row at a time, so that a source can
/// fetch rows between steps (PostgreSQL's portals, awaited) or have them at once (SQLite's
/// cursors, [`merge_history`]). `templates[k]` is series k's row with its measurement
/// cells NULL; each series' rows come in time order.
pub(crate) struct Merge<'p> {
    plan: &'p NarrowHistory,
    templates: &'p [Vec<Cell>],
    provenances: &'p Provenances,
    heads: Heads<'p>,
    /// Series whose next row is still to be pulled: every series at first (pulled in
    /// order), then the one whose row was just taken.
    unpulled: Vec<usize>,
    /// Whether `heads.heap` holds every series with a row (after the first pulls).
    started: bool,
    skip: u64,
    left: Option<u64>,
    last: Option<Vec<Cell>>,
    /// Rows the answer's reader is done with, filled again instead of allocating.
    spare: Vec<Vec<Cell>>,
}

impl<'p> Merge<'p> {
    pub(crate) fn new(
        plan: &'p NarrowHistory,
        templates: &'p [Vec<Cell>],
        provenances: &'p Provenances,
    ) -> Self {
        Merge {
            plan,
            templates,
            provenances,
            heads: Heads {
                order: &plan.order,
                rows: vec![None; templates.len()],
                heap: Vec::with_capacity(templates.len()),
            },
            unpulled: (0..templates.len()).rev().collect(),
            started: false,
            skip: plan.offset,
            left: plan.limit,
            last: None,
            spare: Vec::new(),
        }
    }

    /// The same merge, its rows' provenance columns from `provenances` from now on (read
    /// again when a row named one the first read did not have).
    pub(crate) fn with_provenances<'q>(self, provenances: &'q Provenances) -> Merge<'q>
    where
        'p: 'q,
    {
        Merge {
            provenances,
            ..self
        }
    }

    /// Where rows the reader is done with go, to be filled again: a row of the same
    /// series keeps its shared texts (see `Cell::clone_from`), so filling it costs no
    /// allocation and no reference count.
    pub(crate) fn spare_rows(&mut self) -> &mut Vec<Vec<Cell>> {
        &mut self.spare
    }

    /// Series k's row with `measured` (and its provenance's columns) in place.
    fn fill(&mut self, k: usize, measured: Vec<Cell>) -> Vec<Cell> {
        let mut row = self.spare.pop().unwrap_or_default();
        row.clone_from(&self.templates[k]);
        let plan = self.plan;
        for (&at, &from) in plan.measured.iter().zip(&plan.measured_from) {
            if let Some(cell) = measured.get(from) {
                row[at] = cell.clone();
            }
        }
        if let Some(read) = &plan.provenance {
            // The history read's last column; the template holds NULLs for an unknown id.
            if let Some(&Cell::Int(id)) = measured.get(plan.read_columns) {
                if let Some(cells) = self.provenances.get(&id) {
                    for (&at, cell) in read.positions.iter().zip(cells) {
                        row[at] = cell.clone();
                    }
                }
            }
        }
        row
    }

    /// The next row of the answer, or which series to fetch first, or the end; `pull(k)`
    /// tells series k's next row. A row is pulled only when the merge needs it, so an
    /// answer cut by `limit` fetches nothing after its last row.
    pub(crate) fn next(&mut self, mut pull: impl FnMut(usize) -> Result<Pull>) -> Result<Step> {
        loop {
            while let Some(&k) = self.unpulled.last() {
                let row = match pull(k)? {
                    Pull::Pending => return Ok(Step::Fetch(k)),
                    Pull::End => None,
                    Pull::Row(measured) => Some(self.fill(k, measured)),
                };
                self.unpulled.pop();
                let ended = row.is_none();
                self.heads.rows[k] = row;
                if !self.started {
                    if !ended {
                        self.heads.heap.push(k);
                    }
                    continue;
                }
                // Series k was taken from the top of the heap: put its next row there.
                if ended {
                    self.heads.heap.swap_remove(0);
                }
                self.heads.sift_down(0);
            }
            if !self.started {
                self.started = true;
                for at in (0..self.heads.heap.len() / 2).rev() {
                    self.heads.sift_down(at);
                }
            }
            let Some(&k) = self.heads.heap.first() else {
                return Ok(Step::Done);
            };
            if self.left == Some(0) {
                return Ok(Step::Done);
            }
            let row = self.heads.rows[k]
                .take()
                .expect("a series in the heap has a row");
            self.unpulled.push(k);
            if self.plan.distinct {
                if self.last.as_ref().is_some_and(|l| same_row(l, &row)) {
                    continue;
                }
                // Filled again: its allocation kept, and texts it shares with the new row
                // (the series' own) not counted again.
                match &mut self.last {
                    Some(last) => last.clone_from(&row),
                    None => self.last = Some(row.clone()),
                }
            }
            if self.skip > 0 {
                self.skip -= 1;
                continue;
            }
            if let Some(n) = self.left.as_mut() {
                *n -= 1;
            }
            return Ok(Step::Row(row));
        }
    }
}

/// Merges the series of `plan` from a source that has every row at hand, handing each
/// answered row to `emit` (which returns `false` to stop, and may put rows the reader
/// is done with into its second argument, [`Merge::spare_rows`]). `pull(k)` returns
/// series k's next measurement cells (in `plan.measured` order) in time order, `None`
/// at its end.
pub(crate) fn merge_history(
    plan: &NarrowHistory,
    templates: &[Vec<Cell>],
    provenances: &Provenances,
    mut pull: impl FnMut(usize) -> Result<Option<Vec<Cell>>>,
    mut emit: impl FnMut(Vec<Cell>, &mut Vec<Vec<Cell>>) -> bool,
) -> Result<()> {
    let mut merge = Merge::new(plan, templates, provenances);
    loop {
        let step = merge.next(|k| {
            Ok(match pull(k)? {
                Some(measured) => Pull::Row(measured),
                None => Pull::End,
            })
        })?;
        match step {
            Step::Row(row) => {
                if !emit(row, merge.spare_rows()) {
                    return Ok(());
                }
            }
            Step::Done => return Ok(()),
            Step::Fetch(k) => {
                return Err(crate::StoreError::Task(format!(
                    "series {k} of a merge from rows at hand was not at hand"
                )))
            }
        }
    }
}

#[cfg(test)]
#[path = "narrow_tests.rs"]
pub(super) mod tests;
