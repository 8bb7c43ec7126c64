//! The `language` projection on a stored document's JSON text, without building it.
//!
//! `language=de` drops, at any depth, every object member whose key is another language
//! code. Done on a parsed document, that cost a list page four times a page of whole
//! documents (every text and map built, then written out again), and Hub's own dataset
//! browser asks for a language on every page. Here the text is walked once and the members
//! to drop are cut out ([`crate::json_text`]).
//!
//! Owns: that walk. Must not: decide which keys are languages ([`LANGUAGES`] does).

use std::borrow::Cow;

use hub_model::LANGUAGES;

use crate::json_text::{
    elements, key, members, scalar_end, skip_space, string_end, value_end, MemberCuts, Splice,
};

/// Nesting deeper than this is left to the parsed path, whose own limit then answers.
const MAX_DEPTH: usize = 256;

/// `text` without the members of other languages than `lang`: borrowed when nothing is
/// dropped; `None` when the text is not JSON this walk reads (the caller parses instead).
pub(crate) fn keep_language<'a>(text: &'a str, lang: &str) -> Option<Cow<'a, str>> {
    let mut walk = Walk {
        text,
        bytes: text.as_bytes(),
        lang,
        splice: Splice::new(text),
    };
    let end = walk.value(0, 0)?;
    (skip_space(walk.bytes, end) == text.len()).then(|| walk.splice.finish())
}

struct Walk<'a, 'l> {
    text: &'a str,
    bytes: &'a [u8],
    lang: &'l str,
    splice: Splice<'a>,
}

impl Walk<'_, '_> {
    /// The end of the value at `at` (after leading space), cutting out the members of other
    /// languages inside it.
    fn value(&mut self, at: usize, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        let at = skip_space(self.bytes, at);
        match *self.bytes.get(at)? {
            b'{' => self.object(at, depth),
            b'[' => self.array(at, depth),
            b'"' => string_end(self.bytes, at),
            _ => scalar_end(self.bytes, at),
        }
    }

    fn object(&mut self, open: usize, depth: usize) -> Option<usize> {
        let mut cuts = MemberCuts::default();
        let close_end = members(self.bytes, open, |member| {
            cuts.start(&mut self.splice, member);
            let name = key(&self.text[member.key_start..member.key_end])?;
            let cut = name != self.lang && LANGUAGES.contains(&name.as_ref());
            // A member cut whole is only skipped: its span goes, whatever is inside.
            let end = match cut {
                true => value_end(self.bytes, member.value_at)?,
                false => self.value(member.value_at, depth + 1)?,
            };
            cuts.member(&mut self.splice, member, end, cut);
            Some(end)
        })?;
        cuts.finish(&mut self.splice);
        Some(close_end)
    }

    fn array(&mut self, open: usize, depth: usize) -> Option<usize> {
        elements(self.bytes, open, |_, at| self.value(at, depth + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random_json::RandomJson;
    use serde_json::Value;

    /// The parsed path this walk replaces: parse, prune, write.
    fn parsed(text: &str, lang: &str) -> String {
        let mut doc: Value = serde_json::from_str(text).unwrap();
        crate::shape::keep_language(&mut doc, lang);
        doc.to_string()
    }

    #[test]
    fn members_of_other_languages_are_cut_with_their_commas() {
        for (text, expected) in [
            (r#"{"de":1,"it":2,"en":3}"#, r#"{"de":1}"#),
            (r#"{"it":1,"en":2,"de":3}"#, r#"{"de":3}"#),
            (r#"{"it":1,"de":2,"en":3,"x":4}"#, r#"{"de":2,"x":4}"#),
            (r#"{"it":1,"en":2}"#, r#"{}"#),
            (
                r#"{"it":{"de":1,"Title":"a"},"x":[{"en":"b","de":"c"}]}"#,
                r#"{"x":[{"de":"c"}]}"#,
            ),
            // Only keys name languages; values and keys in other case do not.
            (
                r#"{"Language":"it","IT":1,"List":["it","en"]}"#,
                r#"{"Language":"it","IT":1,"List":["it","en"]}"#,
            ),
            // A key spelled with an escape is the language it decodes to.
            (r#"{"\u0069t":1,"de":2}"#, r#"{"de":2}"#),
            // Quotes and brackets inside strings are text.
            (r#"{"en":"}\",{","de":"[\\"}"#, r#"{"de":"[\\"}"#),
            (
                r#"{ "it" : 1 , "de" : [ 2 , { "en" : null } ] }"#,
                r#"{ "de" : [ 2 , {  } ] }"#,
            ),
            (r#"[]"#, r#"[]"#),
            (r#"{}"#, r#"{}"#),
        ] {
            assert_eq!(
                keep_language(text, "de").as_deref(),
                Some(expected),
                "{text}"
            );
        }
    }

    #[test]
    fn text_that_is_not_json_is_left_to_the_parser() {
        for text in [
            r#"{"de":1"#,
            r#"{"de" 1}"#,
            r#"{"de":1,}"#,
            r#"[1 2]"#,
            r#"{"de":1} x"#,
            "",
        ] {
            assert_eq!(keep_language(text, "de"), None, "{text}");
        }
        let deep = "[".repeat(MAX_DEPTH + 2) + &"]".repeat(MAX_DEPTH + 2);
        assert_eq!(keep_language(&deep, "de"), None);
    }

    #[test]
    fn nothing_dropped_borrows_the_text() {
        let text = r#"{"Id":"a","Detail":{"de":{"Title":"x"}}}"#;
        assert!(matches!(keep_language(text, "de"), Some(Cow::Borrowed(t)) if t == text));
    }

    /// Random documents whose keys are language codes, other keys and keys with quotes and
    /// backslashes: on serde_json's compact text the walk gives the parsed path's bytes,
    /// and on pretty text the same document.
    #[test]
    fn the_walk_equals_the_parsed_path_on_random_documents() {
        const KEYS: &[&str] = &[
            "de", "it", "en", "ld", "Title", "x", "", "a\"b", "c\\", "DE",
        ];
        let mut random = RandomJson::new(0x9e37_79b9_7f4a_7c15, KEYS);
        let mut cut = 0;
        for _ in 0..3_000 {
            let doc = Value::Object(random.object(0));
            let compact = doc.to_string();
            let walked = keep_language(&compact, "de").unwrap();
            cut += usize::from(matches!(walked, Cow::Owned(_)));
            assert_eq!(walked, parsed(&compact, "de"), "{compact}");
            let pretty = serde_json::to_string_pretty(&doc).unwrap();
            let walked = keep_language(&pretty, "de").unwrap();
            let reparsed: Value = serde_json::from_str(&walked).unwrap();
            assert_eq!(reparsed.to_string(), parsed(&compact, "de"), "{pretty}");
        }
        assert!(cut > 300, "the documents exercise the cuts ({cut})");
    }

    /// Text that is almost JSON never panics the walk, and text that is JSON is read.
    #[test]
    fn almost_json_is_refused_or_read_and_json_is_read() {
        const KEYS: &[&str] = &["de", "it", "Title", "x", "", "a\"b", "c\\"];
        RandomJson::new(0x5eed_0bad_8765_4321, KEYS)
            .edited_documents(5_000, |text| keep_language(text, "de").is_some());
    }
}
