//! # hub-demo
//!
//! Deterministic, realistic demo content for Hub: South-Tyrol-like tourism documents
//! (accommodations with rooms and availability, activities and points of interest,
//! events, articles, webcams, weather) together with the geography and vocabulary they
//! refer to (regions, tourism associations, municipalities, districts, areas, ski areas,
//! tags, sources) and road traffic situations (`Announcement`) for the DATEX II feed.
//!
//! ## What it owns
//!
//! * [`content_documents`] calls `emit(entity_name, document)` once per document. Entity
//!   names are the canonical names the store uses (`Accommodation`, `AccommodationRoom`,
//!   `HubActivityPoi`, `Event`, `EventShort`, `Article`, `WebcamInfo`, `WeatherDistrict`,
//!   `WeatherForecast`, `WeatherRealtime`, `Region`, `Municipality`, `District`, `Area`,
//!   `SkiArea`, `SkiRegion`, `TourismAssociation`, `Tag`, `Source`, `Announcement`).
//! * [`content_document_count`] says beforehand how many documents a scale produces.
//! * Documents follow the Open Data Hub JSON shapes (key order included): `Id`, `_Meta`,
//!   `Shortname`, `Active`, `Source`, `LastChange`, `FirstImport`, `HasLanguage`, `Detail`,
//!   tagging (`Tags`, `TagIds`, `HubTags`, `SrcTags`), `GpsInfo`, `Mapping`, `AreaIds`,
//!   `LicenseInfo`, `ContactInfos`, `ImageGallery`, then the entity's own fields.
//!   Announcements keep the field order of the DATEX input items.
//! * Tag ids are real Open Data Hub tag ids (see `fixtures/content/tags.json`), with
//!   `odhactivitypoi` spelled `hubactivitypoi` in `ValidForEntity`.
//!
//! ## Determinism
//!
//! Every entity type draws from its own ChaCha8 stream seeded from one constant, and ids
//! of the geography are derived from names. The same [`DemoOptions`] give byte-identical
//! JSON; a larger scale extends each large type (the first documents stay the same).
//! All dates are relative to [`DemoOptions::anchor`], so "current", "upcoming" and
//! "expired" stay meaningful whatever day the data is generated.
//!
//! ## What it must not touch
//!
//! No I/O of any kind (files, network, environment, clock): the caller passes the anchor
//! time and receives documents through the callback. No store access: loading documents
//! into SQLite or PostgreSQL, users, clients and time series belong to other crates.
//! Links in the data (web sites, e-mail, images, webcams) use `example.com` hosts.

mod acco;
mod announce;
mod articles;
mod content;
mod events;
mod geo;
mod geo_docs;
#[rustfmt::skip]
mod places;
mod poi;
mod poi_kinds;
mod shapes;
mod tags;
mod util;
mod weather;

pub use content::{content_document_count, content_documents, DemoOptions};
pub use shapes::{shape_document_count, shape_documents};
