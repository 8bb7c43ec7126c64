//! Geographic conditions of a list query and their SQL.
//!
//! SQLite: a latitude/longitude range on the covering index `content_position`
//! prefilters by bounding box; the exact test runs in Rust through the functions the store registers:
//! `hub_geo_distance(lat1, lon1, lat2, lon2)` (metres on the WGS 84 spheroid,
//! [`geodesic_distance_m`]) and `hub_geo_relates(wkt, relation, lon, lat)` (the WKT is a
//! bound parameter, parsed once per statement). PostgreSQL: PostGIS. Distances are
//! `ST_DWithin`/`ST_Distance` on `geography` with `use_spheroid = true` (Karney's
//! geodesics, like [`geodesic_distance_m`]) of the point made from the row's latitude and
//! longitude, behind the same ranges on `content_position` as SQLite's; areas are
//! `ST_Intersects`/`ST_Covers` with `ST_Transform` on the `geom` column (GiST index), and
//! a box in degrees is the ranges alone. The area and the centre are one-row subqueries
//! (see [`pg_once`]).

use hub_geo::relate::{radius_bbox, Relation};
use hub_geo::wkt::to_wkt;
use hub_geo::{Geometry, Srid};

use super::checks::CheckTable;
use super::walk::AttemptOdds;
use super::{CompiledList, ContentFilter, ContentQuery, Form, PageAttempt};
use crate::sql::{Dialect, SqlBuilder, SqlValue};

/// Positions within `metres` of a centre.
#[derive(Debug, Clone, PartialEq)]
pub struct GeoCircle {
    pub latitude: f64,
    pub longitude: f64,
    pub metres: f64,
}

/// Positions related to an area given by the client or a GeoShape.
#[derive(Debug, Clone, PartialEq)]
pub struct GeoArea {
    pub relation: Relation,
    /// The geometry in EPSG:4326.
    pub geometry: Geometry<f64>,
    /// The geometry as the client sent it, in `srid` (PostgreSQL transforms it itself).
    pub original: Geometry<f64>,
    pub srid: Srid,
}

/// The `relation` argument of `hub_geo_relates`.
pub fn relation_code(relation: Relation) -> i64 {
    match relation {
        Relation::Intersects => 0,
        Relation::Covers => 1,
    }
}

pub fn relation_from_code(code: i64) -> Relation {
    if code == 1 {
        Relation::Covers
    } else {
        Relation::Intersects
    }
}

/// Bounding-box prefilter on the covering index `content_position (entity, latitude,
/// longitude)`: a latitude range, longitude checked from the index, no document read.
fn bbox_prefilter(q: &mut SqlBuilder, bounds: [f64; 4]) {
    ranges(q, bounds, "");
}

/// `c.latitude` and `c.longitude` (each followed by `suffix`) within `bounds`.
fn ranges(q: &mut SqlBuilder, [min_lon, min_lat, max_lon, max_lat]: [f64; 4], suffix: &str) {
    q.sql("c.latitude")
        .sql(suffix)
        .sql(" BETWEEN ")
        .param(SqlValue::Real(min_lat))
        .sql(" AND ")
        .param(SqlValue::Real(max_lat))
        .sql(" AND c.longitude")
        .sql(suffix)
        .sql(" BETWEEN ")
        .param(SqlValue::Real(min_lon))
        .sql(" AND ")
        .param(SqlValue::Real(max_lon));
}

/// The position as the indexed `geom` column (generated from latitude and longitude).
fn pg_point(q: &mut SqlBuilder) {
    q.sql("c.geom");
}

/// The position as `geom` is generated from the row's columns (NULL without a
/// position), for conditions that indexes of the columns answer.
fn pg_point_of_columns(q: &mut SqlBuilder) {
    q.sql("ST_SetSRID(ST_MakePoint(c.longitude, c.latitude), 4326)");
}

