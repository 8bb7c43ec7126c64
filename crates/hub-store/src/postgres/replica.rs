//! Which pool serves a read when a streaming replica is configured.
//!
//! A watcher on the backend's runtime asks the replica every [`WATCH_INTERVAL`] how far
//! it has replayed the primary's WAL and how far behind it is. Every write on the
//! primary notes the primary's WAL insert position afterwards (process-wide, the
//! highest one). A read goes to the replica only when the replica answered its last
//! check, has replayed at least that position (so a client sees its own writes, and
//! every write of this process acknowledged before the read), and lags by no more than
//! the configured bound; otherwise it goes to the primary. A "replica" that is not in
//! recovery (a promoted former replica, or a separate database) counts as caught up.
//!
//! Owns: the routing decision and the replica's lag figures. Must not: run queries
//! other than the position checks.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;

use super::session::{Conn, Queries, StatementMode};

/// How often the replica's replay position and lag are checked.
pub(crate) const WATCH_INTERVAL: Duration = Duration::from_millis(100);

/// The replica's position as last seen, and this process's last write position.
#[derive(Default)]
pub(crate) struct ReplicaState {
    /// WAL insert position of the primary after this process's latest write.
    last_write_lsn: AtomicU64,
    /// WAL position the replica has replayed (`u64::MAX` when it is not a standby).
    replayed_lsn: AtomicU64,
    /// Replay lag in milliseconds (0 when everything received is replayed).
    lag_ms: AtomicU64,
    /// Whether the replica answered its latest check.
    reachable: AtomicBool,
}

/// What `/metrics` shows of the replica.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaStatus {
    /// Whether the replica answered its latest check.
    pub reachable: bool,
    /// Replay lag in seconds as of the latest check.
    pub lag_seconds: f64,
    /// Whether reads are served from the replica right now.
    pub serving_reads: bool,
}

/// The routing decision: a read may go to the replica when it is reachable, within the
/// lag bound and has replayed `last_write`.
pub(crate) fn read_from_replica(
    reachable: bool,
    lag: Duration,
    max_lag: Duration,
    replayed: u64,
    last_write: u64,
) -> bool {
    reachable && lag <= max_lag && replayed >= last_write
}

pub(crate) struct Replica {
    pub(crate) pool: Pool,
    pub(crate) max_lag: Duration,
    pub(crate) state: Arc<ReplicaState>,
}

impl Replica {
    pub(crate) fn serves_reads(&self) -> bool {
        let s = &self.state;
        read_from_replica(
            s.reachable.load(Ordering::Acquire),
            Duration::from_millis(s.lag_ms.load(Ordering::Acquire)),
            self.max_lag,
            s.replayed_lsn.load(Ordering::Acquire),
            s.last_write_lsn.load(Ordering::Acquire),
        )
    }

    pub(crate) fn status(&self) -> ReplicaStatus {
        ReplicaStatus {
            reachable: self.state.reachable.load(Ordering::Acquire),
            lag_seconds: self.state.lag_ms.load(Ordering::Acquire) as f64 / 1000.0,
            serving_reads: self.serves_reads(),
        }
    }
}

impl ReplicaState {
    /// Notes the primary's WAL position after a write (see the module documentation).
    pub(crate) fn wrote_at(&self, lsn: u64) {
        self.last_write_lsn.fetch_max(lsn, Ordering::AcqRel);
    }

    /// A read found the replica unreachable: reads go to the primary until it answers.
    pub(crate) fn mark_unreachable(&self) {
        self.reachable.store(false, Ordering::Release);
    }
}

/// The primary's WAL insert position after a write on `conn` (the commit record of
/// anything committed on it lies at or before it).
pub(crate) async fn primary_position(conn: &Conn) -> Option<u64> {
    let row = conn
        .query_one(
            "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8",
            &[],
        )
        .await
        .ok()?;
    row.try_get::<_, i64>(0).ok().map(|n| n as u64)
}

/// One check of the replica: its replayed position and lag, or unreachable.
pub(crate) async fn check(pool: &Pool, mode: &StatementMode, state: &ReplicaState) {
    let checked = async {
        let conn = Conn::new(pool.get().await.ok()?, mode.clone());
        let row = conn
            .query_one(
                "SELECT pg_is_in_recovery(), \
                        (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::int8, \
                        CASE WHEN pg_last_wal_receive_lsn() IS NULL \
                               OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0 \
                             ELSE (1000 * extract(epoch FROM now() - pg_last_xact_replay_timestamp()))::int8 END",
                &[],
            )
            .await
            .ok()?;
        let in_recovery: bool = row.try_get(0).ok()?;
        let replayed: Option<i64> = row.try_get(1).ok()?;
        let lag_ms: Option<i64> = row.try_get(2).ok()?;
        Some(match (in_recovery, replayed) {
            (true, Some(lsn)) => (lsn as u64, lag_ms.unwrap_or(0).max(0) as u64),
            _ => (u64::MAX, 0),
        })
    };
    match checked.await {
        Some((replayed, lag_ms)) => {
            state.replayed_lsn.store(replayed, Ordering::Release);
            state.lag_ms.store(lag_ms, Ordering::Release);
            state.reachable.store(true, Ordering::Release);
        }
        None => state.reachable.store(false, Ordering::Release),
    }
}

/// Checks the replica every [`WATCH_INTERVAL`] until the backend's runtime stops.
pub(crate) async fn watch(pool: Pool, mode: StatementMode, state: Arc<ReplicaState>) {
    loop {
        tokio::time::sleep(WATCH_INTERVAL).await;
        check(&pool, &mode, &state).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUND: Duration = Duration::from_secs(5);

    #[test]
    fn a_caught_up_replica_within_the_bound_serves_reads() {
        assert!(read_from_replica(true, Duration::ZERO, BOUND, 100, 100));
        assert!(read_from_replica(true, BOUND, BOUND, 200, 100));
    }

    #[test]
    fn a_replica_behind_this_process_s_last_write_does_not() {
        assert!(!read_from_replica(true, Duration::ZERO, BOUND, 99, 100));
    }

    #[test]
    fn a_replica_past_the_lag_bound_or_unreachable_does_not() {
        assert!(!read_from_replica(
            true,
            BOUND + Duration::from_millis(1),
            BOUND,
            100,
            0
        ));
        assert!(!read_from_replica(false, Duration::ZERO, BOUND, 100, 0));
    }
}
