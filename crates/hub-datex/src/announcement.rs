//! Reading an Announcement document (Content API JSON) into what a situation needs.
//!
//! Field names follow the Content API: `Id`, `TagIds` (or `Tags[].Id`), `StartTime`,
//! `EndTime`, `FirstImport`, `LastChange`, `_Meta.Source`, `_Meta.LastUpdate`,
//! `_Meta.UpdateInfo.UpdateHistory`, `Geo.position.{Latitude,Longitude}`,
//! `Mapping.ProviderProvinceBz.Id` and `Detail.{lang}.{Title,BaseText}`.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::category::{category_of, Category};
use crate::timezone::{parse_time, Zone};

/// The parts of an announcement a situation is built from.
#[derive(Debug, Clone)]
pub(crate) struct Announcement<'a> {
    /// Situation id: the document id without its `urn:announcements:<provider>:` prefix.
    pub id: &'a str,
    pub category: &'static Category,
    pub start: DateTime<Utc>,
    pub end: Option<DateTime<Utc>>,
    /// `FirstImport` (else the change time).
    pub created: DateTime<Utc>,
    /// `LastChange` (else `_Meta.LastUpdate`, else `FirstImport`, else the start).
    pub changed: DateTime<Utc>,
    /// Number of update-history entries, at least 1.
    pub version: usize,
    /// `_Meta.Source` as written in the document.
    pub source: &'a str,
    geo: Option<&'a Value>,
    mapping: Option<&'a Value>,
    detail: Option<&'a Value>,
}

/// Why a document is not a situation of a provider (for logging and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skip {
    OtherSource,
    NoCategory,
    NoId,
    NoStartTime,
}

/// `_Meta.Source` of a document (falls back to the top-level `Source`).
pub(crate) fn source_of(doc: &Value) -> Option<&str> {
    doc.get("_Meta")
        .and_then(|m| m.get("Source"))
        .and_then(Value::as_str)
        .or_else(|| doc.get("Source").and_then(Value::as_str))
}

/// The top-level fields, found in one pass over the object (cheaper than one hashed
/// lookup per field on documents of a few dozen keys).
#[derive(Default)]
struct Fields<'a> {
    id: Option<&'a Value>,
    tag_ids: Option<&'a Value>,
    tags: Option<&'a Value>,
    start: Option<&'a Value>,
    end: Option<&'a Value>,
    first_import: Option<&'a Value>,
    last_change: Option<&'a Value>,
    meta: Option<&'a Value>,
    source: Option<&'a Value>,
    geo: Option<&'a Value>,
    mapping: Option<&'a Value>,
    detail: Option<&'a Value>,
}

impl<'a> Fields<'a> {
    fn of(doc: &'a Value) -> Fields<'a> {
        let mut f = Fields::default();
        for (key, value) in doc.as_object().into_iter().flatten() {
            let slot = match key.as_str() {
                "Id" => &mut f.id,
                "TagIds" => &mut f.tag_ids,
                "Tags" => &mut f.tags,
                "StartTime" => &mut f.start,
                "EndTime" => &mut f.end,
                "FirstImport" => &mut f.first_import,
                "LastChange" => &mut f.last_change,
                "_Meta" => &mut f.meta,
                "Source" => &mut f.source,
                "Geo" => &mut f.geo,
                "Mapping" => &mut f.mapping,
                "Detail" => &mut f.detail,
                _ => continue,
            };
            *slot = Some(value);
        }
        f
    }

    fn tags(&self) -> impl Iterator<Item = &'a str> + Clone {
        let tag_ids = self
            .tag_ids
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        let tags = self
            .tags
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("Id").and_then(Value::as_str));
        tag_ids.chain(tags)
    }
}

fn time_of(value: Option<&Value>, zone: &Zone) -> Option<DateTime<Utc>> {
    value
        .and_then(Value::as_str)
        .and_then(|t| parse_time(t, zone))
}

/// The situation id: `urn:announcements:provincebz:1` → `1`. Ids of another shape are
/// kept whole.
pub(crate) fn situation_id(id: &str) -> &str {
    match id
        .strip_prefix("urn:announcements:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((_, tail)) if !tail.is_empty() => tail,
        _ => id,
    }
}

