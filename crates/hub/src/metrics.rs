//! `/metrics` in the Prometheus text format (version 0.0.4): requests by method, route
//! template (axum's matched route, never the raw path, so the label set stays bounded)
//! and status; a latency histogram per route; requests in flight; requests refused by
//! load protection and rate limits; the store's connection pools.
//!
//! Owns: [`Metrics`], the middleware that records into it and the text rendering. Must
//! not: decide anything about a request.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Upper bounds (seconds) of the latency histogram's buckets.
pub const LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// The end of the token endpoint's route template.
const LOGIN_ROUTE_SUFFIX: &str = "/protocol/openid-connect/token";
/// The route label of requests no route matched (fallbacks, edge refusals).
pub const UNMATCHED_ROUTE: &str = "unmatched";

#[derive(Default)]
struct Histogram {
    /// Cumulative count per bucket of [`LATENCY_BUCKETS`].
    buckets: [u64; LATENCY_BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// What one route template has answered.
#[derive(Default)]
struct RouteCounters {
    /// (method, status) → requests; a handful per route, so a list is fastest.
    answers: Vec<(axum::http::Method, u16, u64)>,
    latency: Histogram,
}

#[derive(Default)]
struct Counters {
    /// By route template. Recording looks the route up by `&str` and only allocates the
    /// first time a route is seen: this runs on every request.
    routes: BTreeMap<String, RouteCounters>,
    rejected: BTreeMap<String, u64>,
}

/// Shared metrics of one router.
#[derive(Clone, Default)]
pub struct Metrics {
    counters: Arc<Mutex<Counters>>,
    in_flight: Arc<AtomicI64>,
}

/// The route template the router matched, carried from inside the router to
/// [`record`] on the response.
#[derive(Clone)]
struct RouteTemplate(MatchedPath);

/// Route layer: copies the matched route template onto the response.
pub async fn tag_route(request: Request, next: Next) -> Response {
    let template = request.extensions().get::<MatchedPath>().cloned();
    let mut response = next.run(request).await;
    if let Some(t) = template {
        response.extensions_mut().insert(RouteTemplate(t));
    }
    response
}

/// Middleware: counts the request, its status and latency, and the requests in flight.
pub async fn record(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let started = Instant::now();
    metrics.in_flight.fetch_add(1, Ordering::Relaxed);
    let response = next.run(request).await;
    metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
    let route = response
        .extensions()
        .get::<RouteTemplate>()
        .map_or(UNMATCHED_ROUTE, |r| r.0.as_str());
    let status = response.status().as_u16();
    // The token service answers 429 only when it throttles password logins.
    if status == 429 && route.ends_with(LOGIN_ROUTE_SUFFIX) {
        metrics.rejected("login_throttle");
    }
    metrics.observe(method, route, status, started.elapsed().as_secs_f64());
    response
}

impl Metrics {
    fn observe(&self, method: axum::http::Method, route: &str, status: u16, seconds: f64) {
        let mut c = self.counters.lock().expect("metrics lock");
        if !c.routes.contains_key(route) {
            c.routes.insert(route.to_string(), RouteCounters::default());
        }
        let r = c.routes.get_mut(route).expect("inserted above");
        match r
            .answers
            .iter_mut()
            .find(|(m, s, _)| *m == method && *s == status)
        {
            Some((_, _, n)) => *n += 1,
            None => r.answers.push((method, status, 1)),
        }
        let h = &mut r.latency;
        for (bound, n) in LATENCY_BUCKETS.iter().zip(h.buckets.iter_mut()) {
            if seconds <= *bound {
                *n += 1;
            }
        }
        h.count += 1;
        h.sum += seconds;
    }

    /// Counts a request refused for `reason` (`overload`, `rate_limit`, `login_throttle`).
    pub fn rejected(&self, reason: &str) {
        let mut c = self.counters.lock().expect("metrics lock");
        *c.rejected.entry(reason.to_string()).or_default() += 1;
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let c = self.counters.lock().expect("metrics lock");
        let mut out = String::new();
        out.push_str("# HELP hub_http_requests_total HTTP requests answered, by method, route template and status.\n# TYPE hub_http_requests_total counter\n");
        let mut answers: Vec<(&str, &str, u16, u64)> = c
            .routes
            .iter()
            .flat_map(|(route, r)| {
                r.answers
                    .iter()
                    .map(move |(m, s, n)| (m.as_str(), route.as_str(), *s, *n))
            })
            .collect();
        answers.sort_unstable();
        for (method, route, status, n) in answers {
            let _ = writeln!(out, "hub_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}", escape(route));
        }
        out.push_str("# HELP hub_http_request_duration_seconds Time to answer, by route template.\n# TYPE hub_http_request_duration_seconds histogram\n");
        for (route, h) in c.routes.iter().map(|(route, r)| (route, &r.latency)) {
            let route = escape(route);
            for (bound, n) in LATENCY_BUCKETS.iter().zip(h.buckets.iter()) {
                let _ = writeln!(out, "hub_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {n}");
            }
            let _ = writeln!(
                out,
                "hub_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "hub_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "hub_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count
            );
        }
        out.push_str("# HELP hub_http_requests_in_flight Requests being answered now.\n# TYPE hub_http_requests_in_flight gauge\n");
        let _ = writeln!(
            out,
            "hub_http_requests_in_flight {}",
            self.in_flight.load(Ordering::Relaxed)
        );
        out.push_str("# HELP hub_http_requests_rejected_total Requests refused by load protection or rate limits, by reason.\n# TYPE hub_http_requests_rejected_total counter\n");
        for reason in ["overload", "rate_limit", "login_throttle"] {
            let n = c.rejected.get(reason).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "hub_http_requests_rejected_total{{reason=\"{reason}\"}} {n}"
            );
        }
        out
    }
}

/// A label value escaped as the text format requires (backslash, quote, newline).
pub fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One pool gauge: metric name, help text, and how to read it off a pool.
type PoolGauge = (
    &'static str,
    &'static str,
    fn(&hub_store::PoolUsage) -> usize,
);

/// The store's connection pools in the text format: connections allowed, open, in use,
/// and requests waiting for one, each labelled by pool.
pub fn render_pools(pools: &[hub_store::PoolUsage]) -> String {
    let mut out = String::new();
    let gauges: [PoolGauge; 4] = [
        (
            "hub_store_pool_connections_max",
            "Connections the store's pool may open.",
            |p| p.max,
        ),
        (
            "hub_store_pool_connections_open",
            "Connections the store's pool has open.",
            |p| p.open,
        ),
        (
            "hub_store_pool_connections_in_use",
            "Connections lent to a request now.",
            |p| p.in_use,
        ),
        (
            "hub_store_pool_waiting",
            "Requests waiting for a connection now.",
            |p| p.waiting,
        ),
    ];
    for (name, help, value) in gauges {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for pool in pools {
            let _ = writeln!(out, "{name}{{pool=\"{}\"}} {}", pool.pool, value(pool));
        }
    }
    out
}

/// The PostgreSQL read replica: its replay lag, whether it answers, whether it serves
/// reads now (it does not while it lags past the bound or lacks this process's writes).
pub fn render_replica(replica: &hub_store::ReplicaStatus) -> String {
    let mut out = String::new();
    let gauges = [
        (
            "hub_postgres_replica_lag_seconds",
            "Replay lag of the read replica at its latest check.",
            replica.lag_seconds,
        ),
        (
            "hub_postgres_replica_reachable",
            "1 when the read replica answered its latest check.",
            f64::from(u8::from(replica.reachable)),
        ),
        (
            "hub_postgres_replica_serving_reads",
            "1 when reads go to the replica now, 0 while they fall back to the primary.",
            f64::from(u8::from(replica.serving_reads)),
        ),
    ];
    for (name, help, value) in gauges {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
        );
    }
    out
}

