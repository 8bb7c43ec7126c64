//! Station collections: one per Time Series station type (`station-parkingstation`),
//! its features the stations of that type, each with the latest measurement of every
//! data type the caller may see.
//!
//! The stations and their latest measurements are read whole through
//! `hub_timeseries::geojson::flat_rows` (the same query, closed-data rules and row shape
//! as `/v2/flat/{type}` and `/v2/flat/{type}/*/latest` for the same caller), then filtered
//! and paged here. That keeps one place deciding visibility; the cost is reading a whole
//! station type per request, bounded by the Time Series API's `max_tree_rows`. A station
//! type's stations are few (thousands), and `datetime` needs the latest values anyway.
//!
//! CQL2 `filter`: read by the one CQL2 parser, rewritten into a Time Series `where`
//! (`hub_query::timeseries::cql2`) and compiled into the stations query by the Time Series
//! compiler, so it names the same properties `/v2/flat/{type}?where=` does (`scode`,
//! `sname`, `sorigin`, `sactive`, `smetadata.…`); its `S_INTERSECTS` areas are tested on
//! the stations' positions like `bbox`.

use std::collections::HashMap;

use hub_content::geojson::{point_geometry, OutputCrs};
use hub_content::params::RawQuery;
use hub_model::Problem;
use hub_query::content::ContentFilter;
use hub_query::timeseries::cql2::where_from_filter;
use hub_query::timeseries::Where;
use hub_timeseries::{ApiError, Route, TimeseriesState};
use serde_json::{json, Map, Value};

use crate::params::{self, parse_bbox, parse_crs, parse_datetime};

/// Prefix of a station collection id.
pub const PREFIX: &str = "station-";

/// Property filters of station collections (equality), with their type.
pub const STATION_FILTERS: &[(&str, &str)] = &[
    ("scode", "string"),
    ("sname", "string"),
    ("sorigin", "string"),
    ("sactive", "boolean"),
];

/// The station type a collection id names, if it is a station collection id: `Ok(None)`
/// for a Content collection, 404 for a station collection of no known type.
pub async fn station_type(
    ts: &TimeseriesState,
    collection: &str,
) -> Result<Option<String>, Problem> {
    let lower = collection.to_ascii_lowercase();
    let Some(wanted) = lower.strip_prefix(PREFIX) else {
        return Ok(None);
    };
    let types = station_types(ts).await?;
    types
        .into_iter()
        .find(|t| t.eq_ignore_ascii_case(wanted))
        .map(Some)
        .ok_or_else(|| {
            Problem::not_found(format!(
                "'{collection}' is not a collection; GET /ogc/collections lists them"
            ))
        })
}

/// The station types, as `/v2/flat` lists them.
pub async fn station_types(ts: &TimeseriesState) -> Result<Vec<String>, Problem> {
    ts.store
        .type_list(hub_store::timeseries::TypeList::StationTypes)
        .await
        .map_err(|e| hub_content::ContentError::Store(e).to_problem())
}

pub fn collection_id(stype: &str) -> String {
    format!("{PREFIX}{}", stype.to_ascii_lowercase())
}

fn problem(e: ApiError) -> Problem {
    match e {
        ApiError::Store(e) => hub_content::ContentError::Store(e).to_problem(),
        // Only the CQL2 filter brings a `where` into these queries.
        ApiError::Query(e) => Problem::invalid_parameter("filter", e.to_string()),
        ApiError::BadRequest { message, .. } => Problem::new(
            413,
            "too-large",
            "Collection too large",
            format!("the station type is too large to serve as a collection: {message}"),
        ),
        e => Problem::internal(e.to_string()),
    }
}

