//! # hub-auth
//!
//! The token service and the bearer authentication of every Hub API.
//!
//! - A Keycloak-compatible OAuth 2.0 / OpenID Connect token service on the server's own
//!   port: `POST /auth/realms/{realm}/protocol/openid-connect/token` (grant types
//!   `password`, `refresh_token`, `client_credentials`), the JWKS at `…/certs` and the
//!   discovery document `/auth/realms/{realm}/.well-known/openid-configuration`.
//! - RS256 access tokens with Keycloak's claim layout (`realm_access.roles`,
//!   `resource_access.{client}.roles`, `azp`, `preferred_username`), opaque refresh tokens
//!   stored hashed, rotated on use and revoked (with their whole session) when reused.
//! - [`authenticate`], an axum middleware that turns `Authorization: Bearer …` into a
//!   [`Principal`] in the request extensions (no header = anonymous, a bad token = 401),
//!   trusting tokens of this service and, optionally, of one external issuer by its JWKS.
//! - [`policy`]: the role checks the API crates ask (closed data, writes).
//!
//! Owns: token formats, password and secret hashing (Argon2 for passwords, SHA-256 for
//! generated high-entropy secrets and refresh tokens), signing keys, the clock
//! ([`Clock`], injectable for tests). Must not: log a secret or a token, or decide what a
//! role means for a dataset beyond the helpers in [`policy`].

mod clock;
pub mod demo;
mod error;
mod keys;
mod middleware;
pub mod openapi;
pub mod policy;
mod routes;
pub mod secrets;
mod service;

pub use clock::{Clock, ManualClock, SystemClock};
pub use error::AuthError;
pub use keys::SigningKey;
pub use middleware::{authenticate, bearer_token, Principal};
pub use routes::router;
/// Limits of password-login throttling (for operators' documentation and tests).
pub use service::throttle;
pub use service::{
    ensure_signing_keys, install_signing_key, AccessClaims, AuthConfig, AuthService,
    ExternalIssuer, RoleList, TokenResponse, PUBLIC_CLIENTS,
};
