//! GeoJSON (RFC 7946) output of Content API lists and documents, and the feature builder
//! the OGC API – Features crate uses for the same documents.
//!
//! A feature's geometry is the document's position by the store's one rule
//! ([`hub_store::index::coordinates`]: the default `GpsInfo` entry, else its "position",
//! else the first point, else top-level coordinates), so what a bounding-box filter
//! matches and what the map shows are the same point; documents without one get
//! `"geometry": null`. Its properties are the document exactly as the JSON answer shapes
//! it (`fields`, `language`, `removenullvalues`, closed-data reduction), its `id` the
//! document's `Id`.
//!
//! The shaped document may no longer carry its position (`fields=Id`), so the handler
//! takes it from the visible stored document: inside [`scope`] (set by the format layer
//! when GeoJSON is asked for), list and item handlers attach a [`Places`] extension to
//! their response, one entry per item in order, and the layer renders from it.
//!
//! Owns: feature and collection text. Must not: choose documents or shape them (that is
//! `routes`/`shape`), or transform coordinates beyond asking `hub-geo`.

use std::sync::LazyLock;

use hub_geo::{srid::transform, Geometry, Srid};
use serde_json::{json, Value};

use crate::json_text::{array_items, member, object_members};
use crate::pruned_parse::{self, KeyTree};

/// Where one document is and what it is called: read from the visible stored document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Place {
    pub id: Option<String>,
    /// `(latitude, longitude)` in EPSG:4326.
    pub position: Option<(f64, f64)>,
}

impl Place {
    /// The place of a stored document (JSON text); a document that does not parse has none.
    pub fn of(stored: &str) -> Place {
        // Only the members the place reads are built; the parser skips every other one
        // without allocating. A whole `Value` per document was 60 % of an OGC page.
        static MEMBERS: LazyLock<KeyTree> = LazyLock::new(|| KeyTree::top_level(&PLACE_MEMBERS));
        match pruned_parse::parse(stored, &MEMBERS) {
            Ok(members) => Place::of_value(&members),
            Err(_) => Place::default(),
        }
    }

    /// The place of a stored document and its `Shortname` (what a vector tile's point
    /// carries), parsed like [`Place::of`]; `None` when the document does not parse.
    pub fn named(stored: &str) -> Option<(Place, Option<String>)> {
        let members = pruned_parse::parse(stored, Place::named_members()).ok()?;
        let name = members
            .get("Shortname")
            .and_then(Value::as_str)
            .map(str::to_string);
        Some((Place::of_value(&members), name))
    }

    /// The top-level members [`Place::named`] reads.
    pub(crate) fn named_members() -> &'static KeyTree {
        static MEMBERS: LazyLock<KeyTree> = LazyLock::new(|| {
            let mut members = PLACE_MEMBERS.to_vec();
            members.push("Shortname");
            KeyTree::top_level(&members)
        });
        &MEMBERS
    }

    pub fn of_value(doc: &Value) -> Place {
        Place {
            id: doc.get("Id").and_then(Value::as_str).map(str::to_string),
            position: hub_store::index::coordinates(doc),
        }
    }
}

/// The top-level members [`Place::of_value`] and [`hub_store::index::coordinates`] read;
/// a test keeps this list and the rule in step.
const PLACE_MEMBERS: [&str; 6] = ["Id", "GpsInfo", "Latitude", "Longitude", "Geo", "GpsPoints"];

/// The places of a response's items, in order (a response extension).
#[derive(Debug, Clone, Default)]
pub struct Places(pub Vec<Place>);

tokio::task_local! {
    static WANTED: bool;
}

/// Runs a request's handling with GeoJSON asked for: handlers then attach [`Places`].
pub async fn scope<F: std::future::Future>(work: F) -> F::Output {
    WANTED.scope(true, work).await
}

/// True inside [`scope`]: the handler should attach the places of what it returns.
pub fn wanted() -> bool {
    WANTED.try_with(|v| *v).unwrap_or(false)
}

