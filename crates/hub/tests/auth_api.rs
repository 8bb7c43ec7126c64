//! Token service, bearer authentication, closed content data and content writes: the
//! real router over a real store. Expiry uses a manual clock, never sleeps. One tracing
//! subscriber captures every log line of this test binary, so the last test can assert
//! that no secret or token was ever logged.

mod support;

use std::future::IntoFuture;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Body;
use http::{Request, Response};
use hub_auth::{AuthConfig, AuthService, ExternalIssuer, ManualClock, SigningKey};
use hub_store::auth::{ClientRecord, UserRecord};
use hub_store::Store;
use serde_json::{json, Value};
use tower::ServiceExt;

const READER_PASSWORD: &str = "reader-Pa55word-7c1e";
const PLAIN_PASSWORD: &str = "plain-Pa55word-91ab";
const WRITER_SECRET: &str = "writer-secret-4f1d2a9b8c7e6f5a4b3c2d1e0f";
const NOROLE_SECRET: &str = "norole-secret-0a1b2c3d4e5f6a7b8c9d0e1f";
const START: i64 = 1_750_000_000;

/// Every log line of this binary.
static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

#[derive(Clone)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn capture_logs() {
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let writer = Capture(buf.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        buf
    });
}

/// Keys are slow to generate: one for the server, one for "someone else".
fn keys() -> &'static (SigningKey, SigningKey) {
    static KEYS: OnceLock<(SigningKey, SigningKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let other = std::thread::spawn(SigningKey::generate);
        (SigningKey::generate(), other.join().unwrap())
    })
}

struct App {
    router: axum::Router,
    store: Store,
    clock: Arc<ManualClock>,
    auth: AuthService,
    _dir: tempfile::TempDir,
}

fn fixtures() -> Vec<(&'static str, Value)> {
    let mut docs = support::content_fixtures();
    let calendar = |free: bool| {
        json!([
            {"Date": "2030-07-01", "Available": true, "PriceFrom": 80},
            {"Date": "2030-07-02", "Available": free, "PriceFrom": 85},
            {"Date": "2030-07-03", "Available": true, "PriceFrom": 90}
        ])
    };
    for (id, free) in [("acco-r1", true), ("acco-r2", false)] {
        docs.push((
            "Accommodation",
            json!({
                "Id": id, "Shortname": format!("Hof {id}"), "Active": true,
                "_Meta": {"Id": id, "Type": "accommodation", "Source": "lts", "Reduced": false},
                "AccoRoomInfo": [{"Id": format!("{id}-room"), "Source": "lts"}],
                "Availability": calendar(free),
            }),
        ));
        docs.push((
            "AccommodationRoom",
            json!({
                "Id": format!("{id}-room"), "A0RID": id, "Shortname": "Suite",
                "_Meta": {"Id": format!("{id}-room"), "Type": "accommodationroom", "Source": "lts", "Reduced": false},
                "AccoRoomDetail": {"de": {"Name": "Suite mit Blick"}}, "RoomMax": 4,
            }),
        ));
    }
    docs
}

async fn app_with(realm: &str, external: Option<ExternalIssuer>, key: &SigningKey) -> App {
    capture_logs();
    let (store, dir) = support::backend();
    store
        .content()
        .put_batch_blocking(&fixtures(), &mut |_| {})
        .unwrap();
    hub_auth::install_signing_key(&*store.auth(), key)
        .await
        .unwrap();
    let hash = |p: &str| hub_auth::secrets::hash_password(p);
    for (name, password, roles) in [
        ("reader", READER_PASSWORD, vec!["DataReader"]),
        ("plain", PLAIN_PASSWORD, vec![]),
        ("a22", PLAIN_PASSWORD, vec!["BDP_A22"]),
    ] {
        let user = UserRecord {
            id: format!("id-{name}"),
            username: name.into(),
            password_hash: hash(password),
            roles: roles.into_iter().map(String::from).collect(),
            created_at: 0,
        };
        store.auth().user_add(user).await.unwrap();
    }
    for (id, secret, roles) in [
        (
            "writer",
            WRITER_SECRET,
            hub_auth::demo::writer_roles(&["Accommodation"]),
        ),
        ("norole", NOROLE_SECRET, vec![]),
    ] {
        let client = ClientRecord {
            client_id: id.into(),
            secret_hash: hub_auth::secrets::sha256_hex(secret),
            description: String::new(),
            roles,
            created_at: 0,
        };
        store.auth().client_add(client).await.unwrap();
    }
    let clock = Arc::new(ManualClock::new(START));
    let config = support::test_config();
    let auth_config = AuthConfig {
        realm: realm.into(),
        auth_url: "http://hub.test".into(),
        external,
        ..AuthConfig::default()
    };
    let auth = AuthService::with_clock(store.auth(), auth_config, clock.clone());
    let router = hub::router_with_auth(store.clone(), &config, auth.clone());
    App {
        router,
        store,
        clock,
        auth,
        _dir: dir,
    }
}

