//! A geographic filter (radius, polygon) finds, counts and orders its matches from the
//! position index alone: only the page's own documents are read from `content`. At
//! ODH's size a match looked up in `content` for its keys is a random read of a row of
//! kilobytes (SQLite migration 11).

use hub_geo::relate::Relation;
use hub_geo::wkt::parse_wkt;
use hub_query::content::geo::{GeoArea, GeoCircle};
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
use hub_query::Dialect;
use serde_json::json;

use super::statement_plan;
use crate::Store;

/// How many places in the bytecode of `statement` call `hub_geo_distance`.
async fn distance_calls(store: &Store, statement: &hub_query::SqlBuilder) -> usize {
    let sql = format!("EXPLAIN {}", statement.as_sql());
    let params = statement.params().to_vec();
    super::backend_of(store)
        .read(move |conn| {
            let mut explain = conn.prepare(&sql)?;
            let mut rows = explain.query(super::bind(&params).as_slice())?;
            let mut calls = 0;
            while let Some(row) = rows.next()? {
                let (opcode, p4): (String, Option<String>) = (row.get(1)?, row.get(5)?);
                let distance = p4.is_some_and(|p| p.contains("hub_geo_distance"));
                calls += usize::from(opcode.contains("Func") && distance);
            }
            Ok(calls)
        })
        .await
        .unwrap()
}

/// `count` documents of two entities on a grid around Bozen, `per_column` to a column
/// of latitudes, `step` degrees apart: the planner weighs real statistics.
pub(crate) fn grid_documents(
    count: u32,
    per_column: u32,
    step: f64,
) -> Vec<(&'static str, serde_json::Value)> {
    (0..count)
        .map(|n| {
            let entity = if n % 2 == 0 { "HubActivityPoi" } else { "Accommodation" };
            let id = format!("doc-{n}");
            let (lat, lon) = (
                46.4 + f64::from(n % per_column) * step,
                11.2 + f64::from(n / per_column) * step,
            );
            let doc = json!({
                "Id": id, "Shortname": format!("name {}", count - n), "Active": true,
                "_Meta": {"Id": id, "Type": entity.to_lowercase(), "Source": "idm", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
                "GpsInfo": [{"Latitude": lat, "Longitude": lon, "Gpstype": "position"}],
                "Latitude": lat, "Longitude": lon,
            });
            (entity, doc)
        })
        .collect()
}

#[tokio::test]
async fn geographic_filters_read_only_the_position_index_and_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(dir.path()).unwrap();
    let docs = grid_documents(2000, 40, 1.0 / 200.0);
    store
        .content()
        .put_batch_blocking(&docs, &mut |_| {})
        .unwrap();
    store.refresh_statistics().await.unwrap();

    let area =
        parse_wkt("POLYGON((11.3 46.45,11.4 46.45,11.4 46.5,11.3 46.5,11.3 46.45))").unwrap();
    let filters = [
        ContentFilter::Area(GeoArea {
            relation: Relation::Intersects,
            geometry: area.clone(),
            original: area,
            srid: hub_geo::Srid::Wgs84,
        }),
        ContentFilter::Radius(GeoCircle {
            latitude: 46.5,
            longitude: 11.35,
            metres: 3000.0,
        }),
    ];
    let nearest = ContentOrder::Distance {
        latitude: 46.5,
        longitude: 11.35,
    };
    let orders = [ContentOrder::Default, ContentOrder::Default, nearest];
    for (filter, order) in filters.iter().chain(&filters[1..]).zip(orders) {
        let query = ContentQuery {
            entity: "HubActivityPoi",
            filters: vec![filter.clone()],
            order: order.clone(),
            page: Page {
                size: 10,
                number: 2,
            },
            count_limit: Some(1000),
        };
        let page = store.content().list(query.clone()).await.unwrap();
        assert_eq!(page.docs.len(), 10, "{filter:?}");
        assert!(page.total > 20, "{filter:?}: {} matches", page.total);

        // Nearest first, the circles tried before the radius's own read the same way.
        let compiled = query.compile(Dialect::Sqlite);
        let rings = compiled.attempts.into_iter().map(|a| a.page);
        let statements: Vec<_> = [compiled.page, compiled.count]
            .into_iter()
            .chain(rings)
            .collect();
        assert_eq!(
            statements.len(),
            if order == ContentOrder::Default { 2 } else { 6 }
        );
        for (i, statement) in statements.into_iter().enumerate() {
            let plan = statement_plan(&store, &statement).await;
            // Nearest first, a page computes each candidate's distance once, in the
            // subquery it then keeps and sorts by it (flattened, SQLite would compute
            // it again for the condition).
            let counts = i == 1;
            if order != ContentOrder::Default && !counts {
                assert!(
                    plan.contains("CO-ROUTINE n"),
                    "{filter:?} {order:?}:\n{plan}"
                );
                assert_eq!(distance_calls(&store, &statement).await, 1, "{plan}");
            }
            let matches: Vec<&str> = plan
                .lines()
                .filter(|l| l.contains("content_position"))
                .collect();
            assert!(
                matches.len() == 1 && matches[0].contains("COVERING INDEX"),
                "{filter:?} {order:?}:\n{plan}"
            );
            // The page statement reads `content` for its ten documents, by key.
            let other_reads: Vec<&str> = plan
                .lines()
                .filter(|l| l.contains(" c ") && !l.contains("content_position"))
                .filter(|l| !l.contains("sqlite_autoindex_content_1"))
                .collect();
            assert!(other_reads.is_empty(), "{filter:?} {order:?}:\n{plan}");
        }
    }
}

/// A page walk or a bookmark of a box along the order tests each document's position in
/// `content_order_points`: at ODH's size each row a walk passed was a read of kilobytes
/// (the first OGC page at offset 30,000 of a region's box after a write, 101 → 41 ms).
#[tokio::test]
async fn walks_of_a_box_test_the_positions_in_the_order_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(dir.path()).unwrap();
    let area = parse_wkt("POLYGON((10 45,13 45,13 48,10 48,10 45))").unwrap();
    let query = ContentQuery {
        entity: "HubActivityPoi",
        filters: vec![ContentFilter::Area(GeoArea {
            relation: Relation::Intersects,
            geometry: area.clone(),
            original: area,
            srid: hub_geo::Srid::Wgs84,
        })],
        order: ContentOrder::Default,
        page: Page {
            size: 10,
            number: 3,
        },
        count_limit: None,
    };
    let walk = query.compile(Dialect::Sqlite).walk.expect("a box walks");
    let attempt = walk
        .attempt(hub_query::content::Total::exact(50_000), 70_000)
        .expect("a dense box is walked");
    let plan = statement_plan(&store, &attempt.page).await;
    assert!(
        plan.contains("USING COVERING INDEX content_order_points (entity=? AND sort_key<?)"),
        "{plan}"
    );
}
