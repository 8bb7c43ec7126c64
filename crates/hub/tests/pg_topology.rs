//! `hub serve` on real PostgreSQL topologies from `scripts/pg-topology.sh` (a primary, a
//! streaming replica made with `pg_basebackup -R`, PgBouncer in transaction mode):
//! - through PgBouncer with `--database-pooler transaction` and reads on the replica,
//!   a write followed by a read from the same process is read back, every time; reads
//!   go on when the replica stops; a second process falls back to the primary when the
//!   replica's lag passes the bound;
//! - under a bounded load, a fast restart of the primary and then a failover (the
//!   replica promoted, the old primary stopped) give 503 + `Retry-After` for writes
//!   while no primary answers — no 500, no hang — reads keep being served, Hub recovers
//!   by itself through a multi-host URL, and every acknowledged write is readable.
//!
//! Runs in the PostgreSQL pass (`HUB_TEST_DATABASE` set); needs PostgreSQL 15, PostGIS
//! and PgBouncer, and is skipped with a reason when they are missing unless
//! `HUB_REQUIRE_TOOLS=1` or `HUB_REQUIRE_POSTGRES=1`.

mod support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/pg-topology.sh");

/// A running topology; stopped (everything the script started) when dropped.
struct Topology {
    servers: Scripted,
    urls: HashMap<String, String>,
}

impl Topology {
    fn dir(&self) -> PathBuf {
        self.servers.dir()
    }

    fn url(&self, key: &str) -> &str {
        &self.urls[key]
    }

    fn port(&self, server: &str) -> String {
        std::fs::read_to_string(self.dir().join(format!("{server}.port")))
            .unwrap()
            .trim()
            .to_string()
    }

    fn run(&self, command: &str) {
        self.servers.run(command)
    }

    /// A statement on one server of the topology (`primary` or `replica`), through psql.
    fn psql(&self, server: &str, sql: &str) -> String {
        self.psql_in(server, "postgres", sql)
    }

