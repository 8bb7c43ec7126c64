//! Filters and formats of the Content API (issue 5a): rawfilter/rawsort, tagfilter,
//! odhtagfilter, Tag/HubTag, entity filters, /v1/Filter, CSV, JSON-LD and 406 — over a
//! store of its own, so the shared fixtures and their assertions stay untouched.

use std::sync::OnceLock;

use serde_json::{json, Value};

use axum::body::Body;
use http::{Request, Response};
use tower::ServiceExt;

use crate::support::{self, body_bytes, encode, item_ids};

/// This module's app: its own store and fixtures (the temporary directory lives as long
/// as the test binary).
struct App {
    router: axum::Router,
    _dir: tempfile::TempDir,
}

fn app() -> &'static App {
    static APP: OnceLock<App> = OnceLock::new();
    APP.get_or_init(|| {
        let (store, dir) = support::backend();
        store
            .content()
            .put_batch_blocking(&fixtures(), &mut |_| {})
            .expect("loading fixtures");
        App {
            router: hub::router(store, &support::test_config()),
            _dir: dir,
        }
    })
}

async fn request_with(app: &App, uri: &str, headers: &[(&str, &str)]) -> Response<Body> {
    let mut builder = Request::builder().uri(uri);
    for (name, value) in headers {
        if !value.is_empty() {
            builder = builder.header(*name, *value);
        }
    }
    app.router
        .clone()
        .oneshot(builder.body(Body::empty()).unwrap())
        .await
        .expect("the router answers")
}

async fn get(app: &App, uri: &str) -> (u16, Value) {
    let response = request_with(app, uri, &[]).await;
    let status = response.status().as_u16();
    let bytes = body_bytes(response).await;
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "{uri}: body is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        )
    });
    (status, body)
}

fn poi(id: &str, name: &str, extra: Value) -> (&'static str, Value) {
    let mut doc = json!({"Id": id, "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm"}, "Shortname": name, "Active": true,
        "Detail": {"de": {"Title": format!("{name} DE")}, "en": {"Title": format!("{name} EN")}}});
    doc.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    ("HubActivityPoi", doc)
}

fn event(id: &str, dates: Value) -> (&'static str, Value) {
    (
        "Event",
        json!({"Id": id, "_Meta": {"Id": id, "Type": "event", "Source": "lts"}, "Shortname": id, "Active": true,
        "Detail": {"en": {"Title": format!("Event {id}")}}, "EventDate": dates}),
    )
}