/// Writes `value` as a one-row subquery, which PostgreSQL computes once per statement
/// (an init plan) and can still use in an index condition. Written inline, an
/// expression of parameters is not folded in a generic plan (Hub's default) and runs
/// again for every candidate row: parsing and transforming a polygon's WKT per row
/// was half of PostgreSQL's CPU for a polygon page (pgbench, one client, 1.63 → 0.80
/// ms per statement).
fn pg_once(q: &mut SqlBuilder, value: impl FnOnce(&mut SqlBuilder)) {
    q.sql("(SELECT ");
    value(q);
    q.sql(")");
}

/// The point (lat, lon) as a `geography`, computed once per statement.
fn pg_centre(q: &mut SqlBuilder, latitude: f64, longitude: f64) {
    pg_once(q, |q| {
        q.sql("ST_SetSRID(ST_MakePoint(")
            .param(SqlValue::Real(longitude))
            .sql(", ")
            .param(SqlValue::Real(latitude))
            .sql("), 4326)::geography");
    });
}

/// Metres between two WGS 84 positions along the geodesic on the spheroid (Karney's
/// algorithm, which PostGIS also uses for `geography` with `use_spheroid = true`).
pub fn geodesic_distance_m(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    use geo::Distance;
    geo::Geodesic::distance(geo::Point::new(lon1, lat1), geo::Point::new(lon2, lat2))
}

/// The widest circle a box inside the circle is drawn for: beyond it the earth's
/// curvature bends the box's edges too far for its corners to tell (see [`inner_box`]).
const INNER_BOX_MAX_M: f64 = 200_000.0;

/// A box of positions all within the circle, `[west, south, east, north]` in degrees:
/// the box around a circle of 0.68 of the radius, kept only when each of its corners
/// lies within 0.99 of the radius by the geodesic both backends test. Within a box this
/// small (a radius up to 200 km, away from the poles and the antimeridian) the position
/// farthest from the centre is a corner: along a meridian the distance has one
/// minimum, and along a parallel it grows with the difference in longitude. A position
/// in this box needs no geodesic; about half the candidates of the circle's own box
/// fall in it. `None` where the corners cannot vouch for it.
fn inner_box(circle: &GeoCircle) -> Option<[f64; 4]> {
    let GeoCircle {
        latitude,
        longitude,
        metres,
    } = *circle;
    if !(metres > 0.0 && metres <= INNER_BOX_MAX_M) {
        return None;
    }
    let [west, south, east, north] = radius_bbox(latitude, longitude, metres * 0.68);
    // Near a pole or across the antimeridian the box is every longitude, whose corners
    // may all lie near the centre.
    if east - west >= 180.0 {
        return None;
    }
    let corners = [(south, west), (south, east), (north, west), (north, east)];
    corners
        .iter()
        .all(|&(lat, lon)| geodesic_distance_m(latitude, longitude, lat, lon) <= metres * 0.99)
        .then_some([west, south, east, north])
}

/// A circle: its bounding box's ranges, which the position index answers, then the
/// positions in its inner box ([`inner_box`]) without more, and the others by the
/// geodesic. Counting the 3,748 POIs within 10 km of Bolzano at scale 10 computed
/// 5,358 geodesics on PostgreSQL, 3.8 of its 6.4 ms (`EXPLAIN ANALYZE` with and
/// without them).
pub(crate) fn compile_circle(q: &mut SqlBuilder, circle: &GeoCircle) {
    let bounds = radius_bbox(circle.latitude, circle.longitude, circle.metres);
    let inner = |q: &mut SqlBuilder| {
        if let Some(inner) = inner_box(circle) {
            q.sql("(");
            ranges(q, inner, "");
            q.sql(") OR ");
        }
    };
    match q.dialect {
        Dialect::Sqlite => {
            q.sql("(c.latitude IS NOT NULL AND ");
            bbox_prefilter(q, bounds);
            q.sql(" AND (");
            inner(q);
            q.sql("hub_geo_distance(c.latitude, c.longitude, ")
                .param(SqlValue::Real(circle.latitude))
                .sql(", ")
                .param(SqlValue::Real(circle.longitude))
                .sql(") <= ")
                .param(SqlValue::Real(circle.metres))
                .sql("))");
        }
        Dialect::Postgres => {
            // The circle's bounding box as ranges, then the geodesic test of the point
            // made from the same two columns `geom` is generated from (so the same
            // value): `content_position` answers both without reading a row, where the
            // GiST index on `geom::geography` found candidates whose rows were read for
            // `geom` (a capped count of 10,001 POIs within 50 km: 22 against 7.5 ms at
            // scale 10). A radius is never walked (`walk::answered_by_an_index`).
            q.sql("(");
            bbox_prefilter(q, bounds);
            q.sql(" AND (");
            inner(q);
            q.sql("ST_DWithin(");
            pg_point_of_columns(q);
            q.sql("::geography, ");
            pg_centre(q, circle.latitude, circle.longitude);
            q.sql(", ")
                .param(SqlValue::Real(circle.metres))
                .sql(", true)))");
        }
    }
}

