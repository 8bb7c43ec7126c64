//! `rawfilter` on PostgreSQL: how a failed list query becomes a client error.
//!
//! The functions live in `sql/content_functions.sql` (migration 4) and
//! `sql/content_functions_v5.sql`. A type mismatch (`eq(Active,1)` on a boolean) makes
//! `hub_rf_fail` raise SQLSTATE `HR001` with the check id as DETAIL and the JSON type
//! found as HINT; the compiled query's check table names the parameter and position.
//! Must not: read parameter names or positions from the database's text.

use hub_query::content::checks::{CheckTable, FailedCheck, FoundType};
use tokio_postgres::error::SqlState;

use crate::content::failed_check_error;
use crate::StoreError;

/// The SQLSTATE of a failed `rawfilter` check.
const CHECK_FAILED: &str = "HR001";

/// The check a `hub_rf_fail` error reports, if `e` is one.
fn failed_check(e: &tokio_postgres::Error) -> Option<FailedCheck> {
    let db = e
        .as_db_error()
        .filter(|db| *db.code() == SqlState::from_code(CHECK_FAILED))?;
    Some(FailedCheck {
        id: db.detail()?.parse().ok()?,
        found: FoundType::from_database_name(db.hint()?)?,
    })
}

/// The error of a list query of `checks` that failed with `e`: a failed check is the
/// client's [`StoreError::Query`]; other errors pass through as the server's.
pub(crate) fn list_error(checks: &CheckTable, e: tokio_postgres::Error) -> StoreError {
    if let Some(failed) = failed_check(&e) {
        return failed_check_error(checks, failed);
    }
    // Data exceptions a filter's own values cause on PostgreSQL but not on SQLite: a
    // `likein` pattern PostgreSQL's regular expressions do not support, a number too
    // large for a double, a date outside PostgreSQL's range. The client's input, so a
    // 400 naming the parameter the query compiled, not a 500.
    let data_exception = e.as_db_error().filter(|db| {
        [
            SqlState::INVALID_REGULAR_EXPRESSION,
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            SqlState::INVALID_TEXT_REPRESENTATION,
            SqlState::DATETIME_FIELD_OVERFLOW,
            SqlState::INVALID_DATETIME_FORMAT,
        ]
        .contains(db.code())
    });
    match data_exception.and_then(|db| checks.unusable_value(db.message())) {
        Some(query_error) => StoreError::Query(query_error),
        None => StoreError::Postgres(e),
    }
}
