//! Text values: characters XML 1.0 cannot carry are dropped, and values are cut to the
//! schema's `maxLength` (1024 characters for `String` and `MultilingualStringValue`).

/// `maxLength` of the DATEX II v2 `String` and `MultilingualStringValueType` types,
/// in characters (Unicode scalar values), not bytes.
pub const MAX_CHARS: usize = 1024;

/// Appended to a value that had to be cut, so a reader sees that text is missing.
const ELLIPSIS: char = '…';

/// True for characters allowed in XML 1.0 content.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// The value as it may be written: without characters XML cannot carry, and at most
/// [`MAX_CHARS`] characters long; a longer value keeps its first `MAX_CHARS - 1`
/// characters (a character boundary, never inside a UTF-8 sequence) and ends in `…`.
pub fn limit(text: &str) -> std::borrow::Cow<'_, str> {
    // Fast path on bytes: no control characters and no lead byte 0xEF (which starts
    // U+F000..U+FFFF, among them the forbidden U+FFFE and U+FFFF).
    let plain = text
        .bytes()
        .all(|b| (b >= 0x20 && b != 0xEF) || matches!(b, b'\t' | b'\n' | b'\r'));
    if plain {
        // A byte that is not a UTF-8 continuation byte starts a character.
        if text.len() <= MAX_CHARS
            || text.bytes().filter(|b| (*b as i8) >= -0x40).count() <= MAX_CHARS
        {
            return std::borrow::Cow::Borrowed(text);
        }
        let cut = text
            .char_indices()
            .nth(MAX_CHARS - 1)
            .map_or(text.len(), |(i, _)| i);
        let mut out = String::with_capacity(cut + ELLIPSIS.len_utf8());
        out.push_str(&text[..cut]);
        out.push(ELLIPSIS);
        return std::borrow::Cow::Owned(out);
    }
    let mut out = String::with_capacity(text.len().min(MAX_CHARS * 4));
    let mut count = 0;
    let mut chars = text.chars().filter(|c| xml_char(*c)).peekable();
    while let Some(c) = chars.next() {
        if count == MAX_CHARS - 1 && chars.peek().is_some() {
            out.push(ELLIPSIS);
            return std::borrow::Cow::Owned(out);
        }
        out.push(c);
        count += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// An attribute value or identifier: only the characters XML cannot carry are dropped
/// (attributes of type xs:string have no length limit).
pub fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().all(xml_char) {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(text.chars().filter(|c| xml_char(*c)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_pass_unchanged() {
        assert_eq!(
            limit("Stau <A22> & \"Brenner\""),
            "Stau <A22> & \"Brenner\""
        );
        let exactly = "ä".repeat(MAX_CHARS);
        assert_eq!(
            limit(&exactly),
            exactly.as_str(),
            "1024 two-byte characters fit even though they are 2048 bytes"
        );
    }

    #[test]
    fn long_values_are_cut_at_a_character_boundary_with_an_ellipsis() {
        let long = "Straße gesperrt 🚧 ".repeat(200);
        let cut = limit(&long);
        assert_eq!(cut.chars().count(), MAX_CHARS);
        assert!(cut.ends_with('…'));
        assert!(long.starts_with(cut.trim_end_matches('…')));
    }

    #[test]
    fn exactly_the_limit_is_kept_and_one_more_is_cut() {
        let at_limit = "é".repeat(MAX_CHARS);
        assert_eq!(limit(&at_limit), at_limit.as_str());
        let over = format!("{at_limit}x");
        assert_eq!(limit(&over), format!("{}…", "é".repeat(MAX_CHARS - 1)));
        // The same on the slow path (a character from U+F000..U+FFFF and a control).
        let slow = format!("\u{F8FF}\u{1}{}", "a".repeat(MAX_CHARS));
        let cut = limit(&slow);
        assert_eq!(cut.chars().count(), MAX_CHARS);
        assert!(cut.starts_with("\u{F8FF}a") && cut.ends_with('…'));
        assert_eq!(limit("\u{F8FF}\u{FFFE}"), "\u{F8FF}");
    }

    #[test]
    fn control_characters_are_dropped() {
        assert_eq!(limit("a\u{1}b\u{0}c\u{FFFE}d\te\nf"), "abcd\te\nf");
        assert_eq!(clean("id\u{7}1"), "id1");
        assert_eq!(clean("plain"), "plain");
    }
}
