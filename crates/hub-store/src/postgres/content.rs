//! Content documents on PostgreSQL: [`PgContent`] moves rows for the [`ContentRepo`] —
//! the list queries `hub-query` compiles for the PostgreSQL dialect, tracked saves, and
//! bulk loads as array inserts (`unnest`), a chunk of documents per statement. Every
//! decision (the `_Meta` bookkeeping, which revisions to bump, what a failed check
//! means) comes from `crate::content`.
//!
//! Must not: touch the connection pools (`postgres/mod.rs`) or other domains' tables.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use async_trait::async_trait;
use hub_query::content::bookmarks::BookmarkedPage;
use hub_query::content::prefixed::PrefixedPage;
use hub_query::content::{CompiledList, ContentQuery, Total};
use hub_query::Dialect;
use serde_json::Value;

use super::rawfilter::list_error;
use super::{bind, refs, Conn, PgBackend, Queries};
use crate::content::count_cache::{stamp_statement, CountCache, Stamp};
use crate::content::put::revisions_to_bump;
use crate::content::KeptOrders;
use crate::content::{
    compile, compile_stream, extent_of, extent_sql, parse_documents, ContentPage, ContentRepo,
    DocumentStream, Extent, MapPoint, PutOutcome, Revisions,
};
use crate::{IndexedDocument, Result, StoreError};

mod documents;
mod kept;
mod points;
mod write;

use crate::content::document_cache::DocumentCache;
use documents::page_docs;
use kept::{bookmarked_page, prefixed_page};
use write::{bump_revisions, delete_side, put_tracked, with_progress, write_indexed};

/// Documents per multi-row statement of a bulk load.
const CHUNK: usize = 500;

/// The content repository of a PostgreSQL store.
pub(crate) struct PgContent {
    pub(crate) backend: Arc<PgBackend>,
    pub(crate) counts: Arc<CountCache>,
    pub(crate) orders: Arc<KeptOrders>,
}

#[async_trait]
impl ContentRepo for PgContent {
    async fn list(&self, query: ContentQuery) -> Result<ContentPage> {
        let (compiled, log) = compile(&query, Dialect::Postgres);
        // Shared, not copied: a read that finds its server unavailable runs again.
        let compiled = Arc::new(compiled);
        let caches = ListCaches {
            counts: self.counts.clone(),
            orders: self.orders.clone(),
            documents: self.backend.documents.clone(),
        };
        // A page whose statements are all short shares a pipelined connection with the
        // reads by key; any other takes a pooled connection of its own.
        let page = if crate::content::reads_a_bounded_page(&query) {
            let read = move |conn| list_page(conn, compiled, query, caches);
            self.backend.point_read(read).await
        } else {
            let read = move |conn| list_page(Arc::new(conn), compiled, query, caches);
            self.backend.read(read).await
        };
        log.finish();
        page
    }

