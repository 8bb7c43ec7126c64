//! Latest values read in any order: the answer of a `…/latest` query without a limit is
//! at most one row per series, so the store can read it without `ORDER BY` and sort it
//! in memory. The database then skips a sort of wide rows (each carrying its station,
//! parent, type and metadata columns): on PostgreSQL a quarter of the time of a latest
//! answer for 1,000 stations, against a few hundred microseconds to sort the same rows
//! by their keys in the server.

use crate::SqlBuilder;

/// The most rows a store sorts in memory; a latest answer with more is read again with
/// the compiled query's `ORDER BY` and streamed, so memory stays bounded whatever the
/// number of series. The store reads one row more to tell.
pub const MAX_UNORDERED_ROWS: usize = 10_000;

/// The compiled latest query without its `ORDER BY` and `OFFSET`, and how to apply both.
#[derive(Debug, Clone)]
pub struct UnorderedRead {
    /// The compiled query's SQL and parameters up to its ordering: the same rows (and
    /// `DISTINCT`) in no particular order.
    pub sql: SqlBuilder,
    /// Positions (0-based, in the SQL columns) of the ordering keys, most significant
    /// first; each compares as SQL orders it (NULL first, numbers by value, then text by
    /// bytes).
    pub order: Vec<usize>,
    /// Rows skipped after the ordering.
    pub offset: u64,
    /// The most rows to sort in memory ([`MAX_UNORDERED_ROWS`]).
    pub max_rows: usize,
}
