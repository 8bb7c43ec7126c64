//! Content API tests: the real router over a real store, filled with a small, hand-made
//! set of documents so every assertion can name the documents it expects.
//!
//! The store comes from `backend()`; the PostgreSQL backend will run the same tests.

mod support;

use serde_json::{json, Value};
use support::{get, item_ids, TestApp};

fn app() -> &'static TestApp {
    support::content_app()
}

#[tokio::test]
async fn list_envelope_has_every_key_and_pages() {
    let (status, body) = get(app(), "/v1/HubActivityPoi?pagesize=2").await;
    assert_eq!(status, 200);
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "TotalResults",
            "TotalPages",
            "CurrentPage",
            "PreviousPage",
            "NextPage",
            "Seed",
            "Items"
        ]
    );
    assert_eq!(body["TotalResults"], 5);
    assert_eq!(body["TotalPages"], 3);
    assert_eq!(body["CurrentPage"], 1);
    assert_eq!(body["PreviousPage"], Value::Null);
    assert_eq!(
        body["NextPage"],
        "http://hub.test/v1/HubActivityPoi?pagesize=2&pagenumber=2"
    );
    assert_eq!(body["Seed"], Value::Null);
    // Default order: Shortname (case-folded), then id.
    assert_eq!(item_ids(&body), ["poi-alm", "poi-b"]);

    let (_, last) = get(app(), "/v1/HubActivityPoi?pagesize=2&pagenumber=3").await;
    assert_eq!(item_ids(&last), ["poi-e"]);
    assert_eq!(
        last["PreviousPage"],
        "http://hub.test/v1/HubActivityPoi?pagesize=2&pagenumber=2"
    );
    assert_eq!(last["NextPage"], Value::Null);

    let (_, beyond) = get(app(), "/v1/HubActivityPoi?pagesize=2&pagenumber=9").await;
    assert_eq!(beyond["Items"], json!([]));
    assert_eq!(beyond["CurrentPage"], 9);
    assert_eq!(beyond["PreviousPage"], Value::Null);
}

#[tokio::test]
async fn default_page_size_is_ten_and_paging_is_stable_with_equal_shortnames() {
    let (_, body) = get(app(), "/v1/Event").await;
    assert_eq!(body["TotalResults"], 12);
    assert_eq!(body["Items"].as_array().unwrap().len(), 10);
    // All events share one Shortname: the id breaks the tie, so pages never overlap.
    let (_, page2) = get(app(), "/v1/Event?pagenumber=2").await;
    let mut all = item_ids(&body);
    all.extend(item_ids(&page2));
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(all, sorted);
    assert_eq!(all.len(), 12);
}

#[tokio::test]
async fn alias_route_and_case_insensitive_names() {
    let (status, body) = get(app(), "/v1/odhactivitypoi/?PageSize=1").await;
    assert_eq!(status, 200);
    assert_eq!(body["TotalResults"], 5);
    assert_eq!(
        body["NextPage"],
        "http://hub.test/v1/odhactivitypoi/?PageSize=1&pagenumber=2"
    );
}

#[tokio::test]
async fn single_document_by_id_is_case_insensitive_and_key_order_is_kept() {
    let (status, body) = get(app(), "/v1/Accommodation/ACCO-1").await;
    assert_eq!(status, 200);
    assert_eq!(body["Id"], "acco-1");
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys[..3], ["Id", "_Meta", "Shortname"]);
    let (status, body) = get(app(), "/v1/Weather/District/3").await;
    assert_eq!(status, 200);
    assert_eq!(body["Id"], "3");
}

