//! What the store extracts from a document so filters and ordering need not parse JSON:
//! the columns of `content` and the rows of its side tables (languages, folded titles,
//! tags). Computed in Rust so both backends index exactly the same values.

use hub_model::language::{fold, parse_language, LANGUAGES};
use hub_model::time::normalize_timestamp;
use hub_model::EntityType;
use serde_json::Value;

use crate::{Result, StoreError};

/// Tag ids of the unified tag system (`Tags`, `TagIds`), also as `source.id`.
pub const TAG_KIND: &str = "tag";
/// Standardised Hub categories (`HubTags`, legacy `SmgTags`/`ODHTags`).
pub const HUB_TAG_KIND: &str = "hubtag";

#[derive(Debug, Clone, PartialEq)]
pub struct IndexedDocument {
    pub entity: &'static str,
    pub id: String,
    pub id_key: String,
    pub sort_key: String,
    /// The `Shortname` text as written (a map point's label).
    pub shortname: Option<String>,
    pub source: Option<String>,
    pub active: Option<bool>,
    pub last_change: Option<String>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub languages: Vec<&'static str>,
    /// (language, case-folded title)
    pub titles: Vec<(&'static str, String)>,
    /// (kind, lower-case tag)
    pub tags: Vec<(&'static str, String)>,
    /// Event date ranges `(begin, end)` as `YYYY-MM-DD HH:MM:SS` (events only).
    pub dates: Vec<(String, String)>,
    /// The document as compact JSON, key order preserved.
    pub doc: String,
}

fn str_at<'a>(doc: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(doc, |v, k| v.get(k))?.as_str()
}

fn f64_at(doc: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(doc, |v, k| v.get(k))?.as_f64()
}

impl IndexedDocument {
    pub fn from_document(entity: &'static str, doc: &Value) -> Result<IndexedDocument> {
        let entity_type = EntityType::by_name(entity)
            .ok_or_else(|| StoreError::Invalid(format!("unknown entity type {entity}")))?;
        if !doc.is_object() {
            return Err(StoreError::Invalid(
                "a document must be a JSON object".into(),
            ));
        }
        let id = match doc.get("Id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                return Err(StoreError::Invalid(
                    "a document needs a non-empty \"Id\"".into(),
                ))
            }
        };
        let id_key = id.to_lowercase();
        let written_shortname = str_at(doc, &["Shortname"]);
        let shortname = written_shortname.unwrap_or(&id);
        let source = str_at(doc, &["_Meta", "Source"])
            .or_else(|| str_at(doc, &["Source"]))
            .map(str::to_lowercase);
        let active = doc.get("Active").and_then(Value::as_bool);
        let last_change = str_at(doc, &["_Meta", "LastChange"])
            .or_else(|| str_at(doc, &["LastChange"]))
            .or_else(|| str_at(doc, &["_Meta", "LastUpdate"]))
            .and_then(normalize_timestamp);
        let (latitude, longitude) = coordinates(doc).unzip();

        let mut languages: Vec<&'static str> =
            match doc.get("HasLanguage").and_then(Value::as_array) {
                Some(list) => list
                    .iter()
                    .filter_map(Value::as_str)
                    .filter_map(parse_language)
                    .collect(),
                None => doc
                    .get("Detail")
                    .and_then(Value::as_object)
                    .map(|d| d.keys().filter_map(|k| parse_language(k)).collect())
                    .unwrap_or_default(),
            };
        languages.sort_unstable();
        languages.dedup();

        let mut titles = Vec::new();
        for (lang, path) in entity_type.title_paths_for(LANGUAGES) {
            let segments: Vec<&str> = path.split('.').collect();
            if let Some(title) = str_at(doc, &segments).filter(|t| !t.is_empty()) {
                let lang = parse_language(lang).expect("registry languages are known");
                titles.push((lang, fold(title)));
            }
        }

        let mut tags = Vec::new();
        if let Some(list) = doc.get("TagIds").and_then(Value::as_array) {
            tags.extend(
                list.iter()
                    .filter_map(Value::as_str)
                    .map(|t| (TAG_KIND, t.to_lowercase())),
            );
        }
        if let Some(list) = doc.get("Tags").and_then(Value::as_array) {
            for tag in list {
                if let Some(tag_id) = tag.get("Id").and_then(Value::as_str) {
                    tags.push((TAG_KIND, tag_id.to_lowercase()));
                    if let Some(src) = tag.get("Source").and_then(Value::as_str) {
                        tags.push((
                            TAG_KIND,
                            format!("{}.{}", src.to_lowercase(), tag_id.to_lowercase()),
                        ));
                    }
                }
            }
        }
        for field in ["HubTags", "ODHTags"] {
            if let Some(list) = doc.get(field).and_then(Value::as_array) {
                tags.extend(
                    list.iter()
                        .filter_map(|t| t.get("Id").and_then(Value::as_str))
                        .map(|t| (HUB_TAG_KIND, t.to_lowercase())),
                );
            }
        }
        if let Some(list) = doc.get("SmgTags").and_then(Value::as_array) {
            tags.extend(
                list.iter()
                    .filter_map(Value::as_str)
                    .map(|t| (HUB_TAG_KIND, t.to_lowercase())),
            );
        }
        tags.extend(crate::location_tags::location_tags(doc));
        tags.extend(hub_query::content::value_tags::field_values(doc));
        tags.sort();
        tags.dedup();

        Ok(IndexedDocument {
            entity: entity_type.name,
            sort_key: fold(shortname),
            shortname: written_shortname.map(str::to_string),
            id,
            id_key,
            source,
            active,
            last_change,
            latitude,
            longitude,
            languages,
            titles,
            tags,
            dates: if entity == "Event" {
                crate::content::event_dates::event_ranges(doc)
            } else {
                Vec::new()
            },
            doc: serde_json::to_string(doc)?,
        })
    }
}

