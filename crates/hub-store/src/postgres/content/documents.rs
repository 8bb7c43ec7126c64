//! Documents of list pages and reads by id on PostgreSQL through the document cache
//! (`content::document_cache`): a statement that selects documents runs with each
//! document column replaced by the row's key and version ([`KEY_COLUMNS`]); the texts
//! come from the cache, and those it does not hold at that version are read by key in
//! one more statement, and kept.
//!
//! A document deleted between the two statements is not in the second one's answer:
//! the statement then runs again as written, texts and all, so a page never comes back
//! short of a row it matched. One written between them is answered at its newer
//! version, as the statement itself would have answered a moment later.
//!
//! Must not: decide what is kept (the cache does) or build statements beyond the
//! replacement `hub-query` allows ([`SqlBuilder::with_document_replaced`]).

use std::collections::HashMap;
use std::sync::Arc;

use hub_query::SqlBuilder;
use tokio_postgres::{Error, Row};

use super::super::{bind, prepare_bounded, refs, Conn, Queries};
use crate::content::document_cache::{DocumentCache, DocumentKey, VersionedKey};

/// What a keyed statement selects in place of a document: its entity, key and row
/// version (the writing transaction, `xmin`; read as text since `xid` has no binary
/// form a client type takes).
const KEY_COLUMNS: &str = "c.entity, c.id_key, c.xmin::text::int8";
/// The columns [`KEY_COLUMNS`] puts in the place of one.
const KEY_WIDTH: usize = 3;

/// The texts of documents by key, at their current versions.
const TEXTS_BY_KEY: &str = "SELECT c.entity, c.id_key, c.xmin::text::int8, c.doc FROM content c \
     WHERE (c.entity, c.id_key) IN (SELECT * FROM unnest($1::text[], $2::text[]))";

/// A document by id, its text only when `$3` is not its version (the version kept).
const ONE_BY_ID: &str = "SELECT c.xmin::text::int8, \
     CASE WHEN c.xmin::text::int8 = $3 THEN NULL ELSE c.doc END \
     FROM content c WHERE c.entity = $1 AND c.id_key = $2";

/// The documents `page` selects, and the total its second column carries when
/// `has_total`.
pub(super) async fn page_docs(
    conn: &Conn,
    documents: &DocumentCache,
    page: &SqlBuilder,
    has_total: bool,
) -> std::result::Result<(Vec<String>, Option<u64>), tokio_postgres::Error> {
    let rows = document_rows(conn, documents, page, 0, |row, columns| {
        has_total
            .then(|| row.try_get::<_, i64>(columns.at(1)))
            .transpose()
    })
    .await?;
    let total = rows.last().and_then(|(_, total)| *total).map(|n| n as u64);
    Ok((rows.into_iter().map(|(doc, _)| doc).collect(), total))
}

/// Where a row's columns are: the statement's own positions, shifted past the key
/// columns when the document column before them was replaced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Columns {
    document: usize,
    keyed: bool,
}

impl Columns {
    /// The position in the row of the statement's column `i` (other than the document).
    pub(crate) fn at(self, i: usize) -> usize {
        if self.keyed && i > self.document {
            i + KEY_WIDTH - 1
        } else {
            i
        }
    }
}

/// Every row `statement` selects: its document (the statement's column `document`)
/// and what `read` takes of its other columns, in the statement's order.
pub(crate) async fn document_rows<T>(
    conn: &Conn,
    cache: &DocumentCache,
    statement: &SqlBuilder,
    document: usize,
    read: impl Fn(&Row, Columns) -> Result<T, Error>,
) -> Result<Vec<(String, T)>, Error> {
    let keyed = cache
        .enabled()
        .then(|| statement.with_document_replaced(KEY_COLUMNS))
        .flatten();
    let Some(keyed) = keyed else {
        return as_written(conn, statement, document, read).await;
    };
    let params = bind(statement.params());
    let stmt = prepare_bounded(conn, &keyed).await?;
    let rows = conn.query(&stmt, &refs(&params)).await?;
    let columns = Columns {
        document,
        keyed: true,
    };
    let mut wanted = Vec::with_capacity(rows.len());
    let mut rest = Vec::with_capacity(rows.len());
    for row in &rows {
        wanted.push(VersionedKey {
            key: DocumentKey {
                entity: row.try_get(document)?,
                id_key: row.try_get(document + 1)?,
            },
            version: row.try_get(document + 2)?,
        });
        rest.push(read(row, columns)?);
    }
    let mut texts = cache.lookup(&wanted);
    if texts.iter().any(Option::is_none) {
        let read_now = texts_by_key(conn, cache, &wanted, &texts).await?;
        for (text, want) in texts.iter_mut().zip(&wanted) {
            if text.is_none() {
                *text = read_now.get(&want.key).cloned();
            }
        }
    }
    match texts.into_iter().collect::<Option<Vec<Arc<str>>>>() {
        Some(texts) => Ok(texts.iter().map(|t| t.to_string()).zip(rest).collect()),
        // Deleted since the first statement.
        None => as_written(conn, statement, document, read).await,
    }
}

