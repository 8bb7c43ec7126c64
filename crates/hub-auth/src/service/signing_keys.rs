//! The token service's signing keys: this process's copy of the key set (re-read from
//! the store so keys made by another process sharing it are seen), signing with the
//! active key, the JWKS, and rotation.
//!
//! Owns: when keys are read, generated, rotated and how many are kept. Must not: decide
//! which tokens to issue, or verify tokens (it only finds keys for `verify`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use hub_store::auth::{AuthRepo, SigningKeyRecord};
use jsonwebtoken::{Algorithm, Header};
use serde_json::json;

use super::{AccessClaims, AuthService};
use crate::clock::{Clock, SystemClock};
use crate::error::AuthError;
use crate::keys::SigningKey;

/// How many signing keys the store keeps (the active one and its predecessor).
const KEYS_KEPT: usize = 2;
/// How long a process trusts its copy of the signing keys before reading them again.
const KEYS_REREAD: Duration = Duration::from_secs(60);
/// Shortest interval between re-reads caused by tokens with unknown key ids.
const KEYS_REREAD_UNKNOWN: Duration = Duration::from_secs(5);

pub(super) struct KeySet {
    pub(super) active: Arc<SigningKey>,
    pub(super) all: Vec<Arc<SigningKey>>,
    pub(super) jwks: String,
}

impl KeySet {
    fn new(keys: Vec<SigningKey>) -> KeySet {
        let all: Vec<Arc<SigningKey>> = keys.into_iter().map(Arc::new).collect();
        let jwks = json!({"keys": all.iter().map(|k| k.jwk()).collect::<Vec<_>>()}).to_string();
        KeySet {
            active: all[0].clone(),
            all,
            jwks,
        }
    }
}

impl AuthService {
    /// The signing keys. Several processes may share one store (PostgreSQL), and another
    /// one may generate or rotate a key: the set is read again from the store when it is
    /// older than `KEYS_REREAD`, and at once (see `reread_keys`) for a token signed with
    /// a key this process has not seen.
    pub(super) async fn keyset(&self) -> Result<Arc<KeySet>, AuthError> {
        let fresh = self
            .inner
            .keys_read_at
            .lock()
            .expect("key time lock")
            .is_some_and(|t| t.elapsed() < KEYS_REREAD);
        if fresh {
            if let Some(k) = self.inner.keys.read().expect("key lock").as_ref() {
                return Ok(k.clone());
            }
        }
        self.read_keys(KEYS_REREAD).await
    }

    /// Reads the key set from the store unless another task did within `max_age`.
    async fn read_keys(&self, max_age: Duration) -> Result<Arc<KeySet>, AuthError> {
        let _guard = self.inner.key_init.lock().await;
        let fresh = self
            .inner
            .keys_read_at
            .lock()
            .expect("key time lock")
            .is_some_and(|t| t.elapsed() < max_age);
        if fresh {
            if let Some(k) = self.inner.keys.read().expect("key lock").as_ref() {
                return Ok(k.clone());
            }
        }
        let set = Arc::new(KeySet::new(ensure_signing_keys(&*self.inner.repo).await?));
        *self.inner.keys.write().expect("key lock") = Some(set.clone());
        *self.inner.keys_read_at.lock().expect("key time lock") = Some(Instant::now());
        Ok(set)
    }

    /// For a token whose key id is unknown here: read the keys again, at most once per
    /// `KEYS_REREAD_UNKNOWN`, so forged key ids cannot make every request hit the store.
    pub(super) async fn reread_keys(&self) -> Result<Option<Arc<KeySet>>, AuthError> {
        {
            let mut last = self
                .inner
                .unknown_kid_read_at
                .lock()
                .expect("key time lock");
            if last.is_some_and(|t| t.elapsed() < KEYS_REREAD_UNKNOWN) {
                return Ok(None);
            }
            *last = Some(Instant::now());
        }
        self.read_keys(Duration::ZERO).await.map(Some)
    }

    /// Generates a new signing key, which signs from now on; the previous one stays in
    /// the JWKS so tokens it signed keep verifying until they expire.
    pub async fn rotate_signing_key(&self) -> Result<String, AuthError> {
        let _guard = self.inner.key_init.lock().await;
        let key = tokio::task::spawn_blocking(SigningKey::generate)
            .await
            .map_err(|e| AuthError::Internal(e.to_string()))?;
        let kid = key.kid.clone();
        let created_at = self
            .inner
            .repo
            .signing_keys()
            .await?
            .first()
            .map(|k| k.created_at + 1)
            .unwrap_or(0)
            .max(self.now());
        self.inner
            .repo
            .signing_key_insert(
                SigningKeyRecord {
                    kid: kid.clone(),
                    private_der: key.to_der(),
                    created_at,
                },
                KEYS_KEPT,
            )
            .await?;
        let keys = load_keys(&*self.inner.repo).await?;
        *self.inner.keys.write().expect("key lock") = Some(Arc::new(KeySet::new(keys)));
        *self.inner.keys_read_at.lock().expect("key time lock") = Some(Instant::now());
        tracing::info!(kid = %kid, "rotated the token signing key");
        Ok(kid)
    }

    /// The JWKS document (public keys, newest first).
    pub async fn jwks(&self) -> Result<String, AuthError> {
        Ok(self.keyset().await?.jwks.clone())
    }

    pub(super) async fn sign(&self, claims: &AccessClaims) -> Result<String, AuthError> {
        let keys = self.keyset().await?;
        let header = Header {
            kid: Some(keys.active.kid.clone()),
            typ: Some("JWT".into()),
            ..Header::new(Algorithm::RS256)
        };
        jsonwebtoken::encode(&header, claims, &keys.active.encoding)
            .map_err(|e| AuthError::Internal(format!("signing failed: {e}")))
    }
}

async fn load_keys(repo: &dyn AuthRepo) -> Result<Vec<SigningKey>, AuthError> {
    repo.signing_keys()
        .await?
        .iter()
        .map(|r| SigningKey::from_der(&r.private_der).map_err(AuthError::Internal))
        .collect()
}

/// Loads the signing keys, generating and storing the first one if the store has none.
/// The server calls this at start so the first token request does not wait for it.
pub async fn ensure_signing_keys(repo: &dyn AuthRepo) -> Result<Vec<SigningKey>, AuthError> {
    let keys = load_keys(repo).await?;
    if !keys.is_empty() {
        return Ok(keys);
    }
    let started = Instant::now();
    let key = tokio::task::spawn_blocking(SigningKey::generate)
        .await
        .map_err(|e| AuthError::Internal(e.to_string()))?;
    repo.signing_key_insert(
        SigningKeyRecord {
            kid: key.kid.clone(),
            private_der: key.to_der(),
            created_at: SystemClock.now(),
        },
        KEYS_KEPT,
    )
    .await?;
    tracing::info!(kid = %key.kid, seconds = started.elapsed().as_secs_f64(), "generated the token signing key");
    load_keys(repo).await
}

/// Stores `key` as the signing key of a store that has none (tests share one key
/// instead of generating one per store).
pub async fn install_signing_key(repo: &dyn AuthRepo, key: &SigningKey) -> Result<(), AuthError> {
    if load_keys(repo).await?.is_empty() {
        repo.signing_key_insert(
            SigningKeyRecord {
                kid: key.kid.clone(),
                private_der: key.to_der(),
                created_at: 0,
            },
            KEYS_KEPT,
        )
        .await?;
    }
    Ok(())
}
