//! OGC API – Features station collections (`/ogc/collections/station-…`) and GeoJSON
//! from the Time Series API's flat answers, driven through the real router over the demo
//! (SQLite, or PostgreSQL with `HUB_TEST_DATABASE`). Every expectation is checked against
//! what `/v2` answers the same caller, so closed data is compared, not assumed.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use support::{body_bytes, password_token, request_with, shared_demo_app, TestApp};

const ANCHOR: &str = "2025-06-15T12:00:00Z";

async fn get_as(app: &TestApp, uri: &str, headers: &[(&str, &str)]) -> (u16, String, Value) {
    let response = request_with(app, uri, headers).await;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = body_bytes(response).await;
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{uri}: not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
    (status, content_type, body)
}

async fn ok(app: &TestApp, uri: &str) -> Value {
    let (status, _, body) = get_as(app, uri, &[]).await;
    assert_eq!(status, 200, "{uri}: {body}");
    body
}

async fn bad(app: &TestApp, uri: &str, parameter: &str) {
    let (status, content_type, body) = get_as(app, uri, &[]).await;
    assert_eq!(status, 400, "{uri}: {body}");
    assert_eq!(content_type, "application/problem+json", "{uri}");
    assert_eq!(body["parameter"], parameter, "{uri}: {body}");
}

