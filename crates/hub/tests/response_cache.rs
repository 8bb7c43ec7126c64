//! The response cache and conditional requests of the Content API and the OGC items:
//! repeated answers are the same bytes with a strong `ETag` (304 to `If-None-Match`), a
//! write — through this server or through another server on the same database — is
//! seen at once, closed data never crosses between callers through the cache, and the
//! byte budget holds. The list totals each server keeps follow the same writes. Runs on
//! SQLite, or PostgreSQL with `HUB_TEST_DATABASE`.

mod support;

use axum::body::Body;
use axum::Router;
use http::{Request, Response};
use hub::Config;
use hub_store::auth::UserRecord;
use hub_store::Store;
use serde_json::{json, Value};
use tower::ServiceExt;

use support::{body_bytes, content_fixtures, test_config};

const READER_PASSWORD: &str = "reader-Pa55word-3e9d";

/// Two servers ("processes") over one database, each with its own cache.
struct Pair {
    first: Router,
    second: Router,
    first_store: Store,
    second_store: Store,
    _storage: Storage,
}

/// Where the pair's data lives, removed with the pair (after its stores).
struct Storage {
    _dir: tempfile::TempDir,
    _database: Option<hub_store::postgres::ThrowawayDatabase>,
}

fn fixtures() -> Vec<(&'static str, Value)> {
    let mut docs = content_fixtures();
    docs.push((
        "Accommodation",
        json!({
            "Id": "acco-c1", "Shortname": "Hof", "Active": true,
            "_Meta": {"Id": "acco-c1", "Type": "accommodation", "Source": "lts", "Reduced": false},
            "AccoRoomInfo": [{"Id": "acco-c1-room", "Source": "lts"}],
        }),
    ));
    docs
}

/// The second store opens the first one's database anew: the SQLite file in the same
/// directory, or the same PostgreSQL database.
fn open_twice() -> (Store, Store, Storage) {
    let dir = tempfile::tempdir().expect("temporary directory");
    match std::env::var("HUB_TEST_DATABASE") {
        Ok(admin) if !admin.trim().is_empty() => {
            let name = format!("hub_test_cache_{}_{}", std::process::id(), next_number());
            let database = hub_store::postgres::ThrowawayDatabase::create(admin.trim(), &name)
                .expect("a fresh database");
            // The statement mode the suite runs in (a transaction-mode pooler, or not).
            let settings = hub_store::PgSettings::for_tests();
            (
                Store::open_postgres_with(database.url(), &settings).unwrap(),
                Store::open_postgres_with(database.url(), &settings).unwrap(),
                Storage {
                    _dir: dir,
                    _database: Some(database),
                },
            )
        }
        _ => (
            Store::open_sqlite(dir.path()).unwrap(),
            Store::open_sqlite(dir.path()).unwrap(),
            Storage {
                _dir: dir,
                _database: None,
            },
        ),
    }
}

fn next_number() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

async fn pair_with(config: &Config) -> Pair {
    let (first_store, second_store, storage) = open_twice();
    first_store
        .content()
        .put_batch_blocking(&fixtures(), &mut |_| {})
        .expect("loading fixtures");
    Pair {
        first: hub::router(first_store.clone(), config),
        second: hub::router(second_store.clone(), config),
        first_store,
        second_store,
        _storage: storage,
    }
}

async fn pair() -> Pair {
    pair_with(&test_config()).await
}

async fn send(router: &Router, uri: &str, headers: &[(&str, &str)]) -> Response<Body> {
    let mut builder = Request::builder().uri(uri);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    router
        .clone()
        .oneshot(builder.body(Body::empty()).unwrap())
        .await
        .expect("the router answers")
}

/// Status, `ETag`, `Cache-Control` and body of a GET.
async fn fetch(
    router: &Router,
    uri: &str,
    headers: &[(&str, &str)],
) -> (u16, String, String, Vec<u8>) {
    let response = send(router, uri, headers).await;
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let (etag, cache_control) = (header("etag"), header("cache-control"));
    (status, etag, cache_control, body_bytes(response).await)
}

/// The response cache's counters from `/metrics`.
async fn cache_metric(router: &Router, name: &str) -> u64 {
    let text = String::from_utf8(body_bytes(send(router, "/metrics", &[]).await).await).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("/metrics has {name}"))
        .parse()
        .unwrap()
}

