//! Throttling of the password grant: after a few failed logins for a user name (or from
//! one client IP) further attempts wait, doubling up to a ceiling; and at most
//! [`ThrottleConfig::max_concurrent_hashes`] Argon2 verifications run at once, which
//! bounds the CPU and memory that concurrent grants can take.
//!
//! Owns: the failure counts, [`login_wait`], the hashing semaphore and the defaults of
//! [`ThrottleConfig`]. Must not: check passwords or issue tokens (grants does).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// How the password grant is throttled (all configurable; see the binary's `Config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottleConfig {
    /// Failed logins for one user name that cost nothing (typos).
    pub free_failures_per_user: u32,
    /// Failed logins from one client IP that cost nothing (shared addresses, NAT).
    pub free_failures_per_ip: u32,
    /// The longest wait, in seconds, however many failures.
    pub max_wait_secs: u32,
    /// Argon2 verifications allowed at the same time (each takes tens of MiB).
    pub max_concurrent_hashes: u32,
}

impl Default for ThrottleConfig {
    fn default() -> Self {
        ThrottleConfig {
            free_failures_per_user: 5,
            free_failures_per_ip: 20,
            max_wait_secs: 300,
            max_concurrent_hashes: 4,
        }
    }
}

/// Failure records kept before the oldest settled ones are forgotten.
const MAX_RECORDS: usize = 100_000;

/// Seconds still to wait after `failures` failures, the last at `last_failure`, at `now`,
/// when `free` failures are allowed and waits are capped at `max_wait` seconds: 0, or
/// 2^(failures − free) capped at `max_wait`, counted from the last failure.
pub fn login_wait(failures: u32, free: u32, max_wait: u32, last_failure: i64, now: i64) -> u64 {
    if failures < free.max(1) {
        return 0;
    }
    let exponent = (failures - free.max(1)).min(16);
    let wait = (1i64 << exponent).min(i64::from(max_wait));
    u64::try_from(last_failure + wait - now).unwrap_or(0)
}

/// Failure counts by user and by IP, and the hashing semaphore.
pub(crate) struct LoginThrottle {
    config: ThrottleConfig,
    failures: Mutex<HashMap<String, (u32, i64)>>,
    pub(crate) hashing: tokio::sync::Semaphore,
}

impl Default for LoginThrottle {
    fn default() -> Self {
        LoginThrottle::new(ThrottleConfig::default())
    }
}

impl LoginThrottle {
    pub(crate) fn new(config: ThrottleConfig) -> Self {
        LoginThrottle {
            config,
            failures: Mutex::default(),
            // At least one check at a time, or no login could ever succeed.
            hashing: tokio::sync::Semaphore::new(config.max_concurrent_hashes.max(1) as usize),
        }
    }

    fn keys(&self, username: &str, ip: Option<IpAddr>) -> Vec<(String, u32)> {
        let mut keys = vec![(
            format!("user:{}", username.to_lowercase()),
            self.config.free_failures_per_user,
        )];
        if let Some(ip) = ip {
            keys.push((format!("ip:{ip}"), self.config.free_failures_per_ip));
        }
        keys
    }

    /// Seconds this attempt must still wait (0: go ahead).
    pub(crate) fn wait(&self, username: &str, ip: Option<IpAddr>, now: i64) -> u64 {
        let failures = self.failures.lock().expect("throttle lock");
        self.keys(username, ip)
            .iter()
            .filter_map(|(key, free)| {
                failures
                    .get(key)
                    .map(|(n, last)| login_wait(*n, *free, self.config.max_wait_secs, *last, now))
            })
            .max()
            .unwrap_or(0)
    }

    pub(crate) fn failed(&self, username: &str, ip: Option<IpAddr>, now: i64) {
        let mut failures = self.failures.lock().expect("throttle lock");
        if failures.len() >= MAX_RECORDS {
            let max_wait = i64::from(self.config.max_wait_secs);
            failures.retain(|_, (_, last)| now - *last < max_wait);
        }
        for (key, _) in self.keys(username, ip) {
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
            (0, 5, 300, 0, 0, 0),
            (4, 5, 300, 100, 100, 0),
            (5, 5, 300, 100, 100, 1),
            (5, 5, 300, 100, 101, 0),
            (7, 5, 300, 100, 100, 4),
            (7, 5, 300, 100, 102, 2),
            (30, 5, 300, 100, 100, 300),
            (u32::MAX, 5, 300, 100, 100, 300),
            (1, 0, 300, 100, 100, 1),
            (30, 5, 60, 100, 100, 60),
            (9, 5, 0, 100, 100, 0),
        ];
        for (failures, free, max_wait, last, now, expected) in cases {
            assert_eq!(
                login_wait(failures, free, max_wait, last, now),
                expected,
                "{failures} {free} {max_wait} {last} {now}"
            );
        }
    }

    #[test]
    fn success_clears_the_user_but_not_the_ip() {
        let t = LoginThrottle::default();
        let ip: IpAddr = [10, 0, 0, 1].into();
        for _ in 0..ThrottleConfig::default().free_failures_per_ip {
            t.failed("ann", Some(ip), 1000);
        }
        assert!(t.wait("ann", None, 1000) > 0);
        t.succeeded("Ann");
        assert_eq!(t.wait("ann", None, 1000), 0);
        assert!(t.wait("bob", Some(ip), 1000) > 0);
    }
}
