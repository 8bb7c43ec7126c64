//! Mapbox Vector Tiles of the collections (OGC API – Tiles, vector tiles, one tile matrix
//! set: `WebMercatorQuad`).
//!
//! `GET /ogc/collections/{id}/tiles/WebMercatorQuad/{z}/{x}/{y}` answers one MVT layer,
//! named after the collection, with a point per located document (station) in the tile.
//! The tile's box, widened by [`BUFFER`] tile units so markers on an edge are drawn whole
//! in both neighbours, becomes a WGS 84 box that selects the documents exactly as the
//! items endpoint's `bbox` does ([`crate::params::lonlat_area`]): Content documents come
//! through `hub_content::map_points::visible_points`, stations through
//! [`crate::stations::stations`], so a tile holds only what the caller may see.
//!
//! The path is the web maps' `{z}/{x}/{y}` (column before row); the tileset's templated
//! link names the variables (`{tileMatrix}/{tileCol}/{tileRow}`), so clients that fill a
//! template by name get the same tiles.
//!
//! Owns: tile addressing and validation, the tileset and tile matrix set documents, the
//! projection of positions into tile units and the MVT encoding (the protobuf types are
//! `geozero`'s). Must not: choose or reduce documents, or find a document's position
//! (that is `hub_content::map_points`).

use axum::extract::{Path, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use geozero::mvt::tile::{Feature, GeomType, Layer};
use geozero::mvt::{Message, TagsBuilder, Tile, TileValue};
use hub_content::map_points::visible_points;
use hub_content::ContentState;
use hub_model::{EntityType, Problem};
use hub_query::content::ContentFilter;
use hub_timeseries::TimeseriesState;
use serde_json::{json, Value};

use crate::params::lonlat_area;
use crate::{dataset, json_answer, stations, Principal};

pub const MVT: &str = "application/vnd.mapbox-vector-tile";
/// The one tile matrix set offered.
pub const WEB_MERCATOR_QUAD: &str = "WebMercatorQuad";
/// Deepest zoom level: WebMercatorQuad defines 0 to 24; at 22 a tile is ~10 m wide,
/// already finer than any document position.
pub const MAX_ZOOM: u32 = 22;
/// Tile units across a tile (the MVT default).
pub const EXTENT: u32 = 4096;
/// Tile units around the tile whose points are included too.
pub const BUFFER: u32 = 64;
/// Most features in one tile: beyond it the tile holds the first ones in the Content
/// API's default order (deterministic, so neighbouring requests agree), and the answer
/// says so in `Hub-Tile-Capped`.
pub const MAX_FEATURES: usize = 20_000;
/// Web Mercator's latitude limit: the square world ends here.
const MAX_LATITUDE: f64 = 85.051_128_779_806_59;
/// Half the Web Mercator world's width in metres (its origin is the top-left corner).
const HALF_WORLD: f64 = 20_037_508.342_789_244;

/// A tile address, checked against its zoom level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileId {
    pub z: u32,
    pub x: u32,
    pub y: u32,
}

