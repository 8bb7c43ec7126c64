//! The web face: `/` for browsers and API clients, the explorer's files, the API docs and
//! their security headers through the real router over a real store; and the whole
//! explorer driven in headless Chromium (tests/web_check.py) against a listening server
//! with the demo data.

mod support;

use std::future::IntoFuture;

use serde_json::Value;
use support::{body_bytes, content_app, request, request_with};

const CHROMIUM_ACCEPT: &str =
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

#[tokio::test]
async fn api_clients_get_a_json_index_at_the_root_never_a_404() {
    let app = content_app();
    for accept in [None, Some("application/json"), Some("*/*")] {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("accept", a)).into_iter().collect();
        let response = request_with(app, "/", &headers).await;
        assert_eq!(response.status(), 200, "Accept {accept:?}");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.headers()["vary"], "Accept");
        let index: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
        let urls: Vec<&str> = index["Apis"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["Url"].as_str().unwrap())
            .collect();
        assert_eq!(
            urls,
            [
                "http://hub.test/v1",
                "http://127.0.0.1:8080/v2",
                "http://hub.test/datex/2/",
                "http://127.0.0.1:8080/auth/realms/hub/protocol/openid-connect/token"
            ]
        );
        assert_eq!(index["Docs"], "http://hub.test/docs/");
    }
}

#[tokio::test]
async fn browsers_get_a_landing_page_with_the_numbers_of_the_dataset_index() {
    let app = content_app();
    let response = request_with(app, "/", &[("accept", CHROMIUM_ACCEPT)]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/html; charset=utf-8"
    );
    assert!(response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("default-src 'self'"));
    let page = String::from_utf8(body_bytes(response).await).unwrap();
    let (_, index) = support::get(app, "/v1").await;
    for dataset in index["Items"].as_array().unwrap() {
        let row = format!(
            "<a href=\"/explorer#/dataset/{route}\">{id}</a></td><td class=\"num\">{count}</td>",
            route = dataset["PathParam"].as_array().unwrap()[1..]
                .iter()
                .map(|p| p.as_str().unwrap())
                .collect::<Vec<_>>()
                .join("/"),
            id = dataset["Id"].as_str().unwrap(),
            count = dataset["RecordCount"]["open"],
        );
        assert!(page.contains(&row), "{row} missing from the landing page");
    }
    assert!(page.contains("<tr><td><a href=\"/explorer#/dataset/HubActivityPoi\">HubActivityPoi</a></td><td class=\"num\">5</td>"));
    for link in [
        "href=\"/docs/\"",
        "href=\"/explorer\"",
        "/datex/2/a22/situation-publication.xml",
    ] {
        assert!(page.contains(link), "{link} missing");
    }
    assert!(page.contains("http://127.0.0.1:8080/auth/realms/hub/protocol/openid-connect/token"));
}

/// The CSP forbids other origins and inline scripts; the pages must not need either.
#[tokio::test]
async fn pages_and_files_carry_the_policy_and_need_nothing_it_forbids() {
    let app = content_app();
    for (uri, media) in [
        ("/explorer", "text/html; charset=utf-8"),
        ("/web/explorer.js", "text/javascript; charset=utf-8"),
        ("/web/views.js", "text/javascript; charset=utf-8"),
        ("/web/hub.css", "text/css; charset=utf-8"),
        ("/favicon.ico", "image/svg+xml"),
        ("/docs/", "text/html"),
        ("/docs/swagger-ui-bundle.js", "text/javascript"),
    ] {
        let response = request_with(app, uri, &[("accept", CHROMIUM_ACCEPT)]).await;
        assert_eq!(response.status(), 200, "{uri}");
        assert_eq!(response.headers()["content-type"], media, "{uri}");
        let policy = response.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            policy.contains("default-src 'self'")
                && policy.contains("script-src 'self';")
                && policy.contains("connect-src 'self'"),
            "{uri}: {policy}"
        );
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        if media.starts_with("text/html") {
            let body = String::from_utf8(body_bytes(response).await).unwrap();
            let lower = body.to_ascii_lowercase();
            assert!(!lower.contains("<script>"), "{uri} has an inline script");
            for attribute in [
                " onclick=",
                " onload=",
                " onsubmit=",
                " onerror=",
                " onchange=",
            ] {
                assert!(!lower.contains(attribute), "{uri} has an inline handler");
            }
            assert!(
                !lower.contains("http://") && !lower.contains("https://") || uri == "/docs/",
                "{uri} names another origin"
            );
        }
    }
    let landing = request_with(app, "/", &[("accept", "text/html")]).await;
    let body = String::from_utf8(body_bytes(landing).await).unwrap();
    assert!(!body.to_ascii_lowercase().contains("<script"));
}

#[tokio::test]
async fn the_api_docs_offer_both_openapi_documents_and_call_no_validator() {
    let app = content_app();
    let response = request(app, "/docs/swagger-initializer.js").await;
    assert_eq!(response.status(), 200);
    let script = String::from_utf8(body_bytes(response).await).unwrap();
    for needle in [
        "\"url\": \"/swagger/v1/swagger.json\"",
        "\"url\": \"/v2/apispec\"",
        "\"validatorUrl\": \"none\"",
        "\"persistAuthorization\": false",
    ] {
        assert!(script.contains(needle), "{needle} missing from {script}");
    }
    // `/docs` itself leads to the page.
    let response = request(app, "/docs").await;
    assert!(response.status().is_redirection());
    assert_eq!(response.headers()["location"], "/docs/");
}

