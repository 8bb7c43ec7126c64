//! Tests of `geo`: the SQL of geographic conditions, and which areas are boxes.

use super::*;
use crate::content::tests::query;
use crate::content::{ContentFilter, ContentOrder, Total};

#[test]
fn radius_binds_every_number_and_orders_by_distance() {
    let circle = GeoCircle {
        latitude: 46.5,
        longitude: 11.3,
        metres: 5000.0,
    };
    let q = query(
        vec![ContentFilter::Radius(circle.clone())],
        ContentOrder::Distance {
            latitude: 46.5,
            longitude: 11.3,
        },
    );
    let sqlite = q.compile(Dialect::Sqlite);
    // The count tests the circle: the ranges `content_position` answers, then the
    // geodesic, unless the position is in the box inside the circle.
    let count = sqlite.count.as_sql();
    assert!(
        count.contains("(c.latitude IS NOT NULL AND c.latitude BETWEEN ?2 AND ?3 AND c.longitude BETWEEN ?4 AND ?5 AND ((c.latitude BETWEEN ?6 AND ?7 AND c.longitude BETWEEN ?8 AND ?9) OR hub_geo_distance(c.latitude, c.longitude, ?10, ?11) <= ?12))"),
        "{count}"
    );
    let inner = inner_box(&circle).unwrap();
    let bound = |i: usize| sqlite.count.params()[i].clone();
    assert_eq!(
        [bound(5), bound(6), bound(7), bound(8)],
        [inner[1], inner[3], inner[0], inner[2]].map(SqlValue::Real)
    );
    // Nearest first: only (entity, id, distance) is sorted, documents joined after.
    // Each candidate of the circle's box gets its distance once, which both keeps it
    // (within the circle) and orders it.
    let sql = sqlite.page.as_sql();
    assert_eq!(
        sql,
        "SELECT c.doc FROM (SELECT n.e, n.k, n.d FROM (SELECT c.entity AS e, c.id_key AS k, \
         hub_geo_distance(c.latitude, c.longitude, ?1, ?2) AS d FROM content c \
         WHERE c.entity = ?3 AND (c.latitude IS NOT NULL AND c.latitude BETWEEN ?4 AND ?5 \
         AND c.longitude BETWEEN ?6 AND ?7) LIMIT -1 OFFSET 0) n WHERE n.d <= ?8 \
         ORDER BY n.d, n.k LIMIT ?9 OFFSET ?10) p \
         JOIN content c ON c.entity = p.e AND c.id_key = p.k ORDER BY p.d, p.k"
    );
    assert_eq!(sqlite.page.params()[7], SqlValue::Real(5000.0));
    assert!(!sql.contains("46.5"), "{sql}");
    // PostgreSQL: the same ranges, and the geodesic of the point made from the same
    // columns as `geom`; the centre is a one-row subquery: computed once, not for every
    // candidate. No `geom`, whose index left every candidate's row to be read.
    let pg = q.compile(Dialect::Postgres);
    let point = "ST_SetSRID(ST_MakePoint(c.longitude, c.latitude), 4326)::geography";
    let count = pg.count.as_sql();
    assert!(
        count.contains(&format!("(c.latitude BETWEEN $2 AND $3 AND c.longitude BETWEEN $4 AND $5 AND ((c.latitude BETWEEN $6 AND $7 AND c.longitude BETWEEN $8 AND $9) OR ST_DWithin({point}, (SELECT ST_SetSRID(ST_MakePoint($10, $11), 4326)::geography), $12, true)))")),
        "{count}"
    );
    let page = pg.page.as_sql();
    assert_eq!(
        page,
        format!(
            "SELECT c.doc FROM (SELECT n.e, n.k, n.d FROM (SELECT c.entity AS e, c.id_key AS k, \
             ST_Distance({point}, (SELECT ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography), true) AS d \
             FROM content c WHERE c.entity = $3 AND (c.latitude BETWEEN $4 AND $5 \
             AND c.longitude BETWEEN $6 AND $7) OFFSET 0) n WHERE n.d <= $8 \
             ORDER BY n.d, n.k LIMIT $9 OFFSET $10) p \
             JOIN content c ON c.entity = p.e AND c.id_key = p.k ORDER BY p.d, p.k"
        )
    );
    assert!(!count.contains("geom") && !page.contains("geom"), "{count}");
}

