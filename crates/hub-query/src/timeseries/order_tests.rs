//! The order PostgreSQL is asked for: `NULLS FIRST` (SQLite's order) only on columns
//! that can hold a NULL, so that an index can give the order of the rest, and parents
//! found by key where a page walks stations in order.

use super::parser::parse_where;
use super::query::{compile_query, EventScope, Route, TsQuery};
use super::schema::NEVER_NULL;
use crate::Dialect;

fn page(route: Route, tree: bool, limit: i64) -> TsQuery {
    TsQuery {
        route,
        tree,
        types: Some(vec!["ParkingStation".into()]),
        data_types: None,
        filter: None,
        select: None,
        distinct: true,
        limit,
        offset: 0,
        access: None,
    }
}

/// The ORDER BY of the compiled statement, up to its LIMIT or OFFSET.
fn order_by(sql: &str) -> &str {
    let from = sql.rfind(" ORDER BY ").expect("ordered") + " ORDER BY ".len();
    let rest = &sql[from..];
    let end = [" LIMIT ", " OFFSET "]
        .iter()
        .filter_map(|k| rest.find(k))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

const PARENT_BY_KEY: &str = " LEFT JOIN ts_station p ON p.id = s.parent_id";
const PARENTS_HASHED: &str = "(SELECT parent_id FROM ts_station WHERE parent_id IS NOT NULL)) p";

#[test]
fn postgres_says_nulls_first_only_where_a_null_can_occur() {
    let latest = || Route::Latest;
    let history = || Route::History { from: 0, to: 1 };
    let events = || Route::Events(EventScope::All);
    let rest = "8 NULLS FIRST, 9 NULLS FIRST, 10 NULLS FIRST";
    // (route, tree, the ORDER BY on PostgreSQL)
    let table: Vec<(Route, bool, String)> = vec![
        // Station type and code, data type, time and period are NOT NULL; the value's
        // three columns are not.
        (latest(), true, format!("1, 2, 3, 4, 5, {rest}")),
        (history(), true, format!("1, 2, 3, 4, 5, {rest}")),
        (
            latest(),
            false,
            "1, 30, 23, 33, 2, 5 NULLS FIRST, 6 NULLS FIRST, 7 NULLS FIRST".into(),
        ),
        (Route::Stations, true, "1, 2".into()),
        // Edges keep NULLS FIRST: few edges are sorted faster than all stations walked.
        (Route::Edges, true, "1 NULLS FIRST, 2 NULLS FIRST".into()),
        (events(), true, "1, 2, 3".into()),
        // The event's start may be unknown.
        (events(), false, "8, 9, 10 NULLS FIRST, 12".into()),
    ];
    for (route, tree, want) in table {
        let q = page(route.clone(), tree, 200);
        let pg = compile_query(&q, Dialect::Postgres).unwrap();
        let sqlite = compile_query(&q, Dialect::Sqlite).unwrap();
        let pg_order = order_by(pg.sql.as_sql());
        assert_eq!(pg_order, want, "{route:?} tree={tree}");
        // The same ordinals in the same sequence on both; SQLite never says NULLS.
        let sqlite_order = order_by(sqlite.sql.as_sql());
        assert_eq!(pg_order.replace(" NULLS FIRST", ""), sqlite_order);
    }
}

#[test]
fn only_never_null_columns_of_inner_tables_lose_nulls_first() {
    // Each alias of a column said never to be NULL is read from or joined inner in
    // every statement that names it: a LEFT JOIN would make its column NULL where the
    // joined row is missing.
    let routes = [
        Route::Stations,
        Route::StationsTypes,
        Route::Latest,
        Route::History { from: 0, to: 1 },
        Route::MetadataHistory { from: 0, to: 1 },
        Route::Edges,
        Route::Events(EventScope::All),
        Route::Events(EventScope::Latest),
    ];
    for route in routes {
        for tree in [true, false] {
            for limit in [200, -1] {
                let sql = compile_query(&page(route.clone(), tree, limit), Dialect::Postgres)
                    .unwrap()
                    .sql
                    .as_sql()
                    .to_string();
                for expr in NEVER_NULL {
                    let alias = expr.split('.').next().unwrap();
                    let left = sql.split(" LEFT JOIN ").skip(1).any(|joined| {
                        let head = joined.split(" ON ").next().unwrap();
                        head.ends_with(&format!(" {alias}"))
                    });
                    assert!(!left, "{route:?} joins {alias} LEFT: {sql}");
                }
            }
        }
    }
}

#[test]
fn a_page_in_station_order_finds_parents_by_key_and_other_reads_from_a_table_of_parents() {
    let with_parent = |route: Route, tree: bool, limit: i64| {
        let mut q = page(route, tree, limit);
        q.select = Some(match q.route {
            Route::Stations => "stype,scode,pname".into(),
            _ => "stype,scode,pname,mvalue".into(),
        });
        q.filter = Some(parse_where("pname.neq.x").unwrap());
        compile_query(&q, Dialect::Postgres)
            .unwrap()
            .sql
            .as_sql()
            .to_string()
    };
    // (route, tree, limit, parents by key)
    let table = [
        (Route::Latest, true, 200, true),
        (Route::Stations, true, 200, true),
        (Route::Stations, false, 200, true),
        // No limit: the whole answer is read, a hash join of the parents suits it.
        (Route::Latest, true, -1, false),
        (Route::Stations, true, -1, false),
        // A flat latest page is in time order: no walk of the stations.
        (Route::Latest, false, 200, false),
        (Route::History { from: 0, to: 1 }, false, 200, false),
    ];
    for (route, tree, limit, by_key) in table {
        let sql = with_parent(route.clone(), tree, limit);
        assert_eq!(
            sql.contains(PARENT_BY_KEY),
            by_key,
            "{route:?} tree={tree} limit={limit}: {sql}"
        );
        assert_eq!(
            sql.contains(PARENTS_HASHED),
            !by_key,
            "{route:?} tree={tree} limit={limit}: {sql}"
        );
    }
    // SQLite looks parents up by key in every statement.
    let mut q = page(Route::Latest, false, 200);
    q.select = Some("pname".into());
    let sql = compile_query(&q, Dialect::Sqlite)
        .unwrap()
        .sql
        .as_sql()
        .to_string();
    assert!(sql.contains(PARENT_BY_KEY), "{sql}");
}
