//! Filtered pages (issue 18): in the default order a filter that matches often is
//! answered by walking the order index until the page is full, one that matches rarely
//! by sorting its matches; a radius search nearest first tries smaller circles around
//! the centre first; totals are kept until the next write. Whichever way a page is
//! found, a client sees the same pages and totals as the rule computed here over the
//! documents: every match once, in order, and a total that follows writes at once.
//! Seeded and `rawsort` pages are read by key from a kept prefix of their order; the
//! whole read in that order is their rule. So are the pages of a filter no walk answers. Pages past a list's end are empty until a
//! write reaches them. Both backends.

use serde_json::{json, Value};

use super::support::{self, get, item_ids, TestApp};

/// Documents in the collection: more than the shortest walk looks at (1,000), so the
/// walk's bound exists and both ways of finding a page are taken.
const DOCS: usize = 2_400;

/// Documents `0..LATE` carry the tag `late`: a quarter of the collection, dense enough
/// for a walk, but all of them sort after the first 1,000 documents it looks at.
const LATE: usize = 600;

/// Tags and titles by number: `dense` on every third document, `sparse` on five,
/// `even` on every second, `late` on the last [`LATE`] in order; the title "Almhütte"
/// on every fourth, "Rifugio Solo" on one, "Zirbenstube" on 75 among the last 300.
fn tags_of(i: usize) -> Vec<&'static str> {
    let mut tags = Vec::new();
    if i.is_multiple_of(3) {
        tags.push("dense");
    }
    if i % 500 == 7 {
        tags.push("sparse");
    }
    if i.is_multiple_of(2) {
        tags.push("even");
    }
    if i < LATE {
        tags.push("late");
    }
    tags
}

fn title_of(i: usize) -> String {
    match i {
        _ if i == 1_234 => "Rifugio Solo".to_string(),
        _ if i.is_multiple_of(4) => format!("Almhütte {i}"),
        _ if i < 300 && i % 4 == 2 => format!("Zirbenstube {i}"),
        _ => format!("Haus {i}"),
    }
}

/// Sources: every fourth document is `lts`, every fourth from the next `siag`.
fn source_of(i: usize) -> &'static str {
    ["idm", "lts", "idm", "siag"][i % 4]
}

fn doc(i: usize) -> Value {
    let id = format!("fp-{i:05}");
    json!({
        "Id": id,
        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": source_of(i), "LastChange": "2024-01-01T00:00:00", "Reduced": false},
        // Shortnames in reverse number order, so the order is not the id order.
        "Shortname": format!("name {:05}", DOCS - i),
        "Active": true,
        "HasLanguage": ["de"],
        "Detail": {"de": {"Title": title_of(i)}},
        "Tags": tags_of(i).iter().map(|t| json!({"Id": t, "Source": "idm"})).collect::<Vec<_>>(),
        "GpsInfo": [{"Gpstype": "position", "Latitude": position(i).0, "Longitude": position(i).1}],
    })
}

/// A grid of 48 × 50 points about 220 m apart around [`CENTRE`], each moved by a few
/// millimetres per number so no two lie at the same distance from the centre.
fn position(i: usize) -> (f64, f64) {
    let (row, column) = ((i / 50) as f64, (i % 50) as f64);
    (
        CENTRE.0 + (row - 24.0) * 0.002 + i as f64 * 1e-8,
        CENTRE.1 + (column - 25.0) * 0.003 + i as f64 * 2e-8,
    )
}

const CENTRE: (f64, f64) = (46.5, 11.3);

/// Whether document `i` lies within the box `[west, south, east, north]`, edges included.
fn within(i: usize, [west, south, east, north]: [f64; 4]) -> bool {
    let (latitude, longitude) = position(i);
    (south..=north).contains(&latitude) && (west..=east).contains(&longitude)
}

