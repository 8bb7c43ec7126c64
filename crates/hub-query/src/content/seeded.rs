//! Seeded pages from a kept prefix of the seeded order.
//!
//! `seed=N` orders a list by `md5(id || N)`, ODH's random but stable order. No index
//! holds that order, so every seeded page hashes every match and keeps the best: 22 ms
//! (SQLite) and 44 ms (PostgreSQL) for page 3 of the 70,000 POIs of the scale-10 demo,
//! a cost in proportion to the data. ODH normalises seeds to a few dozen values, and a
//! site showing "random" entries asks for the first pages of a few of them over and
//! over. So the store keeps the first [`PREFIX`] keys of a seeded order, read by one
//! statement that costs what one page did, and answers the pages inside that prefix by
//! reading their documents by key.
//!
//! Like bookmarks (`super::bookmarks`), every statement returns the entity's write
//! revision with its rows, from the same snapshot: a prefix is used only while its
//! documents come back with the revision it was read at.
//!
//! Owns: which pages qualify and the two statements. Must not: keep prefixes (the
//! store's `content::seeded` does).

use super::bookmarks::{revision, MAX_SCOPE_BYTES};
use super::{seed_order_key, ContentOrder, ContentQuery};
use crate::sql::{Dialect, SqlBuilder, SqlValue};

/// Positions of a seeded order kept: pages ending within them are read by key (100
/// pages of 10). Each kept prefix is that many ids.
pub const PREFIX: u64 = 1_000;

/// A seeded page that ends within the first [`PREFIX`] positions of its order.
#[derive(Debug, Clone, PartialEq)]
pub struct SeededPage {
    query: ContentQuery,
    /// The list and seed the prefix is of: its WHERE clause and values, and the seed.
    scope: String,
}

impl SeededPage {
    /// The page `query` asks for, when it qualifies.
    pub fn of(query: &ContentQuery) -> Option<SeededPage> {
        let ContentOrder::Seed(seed) = &query.order else {
            return None;
        };
        let end = query
            .page
            .offset()
            .saturating_add(u64::from(query.page.size));
        if end > PREFIX {
            return None;
        }
        let mut clause = SqlBuilder::new(Dialect::Sqlite);
        query.where_clause(&mut clause);
        let scope = format!("{}\n{:?}\nseed {seed}", clause.as_sql(), clause.params());
        (scope.len() <= MAX_SCOPE_BYTES).then(|| SeededPage {
            query: query.clone(),
            scope,
        })
    }

    /// The list and seed: pages with the same scope share a prefix.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The page's keys within `prefix` (the kept keys, in order): empty when the page
    /// lies past the list's end.
    pub fn keys<'a>(&self, prefix: &'a [String]) -> &'a [String] {
        let start = (self.query.page.offset() as usize).min(prefix.len());
        let end = start
            .saturating_add(self.query.page.size as usize)
            .min(prefix.len());
        &prefix[start..end]
    }

    /// The first [`PREFIX`] keys of the seeded order, one row each: `id_key, revision`.
    pub fn prefix(&self, dialect: Dialect) -> SqlBuilder {
        let mut q = SqlBuilder::new(dialect);
        q.sql("SELECT p.k, ");
        revision(&mut q, self.query.entity);
        q.sql(" FROM (SELECT c.id_key AS k, ");
        if let ContentOrder::Seed(seed) = &self.query.order {
            seed_order_key(&mut q, seed);
        }
        q.sql(" AS o FROM content c");
        self.query.where_clause(&mut q);
        q.sql(" ORDER BY o, k LIMIT ")
            .param(SqlValue::Int(PREFIX as i64))
            .sql(") p ORDER BY p.o, p.k");
        q
    }

    /// The documents of `keys`, in no order: `id_key, doc, revision`.
    pub fn documents(&self, keys: &[String], dialect: Dialect) -> SqlBuilder {
        let mut q = SqlBuilder::new(dialect);
        q.sql("SELECT c.id_key, c.doc, ");
        revision(&mut q, self.query.entity);
        q.sql(" FROM content c WHERE c.entity = ")
            .text(self.query.entity)
            .sql(" AND c.id_key IN ")
            .list(keys.iter().cloned());
        q
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ContentFilter, Page};
    use super::*;

    fn page(number: u32, size: u32, order: ContentOrder) -> ContentQuery {
        ContentQuery {
            entity: "Event",
            filters: vec![ContentFilter::Active(true)],
            order,
            page: Page { size, number },
            count_limit: None,
        }
    }

    #[test]
    fn only_seeded_pages_ending_within_the_prefix_qualify() {
        let seed = || ContentOrder::Seed("7".into());
        let cases = [
            (page(1, 10, seed()), true),
            (page(100, 10, seed()), true),
            (page(101, 10, seed()), false),
            (page(1, 1_000, seed()), true),
            (page(2, 1_000, seed()), false),
            (page(1, 10, ContentOrder::Default), false),
        ];
        for (query, qualifies) in cases {
            assert_eq!(SeededPage::of(&query).is_some(), qualifies, "{query:?}");
        }
    }

    #[test]
    fn each_seed_and_filter_has_its_own_prefix_and_pages_slice_it() {
        let seven = SeededPage::of(&page(3, 10, ContentOrder::Seed("7".into()))).unwrap();
        let eight = SeededPage::of(&page(3, 10, ContentOrder::Seed("8".into()))).unwrap();
        let mut all = page(5, 10, ContentOrder::Seed("7".into()));
        all.filters.clear();
        let unfiltered = SeededPage::of(&all).unwrap();
        assert_ne!(seven.scope(), eight.scope());
        assert_ne!(seven.scope(), unfiltered.scope());
        let later = SeededPage::of(&page(9, 10, ContentOrder::Seed("7".into()))).unwrap();
        assert_eq!(seven.scope(), later.scope());

        let prefix: Vec<String> = (0..25).map(|n| format!("k{n}")).collect();
        assert_eq!(seven.keys(&prefix), &prefix[20..25]);
        assert!(later.keys(&prefix).is_empty());

        let sql = seven.prefix(Dialect::Postgres);
        assert!(
            sql.as_sql().contains("md5(c.id_key || $"),
            "{}",
            sql.as_sql()
        );
        assert!(sql.as_sql().contains("c.active = $"), "{}", sql.as_sql());
        assert!(sql.params().contains(&SqlValue::Int(PREFIX as i64)));
        let docs = seven.documents(&prefix[20..25], Dialect::Sqlite);
        assert!(
            docs.as_sql()
                .ends_with("AND c.id_key IN (?3, ?4, ?5, ?6, ?7)"),
            "{}",
            docs.as_sql()
        );
    }
}
