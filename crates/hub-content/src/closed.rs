//! Closed content data: accommodation room data and availability. Callers without a
//! reading role (see `hub_model::principal`, `Closed::Content`) get the base document with those parts removed
//! and `_Meta.Reduced: true` — a 200, never an error (spec: Errors table).

use chrono::NaiveDate;
use serde_json::{Map, Value};

use crate::error::ContentError;
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
