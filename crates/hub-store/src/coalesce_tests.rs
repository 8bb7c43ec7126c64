use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use super::Coalesced;
use crate::{Result, StoreError};

/// A read that counts itself, answers its own number and waits for the gate to open.
#[derive(Clone)]
struct Source {
    started: Arc<AtomicUsize>,
    gate: Arc<Semaphore>,
    fail: bool,
}

impl Default for Source {
    fn default() -> Self {
        Source {
            started: Arc::default(),
            gate: Arc::new(Semaphore::new(0)),
            fail: false,
        }
    }
}

impl Source {
    async fn read(self) -> Result<usize> {
        let n = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        self.gate.acquire().await.expect("gate open").forget();
        if self.fail {
            return Err(StoreError::Unavailable("down".into()));
        }
        Ok(n)
    }

    fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }
}

fn caller(
    shared: &Arc<Coalesced<usize>>,
    source: &Source,
) -> tokio::task::JoinHandle<Result<usize>> {
    let (shared, source) = (shared.clone(), source.clone());
    tokio::spawn(async move { shared.get(|| source.read()).await })
}

/// Lets spawned tasks run until they wait.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_lone_caller_reads_at_once() {
    let shared = Arc::new(Coalesced::new(1));
    let source = Source::default();
    source.gate.add_permits(1);
    assert_eq!(shared.get(|| source.clone().read()).await.unwrap(), 1);
    source.gate.add_permits(1);
    assert_eq!(shared.get(|| source.clone().read()).await.unwrap(), 2);
}

#[tokio::test]
async fn callers_arriving_during_a_read_share_the_next_one_never_the_running_one() {
    let shared = Arc::new(Coalesced::new(1));
    let source = Source::default();
    let first = caller(&shared, &source);
    settle().await;
    assert_eq!(source.started(), 1);
    let later: Vec<_> = (0..5).map(|_| caller(&shared, &source)).collect();
    settle().await;
    // They wait: the running read started before they asked.
    assert_eq!(source.started(), 1);
    source.gate.add_permits(1);
    assert_eq!(first.await.unwrap().unwrap(), 1);
    settle().await;
    // One read for all five, started after all of them asked.
    assert_eq!(source.started(), 2);
    source.gate.add_permits(1);
    for handle in later {
        assert_eq!(handle.await.unwrap().unwrap(), 2);
    }
    assert_eq!(source.started(), 2);
}

#[tokio::test]
async fn a_failed_read_fails_every_caller_it_answers() {
    let shared = Arc::new(Coalesced::new(1));
    let source = Source {
        fail: true,
        ..Source::default()
    };
    let first = caller(&shared, &source);
    settle().await;
    let second = caller(&shared, &source);
    let third = caller(&shared, &source);
    settle().await;
    source.gate.add_permits(2);
    assert!(first.await.unwrap().unwrap_err().is_unavailable());
    let (second, third) = (second.await.unwrap(), third.await.unwrap());
    assert!(second.unwrap_err().is_unavailable());
    assert!(third.unwrap_err().is_unavailable());
    assert_eq!(source.started(), 2);
}

#[tokio::test]
async fn a_leader_that_goes_away_mid_read_leaves_no_one_stuck() {
    let shared = Arc::new(Coalesced::new(1));
    let source = Source::default();
    let leader = caller(&shared, &source);
    settle().await;
    let waiter = caller(&shared, &source);
    settle().await;
    leader.abort();
    settle().await;
    // The waiter leads a read of its own.
    assert_eq!(source.started(), 2);
    source.gate.add_permits(2);
    let answer = tokio::time::timeout(Duration::from_secs(5), waiter).await;
    assert_eq!(answer.expect("not stuck").unwrap().unwrap(), 2);
}

#[tokio::test]
async fn a_waiter_that_goes_away_passes_the_lead_on() {
    let shared = Arc::new(Coalesced::new(1));
    let source = Source::default();
    let leader = caller(&shared, &source);
    settle().await;
    let gone = caller(&shared, &source);
    let next = caller(&shared, &source);
    settle().await;
    // Cancelled before the lead reaches it: the next waiter leads.
    gone.abort();
    settle().await;
    source.gate.add_permits(2);
    assert_eq!(leader.await.unwrap().unwrap(), 1);
    let answer = tokio::time::timeout(Duration::from_secs(5), next).await;
    assert_eq!(answer.expect("not stuck").unwrap().unwrap(), 2);
    assert_eq!(source.started(), 2);
    // And the lead lapses afterwards: a new caller reads at once.
    source.gate.add_permits(1);
    assert_eq!(shared.get(|| source.clone().read()).await.unwrap(), 3);
}

#[tokio::test]
async fn with_two_readers_a_second_caller_reads_at_once_and_a_third_waits() {
    let shared = Arc::new(Coalesced::new(2));
    let source = Source::default();
    let first = caller(&shared, &source);
    settle().await;
    let second = caller(&shared, &source);
    settle().await;
    assert_eq!(source.started(), 2);
    let third = caller(&shared, &source);
    let fourth = caller(&shared, &source);
    settle().await;
    assert_eq!(source.started(), 2);
    source.gate.add_permits(1);
    settle().await;
    // The first read to end hands the lead on: one read for both waiters.
    assert_eq!(source.started(), 3);
    source.gate.add_permits(2);
    let mut answers = Vec::new();
    for handle in [first, second, third, fourth] {
        answers.push(handle.await.unwrap().unwrap());
    }
    answers.sort();
    assert_eq!(answers[..2], [1, 2]);
    assert_eq!(answers[2..], [3, 3]);
    assert_eq!(source.started(), 3);
}
