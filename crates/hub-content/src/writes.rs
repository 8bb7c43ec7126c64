//! Content writes: `POST /v1/{EntityType}`, `PUT /v1/{EntityType}/{id}`,
//! `DELETE /v1/{EntityType}/{id}`, guarded by the roles `{EntityType}_Create|Update|Delete`
//! (401 without token, 403 without role). A document is validated (JSON object, id
//! consistent with the path, known fields typed right) before it is saved; the store
//! saves atomically and keeps `_Meta.LastChange` unless the content changed.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use hub_auth::policy::{require_write, WriteAction};
use hub_auth::Principal;
use hub_model::language::parse_language;
use hub_model::EntityType;
use serde_json::{json, Map, Value};

use crate::error::ContentError;
use crate::ContentState;

#[derive(Clone, Copy, Debug)]
enum Kind {
    String,
    Bool,
    Number,
    Object,
    Strings,
    Objects,
}

/// Fields whose type Hub knows; every other field is stored as sent.
const KNOWN_FIELDS: &[(&str, Kind)] = &[
    ("Shortname", Kind::String),
    ("Source", Kind::String),
    ("A0RID", Kind::String),
    ("AccoCategoryId", Kind::String),
    ("FirstImport", Kind::String),
    ("LastChange", Kind::String),
    ("Active", Kind::Bool),
    ("OdhActive", Kind::Bool),
    ("SmgActive", Kind::Bool),
    ("Highlight", Kind::Bool),
    ("Altitude", Kind::Number),
    ("Latitude", Kind::Number),
    ("Longitude", Kind::Number),
    ("Detail", Kind::Object),
    ("AccoDetail", Kind::Object),
    ("AccoRoomDetail", Kind::Object),
    ("ContactInfos", Kind::Object),
    ("LicenseInfo", Kind::Object),
    ("Mapping", Kind::Object),
    ("AdditionalProperties", Kind::Object),
    ("_Meta", Kind::Object),
    ("HasLanguage", Kind::Strings),
    ("TagIds", Kind::Strings),
    ("SrcTags", Kind::Strings),
    ("AreaIds", Kind::Strings),
    ("PublishedOn", Kind::Strings),
    ("GpsInfo", Kind::Objects),
    ("Tags", Kind::Objects),
    ("HubTags", Kind::Objects),
    ("ImageGallery", Kind::Objects),
    ("AccoRoomInfo", Kind::Objects),
    ("Availability", Kind::Objects),
];

/// Fields of array elements whose type the ODH schemas define (`EventDate[].PriceFrom`
/// is a number there): (array field, element key, kind). A wrong type is refused with
/// the element's JSON path.
const KNOWN_ELEMENT_FIELDS: &[(&str, &str, Kind)] = &[
    ("GpsInfo", "Latitude", Kind::Number),
    ("GpsInfo", "Longitude", Kind::Number),
    ("GpsInfo", "Altitude", Kind::Number),
    ("GpsInfo", "Gpstype", Kind::String),
    ("EventDate", "PriceFrom", Kind::Number),
    ("EventDate", "MinPersons", Kind::Number),
    ("EventDate", "MaxPersons", Kind::Number),
    ("EventDate", "From", Kind::String),
    ("EventDate", "To", Kind::String),
    ("EventDate", "Active", Kind::Bool),
    ("EventDate", "IsBookable", Kind::Bool),
    ("EventDate", "IsCancelled", Kind::Bool),
    ("EventDate", "SingleDays", Kind::Bool),
    ("ImageGallery", "ImageUrl", Kind::String),
    ("ImageGallery", "Width", Kind::Number),
    ("ImageGallery", "Height", Kind::Number),
    ("ImageGallery", "IsInGallery", Kind::Bool),
    ("Tags", "Id", Kind::String),
    ("HubTags", "Id", Kind::String),
];

fn kind_ok(value: &Value, kind: Kind) -> bool {
    match (kind, value) {
        (_, Value::Null) => true,
        (Kind::String, Value::String(_))
        | (Kind::Bool, Value::Bool(_))
        | (Kind::Number, Value::Number(_))
        | (Kind::Object, Value::Object(_)) => true,
        (Kind::Strings, Value::Array(a)) => a.iter().all(Value::is_string),
        (Kind::Objects, Value::Array(a)) => a.iter().all(Value::is_object),
        _ => false,
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::String => "a string",
        Kind::Bool => "true or false",
        Kind::Number => "a number",
        Kind::Object => "an object",
        Kind::Strings => "an array of strings",
        Kind::Objects => "an array of objects",
    }
}

