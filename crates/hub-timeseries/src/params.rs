//! Path segments and query parameters of the read routes: representation, CSV type
//! lists with `*`, dates, `limit/offset/select/where/distinct/shownull/timezone/origin`.
//!
//! Owns: validating what the client sent and the description of the query parameters
//! (`QUERY_PARAMETERS`, rendered by `/v2/apispec`). Must not touch the store or SQL.

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

/// The local time of `ms` in `zone`, and the zone's offset from UTC then, in seconds.
fn local_time(ms: i64, zone: Zone) -> (chrono::NaiveDateTime, i32) {
    use chrono::Offset;
    let utc: DateTime<Utc> = Utc.timestamp_millis_opt(ms).single().unwrap_or_default();
    match zone {
        Zone::Named(tz) => {
            let t = utc.with_timezone(&tz);
            (t.naive_local(), t.offset().fix().local_minus_utc())
        }
        Zone::Fixed(o) => (utc.with_timezone(&o).naive_local(), o.local_minus_utc()),
    }
}

/// [`format_time`]'s text through `format!` (years of other than four digits).
fn formatted_time(local: chrono::NaiveDateTime, off: i32) -> String {
    use chrono::{Datelike, Timelike};
    let (sign, a) = (if off < 0 { '-' } else { '+' }, off.abs());
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

/// `yyyy-MM-dd HH:mm:ss.SSS+HHMM` in `zone`.
pub fn format_time(ms: i64, zone: Zone) -> String {
    let mut out = Vec::with_capacity(28);
    write_time(ms, zone, &mut out);
    String::from_utf8(out).expect("ASCII digits and signs")
}

/// Appends [`format_time`]'s text to `out` (every row of an answer writes one or two
/// times, so the digits are written by hand instead of through `format!`).
pub fn write_time(ms: i64, zone: Zone, out: &mut Vec<u8>) {
    use chrono::{Datelike, Timelike};
    let (local, off) = local_time(ms, zone);
    let (sign, a) = (if off < 0 { '-' } else { '+' }, off.abs());
    let year = local.year();
    if !(0..=9999).contains(&year) {
        out.extend_from_slice(formatted_time(local, off).as_bytes());
        return;
    }
    let digits = |out: &mut Vec<u8>, v: u32, n: u32| {
        for k in (0..n).rev() {
            out.push(b'0' + (v / 10u32.pow(k) % 10) as u8);
        }
    };
    digits(out, year as u32, 4);
    out.push(b'-');
    digits(out, local.month(), 2);
    out.push(b'-');
    digits(out, local.day(), 2);
    out.push(b' ');
    digits(out, local.hour(), 2);
    out.push(b':');
    digits(out, local.minute(), 2);
    out.push(b':');
    digits(out, local.second(), 2);
    out.push(b'.');
    digits(out, local.nanosecond() / 1_000_000 % 1000, 3);
    out.push(sign as u8);
    // An offset is less than a day: its hours take two digits.
    digits(out, (a / 3600) as u32, 2);
    digits(out, (a % 3600 / 60) as u32, 2);
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
    /// `json` (default) or `geojson`; checked by `geojson::wants_geojson`.
    pub format: Option<String>,
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

/// The query of level ≥ 2 routes as sent: every value of each name (case-sensitive), in
/// order. The struct is the parser (serde reads the names) and, through
/// [`QUERY_PARAMETERS`], the `/v2/apispec` description; a test keeps the two equal.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct TsQueryParams {
    pub limit: Vec<String>,
    pub offset: Vec<String>,
    pub select: Vec<String>,
    #[serde(rename = "where")]
    pub filter: Vec<String>,
    pub distinct: Vec<String>,
    pub shownull: Vec<String>,
    pub timezone: Vec<String>,
    pub origin: Vec<String>,
    pub format: Vec<String>,
}

/// How `/v2/apispec` describes one query parameter.
pub struct QueryParameterDoc {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema type: integer, string or boolean.
    pub schema_type: &'static str,
    /// The default, as JSON text (`200`, `true`, `"UTC"`).
    pub default: Option<&'static str>,
    /// Longest value accepted, in characters (the parser's own limit).
    pub max_length: Option<usize>,
    /// The accepted values, when they are a closed list (empty: any).
    pub values: &'static [&'static str],
}

