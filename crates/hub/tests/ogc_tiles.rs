//! Vector tiles of the OGC collections (`/ogc/collections/{id}/tiles/WebMercatorQuad/
//! {z}/{x}/{y}`), driven through the real router over the demo (SQLite, or PostgreSQL
//! with `HUB_TEST_DATABASE`). Each tile is decoded here and compared with what the items
//! endpoint answers the same caller for the tile's box, so what a map draws and what a
//! feature list holds are checked to be the same documents.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use geozero::mvt::{Message, Tile};
use serde_json::Value;
use support::{body_bytes, demo_app, get, password_token, request_with, shared_demo_app, TestApp};

const ANCHOR: &str = "2025-06-15T12:00:00Z";
const EXTENT: i64 = 4096;
const BUFFER: i64 = 64;

/// One decoded point: its string properties and its position in tile units.
#[derive(Debug)]
struct Point {
    properties: BTreeMap<String, String>,
    at: (i64, i64),
}

/// GET a tile as `headers` say; the status, the response's content type and its points
/// (all in one layer named `layer`).
async fn tile_as(
    app: &TestApp,
    uri: &str,
    headers: &[(&str, &str)],
    layer: &str,
) -> (u16, String, Vec<Point>) {
    let response = request_with(app, uri, headers).await;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = body_bytes(response).await;
    if status != 200 {
        return (status, content_type, Vec::new());
    }
    let tile = Tile::decode(&bytes[..]).unwrap_or_else(|e| panic!("{uri}: not an MVT: {e}"));
    assert_eq!(tile.layers.len(), 1, "{uri}: one layer");
    let l = &tile.layers[0];
    assert_eq!(
        (l.name.as_str(), l.extent, l.version),
        (layer, Some(4096), 2)
    );
    let points = l
        .features
        .iter()
        .map(|f| {
            assert_eq!(f.r#type, Some(1), "{uri}: a point");
            // One MoveTo with one point (command 1, count 1), then zigzag x and y.
            assert_eq!(f.geometry.len(), 3);
            assert_eq!(f.geometry[0], 9);
            let unzig = |v: u32| i64::from(((v >> 1) as i32) ^ -((v & 1) as i32));
            let properties = f
                .tags
                .chunks(2)
                .map(|kv| {
                    let key = l.keys[kv[0] as usize].clone();
                    let value = l.values[kv[1] as usize].string_value.clone().unwrap();
                    (key, value)
                })
                .collect();
            Point {
                properties,
                at: (unzig(f.geometry[1]), unzig(f.geometry[2])),
            }
        })
        .collect();
    (status, content_type, points)
}

async fn tile(app: &TestApp, uri: &str, layer: &str) -> Vec<Point> {
    let (status, content_type, points) = tile_as(app, uri, &[], layer).await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, "application/vnd.mapbox-vector-tile"),
        "{uri}"
    );
    points
}

/// The WGS 84 box `[west, south, east, north]` of tile z/x/y widened by `buffer` tile
/// units (out of 4096), computed here from the Web Mercator formulas.
fn tile_bbox(z: u32, x: u32, y: u32, buffer: i64) -> [f64; 4] {
    let n = f64::from(1u32 << z);
    let b = buffer as f64 / EXTENT as f64;
    let lon = |col: f64| (col / n * 360.0 - 180.0).clamp(-180.0, 180.0);
    let lat = |row: f64| {
        (std::f64::consts::PI * (1.0 - 2.0 * row / n))
            .sinh()
            .atan()
            .to_degrees()
    };
    let (x, y) = (f64::from(x), f64::from(y));
    [lon(x - b), lat(y + 1.0 + b), lon(x + 1.0 + b), lat(y - b)]
}

/// The tile of zoom `z` holding a position.
fn tile_of(z: u32, lon: f64, lat: f64) -> (u32, u32) {
    let n = f64::from(1u32 << z);
    let lat = lat.to_radians();
    let x = (lon + 180.0) / 360.0 * n;
    let y = (1.0 - (lat.tan() + 1.0 / lat.cos()).ln() / std::f64::consts::PI) / 2.0 * n;
    (x as u32, y as u32)
}