/// Checks a document for `entity` and settles its id: `path_id` (PUT) must match the
/// body's `Id` case-insensitively or fills it in; without either (POST) a UUID is
/// assigned. Returns the document with `Id` and `_Meta.Id`/`Type`/`Source` set.
pub fn validate_document(
    entity: &EntityType,
    mut doc: Value,
    path_id: Option<&str>,
) -> Result<Value, String> {
    // Stored documents keep Hub's spelling: a client writing ODH names (`ODHTags`,
    // `SmgTags`) writes the same fields.
    hub_model::naming::to_hub(&mut doc);
    let Value::Object(map) = &mut doc else {
        return Err("the body must be a JSON object".into());
    };
    let body_id = match map.get("Id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => return Err("Id must be a non-empty string".into()),
    };
    let id = match (path_id, body_id) {
        (Some(p), Some(b)) if !p.eq_ignore_ascii_case(&b) => {
            return Err(format!(
                "Id '{b}' in the body differs from '{p}' in the path"
            ))
        }
        (_, Some(b)) => b,
        (Some(p), None) => p.to_string(),
        (None, None) => uuid::Uuid::new_v4().to_string(),
    };
    map.insert("Id".into(), Value::String(id.clone()));
    for (field, kind) in KNOWN_FIELDS {
        if let Some(v) = map.get(*field) {
            if !kind_ok(v, *kind) {
                return Err(format!("{field} must be {}", kind_name(*kind)));
            }
        }
    }
    if let Some(langs) = map.get("HasLanguage").and_then(Value::as_array) {
        if let Some(bad) = langs
            .iter()
            .filter_map(Value::as_str)
            .find(|l| parse_language(l).is_none())
        {
            return Err(format!("HasLanguage: '{bad}' is not a known language code"));
        }
    }
    for (field, key, kind) in KNOWN_ELEMENT_FIELDS {
        let elements = map.get(*field).and_then(Value::as_array);
        for (i, element) in elements.into_iter().flatten().enumerate() {
            if element.get(*key).is_some_and(|v| !kind_ok(v, *kind)) {
                return Err(format!("{field}[{i}].{key} must be {}", kind_name(*kind)));
            }
        }
    }
    for (i, day) in map
        .get("Availability")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let date_ok = day.get("Date").and_then(Value::as_str).is_some_and(|d| {
            chrono::NaiveDate::parse_from_str(d.get(..10).unwrap_or(d), "%Y-%m-%d").is_ok()
        });
        if !date_ok {
            return Err(format!(
                "Availability[{i}].Date must be a date (YYYY-MM-DD)"
            ));
        }
        if !day.get("Available").is_some_and(Value::is_boolean) {
            return Err(format!("Availability[{i}].Available must be true or false"));
        }
        if day
            .get("PriceFrom")
            .is_some_and(|v| !v.is_number() && !v.is_null())
        {
            return Err(format!("Availability[{i}].PriceFrom must be a number"));
        }
    }
    let source = map
        .get("_Meta")
        .and_then(|m| m.get("Source"))
        .or_else(|| map.get("Source"))
        .and_then(Value::as_str)
        .map(str::to_lowercase)
        .unwrap_or_else(|| "api".into());
    let meta = map
        .entry("_Meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let meta = meta.as_object_mut().expect("checked to be an object");
    meta.insert("Id".into(), Value::String(id));
    meta.insert("Type".into(), Value::String(entity.meta_type.to_string()));
    meta.insert("Source".into(), Value::String(source));
    meta.entry("Reduced").or_insert(Value::Bool(false));
    Ok(doc)
}

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn result(
    entity: &EntityType,
    id: &str,
    operation: &str,
    created: bool,
    updated: bool,
    deleted: bool,
    changed: bool,
) -> Value {
    json!({
        "id": id,
        "odhtype": entity.meta_type,
        "operation": operation,
        "created": created as u8,
        "updated": updated as u8,
        "deleted": deleted as u8,
        "objectchanged": changed as u8,
    })
}

fn respond(status: StatusCode, body: Value, location: Option<String>) -> Response {
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body.to_string(),
    )
        .into_response();
    if let Some(l) = location.and_then(|l| header::HeaderValue::from_str(&l).ok()) {
        response.headers_mut().insert(header::LOCATION, l);
    }
    response
}

