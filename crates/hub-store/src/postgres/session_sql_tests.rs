//! What each pooled connection is set to once: the rule as a table, and what a real
//! server reports for a store's connections (when `HUB_TEST_DATABASE` is set).

use super::session::Queries;
use super::{session_sql, PgSettings};
use crate::{Backend, Store};

#[test]
fn connections_turn_jit_off_and_plan_once_unless_told_otherwise() {
    // (transaction pooler, generic plans, what each new connection runs)
    let page_cost = "SELECT set_config('random_page_cost', '1.1', false) \
         FROM pg_settings WHERE name = 'random_page_cost' AND source = 'default'";
    let generic = format!("SET jit = off; SET plan_cache_mode = force_generic_plan; {page_cost}");
    let auto = format!("SET jit = off; {page_cost}");
    let table = [
        (false, true, Some(generic.as_str())),
        (false, false, Some(auto.as_str())),
        // No session state behind a transaction-mode pooler.
        (true, true, None),
        (true, false, None),
    ];
    for (transaction_pooler, generic_plans, expected) in table {
        let settings = PgSettings {
            transaction_pooler,
            generic_plans,
            ..PgSettings::default()
        };
        assert_eq!(
            session_sql(&settings).as_deref(),
            expected,
            "pooler {transaction_pooler}, generic {generic_plans}"
        );
    }
}

/// `plan_cache_mode`, `jit` and `random_page_cost` as a connection of a store opened
/// with `settings` reports.
fn reported(url: &str, settings: &PgSettings) -> (String, String, String) {
    let store = Store::open_postgres_with(url, settings).unwrap();
    let Backend::Postgres(b) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    futures::executor::block_on(b.read(|conn| async move {
        let plans: String = conn.query_one("SHOW plan_cache_mode", &[]).await?.get(0);
        let jit: String = conn.query_one("SHOW jit", &[]).await?.get(0);
        let page: String = conn.query_one("SHOW random_page_cost", &[]).await?.get(0);
        Ok((plans, jit, page))
    }))
    .unwrap()
}

#[test]
fn a_store_plans_its_statements_once_per_connection_by_default() {
    let Some(admin) = super::test_server::admin_with_sessions("Hub sets nothing per session")
    else {
        return;
    };
    let name = format!("hub_test_plans_{}", std::process::id());
    let database = super::ThrowawayDatabase::create(&admin, &name).unwrap();
    let url = database.url();
    let s = |v: &str| v.to_string();
    assert_eq!(
        reported(url, &PgSettings::default()),
        (s("force_generic_plan"), s("off"), s("1.1"))
    );
    let auto = PgSettings {
        generic_plans: false,
        ..PgSettings::default()
    };
    assert_eq!(reported(url, &auto), (s("auto"), s("off"), s("1.1")));
    // A page cost the operator set on the database is kept.
    let admin_store = Store::open_postgres_with(url, &PgSettings::default()).unwrap();
    let Backend::Postgres(b) = &*admin_store.backend else {
        panic!("not PostgreSQL")
    };
    let statement = format!("ALTER DATABASE \"{name}\" SET random_page_cost = 2.5");
    futures::executor::block_on(b.read(move |conn| async move {
        conn.batch_execute(&statement).await?;
        Ok(())
    }))
    .unwrap();
    drop(admin_store);
    assert_eq!(
        reported(url, &PgSettings::default()),
        (s("force_generic_plan"), s("off"), s("2.5"))
    );
}