fn fixtures() -> Vec<(&'static str, Value)> {
    let mut docs = vec![
        poi(
            "p1",
            "Alpha",
            json!({"Altitude": 1800, "HasLanguage": ["de", "en"], "TagIds": ["hiking", "summer"],
            "Tags": [{"Id": "hiking", "Source": "idm"}, {"Id": "electric charging stations", "Source": "lts"}],
            "HubTags": [{"Id": "sommer"}, {"Id": "wandern"}], "Features": [{"Id": "f1", "Name": "Wifi"}],
            "LastChange": "2024-03-01T10:00:00", "GpsInfo": [{"Latitude": 46.5, "Longitude": 11.3, "Altitude": 1800}]}),
        ),
        poi(
            "p2",
            "Bravo",
            json!({"Altitude": 250.5, "HasLanguage": ["it"], "TagIds": ["hiking"], "HubTags": [{"Id": "winter"}],
            "LastChange": "2023-01-01T00:00:00", "Note": null, "Features": [{"Id": "f2", "Name": "Pool"}]}),
        ),
        poi(
            "p3",
            "Charlie",
            json!({"Active": false, "TagIds": ["summer", "bike"], "HubTags": [{"Id": "essen trinken"}, {"Id": "sommer"}],
            "LastChange": "2024-06-01T00:00:00"}),
        ),
        poi(
            "p4",
            "Delta",
            json!({"Altitude": 900, "HasLanguage": "de", "HubTags": [{"Id": "gastronomy"}]}),
        ),
        event(
            "e1",
            json!([{"From": "2024-06-01T00:00:00", "To": "2024-06-03T00:00:00", "Begin": "10:00:00", "End": "18:00:00"}]),
        ),
        event(
            "e2",
            json!([{"From": "2024-06-05T00:00:00", "To": "2024-06-05T00:00:00"}, {"From": "2030-01-10T00:00:00", "To": "2030-01-10T00:00:00"}]),
        ),
        event(
            "e3",
            json!([{"From": "2030-01-01T00:00:00", "To": "2030-01-02T00:00:00", "Begin": "20:00"}]),
        ),
        event("e4", json!([])),
        (
            "Accommodation",
            json!({"Id": "A1", "_Meta": {"Type": "accommodation", "Source": "lts"}, "Shortname": "Hotel Sonne", "AccoTypeId": "HotelPension",
            "AccoCategoryId": "4stars", "BoardIds": ["breakfast", "half board"], "Features": [{"Id": "x", "Name": "Wellness"}],
            "AccoDetail": {"en": {"Name": "Hotel Sonne", "Longdesc": "Sunny"}}, "GpsInfo": [{"Latitude": 46.4, "Longitude": 11.2}]}),
        ),
        (
            "Accommodation",
            json!({"Id": "A2", "_Meta": {"Type": "accommodation", "Source": "lts"}, "Shortname": "Camping Lago", "AccoTypeId": "Camping",
            "AccoCategoryId": "3stars", "BoardIds": ["without board"], "Features": [{"Id": "y", "Name": "Parking"}]}),
        ),
        (
            "Article",
            json!({"Id": "R1", "_Meta": {"Type": "article", "Source": "idm"}, "Shortname": "Knödel", "Type": "rezeptartikel",
            "Detail": {"de": {"Title": "Knödel"}}}),
        ),
        (
            "Article",
            json!({"Id": "N1", "_Meta": {"Type": "article", "Source": "idm"}, "Shortname": "News", "Type": "presseartikel"}),
        ),
    ];
    for (id, entities, types, source) in [
        (
            "hiking",
            json!(["odhactivitypoi", "smgpoi"]),
            json!(["activitycategory"]),
            "idm",
        ),
        (
            "summer",
            json!(["hubactivitypoi"]),
            json!(["season"]),
            "idm",
        ),
        ("concert", json!(["event"]), json!(["eventcategory"]), "lts"),
    ] {
        docs.push((
            "Tag",
            json!({"Id": id, "_Meta": {"Id": id, "Type": "tag", "Source": source}, "Shortname": id, "Source": source,
            "TagName": {"en": id}, "ValidForEntity": entities, "Types": types}),
        ));
    }
    docs
}

async fn list(uri: &str) -> Vec<String> {
    let (status, body) = get(app(), uri).await;
    assert_eq!(status, 200, "{uri}: {body}");
    item_ids(&body)
}

fn q(expr: &str) -> String {
    encode(expr)
}

#[tokio::test]
async fn rawfilter_covers_every_operator() {
    let cases: &[(&str, &[&str])] = &[
        ("eq(Active,true)", &["p1", "p2", "p4"]),
        ("ne(Active,true)", &["p3"]),
        ("gt(Altitude,900)", &["p1"]),
        ("ge(Altitude,900)", &["p1", "p4"]),
        ("lt(Altitude,900)", &["p2"]),
        ("le(Altitude,250.5)", &["p2"]),
        ("eq(Shortname,'Bravo')", &["p2"]),
        ("eq(Detail.de.Title,\"Alpha DE\")", &["p1"]),
        ("like(Detail.en.Title,'HARL')", &["p3"]),
        ("likein(Shortname,'^al','ta$')", &["p1", "p4"]),
        ("likein(TagIds,'^bi')", &["p3"]),
        ("in(Shortname,'Alpha','Delta')", &["p1", "p4"]),
        ("in(HasLanguage,'de')", &["p1", "p4"]),
        ("nin(HasLanguage,'de')", &["p2", "p3"]),
        ("in(Features.[*].Name,'Pool')", &["p2"]),
        ("in(Features[*].Name,'Wifi','Pool')", &["p1", "p2"]),
        ("eq(GpsInfo.0.Altitude,1800)", &["p1"]),
        ("eq(GpsInfo[0].Altitude,1800)", &["p1"]),
        ("isnull(Altitude)", &["p3"]),
        ("isnull(Note)", &["p1", "p2", "p3", "p4"]),
        ("isnotnull(Note)", &[]),
        ("isnotnull(Altitude)", &["p1", "p2", "p4"]),
        ("ge(LastChange,dt'2024-03-01')", &["p1", "p3"]),
        ("lt(LastChange,dt'2024-03-01T10:00:00')", &["p2"]),
        ("eq(TagIds,[])", &[]),
        ("ne(TagIds,[])", &["p1", "p2", "p3"]),
        (
            "and(eq(Active,true),or(gt(Altitude,1000),eq(Shortname,'Bravo')))",
            &["p1", "p2"],
        ),
        (
            "or(eq(Shortname,'Charlie'), in(TagIds,'hiking'))",
            &["p1", "p2", "p3"],
        ),
        ("eq(Missing.Path,1)", &[]),
    ];
    for (expr, expected) in cases {
        assert_eq!(
            list(&format!("/v1/HubActivityPoi?rawfilter={}", q(expr))).await,
            *expected,
            "rawfilter={expr}"
        );
    }
}

