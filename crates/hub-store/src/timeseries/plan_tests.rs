//! Table tests of the writer's decisions: input → expected plan.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::timeseries::RecordValue;

fn st(code: &str, origin: Option<&str>, parent: Option<(&str, &str)>) -> StationInput {
    StationInput {
        code: code.into(),
        name: code.into(),
        origin: origin.map(Into::into),
        parent: parent.map(|(t, c)| (t.into(), c.into())),
        ..Default::default()
    }
}

fn codes(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const SYNC: SyncFlags = SyncFlags {
    sync_state: true,
    only_activation: false,
};
const NO_SYNC: SyncFlags = SyncFlags {
    sync_state: false,
    only_activation: false,
};
const ONLY_ACTIVATION: SyncFlags = SyncFlags {
    sync_state: true,
    only_activation: true,
};

#[test]
fn station_sync_plans() {
    // (active codes in scope, incoming codes, flags) → (upserted codes, deactivated codes)
    type Case<'a> = (
        &'a [&'a str],
        &'a [&'a str],
        SyncFlags,
        &'a [&'a str],
        &'a [&'a str],
    );
    let cases: &[Case] = &[
        (&[], &[], SYNC, &[], &[]),
        (&["a", "b"], &[], SYNC, &[], &[]),
        (&["a", "b"], &["a"], SYNC, &["a"], &["b"]),
        (&["a", "b"], &["a"], NO_SYNC, &["a"], &[]),
        (&["a", "b"], &["a"], ONLY_ACTIVATION, &["a"], &[]),
        (&["a"], &["b", "b", "a", "b"], SYNC, &["b", "a"], &[]),
        (&["x", "y"], &["c"], SYNC, &["c"], &["x", "y"]),
    ];
    for (active, incoming, flags, upsert, deactivate) in cases {
        let incoming: Vec<StationInput> = incoming.iter().map(|c| st(c, None, None)).collect();
        let plan = plan_station_sync(&codes(active), &incoming, *flags);
        let got: Vec<&str> = plan.upsert.iter().map(|s| s.code.as_str()).collect();
        assert_eq!(got, *upsert, "upsert of {active:?} {incoming:?} {flags:?}");
        assert_eq!(
            plan.deactivate,
            codes(deactivate),
            "deactivate of {active:?} {flags:?}"
        );
    }
}

#[test]
fn deactivation_scopes() {
    // (first station's origin, flags) → scope
    type Scope<'a> = Option<Option<&'a str>>;
    let cases: &[(Scope, SyncFlags, Scope)] = &[
        (Some(Some("A22")), SYNC, Some(Some("A22"))),
        (Some(None), SYNC, Some(None)),
        (Some(Some("A22")), NO_SYNC, None),
        (Some(Some("A22")), ONLY_ACTIVATION, None),
        (None, SYNC, None),
    ];
    for (first, flags, expected) in cases {
        let incoming: Vec<StationInput> = first
            .iter()
            .map(|o| st("a", *o, None))
            .chain(std::iter::once(st("b", Some("other"), None)))
            .filter(|_| first.is_some())
            .collect();
        let expected = expected.map(|o| o.map(String::from));
        assert_eq!(
            deactivation_scope(&incoming, *flags),
            expected,
            "{first:?} {flags:?}"
        );
    }
}

#[test]
fn missing_parents() {
    let existing: HashSet<(String, String)> = [("P".to_string(), "p1".to_string())].into();
    // (stations as (code, parent)) → code of the first station whose parent is missing
    type Station<'a> = (&'a str, Option<(&'a str, &'a str)>);
    let cases: &[(&[Station], Option<&str>)] = &[
        (&[], None),
        (&[("a", None)], None),
        (&[("a", Some(("P", "p1")))], None),
        (
            &[("a", Some(("P", "p1"))), ("b", Some(("P", "p2")))],
            Some("b"),
        ),
        (
            &[("c", Some(("Q", "p1"))), ("b", Some(("P", "p2")))],
            Some("c"),
        ),
    ];
    for (stations, expected) in cases {
        let owned: Vec<StationInput> = stations.iter().map(|(c, p)| st(c, None, *p)).collect();
        let refs: Vec<&StationInput> = owned.iter().collect();
        let got = first_missing_parent(&refs, &existing).map(|e| e.to_string());
        let want = expected.map(|c| {
            let s = owned.iter().find(|s| s.code == c).unwrap();
            let (t, p) = s.parent.clone().unwrap();
            format!("document rejected: station '{c}': parent station '{p}' of type '{t}' does not exist")
        });
        assert_eq!(got, want, "{stations:?}");
    }
}

