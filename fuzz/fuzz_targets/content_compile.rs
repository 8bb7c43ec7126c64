//! Fuzzes the content query compiler: a parsed `rawfilter` and `rawsort` (the input
//! split at the first newline) compiled for both dialects.
#![no_main]
use hub_query::content::rawfilter::{parse_rawfilter, parse_rawsort};
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
use hub_query::Dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let (filter_text, sort_text) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(filter) = parse_rawfilter(filter_text) else {
        return;
    };
    let order = match parse_rawsort(sort_text) {
        Ok(keys) => ContentOrder::Raw(keys),
        Err(_) => ContentOrder::Default,
    };
    let query = ContentQuery {
        entity: "Accommodation",
        filters: vec![ContentFilter::Raw {
            filter,
            parameter: "rawfilter",
        }],
        order,
        page: Page {
            size: 10,
            number: 1,
        },
    };
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let _ = query.compile(dialect);
    }
});
