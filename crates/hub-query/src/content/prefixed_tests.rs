use super::super::{ContentFilter, Page};
use super::*;

fn page(number: u32, size: u32, order: ContentOrder) -> ContentQuery {
    ContentQuery {
        entity: "Event",
        filters: vec![ContentFilter::Active(true)],
        order,
        page: Page { size, number },
        count_limit: None,
    }
}

#[test]
fn prefixed_pages_ending_within_the_deepest_prefix_qualify_and_read_the_shortest_reaching_them() {
    let seed = || ContentOrder::Seed("7".into());
    // (query, the depth of the prefix it reads, or none when it does not qualify)
    let cases = [
        (page(1, 10, seed()), Some(1_000)),
        (page(100, 10, seed()), Some(1_000)),
        (page(101, 10, seed()), Some(8_000)),
        (page(1, 1_000, seed()), Some(1_000)),
        (page(2, 1_000, seed()), Some(8_000)),
        (page(800, 10, seed()), Some(8_000)),
        (page(801, 10, seed()), Some(64_000)),
        (page(6_401, 10, seed()), Some(128_000)),
        (page(1_280, 100, seed()), Some(128_000)),
        (page(1_281, 100, seed()), None),
        (page(u32::MAX, 1_000, seed()), None),
        (page(1, 10, ContentOrder::Default), None),
        (page(3, 10, rawsort("Shortname")), Some(1_000)),
        (page(1_281, 100, rawsort("Shortname")), None),
    ];
    for (query, depth) in cases {
        let found = PrefixedPage::of(&query);
        assert_eq!(found.as_ref().map(PrefixedPage::depth), depth, "{query:?}");
        if let Some(found) = found {
            assert!(
                found
                    .prefix(Dialect::Sqlite)
                    .params()
                    .contains(&SqlValue::Int(found.depth() as i64)),
                "{query:?}"
            );
        }
    }
}

fn rawsort(keys: &str) -> ContentOrder {
    ContentOrder::Raw(super::super::rawfilter::parse_rawsort(keys).unwrap())
}

#[test]
fn each_rawsort_has_its_own_prefix_ordered_by_its_keys_then_id() {
    let by_title = PrefixedPage::of(&page(2, 10, rawsort("Detail.de.Title"))).unwrap();
    let by_title_down = PrefixedPage::of(&page(2, 10, rawsort("-Detail.de.Title"))).unwrap();
    let by_name = PrefixedPage::of(&page(7, 10, rawsort("Shortname"))).unwrap();
    assert_ne!(by_title.scope(), by_title_down.scope());
    assert_ne!(by_title.scope(), by_name.scope());
    let seeded = PrefixedPage::of(&page(2, 10, ContentOrder::Seed("7".into()))).unwrap();
    assert_ne!(by_title.scope(), seeded.scope());

    let sql = by_title_down.prefix(Dialect::Sqlite);
    assert!(
        sql.as_sql().contains(
            "FROM (SELECT json_extract(c.docb, ?2) IS NULL AS o0, json_extract(c.docb, ?3) \
             AS o1, c.id_key AS k FROM content c WHERE c.entity = ?4 AND c.active = ?5) p \
             ORDER BY p.o0 ASC, p.o1 DESC, p.k LIMIT ?6"
        ),
        "{}",
        sql.as_sql()
    );
    assert!(sql
        .as_sql()
        .starts_with("SELECT p.k, COALESCE((SELECT r.revision"));
    // A name: the four parts of PostgreSQL's sort record, computed below the count.
    let sql = by_name.prefix(Dialect::Postgres);
    assert!(
        sql.as_sql()
            .contains(" OFFSET 0) p ORDER BY p.o0 ASC, p.o1 ASC, p.o2 ASC, p.o3 ASC, p.k LIMIT $"),
        "{}",
        sql.as_sql()
    );
    assert!(sql.params().contains(&SqlValue::Int(PREFIX as i64)));
}

/// Page 2 of the whole list, unfiltered, in `order`.
fn whole(order: ContentOrder) -> ContentQuery {
    ContentQuery {
        filters: Vec::new(),
        ..page(2, 10, order)
    }
}

#[test]
fn a_whole_list_by_name_descending_is_read_along_its_index_backwards() {
    // (query, whether its prefix reads the entity's rows in descending order)
    let cases = [
        (whole(rawsort("-Shortname")), true),
        (whole(rawsort("Shortname")), false),
        // A filter's own index may hand out the matches.
        (page(2, 10, rawsort("-Shortname")), false),
        // Terms read from the documents.
        (whole(rawsort("-Shortname,Id")), false),
        (whole(rawsort("-Detail.de.Title")), false),
    ];
    for (query, backwards) in cases {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let sql = PrefixedPage::of(&query).unwrap().prefix(dialect);
            let read = sql
                .as_sql()
                .contains(" ORDER BY c.sort_key DESC, c.id_key DESC");
            assert_eq!(read, backwards, "{dialect:?} {query:?}: {}", sql.as_sql());
            // Kept apart from the outer statement, which would drop its order.
            let fenced = sql.as_sql().contains(match dialect {
                Dialect::Sqlite => " DESC LIMIT -1) p ",
                Dialect::Postgres => " DESC OFFSET 0) p ",
            });
            assert_eq!(fenced, backwards, "{dialect:?} {query:?}: {}", sql.as_sql());
        }
    }
}