#[test]
fn metadata_changes() {
    let cases = [
        (None, "{}", true),
        (Some("{}"), "{}", false),
        (Some("{\"a\":1}"), "{}", true),
    ];
    for (current, new, expected) in cases {
        assert_eq!(
            metadata_changed(current, new),
            expected,
            "{current:?} {new}"
        );
    }
}

fn rec(code: &str, dtype: &str, t: i64, v: RecordValue) -> RecordInput {
    RecordInput {
        station_code: code.into(),
        data_type: dtype.into(),
        period: 600,
        timestamp: t,
        value: v,
    }
}

#[test]
fn push_plans() {
    use RecordValue::{Double, Text};
    let stations: HashMap<String, i64> = [("S".to_string(), 1)].into();
    let types: HashMap<String, i64> = [("free".to_string(), 7)].into();
    // series (1, 7, 600, 0) exists with latest 100 as id 10; the text series is new (id 11).
    let series: HashMap<SeriesKey, (i64, i64)> = [
        ((1, 7, 600, 0), (10, 100)),
        ((1, 7, 600, 1), (11, i64::MIN)),
    ]
    .into();
    // records → (history rows, latest rows, inserted, skipped, unknown stations, unknown types)
    type Case = (
        Vec<RecordInput>,
        &'static [(i64, usize)],
        &'static [(i64, usize)],
        [u64; 4],
    );
    let cases: Vec<Case> = vec![
        (vec![], &[], &[], [0, 0, 0, 0]),
        (
            // Doubles and texts of one station and type alternate once sorted: each
            // series keeps its own newest time across the other's records.
            vec![
                rec("S", "free", 50, Double(1.0)),
                rec("S", "free", 50, Text("a".into())),
                rec("S", "free", 120, Text("b".into())),
                rec("S", "free", 150, Double(2.0)),
                rec("S", "free", 150, Text("c".into())),
                rec("S", "free", 150, Double(3.0)),
            ],
            &[(11, 1), (11, 2), (10, 3), (11, 4)],
            &[(10, 3), (11, 4)],
            [4, 2, 0, 0],
        ),
        (
            vec![rec("S", "free", 100, Double(1.0))],
            &[],
            &[],
            [0, 1, 0, 0],
        ),
        (
            vec![
                rec("S", "free", 300, Double(1.0)),
                rec("S", "free", 200, Double(2.0)),
            ],
            &[(10, 0), (10, 1)],
            &[(10, 1)],
            [2, 0, 0, 0],
        ),
        (
            vec![
                rec("S", "free", 200, Double(1.0)),
                rec("S", "free", 200, Double(2.0)),
            ],
            &[(10, 0)],
            &[(10, 0)],
            [1, 1, 0, 0],
        ),
        (
            vec![
                rec("X", "free", 500, Double(1.0)),
                rec("S", "nope", 500, Double(1.0)),
                rec("S", "free", 5, Text("a".into())),
            ],
            // sorted, the text record comes first
            &[(11, 0)],
            &[(11, 0)],
            [1, 0, 1, 1],
        ),
    ];
    for (mut records, history, latest, [inserted, skipped, unknown_st, unknown_ty]) in cases {
        sort_records(&mut records);
        let resolved = resolve_push(&records, &stations, &types);
        let plan = plan_push(&records, &resolved, &series);
        let ctx = format!("{records:?}");
        assert_eq!(plan.history, history, "{ctx}");
        assert_eq!(plan.latest, latest, "{ctx}");
        assert_eq!(
            plan.summary,
            PushSummary {
                inserted,
                skipped_older: skipped,
                unknown_stations: unknown_st,
                unknown_types: unknown_ty
            },
            "{ctx}"
        );
    }
}

#[test]
fn push_names_are_distinct_and_sorted() {
    let records = vec![
        rec("b", "t2", 1, RecordValue::Double(0.0)),
        rec("a", "t1", 1, RecordValue::Double(0.0)),
        rec("b", "t1", 1, RecordValue::Double(0.0)),
    ];
    assert_eq!(
        push_names(&records),
        (codes(&["a", "b"]), codes(&["t1", "t2"]))
    );
}

#[test]
fn last_record_answers() {
    // (station exists, newest, type or period asked) → answer
    let cases = [
        (false, None, false, 0),
        (false, None, true, 0),
        (true, Some(42), false, 42),
        (true, Some(42), true, 42),
        (true, None, false, 0),
        (true, None, true, -1),
    ];
    for (exists, newest, asked, expected) in cases {
        assert_eq!(
            last_record_answer(exists, newest, asked),
            expected,
            "{exists} {newest:?} {asked}"
        );
    }
}