#[tokio::test]
async fn unknown_ids_and_paths_are_404_problems() {
    let (status, body) = get(app(), "/v1/Accommodation/nope").await;
    assert_eq!(status, 404);
    assert_eq!(body["status"], 404);
    assert_eq!(body["title"], "Not Found");
    assert!(body["detail"].as_str().unwrap().contains("'nope'"));
    let (status, body) = get(app(), "/v1/Nothing").await;
    assert_eq!(status, 404);
    assert!(body["detail"]
        .as_str()
        .unwrap()
        .contains("GET /v1 lists the datasets"));
    let (status, _) = get(app(), "/v1/Weather").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn bad_parameters_are_400_problems_naming_the_parameter() {
    let cases = [
        ("/v1/Event?pagesize=abc", "pagesize", "from 1 to 1000"),
        ("/v1/Event?pagesize=5000", "pagesize", "from 1 to 1000"),
        ("/v1/Event?pagesize=0", "pagesize", "from 1 to 1000"),
        ("/v1/Event?pagenumber=0", "pagenumber", "at least 1"),
        ("/v1/Event?pagenumber=x", "pagenumber", "at least 1"),
        (
            "/v1/Event?updatefrom=2024-13-45",
            "updatefrom",
            "yyyy-MM-dd",
        ),
        (
            "/v1/Event?removenullvalues=maybe",
            "removenullvalues",
            "true or false",
        ),
        ("/v1/Event?active=yes", "active", "true or false"),
        ("/v1/Event?language=xx", "language", "de, it, en"),
        ("/v1/Event?langfilter=de,klingon", "langfilter", "'klingon'"),
        ("/v1/Event?seed=abc", "seed", "whole number"),
        ("/v1/Event/evt-01?language=xx", "language", "de, it, en"),
    ];
    for (uri, parameter, phrase) in cases {
        let (status, body) = get(app(), uri).await;
        assert_eq!(status, 400, "{uri}");
        assert_eq!(body["parameter"], parameter, "{uri}");
        assert_eq!(body["status"], 400);
        assert_eq!(body["type"], "urn:hub:problem:invalid-parameter");
        assert!(
            body["detail"].as_str().unwrap().contains(phrase),
            "{uri}: {}",
            body["detail"]
        );
    }
}

#[tokio::test]
async fn problem_bodies_use_the_problem_media_type() {
    let response = support::request(app(), "/v1/Event?pagesize=abc").await;
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
}

#[tokio::test]
async fn fields_syntax_errors_give_the_position() {
    let (status, body) = get(app(), "/v1/Event?fields=Id,Detail..Title").await;
    assert_eq!(status, 400);
    assert_eq!(body["parameter"], "fields");
    assert_eq!(body["position"], 11);
    assert_eq!(body["type"], "urn:hub:problem:parse-error");
}

#[tokio::test]
async fn fields_select_flat_keys_named_by_path() {
    let (_, body) = get(
        app(),
        "/v1/HubActivityPoi?fields=Detail.de.Title,HubTags.[*].Id,GpsInfo[0].Altitude&pagesize=1",
    )
    .await;
    assert_eq!(
        body["Items"][0],
        json!({"Id": "poi-alm", "Detail.de.Title": "Almhütte", "HubTags.[*].Id": ["hut", "summer"], "GpsInfo[0].Altitude": 1800})
    );
    let keys: Vec<&str> = body["Items"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "Id",
            "Detail.de.Title",
            "HubTags.[*].Id",
            "GpsInfo[0].Altitude"
        ]
    );
    let (_, single) = get(app(), "/v1/HubActivityPoi/poi-alm?fields=Shortname").await;
    assert_eq!(single, json!({"Id": "poi-alm", "Shortname": "Alm"}));
}

#[tokio::test]
async fn language_projection_applies_before_fields() {
    let (_, body) = get(app(), "/v1/HubActivityPoi/poi-alm?language=it").await;
    assert_eq!(body["Detail"], json!({"it": {"Title": "Rifugio alpino"}}));
    let (_, body) = get(
        app(),
        "/v1/HubActivityPoi/poi-alm?language=it&fields=Detail.de.Title",
    )
    .await;
    assert_eq!(body["Detail.de.Title"], Value::Null);
}

#[tokio::test]
async fn removenullvalues_drops_empty_fields() {
    let (_, plain) = get(app(), "/v1/HubActivityPoi/poi-b").await;
    assert!(plain.get("Note").is_some());
    let (_, body) = get(app(), "/v1/HubActivityPoi/poi-b?removenullvalues=true").await;
    assert!(body.get("Note").is_none());
    assert!(body.get("Empty").is_none());
    assert_eq!(body["Shortname"], "Bäckerei");
}

#[tokio::test]
async fn langfilter_requires_every_language() {
    let (_, body) = get(app(), "/v1/HubActivityPoi?langfilter=de,en").await;
    assert_eq!(item_ids(&body), ["poi-alm", "poi-cafe"]);
    let (_, body) = get(app(), "/v1/HubActivityPoi?langfilter=it").await;
    assert_eq!(item_ids(&body), ["poi-alm", "poi-b", "poi-d"]);
}

