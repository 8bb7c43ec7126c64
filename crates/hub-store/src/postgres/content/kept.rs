//! The kept orders of list pages on PostgreSQL: the statements of a deep page's
//! bookmarks and of a seeded page's prefix, run as `crate::content::bookmarks` and
//! `crate::content::seeded` decide.

use hub_query::content::bookmarks::{BookmarkedPage, OrderKey};
use hub_query::content::checks::CheckTable;
use hub_query::content::seeded::SeededPage;
use hub_query::Dialect;

use super::super::rawfilter::list_error;
use super::super::{bind, refs, Conn, Queries};
use crate::content::bookmarks::{self, PageBookmarks, Step};
use crate::content::seeded::{self, SeededPrefixes};
use crate::Result;

/// A deep page found from kept marks (see `content::bookmarks`), or `None` when the
/// marks do not reach it.
pub(super) async fn bookmarked_page(
    conn: &Conn,
    page: &BookmarkedPage,
    bookmarks: &PageBookmarks,
    checks: &CheckTable,
) -> Result<Option<Vec<String>>> {
    // A filter's failed check is the client's error, as on the page statement.
    let fail = |e| list_error(checks, e);
    for _ in 0..bookmarks::MAX_STEPS {
        match bookmarks.next(page, Dialect::Postgres) {
            Step::Seek {
                page: seek,
                revision,
            } => {
                let params = bind(seek.params());
                let stmt = super::super::prepare_bounded(conn, seek.as_sql()).await?;
                let rows = conn.query(&stmt, &refs(&params)).await.map_err(fail)?;
                let Some(first) = rows.first() else {
                    return Ok(None);
                };
                if bookmarks.seeked(page, revision, first.try_get(1)?) {
                    let docs = rows.iter().map(|r| r.try_get(0));
                    return Ok(Some(docs.collect::<std::result::Result<_, _>>()?));
                }
            }
            Step::Read {
                marks,
                known,
                revision,
            } => {
                let params = bind(marks.params());
                let stmt = super::super::prepare_bounded(conn, marks.as_sql()).await?;
                let mut keys = Vec::new();
                for row in conn.query(&stmt, &refs(&params)).await.map_err(fail)? {
                    let key = OrderKey {
                        sort_key: row.try_get(0)?,
                        id_key: row.try_get(1)?,
                    };
                    keys.push((key, row.try_get(2)?));
                }
                if !bookmarks.read(page, known, revision, keys) {
                    return Ok(None);
                }
            }
        }
    }
    Ok(None)
}

/// A seeded page read by key from the kept prefix of its order (see
/// `content::seeded`), or `None` when it lies past the list's end.
pub(super) async fn seeded_page(
    conn: &Conn,
    page: &SeededPage,
    prefixes: &SeededPrefixes,
    checks: &CheckTable,
) -> Result<Option<Vec<String>>> {
    // A filter's failed check is the client's error, as on the page statement.
    let fail = |e| list_error(checks, e);
    for _ in 0..seeded::MAX_ATTEMPTS {
        let (prefix, revision) = match prefixes.kept(page) {
            Some(kept) => kept,
            None => {
                let read = page.prefix(Dialect::Postgres);
                let params = bind(read.params());
                let stmt = super::super::prepare_bounded(conn, read.as_sql()).await?;
                let mut rows = Vec::new();
                for row in conn.query(&stmt, &refs(&params)).await.map_err(fail)? {
                    rows.push((row.try_get(0)?, row.try_get(1)?));
                }
                match prefixes.keep(page, rows) {
                    Some(kept) => kept,
                    None => return Ok(None),
                }
            }
        };
        let keys = page.keys(&prefix);
        if keys.is_empty() {
            return Ok(None);
        }
        let read = page.documents(keys, Dialect::Postgres);
        let params = bind(read.params());
        let stmt = super::super::prepare_bounded(conn, read.as_sql()).await?;
        let mut rows = Vec::new();
        for row in conn.query(&stmt, &refs(&params)).await? {
            rows.push((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?));
        }
        if let Some(docs) = prefixes.assemble(page, keys, revision, rows) {
            return Ok(Some(docs));
        }
    }
    Ok(None)
}