/// The area as `[west, south, east, north]` when the client sent a box in WGS 84
/// degrees: an OGC `bbox`, a tile, or a polygon whose ring runs along four such edges.
/// A position then relates to the area (intersects it, or is covered by it: for a point
/// both mean inside or on the boundary) exactly when it lies within the box's ranges of
/// longitude and latitude, so the exact test is a comparison of two columns rather than
/// a geometry's. `None` for any other area, or a box with no area.
pub fn lonlat_box(area: &GeoArea) -> Option<[f64; 4]> {
    if area.srid != Srid::Wgs84 || area.original != area.geometry {
        return None;
    }
    let Geometry::Polygon(polygon) = &area.geometry else {
        return None;
    };
    let ring = &polygon.exterior().0;
    if !polygon.interiors().is_empty() || ring.len() != 5 || ring[0] != ring[4] {
        return None;
    }
    let rect = geo::BoundingRect::bounding_rect(polygon)?;
    let (min, max) = (rect.min(), rect.max());
    if !(min.x < max.x && min.y < max.y) {
        return None;
    }
    // Four different corners of the box, each edge along one axis: the box itself, not
    // a crossed ring through its corners or one that turns back.
    let distinct = (0..4).all(|i| (i + 1..4).all(|j| ring[i] != ring[j]));
    let corner =
        |c: &geo::Coord<f64>| (c.x == min.x || c.x == max.x) && (c.y == min.y || c.y == max.y);
    let along_an_axis = ring
        .windows(2)
        .all(|e| (e[0].x == e[1].x) != (e[0].y == e[1].y));
    (distinct && ring.iter().all(corner) && along_an_axis).then_some([min.x, min.y, max.x, max.y])
}

pub(crate) fn compile_area(q: &mut SqlBuilder, area: &GeoArea, form: Form) {
    if let Some(lonlat) = lonlat_box(area) {
        return compile_box(q, lonlat, form);
    }
    match q.dialect {
        Dialect::Sqlite => {
            let rect = geo::BoundingRect::bounding_rect(&area.geometry);
            q.sql("(c.latitude IS NOT NULL AND ");
            match rect {
                Some(r) => bbox_prefilter(q, [r.min().x, r.min().y, r.max().x, r.max().y]),
                None => {
                    q.sql("0");
                }
            }
            q.sql(" AND hub_geo_relates(")
                .text(to_wkt(&area.geometry))
                .sql(", ")
                .param(SqlValue::Int(relation_code(area.relation)))
                .sql(", c.longitude, c.latitude))");
        }
        Dialect::Postgres => {
            let function = match area.relation {
                Relation::Intersects => "ST_Intersects",
                Relation::Covers => "ST_Covers",
            };
            q.sql("(").sql(function).sql("(");
            pg_once(q, |q| {
                q.sql("ST_Transform(ST_GeomFromText(")
                    .text(to_wkt(&area.original))
                    .sql(", ")
                    .param(SqlValue::Int(area.srid.code() as i64))
                    .sql("), 4326)");
            });
            q.sql(", ");
            pg_point(q);
            q.sql("))");
        }
    }
}

