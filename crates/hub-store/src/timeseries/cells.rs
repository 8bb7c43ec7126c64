//! Text cells of a result cursor that repeat the previous row's text share it: a Time
//! Series row carries its station's, data type's and provenance's columns (names, codes,
//! metadata documents), the same on every row of a series, so a year of one series would
//! otherwise allocate and copy the same dozen texts ten thousand times.
//!
//! Owns: [`SharedText`], the per-cursor memory of each column's last text. Must not:
//! know SQL, a backend or a row's meaning (both backends hand it the bytes they read).

use std::sync::Arc;

use super::Cell;

/// Each column's last text; one per cursor (rows of one statement).
#[derive(Default)]
pub(crate) struct SharedText {
    last: Vec<Option<Arc<str>>>,
}

impl SharedText {
    /// The text cell of column `col` holding `bytes` (UTF-8; invalid sequences are
    /// replaced as `String::from_utf8_lossy` does): the previous row's text of the column
    /// when the bytes are the same, a new one otherwise.
    pub(crate) fn cell(&mut self, col: usize, bytes: &[u8]) -> Cell {
        if self.last.len() <= col {
            self.last.resize(col + 1, None);
        }
        if let Some(last) = &self.last[col] {
            if last.as_bytes() == bytes {
                return Cell::Text(Arc::clone(last));
            }
        }
        let text: Arc<str> = Arc::from(String::from_utf8_lossy(bytes));
        self.last[col] = Some(Arc::clone(&text));
        Cell::Text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(c: &Cell) -> &Arc<str> {
        match c {
            Cell::Text(t) => t,
            other => panic!("not text: {other:?}"),
        }
    }

    #[test]
    fn repeated_text_of_a_column_is_shared_and_changes_are_seen() {
        let mut shared = SharedText::default();
        let a = shared.cell(2, b"Bolzano");
        let b = shared.cell(2, b"Bolzano");
        assert!(Arc::ptr_eq(text(&a), text(&b)));
        // Another column with the same text keeps its own.
        let other = shared.cell(0, b"Bolzano");
        assert!(!Arc::ptr_eq(text(&a), text(&other)));
        let c = shared.cell(2, b"Merano");
        assert_eq!(&**text(&c), "Merano");
        let d = shared.cell(2, b"Bolzano");
        assert_eq!(&**text(&d), "Bolzano");
        assert!(!Arc::ptr_eq(text(&a), text(&d)));
        // A prefix or extension of the last text is a different text.
        assert_eq!(&**text(&shared.cell(2, b"Bolz")), "Bolz");
        assert_eq!(&**text(&shared.cell(2, b"Bolzano")), "Bolzano");
        assert_eq!(&**text(&shared.cell(2, b"")), "");
        // Invalid UTF-8 is replaced as before.
        assert_eq!(&**text(&shared.cell(1, b"a\xffb")), "a\u{fffd}b");
    }
}
