//! The two spellings of field names and type names: Hub's canonical one (`HubTags`,
//! `SrcTags`, `hubactivitypoi`), in which documents are stored, and the Open Data Hub's
//! (`ODHTags`, `SmgTags`, `odhactivitypoi`), which its existing clients read.
//!
//! This is the one table of the correspondence ([`SPELLINGS`], [`TYPE_SPELLINGS`]). The
//! Content API applies it on the way out ([`to_odh`], when a request is answered in the
//! ODH naming) and on the way in ([`hub_key`], [`odh_key`]: path segments of `fields`,
//! `rawfilter`, `rawsort` and `Distinct`). Owns: names only; no I/O, no knowledge of
//! routes beyond which request spellings ask for the ODH naming ([`Naming::for_request`]).

use serde_json::Value;

/// In which spelling documents are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Naming {
    /// Hub's canonical spelling (`HubTags`), as stored.
    #[default]
    Hub,
    /// The Open Data Hub's spelling (`ODHTags`).
    Odh,
}

impl Naming {
    /// Parses `hub` or `odh` (any case).
    pub fn parse(value: &str) -> Option<Naming> {
        match value.to_ascii_lowercase().as_str() {
            "hub" => Some(Naming::Hub),
            "odh" => Some(Naming::Odh),
            _ => None,
        }
    }

    /// The naming of one request: the deployment's `default`, or ODH when the request
    /// itself is spelled the ODH way — its first path segment below `/v1/` (an ODH route
    /// alias such as `ODHActivityPoi`, `ODHTag`) or one of its parameter names
    /// (`odhtagfilter`, `odhtype`, …). A client that spells its request the ODH way
    /// reads ODH documents; one that uses Hub's spelling gets the deployment's naming.
    pub fn for_request<'a>(
        default: Naming,
        route: &str,
        parameter_names: impl IntoIterator<Item = &'a str>,
    ) -> Naming {
        let first = route
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        let odh_route = ODH_ROUTES.iter().any(|r| r.eq_ignore_ascii_case(first));
        let odh_parameter = parameter_names
            .into_iter()
            .any(|p| ODH_PARAMETERS.iter().any(|o| o.eq_ignore_ascii_case(p)));
        if odh_route || odh_parameter {
            Naming::Odh
        } else {
            default
        }
    }
}

/// Route segments below `/v1/` spelled the ODH way.
pub const ODH_ROUTES: &[&str] = &["ODHActivityPoi", "ODHTag"];

/// Parameter names only the ODH spelling has.
pub const ODH_PARAMETERS: &[&str] = &["odhtagfilter", "odhtagfilter_and", "odhtype", "odhactive"];

/// Field names: (Hub spelling, ODH spelling). A name is translated wherever it is an
/// object key, at any depth; both columns are distinct from every other key Hub writes.
pub const SPELLINGS: &[(&str, &str)] = &[
    ("HubTags", "ODHTags"),
    ("HubTagIds", "ODHTagIds"),
    ("HubActive", "OdhActive"),
    ("HubActivityPoiTypes", "ODHActivityPoiTypes"),
    ("SrcTags", "SmgTags"),
    ("SrcActive", "SmgActive"),
    ("SrcId", "SmgId"),
    ("OldTags", "LTSTags"),
    ("SrcTaggingInfo", "LTSTaggingInfo"),
];

/// Type names as written in `_Meta.Type` and `ValidForEntity`: (Hub, ODH).
pub const TYPE_SPELLINGS: &[(&str, &str)] = &[
    ("hubactivitypoi", "odhactivitypoi"),
    ("hubtag", "odhtag"),
    ("hubmetadata", "odhmetadata"),
];

/// The ODH spelling of a Hub field name, if it has one.
pub fn odh_key(hub: &str) -> Option<&'static str> {
    SPELLINGS.iter().find(|(h, _)| *h == hub).map(|(_, o)| *o)
}

/// The Hub spelling of an ODH field name, if it has one.
pub fn hub_key(odh: &str) -> Option<&'static str> {
    SPELLINGS.iter().find(|(_, o)| *o == odh).map(|(h, _)| *h)
}

/// A field name in `naming`: translated when the other spelling has it, else as given.
pub fn key_in(naming: Naming, key: &str) -> &str {
    match naming {
        Naming::Hub => hub_key(key).unwrap_or(key),
        Naming::Odh => odh_key(key).unwrap_or(key),
    }
}

