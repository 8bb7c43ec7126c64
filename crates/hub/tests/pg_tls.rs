//! TLS to PostgreSQL on a real server (`scripts/pg-throwaway.sh start-tls`: `ssl=on`, a
//! throwaway CA, a certificate for `localhost` and 127.0.0.1, TCP only over TLS):
//! - `sslmode=require` opens a store whose pooled connections are encrypted, and the API
//!   writes and reads through it;
//! - `verify-full` with the right `sslrootcert` and host `localhost` works; with another
//!   CA, or a host name the certificate does not name, opening fails quickly and says why;
//! - `verify-ca` accepts the chain whatever the host name;
//! - `sslmode=disable` is refused by a server that only accepts TLS.
//!
//! Runs in the PostgreSQL pass (`HUB_TEST_DATABASE` set); needs PostgreSQL 15, PostGIS
//! and openssl, and is skipped with a reason when they are missing unless
//! `HUB_REQUIRE_TOOLS=1` or `HUB_REQUIRE_POSTGRES=1`.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use axum::body::Body;
use http::Request;
use http_body_util::BodyExt;
use hub_store::Store;
use serde_json::Value;
use support::scripted::{self, Scripted};
use tower::ServiceExt;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/pg-throwaway.sh");

/// A throwaway TLS-only server; stopped when dropped.
struct TlsServer {
    server: Scripted,
    port: String,
}

impl TlsServer {
    fn dir(&self) -> PathBuf {
        self.server.dir()
    }

    fn ca(&self) -> PathBuf {
        self.dir().join("tls/ca.pem")
    }

    /// A URL of database `hub_tls` on `host` with the query `params`.
    fn url(&self, host: &str, params: &str) -> String {
        format!("postgres://postgres@{host}:{}/hub_tls?{params}", self.port)
    }

