//! RSA signing keys: generation (slow; once per store), PKCS#1 storage, JWKS rendering.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{DecodingKey, EncodingKey};
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::traits::PublicKeyParts;
use rsa::RsaPrivateKey;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// One RSA key pair ready to sign and verify.
#[derive(Clone)]
pub struct SigningKey {
    pub kid: String,
    pub(crate) der: Vec<u8>,
    pub(crate) encoding: EncodingKey,
    pub(crate) decoding: DecodingKey,
    n: String,
    e: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A fresh 2048-bit key. Takes a noticeable time (much longer in debug builds).
    pub fn generate() -> SigningKey {
        let key = RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).expect("RSA key generation");
        let der = key
            .to_pkcs1_der()
            .expect("PKCS#1 encoding")
            .as_bytes()
            .to_vec();
        SigningKey::from_der(&der).expect("a generated key loads")
    }

    /// Loads a PKCS#1 DER private key.
    pub fn from_der(der: &[u8]) -> Result<SigningKey, String> {
        let key = RsaPrivateKey::from_pkcs1_der(der)
            .map_err(|e| format!("stored signing key is unreadable: {e}"))?;
        let n = URL_SAFE_NO_PAD.encode(key.n().to_bytes_be());
        let e = URL_SAFE_NO_PAD.encode(key.e().to_bytes_be());
        let kid = URL_SAFE_NO_PAD.encode(&Sha256::digest(n.as_bytes())[..16]);
        let encoding = EncodingKey::from_rsa_der(der);
        let decoding = DecodingKey::from_rsa_components(&n, &e).map_err(|e| e.to_string())?;
        Ok(SigningKey {
            kid,
            der: der.to_vec(),
            encoding,
            decoding,
            n,
            e,
        })
    }

    /// The private key as PKCS#1 DER (for the store).
    pub fn to_der(&self) -> Vec<u8> {
        self.der.clone()
    }

    /// Signs `claims` as an RS256 JWT whose header names `kid` (tests and tools use this
    /// to mint tokens, including deliberately wrong ones).
    pub fn sign_as<T: serde::Serialize>(&self, kid: &str, claims: &T) -> Result<String, String> {
        let header = jsonwebtoken::Header {
            kid: Some(kid.to_string()),
            typ: Some("JWT".into()),
            ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256)
        };
        jsonwebtoken::encode(&header, claims, &self.encoding).map_err(|e| e.to_string())
    }

    /// The public half as a JWK.
    pub fn jwk(&self) -> Value {
        json!({"kid": self.kid, "kty": "RSA", "alg": "RS256", "use": "sig", "n": self.n, "e": self.e})
    }
}

/// Decoding keys of a JWKS document (RSA signature keys only), by kid.
pub(crate) fn parse_jwks(text: &str) -> Result<Vec<(String, DecodingKey)>, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("JWKS is not JSON: {e}"))?;
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("JWKS has no \"keys\" array")?;
    Ok(keys
        .iter()
        .filter(|k| k.get("kty").and_then(Value::as_str) == Some("RSA"))
        .filter(|k| {
            k.get("use")
                .and_then(Value::as_str)
                .is_none_or(|u| u == "sig")
        })
        .filter_map(|k| {
            let kid = k
                .get("kid")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let key =
                DecodingKey::from_rsa_components(k.get("n")?.as_str()?, k.get("e")?.as_str()?)
                    .ok()?;
            Some((kid, key))
        })
        .collect())
}