/// Positions within a box of WGS 84 degrees (see [`lonlat_box`]), boundary included.
fn compile_box(q: &mut SqlBuilder, lonlat: [f64; 4], form: Form) {
    match (q.dialect, form) {
        (Dialect::Sqlite, _) => {
            q.sql("(c.latitude IS NOT NULL AND ");
            bbox_prefilter(q, lonlat);
            q.sql(")");
        }
        (Dialect::Postgres, Form::Probe) => {
            // A walk tests each document it passes. PostgreSQL's generic plan takes two
            // ranges of parameters for a narrow condition and would read the matches by
            // `content_position` and sort them (167 ms against 0.8 ms for a box of
            // 66,000 POIs, page 1): `+ 0` leaves the ranges for no index to answer.
            q.sql("(");
            ranges(q, lonlat, " + 0");
            q.sql(")");
        }
        (Dialect::Postgres, Form::Set) => {
            // The ranges alone: `content_position (entity, latitude, longitude)` answers
            // them, and a count reads that index alone. Through the GiST index (whose
            // boxes PostGIS keeps in single precision, so the ranges were tested on the
            // row anyway) every candidate's row was read: counting the 51,000 POIs of a
            // zoom-6 tile took 247 ms against 14 ms at scale 10.
            q.sql("(");
            bbox_prefilter(q, lonlat);
            q.sql(")");
        }
    }
}

/// `ORDER BY` key: distance from (lat, lon), nearest first.
pub(crate) fn compile_distance_order(q: &mut SqlBuilder, latitude: f64, longitude: f64) {
    match q.dialect {
        Dialect::Sqlite => {
            q.sql("hub_geo_distance(c.latitude, c.longitude, ")
                .param(SqlValue::Real(latitude))
                .sql(", ")
                .param(SqlValue::Real(longitude))
                .sql(")");
        }
        Dialect::Postgres => {
            q.sql("ST_Distance(");
            pg_point_of_columns(q);
            q.sql("::geography, ");
            pg_centre(q, latitude, longitude);
            q.sql(", true)");
        }
    }
}

/// A nearest-first page. The sort keeps only (entity, id, distance) per match; the
/// documents of the page are fetched afterwards, so a wide search does not sort every
/// matching document's JSON (SQLite copies result columns into its sorter).
pub(crate) fn compile_nearest(
    query: &ContentQuery,
    dialect: Dialect,
    latitude: f64,
    longitude: f64,
) -> CompiledList {
    let centre = (latitude, longitude);
    let radius = centre_radius(query, centre);
    let (page, checks) = nearest_page(query, dialect, centre, radius);
    let size = u64::from(query.page.size);
    // Each ring is a page of the same query with the smaller circle in place of its
    // own, which holds it.
    let rings = rings(radius);
    let next_shares = rings.iter().skip(1).map(|(_, share)| *share).chain([1.0]);
    let attempts = rings
        .iter()
        .zip(next_shares)
        .map(|(&(metres, share), next_share)| PageAttempt {
            page: nearest_page(query, dialect, centre, Some(metres)).0,
            size,
            odds: Some(AttemptOdds {
                share,
                next_share,
                needed: query.page.offset().saturating_add(size),
            }),
        })
        .collect();
    CompiledList {
        entity: query.entity,
        page,
        count: query.compile_count(dialect),
        page_has_total: false,
        checks,
        count_limit: query.effective_count_limit(),
        attempts,
        walk: None,
    }
}

/// Whether `filter` is a circle around `centre` (latitude, longitude).
fn is_around(filter: &ContentFilter, (latitude, longitude): (f64, f64)) -> bool {
    matches!(filter, ContentFilter::Radius(c) if c.latitude == latitude && c.longitude == longitude)
}