/// The documented query parameters of [`TsQueryParams`], in the order of `/v2/apispec`.
pub const QUERY_PARAMETERS: [QueryParameterDoc; 9] = [
    QueryParameterDoc {
        name: "limit",
        description: "Maximum number of results; -1 or 0 = no limit",
        schema_type: "integer",
        default: Some("200"),
        max_length: None,
        values: &[],
    },
    QueryParameterDoc {
        name: "offset",
        description: "Results to skip",
        schema_type: "integer",
        default: Some("0"),
        max_length: None,
        values: &[],
    },
    QueryParameterDoc {
        name: "select",
        description: "Comma-separated output names or JSON paths (smetadata.capacity)",
        schema_type: "string",
        default: None,
        max_length: Some(hub_query::timeseries::select::MAX_SELECT_CHARS),
        values: &[],
    },
    QueryParameterDoc {
        name: "where",
        description: "Filter: alias.op.value, and(...), or(...); ops eq neq lt gt lteq gteq re ire nre nire in nin bbi bbc dlt",
        schema_type: "string",
        default: None,
        max_length: Some(hub_query::timeseries::parser::MAX_WHERE_CHARS),
        values: &[],
    },
    QueryParameterDoc {
        name: "distinct",
        description: "Return distinct rows",
        schema_type: "boolean",
        default: Some("true"),
        max_length: None,
        values: &[],
    },
    QueryParameterDoc {
        name: "shownull",
        description: "Include null values",
        schema_type: "boolean",
        default: Some("false"),
        max_length: None,
        values: &[],
    },
    QueryParameterDoc {
        name: "timezone",
        description: "Time zone of timestamps (Europe/Rome, UTC+2, +0200); latest and history routes",
        schema_type: "string",
        default: Some("\"UTC\""),
        max_length: None,
        values: &[],
    },
    QueryParameterDoc {
        name: "origin",
        description: "Identifies the calling application (logged only)",
        schema_type: "string",
        default: None,
        max_length: None,
        values: &[],
    },
    QueryParameterDoc {
        name: "format",
        description: "json or geojson (a FeatureCollection, one feature per row; flat stations, latest measurements and edges only; also chosen by Accept: application/geo+json)",
        schema_type: "string",
        default: Some("\"json\""),
        max_length: None,
        values: &["json", "geojson"],
    },
];

impl TsQueryParams {
    /// Groups the query's values by name; names it does not know are ignored.
    pub fn read(query: Option<&str>) -> Self {
        let mut values = serde_json::Map::new();
        for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            let entry = values
                .entry(k.into_owned())
                .or_insert_with(|| serde_json::Value::Array(Vec::new()));
            if let serde_json::Value::Array(list) = entry {
                list.push(serde_json::Value::String(v.into_owned()));
            }
        }
        // Every field is a list of strings: reading them cannot fail.
        serde_json::from_value(serde_json::Value::Object(values)).unwrap_or_default()
    }

    /// Validates every value; the last one of a name counts (empty `select`, `where`
    /// and `timezone` values are skipped), as the reference does.
    pub fn parse(&self) -> Result<Params, ApiError> {
        for origin in &self.origin {
            tracing::debug!(origin = %origin, "time series client");
        }
        Ok(Params {
            limit: last_valid(&self.limit, |v| integer("limit", v))?.unwrap_or(200),
            offset: last_valid(&self.offset, |v| integer("offset", v))?.unwrap_or(0),
            select: last_non_empty(&self.select),
            filter: last_non_empty(&self.filter),
            distinct: last_valid(&self.distinct, |v| boolean("distinct", v))?.unwrap_or(true),
            shownull: last_valid(&self.shownull, |v| boolean("shownull", v))?.unwrap_or(false),
            timezone: last_non_empty(&self.timezone),
            format: last_non_empty(&self.format),
        })
    }
}

