//! What to copy: the tables both stores hold, their key and columns on each side, in an
//! order that keeps PostgreSQL's foreign keys true after every chunk. Reads catalogues
//! only; a mismatch between the schemas is an error, so no column is dropped silently.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;

use super::{config, quote, CHUNK_ROWS};
use crate::postgres::{PgBackend, Queries};
use crate::sqlite::SqliteBackend;
use crate::Result;

/// How a target column gets its value.
pub(super) struct TargetColumn {
    pub(super) name: String,
    pub(super) data_type: String,
    /// Index into the source columns selected.
    pub(super) source: usize,
}

/// One table to copy, with its columns on both sides.
pub(super) struct TablePlan {
    pub(super) name: String,
    /// Key columns in SQLite (`rowid`, or the primary key of a WITHOUT ROWID table).
    pub(super) key: Vec<String>,
    /// Source columns selected after the key columns.
    pub(super) source_columns: Vec<String>,
    pub(super) target: Vec<TargetColumn>,
    pub(super) source_rows: u64,
    /// Rows per chunk: [`CHUNK_ROWS`], or all rows in one for a table with a foreign key
    /// to itself (a child may come before its parent in key order; PostgreSQL checks
    /// foreign keys at the end of each COPY, so one statement must hold both).
    pub(super) chunk_rows: usize,
}

/// The plans of every table both stores hold, parents first, with the source's row
/// counts; and the SQLite tables PostgreSQL has no table for (not copied).
pub(super) fn plan_tables(
    src: &SqliteBackend,
    pg: &PgBackend,
) -> Result<(Vec<TablePlan>, Vec<String>)> {
    let source_tables = src.write_blocking(|conn| sqlite_tables(conn))?;
    let names: Vec<String> = source_tables.iter().map(|t| t.0.clone()).collect();
    let (target_columns, foreign_keys) = pg.write_blocking(move |conn| async move {
        let mut columns: BTreeMap<String, Vec<(String, String, bool, bool)>> = BTreeMap::new();
        let rows = conn
            .query(
                "SELECT table_name::text, column_name::text, data_type::text, is_generated::text = 'ALWAYS', \
                 (is_nullable::text = 'YES' OR column_default IS NOT NULL OR is_identity::text = 'YES') \
                 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name::text = ANY($1) \
                 ORDER BY table_name, ordinal_position",
                &[&names],
            )
            .await?;
        for r in rows {
            columns.entry(r.get(0)).or_default().push((r.get(1), r.get(2), r.get(3), r.get(4)));
        }
        let fks = conn
            .query(
                "SELECT c.relname::text, p.relname::text FROM pg_constraint k \
                 JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid \
                 WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace",
                &[],
            )
            .await?
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)))
            .collect::<Vec<_>>();
        Ok((columns, fks))
    })?;

    // Plans: matching tables and columns; mismatches are errors (no data is dropped silently).
    let mut plans = Vec::new();
    let mut skipped_tables = Vec::new();
    let mut mismatches = Vec::new();
    for (name, key, columns) in source_tables {
        let Some(target) = target_columns.get(&name) else {
            skipped_tables.push(name);
            continue;
        };
        let mut source_columns: Vec<String> = Vec::new();
        let mut used = BTreeSet::new();
        let mut plan_target = Vec::new();
        for (column, data_type, generated, optional) in target {
            if *generated {
                continue;
            }
            // `content.docb` is SQLite JSONB in the source; PostgreSQL's is `doc::jsonb`.
            let from = if name == "content" && column == "docb" {
                "doc"
            } else {
                column.as_str()
            };
            if columns.iter().any(|c| c == from) {
                used.insert(from.to_string());
                let source = match source_columns.iter().position(|c| c == from) {
                    Some(i) => i,
                    None => {
                        source_columns.push(from.to_string());
                        source_columns.len() - 1
                    }
                };
                plan_target.push(TargetColumn {
                    name: column.clone(),
                    data_type: data_type.clone(),
                    source,
                });
            } else if !optional {
                mismatches.push(format!("PostgreSQL column {name}.{column} (NOT NULL, no default) has no SQLite counterpart"));
            }
        }
        for c in &columns {
            if !(used.contains(c) || name == "content" && c == "docb") {
                mismatches.push(format!(
                    "SQLite column {name}.{c} has no PostgreSQL counterpart"
                ));
            }
        }
        plans.push(TablePlan {
            name,
            key,
            source_columns,
            target: plan_target,
            source_rows: 0,
            chunk_rows: CHUNK_ROWS,
        });
    }
    if !mismatches.is_empty() {
        return Err(config(format!(
            "the schemas do not match: {}",
            mismatches.join("; ")
        )));
    }
    order_by_foreign_keys(&mut plans, &foreign_keys);
    for plan in &mut plans {
        if foreign_keys
            .iter()
            .any(|(child, parent)| child == &plan.name && parent == &plan.name)
        {
            plan.chunk_rows = usize::MAX;
        }
    }
    for plan in &mut plans {
        let sql = format!("SELECT count(*) FROM {}", quote(&plan.name));
        plan.source_rows = src
            .write_blocking(|conn| Ok(conn.query_row(&sql, [], |r| r.get::<_, i64>(0))? as u64))?;
    }

    Ok((plans, skipped_tables))
}

