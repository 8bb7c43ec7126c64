//! Rows → JSON: value rendering per field kind and flat rows; the tree hierarchy is
//! [`tree`]'s.

mod tree;

use std::collections::HashMap;

use hub_query::timeseries::{Kind, OutColumn};
use hub_store::timeseries::Cell;
use serde_json::{json, Map, Value};

use crate::params::{format_time, write_time, Zone};

/// Renders one field from its cells.
fn render(kind: Kind, cells: &[Cell], zone: Zone) -> Value {
    match (kind, cells) {
        (_, [Cell::Null]) => Value::Null,
        (Kind::Text, [c]) => match c {
            Cell::Text(s) => Value::String(s.to_string()),
            Cell::Int(i) => Value::String(i.to_string()),
            Cell::Real(r) => Value::String(r.to_string()),
            Cell::Null => Value::Null,
        },
        (Kind::Bool, [Cell::Int(i)]) => Value::Bool(*i != 0),
        (Kind::Int, [Cell::Int(i)]) => json!(i),
        (Kind::Int, [Cell::Real(r)]) => number(*r),
        (Kind::Time, [Cell::Int(ms)]) => Value::String(format_time(*ms, zone)),
        (Kind::Json, [Cell::Text(t)]) => {
            serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.to_string()))
        }
        (Kind::Json, [Cell::Int(i)]) => json!(i),
        (Kind::Json, [Cell::Real(r)]) => number(*r),
        (Kind::Geometry, [Cell::Text(t)]) => geometry(t),
        (Kind::Point, [x, y, srid]) => match (x, y) {
            (Cell::Real(x), Cell::Real(y)) => {
                let srid = if let Cell::Int(s) = srid { *s } else { 4326 };
                json!({"x": number(*x), "y": number(*y), "srid": srid})
            }
            _ => Value::Null,
        },
        (Kind::Value, [d, s, j]) => match (d, s, j) {
            (Cell::Real(r), _, _) => number(*r),
            (Cell::Int(i), _, _) => json!(i),
            (_, Cell::Text(t), _) => Value::String(t.to_string()),
            (_, _, Cell::Text(t)) => serde_json::from_str(t).unwrap_or(Value::Null),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

/// Doubles: shortest round-trip; integral values within ±2^53 without a fraction.
pub fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        json!(x as i64)
    } else {
        serde_json::Number::from_f64(x)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// GeoJSON with the short CRS and the bbox, as PostGIS `ST_AsGeoJSON(g, 9, 3)` writes it.
fn geometry(text: &str) -> Value {
    let Ok(Value::Object(g)) = serde_json::from_str::<Value>(text) else {
        return Value::Null;
    };
    let mut pts = Vec::new();
    collect(g.get("coordinates").unwrap_or(&Value::Null), &mut pts);
    let mut out = Map::new();
    out.insert("type".into(), g.get("type").cloned().unwrap_or(Value::Null));
    out.insert(
        "crs".into(),
        json!({"type": "name", "properties": {"name": "EPSG:4326"}}),
    );
    if !pts.is_empty() {
        let f = |sel: fn(&(f64, f64)) -> f64, max: bool| {
            pts.iter()
                .map(sel)
                .fold(if max { f64::MIN } else { f64::MAX }, |a, b| {
                    if max {
                        a.max(b)
                    } else {
                        a.min(b)
                    }
                })
        };
        out.insert(
            "bbox".into(),
            json!([
                number(f(|p| p.0, false)),
                number(f(|p| p.1, false)),
                number(f(|p| p.0, true)),
                number(f(|p| p.1, true))
            ]),
        );
    }
    out.insert(
        "coordinates".into(),
        g.get("coordinates").cloned().unwrap_or(Value::Null),
    );
    Value::Object(out)
}

fn collect(c: &Value, out: &mut Vec<(f64, f64)>) {
    if let Some(a) = c.as_array() {
        if let (Some(x), Some(y)) = (
            a.first().and_then(Value::as_f64),
            a.get(1).and_then(Value::as_f64),
        ) {
            out.push((x, y));
        } else {
            a.iter().for_each(|v| collect(v, out));
        }
    }
}

/// Splits a row into (column, rendered value) pairs.
fn fields<'a>(columns: &'a [OutColumn], row: &[Cell], zone: Zone) -> Vec<(&'a OutColumn, Value)> {
    let mut out = Vec::with_capacity(columns.len());
    let mut i = 0;
    for c in columns {
        let w = c.kind.width();
        out.push((c, render(c.kind, &row[i..i + w], zone)));
        i += w;
    }
    out
}

