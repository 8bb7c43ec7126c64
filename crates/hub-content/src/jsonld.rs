//! JSON-LD (schema.org) rendering of one document or of a list (`@graph`).
//!
//! Types by entity: Accommodation → Hotel; HubActivityPoi → Restaurant when it carries a
//! gastronomy category (HubTags/SmgTags `gastronomy`, `essen trinken`), else
//! TouristAttraction; Event → Event; Article → Recipe for `rezeptartikel`, else Article;
//! SkiArea → SkiResort; every other type → Place; the dataset list → Dataset.
//! The context is inline (`{"@vocab": "https://schema.org/"}`), so processors expand it
//! without fetching anything.

use hub_model::EntityType;
use serde_json::{json, Map, Value};

use crate::json_text;
use crate::pruned_parse::{self, KeyTree};

pub fn render(
    value: &Value,
    entity: Option<&'static EntityType>,
    base_url: &str,
    language: &str,
) -> Value {
    let context = context();
    match value {
        Value::Object(o) if o.get("Items").is_some_and(Value::is_array) => {
            let graph: Vec<Value> = o["Items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| item(d, entity, base_url, language))
                .collect();
            json!({"@context": context, "@graph": graph})
        }
        doc => {
            let mut out = Map::new();
            out.insert("@context".into(), context);
            if let Value::Object(m) = item(doc, entity, base_url, language) {
                out.extend(m);
            }
            Value::Object(out)
        }
    }
}

/// [`render`] of a list answer's text: each item is parsed down to the members [`item`]
/// reads ([`read_members`]), not built whole and then mostly dropped. `None` when the text
/// is not a list envelope, or an item does not parse: the caller parses the answer whole.
pub fn render_list_text(
    body: &str,
    entity: Option<&'static EntityType>,
    base_url: &str,
    language: &str,
) -> Option<Value> {
    let members = json_text::object_members(body)?;
    let items = json_text::member(&members, "Items").and_then(json_text::array_items)?;
    let read = read_members(entity);
    let graph = items
        .iter()
        .map(|text| {
            let doc = pruned_parse::parse(text, &read).ok()?;
            Some(item(&doc, entity, base_url, language))
        })
        .collect::<Option<Vec<Value>>>()?;
    Some(json!({"@context": context(), "@graph": graph}))
}

/// The top-level members [`item`] reads of a document of `entity`: its title paths'
/// first keys and the fixed ones below. A test renders every demo document both ways.
fn read_members(entity: Option<&EntityType>) -> KeyTree {
    const READ: [&str; 17] = [
        "Id",
        "HubTags",
        "ODHTags",
        "SmgTags",
        "Type",
        "Shortname",
        "Detail",
        "AccoDetail",
        "ImageGallery",
        "GpsInfo",
        "Latitude",
        "Longitude",
        "DateBegin",
        "DateEnd",
        "EventDate",
        "AccoCategoryId",
        "ContactInfos",
    ];
    let titles = entity.map_or(&[][..], |e| e.title_paths);
    let heads = titles
        .iter()
        .map(|path| path.split('.').next().unwrap_or(path));
    let keys: Vec<&str> = READ.iter().copied().chain(heads).collect();
    KeyTree::top_level(&keys)
}

fn context() -> Value {
    json!({"@vocab": "https://schema.org/"})
}

fn text<'a>(doc: &'a Value, pointer: &str) -> Option<&'a str> {
    doc.pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn has_category(doc: &Value, names: &[&str]) -> bool {
    let ids = ["HubTags", "ODHTags"].iter().flat_map(|f| {
        doc.get(*f)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("Id")?.as_str())
    });
    let smg = doc
        .get("SmgTags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    ids.chain(smg)
        .any(|t| names.iter().any(|n| t.eq_ignore_ascii_case(n)))
}

