//! Timestamps as documents write them, and their normalised, sortable form.

use chrono::{DateTime, NaiveDate, NaiveDateTime};

/// Normalises a document timestamp to `YYYY-MM-DDTHH:MM:SS` in UTC (offsets applied;
/// naive times taken as UTC), which sorts and compares as text. Accepts RFC 3339, naive
/// ISO date-times with or without fractions, and plain dates.
pub fn normalize_timestamp(value: &str) -> Option<String> {
    let value = value.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(value) {
        return Some(t.naive_utc().format("%Y-%m-%dT%H:%M:%S").to_string());
    }
    if let Ok(t) = DateTime::parse_from_str(value, "%Y-%m-%dT%H:%M:%S%.f%z") {
        return Some(t.naive_utc().format("%Y-%m-%dT%H:%M:%S").to_string());
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(value, fmt) {
            return Some(t.format("%Y-%m-%dT%H:%M:%S").to_string());
        }
    }
    NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .map(|d| format!("{}T00:00:00", d.format("%Y-%m-%d")))
}

#[cfg(test)]
mod tests {
    use super::normalize_timestamp;

    #[test]
    fn normalises_the_forms_documents_use() {
        let cases = [
            ("2023-09-20T11:39:23.7596045", Some("2023-09-20T11:39:23")),
            ("2024-01-02T09:30:00+01:00", Some("2024-01-02T08:30:00")),
            (
                "2025-03-13T15:08:38.539863+00:00",
                Some("2025-03-13T15:08:38"),
            ),
            ("2024-05-01", Some("2024-05-01T00:00:00")),
            ("2024-05-01 10:00:00", Some("2024-05-01T10:00:00")),
            ("yesterday", None),
            ("2024-13-01", None),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize_timestamp(input).as_deref(), expected, "{input}");
        }
    }
}
