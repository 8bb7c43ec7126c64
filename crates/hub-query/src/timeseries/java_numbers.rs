//! Numbers read as the reference's Java scanner reads them: the `where` language's values
//! are typed by `Integer.parseInt` and `Double.parseDouble`, so what counts as a number
//! (and which numbers stay strings) matches it.
//!
//! Owns: those two readings. Must not: scan or type anything else ([`super::parser`]).

/// Java `Integer.parseInt`: optional sign, ASCII digits, 32-bit range.
pub fn java_parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = s.trim_start_matches('+').parse().ok()?;
    (i32::MIN as i64..=i32::MAX as i64)
        .contains(&n)
        .then_some(n)
}

/// Java `Double.parseDouble` (decimal forms, `NaN`, `Infinity`, `f`/`d` suffixes,
/// surrounding whitespace; hex floats are not needed by any client and stay strings).
pub fn java_parse_double(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c <= ' ');
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let v = if body == "NaN" {
        f64::NAN
    } else if body == "Infinity" {
        f64::INFINITY
    } else {
        let body = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
        let b = body.as_bytes();
        let mut k = 0;
        let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        k += int_digits;
        let mut frac_digits = 0;
        if b.get(k) == Some(&b'.') {
            k += 1;
            frac_digits = b[k..].iter().take_while(|c| c.is_ascii_digit()).count();
            k += frac_digits;
        }
        if int_digits + frac_digits == 0 {
            return None;
        }
        if matches!(b.get(k), Some(b'e' | b'E')) {
            k += 1;
            if matches!(b.get(k), Some(b'+' | b'-')) {
                k += 1;
            }
            let e = b[k..].iter().take_while(|c| c.is_ascii_digit()).count();
            if e == 0 {
                return None;
            }
            k += e;
        }
        if k != b.len() {
            return None;
        }
        let mut norm = String::with_capacity(body.len() + 2);
        if int_digits == 0 {
            norm.push('0');
        }
        norm.push_str(body);
        norm.replace(".e", ".0e")
            .replace(".E", ".0E")
            .trim_end_matches('.')
            .parse::<f64>()
            .ok()?
    };
    Some(if neg { -v } else { v })
}
