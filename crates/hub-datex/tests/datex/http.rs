//! The routes as a client sees them: discovery, feeds, errors, validators and caching.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::Router;
use chrono::{DateTime, Duration, Utc};
use http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use hub_datex::{router, router_with_clock, AnnouncementSource, BoxFuture, DatexConfig};
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::support::{demo_like, utc, Doc, El};

/// Announcements held in memory, with an optional revision counter, counting reads.
#[derive(Default)]
struct Memory {
    docs: Mutex<Vec<Value>>,
    revision: Option<AtomicUsize>,
    reads: AtomicUsize,
    fail: std::sync::atomic::AtomicBool,
}

impl Memory {
    fn new(docs: Vec<Value>, with_revision: bool) -> Arc<Memory> {
        Arc::new(Memory {
            docs: Mutex::new(docs),
            revision: with_revision.then(|| AtomicUsize::new(1)),
            ..Memory::default()
        })
    }

    fn edit(&self, f: impl FnOnce(&mut Vec<Value>)) {
        f(&mut self.docs.lock().unwrap());
        if let Some(r) = &self.revision {
            r.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl AnnouncementSource for Memory {
    fn announcements(&self) -> BoxFuture<'_, Result<Vec<Value>, String>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let result = if self.fail.load(Ordering::SeqCst) {
            Err("database is locked".to_string())
        } else {
            Ok(self.docs.lock().unwrap().clone())
        };
        Box::pin(async move { result })
    }

    fn revision(&self) -> BoxFuture<'_, Result<Option<String>, String>> {
        let revision = self
            .revision
            .as_ref()
            .map(|r| r.load(Ordering::SeqCst).to_string());
        Box::pin(async move { Ok(revision) })
    }
}

struct TestClock(Mutex<DateTime<Utc>>);

impl TestClock {
    fn set(&self, t: DateTime<Utc>) {
        *self.0.lock().unwrap() = t;
    }
}

const NOW: &str = "2025-06-15T10:00:00Z";

fn config() -> DatexConfig {
    DatexConfig {
        base_url: "https://datex.example.test/".into(),
        ..DatexConfig::default()
    }
}

fn app(source: Arc<Memory>) -> (Router, Arc<TestClock>) {
    let clock = Arc::new(TestClock(Mutex::new(utc(NOW))));
    let c = clock.clone();
    (
        router_with_clock(config(), source, Arc::new(move || *c.0.lock().unwrap())).unwrap(),
        clock,
    )
}

struct Reply {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: header::HeaderName) -> &str {
        self.headers
            .get(&name)
            .unwrap_or_else(|| panic!("no {name} header"))
            .to_str()
            .unwrap()
    }
}