/// The radius of the query's circle around `centre`, the order's (the smallest, were
/// there several).
fn centre_radius(query: &ContentQuery, centre: (f64, f64)) -> Option<f64> {
    query
        .filters
        .iter()
        .filter_map(|f| match f {
            ContentFilter::Radius(c) if is_around(f, centre) => Some(c.metres),
            _ => None,
        })
        .reduce(f64::min)
}

/// The page of `query` nearest `centre` first, within `radius` of it: every match's
/// distance, sorted. `radius` takes the place of the query's own circles around the
/// centre (a ring's is smaller; it is the query's own otherwise).
///
/// The circle is tested by the distance the page sorts by, computed once per
/// candidate: the inner statement selects the circle's bounding box and computes each
/// candidate's distance, and the page keeps those within the circle. Tested as a filter
/// and again for the order, the geodesic took two of every three milliseconds of a
/// 50 km page at scale 10. The inner statement is a fence (`OFFSET 0`; SQLite's
/// `LIMIT -1 OFFSET 0`), so neither database writes the distance back into the
/// condition and computes it twice.
fn nearest_page(
    query: &ContentQuery,
    dialect: Dialect,
    centre: (f64, f64),
    radius: Option<f64>,
) -> (SqlBuilder, CheckTable) {
    let (latitude, longitude) = centre;
    let mut others = query.clone();
    others.filters.retain(|f| !is_around(f, centre));

    let mut page = SqlBuilder::new(dialect);
    page.sql("SELECT ")
        .document()
        .sql(" FROM (SELECT n.e, n.k, n.d FROM (SELECT c.entity AS e, c.id_key AS k, ");
    compile_distance_order(&mut page, latitude, longitude);
    page.sql(" AS d FROM content c");
    let checks = others.where_clause(&mut page);
    if let Some(metres) = radius {
        page.sql(" AND ");
        compile_box(
            &mut page,
            radius_bbox(latitude, longitude, metres),
            Form::Set,
        );
    }
    page.sql(match dialect {
        Dialect::Sqlite => " LIMIT -1 OFFSET 0) n",
        Dialect::Postgres => " OFFSET 0) n",
    });
    if let Some(metres) = radius {
        page.sql(" WHERE n.d <= ").param(SqlValue::Real(metres));
    }
    page.sql(" ORDER BY n.d, n.k LIMIT ")
        .param(SqlValue::Int(query.page.size as i64))
        .sql(" OFFSET ")
        .param(SqlValue::Int(query.page.offset() as i64))
        .sql(") p JOIN content c ON c.entity = p.e AND c.id_key = p.k ORDER BY p.d, p.k");
    (page, checks)
}

/// Radii of the smaller circles tried before the query's own `radius` (nearest first:
/// every match within a smaller circle comes before every match outside it, so a full
/// page from one is the page). Sorting every match of a 10 km radius costs in
/// proportion to how many there are; a circle a sixteenth as wide holds 1/256 of them
/// where the density is even. Each circle is twice as wide as the one before, so the
/// first to hold the page holds at most about four times what the page needed (where
/// the density is even), and the ones that fell short cost a third of it together:
/// with only every other width, a page that outgrew one circle sorted sixteen times as
/// many. Only with a radius filter around the order's centre; circles under 100 m are
/// not worth a statement. Each with the share of the circle's area it covers: where
/// the list's matches were counted, a ring expected to hold too few for the page is
/// not tried ([`PageAttempt::worth_trying`]).
fn rings(radius: Option<f64>) -> Vec<(f64, f64)> {
    let Some(radius) = radius else {
        return Vec::new();
    };
    [16.0, 8.0, 4.0, 2.0]
        .into_iter()
        .map(|part: f64| (radius / part, 1.0 / (part * part)))
        .filter(|(r, _)| *r >= 100.0)
        .collect()
}

#[cfg(test)]
#[path = "geo_tests.rs"]
mod tests;
