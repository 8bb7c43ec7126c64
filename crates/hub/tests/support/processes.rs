//! Real `hub serve` processes for the tests that need more than the in-process router
//! (several processes on one database, PostgreSQL topologies): started on a free
//! loopback port with `--no-demo`, killed when dropped.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The issuer and public base URL every test process is started with, so tokens and
/// links agree between processes whatever port each listens on.
pub const PUBLIC_BASE: &str = "http://hub.test";

pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The `hub` binary with the given `HUB_*` settings (and none from the environment's
/// `HUB_DATA`).
pub fn hub(env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hub"));
    cmd.env_remove("HUB_DATA").env("HUB_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Adds a user with `hub user add NAME --password-stdin --role …` run by `hub`.
pub fn add_user(mut hub: Command, name: &str, password: &str, roles: &[&str]) {
    use std::io::Write;
    hub.args(["user", "add", name, "--password-stdin"]);
    for role in roles {
        hub.args(["--role", role]);
    }
    let mut add = hub
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    add.stdin
        .take()
        .unwrap()
        .write_all(format!("{password}\n").as_bytes())
        .unwrap();
    assert!(add.wait().unwrap().success(), "hub user add {name} failed");
}

/// `hub serve --no-demo` with `env` and `extra` flags on a free port; not yet waited for
/// (see [`Server::wait_healthy`]), so several can start at once.
pub fn spawn_serve(env: &[(&str, &str)], extra: &[&str]) -> Server {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let child = hub(env)
        .args([
            "serve",
            "--no-demo",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .args(extra)
        .args(["--auth-url", PUBLIC_BASE, "--content-base-url", PUBLIC_BASE])
        .stdout(Stdio::null())
        .spawn()
        .expect("starting hub serve");
    Server { child, base }
}

impl Server {
    /// Waits until `/health` answers 200 (at most a minute); a process that exits first
    /// fails the test with its status.
    pub fn wait_healthy(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = ureq::get(&format!("{}/health", self.base)).call() {
                if r.status() == 200 {
                    return;
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("hub serve exited early with {status}");
            }
            assert!(
                Instant::now() < deadline,
                "{} did not become healthy",
                self.base
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A response body as JSON (`null` when it is not).
pub fn json_of(r: ureq::Response) -> Value {
    r.into_string()
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}
