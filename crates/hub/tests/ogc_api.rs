//! GeoJSON output of the Content API and the OGC API – Features (`/ogc`), driven through
//! the real router against the shared content fixtures (SQLite, or PostgreSQL with
//! `HUB_TEST_DATABASE`).

mod support;

use serde_json::{json, Value};
use support::{body_bytes, content_app, encode, get, request_with};

async fn geojson(uri: &str, accept: &str) -> (u16, String, Value) {
    let response = request_with(content_app(), uri, &[("accept", accept)]).await;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = serde_json::from_slice(&body_bytes(response).await).unwrap();
    (status, content_type, body)
}

fn feature_ids(body: &Value) -> Vec<&str> {
    body["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn content_lists_become_feature_collections_after_shaping() {
    let (status, content_type, body) = geojson(
        "/v1/HubActivityPoi?fields=Shortname&pagesize=2",
        "application/geo+json",
    )
    .await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, "application/geo+json")
    );
    assert_eq!(body["type"], "FeatureCollection");
    assert_eq!(body["TotalResults"], 5);
    // Default order (Shortname): Alm first, with its position although `fields` left
    // GpsInfo out of the properties.
    let alm = &body["features"][0];
    assert_eq!(alm["id"], "poi-alm");
    assert_eq!(
        alm["geometry"],
        json!({"type": "Point", "coordinates": [11.5, 46.6]})
    );
    assert_eq!(
        alm["properties"],
        json!({"Id": "poi-alm", "Shortname": "Alm"})
    );
    // The bakery has no position.
    assert_eq!(body["features"][1]["geometry"], Value::Null);
    let next = body["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["rel"] == "next")
        .expect("a next link");
    assert!(next["href"].as_str().unwrap().contains("pagenumber=2"));

    // format=geojson and language reach the properties too.
    let (_, _, item) = geojson(
        "/v1/HubActivityPoi/poi-alm?format=geojson&language=it",
        "*/*",
    )
    .await;
    assert_eq!(item["type"], "Feature");
    assert_eq!(
        item["properties"]["Detail"],
        json!({"it": {"Title": "Rifugio alpino"}})
    );
    assert_eq!(item["geometry"]["coordinates"], json!([11.5, 46.6]));

    // Closed data is reduced in GeoJSON as in JSON.
    let (_, _, acco) = geojson("/v1/Accommodation?format=geojson", "*/*").await;
    for feature in acco["features"].as_array().unwrap() {
        assert_eq!(feature["properties"]["_Meta"]["Reduced"], true);
        assert!(feature["geometry"].is_object());
    }
    // The dataset list has no GeoJSON form.
    let (status, _, _) = geojson("/v1", "application/geo+json").await;
    assert_eq!(status, 406);
}

#[tokio::test]
async fn ogc_landing_conformance_and_collections() {
    let app = content_app();
    let (status, landing) = get(app, "/ogc").await;
    assert_eq!(status, 200);
    let rels: Vec<&str> = landing["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["rel"].as_str().unwrap())
        .collect();
    assert_eq!(rels, ["self", "service-desc", "conformance", "data"]);
    let (_, conformance) = get(app, "/ogc/conformance").await;
    let classes = conformance["conformsTo"].as_array().unwrap();
    assert!(classes.contains(&json!(
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core"
    )));
    assert!(classes.contains(&json!(
        "http://www.opengis.net/spec/cql2/1.0/conf/cql2-text"
    )));
    let (_, collections) = get(app, "/ogc/collections").await;
    assert_eq!(
        collections["collections"].as_array().unwrap().len(),
        hub_model::ENTITY_TYPES.len()
    );
    let (status, one) = get(app, "/ogc/collections/HubActivityPoi").await;
    assert_eq!((status, one["id"].as_str()), (200, Some("hubactivitypoi")));
    let (status, _) = get(app, "/ogc/collections/nothing").await;
    assert_eq!(status, 404);
    let (_, queryables) = get(app, "/ogc/collections/hubactivitypoi/queryables").await;
    assert_eq!(queryables["properties"]["Active"]["type"], "boolean");
    let (_, api) = get(app, "/ogc/api").await;
    assert_eq!(api["openapi"], "3.0.3");
    assert!(api["paths"]["/collections/{collectionId}/items"]["get"].is_object());
}

#[tokio::test]
async fn ogc_items_page_by_limit_and_offset_with_links() {
    let app = content_app();
    let (status, all) = get(app, "/ogc/collections/hubactivitypoi/items").await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            all["numberMatched"].as_u64(),
            all["numberReturned"].as_u64()
        ),
        (Some(5), Some(5))
    );
    let order = feature_ids(&all);
    let (_, page) = get(
        app,
        "/ogc/collections/hubactivitypoi/items?limit=2&offset=3",
    )
    .await;
    assert_eq!(feature_ids(&page), order[3..5]);
    // An offset that is not a multiple of the limit.
    let (_, page) = get(
        app,
        "/ogc/collections/hubactivitypoi/items?limit=3&offset=1",
    )
    .await;
    assert_eq!(feature_ids(&page), order[1..4]);
    let links = page["links"].as_array().unwrap();
    let href = |rel: &str| {
        links
            .iter()
            .find(|l| l["rel"] == rel)
            .map(|l| l["href"].as_str().unwrap().to_string())
    };
    assert!(href("next").unwrap().contains("offset=4"));
    assert!(href("prev").unwrap().contains("offset=0"));
    let (status, problem) = get(app, "/ogc/collections/hubactivitypoi/items?limit=10001").await;
    assert_eq!(
        (status, problem["parameter"].as_str()),
        (400, Some("limit"))
    );
}