#[test]
fn the_box_inside_a_circle_holds_only_positions_within_it() {
    let circle = |latitude: f64, longitude: f64, metres: f64| GeoCircle {
        latitude,
        longitude,
        metres,
    };
    for c in [
        circle(46.5, 11.3, 10_000.0),
        circle(46.5, 11.3, 100.0),
        circle(46.5, 11.3, 200_000.0),
        circle(0.0, 0.0, 50_000.0),
        circle(-33.9, 151.2, 5_000.0),
        circle(70.0, -150.0, 50_000.0),
        circle(78.2, 15.6, 30_000.0),
    ] {
        let [west, south, east, north] = inner_box(&c).unwrap_or_else(|| panic!("{c:?}"));
        // Every position of a 41 × 41 grid over the box, its edges included, lies
        // within the circle by the geodesic the stores test.
        for i in 0..=40 {
            for j in 0..=40 {
                let lat = south + (north - south) * f64::from(i) / 40.0;
                let lon = west + (east - west) * f64::from(j) / 40.0;
                let d = geodesic_distance_m(c.latitude, c.longitude, lat, lon);
                assert!(d <= c.metres, "{c:?}: ({lat}, {lon}) at {d} m");
            }
        }
        // And it is worth its ranges: more than two fifths of the circle's own box.
        let [w, s, e, n] = radius_bbox(c.latitude, c.longitude, c.metres);
        let share = (east - west) * (north - south) / ((e - w) * (n - s));
        assert!(share > 0.4, "{c:?}: {share}");
    }
    // None where the corners cannot vouch for the box: too wide a circle, a pole, the
    // antimeridian, no radius.
    for c in [
        circle(46.5, 11.3, 250_000.0),
        circle(89.9, 0.0, 10_000.0),
        circle(-89.9, 0.0, 10_000.0),
        circle(46.5, 179.99, 10_000.0),
        circle(46.5, 11.3, 0.0),
    ] {
        assert_eq!(inner_box(&c), None, "{c:?}");
    }
}

/// The area of `wkt` as sent in `srid`, with the same numbers as its WGS 84 geometry.
fn area_of(wkt: &str, srid: Srid, relation: Relation) -> GeoArea {
    let g = hub_geo::wkt::parse_wkt(wkt).unwrap();
    GeoArea {
        relation,
        geometry: g.clone(),
        original: g,
        srid,
    }
}

#[test]
fn areas_bind_the_geometry_text() {
    let area = area_of(
        "POLYGON((11 46,12 46,12 47,11 46))",
        Srid::Utm32N,
        Relation::Covers,
    );
    let q = query(vec![ContentFilter::Area(area)], ContentOrder::Default);
    let c = q.compile(Dialect::Sqlite);
    assert!(
        c.page
            .as_sql()
            .contains("hub_geo_relates(?6, ?7, c.longitude, c.latitude)"),
        "{}",
        c.page.as_sql()
    );
    assert_eq!(
        c.page.params()[5],
        SqlValue::Text("POLYGON((11 46,12 46,12 47,11 46))".into())
    );
    assert_eq!(c.page.params()[6], SqlValue::Int(1));
    let pg = q.compile(Dialect::Postgres);
    assert!(
        pg.page
            .as_sql()
            .contains("(ST_Covers((SELECT ST_Transform(ST_GeomFromText($2, $3), 4326)), c.geom))"),
        "{}",
        pg.page.as_sql()
    );
    assert_eq!(pg.page.params()[2], SqlValue::Int(32632));
}

