//! `/v1/GeoConverter/KmlToGeoJson` and `/v1/GeoConverter/GpxToGeoJson`: a KML or GPX
//! file, fetched from `url=` (GET) or uploaded (POST, as the raw body or as the first
//! file of a `multipart/form-data` body), converted to a GeoJSON geometry
//! (`application/geo+json`).
//!
//! Fetching a client-chosen URL is a server-side request: the host is resolved here and
//! refused when any of its addresses is loopback, private, link-local or otherwise not
//! public (unless the configuration allows it); the connection goes to exactly the
//! addresses checked; redirects are followed by hand (at most three), each checked the
//! same way; the download has a size limit and a timeout.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, RawQuery as AxumRawQuery, Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::UtilityState;
use crate::error::ContentError;
use crate::params::RawQuery;

/// Limits of the converter. Config file section `[geoconverter]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GeoConverterConfig {
    /// Largest file accepted, uploaded or fetched, in bytes. Default 10 MiB.
    pub max_bytes: usize,
    /// Time allowed for fetching a `url=`, in seconds. Default 20.
    pub timeout_secs: u64,
    /// Fetch from loopback and private addresses too (tests, closed networks). Default false.
    pub allow_private_addresses: bool,
}

impl Default for GeoConverterConfig {
    fn default() -> Self {
        GeoConverterConfig {
            max_bytes: 10 * 1024 * 1024,
            timeout_secs: 20,
            allow_private_addresses: false,
        }
    }
}

#[derive(Clone, Copy)]
enum Format {
    Kml,
    Gpx,
}

impl Format {
    fn convert(self, text: &str) -> Result<serde_json::Value, hub_geo::convert::ConvertError> {
        match self {
            Format::Kml => hub_geo::convert::kml_to_geojson(text),
            Format::Gpx => hub_geo::convert::gpx_to_geojson(text),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Kml => "KML",
            Format::Gpx => "GPX",
        }
    }
}

fn upstream(status: u16, detail: impl Into<String>) -> ContentError {
    let (kind, title) = match status {
        404 => ("not-found", "Not Found"),
        413 => ("too-large", "Payload Too Large"),
        504 => ("upstream-timeout", "Gateway Timeout"),
        _ => ("upstream-failed", "Bad Gateway"),
    };
    ContentError::Upstream {
        status,
        kind,
        title,
        detail: detail.into(),
    }
}

fn invalid(parameter: &str, detail: impl Into<String>) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.into(),
        detail: detail.into(),
    }
}

fn respond(format: Format, bytes: &[u8], parameter: &str) -> Result<Response, ContentError> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        invalid(
            parameter,
            format!("the {} file is not UTF-8 text", format.name()),
        )
    })?;
    let geometry = format.convert(text).map_err(|e| {
        invalid(
            parameter,
            format!("the {} file cannot be converted: {e}", format.name()),
        )
    })?;
    Ok((
        [(header::CONTENT_TYPE, "application/geo+json")],
        geometry.to_string(),
    )
        .into_response())
}

pub(crate) async fn kml_from_url(
    State(state): State<UtilityState>,
    AxumRawQuery(q): AxumRawQuery,
) -> Result<Response, ContentError> {
    from_url(state, q, Format::Kml).await
}

pub(crate) async fn gpx_from_url(
    State(state): State<UtilityState>,
    AxumRawQuery(q): AxumRawQuery,
) -> Result<Response, ContentError> {
    from_url(state, q, Format::Gpx).await
}

pub(crate) async fn kml_from_body(
    State(state): State<UtilityState>,
    request: Request,
) -> Result<Response, ContentError> {
    from_body(state, request, Format::Kml).await
}

pub(crate) async fn gpx_from_body(
    State(state): State<UtilityState>,
    request: Request,
) -> Result<Response, ContentError> {
    from_body(state, request, Format::Gpx).await
}

