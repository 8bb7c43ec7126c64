//! Compact JSON of a value written while it is parsed: the text `serde_json::Value`'s
//! `Display` gives for the same input, without building the `Value` (a CSV cell of an
//! array holding objects, such as `ImageGallery`, used to parse each element into a tree
//! of maps and strings only to print it again).
//!
//! Owns: [`CompactJson`], the transcoding seed, and the JSON string escaping it writes.
//! Must not: decide what a CSV cell holds (that is [`crate::csv`]).
//!
//! Equal to the `Value` round trip in every case: numbers go through the same
//! `serde_json::Number` as a `Value`'s, strings get `serde_json`'s escapes, and a key
//! repeated in one object keeps its first place with its last value (what inserting into
//! the `Value`'s ordered map does).

use std::fmt::Write as _;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// Appends the compact JSON of the value it deserializes to the string.
pub(crate) struct CompactJson<'a>(pub(crate) &'a mut String);

impl<'de> DeserializeSeed<'de> for CompactJson<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// One member of an object being written: where its key and value are in the output.
struct Member {
    key: (usize, usize),
    value: (usize, usize),
}

impl<'de> Visitor<'de> for CompactJson<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let out = self.0;
        out.push('{');
        let mut members: Vec<Member> = Vec::new();
        loop {
            let at = out.len();
            if !members.is_empty() {
                out.push(',');
            }
            let key_start = out.len();
            if map.next_key_seed(EscapedKey(&mut *out))?.is_none() {
                out.truncate(at);
                break;
            }
            let key = (key_start, out.len());
            out.push(':');
            let value_start = out.len();
            map.next_value_seed(CompactJson(&mut *out))?;
            let value = (value_start, out.len());
            let earlier = members
                .iter()
                .position(|m| out[m.key.0..m.key.1] == out[key.0..key.1]);
            match earlier {
                None => members.push(Member { key, value }),
                Some(i) => replace_value(out, &mut members, i, at, value),
            }
        }
        out.push('}');
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let out = self.0;
        out.push('[');
        let mut first = true;
        loop {
            let at = out.len();
            if !first {
                out.push(',');
            }
            if seq.next_element_seed(CompactJson(&mut *out))?.is_none() {
                out.truncate(at);
                break;
            }
            first = false;
        }
        out.push(']');
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        push_json_string(self.0, v);
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.0.push_str(if v { "true" } else { "false" });
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        push_number(self.0, v.into());
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        push_number(self.0, v.into());
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let n = Number::from_f64(v).ok_or_else(|| E::custom("not a finite number"))?;
        push_number(self.0, n);
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.push_str("null");
        Ok(())
    }
}

/// A repeated key: the member written last (from `at`, its comma included, to the end,
/// its value at `value`) is dropped and its value takes the place of member `i`'s.
fn replace_value(
    out: &mut String,
    members: &mut [Member],
    i: usize,
    at: usize,
    value: (usize, usize),
) {
    let text = out[value.0..value.1].to_string();
    out.truncate(at);
    let old = members[i].value;
    out.replace_range(old.0..old.1, &text);
    let shift = text.len() as isize - (old.1 - old.0) as isize;
    members[i].value.1 = old.0 + text.len();
    for m in &mut members[i + 1..] {
        m.key = (
            m.key.0.wrapping_add_signed(shift),
            m.key.1.wrapping_add_signed(shift),
        );
        m.value = (
            m.value.0.wrapping_add_signed(shift),
            m.value.1.wrapping_add_signed(shift),
        );
    }
}

/// An object key, written as a JSON string.
struct EscapedKey<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for EscapedKey<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for EscapedKey<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        push_json_string(self.0, v);
        Ok(())
    }
}

/// A number as a `serde_json::Value` prints it.
pub(crate) fn push_number(text: &mut String, n: Number) {
    let _ = write!(text, "{n}");
}

/// `v` as a JSON string with `serde_json`'s escapes: `\"`, `\\`, the short forms of
/// backspace, tab, line feed, form feed and carriage return, `\u00XX` (lower-case hex)
/// for the other control characters; everything else as it is.
fn push_json_string(out: &mut String, v: &str) {
    out.push('"');
    // Most strings need no escape: one test of every byte (vector code, no early exit)
    // before the byte-by-byte walk.
    if !v.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    }) {
        out.push_str(v);
        out.push('"');
        return;
    }
    let mut plain = 0;
    for (i, b) in v.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&v[plain..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        plain = i + 1;
    }
    out.push_str(&v[plain..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// What `CompactJson` writes for `text`, and what the `Value` round trip writes.
    fn both(text: &str) -> (String, String) {
        let mut out = String::new();
        let mut de = serde_json::Deserializer::from_str(text);
        CompactJson(&mut out).deserialize(&mut de).unwrap();
        de.end().unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        (out, value.to_string())
    }

    #[test]
    fn writes_what_the_value_round_trip_writes() {
        let texts = [
            r#"{"Id":"a","n":null,"t":true,"f":false,"e":{},"a":[],"x":[[]],"y":[{}]}"#,
            r#"{ "ImageUrl" : "https://x/y?a=1&b=2" , "Width" : 640, "Height":-480 }"#,
            r#"[1, -2, 0, 1.5, -0.0, 1e300, 1E-7, 2.50, 12345678901234567890, 123456789012345678901234, -9223372036854775808, 3.0e2]"#,
            r#"{"s":"quote \" backslash \\ slash \/ tab \t nl \n cr \r ff \f bs \b nul \u0000 us \u001f del \u007f"}"#,
            r#"{"u":"Hütte €\u00e9 \ud83d\ude00 日本", "Hütte": {"é\"": [null, {"k": [1, {"z": "w"}]}]}}"#,
            r#"{"a": {"b": {"c": {"d": [ {"e": "f"} ]}}}, "": "empty key"}"#,
        ];
        for text in texts {
            let (compact, value) = both(text);
            assert_eq!(compact, value, "{text}");
        }
        // Every ASCII character in a string and in a key.
        let every: String = (0u8..0x80).map(char::from).collect();
        let text = serde_json::to_string(&serde_json::json!({ every.clone(): every })).unwrap();
        let (compact, value) = both(&text);
        assert_eq!(compact, value);
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_with_its_last_value() {
        for text in [
            r#"{"a":1,"b":2,"a":3}"#,
            r#"{"a":{"x":1},"b":[1,2],"c":"long value","a":[]}"#,
            r#"{"a":"","b":{"a":1,"a":{"deep":true}},"a":"much longer than before","c":4,"b":null}"#,
            r#"{"a":1,"a":2,"a":3}"#,
            r#"[{"k":1,"j":2,"k":{"k":3,"k":4}}]"#,
        ] {
            let (compact, value) = both(text);
            assert_eq!(compact, value, "{text}");
        }
    }

    #[test]
    fn bad_json_fails() {
        for text in [r#"{"a":"#, r#"[1,]"#, r#"{"a":1e999}"#, r#"{"a" 1}"#] {
            let mut de = serde_json::Deserializer::from_str(text);
            assert!(
                CompactJson(&mut String::new())
                    .deserialize(&mut de)
                    .is_err(),
                "{text}"
            );
        }
    }
}
