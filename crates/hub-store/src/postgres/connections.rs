//! How the backend's connections are made: the URL read into tokio-postgres'
//! configuration with its TLS settings, the pools, and what each new pooled connection
//! runs once.
//!
//! Owns: connection settings and pool construction. Must not: run statements for
//! requests ([`super::session`]) or hold the backend's state ([`super::PgBackend`]).

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};

use super::{redact, tls, PgSettings};
use crate::{Result, StoreError};

/// Longest wait for a connection: a database that is down or restarting must turn into
/// a quick 503, never a request that hangs.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Parses `url` into tokio-postgres' configuration and the TLS connector its
/// `sslmode` / `sslrootcert` ask for (see [`tls`]).
pub(super) fn connection_config(url: &str) -> Result<(tokio_postgres::Config, tls::TlsConnector)> {
    let bad = |e: String| StoreError::Config(format!("{}: {e}", redact(url)));
    let (rest, params) = tls::split_tls_params(url).map_err(bad)?;
    let mut config: tokio_postgres::Config = rest
        .parse()
        .map_err(|e: tokio_postgres::Error| bad(e.to_string()))?;
    if rest.starts_with("postgres://") || rest.starts_with("postgresql://") {
        config.ssl_mode(params.wire_mode());
    }
    let connector = tls::TlsConnector::new(&params).map_err(bad)?;
    Ok((config, connector))
}

/// What each new pooled connection runs once (never per request), or `None` behind a
/// transaction-mode pooler, where Hub keeps no session state (docs/deployment.md says
/// what to set on the database instead).
///
/// - JIT compiles every plan costed above `jit_above_cost` on each execution: tens of
///   milliseconds for statements that run in a few (a polygon page at scale 10 spent
///   12–60 ms compiling).
/// - With generic plans a prepared statement is planned once. PostgreSQL's own choice
///   re-plans Hub's list pages on every execution (a generic plan must assume `LIMIT $n`
///   keeps a tenth of the rows, so it looks far costlier than a custom one): planning
///   took 0.08–0.18 ms against 0.03–0.1 ms of execution. On the partitioned measurement
///   history it also re-planned every partition's pruning for each 7-day request, where
///   a generic plan prunes at execution.
/// - A random page read is costed as on a solid-state disk, unless the operator set the
///   cost ([`RANDOM_PAGE_COST`]).
pub(super) fn session_sql(settings: &PgSettings) -> Option<String> {
    if settings.transaction_pooler {
        return None;
    }
    let mut sql = String::from("SET jit = off");
    if settings.generic_plans {
        sql.push_str("; SET plan_cache_mode = force_generic_plan");
    }
    sql.push_str("; ");
    sql.push_str(RANDOM_PAGE_COST);
    Some(sql)
}

/// `random_page_cost` 1.1, PostgreSQL's advice for solid-state disks and data held in
/// memory, where its default (4) is set nowhere else: a value from the server's
/// configuration, the database or the role is the operator's and stays. With the
/// default, latest values of 1,000 stations among 250,000 series of 50 station types
/// read all 50,000 series of the data type and hash-joined them to the stations (19 ms
/// of the server's time); costed for memory, the stations' own series are looked up
/// through the index (4 ms), so the answer costs what it holds, not what is stored.
const RANDOM_PAGE_COST: &str = "SELECT set_config('random_page_cost', '1.1', false) \
     FROM pg_settings WHERE name = 'random_page_cost' AND source = 'default'";

/// A pool of `size` connections to `url`, made on `rt`; each new connection runs
/// `session_sql` once (see [`session_sql`]).
pub(super) fn pool(
    url: &str,
    size: usize,
    session_sql: Option<String>,
    rt: &tokio::runtime::Handle,
) -> Result<Pool> {
    let (mut config, connector) = connection_config(url)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let manager = Manager::from_config(
        config,
        connector,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let _guard = rt.enter();
    let mut builder = Pool::builder(manager);
    if let Some(sql) = session_sql {
        builder = builder.post_create(deadpool_postgres::Hook::async_fn(move |client, _| {
            let sql = sql.clone();
            Box::pin(async move {
                client
                    .batch_execute(&sql)
                    .await
                    .map_err(deadpool_postgres::HookError::Backend)
            })
        }));
    }
    builder
        .max_size(size.max(1))
        // The connection used last is handed out first: a few connections stay warm
        // (their prepared statements, generic plans and the server process's caches)
        // instead of every request taking the one idle longest, which made each of
        // the pool's connections prepare and plan every statement in turn.
        .queue_mode(deadpool_postgres::QueueMode::Lifo)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(Some(CONNECT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| StoreError::Config(e.to_string()))
}
