//! Which months of the measurement history (`ts_history`) a store keeps apart and which
//! it lets go: the calendar arithmetic both backends share. On PostgreSQL the history is
//! partitioned by month (`ts_history_yYYYYmMM`, UTC, bounds in epoch milliseconds) with
//! a DEFAULT partition for what has no month of its own; SQLite keeps one table and only
//! applies the retention (a DELETE below the same cutoff), so both answer alike.
//!
//! Owns: [`Month`], the partition names, the window of months a partition may be made
//! for, and the retention cutoff. Must not: touch a connection (the backends move rows
//! and run the DDL this module decides).

use chrono::{Datelike, NaiveDate, TimeZone, Utc};

/// What the history keeps: months made ahead and how many past months are retained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryPolicy {
    /// Months after the current one whose partitions are made before data arrives.
    pub months_ahead: u32,
    /// Months of history kept before the current one (0 = keep everything).
    pub retention_months: u32,
}

impl Default for HistoryPolicy {
    fn default() -> Self {
        HistoryPolicy {
            months_ahead: 3,
            retention_months: 0,
        }
    }
}

/// What one maintenance pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryMaintenance {
    /// Partitions made (PostgreSQL), oldest first.
    pub created: Vec<Month>,
    /// Partitions dropped by the retention (PostgreSQL), oldest first.
    pub dropped: Vec<Month>,
    /// History rows deleted by the retention outside dropped partitions.
    pub deleted_rows: u64,
}

/// A calendar month in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month {
    pub year: i32,
    /// 1 to 12.
    pub month: u32,
}

/// The first month a partition is made for: the epoch (records before it are legal but
/// stay in the DEFAULT partition).
pub const FIRST_PARTITIONED: Month = Month {
    year: 1970,
    month: 1,
};

/// The last month a partition is made for (four-digit years keep names and bounds simple).
pub const LAST_PARTITIONED: Month = Month {
    year: 9999,
    month: 12,
};

/// At most this many partitions are made on demand by one push: the DDL is the costly
/// part of a push that reaches into new months, and one request's cost stays bounded.
/// Records of further months land in the DEFAULT partition until a maintenance pass or
/// a later push makes their month (moving them out of DEFAULT).
pub const MAX_ON_DEMAND_PER_PUSH: usize = 12;

/// The most months ahead a policy may ask for (ten years of empty partitions).
pub const MAX_MONTHS_AHEAD: u32 = 120;

const MS_PER_DAY: i64 = 86_400_000;

impl Month {
    /// The month `ms` (epoch milliseconds) falls in; `None` outside chrono's range.
    pub fn of_ms(ms: i64) -> Option<Month> {
        let t = Utc.timestamp_millis_opt(ms).single()?;
        Some(Month {
            year: t.year(),
            month: t.month(),
        })
    }

    /// The month of a day counted from the epoch (what PostgreSQL hands back for the
    /// rows of the DEFAULT partition).
    pub fn of_epoch_day(day: i64) -> Option<Month> {
        Month::of_ms(day.checked_mul(MS_PER_DAY)?)
    }

    /// Epoch milliseconds of the month's first instant.
    pub fn start_ms(self) -> Option<i64> {
        NaiveDate::from_ymd_opt(self.year, self.month, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc().timestamp_millis())
    }

    /// The month `n` months later (negative: earlier).
    pub fn plus(self, n: i64) -> Month {
        let index = self.year as i64 * 12 + (self.month as i64 - 1) + n;
        Month {
            year: index.div_euclid(12) as i32,
            month: (index.rem_euclid(12) + 1) as u32,
        }
    }

    /// The months from this one to `last`, both counted (0 or less when `last` is
    /// earlier).
    pub fn months_to(self, last: Month) -> i64 {
        let index = |m: Month| m.year as i64 * 12 + m.month as i64;
        index(last) - index(self) + 1
    }

    /// `[start, end)` in epoch milliseconds, the partition's bounds.
    pub fn bounds_ms(self) -> Option<(i64, i64)> {
        Some((self.start_ms()?, self.plus(1).start_ms()?))
    }

    /// The partition's table name, `ts_history_y2026m01`.
    pub fn partition_name(self) -> String {
        format!("ts_history_y{:04}m{:02}", self.year, self.month)
    }

    /// The month of a partition name this module made; `None` for any other name (an
    /// operator's own partitions are left alone).
    pub fn of_partition_name(name: &str) -> Option<Month> {
        let rest = name.strip_prefix("ts_history_y")?;
        let (year, month) = rest.split_once('m')?;
        if year.len() != 4 || month.len() != 2 {
            return None;
        }
        if !year
            .bytes()
            .chain(month.bytes())
            .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let m = Month {
            year: year.parse().ok()?,
            month: month.parse().ok()?,
        };
        (1..=12).contains(&m.month).then_some(m)
    }
}

