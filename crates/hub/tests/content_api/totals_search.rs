//! Growth with data size (issue 18), as a client sees it: list totals are exact up to
//! `--exact-count-limit` and estimated and marked above it; `searchfilter` (answered
//! through a trigram index) finds exactly the documents whose folded titles contain the
//! folded term, or whose id is the term — checked against that rule computed here over
//! a table of terms (1, 2 and 3+ characters, accents, umlauts, ß, case, LIKE
//! metacharacters). Both backends.

use serde_json::{json, Value};

use super::support::{self, get, request, TestApp};
use hub::Config;

/// Titles chosen for the search table; ids are the keys.
const TITLES: &[(&str, &[(&str, &str)])] = &[
    ("s-alm", &[("de", "Almhütte Ötztal"), ("en", "Alpine hut")]),
    ("s-city", &[("it", "Rifugio Città di Bolzano")]),
    ("s-street", &[("de", "Große Straße am See")]),
    ("s-cafe", &[("de", "CAFÉ Noir"), ("en", "Cafe noir")]),
    ("s-short", &[("en", "Ab")]),
    ("s-meta", &[("en", "50% off_Hütte \\ back")]),
    ("s-greek", &[("en", "ΣΊΣΥΦΟΣ")]),
    ("s-hutte", &[("de", "Hutte ohne Umlaut")]),
];

fn doc(id: &str, titles: &[(&str, &str)]) -> Value {
    let detail: serde_json::Map<String, Value> = titles
        .iter()
        .map(|(lang, title)| (lang.to_string(), json!({ "Title": title })))
        .collect();
    json!({
        "Id": id,
        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
        "Shortname": id,
        "Active": true,
        "HasLanguage": titles.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        "Detail": detail,
    })
}

