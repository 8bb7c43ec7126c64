//! Which announcements are current, what their validity is, and when that can change.
//!
//! The rules are the reference's: a *short-lived* category (congestion, accident,
//! animal-on-road, weather-related, event, speed-camera; of Hub's extension special and
//! current) is current while its end is in the future, or, without an end, on the local
//! calendar day of its start ("today" in the configured time zone). Every other category
//! is current while start <= now <= end, or always when it has no end.

use chrono::{DateTime, Duration, Utc};

use crate::announcement::Announcement;
use crate::timezone::Zone;

/// True when the announcement belongs in the feed at `now`.
pub(crate) fn is_current(a: &Announcement<'_>, now: DateTime<Utc>, zone: &Zone) -> bool {
    match (a.category.short_lived, a.end) {
        (true, Some(end)) => end > now,
        (true, None) => zone.local_date(a.start) == zone.local_date(now),
        (false, Some(end)) => a.start <= now && now <= end,
        (false, None) => true,
    }
}

/// Validity and probability of a current situation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Status {
    /// `active` once started, else `definedByValidityTimeSpec`.
    pub validity: &'static str,
    /// `certain` once started, `probable` while it lies in the future.
    pub probability: &'static str,
    /// The end time has been reached.
    pub overrunning: bool,
}

pub(crate) fn status(a: &Announcement<'_>, now: DateTime<Utc>) -> Status {
    let started = a.start <= now;
    let ended = a.end.is_some_and(|end| end <= now);
    Status {
        validity: if started && !ended {
            "active"
        } else {
            "definedByValidityTimeSpec"
        },
        probability: if started { "certain" } else { "probable" },
        overrunning: ended,
    }
}

/// The instants at which the announcement's place in the feed (current or not, and
/// its status) can change: its start, its end and the instant after it, and for a
/// short-lived one without end the local midnights around its start.
pub(crate) fn transitions(
    a: &Announcement<'_>,
    zone: &Zone,
) -> impl Iterator<Item = DateTime<Utc>> {
    let end = a
        .end
        .into_iter()
        .flat_map(|end| [end, end + Duration::nanoseconds(1)]);
    let days = if a.category.short_lived && a.end.is_none() {
        vec![zone.midnight_of(a.start), zone.next_midnight(a.start)]
    } else {
        Vec::new()
    };
    std::iter::once(a.start)
        .chain(end)
        .chain(days.into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn doc(tag: &str, start: &str, end: Option<&str>) -> Value {
        let mut d = json!({"Id": "x", "TagIds": [format!("traffic-event:{tag}")], "StartTime": start, "_Meta": {"Source": "S"}});
        if let Some(end) = end {
            d["EndTime"] = json!(end);
        }
        d
    }

    fn current(d: &Value, now: &str, zone: &str) -> bool {
        let zone = Zone::parse(zone).unwrap();
        is_current(&Announcement::read(d, "S", &zone).unwrap(), utc(now), &zone)
    }

    #[test]
    fn short_lived_with_end_is_current_until_the_end() {
        let d = doc(
            "accident",
            "2024-01-01T08:00:00Z",
            Some("2024-01-01T10:00:00Z"),
        );
        assert!(current(&d, "2024-01-01T09:59:59Z", "UTC"));
        assert!(!current(&d, "2024-01-01T10:00:00Z", "UTC"));
        // Starting in the future still counts (published as probable).
        assert!(current(&d, "2023-12-31T00:00:00Z", "UTC"));
    }

    #[test]
    fn short_lived_without_end_is_current_on_its_local_day() {
        // 23:30 UTC on 10 March is already 11 March in Rome.
        let d = doc("congestion", "2024-03-10T23:30:00Z", None);
        assert!(current(&d, "2024-03-11T20:00:00Z", "Europe/Rome"));
        assert!(!current(&d, "2024-03-11T20:00:00Z", "UTC"));
        assert!(current(&d, "2024-03-10T23:59:00Z", "UTC"));
        assert!(
            !current(&d, "2024-03-11T23:00:00Z", "Europe/Rome"),
            "midnight in Rome ends the day"
        );
    }

    #[test]
    fn long_running_needs_to_have_started_and_not_ended() {
        let d = doc(
            "road-work",
            "2024-01-01T00:00:00Z",
            Some("2024-02-01T00:00:00Z"),
        );
        assert!(
            !current(&d, "2023-12-31T23:59:59Z", "UTC"),
            "future long-running work is not published yet"
        );
        assert!(current(&d, "2024-01-15T00:00:00Z", "UTC"));
        assert!(current(&d, "2024-02-01T00:00:00Z", "UTC"));
        assert!(!current(&d, "2024-02-01T00:00:01Z", "UTC"));
        let open = doc("closure", "2030-01-01T00:00:00Z", None);
        assert!(
            current(&open, "2024-01-01T00:00:00Z", "UTC"),
            "without an end it is always published"
        );
    }

    #[test]
    fn status_follows_the_start() {
        let zone = Zone::parse("UTC").unwrap();
        let d = doc(
            "accident",
            "2024-01-01T08:00:00Z",
            Some("2024-01-01T10:00:00Z"),
        );
        let a = Announcement::read(&d, "S", &zone).unwrap();
        let before = status(&a, utc("2024-01-01T07:00:00Z"));
        assert_eq!(
            (before.validity, before.probability, before.overrunning),
            ("definedByValidityTimeSpec", "probable", false)
        );
        let during = status(&a, utc("2024-01-01T09:00:00Z"));
        assert_eq!(
            (during.validity, during.probability, during.overrunning),
            ("active", "certain", false)
        );
        let at_end = status(&a, utc("2024-01-01T10:00:00Z"));
        assert!(at_end.overrunning);
    }

    #[test]
    fn transitions_include_local_midnights_for_the_today_rule() {
        let zone = Zone::parse("Europe/Rome").unwrap();
        let d = doc("event", "2024-07-10T12:00:00Z", None);
        let a = Announcement::read(&d, "S", &zone).unwrap();
        let t: Vec<_> = transitions(&a, &zone).collect();
        assert_eq!(
            t,
            vec![
                utc("2024-07-10T12:00:00Z"),
                utc("2024-07-09T22:00:00Z"),
                utc("2024-07-10T22:00:00Z")
            ]
        );
    }
}