impl std::fmt::Display for Month {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

/// The oldest month the retention keeps at `now_ms`, `None` when everything is kept.
/// With N months the current month and the N before it stay: every row younger than N
/// months survives, and a month goes only once all of it is older than N months.
pub fn retention_cutoff(now_ms: i64, policy: HistoryPolicy) -> Option<Month> {
    if policy.retention_months == 0 {
        return None;
    }
    Some(Month::of_ms(now_ms)?.plus(-(policy.retention_months as i64)))
}

/// Epoch milliseconds below which the retention deletes history rows (both backends).
pub fn retention_cutoff_ms(now_ms: i64, policy: HistoryPolicy) -> Option<i64> {
    retention_cutoff(now_ms, policy)?.start_ms()
}

/// The months a partition may be made for at `now_ms`: from the epoch (or the retention
/// cutoff, whichever is later) to `months_ahead` months after the current one.
pub fn partition_window(now_ms: i64, policy: HistoryPolicy) -> Option<(Month, Month)> {
    let now = Month::of_ms(now_ms)?;
    let first = retention_cutoff(now_ms, policy)
        .map(|c| c.max(FIRST_PARTITIONED))
        .unwrap_or(FIRST_PARTITIONED);
    let last = now
        .plus(policy.months_ahead.min(MAX_MONTHS_AHEAD) as i64)
        .min(LAST_PARTITIONED);
    (first <= last).then_some((first, last))
}

/// The current month and the `months_ahead` after it: made by every maintenance pass.
pub fn months_ahead(now_ms: i64, policy: HistoryPolicy) -> Vec<Month> {
    let Some((first, last)) = partition_window(now_ms, policy) else {
        return Vec::new();
    };
    let Some(now) = Month::of_ms(now_ms) else {
        return Vec::new();
    };
    (0..=policy.months_ahead.min(MAX_MONTHS_AHEAD) as i64)
        .map(|n| now.plus(n))
        .filter(|m| (first..=last).contains(m))
        .collect()
}

/// Of the months some records fall in (`wanted`, any order, repeats allowed), those
/// that need a partition made now: inside the window, not in `existing`, newest first,
/// at most `limit`.
pub fn months_to_create(
    wanted: impl IntoIterator<Item = Month>,
    existing: &std::collections::BTreeSet<Month>,
    now_ms: i64,
    policy: HistoryPolicy,
    limit: usize,
) -> Vec<Month> {
    let Some((first, last)) = partition_window(now_ms, policy) else {
        return Vec::new();
    };
    let wanted: std::collections::BTreeSet<Month> = wanted
        .into_iter()
        .filter(|m| (first..=last).contains(m) && !existing.contains(m))
        .collect();
    wanted.into_iter().rev().take(limit).collect()
}

/// Of the existing partitions, those the retention drops at `now_ms` (oldest first).
pub fn months_to_drop(existing: &[Month], now_ms: i64, policy: HistoryPolicy) -> Vec<Month> {
    let Some(cutoff) = retention_cutoff(now_ms, policy) else {
        return Vec::new();
    };
    let mut drop: Vec<Month> = existing.iter().copied().filter(|m| *m < cutoff).collect();
    drop.sort();
    drop
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn m(year: i32, month: u32) -> Month {
        Month { year, month }
    }

    fn ms(s: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_millis()
    }

    fn policy(months_ahead: u32, retention_months: u32) -> HistoryPolicy {
        HistoryPolicy {
            months_ahead,
            retention_months,
        }
    }

    #[test]
    fn months_counted_from_one_to_another() {
        // (first, last, months counted with both)
        let table = [
            (m(2026, 3), m(2026, 3), 1),
            (m(2026, 11), m(2027, 2), 4),
            (m(2025, 12), m(2026, 1), 2),
            (m(2026, 3), m(2026, 2), 0),
            (m(2026, 3), m(2025, 3), -11),
            (m(1900, 1), m(2100, 12), 2_412),
        ];
        for (first, last, want) in table {
            assert_eq!(first.months_to(last), want, "{first} .. {last}");
        }
    }

    #[test]
    fn months_of_instants_and_their_bounds() {
        // (instant, month it falls in)
        let table = [
            ("1970-01-01T00:00:00Z", m(1970, 1)),
            ("1969-12-31T23:59:59.999Z", m(1969, 12)),
            ("2024-02-29T23:59:59.999Z", m(2024, 2)),
            ("2024-03-01T00:00:00Z", m(2024, 3)),
            ("2025-12-31T23:59:59.999Z", m(2025, 12)),
            ("2026-01-01T00:00:00Z", m(2026, 1)),
            // A zone ahead of UTC: still December in UTC.
            ("2026-01-01T00:30:00+01:00", m(2025, 12)),
        ];
        for (instant, month) in table {
            assert_eq!(Month::of_ms(ms(instant)), Some(month), "{instant}");
        }
        assert_eq!(
            m(2026, 1).bounds_ms(),
            Some((1_767_225_600_000, 1_769_904_000_000))
        );
        assert_eq!(
            m(2024, 2).bounds_ms(),
            Some((ms("2024-02-01T00:00:00Z"), ms("2024-03-01T00:00:00Z")))
        );
        assert_eq!(
            m(2025, 12).bounds_ms(),
            Some((ms("2025-12-01T00:00:00Z"), ms("2026-01-01T00:00:00Z")))
        );
        assert_eq!(Month::of_epoch_day(0), Some(m(1970, 1)));
        assert_eq!(Month::of_epoch_day(-1), Some(m(1969, 12)));
        assert_eq!(Month::of_epoch_day(20_454), Some(m(2026, 1))); // 2026-01-01
        assert_eq!(Month::of_ms(i64::MAX), None);
    }

    #[test]
    fn month_steps_cross_years_both_ways() {
        let table = [
            (m(2026, 1), 0, m(2026, 1)),
            (m(2026, 1), -1, m(2025, 12)),
            (m(2026, 12), 1, m(2027, 1)),
            (m(2026, 11), 14, m(2028, 1)),
            (m(2026, 3), -27, m(2023, 12)),
            (m(2026, 3), -24, m(2024, 3)),
        ];
        for (from, n, to) in table {
            assert_eq!(from.plus(n), to, "{from} + {n}");
        }
    }

    #[test]
    fn partition_names_round_trip_and_foreign_names_are_ignored() {
        assert_eq!(m(2026, 1).partition_name(), "ts_history_y2026m01");
        assert_eq!(m(987, 12).partition_name(), "ts_history_y0987m12");
        for month in [m(2026, 1), m(1970, 12), m(9999, 7)] {
            assert_eq!(
                Month::of_partition_name(&month.partition_name()),
                Some(month)
            );
        }
        for foreign in [
            "ts_history_default",
            "ts_history_2026_01",
            "ts_history_y2026m13",
            "ts_history_y2026m00",
            "ts_history_y26m01",
            "ts_history_y2026m1",
            "ts_history_y+026m01",
            "ts_history_y2026m01_old",
        ] {
            assert_eq!(Month::of_partition_name(foreign), None, "{foreign}");
        }
    }

    #[test]
    fn retention_keeps_the_current_month_and_n_before_it() {
        let now = ms("2026-11-24T23:00:00Z");
        // (retention months, oldest month kept)
        let table = [
            (0, None),
            (1, Some(m(2026, 10))),
            (12, Some(m(2025, 11))),
            (24, Some(m(2024, 11))),
        ];
        for (months, kept) in table {
            assert_eq!(retention_cutoff(now, policy(3, months)), kept, "{months}");
        }
        assert_eq!(
            retention_cutoff_ms(now, policy(3, 12)),
            Some(ms("2025-11-01T00:00:00Z"))
        );
        let existing = [
            m(2026, 11),
            m(2024, 1),
            m(2025, 10),
            m(2025, 11),
            m(2027, 2),
        ];
        assert_eq!(
            months_to_drop(&existing, now, policy(3, 12)),
            [m(2024, 1), m(2025, 10)]
        );
        assert_eq!(months_to_drop(&existing, now, policy(3, 0)), []);
    }

    #[test]
    fn months_ahead_start_with_the_current_one() {
        let now = ms("2026-11-24T12:00:00Z");
        assert_eq!(
            months_ahead(now, policy(3, 0)),
            [m(2026, 11), m(2026, 12), m(2027, 1), m(2027, 2)]
        );
        assert_eq!(months_ahead(now, policy(0, 6)), [m(2026, 11)]);
        // A policy past the cap is held to it rather than making thousands of tables.
        let capped = months_ahead(now, policy(u32::MAX, 0));
        assert_eq!(capped.len(), MAX_MONTHS_AHEAD as usize + 1);
        assert_eq!(capped.last(), Some(&m(2036, 11)));
    }

    #[test]
    fn on_demand_months_stay_in_the_window_newest_first() {
        let now = ms("2026-11-24T12:00:00Z");
        let existing: BTreeSet<Month> = [m(2026, 11)].into();
        let wanted = [
            m(2026, 11),
            m(2024, 11),
            m(2024, 11),
            m(2027, 2),  // within 3 months ahead
            m(2027, 3),  // beyond: stays in DEFAULT
            m(1969, 12), // before the epoch: stays in DEFAULT
            m(2025, 6),
        ];
        assert_eq!(
            months_to_create(wanted, &existing, now, policy(3, 0), 12),
            [m(2027, 2), m(2025, 6), m(2024, 11)]
        );
        assert_eq!(
            months_to_create(wanted, &existing, now, policy(3, 0), 2),
            [m(2027, 2), m(2025, 6)]
        );
        // Months the retention would drop are not made.
        assert_eq!(
            months_to_create(wanted, &existing, now, policy(3, 12), 12),
            [m(2027, 2)]
        );
        assert_eq!(
            partition_window(now, policy(3, 12)),
            Some((m(2025, 11), m(2027, 2)))
        );
    }
}
