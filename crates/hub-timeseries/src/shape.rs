//! Rows → JSON: value rendering per field kind, flat rows and the tree hierarchy.

use std::collections::{BTreeMap, HashMap};

use hub_query::timeseries::{DefList, Kind, OutColumn, Route};
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

/// A tree node under construction; objects keep their keys sorted.
#[derive(Default)]
struct Obj(BTreeMap<String, Node>);

enum Node {
    Leaf(Value),
    Obj(Obj),
    List(Vec<Item>),
}

/// A list element: an object under construction, or one already written as JSON.
enum Item {
    Obj(Obj),
    Raw(Vec<u8>),
}

impl Obj {
    fn obj(&mut self, key: &str) -> &mut Obj {
        let n = self
            .0
            .entry(key.to_string())
            .or_insert_with(|| Node::Obj(Obj::default()));
        if !matches!(n, Node::Obj(_)) {
            *n = Node::Obj(Obj::default());
        }
        match n {
            Node::Obj(o) => o,
            _ => unreachable!(),
        }
    }
    fn list(&mut self, key: &str) -> &mut Vec<Item> {
        let n = self
            .0
            .entry(key.to_string())
            .or_insert_with(|| Node::List(Vec::new()));
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
    /// Writes the object as [`Obj::into_value`] would serialize: nulls and empty inline
    /// objects dropped unless `shownull`.
    fn write(&self, shownull: bool, out: &mut Vec<u8>) {
        out.push(b'{');
        let mut first = true;
        for (k, n) in &self.0 {
            let mark = out.len();
            if !first {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, k).expect("writing to a Vec");
            out.push(b':');
            match n {
                Node::Leaf(v) => {
                    if !shownull && v.is_null() {
                        out.truncate(mark);
                        continue;
                    }
                    serde_json::to_writer(&mut *out, v).expect("writing to a Vec");
                }
                Node::Obj(o) => {
                    let start = out.len();
                    o.write(shownull, out);
                    if !shownull && &out[start..] == b"{}" {
                        out.truncate(mark);
                        continue;
                    }
                }
                Node::List(l) => {
                    out.push(b'[');
                    for (i, o) in l.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        match o {
                            Item::Obj(o) => o.write(shownull, out),
                            Item::Raw(b) => out.extend_from_slice(b),
                        }
                    }
                    out.push(b']');
                }
            }
            first = false;
        }
        out.push(b'}');
    }
    #[cfg(debug_assertions)]
    fn into_value(self, shownull: bool) -> Value {
        let mut m = Map::new();
        for (k, n) in self.0 {
            let structural = matches!(n, Node::Obj(_));
            let v = match n {
                Node::Leaf(v) => v,
                Node::Obj(o) => o.into_value(shownull),
                Node::List(l) => Value::Array(
                    l.into_iter()
                        .map(|o| match o {
                            Item::Obj(o) => o.into_value(shownull),
                            Item::Raw(b) => serde_json::from_slice(&b).unwrap_or(Value::Null),
                        })
                        .collect(),
                ),
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

/// Writes the tree of a route from ordered rows into `out`, byte-identical to serializing
/// [`tree_reference`]'s value.
pub fn tree_into(
    route: &Route,
    columns: &[OutColumn],
    rows: &[Vec<Cell>],
    zone: Zone,
    shownull: bool,
    out: &mut Vec<u8>,
) {
    build_tree(route, columns, rows, zone, shownull).write(shownull, out);
}

fn build_tree(
    route: &Route,
    columns: &[OutColumn],
    rows: &[Vec<Cell>],
    zone: Zone,
    shownull: bool,
) -> Obj {
    let mut root = Obj::default();
    let level3 = !matches!(route, Route::Stations | Route::MetadataHistory { .. });
    let mut offsets = Vec::with_capacity(columns.len());
    let mut off = 0;
    for c in columns {
        offsets.push(off);
        off += c.kind.width();
    }
    let cells = |ci: usize| offsets[ci]..offsets[ci] + columns[ci].kind.width();
    // Station, parent and data type fields, and the grouping keys: when a row repeats the
    // previous row's cells there, setting them again would change nothing.
    let station_cols: Vec<usize> = (0..columns.len())
        .filter(|&ci| {
            matches!(
                columns[ci].list,
                Some(DefList::Station | DefList::Parent | DefList::Datatype)
            ) || matches!(
                columns[ci].key.as_str(),
                "_stationtype" | "_stationcode" | "_datatypename"
            )
        })
        .collect();
    let layout = measurement_layout(route, columns);
    let mut cache = RenderCache::default();
    let mut prev: Option<&Vec<Cell>> = None;
    for row in rows {
        match route {
            Route::Edges => {
                let vals = fields(columns, row, zone);
                let hidden = |k: &str| {
                    vals.iter()
                        .find(|(c, _)| c.key == k)
                        .map(|(_, v)| text(v))
                        .unwrap_or_default()
                };
                let edge = root
                    .obj(&hidden("_edgetype"))
                    .obj("edges")
                    .obj(&hidden("_edgecode"));
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
                let vals = fields(columns, row, zone);
                let hidden = |k: &str| {
                    vals.iter()
                        .find(|(c, _)| c.key == k)
                        .map(|(_, v)| text(v))
                        .unwrap_or_default()
                };
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
                        Some(DefList::Provenance) => {
                            ev.obj("evprovenance").set(key, path, v.clone())
                        }
                        Some(_) => ev.set(key, path, v.clone()),
                        None => {}
                    }
                }
            }
            _ => {
                let col = |ci: usize| render(columns[ci].kind, &row[cells(ci)], zone);
                let hidden = |k: &str| {
                    columns
                        .iter()
                        .position(|c| c.key == k)
                        .map(|ci| text(&col(ci)))
                        .unwrap_or_default()
                };
                let same = prev.is_some_and(|p| {
                    station_cols
                        .iter()
                        .all(|&ci| p[cells(ci)] == row[cells(ci)])
                });
                prev = Some(row);
                let dtname = hidden("_datatypename");
                let station = root
                    .obj(&hidden("_stationtype"))
                    .obj("stations")
                    .obj(&hidden("_stationcode"));
                let mut measurement = Obj::default();
                let mut history = Obj::default();
                let mut has_m = false;
                for (ci, c) in columns.iter().enumerate() {
                    let (key, path) = split(c);
                    match c.list {
                        Some(DefList::Station) if !same => station.set(key, path, col(ci)),
                        Some(DefList::Parent)
                            if !same
                                && (level3 || matches!(route, Route::MetadataHistory { .. })) =>
                        {
                            station.obj("sparent").set(key, path, col(ci))
                        }
                        Some(DefList::Datatype) if !same => station
                            .obj("sdatatypes")
                            .obj(&dtname)
                            .set(key, path, col(ci)),
                        Some(DefList::Measurement | DefList::Value | DefList::Provenance)
                            if layout.is_some() =>
                        {
                            has_m = true
                        }
                        Some(DefList::Measurement | DefList::Value) => {
                            has_m = true;
                            measurement.set(key, path, col(ci));
                        }
                        Some(DefList::Provenance) => {
                            has_m = true;
                            measurement.obj("mprovenance").set(key, path, col(ci));
                        }
                        Some(DefList::MetadataHistory) => history.set(key, path, col(ci)),
                        _ => {}
                    }
                }
                if matches!(route, Route::Latest | Route::History { .. }) {
                    let dt = station.obj("sdatatypes").obj(&dtname);
                    let list = dt.list("tmeasurements");
                    if has_m {
                        match &layout {
                            Some(l) => {
                                let mut m = Vec::with_capacity(256);
                                l.write(columns, &offsets, row, zone, shownull, &mut cache, &mut m);
                                list.push(Item::Raw(m));
                            }
                            None => list.push(Item::Obj(measurement)),
                        }
                    }
                }
                if let Route::MetadataHistory { .. } = route {
                    if !history.0.is_empty() {
                        station.list("smetadatahistory").push(Item::Obj(history));
                    }
                }
            }
        }
    }
    root
}

/// Builds the tree of a route from ordered rows.
/// How a measurement object is written when its fields are plain keys: top-level entries
/// sorted by key (as the tree's maps sort them), `mprovenance` as a nested object.
struct MeasurementLayout {
    top: Vec<(Vec<u8>, Option<usize>)>,
    provenance: Vec<(Vec<u8>, usize)>,
}

fn measurement_layout(route: &Route, columns: &[OutColumn]) -> Option<MeasurementLayout> {
    if !matches!(route, Route::Latest | Route::History { .. }) {
        return None;
    }
    let mut top: Vec<(&str, Option<usize>)> = Vec::new();
    let mut provenance: Vec<(&str, usize)> = Vec::new();
    for (ci, c) in columns.iter().enumerate() {
        let (key, path) = split(c);
        match c.list {
            Some(DefList::Measurement | DefList::Value) if path.is_none() => {
                top.push((key, Some(ci)))
            }
            Some(DefList::Provenance) if path.is_none() => provenance.push((key, ci)),
            Some(DefList::Measurement | DefList::Value | DefList::Provenance) => return None,
            _ => {}
        }
    }
    if !provenance.is_empty() {
        top.push(("mprovenance", None));
    }
    top.sort_by(|a, b| a.0.cmp(b.0));
    provenance.sort_by(|a, b| a.0.cmp(b.0));
    if top.windows(2).any(|w| w[0].0 == w[1].0) || provenance.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    let prefix = |k: &str| {
        let mut b = serde_json::to_vec(k).expect("writing to a Vec");
        b.push(b':');
        b
    };
    Some(MeasurementLayout {
        top: top.into_iter().map(|(k, ci)| (prefix(k), ci)).collect(),
        provenance: provenance
            .into_iter()
            .map(|(k, ci)| (prefix(k), ci))
            .collect(),
    })
}

impl MeasurementLayout {
    /// Writes one measurement as [`Obj::write`] writes the object the tree would build.
    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        columns: &[OutColumn],
        offsets: &[usize],
        row: &[Cell],
        zone: Zone,
        shownull: bool,
        cache: &mut RenderCache,
        out: &mut Vec<u8>,
    ) {
        let field = |ci: usize, out: &mut Vec<u8>, cache: &mut RenderCache| {
            let c = &columns[ci];
            render_into(
                c.kind,
                &row[offsets[ci]..offsets[ci] + c.kind.width()],
                zone,
                out,
                cache,
            );
        };
        out.push(b'{');
        let mut first = true;
        for (prefix, ci) in &self.top {
            let mark = out.len();
            if !first {
                out.push(b',');
            }
            out.extend_from_slice(prefix);
            let start = out.len();
            match ci {
                Some(ci) => {
                    field(*ci, out, cache);
                    if !shownull && &out[start..] == b"null" {
                        out.truncate(mark);
                        continue;
                    }
                }
                None => {
                    out.push(b'{');
                    let mut pfirst = true;
                    for (pprefix, pci) in &self.provenance {
                        let pmark = out.len();
                        if !pfirst {
                            out.push(b',');
                        }
                        out.extend_from_slice(pprefix);
                        let pstart = out.len();
                        field(*pci, out, cache);
                        if !shownull && &out[pstart..] == b"null" {
                            out.truncate(pmark);
                            continue;
                        }
                        pfirst = false;
                    }
                    out.push(b'}');
                    if !shownull && &out[start..] == b"{}" {
                        out.truncate(mark);
                        continue;
                    }
                }
            }
            first = false;
        }
        out.push(b'}');
    }
}

#[cfg(debug_assertions)]
pub fn tree_reference(
    route: &Route,
    columns: &[OutColumn],
    rows: &[Vec<Cell>],
    zone: Zone,
    shownull: bool,
) -> Value {
    let mut root = Obj::default();
    let level3 = !matches!(route, Route::Stations | Route::MetadataHistory { .. });
    for row in rows {
        let vals = fields(columns, row, zone);
        let hidden = |k: &str| {
            vals.iter()
                .find(|(c, _)| c.key == k)
                .map(|(_, v)| text(v))
                .unwrap_or_default()
        };
        match route {
            Route::Edges => {
                let edge = root
                    .obj(&hidden("_edgetype"))
                    .obj("edges")
                    .obj(&hidden("_edgecode"));
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
                        Some(DefList::Provenance) => {
                            ev.obj("evprovenance").set(key, path, v.clone())
                        }
                        Some(_) => ev.set(key, path, v.clone()),
                        None => {}
                    }
                }
            }
            _ => {
                let station = root
                    .obj(&hidden("_stationtype"))
                    .obj("stations")
                    .obj(&hidden("_stationcode"));
                let mut measurement = Obj::default();
                let mut history = Obj::default();
                let mut has_m = false;
                for (c, v) in &vals {
                    let (key, path) = split(c);
                    match c.list {
                        Some(DefList::Station) => station.set(key, path, v.clone()),
                        Some(DefList::Parent)
                            if level3 || matches!(route, Route::MetadataHistory { .. }) =>
                        {
                            station.obj("sparent").set(key, path, v.clone())
                        }
                        Some(DefList::Datatype) => station
                            .obj("sdatatypes")
                            .obj(&hidden("_datatypename"))
                            .set(key, path, v.clone()),
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
                        list.push(Item::Obj(measurement));
                    }
                }
                if let Route::MetadataHistory { .. } = route {
                    if !history.0.is_empty() {
                        station.list("smetadatahistory").push(Item::Obj(history));
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
