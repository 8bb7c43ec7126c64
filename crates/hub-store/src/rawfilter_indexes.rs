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
            Backend::Postgres(_) => Vec::new(),
        };
        if !names.is_empty() {
            rawfilter_index::register(paths);
        }
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use hub_query::content::rawfilter::parse_rawfilter;
    use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
    use hub_query::Dialect;
    use serde_json::json;

    use super::*;
    use crate::sqlite::bind;

    fn paths(texts: &[&str]) -> Vec<IndexedPath> {
        texts.iter().map(|t| IndexedPath::parse(t).unwrap()).collect()
    }

    /// The plan of the first statement and the rows of the second, on the SQLite store.
    async fn plan_and_count(store: &Store, query: &ContentQuery) -> (String, i64) {
        let Backend::Sqlite(b) = &*store.backend else {
            unreachable!()
        };
        let compiled = query.compile(Dialect::Sqlite);
        let count = compiled.count;
        b.read(move |conn| {
            let sql = count.as_sql().to_string();
            let params = bind(count.params());
            let mut plan = String::new();
            let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
            let mut rows = st.query(params.as_slice())?;
            while let Some(row) = rows.next()? {
                plan.push_str(&row.get::<_, String>(3)?);
                plan.push('\n');
            }
            let n = conn.query_row(&sql, params.as_slice(), |r| r.get(0))?;
            let mut st = conn.prepare("SELECT COALESCE(idx, tbl) || ' ' || stat FROM sqlite_stat1 WHERE tbl = 'content'")?;
            let mut rows = st.query([])?;
            while let Some(row) = rows.next()? {
                plan.push_str(&row.get::<_, String>(0)?);
                plan.push('\n');
            }
            Ok((plan, n))
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
        let query = ContentQuery {
            entity: "HubActivityPoi",
            filters: vec![ContentFilter::Raw {
                filter: parse_rawfilter("and(gt(GpsInfo.0.Altitude,1500),isnotnull(ContactInfos.de.City))")
                    .unwrap(),
                parameter: "rawfilter",
            }],
            order: ContentOrder::Default,
            page: Page { size: 10, number: 1 },
            count_limit: None,
        };
        // Altitudes 1510..3990 with a city: the even i from 152 to 398.
        let (plan, unindexed) = plan_and_count(&store, &query).await;
        assert_eq!(unindexed, 124);
        assert!(!plan.contains("content_rf_"), "{plan}");

        let configured = paths(&[
            "HubActivityPoi:GpsInfo.0.Altitude",
            "HubActivityPoi:ContactInfos.de.City",
        ]);
        let names = store.sync_rawfilter_indexes(&configured).await.unwrap();
        assert_eq!(names.len(), 1);
        assert!(names[0].starts_with("content_rf_hubactivitypoi_"));
        let (plan, indexed) = plan_and_count(&store, &query).await;
        assert_eq!(indexed, unindexed);
        assert!(plan.contains(&format!("USING INDEX {}", names[0])), "{plan}\n{}", query.compile(Dialect::Sqlite).count.as_sql());

        // Starting again with the same configuration keeps the index; another one
        // replaces it; an empty one removes it.
        assert_eq!(store.sync_rawfilter_indexes(&configured).await.unwrap(), names);
        let other = store
            .sync_rawfilter_indexes(&configured[..1])
            .await
            .unwrap();
        assert_ne!(other, names);
        assert_eq!(index_names(&store).await, other);
        assert!(store.sync_rawfilter_indexes(&[]).await.unwrap().is_empty());
        assert!(index_names(&store).await.is_empty());
        let (_, after) = plan_and_count(&store, &query).await;
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
