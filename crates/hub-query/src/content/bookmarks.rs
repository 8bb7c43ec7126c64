//! Deep pages in the default order, found from bookmarks in the order index.
//!
//! Page 300 of a list in the default order is `OFFSET 2990`: the database steps over
//! 2,990 entries of the `(entity, sort_key, id_key)` index (with a filter, 2,990
//! matches, testing every document passed) for every request. ODH clients page by
//! number, so a seek from the key before the page needs that key: a *bookmark*. Mark `j`
//! (from 1) is the key at position `j · STRIDE − 1` of the list's order, so page `offset`
//! seeks to the first key after mark `offset / STRIDE` and steps over fewer than
//! [`STRIDE`] entries of the list.
//!
//! Marks hold only while the entity's documents are unchanged. Every statement here
//! returns the entity's write revision (`content_revision`) with its rows, read in the
//! same statement and so from the same snapshot as the keys or documents: the store
//! keeps marks with the revision they were read at and uses a page only when it comes
//! with that same revision. A write in between (through this process or another) shows
//! as a new revision, and the marks are read again.
//!
//! A filtered list has marks of its own ([`BookmarkedPage::scope`]: its WHERE clause),
//! over its matches only. Its statements test each filter in the form its density pays
//! for ([`probes_pay`]): along the order index, one probe per document passed, when the
//! matches are dense; as the set of matches otherwise.
//!
//! Owns: which pages qualify, where marks lie, and the two statements. Must not: keep
//! marks or decide when to read them (`hub-store`'s page bookmarks do).

use super::walk::{answered_by_an_index, probes_pay, walk_index};
use super::{compile_filter, CheckTable, ContentFilter, ContentOrder, ContentQuery, Form, Total};
use crate::sql::{Dialect, SqlBuilder, SqlValue};

/// Entries of the order between two marks: a bookmarked page steps over fewer than
/// this many. Each mark is kept in memory (two short keys), one per `STRIDE` entries
/// of a list that was paged that deep.
pub const STRIDE: u64 = 100;

/// The longest [`BookmarkedPage::scope`] kept: a list with more filter text (long value
/// lists) runs its ordinary statement, as the store's kept counts do.
pub const MAX_SCOPE_BYTES: usize = 8 * 1024;

/// A key of the `(entity, sort_key, id_key)` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderKey {
    pub sort_key: String,
    pub id_key: String,
}

/// A page of a list in the default order at least [`STRIDE`] entries deep.
#[derive(Debug, Clone, PartialEq)]
pub struct BookmarkedPage {
    pub entity: &'static str,
    pub offset: u64,
    pub size: u32,
    /// The list's filters; none for the whole list.
    filters: Vec<ContentFilter>,
    /// What the marks are of: the entity for the whole list, which is the same for every
    /// caller, otherwise also the filters' WHERE clause and its values.
    scope: String,
    /// The list's matches and the entity's documents, once counted ([`BookmarkedPage::counted`]).
    density: Option<(u64, u64)>,
}

impl BookmarkedPage {
    /// The page `query` asks for, when it qualifies. Filters an index answers directly
    /// (ids, a radius, an area) do not: their few matches are sorted at once.
    pub fn of(query: &ContentQuery) -> Option<BookmarkedPage> {
        let qualifies = query.order == ContentOrder::Default
            && query.page.offset() >= STRIDE
            && !query.filters.iter().any(answered_by_an_index);
        if !qualifies {
            return None;
        }
        let scope = if query.filters.is_empty() {
            query.entity.to_string()
        } else {
            let mut clause = SqlBuilder::new(Dialect::Sqlite);
            query.where_clause(&mut clause);
            format!("{}\n{:?}", clause.as_sql(), clause.params())
        };
        if scope.len() > MAX_SCOPE_BYTES {
            return None;
        }
        Some(BookmarkedPage {
            entity: query.entity,
            offset: query.page.offset(),
            size: query.page.size,
            filters: query.filters.clone(),
            scope,
            density: None,
        })
    }

    /// The list the marks are of: pages with the same scope share them.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// Whether the list has filters: its statements then wait for
    /// [`BookmarkedPage::counted`] to choose how to test them.
    pub fn is_filtered(&self) -> bool {
        !self.filters.is_empty()
    }

    /// The page with the list's total (`matched`) and the entity's number of documents
    /// known, which tell how dense the matches are.
    pub fn counted(mut self, matched: Total, documents: u64) -> BookmarkedPage {
        self.density = Some((matched.value, documents));
        self
    }