#[tokio::test]
async fn searchfilter_matches_titles_across_languages_case_insensitively() {
    let cases: &[(&str, &[&str])] = &[
        ("HÜTTE", &["poi-alm"]),
        ("rifugio", &["poi-alm"]),
        ("ca", &["poi-cafe", "poi-d"]),
        ("50%", &["poi-e"]),
        ("POI-B", &["poi-b"]),
        ("strasse", &["poi-d"]),
        ("nothing-like-this", &[]),
    ];
    for (term, expected) in cases {
        let (status, body) = get(
            app(),
            &format!("/v1/HubActivityPoi?searchfilter={}", support::encode(term)),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(item_ids(&body), *expected, "searchfilter={term}");
    }
    // language narrows the title fields searched.
    let (_, body) = get(app(), "/v1/HubActivityPoi?searchfilter=rifugio&language=de").await;
    assert_eq!(item_ids(&body), Vec::<String>::new());
    // Accommodations are found by their AccoDetail names too.
    let (_, body) = get(app(), "/v1/Accommodation?searchfilter=sonnenhof").await;
    assert_eq!(item_ids(&body), ["acco-1"]);
}

#[tokio::test]
async fn source_active_idlist_and_updatefrom_filter() {
    let (_, body) = get(app(), "/v1/HubActivityPoi?source=IDM,siag").await;
    assert_eq!(item_ids(&body), ["poi-alm", "poi-d", "poi-e"]);
    // The total of a filtered list, on a page and past the last page.
    let (_, body) = get(
        app(),
        "/v1/HubActivityPoi?source=IDM,siag&pagesize=2&pagenumber=2",
    )
    .await;
    assert_eq!(
        (body["TotalResults"].clone(), body["TotalPages"].clone()),
        (json!(3), json!(2))
    );
    assert_eq!(item_ids(&body), ["poi-e"]);
    let (_, body) = get(
        app(),
        "/v1/HubActivityPoi?source=IDM,siag&pagesize=2&pagenumber=5",
    )
    .await;
    assert_eq!(
        (body["TotalResults"].clone(), body["Items"].clone()),
        (json!(3), json!([]))
    );
    let (_, body) = get(app(), "/v1/HubActivityPoi?active=false").await;
    assert_eq!(item_ids(&body), ["poi-d"]);
    let (_, body) = get(app(), "/v1/HubActivityPoi?idlist=POI-E,poi-b,").await;
    assert_eq!(item_ids(&body), ["poi-b", "poi-e"]);
    // on or after the date (LastChange), time zones applied.
    let (_, body) = get(app(), "/v1/HubActivityPoi?updatefrom=2024-06-01").await;
    assert_eq!(item_ids(&body), ["poi-cafe", "poi-e"]);
}

#[tokio::test]
async fn seed_gives_a_stable_permutation_kept_in_links() {
    let (_, a) = get(app(), "/v1/Event?seed=7&pagesize=4").await;
    let (_, b) = get(app(), "/v1/Event?seed=7&pagesize=4").await;
    assert_eq!(item_ids(&a), item_ids(&b));
    assert_eq!(a["Seed"], "7");
    assert_eq!(
        a["NextPage"],
        "http://hub.test/v1/Event?seed=7&pagesize=4&pagenumber=2"
    );
    let (_, other) = get(app(), "/v1/Event?seed=8&pagesize=12").await;
    let (_, default) = get(app(), "/v1/Event?pagesize=12").await;
    assert_ne!(item_ids(&other), item_ids(&default), "a seed reorders");
    // Every document appears exactly once over the seeded pages.
    let mut seen = Vec::new();
    for page in 1..=3 {
        let (_, p) = get(
            app(),
            &format!("/v1/Event?seed=7&pagesize=4&pagenumber={page}"),
        )
        .await;
        seen.extend(item_ids(&p));
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 12);
    // Large seeds are normalised as the reference does and echoed normalised.
    let (_, big) = get(app(), "/v1/Event?seed=123").await;
    assert_eq!(big["Seed"], "12");
    let (_, zero) = get(app(), "/v1/Event?seed=0&pagesize=4").await;
    let chosen: i64 = zero["Seed"].as_str().unwrap().parse().unwrap();
    assert!((1..50).contains(&chosen));
    assert!(zero["NextPage"]
        .as_str()
        .unwrap()
        .contains(&format!("seed={chosen}")));
}

#[tokio::test]
async fn unknown_parameters_are_ignored_and_null_means_absent() {
    let (status, body) = get(
        app(),
        "/v1/HubActivityPoi?language=null&whatever=1&pagesize=null",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["TotalResults"], 5);
    assert_eq!(body["Items"][0]["Detail"]["de"]["Title"], "Almhütte");
    // The reference turns a literal `null` into "not set" (ODH clients send it); so does
    // an empty value.
    let (status, body) = get(
        app(),
        "/v1/HubActivityPoi?pagesize=&pagenumber=null&seed=null",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["TotalResults"], 5);
}

#[tokio::test]
async fn dataset_list_names_paths_and_counts() {
    let (status, body) = get(app(), "/v1").await;
    assert_eq!(status, 200);
    let items = body["Items"].as_array().unwrap();
    assert_eq!(items.len(), hub_model::ENTITY_TYPES.len());
    let poi = items.iter().find(|i| i["Id"] == "HubActivityPoi").unwrap();
    assert_eq!(poi["ApiUrl"], "http://hub.test/v1/HubActivityPoi");
    assert_eq!(poi["RecordCount"]["open"], 5);
    let weather = items.iter().find(|i| i["Id"] == "WeatherDistrict").unwrap();
    assert_eq!(weather["PathParam"], json!(["v1", "Weather", "District"]));
}

#[tokio::test]
async fn whole_list_response_snapshot() {
    let (_, body) = get(app(), "/v1/Accommodation?pagesize=5").await;
    insta::assert_json_snapshot!("accommodation_list", body);
}

#[tokio::test]
async fn health_openapi_cors_and_request_ids() {
    let (status, body) = get(app(), "/health").await;
    assert_eq!((status, body), (200, json!({"status": "ok"})));
    let (status, doc) = get(app(), "/swagger/v1/swagger.json").await;
    assert_eq!(status, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert!(doc["paths"]["/v1/Weather/Forecast"]["get"].is_object());

    let response = support::request_with(
        app(),
        "/v1/Event",
        &[
            ("origin", "https://example.org"),
            ("accept-encoding", "gzip"),
        ],
    )
    .await;
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    assert_eq!(response.headers()["content-encoding"], "gzip");
    assert!(!response.headers()["x-request-id"].is_empty());
    let response = support::request_with(app(), "/v1/Event", &[("accept-encoding", "br")]).await;
    assert_eq!(response.headers()["content-encoding"], "br");
    let response = support::request_with(app(), "/v1/Event", &[("x-request-id", "abc-123")]).await;
    assert_eq!(response.headers()["x-request-id"], "abc-123");
}

#[tokio::test]
async fn unknown_top_level_paths_are_404_problems() {
    let response = support::request(app(), "/nowhere").await;
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
}
#[path = "content_api/box_edges.rs"]
mod box_edges;
#[path = "content_api/closed_channels.rs"]
mod closed_channels;
#[path = "content_api/event_order_pages.rs"]
mod event_order_pages;
#[path = "content_api/filtered_pages.rs"]
mod filtered_pages;
#[path = "content_api/filters_formats.rs"]
mod filters_formats;
#[path = "content_api/geo_utility.rs"]
mod geo_utility;
#[path = "content_api/name_order.rs"]
mod name_order;
#[path = "content_api/query_errors.rs"]
mod query_errors;

/// Filter values each engine reads differently (PostgreSQL's regular expressions, number
/// and date ranges) are the client's input: a result or a 400 naming the parameter,
/// never a server error, on either backend.
#[tokio::test]
async fn filter_values_outside_an_engines_range_are_never_server_errors() {
    let app = support::content_app();
    let filters = [
        r"likein(Shortname,'\p{L}+')",
        r"likein(Shortname,'a(?i)B')",
        r"likein(Shortname,'[[:alpha:]')",
        "gt(GpsInfo.0.Altitude,1e400)",
        "eq(GpsInfo.0.Altitude,123456789012345678901234567890)",
        "gt(DateBegin,'0000-01-01T24:00:00')",
        "lt(DateBegin,'-0001-01-01')",
    ];
    for filter in filters {
        let uri = format!("/v1/Event?rawfilter={}", support::encode(filter));
        let (status, body) = get(app, &uri).await;
        assert!(status == 200 || status == 400, "{filter}: {status} {body}");
        if status == 400 {
            assert_eq!(body["parameter"], "rawfilter", "{filter}: {body}");
        }
    }
}
#[path = "content_api/rawfilter_indexes.rs"]
mod rawfilter_indexes;
#[path = "content_api/totals_search.rs"]
mod totals_search;
#[path = "content_api/whole_dataset.rs"]
mod whole_dataset;