#[test]
fn a_whole_list_is_counted_on_its_own_and_a_filtered_one_as_its_prefix_is_read() {
    // (query, whether the prefix counts its matches with a window over its rows)
    let cases = [
        (whole(rawsort("-Shortname")), false),
        (whole(rawsort("Shortname,Id")), false),
        (whole(ContentOrder::Seed("7".into())), false),
        (page(2, 10, rawsort("-Shortname")), true),
        (page(2, 10, ContentOrder::Seed("7".into())), true),
    ];
    for (query, window) in cases {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let sql = PrefixedPage::of(&query).unwrap().prefix(dialect);
            let sql = sql.as_sql();
            assert_eq!(
                sql.contains("COUNT(*) OVER ()"),
                window,
                "{dialect:?}: {sql}"
            );
            let counted = sql.contains("(SELECT COUNT(*) FROM content c WHERE c.entity = ");
            assert_eq!(counted, !window, "{dialect:?}: {sql}");
        }
    }
}

#[test]
fn filtered_lists_in_the_default_order_keep_a_prefix_of_their_sort_keys() {
    let filtered = page(3, 10, ContentOrder::Default);
    let found = PrefixedPage::filtered(&filtered).unwrap();
    assert_eq!(found.depth(), PREFIX);
    // Only where a walk did not answer: never read first like a seed's.
    assert!(PrefixedPage::of(&filtered).is_none());
    let mut whole = filtered.clone();
    whole.filters.clear();
    let mut by_id = filtered.clone();
    by_id.filters.push(ContentFilter::IdIn(vec!["a".into()]));
    let mut seeded = filtered.clone();
    seeded.order = ContentOrder::Seed("7".into());
    for other in [
        whole,
        by_id,
        seeded,
        page(1_281, 100, ContentOrder::Default),
    ] {
        assert!(PrefixedPage::filtered(&other).is_none(), "{other:?}");
    }
    let seeded = PrefixedPage::of(&page(3, 10, ContentOrder::Seed("7".into()))).unwrap();
    assert_ne!(found.scope(), seeded.scope());

    let sql = found.prefix(Dialect::Sqlite);
    assert!(
        sql.as_sql().contains(
            "(SELECT c.id_key AS k, COUNT(*) OVER () AS n, c.sort_key AS o FROM content c WHERE"
        ),
        "{}",
        sql.as_sql()
    );
    assert!(
        sql.as_sql().contains("ORDER BY o, k LIMIT ?"),
        "{}",
        sql.as_sql()
    );
    let sql = found.prefix(Dialect::Postgres);
    assert!(
        sql.as_sql()
            .contains("c.sort_key AS o FROM (SELECT c.id_key, c.sort_key FROM content c WHERE"),
        "{}",
        sql.as_sql()
    );
    assert!(
        sql.as_sql().contains(" OFFSET 0) c ORDER BY o, k LIMIT $"),
        "{}",
        sql.as_sql()
    );
}

/// A prefix reads every match: PostgreSQL probes a search no index narrows
/// (`ContentQuery::every_match_form`), SQLite and longer terms collect.
#[test]
fn prefixes_of_short_searches_probe_on_postgresql() {
    let search = |term: &str, order: ContentOrder| {
        let mut query = page(3, 10, order);
        query.filters.push(ContentFilter::Search {
            folded_term: term.into(),
            id_key: term.into(),
            languages: None,
        });
        query
    };
    let probes = "EXISTS (SELECT 1 FROM content_title t";
    for (term, on_postgres) in [("h", true), ("ho", true), ("hot", false)] {
        for order in [ContentOrder::Default, rawsort("Shortname")] {
            let query = search(term, order.clone());
            let found = PrefixedPage::of(&query)
                .or_else(|| PrefixedPage::filtered(&query))
                .unwrap();
            for (dialect, expected) in [(Dialect::Sqlite, false), (Dialect::Postgres, on_postgres)]
            {
                let sql = found.prefix(dialect);
                assert_eq!(
                    sql.as_sql().contains(probes),
                    expected,
                    "{term} {order:?} {dialect:?}: {}",
                    sql.as_sql()
                );
            }
        }
    }
}

