//! The token service and verifier, [`AuthService`]: its state, and its parts by concern
//! in the submodules: [`grants`] (issuing tokens for each grant type), [`verify`]
//! (checking bearer tokens), [`external`] (the external issuer's JWKS),
//! [`signing_keys`] (key set, signing, rotation); [`config`] and [`claims`] are the
//! types they share.
//!
//! Owns: the service's shared state and its construction. Must not: touch storage
//! other than through the [`AuthRepo`] it is given, or shape HTTP responses (`routes`).

mod claims;
mod config;
mod external;
mod grants;
mod signing_keys;
#[cfg(test)]
mod tests;
pub mod throttle;
mod verify;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use hub_store::auth::AuthRepo;
use serde_json::{json, Value};

pub use claims::{AccessClaims, RoleList};
pub use config::{AuthConfig, ExternalIssuer};
use external::ExternalKeys;
pub use grants::{TokenResponse, PUBLIC_CLIENTS};
use signing_keys::KeySet;
pub use signing_keys::{ensure_signing_keys, install_signing_key};

use crate::clock::{Clock, SystemClock};
use crate::middleware::Principal;

struct Inner {
    /// The token service's tables.
    repo: Arc<dyn AuthRepo>,
    config: AuthConfig,
    issuer: String,
    clock: Arc<dyn Clock>,
    keys: RwLock<Option<Arc<KeySet>>>,
    key_init: tokio::sync::Mutex<()>,
    /// When the key set was last read from the store (see `keyset`).
    keys_read_at: Mutex<Option<Instant>>,
    /// When a token with an unknown key id last made us read the keys (see `reread_keys`).
    unknown_kid_read_at: Mutex<Option<Instant>>,
    cache: RwLock<HashMap<String, (Principal, i64)>>,
    /// Failed password logins and the Argon2 semaphore (see `throttle`).
    logins: throttle::LoginThrottle,
    external: Option<(ExternalIssuer, ExternalKeys)>,
}

/// The token service and verifier. Cheap to clone.
#[derive(Clone)]
pub struct AuthService {
    inner: Arc<Inner>,
}

impl AuthService {
    pub fn new(repo: Arc<dyn AuthRepo>, config: AuthConfig) -> AuthService {
        AuthService::with_clock(repo, config, Arc::new(SystemClock))
    }

    pub fn with_clock(
        repo: Arc<dyn AuthRepo>,
        config: AuthConfig,
        clock: Arc<dyn Clock>,
    ) -> AuthService {
        let external = config.external.clone().map(|e| {
            (
                e,
                ExternalKeys {
                    keys: RwLock::new(Vec::new()),
                    last_fetch: Mutex::new(None),
                },
            )
        });
        let logins = throttle::LoginThrottle::new(config.throttle);
        AuthService {
            inner: Arc::new(Inner {
                issuer: config.issuer(),
                repo,
                config,
                clock,
                keys: RwLock::new(None),
                key_init: tokio::sync::Mutex::new(()),
                keys_read_at: Mutex::new(None),
                unknown_kid_read_at: Mutex::new(None),
                cache: RwLock::new(HashMap::new()),
                logins,
                external,
            }),
        }
    }

    pub fn config(&self) -> &AuthConfig {
        &self.inner.config
    }

    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// The token service's tables this service reads and writes.
    pub fn repo(&self) -> &Arc<dyn AuthRepo> {
        &self.inner.repo
    }

    fn now(&self) -> i64 {
        self.inner.clock.now()
    }

    /// The OpenID Connect discovery document.
    pub fn discovery(&self) -> Value {
        let iss = &self.inner.issuer;
        json!({
            "issuer": iss,
            "token_endpoint": format!("{iss}/protocol/openid-connect/token"),
            "jwks_uri": format!("{iss}/protocol/openid-connect/certs"),
            "grant_types_supported": ["password", "refresh_token", "client_credentials"],
            "response_types_supported": ["token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
            "claims_supported": ["iss", "sub", "exp", "iat", "azp", "preferred_username", "realm_access", "resource_access", "scope"],
            "scopes_supported": ["openid", "profile", "email"],
        })
    }
}