/// Flat rows: hidden columns dropped, nulls omitted unless `shownull`, all-null rows dropped.
pub fn flat(columns: &[OutColumn], rows: &[Vec<Cell>], zone: Zone, shownull: bool) -> Value {
    let mut data = Vec::with_capacity(rows.len());
    for row in rows {
        let mut obj = Map::new();
        let mut any = false;
        for (c, v) in fields(columns, row, zone) {
            if c.hidden {
                continue;
            }
            if !v.is_null() && c.key != "_timestamp" {
                any = true;
            }
            if v.is_null() && !shownull {
                continue;
            }
            obj.insert(c.key.clone(), v);
        }
        if any || shownull {
            data.push(Value::Object(obj));
        }
    }
    Value::Array(data)
}

/// Per-request cache of rendered JSON and geometry texts (station and type metadata repeat
/// on every row of their station / type).
#[derive(Default)]
pub struct RenderCache {
    json: HashMap<String, Vec<u8>>,
    geometry: HashMap<String, Vec<u8>>,
    /// A few recently rendered times (rows come ordered by time, and `_timestamp` repeats
    /// as `mvalidtime`).
    times: Vec<(i64, Vec<u8>)>,
    next_time: usize,
}

impl RenderCache {
    fn time(&mut self, ms: i64, zone: Zone, out: &mut Vec<u8>) {
        if let Some((_, b)) = self.times.iter().find(|(t, _)| *t == ms) {
            out.extend_from_slice(b);
            return;
        }
        // The text is digits and signs: quoting is all its JSON needs.
        let mut b = Vec::with_capacity(30);
        b.push(b'"');
        write_time(ms, zone, &mut b);
        b.push(b'"');
        out.extend_from_slice(&b);
        if self.times.len() < 4 {
            self.times.push((ms, b));
        } else {
            self.times[self.next_time] = (ms, b);
            self.next_time = (self.next_time + 1) % 4;
        }
    }
}

/// Writes one field as JSON into `out`, byte-identical to serializing [`render`]'s value.
pub(crate) fn render_into(
    kind: Kind,
    cells: &[Cell],
    zone: Zone,
    out: &mut Vec<u8>,
    cache: &mut RenderCache,
) {
    let w = |out: &mut Vec<u8>, v: &Value| serde_json::to_writer(out, v).expect("writing to a Vec");
    let s = |out: &mut Vec<u8>, t: &str| serde_json::to_writer(out, t).expect("writing to a Vec");
    match (kind, cells) {
        (_, [Cell::Null]) => out.extend_from_slice(b"null"),
        (Kind::Text, [Cell::Text(t)]) => s(out, t),
        (Kind::Int, [Cell::Int(i)]) => serde_json::to_writer(out, i).expect("writing to a Vec"),
        (Kind::Int | Kind::Json, [Cell::Real(r)]) => w(out, &number(*r)),
        (Kind::Time, [Cell::Int(ms)]) => cache.time(*ms, zone, out),
        (Kind::Point, [Cell::Real(x), Cell::Real(y), srid]) => {
            out.extend_from_slice(b"{\"x\":");
            w(out, &number(*x));
            out.extend_from_slice(b",\"y\":");
            w(out, &number(*y));
            out.extend_from_slice(b",\"srid\":");
            let srid = if let Cell::Int(s) = srid { *s } else { 4326 };
            serde_json::to_writer(&mut *out, &srid).expect("writing to a Vec");
            out.push(b'}');
        }
        (Kind::Json, [Cell::Text(t)]) => {
            if let Some(b) = cache.json.get(t.as_ref()) {
                out.extend_from_slice(b);
            } else {
                let b = serde_json::to_vec(&render(kind, cells, zone)).expect("writing to a Vec");
                out.extend_from_slice(&b);
                cache.json.insert(t.to_string(), b);
            }
        }
        (Kind::Geometry, [Cell::Text(t)]) => {
            if let Some(b) = cache.geometry.get(t.as_ref()) {
                out.extend_from_slice(b);
            } else {
                let b = serde_json::to_vec(&render(kind, cells, zone)).expect("writing to a Vec");
                out.extend_from_slice(&b);
                cache.geometry.insert(t.to_string(), b);
            }
        }
        (Kind::Value, [Cell::Real(r), _, _]) => w(out, &number(*r)),
        (Kind::Value, [Cell::Int(i), _, _]) => {
            serde_json::to_writer(out, i).expect("writing to a Vec")
        }
        (Kind::Value, [Cell::Null, Cell::Text(t), _]) => s(out, t),
        _ => w(out, &render(kind, cells, zone)),
    }
}

pub use tree::tree_into;
#[cfg(debug_assertions)]
pub use tree::tree_reference;
