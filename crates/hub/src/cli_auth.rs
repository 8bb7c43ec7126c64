//! The `hub user`, `hub client` and `hub import` commands: managing the token service's
//! users and confidential clients, and bulk-loading content documents.

use std::io::{BufRead, IsTerminal};
use std::path::Path;

use anyhow::{bail, Context};
use clap::Subcommand;
use hub_auth::secrets;
use hub_model::EntityType;
use hub_store::auth::{ClientRecord, RoleChange, UserRecord};
use hub_store::Store;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create a user. The password comes from --password-stdin, or is generated and printed once.
    Add {
        username: String,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
        /// Roles to grant (repeatable).
        #[arg(long = "role")]
        roles: Vec<String>,
    },
    /// List users and their roles.
    List,
    /// Remove a user (its sessions end).
    Remove { username: String },
    /// Set a new password (from --password-stdin, or generated and printed); the user's sessions end.
    SetPassword {
        username: String,
        #[arg(long)]
        password_stdin: bool,
    },
    /// Grant roles to a user.
    Grant {
        username: String,
        roles: Vec<String>,
    },
    /// Revoke roles from a user.
    Revoke {
        username: String,
        roles: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// Create a confidential client; its secret is generated and printed once.
    Add {
        client_id: String,
        /// Roles of the client's service account (repeatable).
        #[arg(long = "role")]
        roles: Vec<String>,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// List clients and their roles.
    List,
    /// Remove a client (its sessions end).
    Remove { client_id: String },
}

fn now() -> i64 {
    hub_auth::Clock::now(&hub_auth::SystemClock)
}

fn read_password(from_stdin: bool) -> anyhow::Result<(String, bool)> {
    if from_stdin {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("reading the password from standard input")?;
        let password = line.trim_end_matches(['\r', '\n']).to_string();
        if password.is_empty() {
            bail!("the password on standard input is empty");
        }
        return Ok((password, false));
    }
    Ok((secrets::random_token()[..20].to_string(), true))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

pub fn run_user(store: &Store, command: UserCommand) -> anyhow::Result<()> {
    let rt = runtime()?;
    let auth = store.auth();
    match command {
        UserCommand::Add {
            username,
            password_stdin,
            roles,
        } => {
            let (password, generated) = read_password(password_stdin)?;
            let user = UserRecord {
                id: uuid::Uuid::new_v4().to_string(),
                username: username.clone(),
                password_hash: secrets::hash_password(&password),
                roles,
                created_at: now(),
            };
            rt.block_on(auth.user_add(user))?;
            println!("created user {username}");
            if generated {
                println!("password (shown once): {password}");
            }
        }
        UserCommand::List => {
            for u in rt.block_on(auth.users())? {
                println!("{}\t{}\t{}", u.username, u.id, u.roles.join(","));
            }
        }
        UserCommand::Remove { username } => {
            if !rt.block_on(auth.user_remove(&username))? {
                bail!("no user named {username}");
            }
            println!("removed user {username}");
        }
        UserCommand::SetPassword {
            username,
            password_stdin,
        } => {
            let (password, generated) = read_password(password_stdin)?;
            if !rt.block_on(auth.user_set_password(&username, secrets::hash_password(&password)))? {
                bail!("no user named {username}");
            }
            println!("set the password of {username}; its sessions have ended");
            if generated {
                println!("password (shown once): {password}");
            }
        }
        UserCommand::Grant { username, roles } | UserCommand::Revoke { username, roles }
            if roles.is_empty() =>
        {
            bail!("name at least one role for {username}")
        }
        UserCommand::Grant { username, roles } => {
            if !rt.block_on(auth.user_roles(&username, roles.clone(), RoleChange::Grant))? {
                bail!("no user named {username}");
            }
            println!("granted {} to {username}", roles.join(", "));
        }
        UserCommand::Revoke { username, roles } => {
            if !rt.block_on(auth.user_roles(&username, roles.clone(), RoleChange::Revoke))? {
                bail!("no user named {username}");
            }
            println!("revoked {} from {username}", roles.join(", "));
        }
    }
    Ok(())
}

pub fn run_client(store: &Store, command: ClientCommand) -> anyhow::Result<()> {
    let rt = runtime()?;
    let auth = store.auth();
    match command {
        ClientCommand::Add {
            client_id,
            roles,
            description,
        } => {
            if hub_auth::PUBLIC_CLIENTS.contains(&client_id.as_str()) {
                bail!("{client_id} is the built-in public client");
            }
            let secret = secrets::random_token();
            let record = ClientRecord {
                client_id: client_id.clone(),
                secret_hash: secrets::sha256_hex(&secret),
                description,
                roles,
                created_at: now(),
            };
            rt.block_on(auth.client_add(record))?;
            println!("created client {client_id}");
            println!("client_secret (shown once): {secret}");
        }
        ClientCommand::List => {
            for c in rt.block_on(auth.clients())? {
                println!("{}\t{}\t{}", c.client_id, c.roles.join(","), c.description);
            }
        }
        ClientCommand::Remove { client_id } => {
            if !rt.block_on(auth.client_remove(&client_id))? {
                bail!("no client named {client_id}");
            }
            println!("removed client {client_id}");
        }
    }
    Ok(())
}

/// A document `hub import` did not accept.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// 1-based position in the file (line for JSON lines, element for an array).
    pub position: usize,
    pub id: Option<String>,
    pub reason: String,
}

/// What `hub import` did.
#[derive(Debug, Default)]
pub struct ImportSummary {
    pub written: usize,
    pub changed: usize,
    pub rejected: Vec<Rejected>,
}

/// Reads documents from a JSON array or JSON lines.
fn read_documents(text: &str) -> Vec<(usize, Result<Value, String>)> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return match serde_json::from_str::<Vec<Value>>(trimmed) {
            Ok(list) => list
                .into_iter()
                .enumerate()
                .map(|(i, v)| (i + 1, Ok(v)))
                .collect(),
            Err(e) => vec![(1, Err(format!("the file is not a JSON array: {e}")))],
        };
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            (
                i + 1,
                serde_json::from_str(l).map_err(|e| format!("not JSON: {e}")),
            )
        })
        .collect()
}