/// The document's position as `(latitude, longitude)`: the default (or first) `GpsInfo`
/// entry, else top-level `Latitude`/`Longitude`, else `Geo.position`, else
/// `GpsPoints.position`. The one rule: the indexed columns that geographic filters read
/// and the geometry of GeoJSON/OGC output both come from it, so they always agree.
pub fn coordinates(doc: &Value) -> Option<(f64, f64)> {
    let pair = |v: &Value| Some((f64_at(v, &["Latitude"])?, f64_at(v, &["Longitude"])?));
    if let Some(list) = doc.get("GpsInfo").and_then(Value::as_array) {
        let chosen = list
            .iter()
            .find(|g| g.get("Default").and_then(Value::as_bool) == Some(true))
            .or_else(|| {
                list.iter()
                    .find(|g| str_at(g, &["Gpstype"]) == Some("position"))
            })
            .or_else(|| list.first());
        if let Some(p) = chosen.and_then(pair) {
            return Some(p);
        }
    }
    pair(doc)
        .or_else(|| doc.pointer("/Geo/position").and_then(pair))
        .or_else(|| doc.pointer("/GpsPoints/position").and_then(pair))
        .filter(|(lat, lon)| lat.is_finite() && lon.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extracts_what_filters_need() {
        let doc = json!({
            "Id": "AbC", "Shortname": "Großer Hof", "Active": true,
            "_Meta": {"Source": "LTS", "LastChange": "2024-01-02T09:30:00+01:00"},
            "HasLanguage": ["it", "de", "xx"],
            "Detail": {"de": {"Title": "Großer Hof"}, "it": {"Title": "Maso GRANDE"}, "en": {"Title": ""}},
            "GpsInfo": [{"Gpstype": "valleystationpoint", "Latitude": 1.0, "Longitude": 2.0}, {"Gpstype": "position", "Latitude": 46.5, "Longitude": 11.3}],
            "TagIds": ["Hiking"], "Tags": [{"Id": "hiking", "Source": "idm"}], "HubTags": [{"Id": "Wandern"}]
        });
        let ix = IndexedDocument::from_document("Article", &doc).unwrap();
        assert_eq!(ix.id_key, "abc");
        assert_eq!(ix.sort_key, "grosser hof");
        assert_eq!(ix.source.as_deref(), Some("lts"));
        assert_eq!(ix.last_change.as_deref(), Some("2024-01-02T08:30:00"));
        assert_eq!((ix.latitude, ix.longitude), (Some(46.5), Some(11.3)));
        assert_eq!(ix.languages, vec!["de", "it"]);
        assert_eq!(
            ix.titles,
            vec![
                ("de", "grosser hof".to_string()),
                ("it", "maso grande".to_string())
            ]
        );
        assert_eq!(
            ix.tags,
            vec![
                ("hubtag", "wandern".to_string()),
                ("tag", "hiking".to_string()),
                ("tag", "idm.hiking".to_string())
            ]
        );
    }

    #[test]
    fn rejects_documents_without_id() {
        assert!(IndexedDocument::from_document("Article", &json!({"Shortname": "x"})).is_err());
        assert!(IndexedDocument::from_document("Article", &json!([1])).is_err());
        assert!(IndexedDocument::from_document("Nope", &json!({"Id": "x"})).is_err());
    }
}