#[test]
fn only_boxes_in_wgs84_degrees_are_tested_by_their_ranges() {
    let area = |wkt: &str, srid| area_of(wkt, srid, Relation::Intersects);
    let box_ = "POLYGON((11.3 46.4,11.5 46.4,11.5 46.6,11.3 46.6,11.3 46.4))";
    let cases = [
        (area(box_, Srid::Wgs84), Some([11.3, 46.4, 11.5, 46.6])),
        // Either way round, from any corner.
        (
            area(
                "POLYGON((11.5 46.6,11.5 46.4,11.3 46.4,11.3 46.6,11.5 46.6))",
                Srid::Wgs84,
            ),
            Some([11.3, 46.4, 11.5, 46.6]),
        ),
        // Not a box: a crossed ring through the corners, one that turns back, a
        // triangle, a hole, a fifth corner, no area.
        (
            area(
                "POLYGON((11.3 46.4,11.5 46.6,11.5 46.4,11.3 46.6,11.3 46.4))",
                Srid::Wgs84,
            ),
            None,
        ),
        (area("POLYGON((0 0,1 0,1 1,1 0,0 0))", Srid::Wgs84), None),
        (
            area("POLYGON((11 46,12 46,12 47,11 46))", Srid::Wgs84),
            None,
        ),
        (
            area(
                "POLYGON((0 0,10 0,10 10,0 10,0 0),(1 1,2 1,2 2,1 2,1 1))",
                Srid::Wgs84,
            ),
            None,
        ),
        (
            area("POLYGON((0 0,5 0,10 0,10 10,0 10,0 0))", Srid::Wgs84),
            None,
        ),
        (
            area("POLYGON((11 46,11 46,11 46,11 46,11 46))", Srid::Wgs84),
            None,
        ),
        (area("POINT(11 46)", Srid::Wgs84), None),
        // In metres: PostgreSQL transforms it itself, so the exact test stays.
        (area(box_, Srid::Utm32N), None),
    ];
    for (area, expected) in cases {
        assert_eq!(lonlat_box(&area), expected, "{area:?}");
    }
    let transformed = GeoArea {
        original: hub_geo::wkt::parse_wkt("POLYGON((0 0,1 0,1 1,0 1,0 0))").unwrap(),
        ..area(box_, Srid::Wgs84)
    };
    assert_eq!(lonlat_box(&transformed), None, "sent in other coordinates");

    let q = query(
        vec![ContentFilter::Area(area(box_, Srid::Wgs84))],
        ContentOrder::Default,
    );
    let sqlite = q.compile(Dialect::Sqlite).page.as_sql().to_string();
    assert!(
        sqlite.contains("(c.latitude IS NOT NULL AND c.latitude BETWEEN ?")
            && !sqlite.contains("hub_geo_relates"),
        "{sqlite}"
    );
    let pg = q.compile(Dialect::Postgres).page.as_sql().to_string();
    // The ranges alone, which `content_position` answers (no GiST candidates whose
    // rows would be read to test them).
    assert!(
        pg.contains("(c.latitude BETWEEN $")
            && !pg.contains("c.geom")
            && !pg.contains("ST_Intersects"),
        "{pg}"
    );
    // A walk tests the ranges of each document it passes, with no index.
    let walk = crate::content::walk::test_walk_in(&q, Dialect::Postgres);
    let walk = walk.page.as_sql();
    assert!(
        walk.contains("(c.latitude + 0 BETWEEN $") && !walk.contains("ST_MakeEnvelope"),
        "{walk}"
    );
    // SQLite's walk names the order's index that holds the positions, so it tests the
    // box without reading the rows it passes; other filters walk the plain order index.
    let walk = crate::content::walk::test_walk_in(&q, Dialect::Sqlite);
    let walk = walk.page.as_sql();
    assert!(
        walk.starts_with("SELECT c.doc FROM (SELECT c.id_key AS k, c.sort_key AS o FROM content c INDEXED BY content_order_points WHERE "),
        "{walk}"
    );
    let active = query(vec![ContentFilter::Active(true)], ContentOrder::Default);
    let walk = crate::content::walk::test_walk_in(&active, Dialect::Sqlite);
    let walk = walk.page.as_sql();
    assert!(
        walk.contains("FROM content c INDEXED BY content_order WHERE ")
            && !walk.contains("content_order_points"),
        "{walk}"
    );
}

#[test]
fn location_ids_use_the_side_table() {
    let q = query(
        vec![ContentFilter::LocationIn(vec![
            "regabc".into(),
            "tvsx".into(),
        ])],
        ContentOrder::Default,
    );
    let compiled = q.compile(Dialect::Sqlite);
    // The page and the count read the matching keys once, from the tag index.
    for sql in [compiled.page.as_sql(), compiled.count.as_sql()] {
        assert!(
            sql.contains("c.id_key IN (SELECT t.id_key FROM content_tag t WHERE t.entity = ?2 AND t.kind = ?3 AND t.tag IN (?4, ?5))"),
            "{sql}"
        );
    }
    // The walk of the order index probes each document it passes.
    let walk = crate::content::walk::test_walk_in(&q, Dialect::Sqlite);
    let walk = walk.page.as_sql();
    assert!(
        walk.contains("AND EXISTS (SELECT 1 FROM content_tag t WHERE t.entity = ?4 AND t.id_key = c.id_key AND t.kind = ?5 AND t.tag IN (?6, ?7))"),
        "{walk}"
    );
    let pg = crate::content::walk::test_walk_in(&q, Dialect::Postgres);
    let walk = pg.page.as_sql();
    assert!(walk.contains("AND t.tag IN ($6, $7) OFFSET 0)"), "{walk}");
}

