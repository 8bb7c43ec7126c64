//! Query-string handling of the Content API: case-insensitive names, the literal
//! `null` as absent, the typed reading of a query into a parameter struct
//! ([`RawQuery::typed`]), and one validating parser per parameter whose errors name the
//! parameter and the accepted form.
//!
//! Owns: the common list parameters' validation and the projection. Must not touch the
//! store or the shape of answers.

use std::sync::OnceLock;

use hub_model::language::{fold, parse_language, LANGUAGES};
use hub_model::time::normalize_timestamp;
use hub_query::content::{ContentFilter, ContentOrder, Page};
use hub_query::fields::{parse_fields, FieldPath};

use crate::error::ContentError;
use crate::list_query::CommonListQuery;
use crate::pruned_parse::KeyTree;

pub const DEFAULT_PAGE_SIZE: u32 = 10;
pub const MAX_PAGE_SIZE: u32 = 1000;
/// Highest page served: with the largest page the offset stays far below `i32::MAX`.
pub const MAX_PAGE_NUMBER: u32 = 1_000_000;
/// Numeric parameters read strictly: a second, different value is kept as sent (so
/// their parser rejects it, naming the parameter) instead of the first silently winning.
/// A literal `null` stays "not set", as in the reference, whose clients send it.
pub const STRICT_PARAMETERS: [&str; 3] = ["pagesize", "pagenumber", "seed"];

/// The query string as sent: original names and order kept (page links repeat it).
#[derive(Debug, Clone, Default)]
pub struct RawQuery {
    pairs: Vec<(String, String)>,
}

impl RawQuery {
    pub fn parse(query: Option<&str>) -> Self {
        let pairs = query
            .map(|q| {
                form_urlencoded::parse(q.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        RawQuery { pairs }
    }

    /// The parameter names as sent, in order (repeated names repeat).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.pairs.iter().map(|(k, _)| k.as_str())
    }

    /// The first value of a parameter, by case-insensitive name; `null` and empty
    /// values count as absent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case("null"))
    }

    /// The query read into a parameter struct of `Option<String>` fields: each field
    /// gets the first value of its (case-insensitive) name, trimmed, with `null` and
    /// empty values absent, exactly as [`RawQuery::get`] answers.
    pub fn typed<T: serde::de::DeserializeOwned + Default>(&self) -> T {
        let mut present = serde_json::Map::new();
        let mut seen = std::collections::HashSet::new();
        for (name, _) in &self.pairs {
            let name = name.to_ascii_lowercase();
            if seen.insert(name.clone()) {
                if let Some(v) = self.strict(&name) {
                    present.insert(name, serde_json::Value::String(v));
                } else if let Some(v) = self.get(&name) {
                    present.insert(name, serde_json::Value::String(v.to_string()));
                }
            }
        }
        // Every field is an optional string: reading text values cannot fail.
        serde_json::from_value(serde_json::Value::Object(present)).unwrap_or_default()
    }

    /// For a [`STRICT_PARAMETERS`] name: its value when [`RawQuery::get`] would hide a
    /// mistake — several different values (joined with `&`).
    fn strict(&self, name: &str) -> Option<String> {
        if !STRICT_PARAMETERS.contains(&name) {
            return None;
        }
        let mut values: Vec<&str> = self
            .pairs
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .collect();
        values.dedup();
        match values.as_slice() {
            [_, _, ..] => Some(values.join("&")),
            _ => None,
        }
    }

    /// The query with `replacements` applied in place (or appended when absent).
    pub fn with(&self, replacements: &[(&str, String)]) -> String {
        let mut out = form_urlencoded::Serializer::new(String::new());
        let mut done = vec![false; replacements.len()];
        for (k, v) in &self.pairs {
            match replacements
                .iter()
                .position(|(name, _)| k.eq_ignore_ascii_case(name))
            {
                Some(i) if !done[i] => {
                    out.append_pair(k, &replacements[i].1);
                    done[i] = true;
                }
                Some(_) => {}
                None => {
                    out.append_pair(k, v);
                }
            }
        }
        for (i, (name, value)) in replacements.iter().enumerate() {
            if !done[i] {
                out.append_pair(name, value);
            }
        }
        out.finish()
    }
}

fn invalid(parameter: &str, detail: impl Into<String>) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.to_string(),
        detail: detail.into(),
    }
}

