//! Content write revisions kept in memory from PostgreSQL notifications, for the
//! response cache's `notify` mode (`PgSettings::revision_notify`).
//!
//! By default every cache hit reads `content_revision` (one round trip): a write
//! committed by any process before a request arrived is always seen. In `notify` mode a
//! connection of its own `LISTEN`s on [`CHANNEL`] (a trigger on `content_revision`
//! notifies at every committed write, migration 7) and the revisions it last read answer
//! the hits without a round trip. What that trades: a write by *another* process is
//! seen once its notification has arrived (loopback: well under a millisecond), not
//! strictly before the next request; this process's own writes are seen at once.
//!
//! When the memory may not answer ([`Freshness`]): before the first read, while the
//! listening connection is down (it reconnects every second), from a notification or an
//! own write until a read that started after it has finished. Then the caller reads
//! the table as in the default mode, so an answer is never older than the rule above.
//!
//! Owns the listening connection and the in-memory revisions. Must not: decide what the
//! cache keeps (hub-content) or write anything.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt;
use tokio_postgres::AsyncMessage;

use crate::content::Revisions;

/// The channel the `content_revision` trigger notifies.
pub(crate) const CHANNEL: &str = "hub_content_revision";

/// The listening connection's `application_name`.
pub const LISTENER_NAME: &str = "hub revision listener";

/// How long a lost listening connection waits before it connects again.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// Whether the revisions in memory may answer: a counter of reasons to doubt them
/// (notifications, own writes) and the count the last finished read covers. Pure state,
/// shared by the listener and the callers.
#[derive(Debug, Default)]
pub(crate) struct Freshness {
    listening: AtomicBool,
    doubts: AtomicU64,
    settled: AtomicU64,
}

impl Freshness {
    /// A reason to doubt the memory (a write happened somewhere).
    pub(crate) fn doubt(&self) {
        self.doubts.fetch_add(1, Ordering::SeqCst);
    }

    /// Called before a read of the table; pass the result to [`Freshness::settle`].
    pub(crate) fn before_read(&self) -> u64 {
        self.doubts.load(Ordering::SeqCst)
    }

    /// A read that began at `begun` (from [`Freshness::before_read`]) has finished: it
    /// covers every doubt raised before it began.
    pub(crate) fn settle(&self, begun: u64) {
        self.settled.fetch_max(begun, Ordering::SeqCst);
    }

    pub(crate) fn set_listening(&self, listening: bool) {
        self.listening.store(listening, Ordering::SeqCst);
    }

    /// The memory may answer: the connection listens and no doubt is newer than the
    /// last finished read.
    pub(crate) fn fresh(&self) -> bool {
        self.listening.load(Ordering::SeqCst)
            && self.settled.load(Ordering::SeqCst) == self.doubts.load(Ordering::SeqCst)
    }
}

/// The in-memory revisions and their listener (runs on the backend's runtime).
pub(crate) struct RevisionWatch {
    freshness: Arc<Freshness>,
    revisions: Arc<RwLock<Revisions>>,
    wake: Arc<tokio::sync::Notify>,
}

impl RevisionWatch {
    /// Starts listening on `runtime` with connections made from `config`.
    pub(crate) fn start(
        runtime: &tokio::runtime::Handle,
        mut config: tokio_postgres::Config,
        connector: super::tls::TlsConnector,
    ) -> Self {
        // Named, so an operator (or a test) can tell it from the pool's connections.
        config.application_name(LISTENER_NAME);
        let watch = RevisionWatch {
            freshness: Arc::new(Freshness::default()),
            revisions: Arc::new(RwLock::new(Arc::new(HashMap::new()))),
            wake: Arc::new(tokio::sync::Notify::new()),
        };
        let (freshness, revisions, wake) = (
            watch.freshness.clone(),
            watch.revisions.clone(),
            watch.wake.clone(),
        );
        runtime.spawn(async move {
            loop {
                let outcome = listen(&config, &connector, &freshness, &revisions, &wake).await;
                freshness.set_listening(false);
                if let Err(e) = outcome {
                    tracing::warn!(error = %e, "revision notifications lost; the response cache reads revisions per request until they are back");
                }
                tokio::time::sleep(RECONNECT_AFTER).await;
            }
        });
        watch
    }

    /// The revisions in memory, when they may answer.
    pub(crate) fn fresh(&self) -> Option<Revisions> {
        if !self.freshness.fresh() {
            return None;
        }
        let revisions = self.revisions.read().ok()?.clone();
        // A doubt raised while the lock was taken: do not answer from before it.
        self.freshness.fresh().then_some(revisions)
    }

    /// This process committed a content write: read again before answering from memory.
    pub(crate) fn written(&self) {
        self.freshness.doubt();
        self.wake.notify_one();
    }
}

/// One listening connection's life: `LISTEN`, read, then read again after every
/// notification or own write, until the connection ends.
async fn listen(
    config: &tokio_postgres::Config,
    connector: &super::tls::TlsConnector,
    freshness: &Arc<Freshness>,
    revisions: &RwLock<Revisions>,
    wake: &Arc<tokio::sync::Notify>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(connector.clone()).await?;
    // The connection's messages: notifications raise a doubt at once; the end of the
    // stream (or an error) ends this listener.
    let (ended_tx, mut ended) = tokio::sync::oneshot::channel::<tokio_postgres::Error>();
    let pump_freshness = freshness.clone();
    let pump_wake = wake.clone();
    let pump = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(_)) => {
                    pump_freshness.doubt();
                    pump_wake.notify_one();
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = ended_tx.send(e);
                    return;
                }
            }
        }
    });
    let result = async {
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
        let statement = client.prepare(crate::content::REVISIONS_SQL).await?;
        loop {
            let begun = freshness.before_read();
            let rows = client.query(&statement, &[]).await?;
            let read: HashMap<String, i64> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            if let Ok(mut memory) = revisions.write() {
                *memory = Arc::new(read);
            }
            freshness.settle(begun);
            // Only after the first read of this connection: memory from before it (or
            // from a lost connection) may miss writes.
            freshness.set_listening(true);
            tokio::select! {
                _ = wake.notified() => {}
                e = &mut ended => {
                    return match e {
                        Ok(e) => Err(e),
                        Err(_) => Ok(()),
                    };
                }
            }
        }
    }
    .await;
    pump.abort();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_answers_only_while_listening_and_after_a_read_newer_than_every_doubt() {
        let f = Freshness::default();
        assert!(!f.fresh(), "not listening yet");
        f.set_listening(true);
        assert!(f.fresh(), "listening, nothing doubted");
        let begun = f.before_read();
        f.doubt();
        f.settle(begun);
        assert!(!f.fresh(), "a doubt raised during the read stays");
        let begun = f.before_read();
        f.settle(begun);
        assert!(f.fresh(), "a read begun after the doubt settles it");
        f.doubt();
        f.doubt();
        assert!(!f.fresh());
        let begun = f.before_read();
        f.settle(begun);
        assert!(f.fresh());
        f.set_listening(false);
        assert!(!f.fresh(), "a lost connection never answers from memory");
        // An older read finishing late never settles newer doubts.
        f.set_listening(true);
        let old = f.before_read();
        f.doubt();
        let new = f.before_read();
        f.settle(new);
        f.settle(old);
        assert!(f.fresh(), "settled stays at the newest read");
    }
}