#[tokio::test]
async fn ogc_items_filter_by_bbox_crs_datetime_properties_and_cql2() {
    let app = content_app();
    let ids = |body: &Value| {
        let mut ids: Vec<String> = feature_ids(body).iter().map(|s| s.to_string()).collect();
        ids.sort();
        ids
    };
    let (_, boxed) = get(
        app,
        "/ogc/collections/hubactivitypoi/items?bbox=11.4,46.5,11.6,46.7",
    )
    .await;
    assert_eq!(ids(&boxed), ["poi-alm"]);
    // The same box, latitude first as EPSG:4326 defines it.
    let (_, latlon) = get(
        app,
        &format!(
            "/ogc/collections/hubactivitypoi/items?bbox=46.5,11.4,46.7,11.6&bbox-crs={}",
            encode("http://www.opengis.net/def/crs/EPSG/0/4326")
        ),
    )
    .await;
    assert_eq!(ids(&latlon), ["poi-alm"]);
    // Output in Web Mercator, named in Content-Crs.
    let response = request_with(
        app,
        &format!(
            "/ogc/collections/hubactivitypoi/items/poi-alm?crs={}",
            encode("http://www.opengis.net/def/crs/EPSG/0/3857")
        ),
        &[],
    )
    .await;
    assert_eq!(
        response.headers()["content-crs"],
        "<http://www.opengis.net/def/crs/EPSG/0/3857>"
    );
    let item: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    let x = item["geometry"]["coordinates"][0].as_f64().unwrap();
    assert!((x - 1_280_174.0).abs() < 5.0, "{x}");
    // Last change from June 2024 on: the café (2024-06-01T08:00Z) and Extra.
    let (_, changed) = get(
        app,
        "/ogc/collections/hubactivitypoi/items?datetime=2024-06-01T00:00:00Z/..",
    )
    .await;
    assert_eq!(ids(&changed), ["poi-cafe", "poi-e"]);
    let (_, until) = get(
        app,
        "/ogc/collections/hubactivitypoi/items?datetime=../2023-12-31",
    )
    .await;
    assert_eq!(ids(&until), ["poi-b"]);
    let (_, inactive) = get(app, "/ogc/collections/hubactivitypoi/items?Active=false").await;
    assert_eq!(ids(&inactive), ["poi-d"]);
    let cql = |filter: &str| {
        format!(
            "/ogc/collections/hubactivitypoi/items?filter-lang=cql2-text&filter={}",
            encode(filter)
        )
    };
    let (_, found) = get(app, &cql("Shortname LIKE 'b%' OR Shortname IN ('Extra')")).await;
    assert_eq!(ids(&found), ["poi-b", "poi-e"]);
    let (_, found) = get(
        app,
        &cql("NOT (Active = true) OR GpsInfo.0.Altitude BETWEEN 1000 AND 2000"),
    )
    .await;
    assert_eq!(ids(&found), ["poi-alm", "poi-d"]);
    let (_, found) = get(
        app,
        &cql("S_INTERSECTS(geometry, BBOX(11, 46, 12, 47)) AND Active = true"),
    )
    .await;
    assert_eq!(ids(&found), ["poi-alm"]);
    let (status, problem) = get(app, &cql("Active = 1")).await;
    assert_eq!(
        (
            status,
            problem["parameter"].as_str(),
            problem["position"].as_u64()
        ),
        (400, Some("filter"), Some(10))
    );
    let (status, problem) = get(app, &cql("Shortname = ")).await;
    assert_eq!(
        (status, problem["parameter"].as_str()),
        (400, Some("filter"))
    );
}

