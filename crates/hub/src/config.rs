//! The server's configuration: one struct with defaults, filled from an optional TOML
//! file, then from `HUB_*` environment variables and command-line flags (which win).

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

/// Everything `hub serve` can be told. Each field: flag, environment variable, file key.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to serve on. `--listen`, `HUB_LISTEN`, `listen`. Default `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// Directory of the embedded SQLite store. `--data`, `HUB_DATA`, `data`. Default `./hub-data`.
    pub data: PathBuf,
    /// PostgreSQL URL instead of the embedded store. `--database`, `HUB_DATABASE`, `database`.
    pub database: Option<String>,
    /// PostgreSQL URL of a read replica (streaming replication of `database`): reads go
    /// there, writes and migrations to `database`. `--database-replica`, `HUB_DATABASE_REPLICA`, `database_replica`.
    pub database_replica: Option<String>,
    /// Fill an empty store with the demo dataset on start. `--no-demo`/`HUB_NO_DEMO` turn it off; file key `demo`. Default true.
    pub demo: bool,
    /// Size of the demo dataset (1 = about 20,000 documents). `--scale`, `HUB_DEMO_SCALE`, `demo_scale`. Default 1.
    pub demo_scale: u32,
    /// Public base URL used in links of Content API responses. `--content-base-url`, `HUB_CONTENT_BASE_URL`, `content_base_url`. Default `http://{listen}`.
    pub content_base_url: Option<String>,
    /// Public base URL used in links of the Time Series API. `--mobility-base-url`, `HUB_MOBILITY_BASE_URL`, `mobility_base_url`. Default `http://{listen}`.
    pub mobility_base_url: Option<String>,
    /// Time Series API settings: closed-data rules per role, writer and admin roles
    /// (file section `[timeseries]`; see the `hub-timeseries` README for each key).
    pub timeseries: hub_timeseries::TimeseriesConfig,
    /// Traffic feed settings: providers and the time zone of "today" (file section
    /// `[datex]`; see the `hub-datex` README). Its `base_url` comes from `datex_base_url`.
    pub datex: hub_datex::DatexConfig,
    /// Public base URL used in links of the traffic feed. `--datex-base-url`, `HUB_DATEX_BASE_URL`, `datex_base_url`. Default `http://{listen}`.
    pub datex_base_url: Option<String>,
    /// Log format: `text` or `json`. `--log-format`, `HUB_LOG_FORMAT`, `log_format`. Default `text`.
    pub log_format: LogFormat,
    /// Seconds to let requests in flight finish after SIGINT/SIGTERM. `--shutdown-grace`, `HUB_SHUTDOWN_GRACE`, `shutdown_grace`. Default 30.
    pub shutdown_grace: u64,
    /// Public base URL of the token service (issuer = `{auth_url}/auth/realms/{realm}`). `--auth-url`, `HUB_AUTH_URL`, `auth_url`. Default `http://{listen}`.
    pub auth_url: Option<String>,
    /// Realm name of the token service. `--realm`, `HUB_REALM`, `realm`. Default `hub` (an Open Data Hub deployment would use `noi`).
    pub realm: String,
    /// Access token lifetime in seconds. `--access-token-lifetime`, `HUB_ACCESS_TOKEN_LIFETIME`, `access_token_lifetime`. Default 300.
    pub access_token_lifetime: i64,
    /// Refresh token lifetime in seconds (renewed by each refresh). `--refresh-token-lifetime`, `HUB_REFRESH_TOKEN_LIFETIME`, `refresh_token_lifetime`. Default 1800.
    pub refresh_token_lifetime: i64,
    /// Longest a login session can be refreshed, in seconds. `--session-lifetime`, `HUB_SESSION_LIFETIME`, `session_lifetime`. Default 36000.
    pub session_lifetime: i64,
    /// Issuer (`iss`) of an external token service whose tokens are trusted too, e.g. a Keycloak realm. `--external-issuer`, `HUB_EXTERNAL_ISSUER`, `external_issuer`. Default none.
    pub external_issuer: Option<String>,
    /// JWKS URL of the external issuer. `--external-jwks-url`, `HUB_EXTERNAL_JWKS_URL`, `external_jwks_url`. Default `{external_issuer}/protocol/openid-connect/certs`.
    pub external_jwks_url: Option<String>,
    /// Limits of `/v1/GeoConverter`: file key section `[geoconverter]` with `max_bytes` (default 10 MiB),
    /// `timeout_secs` (default 20) and `allow_private_addresses` (default false: loopback and private hosts are refused).
    pub geoconverter: hub_content::utility::GeoConverterConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data: PathBuf::from("hub-data"),
            database: None,
            database_replica: None,
            demo: true,
            demo_scale: 1,
            content_base_url: None,
            datex_base_url: None,
            mobility_base_url: None,
            timeseries: hub_timeseries::TimeseriesConfig::default(),
            datex: hub_datex::DatexConfig::default(),
            log_format: LogFormat::Text,
            shutdown_grace: 30,
            geoconverter: hub_content::utility::GeoConverterConfig::default(),
            auth_url: None,
            realm: "hub".into(),
            access_token_lifetime: 300,
            refresh_token_lifetime: 1800,
            session_lifetime: 36_000,
            external_issuer: None,
            external_jwks_url: None,
        }
    }
}

impl Config {
    /// Reads a TOML file; unknown keys are an error so typos do not pass silently.
    pub fn from_file(path: &std::path::Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read config file {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))
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

    /// The token service's settings.
    pub fn auth_config(&self) -> hub_auth::AuthConfig {
        hub_auth::AuthConfig {
            realm: self.realm.clone(),
            auth_url: self.auth_url(),
            access_token_lifetime: self.access_token_lifetime,
            refresh_token_lifetime: self.refresh_token_lifetime,
            session_lifetime: self.session_lifetime,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_keys_override_defaults_and_typos_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hub.toml");
        std::fs::write(&file, "listen = \"0.0.0.0:9000\"\ndemo = false\n").unwrap();
        let config = Config::from_file(&file).unwrap();
        assert_eq!(config.listen.port(), 9000);
        assert!(!config.demo);
        assert_eq!(config.demo_scale, 1);
        assert_eq!(config.content_base_url(), "http://0.0.0.0:9000");
        std::fs::write(&file, "listne = \"0.0.0.0:9000\"\n").unwrap();
        assert!(Config::from_file(&file)
            .unwrap_err()
            .to_string()
            .contains("listne"));
    }
}
