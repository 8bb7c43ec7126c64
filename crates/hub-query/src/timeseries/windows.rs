//! A page of a flat history over many series, read from a window at the start of its
//! time range.
//!
//! A flat history (`/v2/flat/{types}/{dataTypes}/{from}/{to}`) is ordered by time
//! first. Its statement reads every value of every matching series in the range and
//! keeps the page: at scale 10 a page of 200 of one day of 1,000 parking stations read
//! 144,000 values (61 ms on SQLite, 176 ms on PostgreSQL), a page of a month 1 M (0.27
//! and 0.85 s), for every page a client asks for.
//!
//! Every value before a time `cut` comes before every value at or after it, so the page
//! of the range `[from, cut)` is the page of `[from, to)` whenever that window holds
//! the whole page: when its statement (the same one, with `cut` for `to`) returns a
//! full page. The store tries windows from the start of the range, each read by the
//! same series index (`series_id, timestamp`), before the whole range.
//!
//! The first window is 1/4096 of the range. A window that returns a short page tells
//! how many values it held when it returned any (the offset and the rows), so the next
//! one is sized for the page from that density, with room to spare; an empty one grows
//! eightfold. At most [`MAX_WINDOWS`] are tried, none reaching `to`.
//!
//! Clients often ask a wide range to mean "everything" (`2000-01-01/2030-01-01`), or
//! one that starts before the data. When the first window is empty, the store reads
//! where the values start ([`HistoryWindows::first_value`]: one index probe per series
//! of the query's types) and the next window starts there ([`HistoryWindows::located`]).
//!
//! Owns: which pages qualify and the windows' bounds. Must not: run statements (the
//! store does) or change the order of the answer.

use super::query::{compile_query, in_list, time_param, Route, TsQuery};
use crate::{Dialect, SqlBuilder};

/// Windows tried before the whole range.
pub const MAX_WINDOWS: u32 = 5;

/// The first window's share of the range.
const FIRST_SHARE: i64 = 4096;

/// How much an empty window grows.
const EMPTY_GROWTH: i64 = 8;

/// The windows of a page of a flat history with a limit.
#[derive(Debug, Clone)]
pub struct HistoryWindows {
    query: TsQuery,
    dialect: Dialect,
    from: i64,
    to: i64,
}

/// One window: the page's statement over `[from, cut)`.
#[derive(Debug)]
pub struct Window {
    pub sql: SqlBuilder,
    cut: i64,
    attempt: u32,
}

impl Window {
    /// Whether this is the first window tried: an empty one asks where the values start.
    pub fn is_first(&self) -> bool {
        self.attempt == 1
    }
}

impl HistoryWindows {
    /// The windows of `query`, when it is a page (a limit) of a flat history.
    pub(crate) fn of(query: &TsQuery, dialect: Dialect) -> Option<HistoryWindows> {
        let Route::History { from, to } = query.route else {
            return None;
        };
        (!query.tree && query.limit > 0 && to > from).then(|| HistoryWindows {
            query: query.clone(),
            dialect,
            from,
            to,
        })
    }

    /// The page's size: a window that returned this many rows answered it.
    pub fn limit(&self) -> usize {
        self.query.limit as usize
    }

    /// The rows before the page.
    fn offset(&self) -> i64 {
        self.query.offset.max(0)
    }

    /// The earliest time in the range of any series of the query's station and data
    /// types, one row (null when there is none). The `where` and the closed-data rules
    /// are left out: the answer's first value is at or after it, which is all a window
    /// needs.
    pub fn first_value(&self) -> SqlBuilder {
        let mut q = SqlBuilder::new(self.dialect);
        q.sql("SELECT MIN((SELECT h.timestamp FROM ts_history h WHERE h.series_id = ts.id AND h.timestamp >= ");
        time_param(&mut q, self.from);
        q.sql(" AND h.timestamp < ");
        time_param(&mut q, self.to);
        q.sql(" ORDER BY h.timestamp LIMIT 1)) FROM ts_series ts JOIN ts_station s ON s.id = ts.station_id JOIN ts_type t ON t.id = ts.type_id WHERE 1 = 1");
        if let Some(types) = &self.query.types {
            in_list(&mut q, "s.stationtype", types);
        }
        if let Some(types) = &self.query.data_types {
            in_list(&mut q, "t.cname", types);
        }
        q
    }

    /// The window after the first, `window`, which was empty, now that the values are
    /// known to start at `first` (from [`HistoryWindows::first_value`]): as wide from
    /// there as the first was from `from`, at least as far as an empty window grows.
    /// `None` when no series has a value in the range.
    pub fn located(&self, window: &Window, first: Option<i64>) -> Option<Window> {
        let first = first.filter(|_| window.attempt < MAX_WINDOWS)?;
        let width = ((self.to - first) / FIRST_SHARE).max(1);
        let grown = (window.cut - self.from).saturating_mul(EMPTY_GROWTH);
        let cut = first
            .saturating_add(width)
            .max(self.from.saturating_add(grown));
        self.window(cut - self.from, window.attempt + 1)
    }

    /// The first window, when the range is wide enough to have one.
    pub fn first(&self) -> Option<Window> {
        let width = ((self.to - self.from) / FIRST_SHARE).max(1);
        self.window(width, 1)
    }

    /// The window after `window`, which returned `returned` rows (fewer than the page).
    pub fn after(&self, window: &Window, returned: usize) -> Option<Window> {
        if window.attempt >= MAX_WINDOWS {
            return None;
        }
        let width = window.cut - self.from;
        let grown = if returned == 0 {
            width.saturating_mul(EMPTY_GROWTH)
        } else {
            // The window held `offset + returned` values; the page needs
            // `offset + limit`, more. Twice that share of time, for an uneven spread.
            let held = i128::from(self.offset()) + returned as i128;
            let needed = i128::from(self.offset()) + i128::from(self.query.limit);
            let scaled = i128::from(width) * needed * 2 / held;
            i64::try_from(scaled).unwrap_or(i64::MAX)
        };
        self.window(grown, window.attempt + 1)
    }