    /// The number of the mark the page seeks from (at least 1).
    pub fn mark(&self) -> u64 {
        self.offset / STRIDE
    }

    /// The page's documents, found after mark [`BookmarkedPage::mark`] (`key`), each row
    /// carrying the entity's revision as its second column.
    pub fn seek(&self, key: &OrderKey, dialect: Dialect) -> SqlBuilder {
        let skipped = self.offset - self.mark() * STRIDE;
        let mut page = SqlBuilder::new(dialect);
        page.sql("SELECT ").document().sql(", ");
        revision(&mut page, self.entity);
        page.sql(" FROM (SELECT c.id_key AS k, c.sort_key AS o FROM content c");
        self.matches(&mut page, skipped + u64::from(self.size));
        after(&mut page, key);
        page.sql(" ORDER BY o, k LIMIT ")
            .param(SqlValue::Int(self.size as i64))
            .sql(" OFFSET ")
            .param(SqlValue::Int(skipped as i64))
            .sql(") p JOIN content c ON c.entity = ")
            .text(self.entity)
            .sql(" AND c.id_key = p.k ORDER BY p.o, p.k");
        page
    }

    /// The marks after mark number `known` (`last` is its key; none and 0 = from the
    /// start) up to this page's mark: one row per mark, `sort_key, id_key, revision`.
    /// Fewer rows than asked for means the list ends before the page.
    pub fn marks(&self, known: u64, last: Option<&OrderKey>, dialect: Dialect) -> SqlBuilder {
        let span = self
            .mark()
            .saturating_sub(known)
            .saturating_mul(STRIDE)
            .min(i64::MAX as u64);
        let mut marks = SqlBuilder::new(dialect);
        marks.sql("SELECT m.sort_key, m.id_key, ");
        revision(&mut marks, self.entity);
        marks.sql(
            " FROM (SELECT c.sort_key, c.id_key, \
             ROW_NUMBER() OVER (ORDER BY c.sort_key, c.id_key) AS n \
             FROM content c",
        );
        self.matches(&mut marks, span);
        if let Some(key) = last {
            after(&mut marks, key);
        }
        marks
            .sql(" ORDER BY c.sort_key, c.id_key LIMIT ")
            .param(SqlValue::Int(span as i64))
            .sql(&format!(") m WHERE m.n % {STRIDE} = 0 ORDER BY m.n"));
        marks
    }

    /// The list's entries after mark `j` (`last` is its key; none = from the start),
    /// counted up to [`STRIDE`], with the entity's revision: one row, `count, revision`,
    /// from one snapshot. Fewer than [`STRIDE`] means the list ends among them, so at
    /// that revision it holds `j · STRIDE + count` entries: a page past its end is
    /// answered without reading on through the order.
    pub fn tail(&self, last: Option<&OrderKey>, dialect: Dialect) -> SqlBuilder {
        let mut tail = SqlBuilder::new(dialect);
        tail.sql("SELECT COUNT(*), ");
        revision(&mut tail, self.entity);
        tail.sql(" FROM (SELECT 1 FROM content c");
        self.matches(&mut tail, STRIDE);
        if let Some(key) = last {
            after(&mut tail, key);
        }
        tail.sql(" ORDER BY c.sort_key, c.id_key LIMIT ")
            .param(SqlValue::Int(STRIDE as i64))
            .sql(") t");
        tail
    }

    /// The entity's documents that match the list, for a read along the order that
    /// passes `span` of them: the filters tested per document when that pays (the order
    /// index named on SQLite, as a walk does), as sets otherwise. The clause's checks
    /// are the query's own (the same filters in the same order), so the store resolves a
    /// failed one against the page's [`CheckTable`].
    fn matches(&self, q: &mut SqlBuilder, span: u64) {
        let form = match self.density {
            Some((matched, documents)) if probes_pay(span, matched, documents) => Form::Probe,
            _ => Form::Set,
        };
        if form == Form::Probe && self.is_filtered() {
            q.sql(walk_index(q.dialect, &self.filters));
        }
        q.sql(" WHERE c.entity = ").text(self.entity);
        let mut checks = CheckTable::default();
        for filter in &self.filters {
            q.sql(" AND ");
            compile_filter(q, filter, self.entity, form, &mut checks);
        }
    }
}

/// The entity's write revision, as a scalar subquery (read once per statement). An
/// entity never written through this schema has no row: 0, which its first write (1)
/// changes like any other.
pub(super) fn revision(q: &mut SqlBuilder, entity: &'static str) {
    q.sql("COALESCE((SELECT r.revision FROM content_revision r WHERE r.entity = ")
        .text(entity)
        .sql("), 0)");
}

