//! SQLite schema migrations: an ordered list, applied once each, recorded in
//! `schema_version`; each one runs in its own transaction (the runner in `crate::sqlite`).
//! The statements come from the declared-once schema (`crate::schema`), rendered for
//! SQLite. A migration is never edited after release; a change is a new entry at the end.

use std::sync::LazyLock;

use crate::schema::{self, Change, Dialect};

/// The SQLite migrations in order; append new ones at the end.
const SQLITE_CHANGES: &[Change] = &[
    Change {
        version: 1,
        name: "content documents with indexed columns",
        parts: schema::content::SQLITE_DOCUMENTS,
    },
    Change {
        version: 2,
        name: "time series: stations, types, series, latest values, history, edges, events",
        parts: schema::timeseries::SQLITE_TIME_SERIES,
    },
    Change {
        version: 3,
        name: "token service: users, clients, roles, refresh tokens, signing keys",
        parts: schema::auth::SQLITE_TOKENS,
    },
    Change {
        version: 4,
        name: "content: event date ranges for begindate/enddate and sort",
        parts: schema::content::SQLITE_EVENT_DATES,
    },
    Change {
        version: 5,
        name: "content: R*Tree of document positions for geographic prefilters",
        parts: schema::content::SQLITE_GEO_RTREE,
    },
    Change {
        version: 6,
        name: "content: covering index of positions replaces the R*Tree",
        parts: schema::content::SQLITE_POSITION_INDEX,
    },
    Change {
        version: 7,
        name: "content: binary JSON (JSONB) copy of each document for rawfilter",
        parts: schema::content::SQLITE_DOCB,
    },
    Change {
        version: 8,
        name: "content: event date ranges written from Rust, not by triggers",
        parts: schema::content::SQLITE_EVENT_DATES_FROM_RUST,
    },
    Change {
        version: 9,
        name: "content: FTS5 trigram index of folded titles for searchfilter",
        parts: schema::content::SQLITE_TITLE_TRIGRAMS,
    },
    Change {
        version: 10,
        name: "time series: a revision of the provenances, counted by triggers",
        parts: schema::timeseries::SQLITE_PROVENANCE_REVISION,
    },
    Change {
        version: 11,
        name: "content: the position index carries the sort and id keys",
        parts: schema::content::SQLITE_POSITION_WITH_KEYS,
    },
    Change {
        version: 12,
        name: "content: documents by language",
        parts: schema::content::LANGUAGE_DOCUMENTS,
    },
    Change {
        version: 13,
        name: "content: values of the flag fields as tags",
        parts: schema::content::FIELD_VALUE_TAGS,
    },
    Change {
        version: 14,
        name: "content: each document's Shortname beside its position",
        parts: schema::content::SQLITE_POINT_NAMES,
    },
    Change {
        version: 15,
        name: "content: the order with each document's point",
        parts: schema::content::SQLITE_ORDER_POINTS,
    },
    Change {
        version: 16,
        name: "content: revisions count the documents written",
        parts: schema::content::CONTENT_REVISION_WRITTEN,
    },
];

/// A migration as the SQLite runner applies it: its batch rendered once per process.
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sqlite: &'static str,
}

/// The rendered batches; they live as long as the process, so `MIGRATIONS` can lend
/// them out as `&'static str`.
static SQLITE_BATCHES: LazyLock<Vec<String>> = LazyLock::new(|| {
    SQLITE_CHANGES
        .iter()
        .map(|change| schema::render(change.parts, Dialect::Sqlite))
        .collect()
});

pub static MIGRATIONS: LazyLock<Vec<Migration>> = LazyLock::new(|| {
    SQLITE_CHANGES
        .iter()
        .zip(SQLITE_BATCHES.iter())
        .map(|(change, batch)| Migration {
            version: change.version,
            name: change.name,
            sqlite: batch.as_str(),
        })
        .collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_up_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1, "{}", m.name);
        }
    }
}