    /// The window `width` milliseconds wide, when it ends before `to`. The query compiled
    /// over the whole range; only its bound differs here, so it compiles again (were it
    /// not to, the whole range's statement would answer alone).
    fn window(&self, width: i64, attempt: u32) -> Option<Window> {
        let cut = self.from.saturating_add(width);
        if cut >= self.to {
            return None;
        }
        let mut query = self.query.clone();
        query.route = Route::History {
            from: self.from,
            to: cut,
        };
        let sql = compile_query(&query, self.dialect).ok()?.sql;
        Some(Window { sql, cut, attempt })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqlValue;

    const DAY: i64 = 86_400_000;

    fn history(limit: i64, offset: i64, tree: bool) -> TsQuery {
        TsQuery {
            route: Route::History { from: 0, to: DAY },
            tree,
            types: Some(vec!["ParkingStation".into()]),
            data_types: Some(vec!["free".into()]),
            filter: None,
            select: None,
            distinct: true,
            limit,
            offset,
            access: None,
        }
    }

    #[test]
    fn only_pages_of_a_flat_history_have_windows() {
        assert!(HistoryWindows::of(&history(200, 0, false), Dialect::Sqlite).is_some());
        for query in [history(-1, 0, false), history(200, 0, true)] {
            assert!(
                HistoryWindows::of(&query, Dialect::Sqlite).is_none(),
                "{query:?}"
            );
        }
        let mut latest = history(200, 0, false);
        latest.route = Route::Latest;
        assert!(HistoryWindows::of(&latest, Dialect::Postgres).is_none());
    }

    /// The window's bounds as bound: `from` and the cut.
    fn bounds(window: &Window) -> (i64, i64) {
        let times: Vec<i64> = window
            .sql
            .params()
            .iter()
            .filter_map(|p| match p {
                SqlValue::Int(v) => Some(*v),
                _ => None,
            })
            .collect();
        (times[0], times[1])
    }

    #[test]
    fn windows_start_small_and_grow_by_what_they_found() {
        let windows = HistoryWindows::of(&history(200, 1_000, false), Dialect::Postgres).unwrap();
        let first = windows.first().unwrap();
        assert_eq!(bounds(&first), (0, DAY / 4096));
        assert_eq!(first.cut, DAY / 4096);
        let sql = first.sql.as_sql();
        assert!(sql.contains("me.timestamp >= $"), "{sql}");
        assert!(sql.contains("me.timestamp < $"), "{sql}");
        assert!(
            sql.contains(" LIMIT $") && sql.contains(" OFFSET $"),
            "{sql}"
        );

        // (width of the window before, rows it returned) → width of the next
        let width = DAY / 4096;
        let cases = [
            // Empty: eight times as wide.
            (0, width * 8),
            // It held 1,000 + 100 values; the page needs 1,200: twice 1,200/1,100.
            (100, width * 2 * 1_200 / 1_100),
            // Nearly full: still more than twice as wide.
            (199, width * 2 * 1_200 / 1_199),
        ];
        for (returned, next) in cases {
            let after = windows.after(&first, returned).unwrap();
            assert_eq!(after.cut, next, "{returned}");
        }
    }

    #[test]
    fn windows_stop_before_the_range_ends_and_after_the_last_attempt() {
        let windows = HistoryWindows::of(&history(200, 0, false), Dialect::Sqlite).unwrap();
        let mut window = windows.first().unwrap();
        let mut tried = 1;
        while let Some(next) = windows.after(&window, 0) {
            assert!(next.cut > window.cut && next.cut < DAY);
            window = next;
            tried += 1;
        }
        assert_eq!(tried, MAX_WINDOWS);

        // A range of one millisecond has no window short of it.
        let mut narrow = history(200, 0, false);
        narrow.route = Route::History { from: 5, to: 6 };
        let windows = HistoryWindows::of(&narrow, Dialect::Sqlite).unwrap();
        assert!(windows.first().is_none());
    }

    #[test]
    fn an_empty_first_window_moves_to_where_the_values_start() {
        let windows = HistoryWindows::of(&history(200, 0, false), Dialect::Sqlite).unwrap();
        let first = windows.first().unwrap();
        assert!(first.is_first());
        // (where the values start, the next window's cut)
        let start = DAY / 2;
        let cases = [
            // Half a day in: as wide from there as the first was from the start.
            (Some(start), Some(start + (DAY - start) / 4096)),
            // Just after the first window: at least as far as an empty window grows.
            (Some(first.cut + 1), Some(first.cut * 8)),
            // No value in the range.
            (None, None),
            // So late that the window would reach the end: the whole range answers.
            (Some(DAY - 1), None),
        ];
        for (values_start, cut) in cases {
            let next = windows.located(&first, values_start);
            assert_eq!(next.as_ref().map(|w| w.cut), cut, "{values_start:?}");
            assert!(next.is_none_or(|w| !w.is_first()));
        }
        let sql = windows.first_value();
        let text = sql.as_sql();
        assert!(
            text.starts_with(
                "SELECT MIN((SELECT h.timestamp FROM ts_history h WHERE h.series_id = ts.id"
            ),
            "{text}"
        );
        assert!(text.contains("ORDER BY h.timestamp LIMIT 1))"), "{text}");
        assert!(
            text.contains("s.stationtype IN (") && text.contains("t.cname IN ("),
            "{text}"
        );
    }
}
