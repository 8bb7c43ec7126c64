//! Byte-for-byte regression corpus: a fixed list of requests across every API, answered
//! by the router over the deterministic demo (time anchor pinned), on whichever backend
//! the suite runs. `golden/requests.txt` is the list; `golden/expected.txt` holds, per
//! request, the status, content type, length and SHA-256 of the body that Hub answered
//! when the list was recorded. A refactoring that changes any byte a client sees fails
//! here, with the request named.
//!
//! `HUB_GOLDEN_RECORD=1` rewrites `expected.txt` (only after a deliberate change of
//! behaviour); `HUB_GOLDEN_DUMP=DIR` writes every body to `DIR/NNN.body` to diff by hand.
//!
//! Timestamps of the moment the test runs (DATEX publication times, time series
//! transaction times, problem bodies) are masked before hashing: they are the only bytes that legitimately change between runs.

mod support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use axum::body::Body;
use http::Request;
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use tower::ServiceExt;

const ANCHOR: &str = "2025-06-15T12:00:00Z";

struct GoldenRequest {
    line: String,
    method: String,
    uri: String,
    authorized: bool,
    headers: Vec<(String, String)>,
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// `[AUTH] METHOD URI [| Header: value]...`, `#` comments and blank lines skipped.
fn parse_requests(text: &str) -> Vec<GoldenRequest> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let mut parts = line.split(" | ");
            let mut words = parts.next().unwrap().split_whitespace();
            let mut first = words.next().expect("a method");
            let authorized = first == "AUTH";
            if authorized {
                first = words.next().expect("a method after AUTH");
            }
            let uri = words.next().expect("a URI").to_string();
            let headers = parts
                .map(|h| {
                    let (name, value) = h.split_once(':').expect("Header: value");
                    (name.trim().to_string(), value.trim().to_string())
                })
                .collect();
            GoldenRequest {
                line: line.to_string(),
                method: first.to_string(),
                uri,
                authorized,
                headers,
            }
        })
        .collect()
}

/// Replaces timestamps of today by `<now>`; also yesterday and tomorrow, because a run
/// across midnight, and a timestamp written in a zone ahead of UTC (Europe/Rome after
/// 23:00 UTC), fall on a neighbouring date.
fn mask_now(body: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(body) else {
        return body.to_vec();
    };
    let today = chrono::Utc::now().date_naive();
    let mut out = text.to_string();
    for prefix in [today, today.pred_opt().unwrap(), today.succ_opt().unwrap()]
        .iter()
        .flat_map(|day| [day.format("%Y-%m-%dT"), day.format("%Y-%m-%d ")])
    {
        let prefix = prefix.to_string();
        while let Some(start) = out.find(&prefix) {
            let rest = &out[start + prefix.len()..];
            let len = rest
                .char_indices()
                .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, ':' | '.' | '+' | '-' | 'Z')))
                .map(|(i, _)| i)
                .unwrap_or(rest.len());
            out.replace_range(start..start + prefix.len() + len, "<now>");
        }
    }
    out.into_bytes()
}

async fn demo_app() -> (support::TestApp, String) {
    let app = support::demo_app(ANCHOR).await;
    app.store.refresh_statistics().await.expect("statistics");
    let token = support::password_token(&app, "demo", "demo").await;
    (app, token)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_answers_are_byte_identical_to_the_recorded_ones() {
    let requests =
        parse_requests(&std::fs::read_to_string(golden_dir().join("requests.txt")).unwrap());
    assert!(
        requests.len() >= 200,
        "the corpus keeps at least 200 requests, has {}",
        requests.len()
    );
    let (app, token) = demo_app().await;
    let dump = std::env::var_os("HUB_GOLDEN_DUMP").map(PathBuf::from);
    if let Some(dir) = &dump {
        std::fs::create_dir_all(dir).unwrap();
    }

    let mut actual = String::new();
    for (n, req) in requests.iter().enumerate() {
        let mut builder = Request::builder()
            .method(req.method.as_str())
            .uri(req.uri.as_str());
        if req.authorized {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        for (name, value) in &req.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let response = app
            .router
            .clone()
            .oneshot(builder.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().replace(' ', ""))
            .unwrap_or_else(|| "-".into());
        let body = mask_now(&response.into_body().collect().await.unwrap().to_bytes());
        if let Some(dir) = &dump {
            std::fs::write(dir.join(format!("{n:03}.body")), &body).unwrap();
        }
        let digest: String = Sha256::digest(&body)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        writeln!(
            actual,
            "{status} {content_type} {} {digest}  {}",
            body.len(),
            req.line
        )
        .unwrap();
    }

    let expected_path = golden_dir().join("expected.txt");
    if std::env::var("HUB_GOLDEN_RECORD").as_deref() == Ok("1") {
        std::fs::write(&expected_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&expected_path)
        .expect("golden/expected.txt (record with HUB_GOLDEN_RECORD=1)");
    let mismatches: Vec<String> = expected
        .lines()
        .zip(actual.lines())
        .filter(|(e, a)| e != a)
        .map(|(e, a)| format!("  expected {e}\n  actual   {a}"))
        .collect();
    assert_eq!(
        expected.lines().count(),
        actual.lines().count(),
        "the request list and expected.txt differ in length"
    );
    assert!(
        mismatches.is_empty(),
        "{} of {} answers changed:\n{}",
        mismatches.len(),
        requests.len(),
        mismatches.join("\n")
    );
}
