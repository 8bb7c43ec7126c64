//! Tables of `ContentQuery` → compiled SQL for both dialects.

use super::*;

/// A query of POIs, page 1 of 10 (also for the other modules' tests).
pub(crate) fn query(filters: Vec<ContentFilter>, order: ContentOrder) -> ContentQuery {
    ContentQuery {
        entity: "Event",
        filters,
        order,
        page: Page {
            size: 10,
            number: 3,
        },
        count_limit: None,
    }
}

#[test]
fn compiles_filters_with_bound_values_only() {
    let q = query(
        vec![
            ContentFilter::SourceIn(vec!["lts".into()]),
            ContentFilter::Active(true),
            ContentFilter::Search {
                folded_term: "50%'; drop".into(),
                id_key: "x".into(),
                languages: Some(vec!["de".into()]),
            },
        ],
        ContentOrder::Default,
    );
    let compiled = q.compile(Dialect::Sqlite);
    let sql = compiled.page.as_sql();
    assert!(!sql.contains("drop"), "{sql}");
    assert!(sql.ends_with("ORDER BY o, k LIMIT ?9 OFFSET ?10) p JOIN content c ON c.entity = ?11 AND c.id_key = p.k ORDER BY p.o, p.k"), "{sql}");
    assert_eq!(
        compiled.page.params()[3],
        SqlValue::Text("\"50%'; drop\"".into())
    );
    assert_eq!(
        compiled.page.params()[6],
        SqlValue::Text("%50\\%'; drop%".into())
    );
    assert_eq!(compiled.page.params()[9], SqlValue::Int(20));
    assert!(!compiled.count.as_sql().contains("LIMIT"));
}

#[test]
fn postgres_finds_the_matches_before_sorting_a_page_that_carries_its_total() {
    let filtered = query(vec![ContentFilter::Active(true)], ContentOrder::Default);
    let plain = query(vec![], ContentOrder::Default);
    let fenced = |q: &ContentQuery, dialect| {
        q.compile(dialect)
            .page
            .as_sql()
            .contains("FROM (SELECT c.id_key, c.sort_key FROM content c WHERE")
    };
    assert!(fenced(&filtered, Dialect::Postgres));
    assert!(!fenced(&filtered, Dialect::Sqlite));
    assert!(
        !fenced(&plain, Dialect::Postgres),
        "no window count, the walk stops"
    );
    let sql = filtered
        .compile(Dialect::Postgres)
        .page
        .as_sql()
        .to_string();
    assert!(
        sql.contains("c.active = $2 OFFSET 0) c ORDER BY o, k LIMIT"),
        "{sql}"
    );
}

#[test]
fn a_whole_read_sorts_the_documents_once() {
    // The page form finds the keys first and sorts the documents again after the
    // join; a whole read reads the documents in the order the statement gives.
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let q = query(vec![ContentFilter::Active(true)], ContentOrder::Default);
        let compiled = q.compile_whole(dialect);
        let sql = compiled.page.as_sql();
        assert!(
            sql.starts_with("SELECT c.doc FROM content c WHERE"),
            "{sql}"
        );
        assert!(!sql.contains("JOIN"), "{sql}");
        assert_eq!(sql.matches("ORDER BY").count(), 1, "{sql}");
        assert!(sql.contains("ORDER BY c.sort_key, c.id_key LIMIT"), "{sql}");
        assert_eq!(
            compiled.count.as_sql(),
            q.compile(dialect).count.as_sql(),
            "the same count"
        );
    }
}

#[test]
fn a_page_of_the_next_begin_order_sorts_keys_then_reads_its_documents() {
    // Each next begin is computed once per event, and only keys are sorted; the whole
    // read spells the same order on the documents.
    for (descending, direction) in [(false, "ASC"), (true, "DESC")] {
        let order = ContentOrder::NextBegin {
            descending,
            now: "2030-01-01T00:00:00".into(),
        };
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let sql = query(vec![], order.clone()).compile(dialect).page;
            let sql = sql.as_sql();
            assert!(
                sql.starts_with(
                    "SELECT c.doc FROM (SELECT c.id_key AS k, (SELECT MIN(d.date_begin)"
                ),
                "{sql}"
            );
            assert_eq!(sql.matches("content_date").count(), 1, "{sql}");
            assert!(
                sql.contains(&format!("ORDER BY o {direction} NULLS LAST, k LIMIT")),
                "{sql}"
            );
            assert!(
                sql.ends_with(&format!("ORDER BY p.o {direction} NULLS LAST, p.k")),
                "{sql}"
            );
            let whole = query(vec![], order.clone()).compile_whole(dialect).page;
            assert!(
                whole
                    .as_sql()
                    .contains(") IS NULL, (SELECT MIN(d.date_begin)"),
                "{}",
                whole.as_sql()
            );
        }
    }
}

