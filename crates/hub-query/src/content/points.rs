//! The map points of a list: each located match's id, position and `Shortname`, as a
//! vector tile carries them, read from the `content` row's own columns.
//!
//! A tile of 20,000 points used to read and parse 20,000 whole documents (5 KB each at
//! the demo's size) for four values the row already holds; on SQLite the position
//! index carries them all, so a tile is read from the index alone.
//!
//! A box over most of an entity (a zoom-6 tile of the scale-10 POIs holds 51,000) still
//! read every match and sorted them to keep the first 20,000; on PostgreSQL each
//! match's row. An index of the order holds the points' columns too
//! (`content_order_values` on PostgreSQL, `content_order_points` on SQLite), so where
//! the count shows the box dense, a walk along the order tests each document's
//! position in the index and stops at the limit ([`super::CountedWalk::points`], the
//! rule of filtered pages' walks).
//!
//! Owns: the points statements. Must not: decide what a caller may see (the closed-data
//! rule rewrites the query before, and decides whether points may be read at all).

use super::checks::CheckTable;
use super::walk::{prefix_rows, within_prefix};
use super::{ContentQuery, Form};
use crate::sql::{Dialect, SqlBuilder, SqlValue};

/// The statement of a list's points and the checks its WHERE clause leaves to the
/// database (to name the client's parameter when one fails).
#[derive(Debug)]
pub struct CompiledPoints {
    /// Rows of `(id, latitude, longitude, shortname)`.
    pub statement: SqlBuilder,
    pub checks: CheckTable,
}

impl ContentQuery {
    /// The first `limit` located matches of the query in the default order (the order
    /// its pages have; the query's own order and page are not used).
    pub fn compile_points(&self, dialect: Dialect, limit: u64) -> CompiledPoints {
        self.points_statement(dialect, limit, None)
    }

    /// The same points found among the first `rows` documents of the order, each
    /// tested as the walk passes it: the answer when it holds `limit` rows (fewer
    /// means the prefix did not hold them all).
    pub(crate) fn compile_points_walk(
        &self,
        dialect: Dialect,
        limit: u64,
        rows: u64,
    ) -> CompiledPoints {
        self.points_statement(dialect, limit, Some(rows))
    }

    fn points_statement(
        &self,
        dialect: Dialect,
        limit: u64,
        walked: Option<u64>,
    ) -> CompiledPoints {
        let mut statement = SqlBuilder::new(dialect);
        statement.sql("SELECT c.id, c.latitude, c.longitude, c.shortname FROM ");
        let checks = match walked {
            None => {
                statement.sql("content c");
                self.where_clause(&mut statement)
            }
            Some(rows) => {
                prefix_rows(
                    &mut statement,
                    self.entity,
                    " INDEXED BY content_order_points",
                    rows,
                );
                let checks = self.where_clause_as(&mut statement, Form::Probe);
                within_prefix(&mut statement, self.entity, rows);
                checks
            }
        };
        statement
            .sql(" AND c.latitude IS NOT NULL AND c.longitude IS NOT NULL")
            .sql(" ORDER BY c.sort_key, c.id_key LIMIT ")
            .param(SqlValue::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
        CompiledPoints { statement, checks }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{ContentFilter, ContentOrder, Page};

    fn query(filters: Vec<ContentFilter>) -> ContentQuery {
        ContentQuery {
            entity: "HubActivityPoi",
            filters,
            order: ContentOrder::Seed("7".into()),
            page: Page {
                size: 10,
                number: 3,
            },
            count_limit: None,
        }
    }

    #[test]
    fn points_are_the_located_matches_in_the_default_order_up_to_the_limit() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let compiled = query(vec![ContentFilter::Active(true)]).compile_points(dialect, 20_001);
            let sql = compiled.statement.as_sql();
            assert!(sql.starts_with("SELECT c.id, c.latitude, c.longitude, c.shortname FROM content c WHERE c.entity = "), "{sql}");
            assert!(sql.contains("c.active"), "{sql}");
            assert!(
                sql.contains("c.latitude IS NOT NULL AND c.longitude IS NOT NULL"),
                "{sql}"
            );
            // The default order whatever the query's, and the limit given, not its page.
            assert!(
                sql.contains(" ORDER BY c.sort_key, c.id_key LIMIT "),
                "{sql}"
            );
            assert!(!sql.contains("OFFSET"), "{sql}");
            let params = compiled.statement.params();
            assert_eq!(
                params.first(),
                Some(&SqlValue::Text("HubActivityPoi".into()))
            );
            assert_eq!(params.last(), Some(&SqlValue::Int(20_001)));
        }
    }
}
