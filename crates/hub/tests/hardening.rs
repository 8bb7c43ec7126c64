//! Issue 13 at the HTTP edge, through the real router: the server's own errors are
//! problem bodies (405 with `Allow`, 413, 414, 431), load shedding answers 503 with
//! `Retry-After`, per-client rate limits answer 429, and `/metrics` parses as the
//! Prometheus text format with route templates as labels.

mod support;

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use http::{Request, Response};
use http_body_util::BodyExt;
use hub::Config;
use serde_json::Value;
use tower::ServiceExt;

fn app(config: Config) -> (Router, tempfile::TempDir) {
    let (store, dir) = support::backend();
    (hub::router(store, &config), dir)
}

async fn send(router: &Router, request: Request<Body>) -> Response<Body> {
    router
        .clone()
        .oneshot(request)
        .await
        .expect("the router answers")
}

fn get(uri: &str) -> Request<Body> {
    Request::builder().uri(uri).body(Body::empty()).unwrap()
}

async fn problem(response: Response<Body>) -> Value {
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json",
        "{:?}",
        response.headers()
    );
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).expect("a JSON problem")
}

#[tokio::test]
async fn method_not_allowed_names_the_allowed_methods() {
    let (router, _dir) = app(support::test_config());
    let response = send(
        &router,
        Request::builder()
            .method("POST")
            .uri("/v2/flat")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "GET,HEAD");
    // The method router writes no body; the edge gives it the problem body every other
    // error has.
    let body = problem(response).await;
    assert_eq!(body["status"], 405);
    assert_eq!(body["title"], "Method Not Allowed");
}

#[tokio::test]
async fn oversize_targets_headers_and_bodies_are_problems() {
    let (router, _dir) = app(support::test_config());
    let long = format!(
        "/v1/Accommodation?searchfilter={}",
        "a".repeat(hub::hygiene::MAX_URI_BYTES)
    );
    let response = send(&router, get(&long)).await;
    assert_eq!(response.status(), 414);
    assert_eq!(
        problem(response).await["type"],
        "urn:hub:problem:uri-too-long"
    );

    let big = "b".repeat(hub::hygiene::MAX_HEADER_BYTES + 1);
    let response = send(
        &router,
        Request::builder()
            .uri("/v1/Accommodation")
            .header("x-big", big)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(response.status(), 431);
    assert_eq!(
        problem(response).await["type"],
        "urn:hub:problem:headers-too-large"
    );

    let response = send(
        &router,
        Request::builder()
            .method("POST")
            .uri("/auth/realms/hub/protocol/openid-connect/token")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(vec![b'a'; 3 * 1024 * 1024]))
            .unwrap(),
    )
    .await;
    // axum's default 2 MB body limit writes plain text; the edge makes it a problem.
    assert_eq!(response.status(), 413);
    let body = problem(response).await;
    assert_eq!(body["type"], "urn:hub:problem:payload-too-large");
    assert_eq!(body["status"], 413);
}

#[tokio::test]
async fn a_full_server_sheds_load_with_503_and_retry_after() {
    let config = Config {
        max_in_flight: 1,
        max_queued: 0,
        ..support::test_config()
    };
    let (router, _dir) = app(config);
    // A request whose body never ends holds the only slot.
    let stalled = Body::from_stream(futures::stream::pending::<Result<Vec<u8>, std::io::Error>>());
    let holder = Request::builder()
        .method("POST")
        .uri("/auth/realms/hub/protocol/openid-connect/token")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(stalled)
        .unwrap();
    let r = router.clone();
    let held = tokio::spawn(async move { r.oneshot(holder).await });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let response = send(&router, get("/health")).await;
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "5");
    assert_eq!(
        problem(response).await["type"],
        "urn:hub:problem:unavailable"
    );
    held.abort();
    let _ = held.await;
    let metrics = metrics_text(&router).await;
    assert_eq!(
        sample(
            &metrics,
            "hub_http_requests_rejected_total{reason=\"overload\"}"
        ),
        Some(1.0)
    );
}

fn with_ip(mut request: Request<Body>, ip: [u8; 4]) -> Request<Body> {
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from((ip, 4000))));
    request
}

