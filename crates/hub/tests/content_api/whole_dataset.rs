//! The whole-dataset read (`pagesize=-1`) and Distinct over the demo data: both read
//! every match through a store cursor in batches. The streamed envelope must hold every
//! document exactly once, equal to the same documents read page by page (closed parts
//! reduced the same way for an anonymous caller), on both backends.

use std::collections::BTreeSet;

use serde_json::Value;

use super::support::{self, body_bytes, get, request, request_with, TestApp};

fn demo() -> &'static TestApp {
    support::shared_demo_app("2025-06-15T12:00:00Z")
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
    let app = demo();
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
    let app = demo();
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
    let app = demo();
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

/// An RFC 4180 reader for the answers below: rows of fields.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(
        field.is_empty() && row.is_empty(),
        "the text ends with a line end"
    );
    rows
}

async fn csv_text(app: &TestApp, uri: &str, headers: &[(&str, &str)]) -> (bool, String) {
    let response = request_with(app, uri, headers).await;
    assert_eq!(response.status(), 200, "{uri}");
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv"),
        "{uri}"
    );
    let streamed = response.headers().get("content-length").is_none();
    let bytes = body_bytes(response).await;
    (streamed, String::from_utf8(bytes).expect("UTF-8"))
}

#[tokio::test]
async fn csv_of_the_whole_dataset_is_streamed_with_the_bytes_of_one_page() {
    let app = demo();
    // 600 short events: more rows than a store batch (500), fewer than a page (1,000),
    // so the page's CSV is today's answer for the same rows, byte for byte.
    for (query, headers) in [
        ("format=csv", &[][..]),
        (
            "fields=Id,Shortname,EventTitle&language=de",
            &[("accept", "text/csv")][..],
        ),
        ("rawsort=-Shortname&format=csv", &[][..]),
    ] {
        let (streamed, whole) =
            csv_text(app, &format!("/v1/EventShort?{query}&pagesize=-1"), headers).await;
        assert!(streamed, "{query}: pagesize=-1 is streamed");
        let (_, page) = csv_text(
            app,
            &format!("/v1/EventShort?{query}&pagesize=1000"),
            headers,
        )
        .await;
        assert_eq!(whole, page, "{query}: the same bytes as the page");
        let rows = csv_rows(&whole);
        assert!(rows.len() > 501, "{query}: more than a store batch");
        let ids: BTreeSet<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
        assert_eq!(ids.len(), rows.len() - 1, "{query}: every row once");
    }
}

#[tokio::test]
async fn csv_of_more_rows_than_a_page_has_every_row_once_in_order_under_the_union_header() {
    let app = demo();
    let query = "language=de";
    let (streamed, whole) = csv_text(
        app,
        &format!("/v1/Accommodation?{query}&pagesize=-1&format=csv"),
        &[],
    )
    .await;
    assert!(streamed);
    let rows = csv_rows(&whole);
    // The same rows page by page: each page's header is the union of its rows' keys in
    // first-seen order, so the pages' headers merged in order are the whole answer's.
    let mut header: Vec<String> = Vec::new();
    let mut paged: Vec<Vec<(String, String)>> = Vec::new();
    for number in 1.. {
        let (_, page) = csv_text(
            app,
            &format!("/v1/Accommodation?{query}&pagesize=1000&pagenumber={number}&format=csv"),
            &[],
        )
        .await;
        let page = csv_rows(&page);
        if page.len() <= 1 {
            break;
        }
        for column in &page[0] {
            if !header.contains(column) {
                header.push(column.clone());
            }
        }
        for row in &page[1..] {
            paged.push(
                page[0]
                    .iter()
                    .cloned()
                    .zip(row.iter().cloned())
                    .filter(|(_, v)| !v.is_empty())
                    .collect(),
            );
        }
    }
    assert!(paged.len() > 1000, "more rows than a page");
    assert_eq!(
        rows[0], header,
        "the header is the union of every row's keys"
    );
    assert_eq!(rows.len() - 1, paged.len(), "every row, once");
    for (i, row) in rows[1..].iter().enumerate() {
        assert_eq!(row.len(), header.len(), "row {i} has every column");
        let cells: Vec<(String, String)> = header
            .iter()
            .cloned()
            .zip(row.iter().cloned())
            .filter(|(_, v)| !v.is_empty())
            .collect::<Vec<_>>();
        let mut expected = paged[i].clone();
        let mut got = cells;
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "row {i} in the pages' order");
    }
    assert!(
        !header.iter().any(|c| c.starts_with("Availability")),
        "closed parts are reduced for an anonymous caller"
    );
    // No match: the header line of no columns, as a page of no items.
    let (_, empty) = csv_text(
        app,
        "/v1/Accommodation?idlist=nothing-has-this-id&pagesize=-1&format=csv",
        &[],
    )
    .await;
    assert_eq!(empty, "\r\n");
}

/// A JSON-LD list reads only the members JSON-LD needs from each item, and says of each
/// demo document what that document's own JSON-LD (read whole) says: in English and in
/// German, in both spellings.
#[tokio::test]
async fn a_json_ld_list_says_of_each_document_what_its_own_json_ld_says() {
    let app = demo();
    let mut compared = 0;
    // GeoShapes is a utility endpoint: it answers JSON whatever the format.
    for entity in hub_model::ENTITY_TYPES
        .iter()
        .filter(|e| e.route != "GeoShapes")
    {
        let aliases = entity.route_aliases.iter().map(|alias| (*alias, "en"));
        for (route, language) in [(entity.route, "en"), (entity.route, "de")]
            .into_iter()
            .chain(aliases)
        {
            let path = format!("/v1/{route}?pagesize=12&format=jsonld&language={language}");
            let (status, list) = get(app, &path).await;
            assert_eq!(status, 200, "{path}");
            let Some(graph) = list["@graph"].as_array() else {
                panic!("{path}: no graph in {list}");
            };
            for item in graph {
                let Some(id) = item["identifier"].as_str() else {
                    panic!("{path}: an item without its identifier: {item}");
                };
                let one = format!(
                    "/v1/{route}/{}?format=jsonld&language={language}",
                    support::encode(id)
                );
                let (status, mut doc) = get(app, &one).await;
                assert_eq!(status, 200, "{one}");
                doc.as_object_mut().unwrap().remove("@context");
                assert_eq!(&doc, item, "{path}: {id}");
                compared += 1;
            }
        }
    }
    assert!(
        compared > 200,
        "the demo's documents were compared ({compared})"
    );
}
