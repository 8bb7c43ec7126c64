use super::*;
use crate::content::geo::GeoCircle;
use crate::content::{tagfilter, Page};

fn query(filters: Vec<ContentFilter>, order: ContentOrder, number: u32) -> ContentQuery {
    ContentQuery {
        entity: "HubActivityPoi",
        filters,
        order,
        page: Page { size: 10, number },
        count_limit: Some(10_000),
    }
}

fn tags(text: &str) -> ContentFilter {
    ContentFilter::Tags {
        kind: "tag",
        filter: tagfilter::parse_tagfilter(text).unwrap(),
    }
}

#[test]
fn walks_only_filtered_pages_in_the_default_order() {
    let circle = ContentFilter::Radius(GeoCircle {
        latitude: 46.5,
        longitude: 11.3,
        metres: 1_000.0,
    });
    let walks = |filters, order, number| {
        CountedWalk::new(&query(filters, order, number), Dialect::Sqlite).is_some()
    };
    assert!(walks(vec![tags("and(a,b)")], ContentOrder::Default, 1));
    assert!(walks(vec![tags("a")], ContentOrder::Default, 300));
    assert!(!walks(vec![tags("a"), circle], ContentOrder::Default, 1));
    assert!(!walks(
        vec![ContentFilter::IdIn(vec!["x".into()])],
        ContentOrder::Default,
        1
    ));
    assert!(!walks(vec![], ContentOrder::Default, 1));
    assert!(!walks(vec![tags("a")], ContentOrder::Seed("1".into()), 1));
    assert!(!walks(vec![tags("a")], ContentOrder::Raw(vec![]), 1));
    // The walk bounds its prefix by the rows decided: the bound's OFFSET is the
    // third parameter, rows - 1.
    let walk = CountedWalk::new(
        &query(vec![tags("a")], ContentOrder::Default, 30),
        Dialect::Sqlite,
    )
    .unwrap()
    .attempt(Total::exact(40_000), 40_000)
    .unwrap();
    assert_eq!(walk.page.params()[2], SqlValue::Int(999));
    assert_eq!(walk.size, 10);
}

#[test]
fn a_page_is_walked_only_when_its_matches_are_dense() {
    // (page end, matches, documents) → the documents the walk may pass.
    let cases = [
        // Twice the documents it passes, at least 1,000, at most every document.
        ((10, 40_000, 40_000), Some(1_000)),
        ((10, 900, 70_000), Some(1_556)),
        ((250, 800, 2_400), Some(1_500)),
        ((600, 1_200, 2_400), Some(2_400)),
        // A capped count is a lower bound: the walk looks further.
        ((300, 10_001, 40_000), Some(2_400)),
        ((3_000, 30_000, 40_000), Some(8_000)),
        // Passing 12,000 documents for 1,000 matches: reading the matches is cheaper.
        ((300, 1_000, 40_000), None),
        ((10, 100, 70_000), None),
        ((30_000, 40_000, 60_000), None),
        // Past the matches (none at all, too), or too long a walk however dense.
        ((10, 0, 70_000), None),
        ((300, 299, 40_000), None),
        ((60_000, 200_000, 200_000), None),
        ((300, 40_000, 0), None),
    ];
    for ((page_end, matched, documents), rows) in cases {
        assert_eq!(
            walk_rows(page_end, matched, documents),
            rows,
            "{page_end} {matched} {documents}"
        );
    }
}

#[test]
fn a_page_at_or_past_an_exact_total_is_known_empty() {
    let walk = |number| {
        let q = query(vec![tags("hiking")], ContentOrder::Default, number);
        CountedWalk::new(&q, Dialect::Sqlite).unwrap()
    };
    let estimated = |value| Total {
        value,
        estimated: true,
    };
    // (page, total, empty without a statement)
    let cases = [
        (1, Total::exact(0), true),
        (1, Total::exact(1), false),
        (3, Total::exact(20), true),
        (3, Total::exact(21), false),
        (3, Total::exact(15), true),
        // An estimate may be short of the matches.
        (3, estimated(20), false),
        (2_000, estimated(10_001), false),
    ];
    for (number, total, empty) in cases {
        assert_eq!(
            walk(number).past_the_end(total),
            empty,
            "{number} {total:?}"
        );
    }
}

