//! Serves the Time Series API alone for benchmarks: loads the demo data at `--scale N`
//! into DATA_DIR when it is empty, then listens on 127.0.0.1:PORT.
//!
//!   cargo run --release -p hub-timeseries --example ts_bench_server -- DATA_DIR PORT SCALE

use std::time::Instant;

use hub_store::Store;
use hub_timeseries::{router, TimeseriesConfig, TimeseriesState};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(args.get(1).map(String::as_str).unwrap_or("target/bench-ts-data"));
    let port: u16 = args.get(2).and_then(|p| p.parse().ok()).unwrap_or(18089);
    let scale: u32 = args.get(3).and_then(|p| p.parse().ok()).unwrap_or(10);
    let fresh = !dir.join("hub.sqlite3").exists();
    let store = Store::open_sqlite(&dir).expect("open store");
    if fresh {
        let t = Instant::now();
        let sum = hub_timeseries::load_demo(&store, scale, chrono::Utc::now())
            .await
            .expect("demo data");
        eprintln!(
            "demo scale {scale}: {} stations, {} records in {:.1} s",
            sum.stations,
            sum.records,
            t.elapsed().as_secs_f64()
        );
    }
    let config = TimeseriesConfig {
        base_url: format!("http://127.0.0.1:{port}/v2"),
        ..Default::default()
    };
    let app = router(TimeseriesState::new(store, config));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
    eprintln!("listening on 127.0.0.1:{port}");
    axum::serve(listener, app).await.expect("serve");
}
