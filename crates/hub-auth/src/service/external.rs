//! The external issuer's keys (a Keycloak realm): its JWKS, fetched when a token names
//! a key id not seen yet, at most every ten seconds.
//!
//! Owns: fetching and caching the external JWKS. Must not: trust a token (`verify`
//! decides) or reach any URL but the configured JWKS.

use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::DecodingKey;

use super::verify::invalid_token;
use super::{AuthService, ExternalIssuer};
use crate::error::AuthError;
use crate::keys::parse_jwks;

pub(super) struct ExternalKeys {
    pub(super) keys: RwLock<Vec<(String, DecodingKey)>>,
    pub(super) last_fetch: Mutex<Option<Instant>>,
}

impl AuthService {
    pub(super) async fn external_key(
        &self,
        ext: &ExternalIssuer,
        keys: &ExternalKeys,
        kid: &str,
    ) -> Result<DecodingKey, AuthError> {
        let find = |keys: &ExternalKeys| {
            let list = keys.keys.read().expect("jwks lock");
            list.iter()
                .find(|(k, _)| k == kid || (kid.is_empty() && list.len() == 1))
                .map(|(_, key)| key.clone())
        };
        if let Some(k) = find(keys) {
            return Ok(k);
        }
        // Unknown kid: fetch the JWKS again, at most every ten seconds.
        let due = {
            let mut last = keys.last_fetch.lock().expect("fetch lock");
            let due = last.is_none_or_elapsed(Duration::from_secs(10));
            if due {
                *last = Some(Instant::now());
            }
            due
        };
        if due {
            let url = ext.jwks_url.clone();
            let fetched = tokio::task::spawn_blocking(move || fetch_jwks(&url))
                .await
                .map_err(|e| AuthError::Internal(e.to_string()))?;
            match fetched {
                Ok(list) => *keys.keys.write().expect("jwks lock") = list,
                Err(e) => {
                    tracing::warn!(url = %ext.jwks_url, error = %e, "cannot fetch the external issuer's JWKS")
                }
            }
        }
        find(keys).ok_or_else(|| invalid_token("the token was signed with an unknown key"))
    }
}

trait ElapsedExt {
    fn is_none_or_elapsed(&self, d: Duration) -> bool;
}

impl ElapsedExt for Option<Instant> {
    fn is_none_or_elapsed(&self, d: Duration) -> bool {
        self.is_none_or(|t| t.elapsed() >= d)
    }
}

fn fetch_jwks(url: &str) -> Result<Vec<(String, DecodingKey)>, String> {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(5))
        .build();
    let text = agent
        .get(url)
        .call()
        .map_err(|e| e.to_string())?
        .into_string()
        .map_err(|e| e.to_string())?;
    parse_jwks(&text)
}