/// The ODH spelling of a type name (`hubactivitypoi` → `odhactivitypoi`), else as given.
pub fn odh_type(hub: &str) -> &str {
    TYPE_SPELLINGS
        .iter()
        .find(|(h, _)| h.eq_ignore_ascii_case(hub))
        .map(|(_, o)| *o)
        .unwrap_or(hub)
}

/// True when a stored document's text may hold a name [`to_odh`] changes, so that the
/// others are copied as stored without parsing.
pub fn may_need_odh(text: &str) -> bool {
    SPELLINGS.iter().any(|(hub, _)| contains_quoted(text, hub))
        || TYPE_SPELLINGS
            .iter()
            .any(|(hub, _)| contains_quoted(text, hub))
}

fn contains_quoted(text: &str, word: &str) -> bool {
    text.match_indices(word)
        .any(|(at, _)| text[..at].ends_with('"') && text[at + word.len()..].starts_with('"'))
}

/// The ODH spelling of a string value that is exactly a Hub type name
/// (`hubactivitypoi`), as in `_Meta.Type`, `ValidForEntity` or a link's `Type`.
fn odh_type_value(hub: &str) -> Option<&'static str> {
    TYPE_SPELLINGS
        .iter()
        .find(|(h, _)| *h == hub)
        .map(|(_, o)| *o)
}

/// Rewrites a document into the ODH spelling: every key of [`SPELLINGS`] and every string
/// value that is exactly a Hub type name, at any depth.
pub fn to_odh(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.keys().any(|k| odh_key(k).is_some()) {
                let entries = std::mem::take(map);
                for (key, v) in entries {
                    let key = odh_key(&key).map(str::to_string).unwrap_or(key);
                    map.insert(key, v);
                }
            }
            map.values_mut().for_each(to_odh);
        }
        Value::Array(items) => items.iter_mut().for_each(to_odh),
        Value::String(text) => {
            if let Some(odh) = odh_type_value(text) {
                *text = odh.to_string();
            }
        }
        _ => {}
    }
}

