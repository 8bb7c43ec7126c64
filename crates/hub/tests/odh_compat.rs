//! Existing Open Data Hub clients (issue 14): the ODH spelling of documents through
//! ODH-spelled routes and parameters or `--naming odh`, in JSON, CSV and JSON-LD; ODH
//! spellings of paths in `fields`, `rawfilter`, `rawsort` and Distinct; `getasidarray`;
//! a radius search's order over `rawsort`; unsupported ODH parameters refused by name.

mod support;

use std::sync::OnceLock;

use serde_json::{json, Value};

use support::{body_bytes, encode, TestApp};

fn poi(id: &str, name: &str, lat: f64, tags: &[&str]) -> (&'static str, Value) {
    let hub_tags: Vec<Value> = tags.iter().map(|t| json!({"Id": t})).collect();
    (
        "HubActivityPoi",
        json!({"Id": id, "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm"}, "Shortname": name,
            "Active": true, "Detail": {"en": {"Title": name}}, "HubTags": hub_tags, "SrcTags": tags,
            "PublishedOn": ["idm-marketplace"],
            "GpsInfo": [{"Gpstype": "position", "Latitude": lat, "Longitude": 11.3}]}),
    )
}

fn fixtures() -> Vec<(&'static str, Value)> {
    let (entity, mut alpha) = poi("p1", "Alpha", 46.50, &["gastronomy", "essen trinken"]);
    alpha["Highlight"] = json!(true);
    alpha["ImageGallery"] = json!([{"ImageUrl": "https://images.example.com/a.jpg"}]);
    let (_, mut bravo) = poi("p2", "Bravo", 46.40, &["wandern", "sommer"]);
    bravo["Highlight"] = json!(false);
    bravo["ImageGallery"] = json!([]);
    vec![
        (entity, alpha),
        ("HubActivityPoi", bravo),
        poi("p3", "Charlie", 46.45, &["wandern"]),
        (
            "Municipality",
            json!({"Id": "m1", "_Meta": {"Id": "m1", "Type": "municipality", "Source": "idm"}, "Shortname": "m1", "VisibleInSearch": true}),
        ),
        (
            "Municipality",
            json!({"Id": "m2", "_Meta": {"Id": "m2", "Type": "municipality", "Source": "idm"}, "Shortname": "m2", "VisibleInSearch": false}),
        ),
        (
            "Tag",
            json!({"Id": "t1", "_Meta": {"Id": "t1", "Type": "tag", "Source": "idm"}, "Shortname": "t1",
                "ValidForEntity": ["hubactivitypoi"], "HubTagIds": ["wandern"], "Types": ["x"]}),
        ),
    ]
}

fn app_with(naming: hub::config::NamingSetting) -> TestApp {
    let (store, dir) = support::backend();
    store
        .content()
        .put_batch_blocking(&fixtures(), &mut |_| {})
        .expect("loading fixtures");
    let config = hub::Config {
        naming,
        ..support::test_config()
    };
    TestApp {
        router: hub::router(store.clone(), &config),
        store,
        _dir: dir,
    }
}

fn app() -> &'static TestApp {
    static APP: OnceLock<TestApp> = OnceLock::new();
    APP.get_or_init(|| app_with(hub::config::NamingSetting::Hub))
}

fn odh_app() -> &'static TestApp {
    static APP: OnceLock<TestApp> = OnceLock::new();
    APP.get_or_init(|| app_with(hub::config::NamingSetting::Odh))
}

async fn get(app: &TestApp, uri: &str) -> (u16, Value) {
    support::get(app, &uri.replace(' ', "%20")).await
}

fn ids(body: &Value) -> Vec<&str> {
    body["Items"]
        .as_array()
        .unwrap_or_else(|| panic!("no Items in {body}"))
        .iter()
        .map(|d| d["Id"].as_str().unwrap())
        .collect()
}

