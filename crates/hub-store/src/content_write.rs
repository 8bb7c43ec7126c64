//! Single-document writes of the Content API and of `hub import`: upsert and delete in
//! one transaction, with the `_Meta` bookkeeping only the store can do race-free —
//! `LastUpdate` is set on every save, `LastChange` only when the content (everything but
//! `_Meta`) differs from what was stored.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};

use crate::{IndexedDocument, Result, StoreError};

/// What saving one document did.
#[derive(Debug, Clone, PartialEq)]
pub struct PutOutcome {
    pub entity: &'static str,
    pub id: String,
    /// No document with this id existed.
    pub created: bool,
    /// The content differs from the stored one (always true when created).
    pub changed: bool,
    /// A create-only save found the id taken and wrote nothing.
    pub existed: bool,
}

fn without_meta(doc: &Value) -> Value {
    match doc {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "_Meta")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Sets `_Meta.LastUpdate` to `now`, and `_Meta.LastChange` to `now` when the content
/// (everything but `_Meta`) differs from `old`, else keeps the old one. True when changed.
pub(crate) fn stamp_meta(doc: &mut Value, old: Option<&Value>, now: &str) -> Result<bool> {
    let changed = match old {
        None => true,
        Some(old) => without_meta(old) != without_meta(doc),
    };
    let old_change = old.and_then(|o| o.pointer("/_Meta/LastChange")).cloned();
    let meta = doc
        .as_object_mut()
        .ok_or_else(|| StoreError::Invalid("a document must be a JSON object".into()))?
        .entry("_Meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let meta = meta.as_object_mut().expect("made an object above");
    meta.insert("LastUpdate".into(), Value::String(now.to_string()));
    let last_change = match (changed, old_change) {
        (false, Some(previous)) => previous,
        _ => Value::String(now.to_string()),
    };
    meta.insert("LastChange".into(), last_change);
    Ok(changed)
}

/// Upserts `docs` in one transaction, stamping `_Meta.LastUpdate`/`LastChange` with `now`.
/// An error leaves the store as it was.
pub(crate) fn put_tracked(
    conn: &mut Connection,
    docs: Vec<(&'static str, Value)>,
    now: &str,
    create_only: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<PutOutcome>> {
    let tx = conn.transaction()?;
    let mut outcomes = Vec::with_capacity(docs.len());
    for (n, (entity, mut doc)) in docs.into_iter().enumerate() {
        // Validates entity, object shape and id.
        let probe = IndexedDocument::from_document(entity, &doc)?;
        let old: Option<String> = tx
            .prepare_cached("SELECT doc FROM content WHERE entity = ?1 AND id_key = ?2")?
            .query_row(params![probe.entity, probe.id_key], |r| r.get(0))
            .optional()?;
        let old: Option<Value> = old.as_deref().map(serde_json::from_str).transpose()?;
        let created = old.is_none();
        if create_only && !created {
            // Nothing written; the caller sees `existed`.
            outcomes.push(PutOutcome {
                entity: probe.entity,
                id: probe.id,
                created: false,
                changed: false,
                existed: true,
            });
            continue;
        }
        let changed = stamp_meta(&mut doc, old.as_ref(), now)?;
        let indexed = IndexedDocument::from_document(entity, &doc)?;
        write_indexed(&tx, &indexed)?;
        outcomes.push(PutOutcome {
            entity: indexed.entity,
            id: indexed.id,
            created,
            changed,
            existed: false,
        });
        if n % 1000 == 999 {
            progress(n as u64 + 1);
        }
    }
    // Caches of whole collections (the traffic feed) must see single writes too.
    crate::sqlite::bump_revisions(
        &tx,
        outcomes.iter().filter(|o| !o.existed).map(|o| o.entity),
    )?;
    tx.commit()?;
    progress(outcomes.len() as u64);
    Ok(outcomes)
}

fn delete_side(conn: &Connection, entity: &str, id_key: &str) -> Result<()> {
    for table in ["content_language", "content_title", "content_tag"] {
        conn.prepare_cached(&format!(
            "DELETE FROM {table} WHERE entity = ?1 AND id_key = ?2"
        ))?
        .execute(params![entity, id_key])?;
    }
    Ok(())
}

fn write_indexed(conn: &Connection, d: &IndexedDocument) -> Result<()> {
    delete_side(conn, d.entity, &d.id_key)?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO content (entity, id_key, id, sort_key, source, active, last_change, latitude, longitude, doc, docb) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, jsonb(?10))",
    )?
    .execute(params![d.entity, d.id_key, d.id, d.sort_key, d.source, d.active, d.last_change, d.latitude, d.longitude, d.doc])?;
    for lang in &d.languages {
        conn.prepare_cached(
            "INSERT INTO content_language (entity, id_key, lang) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![d.entity, d.id_key, lang])?;
    }
    for (lang, folded) in &d.titles {
        conn.prepare_cached(
            "INSERT INTO content_title (entity, id_key, lang, folded) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![d.entity, d.id_key, lang, folded])?;
    }
    for (kind, tag) in &d.tags {
        conn.prepare_cached(
            "INSERT OR IGNORE INTO content_tag (entity, id_key, kind, tag) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![d.entity, d.id_key, kind, tag])?;
    }
    Ok(())
}

/// Deletes one document and its index rows; false when it did not exist.
pub(crate) fn delete(conn: &mut Connection, entity: &'static str, id_key: &str) -> Result<bool> {
    let tx = conn.transaction()?;
    delete_side(&tx, entity, id_key)?;
    let n = tx.execute(
        "DELETE FROM content WHERE entity = ?1 AND id_key = ?2",
        params![entity, id_key],
    )?;
    if n > 0 {
        crate::sqlite::bump_revisions(&tx, [entity].into_iter())?;
    }
    tx.commit()?;
    Ok(n > 0)
}
