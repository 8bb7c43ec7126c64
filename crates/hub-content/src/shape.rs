//! Response shaping: language projection, field selection, null removal, the spelling
//! (Hub or ODH, [`hub_model::naming`]), and the list
//! envelope. Documents that need no reshaping are copied into the response as stored.

use std::borrow::Cow;

use hub_model::naming::{self, Naming};
use hub_model::LANGUAGES;
use serde_json::{Map, Value};

use crate::params::Projection;
use crate::{empty_text, language_text, pruned_parse};
use hub_store::StoreError;

/// Applies `projection` to one stored document, returning JSON text.
pub fn shape_document(stored: &str, projection: &Projection) -> Result<String, StoreError> {
    shaped(stored, projection).map(Cow::into_owned)
}

/// [`shape_document`], borrowing the stored text when the projection leaves it as it
/// is (the common case of a whole read: no copy of every document).
pub fn shaped<'a>(stored: &'a str, projection: &Projection) -> Result<Cow<'a, str>, StoreError> {
    // Renaming is a pass over the text: no document is built for it.
    let renamed = match projection.naming {
        Naming::Odh => naming::to_odh_text(stored).map_or(Cow::Borrowed(stored), Cow::Owned),
        Naming::Hub => Cow::Borrowed(stored),
    };
    // So is the language projection, unless the text is not JSON that walk reads.
    let mut text = renamed;
    let mut language_left = projection.language;
    if let Some(kept) = projection
        .language
        .and_then(|lang| language_text::keep_language(&text, lang))
    {
        if let Cow::Owned(kept) = kept {
            text = Cow::Owned(kept);
        }
        language_left = None;
    }
    if projection.fields.is_empty() && language_left.is_none() {
        if !projection.remove_null_values {
            return Ok(text);
        }
        // Null removal on a whole document is a copy of its text, too.
        if let Some(removed) = empty_text::remove_empty(&text) {
            return Ok(Cow::Owned(removed));
        }
    }
    // A selection builds only the keys on its paths, which are spelled as the answer is.
    let mut doc: Value = match projection.selection() {
        Some(tree) => pruned_parse::parse(&text, tree)?,
        None => serde_json::from_str(&text)?,
    };
    if let Some(lang) = language_left {
        keep_language(&mut doc, lang);
    }
    if !projection.fields.is_empty() {
        doc = select_fields(&doc, projection);
    }
    if projection.remove_null_values {
        remove_empty(&mut doc);
    }
    Ok(Cow::Owned(serde_json::to_string(&doc)?))
}

/// Removes, at any depth, every key that is a language code other than `lang`: the
/// parsed form of [`language_text::keep_language`], for text that walk does not read.
pub(crate) fn keep_language(value: &mut Value, lang: &str) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| k == lang || !LANGUAGES.contains(&k.as_str()));
            map.values_mut().for_each(|v| keep_language(v, lang));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| keep_language(v, lang)),
        _ => {}
    }
}

/// A flat object: `Id` first, then one key per requested path, named by the path.
fn select_fields(doc: &Value, projection: &Projection) -> Value {
    let mut out = Map::new();
    out.insert("Id".into(), doc.get("Id").cloned().unwrap_or(Value::Null));
    for path in &projection.fields {
        if path.text != "Id" {
            out.insert(path.text.clone(), path.select(doc));
        }
    }
    Value::Object(out)
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Drops null, `""`, `[]` and `{}` properties at any depth; an object or array emptied
/// by the removal is dropped too. Array elements are kept (their position means something).
/// The parsed form of [`empty_text::remove_empty`], after a `fields` selection or for text
/// that walk does not read.
pub(crate) fn remove_empty(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.values_mut().for_each(remove_empty);
            map.retain(|_, v| !is_empty(v));
        }
        Value::Array(items) => items.iter_mut().for_each(remove_empty),
        _ => {}
    }
}

/// The header a list answers with when its `TotalResults` is an estimate.
pub const TOTAL_ESTIMATED_HEADER: &str = "hub-total-estimated";

/// The list envelope around already-serialised items.
pub struct Envelope<'a> {
    pub total_results: u64,
    pub total_pages: u64,
    pub current_page: u32,
    pub previous_page: Option<String>,
    pub next_page: Option<String>,
    pub seed: Option<&'a str>,
    /// `TotalResults` (and so `TotalPages`) is an estimate: the count stopped at the
    /// exact-count limit. Written as `"TotalResultsEstimated":true` after `TotalPages`;
    /// absent when the total is exact, so exact envelopes keep the ODH shape.
    pub total_estimated: bool,
}

impl Envelope<'_> {
    /// The envelope with `items` (each already JSON text) as its `Items`.
    pub fn render<S: AsRef<str>>(&self, items: &[S]) -> String {
        let capacity = items.iter().map(|i| i.as_ref().len() + 1).sum::<usize>() + 256;
        let mut out = String::with_capacity(capacity);
        out.push_str(&format!(
            "{{\"TotalResults\":{},\"TotalPages\":{},{}\"CurrentPage\":{},\"PreviousPage\":{},\"NextPage\":{},\"Seed\":{},\"Items\":[",
            self.total_results,
            self.total_pages,
            if self.total_estimated {
                "\"TotalResultsEstimated\":true,"
            } else {
                ""
            },
            self.current_page,
            json_string_or_null(self.previous_page.as_deref()),
            json_string_or_null(self.next_page.as_deref()),
            json_string_or_null(self.seed),
        ));
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(item.as_ref());
        }
        out.push_str("]}");
        out
    }
}