/// The parsed items request of a station collection.
pub struct StationItems {
    pub limit: u32,
    pub offset: u64,
    pub crs: OutputCrs,
    area: Option<hub_query::content::geo::GeoArea>,
    since: Option<String>,
    until: Option<String>,
    equal: Vec<(&'static str, Value)>,
    /// The CQL2 filter as a `where` on the stations query (see [`stations`]).
    pub filter: Option<Where>,
    /// The CQL2 filter's `S_INTERSECTS` areas.
    areas: Vec<hub_query::content::geo::GeoArea>,
}

pub fn parse_items(raw: &RawQuery) -> Result<StationItems, Problem> {
    let (filter, areas) = match raw.get("filter") {
        Some(text) => {
            let (filter, areas) = params::parse_cql2_parameter(raw, text)?;
            let filter = filter
                .map(|f| where_from_filter(&f))
                .transpose()
                .map_err(|e| params::filter_error(&e))?;
            (filter, areas)
        }
        None if raw.get("filter-lang").is_some() || raw.get("filter-crs").is_some() => {
            return Err(Problem::invalid_parameter(
                "filter",
                "filter-lang and filter-crs need a filter",
            ))
        }
        None => (None, Vec::new()),
    };
    let (limit, offset) = params::paging(raw)?;
    let crs = raw
        .get("crs")
        .map(|v| parse_crs("crs", v))
        .transpose()?
        .unwrap_or(OutputCrs::CRS84);
    let area = match (raw.get("bbox"), raw.get("bbox-crs")) {
        (Some(b), c) => Some(parse_bbox(
            b,
            c.map(|v| parse_crs("bbox-crs", v))
                .transpose()?
                .unwrap_or(OutputCrs::CRS84),
        )?),
        (None, Some(_)) => {
            return Err(Problem::invalid_parameter(
                "bbox-crs",
                "bbox-crs needs a bbox",
            ))
        }
        (None, None) => None,
    };
    let (mut since, mut until) = (None, None);
    if let Some(d) = raw.get("datetime") {
        for f in parse_datetime(d)? {
            match f {
                ContentFilter::ChangedSince(t) => since = Some(t),
                ContentFilter::ChangedUntil(t) => until = Some(t),
                _ => {}
            }
        }
    }
    let mut equal = Vec::new();
    for (name, kind) in STATION_FILTERS {
        if let Some(v) = raw.get(name) {
            let value = match (*kind, v.to_ascii_lowercase().as_str()) {
                ("boolean", "true") => Value::Bool(true),
                ("boolean", "false") => Value::Bool(false),
                ("boolean", _) => {
                    return Err(Problem::invalid_parameter(
                        name,
                        format!("'{v}' is not true or false"),
                    ))
                }
                _ => Value::String(v.to_string()),
            };
            equal.push((*name, value));
        }
    }
    Ok(StationItems {
        limit,
        offset,
        crs,
        area,
        since,
        until,
        equal,
        filter,
        areas,
    })
}

/// A station with its visible latest measurements, ready to be a feature.
pub struct Station {
    pub code: String,
    /// (longitude, latitude) in WGS 84.
    position: Option<(f64, f64)>,
    properties: Map<String, Value>,
    /// Times of the latest measurements, `YYYY-MM-DDTHH:MM:SS` UTC (as `datetime`'s).
    times: Vec<String>,
}

/// Every station of `stype` the caller may see, in the Time Series API's order, with the
/// latest measurement per data type the caller may see (`latest`: data type → value,
/// time, period; of several periods the newest).
pub async fn stations(
    ts: &TimeseriesState,
    principal: Option<&hub_model::Principal>,
    stype: &str,
    filter: Option<Where>,
) -> Result<Vec<Station>, Problem> {
    let max = ts.config.max_tree_rows;
    let types = Some(vec![stype.to_string()]);
    let rows = hub_timeseries::geojson::flat_rows(
        ts,
        principal,
        Route::Stations,
        types.clone(),
        None,
        filter,
        max,
    )
    .await
    .map_err(problem)?;
    let latest =
        hub_timeseries::geojson::flat_rows(ts, principal, Route::Latest, types, None, None, max)
            .await
            .map_err(problem)?;
    let mut per_station: HashMap<String, Map<String, Value>> = HashMap::new();
    for row in latest {
        let (Some(code), Some(tname)) = (text(&row, "scode"), text(&row, "tname")) else {
            continue;
        };
        let entry = per_station.entry(code).or_default();
        let time = row.get("mvalidtime").cloned().unwrap_or(Value::Null);
        let newer = match entry.get(&tname).and_then(|m| m.get("time")) {
            Some(old) => old.as_str() < time.as_str(),
            None => true,
        };
        if newer {
            entry.insert(
                tname,
                json!({"value": row.get("mvalue").cloned().unwrap_or(Value::Null),
                       "time": time,
                       "period": row.get("mperiod").cloned().unwrap_or(Value::Null)}),
            );
        }
    }
    Ok(rows
        .into_iter()
        .filter_map(|mut properties| {
            let code = text(&properties, "scode")?;
            let position = properties
                .get("scoordinate")
                .and_then(|c| Some((c.get("x")?.as_f64()?, c.get("y")?.as_f64()?)));
            let latest = per_station.remove(&code).unwrap_or_default();
            let times = latest
                .values()
                .filter_map(|m| m.get("time").and_then(Value::as_str))
                .map(normal_time)
                .collect();
            properties.insert("latest".into(), Value::Object(latest));
            Some(Station {
                code,
                position,
                properties,
                times,
            })
        })
        .collect())
}

fn text(row: &Map<String, Value>, key: &str) -> Option<String> {
    row.get(key).and_then(Value::as_str).map(str::to_string)
}

/// `2024-01-01 10:00:00.000+0000` (the flat answer's UTC time) → `2024-01-01T10:00:00`.
fn normal_time(t: &str) -> String {
    t.get(..19).unwrap_or(t).replacen(' ', "T", 1)
}

impl Station {
    /// (longitude, latitude) in WGS 84, if the station has a position.
    pub fn position(&self) -> Option<(f64, f64)> {
        self.position
    }

    /// The station's name (`sname`), if it has one.
    pub fn name(&self) -> Option<&str> {
        self.properties.get("sname").and_then(Value::as_str)
    }
}

impl StationItems {
    pub fn matches(&self, s: &Station) -> bool {
        for area in self.area.iter().chain(&self.areas) {
            match s.position {
                Some((lon, lat)) => {
                    if !hub_geo::relate::relates(&area.geometry, area.relation, lon, lat) {
                        return false;
                    }
                }
                None => return false,
            }
        }
        if self.since.is_some() || self.until.is_some() {
            let within = |t: &String| {
                self.since.as_ref().is_none_or(|a| t >= a)
                    && self.until.as_ref().is_none_or(|b| t <= b)
            };
            if !s.times.iter().any(within) {
                return false;
            }
        }
        self.equal
            .iter()
            .all(|(name, value)| s.properties.get(*name) == Some(value))
    }
}

/// One station as a GeoJSON feature (its id the station code).
pub fn feature(s: &Station, crs: OutputCrs) -> Value {
    json!({
        "type": "Feature",
        "id": s.code,
        "geometry": point_geometry(s.position.map(|(lon, lat)| (lat, lon)), crs),
        "properties": s.properties,
    })
}
