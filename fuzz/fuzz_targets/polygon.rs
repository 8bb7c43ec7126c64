//! Fuzzes the `polygon` parser (WKT, bbc/bbi boxes, GeoShape references, SRIDs).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = hub_query::content::polygon::parse_polygon(text.trim());
});
