//! The whole-dataset read (`pagesize=-1`) and Distinct over the demo data: both read
//! every match through a store cursor in batches. The streamed envelope must hold every
//! document exactly once, equal to the same documents read page by page (closed parts
//! reduced the same way for an anonymous caller), on both backends.

use std::collections::BTreeSet;

use serde_json::Value;

use super::support::{self, body_bytes, get, request, request_with, TestApp};

async fn demo() -> &'static TestApp {
    static APP: tokio::sync::OnceCell<TestApp> = tokio::sync::OnceCell::const_new();
    APP.get_or_init(|| support::demo_app("2025-06-15T12:00:00Z"))
        .await
}

/// Every page of `query` (pagesize 1000) concatenated: the items and the total.
async fn paged(app: &TestApp, path: &str, query: &str) -> (u64, Vec<Value>) {
    let mut items = Vec::new();
    let mut total = 0;
    for number in 1.. {
        let (status, page) = get(
            app,
            &format!("{path}?{query}&pagesize=1000&pagenumber={number}"),
        )
        .await;
        assert_eq!(status, 200, "{page}");
        total = page["TotalResults"].as_u64().unwrap();
        let got = page["Items"].as_array().unwrap();
        if got.is_empty() {
            break;
        }
        items.extend(got.iter().cloned());
    }
    (total, items)
}

async fn whole(app: &TestApp, path: &str, query: &str) -> Value {
    let uri = format!("{path}?{query}&pagesize=-1");
    let response = request(app, &uri).await;
    assert_eq!(response.status(), 200, "{uri}");
    assert!(
        response.headers().get("content-length").is_none(),
        "{uri}: the whole dataset is streamed"
    );
    serde_json::from_slice(&body_bytes(response).await).expect("the stream is one JSON document")
}

#[tokio::test]
async fn pagesize_minus_one_streams_every_document_once_as_the_pages_hold_them() {
    let app = demo().await;
    for (path, query) in [
        // More documents than a store batch and than a page; closed parts reduced.
        ("/v1/Accommodation", "language=de"),
        (
            "/v1/Accommodation",
            "rawsort=-Shortname&fields=Id,Shortname,AccoCategoryId",
        ),
        (
            "/v1/Event",
            "rawfilter=eq(Active,true)&removenullvalues=true",
        ),
        ("/v1/Announcement", "seed=7"),
    ] {
        let body = whole(app, path, query).await;
        let (total, pages) = paged(app, path, query).await;
        let items = body["Items"].as_array().unwrap();
        assert_eq!(body["TotalResults"].as_u64(), Some(total), "{path}?{query}");
        assert_eq!(items.len() as u64, total, "{path}?{query}");
        assert_eq!(
            items, &pages,
            "{path}?{query}: streamed items equal the pages"
        );
        let ids: BTreeSet<&str> = items.iter().map(|i| i["Id"].as_str().unwrap()).collect();
        assert_eq!(
            ids.len(),
            items.len(),
            "{path}?{query}: every document once"
        );
        assert_eq!(body["TotalPages"], u64::from(total > 0));
        assert_eq!(body["CurrentPage"], 1);
        assert_eq!(body["NextPage"], Value::Null);
    }
    let body = whole(app, "/v1/Accommodation", "language=de").await;
    assert!(
        body["TotalResults"].as_u64().unwrap() > 1000,
        "the demo has enough accommodations to span batches and pages"
    );
    for item in body["Items"].as_array().unwrap() {
        assert!(
            item.get("Availability").is_none(),
            "closed parts are reduced"
        );
        assert!(
            item.get("AccoRoomInfo").is_none(),
            "closed parts are reduced"
        );
    }
    // No match: an empty envelope.
    let body = whole(app, "/v1/Accommodation", "idlist=nothing-has-this-id").await;
    assert_eq!(body["TotalResults"], 0);
    assert_eq!(body["TotalPages"], 0);
    assert_eq!(body["Items"], Value::Array(vec![]));
}

#[tokio::test]
async fn distinct_folds_every_document_in_batches() {
    let app = demo().await;
    let (_, docs) = paged(
        app,
        "/v1/Accommodation",
        "fields=Id,AccoCategoryId,Shortname",
    )
    .await;
    let expected: BTreeSet<String> = docs
        .iter()
        .filter_map(|d| d["AccoCategoryId"].as_str().map(str::to_string))
        .collect();
    let (status, body) = get(
        app,
        "/v1/Distinct?type=accommodation&fields=AccoCategoryId&getasarray=true",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let got: Vec<String> = serde_json::from_value(body).unwrap();
    assert_eq!(got, expected.into_iter().collect::<Vec<_>>());

    // A value per document (more than a store batch): all of them, sorted.
    let (status, body) = get(
        app,
        "/v1/Distinct?type=accommodation&fields=Id&getasarray=true",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let got: Vec<String> = serde_json::from_value(body).unwrap();
    let mut ids: Vec<String> = docs
        .iter()
        .map(|d| d["Id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    assert_eq!(got, ids);

    // With rawsort: first-appearance order of the sorted documents.
    let (status, body) = get(
        app,
        "/v1/Distinct?type=accommodation&fields=Shortname&getasarray=true&rawsort=-Shortname",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let got: Vec<String> = serde_json::from_value(body).unwrap();
    let mut names: Vec<String> = docs
        .iter()
        .filter_map(|d| d["Shortname"].as_str().map(str::to_string))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    names.reverse();
    assert_eq!(got, names);
}

/// Browsers ask for compressed answers: a streamed answer must arrive whole through the
/// compression layer too (it polls the finished body once more; the first streams
/// panicked there and the browser got a broken connection).
#[tokio::test]
async fn streamed_answers_arrive_whole_when_compressed() {
    let app = demo().await;
    for uri in [
        "/v1/Accommodation?pagesize=-1&fields=Id,Shortname",
        "/v2/flat/ParkingStation/occupied/2025-06-14T00:00:00Z/2025-06-15T12:00:00Z?limit=-1",
    ] {
        let plain = body_bytes(request(app, uri).await).await;
        let response = request_with(app, uri, &[("accept-encoding", "gzip")]).await;
        assert_eq!(response.status(), 200, "{uri}");
        assert!(
            response.headers().get("content-length").is_none(),
            "{uri} is streamed"
        );
        assert_eq!(response.headers()["content-encoding"], "gzip", "{uri}");
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&body_bytes(response).await[..]),
            &mut decoded,
        )
        .expect("a complete gzip stream");
        assert_eq!(decoded, plain, "{uri}");
        let answer: Value = serde_json::from_slice(&decoded).expect("JSON");
        let rows = answer["Items"].as_array().or(answer["data"].as_array());
        assert!(
            rows.is_some_and(|r| r.len() > 500),
            "{uri}: more than a store batch"
        );
    }
}
