//! Writes the Time Series volume set (`hub_timeseries::volume`) into a store and prints
//! how long the measurements took (records/s of the load). The store is a SQLite data
//! directory, or the PostgreSQL database of `HUB_DATABASE` when that is set; `hub serve
//! --no-demo --data DIR` (or `--database URL`) serves it afterwards.
//!
//!   cargo run --release -p hub-timeseries --example ts_volume_load -- DATA_DIR [KEY=VALUE…]
//!   HUB_DATABASE=postgres://…/hub_volume cargo run --release -p hub-timeseries --example ts_volume_load -- - [KEY=VALUE…]
//!
//! Keys (defaults = the 50 M set): `stations=1000 types=5 points=10000
//! interval=3180` (seconds) `steps=20` (time steps per push) `writers=1` (pushes at
//! once, each of its share of the stations) `provenances=300` (collector releases,
//! one per stretch of time; 0 = none) `type=MeteoStation
//! prefix=VOL end=now|RFC 3339` and `statistics=1` (refresh the planner's statistics
//! after the load, timed apart). Prints one line `records=… seconds=… records_per_s=…`
//! at the end for scripts.

use std::time::Instant;

use hub_store::Store;
use hub_timeseries::VolumeOptions;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::path::PathBuf::from(args.first().map(String::as_str).unwrap_or("-"));
    let mut opts = VolumeOptions::odh(chrono::Utc::now());
    let mut statistics = true;
    for arg in args.iter().skip(1) {
        let Some((key, value)) = arg.split_once('=') else {
            panic!("expected KEY=VALUE, got {arg}");
        };
        let number = || -> u32 { value.parse().unwrap_or_else(|_| panic!("{key}: a number")) };
        match key {
            "stations" => opts.stations = number(),
            "types" => opts.types = number(),
            "points" => opts.points = number(),
            "interval" => opts.interval_s = number() as i64,
            "steps" => opts.steps_per_push = number(),
            "writers" => opts.writers = number(),
            "provenances" => opts.provenances = number(),
            "type" => opts.station_type = value.into(),
            "prefix" => opts.code_prefix = value.into(),
            "statistics" => statistics = value != "0",
            "end" if value == "now" => {}
            "end" => {
                opts.end = chrono::DateTime::parse_from_rfc3339(value)
                    .expect("end: RFC 3339")
                    .into()
            }
            _ => panic!("unknown key {key}"),
        }
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let store = match std::env::var("HUB_DATABASE") {
        Ok(url) if !url.trim().is_empty() => {
            Store::open_postgres(url.trim(), None).expect("open PostgreSQL store")
        }
        _ => Store::open_sqlite(&dir).expect("open SQLite store"),
    };
    let (first, last) = opts.span_ms();
    eprintln!(
        "backend {}: {} series x {} points = {} records, {} .. {}",
        store.backend_name(),
        opts.series(),
        opts.points,
        opts.records(),
        chrono::DateTime::from_timestamp_millis(first).unwrap_or_default(),
        chrono::DateTime::from_timestamp_millis(last).unwrap_or_default(),
    );
    let total = opts.records().max(1);
    let mut next_report = 0u64;
    let started = Instant::now();
    let sum = runtime
        .block_on(hub_timeseries::load_volume(
            &*store.timeseries(),
            &opts,
            |done| {
                if done >= next_report {
                    eprintln!(
                        "  {done} records ({:.0} %) after {:.0} s",
                        done as f64 * 100.0 / total as f64,
                        started.elapsed().as_secs_f64()
                    );
                    next_report = done + total / 20;
                }
            },
        ))
        .expect("volume load");
    let secs = sum.elapsed.as_secs_f64();
    if statistics {
        let t = Instant::now();
        runtime
            .block_on(store.refresh_statistics())
            .expect("statistics");
        eprintln!(
            "planner statistics refreshed in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    println!(
        "records={} series={} pushes={} seconds={secs:.1} records_per_s={:.0}",
        sum.records,
        sum.series,
        sum.pushes,
        sum.records as f64 / secs
    );
}
