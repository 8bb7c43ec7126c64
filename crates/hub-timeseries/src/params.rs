//! Path segments and query parameters of the read routes: representation, CSV type
//! lists with `*`, dates, `limit/offset/select/where/distinct/shownull/timezone/origin`.

use chrono::{DateTime, FixedOffset, TimeZone, Utc};
use hub_query::timeseries::datetime::DATE_FORMAT_HELP;
use hub_query::timeseries::parse_datetime;

use crate::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dataset {
    Node,
    Edge,
    Event,
}

#[derive(Debug, Clone)]
pub struct Representation {
    pub tree: bool,
    pub dataset: Dataset,
    /// As typed in the URL (used in self links).
    pub raw: String,
}

impl Representation {
    /// `FLAT_NODE`, `TREE_EDGE`, … (used in 404 messages, as the reference does).
    pub fn enum_name(&self) -> String {
        let d = match self.dataset {
            Dataset::Node => "NODE",
            Dataset::Edge => "EDGE",
            Dataset::Event => "EVENT",
        };
        format!("{}_{d}", if self.tree { "TREE" } else { "FLAT" })
    }
}

pub fn parse_representation(raw: &str) -> Result<Representation, ApiError> {
    let parts: std::collections::BTreeSet<String> =
        raw.split(',').map(|p| p.trim().to_lowercase()).collect();
    let dataset = |parts: &std::collections::BTreeSet<String>| {
        if parts.contains("edge") {
            Some(Dataset::Edge)
        } else if parts.contains("event") {
            Some(Dataset::Event)
        } else if parts.len() == 1 || parts.contains("node") {
            Some(Dataset::Node)
        } else {
            None
        }
    };
    let tree = if parts.contains("flat") {
        false
    } else if parts.contains("tree") {
        true
    } else {
        return Err(repr_error(raw));
    };
    match dataset(&parts) {
        Some(dataset) => Ok(Representation {
            tree,
            dataset,
            raw: raw.to_string(),
        }),
        None => Err(repr_error(raw)),
    }
}

fn repr_error(raw: &str) -> ApiError {
    ApiError::bad(format!(
        "PARSING ERROR: Please choose 'flat' or 'tree' as representation, and 'event', 'edge' or 'node' (default) as dataset. Separate them with a comma. '{raw}' is not allowed."
    ))
}

/// `a, b,*` → None (all); otherwise the trimmed names.
pub fn csv_set(raw: &str) -> Option<Vec<String>> {
    let items: Vec<String> = raw.split(',').map(|s| s.trim().to_string()).collect();
    if items.iter().any(|s| s == "*") {
        None
    } else {
        let mut v = items;
        v.sort();
        v.dedup();
        Some(v)
    }
}

/// A path date (`{from}`, `{to}`, event time points) as epoch milliseconds.
pub fn parse_path_date(raw: &str) -> Result<i64, ApiError> {
    parse_datetime(raw)
        .map(|d| d.timestamp_millis())
        .map_err(|e| {
            ApiError::bad(format!(
                "PARSING ERROR: Invalid date given. {DATE_FORMAT_HELP} Error message: {e}."
            ))
        })
}

/// Output time zone.
#[derive(Debug, Clone, Copy)]
pub enum Zone {
    Named(chrono_tz::Tz),
    Fixed(FixedOffset),
}

pub fn parse_timezone(raw: &str) -> Result<Zone, ApiError> {
    for candidate in [raw.to_string(), raw.replace(' ', "+")] {
        if let Some(z) = zone(&candidate) {
            return Ok(z);
        }
    }
    Err(ApiError::bad(format!(
        "'{raw}' is not a valid time zone understandable by java.time.ZoneId. Use an IANA name (Europe/Rome), UTC, or an offset (+02:00, +0200, UTC+2)."
    )))
}

fn zone(s: &str) -> Option<Zone> {
    if s == "Z" {
        return Some(Zone::Fixed(FixedOffset::east_opt(0)?));
    }
    if let Ok(tz) = s.parse::<chrono_tz::Tz>() {
        return Some(Zone::Named(tz));
    }
    let rest = ["UTC", "GMT", "UT", ""]
        .iter()
        .find_map(|p| s.strip_prefix(p).filter(|r| r.starts_with(['+', '-'])))?;
    let sign = if rest.starts_with('-') { -1 } else { 1 };
    let body = &rest[1..];
    let (h, m) = match body.len() {
        1 | 2 if body.bytes().all(|b| b.is_ascii_digit()) => (body.parse::<i32>().ok()?, 0),
        4 if body.bytes().all(|b| b.is_ascii_digit()) => {
            (body[..2].parse().ok()?, body[2..].parse().ok()?)
        }
        5 if &body[2..3] == ":" => (body[..2].parse().ok()?, body[3..].parse().ok()?),
        _ => return None,
    };
    if h > 18 || m > 59 {
        return None;
    }
    Some(Zone::Fixed(FixedOffset::east_opt(
        sign * (h * 3600 + m * 60),
    )?))
}

