//! The kept orders of list pages on SQLite: the statements of a deep page's bookmarks
//! and of a page's prefix (seeded, `rawsort`, next begin, filtered), run as
//! `crate::content::bookmarks` and `crate::content::prefixes` decide.

use hub_query::content::bookmarks::{BookmarkedPage, OrderKey};
use hub_query::content::prefixed::PrefixedPage;
use hub_query::Dialect;
use rusqlite::Connection;

use super::super::bind;
use crate::content::bookmarks::{self, PageBookmarks, Step};
use crate::content::prefixes::{self, OrderPrefixes, PrefixRow, PrefixStep};
use crate::Result;

/// A deep page found from kept marks (see `content::bookmarks`), or `None` when the
/// marks do not reach it.
pub(super) fn bookmarked_page(
    conn: &Connection,
    page: &BookmarkedPage,
    bookmarks: &PageBookmarks,
) -> Result<Option<Vec<String>>> {
    let mut ended = false;
    for _ in 0..bookmarks::MAX_STEPS {
        match bookmarks.next(page, ended, Dialect::Sqlite) {
            Step::Seek {
                page: seek,
                revision,
            } => {
                let rows = rows(conn, &seek, |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?))
                })?;
                let Some(&(_, found)) = rows.first() else {
                    ended = true;
                    continue;
                };
                if bookmarks.seeked(page, revision, found) {
                    return Ok(Some(rows.into_iter().map(|(doc, _)| doc).collect()));
                }
            }
            Step::Read {
                marks,
                known,
                revision,
            } => {
                let rows = rows(conn, &marks, |r| {
                    let key = OrderKey {
                        sort_key: r.get(0)?,
                        id_key: r.get(1)?,
                    };
                    Ok((key, r.get::<_, Option<i64>>(2)?))
                })?;
                ended = !bookmarks.read(page, known, revision, rows);
            }
            Step::CountTail {
                tail,
                known,
                revision,
            } => {
                let counted = one_row(conn, &tail, |r| {
                    Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)?))
                })?;
                if bookmarks.counted(page, known, revision, counted) {
                    return Ok(Some(Vec::new()));
                }
                ended = false;
            }
            Step::PastTheEnd { revision, kept } => {
                if bookmarks.ended(page, kept, one_row(conn, &revision, |r| r.get(0))?) {
                    return Ok(Some(Vec::new()));
                }
            }
        }
    }
    Ok(None)
}

/// A page read by key from the kept prefix of its order (see `content::prefixes`), with
/// the list's total at the prefix's revision, or `None` when the prefix does not answer.
pub(super) fn prefixed_page(
    conn: &Connection,
    page: &PrefixedPage,
    prefixes: &OrderPrefixes,
) -> Result<Option<(Vec<String>, u64)>> {
    for _ in 0..prefixes::MAX_STEPS {
        match prefixes.next(page, Dialect::Sqlite) {
            PrefixStep::ReadPrefix(read) => {
                let rows = rows(conn, &read, |r| {
                    Ok(PrefixRow {
                        key: r.get(0)?,
                        revision: r.get(1)?,
                        span: (r.get(2)?, r.get(3)?),
                        total: r.get(4)?,
                    })
                })?;
                if prefixes.keep(page, rows).is_none() {
                    return Ok(None);
                }
            }
            PrefixStep::ReadDocuments {
                documents,
                prefix,
                revision,
                total,
            } => {
                let rows = rows(conn, &documents, |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                if let Some(docs) = prefixes.assemble(page, &prefix, revision, rows) {
                    return Ok(Some((docs, total)));
                }
            }
            PrefixStep::PastTheEnd {
                revision,
                kept,
                total,
            } => {
                if prefixes.ended(page, kept, one_row(conn, &revision, |r| r.get(0))?) {
                    return Ok(Some((Vec::new(), total)));
                }
            }
        }
    }
    Ok(None)
}

/// The one row `q` selects, through `row`.
fn one_row<T>(
    conn: &Connection,
    q: &hub_query::SqlBuilder,
    row: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<T> {
    Ok(conn
        .prepare_cached(q.as_sql())?
        .query_row(bind(q.params()).as_slice(), row)?)
}

/// Every row `q` selects, through `row`.
pub(super) fn rows<T>(
    conn: &Connection,
    q: &hub_query::SqlBuilder,
    row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(q.as_sql())?;
    let rows = stmt
        .query_map(bind(q.params()).as_slice(), row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
