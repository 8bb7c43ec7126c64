//! What the Content API's OpenAPI document promises beyond parameter names: each query
//! parameter's schema (ranges, enums, formats, lengths, taken from the constants the
//! parsers enforce), the bearer security scheme, and the error answers every operation
//! can give (problem+json). Applied to the generated document by [`refine`].
//!
//! Owns: the mapping from a parameter to its schema and the shared responses. Must not
//! parse anything itself nor name a limit the parsers do not hold: every number here is
//! the parsers' own constant.

use hub_model::language::LANGUAGES;
use hub_model::ENTITY_TYPES;
use hub_query::content::polygon::MAX_POLYGON_CHARS;
use hub_query::content::rawfilter::{MAX_EXPRESSION_CHARS, MAX_SORT_KEYS};
use hub_query::content::tagfilter::MAX_TAGFILTER_CHARS;
use hub_query::fields::{MAX_FIELDS, MAX_FIELDS_CHARS};
use serde_json::{json, Map, Value};

use crate::entity_filters::{
    ACCO_BOARDS, ACCO_CATEGORIES, ACCO_FEATURES, ACCO_TYPES, ARTICLE_TYPES, POI_MAIN_TYPES,
};
use crate::geo_params::{AREA_PREFIXES, LOCATION_PREFIXES, MAX_RADIUS_M};
use crate::params::{
    DEFAULT_PAGE_SIZE, MAX_LIST_CHARS, MAX_LIST_ITEMS, MAX_PAGE_NUMBER, MAX_PAGE_SIZE,
    MAX_SEARCH_CHARS,
};
use crate::utility::find::{DEFAULT_LIMIT, MAX_FILTERONFIELDS, MAX_LIMIT};

