//! HTTP routes, the rendered-document cache and conditional requests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use chrono::{DateTime, NaiveDateTime, Utc};
use http::header::{
    CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
};
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::{json, Map, Value};

use crate::digest::Digest;
use crate::feed::Feed;
use crate::timezone::Zone;
use crate::{AnnouncementSource, Clock, DatexConfig, DatexError, ProviderConfig};

/// The one feed type a provider publishes.
pub const FEED_TYPE: &str = "situation-publication";

struct Shared {
    config: DatexConfig,
    zone: Zone,
    source: Arc<dyn AnnouncementSource>,
    clock: Clock,
    discovery: Bytes,
    /// Rendered documents by lower-case provider name.
    cache: Mutex<HashMap<String, Arc<Entry>>>,
}

/// What a cached document was rendered from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum InputKey {
    /// The source's revision token.
    Revision(String),
    /// Id, `LastChange` and `_Meta.LastUpdate` of the provider's documents.
    Fingerprint(u64),
}

struct Entry {
    key: InputKey,
    valid_until: Option<DateTime<Utc>>,
    body: Bytes,
    etag: HeaderValue,
    /// Whole seconds, as HTTP dates carry them.
    last_modified: Option<DateTime<Utc>>,
}

impl Entry {
    fn fresh(&self, key: &InputKey, now: DateTime<Utc>) -> bool {
        self.key == *key && !matches!(self.valid_until, Some(until) if now >= until)
    }
}

pub(crate) fn router(
    config: DatexConfig,
    source: Arc<dyn AnnouncementSource>,
    clock: Clock,
) -> Result<Router, DatexError> {
    config.validate()?;
    let zone = Zone::parse(&config.time_zone)?;
    let base = config.base_url.trim().trim_end_matches('/');
    let discovery: Map<String, Value> = config
        .providers
        .iter()
        .map(|p| (p.name.clone(), json!({ FEED_TYPE: format!("{base}/datex/2/{}/situation-publication.xml", p.name) })))
        .collect();
    let discovery = Bytes::from(serde_json::to_vec(&discovery).expect("JSON of strings"));
    let shared = Arc::new(Shared {
        config,
        zone,
        source,
        clock,
        discovery,
        cache: Mutex::new(HashMap::new()),
    });
    Ok(Router::new()
        .route("/datex/2/", get(discovery_handler))
        .route("/datex/2", get(discovery_handler))
        .route(
            "/datex/2/{provider}/situation-publication.xml",
            get(feed_handler),
        )
        .route("/v1/SituationPublication/{provider}", get(feed_handler))
        .route("/v1/SituationPublication/{provider}/", get(feed_handler))
        .with_state(shared))
}

async fn discovery_handler(State(shared): State<Arc<Shared>>) -> Response {
    (
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        )],
        shared.discovery.clone(),
    )
        .into_response()
}

async fn feed_handler(
    State(shared): State<Arc<Shared>>,
    Path(provider): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(provider) = shared.config.provider(&provider) else {
        let known: Vec<&str> = shared
            .config
            .providers
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        let detail = format!(
            "There is no DATEX provider named {provider:?}. Known providers: {}.",
            known.join(", ")
        );
        return hub_model::Problem::not_found(detail).into_response();
    };
    match shared.entry(provider).await {
        Ok(entry) => respond(&entry, &headers),
        Err(error) => {
            tracing::error!(provider = %provider.name, %error, "DATEX feed could not be built");
            error.to_problem().into_response()
        }
    }
}

impl Shared {
    /// The provider's document: from the cache while its inputs are unchanged and no
    /// start, end or midnight has passed since it was rendered, else rendered anew.
    async fn entry(&self, provider: &ProviderConfig) -> Result<Arc<Entry>, DatexError> {
        let now = (self.clock)();
        let cache_key = provider.name.to_ascii_lowercase();
        let revision = self.source.revision().await.map_err(DatexError::Source)?;
        let cached = || {
            self.cache
                .lock()
                .expect("cache lock")
                .get(&cache_key)
                .cloned()
        };
        if let Some(revision) = &revision {
            let key = InputKey::Revision(revision.clone());
            if let Some(entry) = cached().filter(|e| e.fresh(&key, now)) {
                return Ok(entry);
            }
        }
        let docs = self
            .source
            .announcements()
            .await
            .map_err(DatexError::Source)?;
        let key = match revision {
            Some(revision) => InputKey::Revision(revision),
            None => InputKey::Fingerprint(fingerprint(&docs, &provider.source)),
        };
        if let Some(entry) = cached().filter(|e| e.fresh(&key, now)) {
            return Ok(entry);
        }
        let rendered = Feed::build(provider, &docs, now, self.zone).render()?;
        let entry = Arc::new(Entry {
            key,
            valid_until: rendered.valid_until,
            body: Bytes::from(rendered.body),
            etag: HeaderValue::from_str(&rendered.etag).expect("hex entity tag"),
            last_modified: rendered.last_modified.map(whole_seconds),
        });
        self.cache
            .lock()
            .expect("cache lock")
            .insert(cache_key, entry.clone());
        Ok(entry)
    }
}

