//! Fuzzes the content tag filter parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = hub_query::content::tagfilter::parse_tagfilter(text);
});
