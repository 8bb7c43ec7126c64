//! Fuzzes the `fields` projection parser and the selection of a parsed path.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(paths) = hub_query::fields::parse_fields(text) {
        let doc = serde_json::json!({"Id": "a", "Detail": {"de": {"Title": "t"}}, "Tags": [1, {"Id": 2}]});
        for p in paths {
            let _ = p.select(&doc);
        }
    }
});
