use std::cmp::Ordering;
use std::sync::Arc;

use hub_query::timeseries::{
    compile_query, parse_where, NarrowHistory, Route, TsQuery, MAX_NARROW_SERIES,
};
use hub_query::Dialect;

use super::*;

fn text(s: &str) -> Cell {
    Cell::Text(Arc::from(s))
}

#[test]
fn cells_order_as_sql_orders_them() {
    use Ordering::*;
    // (a, b, a compared with b)
    let table = [
        (Cell::Null, Cell::Null, Equal),
        (Cell::Null, Cell::Int(i64::MIN), Less),
        (Cell::Null, text(""), Less),
        (Cell::Int(2), Cell::Int(10), Less),
        (Cell::Int(2), Cell::Real(1.5), Greater),
        (Cell::Real(2.0), Cell::Int(2), Equal),
        (Cell::Real(-0.5), Cell::Real(0.25), Less),
        (Cell::Int(99), text("1"), Less),
        // Texts by bytes: upper case before lower case, a prefix first.
        (text("B2"), text("a1"), Less),
        (text("A1"), text("A10"), Less),
        (text("A10"), text("A2"), Less),
        (text("é"), text("z"), Greater),
    ];
    for (a, b, expected) in table {
        assert_eq!(compare_cells(&a, &b), expected, "{a:?} vs {b:?}");
        assert_eq!(compare_cells(&b, &a), expected.reverse(), "{b:?} vs {a:?}");
    }
}

/// A history query of [0, 10) by an admin.
pub(in crate::timeseries) fn history(
    select: Option<&str>,
    filter: Option<&str>,
    distinct: bool,
) -> TsQuery {
    TsQuery {
        route: Route::History { from: 0, to: 10 },
        tree: false,
        types: None,
        data_types: None,
        filter: filter.map(|w| parse_where(w).unwrap()),
        select: select.map(str::to_string),
        distinct,
        limit: 0,
        offset: -1,
        access: None,
    }
}

/// A plan over rows of (time, station code, value): ordered by time then code.
fn plan(distinct: bool, offset: u64, limit: Option<u64>) -> NarrowHistory {
    let q = history(Some("scode,mvalue"), None, distinct);
    let mut plan = compile_query(&q, Dialect::Sqlite)
        .unwrap()
        .narrow
        .expect("a history query without where reads narrow");
    plan.offset = offset;
    plan.limit = limit;
    plan
}

/// Merges series given as (station code, [(time, value)]), rows as (time, code, value).
fn merge(plan: &NarrowHistory, series: &[(&str, Vec<(i64, f64)>)]) -> Vec<(i64, String, f64)> {
    // Columns: _timestamp, mvalue (3), scode.
    assert_eq!(plan.measured, [0, 1, 2, 3]);
    let templates: Vec<Vec<Cell>> = series
        .iter()
        .map(|(code, _)| vec![Cell::Null, Cell::Null, Cell::Null, Cell::Null, text(code)])
        .collect();
    let mut at = vec![0; series.len()];
    let mut out = Vec::new();
    merge_history(
        plan,
        &templates,
        &Provenances::default(),
        |k| {
            let row = series[k]
                .1
                .get(at[k])
                .map(|(t, v)| vec![Cell::Int(*t), Cell::Real(*v), Cell::Null, Cell::Null]);
            at[k] += 1;
            Ok(row)
        },
        |row, spare| {
            let (Cell::Int(t), Cell::Real(v), Cell::Text(code)) = (&row[0], &row[1], &row[4])
            else {
                panic!("row {row:?}")
            };
            out.push((*t, code.to_string(), *v));
            // Every row comes back to be filled again, for whichever series is next.
            spare.push(row);
            true
        },
    )
    .unwrap();
    out
}

fn rows(list: &[(i64, &str, f64)]) -> Vec<(i64, String, f64)> {
    list.iter()
        .map(|(t, c, v)| (*t, c.to_string(), *v))
        .collect()
}

