//! Closed content data: accommodation room data and availability. Callers without a
//! reading role (see `hub_model::principal`, `Closed::Content`) get the base document with those parts removed
//! and `_Meta.Reduced: true` — a 200, never an error (spec: Errors table).

use std::borrow::Cow;

use chrono::NaiveDate;
use serde_json::{Map, Value};

use crate::error::ContentError;
use crate::json_text::{key, members, skip_space, value_end, MemberCuts, Splice};
use crate::params::{parse_bool, RawQuery};
use hub_store::StoreError;

/// Fields of an accommodation that only readers with a role see.
pub const CLOSED_ACCOMMODATION_FIELDS: &[&str] = &["AccoRoomInfo", "Availability"];

/// Fields of a room that everyone sees; the rest (names, descriptions, prices,
/// features, images) is closed.
pub const OPEN_ROOM_FIELDS: &[&str] = &[
    "Id",
    "A0RID",
    "Shortname",
    "Active",
    "Source",
    "HasLanguage",
    "LicenseInfo",
    "Self",
    "_Meta",
];

/// True for entity types with closed parts.
pub fn has_closed_parts(entity: &str) -> bool {
    matches!(entity, "Accommodation" | "AccommodationRoom")
}

fn mark_reduced(map: &mut Map<String, Value>) {
    let meta = map
        .entry("_Meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert("Reduced".into(), Value::Bool(true));
    }
}

/// The open part of a stored document of `entity`.
pub fn reduce(entity: &str, stored: &str) -> Result<String, StoreError> {
    match has_closed_parts(entity).then(|| reduce_text(entity, stored)) {
        Some(Some(reduced)) => Ok(reduced.into_owned()),
        _ => reduce_parsed(entity, stored),
    }
}

/// [`reduce`] by parsing the document and writing it out again.
fn reduce_parsed(entity: &str, stored: &str) -> Result<String, StoreError> {
    let mut doc: Value = serde_json::from_str(stored)?;
    if let Value::Object(map) = &mut doc {
        match entity {
            "Accommodation" => CLOSED_ACCOMMODATION_FIELDS.iter().for_each(|f| {
                map.shift_remove(*f);
            }),
            "AccommodationRoom" => map.retain(|k, _| OPEN_ROOM_FIELDS.contains(&k.as_str())),
            _ => return Ok(stored.to_string()),
        }
        mark_reduced(map);
    }
    Ok(serde_json::to_string(&doc)?)
}

/// [`reduce`] on the text ([`crate::json_text`]): the closed members cut out and the
/// `Reduced` of `_Meta` set to `true` where it stands, the rest copied as stored. `None`
/// for a document this does not cover (not an object, no `_Meta` object holding
/// `Reduced`, `_Meta` twice), which takes the parsed path; the store writes every
/// document with `_Meta.Reduced`.
fn reduce_text<'a>(entity: &str, stored: &'a str) -> Option<Cow<'a, str>> {
    let bytes = stored.as_bytes();
    let open = skip_space(bytes, 0);
    if *bytes.get(open)? != b'{' {
        return None;
    }
    let (mut splice, mut cuts, mut marked) = (Splice::new(stored), MemberCuts::default(), 0);
    let close_end = members(bytes, open, |member| {
        cuts.start(&mut splice, member);
        let name = key(&stored[member.key_start..member.key_end])?;
        let cut = match entity {
            "Accommodation" => CLOSED_ACCOMMODATION_FIELDS.contains(&name.as_ref()),
            _ => !OPEN_ROOM_FIELDS.contains(&name.as_ref()),
        };
        let end = match (cut, name == "_Meta") {
            (false, true) => {
                marked += 1;
                mark_reduced_text(stored, member.value_at, &mut splice)?
            }
            _ => value_end(bytes, member.value_at)?,
        };
        cuts.member(&mut splice, member, end, cut);
        Some(end)
    })?;
    cuts.finish(&mut splice);
    (marked == 1 && skip_space(bytes, close_end) == bytes.len()).then(|| splice.finish())
}

/// Sets the `Reduced` member of the `_Meta` object at `at` to `true`; the end of that
/// object, or `None` when it is not an object or has no `Reduced`.
fn mark_reduced_text(text: &str, at: usize, splice: &mut Splice) -> Option<usize> {
    let bytes = text.as_bytes();
    let open = skip_space(bytes, at);
    if *bytes.get(open)? != b'{' {
        return None;
    }
    let mut marked = false;
    let close_end = members(bytes, open, |member| {
        let end = value_end(bytes, member.value_at)?;
        if key(&text[member.key_start..member.key_end])? == "Reduced" {
            splice.replace(skip_space(bytes, member.value_at), end, "true");
            marked = true;
        }
        Some(end)
    })?;
    marked.then_some(close_end)
}