impl TileId {
    /// Reads `{z}/{x}/{y}`; each mistake is a 400 naming the parameter as the OpenAPI
    /// document does (`tileMatrix`, `tileCol`, `tileRow`).
    pub fn parse(z: &str, x: &str, y: &str) -> Result<TileId, Problem> {
        let number = |parameter: &str, what: &str, value: &str, max: u32| {
            value
                .parse::<u32>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| {
                    Problem::invalid_parameter(
                        parameter,
                        format!("{what} '{value}' is not a whole number from 0 to {max}"),
                    )
                })
        };
        let z = number("tileMatrix", "zoom level (z)", z, MAX_ZOOM)?;
        let last = (1u32 << z) - 1;
        let x = number("tileCol", "column (x)", x, last)?;
        let y = number("tileRow", "row (y)", y, last)?;
        Ok(TileId { z, x, y })
    }

    fn tiles_across(self) -> f64 {
        f64::from(1u32 << self.z)
    }

    /// `[west, south, east, north]` in WGS 84 degrees of the tile widened by [`BUFFER`].
    /// Longitudes stop at ±180 (no wrapping across the antimeridian); a box reaching past
    /// the top (bottom) row reaches the pole, so points beyond Web Mercator's latitude
    /// limit are selected and drawn on the world's edge rather than lost.
    pub fn buffered_bbox(self) -> [f64; 4] {
        let n = self.tiles_across();
        let b = f64::from(BUFFER) / f64::from(EXTENT);
        let lon = |col: f64| (col / n * 360.0 - 180.0).clamp(-180.0, 180.0);
        let lat = |row: f64| {
            if row <= 0.0 {
                90.0
            } else if row >= n {
                -90.0
            } else {
                (std::f64::consts::PI * (1.0 - 2.0 * row / n))
                    .sinh()
                    .atan()
                    .to_degrees()
            }
        };
        let (x, y) = (f64::from(self.x), f64::from(self.y));
        [lon(x - b), lat(y + 1.0 + b), lon(x + 1.0 + b), lat(y - b)]
    }

    /// A WGS 84 position in this tile's units (origin top-left, y down). The store already
    /// chose the point by the buffered box, so rounding noise is clamped into the buffer
    /// instead of dropping the point.
    pub fn project(self, lon: f64, lat: f64) -> (i32, i32) {
        let n = self.tiles_across();
        let lat = lat.clamp(-MAX_LATITUDE, MAX_LATITUDE).to_radians();
        let col = (lon + 180.0) / 360.0 * n;
        let row = (1.0 - (lat.tan() + 1.0 / lat.cos()).ln() / std::f64::consts::PI) / 2.0 * n;
        let extent = f64::from(EXTENT);
        let low = -f64::from(BUFFER);
        let high = extent + f64::from(BUFFER);
        let unit = |v: f64, origin: u32| {
            ((v - f64::from(origin)) * extent).round().clamp(low, high) as i32
        };
        (unit(col, self.x), unit(row, self.y))
    }
}

/// MVT's zigzag encoding of a signed parameter.
fn zigzag(n: i32) -> u32 {
    ((n << 1) ^ (n >> 31)) as u32
}

/// One point feature: a single MoveTo (command 1, count 1) and its two parameters.
fn point(position: (i32, i32), tags: Vec<u32>) -> Feature {
    Feature {
        id: None,
        tags,
        r#type: Some(GeomType::Point as i32),
        geometry: vec![1 | (1 << 3), zigzag(position.0), zigzag(position.1)],
    }
}

/// Collects a layer's features and their deduplicated keys and values.
struct LayerBuilder {
    tags: TagsBuilder,
    features: Vec<Feature>,
}

impl LayerBuilder {
    fn new() -> Self {
        LayerBuilder {
            tags: TagsBuilder::new(),
            features: Vec::new(),
        }
    }

    fn add(&mut self, position: (i32, i32), properties: &[(&str, Option<&str>)]) {
        let mut tags = Vec::with_capacity(properties.len() * 2);
        for (key, value) in properties {
            if let Some(value) = value {
                let (k, v) = self
                    .tags
                    .insert_ref(key, TileValue::Str((*value).to_string()));
                tags.extend([k, v]);
            }
        }
        self.features.push(point(position, tags));
    }

    fn encode(self, name: &str) -> Vec<u8> {
        let (keys, values) = self.tags.into_tags();
        Tile {
            layers: vec![Layer {
                version: 2,
                name: name.to_string(),
                features: self.features,
                keys,
                values: values.into_iter().map(Into::into).collect(),
                extent: Some(EXTENT),
            }],
        }
        .encode_to_vec()
    }
}