/// How coordinates are written: the CRS and its axis order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCrs {
    pub srid: Srid,
    /// True for EPSG:4326 as its authority defines it (latitude first), which OGC API
    /// Part 2 requires when a client asks for that CRS by URI; GeoJSON and CRS84 are
    /// longitude first.
    pub latitude_first: bool,
}

impl OutputCrs {
    /// RFC 7946 GeoJSON: WGS 84 longitude, latitude.
    pub const CRS84: OutputCrs = OutputCrs {
        srid: Srid::Wgs84,
        latitude_first: false,
    };
}

/// The geometry object of a position, or `null`. A position the projection cannot
/// carry (outside its domain) is `null` too rather than a wrong point.
pub fn point_geometry(position: Option<(f64, f64)>, crs: OutputCrs) -> Value {
    let Some((lat, lon)) = position else {
        return Value::Null;
    };
    let point = Geometry::Point(hub_geo::geo::Point::new(lon, lat));
    let Ok(Geometry::Point(p)) = transform(&point, Srid::Wgs84, crs.srid) else {
        return Value::Null;
    };
    let (x, y) = if crs.latitude_first {
        (p.y(), p.x())
    } else {
        (p.x(), p.y())
    };
    json!({"type": "Point", "coordinates": [x, y]})
}

/// One feature as JSON text: `properties` is already-serialised JSON (a shaped document).
pub fn feature_text(place: &Place, properties: &str, crs: OutputCrs) -> String {
    let mut out = String::with_capacity(properties.len() + 128);
    write_feature(&mut out, place, properties, crs);
    out
}

/// [`feature_text`] appended to `out`: a page of features is written into one buffer,
/// each document's text copied once.
pub fn write_feature(out: &mut String, place: &Place, properties: &str, crs: OutputCrs) {
    out.push_str("{\"type\":\"Feature\",\"id\":");
    match place.id.as_deref() {
        Some(id) => out.push_str(&Value::String(id.to_string()).to_string()),
        None => out.push_str("null"),
    }
    out.push_str(",\"geometry\":");
    out.push_str(&point_geometry(place.position, crs).to_string());
    out.push_str(",\"properties\":");
    out.push_str(properties);
    out.push('}');
}

