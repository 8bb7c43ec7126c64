//! The indexes of configured `rawfilter` paths (see `hub_query::content::rawfilter_index`
//! for why and what they hold): created and dropped at start to match the
//! configuration, then announced to the compiler.
//!
//! SQLite: one covering index per entity, `CREATE INDEX IF NOT EXISTS` (building it at
//! scale 10 reads the whole table once: about a minute; later starts find it). Indexes
//! named with the prefix that the configuration no longer names are dropped.
//! PostgreSQL: no index. Its planner considers an index-only scan only when every column
//! the query needs is in the index, and an expression over `docb` needs `docb` itself,
//! so an expression index would never spare the row (documented in decisions.md).
//! Instead each row keeps the values of its entity's paths in `content.path_values`
//! (`postgres::path_values`): the paths are written into `content_value_paths` at
//! start, and [`Store::fill_path_values`] fills the rows written before.
//!
//! Must not: build SQL from client text (names and expressions come from the
//! configuration, validated by `hub-query`).

use hub_query::content::rawfilter_index::{self, IndexedPath, INDEX_PREFIX};

use crate::{postgres, Backend, Result, Store};

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
                    for name in &existing {
                        let is_name = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                        if is_name && !wanted.iter().any(|w| &w.name == name) {
                            conn.execute_batch(&format!("DROP INDEX {name}"))?;
                            tracing::info!(index = %name, "dropped a rawfilter index no longer configured");
                        }
                    }
                    let mut created = false;
                    for index in &wanted {
                        if existing.contains(&index.name) {
                            continue;
                        }
                        let started = std::time::Instant::now();
                        conn.execute_batch(&index.create)?;
                        created = true;
                        tracing::info!(index = %index.name, seconds = started.elapsed().as_secs_f64(), "rawfilter index built");
                    }
                    if created {
                        // Without statistics the planner takes a new index for far more
                        // selective than it is (measured: it then drove a page's id join
                        // from it, scanning the entity once per page row), and it weighs
                        // the table's indexes against each other: all of them, once.
                        conn.execute_batch("ANALYZE content")?;
                    }
                    Ok(wanted.into_iter().map(|w| w.name).collect())
                })
                .await?
            }
            Backend::Postgres(b) => {
                let wanted = rawfilter_index::postgres_value_paths(paths);
                let names: Vec<String> = wanted
                    .iter()
                    .map(|p| format!("content.path_values {}:{}", p.entity, p.path))
                    .collect();
                let changed = b
                    .write(move |conn| postgres::path_values::configure(conn, wanted))
                    .await?;
                if !changed.is_empty() {
                    tracing::info!(
                        entities = ?changed,
                        "configured rawfilter paths changed; their values are filled while the server answers"
                    );
                }
                names
            }
        };
        if !names.is_empty() {
            rawfilter_index::register(paths);
        }
        Ok(names)
    }

    /// Fills the configured paths' values of the rows written before their entity's
    /// paths were configured (PostgreSQL; SQLite's index is complete once built), in
    /// batches of their own transactions; returns the rows written. Filters give the
    /// same answers meanwhile, from the documents.
    pub async fn fill_path_values(&self) -> Result<u64> {
        match &*self.backend {
            Backend::Postgres(b) => postgres::path_values::fill(b).await,
            Backend::Sqlite(_) => Ok(0),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use hub_query::content::rawfilter::parse_rawfilter;
    use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
    use hub_query::Dialect;
    use serde_json::json;

    use super::*;
    use crate::sqlite::bind;

    /// The first page of POIs in the default order matching `expression`.
    pub(crate) fn rawfilter_query(expression: &str) -> ContentQuery {
        ContentQuery {
            entity: "HubActivityPoi",
            filters: vec![ContentFilter::Raw {
                filter: parse_rawfilter(expression).unwrap(),
                parameter: "rawfilter",
            }],
            order: ContentOrder::Default,
            page: Page {
                size: 10,
                number: 1,
            },
            count_limit: None,
        }
    }

    fn paths(texts: &[&str]) -> Vec<IndexedPath> {
        texts
            .iter()
            .map(|t| IndexedPath::parse(t).unwrap())
            .collect()
    }

    /// What the count statement of `query` does on the SQLite store: its count, whether
    /// its bytecode reads the `docb` column of a `content` row (with `index` named in an
    /// `INDEXED BY`, so the tiny test table's statistics cannot make the planner prefer
    /// another index of the same prefix), and its plan.
    async fn count_reading(
        store: &Store,
        query: &ContentQuery,
        index: Option<String>,
    ) -> (i64, bool, String) {
        let Backend::Sqlite(b) = &*store.backend else {
            unreachable!()
        };
        let count = query.compile(Dialect::Sqlite).count;
        b.read(move |conn| {
            let mut sql = count.as_sql().to_string();
            if let Some(index) = &index {
                sql = sql.replacen(
                    "FROM content c",
                    &format!("FROM content c INDEXED BY {index}"),
                    1,
                );
            }
            let params = bind(count.params());
            let n = conn.query_row(&sql, params.as_slice(), |r| r.get(0))?;
            let root: i64 = conn.query_row(
                "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'content'",
                [],
                |r| r.get(0),
            )?;
            let docb: i64 = conn.query_row(
                "SELECT cid FROM pragma_table_info('content') WHERE name = 'docb'",
                [],
                |r| r.get(0),
            )?;
            let mut table_cursors = Vec::new();
            let mut reads_docb = false;
            let mut st = conn.prepare(&format!("EXPLAIN {sql}"))?;
            let mut rows = st.query(params.as_slice())?;
            while let Some(row) = rows.next()? {
                let (op, p1, p2): (String, i64, i64) = (row.get(1)?, row.get(2)?, row.get(3)?);
                if op == "OpenRead" && p2 == root {
                    table_cursors.push(p1);
                }
                reads_docb |= op == "Column" && table_cursors.contains(&p1) && p2 == docb;
            }
            let plan = crate::sqlite::query_plan(conn, &sql, count.params())?;
            Ok((n, reads_docb, plan))
        })
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn sqlite_answers_configured_paths_from_the_index_and_follows_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sqlite(dir.path()).unwrap();
        // Documents of several entities, as in a real store: the planner weighs the
        // index against the others by their statistics.
        let entities = ["HubActivityPoi", "Accommodation", "WebcamInfo", "Article"];
        let docs: Vec<(&'static str, serde_json::Value)> = (0..1600)
            .map(|n| {
                let (entity, i) = (entities[n % 4], (n / 4) as i32);
                let id = format!("poi-{i}");
                (
                    entity,
                    json!({
                        "Id": id, "Shortname": id, "Active": true,
                        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
                        "GpsInfo": [{"Altitude": i * 10, "Latitude": 46.0 + f64::from(i) / 1000.0, "Longitude": 11.0}],
                        "ContactInfos": {"de": {"City": if i % 2 == 0 { json!("Bozen") } else { json!(null) }}},
                    }),
                )
            })
            .collect();
        store
            .content()
            .put_batch_blocking(&docs, &mut |_| {})
            .unwrap();
        let query =
            rawfilter_query("and(gt(GpsInfo.0.Altitude,1500),isnotnull(ContactInfos.de.City))");
        // Altitudes 1510..3990 with a city: the even i from 152 to 398.
        let (unindexed, reads_docb, _) = count_reading(&store, &query, None).await;
        assert_eq!(unindexed, 124);
        assert!(reads_docb);

        let configured = paths(&[
            "HubActivityPoi:GpsInfo.0.Altitude",
            "HubActivityPoi:ContactInfos.de.City",
        ]);
        let names = store.sync_rawfilter_indexes(&configured).await.unwrap();
        assert_eq!(names.len(), 1);
        assert!(names[0].starts_with("content_rf_hubactivitypoi_"));
        // The same count, answered from the index entries: no document is read.
        let (indexed, reads_docb, plan) =
            count_reading(&store, &query, Some(names[0].clone())).await;
        assert_eq!(indexed, unindexed);
        assert!(!reads_docb, "{plan}");
        assert!(plan.contains(&names[0]), "{plan}");

        // Starting again with the same configuration keeps the index; another one
        // replaces it; an empty one removes it.
        assert_eq!(
            store.sync_rawfilter_indexes(&configured).await.unwrap(),
            names
        );
        let other = store
            .sync_rawfilter_indexes(&configured[..1])
            .await
            .unwrap();
        assert_ne!(other, names);
        assert_eq!(index_names(&store).await, other);
        assert!(store.sync_rawfilter_indexes(&[]).await.unwrap().is_empty());
        assert!(index_names(&store).await.is_empty());
        let (after, _, _) = count_reading(&store, &query, None).await;
        assert_eq!(after, unindexed);
    }

    async fn index_names(store: &Store) -> Vec<String> {
        let Backend::Sqlite(b) = &*store.backend else {
            unreachable!()
        };
        b.read(|conn| {
            let names = conn
                .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'content\\_rf\\_%' ESCAPE '\\' ORDER BY name")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(names)
        })
        .await
        .unwrap()
    }
}
