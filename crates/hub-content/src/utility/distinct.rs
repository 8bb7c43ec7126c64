//! `GET /v1/Distinct?type=…&fields=…`: the distinct values of document fields.
//!
//! `type` (also `hubtype`, `odhtype`) names the entity type, or `hubmetadata` (also
//! `odhmetadata`, `metadata`) for the dataset catalogue of `GET /v1`; `fields` is a
//! comma list of paths (a path with `[*]` must be the only one); `source` keeps
//! documents of these sources. The answer is a JSON array, sorted: objects
//! `{"<field>": "<value>"}`, or with `getasarray=true` (one field only) the values
//! themselves. Values are text (numbers and booleans as written, objects as JSON);
//! `null` never counts, `""` does unless `excludenulloremptyvalues=true`.
//!
//! `rawfilter`, `tagfilter` (and `odhtagfilter`) keep the documents they match, with the
//! parsers and SQL of the list endpoints; `rawsort` orders the documents, and then the
//! values come in the order they first appear instead of sorted. These three need an
//! entity type (not `hubmetadata`).

use std::collections::BTreeSet;

use axum::extract::{RawQuery as AxumRawQuery, State};
use axum::response::Response;
use hub_model::ENTITY_TYPES;
use hub_query::content::{ContentOrder, ContentQuery, Page};
use hub_query::fields::{parse_fields, FieldPath};
use serde_json::{json, Value};

use super::{json_response, UtilityState};
use crate::error::ContentError;
use crate::list_query::{rawfilter_param, rawsort_param, tag_filters};
use crate::params::{bool_value, RawQuery};
use crate::pruned_parse::{self, KeyTree};

const METADATA_NAMES: [&str; 3] = ["hubmetadata", "odhmetadata", "metadata"];

/// The query of Distinct; also its OpenAPI parameters.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DistinctQuery {
    /// Entity type (also hubtype, odhtype), or hubmetadata for the dataset list
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = String, required = true)]
    pub entity_type: Option<String>,
    /// Comma list of field paths; a path with [*] must be the only one
    #[param(value_type = String, required = true)]
    pub fields: Option<String>,
    /// With one field: a plain array of values
    #[param(value_type = Option<bool>)]
    pub getasarray: Option<String>,
    /// Leave out empty strings
    #[param(value_type = Option<bool>)]
    pub excludenulloremptyvalues: Option<String>,
    /// Comma list of sources
    pub source: Option<String>,
    /// Only documents matching this rawfilter expression
    pub rawfilter: Option<String>,
    /// Only documents with these tags (tagfilter syntax)
    pub tagfilter: Option<String>,
    /// Only documents with these HubTags (tagfilter syntax)
    pub odhtagfilter: Option<String>,
    /// Order the documents; values then come in first-appearance order
    pub rawsort: Option<String>,
    /// Alias of type
    pub hubtype: Option<String>,
    /// Alias of type
    pub odhtype: Option<String>,
}

fn invalid(parameter: &str, detail: impl Into<String>) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.into(),
        detail: detail.into(),
    }
}

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The values a path yields in one document; a `[*]` path yields each element.
fn values(path: &FieldPath, doc: &Value) -> Vec<String> {
    match path.select(doc) {
        Value::Array(items) if path.has_wildcard() => items.iter().filter_map(as_text).collect(),
        v => as_text(&v).into_iter().collect(),
    }
}

/// The catalogue rows `GET /v1` lists, as documents.
fn catalogue() -> Vec<Value> {
    ENTITY_TYPES.iter().map(|e| json!({"Id": e.name, "Shortname": e.name, "Type": e.meta_type, "PathParam": e.route, "ApiDescription": {"en": e.description}})).collect()
}

