//! Station and edge lists kept at the catalog's revision on PostgreSQL, against the
//! compiled query's answer, as the catalog changes under them by any writer.

use std::sync::Arc;

use super::narrow::tests::{query_of, runtime, throwaway_store};
use super::tests::{plain_sql, record, stations_of_p};
use crate::postgres::PgSettings;
use crate::timeseries::{Cell, EdgeInput, StationInput};
use crate::Store;
use hub_query::timeseries::{compile_query, CompiledTs, Route};
use hub_query::Dialect;

/// `/v2/flat/P` by an admin.
fn stations() -> CompiledTs {
    let compiled = compile_query(&query_of(Route::Stations), Dialect::Postgres).unwrap();
    assert!(compiled.catalog_only);
    compiled
}

/// `/v2/flat,edge/L` by an admin.
fn edges() -> CompiledTs {
    let mut query = query_of(Route::Edges);
    query.types = Some(vec!["L".into()]);
    let compiled = compile_query(&query, Dialect::Postgres).unwrap();
    assert!(compiled.catalog_only);
    compiled
}

/// The station list as Hub reads it (see [`answer_of`]).
async fn answer(store: &Store) -> Vec<Vec<Cell>> {
    answer_of(store, stations).await
}

/// The answer of `query` as Hub reads it, whole and streamed, which must both be the
/// compiled query's (read with the flag taken away).
async fn answer_of(store: &Store, query: fn() -> CompiledTs) -> Vec<Vec<Cell>> {
    let ts = store.timeseries();
    let kept = ts.query(query()).await.unwrap();
    let mut streamed = Vec::new();
    let mut batches = ts.query_batches(query());
    while let Some(batch) = batches.next().await {
        streamed.extend(batch.unwrap());
    }
    let mut compiled = query();
    compiled.catalog_only = false;
    let want = ts.query(compiled).await.unwrap();
    assert_eq!(kept, want, "the kept answer is the compiled query's");
    assert_eq!(streamed, want, "streamed, too");
    want
}

/// Whether a cell of the answer's rows is the text `t`.
fn has_text(rows: &[Vec<Cell>], t: &str) -> bool {
    rows.iter()
        .flatten()
        .any(|c| matches!(c, Cell::Text(x) if &**x == t))
}

/// A station list kept stands until the catalog changes, by Hub or by plain SQL: a new
/// station, one no longer available and a renamed one are all in the next answer. A
/// pushed measurement changes nothing of it: the kept rows stand.
#[test]
fn a_kept_station_list_follows_every_change_of_the_catalog() {
    let Some((backend, store)) = throwaway_store("stations_kept", &PgSettings::for_tests()) else {
        return;
    };
    let rt = runtime();
    rt.block_on(async {
        stations_of_p(&store, &[("S", "station S")]).await;
        assert_eq!(answer(&store).await.len(), 1);
        let kept = || backend.ts_selections.get(&stations().sql).expect("kept");
        assert_eq!(kept().selection.templates.len(), 1);

        stations_of_p(&store, &[("S", "station S"), ("T", "station T")]).await;
        assert_eq!(answer(&store).await.len(), 2, "the new station");

        plain_sql(
            &backend,
            "UPDATE ts_station SET available = false WHERE stationcode = 'T'",
        )
        .await;
        assert_eq!(answer(&store).await.len(), 1, "T is no longer available");
        plain_sql(
            &backend,
            "UPDATE ts_station SET name = 'renamed' WHERE stationcode = 'S'",
        )
        .await;
        let rows = answer(&store).await;
        assert!(has_text(&rows, "renamed"), "{rows:?}");

        let before = kept();
        store
            .timeseries()
            .push_records("P".into(), None, vec![record(1_790_000_000_000, 1.0)])
            .await
            .unwrap();
        answer(&store).await;
        let settled = kept();
        assert!(
            !Arc::ptr_eq(&before.selection, &settled.selection),
            "the push added a series, a catalog change: the answer was read again"
        );
        store
            .timeseries()
            .push_records("P".into(), None, vec![record(1_790_000_600_000, 2.0)])
            .await
            .unwrap();
        answer(&store).await;
        assert!(
            Arc::ptr_eq(&settled.selection, &kept().selection),
            "values alone are not a catalog change"
        );
    });
}

/// Edge `code` of type `L` from station `from` to station `to` (both of type `P`).
fn edge(code: &str, from: &str, to: &str) -> EdgeInput {
    EdgeInput {
        station_type: "L".into(),
        station: StationInput {
            code: code.into(),
            name: format!("edge {code}"),
            ..Default::default()
        },
        begin: Some(("P".into(), from.into())),
        end: Some(("P".into(), to.into())),
        directed: true,
        line: vec![(11.0, 46.4), (11.1, 46.5)],
    }
}

/// An edge list kept stands until an edge changes (edges count in the catalog's
/// revision, migration 20), by Hub or by plain SQL.
#[test]
fn a_kept_edge_list_follows_its_edges() {
    let Some((backend, store)) = throwaway_store("edges_kept", &PgSettings::for_tests()) else {
        return;
    };
    let rt = runtime();
    rt.block_on(async {
        stations_of_p(&store, &[("A", "a"), ("B", "b")]).await;
        let ts = store.timeseries();
        ts.put_edges(vec![edge("A-B", "A", "B")]).await.unwrap();
        assert_eq!(answer_of(&store, edges).await.len(), 1);
        let kept = || backend.ts_selections.get(&edges().sql).expect("kept");
        let first = kept();

        ts.put_edges(vec![edge("B-A", "B", "A")]).await.unwrap();
        assert_eq!(answer_of(&store, edges).await.len(), 2, "the new edge");

        plain_sql(&backend, "UPDATE ts_edge SET directed = false").await;
        let rows = answer_of(&store, edges).await;
        assert!(
            rows.iter().all(|r| r.contains(&Cell::Int(0))),
            "undirected now: {rows:?}"
        );
        assert!(!Arc::ptr_eq(&first.selection, &kept().selection));
    });
}
