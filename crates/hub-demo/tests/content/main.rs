//! Behaviour of the demo content generator as a loader or API test would see it.
//! One test binary; the scale-1 data set is generated once and shared.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use hub_demo::{content_documents, DemoOptions};
use serde_json::Value;

mod announcements;
mod fields;
mod links;
mod scale;
mod tags;

pub type Docs = Vec<(&'static str, Value)>;

pub fn anchor() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 13, 15, 8, 38).unwrap()
}

pub fn now() -> NaiveDateTime {
    anchor().naive_utc()
}

pub fn generate(scale: u32) -> Docs {
    let mut docs = Vec::new();
    content_documents(
        &DemoOptions {
            scale,
            anchor: anchor(),
        },
        &mut |e, d| docs.push((e, d)),
    );
    docs
}

/// Scale 1, generated once for all tests.
pub fn docs() -> &'static Docs {
    static DOCS: OnceLock<Docs> = OnceLock::new();
    DOCS.get_or_init(|| generate(1))
}

pub fn of(entity: &str) -> Vec<&'static Value> {
    docs()
        .iter()
        .filter(|(e, _)| *e == entity)
        .map(|(_, d)| d)
        .collect()
}

pub fn counts<'a>(docs: impl Iterator<Item = &'a str>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for e in docs {
        *out.entry(e.to_owned()).or_default() += 1;
    }
    out
}

pub fn fixture(path: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures")
        .join(path);
    p.exists().then_some(p)
}

/// Timestamps are either offset-less (`2025-03-13T15:08:38`) or RFC 3339 with an offset.
pub fn parse_time(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S")
        .or_else(|_| DateTime::parse_from_rfc3339(s).map(|d| d.naive_utc()))
        .unwrap_or_else(|_| panic!("unparseable timestamp {s:?}"))
}

pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string in {}", v["Id"]))
}

pub const ENTITIES: [(&str, &str); 20] = [
    ("Accommodation", "accommodation"),
    ("AccommodationRoom", "accommodationroom"),
    ("HubActivityPoi", "hubactivitypoi"),
    ("Event", "event"),
    ("EventShort", "eventshort"),
    ("Article", "article"),
    ("WebcamInfo", "webcam"),
    ("WeatherDistrict", "weatherdistrict"),
    ("WeatherForecast", "weatherforecast"),
    ("WeatherRealtime", "weatherrealtime"),
    ("Region", "region"),
    ("Municipality", "municipality"),
    ("District", "district"),
    ("Area", "area"),
    ("SkiArea", "skiarea"),
    ("SkiRegion", "skiregion"),
    ("TourismAssociation", "tourismassociation"),
    ("Tag", "tag"),
    ("Source", "source"),
    ("Announcement", "announcement"),
];

pub const LARGE: [&str; 8] = [
    "HubActivityPoi",
    "Accommodation",
    "AccommodationRoom",
    "Event",
    "Article",
    "EventShort",
    "WebcamInfo",
    "Announcement",
];
