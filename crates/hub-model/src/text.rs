//! What text a client may hand over for storing: no NUL (U+0000) anywhere. PostgreSQL
//! keeps neither a NUL in `text` nor `\u0000` in `jsonb`, and the embedded store would
//! keep what the other refuses, so both refuse it up front and a document reads the same
//! on either backend.

use std::fmt::Write;

use serde_json::Value;

/// The JSON path (`$`, `$.Detail.de.Title`, `$[2].name`) of the first string or member
/// name in `value` holding a NUL, if any. A member name with a NUL is reported at its
/// object's path plus the name as sent, escaped.
pub fn first_nul(value: &Value) -> Option<String> {
    let mut path = String::from("$");
    find(value, &mut path).then_some(path)
}

fn find(value: &Value, path: &mut String) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().enumerate().any(|(i, item)| {
            let len = path.len();
            let _ = write!(path, "[{i}]");
            let found = find(item, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        Value::Object(members) => members.iter().any(|(name, member)| {
            let len = path.len();
            let _ = write!(path, ".{}", name.escape_debug());
            let found = name.contains('\0') || find(member, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_nul_is_found_by_its_path() {
        let cases = [
            (json!({"a": "plain", "b": [1, true, null]}), None),
            (json!("a\u{0}b"), Some("$")),
            (
                json!({"Detail": {"de": {"Title": "x\u{0}"}}}),
                Some("$.Detail.de.Title"),
            ),
            (
                json!([{"name": "ok"}, {"name": "ok"}, {"name": "\u{0}"}]),
                Some("$[2].name"),
            ),
            (json!({"a\u{0}b": 1}), Some("$.a\\0b")),
            (
                json!({"a": ["x", ["y", "z\u{0}"]], "b": "\u{0}"}),
                Some("$.a[1][1]"),
            ),
            (json!({"tab": "\t", "del": "\u{7f}", "c1": "\u{85}"}), None),
        ];
        for (value, expected) in cases {
            assert_eq!(first_nul(&value).as_deref(), expected, "{value}");
        }
    }
}