#[test]
fn nearest_pages_try_smaller_circles_around_the_centre_first() {
    let circle = |metres| GeoCircle {
        latitude: 46.5,
        longitude: 11.3,
        metres,
    };
    let order = ContentOrder::Distance {
        latitude: 46.5,
        longitude: 11.3,
    };
    let radii = |filters| {
        query(filters, order.clone())
            .compile(Dialect::Sqlite)
            .attempts
            .iter()
            .map(|a| {
                // The ring's radius is the last number bound before LIMIT.
                let p = a.page.params();
                assert_eq!(a.size, 10);
                match &p[p.len() - 3] {
                    SqlValue::Real(r) => *r,
                    other => panic!("{other:?}"),
                }
            })
            .collect::<Vec<f64>>()
    };
    assert_eq!(
        radii(vec![ContentFilter::Radius(circle(10_000.0))]),
        [625.0, 1_250.0, 2_500.0, 5_000.0]
    );
    // Under 100 m a ring is not worth a statement.
    assert_eq!(
        radii(vec![ContentFilter::Radius(circle(1_000.0))]),
        [125.0, 250.0, 500.0]
    );
    assert_eq!(radii(vec![ContentFilter::Radius(circle(300.0))]), [150.0]);
    assert!(radii(vec![ContentFilter::Radius(circle(190.0))]).is_empty());
    // A circle around another centre is a filter, not the order's radius.
    let elsewhere = GeoCircle {
        latitude: 47.0,
        ..circle(10_000.0)
    };
    assert!(radii(vec![ContentFilter::Radius(elsewhere)]).is_empty());
    // The ring keeps every other filter of the query, and its circle takes the place of
    // the query's own, which holds it: one distance per candidate, which both keeps it
    // and orders it.
    let q = query(
        vec![
            ContentFilter::Active(true),
            ContentFilter::Radius(circle(10_000.0)),
        ],
        order.clone(),
    );
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let compiled = q.compile(dialect);
        let ring = &compiled.attempts[0].page;
        let sql = ring.as_sql();
        let distances = match dialect {
            Dialect::Sqlite => sql.matches("hub_geo_distance").count(),
            Dialect::Postgres => {
                sql.matches("ST_DWithin").count() + sql.matches("ST_Distance").count()
            }
        };
        assert_eq!(distances, 1, "{sql}");
        assert!(sql.contains(" WHERE n.d <= "), "{sql}");
        assert!(sql.contains("c.active = "), "{sql}");
        assert!(ring.params().contains(&SqlValue::Real(625.0)), "{sql}");
        assert!(!ring.params().contains(&SqlValue::Real(10_000.0)), "{sql}");
        assert!(sql.ends_with("ORDER BY p.d, p.k"), "{sql}");
    }
}

#[test]
fn a_kept_total_skips_the_rings_too_sparse_for_the_page() {
    let circle = ContentFilter::Radius(GeoCircle {
        latitude: 46.5,
        longitude: 11.3,
        metres: 10_000.0,
    });
    let order = ContentOrder::Distance {
        latitude: 46.5,
        longitude: 11.3,
    };
    // Which of the rings of 625 m, 1.25, 2.5 and 5 km (1/256, 1/64, 1/16 and 1/4 of the
    // circle) page `number` of 10 tries, with the list's total last kept at `kept`.
    let tried = |number: u32, kept: Option<Total>| {
        let mut q = query(vec![circle.clone()], order.clone());
        q.page.number = number;
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            assert_eq!(q.compile(dialect).attempts.len(), 4);
        }
        q.compile(Dialect::Sqlite)
            .attempts
            .iter()
            .map(|a| a.worth_trying(kept))
            .collect::<Vec<bool>>()
    };
    let exact = |n| Some(Total::exact(n));
    let cut_short = Some(Total {
        value: 10_001,
        estimated: true,
    });
    // (page, kept total, rings tried)
    let table = [
        // Without a kept total every ring is tried.
        (1, None, [true; 4]),
        // 370 matches: the 625 m ring holds 1.4 of them where they are spread evenly,
        // the 1.25 km one 5.8, short of a page of 10; it would hold 23 were they four
        // times as dense at the centre, but the next ring holds 23 in all, too few to
        // be worth a statement that may fall short. The 2.5 km ring's 23 do.
        (1, exact(370), [false, false, true, true]),
        (1, exact(639), [false, false, true, true]),
        // A total of 640 is just enough for the 1.25 km ring (640 / 64 = 10).
        (1, exact(640), [false, true, true, true]),
        // A deeper page needs more: page 10 ends at 100 matches.
        (10, exact(370), [false; 4]),
        (10, exact(400), [false, false, false, true]),
        // Where the next ring would hold a thousand or more, a ring that needs its
        // centre denser is tried: page 50 ends at 500, the 1.25 km ring holds 312 of
        // 20,000 where they are spread evenly and the 2.5 km one 1,250; of 12,000, 750.
        (50, exact(20_000), [false, true, true, true]),
        (50, exact(12_000), [false, false, true, true]),
        // A total cut short at the count's limit says there are more, not how many:
        // every ring is tried, where the same number exact skips two for page 100.
        (100, exact(10_001), [false, false, true, true]),
        (100, cut_short, [true; 4]),
        // No matches at all skips every ring.
        (1, exact(0), [false; 4]),
    ];
    for (page, kept, expected) in table {
        assert_eq!(tried(page, kept), expected, "page {page}, {kept:?}");
    }
    // A walk has no part of an area: the totals chose it already.
    let walk = crate::content::walk::test_walk_in(
        &query(vec![ContentFilter::Active(true)], ContentOrder::Default),
        Dialect::Postgres,
    );
    assert!(walk.worth_trying(Some(Total::exact(0))));
}

