use std::sync::Arc;

use hub_query::{Dialect, SqlBuilder};

use super::*;

fn text(s: &str) -> Cell {
    Cell::Text(Arc::from(s))
}

/// Answers of (time, station code, parent code, type name): read rows are (time, station
/// id and version, parent id and version, type id and version).
fn plan() -> CatalogRead {
    CatalogRead {
        sql: SqlBuilder::new(Dialect::Postgres),
        entities: vec![
            CatalogKind::Station,
            CatalogKind::Station,
            CatalogKind::Type,
        ],
        sources: vec![
            CellSource::Read(0),
            CellSource::Catalog {
                entity: 0,
                column: 2,
            },
            CellSource::Catalog {
                entity: 1,
                column: 2,
            },
            CellSource::Catalog {
                entity: 2,
                column: 0,
            },
        ],
        read_columns: 1,
    }
}

fn read_row(
    time: i64,
    station: (i64, i64),
    parent: Option<(i64, i64)>,
    dtype: (i64, i64),
) -> Vec<Cell> {
    let (pid, pver) = match parent {
        Some((id, v)) => (Cell::Int(id), Cell::Int(v)),
        None => (Cell::Null, Cell::Null),
    };
    vec![
        Cell::Int(time),
        Cell::Int(station.0),
        Cell::Int(station.1),
        pid,
        pver,
        Cell::Int(dtype.0),
        Cell::Int(dtype.1),
    ]
}

/// A station row as `CatalogKind::Station.sql()` reads it.
fn station(id: i64, version: i64, code: &str) -> Vec<Cell> {
    let mut row = vec![
        Cell::Int(id),
        Cell::Int(version),
        text("name"),
        text("Meteo"),
        text(code),
    ];
    row.extend([
        text("O"),
        Cell::Int(1),
        Cell::Int(1),
        Cell::Real(11.0),
        Cell::Real(46.0),
        Cell::Int(4326),
        Cell::Null,
    ]);
    row
}

fn dtype(id: i64, version: i64, name: &str) -> Vec<Cell> {
    vec![
        Cell::Int(id),
        Cell::Int(version),
        text(name),
        text("°C"),
        text("Mean"),
        Cell::Null,
        Cell::Null,
    ]
}

#[test]
fn rows_are_made_from_the_read_and_the_catalog_rows_at_the_versions_read() {
    let plan = plan();
    let catalog = Catalog::default();
    let read = vec![
        read_row(10, (1, 100), Some((3, 300)), (7, 700)),
        read_row(11, (2, 200), None, (7, 700)),
    ];
    let (mut answer, missing) = catalog.lookup(&plan, &read);
    let mut missing = missing;
    missing.sort_by_key(|(k, _)| format!("{k:?}"));
    assert_eq!(
        missing,
        vec![
            (CatalogKind::Station, vec![1, 2, 3]),
            (CatalogKind::Type, vec![7])
        ]
    );
    catalog.keep(
        &mut answer,
        CatalogKind::Station,
        vec![
            station(1, 100, "A"),
            station(2, 200, "B"),
            station(3, 300, "P"),
        ],
    );
    catalog.keep(&mut answer, CatalogKind::Type, vec![dtype(7, 700, "temp")]);
    let rows: Vec<Vec<Cell>> = read
        .iter()
        .map(|r| answer.row(r.clone()).unwrap())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec![Cell::Int(10), text("A"), text("P"), text("temp")],
            // No parent: its columns are NULL.
            vec![Cell::Int(11), text("B"), Cell::Null, text("temp")],
        ]
    );
    // The next answer finds them all.
    let (answer, missing) = catalog.lookup(&plan, &read);
    assert!(missing.is_empty(), "{missing:?}");
    assert_eq!(answer.row(read[1].clone()).unwrap()[1], text("B"));

    // A station changed since (another version read): read again, then used.
    let changed = vec![read_row(12, (1, 101), None, (7, 700))];
    let (mut answer, missing) = catalog.lookup(&plan, &changed);
    assert_eq!(missing, vec![(CatalogKind::Station, vec![1])]);
    assert!(answer.row(changed[0].clone()).is_none(), "not at hand yet");
    catalog.keep(
        &mut answer,
        CatalogKind::Station,
        vec![station(1, 101, "A2")],
    );
    assert_eq!(answer.row(changed[0].clone()).unwrap()[1], text("A2"));

    // Changed again between the two reads: the catalog's row is not the one read, and
    // the row is refused (the compiled query answers).
    let (mut answer, _) = catalog.lookup(&plan, &[read_row(13, (2, 201), None, (7, 700))]);
    catalog.keep(
        &mut answer,
        CatalogKind::Station,
        vec![station(2, 202, "B3")],
    );
    assert!(answer.row(read_row(13, (2, 201), None, (7, 700))).is_none());
    // A station the catalog read did not find (deleted meanwhile) is refused too.
    let (answer, missing) = catalog.lookup(&plan, &[read_row(14, (9, 900), None, (7, 700))]);
    assert_eq!(missing, vec![(CatalogKind::Station, vec![9])]);
    assert!(answer.row(read_row(14, (9, 900), None, (7, 700))).is_none());
}

#[test]
fn the_catalog_keeps_a_bounded_number_of_rows() {
    let plan = plan();
    let catalog = Catalog::default();
    let (mut answer, _) = catalog.lookup(&plan, &[]);
    let rows = (0..MAX_CATALOG_ROWS as i64 + 5)
        .map(|id| station(id, 1, "S"))
        .collect();
    catalog.keep(&mut answer, CatalogKind::Station, rows);
    let kept = catalog.rows.lock().unwrap().len();
    assert!(kept <= MAX_CATALOG_ROWS && kept > 0, "{kept}");
    // Rows of another shape are not kept.
    let (mut answer, _) = catalog.lookup(&plan, &[]);
    catalog.keep(
        &mut answer,
        CatalogKind::Type,
        vec![vec![Cell::Int(1), Cell::Int(1)]],
    );
    assert!(answer.rows.is_empty());
}
