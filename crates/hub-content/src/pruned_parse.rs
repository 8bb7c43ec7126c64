//! A stored document parsed down to what a `fields` selection reads.
//!
//! Selecting `Id,Detail.de.Title` from a 5 KB document used to build the whole document
//! as a `Value` (every text, every map) and drop it again: a list page of ten such
//! selections cost Hub three times a page of the whole documents, most of it in the
//! allocator. Here only the object keys on a requested path are built; every other
//! value is skipped by the parser. Where a path ends, or goes on through an array (an
//! index, a wildcard, or a value that is not an object), the value is built whole, so
//! [`hub_query::fields::FieldPath::select`] finds in the pruned document exactly what it
//! finds in the whole one. A key that appears twice keeps its last value, as in a whole
//! parse.
//!
//! Owns: the key tree and the pruning parse. Must not: decide what a path selects (that
//! stays in `FieldPath::select`).

use std::borrow::Cow;
use std::fmt;

use hub_query::fields::{FieldPath, Segment};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The object keys a selection reads, as a tree from the document's top level.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct KeyTree {
    /// Build this value whole: a path ends here or continues below an array.
    whole: bool,
    /// The keys read below this value, when it is an object.
    children: Vec<(String, KeyTree)>,
}

impl KeyTree {
    /// The tree of `paths` plus `Id` (every selection answers it); `None` when a path
    /// starts with an index or a wildcard, which reads every top-level value anyway.
    pub(crate) fn of(paths: &[FieldPath]) -> Option<KeyTree> {
        let mut root = KeyTree::default();
        root.child("Id").whole = true;
        for path in paths {
            if !matches!(path.segments.first(), Some(Segment::Key(_))) {
                return None;
            }
            let mut node = &mut root;
            for segment in &path.segments {
                match segment {
                    Segment::Key(key) => node = node.child(key),
                    Segment::Index(_) | Segment::Wildcard => break,
                }
            }
            node.whole = true;
        }
        Some(root)
    }

    /// The tree that reads `keys` of the top level whole, and nothing else.
    pub(crate) fn top_level(keys: &[&str]) -> KeyTree {
        let mut root = KeyTree::default();
        for key in keys {
            root.child(key).whole = true;
        }
        root
    }

    fn child(&mut self, key: &str) -> &mut KeyTree {
        let at = match self.children.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                self.children.push((key.to_string(), KeyTree::default()));
                self.children.len() - 1
            }
        };
        &mut self.children[at].1
    }

    /// Whether reading this tree of a document of `entity` may see what reducing it for
    /// a caller without the reading role changes: a closed top-level value, or
    /// `_Meta.Reduced`, which the reduction sets (keys compared as `closed_query` does,
    /// ignoring case).
    pub(crate) fn reaches_reduced(&self, entity: &str) -> bool {
        let marks = |below: &KeyTree| {
            below.whole
                || below
                    .children
                    .iter()
                    .any(|(key, _)| key.eq_ignore_ascii_case("Reduced"))
        };
        self.whole
            || self.children.iter().any(|(key, below)| {
                crate::closed_query::path_is_closed(entity, Some(key))
                    || (key.eq_ignore_ascii_case("_Meta") && marks(below))
            })
    }

    fn get(&self, key: &str) -> Option<&KeyTree> {
        self.children.iter().find(|(k, _)| k == key).map(|(_, t)| t)
    }
}

/// `stored` with only the values `tree` reads built.
pub(crate) fn parse(stored: &str, tree: &KeyTree) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_str(stored);
    let value = Pruned(tree).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

struct Pruned<'t>(&'t KeyTree);

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        if self.0.whole {
            Value::deserialize(de)
        } else {
            de.deserialize_any(self)
        }
    }
}