/// A listener on a free loopback port, its base URL, and a store with `key` installed
/// and one user, for tests that run a second, real token service.
async fn loopback_store_with_user(
    key: &SigningKey,
    username: &str,
    password: &str,
    role: &str,
) -> (
    tokio::net::TcpListener,
    String,
    hub_store::Store,
    tempfile::TempDir,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (store, dir) = support::backend();
    hub_auth::install_signing_key(&*store.auth(), key)
        .await
        .unwrap();
    let user = UserRecord {
        id: format!("id-{username}"),
        username: username.into(),
        password_hash: hub_auth::secrets::hash_password(password),
        roles: vec![role.into()],
        created_at: 0,
    };
    store.auth().user_add(user).await.unwrap();
    (listener, base, store, dir)
}

async fn app() -> App {
    app_with("hub", None, &keys().0).await
}

async fn send(
    app: &App,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> (u16, Response<Body>) {
    let mut builder = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    let response = app
        .router
        .clone()
        .oneshot(
            builder
                .body(body.map(Body::from).unwrap_or_else(Body::empty))
                .unwrap(),
        )
        .await
        .unwrap();
    (response.status().as_u16(), response)
}

async fn json_of(response: Response<Body>) -> Value {
    let bytes = support::body_bytes(response).await;
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)))
}

const TOKEN_PATH: &str = "/auth/realms/hub/protocol/openid-connect/token";

async fn token_request(app: &App, form: &[(&str, &str)]) -> (u16, Value) {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let (status, response) = send(
        app,
        "POST",
        TOKEN_PATH,
        &[("content-type", "application/x-www-form-urlencoded")],
        Some(body),
    )
    .await;
    (status, json_of(response).await)
}

async fn login(app: &App, user: &str, password: &str) -> Value {
    let (status, body) = token_request(
        app,
        &[
            ("grant_type", "password"),
            ("username", user),
            ("password", password),
            ("client_id", "hub-generic-client"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn client_token(app: &App, id: &str, secret: &str) -> String {
    let (status, body) = token_request(
        app,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", id),
            ("client_secret", secret),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_string()
}

async fn get_as(app: &App, uri: &str, token: Option<&str>) -> (u16, Value, Response<Body>) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("authorization", a)])
        .unwrap_or_default();
    let (status, response) = send(app, "GET", uri, &headers, None).await;
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, value, Response::from_parts(parts, Body::empty()))
}

fn challenge(response: &Response<Body>) -> String {
    response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

// ---------------------------------------------------------------- token service

#[tokio::test]
async fn password_grant_answers_per_rfc6749_with_keycloak_claims() {
    let app = app().await;
    let body = login(&app, "reader", READER_PASSWORD).await;
    for key in [
        "access_token",
        "token_type",
        "expires_in",
        "refresh_token",
        "refresh_expires_in",
        "scope",
    ] {
        assert!(body.get(key).is_some(), "{key} missing in {body}");
    }
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 300);
    assert_eq!(body["refresh_expires_in"], 1800);
    let token = body["access_token"].as_str().unwrap();
    let header = jsonwebtoken::decode_header(token).unwrap();
    assert_eq!(header.alg, jsonwebtoken::Algorithm::RS256);
    assert_eq!(header.kid.as_deref(), Some(keys().0.kid.as_str()));
    let claims: Value = {
        use base64::Engine;
        let payload = token.split('.').nth(1).unwrap();
        serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload)
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!(claims["iss"], "http://hub.test/auth/realms/hub");
    assert_eq!(claims["sub"], "id-reader");
    assert_eq!(claims["azp"], "hub-generic-client");
    assert_eq!(claims["preferred_username"], "reader");
    assert_eq!(claims["exp"], START + 300);
    assert_eq!(claims["iat"], START);
    assert_eq!(claims["realm_access"]["roles"], json!(["DataReader"]));
    assert_eq!(
        claims["resource_access"]["hub-generic-client"]["roles"],
        json!(["DataReader"])
    );
    // The Open Data Hub's name of the public client works too, without a secret.
    let (status, _) = token_request(
        &app,
        &[
            ("grant_type", "password"),
            ("username", "plain"),
            ("password", PLAIN_PASSWORD),
            ("client_id", "odh-generic-client"),
        ],
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn client_credentials_issue_an_access_token_only() {
    let app = app().await;
    let (status, body) = token_request(
        &app,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", "writer"),
            ("client_secret", WRITER_SECRET),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("refresh_token").is_none());
    assert_eq!(body["refresh_expires_in"], 0);
    // client_secret_basic works as well.
    use base64::Engine;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("writer:{WRITER_SECRET}"))
    );
    let (status, response) = send(
        &app,
        "POST",
        TOKEN_PATH,
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("authorization", &basic),
        ],
        Some("grant_type=client_credentials".into()),
    )
    .await;
    assert_eq!(status, 200, "{}", json_of(response).await);
}

