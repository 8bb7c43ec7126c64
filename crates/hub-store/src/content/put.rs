//! The decisions of a tracked save, shared by both backends: what saving a document
//! over the stored one means (create, change, or leave alone) and the `_Meta`
//! bookkeeping — `LastUpdate` on every save, `LastChange` only when the content
//! (everything but `_Meta`) differs, nothing at all for a create-only save of a taken id.
//!
//! Owns: those decisions as pure functions. Must not: read or write rows; a backend
//! loads the stored document, calls [`plan_put`], and writes what it returns.

use serde_json::{Map, Value};

use super::PutOutcome;
use crate::{IndexedDocument, Result, StoreError};

/// What a backend does with one document of a tracked save.
#[derive(Debug)]
pub(crate) enum PutPlan {
    /// Write nothing (a create-only save found the id taken).
    Keep(PutOutcome),
    /// Write this document (with its index rows).
    Write(PutOutcome, Box<IndexedDocument>),
}

#[cfg(test)]
impl PutPlan {
    fn outcome(&self) -> &PutOutcome {
        match self {
            PutPlan::Keep(o) | PutPlan::Write(o, _) => o,
        }
    }
}

/// The key a backend loads the stored document by: entity and lower-case id. Validates
/// the document (an object of a known entity with an id) on the way.
pub(crate) fn document_key(entity: &'static str, doc: &Value) -> Result<(&'static str, String)> {
    let probe = IndexedDocument::from_document(entity, doc)?;
    Ok((probe.entity, probe.id_key))
}

/// Decides a tracked save of `doc` over `stored` (the stored document's JSON text, if
/// any) at time `now`.
pub(crate) fn plan_put(
    entity: &'static str,
    mut doc: Value,
    stored: Option<&str>,
    now: &str,
    create_only: bool,
) -> Result<PutPlan> {
    let old: Option<Value> = stored.map(serde_json::from_str).transpose()?;
    let created = old.is_none();
    if create_only && !created {
        let probe = IndexedDocument::from_document(entity, &doc)?;
        return Ok(PutPlan::Keep(PutOutcome {
            entity: probe.entity,
            id: probe.id,
            created: false,
            changed: false,
            existed: true,
        }));
    }
    let changed = stamp_meta(&mut doc, old.as_ref(), now)?;
    let indexed = IndexedDocument::from_document(entity, &doc)?;
    Ok(PutPlan::Write(
        PutOutcome {
            entity: indexed.entity,
            id: indexed.id.clone(),
            created,
            changed,
            existed: false,
        },
        Box::new(indexed),
    ))
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
fn stamp_meta(doc: &mut Value, old: Option<&Value>, now: &str) -> Result<bool> {
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

/// The entity types whose revision a write bumps, once each, in a stable order (so
/// concurrent writers lock the revision rows alike), each with how many of its
/// documents the write wrote: what a kept total's slack is measured in
/// (`count_cache`).
pub(crate) fn revisions_to_bump<'a>(
    entities: impl Iterator<Item = &'a str>,
) -> Vec<(&'a str, u64)> {
    let mut touched: Vec<&str> = entities.collect();
    touched.sort_unstable();
    let mut bumps: Vec<(&str, u64)> = Vec::new();
    for entity in touched {
        match bumps.last_mut() {
            Some((last, documents)) if *last == entity => *documents += 1,
            _ => bumps.push((entity, 1)),
        }
    }
    bumps
}

/// The entity types a tracked save wrote (create-only saves of taken ids wrote nothing).
pub(crate) fn written_entities(plans: &[PutOutcome]) -> Vec<(&'static str, u64)> {
    revisions_to_bump(plans.iter().filter(|o| !o.existed).map(|o| o.entity))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: &str = "2030-01-02T03:04:05Z";
    const BEFORE: &str = "2020-01-01T00:00:00Z";

    fn stored(shortname: &str) -> String {
        json!({"Id": "A1", "Shortname": shortname, "_Meta": {"LastChange": BEFORE, "LastUpdate": BEFORE}})
            .to_string()
    }

    #[test]
    fn a_save_stamps_last_update_always_and_last_change_only_on_a_change() {
        // (stored, new Shortname, create_only) → (created, changed, existed, LastUpdate, LastChange)
        type Row = (
            Option<String>,
            &'static str,
            bool,
            (bool, bool, bool, Option<&'static str>, Option<&'static str>),
        );
        let cases: Vec<Row> = vec![
            (None, "x", false, (true, true, false, Some(NOW), Some(NOW))),
            (None, "x", true, (true, true, false, Some(NOW), Some(NOW))),
            (
                Some(stored("x")),
                "x",
                false,
                (false, false, false, Some(NOW), Some(BEFORE)),
            ),
            (
                Some(stored("x")),
                "y",
                false,
                (false, true, false, Some(NOW), Some(NOW)),
            ),
            (
                Some(stored("x")),
                "y",
                true,
                (false, false, true, None, None),
            ),
        ];
        for (old, shortname, create_only, expected) in cases {
            let doc =
                json!({"Id": "A1", "Shortname": shortname, "_Meta": {"LastUpdate": "ignored"}});
            let plan = plan_put("Article", doc, old.as_deref(), NOW, create_only).unwrap();
            let o = plan.outcome().clone();
            let (update, change) = match &plan {
                PutPlan::Keep(_) => (None, None),
                PutPlan::Write(_, d) => {
                    let v: Value = serde_json::from_str(&d.doc).unwrap();
                    let at = |k: &str| {
                        v["_Meta"][k].as_str().map(|s| -> &'static str {
                            if s == NOW {
                                NOW
                            } else if s == BEFORE {
                                BEFORE
                            } else {
                                "other"
                            }
                        })
                    };
                    (at("LastUpdate"), at("LastChange"))
                }
            };
            assert_eq!(
                (o.created, o.changed, o.existed, update, change),
                expected,
                "{old:?} → {shortname} (create_only {create_only})"
            );
            assert_eq!((o.entity, o.id.as_str()), ("Article", "A1"));
        }
    }

    #[test]
    fn documents_that_are_no_objects_are_refused_as_the_clients_fault() {
        for doc in [json!([1]), json!("x"), json!({"Shortname": "no id"})] {
            let e = plan_put("Article", doc.clone(), None, NOW, false).unwrap_err();
            assert!(e.is_client_fault(), "{doc}: {e}");
        }
    }

    #[test]
    fn revisions_are_bumped_once_per_entity_in_order_with_the_documents_written() {
        type Bumps<'a> = &'a [(&'a str, u64)];
        let cases: [(&[&str], Bumps); 3] = [
            (&[], &[]),
            (
                &["Event", "Article", "Event"],
                &[("Article", 1), ("Event", 2)],
            ),
            (&["Poi"], &[("Poi", 1)]),
        ];
        for (input, expected) in cases {
            assert_eq!(revisions_to_bump(input.iter().copied()), expected);
        }
        let outcome = |entity, existed| PutOutcome {
            entity,
            id: "x".into(),
            created: false,
            changed: false,
            existed,
        };
        assert_eq!(
            written_entities(&[
                outcome("Event", true),
                outcome("Poi", false),
                outcome("Poi", false)
            ]),
            vec![("Poi", 2)]
        );
    }
}
