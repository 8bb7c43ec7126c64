//! The token service's state and logic: configuration, keys, issuing tokens for each
//! grant type, and verifying bearer tokens (own and, optionally, an external issuer's).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hub_store::auth::{ClientRecord, RefreshOutcome, RefreshRecord, SigningKeyRecord, UserRecord};
use hub_store::Store;
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::clock::{Clock, SystemClock};
use crate::error::AuthError;
use crate::keys::{parse_jwks, SigningKey};
use crate::middleware::Principal;
use crate::secrets;

/// Public clients: no secret needed (spec: since 2020.10 the generic client needs none).
/// `odh-generic-client` is the Open Data Hub's name of the same client.
pub const PUBLIC_CLIENTS: &[&str] = &["hub-generic-client", "odh-generic-client"];

/// How many signing keys the store keeps (the active one and its predecessor).
const KEYS_KEPT: usize = 2;
/// Verified tokens remembered (a bigger cache is cleared and starts over).
const CACHE_CAPACITY: usize = 10_000;

/// An issuer whose tokens are trusted besides our own (a Keycloak realm).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalIssuer {
    /// The `iss` value, e.g. `https://auth.opendatahub.com/auth/realms/noi` (a trailing
    /// slash does not matter).
    pub issuer: String,
    /// Where its JWKS is, e.g. `{issuer}/protocol/openid-connect/certs`.
    pub jwks_url: String,
}

#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// Realm name in the paths and the issuer (`hub`).
    pub realm: String,
    /// Public base URL of the token service, without trailing slash (`http://127.0.0.1:8080`).
    pub auth_url: String,
    /// Access token lifetime in seconds (300).
    pub access_token_lifetime: i64,
    /// Refresh token lifetime in seconds, renewed by each rotation (1800).
    pub refresh_token_lifetime: i64,
    /// Longest a login session can be kept alive by refreshing, in seconds (36000).
    pub session_lifetime: i64,
    /// Seconds of clock skew tolerated when checking `exp` (30).
    pub leeway: i64,
    pub external: Option<ExternalIssuer>,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            realm: "hub".into(),
            auth_url: "http://127.0.0.1:8080".into(),
            access_token_lifetime: 300,
            refresh_token_lifetime: 1800,
            session_lifetime: 36_000,
            leeway: 30,
            external: None,
        }
    }
}

impl AuthConfig {
    /// `{auth_url}/auth/realms/{realm}`, the `iss` of our tokens.
    pub fn issuer(&self) -> String {
        format!(
            "{}/auth/realms/{}",
            self.auth_url.trim_end_matches('/'),
            self.realm
        )
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RoleList {
    #[serde(default)]
    pub roles: Vec<String>,
}

/// Claims of an access token, in Keycloak's layout. Unknown claims of external tokens
/// are ignored; `role`/`roles` (top-level role mappers) are read when present.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AccessClaims {
    pub exp: i64,
    #[serde(default)]
    pub iat: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jti: Option<String>,
    pub iss: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typ: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realm_access: Option<RoleList>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_access: Option<BTreeMap<String, RoleList>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Value>,
}

impl AccessClaims {
    /// Every role the token carries: realm roles, client roles of every client, and the
    /// top-level `role`/`roles` claims; sorted, without duplicates.
    pub fn all_roles(&self) -> Vec<String> {
        let mut roles: Vec<String> = Vec::new();
        if let Some(r) = &self.realm_access {
            roles.extend(r.roles.iter().cloned());
        }
        for r in self.resource_access.iter().flat_map(|m| m.values()) {
            roles.extend(r.roles.iter().cloned());
        }
        for v in [&self.roles, &self.role].into_iter().flatten() {
            match v {
                Value::String(s) => roles.push(s.clone()),
                Value::Array(a) => {
                    roles.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
                }
                _ => {}
            }
        }
        roles.sort();
        roles.dedup();
        roles
    }
}

/// How long a process trusts its copy of the signing keys before reading them again.
const KEYS_REREAD: Duration = Duration::from_secs(60);
/// Shortest interval between re-reads caused by tokens with unknown key ids.
const KEYS_REREAD_UNKNOWN: Duration = Duration::from_secs(5);

struct KeySet {
    active: Arc<SigningKey>,
    all: Vec<Arc<SigningKey>>,
    jwks: String,
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

struct ExternalKeys {
    keys: RwLock<Vec<(String, DecodingKey)>>,
    last_fetch: Mutex<Option<Instant>>,
}

struct Inner {
    store: Store,
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
    external: Option<(ExternalIssuer, ExternalKeys)>,
}

/// The token service and verifier. Cheap to clone.
#[derive(Clone)]
pub struct AuthService {
    inner: Arc<Inner>,
}

/// A successful token response (RFC 6749 §5.1, plus Keycloak's extra fields).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub expires_in: i64,
    pub refresh_expires_in: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    pub token_type: String,
    #[serde(rename = "not-before-policy")]
    pub not_before_policy: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_state: Option<String>,
    pub scope: String,
}

/// The authenticated client of a token request.
enum Client {
    Public(String),
    Confidential(ClientRecord),
}

impl Client {
    fn id(&self) -> &str {
        match self {
            Client::Public(id) => id,
            Client::Confidential(c) => &c.client_id,
        }
    }
}

fn trim_issuer(iss: &str) -> &str {
    iss.trim_end_matches('/')
}

fn invalid_token(detail: &str) -> AuthError {
    AuthError::InvalidToken(detail.to_string())
}

impl AuthService {
    pub fn new(store: Store, config: AuthConfig) -> AuthService {
        AuthService::with_clock(store, config, Arc::new(SystemClock))
    }