#[test]
fn series_merge_in_time_then_code_order_with_distinct_offset_and_limit() {
    let series = [
        ("B2", vec![(1, 1.0), (2, 2.0), (5, 5.0)]),
        ("A10", vec![(2, 7.0), (3, 3.0)]),
        ("A1", vec![(2, 7.0), (5, 1.0), (6, 0.5)]),
        ("C", vec![]),
    ];
    let all = rows(&[
        (1, "B2", 1.0),
        (2, "A1", 7.0),
        (2, "A10", 7.0),
        (2, "B2", 2.0),
        (3, "A10", 3.0),
        (5, "A1", 1.0),
        (5, "B2", 5.0),
        (6, "A1", 0.5),
    ]);
    assert_eq!(merge(&plan(false, 0, None), &series), all);
    assert_eq!(merge(&plan(false, 2, Some(3)), &series), all[2..5]);
    assert_eq!(merge(&plan(false, 7, Some(5)), &series), all[7..]);
    assert_eq!(merge(&plan(false, 9, None), &series), []);
    // `distinct` only drops rows equal in every column (the codes differ here).
    assert_eq!(merge(&plan(true, 0, None), &series), all);
    // Equal rows of two series (same code on both) are answered once with distinct.
    let twins = [
        ("A1", vec![(1, 1.0), (2, 2.0)]),
        ("A1", vec![(1, 1.0), (2, 3.0)]),
    ];
    assert_eq!(
        merge(&plan(true, 0, None), &twins),
        rows(&[(1, "A1", 1.0), (2, "A1", 2.0), (2, "A1", 3.0)])
    );
    assert_eq!(
        merge(&plan(true, 1, Some(1)), &twins),
        rows(&[(2, "A1", 2.0)])
    );
    assert_eq!(merge(&plan(false, 0, None), &twins).len(), 4);
}

#[test]
fn merging_stops_when_the_receiver_does() {
    let plan = plan(false, 0, None);
    let templates = vec![vec![
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Null,
        text("A"),
    ]];
    let mut pulled = 0;
    let mut emitted = 0;
    merge_history(
        &plan,
        &templates,
        &Provenances::default(),
        |_| {
            pulled += 1;
            Ok(Some(vec![
                Cell::Int(pulled),
                Cell::Real(1.0),
                Cell::Null,
                Cell::Null,
            ]))
        },
        |_, _| {
            emitted += 1;
            emitted < 3
        },
    )
    .unwrap();
    assert_eq!(emitted, 3);
    // Rows are pulled as the merge needs them: none after the refused one.
    assert_eq!(pulled, 3);
    assert!(plan.merges(MAX_NARROW_SERIES));
    assert!(!plan.merges(MAX_NARROW_SERIES + 1));
}

#[test]
fn where_items_decide_whether_a_history_query_reads_narrow() {
    // (where, reads narrow)
    let table = [
        (None, true),
        (Some("scode.eq.\"A\""), true),
        (Some("mvalue.gt.1"), true),
        (Some("scode.eq.\"A\",mvalue.gt.1,prname.eq.\"x\""), true),
        (Some("or(scode.eq.\"A\",sname.eq.\"B\")"), true),
        (
            Some("smetadata.city.eq.\"Bolzano\",mvalidtime.lt.2024-01-01"),
            true,
        ),
        // One item reading both sides cannot be split.
        (Some("or(scode.eq.\"A\",mvalue.gt.1)"), false),
        (Some("and(scode.eq.\"A\",mvalue.gt.1)"), false),
        (
            Some("scode.eq.\"A\",and(pcode.eq.\"P\",mperiod.eq.60,mvalue.gt.1)"),
            false,
        ),
    ];
    for (filter, narrow) in table {
        for tree in [false, true] {
            let q = TsQuery {
                route: Route::History { from: 0, to: 10 },
                tree,
                types: Some(vec!["MeteoStation".into()]),
                data_types: None,
                filter: filter.map(|w| parse_where(w).unwrap()),
                select: None,
                distinct: false,
                limit: 10,
                offset: 5,
                access: None,
            };
            let compiled = compile_query(&q, Dialect::Sqlite).unwrap();
            assert_eq!(compiled.narrow.is_some(), narrow, "{filter:?} tree {tree}");
        }
    }
    // Other routes never read narrow on SQLite (latest values do on PostgreSQL).
    let q = TsQuery {
        route: Route::Latest,
        tree: false,
        types: None,
        data_types: None,
        filter: None,
        select: None,
        distinct: false,
        limit: 0,
        offset: -1,
        access: None,
    };
    assert!(compile_query(&q, Dialect::Sqlite).unwrap().narrow.is_none());
}

