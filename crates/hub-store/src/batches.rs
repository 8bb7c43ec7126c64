//! Answers too large to hold: rows come from a database cursor in batches through a
//! bounded channel, so a reader holds at most [`IN_FLIGHT`] batches besides the one it
//! is writing out, whatever the size of the answer.
//!
//! Owns: the [`Batches`] receiver both backends fill and the batch size. Must not: know
//! SQL or HTTP. The producer stops (and gives its connection back) as soon as the
//! receiver is dropped, for example when the client disconnects, or when the receiver
//! has not taken a batch for [`STALL_TIMEOUT`] (a client that stops reading).

use std::time::Duration;

use tokio::sync::mpsc;

use crate::Result;

/// Rows per batch: large enough that channel hand-offs cost nothing next to the rows,
/// small enough that a batch of wide rows or documents stays a few megabytes.
pub const BATCH_ROWS: usize = 500;

/// Batches queued between the database cursor and the reader.
pub const IN_FLIGHT: usize = 2;

/// How long the producer waits for the reader to take a batch before it gives up: a
/// client that stops reading must not hold one of the few database connections (and, on
/// SQLite, a read snapshot that keeps the log from being checkpointed) for ever. Its
/// answer ends early then, as if the connection had dropped.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Batches of rows in the query's order; an error ends the sequence.
pub struct Batches<T> {
    rx: mpsc::Receiver<Result<Vec<T>>>,
    spent: mpsc::UnboundedSender<Vec<T>>,
}

impl<T> Batches<T> {
    /// The next batch; `None` after the last.
    pub async fn next(&mut self) -> Option<Result<Vec<T>>> {
        self.rx.recv().await
    }