/// `availabilitycheck=true&arrival=…&departure=…`: the stay asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stay {
    pub arrival: NaiveDate,
    pub departure: NaiveDate,
}

fn date(raw: &RawQuery, name: &str) -> Result<NaiveDate, ContentError> {
    let invalid = |detail: String| ContentError::InvalidParameter {
        parameter: name.to_string(),
        detail,
    };
    let value = raw
        .get(name)
        .ok_or_else(|| invalid("required with availabilitycheck=true; use YYYY-MM-DD".into()))?;
    NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .map_err(|_| invalid(format!("'{value}' is not a date; use YYYY-MM-DD")))
}

/// The requested stay, when `availabilitycheck=true`.
pub fn availability_search(raw: &RawQuery) -> Result<Option<Stay>, ContentError> {
    if parse_bool(raw, "availabilitycheck")? != Some(true) {
        return Ok(None);
    }
    let (arrival, departure) = (date(raw, "arrival")?, date(raw, "departure")?);
    if departure <= arrival {
        return Err(ContentError::InvalidParameter {
            parameter: "departure".into(),
            detail: "must be after arrival".into(),
        });
    }
    if (departure - arrival).num_days() > 60 {
        return Err(ContentError::InvalidParameter {
            parameter: "departure".into(),
            detail: "a stay is at most 60 nights".into(),
        });
    }
    Ok(Some(Stay { arrival, departure }))
}