impl<'de> Visitor<'de> for Pruned<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match self.0.get(&key) {
                Some(tree) => {
                    let value = map.next_value_seed(Pruned(tree))?;
                    out.insert(key.into_owned(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }

    // Not an object: nothing to prune, built as a whole parse builds it.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// An object key, borrowed from the document unless it holds an escape.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_query::fields::parse_fields;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "Id": "a",
            "Detail": {"de": {"Title": "Hütte", "Base\"Text": "x"}, "it": {"Title": "Rifugio"}},
            "HubTags": [{"Id": "hiking"}, {"Id": "summer"}],
            "GpsInfo": [{"Altitude": 1200, "Gpstype": "position"}],
            "Mapping": {"tirol.mapservices.eu": {"id": 3}, "other": {"id": 4}},
            "ContactInfos": null,
            "Ratio": 0.25, "Big": 18446744073709551615u64, "Neg": -3, "Open": true
        })
    }

    /// Every path selects from the pruned document what it selects from the whole one.
    #[test]
    fn a_selection_reads_the_same_from_the_pruned_document() {
        let stored = doc().to_string();
        let whole: Value = serde_json::from_str(&stored).unwrap();
        let selections = [
            "Id",
            "Detail.de.Title",
            "Detail.en.Title",
            "Detail.de",
            "Detail",
            "Detail.de.Title,Detail.it",
            "HubTags.[*].Id",
            "HubTags[1].Id",
            "HubTags",
            "GpsInfo.0.Altitude",
            "GpsInfo.0",
            "Mapping['tirol.mapservices.eu'].id",
            "Mapping.[*].id",
            "ContactInfos.de.City",
            "Ratio,Big,Neg,Open",
            "Missing[*]",
            "Id.x",
        ];
        for fields in selections {
            let paths = parse_fields(fields).unwrap();
            let tree = KeyTree::of(&paths).unwrap();
            let pruned = parse(&stored, &tree).unwrap();
            for path in &paths {
                assert_eq!(
                    path.select(&pruned),
                    path.select(&whole),
                    "{fields}: {}",
                    path.text
                );
            }
            assert_eq!(pruned["Id"], whole["Id"], "{fields}");
        }
    }

    #[test]
    fn only_the_keys_on_a_path_are_built() {
        let stored = doc().to_string();
        let tree = KeyTree::of(&parse_fields("Detail.de.Title,HubTags[0]").unwrap()).unwrap();
        assert_eq!(
            parse(&stored, &tree).unwrap(),
            json!({"Id": "a", "Detail": {"de": {"Title": "Hütte"}}, "HubTags": [{"Id": "hiking"}, {"Id": "summer"}]})
        );
    }

    #[test]
    fn escaped_and_repeated_keys_read_as_a_whole_parse_reads_them() {
        let stored = r#"{"Id":"a","D\u0065tail":{"de":{"Title":"x"}},"Shortname":"first","Shortname":"last"}"#;
        let whole: Value = serde_json::from_str(stored).unwrap();
        let paths = parse_fields("Detail.de.Title,Shortname").unwrap();
        let pruned = parse(stored, &KeyTree::of(&paths).unwrap()).unwrap();
        assert_eq!(pruned, whole);
        assert_eq!(pruned["Shortname"], "last");
        assert_eq!(pruned["Detail"]["de"]["Title"], "x");
    }

    #[test]
    fn a_path_starting_below_an_array_reads_the_whole_document() {
        let path = FieldPath {
            text: "[*]".into(),
            segments: vec![Segment::Wildcard],
        };
        assert_eq!(KeyTree::of(&[path]), None);
    }

    #[test]
    fn what_a_whole_parse_refuses_the_pruned_parse_refuses() {
        let tree = KeyTree::of(&parse_fields("Detail").unwrap()).unwrap();
        for bad in [
            "{\"Id\": \"a\"",
            "{\"Id\": \"a\"} x",
            "[1,",
            "{\"Other\": [1,}",
        ] {
            assert!(serde_json::from_str::<Value>(bad).is_err());
            assert!(parse(bad, &tree).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_trees_that_reach_a_closed_part_or_the_reduced_mark_need_the_reduction() {
        // (entity, fields, reaches what the reduction changes)
        let cases = [
            ("Accommodation", "AccoCategoryId", false),
            (
                "Accommodation",
                "AccoDetail.en.Name,_Meta.Source,Source",
                false,
            ),
            ("Accommodation", "AccoRoomInfo.Id", true),
            ("Accommodation", "accoroominfo", true),
            ("Accommodation", "Availability[0].Date", true),
            ("Accommodation", "_Meta.Reduced", true),
            ("Accommodation", "_meta.reduced", true),
            ("Accommodation", "_Meta", true),
            ("AccommodationRoom", "Shortname", false),
            ("AccommodationRoom", "PriceFrom", true),
            ("Event", "Detail.de.Title", false),
        ];
        for (entity, fields, reaches) in cases {
            let tree = KeyTree::of(&parse_fields(fields).unwrap()).unwrap();
            assert_eq!(tree.reaches_reduced(entity), reaches, "{entity} {fields}");
        }
        // Reading everything reaches everything.
        let all = KeyTree {
            whole: true,
            children: Vec::new(),
        };
        assert!(all.reaches_reduced("Accommodation"));
    }
}