#[tokio::test]
async fn rate_limits_are_off_by_default_and_answer_429_when_on() {
    let (router, _dir) = app(support::test_config());
    for _ in 0..300 {
        assert_eq!(
            send(&router, with_ip(get("/health"), [10, 0, 0, 1]))
                .await
                .status(),
            200
        );
    }
    let config = Config {
        rate_limit: 1,
        rate_limit_burst: 2,
        ..support::test_config()
    };
    let (router, _dir) = app(config);
    for _ in 0..2 {
        assert_eq!(
            send(&router, with_ip(get("/health"), [10, 0, 0, 1]))
                .await
                .status(),
            200
        );
    }
    let refused = send(&router, with_ip(get("/health"), [10, 0, 0, 1])).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(
        problem(refused).await["type"],
        "urn:hub:problem:too-many-requests"
    );
    // Another client is not affected.
    assert_eq!(
        send(&router, with_ip(get("/health"), [10, 0, 0, 2]))
            .await
            .status(),
        200
    );
}

async fn metrics_text(router: &Router) -> String {
    let response = send(router, get("/metrics")).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Parses the text format: every line is a comment (`# HELP`/`# TYPE`) or
/// `name{labels} value`; returns the samples as (series, value).
fn parse(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter(|line| !line.is_empty())
        .filter_map(|line| {
            if line.starts_with("# HELP ") || line.starts_with("# TYPE ") {
                return None;
            }
            let (series, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("bad line {line:?}"));
            let name_end = series.find('{').unwrap_or(series.len());
            assert!(
                series[..name_end]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "bad metric name in {line:?}"
            );
            if name_end < series.len() {
                assert!(series.ends_with('}'), "unclosed labels in {line:?}");
            }
            Some((
                series.to_string(),
                value
                    .parse::<f64>()
                    .unwrap_or_else(|_| panic!("bad value in {line:?}")),
            ))
        })
        .collect()
}

fn sample(text: &str, series: &str) -> Option<f64> {
    parse(text)
        .into_iter()
        .find(|(s, _)| s == series)
        .map(|(_, v)| v)
}

#[tokio::test]
async fn metrics_count_requests_by_route_template_and_status() {
    let (router, _dir) = app(support::test_config());
    send(&router, get("/v2/flat")).await;
    send(&router, get("/v2/flat/ParkingStation")).await;
    send(&router, get("/nowhere")).await;
    let text = metrics_text(&router).await;
    let samples = parse(&text);
    assert!(
        samples
            .iter()
            .any(|(s, _)| s
                .starts_with("hub_http_requests_total{method=\"GET\",route=\"/v2/{*rest}\"")),
        "{text}"
    );
    assert!(
        !text.contains("ParkingStation"),
        "raw paths must not become labels:\n{text}"
    );
    assert_eq!(
        sample(
            &text,
            "hub_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"}"
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            "hub_http_request_duration_seconds_count{route=\"/v2/{*rest}\"}"
        ),
        Some(2.0)
    );
    assert_eq!(
        sample(
            &text,
            "hub_http_request_duration_seconds_bucket{route=\"/v2/{*rest}\",le=\"+Inf\"}"
        ),
        Some(2.0)
    );
    assert_eq!(
        sample(&text, "hub_http_requests_in_flight"),
        Some(1.0),
        "the /metrics request itself"
    );
    assert_eq!(
        sample(
            &text,
            "hub_http_requests_rejected_total{reason=\"rate_limit\"}"
        ),
        Some(0.0)
    );
}

fn login(user: &str, password: &str) -> Request<Body> {
    let form = format!(
        "grant_type=password&client_id=hub-generic-client&username={user}&password={password}"
    );
    with_ip(
        Request::builder()
            .method("POST")
            .uri("/auth/realms/hub/protocol/openid-connect/token")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(form))
            .unwrap(),
        [10, 0, 0, 9],
    )
}