pub fn parse_bool(q: &RawQuery, name: &str) -> Result<Option<bool>, ContentError> {
    bool_value(name, q.get(name))
}

/// `true` or `false` (any case) of the parameter `name`.
pub fn bool_value(name: &str, value: Option<&str>) -> Result<Option<bool>, ContentError> {
    value
        .map(|v| match v.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(invalid(
                name,
                format!("'{v}' is not a boolean; use true or false"),
            )),
        })
        .transpose()
}

fn parse_u32(
    name: &str,
    value: Option<&str>,
    min: u32,
    max: u32,
    default: u32,
) -> Result<u32, ContentError> {
    match value {
        None => Ok(default),
        Some(v) => match v.parse::<i64>() {
            Ok(n) if (min as i64..=max as i64).contains(&n) => Ok(n as u32),
            _ if max == u32::MAX => Err(invalid(
                name,
                format!("'{v}' is not accepted; use a whole number of at least {min}"),
            )),
            _ => Err(invalid(
                name,
                format!("'{v}' is not accepted; use a whole number from {min} to {max}"),
            )),
        },
    }
}

/// Longest `searchfilter`, in characters (SQLite refuses LIKE patterns over 50,000 bytes).
pub const MAX_SEARCH_CHARS: usize = 1000;
/// Most items in one comma-separated list (`idlist`, `source`, type lists, …).
pub const MAX_LIST_ITEMS: usize = 1000;
/// Longest comma-separated list value, in characters.
pub const MAX_LIST_CHARS: usize = 100_000;

/// Refuses a value over `max_chars` characters or with a control character (pure).
pub fn check_text(parameter: &str, value: &str, max_chars: usize) -> Result<(), ContentError> {
    if let Some(at) = value.chars().position(char::is_control) {
        return Err(ContentError::Parse {
            parameter: parameter.into(),
            position: at + 1,
            detail: format!(
                "control characters are not accepted (at position {})",
                at + 1
            ),
        });
    }
    let chars = value.chars().count();
    if chars > max_chars {
        return Err(invalid(
            parameter,
            format!("{chars} characters are too many; at most {max_chars} are accepted"),
        ));
    }
    Ok(())
}

/// Refuses a comma-separated list over [`MAX_LIST_CHARS`] or [`MAX_LIST_ITEMS`] (pure).
pub fn check_list(parameter: &str, value: &str) -> Result<(), ContentError> {
    check_text(parameter, value, MAX_LIST_CHARS)?;
    let items = comma_list(value).count();
    if items > MAX_LIST_ITEMS {
        return Err(invalid(
            parameter,
            format!("{items} items are too many; at most {MAX_LIST_ITEMS} are accepted"),
        ));
    }
    Ok(())
}

fn comma_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// How each returned document is reshaped.
#[derive(Debug, Clone, Default)]
pub struct Projection {
    pub language: Option<&'static str>,
    pub fields: Vec<FieldPath>,
    pub remove_null_values: bool,
    /// The spelling answered in; set by the handler from the request
    /// ([`hub_model::Naming::for_request`]), not a query parameter.
    pub naming: hub_model::Naming,
    /// The object keys `fields` reads ([`KeyTree::of`]), built by the first document
    /// shaped and kept for the rest of the answer.
    pub(crate) selection: OnceLock<Option<KeyTree>>,
}

impl Projection {
    /// The projection of the single-document query.
    pub fn parse(q: &SingleQuery) -> Result<Self, ContentError> {
        Self::from_values(
            q.language.as_deref(),
            q.fields.as_deref(),
            q.removenullvalues.as_deref(),
        )
    }

