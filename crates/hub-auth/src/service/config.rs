//! The token service's configuration: realm, public URL, lifetimes, and the optional
//! external issuer whose tokens are trusted besides our own.
//!
//! Owns: [`AuthConfig`] and [`ExternalIssuer`] with their defaults. Must not: read the
//! environment or files (the binary crate does and fills these in).

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
    /// How failed password logins slow down further attempts.
    pub throttle: super::throttle::ThrottleConfig,
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
            throttle: super::throttle::ThrottleConfig::default(),
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
