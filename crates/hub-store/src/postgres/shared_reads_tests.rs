//! Reads by key on shared connections (when `HUB_TEST_DATABASE` is set): concurrent reads
//! need no connection each, each gets its own answer, a closed connection is replaced,
//! and a pool too small to share still serves every read.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::session::Queries;
use super::{PgBackend, PgSettings};

/// `pool_size` connections, `shared` of them wanted for reads by key.
fn settings(pool_size: usize, shared: usize) -> PgSettings {
    PgSettings {
        pool_size,
        shared_connections: shared,
        ..PgSettings::for_tests()
    }
}

/// The test server's admin URL; `None` (skipped) without one or behind a transaction-mode
/// pooler, where nothing is shared.
fn admin() -> Option<String> {
    super::test_server::admin_with_sessions("that shares no connection")
}

/// A backend on a fresh database with [`settings`]; `None` as [`admin`].
fn backend(label: &str, pool_size: usize, shared: usize) -> Option<PgBackend> {
    let database = super::test_server::database(&admin()?, label);
    Some(PgBackend::open_throwaway(database, &settings(pool_size, shared)).unwrap())
}

/// A store on a fresh database with [`settings`], holding `articles`, and that database
/// (dropped after the store); `None` as [`admin`].
async fn store_of_articles(
    label: &str,
    pool_size: usize,
    shared: usize,
    articles: Vec<serde_json::Value>,
) -> Option<(crate::Store, super::ThrowawayDatabase)> {
    let database = super::test_server::database(&admin()?, label);
    let store =
        crate::Store::open_postgres_with(database.url(), &settings(pool_size, shared)).unwrap();
    let docs: Vec<_> = articles.into_iter().map(|doc| ("Article", doc)).collect();
    let writer = store.clone();
    tokio::task::spawn_blocking(move || writer.content().put_batch_blocking(&docs, &mut |_| {}))
        .await
        .unwrap()
        .unwrap();
    Some((store, database))
}

