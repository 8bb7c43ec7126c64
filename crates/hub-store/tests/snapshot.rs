//! A test pass fills a snapshot once (`hub_store::test_snapshot`) and every later test
//! store is a copy of it: each copy holds what the filling wrote, and what a test writes
//! to its copy reaches neither another copy nor the snapshot. On SQLite, and on
//! PostgreSQL with `HUB_TEST_DATABASE` (copies are databases made from a template). An
//! empty migrated store is copied the same way.

use hub_store::test_snapshot::Snapshot;
use serde_json::json;

const NOW: &str = "2026-01-01T00:00:00Z";

async fn put(store: &hub_store::Store, id: &str, shortname: &str) {
    let doc = json!({"Id": id, "Shortname": shortname});
    store
        .content()
        .put("Accommodation", doc, NOW.into(), false)
        .await
        .unwrap();
}

async fn title(store: &hub_store::Store, id: &str) -> Option<String> {
    let doc = store.content().get("Accommodation", id).await.unwrap()?;
    let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
    Some(doc["Shortname"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_hold_the_filling_and_keep_their_writes_to_themselves() {
    let pass = tempfile::tempdir().unwrap();
    let snapshot = Snapshot::new(pass.path(), "filled");
    assert!(!snapshot.exists(), "nothing filled yet");

    let filling = snapshot.open_for_filling().unwrap();
    put(&filling, "A1", "filled once").await;
    snapshot.save(filling).unwrap();
    assert!(snapshot.exists(), "saved for the pass's later tests");

    let (first_dir, second_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = snapshot.open_copy(first_dir.path()).unwrap();
    assert_eq!(title(&first, "A1").await.as_deref(), Some("filled once"));
    put(&first, "A2", "the first copy's own").await;
    assert!(first.content().delete("Accommodation", "A1").await.unwrap());

    let second = snapshot.open_copy(second_dir.path()).unwrap();
    assert_eq!(
        title(&second, "A1").await.as_deref(),
        Some("filled once"),
        "a later copy still holds what the first copy deleted"
    );
    assert_eq!(
        title(&second, "A2").await,
        None,
        "a later copy holds nothing the first copy wrote"
    );
    assert_eq!(
        title(&first, "A2").await.as_deref(),
        Some("the first copy's own")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrated_copies_start_empty_and_apart() {
    let pass = tempfile::tempdir().unwrap();
    let (first_dir, second_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = hub_store::test_snapshot::migrated_copy(pass.path(), first_dir.path()).unwrap();
    put(&first, "A1", "the first copy's own").await;

    let second = hub_store::test_snapshot::migrated_copy(pass.path(), second_dir.path()).unwrap();
    assert_eq!(
        title(&second, "A1").await,
        None,
        "a later store holds nothing an earlier one wrote"
    );
    put(&second, "A2", "the second copy's own").await;
    assert_eq!(title(&first, "A2").await, None);
    assert_eq!(
        title(&first, "A1").await.as_deref(),
        Some("the first copy's own")
    );
}
