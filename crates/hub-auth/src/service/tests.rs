//! The token service end to end over a store `Store::open_for_tests` picks: grants,
//! verification with expiry, and signing-key rotation seen by another process.

use super::*;
use crate::clock::ManualClock;
use crate::error::AuthError;
use crate::keys::SigningKey;
use crate::secrets;
use hub_store::auth::{ClientRecord, UserRecord};
use hub_store::Store;
use std::sync::OnceLock;

fn shared_key() -> &'static SigningKey {
    static KEY: OnceLock<SigningKey> = OnceLock::new();
    KEY.get_or_init(SigningKey::generate)
}

async fn service(clock: Arc<ManualClock>) -> (AuthService, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let repo = Store::open_for_tests(dir.path()).unwrap().auth();
    install_signing_key(&*repo, shared_key()).await.unwrap();
    let user = UserRecord {
        id: "u-1".into(),
        username: "ann".into(),
        password_hash: secrets::hash_password("pw"),
        roles: vec!["DataReader".into()],
        created_at: 0,
    };
    repo.user_add(user).await.unwrap();
    let client = ClientRecord {
        client_id: "svc".into(),
        secret_hash: secrets::sha256_hex("s3cret"),
        description: String::new(),
        roles: vec!["Event_Create".into()],
        created_at: 0,
    };
    repo.client_add(client).await.unwrap();
    (
        AuthService::with_clock(repo, AuthConfig::default(), clock),
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
    let second = AuthService::with_clock(first.inner.repo.clone(), AuthConfig::default(), clock);
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

/// Tokens signed with our own key but dated ahead of the clock: `nbf` or `iat` beyond
/// the leeway are refused with their reason; inside the leeway they pass.
#[tokio::test]
async fn early_and_future_dated_tokens_are_refused() {
    let now = 1_700_000_000;
    let clock = Arc::new(ManualClock::new(now));
    let (svc, _dir) = service(clock.clone()).await;
    let key = shared_key();
    let mint = |extra: serde_json::Value| {
        let mut claims = serde_json::json!({"exp": now + 300, "iss": svc.issuer(), "sub": "u-1", "typ": "Bearer"});
        claims
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        key.sign_as(&key.kid, &claims).unwrap()
    };
    let cases = [
        (
            serde_json::json!({"nbf": now + 31}),
            Some("the token is not valid yet"),
        ),
        (serde_json::json!({"nbf": now + 30}), None),
        (
            serde_json::json!({"iat": now + 3600}),
            Some("the token is issued in the future"),
        ),
        (serde_json::json!({"iat": now + 10, "nbf": now}), None),
    ];
    for (extra, refusal) in cases {
        let token = mint(extra.clone());
        match (svc.verify(&token).await, refusal) {
            (Ok(_), None) => {}
            (Err(AuthError::InvalidToken(detail)), Some(reason)) => {
                assert_eq!(detail, reason, "{extra}")
            }
            (other, _) => panic!("{extra}: unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn fields_no_client_could_mean_are_refused_by_name_before_any_lookup() {
    let clock = Arc::new(ManualClock::new(1_700_000_000));
    let (svc, _dir) = service(clock).await;
    let long = "a".repeat(grants::MAX_FORM_VALUE_BYTES + 1);
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[
                ("grant_type", "refresh_token"),
                ("client_id", "x\u{0}y"),
                ("refresh_token", "t"),
            ],
            "parameter 'client_id' holds a control character at position 2",
        ),
        (
            &[
                ("grant_type", "password"),
                ("client_id", "hub-generic-client"),
                ("username", "an\u{85}n"),
                ("password", "pw"),
            ],
            "parameter 'username' holds a control character at position 3",
        ),
        (
            &[
                ("grant_type", "refresh_token"),
                ("client_id", "hub-generic-client"),
                ("refresh_token", "\n"),
            ],
            "parameter 'refresh_token' holds a control character at position 1",
        ),
        (
            &[
                ("grant_type", "password"),
                ("client_id", "hub-generic-client"),
                ("username", "ann"),
                ("password", &long),
            ],
            "parameter 'password' is longer than 8192 bytes",
        ),
    ];
    for (fields, expected) in cases {
        match svc.token(&form(fields), None).await {
            Err(AuthError::OAuth { error, description }) => {
                assert_eq!(
                    (error, description.as_str()),
                    ("invalid_request", *expected)
                );
            }
            other => panic!("{fields:?}: expected invalid_request, got {other:?}"),
        }
    }
    // The same NUL through client_secret_basic is refused the same way.
    let basic = Some(("svc\u{0}".to_string(), "s3cret".to_string()));
    match svc
        .token(&form(&[("grant_type", "client_credentials")]), basic)
        .await
    {
        Err(AuthError::OAuth { error, description }) => assert_eq!(
            (error, description.as_str()),
            (
                "invalid_request",
                "parameter 'client_id' holds a control character at position 4"
            )
        ),
        other => panic!("expected invalid_request, got {other:?}"),
    }
    // Passwords are hashed, never looked up: a control character in one is just wrong.
    let r = svc
        .token(
            &form(&[
                ("grant_type", "password"),
                ("client_id", "hub-generic-client"),
                ("username", "ann"),
                ("password", "p\tw"),
            ]),
            None,
        )
        .await;
    assert!(
        matches!(
            r,
            Err(AuthError::OAuth {
                error: "invalid_grant",
                ..
            })
        ),
        "{r:?}"
    );
}
