use std::sync::Arc;

use hub_query::timeseries::{Kind, OutColumn};
use hub_store::timeseries::Cell;

use super::FlatWriter;
use crate::params::Zone;
use crate::shape::flat;

fn column(key: &str, kind: Kind, hidden: bool) -> OutColumn {
    OutColumn {
        key: key.into(),
        kind,
        list: None,
        hidden,
    }
}

fn text(s: &str) -> Cell {
    Cell::Text(Arc::from(s))
}

fn utc() -> Zone {
    Zone::Fixed(chrono::FixedOffset::east_opt(0).expect("offset"))
}

/// What the writer writes for `rows` handed over in batches of `batch` rows.
fn written(columns: &[OutColumn], rows: &[Vec<Cell>], shownull: bool, batch: usize) -> String {
    let mut writer = FlatWriter::new(columns, utc(), shownull);
    let mut out = b"[".to_vec();
    for part in rows.chunks(batch.max(1)) {
        writer.rows(part, &mut out);
    }
    out.push(b']');
    String::from_utf8(out).expect("UTF-8")
}

/// The value tree's serialization: what the written bytes must equal.
fn expected(columns: &[OutColumn], rows: &[Vec<Cell>], shownull: bool) -> String {
    serde_json::to_string(&flat(columns, rows, utc(), shownull)).expect("serialize")
}

fn assert_same(what: &str, columns: &[OutColumn], rows: &[Vec<Cell>]) {
    for shownull in [false, true] {
        let want = expected(columns, rows, shownull);
        for batch in [1, 2, 3, rows.len()] {
            assert_eq!(
                written(columns, rows, shownull, batch),
                want,
                "{what}, shownull={shownull}, batches of {batch}"
            );
        }
    }
}

/// A history row's layout: measured fields first, series fields after, a hidden
/// grouping column and two three-cell kinds.
fn history_columns() -> Vec<OutColumn> {
    vec![
        column("_timestamp", Kind::Time, false),
        column("mperiod", Kind::Int, false),
        column("mvalidtime", Kind::Time, false),
        column("mvalue", Kind::Value, false),
        column("sactive", Kind::Bool, false),
        column("scode", Kind::Text, false),
        column("scoordinate", Kind::Point, false),
        column("smetadata", Kind::Json, false),
        column("_group", Kind::Text, true),
        column("sname", Kind::Text, false),
    ]
}

#[allow(clippy::too_many_arguments)]
fn history_row(
    t: i64,
    value: Cell,
    code: &Cell,
    name: &Cell,
    metadata: &Cell,
    x: f64,
    active: Cell,
) -> Vec<Cell> {
    vec![
        Cell::Int(t),
        Cell::Int(300),
        Cell::Int(t),
        value,
        Cell::Null,
        Cell::Null,
        active,
        code.clone(),
        Cell::Real(x),
        Cell::Real(46.5),
        Cell::Int(4326),
        metadata.clone(),
        text("hidden"),
        name.clone(),
    ]
}

