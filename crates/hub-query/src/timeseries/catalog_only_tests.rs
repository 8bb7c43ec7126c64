//! Which compiled queries read the catalog alone (`CompiledTs::catalog_only`): a store
//! keeps their answers while the catalog's revision stands, so a query that reads a
//! measurement, a provenance or an event must never be one (edges count in the
//! revision, other tables do not).

use super::parser::parse_where;
use super::query::{compile_query, EventScope, Route, TsQuery};
use crate::Dialect;

fn of(route: Route, select: Option<&str>, filter: Option<&str>) -> TsQuery {
    TsQuery {
        route,
        tree: false,
        types: Some(vec!["ParkingStation".into()]),
        data_types: None,
        filter: filter.map(|w| parse_where(w).unwrap()),
        select: select.map(str::to_string),
        distinct: true,
        limit: 200,
        offset: 0,
        access: None,
    }
}

#[test]
fn only_station_data_type_metadata_and_edge_reads_are_catalog_only() {
    let day = 86_400_000;
    // (route, select, where, catalog only)
    let table = [
        (Route::Stations, None, None, true),
        (
            Route::Stations,
            Some("scode,smetadata"),
            Some("sactive.eq.true"),
            true,
        ),
        (Route::Stations, Some("pcode"), Some("pname.eq.x"), true),
        (Route::StationsTypes, None, Some("tname.eq.free"), true),
        (
            Route::MetadataHistory { from: 0, to: day },
            None,
            None,
            true,
        ),
        (Route::Latest, None, None, false),
        (Route::Latest, Some("scode"), None, false),
        (
            Route::History { from: 0, to: day },
            Some("sname"),
            None,
            false,
        ),
        (Route::Edges, None, None, true),
        (
            Route::Edges,
            Some("ecode,eactive"),
            Some("eactive.eq.true"),
            true,
        ),
        (Route::Events(EventScope::All), None, None, false),
        (Route::Events(EventScope::Latest), None, None, false),
    ];
    for (route, select, filter, want) in table {
        let label = format!("{route:?} select={select:?} where={filter:?}");
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let compiled = compile_query(&of(route.clone(), select, filter), dialect).unwrap();
            assert_eq!(compiled.catalog_only, want, "{label}");
            let sql = compiled.sql.as_sql();
            if want {
                let edges = matches!(route, Route::Edges);
                let others = [
                    "ts_latest",
                    "ts_history",
                    "ts_provenance",
                    "ts_event",
                    "ts_edge",
                ];
                for table in others.iter().filter(|t| !(edges && **t == "ts_edge")) {
                    assert!(!sql.contains(table), "{label} reads {table}: {sql}");
                }
            }
        }
    }
}