async fn from_url(
    state: UtilityState,
    query: Option<String>,
    format: Format,
) -> Result<Response, ContentError> {
    let raw = RawQuery::parse(query.as_deref());
    let url = raw.get("url").ok_or_else(|| {
        invalid(
            "url",
            format!(
                "give the address of a {} file as url=, or POST the file",
                format.name()
            ),
        )
    })?;
    let bytes = fetch(&state.geoconverter, url).await?;
    respond(format, &bytes, "url")
}

async fn from_body(
    state: UtilityState,
    request: Request,
    format: Format,
) -> Result<Response, ContentError> {
    let limit = state.geoconverter.max_bytes;
    let too_large = || {
        upstream(
            413,
            format!("the file is larger than the limit of {limit} bytes"),
        )
    };
    let is_multipart = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/form-data"));
    let bytes: Vec<u8> = if is_multipart {
        let mut multipart = Multipart::from_request(request, &())
            .await
            .map_err(|e| invalid("file", format!("the multipart body cannot be read: {e}")))?;
        // The first field with a file name; else the first field.
        let mut found = None;
        while let Some(field) = multipart
            .next_field()
            .await
            .map_err(|e| invalid("file", format!("the multipart body cannot be read: {e}")))?
        {
            let is_file = field.file_name().is_some();
            let data = field.bytes().await.map_err(|_| too_large())?;
            if is_file {
                found = Some(data);
                break;
            }
            found.get_or_insert(data);
        }
        found
            .ok_or_else(|| invalid("file", "the multipart body has no file"))?
            .to_vec()
    } else {
        let body = Bytes::from_request(request, &())
            .await
            .map_err(|_| too_large())?;
        body.to_vec()
    };
    if bytes.len() > limit {
        return Err(too_large());
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(invalid(
            "file",
            format!(
                "the request has no {} file; POST it as the body or as a multipart file",
                format.name()
            ),
        ));
    }
    respond(format, &bytes, "file")
}

/// True for addresses a server-side fetch must not reach by default.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1])) // carrier-grade NAT
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // benchmarking
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_ipv4(v6) {
                return is_private(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link local
                || (s[0] & 0xffc0) == 0xfec0 // site local (deprecated, still routed by some stacks)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard only
                || (s[0] == 0x0064 && s[1] == 0xff9b && s[2] == 0x0001) // local-use NAT64
                || s[..6] == [0, 0, 0, 0, 0, 0] // IPv4-compatible (deprecated): no public use
        }
    }
}

/// The IPv4 address an IPv6 address carries and reaches, where one does: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), the well-known NAT64 prefix
/// (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`) and Teredo (the client's address,
/// stored inverted). A fetch to any of them may end at the embedded IPv4 address, so
/// that address decides.
fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    let s = v6.segments();
    let tail = |hi: u16, lo: u16| {
        std::net::Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)
    };
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    match s {
        [0, 0, 0, 0, 0, 0, hi, lo] if (hi, lo) > (0, 1) => Some(tail(hi, lo)),
        [0x0064, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(tail(hi, lo)),
        [0x2002, hi, lo, ..] => Some(tail(hi, lo)),
        [0x2001, 0, ..] => Some(tail(!s[6], !s[7])),
        _ => None,
    }
}

/// Resolves the URL's host and checks every address it has.
async fn checked_addresses(
    config: &GeoConverterConfig,
    url: &reqwest::Url,
) -> Result<Vec<SocketAddr>, ContentError> {
    let host = url
        .host_str()
        .ok_or_else(|| invalid("url", "the address has no host"))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| upstream(502, format!("the host '{host}' cannot be resolved: {e}")))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(upstream(502, format!("the host '{host}' has no address")));
    }
    if !config.allow_private_addresses {
        if let Some(a) = addrs.iter().find(|a| is_private(a.ip())) {
            return Err(invalid("url", format!("'{host}' resolves to {}, a loopback or private address; only public addresses are fetched", a.ip())));
        }
    }
    Ok(addrs)
}

