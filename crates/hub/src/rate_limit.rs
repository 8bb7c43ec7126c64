//! Per-client rate limits: a token bucket per client IP and one per bearer token
//! (`rate` requests per second sustained, `burst` above it). Off when `rate` is 0 — the
//! default, since Hub serves open data. A client over its limit gets 429 + `Retry-After`.
//!
//! Owns: [`RateLimiter`] and the bucket arithmetic [`take`]. Must not: verify tokens (a
//! token is only a bucket key here, hashed; verification happens in the APIs).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::hygiene::server_problem;
use crate::metrics::Metrics;

/// Buckets remembered before idle ones are dropped (bounds memory under many clients).
const MAX_BUCKETS: usize = 100_000;

/// A bucket: tokens left and when it was last refilled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    pub tokens: f64,
    pub at: f64,
}

/// Refills `bucket` to time `now` (seconds) at `rate`/s up to `burst`, then takes one
/// token. Returns the new bucket and `Ok` or `Err(seconds until a token is there)`.
pub fn take(bucket: Option<Bucket>, now: f64, rate: f64, burst: f64) -> (Bucket, Result<(), u64>) {
    let start = bucket.unwrap_or(Bucket {
        tokens: burst,
        at: now,
    });
    let tokens = (start.tokens + (now - start.at).max(0.0) * rate).min(burst);
    if tokens >= 1.0 {
        (
            Bucket {
                tokens: tokens - 1.0,
                at: now,
            },
            Ok(()),
        )
    } else {
        let wait = ((1.0 - tokens) / rate).ceil().max(1.0) as u64;
        (Bucket { tokens, at: now }, Err(wait))
    }
}

/// The per-client limiter of one router.
#[derive(Clone)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    epoch: Instant,
    buckets: Arc<Mutex<HashMap<String, Bucket>>>,
    metrics: Metrics,
}

impl RateLimiter {
    pub fn new(rate: u32, burst: u32, metrics: Metrics) -> Self {
        RateLimiter {
            rate: f64::from(rate),
            burst: f64::from(burst.max(1)),
            epoch: Instant::now(),
            buckets: Arc::default(),
            metrics,
        }
    }

    pub fn enabled(&self) -> bool {
        self.rate > 0.0
    }

    /// Takes a token from each key's bucket; the longest wait if any is empty.
    fn check(&self, keys: &[String]) -> Result<(), u64> {
        let now = self.epoch.elapsed().as_secs_f64();
        let mut buckets = self.buckets.lock().expect("rate limit lock");
        if buckets.len() >= MAX_BUCKETS {
            // Full buckets carry no information: forget them.
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, b| b.tokens + (now - b.at) * rate < burst);
        }
        let mut verdict = Ok(());
        for key in keys {
            let (bucket, result) = take(buckets.get(key).copied(), now, self.rate, self.burst);
            buckets.insert(key.clone(), bucket);
            if let Err(wait) = result {
                verdict = Err(verdict.err().unwrap_or(0).max(wait));
            }
        }
        verdict
    }
}

/// The bucket keys of a request: its client IP and, if it carries one, its bearer token
/// (as a short hash, so tokens are not kept in memory).
fn client_keys(request: &Request) -> Vec<String> {
    let mut keys = Vec::with_capacity(2);
    let ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip().to_string())
        .unwrap_or_else(|| "unknown".into());
    keys.push(format!("ip:{ip}"));
    if let Some(token) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        token.trim().hash(&mut h);
        keys.push(format!("token:{:x}", h.finish()));
    }
    keys
}

/// Middleware: 429 + `Retry-After` for a client over its limit.
pub async fn limit_rate(
    State(limiter): State<RateLimiter>,
    request: Request,
    next: Next,
) -> Response {
    if !limiter.enabled() {
        return next.run(request).await;
    }
    match limiter.check(&client_keys(&request)) {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            limiter.metrics.rejected("rate_limit");
            let mut response = server_problem(
                StatusCode::TOO_MANY_REQUESTS,
                "this client has sent too many requests; retry after the indicated time",
            )
            .into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(wait));
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_bucket_table() {
        let b = |tokens, at| Some(Bucket { tokens, at });
        // (bucket, now, rate, burst) → (tokens left, verdict)
        let cases = [
            (None, 0.0, 1.0, 3.0, 2.0, Ok(())),
            (b(0.0, 0.0), 0.0, 1.0, 3.0, 0.0, Err(1)),
            (b(0.0, 0.0), 1.0, 1.0, 3.0, 0.0, Ok(())),
            (b(0.0, 0.0), 100.0, 1.0, 3.0, 2.0, Ok(())),
            (b(0.5, 0.0), 0.0, 0.1, 3.0, 0.5, Err(5)),
        ];
        for (bucket, now, rate, burst, left, verdict) in cases {
            let (after, result) = take(bucket, now, rate, burst);
            assert_eq!(result, verdict, "{bucket:?} at {now}");
            assert!(
                (after.tokens - left).abs() < 1e-9,
                "{bucket:?} at {now}: {after:?}"
            );
        }
    }
}
