use std::sync::Arc;

use hub_query::{Dialect, SqlBuilder, SqlValue};

use super::*;
use crate::timeseries::Cell;

fn read(select: &str) -> ProvenanceRead {
    let mut sql = SqlBuilder::new(Dialect::Postgres);
    sql.sql(&format!("SELECT pr.id, {select} FROM ts_provenance pr"));
    ProvenanceRead {
        sql,
        positions: vec![3],
    }
}

fn named(name: &str) -> Provenances {
    Provenances::from_iter([(1, vec![Cell::Text(Arc::from(name))])])
}

fn name_of(provenances: &Provenances) -> String {
    match &provenances[&1][0] {
        Cell::Text(t) => t.to_string(),
        other => panic!("not a name: {other:?}"),
    }
}

#[test]
fn kept_provenances_stand_only_at_their_revision() {
    let cache = ProvenanceCache::default();
    let names = read("pr.data_collector");
    assert!(cache.get(&names, 4).is_none(), "nothing kept yet");
    cache.keep(&names, 4, named("collector-a"));
    assert_eq!(name_of(&cache.get(&names, 4).unwrap()), "collector-a");
    assert!(
        cache.get(&names, 5).is_none(),
        "a change since (revision 5) is read again"
    );
    assert!(
        cache.get(&read("pr.lineage"), 4).is_none(),
        "another select list is kept apart"
    );
}

#[test]
fn the_last_read_is_kept_even_at_an_older_revision() {
    let cache = ProvenanceCache::default();
    let names = read("pr.data_collector");
    cache.keep(&names, 7, named("renamed"));
    // A snapshot begun before the change (or a database restored from a backup, whose
    // counter will run through 7 again with other provenances).
    let older = cache.keep(&names, 6, named("before"));
    assert_eq!(name_of(&older), "before", "the older read answers");
    assert!(
        cache.get(&names, 7).is_none(),
        "what was read at 7 before is not taken for 7 any more"
    );
    assert_eq!(name_of(&cache.get(&names, 6).unwrap()), "before");
    cache.keep(&names, 7, named("again"));
    assert_eq!(name_of(&cache.get(&names, 7).unwrap()), "again");
}

#[test]
fn a_select_list_with_parameters_is_read_each_time() {
    let cache = ProvenanceCache::default();
    let mut with_param = read("pr.lineage");
    with_param
        .sql
        .sql(" WHERE pr.lineage <> ")
        .param(SqlValue::Text("x".into()));
    cache.keep(&with_param, 1, named("collector-a"));
    assert!(cache.get(&with_param, 1).is_none());
}

#[test]
fn the_cache_is_bounded_by_select_lists() {
    let cache = ProvenanceCache::default();
    for k in 0..MAX_SHAPES + 1 {
        cache.keep(&read(&format!("pr.lineage AS l{k}")), 1, named("x"));
    }
    let kept = cache.kept.lock().unwrap().len();
    assert!(kept <= MAX_SHAPES, "{kept} select lists kept");
    assert!(cache
        .get(&read(&format!("pr.lineage AS l{MAX_SHAPES}")), 1)
        .is_some());
}
