//! The indexes of configured `rawfilter` paths (see `hub_query::content::rawfilter_index`
//! for why and what they hold): created and dropped at start to match the
//! configuration, then announced to the compiler.
//!
//! SQLite: one covering index per entity, `CREATE INDEX IF NOT EXISTS` (building it at
//! scale 10 reads the whole table once: about a minute; later starts find it). Indexes
//! named with the prefix that the configuration no longer names are dropped.
//! PostgreSQL: nothing. Its planner considers an index-only scan only when every column
//! the query needs is in the index, and an expression over `docb` needs `docb` itself,
//! so an expression index would never spare the row (documented in decisions.md).
//!
//! Must not: build SQL from client text (names and expressions come from the
//! configuration, validated by `hub-query`).

use hub_query::content::rawfilter_index::{self, IndexedPath, INDEX_PREFIX};

use crate::{Backend, Result, Store};

impl Store {
    /// Makes the store's rawfilter indexes match `paths` and lets the compiler use them;
    /// returns the names of the indexes now in place.
    pub async fn sync_rawfilter_indexes(&self, paths: &[IndexedPath]) -> Result<Vec<String>> {
        let wanted = rawfilter_index::sqlite_indexes(paths);
        let names = match &*self.backend {
            Backend::Sqlite(b) => {
                b.write(move |conn| {
                    let existing: Vec<String> = conn
                        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND substr(name, 1, length(?1)) = ?1")?
                        .query_map([INDEX_PREFIX], |r| r.get(0))?
                        .collect::<rusqlite::Result<_>>()?;
                    for name in existing {
                        let is_name = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                        if is_name && !wanted.iter().any(|w| w.name == name) {
                            conn.execute_batch(&format!("DROP INDEX {name}"))?;
                            tracing::info!(index = %name, "dropped a rawfilter index no longer configured");
                        }
                    }
                    for index in &wanted {
                        let started = std::time::Instant::now();
                        conn.execute_batch(&index.create)?;
                        // Without statistics the planner takes a new index for far more
                        // selective than it is (measured: it then drove a page's id
                        // join from it, scanning the entity once per page row).
                        conn.execute_batch(&format!("ANALYZE {}", index.name))?;
                        tracing::info!(index = %index.name, seconds = started.elapsed().as_secs_f64(), "rawfilter index in place");
                    }
                    Ok(wanted.into_iter().map(|w| w.name).collect())
                })
                .await?
            }
            Backend::Postgres(_) => Vec::new(),
        };
        if !names.is_empty() {
            rawfilter_index::register(paths);
        }
        Ok(names)
    }
}
