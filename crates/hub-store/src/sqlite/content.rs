//! Content documents on SQLite: [`SqliteContent`] moves rows for the
//! [`ContentRepo`] — the list statements `hub-query` compiles, single reads, tracked
//! saves and bulk loads. Every decision (the `_Meta` bookkeeping, which revisions to
//! bump, what a failed check means) comes from `crate::content`.
//!
//! Must not: touch the connection pool (`sqlite/mod.rs`) or other domains' tables.

mod counts;
mod kept;

use std::sync::Arc;

use async_trait::async_trait;
use hub_query::content::bookmarks::BookmarkedPage;
use hub_query::content::prefixed::PrefixedPage;
use hub_query::content::sorted_whole::{WholeByKeys, KEYS_PER_READ};
use hub_query::content::{ContentQuery, Total, WholeWalk};
use hub_query::Dialect;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use super::{bind, SqliteBackend};
use crate::content::count_cache::CountCache;
use crate::content::prefixes::in_key_order;
use crate::content::put::{document_key, plan_put, revisions_to_bump, written_entities, PutPlan};
use crate::content::{
    compile, compile_stream, extent_of, extent_sql, failed_check_error, parse_documents,
    ContentPage, ContentRepo, DocumentStream, Extent, MapPoint, PutOutcome,
};
use crate::content::{kept_points, KeptOrders, KeptPoints};
use crate::rawfilter_functions::take_failed_check;
use crate::{IndexedDocument, Result};
use counts::{count, documents_for_plan};
use kept::{bookmarked_page, prefixed_page, rows};

/// The content repository of a SQLite store.
pub(crate) struct SqliteContent {
    pub(crate) backend: Arc<SqliteBackend>,
    pub(crate) counts: Arc<CountCache>,
    pub(crate) orders: Arc<KeptOrders>,
}

#[async_trait]
impl ContentRepo for SqliteContent {
    async fn list(&self, query: ContentQuery) -> Result<ContentPage> {
        let (compiled, log) = compile(&query, Dialect::Sqlite);
        let counts = self.counts.clone();
        let orders = self.orders.clone();
        let deep = BookmarkedPage::of(&query);
        let prefixed = PrefixedPage::of(&query);
        let filtered = PrefixedPage::filtered(&query);
        let page = self
            .backend
            .read(move |conn| {
                take_failed_check();
                let kept = (deep.as_ref(), prefixed.as_ref(), filtered.as_ref());
                let page = list_page(conn, &compiled, kept, &counts, &orders);
                page.map_err(|e| match take_failed_check() {
                    Some(failed) => failed_check_error(&compiled.checks, failed),
                    None => e,
                })
            })
            .await;
        log.finish();
        page
    }

    async fn stream(&self, query: ContentQuery) -> Result<DocumentStream> {
        let walk = WholeWalk::of(&query);
        let by_keys = WholeByKeys::of(&query);
        let (compiled, log) = compile_stream(query, Dialect::Sqlite);
        let (total_tx, total_rx) = tokio::sync::oneshot::channel();
        let (mut docs, rx) = crate::batches::channel();
        self.backend.spawn_read(move |conn| {
            let fail = |e: crate::StoreError| match take_failed_check() {
                Some(failed) => failed_check_error(&compiled.checks, failed),
                None => e,
            };
            let conn = match conn {
                Ok(conn) => conn,
                Err(e) => {
                    let _ = total_tx.send(Err(e));
                    return;
                }
            };
            take_failed_check();
            // One read transaction: the count and the cursor see the same snapshot.
            let snapshot = conn
                .unchecked_transaction()
                .map_err(crate::StoreError::from);
            let counted = snapshot.and_then(|tx| {
                let n: i64 = tx
                    .prepare_cached(compiled.count.as_sql())?
                    .query_row(bind(compiled.count.params()).as_slice(), |r| r.get(0))?;
                Ok(((tx, n as u64), n as u64))
            });
            let Some((tx, total)) =
                crate::batches::hand_over_count(total_tx, counted.map_err(fail))
            else {
                return;
            };
            let result = (|| -> Result<()> {
                if let Some(by_keys) = &by_keys {
                    return stream_by_keys(&tx, by_keys, &mut docs);
                }
                // Dense matches are read along the order rather than sorted.
                let walked = match &walk {
                    Some(walk) => {
                        let all = walk.documents().compile(Dialect::Sqlite).count;
                        let documents: i64 = tx
                            .prepare_cached(all.as_sql())?
                            .query_row(bind(all.params()).as_slice(), |r| r.get(0))?;
                        walk.statement(total, documents as u64)
                    }
                    None => None,
                };
                let page = walked.as_ref().unwrap_or(&compiled.page);
                let mut stmt = tx.prepare_cached(page.as_sql())?;
                let mut rows = stmt.query(bind(page.params()).as_slice())?;
                while let Some(row) = rows.next()? {
                    if docs.push_blocking(row.get::<_, String>(0)?).is_err() {
                        break;
                    }
                }
                Ok(())
            })()
            .map_err(fail);
            drop(tx);
            log.finish();
            docs.finish_blocking(result);
        });
        let total = total_rx
            .await
            .map_err(|_| crate::StoreError::Task("the document cursor stopped".into()))??;
        Ok(DocumentStream { total, docs: rx })
    }