/// `GET /ogc/collections/{id}/tiles/{tileMatrixSetId}/{z}/{x}/{y}`.
pub(crate) async fn tile(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
    Path((collection, tms, z, x, y)): Path<(String, String, String, String, String)>,
    principal: Principal,
) -> Response {
    let caller = principal.as_ref().map(|axum::Extension(p)| p);
    let result = async {
        let stype = stations::station_type(&ts, &collection).await?;
        let entity = match stype {
            Some(_) => None,
            None => Some(dataset(&collection)?),
        };
        tile_matrix_set(&tms)?;
        let id = TileId::parse(&z, &x, &y)?;
        let (layer, capped) = match (stype, entity) {
            (Some(stype), _) => (station_layer(&ts, caller, &stype, id).await?, false),
            (None, Some(entity)) => {
                let full = hub_auth::policy::can_read_closed(caller, entity.name);
                hub_content::closed::with_access(full, content_layer(&state, entity, id)).await?
            }
            (None, None) => return Err(Problem::internal("neither dataset nor station type")),
        };
        let name = collection.to_ascii_lowercase();
        Ok::<_, Problem>((layer.encode(&name), capped))
    }
    .await;
    let (body, capped) = match result {
        Ok(answer) => answer,
        Err(problem) => return problem.into_response(),
    };
    let mut response = ([(header::CONTENT_TYPE, MVT)], body).into_response();
    let headers = response.headers_mut();
    // An anonymous caller's tile holds open data only, so shared caches may keep it; a
    // signed-in caller's may hold closed data and stays in that caller's cache.
    let cache = if caller.is_none() {
        "public, max-age=60"
    } else {
        "private, max-age=60"
    };
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(header::VARY, HeaderValue::from_static("Authorization"));
    if capped {
        headers.insert("hub-tile-capped", HeaderValue::from(MAX_FEATURES));
    }
    response
}

/// The only tile matrix set, by its id (case-insensitive, as clients spell it either way).
fn tile_matrix_set(id: &str) -> Result<(), Problem> {
    if id.eq_ignore_ascii_case(WEB_MERCATOR_QUAD) {
        Ok(())
    } else {
        Err(Problem::not_found(format!(
            "'{id}' is not a tile matrix set here; the one offered is {WEB_MERCATOR_QUAD}"
        )))
    }
}

/// The located documents of the tile the caller may see (inside
/// `hub_content::closed::with_access`), the first [`MAX_FEATURES`] in the Content API's
/// default order; the flag tells whether more were left out.
async fn content_layer(
    state: &ContentState,
    entity: &'static EntityType,
    id: TileId,
) -> Result<(LayerBuilder, bool), Problem> {
    let filters = vec![ContentFilter::Area(lonlat_area(id.buffered_bbox()))];
    let (points, capped) = visible_points(&*state.content, entity, filters, MAX_FEATURES)
        .await
        .map_err(|e| e.to_problem())?;
    let mut layer = LayerBuilder::new();
    for point in &points {
        layer.add(
            id.project(point.longitude, point.latitude),
            &[
                ("Id", Some(point.id.as_str()).filter(|id| !id.is_empty())),
                ("Shortname", point.shortname.as_deref()),
            ],
        );
    }
    Ok((layer, capped))
}

/// The stations of the tile the caller may see. A station type is read whole anyway
/// (see `stations`), and is bounded by the Time Series API's row limit, so no cap here.
async fn station_layer(
    ts: &TimeseriesState,
    caller: Option<&hub_model::Principal>,
    stype: &str,
    id: TileId,
) -> Result<LayerBuilder, Problem> {
    let area = lonlat_area(id.buffered_bbox());
    let mut layer = LayerBuilder::new();
    for station in stations::stations(ts, caller, stype, None).await? {
        let Some((lon, lat)) = station.position() else {
            continue;
        };
        if !hub_geo::relate::relates(&area.geometry, area.relation, lon, lat) {
            continue;
        }
        layer.add(
            id.project(lon, lat),
            &[("scode", Some(&station.code)), ("sname", station.name())],
        );
    }
    Ok(layer)
}