#[test]
fn rows_of_series_are_written_as_the_value_tree_serializes_them() {
    let columns = history_columns();
    let (a, b) = (text("A1"), text("B2"));
    let (name_a, name_b) = (text("Station \"A\""), text("Stazione B"));
    let meta = text(r#"{"k":[1,2],"z":null}"#);
    let t = 1_767_225_600_000;
    let rows = vec![
        // One series: only time and value change (the runs are copied).
        history_row(t, Cell::Real(1.5), &a, &name_a, &meta, 11.0, Cell::Int(1)),
        history_row(
            t + 1,
            Cell::Real(2.0),
            &a,
            &name_a,
            &meta,
            11.0,
            Cell::Int(1),
        ),
        history_row(t + 2, Cell::Int(7), &a, &name_a, &meta, 11.0, Cell::Int(1)),
        // A value that is a text, then none (omitted unless shownull), then back.
        history_row(t + 3, Cell::Null, &a, &name_a, &meta, 11.0, Cell::Int(1)),
        {
            let mut r = history_row(t + 4, Cell::Null, &a, &name_a, &meta, 11.0, Cell::Int(1));
            r[4] = text("open");
            r
        },
        history_row(
            t + 5,
            Cell::Real(-0.0),
            &a,
            &name_a,
            &meta,
            11.0,
            Cell::Int(1),
        ),
        history_row(
            t + 6,
            Cell::Real(0.0),
            &a,
            &name_a,
            &meta,
            11.0,
            Cell::Int(1),
        ),
        // The next series: every series field changes at once.
        history_row(t, Cell::Real(3.25), &b, &name_b, &meta, 12.5, Cell::Int(0)),
        // The same text in another shared cell, and an equal number, are the same field.
        history_row(
            t + 1,
            Cell::Real(3.25),
            &text("B2"),
            &name_b,
            &meta,
            12.5,
            Cell::Int(0),
        ),
        // A series field becoming null in the middle of a row, and back.
        history_row(
            t + 2,
            Cell::Real(4.0),
            &b,
            &Cell::Null,
            &meta,
            12.5,
            Cell::Null,
        ),
        history_row(
            t + 3,
            Cell::Real(4.0),
            &b,
            &name_b,
            &Cell::Null,
            12.5,
            Cell::Int(0),
        ),
        history_row(
            t + 4,
            Cell::Real(4.0),
            &b,
            &name_b,
            &meta,
            12.5,
            Cell::Int(0),
        ),
    ];
    assert_same("two series", &columns, &rows);
}

#[test]
fn a_row_with_only_its_timestamp_is_dropped_unless_nulls_are_shown() {
    let columns = vec![
        column("_timestamp", Kind::Time, false),
        column("mvalue", Kind::Value, false),
        column("scode", Kind::Text, false),
    ];
    let code = text("C");
    let row = |t: i64, v: Cell, c: &Cell| vec![Cell::Int(t), v, Cell::Null, Cell::Null, c.clone()];
    let rows = vec![
        row(1, Cell::Null, &Cell::Null),
        row(2, Cell::Real(1.0), &code),
        row(3, Cell::Null, &Cell::Null),
        row(3, Cell::Null, &Cell::Null),
        row(4, Cell::Null, &code),
        row(5, Cell::Null, &Cell::Null),
    ];
    assert_same("timestamps alone", &columns, &rows);
    // The first row of the answer dropped, the second written without a leading comma.
    assert!(written(&columns, &rows, false, 1).starts_with("[{\"_timestamp\""));
}

#[test]
fn rows_whose_visible_fields_are_all_null_or_hidden() {
    let columns = vec![
        column("_g", Kind::Text, true),
        column("sname", Kind::Text, false),
    ];
    let rows = vec![
        vec![text("g"), Cell::Null],
        vec![text("g"), text("n")],
        vec![text("h"), Cell::Null],
    ];
    assert_same("all null", &columns, &rows);
    let hidden_only = vec![column("_g", Kind::Text, true)];
    assert_same(
        "no visible field",
        &hidden_only,
        &[vec![text("g")], vec![text("g")]],
    );
}

#[test]
fn two_columns_with_one_key_keep_the_value_trees_rule() {
    let columns = vec![
        column("scode", Kind::Text, false),
        column("sname", Kind::Text, false),
        column("scode", Kind::Text, false),
    ];
    let rows = vec![
        vec![text("a"), text("n"), text("b")],
        vec![text("a"), text("n"), Cell::Null],
    ];
    assert_same("duplicate key", &columns, &rows);
}

/// Rows made of a few shared cells and fresh ones in a fixed pseudo-random order: the
/// written bytes equal the value tree's however fields repeat, change or vanish.
#[test]
fn pseudo_random_rows_are_written_as_the_value_tree_serializes_them() {
    let columns = history_columns();
    let codes = [text("A"), text("B"), Cell::Null];
    let names = [text("Alpha"), text("Beta"), text("Alpha")];
    let metas = [text("{}"), text(r#"{"a":1}"#), text("not json"), Cell::Null];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut rows = Vec::new();
    for k in 0..400 {
        let value = match next(5) {
            0 => Cell::Null,
            1 => Cell::Int(next(3) as i64),
            _ => Cell::Real(next(4) as f64 / 4.0),
        };
        let active = [Cell::Int(0), Cell::Int(1), Cell::Null][next(3)].clone();
        rows.push(history_row(
            1_700_000_000_000 + (k / 2) * 60_000,
            value,
            &codes[next(3)],
            &names[next(3)],
            &metas[next(4)],
            [11.0, 11.5][next(2)],
            active,
        ));
    }
    assert_same("pseudo-random", &columns, &rows);
}

/// A field copied from the start of the previous row lands after fields this row
/// writes anew: it keeps its comma (the previous row's first byte, written as `{`).
#[test]
fn a_run_from_the_previous_rows_first_byte_keeps_its_comma() {
    let columns = vec![
        column("mvalue", Kind::Value, false),
        column("scode", Kind::Text, false),
        column("sname", Kind::Text, false),
    ];
    let (code, name) = (text("A"), text("Alpha"));
    let row = |v: Cell| vec![v, Cell::Null, Cell::Null, code.clone(), name.clone()];
    let rows = vec![
        row(Cell::Null),
        row(Cell::Real(1.5)),
        row(Cell::Null),
        row(Cell::Null),
        row(Cell::Int(2)),
    ];
    assert_same("run from the first byte", &columns, &rows);
    assert_eq!(
        written(&columns, &rows[..2], false, 2),
        r#"[{"scode":"A","sname":"Alpha"},{"mvalue":1.5,"scode":"A","sname":"Alpha"}]"#
    );
}