/// Changes when a document of the source is added, removed or saved.
fn fingerprint(docs: &[Value], source: &str) -> u64 {
    let mut digest = Digest::new();
    for doc in docs.iter().filter(|d| {
        crate::announcement::source_of(d).is_some_and(|s| s.eq_ignore_ascii_case(source))
    }) {
        fn text(v: Option<&Value>) -> &[u8] {
            v.and_then(Value::as_str).unwrap_or("").as_bytes()
        }
        digest.update(text(doc.get("Id")));
        digest.update(text(doc.get("LastChange")));
        digest.update(text(doc.get("_Meta").and_then(|m| m.get("LastUpdate"))));
    }
    digest.finish()
}

fn whole_seconds(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(t.timestamp(), 0).unwrap_or(t)
}

fn http_date(t: DateTime<Utc>) -> HeaderValue {
    HeaderValue::from_str(&t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()).expect("ASCII date")
}

fn parse_http_date(value: &HeaderValue) -> Option<DateTime<Utc>> {
    let text = value.to_str().ok()?.trim();
    NaiveDateTime::parse_from_str(text, "%a, %d %b %Y %H:%M:%S GMT")
        .ok()
        .map(|t| t.and_utc())
        .or_else(|| {
            DateTime::parse_from_rfc2822(text)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        })
}

/// RFC 9110 §13.1.2: weak comparison against each listed tag, `*` matches any.
fn none_match(header: &HeaderValue, etag: &HeaderValue) -> bool {
    let opaque = |tag: &str| tag.trim().trim_start_matches("W/").to_string();
    let ours = opaque(etag.to_str().unwrap_or(""));
    header
        .to_str()
        .map(|list| {
            list.split(',')
                .any(|tag| tag.trim() == "*" || opaque(tag) == ours)
        })
        .unwrap_or(false)
}

fn respond(entry: &Entry, request: &HeaderMap) -> Response {
    // If-None-Match, when present, decides alone (RFC 9110 §13.2.2).
    let not_modified = match request.get(IF_NONE_MATCH) {
        Some(tags) => none_match(tags, &entry.etag),
        None => match (
            request.get(IF_MODIFIED_SINCE).and_then(parse_http_date),
            entry.last_modified,
        ) {
            (Some(since), Some(modified)) => modified <= since,
            _ => false,
        },
    };
    let mut response = if not_modified {
        Response::builder()
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty())
    } else {
        Response::builder()
            .header(CONTENT_TYPE, HeaderValue::from_static("application/xml"))
            .body(Body::from(entry.body.clone()))
    }
    .expect("valid response");
    let headers = response.headers_mut();
    headers.insert(ETAG, entry.etag.clone());
    if let Some(modified) = entry.last_modified {
        headers.insert(LAST_MODIFIED, http_date(modified));
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_round_trip_and_obsolete_forms_are_ignored() {
        let t = DateTime::parse_from_rfc3339("2024-01-02T08:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let header = http_date(t);
        assert_eq!(header, "Tue, 02 Jan 2024 08:30:00 GMT");
        assert_eq!(parse_http_date(&header), Some(t));
        assert_eq!(
            parse_http_date(&HeaderValue::from_static("yesterday")),
            None
        );
    }

    #[test]
    fn entity_tags_compare_weakly_and_in_lists() {
        let ours = HeaderValue::from_static("W/\"00ff\"");
        assert!(none_match(&HeaderValue::from_static("\"00ff\""), &ours));
        assert!(none_match(
            &HeaderValue::from_static("\"aa\", W/\"00ff\""),
            &ours
        ));
        assert!(none_match(&HeaderValue::from_static("*"), &ours));
        assert!(!none_match(&HeaderValue::from_static("W/\"00fe\""), &ours));
    }
}
