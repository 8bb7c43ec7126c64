//! Making and removing whole databases through a server's admin URL: the fresh database
//! of a test or a `hub migrate` target, and [`ThrowawayDatabase`], which is dropped with
//! its guard. Statements here name databases, never client text: every name is checked
//! to be a plain identifier first.

use super::connection_config;
use crate::error::{Result, StoreError};

/// Creates database `name` through the server at `admin_url` (for tests and `hub migrate`
/// targets), dropping an existing one first when `replace` is set. `name` must be a plain
/// identifier (letters, digits, underscores).
pub fn create_database(admin_url: &str, name: &str, replace: bool) -> Result<String> {
    let name = plain_name(name)?;
    let mut statements = Vec::new();
    if replace {
        statements.push(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    }
    statements.push(format!(
        "CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
    ));
    run_admin(admin_url, &statements)?;
    Ok(url_with_database(admin_url, name))
}

/// Drops database `name` (if it exists) through the server at `admin_url`, closing the
/// connections other clients still hold to it.
pub fn drop_database(admin_url: &str, name: &str) -> Result<()> {
    let name = plain_name(name)?;
    run_admin(
        admin_url,
        &[format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")],
    )
}

/// A database made for one test and dropped when this guard is. A test run makes
/// hundreds of databases, and one holding the demo takes about 290 MB: kept until the
/// end of the run they filled a CI machine's disk.
pub struct ThrowawayDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl ThrowawayDatabase {
    /// Creates database `name` at `admin_url`, replacing a leftover of that name.
    pub fn create(admin_url: &str, name: &str) -> Result<ThrowawayDatabase> {
        let url = create_database(admin_url, name, true)?;
        Ok(ThrowawayDatabase {
            admin_url: admin_url.to_string(),
            name: name.to_string(),
            url,
        })
    }

    /// Creates database `name` at `admin_url` as a copy of database `template`, replacing
    /// a leftover of that name. PostgreSQL copies only a database nobody is connected to:
    /// connections still open to `template` (a dropped pool's, or a pooler's idle ones)
    /// are closed first, and the copy is tried again while they go away.
    pub fn create_from(admin_url: &str, name: &str, template: &str) -> Result<ThrowawayDatabase> {
        let name = plain_name(name)?;
        let template = plain_name(template)?;
        // Both names are plain (letters, digits, `_`), so they can stand in the text.
        let statements = [
            format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = '{template}' AND pid <> pg_backend_pid()"
            ),
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name} TEMPLATE {template}"),
        ];
        let mut attempts = 0;
        loop {
            match run_admin(admin_url, &statements) {
                Ok(()) => break,
                Err(StoreError::Postgres(e))
                    if e.code() == Some(&tokio_postgres::error::SqlState::OBJECT_IN_USE)
                        && attempts < 50 =>
                {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(ThrowawayDatabase {
            admin_url: admin_url.to_string(),
            name: name.to_string(),
            url: url_with_database(admin_url, name),
        })
    }

    /// The database's URL (the admin URL with its database name replaced).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for ThrowawayDatabase {
    fn drop(&mut self) {
        // A drop cannot fail: a database left behind is reported, not fatal.
        if let Err(e) = drop_database(&self.admin_url, &self.name) {
            eprintln!("could not drop the test database {}: {e}", self.name);
        }
    }
}

fn plain_name(name: &str) -> Result<&str> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(StoreError::Config(format!(
            "not a plain database name: {name:?}"
        )));
    }
    Ok(name)
}

/// Drops the databases that test stores of processes gone from this machine left at
/// `admin_url`, and returns their names. A suite's shared test app lives in a static,
/// which is never dropped, so its database (`hub_test_<pid>_<n>`, see
/// [`crate::Store::open_for_tests`]) outlives the process: about 90 per run, 4 GB, until
/// a developer's disk filled. A database is a leftover when its process is not running
/// here and nobody is connected to it; so this assumes no other machine runs tests
/// against the same server at the same time. Without `/proc` nothing is dropped.
pub fn sweep_test_databases(admin_url: &str) -> Result<Vec<String>> {
    if !std::path::Path::new("/proc/self").exists() {
        return Ok(Vec::new());
    }
    let unused = with_admin(admin_url, |client| async move {
        let rows = client
            .query(
                "SELECT d.datname FROM pg_database d WHERE d.datname LIKE 'hub\\_test\\_%' \
                 AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)",
                &[],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>())
    })?;
    let own = std::process::id();
    let gone = |pid: u32| pid != own && !std::path::Path::new(&format!("/proc/{pid}")).exists();
    // Several test processes sweep at once: a database another one dropped first is
    // not an error, and one that could not be dropped is left for the next sweep.
    Ok(unused
        .into_iter()
        .filter(|name| test_database_process(name).is_some_and(gone))
        .filter(|name| drop_database(admin_url, name).is_ok())
        .collect())
}

/// The process that named a test store's database `hub_test_<pid>_<n>`, or a test pass's
/// snapshot `hub_test_<pid>_<label>` (see [`crate::test_snapshot`]).
fn test_database_process(name: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix("hub_test_")?.split_once('_')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let label = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    };
    if !digits(pid) || !label(n) {
        return None;
    }
    pid.parse().ok()
}

/// Runs `statements` one after the other on a connection of their own to `admin_url`.
fn run_admin(admin_url: &str, statements: &[String]) -> Result<()> {
    with_admin(admin_url, |client| async move {
        for statement in statements {
            client.batch_execute(statement).await?;
        }
        Ok(())
    })
}

/// Runs `work` on a connection of its own to `admin_url`.
fn with_admin<T, F, Fut>(admin_url: &str, work: F) -> Result<T>
where
    T: Send,
    F: FnOnce(tokio_postgres::Client) -> Fut + Send,
    Fut: std::future::Future<Output = std::result::Result<T, tokio_postgres::Error>> + Send,
{
    let (admin, connector) = connection_config(admin_url)?;
    let run = async {
        let (client, connection) = admin.connect(connector).await?;
        let driver = tokio::spawn(connection);
        // `work` owns the client: the connection ends once it is done with it.
        let result = work(client).await;
        let _ = driver.await;
        result
    };
    // On a thread of its own: the caller may be inside another runtime, which must
    // neither block on nor drop a runtime.
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| StoreError::Task(e.to_string()))?;
            rt.block_on(run).map_err(StoreError::from)
        })
        .join()
    })
    .map_err(|_| StoreError::Task("a database statement panicked".into()))?
}

/// `url` with its database name replaced by `name`.
pub fn url_with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let after_scheme = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[after_scheme..].find('/') {
        Some(slash) => &base[..after_scheme + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::test_database_process;

    #[test]
    fn only_a_test_stores_database_names_its_process() {
        let table: &[(&str, Option<u32>)] = &[
            ("hub_test_4242_0", Some(4242)),
            ("hub_test_4242_17", Some(4242)),
            ("hub_test_4242_schema", Some(4242)),
            ("hub_test_4242_demo1750000000", Some(4242)),
            ("hub_test_4242_Demo", None),
            ("hub_test_guard_4242", None),
            ("hub_test_race_4242", None),
            ("hub_test_4242_", None),
            ("hub_test__3", None),
            ("hub_test_4242_3_x", None),
            ("hub_test_99999999999_1", None),
            ("hub_bench", None),
            ("s10", None),
        ];
        for (name, pid) in table {
            assert_eq!(test_database_process(name), *pid, "{name}");
        }
    }
}
