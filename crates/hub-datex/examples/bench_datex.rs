//! Benchmark of the DATEX feed with 1,000 current situations.
//!
//! ```text
//! cargo run --release -p hub-datex --example bench_datex            # print figures
//! cargo run --release -p hub-datex --example bench_datex -- --serve 127.0.0.1:8099
//! ```
//!
//! Prints medians (plain `std::time::Instant`, no timed assertions) of: a cold render
//! (`render_situation_publication`, no cache), a warm request through the router (cached
//! document), and a 304 request (`If-None-Match`), both in-process. With `--serve ADDR`
//! it serves the same feed on ADDR (`/datex/2/province-bz/situation-publication.xml`)
//! for a load tool, until interrupted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use chrono::{DateTime, Utc};
use http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use hub_datex::{
    render_situation_publication, router_with_clock, AnnouncementSource, BoxFuture, DatexConfig,
};
use serde_json::{json, Value};
use tower::ServiceExt;

const SITUATIONS: usize = 1000;

/// 1,000 current PROVINCE_BZ announcements over all categories, shaped like the demo
/// data: every tenth without coordinates, every seventh with a long text and XML-special
/// characters, every fifth with an English text.
fn announcements(now: DateTime<Utc>) -> Vec<Value> {
    let tags: Vec<&str> = hub_datex::CATEGORIES.iter().map(|c| c.tag).collect();
    (0..SITUATIONS)
        .map(|i| {
            let start = now - chrono::Duration::hours(1 + (i % 48) as i64);
            let end = now + chrono::Duration::days(1 + (i % 30) as i64);
            let mut doc = json!({
                "Id": format!("urn:announcements:provincebz:{:08x}-5a1e-4c2b-9d7f-{:012x}", i * 2654435761usize % 0xffff_ffff, i),
                "TagIds": ["announcement:traffic-event", format!("traffic-event:{}", tags[i % tags.len()])],
                "StartTime": start.to_rfc3339(),
                "EndTime": end.to_rfc3339(),
                "FirstImport": (start - chrono::Duration::minutes(10)).to_rfc3339(),
                "LastChange": (start + chrono::Duration::minutes(5)).to_rfc3339(),
                "_Meta": {"Source": "PROVINCE_BZ", "LastUpdate": start.to_rfc3339(), "UpdateInfo": {"UpdateHistory": [{}, {}]}},
                "Geo": {"position": {"Latitude": 46.2 + (i % 90) as f64 * 0.01, "Longitude": 10.5 + (i % 170) as f64 * 0.01}},
                "Mapping": {"ProviderProvinceBz": {"Id": (100000 + i).to_string()}},
                "Detail": {
                    "it": {"Title": "Cantiere stradale", "BaseText": format!("SS12 del Brennero, km {}: senso unico alternato", i % 300)},
                    "de": {"Title": "Baustelle", "BaseText": format!("SS12 Brennerstraße, km {}: wechselseitiger Verkehr", i % 300)}
                }
            });
            if i % 10 == 3 {
                doc.as_object_mut().unwrap().remove("Geo");
            }
            if i % 7 == 0 {
                doc["Detail"]["it"]["BaseText"] = json!(format!("Coda <A22> & \"uscita\" l'Adige: {}", "rallentamenti ".repeat(120)));
            }
            if i % 5 == 0 {
                doc["Detail"]["en"] = json!({"Title": "Road works", "BaseText": "Brenner road"});
            }
            doc
        })
        .collect()
}

struct Fixed(Vec<Value>);

impl AnnouncementSource for Fixed {
    fn announcements(&self) -> BoxFuture<'_, Result<Vec<Value>, String>> {
        let docs = self.0.clone();
        Box::pin(async move { Ok(docs) })
    }

    fn revision(&self) -> BoxFuture<'_, Result<Option<String>, String>> {
        Box::pin(async { Ok(Some("1".to_string())) })
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn show(label: &str, samples: Vec<Duration>) {
    let n = samples.len();
    let min = *samples.iter().min().unwrap();
    let max = *samples.iter().max().unwrap();
    println!(
        "{label:<44} median {:>9.3} ms   min {:>9.3} ms   max {:>9.3} ms   ({n} runs)",
        ms(median(samples)),
        ms(min),
        ms(max)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let now = Utc::now();
    let docs = announcements(now);
    let serve = std::env::args().skip_while(|a| a != "--serve").nth(1);
    let mut config = DatexConfig::default();
    if let Some(addr) = &serve {
        config.base_url = format!("http://{addr}");
    }
    let provider = config.provider("province-bz").unwrap().clone();
    let app = router_with_clock(
        config.clone(),
        Arc::new(Fixed(docs.clone())),
        Arc::new(Utc::now),
    )
    .unwrap();

    if let Some(addr) = serve {
        let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
        println!("serving {SITUATIONS} situations on http://{addr}/datex/2/province-bz/situation-publication.xml");
        axum::serve(listener, app).await.unwrap();
        return;
    }

    // Cold: the whole pipeline from JSON documents to XML bytes, no cache.
    let body = render_situation_publication(&provider, &docs, now, &config.time_zone).unwrap();
    let situations = body
        .windows(b"<situation ".len())
        .filter(|w| *w == b"<situation ")
        .count();
    println!(
        "feed: {situations} situations, {} bytes ({:.1} KiB)",
        body.len(),
        body.len() as f64 / 1024.0
    );
    let cold: Vec<Duration> = (0..101)
        .map(|_| {
            let t = Instant::now();
            let out =
                render_situation_publication(&provider, &docs, now, &config.time_zone).unwrap();
            let elapsed = t.elapsed();
            std::hint::black_box(out);
            elapsed
        })
        .collect();
    show("cold render, 1,000 situations", cold);

    // Warm: a full request through the router, document from the cache.
    let request = |etag: Option<&str>| {
        let mut r = Request::get("/datex/2/province-bz/situation-publication.xml");
        if let Some(etag) = etag {
            r = r.header(header::IF_NONE_MATCH, etag);
        }
        r.body(Body::empty()).unwrap()
    };
    let first = app.clone().oneshot(request(None)).await.unwrap();
    let etag = first.headers()[header::ETAG].to_str().unwrap().to_string();
    let mut warm = Vec::new();
    for _ in 0..2001 {
        let t = Instant::now();
        let response = app.clone().oneshot(request(None)).await.unwrap();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        warm.push(t.elapsed());
        assert_eq!(bytes.len(), body.len());
    }
    show("warm request (cached, 200), in-process", warm);
    let mut not_modified = Vec::new();
    for _ in 0..2001 {
        let t = Instant::now();
        let response = app.clone().oneshot(request(Some(&etag))).await.unwrap();
        not_modified.push(t.elapsed());
        assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    }
    show("conditional request (304), in-process", not_modified);
}
