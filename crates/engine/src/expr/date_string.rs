//! Reading a date out of a string, for `$dateFromString` and `$toDate`.
//!
//! With a `format`, the string is read field by field against mongod's
//! `$dateFromString` specifiers (`%Y %m %d %H %M %S %L %z %Z %G %V %u %b %B
//! %%`); as in mongod, a numeric field takes up to its width in digits and
//! skips what is not a digit before it, and any other character must match
//! itself. Without a format, the ISO 8601 forms and a few common ones are read.
//! A date with no time of day is midnight; a date with part of one is an
//! error. Time zone information in the string (`Z`, `+01:00`) wins over UTC,
//! and clashes with any other `timezone` argument. Every failure is mongod's
//! `ConversionFailure` (241), which `onError` catches.

use bson::Bson;
use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, Utc, Weekday};

use super::err;
use super::zone::Zone;
use crate::error::{EngineError, Result};

/// Specifiers `$dateFromString` accepts in `format`.
const FROM_STRING_SPECIFIERS: &str = "bBdGHLmMSuVYzZ";

/// Check a `$dateFromString` format: mongod's 18535 and 18536.
pub(super) fn validate_format(fmt: &str, allowed: &str) -> Result<()> {
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        match chars.next() {
            None => return Err(err(18535, "Unmatched '%' at end of format string")),
            Some('%') => {}
            Some(s) if allowed.contains(s) => {}
            Some(s) => {
                return Err(err(
                    18536,
                    format!("Invalid format character '%{s}' in format string"),
                ));
            }
        }
    }
    Ok(())
}

/// Check a `$dateFromString` format.
pub(super) fn validate_from_string_format(fmt: &str) -> Result<()> {
    validate_format(fmt, FROM_STRING_SPECIFIERS)
}

/// Zone information found in the string.
#[derive(Debug, Clone, PartialEq)]
enum InString {
    /// A numeric offset (`+01:00`, `-0530`), in seconds east of UTC.
    Offset(i32),
    /// A zone abbreviation (`Z`, `UTC`, `GMT`), always UTC here.
    Abbreviation(String),
}

/// The fields read from a string.
#[derive(Debug, Default)]
struct Fields {
    year: Option<i64>,
    month: Option<i64>,
    day: Option<i64>,
    hour: Option<i64>,
    minute: Option<i64>,
    second: Option<i64>,
    millis: Option<i64>,
    iso_year: Option<i64>,
    iso_week: Option<i64>,
    iso_day: Option<i64>,
    zone: Option<InString>,
}

fn failure(s: &str, why: &str) -> EngineError {
    err(241, format!("Error parsing date string '{s}'; {why}"))
}

