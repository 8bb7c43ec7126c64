//! The merge of a history answer read narrow ([`NarrowHistory`]): one row per series
//! with its series columns, each series' measurements in time order, merged by the
//! answer's ordering keys into the rows and order the compiled query would answer, then
//! `distinct`, `offset` and `limit` as SQL applies them.
//!
//! Owns: [`merge_history`] and the SQL order of cells ([`compare_cells`]). Must not:
//! touch a connection (a backend hands it its rows through `pull`).

use std::cmp::Ordering;

use hub_query::timeseries::NarrowHistory;

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
        (Cell::Text(x), Cell::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn compare_rows(order: &[usize], a: &[Cell], b: &[Cell]) -> Ordering {
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

/// Merges the series of `plan` and hands each answered row to `emit` (which returns
/// `false` to stop). `templates[k]` is series k's row with its measurement cells NULL;
/// `pull(k)` returns series k's next measurement cells (in `plan.measured` order) in
/// time order, `None` at its end.
pub(crate) fn merge_history(
    plan: &NarrowHistory,
    templates: &[Vec<Cell>],
    mut pull: impl FnMut(usize) -> Result<Option<Vec<Cell>>>,
    mut emit: impl FnMut(Vec<Cell>) -> bool,
) -> Result<()> {
    let mut next = |k: usize| -> Result<Option<Vec<Cell>>> {
        Ok(pull(k)?.map(|measured| {
            let mut row = templates[k].clone();
            for (&at, cell) in plan.measured.iter().zip(measured) {
                row[at] = cell;
            }
            row
        }))
    };
    let mut heads = Heads {
        order: &plan.order,
        rows: Vec::with_capacity(templates.len()),
        heap: Vec::with_capacity(templates.len()),
    };
    for k in 0..templates.len() {
        let row = next(k)?;
        if row.is_some() {
            heads.heap.push(k);
        }
        heads.rows.push(row);
    }
    for at in (0..heads.heap.len() / 2).rev() {
        heads.sift_down(at);
    }
    let mut skip = plan.offset;
    let mut left = plan.limit;
    let mut last: Option<Vec<Cell>> = None;
    while let Some(&k) = heads.heap.first() {
        if left == Some(0) {
            break;
        }
        let row = heads.rows[k]
            .take()
            .expect("a series in the heap has a row");
        heads.rows[k] = next(k)?;
        if heads.rows[k].is_none() {
            heads.heap.swap_remove(0);
        }
        heads.sift_down(0);
        if plan.distinct {
            if last.as_ref().is_some_and(|l| same_row(l, &row)) {
                continue;
            }
            last = Some(row.clone());
        }
        if skip > 0 {
            skip -= 1;
            continue;
        }
        if let Some(n) = left.as_mut() {
            *n -= 1;
        }
        if !emit(row) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "narrow_tests.rs"]
mod tests;