#[test]
fn type_list_sql_reads_available_rows_only() {
    let cases = [
        (TypeList::StationTypes, "ts_station WHERE available IS TRUE"),
        (TypeList::EdgeTypes, "i.available IS TRUE"),
        (TypeList::EventOrigins, "FROM ts_event"),
    ];
    for (what, part) in cases {
        assert!(type_list_sql(what).contains(part), "{what:?}");
    }
}

/// Records in a scrambled order, with repeated codes, types, periods and timestamps
/// (records equal in all four differ in value): sorted exactly as comparing the strings
/// themselves, stably, would sort them.
#[test]
fn records_sort_by_series_and_time_keeping_the_order_of_equals() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut records: Vec<RecordInput> = (0..5_000)
        .map(|k| {
            let mut r = rec(
                &format!("S{}", next(40)),
                ["wind", "temp", "t", "temp2"][next(4) as usize],
                next(30) as i64,
                RecordValue::Double(k as f64),
            );
            r.period = [60, 600][next(2) as usize];
            r
        })
        .collect();
    // Runs of one station, as collectors send them.
    records.extend((0..50).map(|k| rec("S7", "temp", 100 - k, RecordValue::Double(-1.0))));
    let expected = sorted_as_strings(&records);
    sort_records(&mut records);
    assert_eq!(format!("{records:?}"), expected);
    // Already sorted records stay as they are.
    sort_records(&mut records);
    assert_eq!(format!("{records:?}"), expected);
}

/// `records` as a stable sort comparing station code, data type, period and timestamp
/// (the strings compared as strings) orders them, printed for comparison.
fn sorted_as_strings(records: &[RecordInput]) -> String {
    let mut expected = records.to_vec();
    expected.sort_by(|a, b| {
        (&a.station_code, &a.data_type, a.period, a.timestamp).cmp(&(
            &b.station_code,
            &b.data_type,
            b.period,
            b.timestamp,
        ))
    });
    format!("{expected:?}")
}

/// Records in runs of one series in time order, as collectors send them, the runs in
/// any order: runs of a series that continue each other, that overlap in time, that
/// repeat a timestamp (within a run and across runs, values telling them apart), and
/// series out of order. Sorted exactly as comparing the strings, stably, would sort them.
#[test]
fn runs_of_records_sort_as_records_do() {
    let run = |code: &str, dtype: &str, times: &[i64], tag: f64| -> Vec<RecordInput> {
        times
            .iter()
            .enumerate()
            .map(|(k, &t)| rec(code, dtype, t, RecordValue::Double(tag + k as f64 / 100.0)))
            .collect()
    };
    let cases: Vec<Vec<Vec<RecordInput>>> = vec![
        // Series out of order, each one run.
        vec![
            run("B", "t", &[1, 2, 3], 1.0),
            run("A", "w", &[1, 2], 2.0),
            run("A", "t", &[5, 9], 3.0),
        ],
        // A series in two runs that continue each other, the later one first.
        vec![
            run("A", "t", &[4, 5, 6], 1.0),
            run("B", "t", &[1], 2.0),
            run("A", "t", &[1, 2, 3], 3.0),
        ],
        // Runs of a series overlapping in time.
        vec![
            run("A", "t", &[1, 3, 5], 1.0),
            run("A", "t", &[2, 4, 6], 2.0),
        ],
        // Repeated timestamps: within a run, across runs, a run starting where one ends.
        vec![
            run("A", "t", &[1, 1, 2], 1.0),
            run("A", "t", &[2, 2, 3], 2.0),
            run("A", "t", &[1, 2], 3.0),
        ],
        vec![
            run("A", "t", &[5, 6], 1.0),
            run("A", "t", &[3, 6], 2.0),
            run("A", "t", &[6, 7], 3.0),
        ],
        // Time going back inside a series' records starts a new run.
        vec![run("A", "t", &[3, 2, 1, 2, 3], 1.0)],
        vec![],
    ];
    for (n, runs) in cases.into_iter().enumerate() {
        let mut records: Vec<RecordInput> = runs.concat();
        let expected = sorted_as_strings(&records);
        sort_records(&mut records);
        assert_eq!(format!("{records:?}"), expected, "case {n}");
    }
    // The volume set's shape: 200 series of 20 steps, types not in name order.
    let mut records: Vec<RecordInput> = (0..40)
        .flat_map(|s| {
            ["wind", "temp", "air", "rain", "sun"]
                .into_iter()
                .flat_map(move |t| {
                    (0..20).map(move |j| {
                        rec(
                            &format!("S{s:03}"),
                            t,
                            j * 60,
                            RecordValue::Double(j as f64),
                        )
                    })
                })
        })
        .collect();
    let expected = sorted_as_strings(&records);
    sort_records(&mut records);
    assert_eq!(format!("{records:?}"), expected);
}
