//! The time zone in which "today" is decided and in which times are written.
//!
//! Accepts IANA names (`Europe/Rome`, through `chrono-tz`), `UTC`/`Z`, and fixed offsets
//! (`+02:00`, `+0200`, `-5`, `UTC+2`, `UTC+02:00`).

use chrono::{
    DateTime, Duration, FixedOffset, NaiveDate, NaiveDateTime, Offset, SecondsFormat, TimeZone, Utc,
};

use crate::DatexError;

/// A parsed time zone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Zone {
    Iana(chrono_tz::Tz),
    Fixed(FixedOffset),
}

impl Zone {
    pub(crate) fn parse(name: &str) -> Result<Zone, DatexError> {
        let trimmed = name.trim();
        let err = || DatexError::TimeZone(name.to_string());
        if trimmed.eq_ignore_ascii_case("utc")
            || trimmed.eq_ignore_ascii_case("z")
            || trimmed.eq_ignore_ascii_case("gmt")
        {
            return Ok(Zone::Fixed(FixedOffset::east_opt(0).expect("zero offset")));
        }
        if let Ok(tz) = trimmed.parse::<chrono_tz::Tz>() {
            return Ok(Zone::Iana(tz));
        }
        let offset = trimmed
            .strip_prefix("UTC")
            .or_else(|| trimmed.strip_prefix("utc"))
            .or_else(|| trimmed.strip_prefix("GMT"))
            .unwrap_or(trimmed);
        parse_offset(offset).map(Zone::Fixed).ok_or_else(err)
    }

    /// The offset in force at an instant.
    pub(crate) fn offset_at(&self, at: DateTime<Utc>) -> FixedOffset {
        match self {
            Zone::Iana(tz) => tz.offset_from_utc_datetime(&at.naive_utc()).fix(),
            Zone::Fixed(offset) => *offset,
        }
    }

    /// The calendar date of an instant in this zone.
    pub(crate) fn local_date(&self, at: DateTime<Utc>) -> NaiveDate {
        at.with_timezone(&self.offset_at(at)).date_naive()
    }

    /// The instant of a local wall-clock time; in a daylight-saving gap the first valid
    /// instant after it, in an overlap the earlier one.
    pub(crate) fn at_local(&self, local: NaiveDateTime) -> Option<DateTime<Utc>> {
        match self {
            Zone::Iana(tz) => tz
                .from_local_datetime(&local)
                .earliest()
                .or_else(|| {
                    tz.from_local_datetime(&(local + Duration::hours(1)))
                        .earliest()
                })
                .map(|t| t.with_timezone(&Utc)),
            Zone::Fixed(offset) => offset
                .from_local_datetime(&local)
                .single()
                .map(|t| t.with_timezone(&Utc)),
        }
    }

    /// The first instant of the local day after the one containing `at`.
    pub(crate) fn next_midnight(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let next = self.local_date(at).succ_opt()?;
        self.at_local(next.and_hms_opt(0, 0, 0)?)
    }

    /// The first instant of the local day containing `at`.
    pub(crate) fn midnight_of(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.at_local(self.local_date(at).and_hms_opt(0, 0, 0)?)
    }

    /// xs:dateTime text of an instant in this zone, with the offset and with fractional
    /// seconds only when there are any (`2024-01-01T08:00:00+01:00`).
    pub(crate) fn format(&self, at: DateTime<Utc>) -> String {
        at.with_timezone(&self.offset_at(at))
            .to_rfc3339_opts(SecondsFormat::AutoSi, false)
    }

    /// Like [`Zone::format`], with exactly millisecond precision.
    pub(crate) fn format_millis(&self, at: DateTime<Utc>) -> String {
        at.with_timezone(&self.offset_at(at))
            .to_rfc3339_opts(SecondsFormat::Millis, false)
    }
}

