//! SQL functions the Time Series queries of `hub-query` expect on SQLite: `regexp`
//! (regex crate, size-limited, compiled once per statement), JSON path access with
//! PostgreSQL `#>`/`#>>` semantics, great-circle distance, and the exact line/box test
//! behind `bbi` on line geometries (the bounding-box columns do the prefilter).

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::Connection;
use serde_json::Value;

use hub_query::timeseries::REGEX_SIZE_LIMIT;

pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("regexp", 2, flags, |ctx| {
        let re = ctx.get_or_create_aux(
            0,
            |v| -> Result<regex::Regex, Box<dyn std::error::Error + Send + Sync>> {
                let pattern = v.as_str()?;
                Ok(regex::RegexBuilder::new(pattern)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()?)
            },
        )?;
        let text = match ctx.get_raw(1) {
            rusqlite::types::ValueRef::Null => return Ok(None),
            rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            rusqlite::types::ValueRef::Integer(i) => i.to_string(),
            rusqlite::types::ValueRef::Real(r) => r.to_string(),
            rusqlite::types::ValueRef::Blob(_) => return Ok(None),
        };
        Ok(Some(re.is_match(&text)))
    })?;
    conn.create_scalar_function("hub_json_json", 2, flags, |ctx| {
        Ok(json_at(ctx)?.map(|v| v.to_string()))
    })?;
    conn.create_scalar_function("hub_json_text", 2, flags, |ctx| {
        Ok(json_at(ctx)?.map(|v| match v {
            Value::String(s) => s,
            other => other.to_string(),
        }))
    })?;
    conn.create_scalar_function("hub_json_num", 2, flags, |ctx| {
        Ok(json_at(ctx)?.and_then(|v| v.as_f64()))
    })?;
    conn.create_scalar_function("hub_distance", 4, flags, |ctx| {
        let (x1, y1, x2, y2): (Option<f64>, Option<f64>, f64, f64) =
            (ctx.get(0)?, ctx.get(1)?, ctx.get(2)?, ctx.get(3)?);
        Ok(match (x1, y1) {
            (Some(x1), Some(y1)) => Some(haversine(x1, y1, x2, y2)),
            _ => None,
        })
    })?;
    conn.create_scalar_function("hub_geom_intersects_box", 5, flags, |ctx| {
        let geom: Option<String> = ctx.get(0)?;
        let bbox = [
            ctx.get::<f64>(1)?,
            ctx.get::<f64>(2)?,
            ctx.get::<f64>(3)?,
            ctx.get::<f64>(4)?,
        ];
        Ok(geom
            .and_then(|g| serde_json::from_str::<Value>(&g).ok())
            .map(|g| geometry_intersects_box(&g, bbox) as i64))
    })?;
    Ok(())
}

/// Value at a dotted path (`a.0.b`; empty = the whole document); JSON null → None.
fn json_at(ctx: &Context<'_>) -> rusqlite::Result<Option<Value>> {
    let doc: Option<String> = ctx.get(0)?;
    let path: String = ctx.get(1)?;
    let Some(doc) = doc else { return Ok(None) };
    let Ok(mut v) = serde_json::from_str::<Value>(&doc) else {
        return Ok(None);
    };
    if !path.is_empty() {
        for seg in path.split('.') {
            v = match v {
                Value::Object(mut m) => match m.remove(seg) {
                    Some(x) => x,
                    None => return Ok(None),
                },
                Value::Array(mut a) => match seg.parse::<i64>() {
                    Ok(i) => {
                        let i = if i < 0 { a.len() as i64 + i } else { i };
                        if i < 0 || i as usize >= a.len() {
                            return Ok(None);
                        }
                        a.swap_remove(i as usize)
                    }
                    Err(_) => return Ok(None),
                },
                _ => return Ok(None),
            };
        }
    }
    Ok(if v.is_null() { None } else { Some(v) })
}

/// Great-circle distance in metres between two lon/lat points.
pub fn haversine(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    const R: f64 = 6_371_008.8;
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = p2 - p1;
    let dl = (lon2 - lon1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * R * a.sqrt().asin()
}

fn points(coords: &Value, out: &mut Vec<Vec<(f64, f64)>>) {
    // Collects every line (sequence of positions) of a coordinates array of any depth.
    if let Some(arr) = coords.as_array() {
        if arr
            .first()
            .and_then(|p| p.as_array())
            .is_some_and(|p| p.first().is_some_and(Value::is_number))
        {
            out.push(
                arr.iter()
                    .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                    .collect(),
            );
        } else if arr.first().is_some_and(Value::is_number) {
            if let (Some(x), Some(y)) = (arr[0].as_f64(), arr.get(1).and_then(Value::as_f64)) {
                out.push(vec![(x, y)]);
            }
        } else {
            arr.iter().for_each(|c| points(c, out));
        }
    }
}

/// True when any vertex lies in the box or any segment crosses it.
pub fn geometry_intersects_box(g: &Value, [xmin, ymin, xmax, ymax]: [f64; 4]) -> bool {
    let mut lines = Vec::new();
    points(g.get("coordinates").unwrap_or(&Value::Null), &mut lines);
    let inside = |(x, y): (f64, f64)| x >= xmin && x <= xmax && y >= ymin && y <= ymax;
    lines.iter().any(|l| {
        l.iter().any(|p| inside(*p))
            || l.windows(2)
                .any(|w| segment_hits_box(w[0], w[1], [xmin, ymin, xmax, ymax]))
    })
}

/// Liang–Barsky clipping: does the segment touch the box?
fn segment_hits_box(
    (x0, y0): (f64, f64),
    (x1, y1): (f64, f64),
    [xmin, ymin, xmax, ymax]: [f64; 4],
) -> bool {
    let (dx, dy) = (x1 - x0, y1 - y0);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, x0 - xmin),
        (dx, xmax - x0),
        (-dy, y0 - ymin),
        (dy, ymax - y0),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_crossing_a_box_without_a_vertex_inside_intersects() {
        let g: Value =
            serde_json::json!({"type": "LineString", "coordinates": [[0.0, 0.5], [2.0, 0.5]]});
        assert!(geometry_intersects_box(&g, [0.9, 0.0, 1.1, 1.0]));
        assert!(!geometry_intersects_box(&g, [0.9, 0.6, 1.1, 1.0]));
    }

    #[test]
    fn distance_bolzano_merano_is_about_24_km() {
        let d = haversine(11.3548, 46.4983, 11.1620, 46.6713);
        assert!((d - 24_000.0).abs() < 1500.0, "{d}");
    }
}