    async fn stream(&self, query: ContentQuery) -> Result<DocumentStream> {
        let (compiled, log) = compile_stream(query, Dialect::Postgres);
        let (total_tx, total_rx) = tokio::sync::oneshot::channel();
        let (mut docs, rx) = crate::batches::channel();
        self.backend.spawn_read(move |conn| async move {
            let fail = |e| list_error(&compiled.checks, e);
            let mut conn = match conn {
                Ok(conn) => conn,
                Err(e) => {
                    let _ = total_tx.send(Err(e));
                    return;
                }
            };
            // One read-only snapshot: the count and the cursor see the same documents.
            let counted = async {
                let tx = conn.snapshot().await?;
                let count = tx
                    .prepare_cached(compiled.count.as_sql())
                    .await
                    .map_err(fail)?;
                let params = bind(compiled.count.params());
                let n: i64 = tx
                    .query_one(&count, &refs(&params))
                    .await
                    .map_err(fail)?
                    .try_get(0)?;
                Ok::<_, StoreError>((tx, n as u64))
            }
            .await;
            let Some(tx) = crate::batches::hand_over_count(total_tx, counted) else {
                return;
            };
            let result = async {
                let page = tx
                    .prepare_cached(compiled.page.as_sql())
                    .await
                    .map_err(fail)?;
                let params = bind(compiled.page.params());
                let rows = tx.query_raw(&page, refs(&params)).await.map_err(fail)?;
                futures::pin_mut!(rows);
                while let Some(row) = futures::StreamExt::next(&mut rows).await {
                    if docs
                        .push(row.map_err(fail)?.try_get::<_, String>(0)?)
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
                Ok(())
            }
            .await;
            drop(tx);
            log.finish();
            docs.finish(result).await;
        });
        let total = total_rx
            .await
            .map_err(|_| StoreError::Task("the document cursor stopped".into()))??;
        Ok(DocumentStream { total, docs: rx })
    }

    async fn points(&self, query: ContentQuery, limit: u64) -> Result<Vec<MapPoint>> {
        points::read(self, query, limit).await
    }

    async fn get(&self, entity: &'static str, id: &str) -> Result<Option<String>> {
        let id_key = id.to_lowercase();
        let documents = self.backend.documents.clone();
        self.backend
            .point_read(move |conn| async move {
                Ok(documents::one_by_id(&conn, &documents, entity, &id_key).await?)
            })
            .await
    }

    async fn all(&self, entity: &'static str) -> Result<Vec<Value>> {
        let docs = self
            .backend
            .read(move |conn| async move {
                let stmt = conn
                    .prepare_cached("SELECT doc FROM content WHERE entity = $1 ORDER BY id_key")
                    .await?;
                Ok(conn
                    .query(&stmt, &[&entity])
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect())
            })
            .await?;
        parse_documents(docs)
    }

    async fn revision(&self, entity: &'static str) -> Result<i64> {
        // One read of the whole (tiny) table answers every request waiting at the time,
        // whichever entity it asks for: under load a cache hit shares its round trip.
        let backend = &self.backend;
        if let Some(revisions) = backend.notified_revisions() {
            return Ok(revisions.get(entity).copied().unwrap_or(0));
        }
        let revisions = backend
            .revisions
            .get(|| {
                backend.revision_reads.fetch_add(1, Ordering::Relaxed);
                backend.point_read(read_revisions)
            })
            .await?;
        Ok(revisions.get(entity).copied().unwrap_or(0))
    }

    async fn extent(&self, entity: &'static str) -> Result<Extent> {
        self.backend
            .read(move |conn| async move {
                let stmt = conn.prepare_cached(&extent_sql("$1")).await?;
                let row = conn.query_one(&stmt, &[&entity]).await?;
                Ok(extent_of(
                    [row.get(0), row.get(1), row.get(2), row.get(3)],
                    (row.get(4), row.get(5)),
                ))
            })
            .await
    }

    async fn counts(&self) -> Result<Vec<(String, u64)>> {
        self.backend
            .read(|conn| async move {
                let stmt = conn
                    .prepare_cached(
                        "SELECT entity, COUNT(*) FROM content GROUP BY entity ORDER BY entity",
                    )
                    .await?;
                Ok(conn
                    .query(&stmt, &[])
                    .await?
                    .iter()
                    .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
                    .collect())
            })
            .await
    }

    async fn put(
        &self,
        entity: &'static str,
        doc: Value,
        now: String,
        create_only: bool,
    ) -> Result<PutOutcome> {
        let written = self
            .backend
            .write(move |conn| put_tracked(conn, vec![(entity, doc)], now, create_only, None))
            .await;
        self.backend.content_written();
        Ok(written?.pop().expect("one document in, one outcome out"))
    }

    fn put_tracked_blocking(
        &self,
        docs: Vec<(&'static str, Value)>,
        now: &str,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Vec<PutOutcome>> {
        let now = now.to_string();
        let written = with_progress(&self.backend, progress, move |conn, tx| {
            put_tracked(conn, docs, now, false, Some(tx))
        });
        self.backend.content_written();
        written
    }

    async fn delete(&self, entity: &'static str, id: &str) -> Result<bool> {
        let id_key = id.to_lowercase();
        let deleted = self
            .backend
            .write(move |mut conn| async move {
                let tx = conn.transaction().await?;
                delete_side(&tx, &[entity], &[id_key.as_str()]).await?;
                let n = tx
                    .execute(
                        "DELETE FROM content WHERE entity = $1 AND id_key = $2",
                        &[&entity, &id_key],
                    )
                    .await?;
                if n > 0 {
                    bump_revisions(&tx, &[(entity, 1)]).await?;
                }
                tx.commit().await?;
                Ok(n > 0)
            })
            .await;
        self.backend.content_written();
        deleted
    }

    fn put_batch_blocking(
        &self,
        docs: &[(&'static str, Value)],
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let docs = docs
            .iter()
            .map(|(entity, doc)| IndexedDocument::from_document(entity, doc))
            .collect::<Result<Vec<_>>>()?;
        let n = docs.len() as u64;
        let written = with_progress(
            &self.backend,
            progress,
            move |mut conn, progress| async move {
                let tx = conn.transaction().await?;
                let mut done = 0u64;
                for chunk in docs.chunks(CHUNK) {
                    write_indexed(&tx, chunk).await?;
                    done += chunk.len() as u64;
                    let _ = progress.send(done);
                }
                bump_revisions(&tx, &revisions_to_bump(docs.iter().map(|d| d.entity))).await?;
                tx.commit().await?;
                if docs.len() >= 1000 {
                    conn.batch_execute(
                    "ANALYZE content, content_tag, content_title, content_language, content_date",
                )
                .await?;
                }
                Ok(())
            },
        );
        self.backend.content_written();
        written?;
        progress(n);
        Ok(())
    }
}

async fn read_revisions(conn: Arc<Conn>) -> Result<Revisions> {
    let stmt = conn.prepare_cached(crate::content::REVISIONS_SQL).await?;
    Ok(Arc::new(
        conn.query(&stmt, &[])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect(),
    ))
}

/// What a list keeps between requests.
#[derive(Clone)]
struct ListCaches {
    counts: Arc<CountCache>,
    orders: Arc<KeptOrders>,
    documents: Arc<DocumentCache>,
}

/// Runs a compiled list; a failed check or unusable value becomes the client's error.
async fn list_page(
    conn: Arc<Conn>,
    compiled: Arc<CompiledList>,
    query: ContentQuery,
    caches: ListCaches,
) -> Result<ContentPage> {
    let fail = |e| list_error(&compiled.checks, e);
    let counts = caches.counts;
    let texts = &*caches.documents;
    // The stamp of the totals travels with the first statement, pipelined on the one
    // connection: a kept total then costs no round trip of its own.
    let mut stamp = None;
    // A filtered list keeps a prefix only where a walk did not answer: it is read first
    // once kept.
    let filtered = PrefixedPage::filtered(&query);
    let kept_filtered = filtered
        .as_ref()
        .filter(|page| caches.orders.prefixes.kept(page).is_some());
    let prefixed = PrefixedPage::of(&query);
    if let Some(prefixed) = prefixed.as_ref().or(kept_filtered) {
        let found = prefixed_page(
            &conn,
            prefixed,
            &caches.orders.prefixes,
            texts,
            &compiled.checks,
        );
        if let Some((docs, total)) = found.await? {
            return Ok(ContentPage::of(Total::exact(total), docs));
        }
    }
    if let Some(mut deep) = BookmarkedPage::of(&query) {
        let found = match &compiled.walk {
            Some(walk) if deep.is_filtered() => {
                // A filtered list's statements test its filters as its density pays
                // for. The density only picks a plan, so the totals last kept pick it
                // and the stamp travels with the seek; both totals are then read (or
                // counted again after a write) under that stamp. Without kept totals,
                // they are counted first.
                let all = walk.documents();
                let all_compiled = all.compile(Dialect::Postgres);
                let kept = counts
                    .last(&compiled.count)
                    .zip(counts.last(&all_compiled.count));
                match kept {
                    Some((total, documents)) => {
                        deep = deep.counted(total, documents.value);
                        let seek = bookmarked_page(
                            &conn,
                            &deep,
                            &caches.orders.bookmarks,
                            texts,
                            &compiled.checks,
                        );
                        let found = with_stamp(&conn, &compiled, &mut stamp, seek).await?;
                        documents_for_plan(&conn, &all_compiled, &all, &counts, stamp).await?;
                        found
                    }
                    None => {
                        stamp = Some(content_stamp(&conn, &compiled).await?);
                        let total = count(&conn, &compiled, &query, &counts, stamp).await?;
                        let documents =
                            documents_for_plan(&conn, &all_compiled, &all, &counts, stamp).await?;
                        deep = deep.counted(total, documents.value);
                        bookmarked_page(
                            &conn,
                            &deep,
                            &caches.orders.bookmarks,
                            texts,
                            &compiled.checks,
                        )
                        .await?
                    }
                }
            }
            _ => {
                let found = bookmarked_page(
                    &conn,
                    &deep,
                    &caches.orders.bookmarks,
                    texts,
                    &compiled.checks,
                );
                with_stamp(&conn, &compiled, &mut stamp, found).await?
            }
        };
        if let Some(docs) = found {
            let total = count(&conn, &compiled, &query, &counts, stamp).await?;
            return Ok(ContentPage::of(total, docs));
        }
    }
    for attempt in crate::content::attempts_worth_trying(&counts, &compiled) {
        let page = async {
            page_docs(&conn, texts, &attempt.page, false)
                .await
                .map_err(fail)
        };
        let (docs, _) = with_stamp(&conn, &compiled, &mut stamp, page).await?;
        if docs.len() as u64 >= attempt.size {
            let total = count(&conn, &compiled, &query, &counts, stamp).await?;
            return Ok(ContentPage::of(total, docs));
        }
    }
    if let Some(walk) = &compiled.walk {
        // Both totals are kept under the same stamp, read once (the page statement
        // after a short walk reuses it too).
        if stamp.is_none() {
            stamp = Some(content_stamp(&conn, &compiled).await?);
        }
        let total = count(&conn, &compiled, &query, &counts, stamp).await?;
        if walk.past_the_end(total) {
            return Ok(ContentPage::of(total, Vec::new()));
        }
        let all = walk.documents();
        let all_compiled = all.compile(Dialect::Postgres);
        let documents = documents_for_plan(&conn, &all_compiled, &all, &counts, stamp).await?;
        if let Some(attempt) = walk.attempt(total, documents.value) {
            let (docs, _) = page_docs(&conn, texts, &attempt.page, false)
                .await
                .map_err(fail)?;
            if docs.len() as u64 >= attempt.size {
                return Ok(ContentPage::of(total, docs));
            }
        }
        // No walk answered: rather than sort every match for this page alone, keep the
        // first pages' keys for the pages that follow.
        if let Some(filtered) = filtered.as_ref().filter(|_| total.value > 0) {
            let prefixes = &caches.orders.prefixes;
            let found = prefixed_page(&conn, filtered, prefixes, texts, &compiled.checks).await?;
            if let Some((docs, total)) = found {
                return Ok(ContentPage::of(Total::exact(total), docs));
            }
        }
    }
    let page = async {
        page_docs(&conn, texts, &compiled.page, compiled.page_has_total)
            .await
            .map_err(fail)
    };
    // A page whose rows carry the total needs the stamp only when it is empty.
    let (docs, total) = if compiled.page_has_total {
        page.await?
    } else {
        with_stamp(&conn, &compiled, &mut stamp, page).await?
    };
    let total = match total {
        Some(n) => Total::exact(n),
        None => count(&conn, &compiled, &query, &counts, stamp).await?,
    };
    Ok(ContentPage::of(total, docs))
}

/// The list's total from its count statement (and the planner's estimate past the
/// limit), kept in `counts` while it holds (`count_cache`).
async fn count(
    conn: &Conn,
    compiled: &CompiledList,
    query: &ContentQuery,
    counts: &CountCache,
    stamp: Option<Stamp>,
) -> Result<Total> {
    kept_or_counted(conn, compiled, query, counts, stamp, CountCache::get).await
}

/// The entity's documents (`compiled`, a walk's unfiltered list), for choosing a plan
/// only: the total kept while it is near enough (`CountCache::hint`), else counted.
pub(super) async fn documents_for_plan(
    conn: &Conn,
    compiled: &CompiledList,
    query: &ContentQuery,
    counts: &CountCache,
    stamp: Option<Stamp>,
) -> Result<Total> {
    kept_or_counted(conn, compiled, query, counts, stamp, CountCache::hint).await
}

/// The total `kept` finds in `counts` at the stamp (read here when `stamp` is `None`),
/// else the count statement's, kept.
async fn kept_or_counted(
    conn: &Conn,
    compiled: &CompiledList,
    query: &ContentQuery,
    counts: &CountCache,
    stamp: Option<Stamp>,
    kept: fn(&CountCache, &hub_query::SqlBuilder, Stamp) -> Option<Total>,
) -> Result<Total> {
    let fail = |e| list_error(&compiled.checks, e);
    let stamp = match stamp {
        Some(stamp) => stamp,
        None => content_stamp(conn, compiled).await?,
    };
    if let Some(total) = kept(counts, &compiled.count, stamp) {
        return Ok(total);
    }
    let params = bind(compiled.count.params());
    let count = super::prepare_bounded(conn, compiled.count.as_sql())
        .await
        .map_err(fail)?;
    let counted = conn
        .query_one(&count, &refs(&params))
        .await
        .map_err(fail)?
        .try_get::<_, i64>(0)? as u64;
    let estimate = if Total::needs_estimate(counted, compiled.count_limit) {
        Some(planned_rows(conn, query).await.map_err(fail)?)
    } else {
        None
    };
    let total = Total::settle(counted, compiled.count_limit, estimate);
    let slack = Total::slack(counted, compiled.count_limit);
    counts.put(&compiled.count, stamp, total, slack);
    Ok(total)
}

/// The stamp of `compiled`'s totals (see `count_cache`).
async fn content_stamp(conn: &Conn, compiled: &CompiledList) -> Result<Stamp> {
    let statement = stamp_statement(compiled, Dialect::Postgres);
    let params = bind(statement.params());
    let stmt = super::prepare_bounded(conn, statement.as_sql()).await?;
    let row = conn.query_one(&stmt, &refs(&params)).await?;
    Ok(Stamp {
        revision: row.try_get(0)?,
        written: row.try_get(1)?,
    })
}

/// Runs `work`, and, pipelined with it on the connection, reads the stamp of
/// `compiled`'s totals when `stamp` does not hold it yet.
async fn with_stamp<T>(
    conn: &Conn,
    compiled: &CompiledList,
    stamp: &mut Option<Stamp>,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    if stamp.is_some() {
        return work.await;
    }
    let (value, read) = futures::try_join!(work, content_stamp(conn, compiled))?;
    *stamp = Some(read);
    Ok(value)
}

/// The planner's estimate of the number of matches of `query` (`EXPLAIN (FORMAT JSON)`
/// of its uncapped row statement: no row is read).
async fn planned_rows(
    conn: &Conn,
    query: &ContentQuery,
) -> std::result::Result<u64, tokio_postgres::Error> {
    let rows = query.compile_estimate(Dialect::Postgres);
    let explain = format!("EXPLAIN (FORMAT JSON) {}", rows.as_sql());
    let params = bind(rows.params());
    let statement = super::prepare_bounded(conn, &explain).await?;
    let plan: serde_json::Value = conn
        .query_one(&statement, &refs(&params))
        .await?
        .try_get(0)?;
    Ok(plan[0]["Plan"]["Plan Rows"]
        .as_f64()
        .unwrap_or(0.0)
        .max(0.0) as u64)
}
