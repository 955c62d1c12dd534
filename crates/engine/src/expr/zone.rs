//! Time zones of the date operators' `timezone` argument.
//!
//! mongod accepts an Olson identifier from the IANA database
//! (`Europe/London`, `America/New_York`), a UTC offset written `±hh:mm`,
//! `±hhmm` or `±hh`, and the names `Z`, `UTC` and `GMT`. Olson zones come from
//! `chrono-tz`, so daylight saving time follows the database's rules; an
//! identifier the database does not know is mongod's error 40485. A [`Zone`]
//! turns an instant into local wall-clock time and back; wall-clock times a
//! DST change skips or repeats resolve as mongod's timelib does (a skipped
//! time is read with the offset in force before the change, a repeated one as
//! its first occurrence).

use bson::Bson;
use chrono::{DateTime, Duration, FixedOffset, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use super::err;
use crate::error::Result;
use crate::value;

/// A parsed `timezone` argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Zone {
    /// A fixed UTC offset (UTC itself included).
    Fixed(FixedOffset),
    /// An IANA zone, whose offset depends on the instant.
    Olson(Tz),
}

impl Zone {
    /// UTC, the zone of an absent `timezone`.
    pub(crate) fn utc() -> Self {
        Zone::Fixed(Utc.fix())
    }

    /// Parse a `timezone` argument (`None`: the argument is absent, UTC).
    pub(crate) fn parse(v: Option<&Bson>) -> Result<Self> {
        let Some(v) = v else {
            return Ok(Self::utc());
        };
        let Bson::String(s) = v else {
            return Err(err(
                40517,
                format!(
                    "timezone must evaluate to a string, found {}",
                    value::type_alias(v)
                ),
            ));
        };
        Self::parse_str(s)
            .ok_or_else(|| err(40485, format!("unrecognized time zone identifier: \"{s}\"")))
    }

    /// A zone name or offset, `None` if mongod would not recognise it.
    pub(crate) fn parse_str(s: &str) -> Option<Self> {
        // mongod keeps "UTC" as its UTC zone; "GMT" and "Etc/UTC" are Olson
        // zones with offset zero (and so print no `Z` by default).
        if matches!(s, "UTC" | "Z") {
            return Some(Self::utc());
        }
        if let Some(rest) = s.strip_prefix('+') {
            return offset(rest).map(|secs| Zone::Fixed(fixed(secs)));
        }
        if let Some(rest) = s.strip_prefix('-') {
            return offset(rest).map(|secs| Zone::Fixed(fixed(-secs)));
        }
        // Exact names only: mongod's lookup is case-sensitive.
        s.parse::<Tz>().ok().map(Zone::Olson)
    }

    /// The offset from UTC in force at instant `t`.
    pub(crate) fn offset_at(&self, t: DateTime<Utc>) -> FixedOffset {
        match self {
            Zone::Fixed(o) => *o,
            Zone::Olson(tz) => tz.offset_from_utc_datetime(&t.naive_utc()).fix(),
        }
    }

    /// Instant `t` as wall-clock time in this zone.
    pub(crate) fn at(&self, t: DateTime<Utc>) -> DateTime<FixedOffset> {
        t.with_timezone(&self.offset_at(t))
    }

    /// Instant `t` as a naive wall-clock time in this zone.
    pub(crate) fn local(&self, t: DateTime<Utc>) -> NaiveDateTime {
        self.at(t).naive_local()
    }

    /// The instant at wall-clock time `n` in this zone, `None` only when the
    /// result is out of chrono's range.
    ///
    /// This is timelib's rule: read `n` with the offset in force at `n`
    /// taken as a UTC time; if the offset in force at the result differs,
    /// read `n` with that one instead, unless that lands before the change
    /// (a skipped time). Zones west of UTC thus give a repeated time its
    /// first occurrence and zones east of it its second.
    pub(crate) fn instant(&self, n: NaiveDateTime) -> Option<DateTime<Utc>> {
        let wall = n.and_utc();
        let shift = |o: FixedOffset| {
            wall.checked_sub_signed(Duration::seconds(i64::from(o.local_minus_utc())))
        };
        let current = self.offset_at(wall);
        let first = shift(current)?;
        let after = self.offset_at(first);
        if after == current {
            return Some(first);
        }
        let second = shift(after)?;
        Some(if self.offset_at(second) == after {
            second
        } else {
            first
        })
    }
}

fn fixed(secs: i32) -> FixedOffset {
    FixedOffset::east_opt(secs).unwrap_or_else(|| Utc.fix())
}

/// Seconds of an offset written `hh`, `hhmm` or `hh:mm` (after the sign).
fn offset(rest: &str) -> Option<i32> {
    let digits: &[u8] = rest.as_bytes();
    let (h, m) = match digits {
        [a, b] => (&[*a, *b][..], &b"00"[..]),
        [a, b, c, d] => (&[*a, *b][..], &[*c, *d][..]),
        [a, b, b':', c, d] => (&[*a, *b][..], &[*c, *d][..]),
        _ => return None,
    };
    let num = |p: &[u8]| -> Option<i32> {
        p.iter().try_fold(0i32, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + i32::from(c - b'0'))
        })
    };
    let (h, m) = (num(h)?, num(m)?);
    // FixedOffset allows less than a day either way.
    (h < 24 && m < 60).then_some(h * 3600 + m * 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    #[test]
    fn offsets_in_the_three_forms() {
        for (s, secs) in [
            ("+08:00", 8 * 3600),
            ("-0530", -(5 * 3600 + 1800)),
            ("+03", 10800),
        ] {
            assert_eq!(Zone::parse_str(s), Some(Zone::Fixed(fixed(secs))), "{s}");
        }
        for s in [
            "+8",
            "+0800x",
            "08:00",
            "+24:00",
            "+12:60",
            "europe/london",
            "",
        ] {
            assert_eq!(Zone::parse_str(s), None, "{s}");
        }
    }

    #[test]
    fn olson_zones_follow_daylight_saving() {
        let Some(london) = Zone::parse_str("Europe/London") else {
            panic!("Europe/London unknown");
        };
        let winter = london.offset_at(utc("2024-01-15T12:00:00Z"));
        let summer = london.offset_at(utc("2024-07-15T12:00:00Z"));
        assert_eq!(
            (winter.local_minus_utc(), summer.local_minus_utc()),
            (0, 3600)
        );
    }

    #[test]
    fn wall_clock_gaps_and_repeats() {
        let Some(ny) = Zone::parse_str("America/New_York") else {
            panic!("America/New_York unknown");
        };
        let n = |s: &str| NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap_or_default();
        // 02:30 does not exist on 2024-03-10: read at -05:00, 03:30 EDT.
        assert_eq!(
            ny.instant(n("2024-03-10T02:30")),
            Some(utc("2024-03-10T07:30:00Z"))
        );
        // 01:30 happens twice on 2024-11-03: the first time, at -04:00.
        assert_eq!(
            ny.instant(n("2024-11-03T01:30")),
            Some(utc("2024-11-03T05:30:00Z"))
        );
        // East of Greenwich the second: 02:30 CET on 2024-10-27 in Berlin.
        let Some(berlin) = Zone::parse_str("Europe/Berlin") else {
            panic!("Europe/Berlin unknown");
        };
        assert_eq!(
            berlin.instant(n("2024-10-27T02:30")),
            Some(utc("2024-10-27T01:30:00Z"))
        );
    }
}