    pub fn with_clock(store: Store, config: AuthConfig, clock: Arc<dyn Clock>) -> AuthService {
        let external = config.external.clone().map(|e| {
            (
                e,
                ExternalKeys {
                    keys: RwLock::new(Vec::new()),
                    last_fetch: Mutex::new(None),
                },
            )
        });
        AuthService {
            inner: Arc::new(Inner {
                issuer: config.issuer(),
                store,
                config,
                clock,
                keys: RwLock::new(None),
                key_init: tokio::sync::Mutex::new(()),
                keys_read_at: Mutex::new(None),
                unknown_kid_read_at: Mutex::new(None),
                cache: RwLock::new(HashMap::new()),
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

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    fn now(&self) -> i64 {
        self.inner.clock.now()
    }

    /// The signing keys. Several processes may share one store (PostgreSQL), and another
    /// one may generate or rotate a key: the set is read again from the store when it is
    /// older than `KEYS_REREAD`, and at once (see `reread_keys`) for a token signed with
    /// a key this process has not seen.
    async fn keyset(&self) -> Result<Arc<KeySet>, AuthError> {
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
        let set = Arc::new(KeySet::new(ensure_signing_keys(&self.inner.store).await?));
        *self.inner.keys.write().expect("key lock") = Some(set.clone());
        *self.inner.keys_read_at.lock().expect("key time lock") = Some(Instant::now());
        Ok(set)
    }

    /// For a token whose key id is unknown here: read the keys again, at most once per
    /// `KEYS_REREAD_UNKNOWN`, so forged key ids cannot make every request hit the store.
    async fn reread_keys(&self) -> Result<Option<Arc<KeySet>>, AuthError> {
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
            .store
            .auth_signing_keys()
            .await?
            .first()
            .map(|k| k.created_at + 1)
            .unwrap_or(0)
            .max(self.now());
        self.inner
            .store
            .auth_signing_key_insert(
                SigningKeyRecord {
                    kid: kid.clone(),
                    private_der: key.to_der(),
                    created_at,
                },
                KEYS_KEPT,
            )
            .await?;
        let keys = load_keys(&self.inner.store).await?;
        *self.inner.keys.write().expect("key lock") = Some(Arc::new(KeySet::new(keys)));
        *self.inner.keys_read_at.lock().expect("key time lock") = Some(Instant::now());
        tracing::info!(kid = %kid, "rotated the token signing key");
        Ok(kid)
    }

    /// The JWKS document (public keys, newest first).
    pub async fn jwks(&self) -> Result<String, AuthError> {
        Ok(self.keyset().await?.jwks.clone())
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

    async fn sign(&self, claims: &AccessClaims) -> Result<String, AuthError> {
        let keys = self.keyset().await?;
        let header = Header {
            kid: Some(keys.active.kid.clone()),
            typ: Some("JWT".into()),
            ..Header::new(Algorithm::RS256)
        };
        jsonwebtoken::encode(&header, claims, &keys.active.encoding)
            .map_err(|e| AuthError::Internal(format!("signing failed: {e}")))
    }

    /// Access token claims for a subject with roles, issued to `client`.
    fn claims(
        &self,
        sub: &str,
        username: &str,
        client: &str,
        roles: &[String],
        scope: &str,
    ) -> AccessClaims {
        let now = self.now();
        let mut resource = BTreeMap::new();
        resource.insert(
            client.to_string(),
            RoleList {
                roles: roles.to_vec(),
            },
        );
        AccessClaims {
            exp: now + self.inner.config.access_token_lifetime,
            iat: now,
            jti: Some(uuid::Uuid::new_v4().to_string()),
            iss: self.inner.issuer.clone(),
            aud: Some(Value::String("account".into())),
            sub: Some(sub.to_string()),
            typ: Some("Bearer".into()),
            azp: Some(client.to_string()),
            preferred_username: Some(username.to_string()),
            scope: Some(scope.to_string()),
            realm_access: Some(RoleList {
                roles: roles.to_vec(),
            }),
            resource_access: Some(resource),
            roles: None,
            role: None,
        }
    }

    /// Handles one token request: the form fields and an optional `Authorization: Basic`
    /// value (client_secret_basic).
    pub async fn token(
        &self,
        form: &[(String, String)],
        basic: Option<(String, String)>,
    ) -> Result<TokenResponse, AuthError> {
        let field = |name: &str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty())
        };
        let grant = field("grant_type")
            .ok_or_else(|| AuthError::oauth("invalid_request", "missing parameter: grant_type"))?;
        let (client_id, secret) = match basic {
            Some((id, secret)) => (Some(id), Some(secret)),
            None => (
                field("client_id").map(str::to_string),
                field("client_secret").map(str::to_string),
            ),
        };
        let client_id = client_id
            .ok_or_else(|| AuthError::oauth("invalid_client", "missing parameter: client_id"))?;
        let client = self
            .authenticate_client(&client_id, secret.as_deref())
            .await?;
        let scope = field("scope")
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| "profile email".into());
        match grant {
            "password" => {
                let username = field("username").ok_or_else(|| AuthError::oauth("invalid_request", "missing parameter: username"))?;
                let password = field("password").ok_or_else(|| AuthError::oauth("invalid_request", "missing parameter: password"))?;
                let user = self.check_password(username, password).await?;
                self.issue_session(&user, client.id(), &scope).await
            }
            "client_credentials" => {
                let Client::Confidential(record) = &client else {
                    return Err(AuthError::oauth("unauthorized_client", "a public client cannot use the client_credentials grant"));
                };
                let subject = format!("service-account-{}", record.client_id);
                let claims = self.claims(&subject, &subject, &record.client_id, &record.roles, &scope);
                let access_token = self.sign(&claims).await?;
                tracing::info!(client = %record.client_id, grant = "client_credentials", "issued an access token");
                Ok(TokenResponse {
                    access_token,
                    expires_in: self.inner.config.access_token_lifetime,
                    refresh_expires_in: 0,
                    refresh_token: None,
                    token_type: "Bearer".into(),
                    not_before_policy: 0,
                    session_state: None,
                    scope,
                })
            }
            "refresh_token" => {
                let presented = field("refresh_token").ok_or_else(|| AuthError::oauth("invalid_request", "missing parameter: refresh_token"))?;
                self.refresh(presented, client.id()).await
            }
            other => Err(AuthError::oauth(
                "unsupported_grant_type",
                format!("grant_type '{}' is not supported; use password, refresh_token or client_credentials", other.chars().take(64).collect::<String>()),
            )),
        }
    }

    async fn authenticate_client(
        &self,
        client_id: &str,
        secret: Option<&str>,
    ) -> Result<Client, AuthError> {
        if PUBLIC_CLIENTS.contains(&client_id) {
            return Ok(Client::Public(client_id.to_string()));
        }
        let record = self.inner.store.auth_client(client_id).await?;
        let Some(record) = record else {
            return Err(AuthError::oauth("invalid_client", "unknown client"));
        };
        match secret {
            Some(s) if secrets::constant_time_eq(&secrets::sha256_hex(s), &record.secret_hash) => {
                Ok(Client::Confidential(record))
            }
            Some(_) => Err(AuthError::oauth(
                "invalid_client",
                "invalid client credentials",
            )),
            None => Err(AuthError::oauth(
                "invalid_client",
                "this client needs its client_secret",
            )),
        }
    }

    async fn check_password(
        &self,
        username: &str,
        password: &str,
    ) -> Result<UserRecord, AuthError> {
        let user = self.inner.store.auth_user(username).await?;
        let password = password.to_string();
        let phc = user.as_ref().map(|u| u.password_hash.clone());
        let ok = tokio::task::spawn_blocking(move || match phc {
            Some(phc) => secrets::verify_password(&password, &phc),
            None => {
                secrets::verify_password(&password, secrets::dummy_hash());
                false
            }
        })
        .await
        .map_err(|e| AuthError::Internal(e.to_string()))?;
        match (user, ok) {
            (Some(u), true) => Ok(u),
            _ => {
                tracing::info!(username = %username, "rejected a password login");
                Err(AuthError::oauth(
                    "invalid_grant",
                    "Invalid user credentials",
                ))
            }
        }
    }

    async fn issue_session(
        &self,
        user: &UserRecord,
        client: &str,
        scope: &str,
    ) -> Result<TokenResponse, AuthError> {
        let now = self.now();
        let refresh = secrets::random_token();
        let record = RefreshRecord {
            token_hash: secrets::sha256_hex(&refresh),
            family: uuid::Uuid::new_v4().to_string(),
            username: user.username.clone(),
            client_id: client.to_string(),
            scope: scope.to_string(),
            issued_at: now,
            expires_at: now
                + self
                    .inner
                    .config
                    .refresh_token_lifetime
                    .min(self.inner.config.session_lifetime),
            session_expires_at: now + self.inner.config.session_lifetime,
        };
        let claims = self.claims(&user.id, &user.username, client, &user.roles, scope);
        let access_token = self.sign(&claims).await?;
        let family = record.family.clone();
        let refresh_expires_in = record.expires_at - now;
        self.inner.store.auth_refresh_insert(record).await?;
        tracing::info!(username = %user.username, client = %client, grant = "password", "issued tokens");
        Ok(self.session_response(access_token, refresh, refresh_expires_in, family, scope))
    }

    fn session_response(
        &self,
        access_token: String,
        refresh: String,
        refresh_expires_in: i64,
        family: String,
        scope: &str,
    ) -> TokenResponse {
        TokenResponse {
            access_token,
            expires_in: self.inner.config.access_token_lifetime,
            refresh_expires_in,
            refresh_token: Some(refresh),
            token_type: "Bearer".into(),
            not_before_policy: 0,
            session_state: Some(family),
            scope: scope.to_string(),
        }
    }

    async fn refresh(&self, presented: &str, client: &str) -> Result<TokenResponse, AuthError> {
        let now = self.now();
        let next = secrets::random_token();
        let next_hash = secrets::sha256_hex(&next);
        let lifetime = self.inner.config.refresh_token_lifetime;
        let outcome = self
            .inner
            .store
            .auth_refresh_rotate(
                secrets::sha256_hex(presented),
                client.to_string(),
                now,
                move |old| RefreshRecord {
                    token_hash: next_hash,
                    issued_at: now,
                    expires_at: (now + lifetime).min(old.session_expires_at),
                    ..old.clone()
                },
            )
            .await?;
        let record = match outcome {
            RefreshOutcome::Rotated(r) => r,
            RefreshOutcome::Reused => {
                tracing::warn!(client = %client, "a refresh token was used twice; its session is revoked");
                return Err(AuthError::oauth(
                    "invalid_grant",
                    "refresh token was already used; the session is revoked",
                ));
            }
            RefreshOutcome::Invalid => {
                return Err(AuthError::oauth(
                    "invalid_grant",
                    "refresh token is invalid, expired or revoked",
                ))
            }
        };
        let user = self
            .inner
            .store
            .auth_user(&record.username)
            .await?
            .ok_or_else(|| {
                AuthError::oauth("invalid_grant", "the user of this session no longer exists")
            })?;
        let claims = self.claims(&user.id, &user.username, client, &user.roles, &record.scope);
        let access_token = self.sign(&claims).await?;
        tracing::info!(username = %user.username, client = %client, grant = "refresh_token", "refreshed tokens");
        Ok(self.session_response(
            access_token,
            next,
            record.expires_at - now,
            record.family,
            &record.scope,
        ))
    }

    /// Verifies a bearer token: signature (RS256, key by `kid`), issuer (ours or the
    /// configured external one), `exp` against the clock (with leeway), `typ` if present.
    pub async fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        let now = self.now();
        let leeway = self.inner.config.leeway;
        if let Some((p, exp)) = self.inner.cache.read().expect("cache lock").get(token) {
            if *exp + leeway >= now {
                return Ok(p.clone());
            }
            return Err(invalid_token("the token has expired"));
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid_token("the token is not a well-formed JWT"))?;
        if header.alg != Algorithm::RS256 {
            return Err(invalid_token("the token is not signed with RS256"));
        }
        let iss = peek_issuer(token)
            .ok_or_else(|| invalid_token("the token is not a well-formed JWT"))?;
        let kid = header.kid.unwrap_or_default();
        let key = if trim_issuer(&iss) == trim_issuer(&self.inner.issuer) {
            let find = |keys: &KeySet| {
                keys.all
                    .iter()
                    .find(|k| k.kid == kid)
                    .or(if kid.is_empty() {
                        Some(&keys.active)
                    } else {
                        None
                    })
                    .map(|k| k.decoding.clone())
            };
            let mut key = find(&*self.keyset().await?);
            if key.is_none() {
                // Perhaps another process sharing the store made this key.
                if let Some(keys) = self.reread_keys().await? {
                    key = find(&keys);
                }
            }
            key.ok_or_else(|| invalid_token("the token was signed with an unknown key"))?
        } else if let Some((ext, keys)) = self
            .inner
            .external
            .as_ref()
            .filter(|(e, _)| trim_issuer(&e.issuer) == trim_issuer(&iss))
        {
            self.external_key(ext, keys, &kid).await?
        } else {
            return Err(invalid_token("the token's issuer is not trusted"));
        };
        let mut validation = Validation::new(Algorithm::RS256);
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["exp", "iss"]);
        validation.set_issuer(&[iss.as_str()]);
        let data =
            jsonwebtoken::decode::<AccessClaims>(token, &key, &validation).map_err(|e| match e
                .kind()
            {
                jsonwebtoken::errors::ErrorKind::InvalidSignature => {
                    invalid_token("the token's signature does not verify")
                }
                _ => invalid_token("the token's claims are not acceptable"),
            })?;
        let claims = data.claims;
        if claims.exp + leeway < now {
            return Err(invalid_token("the token has expired"));
        }
        if claims
            .typ
            .as_deref()
            .is_some_and(|t| !t.eq_ignore_ascii_case("Bearer"))
        {
            return Err(invalid_token("the token is not an access token"));
        }
        let roles = claims.all_roles();
        let principal = Principal {
            subject: claims
                .sub
                .clone()
                .or_else(|| claims.preferred_username.clone())
                .unwrap_or_default(),
            username: claims.preferred_username.clone(),
            roles: roles.into(),
            client: claims.azp.clone(),
        };
        let mut cache = self.inner.cache.write().expect("cache lock");
        if cache.len() >= CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(token.to_string(), (principal.clone(), claims.exp));
        Ok(principal)
    }