#[tokio::test]
async fn an_unknown_explorer_file_is_a_404_problem() {
    let app = content_app();
    let response = request(app, "/web/../Cargo.toml").await;
    assert_eq!(response.status(), 404);
    let response = request(app, "/web/secret.js").await;
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let body: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    assert_eq!(
        body["detail"],
        "/web/secret.js is not a file of the explorer"
    );
}

// ---------------------------------------------------------------- Chromium

fn tools_required() -> bool {
    std::env::var("HUB_REQUIRE_TOOLS").is_ok_and(|v| v == "1")
}

const CHROMIUM: &str = "/usr/bin/chromium";

/// Why the browser test cannot run here, if it cannot.
fn missing_browser_tools() -> Option<String> {
    if !std::path::Path::new(CHROMIUM).exists() {
        return Some(format!("{CHROMIUM} is missing (apt-get install chromium)"));
    }
    let playwright = std::process::Command::new("python3")
        .args(["-c", "import playwright.sync_api"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !playwright {
        return Some(
            "Python Playwright is missing (pip install -r tests/requirements.in)".to_string(),
        );
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_explorer_works_in_headless_chromium() {
    if let Some(reason) = missing_browser_tools() {
        assert!(!tools_required(), "HUB_REQUIRE_TOOLS=1 but {reason}");
        println!("SKIPPED: {reason}");
        return;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    // Anchored now: the explorer's "last 24 hours" must find the demo's measurements
    // (and no other test shares the anchor, so no snapshot is kept for it).
    let (store, _dir) = support::own_demo_store(chrono::Utc::now()).await;
    let config = hub::Config {
        content_base_url: Some(base.clone()),
        mobility_base_url: Some(base.clone()),
        datex_base_url: Some(base.clone()),
        auth_url: Some(base.clone()),
        ..hub::Config::default()
    };
    tokio::spawn(axum::serve(listener, hub::router(store, &config)).into_future());
    let shots = tempfile::Builder::new()
        .prefix("hub-web-screenshots-")
        .tempdir()
        .unwrap()
        .keep();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/web_check.py");
    let shots_arg = shots.to_string_lossy().to_string();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .args([script, &base, &shots_arg, CHROMIUM])
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    println!("screenshots in {}", shots.display());
    assert!(
        output.status.success() && stdout.contains("web_check: ok"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for name in ["landing", "dataset-with-map", "station-chart"] {
        let path = shots.join(format!("{name}.png"));
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "{} is missing or empty", path.display());
    }
}

/// The OGC API's resources answer browsers with their HTML view (carrying the JSON
/// answer's status) and every other client, or `f=json`, with JSON, from the same URL.
#[tokio::test]
async fn ogc_resources_have_html_views_for_browsers_and_json_for_clients() {
    let app = content_app();
    for path in [
        "/ogc",
        "/ogc/collections",
        "/ogc/collections/hubactivitypoi",
        "/ogc/collections/hubactivitypoi/items?limit=2",
    ] {
        let page = request_with(app, path, &[("accept", CHROMIUM_ACCEPT)]).await;
        assert_eq!(page.status(), 200, "{path}");
        assert_eq!(
            page.headers()["content-type"],
            "text/html; charset=utf-8",
            "{path}"
        );
        assert_eq!(page.headers()["vary"], "Accept", "{path}");
        assert!(
            page.headers().contains_key("content-security-policy"),
            "{path}"
        );
        let text = String::from_utf8(body_bytes(page).await).unwrap();
        assert!(text.contains(r#"src="/web/ogc.js""#), "{path}");

        let separator = if path.contains('?') { '&' } else { '?' };
        let forced = format!("{path}{separator}f=json");
        let json = request_with(app, &forced, &[("accept", CHROMIUM_ACCEPT)]).await;
        assert_eq!(json.status(), 200, "{forced}");
        let kind = json.headers()["content-type"].to_str().unwrap().to_string();
        assert!(kind.contains("json"), "{forced}: {kind}");
        let _: Value = serde_json::from_slice(&body_bytes(json).await).unwrap();

        let plain = request_with(app, path, &[("accept", "application/json")]).await;
        assert!(
            plain.headers()["content-type"]
                .to_str()
                .unwrap()
                .contains("json"),
            "{path}"
        );
    }
    let missing = request_with(
        app,
        "/ogc/collections/nosuchthing",
        &[("accept", CHROMIUM_ACCEPT)],
    )
    .await;
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.headers()["content-type"],
        "text/html; charset=utf-8"
    );
    // Not every resource has a view: the OpenAPI document and tiles stay what they are.
    let api = request_with(app, "/ogc/api", &[("accept", CHROMIUM_ACCEPT)]).await;
    assert!(!api.headers()["content-type"]
        .to_str()
        .unwrap()
        .contains("html"));
    let script = request(app, "/web/ogc.js").await;
    assert_eq!(script.status(), 200);
}
