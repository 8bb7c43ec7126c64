//! SQL functions of the geographic filters (see `hub_query::content::geo`):
//!
//! - `hub_geo_distance(lat1, lon1, lat2, lon2)`: metres on the WGS 84 spheroid
//!   (geodesic, as PostGIS computes `geography` distances with `use_spheroid = true`);
//!   NULL when a position is missing.
//! - `hub_geo_relates(wkt, relation, lon, lat)`: 1 when the position intersects (0) or is
//!   covered by (1) the geometry. The WKT is a bound parameter, the same for every row:
//!   it is parsed once per statement and cached as SQLite auxiliary data.

use hub_geo::relate::relates;
use hub_geo::wkt::parse_wkt;
use hub_geo::Geometry;
use hub_query::content::geo::{geodesic_distance_m, relation_from_code};
use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;

pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("hub_geo_distance", 4, flags, |ctx| {
        let values: [Option<f64>; 4] = [ctx.get(0)?, ctx.get(1)?, ctx.get(2)?, ctx.get(3)?];
        Ok(match values {
            [Some(a), Some(b), Some(c), Some(d)] => Some(geodesic_distance_m(a, b, c, d)),
            _ => None,
        })
    })?;
    conn.create_scalar_function("hub_geo_relates", 4, flags, |ctx| {
        let geometry = ctx.get_or_create_aux(
            0,
            |v| -> Result<Geometry<f64>, Box<dyn std::error::Error + Send + Sync>> {
                Ok(parse_wkt(v.as_str()?)?)
            },
        )?;
        let relation = relation_from_code(ctx.get(1)?);
        let (lon, lat): (Option<f64>, Option<f64>) = (ctx.get(2)?, ctx.get(3)?);
        Ok(match (lon, lat) {
            (Some(lon), Some(lat)) => relates(&geometry, relation, lon, lat),
            _ => false,
        })
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_answer_in_sql() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let d: f64 = conn
            .query_row(
                "SELECT hub_geo_distance(46.4983, 11.3548, 46.6713, 11.1594)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!((d - 24_400.0).abs() < 500.0);
        let inside: Vec<bool> = conn
            .prepare("SELECT hub_geo_relates(?1, 0, x, 46.5) FROM (SELECT 11.5 AS x UNION ALL SELECT 13.0) ORDER BY x")
            .unwrap()
            .query_map(["POLYGON((11 46,12 46,12 47,11 47,11 46))"], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(inside, [true, false]);
        let missing: Option<f64> = conn
            .query_row("SELECT hub_geo_distance(NULL, 1, 2, 3)", [], |r| r.get(0))
            .unwrap();
        assert_eq!(missing, None);
    }
}
