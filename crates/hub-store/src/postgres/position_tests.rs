//! A radius on PostgreSQL (when `HUB_TEST_DATABASE` is set): its count and a
//! nearest-first page plan to take the candidates' positions and keys from
//! `content_position` alone, and to read rows only for the page's own documents
//! (migration 17). At ODH's size each candidate's row is a read of kilobytes in a table
//! larger than memory.

use hub_query::content::geo::GeoCircle;
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
use hub_query::{Dialect, SqlBuilder};
use serde_json::json;

use super::bind::{bind, refs};
use super::session::Queries;
use crate::{Backend, Store};

/// How the plan of `statement` reads `content`: each scan's node type and index, in
/// plan order (`EXPLAIN (FORMAT JSON)` with the statement's parameters).
async fn content_scans(store: &Store, statement: SqlBuilder) -> Vec<(String, String)> {
    let Backend::Postgres(backend) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    let plan: serde_json::Value = backend
        .write(move |conn| async move {
            let params = bind(statement.params());
            let explain = format!("EXPLAIN (FORMAT JSON) {}", statement.as_sql());
            Ok(conn.query_one(&explain, &refs(&params)).await?.get(0))
        })
        .await
        .unwrap();
    fn walk(node: &serde_json::Value, scans: &mut Vec<(String, String)>) {
        if node["Relation Name"] == "content" {
            let kind = node["Node Type"].as_str().unwrap_or_default();
            let index = node["Index Name"].as_str().unwrap_or_default();
            scans.push((kind.to_string(), index.to_string()));
        }
        for child in node["Plans"].as_array().into_iter().flatten() {
            walk(child, scans);
        }
    }
    let mut scans = Vec::new();
    walk(&plan[0]["Plan"], &mut scans);
    scans
}

#[tokio::test(flavor = "multi_thread")]
async fn a_radius_reads_positions_and_keys_from_the_index() {
    let Some((store, database)) = super::test_server::store("position") else {
        return;
    };
    let mut docs = crate::sqlite::position_tests::grid_documents(4000, 50, 1.0 / 250.0);
    // Rows as wide as a typical document's, which the planner weighs against the index.
    for (_, doc) in &mut docs {
        doc["Detail"] = json!({"de": {"BaseText": "Wanderweg ".repeat(300)}});
    }
    let writer = store.clone();
    tokio::task::spawn_blocking(move || {
        writer
            .content()
            .put_batch_blocking(&docs, &mut |_| {})
            .unwrap()
    })
    .await
    .unwrap();
    // Statistics, as autovacuum keeps them.
    let Backend::Postgres(backend) = &*store.backend else {
        unreachable!()
    };
    backend
        .write(|conn| async move {
            conn.batch_execute("VACUUM (ANALYZE) content").await?;
            Ok(())
        })
        .await
        .unwrap();

    let (latitude, longitude) = (46.5, 11.35);
    let query = ContentQuery {
        entity: "HubActivityPoi",
        filters: vec![ContentFilter::Radius(GeoCircle {
            latitude,
            longitude,
            metres: 2000.0,
        })],
        order: ContentOrder::Distance {
            latitude,
            longitude,
        },
        page: Page {
            size: 10,
            number: 3,
        },
        count_limit: Some(1000),
    };
    let page = store.content().list(query.clone()).await.unwrap();
    assert_eq!(page.docs.len(), 10);
    assert!(page.total > 30, "{} matches", page.total);

    let compiled = query.compile(Dialect::Postgres);
    let from_positions = (
        "Index Only Scan".to_string(),
        "content_position".to_string(),
    );
    let scans = content_scans(&store, compiled.count).await;
    assert_eq!(scans, std::slice::from_ref(&from_positions), "the count");
    // The page statement and the circles tried before the radius's own: the candidates
    // from the index alone, then the page's documents by key.
    let by_key = ("Index Scan".to_string(), "content_pkey".to_string());
    let rings = compiled.attempts.into_iter().map(|a| a.page);
    for statement in std::iter::once(compiled.page).chain(rings) {
        let sql = statement.as_sql().to_string();
        let scans = content_scans(&store, statement).await;
        assert_eq!(scans, [from_positions.clone(), by_key.clone()], "{sql}");
    }
    drop(store);
    drop(database);
}
