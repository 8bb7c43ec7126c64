//! Two `hub serve` processes on one SQLite directory answer each other's writes at once
//! through their response caches.
//!
//! Three `hub serve` processes on one PostgreSQL database, as behind a load balancer
//! (the test rotates over their addresses like a round-robin upstream):
//! - all three start together on an empty database (the schema is migrated once, under
//!   the advisory lock);
//! - what one process writes, the others read at once: a Content document created,
//!   updated and deleted through different processes, and Time Series records pushed
//!   through one and read (latest and history) through the others;
//! - token keys stay coherent: a token issued by one is accepted by the others, a
//!   refresh through another works, a replayed refresh token revokes the session for
//!   every process, and after a signing-key rotation by another process both the old
//!   key's tokens and the new key's are accepted everywhere;
//! - a process started with `--history-retention-months` drops an old month of the
//!   measurement history for all of them, by its own upkeep.
//!
//! Every process reads each document, list and series before and after each change, so
//! each process's response cache has to stay coherent across processes for this test
//! to pass.
//! The PostgreSQL test needs `HUB_TEST_DATABASE` (the admin URL of a PostgreSQL server);
//! skipped without.

mod support;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::processes::{self, json_of, spawn_serve, Server, PUBLIC_BASE};

fn hub(database: &str) -> Command {
    processes::hub(&[("HUB_DATABASE", database)])
}

const ISSUER_BASE: &str = PUBLIC_BASE;

fn serve(database: &str) -> Server {
    serve_with(database, &[])
}

fn serve_with(database: &str, extra: &[&str]) -> Server {
    spawn_serve(&[("HUB_DATABASE", database)], extra)
}

fn wait_healthy(server: &mut Server) {
    server.wait_healthy()
}

fn answer(what: &str, result: Result<ureq::Response, ureq::Error>) -> (u16, Value) {
    match result {
        Ok(r) => (r.status(), json_of(r)),
        Err(ureq::Error::Status(code, r)) => (code, json_of(r)),
        Err(e) => panic!("{what}: {e}"),
    }
}

fn get(server: &Server, path: &str) -> (u16, Value) {
    answer(path, ureq::get(&format!("{}{path}", server.base)).call())
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
    answer(&format!("{method} {path}"), result)
}

fn token_request(server: &Server, form: &[(&str, &str)]) -> (u16, Value) {
    answer(
        "token request",
        ureq::post(&format!(
            "{}/auth/realms/hub/protocol/openid-connect/token",
            server.base
        ))
        .send_form(form),
    )
}

/// The next process in turn, as a round-robin upstream picks it.
struct RoundRobin<'a> {
    servers: &'a [Server],
    next: AtomicUsize,
}

impl RoundRobin<'_> {
    fn pick(&self) -> &Server {
        &self.servers[self.next.fetch_add(1, Ordering::Relaxed) % self.servers.len()]
    }
}

const PASSWORD: &str = "correct horse battery";

fn article(id: &str, title: &str) -> Value {
    json!({
        "Id": id,
        "Active": true,
        "Shortname": title,
        "HasLanguage": ["en"],
        "Detail": {"en": {"Title": title, "Language": "en"}}
    })
}

/// An editor of articles who may also write time series, made with the CLI.
fn add_editor(hub: Command) {
    let roles = [
        "Article_Create",
        "Article_Update",
        "Article_Delete",
        "WRITER",
    ];
    processes::add_user(hub, "editor", PASSWORD, &roles);
}

/// A session of the editor opened on `server` (the token endpoint's answer).
fn editor_session(server: &Server) -> Value {
    let (status, session) = token_request(
        server,
        &[
            ("grant_type", "password"),
            ("client_id", "hub-generic-client"),
            ("username", "editor"),
            ("password", PASSWORD),
        ],
    );
    assert_eq!(status, 200, "password grant on {}: {session}", server.base);
    session
}

