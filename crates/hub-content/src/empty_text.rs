//! `removenullvalues` on a stored document's JSON text, without building it.
//!
//! The option drops, at any depth, every object member whose value is `null`, `""`, `[]`
//! or `{}`, and then every member left holding `[]` or `{}` by that removal; array
//! elements stay, since their position means something. Done on a parsed document, a
//! page of whole documents cost a parse, a tree and a write per document. Here the text is
//! copied once, member by member: each member is written, and taken back when its value
//! came out empty. Strings and numbers are copied as they stand, so on the compact text
//! the store keeps the answer is the bytes the parsed path writes.
//!
//! Owns: that walk and what counts as empty on the text. Must not: decide when the option
//! applies ([`crate::shape`]) or change anything else in the document.

use crate::json_text::{elements, members, scalar_end, skip_space, string_end};

/// Nesting deeper than this is left to the parsed path, whose own limit then answers.
const MAX_DEPTH: usize = 256;

/// `text` without its empty members, written compact; `None` when the text is not JSON
/// this walk reads (the caller parses instead).
pub(crate) fn remove_empty(text: &str) -> Option<String> {
    let mut walk = Walk {
        text,
        bytes: text.as_bytes(),
        out: String::with_capacity(text.len()),
    };
    let end = walk.value(0, 0)?;
    (skip_space(walk.bytes, end) == text.len()).then_some(walk.out)
}

/// A value as written, when the option drops it as an object member.
fn is_empty(written: &str) -> bool {
    matches!(written, "null" | "\"\"" | "[]" | "{}")
}

struct Walk<'a> {
    text: &'a str,
    bytes: &'a [u8],
    out: String,
}

impl Walk<'_> {
    /// Writes the value at `at` (after leading space) without its empty members; returns
    /// where it ends in the text.
    fn value(&mut self, at: usize, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        let at = skip_space(self.bytes, at);
        let end = match *self.bytes.get(at)? {
            b'{' => return self.object(at, depth),
            b'[' => return self.array(at, depth),
            b'"' => string_end(self.bytes, at)?,
            _ => scalar_end(self.bytes, at)?,
        };
        self.out.push_str(&self.text[at..end]);
        Some(end)
    }

    fn object(&mut self, open: usize, depth: usize) -> Option<usize> {
        self.out.push('{');
        let mut written = 0;
        let close_end = members(self.bytes, open, |member| {
            let start = self.out.len();
            if written > 0 {
                self.out.push(',');
            }
            self.out
                .push_str(&self.text[member.key_start..member.key_end]);
            self.out.push(':');
            let value_start = self.out.len();
            let end = self.value(member.value_at, depth + 1)?;
            match is_empty(&self.out[value_start..]) {
                true => self.out.truncate(start),
                false => written += 1,
            }
            Some(end)
        })?;
        self.out.push('}');
        Some(close_end)
    }

    fn array(&mut self, open: usize, depth: usize) -> Option<usize> {
        self.out.push('[');
        let end = elements(self.bytes, open, |index, at| {
            if index > 0 {
                self.out.push(',');
            }
            self.value(at, depth + 1)
        })?;
        self.out.push(']');
        Some(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random_json::RandomJson;
    use serde_json::Value;

    /// The parsed path this walk replaces: parse, remove, write.
    fn parsed(text: &str) -> String {
        let mut doc: Value = serde_json::from_str(text).unwrap();
        crate::shape::remove_empty(&mut doc);
        doc.to_string()
    }

    #[test]
    fn empty_members_are_dropped_at_any_depth() {
        for (text, expected) in [
            (r#"{"a":null,"b":1}"#, r#"{"b":1}"#),
            (r#"{"a":1,"b":""}"#, r#"{"a":1}"#),
            (r#"{"a":[],"b":{},"c":"x"}"#, r#"{"c":"x"}"#),
            (r#"{"a":null,"b":[]}"#, r#"{}"#),
            // Emptied by the removal: dropped too, up the levels.
            (r#"{"a":{"b":{"c":null}},"d":0}"#, r#"{"d":0}"#),
            // Array elements stay, empty or not; their members are cleaned.
            (
                r#"{"a":[null,"",[],{},{"x":null,"y":false}]}"#,
                r#"{"a":[null,"",[],{},{"y":false}]}"#,
            ),
            // Values that look empty but are not.
            (
                r#"{"z":0,"f":false,"s":" ","q":"\"\"","n":"null"}"#,
                r#"{"z":0,"f":false,"s":" ","q":"\"\"","n":"null"}"#,
            ),
            // Keys and strings holding structure are text.
            (
                r#"{"a\":null":"}\",{","b":null}"#,
                r#"{"a\":null":"}\",{"}"#,
            ),
            (
                r#"{ "a" : [ 1 , { "b" : null } ] , "c" : { } }"#,
                r#"{"a":[1,{}]}"#,
            ),
            (r#"[]"#, r#"[]"#),
            (r#"{}"#, r#"{}"#),
            (r#"null"#, r#"null"#),
        ] {
            assert_eq!(remove_empty(text).as_deref(), Some(expected), "{text}");
            assert_eq!(parsed(text), expected, "the parsed path agrees: {text}");
        }
    }

    #[test]
    fn text_that_is_not_json_is_left_to_the_parser() {
        for text in [
            r#"{"a":1"#,
            r#"{"a" 1}"#,
            r#"{"a":1,}"#,
            r#"[1 2]"#,
            r#"{"a":1} x"#,
            "",
        ] {
            assert_eq!(remove_empty(text), None, "{text}");
        }
        let deep = "[".repeat(MAX_DEPTH + 2) + &"]".repeat(MAX_DEPTH + 2);
        assert_eq!(remove_empty(&deep), None);
    }

    /// Random documents with empty values at every level: on serde_json's compact text the
    /// walk gives the parsed path's bytes, and on pretty text the same document.
    #[test]
    fn the_walk_equals_the_parsed_path_on_random_documents() {
        const KEYS: &[&str] = &["Id", "Title", "x", "", "a\"b", "c\\", "null"];
        let mut random = RandomJson::new(0x2545_f491_4f6c_dd1d, KEYS);
        let mut dropped = 0;
        for _ in 0..3_000 {
            let doc = Value::Object(random.object(0));
            let compact = doc.to_string();
            let walked = remove_empty(&compact).unwrap();
            dropped += usize::from(walked.len() < compact.len());
            assert_eq!(walked, parsed(&compact), "{compact}");
            let pretty = serde_json::to_string_pretty(&doc).unwrap();
            assert_eq!(remove_empty(&pretty).unwrap(), parsed(&compact), "{pretty}");
        }
        assert!(
            dropped > 1_000,
            "the documents exercise the removal ({dropped})"
        );
    }

    /// Text that is almost JSON never panics the walk, and text that is JSON is read.
    #[test]
    fn almost_json_is_refused_or_read_and_json_is_read() {
        const KEYS: &[&str] = &["Id", "Title", "x", "", "a\"b", "c\\"];
        RandomJson::new(0x0bad_5eed_1234_5678, KEYS)
            .edited_documents(5_000, |text| remove_empty(text).is_some());
    }
}
