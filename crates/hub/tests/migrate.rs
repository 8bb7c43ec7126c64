//! `hub migrate --from sqlite:DIR --to postgres://…`, run as the real binary: a SQLite
//! store with content fixtures, demo time series and the demo user/client is copied into
//! a fresh PostgreSQL database; the counts match table by table and the APIs answer
//! byte for byte alike on both stores. A copy interrupted midway (the test-only
//! `HUB_COPY_STOP_AFTER_ROWS`) resumes without duplicates or gaps, and a target holding
//! other data is refused.
//!
//! Needs `HUB_TEST_DATABASE` (the admin URL of a PostgreSQL server); skipped without.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use chrono::TimeZone;
use http::Request;
use http_body_util::BodyExt;
use hub_store::Store;
use tower::ServiceExt;

fn admin_url() -> Option<String> {
    match std::env::var("HUB_TEST_DATABASE") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().to_string()),
        _ => {
            eprintln!(
                "skipped: HUB_TEST_DATABASE (the admin URL of a PostgreSQL server) is not set"
            );
            None
        }
    }
}

/// A fresh database for one test, dropped with the guard.
fn fresh_database(admin: &str, what: &str) -> hub_store::postgres::ThrowawayDatabase {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "hub_migrate_{what}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    hub_store::postgres::ThrowawayDatabase::create(admin, &name).expect("creating a test database")
}

/// A SQLite store with the content fixtures, the demo time series and the demo principals.
fn filled_sqlite(dir: &Path) -> Store {
    let store = Store::open_sqlite(dir).expect("opening SQLite");
    store
        .content()
        .put_batch_blocking(&support::content_fixtures(), &mut |_| {})
        .expect("loading fixtures");
    let anchor = chrono::Utc.with_ymd_and_hms(2024, 1, 15, 12, 0, 0).unwrap();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(hub_timeseries::load_demo(&*store.timeseries(), 1, anchor))
        .expect("loading demo time series");
    hub_auth::demo::create_demo_principals(&*store.auth(), &hub_auth::demo::DEMO_WRITABLE)
        .expect("creating demo principals");
    store
}

fn migrate(dir: &Path, url: &str, stop_after: Option<u64>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hub"));
    cmd.args([
        "migrate",
        "--from",
        &format!("sqlite:{}", dir.display()),
        "--to",
        url,
    ])
    .env("HUB_LOG", "warn")
    .env_remove("HUB_DATABASE")
    .env_remove("HUB_COPY_STOP_AFTER_ROWS");
    if let Some(n) = stop_after {
        cmd.env("HUB_COPY_STOP_AFTER_ROWS", n.to_string());
    }
    cmd.output().expect("running hub migrate")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Row counts of every SQLite table (its own tables, `schema_version`, and virtual
/// tables with their shadow tables — indexes, derived from the tables — aside).
fn sqlite_counts(dir: &Path) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(dir.join("hub.sqlite3")).unwrap();
    let tables: Vec<(String, String)> = conn
        .prepare("SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name <> 'schema_version' ORDER BY name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let virtual_tables: Vec<String> = tables
        .iter()
        .filter(|(_, sql)| sql.starts_with("CREATE VIRTUAL"))
        .map(|(name, _)| name.clone())
        .collect();
    let names = tables.into_iter().map(|(name, _)| name).filter(|name| {
        !virtual_tables
            .iter()
            .any(|v| name == v || name.starts_with(&format!("{v}_")))
    });
    names
        .map(|n| {
            let count = conn
                .query_row(&format!("SELECT count(*) FROM \"{n}\""), [], |r| r.get(0))
                .unwrap();
            (n, count)
        })
        .collect()
}

/// Runs SQL on the target and returns the first column of each row as text.
fn pg_query(url: &str, sql: &str) -> Vec<Option<String>> {
    let (url, sql) = (url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                tokio::spawn(connection);
                let rows = client.simple_query(&sql).await.unwrap();
                rows.into_iter()
                    .filter_map(|m| match m {
                        tokio_postgres::SimpleQueryMessage::Row(r) => {
                            Some(r.get(0).map(str::to_string))
                        }
                        _ => None,
                    })
                    .collect()
            })
    })
    .join()
    .unwrap()
}