#[tokio::test]
async fn token_errors_follow_rfc6749_section_5_2() {
    let app = app().await;
    // (form fields, expected status, expected OAuth error code)
    type Case<'a> = (Vec<(&'a str, &'a str)>, u16, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec![
                ("grant_type", "client_credentials"),
                ("client_id", "nobody"),
                ("client_secret", "x"),
            ],
            401,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "client_credentials"),
                ("client_id", "writer"),
                ("client_secret", "wrong"),
            ],
            401,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "client_credentials"),
                ("client_id", "writer"),
            ],
            401,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "password"),
                ("username", "reader"),
                ("password", "wrong"),
                ("client_id", "hub-generic-client"),
            ],
            400,
            "invalid_grant",
        ),
        (
            vec![
                ("grant_type", "password"),
                ("username", "ghost"),
                ("password", "x"),
                ("client_id", "hub-generic-client"),
            ],
            400,
            "invalid_grant",
        ),
        (
            vec![
                ("grant_type", "password"),
                ("username", "reader"),
                ("client_id", "hub-generic-client"),
            ],
            400,
            "invalid_request",
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", "hub-generic-client"),
            ],
            400,
            "unsupported_grant_type",
        ),
        (
            vec![
                ("grant_type", "client_credentials"),
                ("client_id", "hub-generic-client"),
            ],
            400,
            "unauthorized_client",
        ),
        (
            vec![
                ("grant_type", "refresh_token"),
                ("refresh_token", "made-up"),
                ("client_id", "hub-generic-client"),
            ],
            400,
            "invalid_grant",
        ),
        (
            vec![("client_id", "hub-generic-client")],
            400,
            "invalid_request",
        ),
    ];
    for (form, status, error) in cases {
        let (got, body) = token_request(&app, &form).await;
        assert_eq!(
            (got, body["error"].as_str().unwrap()),
            (status, error),
            "{form:?}: {body}"
        );
        assert!(body["error_description"].is_string());
    }
    let (status, response) = send(
        &app,
        "POST",
        TOKEN_PATH,
        &[("content-type", "application/json")],
        Some("{}".into()),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(json_of(response).await["error"], "invalid_request");
    let (status, _) = send(
        &app,
        "POST",
        "/auth/realms/other/protocol/openid-connect/token",
        &[],
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn refresh_tokens_rotate_and_reuse_revokes_the_session() {
    let app = app().await;
    let first = login(&app, "reader", READER_PASSWORD).await;
    let r1 = first["refresh_token"].as_str().unwrap();
    let refresh = |t: &str, client: &str| {
        vec![
            ("grant_type".to_string(), "refresh_token".to_string()),
            ("refresh_token".into(), t.to_string()),
            ("client_id".into(), client.to_string()),
        ]
    };
    let call = |form: Vec<(String, String)>| {
        let app = &app;
        async move {
            let pairs: Vec<(&str, &str)> =
                form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            token_request(app, &pairs).await
        }
    };
    // Another client cannot use it (and does not burn it).
    let (status, body) = call(refresh(r1, "odh-generic-client")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let (status, second) = call(refresh(r1, "hub-generic-client")).await;
    assert_eq!(status, 200, "{second}");
    let r2 = second["refresh_token"].as_str().unwrap();
    assert_ne!(r1, r2);
    let (status, _, _) = get_as(
        &app,
        "/v1/Accommodation/acco-r1",
        second["access_token"].as_str(),
    )
    .await;
    assert_eq!(status, 200);
    // Reuse of the rotated token: refused, and the whole session is revoked.
    let (status, body) = call(refresh(r1, "hub-generic-client")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(body["error_description"]
        .as_str()
        .unwrap()
        .contains("revoked"));
    let (status, _) = call(refresh(r2, "hub-generic-client")).await;
    assert_eq!(status, 400, "the successor is revoked with its session");
}

#[tokio::test]
async fn tokens_expire_by_the_clock() {
    let app = app().await;
    let token = login(&app, "reader", READER_PASSWORD).await["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    app.clock.advance(300 + 30);
    let (status, _, _) = get_as(&app, "/v1/Accommodation", Some(&token)).await;
    assert_eq!(status, 200, "still inside the leeway");
    app.clock.advance(1);
    let (status, body, response) = get_as(&app, "/v1/Accommodation", Some(&token)).await;
    assert_eq!(status, 401);
    assert!(
        challenge(&response).starts_with("Bearer error=\"invalid_token\""),
        "{}",
        challenge(&response)
    );
    assert_eq!(body["status"], 401);
    assert!(body["detail"].as_str().unwrap().contains("expired"));
    // An expired refresh token is refused too.
    let session = login(&app, "reader", READER_PASSWORD).await;
    app.clock.advance(1801);
    let (status, body) = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", session["refresh_token"].as_str().unwrap()),
            ("client_id", "hub-generic-client"),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

#[tokio::test]
async fn discovery_and_jwks_describe_the_realm() {
    let app = app().await;
    let (status, doc, _) = get_as(
        &app,
        "/auth/realms/hub/.well-known/openid-configuration",
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(doc["issuer"], "http://hub.test/auth/realms/hub");
    assert_eq!(
        doc["token_endpoint"],
        "http://hub.test/auth/realms/hub/protocol/openid-connect/token"
    );
    assert_eq!(
        doc["jwks_uri"],
        "http://hub.test/auth/realms/hub/protocol/openid-connect/certs"
    );
    let (status, jwks, _) =
        get_as(&app, "/auth/realms/hub/protocol/openid-connect/certs", None).await;
    assert_eq!(status, 200);
    assert_eq!(jwks["keys"][0]["kid"], keys().0.kid.as_str());
    assert_eq!(jwks["keys"][0]["alg"], "RS256");
    assert!(jwks["keys"][0].get("d").is_none(), "no private parts");
}

// ---------------------------------------------------------------- bearer authentication

fn claims_for(iss: &str, exp: i64) -> Value {
    json!({"iss": iss, "sub": "x", "exp": exp, "iat": START, "typ": "Bearer", "azp": "hub-generic-client", "realm_access": {"roles": ["DataReader"]}})
}

#[tokio::test]
async fn bad_tokens_are_401_with_an_invalid_token_challenge() {
    let app = app().await;
    let (local, other) = keys();
    let wrong_signature = other
        .sign_as(
            &local.kid,
            &claims_for("http://hub.test/auth/realms/hub", START + 300),
        )
        .unwrap();
    let wrong_issuer = local
        .sign_as(
            &local.kid,
            &claims_for("http://evil.test/auth/realms/hub", START + 300),
        )
        .unwrap();
    let unknown_kid = other
        .sign_as(
            "nope",
            &claims_for("http://hub.test/auth/realms/hub", START + 300),
        )
        .unwrap();
    let expired = local
        .sign_as(
            &local.kid,
            &claims_for("http://hub.test/auth/realms/hub", START - 100),
        )
        .unwrap();
    let refresh_typ = local.sign_as(&local.kid, &json!({"iss": "http://hub.test/auth/realms/hub", "exp": START + 300, "typ": "Refresh"})).unwrap();
    for (name, header) in [
        ("wrong signature", format!("Bearer {wrong_signature}")),
        ("wrong issuer", format!("Bearer {wrong_issuer}")),
        ("unknown key", format!("Bearer {unknown_kid}")),
        ("expired", format!("Bearer {expired}")),
        ("not an access token", format!("Bearer {refresh_typ}")),
        ("malformed", "Bearer not.a.jwt".to_string()),
        ("empty", "Bearer ".to_string()),
        ("other scheme", "Basic dXNlcjpwdw==".to_string()),
    ] {
        let (status, response) = send(
            &app,
            "GET",
            "/v1/HubActivityPoi",
            &[("authorization", &header)],
            None,
        )
        .await;
        assert_eq!(status, 401, "{name}");
        assert!(
            challenge(&response).contains("error=\"invalid_token\""),
            "{name}: {}",
            challenge(&response)
        );
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{name}"
        );
        let body = json_of(response).await;
        assert_eq!(body["status"], 401, "{name}");
    }
    // A good token with the lower-case scheme word (spec point 3), and no header at all.
    let good = local
        .sign_as(
            &local.kid,
            &claims_for("http://hub.test/auth/realms/hub/", START + 300),
        )
        .unwrap();
    let (status, _) = send(
        &app,
        "GET",
        "/v1/HubActivityPoi",
        &[("authorization", &format!("bearer {good}"))],
        None,
    )
    .await;
    assert_eq!(
        status, 200,
        "lower-case scheme, issuer with a trailing slash"
    );
    let (status, _) = send(&app, "GET", "/v1/HubActivityPoi", &[], None).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_issuer_is_trusted_by_its_jwks() {
    // A second token service on loopback plays the Keycloak realm.
    let (listener, base, store, _dir) =
        loopback_store_with_user(&keys().1, "kc-reader", "kc-pw", "AccoReader").await;
    let external = AuthService::new(
        store.auth(),
        AuthConfig {
            realm: "noi".into(),
            auth_url: base.clone(),
            ..AuthConfig::default()
        },
    );
    tokio::spawn(axum::serve(listener, hub_auth::router(external.clone())).into_future());
    let form: Vec<(String, String)> = [
        ("grant_type", "password"),
        ("username", "kc-reader"),
        ("password", "kc-pw"),
        ("client_id", "odh-generic-client"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let token = external.token(&form, None).await.unwrap().access_token;

    let issuer = format!("{base}/auth/realms/noi");
    let trusted = app_with(
        "hub",
        Some(ExternalIssuer {
            issuer: issuer.clone(),
            jwks_url: format!("{issuer}/protocol/openid-connect/certs"),
        }),
        &keys().0,
    )
    .await;
    // The external service stamps `iat` with the real clock; a verifier whose clock is
    // behind it would rightly refuse a token issued in the future.
    let real_now = chrono::Utc::now().timestamp();
    trusted.clock.set(real_now);
    let (status, doc, _) = get_as(&trusted, "/v1/Accommodation/acco-r1", Some(&token)).await;
    assert_eq!(status, 200);
    assert!(
        doc.get("AccoRoomInfo").is_some(),
        "the external token's role opens closed data"
    );
    // Without the configuration the same token is from an unknown issuer.
    let plain = app().await;
    plain.clock.set(real_now);
    let (status, _, _) = get_as(&plain, "/v1/Accommodation/acco-r1", Some(&token)).await;
    assert_eq!(status, 401);
}

// ---------------------------------------------------------------- closed data

#[tokio::test]
async fn accommodation_rooms_and_availability_are_closed() {
    let app = app().await;
    let reader = login(&app, "reader", READER_PASSWORD).await["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let plain = login(&app, "plain", PLAIN_PASSWORD).await["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    for (who, token, full) in [
        ("anonymous", None, false),
        ("no role", Some(plain.as_str()), false),
        ("reader", Some(reader.as_str()), true),
    ] {
        let (status, doc, _) = get_as(&app, "/v1/Accommodation/acco-r1", token).await;
        assert_eq!(status, 200, "{who}");
        assert_eq!(doc.get("AccoRoomInfo").is_some(), full, "{who}");
        assert_eq!(doc.get("Availability").is_some(), full, "{who}");
        assert_eq!(doc["_Meta"]["Reduced"], !full, "{who}");
        assert_eq!(doc["Shortname"], "Hof acco-r1", "{who}: base data stays");

        let (status, list, _) = get_as(
            &app,
            "/v1/Accommodation?pagesize=100&fields=Id,AccoRoomInfo",
            token,
        )
        .await;
        assert_eq!(status, 200, "{who}");
        let item = list["Items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["Id"] == "acco-r1")
            .unwrap()
            .clone();
        assert_eq!(item["AccoRoomInfo"].is_array(), full, "{who}: {item}");

        let (status, room, _) = get_as(&app, "/v1/AccommodationRoom/acco-r1-room", token).await;
        assert_eq!(status, 200, "{who}");
        assert_eq!(room["A0RID"], "acco-r1");
        assert_eq!(room.get("AccoRoomDetail").is_some(), full, "{who}");
        assert_eq!(room["_Meta"]["Reduced"], !full, "{who}");

        let (status, rooms, _) = get_as(&app, "/v1/AccommodationRoom", token).await;
        assert_eq!(
            (status, rooms["TotalResults"].as_u64()),
            (200, Some(2)),
            "{who}"
        );
        assert_eq!(rooms["Items"][0].get("RoomMax").is_some(), full, "{who}");

        // Availability search: only readers get it; the others get base data, no error.
        let (status, found, _) = get_as(&app, "/v1/Accommodation?availabilitycheck=true&arrival=2030-07-01&departure=2030-07-03&pagesize=100", token).await;
        assert_eq!(status, 200, "{who}");
        let ids: Vec<&str> = found["Items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["Id"].as_str().unwrap())
            .collect();
        if full {
            assert_eq!(ids, ["acco-r1"], "{who}");
        } else {
            assert!(
                ids.contains(&"acco-r1") && ids.contains(&"acco-r2"),
                "{who}: {ids:?}"
            );
            assert!(found["Items"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i.get("Availability").is_none()));
        }
    }
    let (status, body, _) = get_as(
        &app,
        "/v1/Accommodation?availabilitycheck=true&arrival=2030-07-03&departure=2030-07-01",
        Some(&reader),
    )
    .await;
    assert_eq!(
        (status, body["parameter"].as_str()),
        (400, Some("departure"))
    );
}

#[tokio::test]
async fn deprecated_needs_a_token() {
    let app = app().await;
    let (status, body, response) = get_as(&app, "/v1/Deprecated", None).await;
    assert_eq!(status, 401);
    assert_eq!(body["status"], 401);
    assert!(challenge(&response).starts_with("Bearer"));
    let token = login(&app, "plain", PLAIN_PASSWORD).await["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, body, _) = get_as(&app, "/v1/Deprecated", Some(&token)).await;
    assert_eq!(status, 200);
    let first = &body["event"][0];
    for key in [
        "Name",
        "Type",
        "Description",
        "DeprecationDate",
        "RemovedAfter",
    ] {
        assert!(first.get(key).is_some(), "{key} missing: {first}");
    }
    assert!(body["hubactivitypoi"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["Name"] == "GpsPoints"));
}

// ---------------------------------------------------------------- writes

async fn write(
    app: &App,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(a) = auth.as_deref() {
        headers.push(("authorization", a));
    }
    let (status, response) = send(app, method, uri, &headers, Some(body.to_string())).await;
    let bytes = support::body_bytes(response).await;
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn writes_need_the_entity_roles() {
    let app = app().await;
    let writer = client_token(&app, "writer", WRITER_SECRET).await;
    let norole = client_token(&app, "norole", NOROLE_SECRET).await;
    let doc = json!({"Id": "acco-new", "Shortname": "Neuer Hof", "Active": true});
    for (method, uri) in [
        ("POST", "/v1/Accommodation"),
        ("PUT", "/v1/Accommodation/acco-new"),
        ("DELETE", "/v1/Accommodation/acco-new"),
    ] {
        let (status, _) = write(&app, method, uri, None, doc.clone()).await;
        assert_eq!(status, 401, "{method} without token");
        let (status, body) = write(&app, method, uri, Some(&norole), doc.clone()).await;
        assert_eq!(status, 403, "{method} without role: {body}");
    }
    // The writer may write accommodations, not events.
    let (status, _) = write(
        &app,
        "POST",
        "/v1/Event",
        Some(&writer),
        json!({"Id": "e-new"}),
    )
    .await;
    assert_eq!(status, 403);

    let (status, body) = write(
        &app,
        "POST",
        "/v1/Accommodation",
        Some(&writer),
        doc.clone(),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        (body["operation"].as_str(), body["created"].as_u64()),
        (Some("CREATE"), Some(1))
    );
    let (status, body) = write(
        &app,
        "POST",
        "/v1/Accommodation",
        Some(&writer),
        doc.clone(),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    let (_, stored, _) = get_as(&app, "/v1/Accommodation/acco-new", None).await;
    assert_eq!(stored["Shortname"], "Neuer Hof");
    assert_eq!(stored["_Meta"]["Type"], "accommodation");
    let first_change = stored["_Meta"]["LastChange"].clone();
    assert!(first_change.is_string());

    // The same content again: LastUpdate moves, LastChange stays.
    let (status, body) = write(
        &app,
        "PUT",
        "/v1/Accommodation/ACCO-NEW",
        Some(&writer),
        doc.clone(),
    )
    .await;
    assert_eq!(
        (status, body["objectchanged"].as_u64()),
        (200, Some(0)),
        "{body}"
    );
    let (_, again, _) = get_as(&app, "/v1/Accommodation/acco-new", None).await;
    assert_eq!(again["_Meta"]["LastChange"], first_change);
    assert!(again["_Meta"]["LastUpdate"].is_string());
    // A real change moves LastChange.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let (status, body) = write(
        &app,
        "PUT",
        "/v1/Accommodation/acco-new",
        Some(&writer),
        json!({"Shortname": "Alter Hof"}),
    )
    .await;
    assert_eq!(
        (status, body["objectchanged"].as_u64()),
        (200, Some(1)),
        "{body}"
    );
    let (_, changed, _) = get_as(&app, "/v1/Accommodation/acco-new", None).await;
    assert_eq!(changed["Shortname"], "Alter Hof");
    assert_ne!(changed["_Meta"]["LastChange"], first_change);

    // Validation.
    for (uri, body, needle) in [
        (
            "/v1/Accommodation/acco-new",
            json!({"Id": "other"}),
            "differs",
        ),
        (
            "/v1/Accommodation/acco-new",
            json!({"Active": "yes"}),
            "Active",
        ),
        ("/v1/Accommodation/acco-new", json!([1, 2]), "object"),
        (
            "/v1/Accommodation/acco-new",
            json!({"GpsInfo": [{"Latitude": "north"}]}),
            "GpsInfo[0].Latitude",
        ),
    ] {
        let (status, problem) = write(&app, "PUT", uri, Some(&writer), body).await;
        assert_eq!(status, 400, "{problem}");
        assert!(
            problem["detail"].as_str().unwrap().contains(needle),
            "{problem}"
        );
    }
    let (status, _) = send(
        &app,
        "PUT",
        "/v1/Accommodation/acco-new",
        &[("authorization", &format!("Bearer {writer}"))],
        Some("{not json".into()),
    )
    .await;
    assert_eq!(status, 400);

    let (status, _) = write(
        &app,
        "DELETE",
        "/v1/Accommodation/acco-new",
        Some(&writer),
        json!(null),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, _) = get_as(&app, "/v1/Accommodation/acco-new", None).await;
    assert_eq!(status, 404);
    let (status, _) = write(
        &app,
        "DELETE",
        "/v1/Accommodation/acco-new",
        Some(&writer),
        json!(null),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn import_writes_accepted_documents_and_lists_rejected_ones() {
    let app = app().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("docs.jsonl");
    std::fs::write(
        &file,
        [
            json!({"Id": "imp-1", "Shortname": "Eins", "_Meta": {"Type": "event"}}).to_string(),
            "{broken".to_string(),
            json!({"Id": "imp-2", "Shortname": "Zwei", "Active": "maybe", "_Meta": {"Type": "event"}}).to_string(),
            json!({"Id": "imp-3", "Shortname": "Drei"}).to_string(),
            json!({"Id": "imp-4", "Shortname": "Vier", "_Meta": {"Type": "event"}}).to_string(),
        ]
        .join("\n"),
    )
    .unwrap();
    let store = app.store.clone();
    let summary = tokio::task::spawn_blocking(move || hub::cli_auth::import(&store, &file, None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(summary.written, 2);
    let reasons: Vec<(usize, String)> = summary
        .rejected
        .iter()
        .map(|r| (r.position, r.reason.clone()))
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert_eq!(reasons[0].0, 2);
    assert!(reasons[1].1.contains("Active"), "{reasons:?}");
    assert!(reasons[2].1.contains("entity type"), "{reasons:?}");
    let (status, doc, _) = get_as(&app, "/v1/Event/imp-4", None).await;
    assert_eq!(status, 200);
    assert!(doc["_Meta"]["LastChange"].is_string());
    let (status, _, _) = get_as(&app, "/v1/Event/imp-2", None).await;
    assert_eq!(status, 404);
    // A JSON array with a forced entity type.
    let array = dir.path().join("docs.json");
    std::fs::write(
        &array,
        json!([{"Id": "arr-1"}, {"Id": "arr-2"}]).to_string(),
    )
    .unwrap();
    let store = app.store.clone();
    let summary =
        tokio::task::spawn_blocking(move || hub::cli_auth::import(&store, &array, Some("Article")))
            .await
            .unwrap()
            .unwrap();
    assert_eq!((summary.written, summary.rejected.len()), (2, 0));
}

// ---------------------------------------------------------------- PyJWT

fn python_has_pyjwt() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import jwt, cryptography"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyjwt_verifies_issued_tokens_against_the_jwks() {
    if !python_has_pyjwt() {
        let _ = std::process::Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "pyjwt", "cryptography"])
            .status();
        if !python_has_pyjwt() {
            println!("SKIPPED: PyJWT and cryptography cannot be imported or installed (pip install pyjwt cryptography)");
            return;
        }
    }
    let (listener, base, store, _dir) =
        loopback_store_with_user(&keys().0, "py", "py-pw", "DataReader").await;
    let config = hub::Config {
        auth_url: Some(base.clone()),
        ..support::test_config()
    };
    tokio::spawn(axum::serve(listener, hub::router(store, &config)).into_future());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/jwt_check.py");
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .args([script, &base, "hub", "py", "py-pw"])
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("jwt_check: ok"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

// ---------------------------------------------------------------- logs

#[tokio::test]
async fn secrets_and_tokens_never_appear_in_logs() {
    let app = app().await;
    let session = login(&app, "reader", READER_PASSWORD).await;
    let access = session["access_token"].as_str().unwrap().to_string();
    let refresh = session["refresh_token"].as_str().unwrap().to_string();
    let (_, rotated) = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", "hub-generic-client"),
        ],
    )
    .await;
    let _ = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", "hub-generic-client"),
        ],
    )
    .await;
    let _ = token_request(
        &app,
        &[
            ("grant_type", "password"),
            ("username", "reader"),
            ("password", "Wr0ng-Pa55word-xyz"),
            ("client_id", "hub-generic-client"),
        ],
    )
    .await;
    let client = client_token(&app, "writer", WRITER_SECRET).await;
    let _ = token_request(
        &app,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", "writer"),
            ("client_secret", "Wr0ng-Secret-xyz"),
        ],
    )
    .await;
    let _ = get_as(&app, "/v1/Accommodation/acco-r1", Some(&access)).await;
    let _ = get_as(
        &app,
        "/v1/Accommodation/acco-r1",
        Some(&format!("{access}x")),
    )
    .await;
    let _ = write(
        &app,
        "PUT",
        "/v1/Accommodation/acco-r1",
        Some(&client),
        json!({"Shortname": "logged"}),
    )
    .await;
    let _ = app.auth.rotate_signing_key().await;

    let logs = String::from_utf8_lossy(&LOGS.get().unwrap().lock().unwrap()).to_string();
    assert!(logs.contains("issued tokens"), "the capture works: {logs}");
    let rotated_refresh = rotated["refresh_token"].as_str().unwrap();
    let rotated_access = rotated["access_token"].as_str().unwrap();
    let signature = |t: &str| t.rsplit('.').next().unwrap().to_string();
    for secret in [
        READER_PASSWORD,
        PLAIN_PASSWORD,
        "Wr0ng-Pa55word-xyz",
        WRITER_SECRET,
        "Wr0ng-Secret-xyz",
        &refresh,
        rotated_refresh,
        &signature(&access),
        &signature(rotated_access),
        &signature(&client),
    ] {
        assert!(
            !logs.contains(secret),
            "a secret or token appears in the logs: {secret}"
        );
    }
}

/// The bearer token's roles reach the Time Series API through the whole router: closed
/// measurements appear for a role that opens them, station metadata stays open to all,
/// and the writer endpoints refuse anonymous callers.
#[tokio::test]
async fn bearer_roles_open_closed_time_series() {
    let app = app().await;
    hub_timeseries::import_value(
        &*app.store.timeseries(),
        &json!({
            "dataTypes": [{"name": "flow", "unit": "vehicles", "description": "vehicles per period", "rtype": "Count"}],
            "stations": {"TrafficSensor": [{"id": "A22-1", "name": "A22 km 1", "origin": "A22", "latitude": 46.5, "longitude": 11.3}]},
            "records": {"TrafficSensor": {"A22-1": {"flow": [{"timestamp": 1_700_000_000_000i64, "value": 42, "period": 600}]}}}
        }),
    )
    .await
    .expect("importing a closed series");
    let a22 = login(&app, "a22", PLAIN_PASSWORD).await["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let plain = login(&app, "plain", PLAIN_PASSWORD).await["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    for (who, token, visible) in [
        ("anonymous", None, 0),
        ("no role", Some(plain.as_str()), 0),
        ("A22 role", Some(a22.as_str()), 1),
    ] {
        let (status, body, _) = get_as(&app, "/v2/flat/TrafficSensor/flow/latest", token).await;
        assert_eq!(status, 200, "{who}");
        assert_eq!(
            body["data"].as_array().unwrap().len(),
            visible,
            "{who}: {body}"
        );
    }
    let (status, body, _) = get_as(&app, "/v2/flat/TrafficSensor", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["data"][0]["scode"], "A22-1",
        "station metadata is open"
    );
    let (status, _) = send(
        &app,
        "POST",
        "/v2/json/syncDataTypes",
        &[("content-type", "application/json")],
        Some("[]".to_string()),
    )
    .await;
    assert_eq!(status, 401);
}
