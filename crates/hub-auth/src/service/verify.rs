//! Verifying bearer tokens: our own (by key id, re-reading the key set for an unknown
//! one) and the external issuer's, with a cache of verified tokens.
//!
//! Owns: which tokens are accepted and the principal they stand for. Must not: issue
//! tokens, or fetch keys itself (it asks `signing_keys` and `external`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::Value;

use super::{AccessClaims, AuthService, KeySet};
use crate::error::AuthError;
use crate::middleware::Principal;

/// Verified tokens remembered (a bigger cache is cleared and starts over).
const CACHE_CAPACITY: usize = 10_000;

fn trim_issuer(iss: &str) -> &str {
    iss.trim_end_matches('/')
}

pub(super) fn invalid_token(detail: &str) -> AuthError {
    AuthError::InvalidToken(detail.to_string())
}

impl AuthService {
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
        let not_before = peek_claim(token, "nbf").and_then(|v| v.as_i64());
        let issued_at = (claims.iat != 0).then_some(claims.iat);
        validity_window(claims.exp, not_before, issued_at, now, leeway).map_err(invalid_token)?;
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
}

/// Whether a token is valid at `now`: not expired (`exp`), already valid (`nbf`) and not
/// issued in the future (`iat`), each with `leeway` seconds for clock skew. A token
/// dated ahead of our clock is refused: it was forged or minted by a clock we must not
/// trust, and accepting it would stretch its lifetime.
pub(super) fn validity_window(
    exp: i64,
    not_before: Option<i64>,
    issued_at: Option<i64>,
    now: i64,
    leeway: i64,
) -> Result<(), &'static str> {
    if exp.saturating_add(leeway) < now {
        return Err("the token has expired");
    }
    if not_before.is_some_and(|nbf| nbf > now.saturating_add(leeway)) {
        return Err("the token is not valid yet");
    }
    if issued_at.is_some_and(|iat| iat > now.saturating_add(leeway)) {
        return Err("the token is issued in the future");
    }
    Ok(())
}

/// The `iss` claim of a JWT, read before its signature is checked (to choose the keys).
fn peek_issuer(token: &str) -> Option<String> {
    peek_claim(token, "iss")?.as_str().map(str::to_string)
}

/// One claim of a JWT's payload, without checking anything (callers verify first or
/// only use it to choose keys).
fn peek_claim(token: &str, name: &str) -> Option<Value> {
    let payload = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let mut v: Value = serde_json::from_slice(&bytes).ok()?;
    v.get_mut(name).map(Value::take)
}

#[cfg(test)]
mod window_tests {
    use super::validity_window;

    /// (exp, nbf, iat, now, leeway, verdict)
    type Case = (
        i64,
        Option<i64>,
        Option<i64>,
        i64,
        i64,
        Result<(), &'static str>,
    );

    /// (exp, nbf, iat, now, leeway) → verdict.
    #[test]
    fn validity_window_table() {
        let cases: [Case; 9] = [
            (200, None, None, 100, 0, Ok(())),
            (99, None, None, 100, 0, Err("the token has expired")),
            (95, None, None, 100, 5, Ok(())),
            (200, Some(100), Some(100), 100, 0, Ok(())),
            (
                200,
                Some(101),
                None,
                100,
                0,
                Err("the token is not valid yet"),
            ),
            (200, Some(105), None, 100, 5, Ok(())),
            (
                200,
                Some(106),
                None,
                100,
                5,
                Err("the token is not valid yet"),
            ),
            (
                200,
                None,
                Some(131),
                100,
                30,
                Err("the token is issued in the future"),
            ),
            (200, None, Some(130), 100, 30, Ok(())),
        ];
        for (exp, nbf, iat, now, leeway, expected) in cases {
            assert_eq!(
                validity_window(exp, nbf, iat, now, leeway),
                expected,
                "exp={exp} nbf={nbf:?} iat={iat:?} now={now} leeway={leeway}"
            );
        }
    }
}
