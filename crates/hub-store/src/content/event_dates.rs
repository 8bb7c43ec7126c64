//! Event date ranges, the rows of `content_date` that `begindate`/`enddate` and the event
//! sort read; both backends write what this computes (SQLite computed them in triggers
//! from migration 4 until migration 8 dropped those, with the same rules): `EventDate[].From` + `Begin` .. `To` (or `From`) + `End`, an
//! `End` missing or at midnight meaning the end of that day; without `EventDate`, the
//! document's `DateBegin`..`DateEnd`. Times follow SQLite's date and time functions:
//! an offset or `Z` converts to UTC, an unreadable value drops the range.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use serde_json::Value;

const FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// `(begin, end)` pairs as `YYYY-MM-DD HH:MM:SS`.
pub(crate) fn event_ranges(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let dates = doc.get("EventDate").and_then(Value::as_array);
    if let Some(dates) = dates.filter(|d| !d.is_empty()) {
        for d in dates.iter().filter(|d| d.is_object()) {
            let from = d.get("From").and_then(date_of);
            let begin_time = d.get("Begin").and_then(time_of).unwrap_or(NaiveTime::MIN);
            let to = match d.get("To") {
                None | Some(Value::Null) => d.get("From").and_then(date_of),
                Some(v) => date_of(v),
            };
            let end_time = match d.get("End").and_then(time_of) {
                Some(t) if t != NaiveTime::MIN => t,
                _ => NaiveTime::from_hms_opt(23, 59, 59).expect("valid time"),
            };
            if let (Some(from), Some(to)) = (from, to) {
                out.push((
                    from.and_time(begin_time).format(FORMAT).to_string(),
                    to.and_time(end_time).format(FORMAT).to_string(),
                ));
            }
        }
    } else {
        let begin = doc.get("DateBegin").and_then(datetime_of);
        let end = doc.get("DateEnd").and_then(datetime_of);
        if let (Some(b), Some(e)) = (begin, end) {
            out.push((b.format(FORMAT).to_string(), e.format(FORMAT).to_string()));
        }
    }
    out
}

fn date_of(v: &Value) -> Option<NaiveDate> {
    datetime_of(v).map(|dt| dt.date())
}

/// SQLite's `time(x)`: a bare `HH:MM[:SS[.fff]]` or the time of a date-time.
fn time_of(v: &Value) -> Option<NaiveTime> {
    let s = v.as_str()?.trim();
    parse_time(s)
        .map(|(t, _)| t)
        .or_else(|| datetime_of(v).map(|dt| dt.time()))
}

/// SQLite's `datetime(x)` for the textual forms it reads: `YYYY-MM-DD`, optionally
/// followed by `T` or a space and a time, optionally followed by `Z` or `±HH:MM`.
fn datetime_of(v: &Value) -> Option<NaiveDateTime> {
    let s = v.as_str()?.trim();
    if s.len() < 10 || !s.is_char_boundary(10) {
        return None;
    }
    let date = NaiveDate::parse_from_str(&s[..10], "%Y-%m-%d").ok()?;
    let rest = &s[10..];
    if rest.is_empty() {
        return Some(date.and_time(NaiveTime::MIN));
    }
    let rest = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' '))?;
    let (time, tail) = parse_time(rest)?;
    let dt = date.and_time(time);
    let tail = tail.trim_start();
    if tail.is_empty() {
        return Some(dt);
    }
    if tail.eq_ignore_ascii_case("z") {
        return Some(dt);
    }
    let sign = match tail.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let offset = &tail[1..];
    if offset.len() != 5 || offset.as_bytes()[2] != b':' {
        return None;
    }
    let hours: i64 = offset[..2].parse().ok()?;
    let minutes: i64 = offset[3..].parse().ok()?;
    Some(dt - chrono::Duration::minutes(sign * (hours * 60 + minutes)))
}

/// `HH:MM[:SS[.fff]]` at the start of `s`, and what follows it.
fn parse_time(s: &str) -> Option<(NaiveTime, &str)> {
    let b = s.as_bytes();
    let two = |i: usize| -> Option<u32> {
        let d = b.get(i..i + 2)?;
        d.iter()
            .all(u8::is_ascii_digit)
            .then(|| ((d[0] - b'0') * 10 + (d[1] - b'0')) as u32)
    };
    let h = two(0)?;
    if b.get(2) != Some(&b':') {
        return None;
    }
    let m = two(3)?;
    let mut end = 5;
    let mut sec = 0;
    if b.get(5) == Some(&b':') {
        sec = two(6)?;
        end = 8;
        if b.get(8) == Some(&b'.') {
            end = 9;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
        }
    }
    Some((NaiveTime::from_hms_opt(h, m, sec)?, &s[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranges_follow_the_sqlite_trigger() {
        let cases = [
            (
                json!({"EventDate": [{"From": "2024-05-01T00:00:00", "To": "2024-05-03T00:00:00", "Begin": "10:00:00", "End": "00:00:00"}]}),
                vec![("2024-05-01 10:00:00", "2024-05-03 23:59:59")],
            ),
            (
                json!({"EventDate": [{"From": "2024-05-01", "Begin": "09:30", "End": "18:00"}]}),
                vec![("2024-05-01 09:30:00", "2024-05-01 18:00:00")],
            ),
            (
                json!({"EventDate": [{"From": "2024-05-01T01:00:00+02:00"}]}),
                vec![("2024-04-30 00:00:00", "2024-04-30 23:59:59")],
            ),
            (json!({"EventDate": [{"From": "not a date"}, 5]}), vec![]),
            (
                json!({"EventDate": [], "DateBegin": "2024-01-01T08:00:00", "DateEnd": "2024-01-02T00:00:00Z"}),
                vec![("2024-01-01 08:00:00", "2024-01-02 00:00:00")],
            ),
            (json!({"DateBegin": "2024-01-01"}), vec![]),
        ];
        for (doc, expected) in cases {
            let got = event_ranges(&doc);
            let expected: Vec<(String, String)> = expected
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(got, expected, "{doc}");
        }
    }
}