async fn get(app: &Router, uri: &str, headers: &[(header::HeaderName, &str)]) -> Reply {
    let mut request = Request::get(uri);
    for (name, value) in headers {
        request = request.header(name, *value);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

const FEED: &str = "/datex/2/province-bz/situation-publication.xml";

#[tokio::test]
async fn discovery_lists_every_provider_with_an_absolute_feed_url() {
    let (app, _) = app(Memory::new(Vec::new(), false));
    for path in ["/datex/2/", "/datex/2"] {
        let reply = get(&app, path, &[]).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(
            reply.header(header::CONTENT_TYPE),
            "application/json; charset=utf-8"
        );
        let body: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(
            body,
            json!({
                "province-bz": {"situation-publication": "https://datex.example.test/datex/2/province-bz/situation-publication.xml"},
                "a22": {"situation-publication": "https://datex.example.test/datex/2/a22/situation-publication.xml"}
            })
        );
        assert_eq!(
            body.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["province-bz", "a22"],
            "configuration order"
        );
    }
}

#[tokio::test]
async fn both_feed_paths_serve_the_providers_document() {
    let (app, _) = app(Memory::new(demo_like(30, utc(NOW)), false));
    let feed = get(&app, FEED, &[]).await;
    assert_eq!(feed.status, StatusCode::OK);
    assert_eq!(feed.header(header::CONTENT_TYPE), "application/xml");
    let root = El::parse(&feed.body);
    assert_eq!(root.name, "d2LogicalModel");
    assert_eq!(
        root.text_at("exchange/supplierIdentification/nationalIdentifier"),
        Some("ITPBZ")
    );
    assert!(!root.situations().is_empty());
    let v1 = get(&app, "/v1/SituationPublication/province-bz", &[]).await;
    assert_eq!(v1.status, StatusCode::OK);
    assert_eq!(v1.header(header::CONTENT_TYPE), "application/xml");
    assert_eq!(v1.body, feed.body, "the same cached document");
    let upper = get(&app, "/datex/2/PROVINCE-BZ/situation-publication.xml", &[]).await;
    assert_eq!(
        upper.body, feed.body,
        "provider names are matched ignoring case"
    );
    let a22 = get(&app, "/v1/SituationPublication/a22/", &[]).await;
    assert_eq!(
        El::parse(&a22.body).text_at("exchange/supplierIdentification/nationalIdentifier"),
        Some("IT492")
    );
}

#[tokio::test]
async fn an_unknown_provider_is_a_404_problem() {
    let (app, _) = app(Memory::new(Vec::new(), false));
    for path in [
        "/datex/2/trentino/situation-publication.xml",
        "/v1/SituationPublication/trentino",
    ] {
        let reply = get(&app, path, &[]).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        assert_eq!(
            reply.header(header::CONTENT_TYPE),
            "application/problem+json"
        );
        let problem: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(problem["status"], 404);
        assert_eq!(problem["title"], "Not Found");
        assert!(problem["type"].as_str().unwrap().contains("not-found"));
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("trentino") && detail.contains("province-bz") && detail.contains("a22"),
            "{detail}"
        );
    }
}

#[tokio::test]
async fn a_repeated_request_with_the_entity_tag_gets_304() {
    let (app, _) = app(Memory::new(demo_like(30, utc(NOW)), false));
    let first = get(&app, FEED, &[]).await;
    let etag = first.header(header::ETAG).to_string();
    assert!(etag.starts_with("W/\""), "{etag}");
    let again = get(&app, FEED, &[(header::IF_NONE_MATCH, &etag)]).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.body.is_empty());
    assert_eq!(again.header(header::ETAG), etag);
    let listed = get(
        &app,
        FEED,
        &[(header::IF_NONE_MATCH, &format!("\"other\", {etag}"))],
    )
    .await;
    assert_eq!(listed.status, StatusCode::NOT_MODIFIED);
    let stale = get(
        &app,
        FEED,
        &[(header::IF_NONE_MATCH, "W/\"0000000000000000\"")],
    )
    .await;
    assert_eq!(stale.status, StatusCode::OK);
    assert_eq!(stale.body, first.body);
}

#[tokio::test]
async fn last_modified_is_the_newest_change_and_answers_if_modified_since() {
    let now = utc(NOW);
    let docs = vec![
        Doc::new(
            "a",
            "PROVINCE_BZ",
            "road-work",
            now - Duration::days(10),
            None,
        )
        .with(|v| v["LastChange"] = json!("2025-06-14T08:30:15.700Z"))
        .value,
        Doc::new(
            "b",
            "PROVINCE_BZ",
            "closure",
            now - Duration::days(12),
            None,
        )
        .with(|v| v["LastChange"] = json!("2025-06-01T08:00:00Z"))
        .value,
    ];
    let (app, _) = app(Memory::new(docs, false));
    let first = get(&app, FEED, &[]).await;
    assert_eq!(
        first.header(header::LAST_MODIFIED),
        "Sat, 14 Jun 2025 08:30:15 GMT"
    );
    let same = get(
        &app,
        FEED,
        &[(header::IF_MODIFIED_SINCE, "Sat, 14 Jun 2025 08:30:15 GMT")],
    )
    .await;
    assert_eq!(same.status, StatusCode::NOT_MODIFIED);
    let older = get(
        &app,
        FEED,
        &[(header::IF_MODIFIED_SINCE, "Sat, 14 Jun 2025 08:30:14 GMT")],
    )
    .await;
    assert_eq!(older.status, StatusCode::OK);
    // If-None-Match decides alone when both are sent.
    let both = get(
        &app,
        FEED,
        &[
            (header::IF_NONE_MATCH, "W/\"other\""),
            (header::IF_MODIFIED_SINCE, "Sat, 14 Jun 2025 08:30:15 GMT"),
        ],
    )
    .await;
    assert_eq!(both.status, StatusCode::OK);
}

#[tokio::test]
async fn a_changed_announcement_changes_the_feed_without_a_revision_token() {
    let now = utc(NOW);
    let source = Memory::new(
        vec![
            Doc::new(
                "a",
                "PROVINCE_BZ",
                "road-work",
                now - Duration::days(1),
                None,
            )
            .value,
        ],
        false,
    );
    let (app, _) = app(source.clone());
    let first = get(&app, FEED, &[]).await;
    source.edit(|docs| {
        docs[0]["Detail"]["it"]["Title"] = json!("Cantiere notturno");
        docs[0]["LastChange"] = json!("2025-06-15T09:00:00Z");
    });
    let second = get(
        &app,
        FEED,
        &[(header::IF_NONE_MATCH, first.header(header::ETAG))],
    )
    .await;
    assert_eq!(second.status, StatusCode::OK);
    assert_ne!(second.header(header::ETAG), first.header(header::ETAG));
    assert!(String::from_utf8_lossy(&second.body).contains("Cantiere notturno"));
    source.edit(|docs| docs.clear());
    let third = get(&app, FEED, &[]).await;
    assert!(
        El::parse(&third.body).situations().is_empty(),
        "a removed announcement leaves the feed"
    );
    assert_ne!(third.header(header::ETAG), second.header(header::ETAG));
}

