//! Field values kept as `content_tag` rows, so `in(field, …)` over them is an index
//! lookup instead of a test of every document's JSON.
//!
//! The dataset parameters `publishedon`, Accommodation `typefilter`, `categoryfilter`,
//! `boardfilter` and `featurefilter` are `in(…)` raw filters over the fields listed in
//! [`INDEXED_FIELDS`]. Answered from the JSON they read every accommodation's document
//! (250–570 ms on SQLite at ODH's size; on PostgreSQL a recheck of every match's
//! `docb`). The store writes each document's values of these fields as tags of kind
//! `value:<path>` ([`field_values`]); a top-level `in` over one of the paths with text
//! values then compiles to the same side-table filter as places and areas.
//!
//! [`field_values`] is exactly the set `in` matches: along the path, `[*]` takes each
//! element of an array, each member of an object, or a single value as itself (SQLite's
//! `json_each`, PostgreSQL's `hub_rf_each`); at the end a string is a value, and so is
//! each string element of an array. Values keep their case, as `in` compares bytes.
//!
//! Owns: the list of indexed fields, their values in a document, and recognising the
//! filters they answer. Must not: decide which filters a parameter builds
//! (`hub-content`), nor write rows (`hub-store`).

use serde_json::Value;

use super::rawfilter::{JsonPath, Literal, PathSegment, RawFilter};

/// An indexed field: its `content_tag.kind` and its path as the raw filter spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexedField {
    pub kind: &'static str,
    pub path: &'static str,
}

/// The fields whose values are kept as tags. Appending one needs a store migration that
/// writes its tags for the documents already stored.
pub const INDEXED_FIELDS: &[IndexedField] = &[
    IndexedField {
        kind: "value:PublishedOn",
        path: "PublishedOn",
    },
    IndexedField {
        kind: "value:AccoTypeId",
        path: "AccoTypeId",
    },
    IndexedField {
        kind: "value:AccoCategoryId",
        path: "AccoCategoryId",
    },
    IndexedField {
        kind: "value:BoardIds",
        path: "BoardIds",
    },
    IndexedField {
        kind: "value:Features.[*].Name",
        path: "Features.[*].Name",
    },
];

/// The segments of a dotted path: `[*]` is every element, a number a position, anything
/// else a key (the spelling the dataset parameters use).
pub fn path_segments(text: &str) -> Vec<PathSegment> {
    text.split('.')
        .map(|s| {
            if s == "[*]" {
                PathSegment::AnyElement
            } else if let Ok(n) = s.parse::<u32>() {
                PathSegment::Index(n)
            } else {
                PathSegment::Key(s.to_string())
            }
        })
        .collect()
}

/// The indexed field at `path`, if it is one.
pub fn indexed_field(path: &JsonPath) -> Option<&'static IndexedField> {
    INDEXED_FIELDS
        .iter()
        .find(|f| path_segments(f.path) == path.segments)
}

