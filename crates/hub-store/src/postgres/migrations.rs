//! PostgreSQL schema migrations: an ordered list like the SQLite one, recorded in the
//! same `schema_version` table. The whole run holds a transaction-level advisory lock,
//! so processes starting together apply each migration exactly once: the first one
//! migrates, the others wait for its commit and then find nothing left to do.
//!
//! The PostgreSQL schema is the SQLite schema's logical twin (same tables, same columns,
//! same units: epoch milliseconds, WGS 84 degrees), so both backends answer alike and
//! `hub migrate` copies table by table. It adds what PostgreSQL does better: PostGIS
//! geometry columns kept from the coordinates, GIN indexes for tags, JSON containment
//! and trigram search, and `jsonb` documents.

use super::{Conn, Queries};
use crate::schema::{self, Change, Dialect, Part};
use crate::{Result, StoreError};

/// The PostgreSQL migrations in order; append new ones at the end (SQL kept in a file
/// is one `Part::Only(Dialect::Postgres, include_str!(..))`).
pub(crate) const PG_MIGRATIONS: &[Change] = &[
    Change {
        version: 1,
        name: "content documents with indexed columns",
        parts: schema::content::POSTGRES_DOCUMENTS,
    },
    Change {
        version: 2,
        name: "time series: stations, types, series, latest values, history, edges, events",
        parts: schema::timeseries::POSTGRES_TIME_SERIES,
    },
    Change {
        version: 3,
        name: "token service: users, clients, roles, refresh tokens, signing keys",
        parts: schema::auth::POSTGRES_TOKENS,
    },
    Change {
        version: 4,
        name: "content functions: rawfilter checks, folding, dates",
        parts: &[Part::Only(
            Dialect::Postgres,
            include_str!("sql/content_functions.sql"),
        )],
    },
    Change {
        version: 5,
        name: "content functions: rawfilter checks report only a check id",
        parts: &[Part::Only(
            Dialect::Postgres,
            include_str!("sql/content_functions_v5.sql"),
        )],
    },
    Change {
        version: 6,
        name: "content: geometry indexes led by the entity",
        parts: schema::content::POSTGRES_ENTITY_GEOMETRY,
    },
    Change {
        version: 7,
        name: "content: revision writes notify listeners",
        parts: schema::content::POSTGRES_REVISION_NOTIFY,
    },
    Change {
        version: 8,
        name: "time series: latest values leave room for updates on their pages",
        parts: schema::timeseries::POSTGRES_LATEST_FILLFACTOR,
    },
    Change {
        version: 9,
        name: "time series: a revision of the provenances, counted by triggers",
        parts: schema::timeseries::POSTGRES_PROVENANCE_REVISION,
    },
    Change {
        version: 10,
        name: "content: documents of common size kept in their rows",
        parts: schema::content::POSTGRES_DOCUMENTS_IN_ROW,
    },
    Change {
        version: 11,
        name: "content: documents by language",
        parts: schema::content::LANGUAGE_DOCUMENTS,
    },
    Change {
        version: 12,
        name: "content: values of the flag fields as tags",
        parts: schema::content::FIELD_VALUE_TAGS,
    },
    Change {
        version: 13,
        name: "content: each document's Shortname beside its position",
        parts: schema::content::POSTGRES_POINT_NAMES,
    },
    Change {
        version: 14,
        name: "content: the order index carries each document's source",
        parts: schema::content::POSTGRES_ORDER_WITH_SOURCE,
    },
    Change {
        version: 15,
        name: "content: values of the configured rawfilter paths beside each document",
        parts: &[Part::Only(
            Dialect::Postgres,
            include_str!("sql/content_path_values.sql"),
        )],
    },
    Change {
        version: 16,
        name: "content: the order's index holds each document's id and position",
        parts: schema::content::POSTGRES_ORDER_VALUES,
    },
    Change {
        version: 17,
        name: "content: a radius reads content_position, which carries the key; no index of positions as geography",
        parts: schema::content::POSTGRES_RADIUS_FROM_POSITIONS,
    },
    Change {
        version: 18,
        name: "content: revisions count the documents written",
        parts: schema::content::CONTENT_REVISION_WRITTEN,
    },
    Change {
        version: 19,
        name: "time series: a revision of the catalog, counted by triggers once per transaction",
        parts: schema::timeseries::POSTGRES_CATALOG_REVISION,
    },
    Change {
        version: 20,
        name: "time series: edges count in the catalog's revision",
        parts: schema::timeseries::POSTGRES_CATALOG_REVISION_EDGES,
    },
];

/// Any fixed number identifies Hub's migration lock among other advisory locks.
const MIGRATION_LOCK: i64 = 0x4855_425f_4d49_4752; // "HUB_MIGR"

pub(crate) async fn migrate(mut conn: Conn) -> Result<()> {
    let tx = conn.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version bigint PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)",
    )
    .await?;
    let current: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::int8 FROM schema_version",
            &[],
        )
        .await?
        .get(0);
    let known = PG_MIGRATIONS.last().map(|m| m.version).unwrap_or(0);
    if current > known {
        return Err(StoreError::SchemaTooNew {
            found: current,
            known,
        });
    }
    for m in PG_MIGRATIONS.iter().filter(|m| m.version > current) {
        tx.batch_execute(&schema::render(m.parts, Dialect::Postgres))
            .await
            .map_err(|e| StoreError::Migration {
                version: m.version,
                detail: describe(&e),
            })?;
        tx.execute(
            "INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))",
            &[&m.version, &m.name],
        )
        .await?;
        tracing::info!(
            version = m.version,
            name = m.name,
            "applied PostgreSQL schema migration"
        );
    }
    tx.commit().await?;
    Ok(())
}

/// The server's message with its detail and hint, which `Display` leaves out.
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = db.message().to_string();
            if let Some(d) = db.detail() {
                s.push_str(": ");
                s.push_str(d);
            }
            if let Some(h) = db.hint() {
                s.push_str(" (hint: ");
                s.push_str(h);
                s.push(')');
            }
            s
        }
        None => {
            // Connection errors keep their cause in the source chain (a TLS handshake
            // says only "error performing TLS handshake"); the cause is what helps.
            let mut s = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                let cause_text = cause.to_string();
                if !s.contains(&cause_text) {
                    s.push_str(": ");
                    s.push_str(&cause_text);
                }
                source = cause.source();
            }
            s
        }
    }
}
