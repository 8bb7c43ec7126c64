//! A test store's PostgreSQL database lives exactly as long as the store: a CI run makes
//! hundreds, and kept until its end they filled the machine's disk; those a process could
//! not drop, the next run's first test store does. The only test in its binary, so no
//! other test's databases come and go while it counts.

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

/// Runs `work` with a connection to `url` of its own, on a thread and runtime of its
/// own: the stores under test block on theirs. The connection closes when `work` is done
/// with its client.
fn on_a_connection<T, F, Fut>(url: &str, work: F) -> std::thread::JoinHandle<T>
where
    T: Send + 'static,
    F: FnOnce(tokio_postgres::Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T>,
{
    let url = url.to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .expect("connecting to the test server");
            let driver = tokio::spawn(connection);
            let done = work(client).await;
            let _ = driver.await;
            done
        })
    })
}

/// The names of the databases matching `pattern` (a `LIKE` pattern).
fn databases(admin: &str, pattern: &str) -> Vec<String> {
    let pattern = pattern.to_string();
    on_a_connection(admin, move |client| async move {
        let rows = client
            .query(
                "SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY 1",
                &[&pattern],
            )
            .await
            .unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    })
    .join()
    .unwrap()
}

/// A connection to `url`, open until the returned sender is dropped.
fn connected(url: &str) -> std::sync::mpsc::Sender<()> {
    let (open, opened) = std::sync::mpsc::channel();
    let (close, closing) = std::sync::mpsc::channel::<()>();
    on_a_connection(url, move |client| async move {
        open.send(()).unwrap();
        let _ = tokio::task::spawn_blocking(move || closing.recv()).await;
        drop(client);
    });
    opened.recv().unwrap();
    close
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

    // What suites of earlier runs left: the first test store of a process drops the
    // databases of test stores whose process is gone and that nobody uses, only those.
    let gone = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        child.id()
    };
    let alive = std::os::unix::process::parent_id();
    let left = format!("hub_test_{gone}_0");
    let in_use = format!("hub_test_{gone}_1");
    let of_a_running_process = format!("hub_test_{alive}_0");
    let not_a_store = format!("hub_test_guard_{gone}");
    let kept = [&in_use, &of_a_running_process, &not_a_store];
    for name in [&left].into_iter().chain(kept) {
        hub_store::postgres::create_database(&admin, name, true).unwrap();
    }
    let user = connected(&hub_store::postgres::url_with_database(&admin, &in_use));

    // A suite's store: its repositories keep the database after the store itself is gone.
    let mine = format!("hub_test_{pid}_%");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    assert!(
        databases(&admin, &left).is_empty(),
        "{left} was left behind"
    );
    for name in kept {
        assert_eq!(
            databases(&admin, name),
            vec![name.clone()],
            "{name} was swept"
        );
    }
    drop(user);
    for name in kept {
        hub_store::postgres::drop_database(&admin, name).unwrap();
    }
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