/// A table's name, key columns and columns.
type TableColumns = (String, Vec<String>, Vec<String>);

/// SQLite's tables (name, key columns, columns) without its own, the bookkeeping each
/// store keeps for itself (`schema_version`; `ts_provenance_revision`, which the
/// target's triggers count as the provenances arrive), virtual tables and their shadow
/// tables.
fn sqlite_tables(conn: &Connection) -> Result<Vec<TableColumns>> {
    let mut stmt = conn.prepare(
        "SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         AND name NOT IN ('schema_version', 'ts_provenance_revision') ORDER BY name",
    )?;
    let all: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let virtual_tables: Vec<&String> = all
        .iter()
        .filter(|(_, sql)| sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL"))
        .map(|(n, _)| n)
        .collect();
    let mut tables = Vec::new();
    for (name, sql) in &all {
        if sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL")
            || virtual_tables
                .iter()
                .any(|v| name.starts_with(&format!("{v}_")))
        {
            continue;
        }
        let mut columns = Vec::new();
        let mut pk: Vec<(i64, String)> = Vec::new();
        let mut info = conn.prepare("SELECT name, pk FROM pragma_table_info(?1) ORDER BY cid")?;
        for row in info.query_map([name], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })? {
            let (column, pk_pos) = row?;
            if pk_pos > 0 {
                pk.push((pk_pos, column.clone()));
            }
            columns.push(column);
        }
        pk.sort();
        // A WITHOUT ROWID table has no `rowid` to select.
        let has_rowid = conn
            .prepare(&format!("SELECT rowid FROM {} LIMIT 0", quote(name)))
            .is_ok();
        let key = if has_rowid {
            vec!["rowid".to_string()]
        } else {
            pk.into_iter().map(|(_, c)| c).collect()
        };
        if key.is_empty() {
            return Err(config(format!(
                "SQLite table {name} has neither a rowid nor a primary key"
            )));
        }
        tables.push((name.clone(), key, columns));
    }
    Ok(tables)
}

/// Parents before children, so foreign keys hold after every chunk; otherwise SQLite's
/// (alphabetical) order. Cycles and self-references keep their place.
fn order_by_foreign_keys(plans: &mut Vec<TablePlan>, fks: &[(String, String)]) {
    let mut ordered: Vec<TablePlan> = Vec::with_capacity(plans.len());
    let mut rest: Vec<TablePlan> = std::mem::take(plans);
    while !rest.is_empty() {
        let ready = rest.iter().position(|p| {
            !fks.iter().any(|(child, parent)| {
                child == &p.name && parent != &p.name && rest.iter().any(|q| &q.name == parent)
            })
        });
        let next = rest.remove(ready.unwrap_or(0));
        ordered.push(next);
    }
    *plans = ordered;
}

/// The chunk query: the first chunk (`after_key` false) or the one after a key (`?1`...).
pub(super) fn select_sql(plan: &TablePlan, after_key: bool) -> String {
    let key_list = plan
        .key
        .iter()
        .map(|k| if k == "rowid" { k.clone() } else { quote(k) })
        .collect::<Vec<_>>();
    let columns = key_list
        .iter()
        .cloned()
        .chain(plan.source_columns.iter().map(|c| quote(c)))
        .collect::<Vec<_>>()
        .join(", ");
    let condition = if after_key {
        let params = (1..=plan.key.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!("WHERE ({}) > ({params}) ", key_list.join(", "))
    } else {
        String::new()
    };
    // LIMIT -1: no limit.
    let limit = i64::try_from(plan.chunk_rows).unwrap_or(-1);
    format!(
        "SELECT {columns} FROM {table} {condition}ORDER BY {order} LIMIT {limit}",
        table = quote(&plan.name),
        order = key_list.join(", ")
    )
}
