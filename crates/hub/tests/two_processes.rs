//! Two `hub serve` processes on one PostgreSQL database, as behind a load balancer:
//! both start together on an empty database (the schema is migrated once, under the
//! advisory lock), a token issued by one is accepted by the other, and a document
//! written through one is read through the other, as are its update and deletion.
//!
//! Needs `HUB_TEST_DATABASE` (the admin URL of a PostgreSQL server); skipped without.

use std::io::Write;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn hub(database: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hub"));
    cmd.env_remove("HUB_DATA")
        .env("HUB_DATABASE", database)
        .env("HUB_LOG", "warn");
    cmd
}

fn serve(database: &str) -> Server {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let child = hub(database)
        .args([
            "serve",
            "--no-demo",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .args([
            "--auth-url",
            "http://hub.test",
            "--content-base-url",
            "http://hub.test",
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("starting hub serve");
    Server { child, base }
}

fn wait_healthy(server: &mut Server) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(r) = ureq::get(&format!("{}/health", server.base)).call() {
            if r.status() == 200 {
                return;
            }
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("hub serve exited early with {status}");
        }
        assert!(
            Instant::now() < deadline,
            "{} did not become healthy",
            server.base
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn json_of(r: ureq::Response) -> Value {
    r.into_string()
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

fn get(server: &Server, path: &str) -> (u16, Value) {
    match ureq::get(&format!("{}{path}", server.base)).call() {
        Ok(r) => (r.status(), json_of(r)),
        Err(ureq::Error::Status(code, r)) => (code, json_of(r)),
        Err(e) => panic!("GET {path}: {e}"),
    }
}

fn send(
    server: &Server,
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let request = ureq::request(method, &format!("{}{path}", server.base))
        .set("Authorization", &format!("Bearer {token}"));
    let result = match body {
        Some(b) => request
            .set("Content-Type", "application/json")
            .send_string(&b.to_string()),
        None => request.call(),
    };
    match result {
        Ok(r) => (r.status(), json_of(r)),
        Err(ureq::Error::Status(code, r)) => (code, json_of(r)),
        Err(e) => panic!("{method} {path}: {e}"),
    }
}

#[test]
fn a_write_through_one_process_is_read_through_the_other() {
    let Some(admin) = std::env::var("HUB_TEST_DATABASE")
        .ok()
        .filter(|u| !u.trim().is_empty())
    else {
        eprintln!("skipped: HUB_TEST_DATABASE is not set (needs a PostgreSQL server)");
        return;
    };
    let name = format!("hub_test_two_{}", std::process::id());
    let database = hub_store::postgres::create_database(&admin, &name, true)
        .expect("creating the test database");

    // Both processes start together on the empty database and race to migrate it; a
    // migration applied twice would fail on its CREATE TABLEs and end that process,
    // which `wait_healthy` reports.
    let mut a = serve(&database);
    let mut b = serve(&database);
    wait_healthy(&mut a);
    wait_healthy(&mut b);

    // A writer account, made with the CLI against the same database.
    let mut add = hub(&database)
        .args([
            "user",
            "add",
            "editor",
            "--password-stdin",
            "--role",
            "Article_Create",
            "--role",
            "Article_Update",
            "--role",
            "Article_Delete",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    add.stdin
        .take()
        .unwrap()
        .write_all(b"correct horse battery\n")
        .unwrap();
    assert!(add.wait().unwrap().success(), "hub user add failed");

    // A token from process A …
    let token: Value = ureq::post(&format!(
        "{}/auth/realms/hub/protocol/openid-connect/token",
        a.base
    ))
    .send_form(&[
        ("grant_type", "password"),
        ("client_id", "hub-generic-client"),
        ("username", "editor"),
        ("password", "correct horse battery"),
    ])
    .map(json_of)
    .expect("password grant on A");
    let token = token["access_token"]
        .as_str()
        .expect("an access token")
        .to_string();

    // … writes through process B (which must know A's signing key) …
    let article = json!({
        "Id": "TWO-PROCESS-1",
        "Active": true,
        "Shortname": "Written through B",
        "HasLanguage": ["en"],
        "Detail": {"en": {"Title": "Written through B", "Language": "en"}}
    });
    let (status, body) = send(&b, "POST", "/v1/Article", &token, Some(article));
    assert!(status == 200 || status == 201, "POST on B: {status} {body}");

    // … and A reads it back, in the list as well as by id.
    let (status, doc) = get(&a, "/v1/Article/two-process-1");
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["Detail"]["en"]["Title"], "Written through B");
    let (_, list) = get(&a, "/v1/Article?searchfilter=written%20through");
    assert_eq!(list["TotalResults"], 1, "{list}");

    // An update through A is seen by B; a deletion through B is seen by A.
    let updated = json!({
        "Id": "TWO-PROCESS-1",
        "Active": true,
        "Shortname": "Updated through A",
        "HasLanguage": ["en"],
        "Detail": {"en": {"Title": "Updated through A", "Language": "en"}}
    });
    let (status, body) = send(
        &a,
        "PUT",
        "/v1/Article/TWO-PROCESS-1",
        &token,
        Some(updated),
    );
    assert!(status == 200 || status == 204, "PUT on A: {status} {body}");
    let (_, doc) = get(&b, "/v1/Article/TWO-PROCESS-1");
    assert_eq!(doc["Detail"]["en"]["Title"], "Updated through A");
    let (status, body) = send(&b, "DELETE", "/v1/Article/TWO-PROCESS-1", &token, None);
    assert!(
        status == 200 || status == 204,
        "DELETE on B: {status} {body}"
    );
    assert_eq!(get(&a, "/v1/Article/TWO-PROCESS-1").0, 404);
}