/// The tileset of a collection: vector tiles in WebMercatorQuad.
fn tileset(base_url: &str, collection: &str) -> Value {
    let tiles = format!("{base_url}/ogc/collections/{collection}/tiles");
    json!({
        "title": format!("{collection} as vector tiles"),
        "dataType": "vector",
        "crs": "http://www.opengis.net/def/crs/EPSG/0/3857",
        "tileMatrixSetURI": "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad",
        "layers": [{"id": collection, "dataType": "vector", "geometryType": "points"}],
        "links": [
            {"rel": "self", "type": "application/json", "title": "this tileset", "href": format!("{tiles}/{WEB_MERCATOR_QUAD}")},
            {"rel": "http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme", "type": "application/json", "title": "the tile matrix set", "href": format!("{base_url}/ogc/tileMatrixSets/{WEB_MERCATOR_QUAD}")},
            {"rel": "item", "type": MVT, "title": "a tile", "templated": true,
             "href": format!("{tiles}/{WEB_MERCATOR_QUAD}/{{tileMatrix}}/{{tileCol}}/{{tileRow}}")},
        ],
    })
}

/// The collection id as the collection document spells it, or its 404.
async fn collection_id(ts: &TimeseriesState, collection: &str) -> Result<String, Problem> {
    Ok(match stations::station_type(ts, collection).await? {
        Some(stype) => stations::collection_id(&stype),
        None => dataset(collection)?.meta_type.to_ascii_lowercase(),
    })
}

/// `GET /ogc/collections/{id}/tiles`: the list of tilesets (one).
pub(crate) async fn tilesets(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
    Path(collection): Path<String>,
) -> Response {
    let result = async {
        let id = collection_id(&ts, &collection).await?;
        let href = format!("{}/ogc/collections/{id}/tiles", state.base_url);
        Ok::<_, Problem>(json!({
            "links": [{"rel": "self", "type": "application/json", "title": "this document", "href": href}],
            "tilesets": [tileset(&state.base_url, &id)],
        }))
    }
    .await;
    match result {
        Ok(doc) => json_answer("application/json", doc.to_string()),
        Err(problem) => problem.into_response(),
    }
}

/// `GET /ogc/collections/{id}/tiles/{tileMatrixSetId}`: the tileset's description.
pub(crate) async fn tileset_doc(
    State(state): State<ContentState>,
    State(ts): State<TimeseriesState>,
    Path((collection, tms)): Path<(String, String)>,
) -> Response {
    let result = async {
        let id = collection_id(&ts, &collection).await?;
        tile_matrix_set(&tms)?;
        Ok::<_, Problem>(tileset(&state.base_url, &id))
    }
    .await;
    match result {
        Ok(doc) => json_answer("application/json", doc.to_string()),
        Err(problem) => problem.into_response(),
    }
}

/// The WebMercatorQuad definition (OGC Two Dimensional Tile Matrix Set, 256-pixel tiles
/// at 0.28 mm pixels), zoom levels 0 to [`MAX_ZOOM`].
fn web_mercator_quad(base_url: &str) -> Value {
    let matrices: Vec<Value> = (0..=MAX_ZOOM)
        .map(|z| {
            let across = 1u64 << z;
            let cell = 2.0 * HALF_WORLD / 256.0 / across as f64;
            json!({
                "id": z.to_string(),
                "scaleDenominator": cell / 0.00028,
                "cellSize": cell,
                "cornerOfOrigin": "topLeft",
                "pointOfOrigin": [-HALF_WORLD, HALF_WORLD],
                "tileWidth": 256,
                "tileHeight": 256,
                "matrixWidth": across,
                "matrixHeight": across,
            })
        })
        .collect();
    json!({
        "id": WEB_MERCATOR_QUAD,
        "title": "Google Maps Compatible for the World",
        "uri": "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad",
        "crs": "http://www.opengis.net/def/crs/EPSG/0/3857",
        "orderedAxes": ["E", "N"],
        "wellKnownScaleSet": "http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible",
        "links": [{"rel": "self", "type": "application/json", "href": format!("{base_url}/ogc/tileMatrixSets/{WEB_MERCATOR_QUAD}")}],
        "tileMatrices": matrices,
    })
}

/// `GET /ogc/tileMatrixSets`.
pub(crate) async fn tile_matrix_sets(State(state): State<ContentState>) -> Response {
    let href = format!("{}/ogc/tileMatrixSets/{WEB_MERCATOR_QUAD}", state.base_url);
    json_answer(
        "application/json",
        json!({"tileMatrixSets": [{
            "id": WEB_MERCATOR_QUAD,
            "title": "Google Maps Compatible for the World",
            "uri": "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad",
            "links": [{"rel": "self", "type": "application/json", "href": href}],
        }]})
        .to_string(),
    )
}