/// What `/metrics` reads: the router's counters and the store's pools.
#[derive(Clone)]
pub struct MetricsSource {
    pub metrics: Metrics,
    pub store: hub_store::Store,
    pub response_cache: std::sync::Arc<hub_content::response_cache::ResponseCache>,
}

/// `GET /metrics`.
pub async fn serve_metrics(State(source): State<MetricsSource>) -> Response {
    let mut text = source.metrics.render();
    text.push_str(&render_pools(&source.store.pool_usage()));
    text.push_str(&render_response_cache(&source.response_cache.stats()));
    let _ = write!(
        text,
        "# HELP hub_store_revision_reads_total Reads of the content write revisions from the database (response-cache hits the revisions kept in memory could not answer).\n\
         # TYPE hub_store_revision_reads_total counter\n\
         hub_store_revision_reads_total {}\n",
        source.store.revision_reads()
    );
    let _ = write!(
        text,
        "# HELP hub_store_list_counts_total Count statements run for list totals (a total kept since its entity's last write runs none).\n\
         # TYPE hub_store_list_counts_total counter\n\
         hub_store_list_counts_total {}\n",
        source.store.list_counts()
    );
    if let Some(documents) = source.store.document_cache() {
        text.push_str(&render_document_cache(&documents));
    }
    if let Some(replica) = source.store.replica_status() {
        text.push_str(&render_replica(&replica));
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// The response cache's gauges and counters.
fn render_response_cache(stats: &hub_content::response_cache::CacheStats) -> String {
    format!(
        "# HELP hub_response_cache_bytes Bytes held by cached answers (bodies, keys, bookkeeping).\n\
         # TYPE hub_response_cache_bytes gauge\n\
         hub_response_cache_bytes {}\n\
         # HELP hub_response_cache_entries Cached answers held.\n\
         # TYPE hub_response_cache_entries gauge\n\
         hub_response_cache_entries {}\n\
         # HELP hub_response_cache_hits_total Requests answered from the cache.\n\
         # TYPE hub_response_cache_hits_total counter\n\
         hub_response_cache_hits_total {}\n\
         # HELP hub_response_cache_misses_total Cacheable requests computed (not cached or out of date).\n\
         # TYPE hub_response_cache_misses_total counter\n\
         hub_response_cache_misses_total {}\n",
        stats.bytes, stats.entries, stats.hits, stats.misses
    )
}

/// The PostgreSQL document cache's gauges and counters.
fn render_document_cache(stats: &hub_store::content::document_cache::DocumentCacheStats) -> String {
    format!(
        "# HELP hub_store_document_cache_bytes Bytes held by documents kept by their row version (texts, keys, bookkeeping).\n\
         # TYPE hub_store_document_cache_bytes gauge\n\
         hub_store_document_cache_bytes {}\n\
         # HELP hub_store_document_cache_budget_bytes Bytes the document cache may hold.\n\
         # TYPE hub_store_document_cache_budget_bytes gauge\n\
         hub_store_document_cache_budget_bytes {}\n\
         # HELP hub_store_document_cache_documents Documents kept.\n\
         # TYPE hub_store_document_cache_documents gauge\n\
         hub_store_document_cache_documents {}\n\
         # HELP hub_store_document_cache_hits_total Documents of pages and reads by id answered from the cache.\n\
         # TYPE hub_store_document_cache_hits_total counter\n\
         hub_store_document_cache_hits_total {}\n\
         # HELP hub_store_document_cache_misses_total Documents whose text was read from the database (not kept, or kept at another version).\n\
         # TYPE hub_store_document_cache_misses_total counter\n\
         hub_store_document_cache_misses_total {}\n",
        stats.bytes, stats.budget, stats.documents, stats.hits, stats.misses
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_cache_is_reported_as_gauges_and_counters() {
        let text = render_document_cache(&hub_store::content::document_cache::DocumentCacheStats {
            budget: 1024,
            bytes: 512,
            documents: 3,
            hits: 20,
            misses: 7,
        });
        for line in [
            "# TYPE hub_store_document_cache_bytes gauge",
            "hub_store_document_cache_bytes 512",
            "hub_store_document_cache_budget_bytes 1024",
            "hub_store_document_cache_documents 3",
            "# TYPE hub_store_document_cache_hits_total counter",
            "hub_store_document_cache_hits_total 20",
            "hub_store_document_cache_misses_total 7",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }

    #[test]
    fn pools_are_gauges_labelled_by_pool() {
        let pools = [hub_store::PoolUsage {
            pool: "sqlite_readers",
            max: 4,
            open: 4,
            in_use: 3,
            waiting: 2,
        }];
        let text = render_pools(&pools);
        for line in [
            "# TYPE hub_store_pool_connections_in_use gauge",
            "hub_store_pool_connections_max{pool=\"sqlite_readers\"} 4",
            "hub_store_pool_connections_in_use{pool=\"sqlite_readers\"} 3",
            "hub_store_pool_waiting{pool=\"sqlite_readers\"} 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
    }

    #[test]
    fn the_replica_is_three_gauges() {
        let text = render_replica(&hub_store::ReplicaStatus {
            reachable: true,
            lag_seconds: 1.25,
            serving_reads: false,
        });
        for line in [
            "# TYPE hub_postgres_replica_lag_seconds gauge",
            "hub_postgres_replica_lag_seconds 1.25",
            "hub_postgres_replica_reachable 1",
            "hub_postgres_replica_serving_reads 0",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
    }

    #[test]
    fn label_escaping() {
        let cases = [
            ("/v1/{id}", "/v1/{id}"),
            ("a\"b", "a\\\"b"),
            ("a\\b", "a\\\\b"),
            ("a\nb", "a\\nb"),
        ];
        for (input, expected) in cases {
            assert_eq!(escape(input), expected);
        }
    }

    #[test]
    fn observations_fill_cumulative_buckets() {
        let m = Metrics::default();
        m.observe(axum::http::Method::GET, "/x", 200, 0.03);
        let text = m.render();
        assert!(
            text.contains("hub_http_requests_total{method=\"GET\",route=\"/x\",status=\"200\"} 1")
        );
        assert!(
            text.contains("hub_http_request_duration_seconds_bucket{route=\"/x\",le=\"0.025\"} 0")
        );
        assert!(
            text.contains("hub_http_request_duration_seconds_bucket{route=\"/x\",le=\"0.05\"} 1")
        );
        assert!(
            text.contains("hub_http_request_duration_seconds_bucket{route=\"/x\",le=\"+Inf\"} 1")
        );
    }
}