fn poi(id: &str, shortname: &str) -> Value {
    json!({
        "Id": id, "Shortname": shortname, "Active": true,
        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm"},
        "Detail": {"en": {"Title": shortname}},
    })
}

async fn put(store: &Store, entity: &'static str, doc: Value) {
    store
        .content()
        .put(entity, doc, "2030-01-01T00:00:00Z".into(), false)
        .await
        .expect("the write");
}

#[tokio::test]
async fn a_repeated_list_is_the_same_bytes_and_its_etag_answers_304() {
    let app = pair().await;
    let uri = "/v1/HubActivityPoi?pagesize=2&fields=Id,Shortname";
    let (status, etag, cache_control, body) = fetch(&app.first, uri, &[]).await;
    assert_eq!(status, 200);
    assert!(
        etag.starts_with('"') && etag.len() > 10,
        "a strong ETag: {etag}"
    );
    assert_eq!(cache_control, "public, max-age=10");
    let misses = cache_metric(&app.first, "hub_response_cache_misses_total").await;
    let hits = cache_metric(&app.first, "hub_response_cache_hits_total").await;

    let (status, again_etag, _, again) = fetch(&app.first, uri, &[]).await;
    assert_eq!(status, 200);
    assert_eq!(again, body, "the same bytes");
    assert_eq!(again_etag, etag);
    assert_eq!(
        cache_metric(&app.first, "hub_response_cache_hits_total").await,
        hits + 1,
        "answered from the cache"
    );
    assert_eq!(
        cache_metric(&app.first, "hub_response_cache_misses_total").await,
        misses
    );

    let (status, not_modified_etag, cache_control, empty) =
        fetch(&app.first, uri, &[("if-none-match", &etag)]).await;
    assert_eq!(status, 304);
    assert!(empty.is_empty());
    assert_eq!(not_modified_etag, etag);
    assert_eq!(cache_control, "public, max-age=10");
    let (status, ..) = fetch(&app.first, uri, &[("if-none-match", "\"something-else\"")]).await;
    assert_eq!(status, 200);

    // A single document and another representation have validators of their own.
    let (status, item_etag, ..) = fetch(&app.first, "/v1/HubActivityPoi/poi-alm", &[]).await;
    assert_eq!(status, 200);
    assert_ne!(item_etag, etag);
    let (status, ..) = fetch(
        &app.first,
        "/v1/HubActivityPoi/poi-alm",
        &[("if-none-match", &item_etag)],
    )
    .await;
    assert_eq!(status, 304);
    let (status, csv_etag, _, csv) = fetch(&app.first, uri, &[("accept", "text/csv")]).await;
    assert_eq!(status, 200);
    assert!(
        csv.starts_with(b"Id") || csv.starts_with(b"\"Id"),
        "CSV, not the cached JSON"
    );
    assert_ne!(csv_etag, etag);

    // The answer with the cache off is the same bytes with the same validator.
    let off = hub::router(
        app.first_store.clone(),
        &Config {
            response_cache_bytes: 0,
            ..test_config()
        },
    );
    let (status, off_etag, _, off_body) = fetch(&off, uri, &[]).await;
    assert_eq!((status, off_etag, off_body), (200, etag, body));
}