/// [`to_odh`] on JSON text, without building a document: the same keys and string values
/// are replaced in place, everything else is copied byte for byte. `None` when nothing
/// changes. The text must be valid JSON (stored documents are).
pub fn to_odh_text(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0; // bytes of `text` already in `out`
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        // A string token starts here (outside strings every quote opens one).
        let start = i + 1;
        let mut end = start;
        while end < bytes.len() && bytes[end] != b'"' {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        let end = end.min(bytes.len());
        let content = &text[start..end];
        let is_key = bytes[(end + 1).min(bytes.len())..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            == Some(&b':');
        let replacement = if is_key {
            odh_key(content)
        } else {
            odh_type_value(content)
        };
        if let Some(replacement) = replacement {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            out.push_str(&text[copied..start]);
            out.push_str(replacement);
            copied = end;
        }
        i = end + 1;
    }
    out.map(|mut out| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Rewrites ODH field names into Hub's spelling at any depth (written documents are
/// stored in Hub's spelling); type names are left as written.
pub fn to_hub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.keys().any(|k| hub_key(k).is_some()) {
                let entries = std::mem::take(map);
                for (key, v) in entries {
                    let key = hub_key(&key).map(str::to_string).unwrap_or(key);
                    map.insert(key, v);
                }
            }
            map.values_mut().for_each(to_hub);
        }
        Value::Array(items) => items.iter_mut().for_each(to_hub),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_is_a_bijection() {
        for (hub, odh) in SPELLINGS {
            assert_eq!(hub_key(odh), Some(*hub));
            assert_eq!(odh_key(hub), Some(*odh));
            assert!(
                hub_key(hub).is_none() && odh_key(odh).is_none(),
                "{hub}/{odh}"
            );
        }
        let mut seen = std::collections::HashSet::new();
        for (hub, odh) in SPELLINGS {
            assert!(
                seen.insert(*hub) && seen.insert(*odh),
                "{hub} or {odh} twice"
            );
        }
    }

    #[test]
    fn documents_are_rewritten_at_any_depth_keeping_key_order() {
        let mut doc = json!({
            "Id": "a",
            "_Meta": {"Type": "hubactivitypoi", "Source": "lts"},
            "HubTags": [{"Id": "x"}],
            "SrcTags": ["x"],
            "Nested": {"HubTagIds": ["y"], "Other": 1},
            "ValidForEntity": ["hubactivitypoi", "event"],
            "Shortname": "HubTags"
        });
        assert!(may_need_odh(&doc.to_string()));
        to_odh(&mut doc);
        assert_eq!(
            doc.to_string(),
            json!({
                "Id": "a",
                "_Meta": {"Type": "odhactivitypoi", "Source": "lts"},
                "ODHTags": [{"Id": "x"}],
                "SmgTags": ["x"],
                "Nested": {"ODHTagIds": ["y"], "Other": 1},
                "ValidForEntity": ["odhactivitypoi", "event"],
                "Shortname": "HubTags"
            })
            .to_string()
        );
        let keys: Vec<_> = doc.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys[2], "ODHTags", "the key keeps its place");
    }

    #[test]
    fn written_odh_names_are_stored_in_hub_spelling() {
        let mut doc =
            json!({"ODHTags": [{"Id": "x"}], "Nested": {"SmgTags": ["x"]}, "HubTags": []});
        to_hub(&mut doc);
        // A document carrying both spellings keeps the later one (JSON object semantics).
        assert_eq!(doc, json!({"HubTags": [], "Nested": {"SrcTags": ["x"]}}));
    }

    #[test]
    fn the_text_rewrite_equals_the_document_rewrite() {
        for text in [
            r#"{"Id":"a","_Meta":{"Type":"hubactivitypoi"},"HubTags":[{"Id":"x"}],"SrcTags":["x"]}"#,
            r#"{"Id":"a", "HubTags" : [], "Note":"say \"HubTags\": here","T":"hubactivitypoi"}"#,
            r#"{"Id":"a","Shortname":"HubTags","List":["hubtag","HubTags"],"x\\":"HubTags"}"#,
            r#"{"Nested":{"HubTagIds":["hubactivitypoi "]},"ValidForEntity":["hubactivitypoi","event"]}"#,
            r#"{"Id":"ä","Detail":{"de":{"Title":"Grüße \u0022HubTags\u0022"}}}"#,
        ] {
            let mut doc: Value = serde_json::from_str(text).unwrap();
            to_odh(&mut doc);
            let rewritten = to_odh_text(text).unwrap_or_else(|| text.to_string());
            let reparsed: Value = serde_json::from_str(&rewritten).unwrap();
            assert_eq!(reparsed, doc, "{text}");
            assert_eq!(
                reparsed.to_string(),
                doc.to_string(),
                "{text}: key order kept"
            );
        }
        assert_eq!(to_odh_text(r#"{"Id":"a","Title":"HubTags"}"#), None);
    }

    #[test]
    fn plain_documents_are_left_alone() {
        assert!(!may_need_odh(
            r#"{"Id":"a","_Meta":{"Type":"event"},"Title":"HubTagsX"}"#
        ));
    }

    #[test]
    fn keys_translate_into_either_naming() {
        for (naming, key, expected) in [
            (Naming::Hub, "ODHTags", "HubTags"),
            (Naming::Hub, "HubTags", "HubTags"),
            (Naming::Odh, "HubTags", "ODHTags"),
            (Naming::Odh, "SmgTags", "SmgTags"),
            (Naming::Odh, "Detail", "Detail"),
        ] {
            assert_eq!(key_in(naming, key), expected, "{naming:?} {key}");
        }
    }

    #[test]
    fn requests_spelled_the_odh_way_get_the_odh_naming() {
        for (default, route, params, expected) in [
            (Naming::Hub, "HubActivityPoi", vec!["pagesize"], Naming::Hub),
            (Naming::Hub, "ODHActivityPoi/x", vec![], Naming::Odh),
            (Naming::Hub, "odhtag", vec![], Naming::Odh),
            (Naming::Hub, "Event", vec!["odhtagfilter"], Naming::Odh),
            (Naming::Hub, "Distinct", vec!["OdhType"], Naming::Odh),
            (Naming::Odh, "HubActivityPoi", vec![], Naming::Odh),
        ] {
            assert_eq!(
                Naming::for_request(default, route, params.iter().copied()),
                expected,
                "{route} {params:?}"
            );
        }
    }
}
