//! Coalesced reads: concurrent callers of the same read share one round trip, without
//! ever being answered by a read that started before they asked.
//!
//! At most `readers` reads run at a time. A caller arriving while fewer run leads: it
//! runs the read itself. A caller arriving while all run waits; when a read ends, its
//! leader answers the callers that were waiting when it started and hands the lead to
//! the oldest of those that arrived meanwhile, whose read then answers all of them. So
//! every answer comes from a read that started after the caller asked — what the response cache
//! needs to see a write committed through another process before the request arrived
//! (a PostgreSQL statement sees every transaction committed before it started).
//!
//! Cancellation: a leader dropped mid-read (its client went away) drops its waiters'
//! answer channels, and they ask again; the lead passes on in either case. A waiter
//! dropped right after being handed the lead passes it on from its destructor.
//!
//! Owns: the waiting list and the lead. Must not: know what is read or from where.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::{Result, StoreError};

/// One read shared by the callers waiting for it (see the module documentation).
pub(crate) struct Coalesced<T> {
    state: Mutex<State<T>>,
    /// Reads that may run at once: one shares the most, a second halves the wait of a
    /// caller arriving just after a read started.
    readers: usize,
}

struct State<T> {
    /// Callers running the read (or handed the lead, about to).
    leading: usize,
    /// Callers waiting for a read that starts after they asked, oldest first.
    waiting: VecDeque<oneshot::Sender<Turn<T>>>,
}

/// What a waiting caller is told.
enum Turn<T> {
    /// The answer of a read that started after the caller asked.
    Answer(std::result::Result<T, SharedError>),
    /// Run the read yourself: every waiter left arrived after the last read started.
    Lead,
}

/// A failed read as every caller of it sees it: the leader keeps the original error.
#[derive(Clone)]
struct SharedError {
    unavailable: bool,
    message: String,
}

impl From<SharedError> for StoreError {
    fn from(e: SharedError) -> Self {
        if e.unavailable {
            StoreError::Unavailable(e.message)
        } else {
            StoreError::Task(e.message)
        }
    }
}

impl<T: Clone> Coalesced<T> {
    /// At most `readers` (at least one) reads at a time.
    pub(crate) fn new(readers: usize) -> Self {
        Coalesced {
            state: Mutex::new(State {
                leading: 0,
                waiting: VecDeque::new(),
            }),
            readers: readers.max(1),
        }
    }

    /// The result of `read`, run by this caller or by another one after this call began.
    pub(crate) async fn get<F, Fut>(&self, read: F) -> Result<T>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        loop {
            let queued = {
                let mut state = self.lock();
                if state.leading >= self.readers {
                    let (tx, rx) = oneshot::channel();
                    state.waiting.push_back(tx);
                    Some(rx)
                } else {
                    state.leading += 1;
                    None
                }
            };
            let Some(rx) = queued else {
                return self.lead(read).await;
            };
            let mut waiting = Waiting {
                rx,
                owner: self,
                received: false,
            };
            let turn = (&mut waiting.rx).await;
            waiting.received = true;
            match turn {
                Ok(Turn::Answer(result)) => return result.map_err(StoreError::from),
                Ok(Turn::Lead) => return self.lead(read).await,
                // The leader went away before answering: ask again.
                Err(_) => continue,
            }
        }
    }

    /// Runs the read for this caller and everyone waiting now, then passes the lead on.
    async fn lead<F, Fut>(&self, read: F) -> Result<T>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        // Declared first so it is dropped last, after the waiters' channels.
        let _hand_over = HandOver(self);
        let answered: Vec<_> = {
            let mut state = self.lock();
            state.waiting.drain(..).collect()
        };
        let result = read().await;
        let shared = result.as_ref().map(T::clone).map_err(|e| SharedError {
            unavailable: e.is_unavailable(),
            message: e.to_string(),
        });
        for waiter in answered {
            // A waiter that went away needs no answer.
            let _ = waiter.send(Turn::Answer(shared.clone()));
        }
        result
    }

    /// Gives the lead to the oldest waiter still there, or lets it lapse.
    fn hand_over(&self) {
        let mut state = self.lock();
        while let Some(waiter) = state.waiting.pop_front() {
            if waiter.send(Turn::Lead).is_ok() {
                return;
            }
        }
        state.leading -= 1;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        // The state stays consistent under a panic elsewhere: every change is one step.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Passes the lead on when the leading call ends, finished or dropped.
struct HandOver<'a, T: Clone>(&'a Coalesced<T>);

impl<T: Clone> Drop for HandOver<'_, T> {
    fn drop(&mut self) {
        self.0.hand_over();
    }
}

/// A waiter's channel; dropped unread after the lead was sent to it, it passes the lead on.
struct Waiting<'a, T: Clone> {
    rx: oneshot::Receiver<Turn<T>>,
    owner: &'a Coalesced<T>,
    received: bool,
}

impl<T: Clone> Drop for Waiting<'_, T> {
    fn drop(&mut self) {
        if self.received {
            return;
        }
        self.rx.close();
        if let Ok(Turn::Lead) = self.rx.try_recv() {
            self.owner.hand_over();
        }
    }
}

#[cfg(test)]
#[path = "coalesce_tests.rs"]
mod tests;
