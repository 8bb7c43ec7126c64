//! Monthly partitions of `ts_history` on PostgreSQL: made ahead of time by a maintenance
//! pass and on demand by a push that reaches a month without one, moved out of the
//! DEFAULT partition when rows of that month already sit there, and dropped by the
//! retention. `timeseries::history` decides which months; this module runs the DDL.
//!
//! How a month is made (one transaction per month, under a transaction-level advisory
//! lock, so several `hub serve` processes never make the same month twice and a pooler
//! in transaction mode is fine): a plain table `LIKE ts_history`, the DEFAULT
//! partition's rows of that month moved into it, then `ATTACH PARTITION`. ATTACH needs
//! only a SHARE UPDATE EXCLUSIVE lock on `ts_history` (pushes and reads go on); the
//! DEFAULT partition is locked first, so a push cannot slip a row of the month into it
//! between the move and the ATTACH. `lock_timeout` bounds every wait: a month that
//! cannot be made now is made by a later pass, and its rows meanwhile sit in DEFAULT,
//! where every query finds them.
//!
//! Must not: decide months (that is `timeseries::history`) or fail a push because a
//! partition could not be made.

use std::collections::BTreeSet;
use std::sync::Mutex;

use super::super::{Conn, PgBackend, Queries};
use crate::timeseries::history::{self, HistoryMaintenance, HistoryPolicy, Month};
use crate::timeseries::RecordInput;
use crate::Result;

/// Any fixed number identifies Hub's partition lock among other advisory locks.
const PARTITION_LOCK: i64 = 0x4855_425f_5041_5254; // "HUB_PART"

/// How long partition DDL waits for a table lock before giving up until the next try.
const LOCK_TIMEOUT: &str = "SET LOCAL lock_timeout = '5s'";

/// Rows of months without a partition moved out of DEFAULT per maintenance pass, at most
/// this many months (an upgraded database with years of history in DEFAULT is drained
/// over several passes rather than in one long run).
const DRAIN_MONTHS_PER_PASS: usize = 120;

/// What this process knows of the partitions: the months it saw exist (or failed to
/// make since the last maintenance pass), so that a push into known months costs nothing
/// extra; the months it saw exist alone, so that a read across months can name bounds
/// whose months all have a partition; and the policy the last maintenance pass ran with
/// (the window on-demand months must fall in).
#[derive(Default)]
pub(crate) struct PartitionState {
    known: Mutex<BTreeSet<Month>>,
    present: Mutex<BTreeSet<Month>>,
    policy: Mutex<HistoryPolicy>,
}

impl PartitionState {
    pub(crate) fn new() -> Self {
        PartitionState::default()
    }

    /// Whether every month from `first` to `last` had a partition when this process last
    /// looked. Only a read's plan depends on it: a month dropped since (by another
    /// process's retention) leaves the DEFAULT partition in that plan, which sorts.
    pub(crate) fn hold_every(&self, first: Month, last: Month) -> bool {
        let present = self.present.lock().unwrap_or_else(|e| e.into_inner());
        let months = first.months_to(last);
        months > 0 && present.range(first..=last).count() as i64 == months
    }

    /// Months seen to have a partition, made or found made.
    fn saw_present(&self, month: Month) {
        let mut present = self.present.lock().unwrap_or_else(|e| e.into_inner());
        present.insert(month);
    }

    /// The partitions as the catalog lists them: every month known, and known present,
    /// is one of them.
    fn saw_catalog(&self, months: &BTreeSet<Month>) {
        self.remember(months.iter().copied(), true);
        let mut present = self.present.lock().unwrap_or_else(|e| e.into_inner());
        present.clone_from(months);
    }

    fn policy(&self) -> HistoryPolicy {
        *self.policy.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn remember(&self, months: impl IntoIterator<Item = Month>, replace: bool) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        if replace {
            known.clear();
        }
        known.extend(months);
    }
}

/// The months of this module's partitions that exist now.
async fn existing(conn: &Conn) -> Result<BTreeSet<Month>> {
    let rows = conn
        .query(
            "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
             WHERE i.inhparent = 'ts_history'::regclass",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|r| Month::of_partition_name(r.get::<_, &str>(0)))
        .collect())
}

/// Makes the partition of `month` unless it exists; `true` when this call made it.
async fn create(conn: &mut Conn, month: Month) -> Result<bool> {
    let Some((from, to)) = month.bounds_ms() else {
        return Ok(false);
    };
    // The name is digits from `Month`, the bounds integers: nothing from a client's text.
    let name = month.partition_name();
    let tx = conn.transaction().await?;
    tx.batch_execute(LOCK_TIMEOUT).await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&PARTITION_LOCK])
        .await?;
    let exists: bool = tx
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])
        .await?
        .get(0);
    if exists {
        return Ok(false);
    }
    tx.batch_execute(&format!(
        "LOCK TABLE ts_history_default IN ACCESS EXCLUSIVE MODE;
         CREATE TABLE {name} (LIKE ts_history INCLUDING ALL);
         WITH moved AS (DELETE FROM ts_history_default WHERE timestamp >= {from} AND timestamp < {to} RETURNING *)
         INSERT INTO {name} SELECT * FROM moved;
         ALTER TABLE ts_history ATTACH PARTITION {name} FOR VALUES FROM ({from}) TO ({to});"
    ))
    .await?;
    tx.commit().await?;
    tracing::info!(partition = %name, "made a ts_history partition");
    Ok(true)
}

