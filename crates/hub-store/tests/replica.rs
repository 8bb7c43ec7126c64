//! Read-replica routing: with a replica URL, reads are served from the replica and
//! writes go to the primary. Two separate databases stand in for primary and replica so
//! the routing is visible (a real streaming replica would hide it by copying the data).
//!
//! Needs `HUB_TEST_DATABASE` (the admin URL of a PostgreSQL server); skipped without.
//! A real streaming replica (read-your-writes, lag bound) is tested by
//! `crates/hub/tests/pg_topology.rs`.

use hub_store::postgres::ThrowawayDatabase;
use hub_store::Store;
use serde_json::json;

#[tokio::test]
async fn reads_go_to_the_replica_and_writes_to_the_primary() {
    let Some(admin) = std::env::var("HUB_TEST_DATABASE")
        .ok()
        .filter(|u| !u.trim().is_empty())
    else {
        eprintln!("skipped: HUB_TEST_DATABASE is not set (needs a PostgreSQL server)");
        return;
    };
    let pid = std::process::id();
    let primary_db = ThrowawayDatabase::create(&admin, &format!("hub_test_primary_{pid}")).unwrap();
    let replica_db = ThrowawayDatabase::create(&admin, &format!("hub_test_replica_{pid}")).unwrap();
    let (primary_url, replica_url) = (primary_db.url(), replica_db.url());
    let primary = Store::open_postgres(primary_url, None).unwrap();
    let replica = Store::open_postgres(replica_url, None).unwrap();
    replica
        .content()
        .put_batch_blocking(
            &[(
                "Article",
                json!({"Id": "ONLY-ON-REPLICA", "Shortname": "r"}),
            )],
            &mut |_| {},
        )
        .unwrap();

    let both = Store::open_postgres(primary_url, Some(replica_url)).unwrap();
    assert!(
        both.content()
            .get("Article", "only-on-replica")
            .await
            .unwrap()
            .is_some(),
        "read from the replica"
    );

    both.content()
        .put(
            "Article",
            json!({"Id": "WRITTEN", "Shortname": "w"}),
            "2026-01-01T00:00:00Z".into(),
            false,
        )
        .await
        .unwrap();
    assert!(
        primary
            .content()
            .get("Article", "written")
            .await
            .unwrap()
            .is_some(),
        "written to the primary"
    );
    assert!(
        replica
            .content()
            .get("Article", "written")
            .await
            .unwrap()
            .is_none(),
        "not written to the replica"
    );
    assert!(
        both.content()
            .get("Article", "written")
            .await
            .unwrap()
            .is_none(),
        "reads still come from the replica"
    );
}
