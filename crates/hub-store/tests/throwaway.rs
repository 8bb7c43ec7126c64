//! A test store's PostgreSQL database lives exactly as long as the store: a CI run makes
//! hundreds, and kept until its end they filled the machine's disk. The only test in its
//! binary, so no other test's databases come and go while it counts.

use hub_store::postgres::ThrowawayDatabase;
use hub_store::Store;

fn admin_url() -> Option<String> {
    match std::env::var("HUB_TEST_DATABASE") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().to_string()),
        _ => {
            eprintln!("skipped: HUB_TEST_DATABASE is not set (needs a PostgreSQL server)");
            None
        }
    }
}

/// The names of the databases matching `pattern` (a `LIKE` pattern).
fn databases(admin: &str, pattern: &str) -> Vec<String> {
    let admin = admin.to_string();
    let pattern = pattern.to_string();
    // A runtime on a thread of its own: the stores under test block on theirs.
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                .await
                .expect("connecting to the admin URL");
            let driver = tokio::spawn(connection);
            let rows = client
                .query(
                    "SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY 1",
                    &[&pattern],
                )
                .await
                .unwrap();
            drop(client);
            let _ = driver.await;
            rows.iter().map(|r| r.get(0)).collect()
        })
    })
    .join()
    .unwrap()
}

#[test]
fn a_test_database_is_dropped_with_its_last_handle() {
    let Some(admin) = admin_url() else { return };
    let pid = std::process::id();

    // The guard: the database exists while it does, even with connections open to it.
    let name = format!("hub_test_guard_{pid}");
    let guard = ThrowawayDatabase::create(&admin, &name).unwrap();
    assert_eq!(guard.name(), name);
    let store = Store::open_postgres(guard.url(), None).unwrap();
    assert_eq!(databases(&admin, &name), vec![name.clone()]);
    drop(guard);
    assert!(
        databases(&admin, &name).is_empty(),
        "the guard's database outlived it"
    );
    drop(store);

    // A suite's store: its repositories keep the database after the store itself is gone.
    let mine = format!("hub_test_{pid}_%");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let made = databases(&admin, &mine);
    assert_eq!(made.len(), 1, "one database per test store: {made:?}");
    let content = store.content();
    drop(store);
    assert_eq!(
        databases(&admin, &mine),
        made,
        "dropped under a live repository"
    );
    drop(content);
    assert!(
        databases(&admin, &mine).is_empty(),
        "the test store's database outlived the store"
    );
}
