//! Fuzzes the Time Series query compiler: a parsed `where` and a `select` (the input
//! split at the first newline) compiled for every route kind and both dialects.
#![no_main]
use hub_query::timeseries::{compile_query, parse_where, EventScope, Route, TsQuery};
use hub_query::Dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let (where_text, select) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(filter) = parse_where(where_text) else {
        return;
    };
    let routes = [
        Route::Stations,
        Route::StationsTypes,
        Route::Latest,
        Route::History { from: 0, to: 1 },
        Route::Edges,
        Route::Events(EventScope::All),
    ];
    for route in routes {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let q = TsQuery {
                route: route.clone(),
                tree: false,
                types: None,
                data_types: None,
                filter: Some(filter.clone()),
                select: (!select.is_empty()).then(|| select.to_string()),
                distinct: true,
                limit: 10,
                offset: 0,
                access: None,
            };
            let _ = compile_query(&q, dialect);
        }
    }
});