    /// Validates `language`, `fields` and `removenullvalues`, in this order.
    pub fn from_values(
        language: Option<&str>,
        fields: Option<&str>,
        removenullvalues: Option<&str>,
    ) -> Result<Self, ContentError> {
        let language = language
            .map(|v| parse_language(v).ok_or_else(|| unknown_language("language", v)))
            .transpose()?;
        let fields = match fields {
            None => Vec::new(),
            Some(v) => parse_fields(v).map_err(|e| ContentError::Parse {
                parameter: "fields".into(),
                position: e.position,
                detail: e.message,
            })?,
        };
        let remove_null_values = bool_value("removenullvalues", removenullvalues)?.unwrap_or(false);
        Ok(Projection {
            language,
            fields,
            remove_null_values,
            naming: hub_model::Naming::Hub,
            selection: OnceLock::new(),
        })
    }

    /// True when documents can be returned exactly as stored (the spelling aside:
    /// [`crate::shape::shape_document`] looks at each document for that).
    pub fn is_identity(&self) -> bool {
        self.language.is_none() && self.fields.is_empty() && !self.remove_null_values
    }

    /// The key tree of `fields`, or `None` when a selection must parse whole documents.
    pub(crate) fn selection(&self) -> Option<&KeyTree> {
        self.selection
            .get_or_init(|| match self.fields.is_empty() {
                true => None,
                false => KeyTree::of(&self.fields),
            })
            .as_ref()
    }

    /// The same projection answering in `naming`: `fields` paths (parsed into Hub's
    /// spelling) select from the document in that spelling; their output keys stay as
    /// the client wrote them.
    pub fn in_naming(mut self, naming: hub_model::Naming) -> Self {
        self.naming = naming;
        // The paths are respelled below: a tree built from the old spelling must go.
        self.selection = OnceLock::new();
        for path in &mut self.fields {
            for segment in &mut path.segments {
                if let hub_query::fields::Segment::Key(key) = segment {
                    let spelled = hub_model::naming::key_in(naming, key);
                    if spelled != key {
                        *key = spelled.to_string();
                    }
                }
            }
        }
        self
    }
}

fn unknown_language(parameter: &str, value: &str) -> ContentError {
    invalid(
        parameter,
        format!(
            "'{value}' is not a known language; use one of {}",
            LANGUAGES.join(", ")
        ),
    )
}

/// Query of single-document requests: the projection only.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SingleQuery {
    /// Comma-separated paths to return.
    pub fields: Option<String>,
    /// Keep only this language in every multilingual field.
    pub language: Option<String>,
    /// Omit null and empty fields.
    #[param(value_type = Option<bool>)]
    pub removenullvalues: Option<String>,
}

/// A validated list request.
#[derive(Debug, Clone)]
pub struct ListParams {
    pub page: Page,
    pub filters: Vec<ContentFilter>,
    pub order: ContentOrder,
    /// The normalised seed, echoed as `Seed` and kept in page links.
    pub seed: Option<String>,
    pub projection: Projection,
    /// Radius, polygon, locfilter and areafilter; resolved against the store before the query.
    pub geo: crate::geo_params::GeoParams,
    /// `pagesize=-1`: every match on one page, streamed (`page` is then unused).
    pub whole_dataset: bool,
    /// `getasidarray=true`: answer the ids of every match as a plain array.
    pub as_id_array: bool,
}