#[tokio::test]
async fn a_write_changes_the_answer_and_its_etag_in_this_and_another_server() {
    let app = pair().await;
    let list = "/v1/HubActivityPoi?pagesize=50&fields=Id,Shortname";
    let item = "/v1/HubActivityPoi/poi-alm";
    // Both servers have both answers cached.
    for router in [&app.first, &app.second] {
        fetch(router, list, &[]).await;
        fetch(router, item, &[]).await;
    }
    let (_, list_etag, _, list_body) = fetch(&app.first, list, &[]).await;
    let (_, item_etag, _, _) = fetch(&app.first, item, &[]).await;

    // A write through this server's store.
    put(&app.first_store, "HubActivityPoi", poi("poi-new", "Neu")).await;
    let (_, etag, _, body) = fetch(&app.first, list, &[]).await;
    assert_ne!(etag, list_etag);
    assert!(String::from_utf8_lossy(&body).contains("poi-new"));
    let (status, ..) = fetch(&app.first, list, &[("if-none-match", &list_etag)]).await;
    assert_eq!(status, 200, "the old validator is out of date");
    let (_, other_etag, _, other_body) = fetch(&app.second, list, &[]).await;
    assert_eq!(
        (other_etag, other_body),
        (etag.clone(), body.clone()),
        "the other server sees the write at once"
    );
    assert_ne!(body, list_body);

    // A write through the other server (another process on the same database).
    put(
        &app.second_store,
        "HubActivityPoi",
        poi("poi-alm", "Umbenannt"),
    )
    .await;
    let (_, changed_etag, _, changed) = fetch(&app.first, item, &[]).await;
    assert_ne!(changed_etag, item_etag);
    let changed: Value = serde_json::from_slice(&changed).unwrap();
    assert_eq!(changed["Shortname"], "Umbenannt");
    let (_, _, _, list_now) = fetch(&app.first, list, &[]).await;
    assert!(String::from_utf8_lossy(&list_now).contains("Umbenannt"));

    // A deletion through the other server.
    assert!(app
        .second_store
        .content()
        .delete("HubActivityPoi", "poi-new")
        .await
        .unwrap());
    let (_, _, _, after_delete) = fetch(&app.first, list, &[]).await;
    assert!(!String::from_utf8_lossy(&after_delete).contains("poi-new"));

    // A write to another entity leaves the cached answer valid.
    let hits = cache_metric(&app.first, "hub_response_cache_hits_total").await;
    put(&app.second_store, "Article", json!({"Id": "art-x", "Shortname": "x", "_Meta": {"Id": "art-x", "Type": "article", "Source": "idm"}})).await;
    fetch(&app.first, list, &[]).await;
    assert_eq!(
        cache_metric(&app.first, "hub_response_cache_hits_total").await,
        hits + 1
    );
}

/// A capped total one server counted still holds after another server writes fewer
/// documents of its entity than the count read past its limit (each written document
/// changes whether at most itself matches): it answers without counting, the same
/// total as a server counting afresh. One document more and it is counted again.
#[tokio::test]
async fn a_capped_total_outlives_fewer_written_documents_than_its_slack() {
    // Without the response cache every request reaches the store; past one match a
    // total is estimated.
    let config = Config {
        response_cache_bytes: 0,
        exact_count_limit: 3,
        ..test_config()
    };
    let app = pair_with(&config).await;
    for n in 1..=10 {
        let mut near = poi(&format!("poi-a{n:02}"), "A");
        near["GpsInfo"] = json!([{"Gpstype": "position", "Latitude": 46.6, "Longitude": 11.5 + n as f64 / 100.0}]);
        put(&app.first_store, "HubActivityPoi", near).await;
    }
    // Eleven POIs within 100 km, nearest first: the page takes its total from the count,
    // which reads all eleven, seven past the limit's next match.
    let list = "/v1/HubActivityPoi?latitude=46.6&longitude=11.5&radius=100000&pagesize=2";
    let total = |body: &[u8]| {
        let body: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(body["TotalResultsEstimated"], true, "{body}");
        body["TotalResults"].as_u64().expect("TotalResults")
    };
    let counts = |router| cache_metric(router, "hub_store_list_counts_total");

    let kept = total(&fetch(&app.first, list, &[]).await.3);
    let counted = counts(&app.first).await;
    for n in 1..=7 {
        put(
            &app.second_store,
            "HubActivityPoi",
            poi(&format!("poi-w{n}"), "W"),
        )
        .await;
        let now = total(&fetch(&app.first, list, &[]).await.3);
        let fresh = total(&fetch(&app.second, list, &[]).await.3);
        assert_eq!(
            (now, counts(&app.first).await),
            (kept, counted),
            "{n} written"
        );
        assert_eq!(now, fresh, "{n} written: as counted afresh");
    }
    put(&app.second_store, "HubActivityPoi", poi("poi-w8", "W")).await;
    let now = total(&fetch(&app.first, list, &[]).await.3);
    assert!(
        counts(&app.first).await > counted,
        "eight written: counted again"
    );
    assert_eq!(now, total(&fetch(&app.second, list, &[]).await.3));
}

