//! Random JSON documents for the tests that hold a text edit ([`crate::json_text`]) to the
//! parsed path it replaces. Seeded, so a failure repeats.

use serde_json::{Map, Value};

/// Documents whose keys come from `keys`, and whose strings are empty or a key followed by
/// quotes, brackets and a backslash, so that text inside strings looks like structure.
pub(crate) struct RandomJson {
    state: u64,
    keys: &'static [&'static str],
}

impl RandomJson {
    pub(crate) fn new(seed: u64, keys: &'static [&'static str]) -> Self {
        RandomJson {
            state: seed | 1,
            keys,
        }
    }

    /// A number below `n` (xorshift).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state % n as u64) as usize
    }

    fn key(&mut self) -> String {
        self.keys[self.below(self.keys.len())].to_string()
    }

    /// Any value; objects and arrays down to four levels below `depth`.
    pub(crate) fn value(&mut self, depth: usize) -> Value {
        match self.below(if depth > 4 { 5 } else { 7 }) {
            0 => match self.below(4) {
                0 => Value::String(String::new()),
                _ => Value::String(self.key() + "]},\"\\"),
            },
            1 => Value::from(self.below(1000) as f64 / 8.0),
            2 => Value::from(self.below(100)),
            3 => Value::Bool(self.below(2) == 0),
            4 => Value::Null,
            5 => Value::Array((0..self.below(4)).map(|_| self.value(depth + 1)).collect()),
            _ => Value::Object(self.object(depth)),
        }
    }

    /// `text` with one to three random edits (a character dropped, doubled, or replaced by
    /// a piece of JSON's structure), so that a walk meets text that is almost JSON.
    pub(crate) fn mutate(&mut self, text: &str) -> String {
        const PIECES: [char; 12] = ['{', '}', '[', ']', ',', ':', '"', '\\', ' ', '0', 'n', 'ü'];
        let mut chars: Vec<char> = text.chars().collect();
        for _ in 0..=self.below(3) {
            if chars.is_empty() {
                break;
            }
            let at = self.below(chars.len());
            match self.below(3) {
                0 => {
                    chars.remove(at);
                }
                1 => chars.insert(at, chars[at]),
                _ => chars[at] = PIECES[self.below(PIECES.len())],
            }
        }
        chars.into_iter().collect()
    }

    /// Runs `read` (a walk: whether it read the text) on `count` random documents with
    /// [`RandomJson::mutate`]'s edits. A panic fails the test, and so does text that is
    /// JSON and was not read; enough of the edits must leave JSON.
    pub(crate) fn edited_documents(&mut self, count: usize, read: impl Fn(&str) -> bool) {
        let mut json = 0;
        for _ in 0..count {
            let doc = Value::Object(self.object(0)).to_string();
            let text = self.mutate(&doc);
            let was_read = read(&text);
            if serde_json::from_str::<Value>(&text).is_ok() {
                json += 1;
                assert!(was_read, "JSON the walk did not read: {text}");
            }
        }
        assert!(json > count / 25, "some edits leave JSON ({json})");
    }

    /// An object of up to five members.
    pub(crate) fn object(&mut self, depth: usize) -> Map<String, Value> {
        (0..self.below(6))
            .map(|_| (self.key(), self.value(depth + 1)))
            .collect()
    }
}