/// A router over the search documents, with `config`.
fn app(config: &Config) -> TestApp {
    let docs: Vec<(&'static str, Value)> = TITLES
        .iter()
        .map(|(id, titles)| ("HubActivityPoi", doc(id, titles)))
        .collect();
    support::app_with_documents(&docs, config)
}

fn ids(body: &Value) -> Vec<String> {
    let mut ids: Vec<String> = body["Items"]
        .as_array()
        .expect("Items")
        .iter()
        .map(|i| i["Id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn searchfilter_finds_exactly_the_titles_containing_the_folded_term() {
    let app = app(&support::test_config());
    let terms = [
        "a",
        "ü",
        "Ö",
        "ß",
        "hü",
        "ab",
        "AB",
        "hütte",
        "HÜTTE",
        "Hütte",
        "hutte",
        "città",
        "CITTÀ",
        "citta",
        "straße",
        "STRASSE",
        "strasse",
        "große",
        "café",
        "CAFE",
        "cafe",
        "50%",
        "%",
        "_h",
        "f_h",
        "\\",
        "\\ b",
        "σίσυ",
        "ΣΥΦΟΣ",
        "ΣΊΣΥΦΟΣ",
        "s-cafe",
        "S-ALM",
        "t ö",
        "nothing at all",
        "\"quoted\"",
        "al*",
        "alm OR see",
    ];
    for term in terms {
        let folded = hub_model::language::fold(term);
        let mut expected: Vec<String> = TITLES
            .iter()
            .filter(|(id, titles)| {
                *id == term.to_lowercase()
                    || titles
                        .iter()
                        .any(|(_, t)| hub_model::language::fold(t).contains(&folded))
            })
            .map(|(id, _)| id.to_string())
            .collect();
        expected.sort();
        let (status, body) = get(
            &app,
            &format!(
                "/v1/HubActivityPoi?pagesize=100&searchfilter={}",
                support::encode(term)
            ),
        )
        .await;
        assert_eq!(status, 200, "searchfilter={term}: {body}");
        assert_eq!(ids(&body), expected, "searchfilter={term}");
        assert_eq!(body["TotalResults"], expected.len(), "searchfilter={term}");
        // Find counts the same documents exactly.
        let uri = format!(
            "/v1/Find?type=hubactivitypoi&limitto=1&q={}",
            support::encode(term)
        );
        let (status, found) = get(&app, &uri).await;
        assert_eq!(status, 200, "{uri}: {found}");
        assert_eq!(
            found["detailedResults"]["hubactivitypoi"],
            expected.len(),
            "{uri}"
        );
    }
    // A document written after the load is found, and one deleted is gone (the index
    // follows every write path).
    let store = app.store.content();
    store
        .put(
            "HubActivityPoi",
            doc("s-new", &[("de", "Neue Almhütte")]),
            "2024-02-01T00:00:00Z".into(),
            false,
        )
        .await
        .unwrap();
    store.delete("HubActivityPoi", "s-alm").await.unwrap();
    let (_, body) = get(
        &app,
        &format!(
            "/v1/HubActivityPoi?searchfilter={}",
            support::encode("almhütte")
        ),
    )
    .await;
    assert_eq!(ids(&body), ["s-new"]);
}

#[tokio::test]
async fn totals_above_the_limit_are_estimated_and_marked() {
    let all = TITLES.len() as u64;
    // At the limit: exact, no marker (the envelope keeps the ODH shape).
    let exact = app(&Config {
        exact_count_limit: all,
        ..support::test_config()
    });
    let response = request(
        &exact,
        "/v1/HubActivityPoi?pagesize=3&active=true&rawsort=Shortname",
    )
    .await;
    assert!(response.headers().get("hub-total-estimated").is_none());
    let body: Value = serde_json::from_slice(&support::body_bytes(response).await).unwrap();
    assert_eq!(body["TotalResults"], all);
    assert_eq!(body["TotalPages"], all.div_ceil(3));
    assert!(body.get("TotalResultsEstimated").is_none(), "{body}");

    // Below: a filtered count stops after limit + 1 matches (a page of the default order
    // walked along it takes its total from the count statement); the total is an
    // estimate of at least that, marked in the body and in a header, and the pages
    // still work. (Pages of 2 of these 8 matches are dense enough to walk.)
    let limit = 3;
    let capped = app(&Config {
        exact_count_limit: limit,
        ..support::test_config()
    });
    let response = request(&capped, "/v1/HubActivityPoi?pagesize=2&active=true").await;
    assert_eq!(
        response
            .headers()
            .get("hub-total-estimated")
            .map(|v| v.to_str().unwrap()),
        Some("true")
    );
    let body: Value = serde_json::from_slice(&support::body_bytes(response).await).unwrap();
    assert_eq!(body["TotalResultsEstimated"], true, "{body}");
    let total = body["TotalResults"].as_u64().expect("a number");
    assert!(total > limit, "{body}");
    assert_eq!(body["TotalPages"], total.div_ceil(2));
    assert_eq!(body["Items"].as_array().unwrap().len(), 2);
    assert!(body["NextPage"].is_string(), "{body}");
    // The last page is where it always was.
    let (_, last) = get(
        &capped,
        "/v1/HubActivityPoi?pagesize=2&pagenumber=4&active=true",
    )
    .await;
    assert_eq!(last["Items"].as_array().unwrap().len(), 2, "{last}");

    // A page ordered by `rawsort` reads and orders every match anyway, and counts them in
    // the same pass: exact whatever the limit, first page to last.
    for number in [1, 3] {
        let uri = format!(
            "/v1/HubActivityPoi?pagesize=3&pagenumber={number}&active=true&rawsort=Shortname"
        );
        let response = request(&capped, &uri).await;
        assert!(
            response.headers().get("hub-total-estimated").is_none(),
            "{uri}"
        );
        let body: Value = serde_json::from_slice(&support::body_bytes(response).await).unwrap();
        assert_eq!(body["TotalResults"], all, "{uri}: {body}");
        assert!(body.get("TotalResultsEstimated").is_none(), "{body}");
    }

    // An unfiltered list is counted exactly whatever the limit (one pass over the
    // entity's index, kept until the next write).
    let response = request(&capped, "/v1/HubActivityPoi?pagesize=3").await;
    assert!(response.headers().get("hub-total-estimated").is_none());
    let body: Value = serde_json::from_slice(&support::body_bytes(response).await).unwrap();
    assert_eq!(body["TotalResults"], all);
    assert!(body.get("TotalResultsEstimated").is_none(), "{body}");

    // 0 = always exact.
    let unlimited = app(&Config {
        exact_count_limit: 0,
        ..support::test_config()
    });
    let (_, body) = get(
        &unlimited,
        "/v1/HubActivityPoi?pagesize=3&active=true&rawsort=Shortname",
    )
    .await;
    assert_eq!(body["TotalResults"], all);
    assert!(body.get("TotalResultsEstimated").is_none(), "{body}");
}

/// `hub_store_list_counts_total` from `/metrics`: count statements run for totals.
async fn list_counts(app: &TestApp) -> u64 {
    let body = support::body_bytes(request(app, "/metrics").await).await;
    let text = String::from_utf8(body).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("hub_store_list_counts_total "))
        .expect("/metrics has hub_store_list_counts_total")
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_total_is_counted_again_after_a_write_to_its_own_entity_only() {
    // Without the response cache every request reaches the store.
    let app = app(&Config {
        response_cache_bytes: 0,
        ..support::test_config()
    });
    // The whole list: its page never carries the total, which comes from the count.
    let uri = "/v1/HubActivityPoi?pagesize=2";
    let total = |body: &Value| body["TotalResults"].as_u64().expect("TotalResults");

    let (status, first) = get(&app, uri).await;
    assert_eq!(status, 200, "{first}");
    let counted = list_counts(&app).await;
    assert!(counted > 0, "the first page counts the list");
    let (_, again) = get(&app, uri).await;
    assert_eq!(
        (total(&again), list_counts(&app).await),
        (total(&first), counted)
    );

    // Another entity written: the POIs' total stays kept.
    let content = app.store.content();
    let event = json!({
        "Id": "e-1", "Shortname": "Hüttenfest", "Active": true,
        "_Meta": {"Id": "e-1", "Type": "event", "Source": "idm", "Reduced": false},
    });
    content
        .put("Event", event, "2024-02-01T00:00:00".into(), false)
        .await
        .expect("an event written");
    let (_, after_event) = get(&app, uri).await;
    assert_eq!(
        (total(&after_event), list_counts(&app).await),
        (total(&first), counted),
        "a write to another entity leaves the total kept"
    );

    // A POI written: counted again at once, with the new document.
    content
        .put(
            "HubActivityPoi",
            doc("s-new", &[("de", "Neu")]),
            "2024-02-01T00:00:00".into(),
            false,
        )
        .await
        .expect("a POI written");
    let (_, after_poi) = get(&app, uri).await;
    assert_eq!(total(&after_poi), total(&first) + 1, "{after_poi}");
    assert!(
        list_counts(&app).await > counted,
        "the POIs' total is counted again"
    );
}

#[tokio::test]
async fn a_walked_page_after_a_small_write_counts_nothing_again() {
    // Thirty-two active POIs and a limit of 16: pages of two are dense enough to walk
    // the order, weighing the capped total against the entity's documents.
    let app = app(&Config {
        response_cache_bytes: 0,
        exact_count_limit: 16,
        ..support::test_config()
    });
    let content = app.store.content();
    let more: Vec<(&'static str, Value)> = (0..24)
        .map(|n| {
            (
                "HubActivityPoi",
                doc(&format!("w-{n:02}"), &[("en", "Walk")]),
            )
        })
        .collect();
    content
        .put_batch_blocking(&more, &mut |_| {})
        .expect("more POIs");
    let uri = "/v1/HubActivityPoi?pagesize=2&pagenumber=3&active=true";
    let (status, first) = get(&app, uri).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["TotalResultsEstimated"], true, "{first}");
    let counted = list_counts(&app).await;

    // One POI written: the capped total outlives it (its count read 15 matches past
    // the limit's next one), and the entity's 32 documents still choose the plan.
    content
        .put(
            "HubActivityPoi",
            doc("w-new", &[("en", "Walk")]),
            "2024-02-01T00:00:00".into(),
            false,
        )
        .await
        .expect("a POI written");
    let (_, after) = get(&app, uri).await;
    assert_eq!(after["TotalResults"], first["TotalResults"], "{after}");
    assert_eq!(after["Items"], first["Items"]);
    assert_eq!(list_counts(&app).await, counted, "nothing counted again");

    // The whole list's own total is exact, so it is counted again.
    let (_, whole) = get(&app, "/v1/HubActivityPoi?pagesize=2").await;
    assert_eq!(whole["TotalResults"], 33);
    assert!(list_counts(&app).await > counted);
}