/// Many hits at once share their revision reads (PostgreSQL coalesces them), yet every
/// request that arrives after a write through another process has committed sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_hits_each_see_a_write_committed_before_they_arrived() {
    let app = pair().await;
    let item = "/v1/HubActivityPoi/poi-alm";
    fetch(&app.first, item, &[]).await;
    let burst = || futures::future::join_all((0..16).map(|_| fetch(&app.first, item, &[])));
    for round in 0..4 {
        let name = format!("Runde {round}");
        // Hits in flight while the other process writes, and requests after the write
        // while some of those may still wait for a revision read.
        let after_write = async {
            put(&app.second_store, "HubActivityPoi", poi("poi-alm", &name)).await;
            burst().await
        };
        let (_, after) = tokio::join!(burst(), after_write);
        for (.., body) in after {
            let doc: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(doc["Shortname"], name, "a request after the write sees it");
        }
    }
}

/// On SQLite the revisions a hit needs come from memory while the database file is
/// unchanged (its WAL index tells), so a run of hits reads none; any commit, through
/// another process too, makes the next request read them again and see the write.
#[tokio::test]
async fn sqlite_hits_of_an_unchanged_database_read_no_revisions() {
    let app = pair().await;
    if app.first_store.backend_name() != "sqlite" {
        eprintln!("skipped: PostgreSQL reads revisions per request or by notification (revision_notify.rs)");
        return;
    }
    let item = "/v1/HubActivityPoi/poi-alm";
    let reads = || cache_metric(&app.first, "hub_store_revision_reads_total");
    fetch(&app.first, item, &[]).await;
    fetch(&app.first, item, &[]).await;
    let (before, hits) = (
        reads().await,
        cache_metric(&app.first, "hub_response_cache_hits_total").await,
    );
    for _ in 0..20 {
        fetch(&app.first, item, &[]).await;
    }
    assert_eq!(
        cache_metric(&app.first, "hub_response_cache_hits_total").await,
        hits + 20
    );
    assert_eq!(
        reads().await,
        before,
        "hits of an unchanged database read nothing"
    );

    put(&app.second_store, "HubActivityPoi", poi("poi-alm", "Neu")).await;
    let (.., body) = fetch(&app.first, item, &[]).await;
    let doc: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        doc["Shortname"], "Neu",
        "the other process's write is seen at once"
    );
    assert_eq!(reads().await, before + 1);
}

#[tokio::test]
async fn the_ogc_items_follow_writes_too() {
    let app = pair().await;
    let uri = "/ogc/collections/hubactivitypoi/items?limit=50";
    let (status, etag, cache_control, _) = fetch(&app.first, uri, &[]).await;
    assert_eq!(status, 200);
    assert_eq!(cache_control, "public, max-age=10");
    let (status, ..) = fetch(&app.first, uri, &[("if-none-match", &etag)]).await;
    assert_eq!(status, 304);
    put(&app.second_store, "HubActivityPoi", poi("poi-ogc", "Neu")).await;
    let (_, new_etag, _, body) = fetch(&app.first, uri, &[]).await;
    assert_ne!(new_etag, etag);
    assert!(String::from_utf8_lossy(&body).contains("poi-ogc"));
}