/// Text without control characters (`char::is_control`: C0, DEL and C1), which every
/// text parameter refuses.
const NO_CONTROL: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// Comma list of one of `alternatives`, matched case-insensitively by the server (the
/// pattern lists the spellings it documents); an empty value counts as absent.
fn list_of(alternatives: &[String]) -> String {
    let one = format!("({})", alternatives.join("|"));
    format!("^({one}(,{one})*)?$")
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn text(max: usize, what: &str) -> Value {
    json!({"type": "string", "maxLength": max, "pattern": NO_CONTROL, "description": what})
}

fn date() -> Value {
    // The server also accepts a time (yyyy-MM-ddTHH:mm:ss); the date alone is the
    // documented form.
    json!({"type": "string", "format": "date"})
}

fn entity_type_names() -> Vec<String> {
    ENTITY_TYPES.iter().map(|e| e.name.to_string()).collect()
}

/// The schema of query parameter `name` of the operation at `path`, or None to keep
/// the generated one.
pub fn parameter_schema(path: &str, name: &str) -> Option<Value> {
    let languages = owned(LANGUAGES);
    let schema = match (path, name) {
        (_, "pagesize") => {
            json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE, "default": DEFAULT_PAGE_SIZE})
        }
        (_, "pagenumber") => {
            json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_NUMBER, "default": 1})
        }
        (_, "seed") => {
            json!({"type": "integer", "format": "int64", "minimum": i64::MIN, "maximum": i64::MAX})
        }
        (_, "limitto") => {
            json!({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT})
        }
        (_, "language") => json!({"type": "string", "enum": languages}),
        (_, "langfilter") => {
            json!({"type": "string", "maxLength": MAX_LIST_CHARS, "pattern": list_of(&languages)})
        }
        (
            _,
            "removenullvalues"
            | "active"
            | "availabilitycheck"
            | "showall"
            | "getasarray"
            | "searchbasetext"
            | "excludenulloremptyvalues",
        ) => json!({"type": "boolean"}),
        (_, "searchfilter" | "q" | "term") => {
            text(MAX_SEARCH_CHARS, "at most this many characters")
        }
        ("/v1/Accommodation", "typefilter") => bitmask(ACCO_TYPES),
        ("/v1/Accommodation", "categoryfilter") => bitmask(ACCO_CATEGORIES),
        ("/v1/Accommodation", "boardfilter") => bitmask(ACCO_BOARDS),
        ("/v1/Accommodation", "featurefilter") => bitmask(ACCO_FEATURES),
        ("/v1/HubActivityPoi", "type") => bitmask(POI_MAIN_TYPES),
        ("/v1/Article", "articletype") => bitmask(ARTICLE_TYPES),
        (_, "subtype" | "poitype" | "activitytype") => {
            // Names, never a number (a number would be read as a bitmask and refused).
            let mut s = text(MAX_LIST_CHARS, "comma list of HubTags ids, not a bitmask");
            s["pattern"] = json!(format!("^({TEXT_CHAR}*{NAME_CHAR}{TEXT_CHAR}*)?$"));
            s
        }
        (_, "idlist" | "source" | "publishedon" | "validforentity" | "types" | "typelist") => text(
            MAX_LIST_CHARS,
            &format!("comma list of at most {MAX_LIST_ITEMS} items"),
        ),
        (_, "updatefrom" | "begindate" | "enddate" | "arrival" | "departure") => date(),
        (_, "latitude") => json!({"type": "number", "minimum": -90, "maximum": 90}),
        (_, "longitude") => json!({"type": "number", "minimum": -180, "maximum": 180}),
        (_, "radius") => json!({"type": "number", "minimum": 0, "maximum": MAX_RADIUS_M}),
        (_, "polygon") => text(MAX_POLYGON_CHARS, "WKT, bbc/bbi(…) or a stored shape"),
        (_, "rawfilter" | "expression") => text(
            MAX_EXPRESSION_CHARS,
            "rawfilter syntax, nesting at most 32 deep",
        ),
        (_, "rawsort") => text(
            MAX_EXPRESSION_CHARS,
            &format!("at most {MAX_SORT_KEYS} keys"),
        ),
        (_, "tagfilter" | "odhtagfilter") => text(MAX_TAGFILTER_CHARS, "tagfilter syntax"),
        (_, "fields") => text(MAX_FIELDS_CHARS, &format!("at most {MAX_FIELDS} paths")),
        (_, "filteronfields") => text(
            MAX_LIST_CHARS,
            &format!("at most {MAX_FILTERONFIELDS} paths"),
        ),
        (_, "locfilter") => {
            let mut s = text(
                MAX_LIST_CHARS,
                &format!("comma list of at most {MAX_LIST_ITEMS} tokens"),
            );
            s["pattern"] = json!(prefixed_list(&LOCATION_PREFIXES));
            s
        }
        (_, "areafilter") => {
            let mut s = text(
                MAX_LIST_CHARS,
                &format!("comma list of at most {MAX_LIST_ITEMS} tokens"),
            );
            s["pattern"] = json!(prefixed_list(&AREA_PREFIXES));
            s
        }
        ("/v1/Event", "sort") => json!({"type": "string", "enum": ["asc", "upcoming", "desc"]}),
        (_, "srid") => {
            json!({"type": "string", "enum": hub_geo::srid::SUPPORTED.split(", ").flat_map(|c| [c.to_string(), format!("EPSG:{c}")]).collect::<Vec<_>>()})
        }
        ("/v1/Location", "type") => {
            json!({"type": "string", "pattern": list_of(&owned(&LOCATION_PREFIXES))})
        }
        ("/v1/Location/Skiarea" | "/v1/Location/SkiArea", "type") => {
            json!({"type": "string", "enum": ["ska"]})
        }
        ("/v1/Filter" | "/v1/Find", "type" | "odhtype" | "hubtype") => {
            json!({"type": "string", "maxLength": MAX_LIST_CHARS, "pattern": list_of(&entity_type_names())})
        }
        ("/v1/Distinct", "type" | "odhtype" | "hubtype") => {
            let mut names = entity_type_names();
            names.push("hubmetadata".into());
            json!({"type": "string", "enum": names})
        }
        (_, "url") => json!({"type": "string", "format": "uri", "maxLength": 2048}),
        _ => return None,
    };
    Some(schema)
}

/// One character of text (no control character).
const TEXT_CHAR: &str = "[^\\u0000-\\u001F\\u007F-\\u009F]";
/// A character that makes a value more than blank.
const VISIBLE_CHAR: &str = "[^\\s\\u0000-\\u001F\\u007F-\\u009F]";
/// A character that makes a value more than a number (not a digit, space or control).
const NAME_CHAR: &str = "[^0-9\\s\\u0000-\\u001F\\u007F-\\u009F]";

