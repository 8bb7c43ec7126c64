//! `content.path_values` (when `HUB_TEST_DATABASE` is set): a configured path's filter
//! reads the row's column, not its document (no TOAST read), and never answers
//! differently from the document: rows written before the configuration read their
//! documents until the fill, writes keep the column, and a change of configuration
//! refills what it changed.

use hub_query::content::rawfilter_index::IndexedPath;
use hub_query::Dialect;
use serde_json::{json, Value};

use super::session::Queries;
use super::{bind, refs};
use crate::rawfilter_indexes::tests::rawfilter_query;
use crate::{Backend, Store};

const ALTITUDE: &str = "$.\"GpsInfo\"[0].\"Altitude\"";

/// A POI of about 5 KB as written (so that its `jsonb` copy leaves the row for TOAST).
fn poi(n: usize, altitude: Value) -> (&'static str, Value) {
    let id = format!("poi-{n:03}");
    let filler: String = (0..700).map(|i| format!("w{}{} ", n, i % 97)).collect();
    let mut doc = json!({
        "Id": id, "Shortname": id, "Active": true,
        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
        "Detail": {"de": {"Title": format!("Hütte {n}"), "BaseText": filler}},
        "GpsInfo": [{"Latitude": 46.5, "Longitude": 11.3}],
    });
    if altitude != json!("missing") {
        doc["GpsInfo"][0]["Altitude"] = altitude;
    }
    ("HubActivityPoi", doc)
}

/// The count of `gt(GpsInfo.0.Altitude,1500)` as compiled, and the blocks of
/// `content`'s TOAST table PostgreSQL fetched for it.
fn count_above_1500(store: &Store) -> (i64, i64) {
    let count = rawfilter_query("gt(GpsInfo.0.Altitude,1500)")
        .compile(Dialect::Postgres)
        .count;
    const TOAST: &str = "SELECT pg_stat_get_xact_blocks_fetched(reltoastrelid) FROM pg_class WHERE relname = 'content'";
    futures::executor::block_on(backend(store).write(move |mut conn| async move {
        let tx = conn.transaction().await?;
        let before: i64 = tx.query_one(TOAST, &[]).await?.get(0);
        let bound = bind(count.params());
        let n: i64 = tx.query_one(count.as_sql(), &refs(&bound)).await?.get(0);
        let after: i64 = tx.query_one(TOAST, &[]).await?.get(0);
        Ok((n, after - before))
    }))
    .unwrap()
}

fn backend(store: &Store) -> &super::PgBackend {
    let Backend::Postgres(b) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    b
}

fn execute(store: &Store, sql: &'static str) {
    futures::executor::block_on(backend(store).write(move |conn| async move {
        conn.batch_execute(sql).await?;
        Ok(())
    }))
    .unwrap();
}

/// The column of the POI `id`.
fn path_values(store: &Store, id: &'static str) -> Option<Value> {
    futures::executor::block_on(backend(store).write(move |conn| async move {
        let row = conn
            .query_one(
                "SELECT path_values FROM content WHERE entity = 'HubActivityPoi' AND id = $1",
                &[&id],
            )
            .await?;
        Ok(row.get::<_, Option<Value>>(0))
    }))
    .unwrap()
}

/// Entities a fill has yet to finish.
fn marked_for_the_fill(store: &Store) -> i64 {
    futures::executor::block_on(backend(store).write(move |conn| async move {
        let row = conn
            .query_one("SELECT count(*) FROM content_value_fill", &[])
            .await?;
        Ok(row.get::<_, i64>(0))
    }))
    .unwrap()
}

/// What a start does: configures `paths`, then (with `fill`) fills; returns the rows
/// filled.
fn start(store: &Store, paths: &[&str], fill: bool) -> u64 {
    let paths: Vec<IndexedPath> = paths
        .iter()
        .map(|p| IndexedPath::parse(p).unwrap())
        .collect();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        store.sync_rawfilter_indexes(&paths).await.unwrap();
        match fill {
            true => store.fill_path_values().await.unwrap(),
            false => 0,
        }
    })
}

fn configure(store: &Store, paths: &[&str]) -> u64 {
    start(store, paths, true)
}