fn search(term: &str) -> ContentQuery {
    query(
        vec![ContentFilter::Search {
            folded_term: term.into(),
            id_key: term.into(),
            languages: None,
        }],
        ContentOrder::Default,
    )
}

#[test]
fn search_reads_the_trigram_index_only_for_terms_it_can_answer() {
    let with_index = |term: &str, dialect| {
        search(term)
            .compile(dialect)
            .page
            .as_sql()
            .contains("content_title_fts MATCH")
    };
    assert!(with_index("hüt", Dialect::Sqlite));
    assert!(!with_index("hü", Dialect::Sqlite));
    assert!(!with_index("h", Dialect::Sqlite));
    // PostgreSQL's planner picks the pg_trgm index for the LIKE itself.
    assert!(!with_index("hütte", Dialect::Postgres));
    // The phrase is bound with every quote doubled: no FTS5 syntax from the client.
    let compiled = search("a\"b OR c").compile(Dialect::Sqlite);
    assert!(compiled
        .page
        .params()
        .contains(&SqlValue::Text("\"a\"\"b OR c\"".into())));
}

#[test]
fn an_unfiltered_list_counts_exactly_whatever_the_limit() {
    let mut q = query(vec![], ContentOrder::Default);
    q.count_limit = Some(100);
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let compiled = q.compile(dialect);
        assert_eq!(compiled.count_limit, None);
        assert!(!compiled.count.as_sql().contains("capped"));
    }
}

#[test]
fn capped_counts_stop_after_the_limit() {
    let mut q = query(vec![ContentFilter::Active(true)], ContentOrder::Default);
    q.count_limit = Some(100);
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let count = q.compile(dialect).count;
        assert!(
            count
                .as_sql()
                .starts_with("SELECT COUNT(*) FROM (SELECT 1 FROM content c WHERE"),
            "{}",
            count.as_sql()
        );
        assert!(count.as_sql().ends_with(") capped"), "{}", count.as_sql());
        // The limit's next match, then the slack that lets a kept total outlive writes.
        let read = 101 + COUNT_SLACK as i64;
        assert_eq!(count.params().last(), Some(&SqlValue::Int(read)));
    }
}

/// Capped counts of a search no index narrows test each document (`EXISTS`), stopping
/// at the cap (on SQLite for single letters only), and so do exact ones on PostgreSQL;
/// other counts collect the matches (`IN`).
#[test]
fn counts_probe_only_searches_no_index_narrows() {
    let search = |term: &str| ContentFilter::Search {
        folded_term: term.into(),
        id_key: term.into(),
        languages: None,
    };
    let tag = ContentFilter::Tags {
        kind: "tag",
        filter: tagfilter::parse_tagfilter("and(hiking)").unwrap(),
    };
    // (filters, count limit, probes on SQLite, probes on PostgreSQL)
    let cases: Vec<(Vec<ContentFilter>, Option<u64>, bool, bool)> = vec![
        (vec![search("i")], Some(100), true, true),
        (
            vec![search("ö"), ContentFilter::Active(true)],
            Some(100),
            true,
            true,
        ),
        (vec![search("hö")], Some(100), false, true),
        (
            vec![search("hö"), ContentFilter::Active(true)],
            Some(100),
            false,
            true,
        ),
        (
            vec![search("h"), ContentFilter::SourceIn(vec!["lts".into()])],
            Some(100),
            true,
            true,
        ),
        (vec![search("hot")], Some(100), false, false),
        // Exact counts (Find's per type): PostgreSQL probes the same searches.
        (vec![search("h")], None, false, true),
        (vec![search("hö")], None, false, true),
        (vec![search("höt")], None, false, false),
        (vec![search("h"), tag.clone()], None, false, false),
        (vec![search("h"), tag.clone()], Some(100), false, false),
        (vec![tag], Some(100), false, false),
    ];
    for (filters, limit, sqlite, postgres) in cases {
        let mut q = query(filters.clone(), ContentOrder::Default);
        q.count_limit = limit;
        for (dialect, probes) in [(Dialect::Sqlite, sqlite), (Dialect::Postgres, postgres)] {
            let count = q.compile(dialect).count;
            let sql = count.as_sql();
            assert_eq!(
                sql.contains("EXISTS (SELECT 1 FROM content_title t"),
                probes,
                "{filters:?} {limit:?}: {sql}"
            );
            if filters
                .iter()
                .any(|f| matches!(f, ContentFilter::Search { .. }))
            {
                assert_eq!(
                    sql.contains("c.id_key IN (SELECT t.id_key FROM content_title t"),
                    !probes,
                    "{sql}"
                );
            }
        }
    }
}

