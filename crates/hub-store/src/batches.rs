//! Answers too large to hold: rows come from a database cursor in batches through a
//! bounded channel, so a reader holds at most [`IN_FLIGHT`] batches besides the one it
//! is writing out, whatever the size of the answer.
//!
//! Owns: the [`Batches`] receiver both backends fill and the batch size. Must not: know
//! SQL or HTTP. The producer stops (and gives its connection back) as soon as the
//! receiver is dropped, for example when the client disconnects.

use tokio::sync::mpsc;

use crate::Result;

/// Rows per batch: large enough that channel hand-offs cost nothing next to the rows,
/// small enough that a batch of wide rows or documents stays a few megabytes.
pub const BATCH_ROWS: usize = 500;

/// Batches queued between the database cursor and the reader.
pub const IN_FLIGHT: usize = 2;

/// Batches of rows in the query's order; an error ends the sequence.
pub struct Batches<T> {
    rx: mpsc::Receiver<Result<Vec<T>>>,
}

impl<T> Batches<T> {
    /// The next batch; `None` after the last.
    pub async fn next(&mut self) -> Option<Result<Vec<T>>> {
        self.rx.recv().await
    }

    /// Every remaining row, failing with `too_many(limit)` as soon as more than `limit`
    /// arrive (the cursor is dropped then, so at most `limit` + one batch are held).
    pub async fn collect_at_most<E: From<crate::StoreError>>(
        mut self,
        limit: usize,
        too_many: impl FnOnce(usize) -> E,
    ) -> std::result::Result<Vec<T>, E> {
        let mut out = Vec::new();
        while let Some(batch) = self.next().await {
            out.extend(batch?);
            if out.len() > limit {
                return Err(too_many(limit));
            }
        }
        Ok(out)
    }
}

/// The producing end, for the backends.
pub(crate) struct BatchSender<T> {
    tx: mpsc::Sender<Result<Vec<T>>>,
    batch: Vec<T>,
}

/// A connected pair.
pub(crate) fn channel<T>() -> (BatchSender<T>, Batches<T>) {
    let (tx, rx) = mpsc::channel(IN_FLIGHT);
    (
        BatchSender {
            tx,
            batch: Vec::with_capacity(BATCH_ROWS),
        },
        Batches { rx },
    )
}

/// The reader went away: stop reading rows.
pub(crate) struct Closed;

impl<T> BatchSender<T> {
    /// Adds a row from a blocking thread (SQLite), sending a full batch.
    pub(crate) fn push_blocking(&mut self, row: T) -> std::result::Result<(), Closed> {
        self.batch.push(row);
        if self.batch.len() >= BATCH_ROWS {
            let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_ROWS));
            self.tx.blocking_send(Ok(full)).map_err(|_| Closed)?;
        }
        Ok(())
    }

    /// Sends what is left, or the error, from a blocking thread.
    pub(crate) fn finish_blocking(mut self, result: Result<()>) {
        let last = std::mem::take(&mut self.batch);
        let _ = match result {
            Ok(()) if last.is_empty() => Ok(()),
            Ok(()) => self.tx.blocking_send(Ok(last)),
            Err(e) => self.tx.blocking_send(Err(e)),
        };
    }

    /// Adds a row from an async task (PostgreSQL), sending a full batch.
    pub(crate) async fn push(&mut self, row: T) -> std::result::Result<(), Closed> {
        self.batch.push(row);
        if self.batch.len() >= BATCH_ROWS {
            let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_ROWS));
            self.tx.send(Ok(full)).await.map_err(|_| Closed)?;
        }
        Ok(())
    }

    /// Sends what is left, or the error, from an async task.
    pub(crate) async fn finish(mut self, result: Result<()>) {
        let last = std::mem::take(&mut self.batch);
        let _ = match result {
            Ok(()) if last.is_empty() => Ok(()),
            Ok(()) => self.tx.send(Ok(last)).await,
            Err(e) => self.tx.send(Err(e)).await,
        };
    }
}
