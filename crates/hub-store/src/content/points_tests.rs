//! Map points on both backends (PostgreSQL when `HUB_TEST_DATABASE` is set): a box that
//! holds many of the entity's documents is walked along the order's index, and what the
//! walk finds is always the first located matches in the order, as the points statement
//! over the matches finds them: where the matches are spread out the walk answers, where
//! they come late in the order it gives up and the matches are read. Totals kept before
//! a write choose the statement after it, and the answer never depends on them.

use hub_geo::Srid;
use hub_query::content::geo::GeoArea;
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page, Total};
use hub_query::Dialect;
use serde_json::{json, Value};

use crate::content::MapPoint;
use crate::Store;

/// POIs `P0000` … `P2999` by name (their ids in another order). From `P2000` on they
/// lie in the late box; before that, every second one lies in the spread box, the
/// others in neither.
const DOCUMENTS: usize = 3_000;

fn latitude(n: usize) -> f64 {
    if n >= 2_000 {
        45.05
    } else if n.is_multiple_of(2) {
        46.05
    } else {
        47.05
    }
}

fn poi(n: usize) -> (&'static str, Value) {
    // 7,919 is prime: the ids are the numbers below 3,000 in another order.
    let id = format!("pt-{:04}", n * 7_919 % DOCUMENTS);
    let doc = json!({
        "Id": id, "Shortname": format!("P{n:04}"), "Active": true,
        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
        "GpsInfo": [{"Gpstype": "position", "Latitude": latitude(n), "Longitude": 11.0 + n as f64 * 1e-4}],
    });
    ("HubActivityPoi", doc)
}

/// The POIs in the box of latitudes from `south` to `south + 0.1` (and longitudes 10–12).
fn in_box(south: f64) -> ContentQuery {
    let wkt = format!(
        "POLYGON((10 {south},12 {south},12 {north},10 {north},10 {south}))",
        north = south + 0.1
    );
    let polygon = hub_geo::wkt::parse_wkt(&wkt).unwrap();
    ContentQuery {
        entity: "HubActivityPoi",
        filters: vec![ContentFilter::Area(GeoArea {
            relation: hub_geo::relate::Relation::Intersects,
            geometry: polygon.clone(),
            original: polygon,
            srid: Srid::Wgs84,
        })],
        order: ContentOrder::Default,
        page: Page {
            size: 10,
            number: 1,
        },
        count_limit: None,
    }
}

async fn points(store: &Store, south: f64, limit: u64) -> Vec<MapPoint> {
    store.content().points(in_box(south), limit).await.unwrap()
}

fn names(points: &[MapPoint]) -> Vec<String> {
    points
        .iter()
        .map(|p| p.shortname.clone().unwrap_or_default())
        .collect()
}

fn expected(range: impl Iterator<Item = usize>) -> Vec<String> {
    range.map(|n| format!("P{n:04}")).collect()
}

#[tokio::test]
async fn the_points_of_a_dense_box_are_its_first_located_matches_in_order_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(dir.path()).unwrap();
    dense_boxes(&store).await;
    // The walk reads the index of the order with the points, not the rows.
    let walk = in_box(46.0).compile(Dialect::Sqlite).walk.unwrap();
    let walked = walk.points(Total::exact(1_000), 3_000, 100).unwrap();
    let plan = crate::sqlite::statement_plan(&store, &walked.statement).await;
    assert!(
        plan.contains("USING COVERING INDEX content_order_points") && !plan.contains("TEMP B-TREE"),
        "{plan}"
    );
}

#[test]
fn the_points_of_a_dense_box_are_its_first_located_matches_in_order_on_postgres() {
    let Some((store, database)) = crate::postgres::test_server::store("points") else {
        return;
    };
    futures::executor::block_on(dense_boxes(&store));
    drop(store);
    drop(database);
}

/// Writes POIs `numbers` again at `latitude`.
fn move_to(store: &Store, numbers: impl Iterator<Item = usize>, latitude: f64) {
    let moved: Vec<(&'static str, Value)> = numbers
        .map(|n| {
            let (entity, mut doc) = poi(n);
            doc["GpsInfo"][0]["Latitude"] = json!(latitude);
            (entity, doc)
        })
        .collect();
    store
        .content()
        .put_batch_blocking(&moved, &mut |_| {})
        .unwrap();
}

async fn dense_boxes(store: &Store) {
    let docs: Vec<(&'static str, Value)> = (0..DOCUMENTS).map(poi).collect();
    store
        .content()
        .put_batch_blocking(&docs, &mut |_| {})
        .unwrap();

    // Spread out: 1,000 matches among 3,000; the walk passes about 300 documents for
    // 100 points and answers.
    let spread = points(store, 46.0, 100).await;
    assert_eq!(names(&spread), expected((0..2_000).step_by(2).take(100)));
    let first = &spread[0];
    assert_eq!(first.id, "pt-0000");
    assert_eq!(spread[1].id, format!("pt-{:04}", 2 * 7_919 % DOCUMENTS));
    assert_eq!((first.latitude, first.longitude), (46.05, 11.0));

    // Late: the 1,000 matches follow 2,000 others, beyond the prefix the walk looks at;
    // the matches are read and sorted instead.
    assert_eq!(
        names(&points(store, 45.0, 100).await),
        expected(2_000..2_100)
    );

    // As many as there are matches, or more: every match, in order.
    assert_eq!(
        names(&points(store, 45.0, 1_000).await),
        expected(2_000..3_000)
    );
    assert_eq!(
        names(&points(store, 46.0, 5_000).await),
        expected((0..2_000).step_by(2))
    );

    // The walk follows writes: a renamed POI takes its new place.
    let (_, mut renamed) = poi(2);
    renamed["Shortname"] = json!("A first");
    store
        .content()
        .put_batch_blocking(&[("HubActivityPoi", renamed)], &mut |_| {})
        .unwrap();
    let after = names(&points(store, 46.0, 100).await);
    assert_eq!(after[..2], ["A first".to_string(), "P0000".to_string()]);
    assert_eq!(after[2..], expected((4..2_000).step_by(2).take(98))[..]);

    // The totals kept before a write still pick the walk after it. When the write has
    // moved most matches away (all but the last 100 of the spread box), the walk finds
    // none in its prefix, and the matches are read.
    move_to(store, (0..1_800).step_by(2), 47.05);
    assert_eq!(
        names(&points(store, 46.0, 100).await),
        expected((1_800..2_000).step_by(2))
    );

    // A box whose kept total is below the limit is read without counting it again. When
    // writes have carried it past the limit since (the late box's 1,000 matches and 900
    // moved in, every odd POI before 1,800, all named before them), the read still
    // holds the first points up to the limit, and so does the next.
    assert_eq!(
        names(&points(store, 45.0, 1_500).await),
        expected(2_000..3_000)
    );
    move_to(store, (1..1_800).step_by(2), 45.05);
    let grown: Vec<String> = (1..1_800)
        .step_by(2)
        .chain(2_000..2_600)
        .map(|n| format!("P{n:04}"))
        .collect();
    assert_eq!(names(&points(store, 45.0, 1_500).await), grown);
    assert_eq!(names(&points(store, 45.0, 1_500).await), grown);
    assert_eq!(
        names(&points(store, 45.0, 2_000).await),
        (1..1_800)
            .step_by(2)
            .chain(2_000..3_000)
            .map(|n| format!("P{n:04}"))
            .collect::<Vec<_>>()
    );
}