#[test]
fn configured_paths_are_read_from_the_rows_column_with_the_documents_answers() {
    let Some((store, database)) = super::test_server::store("path_values") else {
        return;
    };
    // Altitudes 0, 100, … 3900; then a missing one and a JSON null.
    let mut docs: Vec<(&'static str, Value)> = (0..40).map(|n| poi(n, json!(n * 100))).collect();
    docs.push(poi(40, json!("missing")));
    docs.push(poi(41, Value::Null));
    store
        .content()
        .put_batch_blocking(&docs, &mut |_| {})
        .unwrap();
    // 1600 … 3900.
    let above = 24;

    // Written before any configuration: no column, the documents answer.
    assert_eq!(path_values(&store, "poi-016"), None);
    let (n, unconfigured) = count_above_1500(&store);
    assert_eq!(n, above);
    assert!(
        unconfigured >= docs.len() as i64,
        "{unconfigured} TOAST blocks for {} documents: no probe",
        docs.len()
    );
    // After writes, a few blocks are read for the rows' earlier versions until VACUUM
    // removes them (measured: 2 after rewriting 3 of 41 rows); a document per row is
    // what the column spares.
    let reads_the_column = |(n, toast): (i64, i64)| n == above && toast * 10 < unconfigured;

    // Configured by a server that stops before it fills: the next start with the same
    // paths (nothing changed) still fills every POI, once.
    let paths = [
        "HubActivityPoi:GpsInfo.0.Altitude",
        "HubActivityPoi:Detail.de.Title",
    ];
    assert_eq!(start(&store, &paths, false), 0);
    assert_eq!(path_values(&store, "poi-016"), None);
    assert_eq!(configure(&store, &paths), docs.len() as u64);
    // The same paths again, in another order: nothing to fill, nothing marked.
    let same = [
        "HubActivityPoi:Detail.de.Title",
        "HubActivityPoi:GpsInfo.0.Altitude",
    ];
    assert_eq!(start(&store, &same, false), 0);
    assert_eq!(marked_for_the_fill(&store), 0);
    assert_eq!(configure(&store, &same), 0);
    let title = "$.\"Detail\".\"de\".\"Title\"";
    assert_eq!(
        path_values(&store, "poi-016"),
        Some(json!({ALTITUDE: [1600], title: ["Hütte 16"]}))
    );
    assert_eq!(path_values(&store, "poi-040").unwrap()[ALTITUDE], json!([]));
    assert_eq!(
        path_values(&store, "poi-041").unwrap()[ALTITUDE],
        json!([null])
    );
    assert_eq!(
        count_above_1500(&store),
        (above, 0),
        "the count read the documents"
    );

    // The column is what the filter reads: a value changed there (never done by Hub)
    // changes the count; a row without the member reads its document.
    execute(&store, "UPDATE content SET path_values = '{\"$.\\\"GpsInfo\\\"[0].\\\"Altitude\\\"\": [9999]}' WHERE id = 'poi-001'");
    assert_eq!(count_above_1500(&store).0, above + 1);
    execute(
        &store,
        "UPDATE content SET path_values = NULL WHERE id IN ('poi-001', 'poi-030')",
    );
    assert_eq!(count_above_1500(&store).0, above);

    // A write keeps the column: poi-030 goes down, poi-002 up, poi-001 is filled again.
    store
        .content()
        .put_batch_blocking(
            &[poi(30, json!(30)), poi(2, json!(2000)), poi(1, json!(100))],
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(
        path_values(&store, "poi-030").unwrap()[ALTITUDE],
        json!([30])
    );
    assert!(reads_the_column(count_above_1500(&store)));

    // Another configuration refills the rows it changes.
    assert_eq!(
        configure(&store, &["HubActivityPoi:GpsInfo.0.Altitude"]),
        docs.len() as u64
    );
    assert_eq!(
        path_values(&store, "poi-016"),
        Some(json!({ALTITUDE: [1600]}))
    );
    assert!(reads_the_column(count_above_1500(&store)));
    // None at all: the columns are emptied and the documents answer again.
    assert_eq!(configure(&store, &[]), docs.len() as u64);
    assert_eq!(path_values(&store, "poi-016"), None);
    let (n, toast) = count_above_1500(&store);
    assert_eq!(n, above);
    assert!(toast > 0);
    drop(store);
    drop(database);
}