#[tokio::test]
async fn rawfilter_errors_are_400_with_position() {
    let cases = [
        (
            "eq(Active,true",
            "rawfilter",
            15,
            "parse-error",
            "expected ')'",
        ),
        (
            "xx(Active,true)",
            "rawfilter",
            1,
            "parse-error",
            "expected one of",
        ),
        ("eq(Active,yes)", "rawfilter", 11, "parse-error", "quoted"),
        (
            "eq(Active,1)",
            "rawfilter",
            11,
            "type-mismatch",
            "holds booleans",
        ),
        (
            "gt(Shortname,5)",
            "rawfilter",
            14,
            "type-mismatch",
            "holds text",
        ),
        (
            "and(eq(Active,true),eq(Altitude,'high'))",
            "rawfilter",
            33,
            "type-mismatch",
            "holds numbers",
        ),
    ];
    for (expr, parameter, position, kind, phrase) in cases {
        let (status, body) = get(app(), &format!("/v1/HubActivityPoi?rawfilter={}", q(expr))).await;
        assert_eq!(status, 400, "{expr}: {body}");
        assert_eq!(body["parameter"], parameter, "{expr}");
        assert_eq!(body["position"], position, "{expr}: {body}");
        assert_eq!(body["type"], format!("urn:hub:problem:{kind}"), "{expr}");
        assert!(
            body["detail"].as_str().unwrap().contains(phrase),
            "{expr}: {}",
            body["detail"]
        );
    }
    let (status, body) = get(app(), "/v1/HubActivityPoi?rawsort=a,,b").await;
    assert_eq!(
        (
            status,
            body["parameter"].as_str(),
            body["position"].as_u64()
        ),
        (400, Some("rawsort"), Some(3))
    );
}

#[tokio::test]
async fn rawsort_replaces_the_order_keeps_the_id_tie_breaker_and_puts_missing_last() {
    assert_eq!(
        list("/v1/HubActivityPoi?rawsort=Altitude").await,
        ["p2", "p4", "p1", "p3"]
    );
    assert_eq!(
        list("/v1/HubActivityPoi?rawsort=-Altitude").await,
        ["p1", "p4", "p2", "p3"]
    );
    // Equal values (Active true for three) fall back to the id.
    assert_eq!(
        list("/v1/HubActivityPoi?rawsort=-Active,Shortname").await,
        ["p1", "p2", "p4", "p3"]
    );
    assert_eq!(
        list("/v1/Event?rawsort=Nothing").await,
        ["e1", "e2", "e3", "e4"]
    );
}