/// Up to `width` digits, after skipping non-digits as timelib does.
fn number(rest: &mut &str, width: usize) -> Option<i64> {
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    let digits: String = rest[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .take(width)
        .collect();
    *rest = &rest[start + digits.len()..];
    digits.parse().ok()
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A month name, in full or its first three letters, in any case.
fn month_name(rest: &mut &str, full: bool) -> Option<i64> {
    let lower = rest.to_lowercase();
    for (i, m) in MONTHS.iter().enumerate() {
        let name = if full { m } else { &m[..3] };
        if lower.starts_with(name) {
            *rest = rest.get(name.len()..)?;
            return Some(i as i64 + 1);
        }
    }
    None
}

/// `Z`, `UTC`, `GMT` or `±hh[:mm]`/`±hhmm` at the start of `rest`.
fn zone(rest: &mut &str) -> Option<InString> {
    for abbr in ["UTC", "GMT", "Z"] {
        if let Some(r) = rest.strip_prefix(abbr) {
            *rest = r;
            return Some(InString::Abbreviation(abbr.to_string()));
        }
    }
    let sign = match rest.chars().next()? {
        '+' => 1,
        '-' => -1,
        _ => return None,
    };
    let body = &rest[1..];
    // Bytes, not string slices: the text after the sign may be anything.
    let b = body.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let num = |i: usize| i32::from(b[i] - b'0') * 10 + i32::from(b[i + 1] - b'0');
    let (secs, used) = if digit(0) && digit(1) && b.get(2) == Some(&b':') && digit(3) && digit(4) {
        (num(0) * 3600 + num(3) * 60, 5)
    } else if digit(0) && digit(1) && digit(2) && digit(3) {
        (num(0) * 3600 + num(2) * 60, 4)
    } else if digit(0) && digit(1) {
        (num(0) * 3600, 2)
    } else {
        return None;
    };
    *rest = &body[used..];
    Some(InString::Offset(sign * secs))
}

/// Read `s` against a mongod format.
fn by_format(s: &str, fmt: &str) -> Result<Fields> {
    let mut f = Fields::default();
    let mut rest = s;
    let mut spec = fmt.chars();
    while let Some(c) = spec.next() {
        if c != '%' {
            match rest.strip_prefix(c) {
                Some(r) => rest = r,
                None => return Err(failure(s, "The format separator does not match")),
            }
            continue;
        }
        let Some(k) = spec.next() else {
            return Err(err(18535, "Unmatched '%' at end of format string"));
        };
        let missing = |what: &str| failure(s, &format!("{what} could not be found"));
        match k {
            '%' => match rest.strip_prefix('%') {
                Some(r) => rest = r,
                None => return Err(failure(s, "The escaped character could not be found")),
            },
            'Y' => f.year = Some(number(&mut rest, 4).ok_or_else(|| missing("A four digit year"))?),
            'G' => {
                f.iso_year =
                    Some(number(&mut rest, 4).ok_or_else(|| missing("A four digit ISO year"))?)
            }
            'm' => {
                f.month = Some(number(&mut rest, 2).ok_or_else(|| missing("A two digit month"))?)
            }
            'd' => f.day = Some(number(&mut rest, 2).ok_or_else(|| missing("A two digit day"))?),
            'H' => f.hour = Some(number(&mut rest, 2).ok_or_else(|| missing("A two digit hour"))?),
            'M' => {
                f.minute = Some(number(&mut rest, 2).ok_or_else(|| missing("A two digit minute"))?)
            }
            'S' => {
                f.second = Some(number(&mut rest, 2).ok_or_else(|| missing("A two digit second"))?)
            }
            'L' => {
                f.millis =
                    Some(number(&mut rest, 3).ok_or_else(|| missing("A three digit millisecond"))?)
            }
            'V' => {
                f.iso_week =
                    Some(number(&mut rest, 2).ok_or_else(|| missing("A two digit ISO week"))?)
            }
            'u' => {
                f.iso_day = Some(
                    number(&mut rest, 1).ok_or_else(|| missing("A single digit day of week"))?,
                )
            }
            'b' | 'B' => {
                f.month = Some(
                    month_name(&mut rest, k == 'B').ok_or_else(|| missing("A textual month"))?,
                )
            }
            'z' => f.zone = Some(zone(&mut rest).ok_or_else(|| missing("A timezone"))?),
            'Z' => {
                let sign = match rest.chars().next() {
                    Some('+') => 1,
                    Some('-') => -1,
                    _ => return Err(missing("A timezone offset in minutes")),
                };
                rest = &rest[1..];
                let mins =
                    number(&mut rest, 3).ok_or_else(|| missing("A timezone offset in minutes"))?;
                f.zone = Some(InString::Offset(sign * (mins as i32) * 60));
            }
            other => {
                return Err(err(
                    18536,
                    format!("Invalid format character '%{other}' in format string"),
                ));
            }
        }
    }
    if !rest.is_empty() {
        return Err(failure(s, "Trailing data"));
    }
    Ok(f)
}

/// Read `s` as one of the forms accepted without a format.
fn free_form(s: &str) -> Result<Fields> {
    let bad = || failure(s, "no date could be read");
    let t = s.trim();
    let mut f = Fields::default();
    // The date: yyyy-mm-dd, yyyy/mm/dd, or "Month dd, yyyy" / "Mon dd yyyy".
    let mut rest;
    let (y, m, d);
    if t.starts_with(|c: char| c.is_ascii_digit()) {
        let year_len = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        if year_len != 4 {
            return Err(bad());
        }
        y = t[..4].parse::<i64>().map_err(|_| bad())?;
        rest = &t[4..];
        let sep = rest.chars().next().ok_or_else(bad)?;
        if sep != '-' && sep != '/' {
            return Err(bad());
        }
        rest = &rest[1..];
        m = two_digits(&mut rest).ok_or_else(bad)?;
        rest = rest.strip_prefix(sep).ok_or_else(bad)?;
        d = two_digits(&mut rest).ok_or_else(bad)?;
    } else {
        rest = t;
        m = month_name(&mut rest, true)
            .or_else(|| month_name(&mut rest, false))
            .ok_or_else(bad)?;
        rest = rest.trim_start();
        d = two_digits(&mut rest).ok_or_else(bad)?;
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        let year_len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if year_len != 4 {
            return Err(bad());
        }
        y = rest[..4].parse::<i64>().map_err(|_| bad())?;
        rest = &rest[4..];
    }
    (f.year, f.month, f.day) = (Some(y), Some(m), Some(d));
    // The time: [T or space]hh:mm[:ss[.fff…]].
    if let Some(r) = rest.strip_prefix('T').or_else(|| {
        rest.strip_prefix(' ')
            .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    }) {
        rest = r;
        f.hour = Some(two_digits(&mut rest).ok_or_else(bad)?);
        rest = rest.strip_prefix(':').ok_or_else(bad)?;
        f.minute = Some(two_digits(&mut rest).ok_or_else(bad)?);
        f.second = Some(0);
        if let Some(r) = rest.strip_prefix(':') {
            rest = r;
            f.second = Some(two_digits(&mut rest).ok_or_else(bad)?);
            if let Some(r) = rest.strip_prefix('.') {
                let n = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
                if n == 0 {
                    return Err(bad());
                }
                let frac: String = r[..n].chars().chain("000".chars()).take(3).collect();
                f.millis = Some(frac.parse().map_err(|_| bad())?);
                rest = &r[n..];
            }
        }
    }
    let rest = rest.trim_start();
    if !rest.is_empty() {
        let mut r = rest;
        f.zone = Some(zone(&mut r).ok_or_else(bad)?);
        if !r.is_empty() {
            return Err(bad());
        }
    }
    Ok(f)
}

fn two_digits(rest: &mut &str) -> Option<i64> {
    let n = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if n == 0 || n > 2 {
        return None;
    }
    let v = rest[..n].parse().ok()?;
    *rest = &rest[n..];
    Some(v)
}

/// Parse a date string as `$dateFromString` does. `tz` is the `timezone`
/// argument, `None` when absent.
pub(crate) fn parse_date_string(s: &str, format: Option<&str>, tz: Option<Zone>) -> Result<Bson> {
    let f = match format {
        Some(fmt) => by_format(s, fmt)?,
        None => free_form(s)?,
    };
    let tz = tz.unwrap_or_else(Zone::utc);
    if tz != Zone::utc() {
        match &f.zone {
            None => {}
            Some(InString::Offset(_)) => {
                return Err(err(
                    241,
                    "you cannot pass in a date/time string with GMT offset together with a timezone argument",
                ));
            }
            Some(InString::Abbreviation(a)) => {
                return Err(err(
                    241,
                    format!(
                        "you cannot pass in a date/time string with time zone information ('{a}') together with a timezone argument"
                    ),
                ));
            }
        }
    }
    let date = calendar_date(s, &f)?;
    let (h, mi, sec) = match (f.hour, f.minute, f.second) {
        (None, None, None) => (0, 0, 0),
        (Some(h), Some(m), Some(sec)) => (h, m, sec),
        (Some(h), Some(m), None) if format.is_none() => (h, m, 0),
        _ => {
            return Err(err(
                241,
                format!(
                    "an incomplete date/time string has been found, with elements missing: \"{s}\""
                ),
            ));
        }
    };
    let ms = f.millis.unwrap_or(0);
    let time = u32::try_from(h)
        .ok()
        .zip(u32::try_from(mi).ok())
        .zip(u32::try_from(sec).ok())
        .zip(u32::try_from(ms).ok())
        .and_then(|(((h, m), s), ms)| NaiveTime::from_hms_milli_opt(h, m, s, ms))
        .ok_or_else(|| failure(s, "The parsed time was invalid"))?;
    let local = NaiveDateTime::new(date, time);
    let instant: Option<DateTime<Utc>> = match f.zone {
        Some(InString::Offset(secs)) => local
            .checked_sub_signed(Duration::seconds(i64::from(secs)))
            .map(|n| n.and_utc()),
        Some(InString::Abbreviation(_)) => Some(local.and_utc()),
        None => tz.instant(local),
    };
    instant
        .map(|t| Bson::DateTime(bson::DateTime::from_millis(t.timestamp_millis())))
        .ok_or_else(|| failure(s, "The parsed date was invalid"))
}

/// The calendar date of the fields: year-month-day or ISO week date.
fn calendar_date(s: &str, f: &Fields) -> Result<NaiveDate> {
    let invalid = || failure(s, "The parsed date was invalid");
    let incomplete = || {
        err(
            241,
            format!(
                "an incomplete date/time string has been found, with elements missing: \"{s}\""
            ),
        )
    };
    if let (Some(y), Some(w)) = (f.iso_year, f.iso_week) {
        let day = match f.iso_day.unwrap_or(1) {
            1 => Weekday::Mon,
            2 => Weekday::Tue,
            3 => Weekday::Wed,
            4 => Weekday::Thu,
            5 => Weekday::Fri,
            6 => Weekday::Sat,
            7 => Weekday::Sun,
            _ => return Err(invalid()),
        };
        let y = i32::try_from(y).map_err(|_| invalid())?;
        let w = u32::try_from(w).map_err(|_| invalid())?;
        return NaiveDate::from_isoywd_opt(y, w, day).ok_or_else(invalid);
    }
    let (Some(y), Some(m), Some(d)) = (f.year, f.month, f.day) else {
        return Err(incomplete());
    };
    let y = i32::try_from(y).map_err(|_| invalid())?;
    let (m, d) = (
        u32::try_from(m).map_err(|_| invalid())?,
        u32::try_from(d).map_err(|_| invalid())?,
    );
    NaiveDate::from_ymd_opt(y, m, d).ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(b: Result<Bson>) -> Option<i64> {
        match b {
            Ok(Bson::DateTime(d)) => Some(d.timestamp_millis()),
            _ => None,
        }
    }

    #[test]
    fn free_forms() {
        let base = ms(parse_date_string("2017-02-08T12:10:40.787Z", None, None));
        assert_eq!(base, Some(1_486_555_840_787));
        assert_eq!(
            ms(parse_date_string("2017-02-08T12:10:40.787", None, None)),
            base
        );
        assert_eq!(
            ms(parse_date_string(
                "2017-02-08T13:10:40.787+01:00",
                None,
                None
            )),
            base
        );
        assert_eq!(
            ms(parse_date_string("20177-02-09T03:35:02.055", None, None)),
            None
        );
        assert_eq!(ms(parse_date_string("2017-02-08T12", None, None)), None);
    }

    #[test]
    fn odd_text_is_an_error_not_a_panic() {
        for s in [
            "2017-02-08T12:00:00+1é",
            "2017-02-08T12:00:00+é",
            "é",
            "2017-é",
            "Juné 1, 2017",
            "+",
            "",
        ] {
            assert!(parse_date_string(s, None, None).is_err(), "{s}");
            for f in ["%Y-%m-%dT%H:%M:%S%z", "%Z", "%b", "%Y%%"] {
                assert!(parse_date_string(s, Some(f), None).is_err(), "{s} {f}");
            }
        }
    }

    #[test]
    fn formats() {
        let want = ms(parse_date_string("2018-06-15", None, None));
        assert_eq!(
            ms(parse_date_string("15-06-2018", Some("%d-%m-%Y"), None)),
            want
        );
        assert_eq!(
            ms(parse_date_string("06/15/2018", Some("%m/%d/%Y"), None)),
            want
        );
        assert_eq!(
            ms(parse_date_string("15 June 2018", Some("%d %B %Y"), None)),
            want
        );
        assert_eq!(
            ms(parse_date_string("2018-06-15x", Some("%Y-%m-%d"), None)),
            None
        );
        assert_eq!(
            ms(parse_date_string(
                "2018-06-15 10",
                Some("%Y-%m-%d %H"),
                None
            )),
            None
        );
    }
}
