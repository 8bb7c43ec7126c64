//! Which pooled connection a read gets (when `HUB_TEST_DATABASE` is set): the one used
//! last, so that after a burst has opened several, reads one after another stay on a
//! connection whose statements are prepared and planned. And a backend on the caller's
//! runtime (`PgSettings::runtime`, what `hub serve` uses) keeps its connections there.

use std::sync::Arc;

use super::session::Queries;
use super::{PgBackend, PgSettings};

/// The server process answering a read on one of `backend`'s connections, once `gate`
/// lets every read of the burst hold its connection.
async fn server_pid(backend: &PgBackend, gate: Option<Arc<tokio::sync::Barrier>>) -> i32 {
    backend
        .read(move |conn| async move {
            if let Some(gate) = gate {
                gate.wait().await;
            }
            Ok(conn.query_one("SELECT pg_backend_pid()", &[]).await?.get(0))
        })
        .await
        .unwrap()
}

#[test]
fn reads_after_a_burst_reuse_the_connection_used_last() {
    let Some(admin) =
        super::test_server::admin_with_sessions("the pooler picks the server connection")
    else {
        return;
    };
    let database = super::test_server::database(&admin, "pool");
    let burst = 4;
    let settings = PgSettings {
        pool_size: burst,
        ..PgSettings::for_tests()
    };
    let backend = PgBackend::open_throwaway(database, &settings).unwrap();
    futures::executor::block_on(async {
        // Every read of the burst holds its connection until all have one: the pool
        // opens `burst` connections.
        let gate = Arc::new(tokio::sync::Barrier::new(burst));
        let opened: std::collections::HashSet<i32> =
            futures::future::join_all((0..burst).map(|_| server_pid(&backend, Some(gate.clone()))))
                .await
                .into_iter()
                .collect();
        assert_eq!(opened.len(), burst, "the burst opened {burst} connections");
        let mut one_after_another = Vec::new();
        for _ in 0..2 * burst {
            one_after_another.push(server_pid(&backend, None).await);
        }
        assert!(
            one_after_another
                .iter()
                .all(|&pid| pid == one_after_another[0]),
            "reads one after another went to connections {one_after_another:?}"
        );
    });
}

#[test]
fn a_backend_on_the_callers_runtime_keeps_its_connections_there() {
    let Some(admin) = super::test_server::admin() else {
        return;
    };
    let database = super::test_server::database(&admin, "shared_rt");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Opened from outside the runtime, as `hub serve` does: the migrations wait on this
    // thread while the runtime's workers run them.
    let settings = PgSettings {
        runtime: Some(rt.handle().clone()),
        ..PgSettings::for_tests()
    };
    let backend = Arc::new(PgBackend::open_throwaway(database, &settings).unwrap());
    assert!(
        rt.metrics().num_alive_tasks() > 0,
        "the migration's connection lives on the caller's runtime"
    );
    // A blocking write from a thread outside the runtime (a bulk load's).
    backend
        .write_blocking(|conn| async move {
            conn.batch_execute("CREATE TABLE shared_rt (n int); INSERT INTO shared_rt SELECT generate_series(1, 1000)")
                .await?;
            Ok(())
        })
        .unwrap();
    // Reads and writes from the runtime's own tasks, several at once.
    let sums = rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let backend = backend.clone();
                tokio::spawn(async move {
                    backend
                        .write(move |conn| async move {
                            conn.execute("INSERT INTO shared_rt VALUES ($1)", &[&(2000 + i)])
                                .await?;
                            Ok(())
                        })
                        .await?;
                    backend
                        .read(|conn| async move {
                            let row = conn
                                .query_one(
                                    "SELECT count(*), sum(n) FROM shared_rt WHERE n <= 1000",
                                    &[],
                                )
                                .await?;
                            Ok((row.get::<_, i64>(0), row.get::<_, i64>(1)))
                        })
                        .await
                })
            })
            .collect();
        let mut sums = Vec::new();
        for task in tasks {
            sums.push(task.await.unwrap().unwrap());
        }
        sums
    });
    assert!(sums.iter().all(|&s| s == (1000, 500_500)), "{sums:?}");
    let written: i64 = rt
        .block_on(backend.read(|conn| async move {
            Ok(conn
                .query_one("SELECT count(*) FROM shared_rt WHERE n > 1000", &[])
                .await?
                .get(0))
        }))
        .unwrap();
    assert_eq!(written, 8, "every task's write is there");
    // The store is dropped while its runtime still runs (the server drops it last).
    drop(backend);
    drop(rt);
}
