//! Geography on list endpoints (radius, polygon in every form, locfilter, areafilter) and
//! the utility endpoints (GeoShapes, GeoConverter, Location, Find, Distinct, Source),
//! over a store of their own so the shared fixtures stay untouched.

use std::sync::OnceLock;

use axum::body::Body;
use axum::Router;
use http::Request;
use http_body_util::BodyExt;
use hub_store::Store;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::support::{self, item_ids};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

struct GeoApp {
    router: Router,
    _store: Store,
    _dir: tempfile::TempDir,
}

/// Places with known distances from Bolzano (46.4983 N, 11.3548 E): Merano ≈ 24 km,
/// Brixen ≈ 33 km, Trento ≈ 51 km (outside the province), Innsbruck ≈ 86 km.
fn place(id: &str, lat: f64, lon: f64, loc: Value, areas: &[&str]) -> (&'static str, Value) {
    let mut doc = json!({
        "Id": id, "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm"}, "Shortname": id, "Active": true,
        "Detail": {"de": {"Title": format!("Ort {id}")}, "en": {"Title": format!("Place {id}")}},
        "GpsInfo": [{"Gpstype": "position", "Latitude": lat, "Longitude": lon}],
        "LocationInfo": loc, "AreaIds": areas,
    });
    if lat.is_nan() {
        doc["GpsInfo"] = json!([]);
    }
    ("HubActivityPoi", doc)
}

fn loc(reg: &str, tvs: &str, mun: &str, fra: &str) -> Value {
    json!({"RegionInfo": {"Id": reg}, "TvInfo": {"Id": tvs}, "MunicipalityInfo": {"Id": mun}, "DistrictInfo": {"Id": fra}})
}

fn named(
    entity: &'static str,
    id: &str,
    de: &str,
    it: &str,
    extra: Value,
) -> (&'static str, Value) {
    let mut doc = json!({"Id": id, "_Meta": {"Id": id, "Source": "lts"}, "Shortname": de, "Active": true,
        "Detail": {"de": {"Title": de}, "it": {"Title": it}}});
    for (k, v) in extra.as_object().unwrap() {
        doc[k] = v.clone();
    }
    (entity, doc)
}

fn shape(id: &str, kind: &str, name: &str, geometry: Value) -> (&'static str, Value) {
    (
        "GeoShape",
        json!({"Id": id, "Self": format!("GeoShape/{id}"), "Name": name, "Source": "test", "Type": kind, "Country": "IT",
        "_Meta": {"Id": id, "Type": "geoshape", "Source": "test"}, "LicenseInfo": {"License": "CC0"}, "Mapping": {"istat": {"id": format!("{id}-istat")}},
        "Srid": "EPSG:4326", "Geometry": geometry}),
    )
}

fn square(lon: f64, lat: f64, half: f64) -> Value {
    json!({"type": "Polygon", "coordinates": [[[lon - half, lat - half], [lon + half, lat - half], [lon + half, lat + half], [lon - half, lat + half], [lon - half, lat - half]]]})
}

