//! Boxes in WGS 84 degrees (an OGC `bbox`, a `polygon` box, `bbi`/`bbc`) are tested by
//! the ranges of the stored longitude and latitude, not by a geometry (issue 18). A
//! client must see what the geometry test gives: a point on an edge or a corner is in
//! the box, and a point a hair outside is not, even where PostGIS's single-precision
//! bounding boxes cannot tell the two apart. Each box is compared with the same area
//! written as a ring with one more vertex, which takes the geometry test. Both backends.

use serde_json::{json, Value};

use super::support::{self, encode, get, TestApp};

/// The box the tests ask for: west, south, east, north.
const BOX: [f64; 4] = [11.3, 46.4, 11.5, 46.6];
/// Far below single precision at these coordinates (about 1e-6 degrees).
const HAIR: f64 = 1e-9;

/// Named positions (latitude, longitude) on, in and just outside [`BOX`].
fn positions() -> Vec<(&'static str, f64, f64)> {
    let [w, s, e, n] = BOX;
    vec![
        ("inside", 46.5, 11.4),
        ("south-west-corner", s, w),
        ("north-east-corner", n, e),
        ("west-edge", 46.5, w),
        ("east-edge", 46.5, e),
        ("south-edge", s, 11.4),
        ("north-edge", n, 11.4),
        ("past-west", 46.5, w - HAIR),
        ("past-east", 46.5, e + HAIR),
        ("past-south", s - HAIR, 11.4),
        ("past-north", n + HAIR, 11.4),
        ("past-corner", n + HAIR, e + HAIR),
        ("far", 47.0, 12.0),
    ]
}

fn app() -> TestApp {
    let docs: Vec<(&'static str, Value)> = positions()
        .into_iter()
        .map(|(id, latitude, longitude)| {
            let doc = json!({
                "Id": id,
                "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
                "Shortname": id,
                "Active": true,
                "GpsInfo": [{"Gpstype": "position", "Latitude": latitude, "Longitude": longitude}],
            });
            ("HubActivityPoi", doc)
        })
        .collect();
    support::app_with_documents(&docs, &support::test_config())
}

async fn sorted_ids(app: &TestApp, uri: &str, list: &str) -> Vec<String> {
    let (status, body) = get(app, uri).await;
    assert_eq!(status, 200, "{uri}: {body}");
    let mut ids: Vec<String> = body[list]
        .as_array()
        .unwrap_or_else(|| panic!("{uri}: no {list}: {body}"))
        .iter()
        .map(|d| {
            let id = if list == "features" {
                &d["id"]
            } else {
                &d["Id"]
            };
            id.as_str().unwrap().to_string()
        })
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn a_box_holds_the_points_on_its_edges_and_none_a_hair_outside() {
    let app = app();
    let [w, s, e, n] = BOX;
    let mut expected: Vec<String> = positions()
        .into_iter()
        .map(|(id, _, _)| id.to_string())
        .filter(|id| !id.starts_with("past-") && id != "far")
        .collect();
    expected.sort();

    let ring = format!("POLYGON(({w} {s},{e} {s},{e} {n},{w} {n},{w} {s}))");
    // The same area with a vertex in the middle of the south edge: not a box, so the
    // geometry test runs.
    let ring_of_six = format!("POLYGON(({w} {s},11.4 {s},{e} {s},{e} {n},{w} {n},{w} {s}))");
    let lists = [
        (
            format!("/ogc/collections/HubActivityPoi/items?bbox={w},{s},{e},{n}&limit=100"),
            "features",
        ),
        (
            format!(
                "/ogc/collections/HubActivityPoi/items?bbox={s},{w},{n},{e}&bbox-crs={}&limit=100",
                encode("http://www.opengis.net/def/crs/EPSG/0/4326")
            ),
            "features",
        ),
        (
            format!("/v1/HubActivityPoi?pagesize=100&polygon={}", encode(&ring)),
            "Items",
        ),
        (
            format!(
                "/v1/HubActivityPoi?pagesize=100&polygon={}",
                encode(&format!("bbi({w} {s}, {e} {n})"))
            ),
            "Items",
        ),
        (
            format!(
                "/v1/HubActivityPoi?pagesize=100&polygon={}",
                encode(&format!("bbc({w} {s}, {e} {s}, {e} {n}, {w} {n})"))
            ),
            "Items",
        ),
        (
            format!(
                "/v1/HubActivityPoi?pagesize=100&polygon={}",
                encode(&ring_of_six)
            ),
            "Items",
        ),
    ];
    for (uri, list) in &lists {
        assert_eq!(sorted_ids(&app, uri, list).await, expected, "{uri}");
    }
}