#[tokio::test]
async fn closed_data_never_crosses_between_callers_through_the_cache() {
    let app = pair().await;
    hub_auth::ensure_signing_keys(&*app.first_store.auth())
        .await
        .unwrap();
    let user = UserRecord {
        id: "id-reader".into(),
        username: "reader".into(),
        password_hash: hub_auth::secrets::hash_password(READER_PASSWORD),
        roles: vec!["DataReader".into()],
        created_at: 0,
    };
    app.first_store.auth().user_add(user).await.unwrap();
    let token_app = support::TestApp {
        router: app.first.clone(),
        store: app.first_store.clone(),
        _dir: tempfile::tempdir().unwrap(),
    };
    let token = support::password_token(&token_app, "reader", READER_PASSWORD).await;
    let bearer = format!("Bearer {token}");
    let with_token = [("authorization", bearer.as_str())];

    for uri in [
        "/v1/Accommodation/acco-c1",
        "/v1/Accommodation?pagesize=10",
        "/ogc/collections/accommodation/items/acco-c1",
    ] {
        // Anonymous first, then the reader: the reader must not get the reduced copy.
        let (status, anon_etag, anon_cc, anon) = fetch(&app.first, uri, &[]).await;
        assert_eq!(status, 200, "{uri}");
        assert!(
            !String::from_utf8_lossy(&anon).contains("AccoRoomInfo"),
            "{uri}"
        );
        assert_eq!(anon_cc, "public, max-age=10", "{uri}");
        let (status, full_etag, full_cc, full) = fetch(&app.first, uri, &with_token).await;
        assert_eq!(status, 200, "{uri}");
        assert!(
            String::from_utf8_lossy(&full).contains("AccoRoomInfo"),
            "{uri}: the reader sees the rooms"
        );
        assert_eq!(full_cc, "private, no-cache", "{uri}");
        assert_ne!(full_etag, anon_etag);
        // Then again anonymous: the reader's copy must not leak.
        let (_, again_etag, _, again) = fetch(&app.first, uri, &[]).await;
        assert_eq!((again_etag, again), (anon_etag.clone(), anon), "{uri}");
        // Nor through a validator: the anonymous ETag is not the reader's.
        let (status, ..) = fetch(
            &app.first,
            uri,
            &[
                ("authorization", bearer.as_str()),
                ("if-none-match", &anon_etag),
            ],
        )
        .await;
        assert_eq!(status, 200, "{uri}");
        let vary = send(&app.first, uri, &[])
            .await
            .headers()
            .get_all("vary")
            .iter()
            .map(|v| v.to_str().unwrap().to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(",");
        assert!(vary.contains("authorization"), "{uri}: {vary}");
    }

    // The reader first, on a fresh server: the anonymous caller must not get its copy.
    let fresh = hub::router(app.first_store.clone(), &test_config());
    let uri = "/v1/Accommodation/acco-c1?fields=Id,AccoRoomInfo";
    let (_, _, _, full) = fetch(&fresh, uri, &with_token).await;
    assert!(String::from_utf8_lossy(&full).contains("acco-c1-room"));
    let (_, _, _, anon) = fetch(&fresh, uri, &[]).await;
    assert!(!String::from_utf8_lossy(&anon).contains("acco-c1-room"));
}

#[tokio::test]
async fn the_byte_budget_evicts_the_least_recently_used_answers() {
    let budget = 12_000;
    let app = pair_with(&Config {
        response_cache_bytes: budget,
        ..test_config()
    })
    .await;
    let page = |n: usize| format!("/v1/HubActivityPoi?pagesize=1&pagenumber=1&fields=Id&n={n}");
    for n in 0..40 {
        let (status, ..) = fetch(&app.first, &page(n), &[]).await;
        assert_eq!(status, 200);
        let held = cache_metric(&app.first, "hub_response_cache_bytes").await;
        assert!(
            held <= budget,
            "{held} bytes held over a budget of {budget}"
        );
    }
    let entries = cache_metric(&app.first, "hub_response_cache_entries").await;
    assert!(
        (1..40).contains(&entries),
        "{entries} answers held: some evicted, some kept"
    );
    // The newest is still there, the oldest was evicted.
    let hits = cache_metric(&app.first, "hub_response_cache_hits_total").await;
    fetch(&app.first, &page(39), &[]).await;
    assert_eq!(
        cache_metric(&app.first, "hub_response_cache_hits_total").await,
        hits + 1
    );
    let misses = cache_metric(&app.first, "hub_response_cache_misses_total").await;
    fetch(&app.first, &page(0), &[]).await;
    assert_eq!(
        cache_metric(&app.first, "hub_response_cache_misses_total").await,
        misses + 1
    );
}

#[tokio::test]
async fn answers_that_depend_on_the_clock_or_chance_are_not_kept() {
    let app = pair().await;
    for uri in [
        "/v1/Event?sort=upcoming&pagesize=3",
        "/v1/HubActivityPoi?seed=0&pagesize=3",
        "/v1/HubActivityPoi?pagesize=-1",
        "/v1/HubActivityPoi?pagesize=-1&format=csv",
    ] {
        let misses = cache_metric(&app.first, "hub_response_cache_misses_total").await;
        let entries = cache_metric(&app.first, "hub_response_cache_entries").await;
        let response = send(&app.first, uri, &[]).await;
        assert_eq!(response.status(), 200, "{uri}");
        if uri.contains("pagesize=-1") {
            assert!(response.headers().get("etag").is_none(), "{uri}: streamed");
        } else {
            assert_eq!(
                response.headers().get("cache-control").unwrap(),
                "no-cache",
                "{uri}"
            );
        }
        body_bytes(response).await;
        assert_eq!(
            cache_metric(&app.first, "hub_response_cache_entries").await,
            entries,
            "{uri}"
        );
        assert_eq!(
            cache_metric(&app.first, "hub_response_cache_misses_total").await,
            misses,
            "{uri}"
        );
    }
}
