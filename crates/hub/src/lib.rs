//! # hub
//!
//! The `hub` binary's library half: configuration, router assembly (every API on one
//! port, with request ids, compression, CORS, tracing, load protection, rate limits,
//! problem bodies for the server's own errors and `/metrics`), demo loading and graceful
//! shutdown. API behaviour lives in the API crates; this crate only wires them.

pub mod cli_auth;
pub mod config;
pub mod demo;
pub mod hygiene;
pub mod load;
pub mod memory;
pub mod metrics;
pub mod rate_limit;
pub mod upkeep;

use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderName, Request};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use hub_store::{ContentRepo, Store};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{Any, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

pub use config::Config;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Serves the traffic feed's announcements from the document store.
struct StoreAnnouncements(Arc<dyn ContentRepo>);

impl hub_datex::AnnouncementSource for StoreAnnouncements {
    fn announcements(
        &self,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Vec<serde_json::Value>, String>> + Send + '_>,
    > {
        Box::pin(async move { self.0.all("Announcement").await.map_err(|e| e.to_string()) })
    }

    fn revision(
        &self,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Option<String>, String>> + Send + '_>,
    > {
        Box::pin(async move {
            self.0
                .revision("Announcement")
                .await
                .map(|r| Some(r.to_string()))
                .map_err(|e| e.to_string())
        })
    }
}

/// The document served at `/swagger/v1/swagger.json`: the Content API's, with the
/// token service's routes (both are described by their own crates).
pub fn content_openapi(realm: &str) -> String {
    let mut doc = hub_content::openapi::document();
    if let (Some(paths), Some(auth)) = (
        doc["paths"].as_object_mut(),
        hub_auth::openapi::paths(realm).as_object().cloned(),
    ) {
        paths.extend(auth);
    }
    doc["components"]["securitySchemes"]["basic"] = hub_auth::openapi::basic_scheme();
    serde_json::to_string(&doc).expect("the OpenAPI document serializes")
}

/// What the web pages read: the repositories behind the landing page's numbers and the
/// absolute links of the JSON index at `/`.
fn web_state(store: &Store, config: &Config) -> hub_web::WebState {
    let content = config.content_base_url();
    let mobility = config.mobility_base_url();
    hub_web::WebState {
        content: store.content(),
        timeseries: store.timeseries(),
        datex_providers: config
            .datex
            .providers
            .iter()
            .map(|p| p.name.clone())
            .collect(),
        links: Arc::new(hub_web::IndexLinks {
            content: format!("{content}/v1"),
            timeseries: format!("{mobility}/v2"),
            datex: format!("{}/datex/2/", config.datex_base_url()),
            token: format!(
                "{}/auth/realms/{}/protocol/openid-connect/token",
                config.auth_url(),
                config.realm
            ),
            content_openapi: format!("{content}/swagger/v1/swagger.json"),
            timeseries_openapi: format!("{mobility}/v2/apispec"),
            docs: format!("{content}/docs/"),
            explorer: format!("{content}/explorer"),
        }),
    }
}

/// The whole HTTP surface of Hub over one store.
pub fn router(store: Store, config: &Config) -> Router {
    router_with_auth(
        store.clone(),
        config,
        hub_auth::AuthService::new(store.auth(), config.auth_config()),
    )
}

/// [`router`] with a given token service (tests pass one with a manual clock).
pub fn router_with_auth(store: Store, config: &Config, auth: hub_auth::AuthService) -> Router {
    let cache = Arc::new(hub_content::response_cache::ResponseCache::new(
        hub_content::response_cache::CacheSettings {
            budget_bytes: usize::try_from(config.response_cache_bytes).unwrap_or(usize::MAX),
            max_age_secs: config.response_max_age,
        },
    ));
    let content = hub_content::router(hub_content::ContentState {
        content: store.content(),
        base_url: config.content_base_url().into(),
        naming: config.naming.into(),
        cache: cache.clone(),
        count_limit: config.count_limit(),
    });
    let utility = hub_content::utility::router(hub_content::utility::UtilityState {
        content: store.content(),
        base_url: config.content_base_url(),
        geoconverter: config.geoconverter.clone(),
        naming: config.naming.into(),
    });
    let ogc_content = hub_content::ContentState {
        content: store.content(),
        base_url: config.content_base_url().into(),
        naming: config.naming.into(),
        cache: cache.clone(),
        count_limit: config.count_limit(),
    };
    let timeseries_config = hub_timeseries::TimeseriesConfig {
        base_url: format!("{}/v2", config.mobility_base_url()),
        ..config.timeseries.clone()
    };
    let timeseries_state =
        hub_timeseries::TimeseriesState::new(store.timeseries(), timeseries_config);
    // The OGC station collections read through the same state (same closed-data rules).
    let ogc = hub_ogc::router(ogc_content, timeseries_state.clone())
        .layer(axum::middleware::from_fn(hub_web::ogc_html));
    let timeseries = hub_timeseries::router(timeseries_state);
    let datex_config = hub_datex::DatexConfig {
        base_url: config.datex_base_url(),
        ..config.datex.clone()
    };
    let datex = hub_datex::router(datex_config, Arc::new(StoreAnnouncements(store.content())));
    let metrics = metrics::Metrics::default();
    let load_limit = load::LoadLimit::new(config.max_in_flight, config.max_queued, metrics.clone());
    let rate_limiter =
        rate_limit::RateLimiter::new(config.rate_limit, config.rate_limit_burst, metrics.clone());
    let web = hub_web::router(web_state(&store, config));
    let openapi = content_openapi(&config.realm);

    let router = Router::new()
        .route("/health", get(|| async { ([(header::CONTENT_TYPE, "application/json")], r#"{"status":"ok"}"#) }))
        .route("/swagger/v1/swagger.json", get(move || async move { ([(header::CONTENT_TYPE, "application/json")], openapi.clone()) }))
        .merge(
            // Every API behind bearer authentication (no token = anonymous); the token
            // service itself is outside it (clients may authenticate with Basic there).
            Router::new()
                .merge(datex)
                .merge(content)
                .merge(utility)
                .merge(timeseries)
                .merge(ogc)
                .layer(axum::middleware::from_fn_with_state(auth.clone(), hub_auth::authenticate)),
        )
        .merge(hub_auth::router(auth))
        // The landing page, the explorer and the API docs (they call the APIs above from
        // the browser, like any other client).
        .merge(web)
        .route(
            "/metrics",
            get(metrics::serve_metrics).with_state(metrics::MetricsSource {
                metrics: metrics.clone(),
                store: store.clone(),
                response_cache: cache,
            }),
        )
        // Labels requests with their route template for `/metrics` (route layers run
        // only for matched routes).
        .route_layer(axum::middleware::from_fn(metrics::tag_route))
        .fallback(|| async {
            hub_model::Problem::not_found(
                "no such resource; the APIs live under /v1 (content), /v2 (time series), /datex/2 (traffic feed), /ogc (OGC API – Features)",
            )
            .into_response()
        })
        .layer(CatchPanicLayer::custom(|_| {
            hub_model::Problem::internal("the request failed unexpectedly; the failure has been logged").into_response()
        }))
        // Inside compression: rewrites plain-text error bodies before they are encoded.
        .layer(axum::middleware::from_fn(hygiene::hygiene))
        .layer(CompressionLayer::new())
        .layer(CorsLayer::new().allow_origin(Any).allow_methods(Any).allow_headers(Any).expose_headers(Any).max_age(Duration::from_secs(86400)));
    // Rate limits are off by default: then the layer is not there at all (every layer
    // costs each request a boxed future).
    let router = if rate_limiter.enabled() {
        router.layer(axum::middleware::from_fn_with_state(
            rate_limiter,
            rate_limit::limit_rate,
        ))
    } else {
        router
    };
    router
        .layer(axum::middleware::from_fn_with_state(load_limit, load::limit_load))
        .layer(axum::middleware::from_fn_with_state(metrics, metrics::record))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
            let id = req.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
            tracing::info_span!("request", method = %req.method(), uri = %req.uri(), request_id = %id)
        }))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
}
