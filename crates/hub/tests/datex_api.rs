//! The traffic feed served from the store (not the feed crate's in-memory source), on
//! whichever backend `HUB_TEST_DATABASE` selects: the demo's situations appear, and a
//! write through the store changes the feed and its ETag at once — the rendered-feed
//! cache is keyed by the store's per-entity write counter, which every write path bumps.

mod support;

use chrono::Utc;
use http::StatusCode;
use support::{backend, body_bytes, request, request_with, test_config, TestApp};

const FEED: &str = "/datex/2/province-bz/situation-publication.xml";

fn situation_ids(xml: &str) -> Vec<String> {
    xml.match_indices("<situation id=\"")
        .map(|(i, m)| {
            let rest = &xml[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

async fn feed(app: &TestApp, etag: Option<&str>) -> (StatusCode, Option<String>, String) {
    let headers: Vec<(&str, &str)> = etag.map(|e| vec![("if-none-match", e)]).unwrap_or_default();
    let response = request_with(app, FEED, &headers).await;
    let status = response.status();
    let etag = response
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_string());
    (
        status,
        etag,
        String::from_utf8(body_bytes(response).await).unwrap(),
    )
}

#[tokio::test]
async fn store_writes_change_the_feed_and_its_etag() {
    let (store, dir) = backend();
    let mut announcements = Vec::new();
    hub_demo::content_documents(
        &hub_demo::DemoOptions {
            scale: 1,
            anchor: Utc::now(),
        },
        &mut |entity, doc| {
            if entity == "Announcement" {
                announcements.push((entity, doc));
            }
        },
    );
    assert!(
        !announcements.is_empty(),
        "the demo has traffic announcements"
    );
    store
        .content()
        .put_batch_blocking(&announcements, &mut |_| {})
        .unwrap();
    let app = TestApp {
        router: hub::router(store.clone(), &test_config()),
        store: store.clone(),
        _dir: dir,
    };

    let (status, etag, xml) = feed(&app, None).await;
    assert_eq!(status, StatusCode::OK);
    let ids = situation_ids(&xml);
    assert!(!ids.is_empty(), "province-bz shows current demo situations");
    let etag = etag.expect("the feed has an ETag");
    let (status, _, _) = feed(&app, Some(&etag)).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);

    // Delete one shown situation through the store: the old ETag no longer matches and
    // the situation is gone from the new body.
    // Situation ids are document ids without their `urn:announcements:<provider>:` prefix.
    let gone = ids[0].clone();
    let (_, doc) = announcements
        .iter()
        .find(|(_, d)| {
            d["Id"]
                .as_str()
                .is_some_and(|id| id.ends_with(&format!(":{gone}")) || id == gone)
        })
        .expect("the situation's document")
        .clone();
    let doc_id = doc["Id"].as_str().unwrap().to_string();
    assert!(store
        .content()
        .delete("Announcement", &doc_id)
        .await
        .unwrap());
    let (status, new_etag, xml) = feed(&app, Some(&etag)).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(new_etag.as_deref(), Some(etag.as_str()));
    assert!(
        !situation_ids(&xml).contains(&gone),
        "{gone} still in the feed"
    );
    assert_eq!(situation_ids(&xml).len(), ids.len() - 1);

    // A single-document save (the write API's path) invalidates it too.
    store
        .content()
        .put("Announcement", doc, "2026-01-01T00:00:00Z".into(), false)
        .await
        .unwrap();
    let (status, _, xml) = feed(&app, new_etag.as_deref()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(situation_ids(&xml).contains(&gone));
    assert_eq!(request(&app, "/datex/2/").await.status(), StatusCode::OK);
}