#[tokio::test]
async fn tagfilter_forms_and_unknown_tags() {
    let cases: &[(&str, &[&str])] = &[
        ("hiking", &["p1", "p2"]),
        ("HIKING", &["p1", "p2"]),
        ("hiking,bike", &["p1", "p2", "p3"]),
        ("or(hiking,bike)", &["p1", "p2", "p3"]),
        ("and(hiking,summer)", &["p1"]),
        ("and(summer)or(bike,hiking)", &["p1", "p3"]),
        ("electric charging stations", &["p1"]),
        ("lts.electric charging stations", &["p1"]),
        ("idm.hiking", &["p1"]),
        ("no-such-tag", &[]),
    ];
    for (filter, expected) in cases {
        assert_eq!(
            list(&format!("/v1/HubActivityPoi?tagfilter={}", q(filter))).await,
            *expected,
            "tagfilter={filter}"
        );
    }
    for (filter, position) in [("and(hiking,summer", 18), ("xor(a)", 1), ("and(a))", 7)] {
        let (status, body) = get(
            app(),
            &format!("/v1/HubActivityPoi?tagfilter={}", q(filter)),
        )
        .await;
        assert_eq!(
            (
                status,
                body["parameter"].as_str(),
                body["position"].as_u64()
            ),
            (400, Some("tagfilter"), Some(position)),
            "{filter}: {body}"
        );
    }
    assert_eq!(
        list("/v1/HubActivityPoi?odhtagfilter=sommer").await,
        ["p1", "p3"]
    );
    assert_eq!(
        list("/v1/HubActivityPoi?odhtagfilter=and(sommer,wandern)").await,
        ["p1"]
    );
}

#[tokio::test]
async fn tag_endpoint_filters_and_hubtag_is_deprecated() {
    assert_eq!(
        list("/v1/Tag?validforentity=odhactivitypoi").await,
        ["hiking", "summer"]
    );
    assert_eq!(
        list("/v1/Tag?validforentity=hubactivitypoi").await,
        ["hiking", "summer"]
    );
    assert_eq!(
        list("/v1/Tag?validforentity=event,accommodation").await,
        ["concert"]
    );
    assert_eq!(list("/v1/Tag?types=season").await, ["summer"]);
    assert_eq!(list("/v1/Tag?source=lts").await, ["concert"]);
    let response = request_with(app(), "/v1/HubTag?source=idm", &[]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["deprecation"], "true");
    assert_eq!(
        response.headers()["link"],
        "</v1/Tag>; rel=\"successor-version\""
    );
    let body: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    assert_eq!(item_ids(&body), ["hiking", "summer"]);
    assert_eq!(list("/v1/ODHTag").await.len(), 3);
}

#[tokio::test]
async fn event_dates_overlap_and_sort() {
    let cases: &[(&str, &[&str])] = &[
        ("begindate=2024-06-03&enddate=2024-06-03", &["e1"]),
        ("begindate=2024-06-04&enddate=2024-06-04", &[]),
        ("begindate=2024-06-02&enddate=2024-06-05", &["e1", "e2"]),
        ("begindate=2029-12-31", &["e2", "e3"]),
        ("enddate=2024-06-01", &["e1"]),
        ("begindate=2030-01-02&enddate=2030-01-02", &["e3"]),
    ];
    for (query, expected) in cases {
        assert_eq!(
            list(&format!("/v1/Event?{query}")).await,
            *expected,
            "{query}"
        );
    }
    // begindate also filters (e4 has no dates); "next" counts from begindate.
    assert_eq!(
        list("/v1/Event?sort=asc&begindate=2024-01-01").await,
        ["e1", "e2", "e3"]
    );
    assert_eq!(
        list("/v1/Event?sort=desc&begindate=2024-01-01").await,
        ["e3", "e2", "e1"]
    );
    assert_eq!(
        list("/v1/Event?sort=upcoming&begindate=2024-06-04").await,
        ["e2", "e3"]
    );
    // From now: e1 is over and e4 has no dates (both last, by id); e3 (2030-01-01) before e2 (2030-01-10).
    assert_eq!(list("/v1/Event?sort=asc").await, ["e3", "e2", "e1", "e4"]);
    assert_eq!(list("/v1/Event?sort=desc").await, ["e2", "e3", "e1", "e4"]);
    for (query, parameter) in [
        ("begindate=2024-13-01", "begindate"),
        ("enddate=tomorrow", "enddate"),
        ("begindate=2024-06-05&enddate=2024-06-01", "enddate"),
        ("sort=sideways", "sort"),
    ] {
        let (status, body) = get(app(), &format!("/v1/Event?{query}")).await;
        assert_eq!(
            (status, body["parameter"].as_str()),
            (400, Some(parameter)),
            "{query}"
        );
    }
}