#[tokio::test]
async fn failed_password_logins_are_throttled_per_user() {
    let config = support::test_config();
    let (router, _dir) = app(config.clone());
    for _ in 0..config.login_free_failures_per_user {
        assert_eq!(send(&router, login("mallory", "guess")).await.status(), 400);
    }
    let refused = send(&router, login("mallory", "guess")).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(
        problem(refused).await["type"],
        "urn:hub:problem:too-many-requests"
    );
    // Another user from the same address is still heard.
    assert_eq!(send(&router, login("trudy", "guess")).await.status(), 400);
    let text = metrics_text(&router).await;
    assert_eq!(
        sample(
            &text,
            "hub_http_requests_rejected_total{reason=\"login_throttle\"}"
        ),
        Some(1.0),
        "{text}"
    );
}

/// A full store: the SQLite file has reached its size cap (`--sqlite-max-size-mib`), so
/// SQLite answers writes with SQLITE_FULL, the same error a full disk gives. The client
/// gets a 503 problem with `Retry-After` that says what happened, and reads go on.
#[tokio::test]
async fn a_full_store_answers_503_and_reads_go_on() {
    if std::env::var("HUB_TEST_DATABASE").is_ok_and(|v| !v.trim().is_empty()) {
        println!("skipped on PostgreSQL: the size cap is the embedded store's");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let uncapped = hub_store::SqliteTuning::default();
    {
        let store = hub_store::Store::open_sqlite_tuned(dir.path(), uncapped).unwrap();
        let auth = store.auth();
        let content = store.content();
        tokio::task::spawn_blocking(move || {
            hub_auth::demo::create_demo_principals(&*auth, &hub_auth::demo::DEMO_WRITABLE).unwrap();
            // 300 articles of ~8 KB take the file past 2 MiB.
            let text = "lorem ipsum ".repeat(700);
            let docs: Vec<(&'static str, Value)> = (0..300)
                .map(|n| {
                    (
                        "Article",
                        serde_json::json!({"Id": format!("filler-{n}"), "Shortname": text}),
                    )
                })
                .collect();
            content.put_batch_blocking(&docs, &mut |_| {}).unwrap();
        })
        .await
        .unwrap();
    }
    // Closing checkpointed the log into the file, so the file holds every page: a cap of
    // 1 MiB is below what the store already takes.
    let file = std::fs::metadata(dir.path().join("hub.sqlite3"))
        .unwrap()
        .len();
    assert!(file > 1024 * 1024, "the store is over 1 MiB ({file} bytes)");
    let capped = hub_store::SqliteTuning {
        max_size_mib: 1,
        ..uncapped
    };
    let store = hub_store::Store::open_sqlite_tuned(dir.path(), capped).unwrap();
    let router = hub::router(store, &support::test_config());

    // The cap only refuses growth (SQLite keeps it at no less than the file's size): a
    // token still fits in the free space of existing pages, a 200 KB document does not.
    let token = writer_token(&router).await;
    let article = serde_json::json!({
        "Id": "TOO-MUCH",
        "Active": true,
        "Shortname": "x".repeat(200_000),
    });
    let refused = send(
        &router,
        Request::post("/v1/Article")
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(Body::from(article.to_string()))
            .unwrap(),
    )
    .await;
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    let body = problem(refused).await;
    assert_eq!(body["status"], 503);
    let detail = body["detail"].as_str().unwrap_or_default().to_lowercase();
    assert!(
        detail.contains("full") || detail.contains("space"),
        "the problem says the storage is full: {body}"
    );
    assert_eq!(send(&router, get("/v1/HubActivityPoi")).await.status(), 200);
    assert_eq!(send(&router, get("/health")).await.status(), 200);
}

/// An access token of the demo writer client (client credentials grant).
async fn writer_token(router: &Router) -> String {
    let form = format!(
        "grant_type=client_credentials&client_id={}&client_secret={}",
        hub_auth::demo::DEMO_WRITER_CLIENT,
        hub_auth::demo::DEMO_WRITER_SECRET
    );
    let granted = send(
        router,
        Request::post("/auth/realms/hub/protocol/openid-connect/token")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(form))
            .unwrap(),
    )
    .await;
    assert_eq!(granted.status(), 200);
    let bytes = granted.into_body().collect().await.unwrap().to_bytes();
    let token: Value = serde_json::from_slice(&bytes).unwrap();
    token["access_token"].as_str().unwrap().to_string()
}

/// A NUL (`%00` in the target, `\u0000` in a JSON body) is refused with a 400 naming
/// where it was, on every API and both backends (PostgreSQL keeps no NUL in text: each of
/// these answered 500 there before).
#[tokio::test]
async fn a_nul_anywhere_in_a_request_is_a_400_naming_where() {
    let (store, _dir) = support::backend();
    let auth = store.auth();
    tokio::task::spawn_blocking(move || {
        hub_auth::demo::create_demo_principals(&*auth, &hub_auth::demo::DEMO_WRITABLE).unwrap()
    })
    .await
    .unwrap();
    let router = hub::router(store, &support::test_config());
    let token = writer_token(&router).await;
    // (method, target, body, the problem's parameter and position, or the detail's start)
    let cases: &[(&str, &str, &str, &str)] = &[
        ("GET", "/v1/Article/a%00b", "", "path 14"),
        ("GET", "/v1/Accommodation/%C3%BC%00", "", "path 20"),
        ("PUT", "/v1/Article/a%00b", r#"{"Active":true}"#, "path 14"),
        ("DELETE", "/v1/Article/a%00b", "", "path 14"),
        ("GET", "/v2/flat/a%00b", "", "path 11"),
        ("GET", "/v2/flat/TrafficSensor/a%00b/latest", "", "path 25"),
        (
            "POST",
            "/v2/json/pushRecords/a%00b",
            r#"{"name":"x","branch":{}}"#,
            "path 23",
        ),
        (
            "GET",
            "/v2/json/getDateOfLastRecord/X?stationId=a%00&typeId=b",
            "",
            "stationId 2",
        ),
        (
            "GET",
            "/v2/tree/TrafficSensor/*/latest?where=sname.eq.%22a%00%22",
            "",
            "where 12",
        ),
        ("GET", "/ogc/collections/Article/items/a%00b", "", "path 33"),
        ("GET", "/datex/2/situations/a%00b", "", "path 22"),
        (
            "POST",
            "/v1/Article",
            r#"{"Id":"NUL-1","Active":true,"Detail":{"de":{"Title":"a\u0000b"}}}"#,
            "$.Detail.de.Title holds a NUL character",
        ),
        (
            "POST",
            "/v1/Article",
            r#"{"Id":"NUL-2","a\u0000b":1}"#,
            "$.a\\0b holds a NUL character",
        ),
        (
            "POST",
            "/v2/json/syncStations/X",
            r#"[{"id":"a\u0000","name":"n","origin":"o","latitude":1,"longitude":1}]"#,
            "$[0].id: holds a NUL character",
        ),
        (
            "POST",
            "/v2/json/syncDataTypes",
            r#"[{"name":"\u0000","unit":"u"}]"#,
            "$[0].name: holds a NUL character",
        ),
    ];
    for (method, target, body, expected) in cases {
        let answer = send(
            &router,
            Request::builder()
                .method(*method)
                .uri(*target)
                .header("authorization", format!("Bearer {token}"))
                .header("content-type", "application/json")
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await;
        let status = answer.status();
        // Each API's error body: the Time Series API's own, problems elsewhere.
        let expected_type = if target.starts_with("/v2/") {
            "application/json"
        } else {
            "application/problem+json"
        };
        assert_eq!(
            answer.headers()["content-type"],
            expected_type,
            "{method} {target}"
        );
        let bytes = answer.into_body().collect().await.unwrap().to_bytes();
        let answer: Value = serde_json::from_slice(&bytes).expect("a JSON error body");
        assert_eq!(status, 400, "{method} {target}: {answer}");
        let named = match (&answer["parameter"], &answer["position"]) {
            (Value::String(name), Value::Number(at)) => format!("{name} {at}"),
            _ => {
                let detail = answer["detail"].as_str().or(answer["message"].as_str());
                detail
                    .unwrap_or_default()
                    .chars()
                    .take(expected.chars().count())
                    .collect()
            }
        };
        assert_eq!(named, *expected, "{method} {target}: {answer}");
    }
    // Nothing was stored on the way.
    let listed = send(&router, get("/v1/Article?pagesize=50")).await;
    let bytes = listed.into_body().collect().await.unwrap().to_bytes();
    assert!(
        !String::from_utf8_lossy(&bytes).contains("NUL-"),
        "no NUL document was stored"
    );
}
