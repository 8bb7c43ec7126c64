//! The check every `re`/`ire`/`nre`/`nire` filter value passes before it reaches a
//! database: it must compile as a regular expression within [`REGEX_SIZE_LIMIT`]
//! (SQLite's `regexp` function compiles it with the same limit; PostgreSQL may still
//! refuse a pattern its dialect lacks, which the store reports as the client's fault).
//!
//! Must not: run or translate the pattern.

use super::TsQueryError;

/// Largest compiled regular expression a filter may produce (bytes).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// `Ok` when `pattern` compiles within the size limit; otherwise the 400 error naming it.
pub fn check_pattern(pattern: &str) -> Result<(), TsQueryError> {
    regex::RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map(|_| ())
        .map_err(|e| TsQueryError::InvalidRegex {
            pattern: pattern.to_string(),
            detail: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_checked() {
        // pattern → Ok, or the start of the error message
        let cases: &[(&str, Option<&str>)] = &[
            ("", None),
            ("^park", None),
            ("(?i)Bozen|Bolzano", None),
            (
                "[a-",
                Some("Invalid regular expression '[a-': regex parse error"),
            ),
            (
                "([",
                Some("Invalid regular expression '([': regex parse error"),
            ),
            (
                "a{1000}{1000}",
                Some("Invalid regular expression 'a{1000}{1000}': "),
            ),
        ];
        for (pattern, expected) in cases {
            let got = check_pattern(pattern).map_err(|e| e.to_string());
            match expected {
                None => assert_eq!(got, Ok(()), "{pattern}"),
                Some(start) => {
                    let message = got.expect_err(pattern);
                    assert!(message.starts_with(start), "{pattern}: {message}");
                }
            }
        }
    }

    #[test]
    fn where_filters_with_bad_patterns_fail_to_compile() {
        use crate::timeseries::{compile_query, parse_where, Route, TsQuery};
        // where → error message start (None: compiles)
        let cases: &[(&str, Option<&str>)] = &[
            ("sname.re.park", None),
            ("sname.ire.[a-", Some("Invalid regular expression '[a-'")),
            (
                "or(scode.eq.x,sname.nre.a{1000}{1000})",
                Some("Invalid regular expression 'a{1000}{1000}'"),
            ),
        ];
        for (filter, expected) in cases {
            let q = TsQuery {
                route: Route::Stations,
                tree: false,
                types: Some(vec!["ParkingStation".into()]),
                data_types: None,
                filter: Some(parse_where(filter).unwrap()),
                select: None,
                distinct: true,
                limit: 10,
                offset: 0,
                access: None,
            };
            for dialect in [crate::Dialect::Sqlite, crate::Dialect::Postgres] {
                let got = compile_query(&q, dialect)
                    .map(|_| ())
                    .map_err(|e| e.to_string());
                match expected {
                    None => assert_eq!(got, Ok(()), "{filter}"),
                    Some(start) => assert!(
                        got.clone().expect_err(filter).starts_with(start),
                        "{filter}: {got:?}"
                    ),
                }
            }
        }
    }
}