/// The texts of the documents of `wanted` that `kept` lacks, read now and kept.
async fn texts_by_key(
    conn: &Conn,
    cache: &DocumentCache,
    wanted: &[VersionedKey],
    kept: &[Option<Arc<str>>],
) -> Result<HashMap<DocumentKey, Arc<str>>, Error> {
    let missing = wanted.iter().zip(kept).filter(|(_, k)| k.is_none());
    let (entities, keys): (Vec<&str>, Vec<&str>) = missing
        .map(|(w, _)| (w.key.entity.as_str(), w.key.id_key.as_str()))
        .unzip();
    let stmt = conn.prepare_cached(TEXTS_BY_KEY).await?;
    let rows = conn.query(&stmt, &[&entities, &keys]).await?;
    let mut found = HashMap::with_capacity(rows.len());
    for row in &rows {
        let key = DocumentKey {
            entity: row.try_get(0)?,
            id_key: row.try_get(1)?,
        };
        let version = row.try_get(2)?;
        let text: Arc<str> = Arc::from(row.try_get::<_, &str>(3)?);
        cache.keep(
            VersionedKey {
                key: key.clone(),
                version,
            },
            text.clone(),
        );
        found.insert(key, text);
    }
    Ok(found)
}

/// The rows of `statement` as written, documents and all.
async fn as_written<T>(
    conn: &Conn,
    statement: &SqlBuilder,
    document: usize,
    read: impl Fn(&Row, Columns) -> Result<T, Error>,
) -> Result<Vec<(String, T)>, Error> {
    let params = bind(statement.params());
    let stmt = prepare_bounded(conn, statement.as_sql()).await?;
    let columns = Columns {
        document,
        keyed: false,
    };
    conn.query(&stmt, &refs(&params))
        .await?
        .iter()
        .map(|row| Ok((row.try_get(document)?, read(row, columns)?)))
        .collect()
}

/// The document `entity`/`id_key`, its text from the cache when it is kept at the
/// row's version: one statement either way, which sends the text only when needed.
pub(crate) async fn one_by_id(
    conn: &Conn,
    cache: &DocumentCache,
    entity: &str,
    id_key: &str,
) -> Result<Option<String>, Error> {
    let key = cache.enabled().then(|| DocumentKey {
        entity: entity.to_owned(),
        id_key: id_key.to_owned(),
    });
    let kept = key.as_ref().and_then(|key| cache.latest(key));
    let kept_version = kept.as_ref().map_or(-1, |(version, _)| *version);
    let stmt = conn.prepare_cached(ONE_BY_ID).await?;
    let Some(row) = conn
        .query_opt(&stmt, &[&entity, &id_key, &kept_version])
        .await?
    else {
        return Ok(None);
    };
    let version: i64 = row.try_get(0)?;
    // `doc` is never NULL: no text means the kept version's.
    let text = match (row.try_get::<_, Option<&str>>(1)?, kept) {
        (None, Some((_, text))) => {
            cache.record(true);
            return Ok(Some(text.to_string()));
        }
        (Some(text), _) => text,
        (None, None) => return Ok(None),
    };
    if let Some(key) = key {
        cache.record(false);
        cache.keep(VersionedKey { key, version }, Arc::from(text));
    }
    Ok(Some(text.to_owned()))
}
