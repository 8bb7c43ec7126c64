//! Latest values read in any order ([`UnorderedRead`]) and sorted here into the compiled
//! query's order, its offset applied.
//!
//! Owns: the bound on rows sorted in memory and the sort. Must not: touch a connection
//! (a backend hands its rows to [`Unordered::take`] and runs the compiled query instead
//! when the rows are too many).

use hub_query::timeseries::UnorderedRead;

use super::narrow::compare_rows;
use super::Cell;

/// The rows of an unordered read taken so far.
pub(crate) struct Unordered<'p> {
    plan: &'p UnorderedRead,
    rows: Vec<Vec<Cell>>,
}

impl<'p> Unordered<'p> {
    pub(crate) fn new(plan: &'p UnorderedRead) -> Self {
        Self {
            plan,
            rows: Vec::new(),
        }
    }

    /// Takes one row; `false` once there are more rows than the plan sorts in memory:
    /// the backend stops reading and answers with the compiled (ordered) query.
    pub(crate) fn take(&mut self, row: Vec<Cell>) -> bool {
        if self.rows.len() >= self.plan.max_rows {
            return false;
        }
        self.rows.push(row);
        true
    }

    /// The rows in the compiled query's order, after its offset.
    pub(crate) fn finish(self) -> Vec<Vec<Cell>> {
        let Self { plan, mut rows } = self;
        // Unstable is enough: rows equal in every key are equal in every column (the
        // keys are the series' or every column), so their order cannot be seen.
        rows.sort_unstable_by(|a, b| compare_rows(&plan.order, a, b));
        let skip = usize::try_from(plan.offset)
            .unwrap_or(usize::MAX)
            .min(rows.len());
        rows.drain(..skip);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_query::{Dialect, SqlBuilder};
    use std::sync::Arc;

    fn plan(order: Vec<usize>, offset: u64, max_rows: usize) -> UnorderedRead {
        UnorderedRead {
            sql: SqlBuilder::new(Dialect::Sqlite),
            order,
            offset,
            max_rows,
            catalog: None,
        }
    }

    fn text(s: &str) -> Cell {
        Cell::Text(Arc::from(s))
    }

    #[test]
    fn rows_are_sorted_by_the_keys_as_sql_orders_them_then_skipped() {
        // (timestamp, station code, value)
        let rows = vec![
            vec![Cell::Int(2), text("b"), Cell::Real(1.5)],
            vec![Cell::Int(1), text("b"), Cell::Null],
            vec![Cell::Int(2), text("B"), Cell::Real(0.5)],
            vec![Cell::Null, text("z"), Cell::Int(3)],
            vec![Cell::Int(2), text("a"), Cell::Int(7)],
            vec![Cell::Int(1), text("ä"), Cell::Real(-1.0)],
            vec![Cell::Int(1), text("b"), Cell::Real(f64::NEG_INFINITY)],
        ];
        let cases: &[(Vec<usize>, u64, Vec<usize>)] = &[
            // NULL first, numbers by value, texts by bytes ("B" < "a" < "b" < "ä").
            (vec![0, 1, 2], 0, vec![3, 1, 6, 5, 2, 4, 0]),
            (vec![0, 1, 2], 2, vec![6, 5, 2, 4, 0]),
            (vec![0, 1, 2], 7, vec![]),
            (vec![0, 1, 2], u64::MAX, vec![]),
            (vec![1, 0, 2], 0, vec![2, 4, 1, 6, 0, 3, 5]),
            // A NULL value before numbers; integers and reals by value.
            (vec![2, 0, 1], 0, vec![1, 6, 5, 2, 0, 3, 4]),
        ];
        for (order, offset, expected) in cases {
            let plan = plan(order.clone(), *offset, 100);
            let mut unordered = Unordered::new(&plan);
            for row in &rows {
                assert!(unordered.take(row.clone()));
            }
            let got = unordered.finish();
            let want: Vec<Vec<Cell>> = expected.iter().map(|&i| rows[i].clone()).collect();
            assert_eq!(got, want, "order {order:?}, offset {offset}");
        }
    }

    #[test]
    fn more_rows_than_the_plan_sorts_are_refused() {
        let plan = plan(vec![0], 0, 2);
        let mut unordered = Unordered::new(&plan);
        assert!(unordered.take(vec![Cell::Int(2)]));
        assert!(unordered.take(vec![Cell::Int(1)]));
        assert!(!unordered.take(vec![Cell::Int(0)]));
        assert_eq!(
            unordered.finish(),
            vec![vec![Cell::Int(1)], vec![Cell::Int(2)]]
        );
    }
}