/// The located features `items` answers `headers` for `query` (one page of 10,000).
async fn located_features(
    app: &TestApp,
    collection: &str,
    query: &str,
    headers: &[(&str, &str)],
) -> Vec<Value> {
    let uri = format!("/ogc/collections/{collection}/items?limit=10000&{query}");
    let response = request_with(app, &uri, headers).await;
    assert_eq!(response.status(), 200, "{uri}");
    let body: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    assert!(body["numberMatched"].as_u64().unwrap() <= 10_000, "{uri}");
    body["features"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["geometry"].is_null())
        .cloned()
        .collect()
}

/// The ids of the located features `items` answers for `query`.
async fn located_ids(
    app: &TestApp,
    collection: &str,
    query: &str,
    headers: &[(&str, &str)],
) -> BTreeSet<String> {
    located_features(app, collection, query, headers)
        .await
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn bbox_query([w, s, e, n]: [f64; 4]) -> String {
    format!("bbox={w},{s},{e},{n}")
}

fn property_set(points: &[Point], key: &str) -> BTreeSet<String> {
    points.iter().map(|p| p.properties[key].clone()).collect()
}

#[tokio::test]
async fn content_tiles_hold_the_located_documents_of_their_box() {
    let app = demo_app(ANCHOR).await;

    // z=0: every located POI (the demo has far fewer than the 20,000 cap).
    let world = tile(
        &app,
        "/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad/0/0/0",
        "hubactivitypoi",
    )
    .await;
    let located = located_ids(&app, "hubactivitypoi", "", &[]).await;
    assert!(located.len() > 100, "{}", located.len());
    assert_eq!(world.len(), located.len());
    assert_eq!(property_set(&world, "Id"), located);
    assert!(world
        .iter()
        .all(|p| p.properties.contains_key("Shortname") && p.properties.len() == 2));

    // z=12 around Bolzano: exactly the documents of the buffered box, the ones of the
    // unbuffered box drawn inside the tile, the rest in the buffer.
    let (x, y) = tile_of(12, 11.35, 46.5);
    let uri = format!("/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad/12/{x}/{y}");
    let bolzano = tile(&app, &uri, "hubactivitypoi").await;
    let buffered = located_ids(
        &app,
        "hubactivitypoi",
        &bbox_query(tile_bbox(12, x, y, BUFFER)),
        &[],
    )
    .await;
    assert!(!bolzano.is_empty(), "demo POIs around Bolzano");
    assert_eq!(property_set(&bolzano, "Id"), buffered);
    let inner = located_ids(
        &app,
        "hubactivitypoi",
        &bbox_query(tile_bbox(12, x, y, 0)),
        &[],
    )
    .await;
    for p in &bolzano {
        let (px, py) = p.at;
        assert!((-BUFFER..=EXTENT + BUFFER).contains(&px), "{p:?}");
        assert!((-BUFFER..=EXTENT + BUFFER).contains(&py), "{p:?}");
        let inside = (0..=EXTENT).contains(&px) && (0..=EXTENT).contains(&py);
        // A point on the unbuffered box's edge may round either way.
        let edge = [px, py]
            .iter()
            .any(|v| v.abs() <= 1 || (v - EXTENT).abs() <= 1);
        if !edge {
            assert_eq!(inside, inner.contains(&p.properties["Id"]), "{p:?}");
        }
    }

    // A tile with nothing in it is an empty layer (200), not an error.
    let empty = tile(
        &app,
        "/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad/5/0/0",
        "hubactivitypoi",
    )
    .await;
    assert!(empty.is_empty());

    // Closed data: accommodations are drawn for an anonymous caller from the reduced
    // documents the items endpoint lists them, the same ones.
    let acco = tile(
        &app,
        "/ogc/collections/accommodation/tiles/WebMercatorQuad/0/0/0",
        "accommodation",
    )
    .await;
    assert_eq!(
        property_set(&acco, "Id"),
        located_ids(&app, "accommodation", "", &[]).await
    );

    // Rooms' positions are closed data: a tile of rooms needs the reading role, and
    // then holds every located room of its box.
    let content = app.store.content();
    for n in 0..3 {
        let room = serde_json::json!({
            "Id": format!("room-tile-{n}"),
            "Shortname": format!("Zimmer {n}"),
            "A0RID": "acco-1",
            "GpsInfo": [{"Gpstype": "position", "Latitude": 46.5 + f64::from(n) * 0.001, "Longitude": 11.35}],
        });
        content
            .put(
                "AccommodationRoom",
                room,
                "2025-06-15T12:00:00Z".into(),
                false,
            )
            .await
            .unwrap();
    }
    let uri = "/ogc/collections/accommodationroom/tiles/WebMercatorQuad/0/0/0";
    let (status, _, points) = tile_as(&app, uri, &[], "accommodationroom").await;
    assert_eq!(
        (status, points.len()),
        (400, 0),
        "positions of rooms are closed"
    );
    let bearer = format!("Bearer {}", password_token(&app, "demo", "demo").await);
    let (status, _, points) = tile_as(
        &app,
        uri,
        &[("authorization", &bearer)],
        "accommodationroom",
    )
    .await;
    assert_eq!(status, 200);
    let points = names(&points);
    for n in 0..3 {
        assert_eq!(
            points.get(&format!("room-tile-{n}")).map(String::as_str),
            Some(format!("Zimmer {n}").as_str())
        );
    }
}

/// The `Shortname` of each located feature `items` answers for `query`, by id.
async fn located_names(app: &TestApp, collection: &str, query: &str) -> BTreeMap<String, String> {
    located_features(app, collection, query, &[])
        .await
        .iter()
        .map(|f| {
            let name = f["properties"]["Shortname"].as_str().unwrap_or_default();
            (f["id"].as_str().unwrap().to_string(), name.to_string())
        })
        .collect()
}

/// A tile's points as `Id` → `Shortname` (empty when the point has none).
fn names(points: &[Point]) -> BTreeMap<String, String> {
    points
        .iter()
        .map(|p| {
            let name = p.properties.get("Shortname").cloned().unwrap_or_default();
            (p.properties["Id"].clone(), name)
        })
        .collect()
}

/// A point's `Shortname` and place come from the stored row, not a parse of the
/// document: they must be the document's, and follow every write at once.
#[tokio::test]
async fn content_tile_points_carry_the_documents_names_and_follow_writes() {
    let app = demo_app(ANCHOR).await;
    let (x, y) = tile_of(12, 11.35, 46.5);
    let bolzano = format!("/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad/12/{x}/{y}");
    let points = tile(&app, &bolzano, "hubactivitypoi").await;
    let box_query = bbox_query(tile_bbox(12, x, y, BUFFER));
    assert_eq!(
        names(&points),
        located_names(&app, "hubactivitypoi", &box_query).await
    );

    // One of them renamed (a name JSON escapes) and moved far away, another left
    // without a name: the tile shows both at once, the moved one in its new tile.
    let moved = points[0].properties["Id"].clone();
    let unnamed = points[1].properties["Id"].clone();
    let content = app.store.content();
    let now = || "2025-06-15T12:00:00Z".to_string();
    let stored = |id: &str| {
        let content = content.clone();
        let id = id.to_string();
        async move {
            let text = content.get("HubActivityPoi", &id).await.unwrap().unwrap();
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let mut doc = stored(&moved).await;
    doc["Shortname"] = Value::from("Neue \"Hütte\" ü");
    doc["GpsInfo"] = serde_json::json!([{"Gpstype": "position", "Default": true, "Latitude": 46.9, "Longitude": 10.6}]);
    content
        .put("HubActivityPoi", doc, now(), false)
        .await
        .unwrap();
    let mut doc = stored(&unnamed).await;
    doc.as_object_mut().unwrap().remove("Shortname");
    content
        .put("HubActivityPoi", doc, now(), false)
        .await
        .unwrap();

    let after = names(&tile(&app, &bolzano, "hubactivitypoi").await);
    assert!(!after.contains_key(&moved), "{moved} left the tile");
    assert_eq!(after.get(&unnamed).map(String::as_str), Some(""));
    assert_eq!(
        after,
        located_names(&app, "hubactivitypoi", &box_query).await
    );
    let (mx, my) = tile_of(12, 10.6, 46.9);
    let there = format!("/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad/12/{mx}/{my}");
    let there_names = names(&tile(&app, &there, "hubactivitypoi").await);
    assert_eq!(
        there_names.get(&moved).map(String::as_str),
        Some("Neue \"Hütte\" ü")
    );

    // Deleted: gone from the tile.
    assert!(content.delete("HubActivityPoi", &moved).await.unwrap());
    let there_names = names(&tile(&app, &there, "hubactivitypoi").await);
    assert!(!there_names.contains_key(&moved));
}

/// A tile holds at most 20,000 points: the first ones in the Content API's default
/// order (by `Shortname`), and says so.
#[tokio::test]
async fn a_full_tile_holds_the_first_points_in_order_and_says_it_is_capped() {
    const CAP: usize = 20_000;
    // Names run against the ids, so the order by name is not the order of the ids.
    let docs: Vec<(&'static str, Value)> = (0..CAP + 3)
        .map(|n| {
            let doc = serde_json::json!({
                "Id": format!("cap-{:05}", CAP + 2 - n),
                "Shortname": format!("P{n:05}"),
                "GpsInfo": [{"Gpstype": "position", "Latitude": 46.0 + (n % 100) as f64 * 0.001, "Longitude": 11.0 + (n / 100) as f64 * 0.001}],
            });
            ("HubActivityPoi", doc)
        })
        .collect();
    let app = support::app_with_documents(&docs, &support::test_config());
    let uri = "/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad/0/0/0";
    let response = request_with(&app, uri, &[]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["hub-tile-capped"], "20000");
    let (_, _, points) = tile_as(&app, uri, &[], "hubactivitypoi").await;
    let held: BTreeSet<String> = property_set(&points, "Shortname");
    let first: BTreeSet<String> = (0..CAP).map(|n| format!("P{n:05}")).collect();
    assert_eq!(held, first);

    // Down to 20,000 documents: the tile holds them all, uncapped.
    for id in ["cap-00000", "cap-00001", "cap-00002"] {
        assert!(app
            .store
            .content()
            .delete("HubActivityPoi", id)
            .await
            .unwrap());
    }
    let response = request_with(&app, uri, &[]).await;
    assert!(response.headers().get("hub-tile-capped").is_none());
    let (_, _, points) = tile_as(&app, uri, &[], "hubactivitypoi").await;
    assert_eq!(property_set(&points, "Shortname"), first);
}

#[tokio::test]
async fn station_tiles_hold_the_stations_the_caller_may_see() {
    let app = shared_demo_app(ANCHOR);
    let token = password_token(app, "demo", "demo").await;
    let bearer = format!("Bearer {token}");
    let (_, types) = get(app, "/v2/flat").await;
    let types: Vec<String> = types
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_lowercase())
        .collect();
    assert!(types.contains(&"parkingstation".to_string()));
    let mut differ = false;
    for stype in &types {
        let collection = format!("station-{stype}");
        let uri = format!("/ogc/collections/{collection}/tiles/WebMercatorQuad/0/0/0");
        let anonymous = tile(app, &uri, &collection).await;
        assert_eq!(
            property_set(&anonymous, "scode"),
            located_ids(app, &collection, "", &[]).await,
            "{uri}"
        );
        let (status, _, signed_in) =
            tile_as(app, &uri, &[("authorization", &bearer)], &collection).await;
        assert_eq!(status, 200);
        let visible = located_ids(app, &collection, "", &[("authorization", &bearer)]).await;
        assert_eq!(property_set(&signed_in, "scode"), visible, "{uri}");
        differ |= anonymous.len() != signed_in.len();
        assert!(anonymous
            .iter()
            .all(|p| p.properties.keys().all(|k| k == "scode" || k == "sname")));
    }
    println!("closed stations change a tile: {differ}");

    // A z=14 tile around one parking station holds it, and exactly its box's stations.
    let (_, items) = get(app, "/ogc/collections/station-parkingstation/items?limit=1").await;
    let first = &items["features"][0];
    let code = first["id"].as_str().unwrap();
    let [lon, lat] = [0, 1].map(|i| first["geometry"]["coordinates"][i].as_f64().unwrap());
    let (x, y) = tile_of(14, lon, lat);
    let near = tile(
        app,
        &format!("/ogc/collections/station-parkingstation/tiles/WebMercatorQuad/14/{x}/{y}"),
        "station-parkingstation",
    )
    .await;
    let codes = property_set(&near, "scode");
    assert!(codes.contains(code), "{code} in {codes:?}");
    assert_eq!(
        codes,
        located_ids(
            app,
            "station-parkingstation",
            &bbox_query(tile_bbox(14, x, y, BUFFER)),
            &[]
        )
        .await
    );
}

#[tokio::test]
async fn tile_addresses_are_checked_and_tilesets_described() {
    let app = shared_demo_app(ANCHOR);
    let base = "/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad";
    for (path, parameter) in [
        ("23/0/0", "tileMatrix"),
        ("-1/0/0", "tileMatrix"),
        ("z/0/0", "tileMatrix"),
        ("0/1/0", "tileCol"),
        ("3/8/0", "tileCol"),
        ("3/0/8", "tileRow"),
        ("1/0/-1", "tileRow"),
        ("22/4194304/0", "tileCol"),
    ] {
        let (status, problem) = get(app, &format!("{base}/{path}")).await;
        assert_eq!(
            (status, problem["parameter"].as_str()),
            (400, Some(parameter)),
            "{path}: {problem}"
        );
    }
    let response = request_with(app, &format!("{base}/22/4194303/0"), &[]).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["cache-control"]
        .to_str()
        .unwrap()
        .contains("max-age"));
    for uri in [
        "/ogc/collections/nothing/tiles/WebMercatorQuad/0/0/0",
        "/ogc/collections/station-nothing/tiles/WebMercatorQuad/0/0/0",
        "/ogc/collections/hubactivitypoi/tiles/WorldCRS84Quad/0/0/0",
        "/ogc/collections/nothing/tiles",
        "/ogc/tileMatrixSets/WorldCRS84Quad",
    ] {
        let (status, problem) = get(app, uri).await;
        assert_eq!(status, 404, "{uri}: {problem}");
    }

    let (status, list) = get(app, "/ogc/collections/HubActivityPoi/tiles").await;
    assert_eq!(status, 200);
    let tilesets = list["tilesets"].as_array().unwrap();
    assert_eq!(tilesets.len(), 1);
    assert_eq!(tilesets[0]["dataType"], "vector");
    let item = tilesets[0]["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["rel"] == "item")
        .unwrap();
    assert_eq!(item["templated"], true);
    assert!(item["href"].as_str().unwrap().ends_with(
        "/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad/{tileMatrix}/{tileCol}/{tileRow}"
    ));
    let (status, one) = get(
        app,
        "/ogc/collections/station-parkingstation/tiles/WebMercatorQuad",
    )
    .await;
    assert_eq!((status, &one["dataType"]), (200, &Value::from("vector")));
    let (status, tms) = get(app, "/ogc/tileMatrixSets/WebMercatorQuad").await;
    assert_eq!(status, 200);
    let matrices = tms["tileMatrices"].as_array().unwrap();
    assert_eq!(matrices.len(), 23);
    assert_eq!(matrices[12]["matrixWidth"], 4096);
    let (_, api) = get(app, "/ogc/api").await;
    let op = &api["paths"]
        ["/collections/{collectionId}/tiles/{tileMatrixSetId}/{tileMatrix}/{tileCol}/{tileRow}"]
        ["get"];
    assert_eq!(op["parameters"][2]["name"], "tileMatrix");
    assert_eq!(op["parameters"][2]["schema"]["maximum"], 22);
    assert!(op["responses"]["200"]["content"]["application/vnd.mapbox-vector-tile"].is_object());
    assert!(api["paths"]["/tileMatrixSets/{tileMatrixSetId}"]["get"].is_object());
    let (_, collection) = get(app, "/ogc/collections/hubactivitypoi").await;
    assert!(collection["links"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["rel"] == "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector"));
}
