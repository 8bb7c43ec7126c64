//! The map points of a list: each located match's id, position and `Shortname`, as a
//! vector tile carries them, read from the `content` row's own columns.
//!
//! A tile of 20,000 points used to read and parse 20,000 whole documents (5 KB each at
//! the demo's size) for four values the row already holds; on SQLite the position
//! index carries them all, so a tile is read from the index alone.
//!
//! Owns: the points statement. Must not: decide what a caller may see (the closed-data
//! rule rewrites the query before, and decides whether points may be read at all).

use super::checks::CheckTable;
use super::ContentQuery;
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
        let mut statement = SqlBuilder::new(dialect);
        statement.sql("SELECT c.id, c.latitude, c.longitude, c.shortname FROM content c");
        let checks = self.where_clause(&mut statement);
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
