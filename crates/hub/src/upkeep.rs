//! The store's upkeep while `hub serve` runs: one pass at start and one an hour. A pass
//! makes the measurement history's partitions ahead and applies its retention
//! (`TimeSeriesRepo::maintain_history`), then keeps the planner's statistics current
//! (`Store::optimize_statistics`: data pushed for hours changes what the best plan is).
//! The passes run beside the server, never before it: nothing depends on them for
//! correctness (rows without a partition land in the DEFAULT one), and the first pass
//! after an upgrade may move much history. Every process runs them; the store serialises
//! the passes, so the work is done once.
//!
//! Owns: when passes run. Must not: decide months, what to analyze or touch tables (the
//! store does).

use std::time::Duration;

use hub_store::timeseries::{HistoryPolicy, TimeSeriesRepo};
use hub_store::Store;

/// Time between two passes.
pub const INTERVAL: Duration = Duration::from_secs(3600);

/// One pass now; a failure is logged (the next pass tries again), never fatal.
pub async fn maintain_once(repo: &dyn TimeSeriesRepo, policy: HistoryPolicy) {
    let now = chrono::Utc::now().timestamp_millis();
    match repo.maintain_history(now, policy).await {
        Ok(done) => {
            if !done.created.is_empty() || !done.dropped.is_empty() || done.deleted_rows > 0 {
                tracing::info!(
                    created = done.created.len(),
                    dropped = done.dropped.len(),
                    deleted_rows = done.deleted_rows,
                    "measurement history maintained"
                );
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "measurement history maintenance failed; retrying in an hour")
        }
    }
}

/// Brings the planner's statistics up to date where data changed much; a failure is
/// logged (the next pass tries again), never fatal.
pub async fn keep_statistics(store: &Store) {
    if let Err(e) = store.optimize_statistics().await {
        tracing::warn!(error = %e, "refreshing the planner's statistics failed; retrying in an hour");
    }
}

/// A pass now and every [`INTERVAL`] after, until the task is aborted.
pub async fn maintain_forever(store: Store, policy: HistoryPolicy) {
    let mut ticks = tokio::time::interval(INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        maintain_once(&*store.timeseries(), policy).await;
        keep_statistics(&store).await;
    }
}