/// The FeatureCollection for a Content API answer (`body`: the list envelope or one
/// document, as the handler wrote it) and the places the handler attached. The envelope's
/// paging figures stay as foreign members and its page links become `links`. Each item's
/// text is its feature's `properties` as written: the answer is wrapped, not parsed and
/// written again (that cost a page of 100 documents twelve times its JSON). `None` when
/// the body is not an object, or its items and the places differ in number.
pub fn render_content(body: &str, places: &[Place], self_url: &str) -> Option<String> {
    let members = object_members(body)?;
    let member = |name: &str| member(&members, name);
    let Some(items) = member("Items").and_then(array_items) else {
        // One document.
        let place = places.first().cloned().unwrap_or_default();
        return Some(feature_text(&place, body.trim(), OutputCrs::CRS84));
    };
    if items.len() != places.len() {
        return None;
    }
    let mut out = String::with_capacity(body.len() + 128 * items.len() + 512);
    out.push_str("{\"type\":\"FeatureCollection\"");
    for key in ["TotalResults", "TotalPages", "CurrentPage", "Seed"] {
        if let Some(value) = member(key) {
            out.push_str(&format!(",\"{key}\":{value}"));
        }
    }
    let mut links = vec![json!({"rel": "self", "type": "application/geo+json", "href": self_url})];
    for (key, rel) in [("PreviousPage", "prev"), ("NextPage", "next")] {
        if let Some(href) = member(key).and_then(|v| serde_json::from_str::<String>(v).ok()) {
            links.push(json!({"rel": rel, "type": "application/geo+json", "href": href}));
        }
    }
    out.push_str(&format!(",\"links\":{}", Value::Array(links)));
    out.push_str(",\"features\":[");
    for (i, (item, place)) in items.iter().zip(places).enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_feature(&mut out, place, item, OutputCrs::CRS84);
    }
    out.push_str("]}");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_follows_the_stores_rule_and_missing_is_null() {
        let place = Place::of(
            r#"{"Id":"A","GpsInfo":[{"Gpstype":"valleystationpoint","Latitude":1,"Longitude":2},{"Gpstype":"position","Latitude":46.5,"Longitude":11.25}]}"#,
        );
        assert_eq!(place.position, Some((46.5, 11.25)));
        let f: Value = serde_json::from_str(&feature_text(&place, "{}", OutputCrs::CRS84)).unwrap();
        assert_eq!(f["geometry"]["coordinates"], json!([11.25, 46.5]));
        assert_eq!(f["id"], "A");
        let none = Place::of(r#"{"Id":"B"}"#);
        let f: Value = serde_json::from_str(&feature_text(&none, "{}", OutputCrs::CRS84)).unwrap();
        assert_eq!(f["geometry"], Value::Null);
    }

    /// The lean read and a whole parse agree on every way a document can say where it is.
    #[test]
    fn reading_only_the_place_members_finds_what_the_whole_document_says() {
        let docs = [
            r#"{"Id":"A","Detail":{"de":{"Title":"x"}},"GpsInfo":[{"Gpstype":"a","Latitude":1,"Longitude":2},{"Default":true,"Latitude":46.5,"Longitude":11.25},{"Gpstype":"position","Latitude":"1","Longitude":"2"}]}"#,
            r#"{"Latitude":46.1,"Longitude":11.1,"Id":"B","Tags":[1,2,3]}"#,
            r#"{"Id":"C","Geo":{"position":{"Latitude":46.2,"Longitude":11.2}}}"#,
            r#"{"Id":"D","GpsPoints":{"position":{"Latitude":46.3,"Longitude":11.3}}}"#,
            r#"{"Id":"E","GpsInfo":null,"Latitude":null}"#,
            r#"{"Id":"F","GpsInfo":{"not":"a list"},"Geo":[1]}"#,
            r#"{"Id":"G","Id":"H","Latitude":46.4,"Longitude":11.4}"#,
            r#"{"Id":7}"#,
            r#"not json"#,
        ];
        for text in docs {
            let whole = serde_json::from_str::<Value>(text)
                .map(|doc| Place::of_value(&doc))
                .unwrap_or_default();
            assert_eq!(Place::of(text), whole, "{text}");
        }
        assert_eq!(Place::of(docs[0]).position, Some((46.5, 11.25)));
        assert_eq!(Place::of(docs[6]).id.as_deref(), Some("H"));
    }

    #[test]
    fn a_named_place_reads_the_shortname_beside_the_place() {
        let docs = [
            r#"{"Shortname":"Hütte \"Alm\"","Detail":{"de":{"Shortname":"no"}},"Id":"A","Latitude":46.1,"Longitude":11.1}"#,
            r#"{"Id":"B","Shortname":null,"GpsInfo":[{"Latitude":46.2,"Longitude":11.2}]}"#,
            r#"{"Id":"C","Shortname":7}"#,
        ];
        for text in docs {
            let whole: Value = serde_json::from_str(text).unwrap();
            let (place, name) = Place::named(text).unwrap();
            assert_eq!(place, Place::of_value(&whole), "{text}");
            assert_eq!(name.as_deref(), whole["Shortname"].as_str(), "{text}");
        }
        assert_eq!(
            Place::named(docs[0]).unwrap().1.as_deref(),
            Some("Hütte \"Alm\"")
        );
        assert_eq!(Place::named("not json"), None);
    }

    #[test]
    fn epsg_4326_by_uri_is_latitude_first_and_projections_are_metres() {
        let at = Some((46.5, 11.25));
        let latlon = point_geometry(
            at,
            OutputCrs {
                srid: Srid::Wgs84,
                latitude_first: true,
            },
        );
        assert_eq!(latlon["coordinates"], json!([46.5, 11.25]));
        let utm = point_geometry(
            at,
            OutputCrs {
                srid: Srid::Utm32N,
                latitude_first: false,
            },
        );
        let x = utm["coordinates"][0].as_f64().unwrap();
        let y = utm["coordinates"][1].as_f64().unwrap();
        // 11.25° E lies 2.25° east of zone 32's central meridian (9° E).
        assert!((672_000.0..675_000.0).contains(&x), "{x}");
        assert!((5_150_000.0..5_155_000.0).contains(&y), "{y}");
    }

    #[test]
    fn a_list_becomes_a_collection_with_links_in_item_order() {
        let body = json!({"TotalResults": 3, "TotalPages": 2, "CurrentPage": 1, "PreviousPage": null, "NextPage": "http://h/v1/X?pagenumber=2", "Seed": null, "Items": [{"Id": "a"}, {"Id": "b"}]});
        let places = [
            Place {
                id: Some("a".into()),
                position: Some((1.0, 2.0)),
            },
            Place {
                id: Some("b".into()),
                position: None,
            },
        ];
        let out: Value = serde_json::from_str(
            &render_content(&body.to_string(), &places, "http://h/v1/X").unwrap(),
        )
        .unwrap();
        assert_eq!(out["type"], "FeatureCollection");
        assert_eq!(out["TotalResults"], 3);
        assert_eq!(out["features"][0]["properties"], json!({"Id": "a"}));
        assert_eq!(out["features"][1]["geometry"], Value::Null);
        let rels: Vec<&str> = out["links"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["rel"].as_str().unwrap())
            .collect();
        assert_eq!(rels, ["self", "next"]);
        assert!(render_content(&body.to_string(), &places[..1], "x").is_none());
    }

    /// Items are wrapped as written, structure inside their strings included; a body that
    /// is not an object has no GeoJSON form.
    #[test]
    fn items_are_the_properties_byte_for_byte() {
        let item = r#"{"Id":"a","Title":"]},\"Items\":[","N":[1,{"x":null}]}"#;
        let body = format!(
            r#"{{"TotalResults":1,"TotalPages":1,"CurrentPage":1,"PreviousPage":null,"NextPage":null,"Seed":"07","Items":[{item}]}}"#
        );
        let place = Place {
            id: Some("a".into()),
            position: Some((46.5, 11.25)),
        };
        let out = render_content(&body, std::slice::from_ref(&place), "x").unwrap();
        assert!(
            out.contains(&format!(r#""properties":{item}}}]}}"#)),
            "{out}"
        );
        assert!(out.starts_with(r#"{"type":"FeatureCollection","TotalResults":1,"TotalPages":1,"CurrentPage":1,"Seed":"07","links":"#), "{out}");
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            parsed["features"][0]["properties"],
            serde_json::from_str::<Value>(item).unwrap()
        );
        // One document is one feature.
        let one = render_content(item, std::slice::from_ref(&place), "x").unwrap();
        assert_eq!(one, feature_text(&place, item, OutputCrs::CRS84));
        for not_an_object in ["[1,2]", "\"x\"", "{\"Items\":[1,}", ""] {
            assert_eq!(
                render_content(not_an_object, &[], "x"),
                None,
                "{not_an_object}"
            );
        }
    }

    /// Text that is almost JSON never panics the wrap, and an object is read (a list's
    /// items without places are then refused).
    #[test]
    fn almost_json_is_refused_or_read() {
        crate::random_json::RandomJson::new(0x6e0_1503, &["Id", "Items", "x", "a\"b"])
            .edited_documents(5_000, |text| {
                let _ = render_content(text, &[], "x");
                object_members(text).is_some() || !text.starts_with('{')
            });
    }
}
