//! # hub-geo
//!
//! Geometry for the Hub APIs, pure and synchronous: a WKT reader and writer whose
//! errors carry 1-based character positions ([`wkt`]), coordinate transforms between
//! the reference systems clients use ([`srid`]: EPSG 4326, 3857, 32632, 25832, through
//! the pure-Rust `proj4rs`), GeoJSON geometry in and out ([`geojson`]), the exact
//! predicates the store applies after its bounding-box prefilter ([`relate`]), and
//! KML/GPX to GeoJSON conversion ([`convert`]).
//!
//! Owns: the meaning of coordinates. Must not: do I/O, know HTTP or SQL. Geometry is
//! `geo_types::Geometry<f64>` with x = longitude (or easting), y = latitude (or northing).

pub mod convert;
pub mod geojson;
pub mod relate;
pub mod srid;
pub mod wkt;

pub use geo;
pub use geo::{Geometry, Rect};
pub use srid::Srid;