fn fixtures() -> Vec<(&'static str, Value)> {
    vec![
        place(
            "geo-bz",
            46.4983,
            11.3548,
            loc("R1", "T1", "M1", "D1"),
            &["A1"],
        ),
        place(
            "geo-me",
            46.6713,
            11.1594,
            loc("R2", "T2", "M2", "D2"),
            &["A2"],
        ),
        place(
            "geo-br",
            46.7150,
            11.6560,
            loc("R1", "T3", "M3", ""),
            &["A3"],
        ),
        place("geo-tn", 46.0667, 11.1167, json!({}), &[]),
        place("geo-inn", 47.2692, 11.4041, json!({}), &[]),
        place(
            "geo-none",
            f64::NAN,
            f64::NAN,
            loc("R1", "T1", "M1", "D1"),
            &["A1"],
        ),
        named("Region", "R1", "Eisacktal", "Valle Isarco", json!({})),
        named(
            "Region",
            "R2",
            "Burggrafenamt",
            "Burgraviato",
            json!({"VisibleInSearch": true}),
        ),
        named(
            "TourismAssociation",
            "T1",
            "Bozen",
            "Bolzano",
            json!({"RegionId": "R1"}),
        ),
        named(
            "Municipality",
            "M1",
            "Bozen",
            "Bolzano",
            json!({"RegionId": "R1", "TourismvereinId": "T1"}),
        ),
        named(
            "Municipality",
            "M2",
            "Meran",
            "Merano",
            json!({"Active": false}),
        ),
        named(
            "District",
            "D1",
            "Gries",
            "Gries",
            json!({"RegionId": "R1", "TourismvereinId": "T1", "MunicipalityId": "M1"}),
        ),
        named(
            "Area",
            "A1",
            "Area 1",
            "Area 1",
            json!({"RegionId": "R1", "TourismvereinId": "T1", "SkiAreaID": "S1"}),
        ),
        named(
            "Area",
            "A2",
            "Area 2",
            "Area 2",
            json!({"RegionId": "R2", "TourismvereinId": "T2"}),
        ),
        named(
            "Area",
            "A3",
            "Area 3",
            "Area 3",
            json!({"RegionId": "R1", "TourismvereinId": "T3"}),
        ),
        named(
            "SkiArea",
            "S1",
            "Skigebiet",
            "Area sciistica",
            json!({"SkiRegionId": "SR1", "AreaId": ["A1"]}),
        ),
        named(
            "Source",
            "lts",
            "LTS",
            "LTS",
            json!({"Types": ["accommodation", "event"]}),
        ),
        named(
            "Source",
            "idm",
            "IDM",
            "IDM",
            json!({"Types": ["odhactivitypoi", "event"]}),
        ),
        named(
            "Tag",
            "t-hike",
            "Wandern",
            "Escursioni",
            json!({"Types": ["activity", "summer"], "TagName": {"de": "Wandern"}}),
        ),
        named(
            "Tag",
            "t-ski",
            "Ski",
            "Sci",
            json!({"Types": ["winter", "activity"], "TagName": {"de": "Ski"}}),
        ),
        shape(
            "test_province",
            "province",
            "Provinz Test",
            json!({"type": "Polygon", "coordinates": [[[10.3, 46.2], [12.5, 46.2], [12.5, 47.1], [10.3, 47.1], [10.3, 46.2]]]}),
        ),
        shape(
            "test_merano",
            "municipality",
            "Meran/Merano",
            square(11.1594, 46.6713, 0.05),
        ),
    ]
}

fn app() -> &'static GeoApp {
    static APP: OnceLock<GeoApp> = OnceLock::new();
    APP.get_or_init(|| {
        let (store, dir) = support::backend();
        store
            .content()
            .put_batch_blocking(&fixtures(), &mut |_| {})
            .expect("loading fixtures");
        let mut config = support::test_config();
        // The converter tests fetch from an in-process server on 127.0.0.1.
        config.geoconverter.allow_private_addresses = true;
        config.geoconverter.max_bytes = 2 * 1024 * 1024;
        GeoApp {
            router: hub::router(store.clone(), &config),
            _store: store,
            _dir: dir,
        }
    })
}

