//! Demo GeoShapes: simple deterministic polygons for every region, municipality and
//! district, so `/v1/GeoShapes` and `polygon=<shape>` work on the demo data. They are
//! not real boundaries: a municipality is an octagon of about 2.8 km radius around its
//! centre, a district one of about 1.1 km, a region the box around its municipalities'
//! centres widened by 0.03°. Stored in EPSG:4326 in the reference's item shape.

use chrono::NaiveDateTime;
use serde_json::{json, Value};

use crate::geo::Geo;
use crate::util::round_to;

/// Number of shapes [`documents`] emits.
pub(crate) fn count(geo: &Geo) -> u64 {
    (geo.regions.len() + geo.munis.len() + geo.districts.len()) as u64
}

/// The demo GeoShapes (entity `GeoShape`), apart from [`crate::content_documents`] so the
/// content generator's own counts stay as they are; they do not grow with the scale.
pub fn shape_documents(opts: &crate::DemoOptions, emit: &mut dyn FnMut(&'static str, Value)) {
    use chrono::Timelike;
    let now = opts
        .anchor
        .naive_utc()
        .with_nanosecond(0)
        .expect("zero nanoseconds is valid");
    documents(&Geo::build(), now, emit);
}

/// Number of documents [`shape_documents`] emits.
pub fn shape_document_count() -> u64 {
    count(&Geo::build())
}

/// A closed octagon ring around (lat, lon); `r` in degrees of latitude, longitude
/// stretched so the shape is round on the ground at 46.5° N.
fn octagon(lat: f64, lon: f64, r: f64) -> Value {
    let stretch = 1.0 / 46.5_f64.to_radians().cos();
    let mut ring: Vec<[f64; 2]> = (0..8)
        .map(|i| {
            let a = std::f64::consts::PI / 4.0 * f64::from(i) + std::f64::consts::PI / 8.0;
            [
                round_to(lon + r * stretch * a.cos(), 6),
                round_to(lat + r * a.sin(), 6),
            ]
        })
        .collect();
    ring.push(ring[0]);
    json!({"type": "Polygon", "coordinates": [ring]})
}

fn rect(min_lon: f64, min_lat: f64, max_lon: f64, max_lat: f64) -> Value {
    let (a, b, c, d) = (
        round_to(min_lon, 6),
        round_to(min_lat, 6),
        round_to(max_lon, 6),
        round_to(max_lat, 6),
    );
    json!({"type": "Polygon", "coordinates": [[[a, b], [c, b], [c, d], [a, d], [a, b]]]})
}

fn shape(
    id: String,
    kind: &str,
    name: String,
    mapping: Value,
    geometry: Value,
    now: NaiveDateTime,
) -> Value {
    json!({
        "Id": id, "Self": format!("GeoShape/{id}"), "Name": name, "Source": "hub-demo", "Type": kind, "Country": "IT",
        "_Meta": {"Id": id, "Type": "geoshape", "Source": "hub-demo", "Reduced": false, "LastUpdate": now.format("%Y-%m-%dT%H:%M:%S").to_string()},
        "LicenseInfo": {"Author": "", "License": "CC0", "ClosedData": false, "LicenseHolder": "Hub demo data"},
        "Mapping": mapping, "Srid": "EPSG:4326", "Geometry": geometry,
    })
}

fn place_name(de: &str, it: &str) -> String {
    if de == it {
        de.to_string()
    } else {
        format!("{it}/{de}")
    }
}

/// Emits the GeoShape documents: regions, then municipalities, then districts.
pub(crate) fn documents(geo: &Geo, now: NaiveDateTime, emit: &mut dyn FnMut(&'static str, Value)) {
    for (r, region) in geo.regions.iter().enumerate() {
        let members: Vec<_> = geo.munis.iter().filter(|m| m.region == r).collect();
        let (mut min_lon, mut min_lat, mut max_lon, mut max_lat) =
            (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for m in &members {
            (min_lon, min_lat, max_lon, max_lat) = (
                min_lon.min(m.lon),
                min_lat.min(m.lat),
                max_lon.max(m.lon),
                max_lat.max(m.lat),
            );
        }
        if members.is_empty() {
            continue;
        }
        let geometry = rect(
            min_lon - 0.03,
            min_lat - 0.03,
            max_lon + 0.03,
            max_lat + 0.03,
        );
        let id = format!("region_{}", region.id.to_lowercase());
        emit(
            "GeoShape",
            shape(
                id,
                "region",
                region.de.clone(),
                json!({"hub": {"id": region.id}}),
                geometry,
                now,
            ),
        );
    }
    for m in &geo.munis {
        let id = format!("municipality_{}", m.istat);
        let mapping = json!({"istat": {"id": m.istat}, "hub": {"id": m.id}});
        emit(
            "GeoShape",
            shape(
                id,
                "municipality",
                place_name(m.de, m.it),
                mapping,
                octagon(m.lat, m.lon, 0.025),
                now,
            ),
        );
    }
    for d in &geo.districts {
        let id = format!("district_{}", d.id.to_lowercase());
        emit(
            "GeoShape",
            shape(
                id,
                "district",
                place_name(&d.de, &d.it),
                json!({"hub": {"id": d.id}}),
                octagon(d.lat, d.lon, 0.01),
                now,
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_closed_shape_per_place_around_its_centre() {
        let geo = Geo::build();
        let now = chrono::NaiveDate::from_ymd_opt(2025, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap();
        let mut shapes = Vec::new();
        documents(&geo, now, &mut |entity, doc| {
            assert_eq!(entity, "GeoShape");
            shapes.push(doc);
        });
        assert_eq!(shapes.len() as u64, count(&geo));
        let m = &geo.munis[0];
        let doc = shapes
            .iter()
            .find(|d| d["Id"] == format!("municipality_{}", m.istat))
            .unwrap();
        let ring = doc["Geometry"]["coordinates"][0].as_array().unwrap();
        assert_eq!(ring.first(), ring.last());
        for p in ring {
            let (lon, lat) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
            assert!((lat - m.lat).abs() < 0.03 && (lon - m.lon).abs() < 0.04);
        }
        let mut ids: Vec<_> = shapes
            .iter()
            .map(|d| d["Id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), shapes.len(), "ids are unique");
    }
}