    async fn points(&self, query: ContentQuery, limit: u64) -> Result<Vec<MapPoint>> {
        let compiled = query.compile_points(Dialect::Sqlite, limit);
        let listed = query.compile(Dialect::Sqlite);
        let counts = self.counts.clone();
        self.backend
            .read(move |conn| {
                take_failed_check();
                let points = dense_points(conn, &listed, &compiled.statement, limit, &counts)
                    .transpose()
                    .unwrap_or_else(|| map_points(conn, &compiled.statement));
                points.map_err(|e| match take_failed_check() {
                    Some(failed) => failed_check_error(&compiled.checks, failed),
                    None => e,
                })
            })
            .await
    }

    async fn get(&self, entity: &'static str, id: &str) -> Result<Option<String>> {
        let id_key = id.to_lowercase();
        self.backend
            .read(move |conn| {
                Ok(conn
                    .prepare_cached("SELECT doc FROM content WHERE entity = ?1 AND id_key = ?2")?
                    .query_row(params![entity, id_key], |r| r.get(0))
                    .optional()?)
            })
            .await
    }

    async fn all(&self, entity: &'static str) -> Result<Vec<Value>> {
        let docs = self
            .backend
            .read(move |conn| {
                let mut stmt = conn
                    .prepare_cached("SELECT doc FROM content WHERE entity = ?1 ORDER BY id_key")?;
                let rows = stmt.query_map([entity], |r| r.get::<_, String>(0))?;
                Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
            })
            .await?;
        parse_documents(docs)
    }

    async fn revision(&self, entity: &'static str) -> Result<i64> {
        // Asked on every response-cache hit: inline, and from memory while the database
        // is unchanged.
        let revisions = self.backend.revisions()?;
        Ok(revisions.get(entity).copied().unwrap_or(0))
    }

    async fn extent(&self, entity: &'static str) -> Result<Extent> {
        self.backend
            .read(move |conn| {
                Ok(conn
                    .prepare_cached(&extent_sql("?1"))?
                    .query_row([entity], |r| {
                        Ok(extent_of(
                            [r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?],
                            (r.get(4)?, r.get(5)?),
                        ))
                    })?)
            })
            .await
    }