#[test]
fn the_next_begin_order_keeps_a_prefix_for_the_span_it_was_read_in() {
    let at = |now: &str, descending| ContentOrder::NextBegin {
        descending,
        now: now.into(),
    };
    let noon = PrefixedPage::of(&page(2, 10, at("2026-11-30 12:00:00", false))).unwrap();
    let later = PrefixedPage::of(&page(7, 10, at("2026-11-30 16:00:00", false))).unwrap();
    let down = PrefixedPage::of(&page(2, 10, at("2026-11-30 12:00:00", true))).unwrap();
    // One prefix whatever the time; the direction is another order.
    assert_eq!(noon.scope(), later.scope());
    assert_ne!(noon.scope(), down.scope());

    // (span the prefix was read for, holds the page at 16:00)
    let cases = [
        ((None, None), true),
        (
            (Some("2026-11-30 12:00:00"), Some("2026-11-30 17:00:00")),
            true,
        ),
        (
            (Some("2026-11-30 12:00:00"), Some("2026-11-30 16:00:00")),
            true,
        ),
        ((Some("2026-11-30 16:00:00"), None), false),
        ((None, Some("2026-11-30 15:59:59")), false),
    ];
    for (span, holds) in cases {
        assert_eq!(later.holds(span), holds, "{span:?}");
    }
    let seeded = PrefixedPage::of(&page(2, 10, ContentOrder::Seed("7".into()))).unwrap();
    assert!(seeded.holds((Some("9999"), Some("0000"))));

    let sql = down.prefix(Dialect::Postgres);
    let text = sql.as_sql();
    assert!(
        text.contains("ORDER BY o DESC NULLS LAST, k LIMIT $"),
        "{text}"
    );
    assert!(
        text.ends_with("p ORDER BY p.o DESC NULLS LAST, p.k"),
        "{text}"
    );
    assert!(
        text.contains("(SELECT MAX(d.date_end) FROM content_date d"),
        "{text}"
    );
    assert!(
        text.contains("(SELECT MIN(d.date_end) FROM content_date d"),
        "{text}"
    );
    let seeded = seeded.prefix(Dialect::Sqlite);
    assert!(
        seeded
            .as_sql()
            .contains("CAST(NULL AS TEXT), CAST(NULL AS TEXT), p.n FROM"),
        "{}",
        seeded.as_sql()
    );
}

#[test]
fn a_kept_prefix_holds_a_page_it_reaches_or_when_it_holds_the_whole_list() {
    let seed = || ContentOrder::Seed("7".into());
    let hundredth = PrefixedPage::of(&page(100, 10, seed())).unwrap();
    let next = PrefixedPage::of(&page(101, 10, seed())).unwrap();
    // (page, keys kept, the depth they were read at, holds)
    let cases = [
        (&hundredth, 1_000, 1_000, true),
        (&next, 1_000, 1_000, false),
        (&next, 999, 1_000, true),
        (&next, 8_000, 8_000, true),
        (&next, 1_005, 8_000, true),
        (&hundredth, 0, 1_000, true),
    ];
    for (page, kept, depth, holds) in cases {
        assert_eq!(page.within(kept, depth), holds, "{page:?} {kept} {depth}");
    }
}

#[test]
fn each_seed_and_filter_has_its_own_prefix_and_pages_slice_it() {
    let seven = PrefixedPage::of(&page(3, 10, ContentOrder::Seed("7".into()))).unwrap();
    let eight = PrefixedPage::of(&page(3, 10, ContentOrder::Seed("8".into()))).unwrap();
    let mut all = page(5, 10, ContentOrder::Seed("7".into()));
    all.filters.clear();
    let unfiltered = PrefixedPage::of(&all).unwrap();
    assert_ne!(seven.scope(), eight.scope());
    assert_ne!(seven.scope(), unfiltered.scope());
    let later = PrefixedPage::of(&page(9, 10, ContentOrder::Seed("7".into()))).unwrap();
    assert_eq!(seven.scope(), later.scope());

    let prefix: Vec<String> = (0..25).map(|n| format!("k{n}")).collect();
    assert_eq!(seven.keys(&prefix), &prefix[20..25]);
    assert!(later.keys(&prefix).is_empty());

    let sql = seven.prefix(Dialect::Postgres);
    assert!(
        sql.as_sql().contains("md5(c.id_key || $"),
        "{}",
        sql.as_sql()
    );
    assert!(sql.as_sql().contains("c.active = $"), "{}", sql.as_sql());
    assert!(sql.params().contains(&SqlValue::Int(PREFIX as i64)));
    let docs = seven.documents(&prefix[20..25], Dialect::Sqlite);
    assert!(
        docs.as_sql()
            .ends_with("AND c.id_key IN (?3, ?4, ?5, ?6, ?7)"),
        "{}",
        docs.as_sql()
    );
}
