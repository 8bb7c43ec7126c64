//! Language codes of multilingual document fields.

/// Codes that name language keys inside documents (`Detail.de`, `TagName.it`, …).
/// `language=xx` projection removes every key of this list except `xx`.
pub const LANGUAGES: &[&str] = &["de", "it", "en", "cs", "fr", "nl", "pl", "ru", "ld"];

/// Returns the canonical (lower-case) code if `code` is a known language.
pub fn parse_language(code: &str) -> Option<&'static str> {
    LANGUAGES
        .iter()
        .copied()
        .find(|l| l.eq_ignore_ascii_case(code))
}

/// Case folding for search: lower case by Unicode rules, so `Hütte` matches `HÜTTE` and
/// `Città` matches `CITTÀ`; `ß` folds to `ss` as German readers expect.
pub fn fold(text: &str) -> String {
    let lower = text.to_lowercase();
    if lower.contains('ß') {
        lower.replace('ß', "ss")
    } else {
        lower
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_handles_german_and_italian() {
        for (input, expected) in [
            ("Hütte", "hütte"),
            ("HÜTTE", "hütte"),
            ("CITTÀ", "città"),
            ("Straße", "strasse"),
            ("STRASSE", "strasse"),
        ] {
            assert_eq!(fold(input), expected);
        }
    }

    #[test]
    fn parses_known_languages_only() {
        assert_eq!(parse_language("DE"), Some("de"));
        assert_eq!(parse_language("xx"), None);
    }
}
