//! The PostgreSQL server the tests use: `HUB_TEST_DATABASE`, an admin URL. Without it a
//! test that needs one is skipped and says why.

use super::PgSettings;

/// The admin URL of the test server; `None` (the test is skipped) without one.
pub(crate) fn admin() -> Option<String> {
    match std::env::var("HUB_TEST_DATABASE") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().to_string()),
        _ => {
            println!("skipped: HUB_TEST_DATABASE not set");
            None
        }
    }
}

/// The admin URL when the store's connections are its own sessions (not behind a
/// transaction-mode pooler); otherwise `None`, printing `why` the pooler rules the
/// test out.
pub(crate) fn admin_with_sessions(why: &str) -> Option<String> {
    let admin = admin()?;
    if PgSettings::for_tests().transaction_pooler {
        println!("skipped: behind a transaction-mode pooler {why}");
        return None;
    }
    Some(admin)
}

/// A fresh database named for the test (`label`) and this process, on the server at
/// `admin`; dropped with the returned value.
pub(crate) fn database(admin: &str, label: &str) -> super::ThrowawayDatabase {
    let name = format!("hub_test_{label}_{}", std::process::id());
    super::ThrowawayDatabase::create(admin, &name).unwrap()
}

/// A store on a fresh database named for the test (`label`), and that database (drop
/// the store first); `None` (the test is skipped) without a server.
pub(crate) fn store(label: &str) -> Option<(crate::Store, super::ThrowawayDatabase)> {
    let database = database(&admin()?, label);
    let store = crate::Store::open_postgres_with(database.url(), &PgSettings::for_tests()).unwrap();
    Some((store, database))
}
