//! Which pooled connection a read gets (when `HUB_TEST_DATABASE` is set): the one used
//! last, so that after a burst has opened several, reads one after another stay on a
//! connection whose statements are prepared and planned.

use std::sync::Arc;

use super::session::Queries;
use super::{PgBackend, PgSettings, ThrowawayDatabase};

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
    let name = format!("hub_test_pool_{}", std::process::id());
    let database = ThrowawayDatabase::create(&admin, &name).unwrap();
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
