//! SQL functions the compiled `rawfilter` needs on SQLite (see
//! `hub_query::content::rawfilter_sql`), and how a failed type check leaves the
//! database: as a check id and the JSON type found, never as text to parse.
//!
//! - `hub_rf_check(json_type, kinds, check)`: 1 when the value's JSON type is one of
//!   `kinds` (comma list), 0 when it is missing or null, otherwise the statement fails
//!   and [`take_failed_check`] on the same thread tells which check failed on what type
//!   (a type mismatch such as `eq(Active,1)` on a boolean). The store resolves the id
//!   through the compiled query's check table.
//! - `hub_rf_contains(text, needle)`: case-insensitive (Unicode folding) substring.
//! - `hub_rf_regexp(pattern, text)`: case-insensitive regular expression, compiled once
//!   per statement, with a size limit.
//!
//! Must not: know parameter names, positions or messages (they stay in `hub-query`).

use std::cell::Cell;

use hub_model::language::fold;
use hub_query::content::checks::{FailedCheck, FoundType};
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::Connection;

thread_local! {
    /// The check that failed in the statement running on this thread. SQLite calls
    /// functions on the thread that steps the statement, so the backend reads it right
    /// after the failed step, on the same thread.
    static FAILED_CHECK: Cell<Option<FailedCheck>> = const { Cell::new(None) };
}

/// The check that made the last statement on this thread fail, if one did; clears it.
pub(crate) fn take_failed_check() -> Option<FailedCheck> {
    FAILED_CHECK.with(Cell::take)
}

pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("hub_rf_check", 3, flags, check)?;
    conn.create_scalar_function("hub_rf_contains", 2, flags, contains)?;
    conn.create_scalar_function("hub_rf_regexp", 2, flags, |ctx| {
        let re = ctx.get_or_create_aux(0, |v| {
            regex::RegexBuilder::new(v.as_str()?)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| rusqlite::Error::UserFunctionError(e.into()))
        })?;
        let text = ctx.get::<Option<String>>(1)?;
        Ok(text.map(|t| re.is_match(&t)))
    })?;
    Ok(())
}

/// Runs once per document: the common cases compare the arguments' bytes without
/// copying them, and the needle is folded once per statement.
fn contains(ctx: &Context) -> rusqlite::Result<Option<bool>> {
    let needle = ctx.get_or_create_aux(1, |v| -> rusqlite::Result<Option<String>> {
        Ok(match v {
            ValueRef::Null => None,
            other => Some(fold(other.as_str()?)),
        })
    })?;
    let Some(needle) = needle.as_deref() else {
        return Ok(None);
    };
    match ctx.get_raw(0) {
        ValueRef::Null => Ok(None),
        // ASCII text folds to its ASCII lower case.
        ValueRef::Text(text) if text.is_ascii() => Ok(Some(
            needle.is_empty()
                || text
                    .windows(needle.len())
                    .any(|w| w.eq_ignore_ascii_case(needle.as_bytes())),
        )),
        _ => {
            let text: String = ctx.get(0)?;
            Ok(Some(fold(&text).contains(needle)))
        }
    }
}

fn check(ctx: &Context) -> rusqlite::Result<i64> {
    // Fast path: the type is one of the kinds, or missing/null.
    match (ctx.get_raw(0), ctx.get_raw(1)) {
        (ValueRef::Null, _) => return Ok(0),
        (ValueRef::Text(b"null"), _) => return Ok(0),
        (ValueRef::Text(t), ValueRef::Text(kinds))
            if kinds.split(|c| *c == b',').any(|k| k == t) =>
        {
            return Ok(1)
        }
        _ => {}
    }
    let Some(json_type) = ctx.get::<Option<String>>(0)? else {
        return Ok(0);
    };
    if json_type == "null" {
        return Ok(0);
    }
    let kinds: String = ctx.get(1)?;
    if kinds.split(',').any(|k| k == json_type) {
        return Ok(1);
    }
    let id: i64 = ctx.get(2)?;
    let found = FoundType::from_database_name(&json_type).unwrap_or(FoundType::Object);
    FAILED_CHECK.with(|f| {
        f.set(Some(FailedCheck {
            id: u32::try_from(id).unwrap_or(0),
            found,
        }))
    });
    Err(rusqlite::Error::UserFunctionError(
        format!("rawfilter check {id} failed").into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        register(&c).unwrap();
        c
    }

    #[test]
    fn check_accepts_matching_types_and_ignores_missing_values() {
        let c = conn();
        let r: (i64, i64, i64) = c
            .query_row(
                "SELECT hub_rf_check('true', 'true,false', 1), hub_rf_check(NULL, 'text', 1), hub_rf_check('null', 'text', 1)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(r, (1, 0, 0));
        assert_eq!(take_failed_check(), None);
    }

    #[test]
    fn a_mismatch_reports_the_check_id_and_the_type_found() {
        let cases = [
            ("true", "integer,real", 11, FoundType::Boolean),
            ("text", "true,false", 2, FoundType::Text),
            ("real", "text", 3, FoundType::Number),
            ("object", "array", 4, FoundType::Object),
        ];
        let c = conn();
        for (json_type, kinds, id, found) in cases {
            let e = c.query_row(
                "SELECT hub_rf_check(?1, ?2, ?3)",
                rusqlite::params![json_type, kinds, id],
                |r| r.get::<_, i64>(0),
            );
            assert!(e.is_err(), "{json_type} vs {kinds}");
            assert_eq!(take_failed_check(), Some(FailedCheck { id, found }));
            assert_eq!(take_failed_check(), None, "taking clears it");
        }
    }

    #[test]
    fn contains_folds_and_regexp_ignores_case() {
        let c = conn();
        let r: (bool, bool, bool) = c
            .query_row(
                "SELECT hub_rf_contains('Große HÜTTE', 'grosse hü'), hub_rf_regexp('^alm', 'ALMHÜTTE'), hub_rf_regexp('x$', 'ALM')",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(r, (true, true, false));
    }

    #[test]
    fn contains_agrees_with_folding_for_ascii_and_other_text() {
        let c = conn();
        for (text, needle) in [
            ("Alm", "ALM"),
            ("alm", ""),
            ("Strasse", "STRASSE"),
            ("Straße", "strasse"),
            ("Strasse", "ß"),
            ("abc", "Ü"),
            ("\u{212a}elvin", "k"),
            ("x", "xy"),
        ] {
            let got: bool = c
                .query_row("SELECT hub_rf_contains(?1, ?2)", [text, needle], |r| {
                    r.get(0)
                })
                .unwrap();
            assert_eq!(got, fold(text).contains(&fold(needle)), "{text} {needle}");
        }
        let nulls: (Option<bool>, Option<bool>) = c
            .query_row(
                "SELECT hub_rf_contains(NULL, 'a'), hub_rf_contains('a', NULL)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(nulls, (None, None));
    }
}