fn codes(body: &Value) -> Vec<String> {
    body["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn link<'a>(body: &'a Value, rel: &str) -> Option<&'a str> {
    body["links"]
        .as_array()?
        .iter()
        .find(|l| l["rel"] == rel)
        .and_then(|l| l["href"].as_str())
}

#[tokio::test]
async fn station_collections_are_listed_after_the_datasets_and_described() {
    let app = shared_demo_app(ANCHOR);
    let list = ok(app, "/ogc/collections").await;
    let ids: Vec<&str> = list["collections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let types = ok(app, "/v2/flat").await;
    let stations: Vec<String> = types
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("station-{}", t["id"].as_str().unwrap().to_lowercase()))
        .collect();
    assert!(stations.contains(&"station-parkingstation".to_string()));
    // The Content datasets first, then one collection per station type in its order.
    assert_eq!(ids[ids.len() - stations.len()..], stations[..]);
    assert!(!ids[0].starts_with("station-"));

    // Any case resolves; the id is lower case.
    let one = ok(app, "/ogc/collections/Station-ParkingStation").await;
    assert_eq!(one["id"], "station-parkingstation");
    let q = ok(app, "/ogc/collections/station-parkingstation/queryables").await;
    assert_eq!(q["properties"]["scode"]["type"], "string");
    assert_eq!(q["properties"]["sactive"]["type"], "boolean");
    let (status, _, _) = get_as(app, "/ogc/collections/station-nosuchtype", &[]).await;
    assert_eq!(status, 404);
    let (status, _, _) = get_as(app, "/ogc/collections/station-nosuchtype/items", &[]).await;
    assert_eq!(status, 404);
    // The API document names the station collections.
    let api = ok(app, "/ogc/api").await;
    let ids = &api["paths"]["/collections/{collectionId}/items"]["get"]["parameters"][0]["schema"]
        ["enum"];
    assert!(ids
        .as_array()
        .unwrap()
        .contains(&Value::from("station-parkingstation")));
}

#[tokio::test]
async fn items_page_filter_and_transform_like_the_flat_station_list() {
    let app = shared_demo_app(ANCHOR);
    let flat = ok(app, "/v2/flat/ParkingStation?limit=-1").await;
    let rows = flat["data"].as_array().unwrap();
    let all = ok(
        app,
        "/ogc/collections/station-parkingstation/items?limit=10000",
    )
    .await;
    assert_eq!(all["type"], "FeatureCollection");
    assert_eq!(all["numberMatched"], rows.len());
    assert_eq!(all["numberReturned"], rows.len());
    // Properties: the flat station row, plus the latest measurements.
    let first = &all["features"][0];
    let row = rows
        .iter()
        .find(|r| r["scode"] == first["id"])
        .expect("the station is in the flat list");
    for (key, value) in row.as_object().unwrap() {
        assert_eq!(&first["properties"][key], value, "{key}");
    }
    let (x, y) = (
        row["scoordinate"]["x"].as_f64().unwrap(),
        row["scoordinate"]["y"].as_f64().unwrap(),
    );
    assert_eq!(first["geometry"]["type"], "Point");
    assert_eq!(first["geometry"]["coordinates"][0].as_f64().unwrap(), x);
    assert_eq!(first["geometry"]["coordinates"][1].as_f64().unwrap(), y);
    assert!(first["properties"]["latest"].is_object());

    // Paging: limit, offset, next and prev.
    let page = ok(
        app,
        "/ogc/collections/station-parkingstation/items?limit=2&offset=1",
    )
    .await;
    assert_eq!(page["numberReturned"], 2);
    assert_eq!(codes(&page), codes(&all)[1..3].to_vec());
    let next = link(&page, "next").expect("a next link");
    assert!(
        next.contains("offset=3") && next.contains("limit=2"),
        "{next}"
    );
    assert!(link(&page, "prev").unwrap().contains("offset=0"));
    let last = ok(
        app,
        &format!(
            "/ogc/collections/station-parkingstation/items?limit=2&offset={}",
            rows.len() - 1
        ),
    )
    .await;
    assert!(link(&last, "next").is_none());

    // One feature by station code; an unknown code is a 404.
    let code = first["id"].as_str().unwrap();
    let one = ok(
        app,
        &format!("/ogc/collections/station-parkingstation/items/{code}"),
    )
    .await;
    assert_eq!(one["properties"], first["properties"]);
    let (status, _, _) = get_as(
        app,
        "/ogc/collections/station-parkingstation/items/no-such-code",
        &[],
    )
    .await;
    assert_eq!(status, 404);

    // bbox around the first station only (the demo's stations are more than 0.0001° apart).
    let bbox = format!("{},{},{},{}", x - 1e-4, y - 1e-4, x + 1e-4, y + 1e-4);
    let boxed = ok(
        app,
        &format!("/ogc/collections/station-parkingstation/items?bbox={bbox}"),
    )
    .await;
    assert!(codes(&boxed).contains(&code.to_string()));
    let everything = ok(
        app,
        "/ogc/collections/station-parkingstation/items?bbox=0,0,1,1",
    )
    .await;
    assert_eq!(everything["numberMatched"], 0);
    // Latitude-first EPSG:4326 box.
    let lat_first = format!("{},{},{},{}", y - 1e-4, x - 1e-4, y + 1e-4, x + 1e-4);
    let boxed4326 = ok(app, &format!("/ogc/collections/station-parkingstation/items?bbox={lat_first}&bbox-crs=http://www.opengis.net/def/crs/EPSG/0/4326")).await;
    assert_eq!(codes(&boxed4326), codes(&boxed));

    // Property filters: equality.
    let by_code = ok(
        app,
        &format!("/ogc/collections/station-parkingstation/items?scode={code}"),
    )
    .await;
    assert_eq!(codes(&by_code), [code.to_string()]);
    let active = rows.iter().filter(|r| r["sactive"] == true).count();
    let actives = ok(
        app,
        "/ogc/collections/station-parkingstation/items?sactive=true&limit=10000",
    )
    .await;
    assert_eq!(actives["numberMatched"], active);

    // crs=3857: metres, in the range of South Tyrol.
    let metres = ok(app, &format!("/ogc/collections/station-parkingstation/items/{code}?crs=http://www.opengis.net/def/crs/EPSG/0/3857")).await;
    let mx = metres["geometry"]["coordinates"][0].as_f64().unwrap();
    let my = metres["geometry"]["coordinates"][1].as_f64().unwrap();
    assert!((mx - x * 20_037_508.34 / 180.0).abs() < 1.0, "{mx}");
    assert!(my > 5_000_000.0 && my < 6_500_000.0, "{my}");

    // Mistakes name their parameter.
    let items = "/ogc/collections/station-parkingstation/items";
    bad(app, &format!("{items}?limit=10001"), "limit").await;
    bad(app, &format!("{items}?limit=0"), "limit").await;
    bad(app, &format!("{items}?offset=-1"), "offset").await;
    bad(app, &format!("{items}?bbox=1,2,3"), "bbox").await;
    bad(
        app,
        &format!("{items}?bbox=1,2,3,4&bbox-crs=EPSG:2056"),
        "bbox-crs",
    )
    .await;
    bad(app, &format!("{items}?crs=EPSG:1"), "crs").await;
    bad(app, &format!("{items}?datetime=yesterday"), "datetime").await;
    bad(app, &format!("{items}?sactive=maybe"), "sactive").await;
    bad(app, &format!("{items}?filter-lang=cql2-text"), "filter").await;
}

/// CQL2 on a station collection selects exactly the stations the same condition selects
/// as a `where` on `/v2/flat/{type}`, in the same order.
#[tokio::test]
async fn cql2_filters_select_what_the_same_where_selects() {
    let app = shared_demo_app(ANCHOR);
    let items = "/ogc/collections/station-parkingstation/items?limit=10000";
    let flat_codes = |body: &Value| -> Vec<String> {
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["scode"].as_str().unwrap().to_string())
            .collect()
    };
    let all = ok(app, "/v2/flat/ParkingStation?limit=-1").await;
    let total = flat_codes(&all).len();
    let some: Vec<String> = flat_codes(&all).into_iter().step_by(3).take(4).collect();
    let quoted = |codes: &[String], q: &str| -> Vec<String> {
        codes.iter().map(|c| format!("{q}{c}{q}")).collect()
    };
    for (cql2, where_) in [
        (
            "sactive = TRUE AND scode LIKE '%1'".to_string(),
            "and(sactive.eq.true,scode.ire.^.*1$)".to_string(),
        ),
        (
            format!("scode IN ({})", quoted(&some, "'").join(",")),
            format!("scode.in.({})", quoted(&some, "\"").join(",")),
        ),
        (
            "NOT (scode LIKE '%1' AND sactive = TRUE) OR scode = 'none'".to_string(),
            "or(scode.nire.^.*1$,scode.eq.null,sactive.neq.true,sactive.eq.null,scode.eq.\"none\")"
                .to_string(),
        ),
        (
            "sorigin IS NOT NULL AND scode NOT LIKE '%2'".to_string(),
            "and(sorigin.neq.null,or(scode.nire.^.*2$,scode.eq.null))".to_string(),
        ),
    ] {
        let expected = flat_codes(
            &ok(
                app,
                &format!(
                    "/v2/flat/ParkingStation?limit=-1&where={}",
                    support::encode(&where_)
                ),
            )
            .await,
        );
        assert!(
            !expected.is_empty() && expected.len() < total,
            "{where_} selects a part"
        );
        let got = ok(app, &format!("{items}&filter={}", support::encode(&cql2))).await;
        assert_eq!(codes(&got), expected, "{cql2}");
    }
    // The areas of S_INTERSECTS are tested on the position, like bbox.
    let boxed = ok(app, &format!("{items}&bbox=11.3,46.4,11.4,46.55")).await;
    let intersecting = ok(
        app,
        &format!(
            "{items}&filter={}",
            support::encode("S_INTERSECTS(geometry, BBOX(11.3,46.4,11.4,46.55)) AND (sactive = TRUE OR sactive = FALSE)")
        ),
    )
    .await;
    assert!(!codes(&boxed).is_empty());
    assert_eq!(codes(&intersecting), codes(&boxed));

    // Mistakes name `filter` (and where it went wrong).
    let base = "/ogc/collections/station-parkingstation/items";
    for wrong in [
        "nosuchfield = 1",
        "scode =",
        "smetadata.a[0] = 1",
        "scode = 5",
    ] {
        bad(
            app,
            &format!("{base}?filter={}", support::encode(wrong)),
            "filter",
        )
        .await;
    }
}