fn parse_body(body: &[u8]) -> Result<Value, ContentError> {
    let doc: Value = serde_json::from_slice(body)
        .map_err(|e| ContentError::InvalidDocument(format!("the body is not JSON: {e}")))?;
    match hub_model::text::first_nul(&doc) {
        Some(path) => Err(ContentError::InvalidDocument(format!(
            "{path} holds a NUL character (\\u0000), which documents may not contain"
        ))),
        None => Ok(doc),
    }
}

fn stamp_author(doc: &mut Value, principal: &Principal) {
    if let Some(meta) = doc.get_mut("_Meta").and_then(Value::as_object_mut) {
        let by = principal
            .username
            .clone()
            .unwrap_or_else(|| principal.subject.clone());
        meta.insert(
            "UpdateInfo".into(),
            json!({"UpdatedBy": by, "UpdateSource": "api"}),
        );
    }
}

/// `POST /v1/{EntityType}`: creates a document (409 if its id is taken).
pub(crate) async fn create(
    state: &ContentState,
    entity: &'static EntityType,
    principal: Option<&Principal>,
    body: &[u8],
) -> Result<Response, ContentError> {
    let principal = require_write(principal, entity.name, WriteAction::Create)?;
    let mut doc = validate_document(entity, parse_body(body)?, None)
        .map_err(ContentError::InvalidDocument)?;
    stamp_author(&mut doc, principal);
    let out = state.content.put(entity.name, doc, now(), true).await?;
    if out.existed {
        return Err(ContentError::Conflict(format!(
            "{} already has a document with id '{}'; use PUT to replace it",
            entity.route, out.id
        )));
    }
    tracing::info!(entity = entity.name, id = %out.id, by = %principal.subject, "created a document");
    let location = format!("{}/v1/{}/{}", state.base_url, entity.route, out.id);
    Ok(respond(
        StatusCode::CREATED,
        result(entity, &out.id, "CREATE", true, false, false, true),
        Some(location),
    ))
}

/// `PUT /v1/{EntityType}/{id}`: replaces (or creates) a document.
pub(crate) async fn update(
    state: &ContentState,
    entity: &'static EntityType,
    id: &str,
    principal: Option<&Principal>,
    body: &[u8],
) -> Result<Response, ContentError> {
    let principal = require_write(principal, entity.name, WriteAction::Update)?;
    let mut doc = validate_document(entity, parse_body(body)?, Some(id))
        .map_err(ContentError::InvalidDocument)?;
    stamp_author(&mut doc, principal);
    let out = state.content.put(entity.name, doc, now(), false).await?;
    tracing::info!(entity = entity.name, id = %out.id, changed = out.changed, by = %principal.subject, "saved a document");
    let status = if out.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(respond(
        status,
        result(
            entity,
            &out.id,
            if out.created { "CREATE" } else { "UPDATE" },
            out.created,
            !out.created,
            false,
            out.changed,
        ),
        None,
    ))
}

/// `DELETE /v1/{EntityType}/{id}`.
pub(crate) async fn delete(
    state: &ContentState,
    entity: &'static EntityType,
    id: &str,
    principal: Option<&Principal>,
) -> Result<Response, ContentError> {
    let principal = require_write(principal, entity.name, WriteAction::Delete)?;
    if !state.content.delete(entity.name, id).await? {
        return Err(ContentError::NotFound(format!(
            "{} has no document with id '{id}'",
            entity.route
        )));
    }
    tracing::info!(entity = entity.name, id = %id, by = %principal.subject, "deleted a document");
    Ok(respond(
        StatusCode::OK,
        result(entity, id, "DELETE", false, false, true, true),
        None,
    ))
}

/// `POST|PUT|DELETE /v1/{*path}`.
pub(crate) async fn write_path(
    axum::extract::State(state): axum::extract::State<ContentState>,
    method: axum::http::Method,
    axum::extract::Path(path): axum::extract::Path<String>,
    principal: Option<axum::Extension<Principal>>,
    body: axum::body::Bytes,
) -> Result<Response, ContentError> {
    let principal = principal.map(|axum::Extension(p)| p);
    let m = method.as_str();
    let allow = allowed_methods(&path)?;
    let (entity, id) = match EntityType::resolve_path(&path) {
        Some(found) if allow != READ_ONLY => found,
        _ => {
            return Ok(method_not_allowed(
                format!("{m} /v1/{path}: this resource is read-only"),
                allow,
            ))
        }
    };
    match (m, id) {
        ("POST", None) => create(&state, entity, principal.as_ref(), &body).await,
        ("PUT", Some(id)) => update(&state, entity, id, principal.as_ref(), &body).await,
        ("DELETE", Some(id)) => delete(&state, entity, id, principal.as_ref()).await,
        _ => Ok(method_not_allowed(
            format!("{m} /v1/{path}: documents are created with POST /v1/{{EntityType}}, replaced with PUT and deleted with DELETE /v1/{{EntityType}}/{{id}}"),
            allow,
        )),
    }
}

