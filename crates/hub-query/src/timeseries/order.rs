//! The deterministic order of a compiled Time Series statement: which output columns
//! it sorts by, and how each is said to PostgreSQL so that the order equals SQLite's.

use super::query::{OutColumn, Route, TsQuery};
use super::schema::never_null;
use crate::Dialect;

/// The 1-based ordinals of the ORDER BY: the route's preferred keys first, then (unless
/// the output holds a unique key of the route's rows, `unique`) every output column.
pub(super) fn deterministic_order(q: &TsQuery, columns: &[OutColumn], unique: bool) -> Vec<usize> {
    let preferred: &[&str] = match (&q.route, q.tree) {
        (Route::Latest | Route::History { .. }, false) => {
            &["_timestamp", "stype", "scode", "tname", "mperiod"]
        }
        (Route::Edges, true) => &["_edgetype", "_edgecode"],
        (Route::Events(_), true) => &["_eventorigin", "_eventseriesuuid", "_eventuuid"],
        (Route::Edges, false) => &["etype", "ecode"],
        (Route::Events(_), false) => &["evorigin", "evseriesuuid", "evstart", "evuuid"],
        (_, true) => &[
            "_stationtype",
            "_stationcode",
            "_datatypename",
            "_timestamp",
            "mperiod",
        ],
        (Route::MetadataHistory { .. }, false) => &["stype", "scode", "mhtransactiontime"],
        (_, false) => &["stype", "scode", "tname"],
    };
    let mut ordinals: Vec<usize> = Vec::new();
    let mut pos = Vec::new(); // first ordinal of each column
    let mut n = 1;
    for c in columns {
        pos.push(n);
        n += c.kind.width();
    }
    for key in preferred {
        if let Some(k) = columns.iter().position(|c| c.key == *key) {
            ordinals.push(pos[k]);
        }
    }
    // Value kind breaks ties between series that differ only in it.
    if unique {
        if let Some(k) = columns.iter().position(|c| c.key == "mvalue") {
            ordinals.extend([pos[k], pos[k] + 1, pos[k] + 2]);
        }
    }
    for o in 1..n {
        if !unique && !ordinals.contains(&o) {
            ordinals.push(o);
        }
    }
    ordinals
}

/// The ORDER BY's terms for `ordinals`, given each SQL column's plain expression (None
/// when it is not a plain column). SQLite sorts NULLs first ascending; PostgreSQL is told
/// to only where a NULL can occur, so that an index (whose NULLs come last) can give the
/// order of the other columns.
pub(super) fn order_by_terms(
    ordinals: &[usize],
    plain_exprs: &[Option<String>],
    dialect: Dialect,
) -> String {
    ordinals
        .iter()
        .map(|&o| match dialect {
            Dialect::Postgres if !plain_exprs[o - 1].as_deref().is_some_and(never_null) => {
                format!("{o} NULLS FIRST")
            }
            _ => o.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
