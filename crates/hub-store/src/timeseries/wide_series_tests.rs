use hub_query::timeseries::{compile_query, NarrowHistory, Route};
use hub_query::Dialect;

use super::*;
use crate::timeseries::narrow::tests::history;

/// The narrow plan of a week of `types`' history, the first page of 200.
fn plan(dialect: Dialect, types: &str) -> NarrowHistory {
    page(dialect, types, 200, 0)
}

/// The narrow plan of a week of `types`' history, `limit` rows after `offset`.
fn page(dialect: Dialect, types: &str, limit: i64, offset: i64) -> NarrowHistory {
    let mut q = history(None, None, true);
    q.route = Route::History {
        from: 1_795_478_400_000,
        to: 1_796_083_200_000,
    };
    q.types = Some(vec![types.to_string()]);
    q.data_types = Some(vec!["free".to_string()]);
    (q.limit, q.offset) = (limit, offset);
    compile_query(&q, dialect).unwrap().narrow.unwrap()
}

#[test]
fn a_wide_series_read_is_skipped_for_a_while_and_only_that_read() {
    let memo = WideSeriesReads::default();
    let parking = plan(Dialect::Postgres, "ParkingStation");
    let t0 = Instant::now();
    assert!(!memo.is_wide(&parking, t0), "nothing is known at first");
    memo.remember(&parking, t0);
    let second = Duration::from_secs(1);
    // (plan, time of the question, wide?)
    let table = [
        (plan(Dialect::Postgres, "ParkingStation"), t0, true),
        (
            plan(Dialect::Postgres, "ParkingStation"),
            t0 + KEPT_FOR - second,
            true,
        ),
        (
            plan(Dialect::Postgres, "ParkingStation"),
            t0 + KEPT_FOR,
            false,
        ),
        (
            plan(Dialect::Postgres, "ParkingStation"),
            t0 + KEPT_FOR * 5,
            false,
        ),
        // Other parameters, or the same read in the other dialect: another read.
        (plan(Dialect::Postgres, "BikeCounter"), t0, false),
        (plan(Dialect::Sqlite, "ParkingStation"), t0, false),
    ];
    for (k, (plan, at, wide)) in table.iter().enumerate() {
        assert_eq!(memo.is_wide(plan, *at), *wide, "row {k}");
    }
    // Remembered again later, it counts from then.
    memo.remember(&parking, t0 + KEPT_FOR);
    assert!(memo.is_wide(&parking, t0 + KEPT_FOR + KEPT_FOR - second));
}

#[test]
fn the_memo_starts_again_when_full() {
    let memo = WideSeriesReads::default();
    let now = Instant::now();
    let plans: Vec<NarrowHistory> = (0..=MAX_KEPT)
        .map(|k| plan(Dialect::Postgres, &format!("Type{k}")))
        .collect();
    for plan in &plans[..MAX_KEPT] {
        memo.remember(plan, now);
    }
    assert!(plans[..MAX_KEPT].iter().all(|p| memo.is_wide(p, now)));
    memo.remember(&plans[MAX_KEPT], now);
    assert!(memo.is_wide(&plans[MAX_KEPT], now));
    assert!(plans[..MAX_KEPT].iter().all(|p| !memo.is_wide(p, now)));
}
