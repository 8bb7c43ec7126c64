use std::sync::Arc;

use hub_query::{Dialect, SqlBuilder, SqlValue};

use super::*;

fn series_read(station_type: &str) -> SqlBuilder {
    let mut b = SqlBuilder::new(Dialect::Postgres);
    b.sql("SELECT ts.id, s.name FROM ts_series ts JOIN ts_station s ON s.id = ts.station_id WHERE s.stationtype = ");
    b.param(SqlValue::Text(station_type.to_string()));
    b
}

fn selection(ids: &[i64], name: &str) -> Arc<Selection> {
    let templates = ids
        .iter()
        .map(|_| vec![Cell::Text(Arc::from(name))])
        .collect();
    Arc::new(Selection::new(ids.to_vec(), templates))
}

#[test]
fn kept_series_stand_only_at_the_revision_read_before_them() {
    let kept = SeriesSelections::default();
    let read = series_read("ParkingStation");
    assert!(kept.get(&read).is_none());
    kept.keep(&read, 7, selection(&[3, 5], "P1"));
    let found = kept.get(&read).expect("kept");
    assert!(found.stands_at(7));
    assert!(!found.stands_at(8), "a catalog change makes them stale");
    assert_eq!(found.selection.ids, [3, 5]);
}

#[test]
fn another_parameter_is_another_read() {
    // The closed-data rules and filters are parameters: one caller's series are never
    // another's answer.
    let kept = SeriesSelections::default();
    kept.keep(&series_read("ParkingStation"), 1, selection(&[1], "P"));
    assert!(kept.get(&series_read("BikeStation")).is_none());
    let mut other_sql = SqlBuilder::new(Dialect::Postgres);
    other_sql.sql("SELECT ts.id, s.name FROM ts_series ts JOIN ts_station s ON s.id = ts.station_id WHERE s.stationcode = ");
    other_sql.param(SqlValue::Text("ParkingStation".into()));
    assert!(kept.get(&other_sql).is_none());
}

#[test]
fn a_series_is_found_by_its_id() {
    let s = selection(&[40, 10, 30], "x");
    assert_eq!(s.position(10), Some(1));
    assert_eq!(s.position(30), Some(2));
    assert_eq!(s.position(20), None);
}

#[test]
fn what_is_kept_stays_within_the_budget() {
    let kept = SeriesSelections::default();
    let big = "x".repeat(SELECTIONS_BUDGET_BYTES / 3);
    for (k, station_type) in ["A", "B", "C", "D"].iter().enumerate() {
        kept.keep(&series_read(station_type), k as i64, selection(&[1], &big));
    }
    // Three such selections do not fit with their keys and cells: the oldest went.
    assert!(kept.get(&series_read("A")).is_none());
    assert!(kept.get(&series_read("D")).is_some());
    // One larger than the whole budget is not kept.
    let huge = "x".repeat(SELECTIONS_BUDGET_BYTES + 1);
    kept.keep(&series_read("E"), 1, selection(&[1], &huge));
    assert!(kept.get(&series_read("E")).is_none());
}