impl ListParams {
    /// The common parameters of lists, validated in the reference's order; the
    /// remaining ones are [`crate::list_query::ListQuery::parse`]'s.
    pub fn parse(q: &CommonListQuery) -> Result<Self, ContentError> {
        // `-1`: every document, streamed on one page (see `crate::whole`).
        let whole_dataset = q.pagesize.as_deref() == Some("-1");
        let size = match whole_dataset {
            true => MAX_PAGE_SIZE,
            false => parse_u32(
                "pagesize",
                q.pagesize.as_deref(),
                1,
                MAX_PAGE_SIZE,
                DEFAULT_PAGE_SIZE,
            )?,
        };
        let number = parse_u32("pagenumber", q.pagenumber.as_deref(), 1, u32::MAX, 1)?;
        if whole_dataset && number != 1 {
            return Err(invalid(
                "pagenumber",
                format!("{number} is not accepted with pagesize=-1, which answers every document on page 1"),
            ));
        }
        if number > MAX_PAGE_NUMBER {
            return Err(invalid(
                "pagenumber",
                format!("{number} is not accepted; the highest page served is {MAX_PAGE_NUMBER}"),
            ));
        }
        let projection = Projection::from_values(
            q.language.as_deref(),
            q.fields.as_deref(),
            q.removenullvalues.as_deref(),
        )?;
        let mut filters = Vec::new();

        if let Some(v) = q.idlist.as_deref() {
            check_list("idlist", v)?;
            filters.push(ContentFilter::IdIn(
                comma_list(v).map(str::to_lowercase).collect(),
            ));
        }
        if let Some(v) = q.publishedon.as_deref() {
            check_list("publishedon", v)?;
            filters.push(crate::entity_filters::in_filter(
                "PublishedOn",
                comma_list(v).map(str::to_lowercase).collect(),
            ));
        }
        if let Some(v) = q.source.as_deref() {
            check_list("source", v)?;
            filters.push(ContentFilter::SourceIn(
                comma_list(v).map(str::to_lowercase).collect(),
            ));
        }
        if let Some(active) = bool_value("active", q.active.as_deref())? {
            filters.push(ContentFilter::Active(active));
        }
        if let Some(v) = q.updatefrom.as_deref() {
            let ts = normalize_timestamp(v).ok_or_else(|| {
                invalid(
                    "updatefrom",
                    format!("'{v}' is not a date; use yyyy-MM-dd (or yyyy-MM-ddTHH:mm:ss)"),
                )
            })?;
            filters.push(ContentFilter::ChangedSince(ts));
        }
        let mut langfilter = None;
        if let Some(v) = q.langfilter.as_deref() {
            check_list("langfilter", v)?;
            let langs = comma_list(v)
                .map(|l| {
                    parse_language(l)
                        .map(str::to_string)
                        .ok_or_else(|| unknown_language("langfilter", l))
                })
                .collect::<Result<Vec<_>, _>>()?;
            filters.push(ContentFilter::HasAllLanguages(langs.clone()));
            langfilter = Some(langs);
        }
        if let Some(term) = q.searchfilter.as_deref() {
            check_text("searchfilter", term, MAX_SEARCH_CHARS)?;
            let languages = projection
                .language
                .map(|l| vec![l.to_string()])
                .or(langfilter);
            filters.push(ContentFilter::Search {
                folded_term: fold(term),
                id_key: term.to_lowercase(),
                languages,
            });
        }

        let seed = q.seed.as_deref().map(normalize_seed).transpose()?;
        let order = match &seed {
            Some(s) => ContentOrder::Seed(s.clone()),
            None => ContentOrder::Default,
        };
        let geo = crate::geo_params::GeoParams::parse(q)?;
        let order = geo.order().unwrap_or(order);
        Ok(ListParams {
            page: hub_query::content::Page { size, number },
            filters,
            order,
            seed,
            projection,
            geo,
            whole_dataset,
            as_id_array: bool_value("getasidarray", q.getasidarray.as_deref())?.unwrap_or(false),
        })
    }
}