#[tokio::test]
async fn accommodation_article_and_poi_category_filters() {
    let cases: &[(&str, &[&str])] = &[
        ("/v1/Accommodation?typefilter=1", &["A1"]),
        ("/v1/Accommodation?typefilter=9", &["A1", "A2"]),
        ("/v1/Accommodation?typefilter=camping", &["A2"]),
        ("/v1/Accommodation?typefilter=255", &["A1", "A2"]),
        ("/v1/Accommodation?categoryfilter=4stars", &["A1"]),
        ("/v1/Accommodation?boardfilter=4", &["A1"]),
        ("/v1/Accommodation?boardfilter=without board", &["A2"]),
        ("/v1/Accommodation?featurefilter=1024", &["A2"]),
        ("/v1/Article?articletype=32", &["R1"]),
        (
            "/v1/Article?articletype=presseartikel,rezeptartikel",
            &["R1", "N1"],
        ),
        ("/v1/HubActivityPoi?type=4", &["p1", "p3"]),
        (
            "/v1/HubActivityPoi?type=winter,essen trinken",
            &["p2", "p3"],
        ),
        ("/v1/HubActivityPoi?type=34", &["p2", "p3"]),
        ("/v1/HubActivityPoi?type=255", &["p1", "p2", "p3", "p4"]),
        ("/v1/HubActivityPoi?type=4&subtype=wandern", &["p1"]),
        ("/v1/HubActivityPoi?poitype=gastronomy", &["p4"]),
        // The reference's fixed flag tables: 16 Wandern; 1 Berg + 16 Wandern; all bits =
        // no filter; 447 (1 … 256 but 64 Verkehr und Transport) and 511 match no fixture.
        ("/v1/HubActivityPoi?activitytype=16", &["p1"]),
        ("/v1/HubActivityPoi?activitytype=17", &["p1"]),
        (
            "/v1/HubActivityPoi?activitytype=1023",
            &["p1", "p2", "p3", "p4"],
        ),
        ("/v1/HubActivityPoi?activitytype=wandern", &["p1"]),
        ("/v1/HubActivityPoi?poitype=447", &[]),
        ("/v1/HubActivityPoi?poitype=511", &[]),
        ("/v1/HubActivityPoi?poitype=2047", &["p1", "p2", "p3", "p4"]),
        ("/v1/ODHActivityPoi?activitytype=511", &["p1"]),
        // idfilter: the reference's name of idlist on Accommodation.
        ("/v1/Accommodation?idfilter=a2", &["A2"]),
        ("/v1/Accommodation?idfilter=A1,a2", &["A1", "A2"]),
    ];
    for (uri, expected) in cases {
        let mut got = list(&uri.replace(' ', "%20")).await;
        let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{uri}");
    }
    for (uri, parameter) in [
        ("/v1/Accommodation?typefilter=256", "typefilter"),
        ("/v1/Accommodation?typefilter=castle", "typefilter"),
        ("/v1/Article?articletype=0", "articletype"),
        ("/v1/HubActivityPoi?subtype=12", "subtype"),
        ("/v1/HubActivityPoi?activitytype=1024", "activitytype"),
        ("/v1/HubActivityPoi?activitytype=0", "activitytype"),
        ("/v1/HubActivityPoi?poitype=2048", "poitype"),
    ] {
        let (status, body) = get(app(), uri).await;
        assert_eq!(
            (status, body["parameter"].as_str()),
            (400, Some(parameter)),
            "{uri}"
        );
    }
}