    fn psql_in(&self, server: &str, database: &str, sql: &str) -> String {
        let url = format!(
            "postgres://postgres@127.0.0.1:{}/{database}",
            self.port(server)
        );
        let out = Command::new("psql")
            .args([&url, "-XAtq", "-c", sql])
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

/// Starts a topology, or says why it cannot (skip), or fails when tools are required.
fn topology() -> Option<Topology> {
    let (servers, printed) = scripted::start(SCRIPT, "start")?;
    let mut topology = Topology {
        servers,
        urls: HashMap::new(),
    };
    for line in printed.lines() {
        if let Some((key, url)) = line.split_once('=') {
            topology.urls.insert(key.to_string(), url.to_string());
        }
    }
    Some(topology)
}

/// `url` with database `name` (the script's URLs name `postgres`).
fn with_database(url: &str, name: &str) -> String {
    hub_store::postgres::url_with_database(url, name)
}

use support::processes::{add_user, hub, json_of, spawn_serve, Server};
use support::scripted::{self, Scripted};

fn serve(env: &[(&str, &str)]) -> Server {
    let mut server = spawn_serve(env, &[]);
    server.wait_healthy();
    server
}

/// An editor account made with the CLI, and a token for it from `server`.
fn editor_token(env: &[(&str, &str)], server: &Server) -> String {
    add_user(
        hub(env),
        "editor",
        "correct horse battery",
        &["Article_Create", "Article_Update"],
    );
    let token: Value = ureq::post(&format!(
        "{}/auth/realms/hub/protocol/openid-connect/token",
        server.base
    ))
    .send_form(&[
        ("grant_type", "password"),
        ("client_id", "hub-generic-client"),
        ("username", "editor"),
        ("password", "correct horse battery"),
    ])
    .map(json_of)
    .expect("password grant");
    token["access_token"].as_str().expect("a token").to_string()
}

fn article(id: &str) -> Value {
    json!({
        "Id": id,
        "Active": true,
        "Shortname": id,
        "HasLanguage": ["en"],
        "Detail": {"en": {"Title": id, "Language": "en"}}
    })
}

/// A request's status and its `Retry-After`; `None` when it failed without an answer
/// (refused, timed out).
fn call(request: ureq::Request, body: Option<&Value>) -> Option<(u16, bool)> {
    let result = match body {
        Some(b) => request
            .set("Content-Type", "application/json")
            .send_string(&b.to_string()),
        None => request.call(),
    };
    match result {
        Ok(r) => Some((r.status(), r.header("Retry-After").is_some())),
        Err(ureq::Error::Status(code, r)) => Some((code, r.header("Retry-After").is_some())),
        Err(_) => None,
    }
}

fn get_status(agent: &ureq::Agent, server: &Server, path: &str) -> Option<u16> {
    call(agent.get(&format!("{}{path}", server.base)), None).map(|(s, _)| s)
}

fn post_article(
    agent: &ureq::Agent,
    server: &Server,
    token: &str,
    id: &str,
) -> Option<(u16, bool)> {
    let request = agent
        .post(&format!("{}/v1/Article", server.base))
        .set("Authorization", &format!("Bearer {token}"));
    call(request, Some(&article(id)))
}

fn metric(server: &Server, name: &str) -> Option<f64> {
    let text = ureq::get(&format!("{}/metrics", server.base))
        .call()
        .ok()?
        .into_string()
        .ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

fn wait_for(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn agent() -> ureq::Agent {
    // A request still unanswered after this long counts as a hang.
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(20))
        .build()
}

#[test]
fn through_pgbouncer_with_a_streaming_replica_a_client_reads_its_writes() {
    let Some(topology) = topology() else { return };
    let admin = topology.url("PRIMARY_URL");
    hub_store::postgres::create_database(admin, "hub_topology", true).unwrap();
    let pooled = with_database(topology.url("POOLER_URL"), "hub_topology");
    let replica = with_database(topology.url("REPLICA_URL"), "hub_topology");
    let env = [
        ("HUB_DATABASE", pooled.as_str()),
        ("HUB_DATABASE_POOLER", "transaction"),
        ("HUB_DATABASE_REPLICA", replica.as_str()),
        ("HUB_DATABASE_REPLICA_MAX_LAG_MS", "1000"),
    ];
    let a = serve(&env);
    let token = editor_token(&env, &a);
    let http = agent();

    // Write then read at once, many times: the replica may not have replayed the write
    // yet, and the read must see it anyway.
    for n in 0..40 {
        let id = format!("RYW-{n}");
        assert_eq!(
            post_article(&http, &a, &token, &id).map(|r| r.0),
            Some(201),
            "POST {id}"
        );
        assert_eq!(
            get_status(&http, &a, &format!("/v1/Article/{id}")),
            Some(200),
            "read after write {id}"
        );
        let (status, list) = match http
            .get(&format!("{}/v1/Article?pagesize=100", a.base))
            .call()
        {
            Ok(r) => (r.status(), json_of(r)),
            Err(e) => panic!("list: {e}"),
        };
        assert_eq!(status, 200);
        assert_eq!(
            list["TotalResults"],
            n + 1,
            "the list counts every write so far"
        );
    }
    // Once the replica has replayed everything, reads are served there.
    wait_for("reads on the replica", Duration::from_secs(10), || {
        metric(&a, "hub_postgres_replica_serving_reads") == Some(1.0)
    });
    assert!(metric(&a, "hub_postgres_replica_lag_seconds").is_some());
    // The replica's own statistics count the reads (they reach it within seconds).
    let content_scans = || {
        topology
            .psql_in(
                "replica",
                "hub_topology",
                "SELECT coalesce(sum(coalesce(idx_scan, 0) + coalesce(seq_scan, 0)), 0) \
                 FROM pg_stat_user_tables WHERE relname = 'content'",
            )
            .parse::<i64>()
            .unwrap()
    };
    let before = content_scans();
    wait_for(
        "reads counted on the replica",
        Duration::from_secs(20),
        || {
            assert_eq!(get_status(&http, &a, "/v1/Article/RYW-0"), Some(200));
            content_scans() > before
        },
    );

    // A second process that writes nothing reads from the replica; with replay paused
    // it falls back to the primary once the lag passes the bound, and sees new writes.
    let b = serve(&env);
    topology.psql("replica", "SELECT pg_wal_replay_pause()");
    assert_eq!(
        post_article(&http, &a, &token, "PAUSED-1").map(|r| r.0),
        Some(201)
    );
    wait_for(
        "the lag bound to send B's reads to the primary",
        Duration::from_secs(10),
        || get_status(&http, &b, "/v1/Article/PAUSED-1") == Some(200),
    );
    wait_for("B's replica gauges", Duration::from_secs(5), || {
        metric(&b, "hub_postgres_replica_serving_reads") == Some(0.0)
            && metric(&b, "hub_postgres_replica_lag_seconds").is_some_and(|lag| lag > 1.0)
    });
    topology.psql("replica", "SELECT pg_wal_replay_resume()");
    wait_for("B back on the replica", Duration::from_secs(10), || {
        metric(&b, "hub_postgres_replica_serving_reads") == Some(1.0)
    });

    // The replica stops: reads go on from the primary.
    topology.run("stop-replica");
    for n in 0..5 {
        assert_eq!(
            get_status(&http, &a, &format!("/v1/Article/RYW-{n}")),
            Some(200)
        );
        assert_eq!(
            get_status(&http, &b, &format!("/v1/Article/RYW-{n}")),
            Some(200)
        );
    }
    assert_eq!(
        post_article(&http, &a, &token, "NO-REPLICA").map(|r| r.0),
        Some(201)
    );
    assert_eq!(get_status(&http, &b, "/v1/Article/NO-REPLICA"), Some(200));
    assert_eq!(metric(&a, "hub_postgres_replica_reachable"), Some(0.0));
}

/// One request of the load: when it ended (seconds since the start), what, and how.
#[derive(Clone, Debug)]
struct Outcome {
    at: f64,
    write: bool,
    /// `None`: no answer (refused, or no answer within the agent's timeout).
    status: Option<u16>,
    retry_after: bool,
    id: Option<String>,
}

/// The span (first to last) of 503s for writes between `from` and `to` seconds.
fn unavailable_span(outcomes: &[Outcome], from: f64, to: f64) -> (f64, usize) {
    let spans: Vec<f64> = outcomes
        .iter()
        .filter(|o| o.write && o.status == Some(503) && o.at >= from && o.at < to)
        .map(|o| o.at)
        .collect();
    match (spans.first(), spans.last()) {
        (Some(first), Some(last)) => (last - first, spans.len()),
        _ => (0.0, 0),
    }
}

#[test]
fn a_primary_restart_and_a_failover_under_load_lose_no_acknowledged_write() {
    let Some(topology) = topology() else { return };
    hub_store::postgres::create_database(topology.url("PRIMARY_URL"), "hub_failover", true)
        .unwrap();
    let (primary, replica) = (topology.port("primary"), topology.port("replica"));
    // Both servers, the writable one wins: after the failover that is the former replica.
    let multi_host = format!(
        "postgres://postgres@127.0.0.1:{primary},127.0.0.1:{replica}/hub_failover?target_session_attrs=read-write"
    );
    let replica_url = format!("postgres://postgres@127.0.0.1:{replica}/hub_failover");
    let env = [
        ("HUB_DATABASE", multi_host.as_str()),
        ("HUB_DATABASE_REPLICA", replica_url.as_str()),
    ];
    let server = Arc::new(serve(&env));
    let token = Arc::new(editor_token(&env, &server));
    assert_eq!(
        post_article(&agent(), &server, &token, "SEED").map(|r| r.0),
        Some(201)
    );

    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes = Arc::new(Mutex::new(Vec::<Outcome>::new()));
    let mut workers = Vec::new();
    for worker in 0..4 {
        let (server, token, stop, outcomes) = (
            server.clone(),
            token.clone(),
            stop.clone(),
            outcomes.clone(),
        );
        workers.push(std::thread::spawn(move || {
            let http = agent();
            let write = worker < 2;
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let (id, answer) = if write {
                    let id = format!("LOAD-{worker}-{n}");
                    let answer = post_article(&http, &server, &token, &id);
                    (Some(id), answer)
                } else {
                    let url = format!("{}/v1/Article/SEED", server.base);
                    (None, call(http.get(&url), None))
                };
                n += 1;
                outcomes.lock().unwrap().push(Outcome {
                    at: start.elapsed().as_secs_f64(),
                    write,
                    status: answer.map(|a| a.0),
                    retry_after: answer.is_some_and(|a| a.1),
                    id,
                });
                std::thread::sleep(Duration::from_millis(20));
            }
        }));
    }
    let phase = |seconds: u64| std::thread::sleep(Duration::from_secs(seconds));
    phase(2);
    let restart_at = start.elapsed().as_secs_f64();
    topology.run("restart-primary");
    phase(4);
    let failover_at = start.elapsed().as_secs_f64();
    topology.run("promote");
    phase(6);
    let end = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let outcomes = outcomes.lock().unwrap().clone();

    let unanswered: Vec<_> = outcomes.iter().filter(|o| o.status.is_none()).collect();
    assert!(
        unanswered.is_empty(),
        "requests without an answer (hangs): {unanswered:?}"
    );
    let odd: Vec<_> = outcomes
        .iter()
        .filter(|o| !matches!(o.status, Some(200 | 201 | 503)))
        .collect();
    assert!(odd.is_empty(), "answers other than 2xx or 503: {odd:?}");
    let no_retry_after: Vec<_> = outcomes
        .iter()
        .filter(|o| o.status == Some(503) && !o.retry_after)
        .collect();
    assert!(
        no_retry_after.is_empty(),
        "503 without Retry-After: {no_retry_after:?}"
    );
    let failed_reads: Vec<_> = outcomes
        .iter()
        .filter(|o| !o.write && o.status != Some(200) && o.at < failover_at)
        .collect();
    assert!(
        failed_reads.is_empty(),
        "reads failed while the replica was up during the primary's restart: {failed_reads:?}"
    );
    // Recovered by itself: the last second of the load is all successes, writes too.
    let tail: Vec<_> = outcomes.iter().filter(|o| o.at > end - 1.0).collect();
    assert!(tail.iter().any(|o| o.write), "writes ran to the end");
    assert!(
        tail.iter().all(|o| matches!(o.status, Some(200 | 201))),
        "not recovered at the end: {tail:?}"
    );
    // No acknowledged write lost: each is readable from the promoted primary.
    let http = agent();
    let acknowledged: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.write && o.status == Some(201))
        .filter_map(|o| o.id.as_deref())
        .collect();
    for id in &acknowledged {
        assert_eq!(
            get_status(&http, &server, &format!("/v1/Article/{id}")),
            Some(200),
            "acknowledged write {id} is lost"
        );
    }
    assert_eq!(
        topology.psql("replica", "SELECT pg_is_in_recovery()"),
        "f",
        "promoted"
    );

    let count = |write: bool, ok: bool| {
        outcomes
            .iter()
            .filter(|o| o.write == write && matches!(o.status, Some(200 | 201)) == ok)
            .count()
    };
    let (restart_span, restart_503) = unavailable_span(&outcomes, restart_at, failover_at);
    let (failover_span, failover_503) = unavailable_span(&outcomes, failover_at, end);
    eprintln!(
        "load over {end:.1} s: writes {} ok / {} 503, reads {} ok / {} 503; \
         primary restart: writes answered 503 for {restart_span:.2} s ({restart_503} requests); \
         failover: writes answered 503 for {failover_span:.2} s ({failover_503} requests); \
         {} acknowledged writes all readable afterwards",
        count(true, true),
        count(true, false),
        count(false, true),
        count(false, false),
        acknowledged.len()
    );
}