pub(crate) async fn distinct(
    State(state): State<UtilityState>,
    AxumRawQuery(query): AxumRawQuery,
    principal: Option<axum::Extension<hub_auth::Principal>>,
) -> Result<Response, ContentError> {
    let principal = principal.map(|axum::Extension(p)| p);
    let q: DistinctQuery = RawQuery::parse(query.as_deref()).typed();
    let (type_param, type_value) = [
        ("type", &q.entity_type),
        ("hubtype", &q.hubtype),
        ("odhtype", &q.odhtype),
    ]
    .into_iter()
    .find_map(|(p, v)| v.as_deref().map(|v| (p, v)))
        .ok_or_else(|| invalid("type", "give the entity type as type= (for example type=tag, or type=hubmetadata for the dataset list)"))?;
    let fields_text = q.fields.as_deref().ok_or_else(|| {
        invalid(
            "fields",
            "give the field paths as fields= (for example fields=Types.[*])",
        )
    })?;
    let fields = parse_fields(fields_text).map_err(|e| ContentError::Parse {
        parameter: "fields".into(),
        position: e.position,
        detail: e.message,
    })?;
    if fields.len() > 1 && fields.iter().any(FieldPath::has_wildcard) {
        return Err(invalid("fields", "a path with [*] must be the only field"));
    }
    let as_array = bool_value("getasarray", q.getasarray.as_deref())?.unwrap_or(false);
    if as_array && fields.len() > 1 {
        return Err(invalid(
            "getasarray",
            "getasarray=true needs exactly one field",
        ));
    }
    let exclude_empty = bool_value(
        "excludenulloremptyvalues",
        q.excludenulloremptyvalues.as_deref(),
    )?
    .unwrap_or(false);
    // The same list limits (and refusal of control characters) as the lists' `source`.
    if let Some(v) = q.source.as_deref() {
        crate::params::check_list("source", v)?;
    }
    let sources: Option<Vec<String>> = q.source.as_deref().map(|v| {
        v.split(',')
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty())
            .collect()
    });

    let mut filters: Vec<_> = rawfilter_param("rawfilter", q.rawfilter.as_deref())?
        .into_iter()
        .collect();
    filters.extend(tag_filters(
        q.tagfilter.as_deref(),
        q.odhtagfilter.as_deref(),
    )?);
    let order = rawsort_param("rawsort", q.rawsort.as_deref())?.map(ContentOrder::Raw);
    let is_metadata = METADATA_NAMES
        .iter()
        .any(|m| m.eq_ignore_ascii_case(type_value));
    if is_metadata {
        if let Some(p) = [
            ("rawfilter", &q.rawfilter),
            ("tagfilter", &q.tagfilter),
            ("odhtagfilter", &q.odhtagfilter),
            ("rawsort", &q.rawsort),
        ]
        .into_iter()
        .find_map(|(p, v)| v.is_some().then_some(p))
        {
            return Err(invalid(
                p,
                format!("{p} applies to the documents of an entity type, not to {type_value}"),
            ));
        }
    }
    let ordered = order.is_some();

    let keep = |d: &Value| {
        sources.as_ref().is_none_or(|l| {
            let source = d
                .pointer("/_Meta/Source")
                .or_else(|| d.get("Source"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_lowercase();
            l.contains(&source)
        })
    };
    let usable = |s: &String| !(exclude_empty && s.is_empty());
    // Each document's value, or its row of values (one per field).
    let row_of = |d: &Value| -> Vec<Option<String>> {
        fields
            .iter()
            .map(|f| values(f, d).into_iter().next().filter(usable))
            .collect()
    };
    let mut single = Distinct::new(ordered);
    let mut rows = Distinct::new(ordered);
    let mut fold = |d: &Value| -> Result<(), ContentError> {
        if !keep(d) {
            return Ok(());
        }
        if fields.len() == 1 {
            for v in values(&fields[0], d).into_iter().filter(usable) {
                single.insert(v)?;
            }
        } else {
            let row = row_of(d);
            if row.iter().any(Option::is_some) {
                rows.insert(row)?;
            }
        }
        Ok(())
    };

    if is_metadata {
        catalogue().iter().try_for_each(&mut fold)?;
    } else {
        let entity = hub_model::EntityType::by_meta_type(type_value).ok_or_else(|| {
            invalid(
                type_param,
                format!(
                    "'{type_value}' is not an entity type; GET /v1 lists them (or use hubmetadata)"
                ),
            )
        })?;
        let query = ContentQuery {
            entity: entity.name,
            filters,
            order: order.unwrap_or(ContentOrder::Default),
            page: Page { size: 1, number: 1 },
            count_limit: None,
        };
        // Every matching document, batch by batch, as the caller may see it (closed
        // parts hidden as on lists): only the distinct values are kept.
        let full = hub_auth::policy::can_read_closed(principal.as_ref(), entity.name);
        // Only what the fold reads is built of each document: the fields and the source.
        let mut read = fields.clone();
        read.extend(parse_fields("_Meta.Source,Source").expect("the source paths parse"));
        let tree = KeyTree::of(&read);
        let mut docs = crate::closed::with_access(
            full,
            crate::whole::stream_visible(&*state.content, entity, query),
        )
        .await?
        .reading(tree.as_ref());
        while let Some(batch) = docs.next().await {
            for text in batch? {
                let doc = match &tree {
                    Some(tree) => pruned_parse::parse(&text, tree),
                    None => serde_json::from_str(&text),
                };
                fold(&doc.map_err(hub_store::StoreError::from)?)?;
            }
        }
    }

    let body = if fields.len() == 1 {
        let set = single.into_vec();
        if as_array {
            json!(set)
        } else {
            Value::Array(
                set.into_iter()
                    .map(|v| json!({ fields[0].text.clone(): v }))
                    .collect(),
            )
        }
    } else {
        Value::Array(
            rows.into_vec()
                .into_iter()
                .map(|row| {
                    Value::Object(
                        fields
                            .iter()
                            .zip(row)
                            .map(|(f, v)| (f.text.clone(), v.map_or(Value::Null, Value::String)))
                            .collect(),
                    )
                })
                .collect(),
        )
    };
    Ok(json_response(body.to_string()))
}

/// Most distinct values (or rows of values) one answer holds: beyond it the answer is a
/// 400 naming `fields`, so a field with a value per document cannot make one request
/// hold a copy of a whole collection.
pub const MAX_DISTINCT_VALUES: usize = 10_000;

/// Distinct items as they are folded in: sorted, or (`in_order`) in the order they
/// first appear; at most [`MAX_DISTINCT_VALUES`].
struct Distinct<T> {
    seen: BTreeSet<T>,
    order: Option<Vec<T>>,
}

impl<T: Ord + Clone> Distinct<T> {
    fn new(in_order: bool) -> Self {
        Distinct {
            seen: BTreeSet::new(),
            order: in_order.then(Vec::new),
        }
    }

    fn insert(&mut self, item: T) -> Result<(), ContentError> {
        if self.seen.contains(&item) {
            return Ok(());
        }
        if self.seen.len() >= MAX_DISTINCT_VALUES {
            return Err(invalid(
                "fields",
                format!(
                    "more than {MAX_DISTINCT_VALUES} distinct values; narrow the documents with rawfilter, tagfilter or source, or read the field with a list (fields=…, pagesize up to 1000)"
                ),
            ));
        }
        if let Some(order) = &mut self.order {
            order.push(item.clone());
        }
        self.seen.insert(item);
        Ok(())
    }

    fn into_vec(self) -> Vec<T> {
        match self.order {
            Some(order) => order,
            None => self.seen.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_values_are_sorted_or_kept_in_first_order_and_capped() {
        let mut sorted = Distinct::new(false);
        let mut ordered = Distinct::new(true);
        for v in ["b", "a", "b", "c", "a"] {
            sorted.insert(v.to_string()).unwrap();
            ordered.insert(v.to_string()).unwrap();
        }
        assert_eq!(sorted.into_vec(), ["a", "b", "c"]);
        assert_eq!(ordered.into_vec(), ["b", "a", "c"]);

        let mut many = Distinct::new(false);
        for i in 0..MAX_DISTINCT_VALUES {
            many.insert(i).unwrap();
        }
        // Values already held never count against the limit; one more new value does.
        many.insert(0).unwrap();
        match many.insert(MAX_DISTINCT_VALUES) {
            Err(ContentError::InvalidParameter { parameter, detail }) => {
                assert_eq!(parameter, "fields");
                assert!(detail.contains("10000"), "{detail}");
            }
            other => panic!("expected a 400 on fields, got {other:?}"),
        }
    }
}
