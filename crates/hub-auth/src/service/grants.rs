//! The grants of the token endpoint: password, client credentials and refresh token
//! (with rotation), each authenticating its client and issuing tokens.
//!
//! Owns: parsing a token request, client and password checks, the claims of issued
//! tokens, sessions and their refresh tokens. Must not: verify bearer tokens or manage
//! signing keys (it asks `sign`).

use std::collections::BTreeMap;

use hub_store::auth::{
    ClientRecord, RefreshOutcome, RefreshPresentation, RefreshRecord, UserRecord,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AccessClaims, AuthService, RoleList};
use crate::error::AuthError;
use crate::secrets;

/// Public clients: no secret needed (spec: since 2020.10 the generic client needs none).
/// `odh-generic-client` is the Open Data Hub's name of the same client.
pub const PUBLIC_CLIENTS: &[&str] = &["hub-generic-client", "odh-generic-client"];

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

/// The longest value a token request's field may hold, in bytes (real ones are far
/// shorter: a refresh token is a few hundred bytes).
pub const MAX_FORM_VALUE_BYTES: usize = 8192;

/// The fields a token request is read from (others are ignored, as Keycloak does).
const FORM_FIELDS: &[&str] = &[
    "grant_type",
    "client_id",
    "client_secret",
    "username",
    "password",
    "refresh_token",
    "scope",
];

/// Fields compared as secrets only (hashed, never looked up), so any character may appear.
const SECRET_FIELDS: &[&str] = &["password", "client_secret"];

/// Refuses a field a client could not have meant: over [`MAX_FORM_VALUE_BYTES`], or, for
/// anything looked up or echoed (client ids, user names, tokens, scopes), holding a control
/// character — PostgreSQL cannot even hold a NUL in text, so letting one through turned a
/// typing mistake into a store failure.
pub(crate) fn check_form_value(name: &str, value: &str) -> Result<(), AuthError> {
    let shown: String = name.chars().take(64).collect();
    if value.len() > MAX_FORM_VALUE_BYTES {
        return Err(AuthError::oauth(
            "invalid_request",
            format!("parameter '{shown}' is longer than {MAX_FORM_VALUE_BYTES} bytes"),
        ));
    }
    if SECRET_FIELDS.contains(&name) {
        return Ok(());
    }
    if let Some(position) = value.chars().position(char::is_control) {
        return Err(AuthError::oauth(
            "invalid_request",
            format!(
                "parameter '{shown}' holds a control character at position {}",
                position + 1
            ),
        ));
    }
    Ok(())
}

impl AuthService {
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
        self.token_from(form, basic, None).await
    }

    /// [`AuthService::token`] for a request from `client_ip` (password failures are
    /// throttled per user and per IP).
    pub async fn token_from(
        &self,
        form: &[(String, String)],
        basic: Option<(String, String)>,
        client_ip: Option<std::net::IpAddr>,
    ) -> Result<TokenResponse, AuthError> {
        for (name, value) in form
            .iter()
            .filter(|(k, _)| FORM_FIELDS.contains(&k.as_str()))
        {
            check_form_value(name, value)?;
        }
        let field = |name: &str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty())
        };
        let grant = field("grant_type")
            .ok_or_else(|| AuthError::oauth("invalid_request", "missing parameter: grant_type"))?;
        let (client_id, secret) = match basic {
            Some((id, secret)) => {
                // Basic credentials are checked like the form's fields.
                check_form_value("client_id", &id)?;
                check_form_value("client_secret", &secret)?;
                (Some(id), Some(secret))
            }
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
                let user = self.check_password(username, password, client_ip).await?;
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
        let record = self.inner.repo.client(client_id).await?;
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
        client_ip: Option<std::net::IpAddr>,
    ) -> Result<UserRecord, AuthError> {
        let throttle = &self.inner.logins;
        let wait = throttle.wait(username, client_ip, self.now());
        if wait > 0 {
            tracing::info!(username = %username, ip = ?client_ip, wait, "throttled a password login");
            return Err(AuthError::Throttled { retry_after: wait });
        }
        let user = self.inner.repo.user(username).await?;
        // Bounds the Argon2 work (CPU, tens of MiB each) running at once.
        let _hashing = throttle
            .hashing
            .acquire()
            .await
            .map_err(|e| AuthError::Internal(e.to_string()))?;
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
            (Some(u), true) => {
                throttle.succeeded(username);
                Ok(u)
            }
            _ => {
                throttle.failed(username, client_ip, self.now());
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
        self.inner.repo.refresh_insert(record).await?;
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
            .repo
            .refresh_rotate(
                RefreshPresentation {
                    token_hash: secrets::sha256_hex(presented),
                    client_id: client.to_string(),
                    now,
                },
                Box::new(move |old| RefreshRecord {
                    token_hash: next_hash,
                    issued_at: now,
                    expires_at: (now + lifetime).min(old.session_expires_at),
                    ..old.clone()
                }),
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
            .repo
            .user(&record.username)
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
}