/// Data types with a latest measurement per station, as `/v2/flat/{type}/*/latest` shows
/// them to the caller.
async fn latest_types(
    app: &TestApp,
    stype: &str,
    headers: &[(&str, &str)],
) -> BTreeMap<String, BTreeSet<String>> {
    let (status, _, body) =
        get_as(app, &format!("/v2/flat/{stype}/*/latest?limit=-1"), headers).await;
    assert_eq!(status, 200);
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for row in body["data"].as_array().unwrap() {
        out.entry(row["scode"].as_str().unwrap().to_string())
            .or_default()
            .insert(row["tname"].as_str().unwrap().to_string());
    }
    out
}

async fn ogc_latest_types(
    app: &TestApp,
    stype: &str,
    headers: &[(&str, &str)],
) -> BTreeMap<String, BTreeSet<String>> {
    let (status, _, body) = get_as(
        app,
        &format!(
            "/ogc/collections/station-{}/items?limit=10000",
            stype.to_lowercase()
        ),
        headers,
    )
    .await;
    assert_eq!(status, 200);
    body["features"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| {
            let latest = f["properties"]["latest"].as_object().unwrap();
            (!latest.is_empty()).then(|| {
                (
                    f["id"].as_str().unwrap().to_string(),
                    latest.keys().cloned().collect(),
                )
            })
        })
        .collect()
}

#[tokio::test]
async fn closed_measurements_are_shown_exactly_as_the_time_series_api_shows_them() {
    let app = shared_demo_app(ANCHOR);
    let token = password_token(app, "demo", "demo").await;
    let bearer = format!("Bearer {token}");
    let with_token = [("authorization", bearer.as_str())];
    let mut differs = false;
    for stype in ["MeteoStation", "TrafficSensor", "ParkingStation"] {
        let anonymous = latest_types(app, stype, &[]).await;
        let authorised = latest_types(app, stype, &with_token).await;
        assert_eq!(
            ogc_latest_types(app, stype, &[]).await,
            anonymous,
            "{stype}"
        );
        assert_eq!(
            ogc_latest_types(app, stype, &with_token).await,
            authorised,
            "{stype}"
        );
        differs |= anonymous != authorised;
    }
    assert!(
        differs,
        "the demo user sees closed series an anonymous caller does not"
    );
}

