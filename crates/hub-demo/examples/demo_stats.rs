//! Prints per-type document counts, serialized size and generation time.
//!
//! `cargo run -p hub-demo --release --example demo_stats -- [scale] [runs]`
//! `cargo run -p hub-demo --example demo_stats -- 1 1 show HubActivityPoi 2` also prints
//! the first two documents of a type; `-- 1 1 jsonl` prints every document as
//! `entity<TAB>json` lines.

use std::collections::BTreeMap;
use std::time::Instant;

use chrono::{TimeZone, Utc};
use hub_demo::{content_document_count, content_documents, DemoOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scale: u32 = args.first().and_then(|s| s.parse().ok()).unwrap_or(1);
    let runs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let show = (args.get(2).map(String::as_str) == Some("show")).then(|| {
        (
            args.get(3).cloned().unwrap_or_default(),
            args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1usize),
        )
    });
    let opts = DemoOptions {
        scale,
        anchor: Utc.with_ymd_and_hms(2025, 3, 13, 15, 8, 38).unwrap(),
    };
    if args.get(2).map(String::as_str) == Some("jsonl") {
        // One `entity<TAB>document` line per document, for inspection with other tools.
        content_documents(&opts, &mut |entity, doc| println!("{entity}\t{doc}"));
        return;
    }

    let mut times = Vec::new();
    let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    for run in 0..runs.max(1) {
        let started = Instant::now();
        let mut n = 0u64;
        content_documents(&opts, &mut |entity, _doc| {
            n += 1;
            if run == 0 {
                *counts.entry(entity).or_default() += 1;
            }
        });
        times.push(started.elapsed().as_secs_f64());
        assert_eq!(n, content_document_count(scale));
    }
    times.sort_by(f64::total_cmp);

    let started = Instant::now();
    let mut last: Option<(&'static str, Instant)> = None;
    let mut phases: Vec<(&'static str, f64)> = Vec::new();
    content_documents(&opts, &mut |entity, _doc| match last {
        Some((e, t)) if e != entity => {
            phases.push((e, t.elapsed().as_secs_f64()));
            last = Some((entity, Instant::now()));
        }
        None => last = Some((entity, Instant::now())),
        _ => {}
    });
    if let Some((e, t)) = last {
        phases.push((e, t.elapsed().as_secs_f64()));
    }
    let _ = started;
    for (e, t) in &phases {
        println!("phase {e:<20} {t:.3} s");
    }

    let started = Instant::now();
    let mut bytes = 0usize;
    let mut shown = 0usize;
    content_documents(&opts, &mut |entity, doc| {
        bytes += serde_json::to_vec(&doc).expect("serializable").len();
        if let Some((ty, n)) = &show {
            if entity == ty && shown < *n {
                shown += 1;
                println!(
                    "{}",
                    serde_json::to_string_pretty(&doc).expect("serializable")
                );
            }
        }
    });
    let with_json = started.elapsed().as_secs_f64();

    for (entity, n) in &counts {
        println!("{entity:<20} {n:>7}");
    }
    println!("{:<20} {:>7}", "total", counts.values().sum::<u64>());
    println!(
        "generation: median {:.3} s over {} runs (min {:.3}, max {:.3})",
        times[times.len() / 2],
        times.len(),
        times[0],
        times[times.len() - 1]
    );
    println!(
        "generation + serialization: {with_json:.3} s, {:.1} MB of JSON",
        bytes as f64 / 1e6
    );
}
