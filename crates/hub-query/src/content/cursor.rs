//! The character cursor both filter parsers (`rawfilter` and CQL2) read with: one body
//! for looking ahead, consuming an expected character and reporting where the text went
//! wrong, so both give the same 1-based positions and "expected …, found …" messages.

use super::rawfilter::RawFilterError;

/// A parser over a text held as characters, at a position.
pub(crate) trait FilterCursor {
    fn chars(&self) -> &[char];
    /// Index of the next character.
    fn at(&self) -> usize;
    fn set_at(&mut self, index: usize);
    /// Skips what the language counts as space (CQL2: any whitespace; rawfilter: ' ').
    fn skip_spaces(&mut self);

    fn peek(&self) -> Option<char> {
        self.chars().get(self.at()).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.set_at(self.at() + 1);
            true
        } else {
            false
        }
    }

    /// The error at character `index` (reported 1-based).
    fn error_at(&self, index: usize, message: impl Into<String>) -> RawFilterError {
        RawFilterError {
            position: index + 1,
            message: message.into(),
        }
    }

    fn expected(&self, what: &str) -> RawFilterError {
        let found = match self.peek() {
            None => "the end".to_string(),
            Some(c) => format!("'{c}'"),
        };
        self.error_at(self.at(), format!("expected {what}, found {found}"))
    }

    /// Consumes `c` after any spaces, or fails naming `what` was expected.
    fn expect(&mut self, c: char, what: &str) -> Result<(), RawFilterError> {
        self.skip_spaces();
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }
}