#[test]
fn the_points_of_a_dense_box_walk_the_order() {
    let area = area_of(
        "POLYGON((11.3 46.4,11.5 46.4,11.5 46.6,11.3 46.6,11.3 46.4))",
        Srid::Wgs84,
        Relation::Intersects,
    );
    let q = query(vec![ContentFilter::Area(area)], ContentOrder::Default);
    let listed = q.compile(Dialect::Postgres);
    let walk = listed.walk.expect("a box is walkable");
    // A zoom-6 tile of the scale-10 POIs: 51,000 of 70,000 match, so about 27,500
    // documents are passed for 20,001 points; the walk may look at twice that.
    let walked = walk
        .points(Total::exact(51_000), 70_000, 20_001)
        .expect("a dense box is walked");
    let sql = walked.statement.as_sql();
    assert_eq!(
        sql,
        "SELECT c.id, c.latitude, c.longitude, c.shortname FROM \
         (SELECT * FROM content c WHERE c.entity = $1 ORDER BY c.sort_key, c.id_key LIMIT $2) c \
         WHERE c.entity = $3 \
         AND (c.latitude + 0 BETWEEN $4 AND $5 AND c.longitude + 0 BETWEEN $6 AND $7) \
         AND c.latitude IS NOT NULL AND c.longitude IS NOT NULL \
         ORDER BY c.sort_key, c.id_key LIMIT $8"
    );
    let params = walked.statement.params();
    assert_eq!(params[1], SqlValue::Int(2 * 27_453));
    assert_eq!(params[7], SqlValue::Int(20_001));
    // The points statement over the matches: the box by its ranges, which
    // `content_position` answers.
    let set = q.compile_points(Dialect::Postgres, 20_001);
    assert!(
        set.statement
            .as_sql()
            .contains("(c.latitude BETWEEN $2 AND $3 AND c.longitude BETWEEN $4 AND $5)"),
        "{}",
        set.statement.as_sql()
    );

    // Fewer matches than points asked for, or matches too sparse to pass fewer
    // documents than there are matches: no walk.
    assert!(walk.points(Total::exact(20_000), 70_000, 20_001).is_none());
    assert!(walk.points(Total::exact(30_000), 700_000, 20_001).is_none());
    // SQLite reads every column of a subquery's rows: its walk names the index that
    // holds the points, and stops at the last key of the prefix.
    let sqlite = q.compile(Dialect::Sqlite).walk.expect("walkable");
    let walked = sqlite
        .points(Total::exact(51_000), 70_000, 20_001)
        .expect("a dense box is walked");
    assert_eq!(
        walked.statement.as_sql(),
        "SELECT c.id, c.latitude, c.longitude, c.shortname FROM content c \
         INDEXED BY content_order_points WHERE c.entity = ?1 \
         AND (c.latitude IS NOT NULL AND c.latitude BETWEEN ?2 AND ?3 AND c.longitude BETWEEN ?4 AND ?5) \
         AND c.sort_key <= (SELECT b.sort_key FROM content b INDEXED BY content_order \
         WHERE b.entity = ?6 ORDER BY b.sort_key, b.id_key LIMIT 1 OFFSET ?7) \
         AND c.latitude IS NOT NULL AND c.longitude IS NOT NULL \
         ORDER BY c.sort_key, c.id_key LIMIT ?8"
    );
    let params = walked.statement.params();
    assert_eq!(params[6], SqlValue::Int(2 * 27_453 - 1));
}
