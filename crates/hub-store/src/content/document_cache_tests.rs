use super::*;

fn at(id: &str, version: i64) -> VersionedKey {
    VersionedKey {
        key: DocumentKey {
            entity: "Poi".into(),
            id_key: id.into(),
        },
        version,
    }
}

fn text(len: usize) -> Arc<str> {
    Arc::from("x".repeat(len))
}

/// What one entry of a one-letter id in `Poi` costs.
fn cost(len: usize) -> usize {
    ENTRY_OVERHEAD + "Poi".len() + 1 + len
}

#[test]
fn a_document_is_found_only_at_the_version_it_was_kept_at() {
    let cache = DocumentCache::new(1 << 20);
    cache.keep(at("a", 7), Arc::from("{\"v\":7}"));
    assert_eq!(cache.get(&at("a", 7)).as_deref(), Some("{\"v\":7}"));
    assert_eq!(
        cache.get(&at("a", 8)),
        None,
        "a row written since is read again"
    );
    assert_eq!(cache.get(&at("b", 7)), None);
    // The newer version replaces the older one.
    cache.keep(at("a", 8), Arc::from("{\"v\":8}"));
    assert_eq!(cache.get(&at("a", 7)), None);
    assert_eq!(cache.get(&at("a", 8)).as_deref(), Some("{\"v\":8}"));
    let stats = cache.stats();
    assert_eq!((stats.documents, stats.bytes), (1, cost(7)));
    assert_eq!((stats.hits, stats.misses), (2, 3));
}

#[test]
fn a_lookup_answers_each_key_in_order() {
    let cache = DocumentCache::new(1 << 20);
    cache.keep(at("a", 1), text(1));
    cache.keep(at("c", 1), text(3));
    let found = cache.lookup(&[at("c", 1), at("b", 1), at("a", 1), at("a", 2)]);
    let lengths: Vec<_> = found.iter().map(|f| f.as_ref().map(|t| t.len())).collect();
    assert_eq!(lengths, [Some(3), None, Some(1), None]);
}

#[test]
fn the_least_recently_used_documents_go_first_when_the_budget_is_full() {
    let cache = DocumentCache::new(3 * cost(100));
    for id in ["a", "b", "c"] {
        cache.keep(at(id, 1), text(100));
    }
    // Reading `a` makes `b` the least recently used.
    assert!(cache.get(&at("a", 1)).is_some());
    cache.keep(at("d", 1), text(100));
    assert!(cache.get(&at("b", 1)).is_none());
    for id in ["a", "c", "d"] {
        assert!(cache.get(&at(id, 1)).is_some(), "{id} kept");
    }
    assert_eq!(cache.stats().bytes, 3 * cost(100));
    // A larger document takes the room of as many as it needs, oldest first.
    cache.keep(at("e", 1), text(150));
    assert!(cache.get(&at("a", 1)).is_none());
    assert!(cache.get(&at("c", 1)).is_none());
    assert!(cache.get(&at("d", 1)).is_some());
    assert!(cache.get(&at("e", 1)).is_some());
    assert!(cache.stats().bytes <= 3 * cost(100));
}

#[test]
fn nothing_is_kept_beyond_the_budget_or_without_one() {
    let small = DocumentCache::new(cost(10));
    small.keep(at("a", 1), text(10));
    small.keep(at("b", 1), text(11));
    assert!(
        small.get(&at("b", 1)).is_none(),
        "larger than the whole budget"
    );
    assert!(
        small.get(&at("a", 1)).is_some(),
        "left in place by a text not kept"
    );
    // A new version too large to keep still drops the old one.
    small.keep(at("a", 2), text(11));
    assert!(small.get(&at("a", 1)).is_none());
    assert_eq!(small.stats().bytes, 0);

    let off = DocumentCache::new(0);
    assert!(!off.enabled());
    off.keep(at("a", 1), text(1));
    assert!(off.get(&at("a", 1)).is_none());
    assert_eq!(off.stats().documents, 0);
}
