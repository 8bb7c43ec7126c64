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
use hub_query::content::{CompiledList, ContentQuery, Total};
use hub_query::Dialect;
use serde_json::Value;

use super::rawfilter::list_error;
use super::{bind, refs, Conn, PgBackend, Queries, Tx};
use crate::content::count_cache::{CountCache, STAMP_SQL};
use crate::content::put::{document_key, plan_put, revisions_to_bump, written_entities, PutPlan};
use crate::content::{
    compile, compile_stream, extent_of, extent_sql, parse_documents, ContentPage, ContentRepo,
    DocumentStream, Extent, PutOutcome, Revisions,
};
use crate::{IndexedDocument, Result, StoreError};

/// Documents per multi-row statement of a bulk load.
const CHUNK: usize = 500;

/// The content repository of a PostgreSQL store.
pub(crate) struct PgContent {
    pub(crate) backend: Arc<PgBackend>,
    pub(crate) counts: Arc<CountCache>,
}

#[async_trait]
impl ContentRepo for PgContent {
    async fn list(&self, query: ContentQuery) -> Result<ContentPage> {
        let (compiled, log) = compile(&query, Dialect::Postgres);
        // Shared, not copied: a read that finds its server unavailable runs again.
        let compiled = Arc::new(compiled);
        let counts = self.counts.clone();
        let page = self
            .backend
            .read(move |conn| list_page(conn, compiled, query, counts))
            .await;
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

    async fn get(&self, entity: &'static str, id: &str) -> Result<Option<String>> {
        let id_key = id.to_lowercase();
        self.backend
            .read(move |conn| async move {
                let stmt = conn
                    .prepare_cached("SELECT doc FROM content WHERE entity = $1 AND id_key = $2")
                    .await?;
                Ok(conn
                    .query_opt(&stmt, &[&entity, &id_key])
                    .await?
                    .map(|r| r.get(0)))
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
                backend.read(read_revisions)
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
                    bump_revisions(&tx, &[entity]).await?;
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

async fn read_revisions(conn: Conn) -> Result<Revisions> {
    let stmt = conn.prepare_cached(crate::content::REVISIONS_SQL).await?;
    Ok(Arc::new(
        conn.query(&stmt, &[])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect(),
    ))
}

/// Runs a compiled list; a failed check or unusable value becomes the client's error.
async fn list_page(
    conn: Conn,
    compiled: Arc<CompiledList>,
    query: ContentQuery,
    counts: Arc<CountCache>,
) -> Result<ContentPage> {
    let fail = |e| list_error(&compiled.checks, e);
    // The content stamp travels with the first statement, pipelined on the one
    // connection: a kept total then costs no round trip of its own.
    let mut stamp = None;
    for attempt in &compiled.attempts {
        let page = async { page_docs(&conn, &attempt.page, false).await.map_err(fail) };
        let (docs, _) = with_stamp(&conn, &mut stamp, page).await?;
        if docs.len() as u64 >= attempt.size {
            let total = count(&conn, &compiled, &query, &counts, stamp).await?;
            return Ok(ContentPage {
                total: total.value,
                total_estimated: total.estimated,
                docs,
            });
        }
    }
    let page = async {
        page_docs(&conn, &compiled.page, compiled.page_has_total)
            .await
            .map_err(fail)
    };
    let (docs, total) = with_stamp(&conn, &mut stamp, page).await?;
    let total = match total {
        Some(n) => Total::exact(n),
        None => count(&conn, &compiled, &query, &counts, stamp).await?,
    };
    Ok(ContentPage {
        total: total.value,
        total_estimated: total.estimated,
        docs,
    })
}

/// The documents `page` selects, and the total its second column carries when
/// `has_total`.
async fn page_docs(
    conn: &Conn,
    page: &hub_query::SqlBuilder,
    has_total: bool,
) -> std::result::Result<(Vec<String>, Option<u64>), tokio_postgres::Error> {
    let params = bind(page.params());
    let stmt = super::prepare_bounded(conn, page.as_sql()).await?;
    let rows = conn.query(&stmt, &refs(&params)).await?;
    let mut total = None;
    let mut docs = Vec::with_capacity(rows.len());
    for row in &rows {
        if has_total {
            total = Some(row.try_get::<_, i64>(1)? as u64);
        }
        docs.push(row.try_get::<_, String>(0)?);
    }
    Ok((docs, total))
}

/// The list's total from its count statement (and the planner's estimate past the
/// limit), kept in `counts` until the next write.
async fn count(
    conn: &Conn,
    compiled: &CompiledList,
    query: &ContentQuery,
    counts: &CountCache,
    stamp: Option<i64>,
) -> Result<Total> {
    let fail = |e| list_error(&compiled.checks, e);
    let stamp = match stamp {
        Some(stamp) => stamp,
        None => content_stamp(conn).await?,
    };
    if let Some(total) = counts.get(&compiled.count, stamp) {
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
    counts.put(&compiled.count, stamp, total);
    Ok(total)
}

/// The content stamp (see `count_cache`).
async fn content_stamp(conn: &Conn) -> Result<i64> {
    let stmt = super::prepare_bounded(conn, STAMP_SQL).await?;
    Ok(conn.query_one(&stmt, &[]).await?.try_get(0)?)
}

/// Runs `work`, and, pipelined with it on the connection, reads the content stamp when
/// `stamp` does not hold it yet.
async fn with_stamp<T>(
    conn: &Conn,
    stamp: &mut Option<i64>,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    if stamp.is_some() {
        return work.await;
    }
    let (value, read) = futures::try_join!(work, content_stamp(conn))?;
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

/// Runs a write on the backend's runtime while this thread reports its progress.
fn with_progress<T, F, Fut>(
    backend: &PgBackend,
    progress: &mut dyn FnMut(u64),
    work: F,
) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(Conn, std::sync::mpsc::Sender<u64>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<T>> + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let worker = s.spawn(move || backend.write_blocking(move |conn| work(conn, tx)));
        for done in rx {
            progress(done);
        }
        worker
            .join()
            .map_err(|_| StoreError::Task("a bulk write panicked".into()))?
    })
}

/// Upserts `docs` in one transaction as `plan_put` decides, locking each stored row.
async fn put_tracked(
    mut conn: Conn,
    docs: Vec<(&'static str, Value)>,
    now: String,
    create_only: bool,
    progress: Option<std::sync::mpsc::Sender<u64>>,
) -> Result<Vec<PutOutcome>> {
    let tx = conn.transaction().await?;
    let select = tx
        .prepare_cached("SELECT doc FROM content WHERE entity = $1 AND id_key = $2 FOR UPDATE")
        .await?;
    let mut outcomes = Vec::with_capacity(docs.len());
    let mut written = Vec::new();
    for (n, (entity, doc)) in docs.into_iter().enumerate() {
        let (entity_name, id_key) = document_key(entity, &doc)?;
        let stored: Option<String> = tx
            .query_opt(&select, &[&entity_name, &id_key])
            .await?
            .map(|r| r.get(0));
        match plan_put(entity, doc, stored.as_deref(), &now, create_only)? {
            PutPlan::Keep(outcome) => outcomes.push(outcome),
            PutPlan::Write(outcome, indexed) => {
                outcomes.push(outcome);
                written.push(*indexed);
            }
        }
        if written.len() == CHUNK {
            write_indexed(&tx, &written).await?;
            written.clear();
        }
        if let Some(p) = &progress {
            if n % 1000 == 999 {
                let _ = p.send(n as u64 + 1);
            }
        }
    }
    write_indexed(&tx, &written).await?;
    bump_revisions(&tx, &written_entities(&outcomes)).await?;
    tx.commit().await?;
    if let Some(p) = &progress {
        let _ = p.send(outcomes.len() as u64);
    }
    Ok(outcomes)
}

/// Writes documents and their index rows (replacing existing ones) in the caller's transaction.
async fn write_indexed(tx: &Tx<'_>, docs: &[IndexedDocument]) -> Result<()> {
    if docs.is_empty() {
        return Ok(());
    }
    let entities: Vec<&str> = docs.iter().map(|d| d.entity).collect();
    let keys: Vec<&str> = docs.iter().map(|d| d.id_key.as_str()).collect();
    delete_side(tx, &entities, &keys).await?;
    let ids: Vec<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    let sort_keys: Vec<&str> = docs.iter().map(|d| d.sort_key.as_str()).collect();
    let sources: Vec<Option<&str>> = docs.iter().map(|d| d.source.as_deref()).collect();
    let active: Vec<Option<bool>> = docs.iter().map(|d| d.active).collect();
    let last_change: Vec<Option<&str>> = docs.iter().map(|d| d.last_change.as_deref()).collect();
    let latitude: Vec<Option<f64>> = docs.iter().map(|d| d.latitude).collect();
    let longitude: Vec<Option<f64>> = docs.iter().map(|d| d.longitude).collect();
    let bodies: Vec<&str> = docs.iter().map(|d| d.doc.as_str()).collect();
    let upsert = tx
        .prepare_cached(
            "INSERT INTO content (entity, id_key, id, sort_key, source, active, last_change, latitude, longitude, doc, docb) \
             SELECT e, k, i, s, src, a, lc, lat, lon, d, d::jsonb \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::float8[], $9::float8[], $10::text[]) \
                  AS t(e, k, i, s, src, a, lc, lat, lon, d) \
             ON CONFLICT (entity, id_key) DO UPDATE SET id = EXCLUDED.id, sort_key = EXCLUDED.sort_key, source = EXCLUDED.source, \
                 active = EXCLUDED.active, last_change = EXCLUDED.last_change, latitude = EXCLUDED.latitude, \
                 longitude = EXCLUDED.longitude, doc = EXCLUDED.doc, docb = EXCLUDED.docb",
        )
        .await?;
    tx.execute(
        &upsert,
        &[
            &entities,
            &keys,
            &ids,
            &sort_keys,
            &sources,
            &active,
            &last_change,
            &latitude,
            &longitude,
            &bodies,
        ],
    )
    .await?;

    let (mut e, mut k, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for d in docs {
        for lang in &d.languages {
            e.push(d.entity);
            k.push(d.id_key.as_str());
            a.push(*lang);
        }
    }
    if !e.is_empty() {
        let stmt = tx
            .prepare_cached("INSERT INTO content_language (entity, id_key, lang) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING")
            .await?;
        tx.execute(&stmt, &[&e, &k, &a]).await?;
    }
    e.clear();
    k.clear();
    a.clear();
    for d in docs {
        for (lang, folded) in &d.titles {
            e.push(d.entity);
            k.push(d.id_key.as_str());
            a.push(*lang);
            b.push(folded.as_str());
        }
    }
    if !e.is_empty() {
        let stmt = tx
            .prepare_cached("INSERT INTO content_title (entity, id_key, lang, folded) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])")
            .await?;
        tx.execute(&stmt, &[&e, &k, &a, &b]).await?;
    }
    e.clear();
    k.clear();
    a.clear();
    b.clear();
    for d in docs {
        for (kind, tag) in &d.tags {
            e.push(d.entity);
            k.push(d.id_key.as_str());
            a.push(*kind);
            b.push(tag.as_str());
        }
    }
    if !e.is_empty() {
        let stmt = tx
            .prepare_cached(
                "INSERT INTO content_tag (entity, id_key, kind, tag) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING",
            )
            .await?;
        tx.execute(&stmt, &[&e, &k, &a, &b]).await?;
    }
    let (mut e, mut k, mut begin, mut end) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for d in docs {
        for (b, en) in &d.dates {
            e.push(d.entity);
            k.push(d.id_key.as_str());
            begin.push(b.as_str());
            end.push(en.as_str());
        }
    }
    if !e.is_empty() {
        let stmt = tx
            .prepare_cached("INSERT INTO content_date (entity, id_key, date_begin, date_end) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])")
            .await?;
        tx.execute(&stmt, &[&e, &k, &begin, &end]).await?;
    }
    Ok(())
}

async fn delete_side(tx: &Tx<'_>, entities: &[&str], keys: &[&str]) -> Result<()> {
    for table in [
        "content_language",
        "content_title",
        "content_tag",
        "content_date",
    ] {
        let stmt = tx
            .prepare_cached(&format!(
                "DELETE FROM {table} t USING unnest($1::text[], $2::text[]) AS d(e, k) WHERE t.entity = d.e AND t.id_key = d.k"
            ))
            .await?;
        tx.execute(&stmt, &[&entities, &keys]).await?;
    }
    Ok(())
}

/// Counts writes per entity type in the writing transaction (see the SQLite twin).
async fn bump_revisions(tx: &Tx<'_>, entities: &[&str]) -> Result<()> {
    let stmt = tx
        .prepare_cached(
            "INSERT INTO content_revision (entity, revision) VALUES ($1, 1) ON CONFLICT (entity) DO UPDATE SET revision = content_revision.revision + 1",
        )
        .await?;
    for entity in entities {
        tx.execute(&stmt, &[entity]).await?;
    }
    Ok(())
}