/// Makes the partitions of `months`; a month that fails is logged and left for a later
/// try (its rows stay in DEFAULT). Returns the months made.
async fn create_all(conn: &mut Conn, months: &[Month], state: &PartitionState) -> Vec<Month> {
    let mut made = Vec::new();
    for &month in months {
        match create(conn, month).await {
            Ok(made_now) => {
                if made_now {
                    made.push(month);
                }
                state.saw_present(month);
            }
            // Remembered all the same: pushes do not try again (each try locks DEFAULT)
            // until the next maintenance pass re-reads the catalog and retries.
            Err(e) => {
                tracing::warn!(month = %month, error = %e, "could not make a ts_history partition; its rows stay in the DEFAULT partition for now")
            }
        }
        state.remember([month], false);
    }
    made.sort();
    made
}

/// Before a push: makes the partitions of the records' months that have none yet
/// (inside the policy's window, at most [`history::MAX_ON_DEMAND_PER_PUSH`]). Never
/// fails the push: what cannot be made now lands in DEFAULT.
pub(super) async fn ensure_for_push(db: &PgBackend, records: &[RecordInput], now_ms: i64) {
    let months: BTreeSet<Month> = records
        .iter()
        .filter_map(|r| Month::of_ms(r.timestamp))
        .collect();
    let state = db.partitions.clone();
    let policy = state.policy();
    // Months this process knows exist, or that the window excludes, need no look.
    let nothing_new = {
        let known = state.known.lock().unwrap_or_else(|e| e.into_inner());
        history::months_to_create(months.iter().copied(), &known, now_ms, policy, 1).is_empty()
    };
    if nothing_new {
        return;
    }
    let result = db
        .write(move |mut conn| async move {
            let present = existing(&conn).await?;
            state.saw_catalog(&present);
            let wanted = history::months_to_create(
                months,
                &present,
                now_ms,
                policy,
                history::MAX_ON_DEMAND_PER_PUSH,
            );
            create_all(&mut conn, &wanted, &state).await;
            Ok(())
        })
        .await;
    if let Err(e) = result {
        tracing::warn!(error = %e, "could not check the ts_history partitions before a push");
    }
}

/// One maintenance pass: the current month and `months_ahead` after it, the months of
/// rows waiting in DEFAULT (inside the window), then the retention: partitions wholly
/// before the cutoff dropped, DEFAULT rows before it deleted.
pub(super) async fn maintain(
    db: &PgBackend,
    now_ms: i64,
    policy: HistoryPolicy,
) -> Result<HistoryMaintenance> {
    let state = db.partitions.clone();
    *state.policy.lock().unwrap_or_else(|e| e.into_inner()) = policy;
    db.write(move |mut conn| async move {
        let mut done = HistoryMaintenance::default();
        let present = existing(&conn).await?;
        state.saw_catalog(&present);

        let days: Vec<i64> = conn
            .query(
                "SELECT DISTINCT floor(timestamp / 86400000.0)::int8 FROM ts_history_default",
                &[],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut wanted: Vec<Month> = history::months_ahead(now_ms, policy);
        wanted.extend(days.into_iter().filter_map(Month::of_epoch_day));
        let mut months = history::months_to_create(
            wanted,
            &present,
            now_ms,
            policy,
            DRAIN_MONTHS_PER_PASS + policy.months_ahead as usize + 1,
        );
        months.sort();
        done.created = create_all(&mut conn, &months, &state).await;

        let present: Vec<Month> = existing(&conn).await?.into_iter().collect();
        for month in history::months_to_drop(&present, now_ms, policy) {
            let tx = conn.transaction().await?;
            tx.batch_execute(LOCK_TIMEOUT).await?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&PARTITION_LOCK])
                .await?;
            // Another process may have dropped it since the catalog was read.
            let name = month.partition_name();
            let exists: bool = tx
                .query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])
                .await?
                .get(0);
            if !exists {
                continue;
            }
            // The name is digits from `Month`.
            let dropped = tx.batch_execute(&format!("DROP TABLE {name}")).await;
            match dropped {
                Ok(()) => {
                    tx.commit().await?;
                    tracing::info!(partition = %name, "dropped a ts_history partition past the retention");
                    done.dropped.push(month);
                }
                Err(e) => {
                    tracing::warn!(month = %month, error = %e, "could not drop a ts_history partition; the next pass tries again");
                }
            }
        }
        let kept: BTreeSet<Month> = present
            .into_iter()
            .filter(|m| !done.dropped.contains(m))
            .collect();
        state.saw_catalog(&kept);
        if let Some(cutoff) = history::retention_cutoff_ms(now_ms, policy) {
            done.deleted_rows = conn
                .execute(
                    "DELETE FROM ts_history_default WHERE timestamp < $1",
                    &[&cutoff],
                )
                .await?;
        }
        Ok(done)
    })
    .await
}

#[cfg(test)]
#[path = "partitions_tests.rs"]
mod tests;