/// `+02:00`, `+0200`, `+02`, `-5`, `+5:30`.
fn parse_offset(text: &str) -> Option<FixedOffset> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let (hours, minutes) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() == 4 => rest.split_at(2),
        None => (rest, "0"),
    };
    if hours.is_empty()
        || hours.len() > 2
        || !hours.bytes().all(|b| b.is_ascii_digit())
        || !minutes.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = minutes.parse().ok()?;
    if hours > 14 || minutes > 59 {
        return None;
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60))
}

/// Parses a document timestamp. Text with an offset or `Z` is an instant; text without
/// one (`2024-01-01T08:00:00`, `2024-01-01`) is a wall-clock time in `zone`.
pub(crate) fn parse_time(text: &str, zone: &Zone) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%z",
    ] {
        if let Ok(t) = DateTime::parse_from_str(text, format) {
            return Some(t.with_timezone(&Utc));
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(local) = NaiveDateTime::parse_from_str(text, format) {
            return zone.at_local(local);
        }
    }
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    zone.at_local(date.and_hms_opt(0, 0, 0)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn rome_follows_daylight_saving_time() {
        let rome = Zone::parse("Europe/Rome").unwrap();
        assert_eq!(
            rome.format(utc("2024-01-15T12:00:00Z")),
            "2024-01-15T13:00:00+01:00"
        );
        assert_eq!(
            rome.format(utc("2024-07-15T12:00:00Z")),
            "2024-07-15T14:00:00+02:00"
        );
        assert_eq!(
            rome.format(utc("2024-07-15T12:00:00.250Z")),
            "2024-07-15T14:00:00.250+02:00"
        );
    }

    #[test]
    fn the_local_day_changes_at_local_midnight() {
        let rome = Zone::parse("Europe/Rome").unwrap();
        // 23:30 UTC on 10 March is 00:30 on 11 March in Rome.
        let late = utc("2024-03-10T23:30:00Z");
        assert_eq!(
            rome.local_date(late),
            NaiveDate::from_ymd_opt(2024, 3, 11).unwrap()
        );
        assert_eq!(rome.midnight_of(late), Some(utc("2024-03-10T23:00:00Z")));
        assert_eq!(rome.next_midnight(late), Some(utc("2024-03-11T23:00:00Z")));
        let utc_zone = Zone::parse("UTC").unwrap();
        assert_eq!(
            utc_zone.local_date(late),
            NaiveDate::from_ymd_opt(2024, 3, 10).unwrap()
        );
    }

    #[test]
    fn offsets_and_names_are_accepted_and_nonsense_is_not() {
        for (name, seconds) in [
            ("+02:00", 7200),
            ("+0200", 7200),
            ("-5", -18000),
            ("UTC+2", 7200),
            ("UTC", 0),
            ("+05:30", 19800),
        ] {
            assert_eq!(
                Zone::parse(name).unwrap(),
                Zone::Fixed(FixedOffset::east_opt(seconds).unwrap()),
                "{name}"
            );
        }
        assert!(matches!(Zone::parse("America/New_York"), Ok(Zone::Iana(_))));
        for bad in ["Europe/Nowhere", "", "+25:00", "2", "UTC+x"] {
            assert!(
                matches!(Zone::parse(bad), Err(DatexError::TimeZone(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn document_times_with_and_without_offset() {
        let rome = Zone::parse("Europe/Rome").unwrap();
        assert_eq!(
            parse_time("2024-01-01T08:00:00+01:00", &rome),
            Some(utc("2024-01-01T07:00:00Z"))
        );
        assert_eq!(
            parse_time("2024-01-01T08:00:00.5Z", &rome),
            Some(utc("2024-01-01T08:00:00.5Z"))
        );
        assert_eq!(
            parse_time("2024-01-01T08:00:00+0100", &rome),
            Some(utc("2024-01-01T07:00:00Z"))
        );
        // No offset: wall-clock time in the configured zone.
        assert_eq!(
            parse_time("2024-07-01T08:00:00", &rome),
            Some(utc("2024-07-01T06:00:00Z"))
        );
        assert_eq!(
            parse_time("2024-07-01", &rome),
            Some(utc("2024-06-30T22:00:00Z"))
        );
        assert_eq!(parse_time("yesterday", &rome), None);
    }
}
