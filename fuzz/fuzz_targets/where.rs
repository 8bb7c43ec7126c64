//! Fuzzes the Time Series `where` parser: any text parses or fails, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = hub_query::timeseries::parse_where(text);
});
