//! KML and GPX files to GeoJSON, as the reference's converter does it: every position
//! of the file, in document order, becomes one `LineString` — KML `<coordinates>` of
//! any geometry, GPX track points, route points and waypoints. The elevation is kept as
//! the third ordinate when the file gives one (GPX `<ele>`, KML `lon,lat,alt`).

use quick_xml::events::Event;
use quick_xml::Reader;
use serde_json::{json, Value};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConvertError {
    #[error("the file is not well-formed XML: {0}")]
    Xml(String),
    #[error("the file contains no positions")]
    Empty,
    #[error("'{0}' is not a coordinate")]
    BadCoordinate(String),
}

/// Converts a KML document to a GeoJSON `LineString` geometry.
pub fn kml_to_geojson(xml: &str) -> Result<Value, ConvertError> {
    let mut reader = Reader::from_str(strip_bom(xml));
    let mut in_coordinates = false;
    let mut text = String::new();
    let mut positions: Vec<Vec<f64>> = Vec::new();
    loop {
        match reader
            .read_event()
            .map_err(|e| ConvertError::Xml(e.to_string()))?
        {
            Event::Start(e) if e.local_name().as_ref() == b"coordinates" => {
                in_coordinates = true;
                text.clear();
            }
            Event::Text(t) if in_coordinates => {
                text.push_str(&t.unescape().map_err(|e| ConvertError::Xml(e.to_string()))?)
            }
            Event::CData(t) if in_coordinates => text.push_str(&String::from_utf8_lossy(&t)),
            Event::End(e) if e.local_name().as_ref() == b"coordinates" => {
                in_coordinates = false;
                for tuple in text.split_whitespace() {
                    let values = tuple
                        .split(',')
                        .map(|v| v.parse::<f64>().ok().filter(|f| f.is_finite()))
                        .collect::<Option<Vec<f64>>>()
                        .filter(|v| (2..=3).contains(&v.len()))
                        .ok_or_else(|| {
                            ConvertError::BadCoordinate(tuple.chars().take(60).collect())
                        })?;
                    positions.push(values);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    line_string(positions)
}

/// Converts a GPX document to a GeoJSON `LineString` geometry.
pub fn gpx_to_geojson(xml: &str) -> Result<Value, ConvertError> {
    let mut reader = Reader::from_str(strip_bom(xml));
    let mut positions: Vec<Vec<f64>> = Vec::new();
    // The point being read (lon, lat, elevation) and whether we are inside its <ele>.
    let mut current: Option<(f64, f64, Option<f64>)> = None;
    let mut in_ele = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| ConvertError::Xml(e.to_string()))?;
        match &event {
            Event::Start(e) | Event::Empty(e)
                if matches!(e.local_name().as_ref(), b"wpt" | b"trkpt" | b"rtept") =>
            {
                let mut lat = None;
                let mut lon = None;
                for attr in e.attributes().flatten() {
                    let value = attr
                        .unescape_value()
                        .map_err(|e| ConvertError::Xml(e.to_string()))?;
                    let parsed = value.trim().parse::<f64>().ok().filter(|f| f.is_finite());
                    match attr.key.local_name().as_ref() {
                        b"lat" => {
                            lat =
                                Some(parsed.ok_or_else(|| {
                                    ConvertError::BadCoordinate(value.to_string())
                                })?)
                        }
                        b"lon" => {
                            lon =
                                Some(parsed.ok_or_else(|| {
                                    ConvertError::BadCoordinate(value.to_string())
                                })?)
                        }
                        _ => {}
                    }
                }
                let (Some(lat), Some(lon)) = (lat, lon) else {
                    return Err(ConvertError::BadCoordinate(
                        "a point without lat and lon".into(),
                    ));
                };
                if matches!(event, Event::Empty(_)) {
                    positions.push(vec![lon, lat]);
                } else {
                    current = Some((lon, lat, None));
                }
            }
            Event::Start(e) if e.local_name().as_ref() == b"ele" && current.is_some() => {
                in_ele = true
            }
            Event::Text(t) if in_ele => {
                let text = t.unescape().map_err(|e| ConvertError::Xml(e.to_string()))?;
                let ele = text
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| ConvertError::BadCoordinate(text.to_string()))?;
                if let Some(point) = current.as_mut() {
                    point.2 = Some(ele);
                }
            }
            Event::End(e) if e.local_name().as_ref() == b"ele" => in_ele = false,
            Event::End(e) if matches!(e.local_name().as_ref(), b"wpt" | b"trkpt" | b"rtept") => {
                if let Some((lon, lat, ele)) = current.take() {
                    positions.push(match ele {
                        Some(z) => vec![lon, lat, z],
                        None => vec![lon, lat],
                    });
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    line_string(positions)
}

fn strip_bom(text: &str) -> &str {
    text.trim_start_matches('\u{feff}')
}

fn line_string(positions: Vec<Vec<f64>>) -> Result<Value, ConvertError> {
    if positions.is_empty() {
        return Err(ConvertError::Empty);
    }
    Ok(json!({"type": "LineString", "coordinates": positions}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kml_coordinates_in_order() {
        let kml = "<kml><Placemark><LineString><coordinates>11.1,46.1 11.2,46.2,1500\n</coordinates></LineString></Placemark></kml>";
        assert_eq!(
            kml_to_geojson(kml).unwrap(),
            json!({"type": "LineString", "coordinates": [[11.1, 46.1], [11.2, 46.2, 1500.0]]})
        );
    }

    #[test]
    fn gpx_points_with_elevation() {
        let gpx = r#"<gpx><wpt lat="46.1" lon="11.1"><ele>3.5</ele></wpt><trk><trkseg><trkpt lat="46.2" lon="11.2"/></trkseg></trk></gpx>"#;
        assert_eq!(
            gpx_to_geojson(gpx).unwrap(),
            json!({"type": "LineString", "coordinates": [[11.1, 46.1, 3.5], [11.2, 46.2]]})
        );
    }

    #[test]
    fn bad_files_are_errors() {
        assert_eq!(gpx_to_geojson("<gpx></gpx>"), Err(ConvertError::Empty));
        assert!(matches!(
            gpx_to_geojson(r#"<gpx><wpt lat="x" lon="1"/></gpx>"#),
            Err(ConvertError::BadCoordinate(_))
        ));
        assert!(matches!(
            kml_to_geojson("<kml><coordinates>1,2</kml>"),
            Err(ConvertError::Xml(_))
        ));
        assert!(matches!(
            kml_to_geojson("<kml><coordinates>a,b</coordinates></kml>"),
            Err(ConvertError::BadCoordinate(_))
        ));
    }
}