/// The `(kind, value)` tags of `doc`'s indexed fields, each once.
pub fn field_values(doc: &Value) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for field in INDEXED_FIELDS {
        let mut values = Vec::new();
        collect(doc, &path_segments(field.path), &mut values);
        for value in values {
            out.push((field.kind, value.to_string()));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The text values `in` finds along `segments` from `value`.
fn collect<'a>(value: &'a Value, segments: &[PathSegment], out: &mut Vec<&'a str>) {
    let Some((first, rest)) = segments.split_first() else {
        match value {
            Value::String(s) => out.push(s),
            Value::Array(items) => out.extend(items.iter().filter_map(Value::as_str)),
            _ => {}
        }
        return;
    };
    match first {
        PathSegment::Key(key) => {
            if let Some(v) = value.as_object().and_then(|o| o.get(key)) {
                collect(v, rest, out);
            }
        }
        PathSegment::Index(n) => {
            if let Some(v) = value.as_array().and_then(|a| a.get(*n as usize)) {
                collect(v, rest, out);
            }
        }
        PathSegment::AnyElement => match value {
            Value::Array(items) => items.iter().for_each(|v| collect(v, rest, out)),
            Value::Object(members) => members.values().for_each(|v| collect(v, rest, out)),
            v => collect(v, rest, out),
        },
    }
}

/// The tag kind and values of a filter the tags answer: a top-level `in` over an indexed
/// field with text values only, not negated. Anything else is compiled from the JSON.
pub(super) fn as_field_tags(filter: &RawFilter) -> Option<(&'static str, Vec<String>)> {
    let RawFilter::In {
        path,
        values,
        negated: false,
    } = filter
    else {
        return None;
    };
    let field = indexed_field(path)?;
    let texts = values
        .iter()
        .map(|v| match v {
            Literal::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()?;
    Some((field.kind, texts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_what_in_matches() {
        let cases = [
            (
                json!({"PublishedOn": ["idm-marketplace", "Google", 3, ["nested"]]}),
                vec![
                    ("value:PublishedOn", "Google"),
                    ("value:PublishedOn", "idm-marketplace"),
                ],
            ),
            (
                json!({"AccoCategoryId": "3sup", "AccoTypeId": null, "BoardIds": {"x": "hb"}}),
                vec![("value:AccoCategoryId", "3sup")],
            ),
            (
                json!({"Features": [{"Name": "Sauna"}, {"Name": ["Pool", "Pool"]}, "Garage", {"Id": "x"}]}),
                vec![
                    ("value:Features.[*].Name", "Pool"),
                    ("value:Features.[*].Name", "Sauna"),
                ],
            ),
            (
                json!({"Features": {"a": {"Name": "Lift"}}}),
                vec![("value:Features.[*].Name", "Lift")],
            ),
            (json!({"Features": {"Name": "Solo"}}), vec![]),
            (json!({"Features": "Garage", "PublishedOn": true}), vec![]),
            (json!([1, 2]), vec![]),
        ];
        for (doc, want) in cases {
            let want: Vec<(&str, String)> =
                want.into_iter().map(|(k, v)| (k, v.to_string())).collect();
            assert_eq!(field_values(&doc), want, "{doc}");
        }
    }

    fn in_filter(path: &str, values: Vec<Literal>, negated: bool) -> RawFilter {
        RawFilter::In {
            path: JsonPath {
                segments: path_segments(path),
                text: path.into(),
                position: 1,
            },
            values,
            negated,
        }
    }

    #[test]
    fn only_a_plain_in_of_text_over_an_indexed_field_is_answered_by_tags() {
        let text = |t: &str| Literal::Text(t.into());
        assert_eq!(
            as_field_tags(&in_filter("Features.[*].Name", vec![text("Sauna")], false)),
            Some(("value:Features.[*].Name", vec!["Sauna".to_string()]))
        );
        for filter in [
            in_filter("PublishedOn", vec![text("a")], true),
            in_filter("PublishedOn", vec![text("a"), Literal::Number(1.0)], false),
            in_filter("Features.Name", vec![text("Sauna")], false),
            in_filter("Shortname", vec![text("a")], false),
        ] {
            assert_eq!(as_field_tags(&filter), None, "{filter:?}");
        }
    }

    #[test]
    fn a_flag_parameter_reads_the_tag_index_not_the_documents() {
        use crate::content::{ContentFilter, ContentOrder, ContentQuery, Page};
        use crate::Dialect;
        let query = |negated| ContentQuery {
            entity: "Accommodation",
            filters: vec![ContentFilter::Raw {
                filter: in_filter("BoardIds", vec![Literal::Text("hb".into())], negated),
                parameter: "filter",
            }],
            order: ContentOrder::Default,
            page: Page {
                size: 10,
                number: 1,
            },
            count_limit: Some(10_000),
        };
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let compiled = query(false).compile(dialect);
            for sql in [compiled.page.as_sql(), compiled.count.as_sql()] {
                assert!(
                    sql.contains(
                        "c.id_key IN (SELECT t.id_key FROM content_tag t WHERE t.entity = "
                    ),
                    "{sql}"
                );
                assert!(!sql.contains("docb"), "{sql}");
            }
            let walk = crate::content::walk::test_walk_in(&query(false), dialect);
            let walk = walk.page.as_sql();
            assert!(
                walk.contains("EXISTS (SELECT 1 FROM content_tag t WHERE"),
                "{walk}"
            );
            // `not in` keeps documents without the field: only the JSON answers it.
            assert!(query(true).compile(dialect).page.as_sql().contains("docb"));
        }
    }
}
