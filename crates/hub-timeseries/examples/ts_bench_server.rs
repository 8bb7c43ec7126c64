//! Serves the Time Series API alone for benchmarks: loads the demo data at `--scale N`
//! into DATA_DIR when it is empty, then listens on 127.0.0.1:PORT.
//!
//! With `HUB_DATABASE` set to a PostgreSQL database URL, serves from that database instead
//! of DATA_DIR (loading the demo data when it holds no station yet).
//!
//!   cargo run --release -p hub-timeseries --example ts_bench_server -- DATA_DIR PORT SCALE
//!   HUB_DATABASE=postgres://postgres@127.0.0.1:55432/hub_bench cargo run --release -p hub-timeseries --example ts_bench_server -- - PORT SCALE

use std::time::Instant;

use hub_store::timeseries::TypeList;
use hub_store::Store;
use hub_timeseries::{router, TimeseriesConfig, TimeseriesState};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(
        args.get(1)
            .map(String::as_str)
            .unwrap_or("target/bench-ts-data"),
    );
    let port: u16 = args.get(2).and_then(|p| p.parse().ok()).unwrap_or(18089);
    let scale: u32 = args.get(3).and_then(|p| p.parse().ok()).unwrap_or(10);
    let (store, fresh) = match std::env::var("HUB_DATABASE") {
        Ok(url) if !url.trim().is_empty() => {
            let store = Store::open_postgres(url.trim(), None).expect("open PostgreSQL store");
            let empty = store
                .timeseries()
                .type_list(TypeList::StationTypes)
                .await
                .expect("read station types")
                .is_empty();
            (store, empty)
        }
        _ => {
            let fresh = !dir.join("hub.sqlite3").exists();
            (Store::open_sqlite(&dir).expect("open store"), fresh)
        }
    };
    eprintln!("backend: {}", store.backend_name());
    if fresh {
        let t = Instant::now();
        let sum = hub_timeseries::load_demo(&*store.timeseries(), scale, chrono::Utc::now())
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
    let app = router(TimeseriesState::new(store.timeseries(), config));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind");
    eprintln!("listening on 127.0.0.1:{port}");
    axum::serve(listener, app).await.expect("serve");
}
