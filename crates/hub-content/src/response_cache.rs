//! The response cache and conditional requests of `/v1/{EntityType}[/{id}]` (and the
//! OGC items, which read the same documents): a layer that answers a repeated request
//! from memory while the store's per-entity write revisions say nothing changed, and
//! gives every such answer a strong `ETag` (so `If-None-Match` gets a 304) and a
//! `Cache-Control` a CDN can use.
//!
//! Owns: the cache key, the byte budget and its eviction, the validity check, the
//! conditional-request headers. Must not: decide what a caller may see (the key holds
//! the one input closed-data reduction decides on, [`closed_view`]), or read documents.
//!
//! A handler opts in with [`cacheable`] (its answer is a function of the request, the
//! caller's access level and the documents of the request's entity), names every other
//! entity it reads with [`depends_on`] *before* reading it, and opts out with
//! [`uncacheable`] when its answer depends on the clock or on chance. The revisions are
//! read before the documents, so a write racing with the request leaves an entry that
//! is already out of date (recomputed next time), never one that looks current.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hub_model::EntityType;
use hub_store::budget_lru::BudgetLru;
use hub_store::ContentRepo;

use crate::params::RawQuery;

/// Largest body kept (a page of 1,000 documents is not worth the memory of many small ones).
pub const MAX_ENTRY_BYTES: usize = 1024 * 1024;
/// What an entry costs beyond its body and key (headers, bookkeeping), for the budget.
const ENTRY_OVERHEAD: usize = 512;

/// The cache's settings (from the server's configuration).
#[derive(Debug, Clone, Copy)]
pub struct CacheSettings {
    /// Most bytes of cached answers held; 0 turns the cache off (ETags and 304s stay).
    pub budget_bytes: usize,
    /// `max-age` of `Cache-Control: public` on open answers, in seconds.
    pub max_age_secs: u32,
}

/// One cached answer's identity: the request as sent, the representation negotiated
/// and whether closed parts are visible to the caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    /// Path and query exactly as sent: the answer's paging and `self` links echo the
    /// caller's own parameter order and spelling, so reordering would change bytes.
    target: String,
    /// The representation: the negotiated format on `/v1` (`Accept` values that pick
    /// the same format share), the `Accept` header as sent on `/ogc`.
    representation: String,
    closed_view: bool,
}