fn pg_count(url: &str, table: &str) -> i64 {
    pg_query(url, &format!("SELECT count(*) FROM \"{table}\""))[0]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

/// Every SQLite table (there is a PostgreSQL twin of each) has the same count in the target.
fn assert_counts_match(dir: &Path, url: &str) {
    for (table, count) in sqlite_counts(dir) {
        assert_eq!(pg_count(url, &table), count, "rows of {table}");
    }
}

async fn get(router: &axum::Router, uri: &str) -> (u16, Option<String>, Vec<u8>) {
    let response = router
        .clone()
        .oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, content_type, body)
}

const URIS: &[&str] = &[
    "/v1/Accommodation?pagesize=5",
    "/v1/Accommodation/ACCO-1",
    "/v1/Accommodation?searchfilter=sonnenhof",
    "/v1/Event?pagesize=12",
    "/v1/Event?seed=7&pagesize=4",
    "/v1/Event?fields=Id,Detail.de.Title",
    "/v1/Event?active=true",
    "/v1/HubActivityPoi/poi-alm?language=it",
    "/v2/flat/ParkingStation",
    "/v2/flat/ParkingStation/*/latest",
    "/v2/flat/EChargingPlug,EChargingStation/*/latest",
    "/v2/flat/MeteoStation/*/latest",
    "/v2/flat/ParkingStation/*/2024-01-14/2024-01-15",
    "/v2/flat,edge/LinkStation",
    "/v2/flat,event/*",
];

