//! Deep pages of a whole list, found from bookmarks in the order index.
//!
//! Page 300 of an unfiltered list in the default order is `OFFSET 2990`: the database
//! steps over 2,990 entries of the `(entity, sort_key, id_key)` index for every request
//! (on PostgreSQL most of the page's cost). ODH clients page by number, so a seek from
//! the key before the page needs that key: a *bookmark*. Mark `j` (from 1) is the key at
//! position `j · STRIDE − 1` of the entity's order, so page `offset` seeks to the first
//! key after mark `offset / STRIDE` and steps over fewer than [`STRIDE`] entries.
//!
//! Marks hold only while the entity's documents are unchanged. Every statement here
//! returns the entity's write revision (`content_revision`) with its rows, read in the
//! same statement and so from the same snapshot as the keys or documents: the store
//! keeps marks with the revision they were read at and uses a page only when it comes
//! with that same revision. A write in between (through this process or another) shows
//! as a new revision, and the marks are read again.
//!
//! Owns: which pages qualify, where marks lie, and the two statements. Must not: keep
//! marks or decide when to read them (`hub-store`'s page bookmarks do).

use super::ContentQuery;
use crate::sql::{Dialect, SqlBuilder, SqlValue};

/// Entries of the order between two marks: a bookmarked page steps over fewer than
/// this many. Each mark is kept in memory (two short keys), one per `STRIDE` documents
/// of an entity that was paged that deep.
pub const STRIDE: u64 = 100;

/// A key of the `(entity, sort_key, id_key)` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderKey {
    pub sort_key: String,
    pub id_key: String,
}

/// A page of an unfiltered list in the default order at least [`STRIDE`] entries deep.
/// Only a list without filters qualifies: its order is the same for every caller, so one
/// set of marks per entity serves all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookmarkedPage {
    pub entity: &'static str,
    pub offset: u64,
    pub size: u32,
}

impl BookmarkedPage {
    /// The page `query` asks for, when it qualifies.
    pub fn of(query: &ContentQuery) -> Option<BookmarkedPage> {
        let qualifies = query.is_whole_list_in_default_order() && query.page.offset() >= STRIDE;
        qualifies.then_some(BookmarkedPage {
            entity: query.entity,
            offset: query.page.offset(),
            size: query.page.size,
        })
    }

    /// The number of the mark the page seeks from (at least 1).
    pub fn mark(&self) -> u64 {
        self.offset / STRIDE
    }

    /// The page's documents, found after mark [`BookmarkedPage::mark`] (`key`), each row
    /// carrying the entity's revision as its second column.
    pub fn seek(&self, key: &OrderKey, dialect: Dialect) -> SqlBuilder {
        let mut page = SqlBuilder::new(dialect);
        page.sql("SELECT c.doc, ");
        revision(&mut page, self.entity);
        page.sql(" FROM (SELECT c.id_key AS k, c.sort_key AS o FROM content c WHERE c.entity = ")
            .text(self.entity);
        after(&mut page, key);
        page.sql(" ORDER BY o, k LIMIT ")
            .param(SqlValue::Int(self.size as i64))
            .sql(" OFFSET ")
            .param(SqlValue::Int((self.offset - self.mark() * STRIDE) as i64))
            .sql(") p JOIN content c ON c.entity = ")
            .text(self.entity)
            .sql(" AND c.id_key = p.k ORDER BY p.o, p.k");
        page
    }

    /// The marks after mark number `known` (`last` is its key; none and 0 = from the
    /// start) up to this page's mark: one row per mark, `sort_key, id_key, revision`.
    /// Fewer rows than asked for means the entity ends before the page.
    pub fn marks(&self, known: u64, last: Option<&OrderKey>, dialect: Dialect) -> SqlBuilder {
        let wanted = self.mark().saturating_sub(known);
        let mut marks = SqlBuilder::new(dialect);
        marks.sql("SELECT m.sort_key, m.id_key, ");
        revision(&mut marks, self.entity);
        marks
            .sql(
                " FROM (SELECT c.sort_key, c.id_key, \
                 ROW_NUMBER() OVER (ORDER BY c.sort_key, c.id_key) AS n \
                 FROM content c WHERE c.entity = ",
            )
            .text(self.entity);
        if let Some(key) = last {
            after(&mut marks, key);
        }
        marks
            .sql(" ORDER BY c.sort_key, c.id_key LIMIT ")
            .param(SqlValue::Int(
                wanted.saturating_mul(STRIDE).min(i64::MAX as u64) as i64,
            ))
            .sql(&format!(") m WHERE m.n % {STRIDE} = 0 ORDER BY m.n"));
        marks
    }
}

