//! Reads of a few rows by key, sent over connections that every request of the process
//! shares.
//!
//! Such a read costs PostgreSQL less to run than to receive. On a pooled connection of
//! its own, each one wakes that connection's server process, which answers one statement
//! and sleeps again: a document by its id cost PostgreSQL 56 µs of CPU that way, and Hub
//! 108 µs. tokio-postgres pipelines the statements of concurrent callers on one client,
//! so the server process reads several from its socket at one wake-up and answers them in
//! turn: 33 and 78 µs (see `docs/decisions.md`).
//!
//! Only reads whose cost is bounded may come here: a statement waits for those sent
//! before it on the same connection, so a slow one would hold up every read behind it.
//! Transactions and snapshots never do: they pin a connection.
//!
//! Each shared connection is taken from the primary's pool once and kept, so it counts
//! against the pool's size; one found closed is replaced by the next read that takes its
//! place, as the pool replaces a closed connection at checkout.
//!
//! Owns: the shared connections and which one a read takes. Must not: decide which reads
//! are bounded (the repositories choose [`super::PgBackend::point_read`]) or route reads
//! to a replica (there are no shared connections when one is configured).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use deadpool_postgres::Pool;

use super::session::{Conn, StatementMode};
use crate::Result;

/// The shared connections of one pool.
pub(crate) struct SharedReads {
    pool: Pool,
    mode: StatementMode,
    /// Each slot's connection, once a read has opened it.
    slots: Box<[Mutex<Option<Arc<Conn>>>]>,
    /// Reads take the slots in turn.
    next: AtomicUsize,
}

impl SharedReads {
    /// `wanted` shared connections of `pool`, at most half the pool's size so that
    /// transactions and unbounded reads keep connections of their own; `None` when that
    /// leaves none.
    pub(crate) fn new(
        pool: Pool,
        pool_size: usize,
        mode: StatementMode,
        wanted: usize,
    ) -> Option<SharedReads> {
        let count = wanted.min(pool_size / 2);
        (count > 0).then(|| SharedReads {
            pool,
            mode,
            slots: (0..count).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
        })
    }

    /// The next slot's connection, opened first when the slot is empty or its connection
    /// closed. Opening runs on `runtime`, where the connection's task then lives.
    pub(crate) async fn conn(&self, runtime: &tokio::runtime::Handle) -> Result<Arc<Conn>> {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len()];
        if let Some(conn) = open_conn(&lock(slot)) {
            return Ok(conn);
        }
        let pool = self.pool.clone();
        let object = runtime
            .spawn(async move { pool.get().await })
            .await
            .map_err(|e| crate::StoreError::Task(e.to_string()))?
            .map_err(super::pool_error)?;
        let opened = Arc::new(Conn::new(object, self.mode.clone()));
        let mut held = lock(slot);
        // Another read may have filled the slot meanwhile: it is kept, and this
        // connection goes back to the pool when the read is done with it.
        match open_conn(&held) {
            Some(conn) => Ok(conn),
            None => {
                *held = Some(opened.clone());
                Ok(opened)
            }
        }
    }
}

fn lock(slot: &Mutex<Option<Arc<Conn>>>) -> MutexGuard<'_, Option<Arc<Conn>>> {
    // The guarded value is replaced whole, so a panic elsewhere cannot leave it torn.
    slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn open_conn(held: &Option<Arc<Conn>>) -> Option<Arc<Conn>> {
    held.as_ref().filter(|conn| !conn.is_closed()).cloned()
}