/// Two `hub serve` processes on one SQLite directory, each with its own response cache:
/// what one writes the other answers at once, though its repeated answers are cache
/// hits that read nothing from the database while it is unchanged (they learn of a
/// commit from the database's WAL index).
#[test]
fn two_processes_on_one_sqlite_store_answer_each_others_writes_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("HUB_DATA", dir.path().to_str().unwrap())];
    add_editor(processes::hub(&env));
    let mut servers: Vec<Server> = (0..2).map(|_| spawn_serve(&env, &[])).collect();
    for s in &mut servers {
        wait_healthy(s);
    }
    let [writer, reader] = &servers[..] else {
        unreachable!()
    };
    let token = editor_session(writer)["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let id = "SQLITE-PROCESSES-1";
    let by_id = format!("/v1/Article/{id}");
    let search = "/v1/Article?searchfilter=through&fields=Shortname";
    // Cached by the reader before the document exists, and hit again.
    for _ in 0..2 {
        assert_eq!(get(reader, &by_id).0, 404);
        assert_eq!(get(reader, search).1["TotalResults"], 0);
    }
    let (status, body) = send(
        writer,
        "POST",
        "/v1/Article",
        &token,
        Some(article(id, "Written through one")),
    );
    assert!(status == 200 || status == 201, "POST: {status} {body}");
    for _ in 0..3 {
        let (status, doc) = get(reader, &by_id);
        assert_eq!(status, 200, "{doc}");
        assert_eq!(doc["Detail"]["en"]["Title"], "Written through one");
        assert_eq!(get(reader, search).1["TotalResults"], 1);
    }
    let (status, body) = send(
        writer,
        "PUT",
        &by_id,
        &token,
        Some(article(id, "Updated through one")),
    );
    assert!(status == 200 || status == 204, "PUT: {status} {body}");
    for _ in 0..3 {
        assert_eq!(
            get(reader, &by_id).1["Detail"]["en"]["Title"],
            "Updated through one"
        );
        assert_eq!(
            get(reader, search).1["Items"][0]["Shortname"],
            "Updated through one"
        );
    }
    let (status, body) = send(writer, "DELETE", &by_id, &token, None);
    assert!(status == 200 || status == 204, "DELETE: {status} {body}");
    for _ in 0..3 {
        assert_eq!(get(reader, &by_id).0, 404);
        assert_eq!(get(reader, search).1["TotalResults"], 0);
    }
    let metrics = ureq::get(&format!("{}/metrics", reader.base))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    let hits: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("hub_response_cache_hits_total "))
        .and_then(|v| v.parse().ok())
        .expect("/metrics counts cache hits");
    assert!(
        hits >= 10,
        "the reader's repeated answers were cache hits: {hits}"
    );
}

