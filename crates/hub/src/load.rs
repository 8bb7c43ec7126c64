//! Load protection: at most `max_in_flight` requests run at once, at most `max_queued`
//! more wait for a slot; anything beyond is answered at once with 503 + `Retry-After`
//! (so memory stays bounded however many clients connect).
//!
//! Owns: [`LoadLimit`] and the admission decision [`admit`]. Must not: know routes,
//! principals or stores.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use crate::hygiene::{server_problem, RETRY_AFTER_SECS};
use crate::metrics::Metrics;

/// What happens to an arriving request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// A slot is free: run now.
    Run,
    /// No slot, but room in the queue: wait for one.
    Queue,
    /// No slot and the queue is full: refuse with 503.
    Shed,
}

/// The admission decision: (a slot free?, requests already queued, queue length).
pub fn admit(slot_free: bool, queued: usize, max_queued: usize) -> Admission {
    if slot_free {
        Admission::Run
    } else if queued < max_queued {
        Admission::Queue
    } else {
        Admission::Shed
    }
}

/// The global concurrency limit with its bounded queue.
#[derive(Clone)]
pub struct LoadLimit {
    slots: Arc<Semaphore>,
    queued: Arc<AtomicUsize>,
    max_queued: usize,
    metrics: Metrics,
}

impl LoadLimit {
    pub fn new(max_in_flight: usize, max_queued: usize, metrics: Metrics) -> Self {
        LoadLimit {
            slots: Arc::new(Semaphore::new(max_in_flight.max(1))),
            queued: Arc::new(AtomicUsize::new(0)),
            max_queued,
            metrics,
        }
    }
}

/// Middleware: runs, queues or sheds the request (see [`admit`]).
pub async fn limit_load(State(limit): State<LoadLimit>, request: Request, next: Next) -> Response {
    if let Ok(permit) = limit.slots.clone().try_acquire_owned() {
        let response = next.run(request).await;
        drop(permit);
        return response;
    }
    let queued = limit.queued.fetch_add(1, Ordering::SeqCst);
    let admission = admit(false, queued, limit.max_queued);
    if admission == Admission::Shed {
        limit.queued.fetch_sub(1, Ordering::SeqCst);
        limit.metrics.rejected("overload");
        let mut response = server_problem(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "the server is at its limit of concurrent requests; retry after the indicated time",
        )
        .into_response();
        response.headers_mut().insert(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from(RETRY_AFTER_SECS),
        );
        return response;
    }
    let permit = limit.slots.clone().acquire_owned().await;
    limit.queued.fetch_sub(1, Ordering::SeqCst);
    let response = next.run(request).await;
    drop(permit);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_table() {
        let cases = [
            (true, 0, 0, Admission::Run),
            (true, 10, 10, Admission::Run),
            (false, 0, 1, Admission::Queue),
            (false, 9, 10, Admission::Queue),
            (false, 10, 10, Admission::Shed),
            (false, 0, 0, Admission::Shed),
        ];
        for (free, queued, max, expected) in cases {
            assert_eq!(admit(free, queued, max), expected, "{free} {queued} {max}");
        }
    }
}