const READ_ONLY: &str = "GET, HEAD";

/// The methods `/v1/{path}` answers (its `Allow` header), or 404 for no resource.
fn allowed_methods(path: &str) -> Result<&'static str, ContentError> {
    if path
        .trim_end_matches('/')
        .eq_ignore_ascii_case("deprecated")
    {
        return Ok(READ_ONLY);
    }
    match EntityType::resolve_path(path) {
        Some((_, Some(_))) => Ok("GET, HEAD, PUT, DELETE"),
        Some((_, None)) => Ok("GET, HEAD, POST"),
        None => Err(ContentError::NotFound(format!(
            "/v1/{path} is not a dataset of this API; GET /v1 lists the datasets"
        ))),
    }
}

/// `OPTIONS /v1/{*path}`: the methods of this very resource (the catch-all route
/// serves datasets, documents and the read-only deprecation list alike).
pub(crate) async fn options_path(
    axum::extract::Path(path): axum::extract::Path<String>,
) -> Result<Response, ContentError> {
    let allow = allowed_methods(&path)?;
    Ok((
        StatusCode::NO_CONTENT,
        [(header::ALLOW, axum::http::HeaderValue::from_static(allow))],
    )
        .into_response())
}

/// 405 with the `Allow` header RFC 9110 requires (the methods the path answers).
fn method_not_allowed(detail: String, allow: &'static str) -> Response {
    let mut response = ContentError::MethodNotAllowed(detail).into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, axum::http::HeaderValue::from_static(allow));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity() -> &'static EntityType {
        EntityType::by_name("Accommodation").unwrap()
    }

    #[test]
    fn ids_are_settled_and_fields_checked() {
        let doc = validate_document(entity(), json!({"Shortname": "x"}), Some("A-1")).unwrap();
        assert_eq!(doc["Id"], "A-1");
        assert_eq!(doc["_Meta"]["Type"], "accommodation");
        assert_eq!(doc["_Meta"]["Source"], "api");
        assert!(validate_document(entity(), json!({"Id": "a-1"}), Some("A-1")).is_ok());
        assert!(validate_document(entity(), json!({"Id": "b"}), Some("A-1"))
            .unwrap_err()
            .contains("differs"));
        assert_eq!(
            validate_document(entity(), json!({"Active": "yes"}), None).unwrap_err(),
            "Active must be true or false"
        );
        assert!(validate_document(entity(), json!([1]), None).is_err());
        assert!(validate_document(
            entity(),
            json!({"Availability": [{"Date": "soon", "Available": true}]}),
            None
        )
        .is_err());
        assert!(validate_document(entity(), json!({"HasLanguage": ["xx"]}), None).is_err());
        // Element fields typed by the ODH schemas: the error names the JSON path.
        for (doc, error) in [
            (
                json!({"EventDate": [{"PriceFrom": 0}, {"PriceFrom": "0"}]}),
                "EventDate[1].PriceFrom must be a number",
            ),
            (
                json!({"GpsInfo": [{"Latitude": "46.5"}]}),
                "GpsInfo[0].Latitude must be a number",
            ),
            (
                json!({"EventDate": [{"IsBookable": "no"}]}),
                "EventDate[0].IsBookable must be true or false",
            ),
            (
                json!({"ODHTags": [{"Id": 3}]}),
                "HubTags[0].Id must be a string",
            ),
            (
                json!({"SmgTags": "x"}),
                "SrcTags must be an array of strings",
            ),
        ] {
            assert_eq!(validate_document(entity(), doc, None).unwrap_err(), error);
        }
        let written = validate_document(
            entity(),
            json!({"ODHTags": [{"Id": "a"}], "SmgTags": ["a"], "EventDate": [{"PriceFrom": 12.5}]}),
            None,
        )
        .unwrap();
        assert_eq!(written["HubTags"], json!([{"Id": "a"}]));
        assert_eq!(written["SrcTags"], json!(["a"]));
        assert!(written.get("ODHTags").is_none());
        assert!(!validate_document(entity(), json!({}), None).unwrap()["Id"]
            .as_str()
            .unwrap()
            .is_empty());
    }
}
