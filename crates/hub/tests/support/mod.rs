//! Shared harness of the API tests: one store and router per test binary, request
//! helpers, and the hand-made content fixtures.
#![allow(dead_code)]

pub mod processes;
pub mod scripted;

use std::sync::OnceLock;

use axum::body::Body;
use axum::Router;
use http::{Request, Response};
use http_body_util::BodyExt;
use hub::Config;
use hub_store::test_snapshot::{self, Snapshot};
use hub_store::Store;
use serde_json::{json, Value};
use tower::ServiceExt;

pub struct TestApp {
    pub router: Router,
    pub store: Store,
    pub _dir: tempfile::TempDir,
}

/// The backend the tests run on: SQLite, or PostgreSQL when `HUB_TEST_DATABASE` names a
/// server (see `Store::open_for_tests`); the very same tests run on both.
pub fn backend() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = Store::open_for_tests(dir.path()).expect("opening the store");
    (store, dir)
}

pub fn test_config() -> Config {
    Config {
        content_base_url: Some("http://hub.test".into()),
        datex_base_url: Some("http://hub.test".into()),
        ..Config::default()
    }
}

/// The app with the content fixtures loaded.
pub fn content_app() -> &'static TestApp {
    static APP: OnceLock<TestApp> = OnceLock::new();
    APP.get_or_init(|| app_with_documents(&content_fixtures(), &test_config()))
}

/// A router with `config` over a store of its own holding `docs` (entity, document).
pub fn app_with_documents(docs: &[(&'static str, Value)], config: &Config) -> TestApp {
    let (store, dir) = backend();
    store
        .content()
        .put_batch_blocking(docs, &mut |_| {})
        .expect("loading the documents");
    TestApp {
        router: hub::router(store.clone(), config),
        store,
        _dir: dir,
    }
}

/// The router over the deterministic demo (content, GeoShapes, demo principals and
/// mobility time series) with its time anchor pinned, so answers do not depend on the
/// day the test runs.
pub async fn demo_app(anchor: &str) -> TestApp {
    demo_app_with(anchor, &test_config()).await
}

/// [`demo_app`] served with `config` (the ODH naming, for one).
pub async fn demo_app_with(anchor: &str, config: &Config) -> TestApp {
    let anchor: chrono::DateTime<chrono::Utc> = anchor.parse().expect("an RFC 3339 anchor");
    let (store, dir) = demo_store(anchor).await;
    TestApp {
        router: hub::router(store.clone(), config),
        store,
        _dir: dir,
    }
}

/// One [`demo_app`] for every test of a binary that only reads it: loading the demo takes
/// a debug build several seconds per test, most of a read-only suite's time. The demo is
/// loaded on a runtime of its own, kept for the binary's life, so tasks the store or the
/// router start outlive the test that happened to ask first. Every caller in a binary must
/// name the same anchor.
pub fn shared_demo_app(anchor: &'static str) -> &'static TestApp {
    static DEMO: OnceLock<(&'static str, tokio::runtime::Runtime, TestApp)> = OnceLock::new();
    let (loaded_at, _runtime, app) = DEMO.get_or_init(|| {
        // A test's own runtime cannot block on another one: the load runs on a thread.
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime for the shared demo");
            let app = runtime.block_on(demo_app(anchor));
            (anchor, runtime, app)
        })
        .join()
        .expect("loading the shared demo")
    });
    assert_eq!(*loaded_at, anchor, "one anchor per binary's shared demo");
    app
}

/// A store with the demo loaded (content, GeoShapes, principals, time series) at `anchor`.
/// In a test pass with snapshots (`scripts/test.sh` gives each pass a directory, see
/// `hub_store::test_snapshot`), the first load of a pass is kept there and every later
/// store is a copy of it.
pub async fn demo_store(anchor: chrono::DateTime<chrono::Utc>) -> (Store, tempfile::TempDir) {
    let Some(pass) = test_snapshot::pass_dir() else {
        return own_demo_store(anchor).await;
    };
    // One load per process at a time: a binary's tests that ask together wait for one.
    static FILLING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let snapshot = Snapshot::new(&pass, &format!("demo{}", anchor.timestamp()));
    {
        let _one = FILLING.lock().await;
        if !snapshot.exists() {
            let store = snapshot
                .open_for_filling()
                .expect("a store for the demo snapshot");
            load_demo(&store, anchor).await;
            snapshot.save(store).expect("saving the demo snapshot");
        }
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = snapshot
        .open_copy(dir.path())
        .expect("a copy of the demo snapshot");
    (store, dir)
}

/// A store that loads the demo itself, never a copy: for an anchor no other test shares.
pub async fn own_demo_store(anchor: chrono::DateTime<chrono::Utc>) -> (Store, tempfile::TempDir) {
    let (store, dir) = backend();
    load_demo(&store, anchor).await;
    (store, dir)
}

async fn load_demo(store: &Store, anchor: chrono::DateTime<chrono::Utc>) {
    let loader = store.clone();
    tokio::task::spawn_blocking(move || {
        hub::demo::load_demo_at(&loader, 1, anchor).expect("demo content")
    })
    .await
    .unwrap();
    hub_timeseries::load_demo(&*store.timeseries(), 1, anchor)
        .await
        .expect("demo time series");
}

/// An access token from the token service's password grant (the generic client).
pub async fn password_token(app: &TestApp, username: &str, password: &str) -> String {
    let form = format!(
        "grant_type=password&client_id=hub-generic-client&username={}&password={}",
        encode(username),
        encode(password)
    );
    let response = app
        .router
        .clone()
        .oneshot(
            Request::post("/auth/realms/hub/protocol/openid-connect/token")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from(form))
                .unwrap(),
        )
        .await
        .expect("the router answers");
    assert_eq!(response.status(), 200, "{username} gets a token");
    let body: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    body["access_token"].as_str().unwrap().to_string()
}

pub async fn request_with(app: &TestApp, uri: &str, headers: &[(&str, &str)]) -> Response<Body> {
    let mut builder = Request::builder().uri(uri);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    app.router
        .clone()
        .oneshot(builder.body(Body::empty()).unwrap())
        .await
        .expect("the router answers")
}

pub async fn request(app: &TestApp, uri: &str) -> Response<Body> {
    request_with(app, uri, &[]).await
}

pub async fn body_bytes(response: Response<Body>) -> Vec<u8> {
    response
        .into_body()
        .collect()
        .await
        .expect("reading the body")
        .to_bytes()
        .to_vec()
}

/// GET `uri`; the status and the JSON body.
pub async fn get(app: &TestApp, uri: &str) -> (u16, Value) {
    let response = request(app, uri).await;
    let status = response.status().as_u16();
    let bytes = body_bytes(response).await;
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "{uri}: body is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        )
    });
    (status, body)
}