impl<'a> Announcement<'a> {
    /// Reads a document for the provider whose source is `source` (compared ignoring
    /// ASCII case).
    pub(crate) fn read(
        doc: &'a Value,
        source: &str,
        zone: &Zone,
    ) -> Result<Announcement<'a>, Skip> {
        let f = Fields::of(doc);
        let meta = f.meta.and_then(Value::as_object);
        let meta_field = |name: &str| meta.and_then(|m| m.get(name));
        let doc_source = meta_field("Source")
            .or(f.source)
            .and_then(Value::as_str)
            .filter(|s| s.eq_ignore_ascii_case(source))
            .ok_or(Skip::OtherSource)?;
        let category = category_of(f.tags()).ok_or(Skip::NoCategory)?;
        let id =
            f.id.and_then(Value::as_str)
                .map(situation_id)
                .filter(|id| !id.trim().is_empty())
                .ok_or(Skip::NoId)?;
        let start = time_of(f.start, zone).ok_or(Skip::NoStartTime)?;
        let end = time_of(f.end, zone);
        let first_import = time_of(f.first_import, zone);
        let changed = time_of(f.last_change, zone)
            .or_else(|| time_of(meta_field("LastUpdate"), zone))
            .or(first_import)
            .unwrap_or(start);
        let history = meta_field("UpdateInfo")
            .and_then(|u| u.get("UpdateHistory"))
            .and_then(Value::as_array);
        Ok(Announcement {
            id,
            category,
            start,
            end,
            created: first_import.unwrap_or(changed),
            changed,
            version: history.map_or(0, Vec::len).max(1),
            source: doc_source,
            geo: f.geo,
            mapping: f.mapping,
            detail: f.detail,
        })
    }

    /// The provider's own reference of the event (`Mapping.ProviderProvinceBz.Id`, else
    /// the `Id` of the first mapping that has one).
    pub(crate) fn reference(&self) -> Option<String> {
        let mapping = self.mapping?.as_object()?;
        let id_of = |m: &Value| match m.get("Id")? {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        mapping
            .get("ProviderProvinceBz")
            .and_then(id_of)
            .or_else(|| mapping.values().find_map(id_of))
    }

    /// Latitude and longitude (WGS84) of `Geo.position`, else of the first `Geo` entry
    /// that has both. Out-of-range values and the 0,0 placeholder count as no position.
    pub(crate) fn position(&self) -> Option<(f64, f64)> {
        let geo = self.geo?.as_object()?;
        let read = |g: &Value| {
            let (mut lat, mut lon) = (None, None);
            for (key, value) in g.as_object()? {
                match key.as_str() {
                    "Latitude" => lat = value.as_f64(),
                    "Longitude" => lon = value.as_f64(),
                    _ => {}
                }
            }
            let (lat, lon) = (lat?, lon?);
            let valid = lat.is_finite()
                && lon.is_finite()
                && lat.abs() <= 90.0
                && lon.abs() <= 180.0
                && !(lat == 0.0 && lon == 0.0);
            valid.then_some((lat, lon))
        };
        geo.get("position")
            .and_then(read)
            .or_else(|| geo.values().find_map(read))
    }

    /// One comment text per language that has one: "Title BaseText" (or whichever of the
    /// two is present), trimmed. Languages in the order it, de, en, lad, then the
    /// others alphabetically; a language without text is left out.
    pub(crate) fn comments(&self) -> Vec<(&'a str, String)> {
        let Some(detail) = self.detail.and_then(Value::as_object) else {
            return Vec::new();
        };
        let mut out: Vec<(&'a str, String)> = detail
            .iter()
            .filter(|(lang, _)| valid_language(lang))
            .filter_map(|(lang, d)| {
                let (mut title, mut text) = ("", "");
                for (key, value) in d.as_object()? {
                    match key.as_str() {
                        "Title" => title = value.as_str().unwrap_or("").trim(),
                        "BaseText" => text = value.as_str().unwrap_or("").trim(),
                        _ => {}
                    }
                }
                let comment = match (title.is_empty(), text.is_empty()) {
                    (true, true) => return None,
                    (false, true) => title.to_string(),
                    (true, false) => text.to_string(),
                    (false, false) => format!("{title} {text}"),
                };
                Some((lang.as_str(), comment))
            })
            .collect();
        out.sort_by_key(|(lang, _)| (language_rank(lang), *lang));
        out
    }
}

fn language_rank(lang: &str) -> usize {
    ["it", "de", "en", "lad"]
        .iter()
        .position(|l| *l == lang)
        .unwrap_or(4)
}

/// xs:language: `[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*`.
fn valid_language(lang: &str) -> bool {
    let mut parts = lang.split('-');
    let first = parts.next().unwrap_or("");
    (1..=8).contains(&first.len())
        && first.bytes().all(|b| b.is_ascii_alphabetic())
        && parts.all(|p| (1..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rome() -> Zone {
        Zone::parse("Europe/Rome").unwrap()
    }

    fn doc() -> Value {
        json!({
            "Id": "urn:announcements:provincebz:abc-1",
            "TagIds": ["announcement:traffic-event", "traffic-event:road-work"],
            "StartTime": "2024-01-01T08:00:00+01:00",
            "LastChange": "2024-01-02T09:30:00+01:00",
            "_Meta": {"Source": "PROVINCE_BZ", "UpdateInfo": {"UpdateHistory": [{}, {}, {}]}},
            "Mapping": {"ProviderA22": {"Id": 77}},
            "Geo": {"area": {"Geometry": "POLYGON(...)"}, "position": {"Latitude": 46.5, "Longitude": 11.35}},
            "Detail": {
                "en": {"Title": "Road works", "BaseText": null},
                "de": {"Title": "Baustelle", "BaseText": " Brennerstraße "},
                "xx_bad": {"Title": "not a language tag"},
                "it": {"Title": "", "BaseText": ""},
                "lad": {"Title": "Lurs"}
            }
        })
    }

    #[test]
    fn reads_the_fields_a_situation_needs() {
        let doc = doc();
        let a = Announcement::read(&doc, "province_bz", &rome()).unwrap();
        assert_eq!(a.id, "abc-1");
        assert_eq!(a.category.tag, "road-work");
        assert_eq!(a.version, 3);
        assert_eq!(
            a.created, a.changed,
            "no FirstImport: creation falls back to the change time"
        );
        assert_eq!(a.reference().as_deref(), Some("77"));
        assert_eq!(a.position(), Some((46.5, 11.35)));
        let comments = a.comments();
        assert_eq!(
            comments,
            vec![
                ("de", "Baustelle Brennerstraße".to_string()),
                ("en", "Road works".to_string()),
                ("lad", "Lurs".to_string())
            ]
        );
    }

    #[test]
    fn documents_that_cannot_be_situations_say_why() {
        let doc = doc();
        assert_eq!(
            Announcement::read(&doc, "A22", &rome()).unwrap_err(),
            Skip::OtherSource
        );
        let mut no_start = doc.clone();
        no_start["StartTime"] = json!("soon");
        assert_eq!(
            Announcement::read(&no_start, "PROVINCE_BZ", &rome()).unwrap_err(),
            Skip::NoStartTime
        );
        let mut no_category = doc.clone();
        no_category["TagIds"] = json!(["announcement:traffic-event"]);
        assert_eq!(
            Announcement::read(&no_category, "PROVINCE_BZ", &rome()).unwrap_err(),
            Skip::NoCategory
        );
    }

    #[test]
    fn zero_or_missing_coordinates_are_no_position() {
        let mut d = doc();
        d["Geo"] = json!({"position": {"Latitude": 0.0, "Longitude": 0.0}});
        assert_eq!(
            Announcement::read(&d, "PROVINCE_BZ", &rome())
                .unwrap()
                .position(),
            None
        );
        d.as_object_mut().unwrap().remove("Geo");
        assert_eq!(
            Announcement::read(&d, "PROVINCE_BZ", &rome())
                .unwrap()
                .position(),
            None
        );
    }

    #[test]
    fn situation_ids_lose_the_provider_prefix_only() {
        assert_eq!(
            situation_id("urn:announcements:provincebz:13-ended"),
            "13-ended"
        );
        assert_eq!(situation_id("urn:announcements:a22-brennerlec:x:y"), "x:y");
        assert_eq!(situation_id("plain-id"), "plain-id");
        assert_eq!(
            situation_id("urn:announcements:a22:"),
            "urn:announcements:a22:"
        );
    }
}
