//! The public entry points: generate every content document for a scale and anchor, and
//! tell in advance how many there will be.

use chrono::{DateTime, Timelike, Utc};
use serde_json::Value;

use crate::geo::Geo;
use crate::util::rng_for;
use crate::{acco, announce, articles, events, geo_docs, poi, tags, weather};

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoOptions {
    /// Size multiplier for the large entity types (HubActivityPoi, Accommodation and its
    /// rooms, Event, Article, EventShort, WebcamInfo, Announcement); 1 is the default size.
    /// Geography and vocabulary types do not grow with it. 0 generates only those.
    pub scale: u32,
    /// "Now" for every relative date: events, availability, weather, traffic situations
    /// and the LastChange history are placed around it.
    pub anchor: DateTime<Utc>,
}

/// Large entity types and their document count at scale 1 (rooms follow the accommodations).
const BIG: [(&str, u64); 7] = [
    ("HubActivityPoi", 7000),
    ("Accommodation", acco::BASE),
    ("Event", events::EVENT_BASE),
    ("Article", articles::ARTICLE_BASE),
    ("EventShort", events::EVENT_SHORT_BASE),
    ("WebcamInfo", articles::WEBCAM_BASE),
    ("Announcement", announce::BASE),
];

fn big(name: &str, scale: u32) -> u64 {
    BIG.iter()
        .find(|(n, _)| *n == name)
        .map_or(0, |(_, c)| c * u64::from(scale))
}

/// Calls `emit(entity_name, document)` for every document, in a deterministic order:
/// Source, Tag, Region, TourismAssociation, Municipality, District, Area, SkiRegion,
/// SkiArea, WeatherDistrict, WeatherForecast, WeatherRealtime, Accommodation,
/// AccommodationRoom, HubActivityPoi, Event, EventShort, Article, WebcamInfo, Announcement.
/// The same options always give byte-identical documents.
pub fn content_documents(opts: &DemoOptions, emit: &mut dyn FnMut(&'static str, Value)) {
    let now = opts
        .anchor
        .naive_utc()
        .with_nanosecond(0)
        .expect("zero nanoseconds is valid");
    let scale = opts.scale;
    let geo = Geo::build();
    tags::source_documents(&mut rng_for(1), now, emit);
    tags::tag_documents(&mut rng_for(2), now, emit);
    geo_docs::documents(&geo, &mut rng_for(3), now, emit);
    weather::documents(&geo, &mut rng_for(4), now, emit);
    acco::documents(
        &geo,
        &mut rng_for(10),
        now,
        big("Accommodation", scale),
        emit,
    );
    poi::documents(
        &geo,
        &mut rng_for(11),
        now,
        big("HubActivityPoi", scale),
        emit,
    );
    events::documents(&geo, &mut rng_for(12), now, big("Event", scale), emit);
    events::short_documents(&mut rng_for(13), now, big("EventShort", scale), emit);
    articles::documents(&geo, &mut rng_for(14), now, big("Article", scale), emit);
    articles::webcams(&geo, &mut rng_for(15), now, big("WebcamInfo", scale), emit);
    announce::documents(&mut rng_for(16), now, big("Announcement", scale), emit);
}

/// Expected number of documents for a scale (so a caller can size a progress bar).
/// Equals the number of `emit` calls [`content_documents`] makes for that scale.
pub fn content_document_count(scale: u32) -> u64 {
    let geo = Geo::build();
    let fixed = tags::source_count()
        + tags::TAGS.len() as u64
        + geo.counts().iter().map(|(_, n)| n).sum::<u64>()
        + weather::counts(&geo).iter().map(|(_, n)| n).sum::<u64>();
    let large: u64 = BIG.iter().map(|(_, n)| n * u64::from(scale)).sum();
    fixed + large + acco::room_total(big("Accommodation", scale))
}
