//! Date/time values of the Time Series API: the reference's input pattern
//! `yyyy-MM-dd['T'[HH][:mm][:ss][.SSS]][Z][z]` (missing fields are 0, no zone = UTC,
//! offsets `+0200`, `+02:00`, `-0500`, `Z`, zone names `CET`, `Europe/Rome`), with the
//! reference's leniency on day overflow (`2019-02-29` → `2019-02-28`) and `T24:00`.

use chrono::{
    DateTime, Duration, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone,
};

/// The text the reference answers for an unparseable date (prefix of the message).
pub const DATE_FORMAT_HELP: &str = "Format must be yyyy-MM-dd[T[HH][:mm][:ss][.SSS]][Z][z], where [] denotes optionality. Do not forget, single digits must be leaded by 0.";

/// Parses a date/time as the reference does; `Err` carries a short reason.
pub fn parse_datetime(text: &str) -> Result<DateTime<FixedOffset>, String> {
    let b = text.as_bytes();
    let mut p = 0usize;
    let num = |p: &mut usize, n: usize| -> Option<u32> {
        let s = b.get(*p..*p + n)?;
        if !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        *p += n;
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    let fail = |p: usize| format!("Text '{text}' could not be parsed at index {p}");
    let year = num(&mut p, 4).ok_or_else(|| fail(p))? as i32;
    if b.get(p) != Some(&b'-') {
        return Err(fail(p));
    }
    p += 1;
    let month = num(&mut p, 2).ok_or_else(|| fail(p))?;
    if b.get(p) != Some(&b'-') {
        return Err(fail(p));
    }
    p += 1;
    let day = num(&mut p, 2).ok_or_else(|| fail(p))?;
    let (mut hour, mut minute, mut second, mut milli) = (0u32, 0u32, 0u32, 0u32);
    if b.get(p) == Some(&b'T') {
        p += 1;
        if let Some(h) = num(&mut p, 2) {
            hour = h;
        }
        if b.get(p) == Some(&b':') && b.get(p + 1).is_some_and(u8::is_ascii_digit) {
            p += 1;
            minute = num(&mut p, 2).ok_or_else(|| fail(p))?;
            if b.get(p) == Some(&b':') && b.get(p + 1).is_some_and(u8::is_ascii_digit) {
                p += 1;
                second = num(&mut p, 2).ok_or_else(|| fail(p))?;
                if b.get(p) == Some(&b'.') {
                    p += 1;
                    milli = num(&mut p, 3).ok_or_else(|| fail(p))?;
                }
            }
        }
    }
    // Offset (`Z`, `+HHMM`, `+HH:MM`).
    let mut offset: Option<i32> = None;
    match b.get(p) {
        Some(b'Z') => {
            offset = Some(0);
            p += 1;
        }
        Some(&c) if c == b'+' || c == b'-' => {
            let sign = if c == b'-' { -1 } else { 1 };
            let mut q = p + 1;
            let hh = num(&mut q, 2).ok_or_else(|| fail(p))?;
            if b.get(q) == Some(&b':') {
                q += 1;
            }
            let mm = num(&mut q, 2).ok_or_else(|| fail(p))?;
            if hh > 18 || mm > 59 {
                return Err(fail(p));
            }
            offset = Some(sign * (hh as i32 * 3600 + mm as i32 * 60));
            p = q;
        }
        _ => {}
    }
    let zone_name = &text[p..];
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 24
        || minute > 59
        || second > 59
    {
        return Err(format!(
            "Text '{text}' could not be parsed: field value out of range"
        ));
    }
    if hour == 24 && (minute, second, milli) != (0, 0, 0) {
        return Err(format!(
            "Text '{text}' could not be parsed: field value out of range"
        ));
    }
    // Lenient day-of-month: clamp to the month's length.
    let mut date = None;
    for d in (28..=day.max(28)).rev().filter(|d| *d <= day) {
        if let Some(x) = NaiveDate::from_ymd_opt(year, month, d) {
            date = Some(x);
            break;
        }
    }
    let date = match date.or_else(|| NaiveDate::from_ymd_opt(year, month, day)) {
        Some(d) => d,
        None => return Err(format!("Text '{text}' could not be parsed: invalid date")),
    };
    let naive = NaiveDateTime::new(
        date,
        NaiveTime::from_hms_milli_opt(hour % 24, minute, second, milli).expect("validated"),
    ) + Duration::hours(if hour == 24 { 24 } else { 0 });
    if !zone_name.is_empty() {
        if zone_name.contains(' ') || zone_name.contains('[') {
            return Err(fail(p));
        }
        let tz: chrono_tz::Tz = zone_name.parse().map_err(|_| fail(p))?;
        let local = tz
            .from_local_datetime(&naive)
            .earliest()
            .ok_or_else(|| fail(p))?;
        let off = local.offset().fix();
        return Ok(local.with_timezone(&off));
    }
    let off = FixedOffset::east_opt(offset.unwrap_or(0)).ok_or_else(|| fail(p))?;
    off.from_local_datetime(&naive)
        .single()
        .ok_or_else(|| fail(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> String {
        parse_datetime(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .to_rfc3339()
    }

    #[test]
    fn accepts_the_reference_forms() {
        assert_eq!(ok("2019-01-01"), "2019-01-01T00:00:00+00:00");
        assert_eq!(ok("2019-01-01T23"), "2019-01-01T23:00:00+00:00");
        assert_eq!(
            ok("2019-01-01T23:30:15.123"),
            "2019-01-01T23:30:15.123+00:00"
        );
        assert_eq!(ok("2019-01-01T10Z"), "2019-01-01T10:00:00+00:00");
        assert_eq!(ok("2019-01-01T10:00:00+02:00"), "2019-01-01T10:00:00+02:00");
        assert_eq!(ok("2019-01-01T10:00:00-0500"), "2019-01-01T10:00:00-05:00");
        assert_eq!(ok("2019-01-01T10:00:00CET"), "2019-01-01T10:00:00+01:00");
        assert_eq!(
            ok("2019-01-01T10:00:00Europe/Rome"),
            "2019-01-01T10:00:00+01:00"
        );
        assert_eq!(ok("2019-01-01T"), "2019-01-01T00:00:00+00:00");
        assert_eq!(ok("2019-02-29"), "2019-02-28T00:00:00+00:00");
        assert_eq!(ok("2019-01-01T24:00"), "2019-01-02T00:00:00+00:00");
    }

    #[test]
    fn rejects_what_the_reference_rejects() {
        for s in [
            "2019-01-01T23:30:15.1",
            "2019-01-01T23:30:15.1234",
            "2019-1-1",
            "2019-01-01T3",
            "2019-01-01T23:5",
            "2019-01-01T10:00:00+02",
            "2019-01-01T10:00:00 CET",
            "2019-01-01 10:00",
            "20190101",
            "2019-01-01T10:00:00[Europe/Rome]",
            "2019-13-01",
            "2024-01-32",
            "not-a-date",
            "2024",
        ] {
            assert!(parse_datetime(s).is_err(), "{s} must be rejected");
        }
    }
}