#[test]
fn totals_are_exact_up_to_the_limit_and_estimated_above() {
    assert_eq!(Total::settle(100, Some(100), None), Total::exact(100));
    assert_eq!(Total::settle(5_000, None, None), Total::exact(5_000));
    // Past the limit: the estimate, but never less than what was counted.
    assert_eq!(
        Total::settle(101, Some(100), Some(40_000)),
        Total {
            value: 40_000,
            estimated: true
        }
    );
    assert_eq!(
        Total::settle(101, Some(100), Some(3)),
        Total {
            value: 101,
            estimated: true
        }
    );
    assert_eq!(
        Total::settle(101, Some(100), None),
        Total {
            value: 101,
            estimated: true
        }
    );
    assert!(Total::needs_estimate(101, Some(100)));
    assert!(!Total::needs_estimate(100, Some(100)));
    assert!(!Total::needs_estimate(u64::MAX, None));
}

/// A count reads past `limit + 1` only for its slack: the total is what a count stopping
/// at `limit + 1` gives, and the matches read past it are the documents it outlives.
#[test]
fn matches_read_past_the_cap_are_slack_not_total() {
    // (counted, limit, estimate, total, estimated, slack)
    let cases = [
        (357, Some(100), None, 101, true, 256),
        (200, Some(100), None, 101, true, 99),
        (101, Some(100), None, 101, true, 0),
        (357, Some(100), Some(3), 101, true, 256),
        (357, Some(100), Some(40_000), 40_000, true, 256),
        (100, Some(100), None, 100, false, 0),
        (7, Some(100), None, 7, false, 0),
        (5_000, None, None, 5_000, false, 0),
        (u64::MAX, Some(u64::MAX), None, u64::MAX, false, 0),
    ];
    for (counted, limit, estimate, value, estimated, slack) in cases {
        let case = (counted, limit, estimate);
        let total = Total::settle(counted, limit, estimate);
        assert_eq!(total, Total { value, estimated }, "{case:?}");
        assert_eq!(Total::slack(counted, limit), slack, "{case:?}");
    }
}