/// `GET /ogc/tileMatrixSets/{tileMatrixSetId}`.
pub(crate) async fn tile_matrix_set_doc(
    State(state): State<ContentState>,
    Path(tms): Path<String>,
) -> Response {
    match tile_matrix_set(&tms) {
        Ok(()) => json_answer(
            "application/json",
            web_mercator_quad(&state.base_url).to_string(),
        ),
        Err(problem) => problem.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parameter(z: &str, x: &str, y: &str) -> Option<String> {
        TileId::parse(z, x, y).unwrap_err().parameter
    }

    #[test]
    fn addresses_are_checked_against_their_zoom_level() {
        assert_eq!(
            TileId::parse("12", "2177", "1448").unwrap(),
            TileId {
                z: 12,
                x: 2177,
                y: 1448
            }
        );
        assert!(TileId::parse("22", "4194303", "0").is_ok());
        assert_eq!(parameter("23", "0", "0").as_deref(), Some("tileMatrix"));
        assert_eq!(parameter("-1", "0", "0").as_deref(), Some("tileMatrix"));
        assert_eq!(parameter("0", "1", "0").as_deref(), Some("tileCol"));
        assert_eq!(parameter("1", "0", "2").as_deref(), Some("tileRow"));
        assert_eq!(parameter("3", "x", "0").as_deref(), Some("tileCol"));
        assert_eq!(
            parameter("99999999999999999999", "0", "0").as_deref(),
            Some("tileMatrix")
        );
    }

    #[test]
    fn boxes_and_projection_agree() {
        let world = TileId { z: 0, x: 0, y: 0 };
        let [w, s, e, n] = world.buffered_bbox();
        assert_eq!((w, s, e, n), (-180.0, -90.0, 180.0, 90.0));
        assert_eq!(world.project(0.0, 0.0), (2048, 2048));
        assert_eq!(world.project(-180.0, MAX_LATITUDE), (0, 0));
        // Beyond Web Mercator's latitudes: on the edge, not lost.
        assert_eq!(world.project(180.0, -89.0), (4096, 4096));

        // The tile around Bolzano: its unbuffered corners land on 0 and the extent.
        let bz = TileId {
            z: 12,
            x: 2177,
            y: 1448,
        };
        let [w, s, e, n] = bz.buffered_bbox();
        assert!(w < 11.35 && 11.35 < e && s < 46.5 && 46.5 < n);
        assert_eq!(bz.project(w, n), (-64, -64));
        assert_eq!(bz.project(e, s), (4096 + 64, 4096 + 64));
        let unbuffered = |col: f64, row: f64| {
            let lon = col / 4096.0 * 360.0 - 180.0;
            let lat = (std::f64::consts::PI * (1.0 - 2.0 * row / 4096.0))
                .sinh()
                .atan()
                .to_degrees();
            bz.project(lon, lat)
        };
        assert_eq!(unbuffered(2177.0, 1448.0), (0, 0));
        assert_eq!(unbuffered(2178.0, 1449.0), (4096, 4096));
    }

    #[test]
    fn a_point_is_one_move_to_with_zigzag_parameters() {
        assert_eq!(
            (zigzag(0), zigzag(-1), zigzag(1), zigzag(-64)),
            (0, 1, 2, 127)
        );
        let mut layer = LayerBuilder::new();
        layer.add((5, -3), &[("Id", Some("a")), ("Shortname", None)]);
        layer.add((0, 0), &[("Id", Some("a"))]);
        let tile = Tile::decode(&layer.encode("x")[..]).unwrap();
        let l = &tile.layers[0];
        assert_eq!((l.name.as_str(), l.extent, l.version), ("x", Some(4096), 2));
        assert_eq!(l.features[0].geometry, [9, 10, 5]);
        assert_eq!(l.features[0].tags, [0, 0]);
        assert_eq!(l.features[1].tags, [0, 0]);
        assert_eq!((l.keys.len(), l.values.len()), (1, 1));
    }
}
