//! The server's configuration, declared once: each field of [`Config`] is at the same
//! time a command-line flag, a `HUB_*` environment variable (clap derive) and a key of
//! the TOML file (serde), with its default in the `#[arg]` attribute. [`Config::resolve`]
//! layers them: flag > environment > file > default.
//!
//! Owns the names, defaults and precedence of settings. Must not: interpret a setting
//! beyond turning it into an API crate's own config (`auth_config`, the base URLs).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser};
use serde::{Deserialize, Serialize};

/// Everything `hub` can be told. The field name is the file key; `--field-name` and
/// `HUB_FIELD_NAME` are the flag and variable unless the attribute says otherwise.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to serve on.
    #[arg(long, env = "HUB_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Directory of the embedded SQLite store.
    #[arg(long, env = "HUB_DATA", default_value = "hub-data")]
    pub data: PathBuf,
    /// PostgreSQL URL (postgres://…) instead of the embedded store.
    #[arg(long, env = "HUB_DATABASE")]
    pub database: Option<String>,
    /// PostgreSQL URL of a read replica (streaming replication of `database`): reads go
    /// there, writes and migrations to `database`.
    #[arg(long, env = "HUB_DATABASE_REPLICA", requires = "database")]
    pub database_replica: Option<String>,
    /// Months after the current one whose `ts_history` partitions PostgreSQL gets ahead
    /// of time (at start and hourly; at most 120). A push into a month without one makes
    /// it on the spot.
    #[arg(long, env = "HUB_HISTORY_PARTITIONS_AHEAD", default_value = "3")]
    pub history_partitions_ahead: u32,
    /// Months of measurement history kept before the current month (0 = everything);
    /// older months are dropped (PostgreSQL partitions) or deleted (SQLite) at start and
    /// hourly. Latest values stay.
    #[arg(long, env = "HUB_HISTORY_RETENTION_MONTHS", default_value = "0")]
    pub history_retention_months: u32,
    /// Reads fall back from the replica to the primary while the replica's replay lag
    /// exceeds this many milliseconds (`/metrics`: `hub_postgres_replica_lag_seconds`).
    #[arg(long, env = "HUB_DATABASE_REPLICA_MAX_LAG_MS", default_value = "5000")]
    pub database_replica_max_lag_ms: u64,
    /// What stands between Hub and PostgreSQL: `none` (direct, or a session-mode
    /// pooler) or `transaction` (PgBouncer `pool_mode = transaction`: Hub then sends
    /// unnamed statements only and keeps no session state).
    #[arg(long, env = "HUB_DATABASE_POOLER", value_enum, default_value = "none")]
    pub database_pooler: DatabasePooler,
    /// How PostgreSQL plans Hub's prepared statements: `generic` (planned once per
    /// connection for any values) or `auto` (PostgreSQL's choice, which re-plans list
    /// pages and measurement history on every request). No effect behind a
    /// transaction-mode pooler.
    #[arg(
        long,
        env = "HUB_DATABASE_PLANS",
        value_enum,
        default_value = "generic"
    )]
    pub database_plans: DatabasePlans,
    /// Connections each PostgreSQL pool (primary, replica) of this process may open.
    #[arg(long, env = "HUB_DATABASE_POOL_SIZE", default_value = "16",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub database_pool_size: u32,
    /// Connections of the primary's pool that all requests share for reads of one
    /// document by id and of the write revisions: concurrent reads are pipelined on them
    /// (default one per four cores, at least one; at most half the pool; 0 = each read
    /// takes a connection of its own). Not used behind a transaction-mode pooler or with
    /// a replica.
    #[arg(long, env = "HUB_DATABASE_SHARED_CONNECTIONS",
          value_parser = clap::value_parser!(u32).range(0..=500))]
    pub database_shared_connections: Option<u32>,
    /// Bytes of PostgreSQL documents kept in this process by their row version (default
    /// 32 MiB): list pages and reads by id select each document's key and version and
    /// read only the texts not kept at that version, so a write by any process is seen
    /// at once; 0 reads every text. SQLite reads its own pages and keeps none.
    #[arg(long, env = "HUB_DATABASE_DOCUMENT_CACHE_BYTES", default_value = "33554432",
          value_parser = clap::value_parser!(u64).range(0..=(1u64 << 40)))]
    pub database_document_cache_bytes: u64,
    /// Fill an empty store with the demo dataset on start (file key only; the flag is
    /// `--no-demo`).
    #[arg(skip = true)]
    pub demo: bool,
    /// Start with an empty store instead of demo data (the file says `demo = false`).
    #[arg(long, env = "HUB_NO_DEMO")]
    #[serde(skip)]
    pub no_demo: bool,
    /// Size of the demo dataset (1 = about 20,000 documents).
    #[arg(long = "scale", env = "HUB_DEMO_SCALE", default_value = "1")]
    pub demo_scale: u32,
    /// Public base URL used in links of Content API responses (default `http://{listen}`).
    #[arg(long, env = "HUB_CONTENT_BASE_URL")]
    pub content_base_url: Option<String>,
    /// Public base URL used in links of the Time Series API (default `http://{listen}`).
    #[arg(long, env = "HUB_MOBILITY_BASE_URL")]
    pub mobility_base_url: Option<String>,
    /// Public base URL used in links of the traffic feed (default `http://{listen}`).
    #[arg(long, env = "HUB_DATEX_BASE_URL")]
    pub datex_base_url: Option<String>,
    /// Log format.
    #[arg(long, env = "HUB_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// Seconds to let requests in flight finish after SIGINT/SIGTERM.
    #[arg(long, env = "HUB_SHUTDOWN_GRACE", default_value = "30")]
    pub shutdown_grace: u64,
    /// Public base URL of the token service (issuer = `{auth_url}/auth/realms/{realm}`;
    /// default `http://{listen}`).
    #[arg(long, env = "HUB_AUTH_URL")]
    pub auth_url: Option<String>,
    /// Realm name of the token service (an Open Data Hub deployment would use `noi`).
    #[arg(long, env = "HUB_REALM", default_value = "hub")]
    pub realm: String,
    /// Access token lifetime in seconds.
    #[arg(long, env = "HUB_ACCESS_TOKEN_LIFETIME", default_value = "300")]
    pub access_token_lifetime: i64,
    /// Refresh token lifetime in seconds (renewed by each refresh).
    #[arg(long, env = "HUB_REFRESH_TOKEN_LIFETIME", default_value = "1800")]
    pub refresh_token_lifetime: i64,
    /// Longest a login session can be refreshed, in seconds.
    #[arg(long, env = "HUB_SESSION_LIFETIME", default_value = "36000")]
    pub session_lifetime: i64,
    /// Issuer (`iss`) of an external token service whose tokens are trusted too, e.g. a
    /// Keycloak realm.
    #[arg(long, env = "HUB_EXTERNAL_ISSUER")]
    pub external_issuer: Option<String>,
    /// JWKS URL of the external issuer (default
    /// `{external_issuer}/protocol/openid-connect/certs`).
    #[arg(long, env = "HUB_EXTERNAL_JWKS_URL")]
    pub external_jwks_url: Option<String>,
    /// Requests answered at the same time; more wait in the queue (load protection).
    #[arg(long, env = "HUB_MAX_IN_FLIGHT", default_value = "512")]
    pub max_in_flight: usize,
    /// Requests allowed to wait for a slot; beyond that Hub answers 503 + `Retry-After`.
    #[arg(long, env = "HUB_MAX_QUEUED", default_value = "2048")]
    pub max_queued: usize,
    /// Sustained requests per second allowed per client IP and per bearer token (token
    /// bucket); 0 turns rate limiting off (open data: off by default). Over it: 429.
    #[arg(long, env = "HUB_RATE_LIMIT", default_value = "0")]
    pub rate_limit: u32,
    /// Burst size of the per-client token bucket (requests above the sustained rate).
    #[arg(long, env = "HUB_RATE_LIMIT_BURST", default_value = "100")]
    pub rate_limit_burst: u32,
    /// Failed password logins for one user name before further attempts must wait
    /// (the wait doubles with each failure, up to `login_max_wait`).
    #[arg(long, env = "HUB_LOGIN_FREE_FAILURES_PER_USER", default_value = "5")]
    pub login_free_failures_per_user: u32,
    /// Failed password logins from one client IP before further attempts must wait.
    #[arg(long, env = "HUB_LOGIN_FREE_FAILURES_PER_IP", default_value = "20")]
    pub login_free_failures_per_ip: u32,
    /// Longest wait, in seconds, that failed password logins impose (429 + Retry-After).
    #[arg(long, env = "HUB_LOGIN_MAX_WAIT", default_value = "300")]
    pub login_max_wait: u32,
    /// Password checks (Argon2, tens of MiB each) run at the same time; more wait.
    #[arg(long, env = "HUB_LOGIN_MAX_CONCURRENT_HASHES", default_value = "4",
          value_parser = clap::value_parser!(u32).range(1..=256))]
    pub login_max_concurrent_hashes: u32,
    /// SQLite page cache per connection, in MiB (one writer and 2 × cores readers, at
    /// most 16, each keep up to this much).
    #[arg(long, env = "HUB_SQLITE_CACHE_MIB", default_value = "8")]
    pub sqlite_cache_mib: u32,
    /// MiB of the SQLite file read through a memory map (0 = plain reads); mapped pages
    /// count as resident memory while the kernel keeps them.
    #[arg(long, env = "HUB_SQLITE_MMAP_MIB", default_value = "0")]
    pub sqlite_mmap_mib: u32,
    /// Largest size of the SQLite file in MiB (0 = no cap); writes beyond it are refused
    /// as on a full disk (503 + `Retry-After`) while reads go on.
    #[arg(long, env = "HUB_SQLITE_MAX_SIZE_MIB", default_value = "0")]
    pub sqlite_max_size_mib: u32,
    /// Bytes of Content API and OGC item answers kept in memory for repeated requests
    /// (valid while the store's write revisions of what they read are unchanged, across
    /// processes; default 64 MiB); 0 turns the cache off (`ETag` and 304 answers stay).
    #[arg(long, env = "HUB_RESPONSE_CACHE_BYTES", default_value = "67108864")]
    pub response_cache_bytes: u64,
    /// How the response cache learns of writes on PostgreSQL: `per-request` reads the
    /// write revisions on every hit (a write committed by any process before a request
    /// is seen by it); `notify` keeps them in memory from `LISTEN`/`NOTIFY` (no database
    /// round trip per hit; another process's write is seen once its notification
    /// arrives, this process's own writes at once; not with a transaction-mode pooler
    /// or a replica). SQLite always reads them (a few microseconds).
    #[arg(
        long,
        env = "HUB_RESPONSE_CACHE_REVISIONS",
        value_enum,
        default_value = "per-request"
    )]
    pub response_cache_revisions: CacheRevisions,
    /// `max-age` in seconds of `Cache-Control: public` on open Content API answers: how
    /// long a CDN or browser may reuse one without asking again.
    #[arg(long, env = "HUB_RESPONSE_MAX_AGE", default_value = "10")]
    pub response_max_age: u32,
    /// Filtered Content list totals are counted exactly up to this many matches; above
    /// it the count stops and `TotalResults` is an estimate, marked
    /// `TotalResultsEstimated` and `Hub-Total-Estimated: true` (0 = always count every
    /// match). An unfiltered list is always counted exactly.
    #[arg(long, env = "HUB_EXACT_COUNT_LIMIT", default_value = "10000")]
    pub exact_count_limit: u64,
    /// JSON paths `rawfilter` and `rawsort` read from an index instead of each document,
    /// as `Entity:Path` (comma-separated; in the file a list). SQLite builds one covering
    /// index per entity at start (minutes on a large store, once) and drops those no
    /// longer listed; empty = none. PostgreSQL keeps their values in a column of each
    /// row instead, filled in the background for rows written before.
    #[arg(
        long,
        env = "HUB_RAWFILTER_INDEXES",
        value_delimiter = ',',
        default_value = "HubActivityPoi:GpsInfo.0.Altitude,HubActivityPoi:Detail.de.Title,HubActivityPoi:ContactInfos.de.City"
    )]
    pub rawfilter_indexes: Vec<String>,
    /// Spelling of Content API documents: `hub` (stored names: `HubTags`, `SrcTags`,
    /// `_Meta.Type` `hubactivitypoi`) or `odh` (the Open Data Hub's: `ODHTags`, `SmgTags`,
    /// `odhactivitypoi`). A request through an ODH-spelled route or parameter
    /// (`/v1/ODHActivityPoi`, `odhtagfilter`) is answered in `odh` either way.
    #[arg(long, env = "HUB_NAMING", value_enum, default_value = "hub")]
    pub naming: NamingSetting,
    /// Time Series API settings: closed-data rules per role, writer and admin roles
    /// (file section `[timeseries]`; see the `hub-timeseries` README for each key).
    #[arg(skip)]
    #[serde(skip_serializing)]
    pub timeseries: hub_timeseries::TimeseriesConfig,
    /// Traffic feed settings: providers and the time zone of "today" (file section
    /// `[datex]`; see the `hub-datex` README). Its `base_url` comes from `datex_base_url`.
    #[arg(skip)]
    #[serde(skip_serializing)]
    pub datex: hub_datex::DatexConfig,
    /// Limits of `/v1/GeoConverter`: file section `[geoconverter]` with `max_bytes`
    /// (default 10 MiB), `timeout_secs` (default 20) and `allow_private_addresses`
    /// (default false: loopback and private hosts are refused).
    #[arg(skip)]
    #[serde(skip_serializing)]
    pub geoconverter: hub_content::utility::GeoConverterConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DatabasePooler {
    None,
    Transaction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DatabasePlans {
    Generic,
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CacheRevisions {
    PerRequest,
    Notify,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum NamingSetting {
    Hub,
    Odh,
}

impl From<NamingSetting> for hub_model::Naming {
    fn from(setting: NamingSetting) -> Self {
        match setting {
            NamingSetting::Hub => hub_model::Naming::Hub,
            NamingSetting::Odh => hub_model::Naming::Odh,
        }
    }
}

/// Just the declaration, to read it back (defaults, the README check).
#[derive(Parser)]
#[command(name = "hub")]
struct Declaration {
    #[command(flatten)]
    config: Config,
}

impl Config {
    /// The PostgreSQL settings beyond the primary's URL.
    pub fn postgres_settings(&self) -> hub_store::PgSettings {
        hub_store::PgSettings {
            replica: self.database_replica.clone(),
            replica_max_lag: std::time::Duration::from_millis(self.database_replica_max_lag_ms),
            transaction_pooler: self.database_pooler == DatabasePooler::Transaction,
            pool_size: self.database_pool_size as usize,
            shared_connections: self
                .database_shared_connections
                .map_or_else(hub_store::postgres::shared_connections_for_cores, |n| {
                    n as usize
                }),
            document_cache_bytes: usize::try_from(self.database_document_cache_bytes)
                .unwrap_or(usize::MAX),
            revision_notify: self.response_cache_revisions == CacheRevisions::Notify,
            generic_plans: self.database_plans == DatabasePlans::Generic,
            runtime: None,
        }
    }

    /// The declared flags without their environment variables: what [`Default`] parses.
    fn declared_without_env() -> clap::Command {
        Declaration::command().mut_args(|arg| arg.env(None::<&'static str>))
    }

    /// The command-line declaration (flags, variables, defaults), for checks and help.
    pub fn declared() -> clap::Command {
        Declaration::command()
    }
}

impl Default for Config {
    /// The declared defaults (`#[arg(default_value)]`, `#[arg(skip)]` values).
    fn default() -> Self {
        let matches = Config::declared_without_env().get_matches_from(["hub"]);
        Config::from_arg_matches(&matches).expect("the declared defaults parse")
    }
}

impl Config {
    /// Layers the settings: flags and variables found in `matches` (the command line of
    /// a subcommand that flattens [`Config`]) win over the keys of `file`, which win over
    /// the declared defaults.
    pub fn resolve(matches: &ArgMatches, file: Option<&Path>) -> anyhow::Result<Config> {
        let given = Config::from_arg_matches(matches)?;
        let given_values = toml::Table::try_from(&given)?;
        let mut layered = match file {
            Some(path) => read_file(path)?,
            None => toml::Table::new(),
        };
        for arg in Config::declared().get_arguments() {
            let key = arg.get_id().as_str();
            let explicit = matches!(
                matches.value_source(key),
                Some(ValueSource::CommandLine | ValueSource::EnvVariable)
            );
            if let (true, Some(value)) = (explicit, given_values.get(key)) {
                layered.insert(key.to_string(), value.clone());
            }
        }
        let mut config: Config = toml::Value::Table(layered)
            .try_into()
            .map_err(|e| anyhow::anyhow!("configuration: {e}"))?;
        config.no_demo = given.no_demo;
        if config.no_demo {
            config.demo = false;
        }
        Ok(config)
    }

    /// Reads a TOML file; unknown keys are an error so typos do not pass silently.
    pub fn from_file(path: &std::path::Path) -> anyhow::Result<Config> {
        toml::Value::Table(read_file(path)?)
            .try_into()
            .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))
    }

    pub fn content_base_url(&self) -> String {
        self.content_base_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.listen))
            .trim_end_matches('/')
            .to_string()
    }

    pub fn auth_url(&self) -> String {
        self.auth_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.listen))
            .trim_end_matches('/')
            .to_string()
    }

    /// The count limit of Content list totals (`None`: always exact).
    pub fn count_limit(&self) -> Option<u64> {
        (self.exact_count_limit > 0).then_some(self.exact_count_limit)
    }

    /// The configured rawfilter index paths, validated.
    pub fn rawfilter_indexes(&self) -> anyhow::Result<Vec<hub_store::RawfilterIndexPath>> {
        self.rawfilter_indexes
            .iter()
            .filter(|p| !p.trim().is_empty())
            .map(|p| {
                hub_store::RawfilterIndexPath::parse(p)
                    .map_err(|e| anyhow::anyhow!("rawfilter_indexes: {e}"))
            })
            .collect()
    }

    /// The embedded store's cache sizes.
    pub fn sqlite_tuning(&self) -> hub_store::SqliteTuning {
        hub_store::SqliteTuning {
            cache_mib: self.sqlite_cache_mib,
            mmap_mib: self.sqlite_mmap_mib,
            max_size_mib: self.sqlite_max_size_mib,
        }
    }

    /// What the measurement history keeps; refuses more than
    /// [`hub_store::timeseries::history::MAX_MONTHS_AHEAD`] months ahead.
    pub fn history_policy(&self) -> anyhow::Result<hub_store::timeseries::HistoryPolicy> {
        let max = hub_store::timeseries::history::MAX_MONTHS_AHEAD;
        anyhow::ensure!(
            self.history_partitions_ahead <= max,
            "history_partitions_ahead {}: at most {max} months",
            self.history_partitions_ahead
        );
        Ok(hub_store::timeseries::HistoryPolicy {
            months_ahead: self.history_partitions_ahead,
            retention_months: self.history_retention_months,
        })
    }

    /// The token service's settings.
    pub fn auth_config(&self) -> hub_auth::AuthConfig {
        hub_auth::AuthConfig {
            realm: self.realm.clone(),
            auth_url: self.auth_url(),
            access_token_lifetime: self.access_token_lifetime,
            refresh_token_lifetime: self.refresh_token_lifetime,
            session_lifetime: self.session_lifetime,
            throttle: hub_auth::throttle::ThrottleConfig {
                free_failures_per_user: self.login_free_failures_per_user,
                free_failures_per_ip: self.login_free_failures_per_ip,
                max_wait_secs: self.login_max_wait,
                max_concurrent_hashes: self.login_max_concurrent_hashes,
            },
            external: self
                .external_issuer
                .as_ref()
                .map(|issuer| hub_auth::ExternalIssuer {
                    issuer: issuer.clone(),
                    jwks_url: self.external_jwks_url.clone().unwrap_or_else(|| {
                        format!(
                            "{}/protocol/openid-connect/certs",
                            issuer.trim_end_matches('/')
                        )
                    }),
                }),
            ..hub_auth::AuthConfig::default()
        }
    }

    pub fn mobility_base_url(&self) -> String {
        self.mobility_base_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.listen))
            .trim_end_matches('/')
            .to_string()
    }

    pub fn datex_base_url(&self) -> String {
        self.datex_base_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.listen))
            .trim_end_matches('/')
            .to_string()
    }
}

