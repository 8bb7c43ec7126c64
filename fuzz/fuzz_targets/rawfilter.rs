//! Fuzzes the content `rawfilter` parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = hub_query::content::rawfilter::parse_rawfilter(text);
});