/// The entity's write revision, as a scalar subquery (read once per statement). An
/// entity never written through this schema has no row: 0, which its first write (1)
/// changes like any other.
fn revision(q: &mut SqlBuilder, entity: &'static str) {
    q.sql("COALESCE((SELECT r.revision FROM content_revision r WHERE r.entity = ")
        .text(entity)
        .sql("), 0)");
}

/// Only the entries strictly after `key` (a range of the order index on both backends).
fn after(q: &mut SqlBuilder, key: &OrderKey) {
    q.sql(" AND (c.sort_key, c.id_key) > (")
        .text(key.sort_key.as_str())
        .sql(", ")
        .text(key.id_key.as_str())
        .sql(")");
}

#[cfg(test)]
mod tests {
    use super::super::{ContentFilter, ContentOrder, Page};
    use super::*;

    fn page(number: u32, filters: Vec<ContentFilter>, order: ContentOrder) -> ContentQuery {
        ContentQuery {
            entity: "Accommodation",
            filters,
            order,
            page: Page { size: 10, number },
            count_limit: None,
        }
    }

    #[test]
    fn only_deep_pages_of_a_whole_list_in_the_default_order_are_bookmarked() {
        let cases = [
            (page(10, vec![], ContentOrder::Default), None),
            (page(11, vec![], ContentOrder::Default), Some((100, 1))),
            (page(300, vec![], ContentOrder::Default), Some((2_990, 29))),
            (page(300, vec![], ContentOrder::Seed("3".into())), None),
            (
                page(
                    300,
                    vec![ContentFilter::Active(true)],
                    ContentOrder::Default,
                ),
                None,
            ),
        ];
        for (query, expected) in cases {
            let found = BookmarkedPage::of(&query).map(|p| (p.offset, p.mark()));
            assert_eq!(found, expected, "{query:?}");
        }
    }

    #[test]
    fn a_seek_steps_over_fewer_than_a_stride_after_its_mark() {
        let deep = BookmarkedPage::of(&page(300, vec![], ContentOrder::Default)).unwrap();
        let key = OrderKey {
            sort_key: "m".into(),
            id_key: "x".into(),
        };
        let seek = deep.seek(&key, Dialect::Postgres);
        assert_eq!(
            seek.as_sql(),
            "SELECT c.doc, COALESCE((SELECT r.revision FROM content_revision r WHERE r.entity = $1), 0) \
             FROM (SELECT c.id_key AS k, c.sort_key AS o FROM content c WHERE c.entity = $2 \
             AND (c.sort_key, c.id_key) > ($3, $4) ORDER BY o, k LIMIT $5 OFFSET $6) p \
             JOIN content c ON c.entity = $7 AND c.id_key = p.k ORDER BY p.o, p.k"
        );
        // Mark 29 is position 2,899: page 300 starts at 2,990, 90 entries after it.
        assert_eq!(seek.params()[5], SqlValue::Int(90));

        let from_start = deep.marks(0, None, Dialect::Sqlite);
        assert!(
            !from_start.as_sql().contains("> ("),
            "{}",
            from_start.as_sql()
        );
        assert_eq!(from_start.params()[2], SqlValue::Int(2_900));
        let extended = deep.marks(20, Some(&key), Dialect::Sqlite);
        assert!(extended
            .as_sql()
            .contains("AND (c.sort_key, c.id_key) > (?3, ?4) ORDER BY"));
        assert_eq!(extended.params()[4], SqlValue::Int(900));
        assert!(extended
            .as_sql()
            .ends_with(") m WHERE m.n % 100 = 0 ORDER BY m.n"));
    }
}
