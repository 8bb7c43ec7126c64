//! Rows → the tree of a route: stations by type, data types under stations, measurements
//! under data types. [`tree_into`] writes the JSON directly; [`tree_reference`] (debug
//! builds) builds the same tree as a `serde_json::Value`, and the two must agree byte for
//! byte.

use std::collections::BTreeMap;

use hub_query::timeseries::{DefList, Kind, OutColumn, Route};
use hub_store::timeseries::Cell;
use serde_json::Value;

use super::{fields, render, render_into, RenderCache};
use crate::params::Zone;

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
        let mut m = serde_json::Map::new();
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
    // Per column, once rather than per row: its key and JSON path, and where the
    // grouping keys are.
    let splits: Vec<(&str, Option<&str>)> = columns.iter().map(split).collect();
    let position = |k: &str| columns.iter().position(|c| c.key == k);
    let (type_at, code_at, dtname_at) = (
        position("_stationtype"),
        position("_stationcode"),
        position("_datatypename"),
    );
    let mut cache = RenderCache::default();
    let mut prev: Option<&Vec<Cell>> = None;
    for row in rows {
        match route {
            Route::Edges => place_edge(&mut root, &fields(columns, row, zone)),
            Route::Events(_) => place_event(&mut root, &fields(columns, row, zone)),
            _ => {
                let col = |ci: usize| render(columns[ci].kind, &row[cells(ci)], zone);
                let hidden = |at: Option<usize>| at.map(|ci| text(&col(ci))).unwrap_or_default();
                let same = prev.is_some_and(|p| {
                    station_cols
                        .iter()
                        .all(|&ci| p[cells(ci)] == row[cells(ci)])
                });
                prev = Some(row);
                let dtname = hidden(dtname_at);
                let station = root
                    .obj(&hidden(type_at))
                    .obj("stations")
                    .obj(&hidden(code_at));
                let mut measurement = Obj::default();
                let mut history = Obj::default();
                let mut has_m = false;
                for (ci, c) in columns.iter().enumerate() {
                    let (key, path) = splits[ci];
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
        let hidden = |k: &str| grouping_key(&vals, k);
        match route {
            Route::Edges => place_edge(&mut root, &vals),
            Route::Events(_) => place_event(&mut root, &vals),
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

/// The value of a grouping column (`_edgetype`, `_eventuuid`, …) in a row's fields.
fn grouping_key(vals: &[(&OutColumn, Value)], key: &str) -> String {
    vals.iter()
        .find(|(c, _)| c.key == key)
        .map(|(_, v)| text(v))
        .unwrap_or_default()
}

/// Places one edge row: `<edgetype>.edges.<edgecode>`, its stations under `ebegin` and
/// `eend`. Both the writer and the debug reference place edges and events this way.
fn place_edge(root: &mut Obj, vals: &[(&OutColumn, Value)]) {
    let edge = root
        .obj(&grouping_key(vals, "_edgetype"))
        .obj("edges")
        .obj(&grouping_key(vals, "_edgecode"));
    set_columns(
        edge,
        vals,
        [
            (DefList::StationBegin, "ebegin"),
            (DefList::StationEnd, "eend"),
        ],
    );
}

/// Places one event row: `<origin>.eventseries.<series uuid>.events.<event uuid>`, its
/// location under `evlocation` and its provenance under `evprovenance`.
fn place_event(root: &mut Obj, vals: &[(&OutColumn, Value)]) {
    let ev = root
        .obj(&grouping_key(vals, "_eventorigin"))
        .obj("eventseries")
        .obj(&grouping_key(vals, "_eventseriesuuid"))
        .obj("events")
        .obj(&grouping_key(vals, "_eventuuid"));
    set_columns(
        ev,
        vals,
        [
            (DefList::Location, "evlocation"),
            (DefList::Provenance, "evprovenance"),
        ],
    );
}

/// Sets a row's output columns on `node`: those of the two `nested` lists under their
/// own key, the others on `node` itself; columns of no list are grouping keys only.
fn set_columns(node: &mut Obj, vals: &[(&OutColumn, Value)], nested: [(DefList, &str); 2]) {
    for (c, v) in vals {
        let Some(list) = c.list else { continue };
        let (key, path) = split(c);
        match nested.iter().find(|(nested, _)| *nested == list) {
            Some((_, under)) => node.obj(under).set(key, path, v.clone()),
            None => node.set(key, path, v.clone()),
        }
    }
}

fn split(c: &OutColumn) -> (&str, Option<&str>) {
    match (c.kind, c.key.split_once('.')) {
        (Kind::Json, Some((k, p))) if c.list.is_some() => (k, Some(p)),
        _ => (c.key.as_str(), None),
    }
}