/// Merges `series` as a PostgreSQL portal source does: a series' rows are pending until
/// fetched, `part` at a time, and end after a fetch that got fewer. Returns the rows
/// (as [`merge`] does) and the fetches made.
fn merge_in_parts(
    plan: &NarrowHistory,
    series: &[(&str, Vec<(i64, f64)>)],
    part: usize,
) -> (Vec<(i64, String, f64)>, usize) {
    let templates: Vec<Vec<Cell>> = series
        .iter()
        .map(|(code, _)| vec![Cell::Null, Cell::Null, Cell::Null, Cell::Null, text(code)])
        .collect();
    let (mut fetched, mut ended, mut at) = (
        vec![0; series.len()],
        vec![false; series.len()],
        vec![0; series.len()],
    );
    let mut fetches = 0;
    let mut out = Vec::new();
    let provenances = Provenances::default();
    let mut merge = Merge::new(plan, &templates, &provenances);
    loop {
        let step = merge.next(|k| {
            Ok(if at[k] < fetched[k] {
                let (t, v) = series[k].1[at[k]];
                at[k] += 1;
                Pull::Row(vec![Cell::Int(t), Cell::Real(v), Cell::Null, Cell::Null])
            } else if ended[k] {
                Pull::End
            } else {
                Pull::Pending
            })
        });
        match step.unwrap() {
            Step::Row(row) => out.push(row),
            Step::Done => break,
            Step::Fetch(k) => {
                fetches += 1;
                let more = (series[k].1.len() - fetched[k]).min(part);
                fetched[k] += more;
                ended[k] = more < part;
            }
        }
    }
    let rows = out
        .into_iter()
        .map(|r| match (&r[0], &r[4], &r[1]) {
            (Cell::Int(t), Cell::Text(c), Cell::Real(v)) => (*t, c.to_string(), *v),
            other => panic!("unexpected row {other:?}"),
        })
        .collect();
    (rows, fetches)
}

#[test]
fn a_merge_fetching_in_parts_answers_as_one_with_every_row_at_hand() {
    let series = [
        ("B", vec![(1, 1.0), (4, 4.0), (5, 5.0), (9, 9.0)]),
        ("A", vec![(1, 1.5), (2, 2.5), (3, 3.5), (4, 4.5), (6, 6.5)]),
        ("C", vec![]),
        ("D", vec![(7, 7.0)]),
    ];
    // (distinct, offset, limit, part)
    let table = [
        (false, 0, None, 1),
        (false, 0, None, 2),
        (false, 0, None, 100),
        (true, 0, None, 2),
        (false, 3, Some(4), 2),
        (false, 9, None, 3),
        (false, 0, Some(0), 1),
    ];
    for (distinct, offset, limit, part) in table {
        let plan = plan(distinct, offset, limit);
        let (rows, _) = merge_in_parts(&plan, &series, part);
        assert_eq!(
            rows,
            merge(&plan, &series),
            "{distinct} {offset} {limit:?} part {part}"
        );
    }
    // Every series fetched until a part comes back short: with parts of 2, B (4 rows)
    // takes 3 fetches, A (5) 3, C 1, D 1.
    assert_eq!(merge_in_parts(&plan(false, 0, None), &series, 2).1, 8);
    // A limit met early fetches no further: the first 2 rows (times 1, 1) need only the
    // first part of each series.
    let (rows, fetches) = merge_in_parts(&plan(false, 0, Some(2)), &series, 2);
    assert_eq!(rows.len(), 2);
    assert_eq!(fetches, 4);
}

#[test]
fn provenance_columns_are_read_apart_unless_a_where_item_filters_on_them() {
    let compile = |select: Option<&str>, filter: Option<&str>| {
        compile_query(&history(select, filter, false), Dialect::Postgres)
            .unwrap()
            .narrow
            .expect("reads narrow")
    };
    // (select, where, provenance read apart, its columns' positions)
    let table: [(Option<&str>, Option<&str>, bool, usize); 5] = [
        (None, None, true, 3),
        (Some("prname,mvalue,prlineage"), None, true, 2),
        (Some("scode,mvalue"), None, false, 0),
        (None, Some("prname.eq.\"x\""), false, 0),
        (None, Some("scode.eq.\"A\""), true, 3),
    ];
    for (select, filter, apart, columns) in table {
        let plan = compile(select, filter);
        let history = plan.history.as_sql();
        match &plan.provenance {
            Some(read) => {
                assert!(apart, "{select:?} {filter:?}");
                assert_eq!(read.positions.len(), columns, "{select:?}");
                assert!(read.sql.as_sql().contains("FROM ts_provenance pr"));
                assert!(!history.contains("ts_provenance"), "{history}");
                assert!(history.contains("me.provenance_id FROM"), "{history}");
                assert_eq!(plan.history_columns(), plan.read_columns + 1);
            }
            None => {
                assert!(!apart, "{select:?} {filter:?}");
                assert_eq!(plan.history_columns(), plan.read_columns);
                // Filtering on a provenance column joins it to each measurement.
                assert_eq!(
                    history.contains("ts_provenance"),
                    filter.is_some_and(|f| f.starts_with("pr")),
                    "{history}"
                );
            }
        }
    }
}