fn json_string_or_null(value: Option<&str>) -> String {
    value
        .map(|v| Value::String(v.to_string()).to_string())
        .unwrap_or_else(|| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_query::fields::parse_fields;
    use serde_json::json;

    fn shaped(doc: Value, projection: Projection) -> Value {
        serde_json::from_str(&shape_document(&doc.to_string(), &projection).unwrap()).unwrap()
    }

    #[test]
    fn language_projection_prunes_every_language_map() {
        let doc = json!({"Id": "a", "Detail": {"de": {"Title": "Hütte"}, "it": {"Title": "Rifugio"}}, "ImageGallery": [{"ImageTitle": {"de": "x", "en": "y"}}]});
        let out = shaped(
            doc,
            Projection {
                language: Some("it"),
                ..Default::default()
            },
        );
        assert_eq!(
            out,
            json!({"Id": "a", "Detail": {"it": {"Title": "Rifugio"}}, "ImageGallery": [{"ImageTitle": {}}]})
        );
    }

    #[test]
    fn fields_are_flat_keys_named_by_path_with_id_first() {
        let doc = json!({"Shortname": "s", "Id": "a", "Detail": {"de": {"Title": "T"}}});
        let fields = parse_fields("Detail.de.Title,Detail.en.Title").unwrap();
        let out = shape_document(
            &doc.to_string(),
            &Projection {
                fields,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            out,
            r#"{"Id":"a","Detail.de.Title":"T","Detail.en.Title":null}"#
        );
    }

    #[test]
    fn removenullvalues_drops_empty_values_at_any_depth() {
        let doc = json!({"Id": "a", "N": null, "E": "", "A": [], "O": {"x": null}, "K": [null, 1], "Z": 0, "F": false});
        let out = shaped(
            doc,
            Projection {
                remove_null_values: true,
                ..Default::default()
            },
        );
        assert_eq!(out, json!({"Id": "a", "K": [null, 1], "Z": 0, "F": false}));
    }

    #[test]
    fn odh_naming_renames_documents_and_selects_either_spelling() {
        let stored = json!({"Id": "a", "_Meta": {"Type": "hubactivitypoi"}, "HubTags": [{"Id": "x"}], "SrcTags": ["x"]});
        let odh = |fields: &str| {
            let projection = Projection::from_values(None, Some(fields), None)
                .unwrap()
                .in_naming(Naming::Odh);
            shaped(stored.clone(), projection)
        };
        let whole = shaped(stored.clone(), Projection::default().in_naming(Naming::Odh));
        assert_eq!(
            whole,
            json!({"Id": "a", "_Meta": {"Type": "odhactivitypoi"}, "ODHTags": [{"Id": "x"}], "SmgTags": ["x"]})
        );
        // Output keys are the paths as written; the values come from the same fields.
        assert_eq!(
            odh("ODHTags.[*].Id,HubTags.[*].Id,_Meta.Type"),
            json!({"Id": "a", "ODHTags.[*].Id": ["x"], "HubTags.[*].Id": ["x"], "_Meta.Type": "odhactivitypoi"})
        );
        // Language and null removal apply to the renamed document.
        let stored_de =
            json!({"HubTags": [{"Id": "x", "Title": {"de": "a", "it": "b"}}], "N": null});
        let projection = Projection::from_values(Some("de"), None, Some("true"))
            .unwrap()
            .in_naming(Naming::Odh);
        assert_eq!(
            shaped(stored_de, projection),
            json!({"ODHTags": [{"Id": "x", "Title": {"de": "a"}}]})
        );
        // Hub naming: stored as is, ODH paths read the Hub fields.
        let hub = Projection::from_values(None, Some("ODHTags.[*].Id,_Meta.Type"), None).unwrap();
        assert_eq!(
            shaped(stored.clone(), hub),
            json!({"Id": "a", "ODHTags.[*].Id": ["x"], "_Meta.Type": "hubactivitypoi"})
        );
        assert_eq!(
            shape_document(&stored.to_string(), &Projection::default()).unwrap(),
            stored.to_string()
        );
    }

    #[test]
    fn envelope_keeps_nulls_and_escapes_links() {
        let e = Envelope {
            total_results: 3,
            total_pages: 2,
            current_page: 1,
            previous_page: None,
            next_page: Some("http://h/v1/A?q=\"x\"".into()),
            seed: None,
            total_estimated: false,
        };
        assert_eq!(
            e.render(&["{}", "1"]),
            r#"{"TotalResults":3,"TotalPages":2,"CurrentPage":1,"PreviousPage":null,"NextPage":"http://h/v1/A?q=\"x\"","Seed":null,"Items":[{},1]}"#
        );
    }
}
