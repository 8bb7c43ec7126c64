//! SQL functions the compiled `rawfilter` needs on SQLite (see
//! `hub_query::content::rawfilter_sql`), and the translation of the type error they
//! raise into [`StoreError::QueryRejected`].
//!
//! - `hub_rf_check(json_type, kinds, position, parameter)`: 1 when the value's JSON type
//!   is one of `kinds` (comma list), 0 when it is missing or null, otherwise an error
//!   naming the parameter and the position of the literal (a type mismatch such as
//!   `eq(Active,1)` on a boolean).
//! - `hub_rf_contains(text, needle)`: case-insensitive (Unicode folding) substring.
//! - `hub_rf_regexp(pattern, text)`: case-insensitive regular expression, compiled once
//!   per statement, with a size limit.

use hub_model::language::fold;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::StoreError;

const MISMATCH: &str = "hub-rawfilter-type";
const SEP: char = '\u{1f}';

pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("hub_rf_check", 4, flags, check)?;
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

fn describe(json_type: &str) -> &'static str {
    match json_type {
        "true" | "false" => "booleans",
        "integer" | "real" => "numbers",
        "text" => "text",
        "array" => "an array",
        _ => "an object",
    }
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
    let position: i64 = ctx.get(2)?;
    let parameter: String = ctx.get(3)?;
    let wanted = describe(kinds.split(',').next().unwrap_or(""));
    let detail = format!(
        "the field holds {} but the value compared with it is {}; write the value as the field's type",
        describe(&json_type),
        article(wanted)
    );
    Err(rusqlite::Error::UserFunctionError(
        format!("{MISMATCH}{SEP}{parameter}{SEP}{position}{SEP}{detail}").into(),
    ))
}

fn article(kind: &str) -> &'static str {
    match kind {
        "booleans" => "a boolean (true or false)",
        "numbers" => "a number",
        "text" => "a quoted text or a dt'…' date",
        _ => "[]",
    }
}

/// Turns the type error raised by `hub_rf_check` into a client rejection; other errors
/// pass unchanged.
pub(crate) fn client_error(e: StoreError) -> StoreError {
    let message = match &e {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(_, Some(m))) => m.clone(),
        StoreError::Sqlite(rusqlite::Error::UserFunctionError(inner)) => inner.to_string(),
        _ => return e,
    };
    let Some(rest) = message.split_once(MISMATCH).map(|(_, r)| r) else {
        return e;
    };
    let mut parts = rest.trim_start_matches(SEP).splitn(3, SEP);
    match (
        parts.next(),
        parts.next().and_then(|p| p.parse().ok()),
        parts.next(),
    ) {
        (Some(parameter), Some(position), Some(detail)) => StoreError::QueryRejected {
            parameter: parameter.to_string(),
            position,
            detail: detail.to_string(),
        },
        _ => e,
    }
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
                "SELECT hub_rf_check('true', 'true,false', 1, 'p'), hub_rf_check(NULL, 'text', 1, 'p'), hub_rf_check('null', 'text', 1, 'p')",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(r, (1, 0, 0));
    }

    #[test]
    fn a_mismatch_becomes_a_rejection_with_parameter_and_position() {
        let c = conn();
        let e = c
            .query_row(
                "SELECT hub_rf_check('true', 'integer,real', 11, 'rawfilter')",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_err();
        match client_error(StoreError::Sqlite(e)) {
            StoreError::QueryRejected {
                parameter,
                position,
                detail,
            } => {
                assert_eq!((parameter.as_str(), position), ("rawfilter", 11));
                assert!(detail.contains("holds booleans"), "{detail}");
            }
            other => panic!("{other:?}"),
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