    async fn counts(&self) -> Result<Vec<(String, u64)>> {
        self.backend
            .read(|conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT entity, COUNT(*) FROM content GROUP BY entity ORDER BY entity",
                )?;
                let rows = stmt.query_map([], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
                })?;
                Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
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
        let mut out = self
            .backend
            .write(move |conn| {
                put_tracked(conn, vec![(entity, doc)], &now, create_only, &mut |_| {})
            })
            .await?;
        Ok(out.pop().expect("one document in, one outcome out"))
    }

    fn put_tracked_blocking(
        &self,
        docs: Vec<(&'static str, Value)>,
        now: &str,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Vec<PutOutcome>> {
        self.backend
            .write_blocking(|conn| put_tracked(conn, docs, now, false, progress))
    }

    async fn delete(&self, entity: &'static str, id: &str) -> Result<bool> {
        let id_key = id.to_lowercase();
        self.backend
            .write(move |conn| {
                let tx = conn.transaction()?;
                delete_side(&tx, entity, &id_key)?;
                let n = tx.execute(
                    "DELETE FROM content WHERE entity = ?1 AND id_key = ?2",
                    params![entity, id_key],
                )?;
                if n > 0 {
                    bump_revisions(&tx, &[(entity, 1)])?;
                }
                tx.commit()?;
                Ok(n > 0)
            })
            .await
    }

    fn put_batch_blocking(
        &self,
        docs: &[(&'static str, Value)],
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let indexed = docs
            .iter()
            .map(|(entity, doc)| IndexedDocument::from_document(entity, doc))
            .collect::<Result<Vec<_>>>()?;
        self.backend
            .write_blocking(|conn| put_batch(conn, &indexed, progress))?;
        if indexed.len() >= BULK_ANALYZE_DOCUMENTS {
            self.backend.statistics_changed();
        }
        Ok(())
    }
}

/// Documents from which a batch write refreshes the planner's statistics.
const BULK_ANALYZE_DOCUMENTS: usize = 1000;

fn list_page(
    conn: &Connection,
    compiled: &hub_query::content::CompiledList,
    (deep, prefixed, filtered): (
        Option<&BookmarkedPage>,
        Option<&PrefixedPage>,
        Option<&PrefixedPage>,
    ),
    counts: &CountCache,
    orders: &KeptOrders,
) -> Result<ContentPage> {
    // A filtered list keeps a prefix only where a walk did not answer: it is read first
    // once kept.
    let kept_filtered = filtered.filter(|page| orders.prefixes.kept(page).is_some());
    if let Some((docs, total)) = prefixed
        .or(kept_filtered)
        .map(|page| prefixed_page(conn, page, &orders.prefixes))
        .transpose()?
        .flatten()
    {
        return Ok(ContentPage::of(Total::exact(total), docs));
    }
    if let Some(deep) = deep {
        let total = count(conn, compiled, counts)?;
        // A filtered list's statements test its filters as its density pays for.
        let deep = match &compiled.walk {
            Some(walk) if deep.is_filtered() => {
                let all = walk.documents().compile(Dialect::Sqlite);
                let documents = documents_for_plan(conn, &all, counts)?;
                deep.clone().counted(total, documents.value)
            }
            _ => deep.clone(),
        };
        if let Some(docs) = bookmarked_page(conn, &deep, &orders.bookmarks)? {
            return Ok(ContentPage::of(total, docs));
        }
    }
    for attempt in crate::content::attempts_worth_trying(counts, compiled) {
        let docs = page_docs(conn, &attempt.page, false)?.0;
        if docs.len() as u64 >= attempt.size {
            let total = count(conn, compiled, counts)?;
            return Ok(ContentPage::of(total, docs));
        }
    }
    if let Some(walk) = &compiled.walk {
        let total = count(conn, compiled, counts)?;
        if walk.past_the_end(total) {
            return Ok(ContentPage::of(total, Vec::new()));
        }
        let all = walk.documents().compile(Dialect::Sqlite);
        let documents = documents_for_plan(conn, &all, counts)?;
        if let Some(attempt) = walk.attempt(total, documents.value) {
            let docs = page_docs(conn, &attempt.page, false)?.0;
            if docs.len() as u64 >= attempt.size {
                return Ok(ContentPage::of(total, docs));
            }
        }
        // No walk answered: rather than sort every match for this page alone, keep the
        // first pages' keys for the pages that follow.
        if let Some((docs, total)) = filtered
            .filter(|_| total.value > 0)
            .map(|page| prefixed_page(conn, page, &orders.prefixes))
            .transpose()?
            .flatten()
        {
            return Ok(ContentPage::of(Total::exact(total), docs));
        }
    }
    let (docs, total_in_page) = page_docs(conn, &compiled.page, compiled.page_has_total)?;
    let total = match total_in_page {
        Some(n) => Total::exact(n),
        None => count(conn, compiled, counts)?,
    };
    Ok(ContentPage::of(total, docs))
}

/// The first `limit` points of a list whose count shows its matches dense, walked along
/// the order (see `hub_query`'s `points`), or its matches (`statement`) read where the
/// totals last kept show fewer than the limit; `None` when no walk pays or the walk's
/// prefix did not hold them. The totals last kept choose first ([`kept_points`]);
/// without them, or when a walk they chose found too few points, both are counted
/// afresh and kept.
fn dense_points(
    conn: &Connection,
    listed: &hub_query::content::CompiledList,
    statement: &hub_query::SqlBuilder,
    limit: u64,
    counts: &CountCache,
) -> Result<Option<Vec<MapPoint>>> {
    let Some(walk) = &listed.walk else {
        return Ok(None);
    };
    let all = walk.documents().compile(Dialect::Sqlite);
    let kept = kept_points(counts, listed, &all, limit);
    match &kept {
        KeptPoints::Walk(walked) => {
            if let Some(points) = walked_points(conn, walked, limit)? {
                return Ok(Some(points));
            }
        }
        KeptPoints::Matches => {
            let points = map_points(conn, statement)?;
            if (points.len() as u64) >= limit {
                count(conn, listed, counts)?;
                documents_for_plan(conn, &all, counts)?;
            }
            return Ok(Some(points));
        }
        KeptPoints::Count => {}
    }
    let total = count(conn, listed, counts)?;
    // Fewer matches than the limit are all read anyway: the entity is not counted.
    if total.value < limit {
        return Ok(None);
    }
    let documents = documents_for_plan(conn, &all, counts)?;
    match walk.points(total, documents.value, limit) {
        Some(walked) if !matches!(kept, KeptPoints::Walk(_)) => walked_points(conn, &walked, limit),
        _ => Ok(None),
    }
}

/// The points a walk found, when they are as many as the limit (otherwise its prefix
/// did not hold them).
fn walked_points(
    conn: &Connection,
    walked: &hub_query::content::points::CompiledPoints,
    limit: u64,
) -> Result<Option<Vec<MapPoint>>> {
    let points = map_points(conn, &walked.statement).map_err(|e| match take_failed_check() {
        Some(failed) => failed_check_error(&walked.checks, failed),
        None => e,
    })?;
    Ok((points.len() as u64 >= limit).then_some(points))
}

/// The rows of a points statement.
fn map_points(conn: &Connection, statement: &hub_query::SqlBuilder) -> Result<Vec<MapPoint>> {
    rows(conn, statement, |r| {
        Ok(MapPoint {
            id: r.get(0)?,
            latitude: r.get(1)?,
            longitude: r.get(2)?,
            shortname: r.get(3)?,
        })
    })
}

/// Streams a whole read in a `rawsort` order keys first (`hub_query::content::
/// sorted_whole`): every key in order, then each batch's documents by key, handed on in
/// the keys' order. In the caller's read transaction, so every key is found.
fn stream_by_keys(
    conn: &Connection,
    by_keys: &WholeByKeys,
    docs: &mut crate::batches::BatchSender<String>,
) -> Result<()> {
    let keys = rows(conn, &by_keys.keys(Dialect::Sqlite), |r| {
        r.get::<_, String>(0)
    })?;
    for batch in keys.chunks(KEYS_PER_READ) {
        let read = by_keys.documents(batch, Dialect::Sqlite);
        let found = rows(conn, &read, |r| Ok((r.get(0)?, r.get(1)?)))?;
        let ordered = in_key_order(batch, found).ok_or_else(|| {
            crate::StoreError::Task("a sorted key's document left its read transaction".into())
        })?;
        for doc in ordered {
            if docs.push_blocking(doc).is_err() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The documents `page` selects, and the total its second column carries when
/// `has_total`.
fn page_docs(
    conn: &Connection,
    page: &hub_query::SqlBuilder,
    has_total: bool,
) -> Result<(Vec<String>, Option<u64>)> {
    let mut total = None;
    let docs = rows(conn, page, |r| {
        if has_total {
            total = Some(r.get::<_, i64>(1)? as u64);
        }
        r.get::<_, String>(0)
    })?;
    Ok((docs, total))
}

/// Upserts `docs` in one transaction as `plan_put` decides. An error leaves the store
/// as it was.
fn put_tracked(
    conn: &mut Connection,
    docs: Vec<(&'static str, Value)>,
    now: &str,
    create_only: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<PutOutcome>> {
    let tx = conn.transaction()?;
    let mut outcomes = Vec::with_capacity(docs.len());
    for (n, (entity, doc)) in docs.into_iter().enumerate() {
        let (entity_name, id_key) = document_key(entity, &doc)?;
        let stored: Option<String> = tx
            .prepare_cached("SELECT doc FROM content WHERE entity = ?1 AND id_key = ?2")?
            .query_row(params![entity_name, id_key], |r| r.get(0))
            .optional()?;
        match plan_put(entity, doc, stored.as_deref(), now, create_only)? {
            PutPlan::Keep(outcome) => outcomes.push(outcome),
            PutPlan::Write(outcome, indexed) => {
                write_indexed(&tx, &indexed)?;
                outcomes.push(outcome);
            }
        }
        if n % 1000 == 999 {
            progress(n as u64 + 1);
        }
    }
    // Caches of whole collections (the traffic feed) must see single writes too.
    bump_revisions(&tx, &written_entities(&outcomes))?;
    tx.commit()?;
    progress(outcomes.len() as u64);
    Ok(outcomes)
}

/// Inserts or replaces already indexed documents in one transaction.
fn put_batch(
    conn: &mut Connection,
    docs: &[IndexedDocument],
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let tx = conn.transaction()?;
    for (n, d) in docs.iter().enumerate() {
        write_indexed(&tx, d)?;
        if n % 1000 == 999 {
            progress(n as u64 + 1);
        }
    }
    bump_revisions(&tx, &revisions_to_bump(docs.iter().map(|d| d.entity)))?;
    tx.commit()?;
    // Bulk loads change the shape of the data: refresh the planner's statistics so
    // it keeps choosing the selective indexes (tags by id, not by document).
    if docs.len() >= BULK_ANALYZE_DOCUMENTS {
        conn.execute_batch("ANALYZE")?;
    }
    progress(docs.len() as u64);
    Ok(())
}

/// Counts writes per entity type, and the documents each wrote, in the writing
/// transaction, so caches of derived views (the traffic feed, kept totals) can tell
/// cheaply whether, and how much, anything changed.
fn bump_revisions(tx: &Connection, entities: &[(&str, u64)]) -> Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO content_revision (entity, revision, written) VALUES (?1, 1, ?2) ON CONFLICT (entity) DO UPDATE SET revision = revision + 1, written = written + excluded.written",
    )?;
    for (entity, documents) in entities {
        stmt.execute(params![entity, *documents as i64])?;
    }
    Ok(())
}

fn delete_side(conn: &Connection, entity: &str, id_key: &str) -> Result<()> {
    for sql in [
        "DELETE FROM content_language WHERE entity = ?1 AND id_key = ?2",
        "DELETE FROM content_title WHERE entity = ?1 AND id_key = ?2",
        "DELETE FROM content_tag WHERE entity = ?1 AND id_key = ?2",
        "DELETE FROM content_date WHERE entity = ?1 AND id_key = ?2",
    ] {
        conn.prepare_cached(sql)?.execute(params![entity, id_key])?;
    }
    Ok(())
}

fn write_indexed(conn: &Connection, d: &IndexedDocument) -> Result<()> {
    delete_side(conn, d.entity, &d.id_key)?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO content (entity, id_key, id, sort_key, source, active, last_change, latitude, longitude, doc, docb, shortname) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, jsonb(?10), ?11)",
    )?
    .execute(params![d.entity, d.id_key, d.id, d.sort_key, d.source, d.active, d.last_change, d.latitude, d.longitude, d.doc, d.shortname])?;
    let mut language = conn.prepare_cached(
        "INSERT INTO content_language (entity, id_key, lang) VALUES (?1, ?2, ?3)",
    )?;
    for lang in &d.languages {
        language.execute(params![d.entity, d.id_key, lang])?;
    }
    let mut title = conn.prepare_cached(
        "INSERT INTO content_title (entity, id_key, lang, folded) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (lang, folded) in &d.titles {
        title.execute(params![d.entity, d.id_key, lang, folded])?;
    }
    let mut tag = conn.prepare_cached(
        "INSERT OR IGNORE INTO content_tag (entity, id_key, kind, tag) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (kind, t) in &d.tags {
        tag.execute(params![d.entity, d.id_key, kind, t])?;
    }
    let mut date = conn.prepare_cached(
        "INSERT INTO content_date (entity, id_key, date_begin, date_end) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (begin, end) in &d.dates {
        date.execute(params![d.entity, d.id_key, begin, end])?;
    }
    Ok(())
}