/// One kept answer (shared, so a hit copies a pointer, not the headers).
struct Cached {
    body: Bytes,
    headers: HeaderMap,
    etag: HeaderValue,
    /// The revisions of every entity the answer was computed from, read before it.
    revisions: Vec<(&'static str, i64)>,
}

/// The cached answers of one server (shared by the Content and OGC routes).
pub struct ResponseCache {
    settings: CacheSettings,
    lru: Mutex<BudgetLru<Key, Arc<Cached>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// What `/metrics` reports of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    pub bytes: usize,
    pub entries: usize,
    pub hits: u64,
    pub misses: u64,
}

impl ResponseCache {
    pub fn new(settings: CacheSettings) -> Self {
        ResponseCache {
            settings,
            lru: Mutex::new(BudgetLru::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// No cache, headers only (tests and tools that build a state by hand).
    pub fn disabled() -> Self {
        ResponseCache::new(CacheSettings {
            budget_bytes: 0,
            max_age_secs: 0,
        })
    }

    fn enabled(&self) -> bool {
        self.settings.budget_bytes > 0
    }

    /// Bytes held now (bodies, keys and overhead), answers held, hits and misses so far.
    pub fn stats(&self) -> CacheStats {
        let lru = self.lru.lock().unwrap_or_else(|e| e.into_inner());
        CacheStats {
            bytes: lru.used(),
            entries: lru.len(),
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    fn lookup(&self, key: &Key) -> Option<Arc<Cached>> {
        let mut lru = self.lru.lock().unwrap_or_else(|e| e.into_inner());
        lru.get(key).cloned()
    }

    /// Keeps `answer` at `cost` (its body, key and bookkeeping), unless its body is too
    /// large to be worth the room.
    fn store(&self, key: Key, answer: Arc<Cached>, cost: usize) {
        let limit = MAX_ENTRY_BYTES.min(self.settings.budget_bytes / 4);
        let mut lru = self.lru.lock().unwrap_or_else(|e| e.into_inner());
        if answer.body.len() > limit {
            lru.remove(&key);
            return;
        }
        lru.insert(key, answer, cost, self.settings.budget_bytes);
    }

    fn forget(&self, key: &Key) {
        self.lru
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }
}

/// What the handler of one request said about its answer.
#[derive(Default)]
struct Reads {
    cacheable: bool,
    uncacheable: bool,
    revisions: Vec<(&'static str, i64)>,
}

tokio::task_local! {
    static READS: RefCell<Reads>;
}

/// The handler's answer is a function of the request, the caller's access level and
/// the documents of the entities it recorded.
pub fn cacheable() {
    let _ = READS.try_with(|r| r.borrow_mut().cacheable = true);
}

/// The handler's answer depends on the clock or on chance: never cached.
pub fn uncacheable() {
    let _ = READS.try_with(|r| r.borrow_mut().uncacheable = true);
}

/// The handler is about to read documents of `entity` (besides the request's own):
/// their revision, read now, becomes part of the answer's validity. Costs nothing
/// outside the cache layer.
pub async fn depends_on(
    repo: &dyn ContentRepo,
    entity: &'static str,
) -> Result<(), hub_store::StoreError> {
    // Nothing to record outside the layer, with the cache off (no revisions at all) or
    // for an entity already recorded.
    let needless = READS
        .try_with(|r| {
            let r = r.borrow();
            r.revisions.is_empty() || r.revisions.iter().any(|(e, _)| *e == entity)
        })
        .unwrap_or(true);
    if needless {
        return Ok(());
    }
    let revision = repo.revision(entity).await?;
    let _ = READS.try_with(|r| r.borrow_mut().revisions.push((entity, revision)));
    Ok(())
}

/// The one input closed-data reduction decides on: whether this caller sees the
/// closed parts of `entity` (false for every caller of an entity without closed parts).
pub fn closed_view(principal: Option<&hub_auth::Principal>, entity: &EntityType) -> bool {
    crate::closed::has_closed_parts(entity.name)
        && hub_auth::policy::can_read_closed(principal, entity.name)
}

/// What the layer needs: the cache and the repository whose revisions it checks.
#[derive(Clone)]
pub struct CacheLayer {
    pub cache: Arc<ResponseCache>,
    pub content: Arc<dyn ContentRepo>,
}

/// The entity a cached path reads: `/v1/{EntityType}[/{id}]` or
/// `/ogc/collections/{collection}/items[/{feature}]`.
fn entity_of(path: &str) -> Option<&'static EntityType> {
    if let Some(rest) = path.strip_prefix("/v1/") {
        return EntityType::resolve_path(rest).map(|(e, _)| e);
    }
    let rest = path.strip_prefix("/ogc/collections/")?;
    let (collection, items) = rest.split_once('/')?;
    if items != "items" && !items.starts_with("items/") {
        return None;
    }
    hub_model::ENTITY_TYPES
        .iter()
        .find(|e| e.meta_type.eq_ignore_ascii_case(collection))
}

/// The layer: answers from the cache when every recorded revision is current,
/// otherwise runs the handler and keeps a cacheable answer; adds `ETag`,
/// `Cache-Control` and `Vary`, and turns a matching `If-None-Match` into a 304.
pub async fn serve(State(layer): State<CacheLayer>, request: Request, next: Next) -> Response {
    if request.method() != Method::GET {
        return next.run(request).await;
    }
    let Some(entity) = entity_of(request.uri().path()) else {
        return next.run(request).await;
    };
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    let representation = if request.uri().path().starts_with("/v1/") {
        match crate::formats::negotiate(&RawQuery::parse(request.uri().query()), accept) {
            Ok(format) => format!("{format:?}"),
            Err(_) => return next.run(request).await,
        }
    } else {
        accept.unwrap_or_default().to_string()
    };
    let principal = request.extensions().get::<hub_auth::Principal>();
    let key = Key {
        target: request.uri().path_and_query().map_or_else(
            || request.uri().path().to_string(),
            |p| p.as_str().to_string(),
        ),
        representation,
        closed_view: closed_view(principal, entity),
    };
    let if_none_match = request.headers().get(header::IF_NONE_MATCH).cloned();
    let headers = AnswerHeaders {
        closed_view: key.closed_view,
        has_closed_parts: crate::closed::has_closed_parts(entity.name),
        max_age: layer.cache.settings.max_age_secs,
    };

    let mut revisions = Vec::new();
    if layer.cache.enabled() {
        // One primary-key read of a tiny table; the answer's own query costs far more.
        let Ok(current) = layer.content.revision(entity.name).await else {
            return next.run(request).await;
        };
        if let Some(kept) = layer.cache.lookup(&key) {
            if still_current(&*layer.content, entity.name, current, &kept.revisions).await {
                layer.cache.hits.fetch_add(1, Ordering::Relaxed);
                return headers.answer(
                    StatusCode::OK,
                    kept.headers.clone(),
                    kept.body.clone(),
                    kept.etag.clone(),
                    true,
                    if_none_match.as_ref(),
                );
            }
            layer.cache.forget(&key);
        }
        revisions.push((entity.name, current));
    }

    let reads = RefCell::new(Reads {
        revisions,
        ..Reads::default()
    });
    let (response, reads) = READS
        .scope(reads, async {
            let response = next.run(request).await;
            (
                response,
                READS.with(|r| std::mem::take(&mut *r.borrow_mut())),
            )
        })
        .await;
    if response.status() != StatusCode::OK
        || response
            .extensions()
            .get::<crate::whole::StreamedList>()
            .is_some()
    {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return hub_model::Problem::internal("the answer could not be read").into_response();
    };
    let etag = etag_of(&body);
    let cacheable = reads.cacheable && !reads.uncacheable;
    let mut stored_headers = parts.headers;
    stored_headers.remove(header::CONTENT_LENGTH);
    if cacheable && layer.cache.enabled() {
        layer.cache.misses.fetch_add(1, Ordering::Relaxed);
        let cost = body.len() + key.target.len() + ENTRY_OVERHEAD;
        let answer = Arc::new(Cached {
            body: body.clone(),
            headers: stored_headers.clone(),
            etag: etag.clone(),
            revisions: reads.revisions,
        });
        layer.cache.store(key, answer, cost);
    }
    let mut response = headers.answer(
        parts.status,
        stored_headers,
        body,
        etag,
        cacheable,
        if_none_match.as_ref(),
    );
    response.extensions_mut().extend(parts.extensions);
    response
}

/// True when every entity an entry was computed from is at the revision it recorded.
async fn still_current(
    repo: &dyn ContentRepo,
    entity: &'static str,
    current: i64,
    recorded: &[(&'static str, i64)],
) -> bool {
    for (name, revision) in recorded {
        let now = if *name == entity {
            current
        } else {
            match repo.revision(name).await {
                Ok(now) => now,
                Err(_) => return false,
            }
        };
        if now != *revision {
            return false;
        }
    }
    true
}

/// A strong validator of the exact bytes (the first 128 bits of their BLAKE3 hash).
/// BLAKE3 rather than SHA-256: with the cache off every answer is hashed, and on a
/// 500 KB page SHA-256 was 17 % of Hub's CPU; BLAKE3 hashes 50 KB and more about four
/// times faster on the same core (and 5 KB about as fast).
fn etag_of(body: &[u8]) -> HeaderValue {
    // 32 hex digits = the first 128 bits, written without an allocation per byte.
    let hex = blake3::hash(body).to_hex();
    HeaderValue::from_str(&format!("\"{}\"", &hex[..32])).expect("hex is a valid header value")
}

/// True when `If-None-Match` names this validator (weak comparison, as RFC 9110 says
/// for this header) or is `*`.
fn matches(if_none_match: &HeaderValue, etag: &HeaderValue) -> bool {
    let Ok(list) = if_none_match.to_str() else {
        return false;
    };
    let etag = etag.to_str().unwrap_or_default();
    list.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
    })
}

/// The caching headers of one answer.
struct AnswerHeaders {
    closed_view: bool,
    has_closed_parts: bool,
    max_age: u32,
}

impl AnswerHeaders {
    fn answer(
        &self,
        status: StatusCode,
        mut headers: HeaderMap,
        body: Bytes,
        etag: HeaderValue,
        cacheable: bool,
        if_none_match: Option<&HeaderValue>,
    ) -> Response {
        let cache_control = if self.closed_view {
            // The token changed what is visible: only the caller's own cache may keep it.
            "private, no-cache".to_string()
        } else if cacheable {
            format!("public, max-age={}", self.max_age)
        } else {
            "no-cache".to_string()
        };
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_str(&cache_control).expect("ASCII"),
        );
        if self.has_closed_parts {
            headers.append(header::VARY, HeaderValue::from_static("authorization"));
        }
        headers.insert(header::ETAG, etag.clone());
        if if_none_match.is_some_and(|v| matches(v, &etag)) {
            let mut not_modified = Response::new(Body::empty());
            *not_modified.status_mut() = StatusCode::NOT_MODIFIED;
            // A 304 carries the validators and caching headers of the 200 it stands for.
            for name in [header::ETAG, header::CACHE_CONTROL] {
                if let Some(v) = headers.get(&name) {
                    not_modified.headers_mut().insert(name, v.clone());
                }
            }
            for v in headers.get_all(header::VARY) {
                not_modified.headers_mut().append(header::VARY, v.clone());
            }
            return not_modified;
        }
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(len: usize) -> Arc<Cached> {
        Arc::new(Cached {
            body: Bytes::from(vec![b'x'; len]),
            headers: HeaderMap::new(),
            etag: etag_of(b"x"),
            revisions: vec![],
        })
    }

    fn key(target: &str) -> Key {
        Key {
            target: target.into(),
            representation: "Json".into(),
            closed_view: false,
        }
    }

    #[test]
    fn the_least_recently_used_answer_goes_first_and_the_budget_holds() {
        let mut lru = BudgetLru::default();
        lru.insert(key("a"), answer(40), 40, 100);
        lru.insert(key("b"), answer(40), 40, 100);
        assert!(lru.get(&key("a")).is_some());
        lru.insert(key("c"), answer(40), 40, 100);
        assert!(lru.contains(&key("a")));
        assert!(!lru.contains(&key("b")));
        assert!(lru.contains(&key("c")));
        assert_eq!(lru.used(), 80);
        lru.insert(key("a"), answer(10), 10, 100);
        assert_eq!(lru.used(), 50);
    }

    #[test]
    fn if_none_match_compares_weakly_and_accepts_lists() {
        let etag = etag_of(b"body");
        let tag = etag.to_str().unwrap().to_string();
        let header = |s: &str| HeaderValue::from_str(s).unwrap();
        assert!(matches(&header(&tag), &etag));
        assert!(matches(&header(&format!("\"x\", W/{tag}")), &etag));
        assert!(matches(&header("*"), &etag));
        assert!(!matches(&header("\"other\""), &etag));
        assert_ne!(etag_of(b"body"), etag_of(b"body2"));
    }

    /// The validator is the first 128 bits of BLAKE3, the same in every process: the
    /// published BLAKE3 of "abc" starts 6437b3ac38465133ffb63b75273a8db5.
    #[test]
    fn the_etag_is_the_first_128_bits_of_blake3() {
        assert_eq!(etag_of(b"abc"), "\"6437b3ac38465133ffb63b75273a8db5\"");
    }
}