#[tokio::test]
async fn filter_endpoint_spans_entity_types() {
    let (status, body) = get(
        app(),
        &format!(
            "/v1/Filter?expression={}&type=hubactivitypoi,accommodation,event&limitto=2",
            q("like(Shortname,'a')")
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["detailedResults"],
        json!({"hubactivitypoi": 4, "accommodation": 1, "event": 0})
    );
    assert_eq!(body["totalResults"], 5);
    assert_eq!(body["expression"], "like(Shortname,'a')");
    assert_eq!(body["Items"].as_array().unwrap().len(), 3);
    let (status, body) = get(app(), &format!("/v1/Filter?expression={}", q("eq(a,"))).await;
    assert_eq!(
        (
            status,
            body["parameter"].as_str(),
            body["position"].as_u64()
        ),
        (400, Some("expression"), Some(6))
    );
    let (status, body) = get(app(), "/v1/Filter").await;
    assert_eq!(
        (status, body["parameter"].as_str()),
        (400, Some("expression"))
    );
    let (status, body) = get(
        app(),
        &format!("/v1/Filter?expression={}&type=nothing", q("eq(a,1)")),
    )
    .await;
    assert_eq!((status, body["parameter"].as_str()), (400, Some("type")));
}

async fn text(uri: &str, accept: &str) -> (u16, String, String) {
    let response = request_with(app(), uri, &[("accept", accept)]).await;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (
        status,
        content_type,
        String::from_utf8(body_bytes(response).await).unwrap(),
    )
}

#[tokio::test]
async fn csv_by_accept_or_format() {
    let (status, content_type, body) = text(
        "/v1/HubActivityPoi?fields=Shortname,Detail.de.Title",
        "text/csv",
    )
    .await;
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/csv"), "{content_type}");
    assert_eq!(
        body,
        "Id,Shortname,Detail.de.Title\r\np1,Alpha,Alpha DE\r\np2,Bravo,Bravo DE\r\np3,Charlie,Charlie DE\r\np4,Delta,Delta DE\r\n"
    );
    let (_, _, full) = text(
        "/v1/HubActivityPoi?format=csv&pagesize=1",
        "application/json",
    )
    .await;
    let header = full.lines().next().unwrap();
    assert!(
        header.starts_with("Id,_Meta.Id,_Meta.Type,_Meta.Source,Shortname,Active,Detail.de.Title"),
        "{header}"
    );
    assert!(full.contains("hiking|summer"), "{full}");
}

#[tokio::test]
async fn json_ld_for_items_and_lists() {
    let (status, content_type, body) = text("/v1/Accommodation/A1", "application/ld+json").await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, "application/ld+json")
    );
    let doc: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["@context"]["@vocab"], "https://schema.org/");
    assert_eq!(doc["@type"], "Hotel");
    assert_eq!(doc["@id"], "http://hub.test/v1/Accommodation/A1");
    assert_eq!(doc["name"], "Hotel Sonne");
    assert_eq!(doc["starRating"]["ratingValue"], 4);
    let (_, _, list_body) = text("/v1/HubActivityPoi?format=jsonld", "*/*").await;
    let list: Value = serde_json::from_str(&list_body).unwrap();
    let types: Vec<&str> = list["@graph"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["@type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "TouristAttraction",
            "TouristAttraction",
            "Restaurant",
            "Restaurant"
        ]
    );
    for (uri, t) in [
        ("/v1/Event/e1", "Event"),
        ("/v1/Article/R1", "Recipe"),
        ("/v1/Tag/hiking", "Place"),
    ] {
        let (_, _, b) = text(uri, "application/ld+json").await;
        assert_eq!(
            serde_json::from_str::<Value>(&b).unwrap()["@type"],
            t,
            "{uri}"
        );
    }
}

#[tokio::test]
async fn json_is_the_default_and_other_types_are_406() {
    for accept in ["application/json", "*/*", "application/*", ""] {
        let (status, content_type, _) = text("/v1/Event", accept).await;
        assert_eq!(status, 200, "{accept}");
        assert!(
            content_type.starts_with("application/json"),
            "{accept}: {content_type}"
        );
    }
    let (status, content_type, body) = text("/v1/Event", "text/html").await;
    assert_eq!(
        (status, content_type.as_str()),
        (406, "application/problem+json")
    );
    assert!(
        body.contains("application/json, text/csv, application/ld+json"),
        "{body}"
    );
    let (status, body) = get(app(), "/v1/Event?format=xml").await;
    assert_eq!((status, body["parameter"].as_str()), (400, Some("format")));
    // Errors stay problem bodies whatever was asked.
    let (status, content_type, _) = text("/v1/Event/nope", "text/csv").await;
    assert_eq!(
        (status, content_type.as_str()),
        (404, "application/problem+json")
    );
}

fn out_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("formats")
}

