//! Fuzzes the CQL2 text parser and, for what parses, its compilation through the one
//! `rawfilter` compiler for both dialects.
#![no_main]
use hub_query::content::cql2::parse_cql2;
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
use hub_query::Dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(parsed) = parse_cql2(text) {
        let query = ContentQuery {
            entity: "HubActivityPoi",
            filters: parsed
                .filter
                .into_iter()
                .map(|filter| ContentFilter::Raw {
                    filter,
                    parameter: "filter",
                })
                .collect(),
            order: ContentOrder::Default,
            page: Page { size: 10, number: 1 },
        };
        let _ = query.compile(Dialect::Sqlite);
        let _ = query.compile(Dialect::Postgres);
    }
});