    async fn external_key(
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

/// The `iss` claim of a JWT, read before its signature is checked (to choose the keys).
fn peek_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    v.get("iss")?.as_str().map(str::to_string)
}

async fn load_keys(store: &Store) -> Result<Vec<SigningKey>, AuthError> {
    store
        .auth_signing_keys()
        .await?
        .iter()
        .map(|r| SigningKey::from_der(&r.private_der).map_err(AuthError::Internal))
        .collect()
}

/// Loads the signing keys, generating and storing the first one if the store has none.
/// The server calls this at start so the first token request does not wait for it.
pub async fn ensure_signing_keys(store: &Store) -> Result<Vec<SigningKey>, AuthError> {
    let keys = load_keys(store).await?;
    if !keys.is_empty() {
        return Ok(keys);
    }
    let started = Instant::now();
    let key = tokio::task::spawn_blocking(SigningKey::generate)
        .await
        .map_err(|e| AuthError::Internal(e.to_string()))?;
    store
        .auth_signing_key_insert(
            SigningKeyRecord {
                kid: key.kid.clone(),
                private_der: key.to_der(),
                created_at: SystemClock.now(),
            },
            KEYS_KEPT,
        )
        .await?;
    tracing::info!(kid = %key.kid, seconds = started.elapsed().as_secs_f64(), "generated the token signing key");
    load_keys(store).await
}

/// Stores `key` as the signing key of a store that has none (tests share one key
/// instead of generating one per store).
pub async fn install_signing_key(store: &Store, key: &SigningKey) -> Result<(), AuthError> {
    if load_keys(store).await?.is_empty() {
        store
            .auth_signing_key_insert(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use std::sync::OnceLock;

    fn shared_key() -> &'static SigningKey {
        static KEY: OnceLock<SigningKey> = OnceLock::new();
        KEY.get_or_init(SigningKey::generate)
    }

    async fn service(clock: Arc<ManualClock>) -> (AuthService, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_for_tests(dir.path()).unwrap();
        install_signing_key(&store, shared_key()).await.unwrap();
        let user = UserRecord {
            id: "u-1".into(),
            username: "ann".into(),
            password_hash: secrets::hash_password("pw"),
            roles: vec!["DataReader".into()],
            created_at: 0,
        };
        store.auth_user_add(user).await.unwrap();
        let client = ClientRecord {
            client_id: "svc".into(),
            secret_hash: secrets::sha256_hex("s3cret"),
            description: String::new(),
            roles: vec!["Event_Create".into()],
            created_at: 0,
        };
        store.auth_client_add(client).await.unwrap();
        (
            AuthService::with_clock(store, AuthConfig::default(), clock),
            dir,
        )
    }

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[tokio::test]
    async fn password_tokens_verify_until_they_expire() {
        let clock = Arc::new(ManualClock::new(1_700_000_000));
        let (svc, _dir) = service(clock.clone()).await;
        let r = svc
            .token(
                &form(&[
                    ("grant_type", "password"),
                    ("username", "ann"),
                    ("password", "pw"),
                    ("client_id", "hub-generic-client"),
                ]),
                None,
            )
            .await
            .unwrap();
        let p = svc.verify(&r.access_token).await.unwrap();
        assert_eq!(p.subject, "u-1");
        assert_eq!(p.client.as_deref(), Some("hub-generic-client"));
        assert!(p.has_role("datareader"));
        clock.advance(300 + 30);
        assert!(
            svc.verify(&r.access_token).await.is_ok(),
            "within the leeway"
        );
        clock.advance(1);
        assert!(matches!(
            svc.verify(&r.access_token).await,
            Err(AuthError::InvalidToken(_))
        ));
    }

    #[tokio::test]
    async fn client_credentials_need_the_secret_and_carry_client_roles() {
        let clock = Arc::new(ManualClock::new(1_700_000_000));
        let (svc, _dir) = service(clock).await;
        let r = svc
            .token(
                &form(&[("grant_type", "client_credentials")]),
                Some(("svc".into(), "s3cret".into())),
            )
            .await
            .unwrap();
        assert!(r.refresh_token.is_none());
        assert_eq!(r.refresh_expires_in, 0);
        let p = svc.verify(&r.access_token).await.unwrap();
        assert_eq!(p.subject, "service-account-svc");
        assert!(p.has_role("Event_Create"));
        let wrong = svc
            .token(
                &form(&[
                    ("grant_type", "client_credentials"),
                    ("client_id", "svc"),
                    ("client_secret", "nope"),
                ]),
                None,
            )
            .await;
        assert!(matches!(
            wrong,
            Err(AuthError::OAuth {
                error: "invalid_client",
                ..
            })
        ));
        let public = svc
            .token(
                &form(&[
                    ("grant_type", "client_credentials"),
                    ("client_id", "odh-generic-client"),
                ]),
                None,
            )
            .await;
        assert!(matches!(
            public,
            Err(AuthError::OAuth {
                error: "unauthorized_client",
                ..
            })
        ));
    }

    /// Two services over one store stand for two processes sharing a database: a key
    /// rotated by one signs tokens that the other verifies without a restart.
    #[tokio::test]
    async fn a_key_rotated_by_another_process_verifies_at_once() {
        let clock = Arc::new(ManualClock::new(1_700_000_000));
        let (first, _dir) = service(clock.clone()).await;
        let second =
            AuthService::with_clock(first.inner.store.clone(), AuthConfig::default(), clock);
        // The second process has read the key set before the rotation.
        let before = second.jwks().await.unwrap();
        let kid = first.rotate_signing_key().await.unwrap();
        let r = first
            .token(
                &form(&[("grant_type", "client_credentials")]),
                Some(("svc".into(), "s3cret".into())),
            )
            .await
            .unwrap();
        assert_eq!(
            jsonwebtoken::decode_header(&r.access_token)
                .unwrap()
                .kid
                .as_deref(),
            Some(kid.as_str())
        );
        assert!(!before.contains(&kid));
        let p = second
            .verify(&r.access_token)
            .await
            .expect("the other process reads the new key");
        assert_eq!(p.subject, "service-account-svc");
        assert!(
            second.jwks().await.unwrap().contains(&kid),
            "and publishes it"
        );
    }

    #[tokio::test]
    async fn rotation_keeps_the_previous_key_in_the_jwks() {
        let clock = Arc::new(ManualClock::new(1_700_000_000));
        let (svc, _dir) = service(clock).await;
        let before = svc
            .token(
                &form(&[
                    ("grant_type", "client_credentials"),
                    ("client_id", "svc"),
                    ("client_secret", "s3cret"),
                ]),
                None,
            )
            .await
            .unwrap();
        let kid = svc.rotate_signing_key().await.unwrap();
        let jwks: Value = serde_json::from_str(&svc.jwks().await.unwrap()).unwrap();
        let kids: Vec<&str> = jwks["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kid"].as_str().unwrap())
            .collect();
        assert_eq!(kids, [kid.as_str(), shared_key().kid.as_str()]);
        assert!(svc.verify(&before.access_token).await.is_ok());
        let after = svc
            .token(
                &form(&[
                    ("grant_type", "client_credentials"),
                    ("client_id", "svc"),
                    ("client_secret", "s3cret"),
                ]),
                None,
            )
            .await
            .unwrap();
        assert_eq!(
            jsonwebtoken::decode_header(&after.access_token)
                .unwrap()
                .kid
                .as_deref(),
            Some(kid.as_str())
        );
    }

    #[test]
    fn roles_come_from_every_claim_keycloak_uses() {
        let claims: AccessClaims = serde_json::from_value(json!({
            "exp": 1, "iss": "x", "realm_access": {"roles": ["b", "a"]},
            "resource_access": {"odh-mobility-v2": {"roles": ["BDP_A22"]}, "account": {"roles": ["a"]}},
            "role": "ODH_ROLE_BASIC", "aud": ["account", "x"]
        }))
        .unwrap();
        assert_eq!(claims.all_roles(), ["BDP_A22", "ODH_ROLE_BASIC", "a", "b"]);
    }
}
