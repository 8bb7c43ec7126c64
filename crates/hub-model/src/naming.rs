//! The two spellings of field names and type names: Hub's canonical one (`HubTags`,
//! `SrcTags`, `hubactivitypoi`), in which documents are stored, and the Open Data Hub's
//! (`ODHTags`, `SmgTags`, `odhactivitypoi`), which its existing clients read.
//!
//! This is the one table of the correspondence ([`SPELLINGS`], [`TYPE_SPELLINGS`]). The
//! Content API applies it on the way out ([`to_odh`], when a request is answered in the
//! ODH naming) and on the way in ([`hub_key`], [`odh_key`]: path segments of `fields`,
//! `rawfilter`, `rawsort` and `Distinct`). Owns: names only; no I/O, no knowledge of
//! routes beyond which request spellings ask for the ODH naming ([`Naming::for_request`]).

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
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

/// Finds every Hub name of [`SPELLINGS`] and [`TYPE_SPELLINGS`] in one pass. Built once. The
/// names are searched without their quotes: a quote begins every string, so a searcher that
/// started from quotes would stop at each of them, while the names' own first letters let
/// it skip most of a document without looking at its bytes one by one.
fn hub_names() -> &'static AhoCorasick {
    static SEARCHER: OnceLock<AhoCorasick> = OnceLock::new();
    SEARCHER.get_or_init(|| {
        let names = SPELLINGS.iter().chain(TYPE_SPELLINGS).map(|(hub, _)| hub);
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(names)
            .expect("a few short literal names always build a searcher")
    })
}

/// The Hub names in `text` that are a whole JSON string (`"HubTags"`), as the range of the
/// name without its quotes.
///
/// In valid JSON an unescaped `"` followed by a name and another `"` can only open a string
/// holding exactly that name (a closing quote is never followed by a letter). So the other
/// occurrences are told apart by the bytes around them alone: a name inside a longer string,
/// or one whose first quote is escaped, as in `"say \"hubtag"`. No string is tokenised.
fn quoted_hub_names(text: &str) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let bytes = text.as_bytes();
    hub_names().find_iter(text).filter_map(move |found| {
        let quoted = found.start() > 0
            && bytes[found.start() - 1] == b'"'
            && bytes.get(found.end()) == Some(&b'"')
            && !escaped(bytes, found.start() - 1);
        quoted.then(|| found.range())
    })
}

/// True when the byte at `at` is escaped: preceded by an odd run of backslashes.
fn escaped(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|b| **b == b'\\')
        .count()
        % 2
        == 1
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
    for name in quoted_hub_names(text) {
        let is_key = bytes[name.end + 1..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            == Some(&b':');
        let replacement = match is_key {
            true => odh_key(&text[name.clone()]),
            false => odh_type_value(&text[name.clone()]),
        };
        if let Some(replacement) = replacement {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            out.push_str(&text[copied..name.start]);
            out.push_str(replacement);
            copied = name.end;
        }
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
        assert!(to_odh_text(&doc.to_string()).is_some());
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
    fn escaped_quotes_next_to_names_are_told_apart() {
        for (text, expected) in [
            // The quote before the name is escaped: the string holds more than the name.
            (r#"{"Note":"say \"hubtag"}"#, None),
            (r#"{"Note":"\\\"hubtag"}"#, None),
            // An escaped backslash ends the string before it; the next string is a name.
            (
                r#"{"x\\":"hubtag","y\\\\":"HubTags"}"#,
                Some(r#"{"x\\":"odhtag","y\\\\":"HubTags"}"#),
            ),
            // Type names are values only; field names are keys only.
            (
                r#"{"hubtag" : "HubTags", "HubTags" :"hubtag"}"#,
                Some(r#"{"hubtag" : "HubTags", "ODHTags" :"odhtag"}"#),
            ),
        ] {
            assert_eq!(to_odh_text(text).as_deref(), expected, "{text}");
        }
    }

    /// Random documents of keys and strings made of names, quotes, backslashes and
    /// colons, written by serde_json (which escapes them): the text rewrite must give the
    /// same document as the tree rewrite, byte for byte.
    #[test]
    fn the_text_rewrite_equals_the_document_rewrite_on_random_documents() {
        const PIECES: &[&str] = &[
            "HubTags",
            "hubtag",
            "hubactivitypoi",
            "SrcId",
            "\"",
            "\\",
            ":",
            " ",
            "x",
            "ä",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        fn text(next: &mut impl FnMut(usize) -> usize) -> String {
            (0..1 + next(3))
                .map(|_| PIECES[next(PIECES.len())])
                .collect()
        }
        fn value(next: &mut impl FnMut(usize) -> usize, depth: usize) -> Value {
            match next(if depth > 3 { 2 } else { 4 }) {
                0 => Value::String(text(next)),
                1 => Value::from(next(100)),
                2 => Value::Array((0..next(4)).map(|_| value(next, depth + 1)).collect()),
                _ => Value::Object(
                    (0..next(5))
                        .map(|_| (text(next), value(next, depth + 1)))
                        .collect(),
                ),
            }
        }
        let mut rewritten = 0;
        for _ in 0..2_000 {
            let doc = value(&mut next, 0);
            for written in [doc.to_string(), serde_json::to_string_pretty(&doc).unwrap()] {
                let mut expected = doc.clone();
                to_odh(&mut expected);
                let text = to_odh_text(&written);
                assert_eq!(text.is_some(), expected != doc, "{written}");
                rewritten += usize::from(text.is_some());
                let reparsed: Value = serde_json::from_str(&text.unwrap_or(written)).unwrap();
                assert_eq!(reparsed.to_string(), expected.to_string());
            }
        }
        assert!(
            rewritten > 100,
            "the documents exercise the rewrite ({rewritten})"
        );
    }

    #[test]
    fn plain_documents_are_left_alone() {
        assert_eq!(
            to_odh_text(r#"{"Id":"a","_Meta":{"Type":"event"},"Title":"HubTagsX","X":"xhubtag"}"#),
            None
        );
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
