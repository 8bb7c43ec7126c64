//! Throwaway PostgreSQL servers started by the project's scripts
//! (`scripts/pg-throwaway.sh start-tls`, `scripts/pg-topology.sh start`) for the tests
//! of the PostgreSQL pass: they run only when `HUB_TEST_DATABASE` is set, skip with the
//! script's reason when a tool is missing (exit 3), and fail instead under
//! `HUB_REQUIRE_TOOLS=1` or `HUB_REQUIRE_POSTGRES=1`. Whatever a script started is
//! stopped when the handle is dropped.

use std::path::PathBuf;
use std::process::Command;

/// A script's servers in a temporary directory.
pub struct Scripted {
    root: tempfile::TempDir,
    script: &'static str,
}

impl Scripted {
    /// The temporary directory (the script's directory is inside it).
    pub fn root(&self) -> &std::path::Path {
        self.root.path()
    }

    /// The directory the script was started on (its `DIR` argument).
    pub fn dir(&self) -> PathBuf {
        self.root.path().join("servers")
    }

    /// `script COMMAND DIR`, which must succeed.
    pub fn run(&self, command: &str) {
        let status = Command::new("bash")
            .args([self.script, command])
            .arg(self.dir())
            .status()
            .unwrap();
        assert!(status.success(), "{} {command} failed", self.script);
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .args([self.script, "stop"])
            .arg(self.dir())
            .status();
    }
}

/// Whether a missing tool fails the test (CI) rather than skipping it.
pub fn required() -> bool {
    ["HUB_REQUIRE_TOOLS", "HUB_REQUIRE_POSTGRES"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|v| v == "1"))
}

/// `script command DIR` in a fresh temporary directory: the handle and what the script
/// printed, or `None` (after saying why) when the test does not run here.
pub fn start(script: &'static str, command: &str) -> Option<(Scripted, String)> {
    if std::env::var("HUB_TEST_DATABASE").map_or(true, |u| u.trim().is_empty()) {
        eprintln!("skipped: runs in the PostgreSQL pass (HUB_TEST_DATABASE is not set)");
        return None;
    }
    let root = tempfile::tempdir().unwrap();
    // The servers may run as the `postgres` user, which must reach the directory.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let scripted = Scripted { root, script };
    let out = Command::new("bash")
        .args([script, command])
        .arg(scripted.dir())
        .output()
        .expect("bash runs");
    let reason = String::from_utf8_lossy(&out.stderr).to_string();
    match out.status.code() {
        Some(0) => Some((scripted, String::from_utf8_lossy(&out.stdout).to_string())),
        Some(3) if !required() => {
            eprintln!("skipped: {}", reason.trim());
            None
        }
        _ => panic!("{script} {command} failed: {reason}"),
    }
}