fn schema_type(doc: &Value, entity: Option<&EntityType>) -> &'static str {
    match entity.map(|e| e.name) {
        None => "Dataset",
        Some("Accommodation") => "Hotel",
        Some("HubActivityPoi") if has_category(doc, &["gastronomy", "essen trinken"]) => {
            "Restaurant"
        }
        Some("HubActivityPoi") => "TouristAttraction",
        Some("Event") => "Event",
        Some("Article")
            if text(doc, "/Type").is_some_and(|t| t.eq_ignore_ascii_case("rezeptartikel")) =>
        {
            "Recipe"
        }
        Some("Article") => "Article",
        Some("SkiArea") => "SkiResort",
        Some(_) => "Place",
    }
}

/// A title in `language`, else in any language.
fn localized(doc: &Value, fields: &[&str], language: &str) -> Option<String> {
    for field in fields {
        let (map, key) = field
            .split_once("{lang}")
            .map(|(m, k)| (m.trim_end_matches('.'), k.trim_start_matches('.')))
            .unwrap_or((field, ""));
        let Some(Value::Object(by_lang)) = doc.pointer(&format!("/{}", map.replace('.', "/")))
        else {
            continue;
        };
        let pick = |v: &Value| {
            if key.is_empty() {
                v.as_str().map(str::to_string)
            } else {
                v.get(key).and_then(Value::as_str).map(str::to_string)
            }
        };
        if let Some(t) = by_lang
            .get(language)
            .and_then(pick)
            .filter(|t| !t.is_empty())
        {
            return Some(t);
        }
        if let Some(t) = by_lang.values().filter_map(pick).find(|t| !t.is_empty()) {
            return Some(t);
        }
    }
    None
}

fn item(doc: &Value, entity: Option<&'static EntityType>, base_url: &str, language: &str) -> Value {
    let mut out = Map::new();
    out.insert("@type".into(), json!(schema_type(doc, entity)));
    let id = doc.get("Id").map(|v| {
        v.as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string())
    });
    if let (Some(id), Some(e)) = (&id, entity) {
        let url = format!(
            "{base_url}/v1/{}/{}",
            e.route,
            percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC)
        );
        out.insert("@id".into(), json!(url));
        out.insert("url".into(), json!(url));
    }
    if let Some(id) = id {
        out.insert("identifier".into(), json!(id));
    }
    let titles: Vec<&str> = entity.map(|e| e.title_paths.to_vec()).unwrap_or_default();
    if let Some(name) =
        localized(doc, &titles, language).or_else(|| text(doc, "/Shortname").map(str::to_string))
    {
        out.insert("name".into(), json!(name));
    }
    if let Some(d) = localized(
        doc,
        &["Detail.{lang}.BaseText", "AccoDetail.{lang}.Longdesc"],
        language,
    ) {
        out.insert("description".into(), json!(d));
    }
    if let Some(img) = doc
        .pointer("/ImageGallery/0/ImageUrl")
        .and_then(Value::as_str)
    {
        out.insert("image".into(), json!(img));
    }
    let gps = doc.pointer("/GpsInfo/0").unwrap_or(doc);
    if let (Some(lat), Some(lon)) = (
        gps.get("Latitude").and_then(Value::as_f64),
        gps.get("Longitude").and_then(Value::as_f64),
    ) {
        out.insert(
            "geo".into(),
            json!({"@type": "GeoCoordinates", "latitude": lat, "longitude": lon}),
        );
    }
    if entity.is_some_and(|e| e.name == "Event") {
        let begin = text(doc, "/DateBegin").or_else(|| text(doc, "/EventDate/0/From"));
        let end = text(doc, "/DateEnd").or_else(|| text(doc, "/EventDate/0/To"));
        if let Some(b) = begin {
            out.insert("startDate".into(), json!(b));
        }
        if let Some(e) = end {
            out.insert("endDate".into(), json!(e));
        }
    }
    if entity.is_some_and(|e| e.name == "Accommodation") {
        if let Some(stars) = text(doc, "/AccoCategoryId")
            .and_then(|c| c.chars().next())
            .and_then(|c| c.to_digit(10))
        {
            out.insert(
                "starRating".into(),
                json!({"@type": "Rating", "ratingValue": stars}),
            );
        }
    }
    if let Some(city) = localized(doc, &["ContactInfos.{lang}.City"], language) {
        out.insert(
            "address".into(),
            json!({"@type": "PostalAddress", "addressLocality": city}),
        );
    }
    Value::Object(out)
}
