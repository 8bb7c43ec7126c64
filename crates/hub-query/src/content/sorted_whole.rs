//! The whole read (`pagesize=-1`, CSV, Distinct's fold) of a list in a `rawsort` order on
//! SQLite, keys first: the order's keys in one statement, then the documents of each
//! batch of them by key. Sorting the documents themselves passed each one's text through
//! SQLite's sorter, which spills to temporary files: every POI of the scale-10 demo
//! `rawsort=Shortname` took 5.3 s, where the default order (read along its index) takes
//! 1.8 s. The keys are read in the same order as the page statements' (`compile_rawsort`,
//! then the id), so the read holds the same documents in the same order.
//!
//! Owns: the two statements. Must not: run them (the store does, in one read transaction).

use super::prefixed::of_keys;
use super::rawfilter_sql::compile_rawsort;
use super::{ContentOrder, ContentQuery};
use crate::sql::{Dialect, SqlBuilder};

/// Keys handed to one documents statement (SQLite's bound parameter limit is 32,766).
pub const KEYS_PER_READ: usize = 500;

/// A whole read in a `rawsort` order.
#[derive(Debug, Clone)]
pub struct WholeByKeys {
    query: ContentQuery,
}

impl WholeByKeys {
    /// The keys-first read of `query`'s whole read, when it is in a `rawsort` order.
    pub fn of(query: &ContentQuery) -> Option<WholeByKeys> {
        matches!(query.order, ContentOrder::Raw(_)).then(|| WholeByKeys {
            query: query.clone(),
        })
    }

    /// Every match's key, in the order: `id_key`.
    pub fn keys(&self, dialect: Dialect) -> SqlBuilder {
        let mut q = SqlBuilder::new(dialect);
        q.sql("SELECT c.id_key FROM content c");
        self.query.where_clause(&mut q);
        q.sql(" ORDER BY ");
        if let ContentOrder::Raw(keys) = &self.query.order {
            compile_rawsort(&mut q, keys);
        }
        q.sql("c.id_key");
        q
    }

    /// The documents of `keys` (at most [`KEYS_PER_READ`]), in no order: `id_key, doc`.
    pub fn documents(&self, keys: &[String], dialect: Dialect) -> SqlBuilder {
        let mut q = SqlBuilder::new(dialect);
        q.sql("SELECT c.id_key, c.doc");
        of_keys(&mut q, self.query.entity, keys);
        q
    }
}

#[cfg(test)]
mod tests {
    use super::super::rawfilter::parse_rawsort;
    use super::super::tests::query as list;
    use super::super::ContentFilter;
    use super::*;

    fn query(order: ContentOrder) -> ContentQuery {
        list(vec![ContentFilter::Active(true)], order)
    }

    #[test]
    fn only_rawsort_orders_read_keys_first_in_the_pages_order() {
        assert!(WholeByKeys::of(&query(ContentOrder::Default)).is_none());
        assert!(WholeByKeys::of(&query(ContentOrder::Seed("7".into()))).is_none());
        let whole = WholeByKeys::of(&query(ContentOrder::Raw(
            parse_rawsort("-Detail.de.Title").unwrap(),
        )))
        .unwrap();
        assert_eq!(
            whole.keys(Dialect::Sqlite).as_sql(),
            "SELECT c.id_key FROM content c WHERE c.entity = ?1 AND c.active = ?2 ORDER BY \
             json_extract(c.docb, ?3) IS NULL ASC, json_extract(c.docb, ?4) DESC, c.id_key"
        );
        let keys = ["a".to_string(), "b".to_string()];
        assert_eq!(
            whole.documents(&keys, Dialect::Sqlite).as_sql(),
            "SELECT c.id_key, c.doc FROM content c WHERE c.entity = ?1 AND c.id_key IN (?2, ?3)"
        );
    }
}
