//! The writes of [`super::PgContent`]: tracked saves in one transaction, the side tables
//! of indexed documents, deletions and revision bumps — rows moved as `crate::content`
//! decides.
//!
//! Must not: decide anything about the documents (`crate::content::put` does) or touch
//! the pools.

use serde_json::Value;

use super::CHUNK;
use crate::content::put::{document_key, plan_put, written_entities, PutPlan};
use crate::content::PutOutcome;
use crate::postgres::{Conn, PgBackend, Queries, Tx};
use crate::{IndexedDocument, Result, StoreError};

/// Runs a write on the backend's runtime while this thread reports its progress.
pub(super) fn with_progress<T, F, Fut>(
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
pub(super) async fn put_tracked(
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
pub(super) async fn write_indexed(tx: &Tx<'_>, docs: &[IndexedDocument]) -> Result<()> {
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
    let shortnames: Vec<Option<&str>> = docs.iter().map(|d| d.shortname.as_deref()).collect();
    let upsert = tx
        .prepare_cached(
            "INSERT INTO content (entity, id_key, id, sort_key, source, active, last_change, latitude, longitude, doc, docb, shortname) \
             SELECT e, k, i, s, src, a, lc, lat, lon, d, d::jsonb, sn \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::float8[], $9::float8[], $10::text[], $11::text[]) \
                  AS t(e, k, i, s, src, a, lc, lat, lon, d, sn) \
             ON CONFLICT (entity, id_key) DO UPDATE SET id = EXCLUDED.id, sort_key = EXCLUDED.sort_key, source = EXCLUDED.source, \
                 active = EXCLUDED.active, last_change = EXCLUDED.last_change, latitude = EXCLUDED.latitude, \
                 longitude = EXCLUDED.longitude, doc = EXCLUDED.doc, docb = EXCLUDED.docb, shortname = EXCLUDED.shortname",
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
            &shortnames,
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

pub(super) async fn delete_side(tx: &Tx<'_>, entities: &[&str], keys: &[&str]) -> Result<()> {
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

/// Counts writes per entity type, and the documents each wrote, in the writing
/// transaction (see the SQLite twin).
pub(super) async fn bump_revisions(tx: &Tx<'_>, entities: &[(&str, u64)]) -> Result<()> {
    let stmt = tx
        .prepare_cached(
            "INSERT INTO content_revision (entity, revision, written) VALUES ($1, 1, $2) ON CONFLICT (entity) DO UPDATE SET revision = content_revision.revision + 1, written = content_revision.written + EXCLUDED.written",
        )
        .await?;
    for (entity, documents) in entities {
        tx.execute(&stmt, &[entity, &(*documents as i64)]).await?;
    }
    Ok(())
}