#[tokio::test]
async fn with_a_revision_token_repeated_requests_do_not_read_the_announcements() {
    let now = utc(NOW);
    let source = Memory::new(demo_like(20, now), true);
    let (app, _) = app(source.clone());
    let first = get(&app, FEED, &[]).await;
    for _ in 0..5 {
        assert_eq!(get(&app, FEED, &[]).await.body, first.body);
    }
    assert_eq!(source.reads.load(Ordering::SeqCst), 1);
    source.edit(|docs| {
        docs.push(
            Doc::new(
                "new",
                "PROVINCE_BZ",
                "closure",
                now - Duration::hours(1),
                None,
            )
            .value,
        )
    });
    let after = get(&app, FEED, &[]).await;
    assert_eq!(source.reads.load(Ordering::SeqCst), 2);
    assert!(El::parse(&after.body)
        .situations()
        .iter()
        .any(|s| s.attr("id") == Some("new")));
}

#[tokio::test]
async fn time_passing_moves_situations_out_of_the_cached_feed() {
    let now = utc(NOW);
    let docs = vec![
        Doc::new(
            "short",
            "PROVINCE_BZ",
            "accident",
            now - Duration::hours(1),
            Some(now + Duration::hours(1)),
        )
        .value,
        Doc::new(
            "soon",
            "PROVINCE_BZ",
            "accident",
            now + Duration::minutes(30),
            Some(now + Duration::hours(3)),
        )
        .value,
    ];
    let source = Memory::new(docs, true);
    let (app, clock) = app(source.clone());
    let before = get(&app, FEED, &[]).await;
    let ids = |r: &Reply| {
        El::parse(&r.body)
            .situations()
            .iter()
            .map(|s| s.attr("id").unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&before), ["short", "soon"]);
    let status = |r: &Reply, id: &str| {
        El::parse(&r.body)
            .situations()
            .iter()
            .find(|s| s.attr("id") == Some(id))
            .unwrap()
            .text_at("situationRecord/validity/validityStatus")
            .unwrap()
            .to_string()
    };
    assert_eq!(status(&before, "soon"), "definedByValidityTimeSpec");

    clock.set(now + Duration::minutes(45));
    let started = get(
        &app,
        FEED,
        &[(header::IF_NONE_MATCH, before.header(header::ETAG))],
    )
    .await;
    assert_eq!(
        started.status,
        StatusCode::OK,
        "the start of 'soon' changed the document"
    );
    assert_eq!(status(&started, "soon"), "active");

    clock.set(now + Duration::hours(2));
    let ended = get(&app, FEED, &[]).await;
    assert_eq!(ids(&ended), ["soon"]);
    assert_eq!(
        ended.header(header::LAST_MODIFIED),
        "Sun, 15 Jun 2025 11:00:00 GMT",
        "the end of 'short' is the newest change"
    );
    assert_eq!(
        source.reads.load(Ordering::SeqCst),
        3,
        "re-read only when time changed the content"
    );
}

#[tokio::test]
async fn an_unreadable_source_is_a_503_problem() {
    let source = Memory::new(Vec::new(), false);
    source.fail.store(true, Ordering::SeqCst);
    let (app, _) = app(source);
    let reply = get(&app, FEED, &[]).await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        reply.header(header::CONTENT_TYPE),
        "application/problem+json"
    );
    let problem: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(problem["status"], 503);
    assert!(
        !problem["detail"].as_str().unwrap().contains("locked"),
        "internal errors are logged, not shown"
    );
}

#[test]
fn an_invalid_configuration_is_refused_when_the_router_is_built() {
    let bad = DatexConfig {
        time_zone: "Mars/Olympus".into(),
        ..DatexConfig::default()
    };
    assert!(hub_datex::try_router(bad.clone(), Memory::new(Vec::new(), false)).is_err());
    let panic =
        std::panic::catch_unwind(|| router(bad, Memory::new(Vec::new(), false))).unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("Mars/Olympus"), "{message}");
}