#[test]
fn seed_order_differs_per_dialect_but_binds_the_seed() {
    let q = query(vec![], ContentOrder::Seed("7".into()));
    let sqlite = q.compile(Dialect::Sqlite);
    assert!(
        sqlite.page.as_sql().contains("hub_seed(c.id_key, ?1)"),
        "{}",
        sqlite.page.as_sql()
    );
    assert_eq!(sqlite.page.params()[0], SqlValue::Text("7".into()));
    let pg = q.compile(Dialect::Postgres);
    assert!(
        pg.page
            .as_sql()
            .contains(r#"substr(md5(c.id_key || $1), 1, 15) COLLATE "C""#),
        "{}",
        pg.page.as_sql()
    );
}

/// `langfilter` reads the documents in a language once from its index where the
/// matches drive the statement, and probes each document only in the walk.
#[test]
fn languages_are_read_as_a_set_and_probed_only_in_the_walk() {
    let q = query(
        vec![ContentFilter::HasAllLanguages(vec![
            "de".into(),
            "ru".into(),
        ])],
        ContentOrder::Default,
    );
    let sqlite = q.compile(Dialect::Sqlite);
    for sql in [sqlite.page.as_sql(), sqlite.count.as_sql()] {
        assert!(
            sql.contains(
                "(c.id_key IN (SELECT l.id_key FROM content_language l WHERE l.entity = ?2 AND l.lang = ?3) \
                 AND c.id_key IN (SELECT l.id_key FROM content_language l WHERE l.entity = ?4 AND l.lang = ?5))"
            ),
            "{sql}"
        );
    }
    let walk = super::walk::test_walk_in(&q, Dialect::Sqlite);
    let walk = walk.page.as_sql();
    assert!(
        walk.contains(
            "(EXISTS (SELECT 1 FROM content_language l WHERE l.entity = ?4 AND l.id_key = c.id_key AND l.lang = ?5) \
             AND EXISTS (SELECT 1 FROM content_language l WHERE l.entity = ?6 AND l.id_key = c.id_key AND l.lang = ?7))"
        ),
        "{walk}"
    );
    let pg = super::walk::test_walk_in(&q, Dialect::Postgres);
    let walk = pg.page.as_sql();
    assert!(walk.contains("AND l.lang = $5 OFFSET 0)"), "{walk}");
    assert_eq!(pg.page.params()[4], SqlValue::Text("de".into()));
}

#[test]
fn the_first_pages_of_a_whole_list_read_documents_along_the_order_index() {
    let straight = |filters: Vec<ContentFilter>, order: ContentOrder, number: u32| {
        let mut q = query(filters, order);
        q.page.number = number;
        [Dialect::Sqlite, Dialect::Postgres].map(|dialect| {
            let sql = q.compile(dialect).page.as_sql().to_string();
            !sql.contains(" JOIN content c ON ")
        })
    };
    let cases: [(Vec<ContentFilter>, ContentOrder, u32, bool); 6] = [
        (vec![], ContentOrder::Default, 1, true),
        (vec![], ContentOrder::Default, 5, true),
        (vec![], ContentOrder::Default, 6, false),
        (vec![], ContentOrder::Seed("7".into()), 1, false),
        (
            vec![ContentFilter::Active(true)],
            ContentOrder::Default,
            1,
            false,
        ),
        (
            vec![ContentFilter::SourceIn(vec!["lts".into()])],
            ContentOrder::Default,
            2,
            false,
        ),
    ];
    for (filters, order, number, expected) in cases {
        let case = format!("{filters:?} {order:?} page {number}");
        assert_eq!(straight(filters, order, number), [expected; 2], "{case}");
    }
    let mut first = query(vec![], ContentOrder::Default);
    first.page.number = 1;
    assert_eq!(
        first.compile(Dialect::Postgres).page.as_sql(),
        "SELECT c.doc FROM content c WHERE c.entity = $1 ORDER BY c.sort_key, c.id_key LIMIT $2 OFFSET $3"
    );
}

#[test]
fn every_page_statement_marks_its_document_column() {
    // A backend that keeps documents selects their keys instead: every statement that
    // reads a page's documents must say where its document column is.
    let circle = geo::GeoCircle {
        latitude: 46.5,
        longitude: 11.3,
        metres: 5000.0,
    };
    let nearest = ContentOrder::Distance {
        latitude: 46.5,
        longitude: 11.3,
    };
    let queries = [
        ("default order", query(vec![], ContentOrder::Default)),
        (
            "filtered",
            query(vec![ContentFilter::Active(true)], ContentOrder::Default),
        ),
        ("seed", query(vec![], ContentOrder::Seed("7".into()))),
        (
            "radius",
            query(vec![ContentFilter::Radius(circle)], nearest),
        ),
        (
            "next begin",
            query(
                vec![],
                ContentOrder::NextBegin {
                    descending: false,
                    now: "2026-01-01".into(),
                },
            ),
        ),
    ];
    for (name, q) in queries {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let page = q.compile(dialect).page;
            let keyed = page.with_document_replaced("c.id_key");
            let keyed = keyed.unwrap_or_else(|| panic!("{name}, {dialect:?}: {}", page.as_sql()));
            assert!(!keyed.contains("c.doc "), "{name}, {dialect:?}: {keyed}");
            assert!(!keyed.contains("c.doc,"), "{name}, {dialect:?}: {keyed}");
        }
    }
}