/// The entity's write revision as a statement of its own: one row.
pub fn read_revision(entity: &'static str, dialect: Dialect) -> SqlBuilder {
    let mut q = SqlBuilder::new(dialect);
    q.sql("SELECT ");
    revision(&mut q, entity);
    q
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
    use super::super::{tagfilter, ContentFilter, ContentOrder, Page};
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
    fn only_deep_pages_in_the_default_order_without_an_indexed_filter_are_bookmarked() {
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
                Some((2_990, 29)),
            ),
            (
                page(
                    300,
                    vec![ContentFilter::IdIn(vec!["a".into()])],
                    ContentOrder::Default,
                ),
                None,
            ),
            (
                page(
                    300,
                    vec![ContentFilter::SourceIn(vec!["a-source".into(); 900])],
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

        // The tail after the last mark: at most a stride of entries, counted, with the
        // revision read in the same statement.
        let tail = deep.tail(Some(&key), Dialect::Postgres);
        assert_eq!(
            tail.as_sql(),
            "SELECT COUNT(*), COALESCE((SELECT r.revision FROM content_revision r WHERE r.entity = $1), 0) \
             FROM (SELECT 1 FROM content c WHERE c.entity = $2 \
             AND (c.sort_key, c.id_key) > ($3, $4) ORDER BY c.sort_key, c.id_key LIMIT $5) t"
        );
        assert_eq!(tail.params()[4], SqlValue::Int(STRIDE as i64));
        assert!(!deep.tail(None, Dialect::Sqlite).as_sql().contains("> ("));
    }

    #[test]
    fn each_filtered_list_has_marks_of_its_own() {
        let whole = BookmarkedPage::of(&page(30, vec![], ContentOrder::Default)).unwrap();
        let active = |on| page(30, vec![ContentFilter::Active(on)], ContentOrder::Default);
        let open = BookmarkedPage::of(&active(true)).unwrap();
        let closed = BookmarkedPage::of(&active(false)).unwrap();
        assert_eq!(whole.scope(), "Accommodation");
        assert_ne!(open.scope(), closed.scope());
        assert_ne!(open.scope(), whole.scope());
        // The page number is not part of the list.
        let mut deeper = active(true);
        deeper.page.number = 90;
        assert_eq!(BookmarkedPage::of(&deeper).unwrap().scope(), open.scope());
    }

    #[test]
    fn a_filtered_seek_tests_each_document_only_when_its_matches_are_dense() {
        let key = OrderKey {
            sort_key: "m".into(),
            id_key: "x".into(),
        };
        let tagged = tagfilter::parse_tagfilter("and(hiking)").unwrap();
        let query = page(
            300,
            vec![ContentFilter::Tags {
                kind: "tag",
                filter: tagged,
            }],
            ContentOrder::Default,
        );
        let deep = BookmarkedPage::of(&query).unwrap();
        // (matches, documents) → the seek's form; the seek passes 90 + 10 matches.
        let cases = [
            (None, "IN (SELECT"),
            (Some((50_000, 70_000)), "EXISTS (SELECT"),
            (Some((100, 10_000)), "IN (SELECT"),
            (Some((0, 10_000)), "IN (SELECT"),
        ];
        for (density, form) in cases {
            let counted = match density {
                Some((matched, documents)) => {
                    deep.clone().counted(Total::exact(matched), documents)
                }
                None => deep.clone(),
            };
            for dialect in [Dialect::Sqlite, Dialect::Postgres] {
                let seek = counted.seek(&key, dialect);
                assert!(
                    seek.as_sql().contains(form),
                    "{density:?}: {}",
                    seek.as_sql()
                );
                let named = seek.as_sql().contains("INDEXED BY content_order");
                let walks = form.starts_with("EXISTS") && dialect == Dialect::Sqlite;
                assert_eq!(named, walks, "{density:?}: {}", seek.as_sql());
            }
        }
        // Reading 29 marks (2,900 matches) of a 5,000-of-70,000 filter from the start
        // passes more documents than it has matches; reading the 29th from the 28th does not.
        let sparse = deep.counted(Total::exact(5_000), 70_000);
        let from_start = sparse.marks(0, None, Dialect::Postgres);
        assert!(
            from_start.as_sql().contains("IN (SELECT"),
            "{}",
            from_start.as_sql()
        );
        let extended = sparse.marks(28, Some(&key), Dialect::Postgres);
        assert!(
            extended.as_sql().contains("EXISTS (SELECT"),
            "{}",
            extended.as_sql()
        );
    }
}
