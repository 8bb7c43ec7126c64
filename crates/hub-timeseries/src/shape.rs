//! Rows → JSON: value rendering per field kind, flat rows and the tree hierarchy.

use std::collections::BTreeMap;

use hub_query::timeseries::{DefList, Kind, OutColumn, Route};
use hub_store::timeseries::Cell;
use serde_json::{json, Map, Value};

use crate::params::{format_time, Zone};

/// Renders one field from its cells.
fn render(kind: Kind, cells: &[Cell], zone: Zone) -> Value {
    match (kind, cells) {
        (_, [Cell::Null]) => Value::Null,
        (Kind::Text, [c]) => match c {
            Cell::Text(s) => Value::String(s.clone()),
            Cell::Int(i) => Value::String(i.to_string()),
            Cell::Real(r) => Value::String(r.to_string()),
            Cell::Null => Value::Null,
        },
        (Kind::Bool, [Cell::Int(i)]) => Value::Bool(*i != 0),
        (Kind::Int, [Cell::Int(i)]) => json!(i),
        (Kind::Int, [Cell::Real(r)]) => number(*r),
        (Kind::Time, [Cell::Int(ms)]) => Value::String(format_time(*ms, zone)),
        (Kind::Json, [Cell::Text(t)]) => serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.clone())),
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
            (_, Cell::Text(t), _) => Value::String(t.clone()),
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
        serde_json::Number::from_f64(x).map(Value::Number).unwrap_or(Value::Null)
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
    out.insert("crs".into(), json!({"type": "name", "properties": {"name": "EPSG:4326"}}));
    if !pts.is_empty() {
        let f = |sel: fn(&(f64, f64)) -> f64, max: bool| {
            pts.iter()
                .map(sel)
                .fold(if max { f64::MIN } else { f64::MAX }, |a, b| if max { a.max(b) } else { a.min(b) })
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
    out.insert("coordinates".into(), g.get("coordinates").cloned().unwrap_or(Value::Null));
    Value::Object(out)
}

fn collect(c: &Value, out: &mut Vec<(f64, f64)>) {
    if let Some(a) = c.as_array() {
        if let (Some(x), Some(y)) = (a.first().and_then(Value::as_f64), a.get(1).and_then(Value::as_f64)) {
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

/// A tree node under construction; objects keep their keys sorted.
#[derive(Default)]
struct Obj(BTreeMap<String, Node>);

enum Node {
    Leaf(Value),
    Obj(Obj),
    List(Vec<Obj>),
}

impl Obj {
    fn obj(&mut self, key: &str) -> &mut Obj {
        let n = self.0.entry(key.to_string()).or_insert_with(|| Node::Obj(Obj::default()));
        if !matches!(n, Node::Obj(_)) {
            *n = Node::Obj(Obj::default());
        }
        match n {
            Node::Obj(o) => o,
            _ => unreachable!(),
        }
    }
    fn list(&mut self, key: &str) -> &mut Vec<Obj> {
        let n = self.0.entry(key.to_string()).or_insert_with(|| Node::List(Vec::new()));
        if !matches!(n, Node::List(_)) {
            *n = Node::List(Vec::new());
        }
        match n {
            Node::List(l) => l,
            _ => unreachable!(),
        }
    }
    fn set(&mut self, key: &str, json_path: Option<&str>, v: Value) {
        match json_path {
            Some(p) => {
                self.obj(key).0.insert(p.to_string(), Node::Leaf(v));
            }
            None => {
                self.0.insert(key.to_string(), Node::Leaf(v));
            }
        }
    }
    fn into_value(self, shownull: bool) -> Value {
        let mut m = Map::new();
        for (k, n) in self.0 {
            let structural = matches!(n, Node::Obj(_));
            let v = match n {
                Node::Leaf(v) => v,
                Node::Obj(o) => o.into_value(shownull),
                Node::List(l) => Value::Array(l.into_iter().map(|o| o.into_value(shownull)).collect()),
            };
            let empty_inline = structural && matches!(&v, Value::Object(o) if o.is_empty());
            if !shownull && (v.is_null() || empty_inline) {
                continue;
            }
            m.insert(k, v);
        }
        Value::Object(m)
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Builds the tree of a route from ordered rows.
pub fn tree(route: &Route, columns: &[OutColumn], rows: &[Vec<Cell>], zone: Zone, shownull: bool) -> Value {
    let mut root = Obj::default();
    let level3 = !matches!(route, Route::Stations | Route::MetadataHistory { .. });
    for row in rows {
        let vals = fields(columns, row, zone);
        let hidden = |k: &str| vals.iter().find(|(c, _)| c.key == k).map(|(_, v)| text(v)).unwrap_or_default();
        match route {
            Route::Edges => {
                let edge = root.obj(&hidden("_edgetype")).obj("edges").obj(&hidden("_edgecode"));
                for (c, v) in &vals {
                    let (key, path) = split(c);
                    match c.list {
                        Some(DefList::StationBegin) => edge.obj("ebegin").set(key, path, v.clone()),
                        Some(DefList::StationEnd) => edge.obj("eend").set(key, path, v.clone()),
                        Some(_) => edge.set(key, path, v.clone()),
                        None => {}
                    }
                }
            }
            Route::Events(_) => {
                let ev = root
                    .obj(&hidden("_eventorigin"))
                    .obj("eventseries")
                    .obj(&hidden("_eventseriesuuid"))
                    .obj("events")
                    .obj(&hidden("_eventuuid"));
                for (c, v) in &vals {
                    let (key, path) = split(c);
                    match c.list {
                        Some(DefList::Location) => ev.obj("evlocation").set(key, path, v.clone()),
                        Some(DefList::Provenance) => ev.obj("evprovenance").set(key, path, v.clone()),
                        Some(_) => ev.set(key, path, v.clone()),
                        None => {}
                    }
                }
            }
            _ => {
                let station = root.obj(&hidden("_stationtype")).obj("stations").obj(&hidden("_stationcode"));
                let mut measurement = Obj::default();
                let mut history = Obj::default();
                let mut has_m = false;
                for (c, v) in &vals {
                    let (key, path) = split(c);
                    match c.list {
                        Some(DefList::Station) => station.set(key, path, v.clone()),
                        Some(DefList::Parent) if level3 || matches!(route, Route::MetadataHistory { .. }) => {
                            station.obj("sparent").set(key, path, v.clone())
                        }
                        Some(DefList::Datatype) => station.obj("sdatatypes").obj(&hidden("_datatypename")).set(key, path, v.clone()),
                        Some(DefList::Measurement | DefList::Value) => {
                            has_m = true;
                            measurement.set(key, path, v.clone());
                        }
                        Some(DefList::Provenance) => {
                            has_m = true;
                            measurement.obj("mprovenance").set(key, path, v.clone());
                        }
                        Some(DefList::MetadataHistory) => history.set(key, path, v.clone()),
                        _ => {}
                    }
                }
                if matches!(route, Route::Latest | Route::History { .. }) {
                    let dt = station.obj("sdatatypes").obj(&hidden("_datatypename"));
                    let list = dt.list("tmeasurements");
                    if has_m {
                        list.push(measurement);
                    }
                }
                if let Route::MetadataHistory { .. } = route {
                    if !history.0.is_empty() {
                        station.list("smetadatahistory").push(history);
                    }
                }
            }
        }
    }
    root.into_value(shownull)
}

fn split(c: &OutColumn) -> (&str, Option<&str>) {
    match (c.kind, c.key.split_once('.')) {
        (Kind::Json, Some((k, p))) if c.list.is_some() => (k, Some(p)),
        _ => (c.key.as_str(), None),
    }
}