/// The reference's bitmask parameters: a sum of the flags' bits, or a comma list of
/// their names (any case).
fn bitmask(flags: &[(u64, &str)]) -> Value {
    let all: u64 = flags.iter().fold(0, |a, (bit, _)| a | bit);
    let names: Vec<String> = flags.iter().map(|(_, n)| regex_escape(n)).collect();
    json!({"anyOf": [
        {"type": "integer", "minimum": 1, "maximum": all},
        {"type": "string", "pattern": list_of(&names)}
    ], "description": format!("flags: {}", flags.iter().map(|(b, n)| format!("{b} {n}")).collect::<Vec<_>>().join(", "))})
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$-".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// `<prefix><id>` tokens, comma-separated.
fn prefixed_list(prefixes: &[&str]) -> String {
    // The id: no comma, space or control character (the server trims each token).
    let one = format!(
        "(({})[^,\\s\\u0000-\\u001F\\u007F-\\u009F]+)",
        prefixes.join("|")
    );
    format!("^({one}(,{one})*)?$")
}

fn problem(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/ProblemDoc"}}}
    })
}

/// An edge limit's answer: a problem body, except past what the HTTP layer itself reads
/// (about 64 KiB), where the connection is answered with the bare status.
fn edge_limit(description: &str) -> Value {
    json!({"description": format!("{description}; a problem+json body, or none when the HTTP layer refuses the request before the server reads it")})
}

/// The answers any operation can give whatever it does: a refused token, limits of the
/// edge (request target, load, rate), and a store that is unavailable.
fn shared_responses(has_parameters: bool, has_path_parameters: bool) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    if has_parameters {
        out.push(("400", problem("A parameter was not accepted; `parameter` names it (and `position` where in its value)")));
    }
    out.push(("401", problem("The bearer token is not valid (expired, malformed, wrongly signed); without a token the caller is anonymous")));
    if has_path_parameters {
        out.push(("404", problem("No document with this id")));
    }
    out.push((
        "414",
        edge_limit("The request target (encoded) is longer than the server accepts (16 KiB)"),
    ));
    out.push((
        "431",
        edge_limit("The request headers are larger than the server accepts"),
    ));
    out.push((
        "429",
        problem("Rate limit reached; Retry-After says when to come back"),
    ));
    out.push((
        "503",
        problem("Overloaded or the store is unavailable; Retry-After says when to come back"),
    ));
    out
}

/// Adds the values that mean "not set" to what a schema allows: JSON null (sent as the
/// text `null`) and the empty value, as in the reference, whose clients send both.
fn allow_absent(schema: &mut Value) {
    if schema.get("format").is_some() {
        // A format (date, uri) has no room for the empty value: one of three shapes.
        *schema =
            json!({"anyOf": [schema.take(), {"type": "null"}, {"type": "string", "maxLength": 0}]});
        return;
    }
    if let Some(values) = schema.get_mut("enum").and_then(Value::as_array_mut) {
        values.extend([Value::Null, json!("")]);
    }
    if let Some(any) = schema.get_mut("anyOf").and_then(Value::as_array_mut) {
        any.extend([
            json!({"type": "null"}),
            json!({"type": "string", "maxLength": 0}),
        ]);
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => schema["type"] = json!(["string", "null"]),
        // A number or boolean, or an empty value: three shapes. Not one schema with
        // `type: [kind, "null", "string"]` and `maxLength: 0`: the API docs' form
        // (Swagger UI) holds every typed value as text and refused `pagesize=10` for
        // being longer than 0 characters. The default stays outside, where the form
        // finds it.
        Some(_) => {
            let default = schema.as_object_mut().and_then(|s| s.remove("default"));
            *schema = json!({"anyOf": [schema.take(), {"type": "null"}, {"type": "string", "maxLength": 0}]});
            if let Some(default) = default {
                schema["default"] = default;
            }
        }
        None => {}
    }
}

/// Query parameters an operation refuses to run without (Find also takes `term` for
/// `q`; the document names the main spelling).
const REQUIRED: [(&str, &str); 3] = [
    ("/v1/Filter", "expression"),
    ("/v1/Find", "q"),
    ("/v1/Distinct", "fields"),
];

