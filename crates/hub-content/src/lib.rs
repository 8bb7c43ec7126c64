//! # hub-content
//!
//! The Content API (`/v1/…`): one URL pattern for every tourism entity type of the
//! `hub-model` registry, the list envelope with paging and stable ordering, field
//! selection, language projection, full-text search on titles, and RFC 7807 problem
//! bodies for every client error. Also its OpenAPI document.
//!
//! Owns: parsing and validating query parameters into `hub-query` ASTs, shaping stored
//! documents into responses. Must not: touch SQL or connections (that is `hub-store`),
//! or decide who may read what beyond asking the caller's roles (authentication is a
//! layer of its own).

pub mod closed;
pub mod closed_query;
mod compact_json;
mod csv;
mod csv_stream;
pub mod deprecated;
mod empty_text;
pub mod entity_filters;
pub mod error;
mod event_filters;
pub mod filter_endpoint;
pub mod formats;
pub mod geo_params;
pub mod geojson;
mod json_text;
mod jsonld;
mod language_text;
pub mod list_query;
pub mod map_points;
pub mod odh_parameters;
pub mod openapi;
pub mod openapi_contract;
pub mod params;
mod pruned_parse;
#[cfg(test)]
mod random_json;
pub mod response_cache;
mod routes;
pub mod shape;
mod tags;
pub mod utility;
pub mod whole;
pub mod writes;

pub use error::ContentError;
pub use routes::{dataset_counts, router};

use std::sync::Arc;

use hub_store::ContentRepo;

/// What the Content API handlers share.
#[derive(Clone)]
pub struct ContentState {
    /// The document store's content repository (the only part of the store this API uses).
    pub content: Arc<dyn ContentRepo>,
    /// Absolute base of links in responses (`http://127.0.0.1:8080`), without trailing slash.
    pub base_url: Arc<str>,
    /// The deployment's spelling of documents (`--naming`); ODH-spelled requests get
    /// the ODH spelling regardless ([`hub_model::Naming::for_request`]).
    pub naming: hub_model::Naming,
    /// The answers kept for repeated requests (shared with the OGC items).
    pub cache: Arc<response_cache::ResponseCache>,
    /// List totals are exact up to this many matches, estimated and marked above
    /// (`--exact-count-limit`; `None`: always exact).
    pub count_limit: Option<u64>,
}
