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

/// Runs `statements` one after the other on a connection of their own to `admin_url`.
fn run_admin(admin_url: &str, statements: &[String]) -> Result<()> {
    let (admin, connector) = connection_config(admin_url)?;
    let run = async {
        let (client, connection) = admin.connect(connector).await?;
        let driver = tokio::spawn(connection);
        for statement in statements {
            client.batch_execute(statement).await?;
        }
        drop(client);
        let _ = driver.await;
        Ok::<_, tokio_postgres::Error>(())
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
