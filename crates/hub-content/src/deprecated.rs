//! `GET /v1/Deprecated`: deprecated fields grouped by lower-case entity name, taken from
//! the spec's Versioning section. Needs a bearer token (any valid one).

use serde_json::{json, Map, Value};

/// Hub's dates for the spec's deprecations (the spec names no dates): announced with
/// the 2020.10 release, removable after the end of 2026.
pub const DEPRECATION_DATE: &str = "2020-10-01";
pub const REMOVED_AFTER: &str = "2026-12-31";

/// (entity, field, data type, replacement)
const RECORDS: &[(&str, &str, &str, &str)] = &[
    (
        "event",
        "EventDate.EventCalculatedDay",
        "String",
        "EventDate.EventCalculatedDays (a list)",
    ),
    ("event", "EventPrice", "Object", "EventVariants"),
    ("event", "HubTags", "Array", "Tags"),
    ("event", "HubActivePublishedOn", "Array", "PublishedOn"),
    (
        "event",
        "EventBooking.BookableTo",
        "DateTime",
        "EventUrls (type bookingUrl)",
    ),
    (
        "event",
        "EventBooking.BookableFrom",
        "DateTime",
        "EventUrls (type bookingUrl)",
    ),
    (
        "event",
        "EventBooking.AccommodationAssignment",
        "String",
        "EventUrls (type bookingUrl)",
    ),
    (
        "event",
        "ClassificationRID",
        "String",
        "Tags (type eventclassification)",
    ),
    ("event", "Topics", "Array", "Tags (type eventcategory)"),
    ("event", "TopicRids", "Array", "Tags (type eventcategory)"),
    ("event", "Gpstype", "String", "GpsInfo"),
    ("event", "Latitude", "Double", "GpsInfo"),
    ("event", "Longitude", "Double", "GpsInfo"),
    ("event", "Altitude", "Double", "GpsInfo"),
    ("event", "AltitudeUnitofMeasure", "String", "GpsInfo"),
    (
        "event",
        "TicketEventProperty.TicketRequired",
        "Boolean",
        "the property object",
    ),
    (
        "event",
        "SignOnEventProperty.RegistrationRequired",
        "Boolean",
        "the property object",
    ),
    (
        "event",
        "OrgRIDEventProperty.EventOrganizerId",
        "String",
        "the property object",
    ),
    (
        "event",
        "EventAdditionalInfos.Mplace",
        "String",
        "MeetingPoint",
    ),
    (
        "event",
        "EventAdditionalInfos.Reg",
        "String",
        "Registration",
    ),
    ("hubactivitypoi", "PoiProperty", "Object", "none (obsolete)"),
    (
        "hubactivitypoi",
        "SyncSourceInterface",
        "String",
        "none (obsolete)",
    ),
    (
        "hubactivitypoi",
        "SyncUpdateMode",
        "String",
        "none (obsolete)",
    ),
    ("hubactivitypoi", "GpsPoints", "Object", "GpsInfo"),
    ("hubactivitypoi", "ExtID", "String", "Mapping"),
    ("hubactivitypoi", "ExtElevationID", "String", "Mapping"),
    (
        "hubactivitypoi",
        "Difficulty",
        "String",
        "the matching field in Ratings",
    ),
    ("hubactivitypoi", "SrcTags", "Array", "Tags"),
    ("hubactivitypoi", "OldTags", "Array", "Tags"),
    (
        "hubactivitypoi",
        "OldActivePublishedOn",
        "Array",
        "PublishedOn",
    ),
    ("hubactivitypoi", "CustomId", "String", "Mapping"),
    ("hubactivitypoi", "OldId", "String", "Mapping"),
    ("hubactivitypoi", "OwnerRid", "String", "Mapping"),
    ("hubactivitypoi", "ChildPoiIds", "Array", "Mapping"),
    ("hubactivitypoi", "MasterPoiIds", "Array", "Mapping"),
    (
        "hubactivitypoi",
        "LocationInfo.AreaInfo",
        "Object",
        "AreaIds",
    ),
    ("hubactivitypoi", "Type", "String", "Tags"),
    (
        "gastronomy",
        "CategoryCodes",
        "Array",
        "AdditionalProperties.GastronomySrcDataProperties",
    ),
    (
        "gastronomy",
        "DishRates",
        "Array",
        "AdditionalProperties.GastronomySrcDataProperties",
    ),
    (
        "gastronomy",
        "CapacityCeremony",
        "Array",
        "AdditionalProperties.GastronomySrcDataProperties",
    ),
    (
        "gastronomy",
        "Facilities",
        "Array",
        "AdditionalProperties.GastronomySrcDataProperties",
    ),
    (
        "gastronomy",
        "MaxSeatingCapacity",
        "Integer",
        "AdditionalProperties.GastronomySrcDataProperties",
    ),
    ("tag", "MainEntity", "String", "ValidForEntity"),
    ("tag", "IDMCategoryMapping", "Object", "none (obsolete)"),
    ("tag", "SrcTaggingInfo", "Object", "Mapping"),
];

/// The response body: `{entity: [{Name, Type, Description, DeprecationDate, RemovedAfter}]}`.
pub fn deprecated_body() -> String {
    let mut out: Map<String, Value> = Map::new();
    for (entity, name, ty, replacement) in RECORDS {
        let list = out
            .entry(entity.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        list.as_array_mut().expect("lists only").push(json!({
            "Name": name,
            "Type": ty,
            "Description": if replacement.starts_with("none") { "deprecated; obsolete, no replacement".to_string() } else { format!("deprecated; use {replacement}") },
            "DeprecationDate": DEPRECATION_DATE,
            "RemovedAfter": REMOVED_AFTER,
        }));
    }
    Value::Object(out).to_string()
}

/// `GET /v1/Deprecated` (401 without a bearer token).
pub(crate) fn handler(
    principal: Option<&hub_auth::Principal>,
) -> Result<axum::response::Response, crate::error::ContentError> {
    use axum::response::IntoResponse;
    hub_auth::policy::require_token(principal, "/v1/Deprecated")?;
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "application/json; charset=utf-8",
        )],
        deprecated_body(),
    )
        .into_response())
}
