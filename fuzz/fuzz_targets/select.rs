//! Fuzzes the Time Series `select` expansion over every definition list.
#![no_main]
use hub_query::timeseries::select::expand_select;
use hub_query::timeseries::DefList;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = expand_select(
        Some(text),
        &[
            DefList::Station,
            DefList::Parent,
            DefList::Datatype,
            DefList::Measurement,
        ],
    );
});