/// The keys of a TOML file (checked against the declaration when the layers merge).
fn read_file(path: &Path) -> anyhow::Result<toml::Table> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read config file {}: {e}", path.display()))?;
    let in_file =
        |e: &dyn std::fmt::Display| anyhow::anyhow!("config file {}: {e}", path.display());
    let table: toml::Table = toml::from_str(&text).map_err(|e| in_file(&e))?;
    check_file_values(&table).map_err(|e| in_file(&e))?;
    Ok(table)
}

/// Parses each file value that is a string, number or boolean as its flag
/// (`--key=value`), so a file key keeps the flag's limits (`database_pool_size = 0` is
/// refused as `--database-pool-size 0` is); serde alone takes any value of the field's
/// type. A list (`rawfilter_indexes`) is checked where it is used.
fn check_file_values(table: &toml::Table) -> anyhow::Result<()> {
    // Without variables: only the file's value is parsed.
    let mut command = Config::declared_without_env();
    let flags: Vec<(String, String)> = command
        .get_arguments()
        .filter(|arg| arg.get_action().takes_values())
        .filter_map(|arg| {
            let key = arg.get_id().as_str();
            let text = match table.get(key)? {
                toml::Value::String(text) => text.clone(),
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::Float(x) => x.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                _ => return None,
            };
            Some((key.to_string(), format!("--{}={text}", arg.get_long()?)))
        })
        .collect();
    for (key, flag) in flags {
        if let Err(e) = command.try_get_matches_from_mut(["hub", flag.as_str()]) {
            let reason = e.to_string();
            let reason = reason.lines().next().unwrap_or_default();
            anyhow::bail!("key `{key}`: {}", reason.trim_start_matches("error: "));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
