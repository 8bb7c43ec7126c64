//! The response cache's `notify` mode on PostgreSQL (`--response-cache-revisions
//! notify`): cache hits answer from revisions kept in memory, without waiting on the
//! database; this server's own writes are seen at once, another process's once its
//! notification arrives, also after the listening connection was lost and came back.
//! Needs `HUB_TEST_DATABASE` and a direct connection (LISTEN does not pass a
//! transaction-mode pooler); skipped otherwise, with the reason printed.

mod support;

use std::time::Duration;

use axum::body::Body;
use axum::Router;
use http::Request;
use hub_store::{PgSettings, Store};
use serde_json::{json, Value};
use tower::ServiceExt;

use support::{body_bytes, content_fixtures, test_config};

/// How long another process's write may take to reach this server (a notification on
/// loopback takes well under a millisecond; the bound only keeps a broken build from
/// hanging).
const NOTIFIED_WITHIN: Duration = Duration::from_secs(10);

struct Setup {
    /// A server in the `notify` mode, and its store.
    notified: Router,
    notified_store: Store,
    /// Another process on the same database (default mode).
    other_store: Store,
    /// A direct connection for the test's own SQL.
    url: String,
    /// Dropped after the stores above.
    _database: hub_store::postgres::ThrowawayDatabase,
}

fn admin_url() -> Option<String> {
    let Some(admin) = std::env::var("HUB_TEST_DATABASE")
        .ok()
        .filter(|u| !u.trim().is_empty())
    else {
        eprintln!("skipped: revision notifications need PostgreSQL (HUB_TEST_DATABASE)");
        return None;
    };
    if PgSettings::for_tests().transaction_pooler {
        eprintln!("skipped: LISTEN does not pass a transaction-mode pooler");
        return None;
    }
    Some(admin.trim().to_string())
}

async fn setup(name: &str) -> Option<Setup> {
    let admin = admin_url()?;
    let db = format!("hub_test_notify_{name}_{}", std::process::id());
    let database =
        hub_store::postgres::ThrowawayDatabase::create(&admin, &db).expect("a fresh database");
    let url = database.url().to_string();
    let other_store = Store::open_postgres_with(&url, &PgSettings::default()).unwrap();
    other_store
        .content()
        .put_batch_blocking(&content_fixtures(), &mut |_| {})
        .expect("loading fixtures");
    let settings = PgSettings {
        revision_notify: true,
        ..PgSettings::default()
    };
    let notified_store = Store::open_postgres_with(&url, &settings).unwrap();
    Some(Setup {
        notified: hub::router(notified_store.clone(), &test_config()),
        notified_store,
        other_store,
        url,
        _database: database,
    })
}

async fn shortname(router: &Router, id: &str) -> String {
    let response = router
        .clone()
        .oneshot(
            Request::builder()
                .uri(format!("/v1/HubActivityPoi/{id}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let doc: Value = serde_json::from_slice(&body_bytes(response).await).unwrap();
    doc["Shortname"].as_str().unwrap_or_default().to_string()
}

async fn rename(store: &Store, id: &str, name: &str) {
    let doc = json!({
        "Id": id, "Shortname": name, "Active": true,
        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm"},
    });
    store
        .content()
        .put("HubActivityPoi", doc, "2030-01-01T00:00:00Z".into(), false)
        .await
        .expect("the write");
}

/// Asks until `router` shows `expected`, at most [`NOTIFIED_WITHIN`].
async fn until_seen(router: &Router, id: &str, expected: &str) {
    let started = std::time::Instant::now();
    loop {
        if shortname(router, id).await == expected {
            return;
        }
        assert!(
            started.elapsed() < NOTIFIED_WITHIN,
            "another process's write never reached this server"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("a direct connection");
    tokio::spawn(connection);
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hits_do_not_wait_for_the_database_and_writes_are_seen() {
    let Some(s) = setup("hits").await else { return };
    rename(&s.other_store, "poi-alm", "Erste").await;
    until_seen(&s.notified, "poi-alm", "Erste").await;

    // A cache hit needs no statement: it answers while another session holds the
    // revision table locked, where a per-request read would wait for the lock.
    let locker = connect(&s.url).await;
    locker
        .batch_execute("BEGIN; LOCK TABLE content_revision IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let hit = tokio::time::timeout(Duration::from_secs(5), shortname(&s.notified, "poi-alm"))
        .await
        .expect("a cache hit answers without the database");
    assert_eq!(hit, "Erste");
    locker.batch_execute("ROLLBACK").await.unwrap();

    // Its own write: seen by the very next request.
    rename(&s.notified_store, "poi-alm", "Eigene").await;
    assert_eq!(shortname(&s.notified, "poi-alm").await, "Eigene");

    // Another process's writes, one after another.
    for round in 0..5 {
        let name = format!("Runde {round}");
        rename(&s.other_store, "poi-alm", &name).await;
        until_seen(&s.notified, "poi-alm", &name).await;
    }
}

/// The process ids of the listening connections on the current database.
async fn listeners(admin: &tokio_postgres::Client) -> Vec<i32> {
    admin
        .query(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
            &[&hub_store::postgres::REVISION_LISTENER_NAME],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_listening_connection_comes_back_and_writes_are_still_seen() {
    let Some(s) = setup("lost").await else { return };
    let name = shortname(&s.notified, "poi-alm").await;
    until_seen(&s.notified, "poi-alm", &name).await;
    let admin = connect(&s.url).await;
    let before = listeners(&admin).await;
    assert_eq!(before.len(), 1, "one listening connection");
    admin
        .execute("SELECT pg_terminate_backend($1)", &[&before[0]])
        .await
        .unwrap();

    // Written while the listener is gone or coming back: still seen.
    rename(&s.other_store, "poi-alm", "Während").await;
    until_seen(&s.notified, "poi-alm", "Während").await;

    // It comes back (a new connection), and notifications work again.
    let started = std::time::Instant::now();
    loop {
        let now = listeners(&admin).await;
        if now.len() == 1 && now != before {
            break;
        }
        assert!(
            started.elapsed() < NOTIFIED_WITHIN,
            "the listener reconnects"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    rename(&s.other_store, "poi-alm", "Danach").await;
    until_seen(&s.notified, "poi-alm", "Danach").await;
}

#[test]
fn notify_mode_refuses_a_transaction_pooler_and_a_replica() {
    let Some(admin) = admin_url() else { return };
    for settings in [
        PgSettings {
            revision_notify: true,
            transaction_pooler: true,
            ..PgSettings::default()
        },
        PgSettings {
            revision_notify: true,
            replica: Some(admin.clone()),
            ..PgSettings::default()
        },
    ] {
        let error = Store::open_postgres_with(&admin, &settings)
            .err()
            .expect("refused");
        assert!(
            error.to_string().contains("revision notifications"),
            "{error}"
        );
    }
}