/// The server process that answers a read by key on `backend`, once `gate` lets every
/// read of the burst be under way.
async fn point_read_pid(backend: &PgBackend, gate: Arc<tokio::sync::Barrier>) -> i32 {
    backend
        .point_read(move |conn| async move {
            gate.wait().await;
            Ok(conn.query_one("SELECT pg_backend_pid()", &[]).await?.get(0))
        })
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_reads_by_key_than_the_pool_has_connections_run_at_once_on_one() {
    let pool_size = 4;
    let Some(backend) = backend("shared_burst", pool_size, 1) else {
        return;
    };
    // Every read waits until all of them are under way: with a pooled connection each,
    // the fifth would wait for one of the four forever.
    let burst = 3 * pool_size;
    let gate = Arc::new(tokio::sync::Barrier::new(burst));
    let reads =
        futures::future::join_all((0..burst).map(|_| point_read_pid(&backend, gate.clone())));
    let pids = tokio::time::timeout(Duration::from_secs(20), reads)
        .await
        .expect("reads by key waited for pooled connections");
    assert!(
        pids.iter().all(|&pid| pid == pids[0]),
        "reads by key went to server processes {pids:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_reads_each_get_their_own_answer() {
    let Some(backend) = backend("shared_answers", 4, 1) else {
        return;
    };
    let backend = Arc::new(backend);
    let reads = (0..500i32).map(|n| {
        let backend = backend.clone();
        tokio::spawn(async move {
            backend
                .point_read(move |conn| async move {
                    let row = conn
                        .query_one("SELECT $1::int4, repeat('x', $1::int4)", &[&n])
                        .await?;
                    Ok((row.get::<_, i32>(0), row.get::<_, String>(1).len()))
                })
                .await
        })
    });
    for (n, answer) in futures::future::join_all(reads)
        .await
        .into_iter()
        .enumerate()
    {
        assert_eq!(answer.unwrap().unwrap(), (n as i32, n), "read {n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_by_id_read_concurrently_are_each_their_own() {
    let articles = (0..60)
        .map(|n| json!({"Id": format!("A{n}"), "Shortname": "x".repeat(n * 100)}))
        .collect();
    let Some((store, _database)) = store_of_articles("shared_docs", 4, 1, articles).await else {
        return;
    };
    let reads = (0..240usize).map(|i| {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .content()
                .get("Article", &format!("a{}", i % 60))
                .await
        })
    });
    for (i, read) in futures::future::join_all(reads)
        .await
        .into_iter()
        .enumerate()
    {
        let text = read.unwrap().unwrap().expect("the document is there");
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["Id"], format!("A{}", i % 60), "read {i}");
        assert_eq!(
            doc["Shortname"].as_str().unwrap().len(),
            (i % 60) * 100,
            "read {i}"
        );
    }
    assert_eq!(
        store.content().get("Article", "missing").await.unwrap(),
        None
    );
    drop(store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_connection_the_server_closed_is_replaced() {
    let Some(backend) = backend("shared_closed", 4, 1) else {
        return;
    };
    let pid = || point_read_pid(&backend, Arc::new(tokio::sync::Barrier::new(1)));
    let before = pid().await;
    // Ended from a pooled connection of the same role, as an administrator would.
    backend
        .read(move |conn| async move {
            conn.execute("SELECT pg_terminate_backend($1)", &[&before])
                .await?;
            Ok(())
        })
        .await
        .unwrap();
    // A read sent before the connection noticed its end may fail as unavailable (a
    // pooled connection fails the same way); the reads after it get a new connection.
    let mut after = None;
    for _ in 0..50 {
        let read = backend
            .point_read(|conn| async move {
                Ok(conn
                    .query_one("SELECT pg_backend_pid()", &[])
                    .await?
                    .get::<_, i32>(0))
            })
            .await;
        match read {
            Ok(pid) => {
                after = Some(pid);
                break;
            }
            Err(e) => assert!(e.is_unavailable(), "{e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = after.expect("reads by key came back within 5 s");
    assert_ne!(after, before, "the closed connection was not replaced");
    assert_eq!(pid().await, after, "the new connection is shared in turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_of_one_shares_nothing_and_serves_every_read() {
    let Some(backend) = backend("shared_pool_of_one", 1, 1) else {
        return;
    };
    // Had the only connection been kept for sharing, the pooled read would wait forever.
    let both = async {
        let by_key = backend.point_read(|conn| async move {
            Ok(conn.query_one("SELECT 1", &[]).await?.get::<_, i32>(0))
        });
        let pooled = backend.read(|conn| async move {
            Ok(conn.query_one("SELECT 2", &[]).await?.get::<_, i32>(0))
        });
        futures::future::try_join(by_key, pooled).await
    };
    let answers = tokio::time::timeout(Duration::from_secs(20), both)
        .await
        .expect("a read waited for the pool's only connection");
    assert_eq!(answers.unwrap(), (1, 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounded_pages_are_shared_and_other_lists_take_a_pooled_connection() {
    use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
    let articles = (0..30)
        .map(|n| json!({"Id": format!("A{n:02}"), "Active": n % 2 == 0}))
        .collect();
    // A pool of two: one shared connection, one pooled.
    let Some((store, _database)) = store_of_articles("shared_pages", 2, 1, articles).await else {
        return;
    };
    let list = |filters: Vec<ContentFilter>, number: u32| {
        let store = store.clone();
        tokio::spawn(async move {
            let query = ContentQuery {
                entity: "Article",
                filters,
                order: ContentOrder::Default,
                page: Page { size: 10, number },
                count_limit: None,
            };
            store
                .content()
                .list(query)
                .await
                .map(|page| page.docs.len())
        })
    };
    // The shared connection is opened (it takes one of the two), and the other is held
    // by a read that waits for `release`.
    assert!(store
        .content()
        .get("Article", "a00")
        .await
        .unwrap()
        .is_some());
    let crate::Backend::Postgres(backend) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    let (taken, release) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let backend = backend.clone();
    let (on_taken, on_release) = (taken.clone(), release.clone());
    let holder = tokio::spawn(async move {
        backend
            .read(move |conn| async move {
                let _held = conn;
                on_taken.notify_one();
                on_release.notified().await;
                Ok(())
            })
            .await
    });
    taken.notified().await;

    // Whole-list pages answer on the shared connection, near the start and deeper.
    for number in [1, 3] {
        let page = tokio::time::timeout(Duration::from_secs(20), list(Vec::new(), number))
            .await
            .expect("a bounded page waited for a pooled connection");
        assert_eq!(page.unwrap().unwrap(), 10, "page {number}");
    }
    // A filtered page may scan: it waits for a pooled connection of its own.
    let mut filtered = list(vec![ContentFilter::Active(true)], 1);
    let waited = tokio::time::timeout(Duration::from_millis(500), &mut filtered).await;
    assert!(
        waited.is_err(),
        "a filtered page ran on the shared connection"
    );
    release.notify_one();
    holder.await.unwrap().unwrap();
    let page = tokio::time::timeout(Duration::from_secs(20), filtered)
        .await
        .expect("the filtered page never ran");
    assert_eq!(page.unwrap().unwrap(), 10);
    drop(store);
}
