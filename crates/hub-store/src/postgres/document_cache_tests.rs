//! Documents kept by row version on PostgreSQL (when `HUB_TEST_DATABASE` is set): a
//! page read again comes from the cache, and a document another writer changed or
//! deleted in plain SQL is never answered from it.

use hub_query::content::{ContentOrder, ContentQuery, Page};
use serde_json::json;

use super::session::Queries;
use super::PgSettings;
use crate::{Backend, Store};

const ENTITY: &str = "Accommodation";

/// A store on a fresh database whose document cache holds `budget` bytes, with fifteen
/// documents `a00`…`a14` (sorted by their ids), each at `"Rev": 1`.
fn store(label: &str, budget: usize) -> Option<(Store, super::ThrowawayDatabase)> {
    let database = super::test_server::database(&super::test_server::admin()?, label);
    let settings = PgSettings {
        document_cache_bytes: budget,
        ..PgSettings::for_tests()
    };
    let store = Store::open_postgres_with(database.url(), &settings).unwrap();
    let docs: Vec<_> = (0..15)
        .map(|n| {
            let id = format!("A{n:02}");
            (ENTITY, json!({"Id": id, "Shortname": id, "Rev": 1}))
        })
        .collect();
    store
        .content()
        .put_batch_blocking(&docs, &mut |_| {})
        .unwrap();
    Some((store, database))
}

fn first_page() -> ContentQuery {
    ContentQuery {
        entity: ENTITY,
        filters: Vec::new(),
        order: ContentOrder::Default,
        page: Page {
            size: 10,
            number: 1,
        },
        count_limit: None,
    }
}

/// The first page's documents, as `Id@Rev`.
fn page(store: &Store) -> Vec<String> {
    let page = futures::executor::block_on(store.content().list(first_page())).unwrap();
    page.docs.iter().map(|doc| id_at_rev(doc)).collect()
}

fn id_at_rev(doc: &str) -> String {
    let doc: serde_json::Value = serde_json::from_str(doc).unwrap();
    format!("{}@{}", doc["Id"].as_str().unwrap(), doc["Rev"])
}

fn get(store: &Store, id: &str) -> Option<String> {
    let found = futures::executor::block_on(store.content().get(ENTITY, id)).unwrap();
    found.as_deref().map(id_at_rev)
}

/// Runs `sql` as another writer would: on a connection of its own, past Hub's writes.
fn plain_sql(store: &Store, sql: &'static str) {
    let Backend::Postgres(backend) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    futures::executor::block_on(backend.write(move |conn| async move {
        conn.execute(sql, &[]).await?;
        Ok(())
    }))
    .unwrap();
}

/// Hits and documents held of the store's document cache.
fn hits_and_held(store: &Store) -> (u64, usize) {
    let Backend::Postgres(backend) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    let stats = backend.documents.stats();
    (stats.hits, stats.documents)
}

fn expected(ids: std::ops::Range<usize>, changed: Option<usize>) -> Vec<String> {
    ids.map(|n| {
        let rev = if Some(n) == changed { 2 } else { 1 };
        format!("A{n:02}@{rev}")
    })
    .collect()
}

#[test]
fn pages_and_documents_by_id_are_never_answered_at_an_older_version() {
    let Some((store, database)) = store("document_cache", 1 << 20) else {
        return;
    };
    assert_eq!(page(&store), expected(0..10, None));
    assert_eq!(
        hits_and_held(&store),
        (0, 10),
        "the first read keeps the page"
    );
    assert_eq!(page(&store), expected(0..10, None));
    assert_eq!(
        hits_and_held(&store),
        (10, 10),
        "the second read is answered kept"
    );

    // Another writer changes a document: the page and the read by id see it at once.
    plain_sql(
        &store,
        r#"UPDATE content SET doc = replace(doc, '"Rev":1', '"Rev":2') WHERE id_key = 'a03'"#,
    );
    assert_eq!(page(&store), expected(0..10, Some(3)));
    assert_eq!(get(&store, "A03").as_deref(), Some("A03@2"));
    assert_eq!(get(&store, "a03").as_deref(), Some("A03@2"));
    let (hits, _) = hits_and_held(&store);
    assert_eq!(get(&store, "A03").as_deref(), Some("A03@2"));
    assert_eq!(
        hits_and_held(&store).0,
        hits + 1,
        "a read by id is answered kept"
    );

    // And deletes one: it is gone from both, and the page takes the next document.
    plain_sql(&store, "DELETE FROM content WHERE id_key = 'a05'");
    let mut after_delete = expected(0..11, Some(3));
    after_delete.remove(5);
    assert_eq!(page(&store), after_delete);
    assert_eq!(get(&store, "A05"), None);
    drop(store);
    drop(database);
}

#[test]
fn without_a_budget_every_text_is_read() {
    let Some((store, database)) = store("document_cache_off", 0) else {
        return;
    };
    assert_eq!(page(&store), expected(0..10, None));
    plain_sql(
        &store,
        r#"UPDATE content SET doc = replace(doc, '"Rev":1', '"Rev":2') WHERE id_key = 'a03'"#,
    );
    assert_eq!(page(&store), expected(0..10, Some(3)));
    assert_eq!(get(&store, "A03").as_deref(), Some("A03@2"));
    assert_eq!(hits_and_held(&store), (0, 0));
    drop(store);
    drop(database);
}