pub fn encode(text: &str) -> String {
    percent_encode(text)
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn poi(
    id: &str,
    shortname: &str,
    source: &str,
    active: bool,
    last_change: &str,
    detail: Value,
) -> Value {
    let languages: Vec<String> = detail.as_object().unwrap().keys().cloned().collect();
    json!({
        "Id": id,
        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": source, "LastChange": last_change, "Reduced": false},
        "Shortname": shortname,
        "Active": active,
        "HasLanguage": languages,
        "Detail": detail,
    })
}

pub fn content_fixtures() -> Vec<(&'static str, Value)> {
    let mut alm = poi(
        "poi-alm",
        "Alm",
        "idm",
        true,
        "2024-03-01T10:00:00",
        json!({"de": {"Title": "Almhütte"}, "it": {"Title": "Rifugio alpino"}, "en": {"Title": "Alpine hut"}}),
    );
    alm["HubTags"] = json!([{"Id": "hut"}, {"Id": "summer"}]);
    alm["GpsInfo"] =
        json!([{"Gpstype": "position", "Latitude": 46.6, "Longitude": 11.5, "Altitude": 1800}]);
    let mut bakery = poi(
        "poi-b",
        "Bäckerei",
        "lts",
        true,
        "2023-01-01T00:00:00",
        json!({"de": {"Title": "Bäckerei Bozen"}, "it": {"Title": "Panificio Bolzano"}}),
    );
    bakery["Note"] = Value::Null;
    bakery["Empty"] = json!("");
    let cafe = poi(
        "poi-cafe",
        "Café",
        "lts",
        true,
        "2024-06-01T10:00:00+02:00",
        json!({"de": {"Title": "Café am Platz"}, "en": {"Title": "Cafe on the square"}}),
    );
    let village = poi(
        "poi-d",
        "Dorfstraße",
        "siag",
        false,
        "2024-05-31T23:30:00+00:00",
        json!({"it": {"Title": "Casa sulla strada"}, "de": {"Title": "Dorfstraße"}}),
    );
    let extra = poi(
        "poi-e",
        "Extra",
        "IDM",
        true,
        "2024-06-02T00:00:00",
        json!({"en": {"Title": "50% off skiing"}}),
    );

    let mut docs: Vec<(&'static str, Value)> = vec![
        ("HubActivityPoi", alm),
        ("HubActivityPoi", bakery),
        ("HubActivityPoi", cafe),
        ("HubActivityPoi", village),
        ("HubActivityPoi", extra),
    ];
    for n in (1..=12).rev() {
        let id = format!("evt-{n:02}");
        docs.push(("Event", json!({"Id": id, "_Meta": {"Id": id, "Type": "event", "Source": "lts"}, "Shortname": "Konzert", "Active": true, "Detail": {"de": {"Title": format!("Konzert {n}")}}})));
    }
    for (id, name, stars) in [
        ("acco-1", "Hotel Sonnenhof", "4stars"),
        ("acco-2", "Pension Edelweiss", "3stars"),
    ] {
        docs.push((
            "Accommodation",
            json!({
                "Id": id,
                "_Meta": {"Id": id, "Type": "accommodation", "Source": "lts", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
                "Shortname": name,
                "Active": true,
                "AccoCategoryId": stars,
                "AccoDetail": {"de": {"Name": name}},
                "HasLanguage": ["de"],
                "GpsInfo": [{"Gpstype": "position", "Latitude": 46.49, "Longitude": 11.35, "Altitude": 262}],
            }),
        ));
    }
    docs.push(("WeatherDistrict", json!({"Id": "3", "_Meta": {"Id": "3", "Type": "weatherdistrict", "Source": "siag"}, "Shortname": "Bozen", "DistrictName": {"de": "Bozen", "it": "Bolzano"}})));
    docs
}

/// The ids of a list answer's `Items`, in order.
pub fn item_ids(body: &Value) -> Vec<String> {
    body["Items"]
        .as_array()
        .unwrap_or_else(|| panic!("no Items: {body}"))
        .iter()
        .map(|i| i["Id"].as_str().unwrap().to_string())
        .collect()
}