#[tokio::test]
async fn datetime_matches_the_latest_measurement_times() {
    let app = shared_demo_app(ANCHOR);
    let all = ok(
        app,
        "/ogc/collections/station-parkingstation/items?limit=10000",
    )
    .await;
    let with_values: Vec<&Value> = all["features"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["properties"]["latest"].as_object().unwrap().is_empty())
        .collect();
    assert!(!with_values.is_empty());
    // The latest time of the first station, as an RFC 3339 instant.
    let time = with_values[0]["properties"]["latest"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()["time"]
        .as_str()
        .unwrap()
        .to_string();
    let instant = format!("{}Z", &time[..19].replacen(' ', "T", 1));
    let at = ok(
        app,
        &format!("/ogc/collections/station-parkingstation/items?datetime={instant}&limit=10000"),
    )
    .await;
    assert!(codes(&at).contains(&with_values[0]["id"].as_str().unwrap().to_string()));
    let open = ok(
        app,
        "/ogc/collections/station-parkingstation/items?datetime=2000-01-01T00:00:00Z/..&limit=10000",
    )
    .await;
    assert_eq!(open["numberMatched"], with_values.len());
    let before = ok(
        app,
        "/ogc/collections/station-parkingstation/items?datetime=../2000-01-01T00:00:00Z",
    )
    .await;
    assert_eq!(before["numberMatched"], 0);
}

#[tokio::test]
async fn flat_time_series_answers_as_geojson() {
    let app = shared_demo_app(ANCHOR);
    for (uri, geometry) in [
        ("/v2/flat/ParkingStation?limit=5", "Point"),
        ("/v2/flat/MeteoStation/*/latest", "Point"),
        ("/v2/flat,edge/LinkStation?limit=3", "LineString"),
    ] {
        let json = ok(app, uri).await;
        let separator = if uri.contains('?') { '&' } else { '?' };
        for (geo_uri, headers) in [
            (format!("{uri}{separator}format=geojson"), vec![]),
            (uri.to_string(), vec![("accept", "application/geo+json")]),
        ] {
            let (status, content_type, body) = get_as(app, &geo_uri, &headers).await;
            assert_eq!(
                (status, content_type.as_str()),
                (200, "application/geo+json"),
                "{geo_uri}"
            );
            assert_eq!(body["type"], "FeatureCollection");
            let features = body["features"].as_array().unwrap();
            let rows = json["data"].as_array().unwrap();
            assert_eq!(features.len(), rows.len(), "{geo_uri}");
            assert!(!rows.is_empty());
            for (f, row) in features.iter().zip(rows) {
                assert_eq!(&f["properties"], row);
                assert_eq!(f["geometry"]["type"], geometry, "{geo_uri}");
            }
        }
    }
    // The first parking station's point is its scoordinate.
    let json = ok(app, "/v2/flat/ParkingStation?limit=1").await;
    let geo = ok(app, "/v2/flat/ParkingStation?limit=1&format=geojson").await;
    assert_eq!(
        geo["features"][0]["geometry"]["coordinates"][0],
        json["data"][0]["scoordinate"]["x"]
    );
    // JSON stays the default, also when asked for by name.
    let (_, content_type, _) = get_as(app, "/v2/flat/ParkingStation?format=json", &[]).await;
    assert!(content_type.starts_with("application/json"));
    // Not offered: trees and other routes; unknown formats.
    for uri in [
        "/v2/tree/ParkingStation?format=geojson",
        "/v2/flat/ParkingStation/*?format=geojson",
        "/v2/flat/ParkingStation?format=xml",
    ] {
        let (status, _, body) = get_as(app, uri, &[]).await;
        assert_eq!(status, 400, "{uri}");
        assert!(
            body["message"].as_str().unwrap().contains("'format'"),
            "{uri}: {body}"
        );
    }
    // The API description says so.
    let spec = ok(app, "/v2/apispec").await;
    let stations = &spec["paths"]["/v2/flat/{stationTypes}"]["get"];
    assert!(stations["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "format"));
    assert!(stations["responses"]["200"]["content"]["application/geo+json"].is_object());
    // A tree asked for GeoJSON by Accept only stays JSON.
    let (status, content_type, _) = get_as(
        app,
        "/v2/tree/ParkingStation",
        &[("accept", "application/geo+json")],
    )
    .await;
    assert_eq!(status, 200);
    assert!(content_type.starts_with("application/json"));
}
