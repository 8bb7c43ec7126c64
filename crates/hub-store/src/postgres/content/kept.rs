//! The kept orders of list pages on PostgreSQL: the statements of a deep page's
//! bookmarks and of a page's prefix (seeded, `rawsort`, next begin, filtered), run as
//! `crate::content::bookmarks` and `crate::content::prefixes` decide.

use hub_query::content::bookmarks::{BookmarkedPage, OrderKey};
use hub_query::content::checks::CheckTable;
use hub_query::content::prefixed::PrefixedPage;
use hub_query::{Dialect, SqlBuilder};

use super::super::rawfilter::list_error;
use super::super::{bind, refs, Conn, Queries};
use super::documents::document_rows;
use crate::content::bookmarks::{self, PageBookmarks, Step};
use crate::content::document_cache::DocumentCache;
use crate::content::prefixes::{self, OrderPrefixes, PrefixRow, PrefixStep};
use crate::Result;

/// A deep page found from kept marks (see `content::bookmarks`), or `None` when the
/// marks do not reach it.
pub(super) async fn bookmarked_page(
    conn: &Conn,
    page: &BookmarkedPage,
    bookmarks: &PageBookmarks,
    documents: &DocumentCache,
    checks: &CheckTable,
) -> Result<Option<Vec<String>>> {
    let mut ended = false;
    for _ in 0..bookmarks::MAX_STEPS {
        match bookmarks.next(page, ended, Dialect::Postgres) {
            Step::Seek {
                page: seek,
                revision,
            } => {
                let rows = document_rows(conn, documents, &seek, 0, |r, columns| {
                    r.try_get::<_, Option<i64>>(columns.at(1))
                })
                .await
                .map_err(|e| list_error(checks, e))?;
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
                let keys = rows(conn, &marks, checks, |r| {
                    let key = OrderKey {
                        sort_key: r.try_get(0)?,
                        id_key: r.try_get(1)?,
                    };
                    Ok((key, r.try_get(2)?))
                })
                .await?;
                ended = !bookmarks.read(page, known, revision, keys);
            }
            Step::CountTail {
                tail,
                known,
                revision,
            } => {
                let counted = one_row(conn, &tail, checks, |r| {
                    Ok((r.try_get::<_, i64>(0)? as u64, r.try_get(1)?))
                })
                .await?;
                if bookmarks.counted(page, known, revision, counted) {
                    return Ok(Some(Vec::new()));
                }
                ended = false;
            }
            Step::PastTheEnd { revision, kept } => {
                let current = one_row(conn, &revision, checks, |r| r.try_get(0)).await?;
                if bookmarks.ended(page, kept, current) {
                    return Ok(Some(Vec::new()));
                }
            }
        }
    }
    Ok(None)
}

/// A page read by key from the kept prefix of its order (see `content::prefixes`), with
/// the list's total at the prefix's revision, or `None` when the prefix does not answer.
pub(super) async fn prefixed_page(
    conn: &Conn,
    page: &PrefixedPage,
    prefixes: &OrderPrefixes,
    cache: &DocumentCache,
    checks: &CheckTable,
) -> Result<Option<(Vec<String>, u64)>> {
    for _ in 0..prefixes::MAX_STEPS {
        match prefixes.next(page, Dialect::Postgres) {
            PrefixStep::ReadPrefix(read) => {
                let rows = rows(conn, &read, checks, |r| {
                    Ok(PrefixRow {
                        key: r.try_get(0)?,
                        revision: r.try_get(1)?,
                        span: (r.try_get(2)?, r.try_get(3)?),
                        total: r.try_get(4)?,
                    })
                })
                .await?;
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
                let rows = document_rows(conn, cache, &documents, 1, |r, columns| {
                    Ok((r.try_get(0)?, r.try_get(columns.at(2))?))
                })
                .await
                .map_err(|e| list_error(checks, e))?
                .into_iter()
                .map(|(doc, (key, revision))| (key, doc, revision))
                .collect();
                if let Some(docs) = prefixes.assemble(page, &prefix, revision, rows) {
                    return Ok(Some((docs, total)));
                }
            }
            PrefixStep::PastTheEnd {
                revision,
                kept,
                total,
            } => {
                let current = one_row(conn, &revision, checks, |r| r.try_get(0)).await?;
                if prefixes.ended(page, kept, current) {
                    return Ok(Some((Vec::new(), total)));
                }
            }
        }
    }
    Ok(None)
}

/// Every row `q` selects, through `row`; a filter's failed check is the client's error,
/// as on the page statement.
pub(super) async fn rows<T>(
    conn: &Conn,
    q: &SqlBuilder,
    checks: &CheckTable,
    row: impl Fn(&tokio_postgres::Row) -> std::result::Result<T, tokio_postgres::Error>,
) -> Result<Vec<T>> {
    let params = bind(q.params());
    let stmt = super::super::prepare_bounded(conn, q.as_sql()).await?;
    let found = conn.query(&stmt, &refs(&params)).await;
    let found = found.map_err(|e| list_error(checks, e))?;
    Ok(found
        .iter()
        .map(row)
        .collect::<std::result::Result<_, _>>()?)
}

/// The one row `q` selects, through `row` (errors as for [`rows`]).
async fn one_row<T>(
    conn: &Conn,
    q: &SqlBuilder,
    checks: &CheckTable,
    row: impl Fn(&tokio_postgres::Row) -> std::result::Result<T, tokio_postgres::Error>,
) -> Result<T> {
    let params = bind(q.params());
    let stmt = super::super::prepare_bounded(conn, q.as_sql()).await?;
    let found = conn.query_one(&stmt, &refs(&params)).await;
    Ok(row(&found.map_err(|e| list_error(checks, e))?)?)
}