/// True when the accommodation's calendar says available for every night of the stay.
pub fn is_available(doc: &Value, stay: Stay) -> bool {
    let Some(calendar) = doc.get("Availability").and_then(Value::as_array) else {
        return false;
    };
    stay.arrival
        .iter_days()
        .take_while(|d| *d < stay.departure)
        .all(|night| {
            let key = night.format("%Y-%m-%d").to_string();
            calendar.iter().any(|e| {
                e.get("Date")
                    .and_then(Value::as_str)
                    .is_some_and(|d| d.get(..10) == Some(key.as_str()))
                    && e.get("Available").and_then(Value::as_bool) == Some(true)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random_json::RandomJson;
    use serde_json::json;

    #[test]
    fn reduction_removes_closed_parts_and_marks_the_document() {
        let acco = json!({"Id": "a", "AccoRoomInfo": [{"Id": "r"}], "Availability": [], "Shortname": "x", "_Meta": {"Reduced": false}});
        let out: Value =
            serde_json::from_str(&reduce("Accommodation", &acco.to_string()).unwrap()).unwrap();
        assert_eq!(
            out,
            json!({"Id": "a", "Shortname": "x", "_Meta": {"Reduced": true}})
        );
        let room = json!({"Id": "r", "A0RID": "a", "AccoRoomDetail": {"de": {"Name": "Suite"}}, "PriceFrom": 90});
        let out: Value =
            serde_json::from_str(&reduce("AccommodationRoom", &room.to_string()).unwrap()).unwrap();
        assert_eq!(
            out,
            json!({"Id": "r", "A0RID": "a", "_Meta": {"Reduced": true}})
        );
    }

    /// Random accommodations and rooms (closed and open keys, `_Meta` with or without
    /// `Reduced`, or not an object, keys with quotes): the text path gives the parsed
    /// path's bytes on compact text, and covers the documents the store writes.
    #[test]
    fn the_text_reduction_equals_the_parsed_one_on_random_documents() {
        const KEYS: &[&str] = &[
            "Id",
            "AccoRoomInfo",
            "Availability",
            "Shortname",
            "_Meta",
            "A0RID",
            "Reduced",
            "x",
            "a\"b",
            "c\\",
        ];
        let mut random = RandomJson::new(0x2545_f491_4f6c_dd1d, KEYS);
        let mut by_text = 0;
        for round in 0..4_000 {
            let mut doc = match round % 8 {
                0 => random.value(0),
                _ => Value::Object(random.object(0)),
            };
            if let (Value::Object(map), true) = (&mut doc, round % 4 != 0) {
                let mut meta = random.object(1);
                meta.insert("Reduced".into(), Value::Bool(random.below(2) == 0));
                map.insert("_Meta".into(), Value::Object(meta));
            }
            let compact = doc.to_string();
            for entity in ["Accommodation", "AccommodationRoom"] {
                let parsed = reduce_parsed(entity, &compact).unwrap();
                assert_eq!(
                    reduce(entity, &compact).unwrap(),
                    parsed,
                    "{entity} {compact}"
                );
                by_text += usize::from(reduce_text(entity, &compact).is_some());
            }
        }
        assert!(
            by_text > 3_000,
            "the text path covers written documents ({by_text})"
        );
    }

    #[test]
    fn the_text_reduction_leaves_unusual_documents_to_the_parser() {
        for text in [
            r#"[1]"#,
            r#"{}"#,
            r#"{"Id":"a"}"#,
            r#"{"Id":"a","_Meta":{"Type":"x"}}"#,
            r#"{"Id":"a","_Meta":[]}"#,
            r#"{"_Meta":{"Reduced":false},"_Meta":{"Reduced":false}}"#,
            r#"{"Id":"a","_Meta":{"Reduced":false}"#,
        ] {
            assert!(reduce_text("Accommodation", text).is_none(), "{text}");
        }
        assert_eq!(
            reduce_text(
                "Accommodation",
                r#"{"AccoRoomInfo":[{"Id":"r"}],"Id":"a","_Meta":{"Reduced":false,"Type":"x"},"Availability":[]}"#
            )
            .as_deref(),
            Some(r#"{"Id":"a","_Meta":{"Reduced":true,"Type":"x"}}"#)
        );
    }

    #[test]
    fn availability_needs_every_night() {
        let doc = json!({"Availability": [
            {"Date": "2025-01-01", "Available": true}, {"Date": "2025-01-02T00:00:00", "Available": true}, {"Date": "2025-01-03", "Available": false}
        ]});
        let stay = |a: &str, d: &str| Stay {
            arrival: a.parse().unwrap(),
            departure: d.parse().unwrap(),
        };
        assert!(is_available(&doc, stay("2025-01-01", "2025-01-03")));
        assert!(!is_available(&doc, stay("2025-01-02", "2025-01-04")));
        assert!(!is_available(&json!({}), stay("2025-01-01", "2025-01-02")));
    }
}

tokio::task_local! {
    static FULL_ACCESS: bool;
}

/// Runs a request's handling knowing whether the caller may see closed data.
pub async fn with_access<F: std::future::Future>(full: bool, work: F) -> F::Output {
    FULL_ACCESS.scope(full, work).await
}

/// True inside [`with_access`]`(true, …)`; false (anonymous) everywhere else.
pub fn full_access() -> bool {
    FULL_ACCESS.try_with(|v| *v).unwrap_or(false)
}

/// A stored document as this caller may see it.
pub fn visible(entity: &hub_model::EntityType, stored: String) -> Result<String, StoreError> {
    if has_closed_parts(entity.name) && !full_access() {
        reduce(entity.name, &stored)
    } else {
        Ok(stored)
    }
}

/// A page of stored documents as this caller may see them.
pub fn visible_page(
    entity: &hub_model::EntityType,
    mut page: hub_store::ContentPage,
) -> Result<hub_store::ContentPage, StoreError> {
    if has_closed_parts(entity.name) && !full_access() {
        page.docs = page
            .docs
            .iter()
            .map(|d| reduce(entity.name, d))
            .collect::<Result<_, _>>()?;
    }
    Ok(page)
}

/// The availability search: for a caller with a reading role, restricts an
/// accommodation list to those available for every night of the stay. Without the role
/// the search is ignored (the answer must not reveal availability), so base data comes back.
pub async fn apply_availability(
    state: &crate::ContentState,
    entity: &hub_model::EntityType,
    raw: &RawQuery,
    filters: &mut Vec<hub_query::content::ContentFilter>,
) -> Result<(), ContentError> {
    if entity.name != "Accommodation" {
        return Ok(());
    }
    let Some(stay) = availability_search(raw)? else {
        return Ok(());
    };
    if !full_access() {
        return Ok(());
    }
    let docs = state.content.all("Accommodation").await?;
    let mut ids: Vec<String> = docs
        .iter()
        .filter(|d| is_available(d, stay))
        .filter_map(|d| d.get("Id").and_then(Value::as_str).map(str::to_lowercase))
        .collect();
    if ids.is_empty() {
        // No id matches this one: an empty result.
        ids.push("\u{1}".into());
    }
    filters.push(hub_query::content::ContentFilter::IdIn(ids));
    Ok(())
}

/// The one way a Content API query reaches the store: for a caller without the reading
/// role the query is first held to [`crate::closed_query::open_query`] (closed paths
/// refused, the room title search narrowed to the id), and the page comes back reduced.
pub async fn list_visible(
    repo: &dyn hub_store::ContentRepo,
    entity: &hub_model::EntityType,
    query: hub_query::content::ContentQuery,
) -> Result<hub_store::ContentPage, ContentError> {
    let query = if has_closed_parts(entity.name) && !full_access() {
        crate::closed_query::open_query(query)?
    } else {
        query
    };
    Ok(visible_page(entity, repo.list(query).await?)?)
}
