//! Readers plan with the statistics of the latest `ANALYZE` Hub ran, not with those
//! they loaded when they were opened: a real SQLite store, `EXPLAIN QUERY PLAN` asked of
//! every pooled reader.

use super::SqliteBackend;
use crate::Store;

/// Which index each reader's plan of a two-column lookup uses.
async fn indexes_planned(backend: &SqliteBackend) -> Vec<String> {
    let mut planned = Vec::new();
    // Each read takes the reader at the head of the pool and puts it back at its tail.
    for _ in 0..backend.inner.readers {
        let detail = backend
            .read(|conn| {
                Ok(conn.query_row(
                    "EXPLAIN QUERY PLAN SELECT * FROM skew WHERE a = 1 AND b = 1",
                    [],
                    |r| r.get::<_, String>(3),
                )?)
            })
            .await
            .unwrap();
        planned.push(if detail.contains("skew_a") {
            "skew_a".to_string()
        } else if detail.contains("skew_b") {
            "skew_b".to_string()
        } else {
            detail
        });
    }
    planned
}

/// The table's rows replaced by `rows` rows with `a` distinct and `b` the same in all,
/// or the other way round.
async fn refill(backend: &SqliteBackend, rows: i64, a_distinct: bool) {
    backend
        .write(move |conn| {
            let tx = conn.transaction()?;
            tx.execute_batch("DELETE FROM skew")?;
            {
                let mut insert = tx.prepare("INSERT INTO skew (a, b) VALUES (?1, ?2)")?;
                for n in 0..rows {
                    let (a, b) = if a_distinct { (n, 0) } else { (0, n) };
                    insert.execute([a, b])?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn readers_plan_with_the_statistics_of_the_latest_analyze() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(dir.path()).unwrap();
    let backend = super::backend_of(&store);
    let all = |index: &str| vec![index.to_string(); backend.inner.readers];
    backend
        .write(|conn| {
            Ok(conn.execute_batch(
                "CREATE TABLE skew (a INTEGER, b INTEGER);
                 CREATE INDEX skew_a ON skew (a);
                 CREATE INDEX skew_b ON skew (b);",
            )?)
        })
        .await
        .unwrap();

    // `a` tells rows apart: every reader looks rows up by `a`.
    refill(backend, 2_000, true).await;
    store.refresh_statistics().await.unwrap();
    assert_eq!(indexes_planned(backend).await, all("skew_a"));

    // Now `b` does. The readers have loaded the old statistics; after the refresh each
    // plans with the new ones.
    refill(backend, 2_000, false).await;
    store.refresh_statistics().await.unwrap();
    assert_eq!(indexes_planned(backend).await, all("skew_b"));

    // The table grows forty times over, `a` telling rows apart again: the hourly
    // optimization analyzes it and the readers follow.
    refill(backend, 80_000, true).await;
    assert_eq!(
        indexes_planned(backend).await,
        all("skew_b"),
        "nothing analyzed yet"
    );
    store.optimize_statistics().await.unwrap();
    assert_eq!(indexes_planned(backend).await, all("skew_a"));

    // Another process analyzes (here: a connection of its own): the next optimization
    // finds statistics other than those it last saw, and the readers follow.
    refill(backend, 4_000, false).await;
    let other = rusqlite::Connection::open(dir.path().join(super::DATABASE_FILE)).unwrap();
    other.execute_batch("ANALYZE").unwrap();
    drop(other);
    assert_eq!(indexes_planned(backend).await, all("skew_a"));
    store.optimize_statistics().await.unwrap();
    assert_eq!(indexes_planned(backend).await, all("skew_b"));

    // Nothing changed since: an optimization leaves the readers as they are.
    let generation = backend
        .inner
        .statistics
        .load(std::sync::atomic::Ordering::Acquire);
    store.optimize_statistics().await.unwrap();
    assert_eq!(
        backend
            .inner
            .statistics
            .load(std::sync::atomic::Ordering::Acquire),
        generation
    );
}
