//! Latest values read narrow on PostgreSQL, against the compiled query's answer, as the
//! catalog changes under them by any writer.

use super::tests::{query_of, runtime, throwaway_store};
use crate::postgres::timeseries::tests::{plain_sql, record, stations_of_p};
use crate::postgres::{PgSettings, Queries};
use crate::timeseries::selections::REVISIONS_SQL;
use crate::timeseries::Cell;
use crate::Store;
use hub_query::timeseries::{compile_query, CompiledTs, Route};
use hub_query::Dialect;

const T: i64 = 1_790_000_000_000;

/// `/v2/flat/P/free/latest` by an admin.
fn latest() -> CompiledTs {
    compiled(Route::Latest)
}

/// `/v2/flat/P/free/<T - 1 day>/<T + 1 day>` by an admin.
fn history() -> CompiledTs {
    compiled(Route::History {
        from: T - 86_400_000,
        to: T + 86_400_000,
    })
}

fn compiled(route: Route) -> CompiledTs {
    compile_query(&query_of(route), Dialect::Postgres).unwrap()
}

/// The latest answer read narrow (as Hub reads it) and the compiled query's (the narrow
/// plan taken away), which must be the same; the same for a history answer, whose
/// series read narrow are kept the same way.
async fn both_answers(store: &Store) -> Vec<Vec<Cell>> {
    for query in [history, latest] {
        let narrow = store.timeseries().query(query()).await.unwrap();
        let mut compiled = query();
        assert!(compiled.narrow.take().is_some(), "read narrow");
        let want = store.timeseries().query(compiled).await.unwrap();
        assert_eq!(narrow, want, "read narrow as compiled");
    }
    store.timeseries().query(latest()).await.unwrap()
}

/// The texts of an answer's rows.
fn texts(rows: &[Vec<Cell>]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .filter_map(|c| match c {
                    Cell::Text(t) => Some(t.to_string()),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

async fn push(store: &Store, code: &str, t: i64) {
    let mut r = record(t, 1.0);
    r.station_code = code.into();
    store
        .timeseries()
        .push_records("P".into(), None, vec![r])
        .await
        .unwrap();
}

/// The series kept for latest answers stand until the catalog changes, by Hub or by
/// plain SQL: a new series, a station no longer available, a renamed station and a new
/// data type description are all in the next answer, which stays the compiled query's.
#[test]
fn kept_series_follow_every_change_of_the_catalog() {
    let Some((backend, store)) = throwaway_store("latest_kept", &PgSettings::for_tests()) else {
        return;
    };
    let rt = runtime();
    let t = T;
    rt.block_on(async {
        stations_of_p(&store, &[("S", "station S")]).await;
        push(&store, "S", t).await;
        assert_eq!(both_answers(&store).await.len(), 1);
        let kept = backend.ts_selections.get(&latest().narrow.unwrap().series);
        assert_eq!(kept.expect("kept").selection.ids.len(), 1);

        // A new station's series, added by a push.
        stations_of_p(&store, &[("S", "station S"), ("T", "station T")]).await;
        push(&store, "T", t).await;
        assert_eq!(both_answers(&store).await.len(), 2, "the new series");

        plain_sql(
            &backend,
            "UPDATE ts_station SET available = false WHERE stationcode = 'T'",
        )
        .await;
        let rows = both_answers(&store).await;
        assert_eq!(rows.len(), 1, "T is no longer available");

        plain_sql(
            &backend,
            "UPDATE ts_station SET name = 'renamed' WHERE stationcode = 'S'",
        )
        .await;
        let rows = both_answers(&store).await;
        assert!(texts(&rows)[0].contains(&"renamed".to_string()), "{rows:?}");

        plain_sql(
            &backend,
            "UPDATE ts_type SET description = 'spaces left' WHERE cname = 'free'",
        )
        .await;
        let rows = both_answers(&store).await;
        assert!(
            texts(&rows)[0].contains(&"spaces left".to_string()),
            "{rows:?}"
        );

        // A measurement is not a catalog change: the kept series stand.
        let before = backend.ts_selections.get(&latest().narrow.unwrap().series);
        push(&store, "S", t + 600_000).await;
        let rows = both_answers(&store).await;
        assert!(
            matches!(rows[0][0], Cell::Int(at) if at == t + 600_000),
            "{rows:?}"
        );
        let after = backend.ts_selections.get(&latest().narrow.unwrap().series);
        assert!(std::sync::Arc::ptr_eq(
            &before.unwrap().selection,
            &after.unwrap().selection
        ));
    });
}

/// The catalog's revision moves once per transaction however many catalog rows it
/// writes, and not at all for measurements.
#[test]
fn the_catalog_revision_moves_once_per_writing_transaction() {
    let Some((backend, store)) = throwaway_store("latest_revision", &PgSettings::for_tests())
    else {
        return;
    };
    let rt = runtime();
    let revision = || {
        rt.block_on(backend.read(|conn| async move {
            Ok(conn.query_one(REVISIONS_SQL, &[]).await?.get::<_, i64>(0))
        }))
        .unwrap()
    };
    rt.block_on(stations_of_p(&store, &[("A", "a"), ("B", "b"), ("C", "c")]));
    let start = revision();
    rt.block_on(backend.write(|conn| async move {
        conn.batch_execute(
            "BEGIN; UPDATE ts_station SET name = name || '!'; \
             UPDATE ts_type SET description = 'x'; COMMIT;",
        )
        .await?;
        Ok(())
    }))
    .unwrap();
    assert_eq!(revision(), start + 1, "one transaction, one count");
    rt.block_on(backend.write(|conn| async move {
        conn.batch_execute("UPDATE ts_station SET name = name || '?' WHERE stationcode = 'A'")
            .await?;
        Ok(())
    }))
    .unwrap();
    assert_eq!(revision(), start + 2);
    rt.block_on(push(&store, "A", 1_790_000_000_000));
    let with_series = revision();
    assert_eq!(with_series, start + 3, "the push added a series");
    rt.block_on(push(&store, "A", 1_790_000_600_000));
    assert_eq!(
        revision(),
        with_series,
        "values alone are not a catalog change"
    );
}