/// Downloads `url` within the configured limits.
pub async fn fetch(config: &GeoConverterConfig, url: &str) -> Result<Vec<u8>, ContentError> {
    let mut url = reqwest::Url::parse(url)
        .map_err(|e| invalid("url", format!("'{url}' is not an absolute address: {e}")))?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(config.timeout_secs);
    for _hop in 0..4 {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(
                "url",
                format!(
                    "the scheme '{}' is not fetched; use http or https",
                    url.scheme()
                ),
            ));
        }
        let addrs = checked_addresses(config, &url).await?;
        let host = url.host_str().unwrap_or_default().to_string();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .resolve_to_addrs(&host, &addrs)
            .timeout(Duration::from_secs(config.timeout_secs))
            .build()
            .map_err(|e| upstream(502, format!("the HTTP client cannot start: {e}")))?;
        let timed_out = || {
            upstream(
                504,
                format!(
                    "'{url}' did not answer within {} seconds",
                    config.timeout_secs
                ),
            )
        };
        let mut response = tokio::time::timeout_at(deadline, client.get(url.clone()).send())
            .await
            .map_err(|_| timed_out())?
            .map_err(|e| {
                if e.is_timeout() {
                    timed_out()
                } else {
                    upstream(502, format!("'{url}' cannot be fetched: {e}"))
                }
            })?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| upstream(502, format!("'{url}' redirects without a Location")))?;
            url = url
                .join(location)
                .map_err(|_| upstream(502, format!("'{url}' redirects to an invalid address")))?;
            continue;
        }
        if status.as_u16() == 404 {
            return Err(upstream(404, format!("'{url}' answered 404 Not Found")));
        }
        if !status.is_success() {
            return Err(upstream(502, format!("'{url}' answered {status}")));
        }
        if response
            .content_length()
            .is_some_and(|n| n > config.max_bytes as u64)
        {
            return Err(upstream(
                413,
                format!(
                    "the file at '{url}' is larger than the limit of {} bytes",
                    config.max_bytes
                ),
            ));
        }
        let mut body = Vec::new();
        while let Some(chunk) = tokio::time::timeout_at(deadline, response.chunk())
            .await
            .map_err(|_| timed_out())?
            .map_err(|e| upstream(502, format!("reading '{url}' failed: {e}")))?
        {
            if body.len() + chunk.len() > config.max_bytes {
                return Err(upstream(
                    413,
                    format!(
                        "the file at '{url}' is larger than the limit of {} bytes",
                        config.max_bytes
                    ),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(body);
    }
    Err(upstream(502, "more than three redirects"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_recognised() {
        // (address, blocked): every form that reaches a loopback, private, link-local or
        // otherwise internal host is refused, whatever IPv6 wrapping carries it.
        let table = [
            ("127.0.0.1", true),
            ("10.1.2.3", true),
            ("172.16.0.1", true),
            ("192.168.1.1", true),
            ("169.254.169.254", true),
            ("0.0.0.0", true),
            ("100.64.0.1", true),
            ("::1", true),
            ("::", true),
            ("fd00::1", true),
            ("fe80::1", true),
            ("fec0::1", true),
            ("2001:db8::1", true),
            ("100::1", true),
            ("::ffff:127.0.0.1", true),
            ("::ffff:8.8.8.8", false),
            ("::127.0.0.1", true),
            ("::10.0.0.1", true),
            ("::8.8.8.8", false),
            ("64:ff9b::7f00:1", true),
            ("64:ff9b::a9fe:a9fe", true),
            ("64:ff9b::808:808", false),
            ("64:ff9b:1::808:808", true),
            ("2002:7f00:1::", true),
            ("2002:c0a8:101::1", true),
            ("2002:808:808::1", false),
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", true), // Teredo, client 127.0.0.1
            ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", false), // Teredo, client 8.8.8.8
            ("8.8.8.8", false),
            ("151.101.1.1", false),
            ("2a00:1450::1", false),
        ];
        for (ip, blocked) in table {
            assert_eq!(is_private(ip.parse().unwrap()), blocked, "{ip}");
        }
    }
}
