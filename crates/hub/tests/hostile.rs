//! The hostile corpus of issue 13: requests built to crash Hub, exhaust it or slip past
//! its input limits (`tests/hostile/requests.txt`), sent to the router over the demo data
//! on whichever backend `support::backend()` picks. Each must get its expected status —
//! never a 5xx — and a 400 must name the offending parameter in its problem body.
//!
//! Owns: the corpus and its expansion syntax. Must not: re-test answers the golden corpus
//! pins, or need a network.

mod support;

use std::path::Path;

use serde_json::Value;

struct HostileRequest {
    line: String,
    uri: String,
    status: u16,
    /// The expected `parameter` member of a 400 problem (None: not checked).
    parameter: Option<String>,
}

/// Expands every `{N*text}` into `text` repeated N times.
fn expand(template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').expect("a closing brace") + open;
        let (count, text) = rest[open + 1..close].split_once('*').expect("{N*text}");
        out.push_str(&text.repeat(count.parse().expect("a repeat count")));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn corpus() -> Vec<HostileRequest> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/requests.txt");
    std::fs::read_to_string(path)
        .expect("the hostile corpus")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (request, expected) = line.split_once(" -> ").expect("REQUEST -> STATUS");
            let uri = request.strip_prefix("GET ").expect("GET requests only");
            let mut words = expected.split_whitespace();
            let status = words.next().and_then(|s| s.parse().ok()).expect("a status");
            let parameter = words.next().filter(|p| *p != "-").map(str::to_string);
            HostileRequest {
                line: line.to_string(),
                uri: expand(uri),
                status,
                parameter,
            }
        })
        .collect()
}

/// Both demo tests only read: they share one demo.
fn demo_app() -> &'static support::TestApp {
    support::shared_demo_app("2025-06-15T12:00:00Z")
}

#[test]
fn expansion_repeats_the_braced_text() {
    for (template, expected) in [
        ("a{3*b}c", "abbbc"),
        ("{2*and(}x{2*)}", "and(and(x))"),
        ("plain", "plain"),
        ("{0*x}y", "y"),
    ] {
        assert_eq!(expand(template), expected);
    }
}

#[tokio::test]
async fn hostile_requests_get_their_status_and_never_a_server_error() {
    let app = demo_app();
    let mut failures = Vec::new();
    for r in corpus() {
        let (status, body) = support::get(app, &r.uri).await;
        let parameter = body.get("parameter").and_then(Value::as_str);
        if status >= 500 || status != r.status {
            failures.push(format!("{} → {status}: {body}", r.line));
        } else if r.parameter.is_some() && parameter != r.parameter.as_deref() {
            failures.push(format!("{} → parameter {parameter:?}: {body}", r.line));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A type named 500 times is one type: the same total as naming it once.
#[tokio::test]
async fn repeated_types_count_once() {
    let app = demo_app();
    for (endpoint, search) in [
        ("/v1/Filter", "expression=eq(Active,true)"),
        ("/v1/Find", "q=a"),
    ] {
        let once = format!("{endpoint}?{search}&limitto=1&type=Accommodation");
        let many = format!(
            "{endpoint}?{search}&limitto=1&type={}Accommodation",
            "Accommodation,".repeat(499)
        );
        let (s1, b1) = support::get(app, &once).await;
        let (s2, b2) = support::get(app, &many).await;
        assert_eq!((s1, s2), (200, 200), "{endpoint}: {b1} / {b2}");
        assert_eq!(b1["totalResults"], b2["totalResults"], "{endpoint}");
        assert_eq!(b1["Items"], b2["Items"], "{endpoint}");
    }
}