    /// Hands a batch that has been written out back to the producer, which drops its
    /// rows and fills it again. Rows share reference-counted cells with the rows the
    /// producer is making (a series' texts); dropped here, on another thread, every
    /// count would move between the two cores' caches row by row. Optional: a batch
    /// not given back is simply dropped.
    pub fn give_back(&self, batch: Vec<T>) {
        let _ = self.spent.send(batch);
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

/// Gives a whole-dataset read's count to the waiting reader and keeps the snapshot
/// (transaction) for the rows, or ends the read: on a failed count (the reader gets the
/// error) or when the reader is gone.
pub(crate) fn hand_over_count<T>(
    total: tokio::sync::oneshot::Sender<Result<u64>>,
    counted: Result<(T, u64)>,
) -> Option<T> {
    match counted {
        Ok((snapshot, n)) => total.send(Ok(n)).is_ok().then_some(snapshot),
        Err(e) => {
            let _ = total.send(Err(e));
            None
        }
    }
}

/// The producing end, for the backends.
pub(crate) struct BatchSender<T> {
    tx: mpsc::Sender<Result<Vec<T>>>,
    batch: Vec<T>,
    spent: mpsc::UnboundedReceiver<Vec<T>>,
    /// Rows of batches given back, for a producer that fills rows again
    /// ([`BatchSender::take_spare_rows`]); at most [`SPARE_ROWS`].
    spare: Vec<T>,
}

/// Rows of given-back batches kept for filling again (a batch's worth: the producer
/// fills one batch while the next comes back); the rest are dropped.
const SPARE_ROWS: usize = BATCH_ROWS;

/// A connected pair.
pub(crate) fn channel<T>() -> (BatchSender<T>, Batches<T>) {
    let (tx, rx) = mpsc::channel(IN_FLIGHT);
    let (spent_tx, spent) = mpsc::unbounded_channel();
    (
        BatchSender {
            tx,
            batch: Vec::with_capacity(BATCH_ROWS),
            spent,
            spare: Vec::new(),
        },
        Batches {
            rx,
            spent: spent_tx,
        },
    )
}

/// The reader went away: stop reading rows.
pub(crate) struct Closed;

impl<T> BatchSender<T> {
    /// The batch to fill next: one the reader gave back, or a new one. The rows of
    /// batches given back are kept as spare rows (up to [`SPARE_ROWS`]) or dropped here.
    fn next_batch(&mut self) -> Vec<T> {
        let mut next = None;
        while let Ok(mut spent) = self.spent.try_recv() {
            let room = SPARE_ROWS.saturating_sub(self.spare.len());
            self.spare.extend(spent.drain(..room.min(spent.len())));
            spent.clear();
            next.get_or_insert(spent);
        }
        next.unwrap_or_else(|| Vec::with_capacity(BATCH_ROWS))
    }

    /// Moves the spare rows (rows of batches the reader gave back) to `to`, for a
    /// producer that fills old rows again instead of allocating new ones.
    pub(crate) fn take_spare_rows(&mut self, to: &mut Vec<T>) {
        if !self.spare.is_empty() {
            to.append(&mut self.spare);
        }
    }

    /// Adds a row from a blocking thread (SQLite), sending a full batch.
    pub(crate) fn push_blocking(&mut self, row: T) -> std::result::Result<(), Closed> {
        self.batch.push(row);
        if self.batch.len() >= BATCH_ROWS {
            let next = self.next_batch();
            let full = std::mem::replace(&mut self.batch, next);
            // The SQLite cursor runs on the runtime's blocking pool, where the runtime's
            // timers are at hand; without a runtime, wait as long as it takes.
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => runtime
                    .block_on(self.tx.send_timeout(Ok(full), STALL_TIMEOUT))
                    .map_err(|_| Closed)?,
                Err(_) => self.tx.blocking_send(Ok(full)).map_err(|_| Closed)?,
            }
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
        self.push_within(row, STALL_TIMEOUT).await
    }

    /// [`BatchSender::push`], giving up when the reader has not taken a batch for `stall`.
    async fn push_within(&mut self, row: T, stall: Duration) -> std::result::Result<(), Closed> {
        self.batch.push(row);
        if self.batch.len() >= BATCH_ROWS {
            let next = self.next_batch();
            let full = std::mem::replace(&mut self.batch, next);
            self.tx
                .send_timeout(Ok(full), stall)
                .await
                .map_err(|_| Closed)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that stops taking batches releases the producer (and its connection)
    /// after the stall timeout; one that reads gets every row.
    #[tokio::test]
    async fn a_stalled_reader_releases_the_producer() {
        let stall = Duration::from_millis(50);
        let (mut tx, _rx) = channel::<u32>();
        let started = tokio::time::Instant::now();
        let mut outcome = Ok(());
        for row in 0..(BATCH_ROWS * (IN_FLIGHT + 2)) as u32 {
            outcome = tx.push_within(row, stall).await;
            if outcome.is_err() {
                break;
            }
        }
        assert!(outcome.is_err(), "the producer gave up");
        assert!(started.elapsed() >= stall);

        let (mut tx, mut rx) = channel::<u32>();
        let producer = tokio::spawn(async move {
            for row in 0..1234 {
                if tx.push(row).await.is_err() {
                    return false;
                }
            }
            tx.finish(Ok(())).await;
            true
        });
        let mut rows = Vec::new();
        while let Some(batch) = rx.next().await {
            rows.extend(batch.unwrap());
        }
        assert!(producer.await.unwrap());
        assert_eq!(rows, (0..1234).collect::<Vec<_>>());
    }

    /// Rows of batches the reader gives back are dropped by the producer's thread (the
    /// one that made them), and every row still arrives once, in order.
    #[tokio::test]
    async fn batches_given_back_are_dropped_where_their_rows_were_made() {
        use std::sync::{Arc, Mutex};
        use std::thread::ThreadId;

        struct Row(usize, Arc<Mutex<Vec<ThreadId>>>);
        impl Drop for Row {
            fn drop(&mut self) {
                self.1.lock().unwrap().push(std::thread::current().id());
            }
        }
        const BATCHES: usize = 20;
        let drops = Arc::new(Mutex::new(Vec::new()));
        let (mut tx, mut rx) = channel::<Row>();
        let made = drops.clone();
        let producer = std::thread::spawn(move || {
            for n in 0..BATCHES * BATCH_ROWS {
                if tx.push_blocking(Row(n, made.clone())).is_err() {
                    break;
                }
            }
            // Rows dropped while producing (not when the sender goes, below).
            let me = std::thread::current().id();
            let dropped_here = made.lock().unwrap().iter().filter(|&&t| t == me).count();
            tx.finish_blocking(Ok(()));
            dropped_here
        });
        let mut seen = 0;
        while let Some(batch) = rx.next().await {
            let batch = batch.unwrap();
            for row in &batch {
                assert_eq!(row.0, seen);
                seen += 1;
            }
            rx.give_back(batch);
        }
        drop(rx);
        let by_producer = producer.join().unwrap();
        assert_eq!(seen, BATCHES * BATCH_ROWS);
        assert_eq!(drops.lock().unwrap().len(), BATCHES * BATCH_ROWS);
        // When the producer starts its last batch, the channel holds at most IN_FLIGHT
        // batches, so the reader has taken all but those and the last and has given
        // back every batch before the one it reads.
        // Up to SPARE_ROWS of them are kept as spare rows, dropped when the sender goes.
        assert!(
            by_producer >= (BATCHES - IN_FLIGHT - 2) * BATCH_ROWS - SPARE_ROWS,
            "{by_producer} rows dropped by the producer while producing"
        );
    }

    /// A producer that fills rows again gets the rows of batches given back (rows it
    /// made before), never more than SPARE_ROWS at a time.
    #[tokio::test]
    async fn rows_given_back_are_spare_rows_for_the_producer() {
        const BATCHES: usize = 10;
        let (mut tx, mut rx) = channel::<usize>();
        let producer = std::thread::spawn(move || {
            let mut received = 0;
            for n in 0..BATCHES * BATCH_ROWS {
                if tx.push_blocking(n).is_err() {
                    break;
                }
                let mut spare = Vec::new();
                tx.take_spare_rows(&mut spare);
                assert!(spare.len() <= SPARE_ROWS);
                assert!(spare.iter().all(|&made| made < n), "rows made before");
                received += spare.len();
            }
            tx.finish_blocking(Ok(()));
            received
        });
        let mut taken = 0;
        while let Some(batch) = rx.next().await {
            let batch = batch.unwrap();
            taken += batch.len();
            rx.give_back(batch);
        }
        let received = producer.join().unwrap();
        assert_eq!(taken, BATCHES * BATCH_ROWS);
        // As above: all but the last few batches came back while producing.
        assert!(
            received >= SPARE_ROWS.min((BATCHES - IN_FLIGHT - 2) * BATCH_ROWS),
            "{received} spare rows"
        );
    }
}