#[test]
fn migrate_copies_everything_and_the_apis_answer_alike() {
    let Some(admin) = admin_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = filled_sqlite(dir.path());
    let database = fresh_database(&admin, "copy");
    let url = database.url().to_string();

    let out = migrate(dir.path(), &url, None);
    assert!(
        out.status.success(),
        "hub migrate failed:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("row counts verified"), "{stdout}");
    assert!(!stdout.contains("resumed"), "{stdout}");
    assert_counts_match(dir.path(), &url);

    let pg = Store::open_postgres(&url, None).expect("opening the copy");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        assert_eq!(
            sqlite.content().counts().await.unwrap(),
            pg.content().counts().await.unwrap()
        );
        let config = support::test_config();
        let (a, b) = (
            hub::router(sqlite.clone(), &config),
            hub::router(pg.clone(), &config),
        );
        for uri in URIS {
            let (left, right) = (get(&a, uri).await, get(&b, uri).await);
            assert_eq!(left.0, 200, "{uri}: {}", text(&left.2));
            assert_eq!(left.0, right.0, "status of {uri}");
            assert_eq!(left.1, right.1, "content type of {uri}");
            assert!(
                left.2 == right.2,
                "{uri} differs:\nSQLite:     {}\nPostgreSQL: {}",
                text(&left.2),
                text(&right.2)
            );
        }
    });
    // Identities continue after the copied ids.
    let next = pg_query(
        &url,
        "SELECT nextval(pg_get_serial_sequence('ts_station', 'id'))",
    )[0]
    .clone()
    .unwrap();
    let max = pg_query(&url, "SELECT max(id) FROM ts_station")[0]
        .clone()
        .unwrap();
    assert_eq!(
        next.parse::<i64>().unwrap(),
        max.parse::<i64>().unwrap() + 1
    );

    // A second run finds the finished copy and refuses.
    let again = migrate(dir.path(), &url, None);
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("finished copy"),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn an_interrupted_migrate_resumes_without_duplicates() {
    let Some(admin) = admin_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    drop(filled_sqlite(dir.path()));
    let database = fresh_database(&admin, "resume");
    let url = database.url().to_string();

    // Stops after 30,000 rows (in the middle of a table), then again 50,000 rows later.
    let first = migrate(dir.path(), &url, Some(30_000));
    assert!(
        !first.status.success(),
        "the first run should stop:\n{}",
        text(&first.stdout)
    );
    assert!(
        text(&first.stderr).contains("HUB_COPY_STOP_AFTER_ROWS"),
        "{}",
        text(&first.stderr)
    );
    let partial = pg_query(
        &url,
        "SELECT count(*) FROM hub_copy_progress WHERE NOT done AND rows_copied > 0",
    )[0]
    .clone()
    .unwrap();
    assert_eq!(partial, "1", "one table is copied partly");
    let copied: i64 = pg_query(&url, "SELECT sum(rows_copied) FROM hub_copy_progress")[0]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        copied > 0 && copied <= 30_000,
        "{copied} rows after the first run"
    );

    let second = migrate(dir.path(), &url, Some(50_000));
    assert!(!second.status.success());
    let copied2: i64 = pg_query(&url, "SELECT sum(rows_copied) FROM hub_copy_progress")[0]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        copied2 > copied && copied2 <= copied + 50_000,
        "{copied2} rows after the second run"
    );
    for (table, count) in pg_query(
        &url,
        "SELECT table_name || '=' || rows_copied FROM hub_copy_progress",
    )
    .into_iter()
    .flatten()
    .map(|s| {
        let (t, n) = s.split_once('=').unwrap();
        (t.to_string(), n.parse::<i64>().unwrap())
    }) {
        assert_eq!(
            pg_count(&url, &table),
            count,
            "{table} holds exactly the rows its progress mark names"
        );
    }

    let last = migrate(dir.path(), &url, None);
    let stdout = text(&last.stdout);
    assert!(
        last.status.success(),
        "the resumed run failed:\n{stdout}\n{}",
        text(&last.stderr)
    );
    assert!(
        stdout.contains(&format!(
            "resumed an interrupted copy ({copied2} rows had been copied before)"
        )),
        "{stdout}"
    );
    assert_counts_match(dir.path(), &url);
    // No duplicates even where PostgreSQL has no key to refuse them.
    let distinct = pg_query(
        &url,
        "SELECT count(*) FROM (SELECT DISTINCT * FROM content_title) t",
    )[0]
    .clone()
    .unwrap();
    assert_eq!(distinct, pg_count(&url, "content_title").to_string());
}

#[test]
fn migrate_refuses_a_target_with_other_data_and_bad_arguments() {
    let Some(admin) = admin_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    drop(filled_sqlite(dir.path()));
    let database = fresh_database(&admin, "refuse");
    let url = database.url().to_string();
    let other = Store::open_postgres(&url, None).unwrap();
    other
        .content()
        .put_batch_blocking(&support::content_fixtures()[..1], &mut |_| {})
        .unwrap();
    drop(other);

    let out = migrate(dir.path(), &url, None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("did not come from a copy of this store"),
        "{}",
        text(&out.stderr)
    );

    let missing = tempfile::tempdir().unwrap();
    let out = migrate(missing.path(), &url, None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no Hub store there"),
        "{}",
        text(&out.stderr)
    );

    let out = Command::new(env!("CARGO_BIN_EXE_hub"))
        .args([
            "migrate",
            "--from",
            &dir.path().display().to_string(),
            "--to",
            "mysql://x:secret@h/db",
        ])
        .env_remove("HUB_DATABASE")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--from must be sqlite:DIR"), "{stderr}");

    let out = Command::new(env!("CARGO_BIN_EXE_hub"))
        .args([
            "migrate",
            "--from",
            &format!("sqlite:{}", dir.path().display()),
            "--to",
            "mysql://x:secret@h/db",
        ])
        .env_remove("HUB_DATABASE")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("--to must be a PostgreSQL URL")
            && !stderr.contains("secret"),
        "{stderr}"
    );
}