/// Every value validated in order (the first bad one is the error); the last one kept.
fn last_valid<T>(
    values: &[String],
    parse: impl Fn(&str) -> Result<T, ApiError>,
) -> Result<Option<T>, ApiError> {
    let mut last = None;
    for v in values {
        last = Some(parse(v)?);
    }
    Ok(last)
}

fn last_non_empty(values: &[String]) -> Option<String> {
    values.iter().rfind(|v| !v.is_empty()).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deserializer that records the field names a struct asks for.
    struct FieldNames(&'static [&'static str]);

    impl<'de> serde::Deserializer<'de> for &mut FieldNames {
        type Error = serde::de::value::Error;

        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = fields;
            Err(serde::de::Error::custom("field names recorded"))
        }

        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("a query is a struct"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    #[test]
    fn documented_parameters_are_the_parsed_ones() {
        let mut names = FieldNames(&[]);
        let _ = <TsQueryParams as serde::Deserialize>::deserialize(&mut names);
        let parsed: std::collections::BTreeSet<&str> = names.0.iter().copied().collect();
        let documented: std::collections::BTreeSet<&str> =
            QUERY_PARAMETERS.iter().map(|p| p.name).collect();
        assert_eq!(parsed, documented);
        assert_eq!(documented.len(), QUERY_PARAMETERS.len());
    }

    #[test]
    fn query_values_parse_as_the_reference() {
        let parse = |q: &str| TsQueryParams::read(Some(q)).parse();
        let p = parse("limit=5&limit=7&select=a&select=&where=x&distinct=no&shownull=ON&timezone=")
            .unwrap();
        assert_eq!((p.limit, p.offset), (7, 0));
        assert_eq!(p.select.as_deref(), Some("a"));
        assert_eq!(p.filter.as_deref(), Some("x"));
        assert_eq!((p.distinct, p.shownull), (false, true));
        assert_eq!(p.timezone, None);
        let defaults = parse("LIMIT=abc&origin=test").unwrap();
        assert_eq!((defaults.limit, defaults.distinct), (200, true));
        for (query, message) in [
            (
                "limit=abc",
                "Parameter 'limit' must be an integer, not 'abc'",
            ),
            (
                "limit=abc&limit=5",
                "Parameter 'limit' must be an integer, not 'abc'",
            ),
            ("offset=", "Parameter 'offset' must be an integer, not ''"),
            (
                "distinct=maybe",
                "Parameter 'distinct' must be a boolean (true/false), not 'maybe'",
            ),
        ] {
            let e = parse(query).unwrap_err();
            assert!(format!("{e:?}").contains(message), "{query}: {e:?}");
        }
    }

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

    /// The text `format_time` wrote through `format!` before the digits were written by
    /// hand: the answer bytes must not change.
    fn format_time_reference(ms: i64, zone: Zone) -> String {
        let (local, off) = local_time(ms, zone);
        formatted_time(local, off)
    }

    #[test]
    fn times_written_by_hand_equal_the_formatted_text() {
        let instants = [
            0,
            -1,
            1_705_314_600_123,
            1_795_587_000_999,
            -62_135_596_800_000, // 0001-01-01 (Rome's local mean time, +00:49:56)
            -30_610_224_000_001, // 1000-01-01 less a millisecond
            253_402_300_799_999, // 9999-12-31T23:59:59.999Z: the year 10000 east of UTC
            -62_198_755_200_000, // year 0 (formatted as before, not by hand)
            1_711_846_799_500,   // 2024-03-31 00:59:59.5 UTC, Rome changes at 01:00
        ];
        let zones = [
            "UTC",
            "Europe/Rome",
            "UTC-2",
            "+05:30",
            "-0930",
            "Asia/Kathmandu",
        ];
        for ms in instants {
            for tz in zones {
                let zone = parse_timezone(tz).unwrap();
                assert_eq!(
                    format_time(ms, zone),
                    format_time_reference(ms, zone),
                    "{ms} in {tz}"
                );
            }
        }
        assert_eq!(
            format_time(1_705_314_600_123, parse_timezone("+05:30").unwrap()),
            "2024-01-15 16:00:00.123+0530"
        );
    }
}
