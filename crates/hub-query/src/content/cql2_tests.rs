use super::*;
use crate::content::rawfilter::{parse_rawfilter, PathSegment};

/// The CQL2 filter and the `rawfilter` expression that must mean the same.
fn same(cql2: &str, rawfilter: &str) {
    let parsed = parse_cql2(cql2).unwrap_or_else(|e| panic!("{cql2}: {e}"));
    assert!(parsed.areas.is_empty());
    let mut expected = parse_rawfilter(rawfilter).unwrap();
    let mut got = parsed.filter.expect("an attribute filter");
    // Positions differ between the two spellings; compare what they mean.
    erase_positions(&mut expected);
    erase_positions(&mut got);
    assert_eq!(got, expected, "{cql2}");
}

fn erase_positions(f: &mut RawFilter) {
    match f {
        RawFilter::And(parts) | RawFilter::Or(parts) => parts.iter_mut().for_each(erase_positions),
        RawFilter::Not(inner) => erase_positions(inner),
        RawFilter::Compare { path, position, .. } => {
            *position = 0;
            path.position = 0;
        }
        RawFilter::Like { path, .. }
        | RawFilter::LikeIn { path, .. }
        | RawFilter::In { path, .. }
        | RawFilter::IsNull { path, .. } => path.position = 0,
    }
}

fn err(cql2: &str) -> (usize, String) {
    let e = parse_cql2(cql2).expect_err(cql2);
    (e.position, e.message)
}

#[test]
fn comparisons_and_boolean_logic_become_the_rawfilter_ast() {
    same("Shortname = 'Alm'", "eq(Shortname,'Alm')");
    same("GpsInfo.0.Altitude >= 1000", "ge(GpsInfo.0.Altitude,1000)");
    same(
        "a <> 1 AND b < 2 and c <= 3",
        "and(ne(a,1),lt(b,2),le(c,3))",
    );
    same(
        "a > 1 OR (b = TRUE AND \"Detail.de.Title\" = 'x')",
        "or(gt(a,1),and(eq(b,true),eq(Detail.de.Title,'x')))",
    );
    same("a IN ('x', 'y')", "in(a,'x','y')");
    same("a NOT IN (1,2)", "nin(a,1,2)");
    same("a IS NULL", "isnull(a)");
    same("a IS NOT NULL", "isnotnull(a)");
    same("a BETWEEN 1 AND 5", "and(ge(a,1),le(a,5))");
    same(
        "LastChange > TIMESTAMP('2024-01-02T10:00:00Z')",
        "gt(LastChange,dt'2024-01-02T10:00:00Z')",
    );
    same("d = DATE('2024-01-02')", "eq(d,dt'2024-01-02')");
    same("s = 'it''s'", "eq(s,\"it's\")");
    same("n = -1.5e2", "eq(n,-150)");
}

#[test]
fn not_and_like_build_negation_and_anchored_patterns() {
    let f = parse_cql2("NOT (a = 1) AND b NOT LIKE 'Alm%h_tte'")
        .unwrap()
        .filter
        .unwrap();
    let RawFilter::And(parts) = f else {
        panic!("{f:?}")
    };
    assert!(
        matches!(&parts[0], RawFilter::Not(inner) if matches!(**inner, RawFilter::Compare { op: CompareOp::Eq, .. }))
    );
    let RawFilter::Not(like) = &parts[1] else {
        panic!()
    };
    let RawFilter::LikeIn { path, patterns } = &**like else {
        panic!()
    };
    assert_eq!(path.segments, [PathSegment::Key("b".into())]);
    assert_eq!(patterns, &["^Alm.*h.tte$".to_string()]);
    assert_eq!(like_to_regex("50\\% (a.b)"), "^50% \\(a\\.b\\)$");
}

#[test]
fn s_intersects_with_bbox_or_wkt_becomes_an_area() {
    let f = parse_cql2("S_INTERSECTS(geometry, BBOX(11, 46, 12, 47)) AND Active = true").unwrap();
    assert_eq!(f.areas.len(), 1);
    let hub_geo::Geometry::Polygon(p) = &f.areas[0] else {
        panic!()
    };
    assert_eq!(p.exterior().0.len(), 5);
    assert!(matches!(f.filter, Some(RawFilter::Compare { .. })));
    let f = parse_cql2("s_intersects(geometry,POLYGON((11 46, 12 46, 12 47, 11 46)))").unwrap();
    assert!(f.filter.is_none());
    assert!(matches!(f.areas[0], hub_geo::Geometry::Polygon(_)));
    let f = parse_cql2("S_INTERSECTS(\"geometry\", POINT(11.3 46.5))").unwrap();
    assert!(matches!(f.areas[0], hub_geo::Geometry::Point(_)));
}

#[test]
fn errors_name_the_position() {
    assert_eq!(err("").0, 1);
    assert_eq!(err("a = ").0, 5);
    assert_eq!(err("a == 1").0, 4);
    assert_eq!(err("a = 'x").0, 5);
    assert_eq!(err("a ~ 1").0, 3);
    assert_eq!(err("a = 1 b = 2").0, 7);
    assert_eq!(err("(a = 1").0, 7);
    assert_eq!(err("a = TIMESTAMP('yesterday')").0, 15);
    assert_eq!(err("S_INTERSECTS(g, BBOX(1,2,3))").0, 22);
    assert_eq!(err("S_INTERSECTS(g, POLYGON((1 2, 3)))").0, 32);
    let (at, message) = err("a = 1 OR S_INTERSECTS(g, BBOX(1,2,3,4))");
    assert_eq!(at, 10);
    assert!(message.contains("top level"), "{message}");
    assert!(err("a LIKE 1").1.contains("text pattern"));
}

#[test]
fn limits_bound_length_depth_and_lists() {
    let long = format!("a = '{}'", "x".repeat(MAX_CQL2_CHARS));
    assert_eq!(err(&long).0, MAX_CQL2_CHARS + 1);
    let deep = format!("{}a = 1{}", "(".repeat(40), ")".repeat(40));
    assert!(err(&deep).1.contains("nest"));
    let nots = format!("{}a = 1", "NOT ".repeat(40));
    assert!(err(&nots).1.contains("nest"));
    let many = format!("a IN ({})", vec!["1"; MAX_IN_VALUES + 1].join(","));
    assert!(err(&many).1.contains("at most"));
}
