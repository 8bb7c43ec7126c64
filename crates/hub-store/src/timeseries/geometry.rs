//! Bounding boxes and line text of the geometries the Time Series tables store beside
//! edges and event locations (both backends write them for the bounding-box filters).
//! Pure functions; no SQL.

use serde_json::Value;

use super::EdgeInput;

/// `(min x, min y, max x, max y)` of points; `(MAX, MAX, MIN, MIN)` when there are none.
fn points_bbox(points: impl IntoIterator<Item = (f64, f64)>) -> (f64, f64, f64, f64) {
    points.into_iter().fold(
        (f64::MAX, f64::MAX, f64::MIN, f64::MIN),
        |(a, b, c, d), (x, y)| (a.min(x), b.min(y), c.max(x), d.max(y)),
    )
}

/// The bounding box of a GeoJSON geometry's coordinates, at any nesting depth (both
/// backends store it beside an event location for the bounding-box filters).
pub(crate) fn geometry_bbox(g: &Value) -> (f64, f64, f64, f64) {
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
    let mut all = Vec::new();
    collect(g.get("coordinates").unwrap_or(&Value::Null), &mut all);
    points_bbox(all)
}

/// An edge's line as GeoJSON text and its bounding box.
pub(crate) fn edge_line(e: &EdgeInput) -> (String, (f64, f64, f64, f64)) {
    let coords: Vec<[f64; 2]> = e.line.iter().map(|(x, y)| [*x, *y]).collect();
    let geom = serde_json::json!({"type": "LineString", "coordinates": coords}).to_string();
    (geom, points_bbox(e.line.iter().copied()))
}
