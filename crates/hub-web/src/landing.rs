//! `/`: a page for browsers, an index of the APIs for everything else.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use hub_store::timeseries::TypeList;
use serde_json::json;

use crate::WebState;

/// Absolute links of the JSON index (from the server's configured base URLs).
#[derive(Debug, Clone)]
pub struct IndexLinks {
    pub content: String,
    pub timeseries: String,
    pub datex: String,
    pub token: String,
    pub content_openapi: String,
    pub timeseries_openapi: String,
    pub docs: String,
    pub explorer: String,
}

/// True when the `Accept` header asks for HTML before JSON: browsers list `text/html`
/// first; API clients send `application/json`, `*/*` or nothing, and get JSON.
pub fn wants_html(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let mut html = None;
    let mut json = None;
    for (position, range) in accept.split(',').enumerate() {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        if refused {
            continue;
        }
        match media.as_str() {
            "text/html" | "application/xhtml+xml" if html.is_none() => html = Some(position),
            "application/json" if json.is_none() => json = Some(position),
            _ => {}
        }
        if position > 64 {
            break;
        }
    }
    match (html, json) {
        (Some(h), Some(j)) => h < j,
        (Some(_), None) => true,
        _ => false,
    }
}

pub(crate) async fn root(State(state): State<WebState>, headers: HeaderMap) -> Response {
    let mut response = if wants_html(&headers) {
        match landing_page(&state).await {
            Ok(page) => {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
            }
            Err(e) => {
                tracing::error!(error = %e, "the landing page could not read the store");
                hub_model::Problem::internal("the landing page could not be assembled")
                    .into_response()
            }
        }
    } else {
        json_index(&state.links).into_response()
    };
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

fn json_index(links: &IndexLinks) -> impl IntoResponse {
    let body = json!({
        "Name": "Hub",
        "Description": "Open tourism and mobility data: Content API, Time Series API, DATEX II traffic feed and the token service for closed data.",
        "Apis": [
            {"Id": "content", "Url": links.content, "OpenApi": links.content_openapi},
            {"Id": "timeseries", "Url": links.timeseries, "OpenApi": links.timeseries_openapi},
            {"Id": "datex", "Url": links.datex},
            {"Id": "token", "Url": links.token},
        ],
        "Docs": links.docs,
        "Explorer": links.explorer,
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
}

/// Escapes text for HTML element content and double-quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

async fn landing_page(state: &WebState) -> Result<String, hub_store::StoreError> {
    let datasets = hub_content::dataset_counts(&*state.content).await?;
    let station_types = state.timeseries.type_list(TypeList::StationTypes).await?;
    let mut dataset_rows = String::new();
    for (entity, count) in &datasets {
        dataset_rows.push_str(&format!(
            "<tr><td><a href=\"/explorer#/dataset/{route}\">{name}</a></td><td class=\"num\">{count}</td><td>{description}</td></tr>\n",
            route = escape(entity.route),
            name = escape(entity.name),
            description = escape(entity.description),
        ));
    }
    let mut station_items = String::new();
    for stype in &station_types {
        station_items.push_str(&format!(
            "<li><a href=\"/explorer#/stations/{t}\">{t}</a></li>",
            t = escape(stype)
        ));
    }
    if station_items.is_empty() {
        station_items.push_str("<li>none yet</li>");
    }
    let mut provider_items = String::new();
    for provider in &state.datex_providers {
        provider_items.push_str(&format!(
            "<li><a href=\"/explorer#/traffic/{p}\">{p}</a> (<a href=\"/datex/2/{p}/situation-publication.xml\">DATEX II XML</a>)</li>",
            p = escape(provider)
        ));
    }
    let token = escape(&state.links.token);
    Ok(format!(
        include_str!("../assets/landing.html"),
        dataset_rows = dataset_rows,
        station_items = station_items,
        provider_items = provider_items,
        token = token,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn browsers_get_html_and_api_clients_json() {
        let chromium =
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
        assert!(wants_html(&accept(chromium)));
        assert!(wants_html(&accept("text/html")));
        assert!(!wants_html(&HeaderMap::new()));
        assert!(!wants_html(&accept("*/*")));
        assert!(!wants_html(&accept("application/json")));
        assert!(!wants_html(&accept("application/json, text/html")));
        assert!(!wants_html(&accept("text/html;q=0, application/json")));
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
