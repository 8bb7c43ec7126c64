//! `hub`: one server for the Content API, the Time Series API, the DATEX II traffic feed
//! and the token service. `hub serve --help` lists the options.

use std::future::IntoFuture;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use axum::serve::ListenerExt;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use hub::config::{Config, LogFormat};
use hub_store::Store;
use tracing_subscriber::EnvFilter;

mod migrate;

#[derive(Parser)]
#[command(
    name = "hub",
    version,
    about = "Open-data server: tourism content, mobility time series, traffic situations"
)]
struct Cli {
    /// TOML configuration file (flags and HUB_* variables override its keys).
    #[arg(long, env = "HUB_CONFIG", global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve all APIs on one port (fills an empty store with demo data first).
    Serve(Config),
    /// Write the demo dataset into the store (replacing documents with the same ids).
    Demo(Config),
    /// Manage users of the token service (Argon2-hashed passwords, roles).
    User {
        #[command(flatten)]
        config: Config,
        #[command(subcommand)]
        command: hub::cli_auth::UserCommand,
    },
    /// Manage confidential clients of the token service (generated secrets, roles).
    Client {
        #[command(flatten)]
        config: Config,
        #[command(subcommand)]
        command: hub::cli_auth::ClientCommand,
    },
    /// Bulk-load content documents from a JSON array or JSON lines file (all accepted
    /// documents in one transaction; rejected ones are listed with their reasons).
    Import {
        #[command(flatten)]
        config: Config,
        /// Entity type of every document (default: each document's `_Meta.Type`).
        #[arg(long)]
        entity: Option<String>,
        file: PathBuf,
    },
    /// Load time series from files in the writer API's JSON shapes (provenance, data
    /// types, stations per type, records per station and type); one transaction per file.
    ImportTimeseries {
        #[command(flatten)]
        config: Config,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Copy the embedded store into a PostgreSQL database (`--from sqlite:DIR --to
    /// postgres://…`), verified and resumable: run it again after an interruption.
    Migrate(migrate::MigrateArgs),
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_env("HUB_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,tower_http=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

fn open_store(config: &Config) -> anyhow::Result<Store> {
    open_store_on(config, None)
}

/// Opens the store; a PostgreSQL backend runs its tasks on `runtime` when given (see
/// `PgSettings::runtime`), else on a runtime of its own.
fn open_store_on(
    config: &Config,
    runtime: Option<tokio::runtime::Handle>,
) -> anyhow::Result<Store> {
    if let Some(url) = &config.database {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            anyhow::bail!(
                "--database {}: expected a postgres:// or postgresql:// URL",
                redact(url)
            );
        }
        let replica = config.database_replica.as_deref();
        let settings = hub_store::PgSettings {
            runtime,
            ..config.postgres_settings()
        };
        return Store::open_postgres_with(url, &settings).with_context(|| match replica {
            Some(r) => format!(
                "opening PostgreSQL at {} (reads from {})",
                redact(url),
                redact(r)
            ),
            None => format!("opening PostgreSQL at {}", redact(url)),
        });
    }
    if config.database_replica.is_some() {
        anyhow::bail!("--database-replica needs --database: the embedded store has no replicas");
    }
    Store::open_sqlite_tuned(&config.data, config.sqlite_tuning())
        .with_context(|| format!("opening the store in {}", config.data.display()))
}

use hub_store::postgres::redact;

async fn shutdown_signal() {
    let ctrl_c = async {
        tokio::signal::ctrl_c()
            .await
            .expect("installing the SIGINT handler")
    };
    #[cfg(unix)]
    let terminate = async {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing the SIGTERM handler")
            .recv()
            .await;
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutdown requested; finishing requests in flight");
}

async fn serve(
    config: Config,
    store: Store,
    history: hub_store::timeseries::HistoryPolicy,
) -> anyhow::Result<()> {
    // Before a demo load, so that PostgreSQL's trigger keeps the configured paths'
    // values of the documents as they are loaded.
    let indexes = store
        .sync_rawfilter_indexes(&config.rawfilter_indexes()?)
        .await?;
    tracing::info!(?indexes, "rawfilter indexes");
    if config.demo && store.content().is_empty().await? {
        let (s, scale) = (store.clone(), config.demo_scale);
        let summary =
            tokio::task::spawn_blocking(move || hub::demo::load_demo(&s, scale)).await??;
        tracing::info!(
            documents = summary.documents,
            seconds = summary.elapsed.as_secs_f64(),
            "loaded the demo dataset into an empty store"
        );
        let mobility =
            hub_timeseries::load_demo(&*store.timeseries(), scale, chrono::Utc::now()).await?;
        tracing::info!(
            stations = mobility.stations,
            records = mobility.records,
            "loaded the demo mobility time series"
        );
        store.refresh_statistics().await?;
        // The load's documents are gone from the heap; give its peak back.
        hub::memory::release_free_memory();
    }
    let filling = store.clone();
    tokio::spawn(async move {
        if let Err(e) = filling.fill_path_values().await {
            tracing::error!(error = %e, "filling the values of configured rawfilter paths failed; filters read the documents instead");
        }
    });
    hub_auth::ensure_signing_keys(&*store.auth()).await?;
    let upkeep = tokio::spawn(hub::upkeep::maintain_forever(store.clone(), history));
    if store
        .auth()
        .user(hub_auth::demo::DEMO_USER)
        .await?
        .is_some()
    {
        tracing::warn!(
            user = hub_auth::demo::DEMO_USER,
            client = hub_auth::demo::DEMO_WRITER_CLIENT,
            "the demo user and demo writer client exist, with the credentials the README names; they are for demonstration only"
        );
    }
    let app = hub::router(store, &config);
    // Answers larger than one write (streamed lists and time series, chunked bodies) end
    // with a short segment; with Nagle's algorithm it waits for the client's delayed ACK
    // of the previous one, about 40 ms on Linux, on every such answer of a kept-alive
    // connection. Segments go out at once instead.
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?
        .tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::warn!(error = %e, "could not set TCP_NODELAY on a connection");
            }
        });
    tracing::info!(address = %config.listen, data = %config.data.display(), "serving: / (open it in a browser), /v1 content, /v2 time series, /datex/2 traffic feed, /docs/ API docs, /health");
    let grace = Duration::from_secs(config.shutdown_grace);
    let (stopping_tx, mut stopping_rx) = tokio::sync::watch::channel(false);
    let signal = async move {
        shutdown_signal().await;
        let _ = stopping_tx.send(true);
    };
    let server = axum::serve(
        listener,
        app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(signal)
    .into_future();
    // Once the signal arrives, requests in flight get `grace` seconds to finish.
    let deadline = async move {
        let _ = stopping_rx.wait_for(|stopping| *stopping).await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        result = server => result.context("serving")?,
        _ = deadline => tracing::warn!(seconds = grace.as_secs(), "requests still running after the grace period; stopping anyway"),
    }
    upkeep.abort();
    tracing::info!("stopped");
    Ok(())
}

/// Rust's allocations go to mimalloc (see `hub::memory` for why); SQLite's own stay
/// with the C library's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    hub::memory::limit_allocator_arenas();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Every subcommand but `migrate` flattens `Config`: layer its flags and variables
    // over the file's keys and the defaults.
    let config = match matches.subcommand() {
        Some(("migrate", _)) | None => match &cli.config {
            Some(path) => Config::from_file(path)?,
            None => Config::default(),
        },
        Some((_, sub)) => Config::resolve(sub, cli.config.as_deref())?,
    };
    match cli.command {
        Command::Migrate(args) => {
            init_logging(config.log_format);
            migrate::run(args)
        }
        Command::Serve(_) => {
            init_logging(config.log_format);
            // The store is opened outside the runtime it then shares: opening waits
            // for the migrations, which must not block one of that runtime's workers.
            let history = config.history_policy()?;
            let runtime = tokio::runtime::Runtime::new()?;
            let store = open_store_on(&config, Some(runtime.handle().clone()))?;
            runtime.block_on(serve(config, store, history))
        }
        Command::Demo(_) => {
            init_logging(config.log_format);
            let store = open_store(&config)?;
            let summary = hub::demo::load_demo(&store, config.demo_scale)?;
            println!(
                "wrote {} demo documents to {} in {:.1} s",
                summary.documents,
                config.data.display(),
                summary.elapsed.as_secs_f64()
            );
            let started = std::time::Instant::now();
            let runtime = tokio::runtime::Runtime::new()?;
            let mobility = runtime.block_on(hub_timeseries::load_demo(
                &*store.timeseries(),
                config.demo_scale,
                chrono::Utc::now(),
            ))?;
            runtime.block_on(store.refresh_statistics())?;
            println!(
                "wrote {} stations and {} measurements of demo time series in {:.1} s",
                mobility.stations,
                mobility.records,
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::User { command, .. } => hub::cli_auth::run_user(&open_store(&config)?, command),
        Command::Client { command, .. } => {
            hub::cli_auth::run_client(&open_store(&config)?, command)
        }
        Command::Import { entity, file, .. } => {
            init_logging(config.log_format);
            hub::cli_auth::run_import(&open_store(&config)?, &file, entity.as_deref())
        }
        Command::ImportTimeseries { files, .. } => {
            init_logging(config.log_format);
            let store = open_store(&config)?;
            tokio::runtime::Runtime::new()?.block_on(async {
                for file in &files {
                    let summary = hub_timeseries::import_file(&*store.timeseries(), file).await.with_context(|| format!("importing {}", file.display()))?;
                    println!(
                        "{}: {} data types, {} stations, {} records written, {} records older than the latest value skipped",
                        file.display(),
                        summary.data_types,
                        summary.stations,
                        summary.records,
                        summary.skipped_records
                    );
                }
                anyhow::Ok(())
            })
        }
    }
}