/// `yyyy-MM-dd HH:mm:ss.SSS+HHMM` in `zone`.
pub fn format_time(ms: i64, zone: Zone) -> String {
    use chrono::{Datelike, Offset, Timelike};
    let utc: DateTime<Utc> = Utc.timestamp_millis_opt(ms).single().unwrap_or_default();
    let (local, off) = match zone {
        Zone::Named(tz) => {
            let t = utc.with_timezone(&tz);
            (t.naive_local(), t.offset().fix().local_minus_utc())
        }
        Zone::Fixed(o) => (utc.with_timezone(&o).naive_local(), o.local_minus_utc()),
    };
    let sign = if off < 0 { '-' } else { '+' };
    let a = off.abs();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}{sign}{:02}{:02}",
        local.year(),
        local.month(),
        local.day(),
        local.hour(),
        local.minute(),
        local.second(),
        local.nanosecond() / 1_000_000 % 1000,
        a / 3600,
        a % 3600 / 60
    )
}

/// Query parameters of level ≥ 2 routes.
#[derive(Debug, Clone)]
pub struct Params {
    pub limit: i64,
    pub offset: i64,
    pub select: Option<String>,
    pub filter: Option<String>,
    pub distinct: bool,
    pub shownull: bool,
    pub timezone: Option<String>,
}

fn boolean(name: &str, v: &str) -> Result<bool, ApiError> {
    match v.trim().to_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" => Ok(false),
        _ => Err(ApiError::bad(format!(
            "Parameter '{name}' must be a boolean (true/false), not '{v}'"
        ))),
    }
}

fn integer(name: &str, v: &str) -> Result<i64, ApiError> {
    v.trim()
        .parse()
        .map_err(|_| ApiError::bad(format!("Parameter '{name}' must be an integer, not '{v}'")))
}

pub fn parse_params(query: Option<&str>) -> Result<Params, ApiError> {
    let mut p = Params {
        limit: 200,
        offset: 0,
        select: None,
        filter: None,
        distinct: true,
        shownull: false,
        timezone: None,
    };
    for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        match k.as_ref() {
            "limit" => p.limit = integer("limit", &v)?,
            "offset" => p.offset = integer("offset", &v)?,
            "select" if !v.is_empty() => p.select = Some(v.into_owned()),
            "where" if !v.is_empty() => p.filter = Some(v.into_owned()),
            "distinct" => p.distinct = boolean("distinct", &v)?,
            "shownull" => p.shownull = boolean("shownull", &v)?,
            "timezone" if !v.is_empty() => p.timezone = Some(v.into_owned()),
            "origin" => tracing::debug!(origin = %v, "time series client"),
            _ => {}
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn representation_is_order_free_and_case_insensitive() {
        for (raw, tree, ds) in [
            ("flat", false, Dataset::Node),
            ("edge,flat", false, Dataset::Edge),
            ("node,TREE", true, Dataset::Node),
            ("flat,edge,event", false, Dataset::Edge),
            ("flat,flat", false, Dataset::Node),
            ("tree,event", true, Dataset::Event),
        ] {
            let r = parse_representation(raw).unwrap();
            assert_eq!((r.tree, r.dataset), (tree, ds), "{raw}");
        }
        for bad in ["flat,foo", "node", "x"] {
            assert!(parse_representation(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn time_zones_render_as_the_reference() {
        let ms = 1_705_314_600_123; // 2024-01-15T10:30:00.123Z
        for (tz, want) in [
            ("UTC", "2024-01-15 10:30:00.123+0000"),
            ("Europe/Rome", "2024-01-15 11:30:00.123+0100"),
            ("UTC-2", "2024-01-15 08:30:00.123-0200"),
            ("UTC 2", "2024-01-15 12:30:00.123+0200"),
            ("+02:00", "2024-01-15 12:30:00.123+0200"),
            ("+0200", "2024-01-15 12:30:00.123+0200"),
            ("CET", "2024-01-15 11:30:00.123+0100"),
            ("Etc/GMT-1", "2024-01-15 11:30:00.123+0100"),
            ("Z", "2024-01-15 10:30:00.123+0000"),
        ] {
            assert_eq!(format_time(ms, parse_timezone(tz).unwrap()), want, "{tz}");
        }
        assert!(parse_timezone("europe/rome").is_err());
    }
}
