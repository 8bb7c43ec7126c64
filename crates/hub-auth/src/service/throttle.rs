//! Throttling of the password grant: after a few failed logins for a user name (or from
//! one client IP) further attempts wait, doubling up to a ceiling; and at most
//! [`MAX_CONCURRENT_HASHES`] Argon2 verifications run at once, which bounds the CPU and
//! memory that concurrent grants can take.
//!
//! Owns: the failure counts, [`login_wait`] and the hashing semaphore. Must not: check
//! passwords or issue tokens (grants does).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Failed logins for one user name that cost nothing (typos).
pub const FREE_FAILURES_PER_USER: u32 = 5;
/// Failed logins from one client IP that cost nothing (shared addresses, NAT).
pub const FREE_FAILURES_PER_IP: u32 = 20;
/// The longest wait, in seconds, however many failures.
pub const MAX_WAIT_SECS: i64 = 300;
/// Argon2 verifications allowed at the same time (each takes tens of MiB).
pub const MAX_CONCURRENT_HASHES: usize = 4;
/// Failure records kept before the oldest settled ones are forgotten.
const MAX_RECORDS: usize = 100_000;

/// Seconds still to wait after `failures` failures, the last at `last_failure`, at `now`,
/// when `free` failures are allowed: 0, or 2^(failures − free) capped at
/// [`MAX_WAIT_SECS`], counted from the last failure.
pub fn login_wait(failures: u32, free: u32, last_failure: i64, now: i64) -> u64 {
    if failures < free.max(1) {
        return 0;
    }
    let exponent = (failures - free.max(1)).min(16);
    let wait = (1i64 << exponent).min(MAX_WAIT_SECS);
    u64::try_from(last_failure + wait - now).unwrap_or(0)
}

/// Failure counts by user and by IP, and the hashing semaphore.
pub(crate) struct LoginThrottle {
    failures: Mutex<HashMap<String, (u32, i64)>>,
    pub(crate) hashing: tokio::sync::Semaphore,
}

impl Default for LoginThrottle {
    fn default() -> Self {
        LoginThrottle {
            failures: Mutex::default(),
            hashing: tokio::sync::Semaphore::new(MAX_CONCURRENT_HASHES),
        }
    }
}

fn keys(username: &str, ip: Option<IpAddr>) -> Vec<(String, u32)> {
    let mut keys = vec![(
        format!("user:{}", username.to_lowercase()),
        FREE_FAILURES_PER_USER,
    )];
    if let Some(ip) = ip {
        keys.push((format!("ip:{ip}"), FREE_FAILURES_PER_IP));
    }
    keys
}

impl LoginThrottle {
    /// Seconds this attempt must still wait (0: go ahead).
    pub(crate) fn wait(&self, username: &str, ip: Option<IpAddr>, now: i64) -> u64 {
        let failures = self.failures.lock().expect("throttle lock");
        keys(username, ip)
            .iter()
            .filter_map(|(key, free)| {
                failures
                    .get(key)
                    .map(|(n, last)| login_wait(*n, *free, *last, now))
            })
            .max()
            .unwrap_or(0)
    }

    pub(crate) fn failed(&self, username: &str, ip: Option<IpAddr>, now: i64) {
        let mut failures = self.failures.lock().expect("throttle lock");
        if failures.len() >= MAX_RECORDS {
            failures.retain(|_, (_, last)| now - *last < MAX_WAIT_SECS);
        }
        for (key, _) in keys(username, ip) {
            let entry = failures.entry(key).or_insert((0, now));
            *entry = (entry.0.saturating_add(1), now);
        }
    }

    /// A successful login clears its user's failures (the IP's stay: one success must
    /// not reset a guesser working through many accounts).
    pub(crate) fn succeeded(&self, username: &str) {
        let mut failures = self.failures.lock().expect("throttle lock");
        failures.remove(&format!("user:{}", username.to_lowercase()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (failures, free, last failure, now) → seconds to wait.
    #[test]
    fn login_wait_table() {
        let cases = [
            (0, 5, 0, 0, 0),
            (4, 5, 100, 100, 0),
            (5, 5, 100, 100, 1),
            (5, 5, 100, 101, 0),
            (7, 5, 100, 100, 4),
            (7, 5, 100, 102, 2),
            (30, 5, 100, 100, 300),
            (u32::MAX, 5, 100, 100, 300),
            (1, 0, 100, 100, 1),
        ];
        for (failures, free, last, now, expected) in cases {
            assert_eq!(
                login_wait(failures, free, last, now),
                expected,
                "{failures} {free} {last} {now}"
            );
        }
    }

    #[test]
    fn success_clears_the_user_but_not_the_ip() {
        let t = LoginThrottle::default();
        let ip: IpAddr = [10, 0, 0, 1].into();
        for _ in 0..FREE_FAILURES_PER_IP {
            t.failed("ann", Some(ip), 1000);
        }
        assert!(t.wait("ann", None, 1000) > 0);
        t.succeeded("Ann");
        assert_eq!(t.wait("ann", None, 1000), 0);
        assert!(t.wait("bob", Some(ip), 1000) > 0);
    }
}
