//! Where PostgreSQL keeps a document (when `HUB_TEST_DATABASE` is set): sending
//! documents and sorting or joining on the short columns reads no TOAST, for documents
//! of the sizes the demo and the ODH have (migration 10).

use serde_json::{json, Value};

use super::session::Queries;
use crate::{Backend, Store};

/// A document of about `bytes` bytes as written, of words that compress as prose does
/// (a fixed vocabulary in an order that does not repeat).
fn document(id: &str, bytes: usize) -> Value {
    const WORDS: [&str; 16] = [
        "valley", "hut", "trail", "summit", "meadow", "lake", "forest", "bridge", "chapel",
        "ridge", "spring", "village", "pasture", "glacier", "stream", "castle",
    ];
    let mut text = String::new();
    let mut state = id
        .bytes()
        .fold(17_u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    while text.len() < bytes {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        text.push_str(WORDS[(state >> 60) as usize]);
        text.push(' ');
    }
    json!({
        "Id": id,
        "Active": true,
        "Shortname": format!("Berggasthof zur schönen Aussicht {id}"),
        "Detail": {"de": {"Title": format!("Hütte {id}"), "BaseText": text}},
    })
}

/// Blocks of `content`'s TOAST table and of `content` itself that PostgreSQL fetched
/// while running `sql`: the counters of the session before and after it, in one
/// transaction (PostgreSQL may still hold earlier transactions' counts unreported).
fn blocks_fetched_by(store: &Store, sql: &'static str) -> (i64, i64) {
    const COUNTERS: &str = "SELECT pg_stat_get_xact_blocks_fetched(reltoastrelid), \
                                   pg_stat_get_xact_blocks_fetched(oid) \
                            FROM pg_class WHERE relname = 'content'";
    let Backend::Postgres(backend) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    futures::executor::block_on(backend.write(move |mut conn| async move {
        let tx = conn.transaction().await?;
        let before = tx.query_one(COUNTERS, &[]).await?;
        tx.query(sql, &[]).await?;
        let after = tx.query_one(COUNTERS, &[]).await?;
        let fetched = |i: usize| after.get::<_, i64>(i) - before.get::<_, i64>(i);
        Ok((fetched(0), fetched(1)))
    }))
    .unwrap()
}

#[test]
fn documents_and_their_keys_are_read_without_toast() {
    let Some((store, database)) = super::test_server::store("row_layout") else {
        return;
    };
    let content = store.content();
    // The demo's documents are 1 to 12 KB as written, most about 5 KB.
    let docs: Vec<(&'static str, Value)> = [("common", 5_000), ("large", 12_000)]
        .into_iter()
        // Ids as long as ODH's GUIDs: PostgreSQL moves only values above 24 bytes.
        .flat_map(|(kind, bytes)| {
            (0..20).map(move |n| document(&format!("{kind:0>8}-0000-4000-8000-{n:012}"), bytes))
        })
        .map(|doc| ("Accommodation", doc))
        .collect();
    content.put_batch_blocking(&docs, &mut |_| {}).unwrap();

    let (toast, heap) = blocks_fetched_by(
        &store,
        "SELECT sum(length(doc)), max(sort_key), max(id_key), max(id) FROM content",
    );
    assert!(heap > 0, "the documents were read from the table");
    assert_eq!(toast, 0, "documents and keys were read from TOAST");

    // The probe sees TOAST reads: the jsonb copy, the largest value, leaves the row.
    let (toast, _) = blocks_fetched_by(&store, "SELECT sum(length(docb::text)) FROM content");
    assert!(
        toast > 0,
        "the jsonb copies were read without TOAST: no probe"
    );
    drop(store);
    drop(database);
}