/// Validates every document of `file` and writes the accepted ones in one transaction
/// (a store failure writes nothing). The entity type comes from `entity` or from each
/// document's `_Meta.Type`.
pub fn import(store: &Store, file: &Path, entity: Option<&str>) -> anyhow::Result<ImportSummary> {
    let fixed = entity
        .map(|e| {
            EntityType::by_name(e)
                .or_else(|| EntityType::by_route(e))
                .or_else(|| EntityType::by_meta_type(e))
        })
        .map(|e| {
            e.with_context(|| {
                format!(
                    "--entity {}: not an entity type (GET /v1 lists them)",
                    entity.unwrap_or("")
                )
            })
        })
        .transpose()?;
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let mut summary = ImportSummary::default();
    let mut accepted = Vec::new();
    for (position, doc) in read_documents(&text) {
        let id = doc
            .as_ref()
            .ok()
            .and_then(|d| d.get("Id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let reject = |reason: String| Rejected {
            position,
            id: id.clone(),
            reason,
        };
        let doc = match doc {
            Ok(d) => d,
            Err(e) => {
                summary.rejected.push(reject(e));
                continue;
            }
        };
        let entity = match fixed.or_else(|| {
            doc.pointer("/_Meta/Type")
                .and_then(Value::as_str)
                .and_then(EntityType::by_meta_type)
        }) {
            Some(e) => e,
            None => {
                summary
                    .rejected
                    .push(reject("no entity type: give --entity or _Meta.Type".into()));
                continue;
            }
        };
        if doc.get("Id").is_none() {
            summary
                .rejected
                .push(reject("the document has no Id".into()));
            continue;
        }
        match hub_content::writes::validate_document(entity, doc, None) {
            Ok(d) => accepted.push((entity.name, d)),
            Err(reason) => summary.rejected.push(reject(reason)),
        }
    }
    let bar = ProgressBar::new(accepted.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("importing [{bar:40}] {pos}/{len} documents")
            .expect("valid template")
            .progress_chars("=> "),
    );
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let stamp = chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let outcomes = store
        .content()
        .put_tracked_blocking(accepted, &stamp, &mut |n| bar.set_position(n))
        .context("writing (nothing was written)")?;
    bar.finish_and_clear();
    summary.written = outcomes.len();
    summary.changed = outcomes.iter().filter(|o| o.changed).count();
    Ok(summary)
}

/// `hub import FILE`: prints the summary; exits non-zero when documents were rejected.
pub fn run_import(store: &Store, file: &Path, entity: Option<&str>) -> anyhow::Result<()> {
    let summary = import(store, file, entity)?;
    println!(
        "wrote {} documents ({} new or changed), rejected {}",
        summary.written,
        summary.changed,
        summary.rejected.len()
    );
    for r in &summary.rejected {
        println!(
            "  #{} {}: {}",
            r.position,
            r.id.as_deref().unwrap_or("(no id)"),
            r.reason
        );
    }
    if !summary.rejected.is_empty() {
        bail!("{} documents were rejected", summary.rejected.len());
    }
    Ok(())
}
