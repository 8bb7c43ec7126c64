//! The Time Series compiler asks PostgreSQL for SQLite's order of NULLs only on
//! columns that can hold one (`hub_query::timeseries::schema::NEVER_NULL`); this holds
//! that list to the schema the migrations make (when `HUB_TEST_DATABASE` is set).

use hub_query::timeseries::schema::NEVER_NULL;

use super::session::Queries;
use crate::Backend;

/// The tables behind the aliases of the compiled Time Series statements.
fn tables_of(alias: &str) -> &'static [&'static str] {
    match alias {
        "s" => &["ts_station"],
        "t" => &["ts_type"],
        "ts" => &["ts_series"],
        "me" => &["ts_latest", "ts_history"],
        "mh" => &["ts_metadata"],
        "e" => &["ts_edge"],
        "ev" => &["ts_event"],
        other => panic!("no table known for alias {other}"),
    }
}

#[test]
fn columns_the_compiler_orders_without_nulls_first_are_not_null() {
    let Some((store, _database)) = super::test_server::store("never_null") else {
        return;
    };
    let Backend::Postgres(backend) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    for expr in NEVER_NULL {
        let (alias, column) = expr.split_once('.').unwrap();
        for table in tables_of(alias) {
            let (table, column) = (table.to_string(), column.to_string());
            let not_null: Option<bool> =
                futures::executor::block_on(backend.write(move |conn| async move {
                    let row = conn
                        .query_opt(
                            "SELECT attnotnull FROM pg_attribute \
                             WHERE attrelid = $1::text::regclass AND attname = $2 AND NOT attisdropped",
                            &[&table, &column],
                        )
                        .await?;
                    Ok(row.map(|r| r.get(0)))
                }))
                .unwrap();
            assert_eq!(
                not_null,
                Some(true),
                "{expr} on {}",
                tables_of(alias).join(", ")
            );
        }
    }
}