async fn send(request: Request<Body>) -> (u16, String, Vec<u8>) {
    let response = app()
        .router
        .clone()
        .oneshot(request)
        .await
        .expect("the router answers");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (
        status,
        content_type,
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
}

async fn get(uri: &str) -> (u16, Value) {
    let (status, _, bytes) = send(Request::get(uri).body(Body::empty()).unwrap()).await;
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{uri}: not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
    (status, body)
}

async fn poi_ids(query: &str) -> Vec<String> {
    let uri = format!("/v1/HubActivityPoi?pagesize=50&{query}");
    let (status, body) = get(&uri).await;
    assert_eq!(status, 200, "{uri}: {body}");
    item_ids(&body)
}

async fn problem(uri: &str) -> Value {
    let (status, body) = get(uri).await;
    assert_eq!(status, 400, "{uri}: {body}");
    assert_eq!(body["status"], 400);
    body
}

fn enc(s: &str) -> String {
    support::encode(s)
}

#[tokio::test]
async fn radius_filters_and_orders_by_distance() {
    assert_eq!(
        poi_ids("latitude=46.4983&longitude=11.3548&radius=30000").await,
        ["geo-bz", "geo-me"]
    );
    assert_eq!(
        poi_ids("latitude=46.4983&longitude=11.3548&radius=40000").await,
        ["geo-bz", "geo-me", "geo-br"]
    );
    // Without radius: 150 km; nearest first, whatever the seed.
    assert_eq!(
        poi_ids("latitude=46.4983&longitude=11.3548").await,
        ["geo-bz", "geo-me", "geo-br", "geo-tn", "geo-inn"]
    );
    assert_eq!(
        poi_ids("latitude=46.4983&longitude=11.3548&seed=7").await,
        ["geo-bz", "geo-me", "geo-br", "geo-tn", "geo-inn"]
    );
    assert_eq!(
        poi_ids("latitude=47.2692&longitude=11.4041&radius=100000").await,
        ["geo-inn", "geo-br", "geo-me", "geo-bz"]
    );
    assert_eq!(
        poi_ids("latitude=0&longitude=0&radius=1000").await,
        Vec::<String>::new()
    );
    // Paging keeps the distance order.
    let (_, page2) =
        get("/v1/HubActivityPoi?latitude=46.4983&longitude=11.3548&pagesize=2&pagenumber=2").await;
    assert_eq!(item_ids(&page2), ["geo-br", "geo-tn"]);
    assert_eq!(page2["TotalResults"], 5);
}

#[tokio::test]
async fn polygon_in_every_wkt_form() {
    let cases: &[(&str, &[&str])] = &[
        ("POLYGON((11.0 46.4, 11.5 46.4, 11.5 46.8, 11.0 46.8, 11.0 46.4))", &["geo-bz", "geo-me"]),
        ("MULTIPOLYGON(((11.3 46.4,11.4 46.4,11.4 46.6,11.3 46.4)),((11.3 47.2,11.5 47.2,11.5 47.3,11.3 47.3,11.3 47.2)))", &["geo-bz", "geo-inn"]),
        ("POINT(11.656 46.715)", &["geo-br"]),
        ("POINT Z (11.656 46.715 560)", &["geo-br"]),
        ("MULTIPOINT((11.656 46.715),(11.1167 46.0667))", &["geo-br", "geo-tn"]),
        ("LINESTRING(11.1167 46.0, 11.1167 46.2)", &["geo-tn"]),
        ("MULTILINESTRING((11.1167 46.0, 11.1167 46.2),(11.0 46.6713, 11.3 46.6713))", &["geo-me", "geo-tn"]),
        ("GEOMETRYCOLLECTION(POINT(11.656 46.715), POLYGON((11.0 46.6,11.3 46.6,11.3 46.8,11.0 46.6)))", &["geo-br", "geo-me"]),
        ("polygon((0 0, 1 0, 1 1, 0 0))", &[]),
    ];
    for (wkt, expected) in cases {
        assert_eq!(
            poi_ids(&format!("polygon={}", enc(wkt))).await,
            *expected,
            "{wkt}"
        );
    }
}

#[tokio::test]
async fn polygon_boxes_and_srids() {
    assert_eq!(
        poi_ids(&format!("polygon={}", enc("bbi(11.0 46.4, 11.5 46.8)"))).await,
        ["geo-bz", "geo-me"]
    );
    assert_eq!(
        poi_ids(&format!(
            "polygon={}",
            enc("bbc(11.0 46.4, 11.5 46.4, 11.5 46.8, 11.0 46.8)")
        ))
        .await,
        ["geo-bz", "geo-me"]
    );
    assert_eq!(
        poi_ids(&format!(
            "polygon={}",
            enc("bbi(11.0 46.4, 11.5 46.8);SRID=4326")
        ))
        .await,
        ["geo-bz", "geo-me"]
    );
    // The same box in other systems, computed with the projection the server uses.
    let wgs84 =
        hub_geo::wkt::parse_wkt("POLYGON((11.0 46.4, 11.5 46.4, 11.5 46.8, 11.0 46.8, 11.0 46.4))")
            .unwrap();
    for srid in [
        hub_geo::Srid::WebMercator,
        hub_geo::Srid::Utm32N,
        hub_geo::Srid::Etrs89Utm32N,
    ] {
        let projected = hub_geo::srid::transform(&wgs84, hub_geo::Srid::Wgs84, srid).unwrap();
        let value = format!("{};SRID={}", hub_geo::wkt::to_wkt(&projected), srid.code());
        assert_eq!(
            poi_ids(&format!("polygon={}", enc(&value))).await,
            ["geo-bz", "geo-me"],
            "{value}"
        );
        let ewkt = format!("SRID={};{}", srid.code(), hub_geo::wkt::to_wkt(&projected));
        assert_eq!(
            poi_ids(&format!("polygon={}", enc(&ewkt))).await,
            ["geo-bz", "geo-me"],
            "{ewkt}"
        );
    }
    // Hand-checked UTM 32N box (metres) around Bolzano only: 680–684 km E, 5149–5154 km N.
    let utm = "POLYGON((680000 5149000,684000 5149000,684000 5154000,680000 5154000,680000 5149000));SRID=32632";
    assert_eq!(poi_ids(&format!("polygon={}", enc(utm))).await, ["geo-bz"]);
}

#[tokio::test]
async fn polygon_names_geoshapes() {
    assert_eq!(
        poi_ids("polygon=test_province").await,
        ["geo-br", "geo-bz", "geo-me"]
    );
    assert_eq!(poi_ids("polygon=TEST_MERANO").await, ["geo-me"]);
    assert_eq!(
        poi_ids(&format!("polygon={}", enc("it.municipality.Meran/Merano"))).await,
        ["geo-me"]
    );
    assert_eq!(
        poi_ids("polygon=IT.Province.test_province").await,
        ["geo-br", "geo-bz", "geo-me"]
    );
    assert_eq!(
        poi_ids("polygon=it.municipality.test_merano-istat").await,
        ["geo-me"]
    );
    // Combined with a radius: both apply, distance order.
    assert_eq!(
        poi_ids("polygon=test_province&latitude=46.7&longitude=11.6&radius=100000").await,
        ["geo-br", "geo-bz", "geo-me"]
    );
}

#[tokio::test]
async fn bad_geography_is_a_400_naming_parameter_and_position() {
    let cases: &[(&str, &str, Option<u64>, &str)] = &[
        (
            "polygon=POLYGON((11 46, 12 46, 12 47, 11 46)",
            "polygon",
            Some(37),
            "expected ',' or ')'",
        ),
        (
            "polygon=POLYGON((11 46, 12 x, 12 47, 11 46))",
            "polygon",
            Some(20),
            "expected a number",
        ),
        (
            "polygon=POLYGON((11 46, 12 46, 12 47, 11 47))",
            "polygon",
            Some(9),
            "end where it starts",
        ),
        (
            "polygon=CIRCLE(11 46, 5)",
            "polygon",
            Some(1),
            "not a WKT geometry type",
        ),
        ("polygon=bbi(11 46, 12)", "polygon", Some(12), "lon lat"),
        (
            "polygon=POINT(46.5 200)",
            "polygon",
            Some(1),
            "outside longitude",
        ),
        (
            "polygon=POINT(1 2);SRID=2056",
            "polygon",
            Some(17),
            "not supported",
        ),
        (
            "polygon=nowhere_shape",
            "polygon",
            None,
            "no GeoShape with id 'nowhere_shape'",
        ),
        (
            "polygon=IT.region.Atlantis",
            "polygon",
            None,
            "type 'region' and id or name 'Atlantis'",
        ),
        ("latitude=46.5", "longitude", None, "needs longitude"),
        ("longitude=11", "latitude", None, "needs latitude"),
        ("latitude=95&longitude=11", "latitude", None, "-90 to 90"),
        ("latitude=46&longitude=x", "longitude", None, "-180 to 180"),
        (
            "latitude=46&longitude=11&radius=-1",
            "radius",
            None,
            "metres",
        ),
        ("radius=100", "radius", None, "needs latitude and longitude"),
        (
            "locfilter=regR1,xxx9",
            "locfilter",
            Some(7),
            "reg, tvs, mun, fra",
        ),
        (
            "areafilter=mun1",
            "areafilter",
            Some(1),
            "reg, tvs, skr, ska, are",
        ),
    ];
    for (query, parameter, position, phrase) in cases {
        let body = problem(&format!("/v1/HubActivityPoi?{}", query.replace(' ', "%20"))).await;
        assert_eq!(body["parameter"], *parameter, "{query}: {body}");
        assert_eq!(body["position"].as_u64(), *position, "{query}: {body}");
        assert!(
            body["detail"].as_str().unwrap().contains(phrase),
            "{query}: {body}"
        );
    }
}

#[tokio::test]
async fn locfilter_matches_location_ids_with_or() {
    assert_eq!(
        poi_ids("locfilter=regR1").await,
        ["geo-br", "geo-bz", "geo-none"]
    );
    assert_eq!(
        poi_ids("locfilter=munm2,FRAD1").await,
        ["geo-bz", "geo-me", "geo-none"]
    );
    assert_eq!(poi_ids("locfilter=tvsT3").await, ["geo-br"]);
    assert_eq!(poi_ids("locfilter=regNOPE").await, Vec::<String>::new());
    assert_eq!(
        poi_ids("locfilter=regR1&latitude=46.4983&longitude=11.3548").await,
        ["geo-bz", "geo-br"]
    );
}

#[tokio::test]
async fn areafilter_resolves_areas() {
    assert_eq!(poi_ids("areafilter=areA2").await, ["geo-me"]);
    assert_eq!(
        poi_ids("areafilter=regR1").await,
        ["geo-br", "geo-bz", "geo-none"]
    );
    assert_eq!(poi_ids("areafilter=tvsT3").await, ["geo-br"]);
    assert_eq!(poi_ids("areafilter=skaS1").await, ["geo-bz", "geo-none"]);
    assert_eq!(
        poi_ids("areafilter=skrSR1,areA2").await,
        ["geo-bz", "geo-me", "geo-none"]
    );
    // A region without areas selects nothing (the reference dropped the filter instead).
    assert_eq!(poi_ids("areafilter=regNOPE").await, Vec::<String>::new());
}

// The utility endpoints, in a file of their own to keep both readable.
#[path = "geo_utility_endpoints.rs"]
mod endpoints;