#[test]
fn a_whole_read_walks_when_its_matches_are_dense() {
    let q = query(vec![tags("hiking")], ContentOrder::Default, 1);
    let whole = WholeWalk::of(&q).unwrap();
    // (matches, documents, walked)
    let cases = [
        (0, 70_000, false),
        (4_374, 70_000, false),
        (4_375, 70_000, true),
        (48_000, 70_000, true),
        (1, 1, true),
    ];
    for (matched, documents, walked) in cases {
        let found = whole.statement(matched, documents);
        assert_eq!(found.is_some(), walked, "{matched} of {documents}");
    }
    let sql = whole.statement(1, 1).unwrap();
    let text = sql.as_sql();
    assert!(
        text.starts_with(
            "SELECT c.doc FROM content c INDEXED BY content_order WHERE c.entity = ?1 AND "
        ),
        "{text}"
    );
    assert!(
        text.contains("EXISTS (SELECT 1 FROM content_tag t"),
        "{text}"
    );
    assert!(text.ends_with(" ORDER BY c.sort_key, c.id_key"), "{text}");
    assert!(whole.documents().filters.is_empty());
    // Filters an index answers, other orders and whole lists do not walk.
    let circle = ContentFilter::Radius(GeoCircle {
        latitude: 46.5,
        longitude: 11.3,
        metres: 1_000.0,
    });
    for other in [
        query(vec![circle], ContentOrder::Default, 1),
        query(vec![tags("hiking")], ContentOrder::Seed("7".into()), 1),
        query(vec![], ContentOrder::Default, 1),
    ] {
        assert!(WholeWalk::of(&other).is_none(), "{other:?}");
    }
}

#[test]
fn the_walk_reads_a_bounded_prefix_of_the_order_index() {
    let q = query(vec![tags("and(hiking,summer)")], ContentOrder::Default, 2);
    let sqlite = test_walk_in(&q, Dialect::Sqlite);
    let sql = sqlite.page.as_sql();
    assert!(
        sql.starts_with("SELECT c.doc FROM (SELECT c.id_key AS k, c.sort_key AS o FROM content c INDEXED BY content_order WHERE c.entity = ?1 AND c.sort_key <= (SELECT b.sort_key FROM content b INDEXED BY content_order WHERE b.entity = ?2 ORDER BY b.sort_key, b.id_key LIMIT 1 OFFSET ?3)"),
        "{sql}"
    );
    assert_eq!(sqlite.page.params()[2], SqlValue::Int(999));
    // One primary-key probe per tag of an `and` group, values bound.
    assert_eq!(
        sql.matches("EXISTS (SELECT 1 FROM content_tag t").count(),
        2
    );
    assert!(sqlite
        .page
        .params()
        .contains(&SqlValue::Text("hiking".into())));
    assert!(sql.ends_with("ORDER BY p.o, p.k"), "{sql}");
    let pg = test_walk_in(&q, Dialect::Postgres);
    assert!(
        !pg.page.as_sql().contains("INDEXED BY"),
        "{}",
        pg.page.as_sql()
    );
    // PostgreSQL reads the first rows of the order as a `LIMIT` subquery, only as far
    // as the page needs, and no probe for the last row's key.
    assert!(
        pg.page.as_sql().starts_with("SELECT c.doc FROM (SELECT c.id_key AS k, c.sort_key AS o FROM (SELECT * FROM content c WHERE c.entity = $1 ORDER BY c.sort_key, c.id_key LIMIT $2) c WHERE "),
        "{}",
        pg.page.as_sql()
    );
    assert_eq!(pg.page.params()[1], SqlValue::Int(1_000));
    assert!(
        !pg.page.as_sql().contains("SELECT b.sort_key"),
        "{}",
        pg.page.as_sql()
    );
    assert_eq!(
        pg.page
            .as_sql()
            .matches("AND t.id_key = c.id_key OFFSET 0)")
            .count(),
        2,
        "{}",
        pg.page.as_sql()
    );
}

#[test]
fn probed_search_tests_titles_per_document_with_the_term_bound() {
    let q = query(
        vec![ContentFilter::Search {
            folded_term: "50%'; drop".into(),
            id_key: "50%'; drop".into(),
            languages: Some(vec!["de".into()]),
        }],
        ContentOrder::Default,
        1,
    );
    let walk = test_walk_in(&q, Dialect::Sqlite);
    let sql = walk.page.as_sql();
    assert!(!sql.contains("drop"), "{sql}");
    assert!(!sql.contains("content_title_fts"), "{sql}");
    assert!(sql.contains("AND t.id_key = c.id_key AND t.lang IN (?5) AND t.folded LIKE ?6 ESCAPE '\\') OR c.id_key = ?7)"), "{sql}");
    assert_eq!(
        walk.page.params()[5],
        SqlValue::Text("%50\\%'; drop%".into())
    );
}

#[test]
fn the_rule_holds_at_the_extremes() {
    assert_eq!(walk_rows(u64::MAX, u64::MAX, u64::MAX), None);
    assert_eq!(walk_rows(1, u64::MAX, u64::MAX), Some(1_000));
    assert_eq!(walk_rows(u64::MAX - 1, u64::MAX, u64::MAX), None);
}