/// Rows given back are filled again for whichever series and provenance comes next:
/// each answers as a fresh one, a provenance's columns NULL where the measurement has
/// none or an unknown one.
#[test]
fn rows_filled_again_answer_as_new_ones() {
    let plan = compile_query(
        &history(Some("scode,mvalue,prname"), None, false),
        Dialect::Sqlite,
    )
    .unwrap()
    .narrow
    .expect("reads narrow");
    // Columns: _timestamp, mvalue (3), prname, scode.
    assert_eq!(plan.measured, [0, 1, 2, 3]);
    assert_eq!(plan.provenance.as_ref().unwrap().positions, [4]);
    let templates: Vec<Vec<Cell>> = ["A", "B"]
        .iter()
        .map(|code| {
            let mut t = vec![Cell::Null; 6];
            t[5] = text(code);
            t
        })
        .collect();
    let mut provenances = Provenances::default();
    provenances.insert(1, vec![text("collector")]);
    provenances.insert(2, vec![text("other")]);
    // (series, time, provenance id)
    let measurements: [(usize, i64, Cell); 6] = [
        (0, 1, Cell::Int(1)),
        (1, 2, Cell::Int(2)),
        (0, 3, Cell::Int(99)),
        (1, 4, Cell::Null),
        (0, 5, Cell::Int(1)),
        (1, 6, Cell::Int(1)),
    ];
    let mut at = [0usize; 2];
    let mut out = Vec::new();
    merge_history(
        &plan,
        &templates,
        &provenances,
        |k| {
            let mine: Vec<_> = measurements.iter().filter(|m| m.0 == k).collect();
            let row = mine.get(at[k]).map(|(_, t, pr)| {
                vec![
                    Cell::Int(*t),
                    Cell::Real(*t as f64),
                    Cell::Null,
                    Cell::Null,
                    pr.clone(),
                ]
            });
            at[k] += 1;
            Ok(row)
        },
        |row, spare| {
            out.push(row.clone());
            spare.push(row);
            true
        },
    )
    .unwrap();
    let expected: Vec<Vec<Cell>> = measurements
        .iter()
        .map(|(k, t, pr)| {
            let name = match pr {
                Cell::Int(1) => text("collector"),
                Cell::Int(2) => text("other"),
                _ => Cell::Null,
            };
            let code = text(["A", "B"][*k]);
            vec![
                Cell::Int(*t),
                Cell::Real(*t as f64),
                Cell::Null,
                Cell::Null,
                name,
                code,
            ]
        })
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn each_row_shows_the_provenance_it_names() {
    let q = history(Some("mvalue,prname"), None, false);
    let plan = compile_query(&q, Dialect::Sqlite)
        .unwrap()
        .narrow
        .expect("a history query without where reads narrow");
    let read = plan
        .provenance
        .as_ref()
        .expect("provenance columns read apart");
    let time = plan.time_column.expect("the time read plain");
    let width = plan.measured.iter().chain(&read.positions).max().unwrap() + 1;
    let templates = vec![vec![Cell::Null; width]];
    let provenances = Provenances::from_iter([(1, vec![text("alpha")]), (2, vec![text("beta")])]);
    // (time, provenance id named, prname answered): 9 is not a provenance. Runs of
    // rows name one, over more rows than a batch.
    let table: Vec<(i64, i64, Option<&str>)> = (0..1_234)
        .map(|t| match (t / 7) % 3 {
            0 => (t, 1, Some("alpha")),
            1 => (t, 2, Some("beta")),
            _ => (t, 9, None),
        })
        .collect();
    let mut rows = table.iter();
    let mut merge = Merge::new(&plan, &templates, &provenances);
    let mut answered = Vec::new();
    loop {
        let step = merge.next(|_| {
            Ok(match rows.next() {
                Some(&(t, id, _)) => {
                    let mut cells = vec![Cell::Null; plan.history_columns()];
                    cells[time] = Cell::Int(t);
                    cells[plan.read_columns] = Cell::Int(id);
                    Pull::Row(cells)
                }
                None => Pull::End,
            })
        });
        match step.unwrap() {
            Step::Row(row) => answered.push(match (&row[0], &row[read.positions[0]]) {
                (Cell::Int(t), Cell::Text(name)) => (*t, Some(name.to_string())),
                (Cell::Int(t), Cell::Null) => (*t, None),
                other => panic!("_timestamp, prname {other:?}"),
            }),
            Step::Done => break,
            Step::Fetch(_) => unreachable!("every row is at hand"),
        }
    }
    let expected: Vec<(i64, Option<String>)> = table
        .iter()
        .map(|(t, _, name)| (*t, name.map(str::to_string)))
        .collect();
    assert_eq!(answered, expected);
}