#[tokio::test]
async fn ogc_features_keep_closed_data_closed() {
    let app = content_app();
    let (status, item) = get(app, "/ogc/collections/accommodation/items/acco-1").await;
    assert_eq!(status, 200);
    assert_eq!(item["properties"]["_Meta"]["Reduced"], true);
    assert_eq!(item["geometry"]["coordinates"], json!([11.35, 46.49]));
    // The feature links to itself and to its collection, after its properties.
    assert_eq!(item["id"], "acco-1");
    let links = item["links"].as_array().expect("an item's links");
    assert_eq!(
        links.iter().map(|l| l["rel"].as_str()).collect::<Vec<_>>(),
        [Some("self"), Some("collection")]
    );
    assert!(links[0]["href"]
        .as_str()
        .is_some_and(|h| h.ends_with("/ogc/collections/accommodation/items/acco-1")));
    let keys: Vec<&String> = item.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "id", "geometry", "properties", "links"]);
    let (status, problem) = get(
        app,
        &format!(
            "/ogc/collections/accommodation/items?filter={}",
            encode("AccoRoomInfo IS NOT NULL")
        ),
    )
    .await;
    assert_eq!(
        (status, problem["parameter"].as_str()),
        (400, Some("filter"))
    );
    let (status, _) = get(app, "/ogc/collections/accommodation/items/nope").await;
    assert_eq!(status, 404);
}

/// A collection says where and when its features are, and says it again after a write.
#[tokio::test]
async fn a_collection_extent_is_the_box_and_change_interval_of_its_documents() {
    let (store, dir) = support::backend();
    let poi = |id: &str, lat: f64, lon: f64, changed: &str| {
        json!({"Id": id, "Active": true, "Shortname": id,
            "GpsInfo": [{"Gpstype": "position", "Latitude": lat, "Longitude": lon}],
            "_Meta": {"Type": "hubactivitypoi", "Source": "test", "LastChange": changed}})
    };
    store
        .content()
        .put_batch_blocking(
            &[
                (
                    "HubActivityPoi",
                    poi("A", 46.5, 11.3, "2024-01-02T10:00:00Z"),
                ),
                (
                    "HubActivityPoi",
                    poi("B", 46.7, 11.9, "2024-03-04T10:00:00Z"),
                ),
                ("HubActivityPoi", json!({"Id": "C", "Shortname": "nowhere"})),
            ],
            &mut |_| {},
        )
        .unwrap();
    let app = support::TestApp {
        router: hub::router(store.clone(), &support::test_config()),
        store: store.clone(),
        _dir: dir,
    };
    let (status, collection) = get(&app, "/ogc/collections/hubactivitypoi").await;
    assert_eq!(status, 200);
    assert_eq!(
        collection["extent"]["spatial"]["bbox"],
        json!([[11.3, 46.5, 11.9, 46.7]])
    );
    assert_eq!(
        collection["extent"]["temporal"]["interval"],
        json!([["2024-01-02T10:00:00Z", "2024-03-04T10:00:00Z"]])
    );
    // A dataset without documents has no extent (a box needs four numbers).
    let (status, empty) = get(&app, "/ogc/collections/article").await;
    assert_eq!(status, 200);
    assert_eq!(empty.get("extent"), None);

    // A write moves the box (the cached extent is read again after the revision changes),
    // and the collections list says the same.
    store
        .content()
        .put_batch_blocking(
            &[(
                "HubActivityPoi",
                poi("D", 46.2, 10.9, "2024-05-06T10:00:00Z"),
            )],
            &mut |_| {},
        )
        .unwrap();
    let (_, moved) = get(&app, "/ogc/collections/hubactivitypoi").await;
    assert_eq!(
        moved["extent"]["spatial"]["bbox"],
        json!([[10.9, 46.2, 11.9, 46.7]])
    );
    let (_, list) = get(&app, "/ogc/collections").await;
    let listed = list["collections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "hubactivitypoi")
        .unwrap();
    assert_eq!(listed["extent"], moved["extent"]);
}