#[test]
fn three_processes_behind_a_round_robin_answer_as_one() {
    let Some(admin) = std::env::var("HUB_TEST_DATABASE")
        .ok()
        .filter(|u| !u.trim().is_empty())
    else {
        eprintln!("skipped: HUB_TEST_DATABASE is not set (needs a PostgreSQL server)");
        return;
    };
    let name = format!("hub_test_several_{}", std::process::id());
    let throwaway = hub_store::postgres::ThrowawayDatabase::create(&admin, &name)
        .expect("creating the test database");
    let database = throwaway.url().to_string();

    // All start together on the empty database and race to migrate it; a migration
    // applied twice would fail on its CREATE TABLEs and end that process, which
    // `wait_healthy` reports.
    let mut servers: Vec<Server> = (0..3).map(|_| serve(&database)).collect();
    for s in &mut servers {
        wait_healthy(s);
    }
    let [one, two, three] = &servers[..] else {
        unreachable!()
    };

    add_editor(hub(&database));
    // A session opened on process 1 …
    let session = editor_session(one);
    let token = session["access_token"].as_str().unwrap().to_string();

    // … writes through 1; every process reads it (so a per-process response cache,
    // were there one, would now hold it); 3 updates it and every process answers the
    // update, in the document and in a list; 2 deletes it and no process finds it.
    let id = "SEVERAL-PROCESSES-1";
    let (status, body) = send(
        one,
        "POST",
        "/v1/Article",
        &token,
        Some(article(id, "Written through one")),
    );
    assert!(status == 200 || status == 201, "POST on 1: {status} {body}");
    let by_id = format!("/v1/Article/{id}");
    let search = "/v1/Article?searchfilter=through&fields=Shortname";
    for reader in &servers {
        let (status, doc) = get(reader, &by_id);
        assert_eq!(status, 200, "{} {doc}", reader.base);
        assert_eq!(doc["Detail"]["en"]["Title"], "Written through one");
        let (_, list) = get(reader, search);
        assert_eq!(list["TotalResults"], 1, "{list}");
    }
    let (status, body) = send(
        three,
        "PUT",
        &by_id,
        &token,
        Some(article(id, "Updated through three")),
    );
    assert!(status == 200 || status == 204, "PUT on 3: {status} {body}");
    for reader in &servers {
        let (_, doc) = get(reader, &by_id);
        assert_eq!(
            doc["Detail"]["en"]["Title"], "Updated through three",
            "{}",
            reader.base
        );
        let (_, list) = get(reader, search);
        assert_eq!(
            list["Items"][0]["Shortname"], "Updated through three",
            "{}: {list}",
            reader.base
        );
    }
    let (status, body) = send(two, "DELETE", &by_id, &token, None);
    assert!(
        status == 200 || status == 204,
        "DELETE on 2: {status} {body}"
    );
    for reader in &servers {
        assert_eq!(get(reader, &by_id).0, 404, "{}", reader.base);
        assert_eq!(get(reader, search).1["TotalResults"], 0, "{}", reader.base);
    }

    // Through the round-robin: every write is read back at once by the next process.
    let rr = RoundRobin {
        servers: &servers,
        next: AtomicUsize::new(0),
    };
    for n in 0..9 {
        let id = format!("RR-{n}");
        let (status, body) = send(
            rr.pick(),
            "POST",
            "/v1/Article",
            &token,
            Some(article(&id, &format!("Round robin {n}"))),
        );
        assert!(status == 200 || status == 201, "POST {id}: {status} {body}");
        let reader = rr.pick();
        let (status, doc) = get(reader, &format!("/v1/Article/{}", id.to_lowercase()));
        assert_eq!(status, 200, "{id} through {}: {doc}", reader.base);
        assert_eq!(doc["Detail"]["en"]["Title"], format!("Round robin {n}"));
    }
    assert_eq!(
        get(rr.pick(), "/v1/Article?searchfilter=round%20robin").1["TotalResults"],
        9
    );

    // Time series: the type and station through 2, records through 3 (one from a day
    // ago, one 25 months older: each gets a history partition of its own), latest and
    // history through 1 and 2.
    let (status, body) = send(
        two,
        "POST",
        "/v2/json/syncDataTypes",
        &token,
        Some(json!([{"name": "free", "description": "free places"}])),
    );
    assert!(status < 300, "syncDataTypes on 2: {status} {body}");
    let (status, body) = send(
        two,
        "POST",
        "/v2/json/syncStations/ParkingStation",
        &token,
        Some(
            json!([{"id": "P1", "name": "Park 1", "origin": "TEST", "latitude": 46.5, "longitude": 11.35}]),
        ),
    );
    assert!(status < 300, "syncStations on 2: {status} {body}");
    let record = |t: i64, v: i64| json!({"timestamp": t, "value": v, "period": 600});
    let now = chrono::Utc::now();
    let day = chrono::Duration::days(1);
    let (t_old, t_new) = (
        (now - day * 760).timestamp_millis(),
        (now - day).timestamp_millis(),
    );
    let history_path = format!(
        "/v2/flat/ParkingStation/free/{}/{}?select=mvalue",
        (now - day * 800).format("%Y-%m-%d"),
        (now + day).format("%Y-%m-%d")
    );
    let (status, body) = send(
        three,
        "POST",
        "/v2/json/pushRecords/ParkingStation",
        &token,
        Some(
            json!({"name": "(default)", "branch": {"P1": {"branch": {"free": {"data": [record(t_old, 11), record(t_new, 21)]}}}}}),
        ),
    );
    assert!(status < 300, "pushRecords on 3: {status} {body}");
    let latest_path = "/v2/flat/ParkingStation/free/latest?select=mvalue";
    let history_values = |server: &Server| -> Vec<Value> {
        let (status, history) = get(server, &history_path);
        assert_eq!(status, 200, "{history}");
        history["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["mvalue"].clone())
            .collect()
    };
    for reader in &servers {
        let (status, latest) = get(reader, latest_path);
        assert_eq!(status, 200, "{latest}");
        assert_eq!(latest["data"][0]["mvalue"], 21, "{}: {latest}", reader.base);
        assert_eq!(
            history_values(reader),
            [json!(11), json!(21)],
            "{}",
            reader.base
        );
    }
    // A newer record through 1: every process answers it as the latest value.
    let t_newest = (now - chrono::Duration::hours(1)).timestamp_millis();
    let (status, body) = send(
        one,
        "POST",
        "/v2/json/pushRecords/ParkingStation",
        &token,
        Some(
            json!({"name": "(default)", "branch": {"P1": {"branch": {"free": {"data": [record(t_newest, 31)]}}}}}),
        ),
    );
    assert!(status < 300, "pushRecords on 1: {status} {body}");
    for reader in &servers {
        let (_, latest) = get(reader, latest_path);
        assert_eq!(latest["data"][0]["mvalue"], 31, "{}: {latest}", reader.base);
        assert_eq!(
            history_values(reader),
            [json!(11), json!(21), json!(31)],
            "{}",
            reader.base
        );
    }

    // The refresh token from 1 works on 2; its successor's access token on 3.
    let refresh = session["refresh_token"].as_str().unwrap().to_string();
    let refresh_form = |t: &str| {
        [
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", t.to_string()),
            ("client_id", "hub-generic-client".to_string()),
        ]
    };
    let form = refresh_form(&refresh);
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, rotated) = token_request(two, &pairs);
    assert_eq!(status, 200, "refresh on 2: {rotated}");
    let rotated_token = rotated["access_token"].as_str().unwrap().to_string();
    let (status, body) = send(
        three,
        "POST",
        "/v1/Article",
        &rotated_token,
        Some(article("REFRESHED", "Refreshed")),
    );
    assert!(
        status == 200 || status == 201,
        "POST on 3 with the refreshed token: {status} {body}"
    );
    // Replaying the first refresh token on 3 revokes the session: its successor is
    // refused on 1.
    let (status, body) = token_request(three, &pairs);
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    let successor = refresh_form(rotated["refresh_token"].as_str().unwrap());
    let pairs: Vec<(&str, &str)> = successor.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, body) = token_request(one, &pairs);
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "the revocation holds on 1: {body}"
    );

    // Another process (this test, through the store) rotates the signing key: tokens
    // of the previous key stay valid everywhere, and the new key's tokens are accepted
    // by processes that have not read it yet (an unknown key id makes them look).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = hub_store::Store::open_postgres(&database, None).unwrap();
    let auth = hub_auth::AuthService::new(
        store.auth(),
        hub_auth::AuthConfig {
            auth_url: ISSUER_BASE.into(),
            ..Default::default()
        },
    );
    rt.block_on(auth.rotate_signing_key())
        .expect("rotating the signing key");
    let form = [
        ("grant_type".to_string(), "password".to_string()),
        ("client_id".into(), "hub-generic-client".into()),
        ("username".into(), "editor".into()),
        ("password".into(), PASSWORD.into()),
    ];
    let new_key_token = rt
        .block_on(auth.token(&form, None))
        .expect("a token signed with the new key")
        .access_token;
    for (n, server) in servers.iter().enumerate() {
        for (which, t) in [("old key", &rotated_token), ("new key", &new_key_token)] {
            let id = format!("KEYS-{n}-{}", which.replace(' ', "-"));
            let (status, body) = send(server, "POST", "/v1/Article", t, Some(article(&id, "Keys")));
            assert!(
                status == 200 || status == 201,
                "{which} token on {}: {status} {body}",
                server.base
            );
        }
    }

    // A fourth process configured to keep twelve months: its first upkeep pass (beside
    // the server, right after start) drops the old month for every process.
    let mut keeper = serve_with(&database, &["--history-retention-months", "12"]);
    wait_healthy(&mut keeper);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let values = history_values(three);
        if values == [json!(21), json!(31)] {
            break;
        }
        assert_eq!(
            values,
            [json!(11), json!(21), json!(31)],
            "only the old month may go"
        );
        assert!(
            Instant::now() < deadline,
            "the retention did not drop the old month: {values:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    for reader in &servers {
        assert_eq!(
            history_values(reader),
            [json!(21), json!(31)],
            "{}",
            reader.base
        );
        assert_eq!(
            get(reader, latest_path).1["data"][0]["mvalue"],
            31,
            "{}",
            reader.base
        );
    }
}