/// The reference's seed rules: `0` picks a random seed from 1 to 49, values above 50
/// are divided by 10 until they are below 50, other integers are kept. A seed that is
/// not an integer is an error (the reference silently ignored it).
fn normalize_seed(value: &str) -> Result<String, ContentError> {
    let mut n: i64 = value.parse().map_err(|_| {
        invalid(
            "seed",
            format!("'{value}' is not accepted; use a whole number (0 picks one at random)"),
        )
    })?;
    if n == 0 {
        crate::response_cache::uncacheable();
        n = rand::Rng::gen_range(&mut rand::thread_rng(), 1..50);
    }
    while n > 50 {
        n /= 10;
    }
    Ok(n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> RawQuery {
        RawQuery::parse(Some(s))
    }

    #[test]
    fn names_are_case_insensitive_and_null_is_absent() {
        let query = q("PageSize=5&language=null&Seed=");
        assert_eq!(query.get("pagesize"), Some("5"));
        assert_eq!(query.get("language"), None);
        assert_eq!(query.get("seed"), None);
    }

    #[test]
    fn links_replace_in_place_or_append() {
        let query = q("pagesize=5&pagenumber=1&x=a%20b");
        assert_eq!(
            query.with(&[("pagenumber", "2".into())]),
            "pagesize=5&pagenumber=2&x=a+b"
        );
        assert_eq!(
            q("pagesize=5").with(&[("pagenumber", "2".into()), ("seed", "7".into())]),
            "pagesize=5&pagenumber=2&seed=7"
        );
    }

    #[test]
    fn seed_normalisation_follows_the_reference() {
        for (input, expected) in [
            ("7", "7"),
            ("50", "50"),
            ("51", "5"),
            ("123", "12"),
            ("-3", "-3"),
        ] {
            assert_eq!(normalize_seed(input).unwrap(), expected);
        }
        let random: i64 = normalize_seed("0").unwrap().parse().unwrap();
        assert!((1..50).contains(&random));
        assert!(normalize_seed("abc").is_err());
    }

    #[test]
    fn pagesize_minus_one_asks_for_every_document() {
        let p = ListParams::parse(&q("pagesize=-1").typed()).unwrap();
        assert!(p.whole_dataset);
        let p = ListParams::parse(&q("pagesize=-1&pagenumber=1").typed()).unwrap();
        assert!(p.whole_dataset);
        let p = ListParams::parse(&q("pagesize=1000").typed()).unwrap();
        assert!(!p.whole_dataset);
    }

    #[test]
    fn rejects_bad_values_naming_the_parameter() {
        let cases = [
            ("pagesize=abc", "pagesize"),
            ("pagesize=5000", "pagesize"),
            ("pagesize=0", "pagesize"),
            ("pagesize=-2", "pagesize"),
            ("pagesize=-1&pagenumber=2", "pagenumber"),
            ("pagenumber=0", "pagenumber"),
            ("updatefrom=yesterday", "updatefrom"),
            ("removenullvalues=maybe", "removenullvalues"),
            ("active=1", "active"),
            ("language=xx", "language"),
            ("langfilter=de,xx", "langfilter"),
            ("fields=Detail..Title", "fields"),
            ("seed=x", "seed"),
            ("pagenumber=2147483648", "pagenumber"),
            ("pagenumber=1000001", "pagenumber"),
            ("seed=&seed=t", "seed"),
            ("pagesize=5&PageSize=6", "pagesize"),
            ("searchfilter=%00", "searchfilter"),
            ("searchfilter=a%0Ab", "searchfilter"),
            (
                &format!("searchfilter={}", "a".repeat(50_001)),
                "searchfilter",
            ),
            (&format!("idlist={}", vec!["x"; 1001].join(",")), "idlist"),
            (&format!("source={}", vec!["x"; 1001].join(",")), "source"),
        ];
        for (input, parameter) in cases {
            match ListParams::parse(&q(input).typed()) {
                Err(ContentError::InvalidParameter { parameter: p, .. })
                | Err(ContentError::Parse { parameter: p, .. }) => {
                    assert_eq!(p, parameter, "{input}")
                }
                other => panic!("{input}: expected an error, got {other:?}"),
            }
        }
    }
}