fn app() -> TestApp {
    let docs: Vec<(&'static str, Value)> = (0..DOCS).map(|i| ("HubActivityPoi", doc(i))).collect();
    support::app_with_documents(&docs, &support::test_config())
}

/// The ids of documents `0..n` that `matches` accepts, in Shortname order.
fn expected(n: usize, matches: impl Fn(usize) -> bool) -> Vec<String> {
    let mut numbers: Vec<usize> = (0..n).filter(|&i| matches(i)).collect();
    // Shortname "name {DOCS - i}": larger numbers first.
    numbers.sort_by_key(|&i| DOCS - i);
    numbers.into_iter().map(|i| format!("fp-{i:05}")).collect()
}

/// Page `number` (of 10) of `uri` is the slice of `all` it should be, with the exact total.
async fn assert_page(app: &TestApp, uri: &str, all: &[String], number: usize) {
    let (status, body) = get(app, uri).await;
    assert_eq!(status, 200, "{uri}: {body}");
    let start = ((number - 1) * 10).min(all.len());
    let end = (start + 10).min(all.len());
    assert_eq!(item_ids(&body), all[start..end], "{uri}");
    assert_eq!(body["TotalResults"], all.len(), "{uri}");
    assert!(body.get("TotalResultsEstimated").is_none(), "{uri}");
}

/// Writes `fp-new`, a copy of document 3 (so a `dense` match) that sorts first.
async fn put_first_in_order(app: &TestApp) {
    let mut first = doc(3);
    first["Id"] = json!("fp-new");
    first["_Meta"]["Id"] = json!("fp-new");
    first["Shortname"] = json!("aaa first");
    app.store
        .content()
        .put("HubActivityPoi", first, "2024-02-01T00:00:00".into(), false)
        .await
        .unwrap();
}

async fn delete(app: &TestApp, id: &str) {
    let deleted = app.store.content().delete("HubActivityPoi", id).await;
    assert!(deleted.unwrap(), "{id} was there to delete");
}

#[tokio::test]
async fn every_page_of_a_filter_is_the_next_slice_of_its_matches_in_order() {
    let app = app();
    type Rule = fn(usize) -> bool;
    let filters: [(&str, Rule); 12] = [
        // Boxes: most of the grid (walked and bookmarked), and a few points of it.
        ("polygon=bbi(11.2%2046.45,%2011.4%2046.535)", |i| {
            within(i, [11.2, 46.45, 11.4, 46.535])
        }),
        ("polygon=bbi(11.3%2046.5,%2011.31%2046.51)", |i| {
            within(i, [11.3, 46.5, 11.31, 46.51])
        }),
        ("tagfilter=dense", |i| i % 3 == 0),
        ("tagfilter=even", |i| i % 2 == 0),
        ("tagfilter=and(dense,even)", |i| i % 6 == 0),
        ("tagfilter=sparse", |i| i % 500 == 7),
        ("tagfilter=or(sparse,dense)", |i| i % 3 == 0 || i % 500 == 7),
        ("searchfilter=almh%C3%BCtte", |i| i % 4 == 0 && i != 1_234),
        ("searchfilter=rifugio%20solo", |i| i == 1_234),
        // Sources, walked along the order's index (PostgreSQL holds them there).
        ("source=lts", |i| source_of(i) == "lts"),
        ("source=lts,siag", |i| i % 2 == 1),
        ("source=siag&tagfilter=dense", |i| {
            source_of(i) == "siag" && i % 3 == 0
        }),
    ];
    for (filter, rule) in filters {
        let all = expected(DOCS, rule);
        // Pages 1 and 3 (walked when the count shows the matches dense enough),
        // deeper pages (from the filter's own bookmarks, every 100 matches: page 11
        // reads the first, 25 more, 24 and 26 lie on either side of one, 60 reads on),
        // the last page and one past it.
        let last = all.len().div_ceil(10).max(1);
        for number in [1, 3, 11, 25, 24, 26, 60, last, last + 1] {
            let uri = format!("/v1/HubActivityPoi?{filter}&pagesize=10&pagenumber={number}");
            assert_page(&app, &uri, &all, number).await;
        }
    }
}

#[tokio::test]
async fn every_page_of_the_whole_list_is_the_next_slice_in_order() {
    // The first pages read the documents along the order index, deeper ones find the
    // keys first (page 5 and 6 are the two sides of that rule): the same slices.
    let app = app();
    let all = expected(DOCS, |_| true);
    let last = DOCS.div_ceil(10);
    for number in [1, 2, 5, 6, 25, 24, 200, 26, last, last + 1] {
        let uri = format!("/v1/HubActivityPoi?pagesize=10&pagenumber={number}");
        assert_page(&app, &uri, &all, number).await;
    }
}

#[tokio::test]
async fn deep_pages_of_the_whole_list_follow_writes_at_once() {
    // Deep pages seek from marks kept between requests; the marks carry no notice of
    // writes (a write may come from another process), so a page must see the write by
    // itself.
    let app = app();
    let uri = "/v1/HubActivityPoi?pagesize=10&pagenumber=30";
    let mut all = expected(DOCS, |_| true);
    assert_page(&app, uri, &all, 30).await;

    put_first_in_order(&app).await;
    all.insert(0, "fp-new".into());
    assert_page(&app, uri, &all, 30).await;
    assert_page(
        &app,
        "/v1/HubActivityPoi?pagesize=10&pagenumber=41",
        &all,
        41,
    )
    .await;

    for id in ["fp-new", "fp-02399", "fp-02000"] {
        delete(&app, id).await;
        all.retain(|kept| kept != id);
    }
    for number in [30, 41, 12] {
        let uri = format!("/v1/HubActivityPoi?pagesize=10&pagenumber={number}");
        assert_page(&app, &uri, &all, number).await;
    }
}

#[tokio::test]
async fn deep_pages_of_a_filter_follow_writes_at_once() {
    // A filter's deep pages seek from marks over its matches: a write that adds,
    // removes or changes a match must show on them at once, as on the whole list's.
    let app = app();
    let page = |number: usize| {
        format!("/v1/HubActivityPoi?tagfilter=dense&pagesize=10&pagenumber={number}")
    };
    let mut dense = expected(DOCS, |i| i % 3 == 0);
    for number in [30, 62] {
        assert_page(&app, &page(number), &dense, number).await;
    }

    // A new match that sorts first shifts every page by one.
    put_first_in_order(&app).await;
    dense.insert(0, "fp-new".into());
    for number in [30, 62, 15] {
        assert_page(&app, &page(number), &dense, number).await;
    }

    // Document 1 was no match; tagged `dense` now, it joins at its place in the order
    // (Shortname "name 02399": just before document 0, the last).
    let mut joined = doc(1);
    joined["Tags"] = json!([{"Id": "dense", "Source": "idm"}]);
    app.store
        .content()
        .put(
            "HubActivityPoi",
            joined,
            "2024-02-01T00:00:00".into(),
            false,
        )
        .await
        .unwrap();
    dense.insert(dense.len() - 1, "fp-00001".into());
    let last = dense.len().div_ceil(10);
    for number in [last, 30] {
        assert_page(&app, &page(number), &dense, number).await;
    }

    // Deleting matches and a document that is none.
    for id in ["fp-new", "fp-02397", "fp-00600", "fp-00002"] {
        delete(&app, id).await;
        dense.retain(|kept| kept != id);
    }
    for number in [30, 62, 12] {
        assert_page(&app, &page(number), &dense, number).await;
    }
}

#[tokio::test]
async fn a_deep_page_blames_a_filter_the_data_refuses_on_its_parameter() {
    // A deep page counts and reads its marks with the filter, where a failed check is
    // the client's 400 as on the page statement.
    let app = app();
    for number in [1, 30] {
        let uri =
            format!("/v1/HubActivityPoi?rawfilter=gt(Shortname,5)&pagesize=10&pagenumber={number}");
        let (status, body) = get(&app, &uri).await;
        assert_eq!(status, 400, "{uri}: {body}");
        assert_eq!(body["parameter"], "rawfilter", "{uri}: {body}");
        assert_eq!(body["position"], 14, "{uri}: {body}");
    }
}

#[tokio::test]
async fn totals_and_pages_follow_writes_at_once() {
    let app = app();
    let uri = "/v1/HubActivityPoi?tagfilter=dense&pagesize=10&pagenumber=2";
    let (_, before) = get(&app, uri).await;
    let dense = expected(DOCS, |i| i % 3 == 0);
    assert_eq!(before["TotalResults"], dense.len());

    // A new match that sorts first: the total grows by one and page 2 shifts by one.
    put_first_in_order(&app).await;
    let (_, after) = get(&app, uri).await;
    assert_eq!(after["TotalResults"], dense.len() + 1, "{after}");
    assert_eq!(item_ids(&after)[0], dense[9], "{after}");

    // Deleting it and another match: one fewer than at the start.
    for id in ["fp-new", "fp-00003"] {
        delete(&app, id).await;
    }
    let (_, deleted) = get(&app, uri).await;
    assert_eq!(deleted["TotalResults"], dense.len() - 1, "{deleted}");
    let remaining: Vec<String> = dense.into_iter().filter(|id| id != "fp-00003").collect();
    assert_eq!(item_ids(&deleted), remaining[10..20], "{deleted}");
}

/// The ids of `points` within `metres` of [`CENTRE`], nearest first (ties by id).
fn nearest_first(points: &[(String, (f64, f64))], metres: f64) -> Vec<String> {
    let distance = |(lat, lon): (f64, f64)| {
        hub_query::content::geo::geodesic_distance_m(CENTRE.0, CENTRE.1, lat, lon)
    };
    let mut within: Vec<&(String, (f64, f64))> = points
        .iter()
        .filter(|(_, at)| distance(*at) <= metres)
        .collect();
    within.sort_by(|a, b| distance(a.1).total_cmp(&distance(b.1)).then(a.0.cmp(&b.0)));
    within.into_iter().map(|(id, _)| id.clone()).collect()
}

/// Pages 1, 2, 5, the last and the one past it of the radius of `metres`.
async fn assert_radius_pages(app: &TestApp, metres: f64, all: &[String]) {
    let last = all.len().div_ceil(10);
    for number in [1, 2, 5, last, last + 1] {
        let uri = format!(
            "/v1/HubActivityPoi?latitude={}&longitude={}&radius={metres}&pagesize=10&pagenumber={number}",
            CENTRE.0, CENTRE.1
        );
        assert_page(app, &uri, all, number).await;
    }
}

#[tokio::test]
async fn radius_pages_are_the_next_slice_of_the_matches_nearest_first() {
    let app = app();
    let mut points: Vec<(String, (f64, f64))> = (0..DOCS)
        .map(|i| (format!("fp-{i:05}"), position(i)))
        .collect();
    // Page 1 and 2 come from a smaller circle where it holds them; deeper pages and the
    // last from the whole radius.
    for metres in [3_000.0, 600.0] {
        assert_radius_pages(&app, metres, &nearest_first(&points, metres)).await;
    }
    // The totals kept above choose which circles are tried after writes too. 40
    // documents a few metres from the centre come first at once...
    let metres = 3_000.0;
    for k in 0..40 {
        let id = format!("fp-near-{k:02}");
        let at = (CENTRE.0 + k as f64 * 2e-5, CENTRE.1 + k as f64 * 1e-5);
        let mut near = doc(0);
        near["Id"] = json!(id);
        near["_Meta"]["Id"] = json!(id);
        near["GpsInfo"][0]["Latitude"] = json!(at.0);
        near["GpsInfo"][0]["Longitude"] = json!(at.1);
        app.store
            .content()
            .put("HubActivityPoi", near, "2024-02-01T00:00:00".into(), false)
            .await
            .unwrap();
        points.push((id, at));
    }
    assert_radius_pages(&app, metres, &nearest_first(&points, metres)).await;
    // ...and with every document within 800 m deleted, the smaller circles that the
    // total kept before say are worth a try hold none: the pages come from the radius.
    for id in nearest_first(&points, 800.0) {
        delete(&app, &id).await;
        points.retain(|(kept, _)| *kept != id);
    }
    assert!(nearest_first(&points, 800.0).is_empty());
    assert_radius_pages(&app, metres, &nearest_first(&points, metres)).await;
}

/// The whole order of `list`, seeded or `rawsort` (one read of every match, which no
/// kept prefix answers).
async fn seeded_order(app: &TestApp, list: &str) -> Vec<String> {
    let (status, body) = get(app, &format!("/v1/HubActivityPoi?{list}&pagesize=-1")).await;
    assert_eq!(status, 200, "{list}: {body}");
    item_ids(&body)
}

#[tokio::test]
async fn seeded_and_rawsort_pages_are_slices_of_their_whole_order_and_follow_writes_at_once() {
    let app = app();
    let lists = [
        "seed=7",
        "seed=8",
        "seed=7&tagfilter=dense",
        // Ties on the first tag (and documents without one, last) ordered by title.
        "rawsort=-Tags.0.Id,Detail.de.Title",
        "rawsort=Detail.de.Title&tagfilter=even",
    ];
    // Pages 1–100 end within the first prefix (1,000 positions); 101 on read a deeper
    // one (8,000 positions), which here holds the whole list.
    let pages = |all: &[String]| {
        [
            1,
            2,
            50,
            100,
            101,
            150,
            all.len().div_ceil(10) - 1,
            all.len().div_ceil(10),
            all.len().div_ceil(10) + 1,
        ]
    };
    for list in lists {
        let all = seeded_order(&app, list).await;
        let expected_len = match list {
            _ if list.contains("dense") => 800,
            _ if list.contains("even") => 1_200,
            _ => DOCS,
        };
        assert_eq!(all.len(), expected_len, "{list}");
        for number in pages(&all) {
            let uri = format!("/v1/HubActivityPoi?{list}&pagesize=10&pagenumber={number}");
            assert_page(&app, &uri, &all, number).await;
        }
    }

    // A new match, and deleted ones: every page follows at once.
    put_first_in_order(&app).await;
    for id in ["fp-00003", "fp-01200", "fp-02001"] {
        delete(&app, id).await;
    }
    for list in lists {
        let all = seeded_order(&app, list).await;
        assert_eq!(
            all.contains(&"fp-new".to_string()),
            !list.contains("even"),
            "{list}"
        );
        for number in pages(&all) {
            let uri = format!("/v1/HubActivityPoi?{list}&pagesize=10&pagenumber={number}");
            assert_page(&app, &uri, &all, number).await;
        }
    }
}

/// The order of `list` (the whole list, `dense` matches, seeded or not), with the
/// documents `tail` after the first [`DOCS`] when it is not seeded.
async fn list_order(app: &TestApp, list: &str, tail: &[String]) -> Vec<String> {
    if list.contains("seed") || list.contains("rawsort") {
        return seeded_order(app, list).await;
    }
    let dense = list.contains("dense");
    let mut all = expected(DOCS, |i| !dense || i % 3 == 0);
    all.extend_from_slice(tail);
    all
}

#[tokio::test]
async fn pages_past_the_end_are_empty_until_writes_reach_them() {
    // A page past a list's end is answered from its kept marks or prefix and one count
    // of the tail: it must still show documents written since, at once.
    let app = app();
    let lists = [
        "",
        "tagfilter=dense",
        "seed=7",
        "seed=7&tagfilter=dense",
        "rawsort=Detail.de.Title",
    ];
    let pages = |all: &[String]| {
        let last = all.len().div_ceil(10);
        // Within the last mark's stride, further on, and far past every mark; twice
        // each, the second from the kept length.
        [last + 1, last + 1, last + 3, 500, 500]
    };
    let mut before = Vec::new();
    for list in lists {
        before.push((list, list_order(&app, list, &[]).await));
    }
    for (list, all) in &before {
        for number in pages(all) {
            let uri = format!("/v1/HubActivityPoi?{list}&pagesize=10&pagenumber={number}");
            assert_page(&app, &uri, all, number).await;
        }
    }

    // 25 new matches that sort after every other document: the pages past the old end
    // now hold them.
    let tail: Vec<String> = (0..25).map(|n| format!("fp-tail-{n:02}")).collect();
    for (n, id) in tail.iter().enumerate() {
        let mut new = doc(3);
        new["Id"] = json!(id);
        new["_Meta"]["Id"] = json!(id);
        new["Shortname"] = json!(format!("zzz {n:02}"));
        app.store
            .content()
            .put("HubActivityPoi", new, "2024-02-01T00:00:00".into(), false)
            .await
            .unwrap();
    }
    for (list, old) in &before {
        let all = list_order(&app, list, &tail).await;
        assert_eq!(all.len(), old.len() + 25, "{list}");
        for number in pages(old) {
            let uri = format!("/v1/HubActivityPoi?{list}&pagesize=10&pagenumber={number}");
            assert_page(&app, &uri, &all, number).await;
        }
    }

    for id in &tail {
        delete(&app, id).await;
    }
    for (list, all) in &before {
        assert_eq!(&list_order(&app, list, &[]).await, all, "{list}");
        for number in pages(all) {
            let uri = format!("/v1/HubActivityPoi?{list}&pagesize=10&pagenumber={number}");
            assert_page(&app, &uri, all, number).await;
        }
    }
}

#[tokio::test]
async fn pages_of_matches_a_walk_misses_are_kept_and_follow_writes_at_once() {
    // Matches bunched at the end of the order: the walk finds none where it looks, and
    // the store keeps the keys of the first pages rather than sort every match again
    // for each page. A kept prefix must follow every write at once.
    let app = app();
    type Rule = fn(usize) -> bool;
    let filters: [(&str, Rule); 2] = [
        ("tagfilter=late", |i| i < LATE),
        ("searchfilter=zirbenstube", |i| i < 300 && i % 4 == 2),
    ];
    let pages = |all: &[String]| {
        let last = all.len().div_ceil(10);
        // Twice each: the second from the kept prefix. Page 150 lies past the end.
        [1, 3, 1, 3, last, last, last + 1, 150, 150]
    };
    let mut lists = Vec::new();
    for (filter, rule) in filters {
        let all = expected(DOCS, rule);
        for number in pages(&all) {
            let uri = format!("/v1/HubActivityPoi?{filter}&pagesize=10&pagenumber={number}");
            assert_page(&app, &uri, &all, number).await;
        }
        lists.push((filter, all));
    }

    // A new `late` match that sorts first, then the deletion of a document that matches
    // neither filter: both lists follow each write.
    put_first_in_order(&app).await;
    lists[0].1.insert(0, "fp-new".into());
    for (filter, all) in &lists {
        for number in pages(all) {
            let uri = format!("/v1/HubActivityPoi?{filter}&pagesize=10&pagenumber={number}");
            assert_page(&app, &uri, all, number).await;
        }
    }
    for id in ["fp-new", "fp-00006", "fp-02000"] {
        delete(&app, id).await;
        for (_, all) in &mut lists {
            all.retain(|kept| kept != id);
        }
        for (filter, all) in &lists {
            for number in [1, 3, all.len().div_ceil(10)] {
                let uri = format!("/v1/HubActivityPoi?{filter}&pagesize=10&pagenumber={number}");
                assert_page(&app, &uri, all, number).await;
            }
        }
    }
}

#[tokio::test]
async fn a_filter_without_matches_is_empty_until_a_write_adds_one() {
    // An exact total of none answers the page without looking for it: it must still
    // follow a write at once.
    let app = app();
    let uri = "/v1/HubActivityPoi?searchfilter=edelweiss&pagesize=10";
    for _ in 0..2 {
        assert_page(&app, uri, &[], 1).await;
    }
    let mut found = doc(5);
    found["Detail"]["de"]["Title"] = json!("Edelweisshütte");
    app.store
        .content()
        .put("HubActivityPoi", found, "2024-02-01T00:00:00".into(), false)
        .await
        .unwrap();
    assert_page(&app, uri, &["fp-00005".to_string()], 1).await;
    delete(&app, "fp-00005").await;
    assert_page(&app, uri, &[], 1).await;
}

#[tokio::test]
async fn whole_reads_of_a_filter_hold_every_match_in_order() {
    // A whole read of dense matches walks the order on SQLite, of rare ones sorts them:
    // either way every match once, in order, with the exact total.
    let app = app();
    type Rule = fn(usize) -> bool;
    let filters: [(&str, Rule); 5] = [
        ("tagfilter=dense", |i| i % 3 == 0),
        ("tagfilter=late", |i| i < LATE),
        ("tagfilter=sparse", |i| i % 500 == 7),
        ("polygon=bbi(11.2%2046.45,%2011.4%2046.535)", |i| {
            within(i, [11.2, 46.45, 11.4, 46.535])
        }),
        ("searchfilter=almh%C3%BCtte", |i| i % 4 == 0 && i != 1_234),
    ];
    for (filter, rule) in filters {
        let all = expected(DOCS, rule);
        let uri = format!("/v1/HubActivityPoi?{filter}&pagesize=-1");
        let (status, body) = get(&app, &uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(item_ids(&body), all, "{uri}");
        assert_eq!(body["TotalResults"], all.len(), "{uri}");
    }
}
