//! `rawfilter` on PostgreSQL: the server-side pieces its compiled SQL relies on.
//!
//! The functions live in `sql/content_functions.sql` (migration 4). A type mismatch
//! (`eq(Active,1)` on a boolean) makes `hub_rf_mismatch` raise SQLSTATE `HR001` with
//! the message SQLite's `hub_rf_check` gives, the query parameter as the error's DETAIL
//! and the literal's position as its HINT.

use tokio_postgres::error::SqlState;

use crate::StoreError;

/// The SQLSTATE of a `rawfilter` type mismatch.
const MISMATCH: &str = "HR001";

/// A `rawfilter` type mismatch raised while a query runs becomes the client error
/// [`StoreError::QueryRejected`]; other errors pass through.
pub(crate) fn rawfilter_error(e: tokio_postgres::Error) -> StoreError {
    let rejected = e
        .as_db_error()
        .filter(|db| *db.code() == SqlState::from_code(MISMATCH))
        .and_then(|db| {
            let position = db.hint()?.parse().ok()?;
            Some(StoreError::QueryRejected {
                parameter: db.detail()?.to_string(),
                position,
                detail: db.message().to_string(),
            })
        });
    if let Some(r) = rejected {
        return r;
    }
    // Data exceptions a filter's own values cause on PostgreSQL but not on SQLite: a
    // `likein` pattern PostgreSQL's regular expressions do not support, a number too
    // large for a double, a date outside PostgreSQL's range. The client's input, so a
    // 400 naming the filter parameter, not a 500.
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
    match data_exception {
        Some(db) => StoreError::QueryRejected {
            parameter: "rawfilter".into(),
            position: 1,
            detail: format!(
                "a value of the filter cannot be used on this server: {}",
                db.message()
            ),
        },
        None => StoreError::Postgres(e),
    }
}