/// Runs `tests/formats_check.py` (standard CSV reader, pyld expansion) over the files
/// the two tests above write; skips with a reason when python3 or pyld is missing.
#[tokio::test]
async fn formats_pass_standard_readers() {
    std::fs::create_dir_all(out_dir()).unwrap();
    for (uri, accept, file) in [
        ("/v1/HubActivityPoi?pagesize=100", "text/csv", "pois.csv"),
        (
            "/v1/Accommodation?pagesize=100",
            "text/csv",
            "accommodations.csv",
        ),
        ("/v1/Accommodation/A1", "application/ld+json", "item.jsonld"),
        ("/v1/HubActivityPoi", "application/ld+json", "list.jsonld"),
        ("/v1/Event?format=jsonld", "*/*", "events.jsonld"),
    ] {
        let (status, _, body) = text(uri, accept).await;
        assert_eq!(status, 200, "{uri}");
        std::fs::write(out_dir().join(file), body).unwrap();
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/formats_check.py");
    match std::process::Command::new("python3")
        .arg(script)
        .arg(out_dir())
        .output()
    {
        Err(e) => eprintln!("skipped: python3 is not available ({e})"),
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "formats_check.py failed");
        }
    }
}

#[tokio::test]
async fn filter_endpoint_applies_rawsort() {
    let uri = |sort: &str| {
        format!(
            "/v1/Filter?expression={}&type=hubactivitypoi&limitto=2{sort}",
            q("like(Shortname,'a')")
        )
    };
    let item_ids = |body: &Value| -> Vec<String> {
        body["Items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["Id"].as_str().unwrap().to_string())
            .collect()
    };
    let (status, plain) = get(app(), &uri("")).await;
    assert_eq!(status, 200, "{plain}");
    assert_eq!(item_ids(&plain), ["p1", "p2"]);
    let (status, sorted) = get(app(), &uri("&rawsort=-Shortname")).await;
    assert_eq!(status, 200, "{sorted}");
    assert_eq!(item_ids(&sorted), ["p4", "p3"]);
    assert_eq!(sorted["detailedResults"], json!({"hubactivitypoi": 4}));
    let (status, body) = get(app(), &uri("&rawsort=a,,b")).await;
    assert_eq!(
        (status, body["parameter"].as_str()),
        (400, Some("rawsort")),
        "{body}"
    );
}

#[tokio::test]
async fn distinct_takes_tagfilter_rawfilter_and_rawsort() {
    let names = |extra: &str| {
        format!("/v1/Distinct?type=hubactivitypoi&fields=Shortname&getasarray=true{extra}")
    };
    let cases: &[(String, Value)] = &[
        (names(""), json!(["Alpha", "Bravo", "Charlie", "Delta"])),
        (names("&tagfilter=hiking"), json!(["Alpha", "Bravo"])),
        (
            names(&format!("&tagfilter={}", q("and(hiking,summer)"))),
            json!(["Alpha"]),
        ),
        (names("&odhtagfilter=sommer"), json!(["Alpha", "Charlie"])),
        // `source` reads each document's `_Meta.Source`.
        (
            names("&source=IDM,lts"),
            json!(["Alpha", "Bravo", "Charlie", "Delta"]),
        ),
        (names("&source=lts"), json!([])),
        (
            names(&format!("&rawfilter={}", q("eq(Active,false)"))),
            json!(["Charlie"]),
        ),
        (
            names(&format!(
                "&rawfilter={}&tagfilter=summer",
                q("eq(Active,true)")
            )),
            json!(["Alpha"]),
        ),
        // With rawsort the values come in the documents' order.
        (
            names("&rawsort=-Shortname"),
            json!(["Delta", "Charlie", "Bravo", "Alpha"]),
        ),
        (
            names("&rawsort=-Altitude&tagfilter=hiking"),
            json!(["Alpha", "Bravo"]),
        ),
    ];
    for (uri, expected) in cases {
        let (status, body) = get(app(), uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(&body, expected, "{uri}");
    }
    let (_, rows) = get(
        app(),
        &format!(
            "/v1/Distinct?type=hubactivitypoi&fields=Id,Shortname&rawfilter={}",
            q("gt(Altitude,500)")
        ),
    )
    .await;
    assert_eq!(
        rows,
        json!([{"Id": "p1", "Shortname": "Alpha"}, {"Id": "p4", "Shortname": "Delta"}])
    );

    for (uri, parameter, position) in [
        (
            names(&format!("&tagfilter={}", q("and(hiking,summer"))),
            "tagfilter",
            Some(18),
        ),
        (
            names(&format!("&odhtagfilter={}", q("xor(a)"))),
            "odhtagfilter",
            Some(1),
        ),
        (
            names(&format!("&rawfilter={}", q("eq(a,"))),
            "rawfilter",
            Some(6),
        ),
        (names("&rawsort=a,,b"), "rawsort", None),
        (
            format!(
                "/v1/Distinct?type=hubmetadata&fields=Type&rawfilter={}",
                q("eq(a,1)")
            ),
            "rawfilter",
            None,
        ),
        (
            "/v1/Distinct?type=hubmetadata&fields=Type&rawsort=Type".to_string(),
            "rawsort",
            None,
        ),
    ] {
        let (status, body) = get(app(), &uri).await;
        assert_eq!(
            (status, body["parameter"].as_str()),
            (400, Some(parameter)),
            "{uri}: {body}"
        );
        if let Some(position) = position {
            assert_eq!(body["position"].as_u64(), Some(position), "{uri}: {body}");
        }
    }
}

#[tokio::test]
async fn find_searches_base_texts_and_extra_fields() {
    let (status, plain) = get(app(), "/v1/Find?q=sunny&type=accommodation").await;
    assert_eq!(status, 200, "{plain}");
    assert_eq!(plain["detailedResults"], json!({"accommodation": 0}));
    let (status, texts) = get(
        app(),
        "/v1/Find?q=SUNNY&type=accommodation,hubactivitypoi&searchbasetext=true&fields=AccoTypeId",
    )
    .await;
    assert_eq!(status, 200, "{texts}");
    assert_eq!(
        texts["detailedResults"],
        json!({"accommodation": 1, "hubactivitypoi": 0})
    );
    assert_eq!(texts["Items"][0]["Id"], "A1");
    assert_eq!(texts["Items"][0]["AccoTypeId"], "HotelPension");
    // Titles and ids still match in the wider search.
    let (_, titles) = get(
        app(),
        "/v1/Find?q=alpha&type=hubactivitypoi&searchbasetext=true",
    )
    .await;
    assert_eq!(titles["detailedResults"], json!({"hubactivitypoi": 1}));
    let (_, by_id) = get(
        app(),
        "/v1/Find?q=P2&type=hubactivitypoi&searchbasetext=true",
    )
    .await;
    assert_eq!(by_id["Items"][0]["Id"], "p2", "{by_id}");
    // filteronfields: further paths, [*] allowed.
    let (_, none) = get(app(), "/v1/Find?q=wifi&type=hubactivitypoi").await;
    assert_eq!(none["totalResults"], 0);
    let (_, wifi) = get(
        app(),
        &format!(
            "/v1/Find?q=wifi&type=hubactivitypoi&filteronfields={}",
            q("Features.[*].Name")
        ),
    )
    .await;
    assert_eq!(wifi["totalResults"], 1, "{wifi}");
    assert_eq!(wifi["Items"][0]["Id"], "p1");
    // rawfilter and rawsort within each type.
    let (_, sorted) = get(
        app(),
        &format!(
            "/v1/Find?q=a&type=hubactivitypoi&rawsort=-Shortname&rawfilter={}",
            q("eq(Active,true)")
        ),
    )
    .await;
    let found: Vec<&str> = sorted["Items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["Id"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["p4", "p2", "p1"], "{sorted}");

    for (uri, parameter) in [
        (
            "/v1/Find?q=x&searchbasetext=perhaps".to_string(),
            "searchbasetext",
        ),
        (
            "/v1/Find?q=x&filteronfields=a(b".to_string(),
            "filteronfields",
        ),
        (
            "/v1/Find?q=x&filteronfields=Id,a)or(b".to_string(),
            "filteronfields",
        ),
        (
            "/v1/Find?q=x&filteronfields=a,,b".to_string(),
            "filteronfields",
        ),
        ("/v1/Find?q=x&locfilter=xyz1".to_string(), "locfilter"),
        ("/v1/Find?q=x&fields=a..b".to_string(), "fields"),
        (
            format!("/v1/Find?q=x&rawfilter={}", q("eq(a,")),
            "rawfilter",
        ),
        ("/v1/Find?q=x&rawsort=a,,b".to_string(), "rawsort"),
    ] {
        let (status, body) = get(app(), &uri).await;
        assert_eq!(
            (status, body["parameter"].as_str()),
            (400, Some(parameter)),
            "{uri}: {body}"
        );
    }
}