fn keys(doc: &Value) -> Vec<&str> {
    doc.as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[tokio::test]
async fn odh_routes_and_parameters_answer_in_the_odh_spelling() {
    // (app, uri, ODH spelling expected)
    let cases: &[(&TestApp, &str, bool)] = &[
        (app(), "/v1/HubActivityPoi/p1", false),
        (app(), "/v1/ODHActivityPoi/p1", true),
        (app(), "/v1/odhactivitypoi/p1", true),
        (odh_app(), "/v1/HubActivityPoi/p1", true),
        (app(), "/v1/HubActivityPoi?idlist=p1", false),
        (app(), "/v1/ODHActivityPoi?idlist=p1", true),
        (
            app(),
            "/v1/HubActivityPoi?idlist=p1&odhtagfilter=gastronomy",
            true,
        ),
        (odh_app(), "/v1/HubActivityPoi?idlist=p1", true),
    ];
    for (app, uri, odh) in cases {
        let (status, body) = get(app, uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        let doc = if body.get("Items").is_some() {
            body["Items"][0].clone()
        } else {
            body
        };
        let (tags, src, meta) = if *odh {
            ("ODHTags", "SmgTags", "odhactivitypoi")
        } else {
            ("HubTags", "SrcTags", "hubactivitypoi")
        };
        assert_eq!(
            doc[tags],
            json!([{"Id": "gastronomy"}, {"Id": "essen trinken"}]),
            "{uri}"
        );
        assert_eq!(doc[src], json!(["gastronomy", "essen trinken"]), "{uri}");
        assert_eq!(doc["_Meta"]["Type"], meta, "{uri}");
        let other = if *odh { "HubTags" } else { "ODHTags" };
        assert!(doc.get(other).is_none(), "{uri}: {other} present");
        // The renamed key keeps its place in the document.
        let at = keys(&doc).iter().position(|k| *k == tags).unwrap();
        assert_eq!(keys(&doc)[at + 1], src, "{uri}");
    }
    // The deprecated ODHTag route lists Tag documents in the ODH spelling.
    let (_, body) = get(app(), "/v1/ODHTag").await;
    assert_eq!(body["Items"][0]["ODHTagIds"], json!(["wandern"]));
    assert_eq!(
        body["Items"][0]["ValidForEntity"],
        json!(["odhactivitypoi"])
    );
    let (_, body) = get(app(), "/v1/Tag").await;
    assert_eq!(body["Items"][0]["HubTagIds"], json!(["wandern"]));
}

#[tokio::test]
async fn csv_and_jsonld_follow_the_spelling() {
    let csv = |uri: &'static str| async move {
        let response = support::request(app(), uri).await;
        assert_eq!(response.status(), 200);
        let text = String::from_utf8(body_bytes(response).await).unwrap();
        text.lines().next().unwrap().to_string()
    };
    let odh_header = csv("/v1/ODHActivityPoi?format=csv").await;
    assert!(
        odh_header.contains("ODHTags") && odh_header.contains("SmgTags"),
        "{odh_header}"
    );
    assert!(!odh_header.contains("HubTags"), "{odh_header}");
    let hub_header = csv("/v1/HubActivityPoi?format=csv").await;
    assert!(
        hub_header.contains("HubTags") && !hub_header.contains("ODHTags"),
        "{hub_header}"
    );
    // JSON-LD reads the gastronomy category in either spelling.
    for uri in [
        "/v1/ODHActivityPoi/p1?format=jsonld",
        "/v1/HubActivityPoi/p1?format=jsonld",
    ] {
        let (status, body) = get(app(), uri).await;
        assert_eq!(
            (status, body["@type"].as_str()),
            (200, Some("Restaurant")),
            "{uri}: {body}"
        );
    }
}

#[tokio::test]
async fn odh_spellings_of_paths_read_the_same_fields() {
    // (uri, ids expected)
    let cases: &[(&str, &[&str])] = &[
        (
            "/v1/HubActivityPoi?rawfilter=eq(HubTags.0.Id,'wandern')",
            &["p2", "p3"],
        ),
        (
            "/v1/HubActivityPoi?rawfilter=eq(ODHTags.0.Id,'wandern')",
            &["p2", "p3"],
        ),
        ("/v1/ODHActivityPoi?rawfilter=in(SmgTags,'sommer')", &["p2"]),
        (
            "/v1/ODHActivityPoi?rawsort=-SmgTags.1,Shortname",
            &["p2", "p1", "p3"],
        ),
        (
            "/v1/HubActivityPoi?rawsort=-SrcTags.1,Shortname",
            &["p2", "p1", "p3"],
        ),
    ];
    for (uri, expected) in cases {
        let (status, body) = get(app(), &uri.replace('\'', "%27")).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(ids(&body), *expected, "{uri}");
    }
    let (_, body) = get(
        app(),
        &format!(
            "/v1/ODHActivityPoi/p2?fields={}",
            encode("ODHTags.[*].Id,SmgTags,_Meta.Type")
        ),
    )
    .await;
    assert_eq!(
        body,
        json!({"Id": "p2", "ODHTags.[*].Id": ["wandern", "sommer"], "SmgTags": ["wandern", "sommer"], "_Meta.Type": "odhactivitypoi"})
    );
    let (status, body) = get(
        app(),
        &format!(
            "/v1/Distinct?odhtype=odhactivitypoi&fields={}",
            encode("ODHTags.[*].Id")
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let values: Vec<&str> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["ODHTags.[*].Id"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["essen trinken", "gastronomy", "sommer", "wandern"]);
}

#[tokio::test]
async fn the_filter_endpoint_follows_the_spelling() {
    let expression = encode("eq(Active,true)");
    let (_, body) = get(
        app(),
        &format!("/v1/Filter?type=odhactivitypoi&expression={expression}"),
    )
    .await;
    assert_eq!(body["detailedResults"], json!({"hubactivitypoi": 3}));
    assert!(body["Items"][0].get("HubTags").is_some(), "{body}");
    let (_, body) = get(
        odh_app(),
        &format!("/v1/Filter?type=odhactivitypoi&expression={expression}"),
    )
    .await;
    assert_eq!(body["detailedResults"], json!({"odhactivitypoi": 3}));
    assert!(body["Items"][0].get("ODHTags").is_some(), "{body}");
    let (_, body) = get(
        app(),
        &format!("/v1/Filter?odhtype=odhactivitypoi&expression={expression}"),
    )
    .await;
    assert_eq!(
        body["detailedResults"],
        json!({"odhactivitypoi": 3}),
        "odhtype is ODH spelling"
    );
}

#[tokio::test]
async fn find_and_the_dataset_list_follow_the_spelling() {
    let (_, body) = get(app(), "/v1/Find?q=alpha&type=hubactivitypoi&fields=HubTags").await;
    assert_eq!(body["detailedResults"], json!({"hubactivitypoi": 1}));
    assert_eq!(body["Items"][0]["_Meta.Type"], "hubactivitypoi");
    let (_, body) = get(
        app(),
        "/v1/Find?q=alpha&odhtype=odhactivitypoi&fields=ODHTags",
    )
    .await;
    assert_eq!(body["detailedResults"], json!({"odhactivitypoi": 1}));
    assert_eq!(body["Items"][0]["_Meta.Type"], "odhactivitypoi");
    assert_eq!(
        body["Items"][0]["ODHTags"],
        json!([{"Id": "gastronomy"}, {"Id": "essen trinken"}])
    );
    let types = |body: &Value| -> Vec<String> {
        body["Items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["Type"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, hub) = get(app(), "/v1").await;
    assert!(types(&hub).contains(&"hubactivitypoi".to_string()));
    let (_, odh) = get(odh_app(), "/v1").await;
    assert!(types(&odh).contains(&"odhactivitypoi".to_string()));
    assert!(!types(&odh).contains(&"hubactivitypoi".to_string()));
}

#[tokio::test]
async fn getasidarray_answers_every_matching_id_in_list_order() {
    for (uri, expected) in [
        (
            "/v1/HubActivityPoi?getasidarray=true",
            json!(["p1", "p2", "p3"]),
        ),
        (
            "/v1/HubActivityPoi?getasidarray=true&pagesize=1&rawsort=-Shortname",
            json!(["p3", "p2", "p1"]),
        ),
        (
            "/v1/ODHActivityPoi?getasidarray=true&odhtagfilter=wandern",
            json!(["p2", "p3"]),
        ),
        (
            "/v1/HubActivityPoi?getasidarray=true&searchfilter=nothing",
            json!([]),
        ),
    ] {
        let (status, body) = get(app(), uri).await;
        assert_eq!((status, &body), (200, &expected), "{uri}");
    }
    let (_, body) = get(app(), "/v1/HubActivityPoi?getasidarray=false").await;
    assert_eq!(body["TotalResults"], 3);
    let (status, body) = get(app(), "/v1/HubActivityPoi?getasidarray=yes").await;
    assert_eq!(
        (status, body["parameter"].as_str()),
        (400, Some("getasidarray"))
    );
}

#[tokio::test]
async fn a_radius_search_keeps_its_distance_order_over_rawsort() {
    // Nearest to 46.44: p3 (46.45), p2 (46.40), p1 (46.50).
    for uri in [
        "/v1/HubActivityPoi?latitude=46.44&longitude=11.3&radius=20000",
        "/v1/HubActivityPoi?latitude=46.44&longitude=11.3&radius=20000&rawsort=Shortname",
        "/v1/HubActivityPoi?latitude=46.44&longitude=11.3&radius=20000&rawsort=-Shortname&seed=3",
    ] {
        let (status, body) = get(app(), uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(ids(&body), ["p3", "p2", "p1"], "{uri}");
    }
    let (_, body) = get(app(), "/v1/HubActivityPoi?rawsort=-Shortname").await;
    assert_eq!(ids(&body), ["p3", "p2", "p1"]);
}

#[tokio::test]
async fn odh_parameters_are_implemented_or_refused_by_name() {
    let (_, body) = get(app(), "/v1/HubActivityPoi?publishedon=idm-marketplace").await;
    assert_eq!(body["TotalResults"], 3);
    let (_, body) = get(app(), "/v1/HubActivityPoi?publishedon=elsewhere").await;
    assert_eq!(body["TotalResults"], 0);
    for (uri, parameter) in [
        ("/v1/ODHActivityPoi?level3type=1", "level3type"),
        (
            "/v1/HubActivityPoi?pagesize=2&DifficultyFilter=1",
            "DifficultyFilter",
        ),
        ("/v1/Accommodation?odhactive=true", "odhactive"),
        ("/v1/Event?topicfilter=1", "topicfilter"),
        ("/v1/ODHTag?mainentity=event", "mainentity"),
        ("/v1/GeoShapes?rawfilter=eq(Id,'x')", "rawfilter"),
    ] {
        let (status, body) = get(app(), &uri.replace('\'', "%27")).await;
        assert_eq!(
            (status, body["parameter"].as_str()),
            (400, Some(parameter)),
            "{uri}: {body}"
        );
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .contains("does not support"),
            "{uri}: {body}"
        );
    }
    for (uri, expected) in [
        ("/v1/ODHActivityPoi?highlight=true", vec!["p1"]),
        ("/v1/ODHActivityPoi?highlight=false", vec!["p2"]),
        ("/v1/ODHActivityPoi?hasimage=true", vec!["p1"]),
        ("/v1/ODHActivityPoi?hasimage=false", vec!["p2", "p3"]),
        (
            "/v1/ODHActivityPoi?odhtagfilter_and=wandern,sommer",
            vec!["p2"],
        ),
        (
            "/v1/ODHActivityPoi?odhtagfilter=wandern,sommer",
            vec!["p2", "p3"],
        ),
    ] {
        let (status, body) = get(app(), uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(ids(&body), expected, "{uri}");
    }
    for (uri, expected) in [
        ("/v1/Municipality?visibleinsearch=true", vec!["m1"]),
        ("/v1/Municipality?visibleinsearch=false", vec!["m2"]),
    ] {
        let (status, body) = get(app(), uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(ids(&body), expected, "{uri}");
    }
    let (status, body) = get(app(), "/v1/ODHActivityPoi?hasimage=maybe").await;
    assert_eq!(
        (status, body["parameter"].as_str()),
        (400, Some("hasimage"))
    );
    // Not an ODH parameter: not refused (cache busters, formats).
    let (status, _) = get(app(), "/v1/HubActivityPoi?_=1700000000").await;
    assert_eq!(status, 200);
}