/// Applies the parameter schemas, the security scheme and the shared responses to the
/// document (as JSON).
pub fn refine(doc: &mut Value) {
    doc["components"]["securitySchemes"]["bearer"] = json!({
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "An access token of the token service (/auth/realms/{realm}/protocol/openid-connect/token). Reads work without one (closed data stays reduced); writes need the dataset's role"
    });
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            refine_operation(path, method, op);
        }
    }
}

fn refine_operation(path: &str, method: &str, op: &mut Value) {
    let mut has_parameters = op.get("requestBody").is_some();
    let mut has_path_parameters = false;
    if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
        for param in params.iter_mut() {
            let name = param["name"].as_str().unwrap_or_default().to_string();
            has_parameters = true;
            match param["in"].as_str() {
                Some("query") => {
                    let required = REQUIRED.contains(&(path, name.as_str()));
                    if let Some(mut schema) = parameter_schema(path, &name) {
                        if let Some(extra) =
                            schema.as_object_mut().and_then(|s| s.remove("description"))
                        {
                            let own = param["description"].as_str().unwrap_or_default();
                            param["description"] =
                                json!(format!("{own} ({})", extra.as_str().unwrap_or_default()));
                        }
                        param["schema"] = schema;
                    }
                    if required {
                        // An empty or blank value counts as absent.
                        param["required"] = json!(true);
                        param["schema"]["minLength"] = json!(1);
                        param["schema"]["pattern"] =
                            json!(format!("^{TEXT_CHAR}*{VISIBLE_CHAR}{TEXT_CHAR}*$"));
                    } else {
                        allow_absent(&mut param["schema"]);
                    }
                }
                Some("path") => has_path_parameters = true,
                _ => {}
            }
        }
    }
    let responses = op["responses"]
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut merged: Map<String, Value> = responses;
    for (status, response) in shared_responses(has_parameters, has_path_parameters) {
        merged.entry(status.to_string()).or_insert(response);
    }
    op["responses"] = Value::Object(merged);
    document_id_arrays(op);
    // Reads are open: a token is optional (it unlocks closed data). Operations that
    // declare `bearer` need it.
    if op.get("security").is_none() && method == "get" {
        op["security"] = json!([{}, {"bearer": []}]);
    }
}

