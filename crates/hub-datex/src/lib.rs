//! # hub-datex
//!
//! The traffic event feed of Hub: traffic-event `Announcement` documents rendered as
//! DATEX II v2 `SituationPublication` XML (namespace `http://datex2.eu/schema/2/2_0`,
//! root `d2LogicalModel`, `modelBaseVersion="2"`), one feed per configured provider, and
//! the routes that serve them:
//!
//! | route | response |
//! |---|---|
//! | `GET /datex/2/` | discovery, `{provider: {"situation-publication": absoluteUrl}}` |
//! | `GET /datex/2/{provider}/situation-publication.xml` | the provider's feed, `application/xml` |
//! | `GET /v1/SituationPublication/{provider}` | the same document (the spec's `/v1/{EntityType}/{id}`) |
//!
//! An unknown provider is a 404 `application/problem+json`. Feeds carry a weak `ETag`
//! and a `Last-Modified` and answer conditional requests with 304; rendered documents
//! are cached per provider until an announcement changes or time moves a situation in
//! or out of the feed.
//!
//! **Owns:** the category → DATEX record-type table ([`CATEGORIES`]), which
//! announcements are current (the reference's short-lived/long-running rules, "today" in
//! a configurable time zone), the XML writer (quick-xml, XSD element order, escaping,
//! values cut to the schema's 1024-character limit), the document cache and HTTP
//! validators, and the feed's configuration ([`DatexConfig`]).
//!
//! **Must not touch:** storage and authentication. Announcements come in through
//! [`AnnouncementSource`], which the server implements over its document store; the feed
//! is open data and reads no token. Compression is the server's global layer.
//!
//! Decisions (no coordinates, extended categories, time zone, cache) are written down in
//! the crate's `README.md`.

mod announcement;
mod category;
mod config;
mod current;
mod digest;
mod error;
mod feed;
mod routes;
mod text;
mod timezone;
mod xml;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;

pub use category::{Category, RecordType, CATEGORIES};
pub use config::{DatexConfig, ProviderConfig};
pub use error::DatexError;
pub use feed::Rendered;
pub use routes::FEED_TYPE;
pub use text::MAX_CHARS;
pub use xml::DATEX_NAMESPACE;

/// A boxed, sendable future (what [`AnnouncementSource`] methods return).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The wall clock of the routes; tests inject a fixed one.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// Where announcements come from: the server implements this over its document store.
pub trait AnnouncementSource: Send + Sync + 'static {
    /// All Announcement documents (any source, any tags: the feed picks its own).
    fn announcements(&self) -> BoxFuture<'_, Result<Vec<Value>, String>>;

    /// A cheap token that changes whenever any announcement is added, changed or removed
    /// (a store revision counter, or the newest `_Meta.LastUpdate` with the count).
    /// With it, a repeated request costs one call of this method and no read of the
    /// announcements. The default, `None`, means "unknown": each request then reads the
    /// announcements and compares their ids and `LastChange`/`_Meta.LastUpdate` with the
    /// cached document's, re-rendering only when they differ.
    fn revision(&self) -> BoxFuture<'_, Result<Option<String>, String>> {
        Box::pin(async { Ok(None) })
    }
}

/// Routes: `/datex/2/`, `/datex/2/{provider}/situation-publication.xml`,
/// `/v1/SituationPublication/{provider}`.
///
/// # Panics
/// When the configuration is invalid; call [`DatexConfig::validate`] first to report
/// that as an error, or use [`try_router`].
pub fn router(config: DatexConfig, source: Arc<dyn AnnouncementSource>) -> axum::Router {
    try_router(config, source).unwrap_or_else(|e| panic!("{e}"))
}

/// [`router`] without the panic.
pub fn try_router(
    config: DatexConfig,
    source: Arc<dyn AnnouncementSource>,
) -> Result<axum::Router, DatexError> {
    routes::router(config, source, Arc::new(Utc::now))
}

/// [`try_router`] with an injected clock (for tests and demonstrations of time passing).
pub fn router_with_clock(
    config: DatexConfig,
    source: Arc<dyn AnnouncementSource>,
    clock: Clock,
) -> Result<axum::Router, DatexError> {
    routes::router(config, source, clock)
}

/// Pure rendering, for tests and benchmarks: the provider's SituationPublication at
/// `now`, with "today" and all written times in the time zone `tz`.
pub fn render_situation_publication(
    provider: &ProviderConfig,
    announcements: &[Value],
    now: DateTime<Utc>,
    tz: &str,
) -> Result<Vec<u8>, DatexError> {
    render_feed(provider, announcements, now, tz).map(|r| r.body)
}

/// Like [`render_situation_publication`], with the validators the routes use (entity
/// tag, last modification, next time-driven change) and the number of situations.
pub fn render_feed(
    provider: &ProviderConfig,
    announcements: &[Value],
    now: DateTime<Utc>,
    tz: &str,
) -> Result<Rendered, DatexError> {
    let zone = timezone::Zone::parse(tz)?;
    feed::Feed::build(provider, announcements, now, zone).render()
}