    /// A statement over the owner's Unix socket (the server accepts no plaintext TCP).
    fn psql(&self, sql: &str) -> String {
        let out = Command::new("psql")
            .arg("-h")
            .arg(self.dir())
            .args([
                "-p", &self.port, "-U", "postgres", "-d", "hub_tls", "-XAtq", "-c", sql,
            ])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// Starts the server, or says why it cannot (skip), or fails when tools are required.
fn tls_server() -> Option<TlsServer> {
    let (server, printed) = scripted::start(SCRIPT, "start-tls")?;
    let url = printed.trim().to_string();
    let port = url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split_once('/'))
        .map(|(port, _)| port.to_string())
        .expect("the script prints a URL with a port");
    Some(TlsServer { server, port })
}

/// A CA the server's certificate is not signed by.
fn other_ca(dir: &Path) -> PathBuf {
    let (key, pem) = (dir.join("other-ca.key"), dir.join("other-ca.pem"));
    let status = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=Another CA"])
        .args(["-addext", "basicConstraints=critical,CA:TRUE"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&pem)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl runs");
    assert!(status.success());
    pem
}

/// Opening must fail, quickly, with an error that names the cause.
fn refused(url: &str, cause: &[&str]) {
    let started = Instant::now();
    let err = match Store::open_postgres(url, None) {
        Ok(_) => panic!("{url} should be refused"),
        Err(e) => e.to_string(),
    };
    eprintln!("refused as expected: {err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{url} took {:?} to fail",
        started.elapsed()
    );
    assert!(
        cause.iter().any(|c| err.contains(c)),
        "{url}: the error names the cause ({cause:?}): {err}"
    );
}

/// One request through the router, on `rt`. The test itself is synchronous: a store owns
/// a runtime, which must not be dropped from asynchronous code.
fn send(
    rt: &tokio::runtime::Runtime,
    router: &axum::Router,
    request: Request<Body>,
) -> (u16, Value) {
    rt.block_on(async {
        let response = router.clone().oneshot(request).await.expect("answers");
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    })
}

#[test]
fn hub_talks_to_postgresql_over_tls_as_sslmode_asks() {
    let Some(server) = tls_server() else { return };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ca = server.ca();
    let ca = ca.to_str().unwrap();

    // The admin connection (database creation) goes through TLS too.
    let admin = format!(
        "postgres://postgres@127.0.0.1:{}/postgres?sslmode=require",
        server.port
    );
    hub_store::postgres::create_database(&admin, "hub_tls", true).expect("database created");

    // require: encrypted, the API writes and reads.
    let store = Store::open_postgres(
        &server.url(
            "127.0.0.1",
            "sslmode=require&application_name=hub-tls-require",
        ),
        None,
    )
    .expect("sslmode=require opens");
    let auth = store.auth();
    hub_auth::demo::create_demo_principals(&*auth, &hub_auth::demo::DEMO_WRITABLE)
        .expect("principals");
    let _entered = rt.enter();
    let router = hub::router(store.clone(), &hub::Config::default());
    let form = format!(
        "grant_type=client_credentials&client_id={}&client_secret={}",
        hub_auth::demo::DEMO_WRITER_CLIENT,
        hub_auth::demo::DEMO_WRITER_SECRET
    );
    let (status, token) = send(
        &rt,
        &router,
        Request::post("/auth/realms/hub/protocol/openid-connect/token")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(form))
            .unwrap(),
    );
    assert_eq!(status, 200, "{token}");
    let token = token["access_token"].as_str().unwrap().to_string();
    let article = serde_json::json!({"Id": "OVER-TLS", "Active": true, "Shortname": "sealed"});
    let (status, body) = send(
        &rt,
        &router,
        Request::post("/v1/Article")
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(Body::from(article.to_string()))
            .unwrap(),
    );
    assert!(
        (200..300).contains(&status),
        "the write is accepted: {status} {body}"
    );
    let (status, body) = send(
        &rt,
        &router,
        Request::get("/v1/Article/OVER-TLS")
            .body(Body::empty())
            .unwrap(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["Shortname"], "sealed");
    // Every connection Hub holds open is encrypted, as the server sees it.
    let seen = server.psql(
        "SELECT count(*) || ' ' || bool_and(s.ssl) FROM pg_stat_ssl s \
         JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'hub-tls-require'",
    );
    let (count, all_ssl) = seen.split_once(' ').unwrap();
    assert!(
        count.parse::<u32>().unwrap() > 0,
        "Hub holds connections: {seen}"
    );
    assert_eq!(
        all_ssl, "true",
        "all of Hub's connections are encrypted: {seen}"
    );
    drop(router);
    drop(store);

    // verify-full with the server's CA and the name on its certificate.
    let verified = Store::open_postgres(
        &server.url(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        None,
    )
    .expect("verify-full with the right CA opens");
    let router = hub::router(verified.clone(), &hub::Config::default());
    let (status, body) = send(
        &rt,
        &router,
        Request::get("/v1/Article/OVER-TLS")
            .body(Body::empty())
            .unwrap(),
    );
    assert_eq!(status, 200, "verify-full reads the article: {body}");
    drop(router);
    drop(verified);

    // verify-full with another CA: no hang, a certificate error.
    let other = other_ca(server.server.root());
    refused(
        &server.url(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", other.display()),
        ),
        &["UnknownIssuer", "certificate"],
    );
    // A host name the certificate does not name: verify-full refuses, verify-ca accepts.
    refused(
        &server.url(
            "db.invalid",
            &format!("hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={ca}"),
        ),
        &["NotValidForName", "not valid for name"],
    );
    Store::open_postgres(
        &server.url(
            "db.invalid",
            &format!("hostaddr=127.0.0.1&sslmode=verify-ca&sslrootcert={ca}"),
        ),
        None,
    )
    .expect("verify-ca does not check the host name");
    // A missing CA file is a startup error naming the parameter.
    refused(
        &server.url(
            "localhost",
            "sslmode=verify-full&sslrootcert=no-such-ca.pem",
        ),
        &["sslrootcert"],
    );
    // The server accepts TCP only over TLS.
    refused(
        &server.url("127.0.0.1", "sslmode=disable"),
        &["no encryption", "pg_hba.conf"],
    );
}