/// A list that takes `getasidarray` answers `true` with a plain array of ids instead of
/// the envelope (the reference's shape), so its 200 answer is one or the other.
fn document_id_arrays(op: &mut Value) {
    let takes_id_array = op["parameters"]
        .as_array()
        .is_some_and(|params| params.iter().any(|p| p["name"] == "getasidarray"));
    if !takes_id_array {
        return;
    }
    if let Some(schema) = op
        .pointer_mut("/responses/200/content/application~1json/schema")
        .map(Value::take)
    {
        op["responses"]["200"]["content"]["application/json"]["schema"] = json!({"anyOf": [
            schema,
            {"type": "array", "items": {"type": "string"}, "description": "getasidarray=true: the ids of every matching document, in list order"}
        ]});
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    fn document() -> Value {
        crate::openapi::document()
    }

    fn parameter<'a>(doc: &'a Value, path: &str, name: &str) -> &'a Value {
        doc["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("GET {path} has no {name}"))
    }

    #[test]
    fn paging_limits_are_the_parsers() {
        let doc = document();
        let size = &parameter(&doc, "/v1/Accommodation", "pagesize")["schema"]["anyOf"][0];
        assert_eq!(size["minimum"], 1);
        assert_eq!(size["maximum"], crate::params::MAX_PAGE_SIZE);
        let number = &parameter(&doc, "/v1/Event", "pagenumber")["schema"]["anyOf"][0];
        assert_eq!(number["maximum"], crate::params::MAX_PAGE_NUMBER);
        let search = &parameter(&doc, "/v1/Article", "searchfilter")["schema"];
        assert_eq!(search["maxLength"], crate::params::MAX_SEARCH_CHARS);
        let languages = parameter(&doc, "/v1/Area/{id}", "language")["schema"]["enum"]
            .as_array()
            .unwrap()
            .clone();
        for l in hub_model::language::LANGUAGES {
            assert!(languages.contains(&Value::from(*l)), "{l}");
        }
    }

    /// A text parameter the list parser refuses with a control character in it says so
    /// in its schema (a pattern that does not match such a value), so a generated
    /// client or a fuzzer never sends one expecting success.
    #[test]
    fn parameters_refusing_control_characters_document_it() {
        use crate::params::{ListParams, RawQuery};
        let doc = document();
        let mut checked = Vec::new();
        for path in ["/v1/Article", "/v1/Event", "/v1/Accommodation"] {
            for p in doc["paths"][path]["get"]["parameters"].as_array().unwrap() {
                let name = p["name"].as_str().unwrap();
                let query = RawQuery::parse(Some(&format!("{name}=a%C2%84")));
                let refused = matches!(
                    ListParams::parse(&query.typed()),
                    Err(crate::ContentError::InvalidParameter { ref parameter, .. }
                        | crate::ContentError::Parse { ref parameter, .. }) if parameter == name
                );
                let schema = &p["schema"];
                let schema = if schema["anyOf"].is_array() {
                    &schema["anyOf"][0]
                } else {
                    schema
                };
                // Free text: a string without an enum or a format saying what it holds.
                let text = schema["type"] == "string"
                    || schema["type"]
                        .as_array()
                        .is_some_and(|t| t.contains(&Value::from("string")));
                if !refused
                    || !text
                    || schema.get("enum").is_some()
                    || schema.get("format").is_some()
                {
                    continue;
                }
                let pattern = schema["pattern"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{path} {name}: refused, but no pattern says so"));
                let pattern = regex::Regex::new(pattern).unwrap();
                assert!(!pattern.is_match("a\u{84}"), "{path} {name}: {pattern}");
                checked.push(name.to_string());
            }
        }
        for name in ["publishedon", "source", "searchfilter", "idlist"] {
            assert!(checked.iter().any(|c| c == name), "{name} was not checked");
        }
    }

    #[test]
    fn lists_with_getasidarray_document_the_id_array() {
        let doc = document();
        let shapes = |path: &str| {
            doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
                ["anyOf"]
                .as_array()
                .map(|alternatives| alternatives.len())
        };
        assert_eq!(shapes("/v1/Accommodation"), Some(2));
        assert_eq!(shapes("/v1/GeoShapes"), Some(2));
        // A single document is one shape.
        assert_eq!(shapes("/v1/Event/{id}"), None);
    }

    #[test]
    fn every_security_requirement_resolves_and_errors_are_documented() {
        let doc = document();
        let schemes = doc["components"]["securitySchemes"].as_object().unwrap();
        assert_eq!(schemes["bearer"]["scheme"], "bearer");
        let mut bearer_operations = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                for requirement in op["security"].as_array().into_iter().flatten() {
                    for scheme in requirement.as_object().unwrap().keys() {
                        assert!(schemes.contains_key(scheme), "{method} {path}: {scheme}");
                        bearer_operations += usize::from(scheme == "bearer");
                    }
                }
                let responses = op["responses"].as_object().unwrap();
                for status in ["401", "414", "429", "503"] {
                    assert!(
                        responses.contains_key(status),
                        "{method} {path} lacks {status}"
                    );
                }
                if path.contains('{') {
                    assert!(responses.contains_key("404"), "{method} {path} lacks 404");
                }
                if method == "get" && path.ends_with("{id}") {
                    assert!(responses.contains_key("400"), "GET {path} lacks 400");
                }
            }
        }
        assert!(bearer_operations > 60);
    }

    #[test]
    fn not_set_values_are_allowed_and_required_ones_are_not_blank() {
        let doc = document();
        // A boolean, JSON null or the empty value; as three shapes, so that a form
        // holding the value as text (Swagger UI) still takes `true`.
        let active = &parameter(&doc, "/v1/Event", "active")["schema"];
        assert_eq!(
            active["anyOf"],
            serde_json::json!([{"type": "boolean"}, {"type": "null"}, {"type": "string", "maxLength": 0}])
        );
        assert!(active.get("maxLength").is_none());
        let q = parameter(&doc, "/v1/Find", "q");
        assert_eq!(q["required"], true);
        assert_eq!(q["schema"]["minLength"], 1);
        let mask = &parameter(&doc, "/v1/Accommodation", "typefilter")["schema"]["anyOf"][0];
        assert_eq!(mask["maximum"], 255);
    }
}
