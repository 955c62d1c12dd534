//! Date operators, computed with chrono in the `timezone` each is given
//! (`zone`): a fixed offset or an Olson zone with its daylight saving rules.

use bson::{Bson, Document};
use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, Timelike, Utc};

use super::calendar::{self, Unit};
use super::date_string;
use super::zone::Zone;
use super::{NamedVals, err, nullish, type_name};
use crate::error::Result;
use crate::value;

/// A date-like value as a UTC instant (dates, timestamps, ObjectIds).
fn instant(v: &Bson) -> Option<DateTime<Utc>> {
    match v {
        Bson::DateTime(d) => DateTime::from_timestamp_millis(d.timestamp_millis()),
        Bson::Timestamp(t) => DateTime::from_timestamp(i64::from(t.time), 0),
        Bson::ObjectId(o) => DateTime::from_timestamp_millis(o.timestamp().timestamp_millis()),
        _ => None,
    }
}

fn require_date(v: &Bson) -> Result<DateTime<Utc>> {
    instant(v).ok_or_else(|| {
        err(
            16006,
            format!(
                "can't convert from BSON type {} to Date",
                value::type_alias(v)
            ),
        )
    })
}

/// Specifiers `$dateToString` accepts in `format`.
const TO_STRING_SPECIFIERS: &str = "bBdGHjLmMSuUVwYzZ";

/// The `timezone` argument: UTC when absent, `None` when null or missing
/// (the operator then returns null).
fn zone_arg(a: &NamedVals) -> Result<Option<Zone>> {
    if !a.has("timezone") {
        return Ok(Some(Zone::utc()));
    }
    match a.get("timezone") {
        v if nullish(v) => Ok(None),
        v => Zone::parse(v).map(Some),
    }
}

fn to_bson(t: DateTime<Utc>) -> Bson {
    Bson::DateTime(bson::DateTime::from_millis(t.timestamp_millis()))
}

/// Sunday-based week of the year (`%U`), 0 to 53.
fn week_sunday(t: &DateTime<FixedOffset>) -> u32 {
    (t.ordinal() + 6 - t.weekday().num_days_from_sunday()) / 7
}

pub(super) fn call(op: &str, vals: &[Option<Bson>]) -> Option<Result<Option<Bson>>> {
    let part = match op {
        "$year" | "$month" | "$dayOfMonth" | "$hour" | "$minute" | "$second" | "$millisecond"
        | "$dayOfWeek" | "$dayOfYear" | "$week" | "$isoWeek" | "$isoWeekYear" | "$isoDayOfWeek" => {
            op
        }
        _ => return None,
    };
    Some((|| {
        let v = match &vals[0] {
            x if nullish(x.as_ref()) => return Ok(Some(Bson::Null)),
            Some(v) => v,
            None => return Ok(Some(Bson::Null)),
        };
        // The date is converted before the zone is looked at.
        let date = require_date(v)?;
        let tz_arg = vals.get(1).and_then(|t| t.as_ref());
        if vals.len() > 1 && nullish(tz_arg) {
            return Ok(Some(Bson::Null));
        }
        let t = Zone::parse(tz_arg)?.at(date);
        let n: i64 = match part {
            "$year" => i64::from(t.year()),
            "$month" => i64::from(t.month()),
            "$dayOfMonth" => i64::from(t.day()),
            "$hour" => i64::from(t.hour()),
            "$minute" => i64::from(t.minute()),
            "$second" => i64::from(t.second()),
            "$millisecond" => i64::from(t.timestamp_subsec_millis()),
            "$dayOfWeek" => i64::from(t.weekday().number_from_sunday()),
            "$dayOfYear" => i64::from(t.ordinal()),
            "$week" => i64::from(week_sunday(&t)),
            "$isoWeek" => i64::from(t.iso_week().week()),
            "$isoWeekYear" => {
                return Ok(Some(Bson::Int64(i64::from(t.iso_week().year()))));
            }
            _ => i64::from(t.weekday().number_from_monday()),
        };
        Ok(Some(Bson::Int32(n as i32)))
    })())
}

/// Format a date with mongod's `%` specifiers.
fn format_date(t: &DateTime<FixedOffset>, fmt: &str) -> Result<String> {
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else {
            return Err(err(18535, "Unmatched '%' at end of format string"));
        };
        let piece = match spec {
            'Y' => format!("{:04}", t.year()),
            'm' => format!("{:02}", t.month()),
            'd' => format!("{:02}", t.day()),
            'H' => format!("{:02}", t.hour()),
            'M' => format!("{:02}", t.minute()),
            'S' => format!("{:02}", t.second()),
            'L' => format!("{:03}", t.timestamp_subsec_millis()),
            'j' => format!("{:03}", t.ordinal()),
            'w' => t.weekday().number_from_sunday().to_string(),
            'u' => t.weekday().number_from_monday().to_string(),
            'U' => format!("{:02}", week_sunday(t)),
            'V' => format!("{:02}", t.iso_week().week()),
            'G' => format!("{:04}", t.iso_week().year()),
            'z' => {
                let secs = t.offset().local_minus_utc();
                let sign = if secs < 0 { '-' } else { '+' };
                format!(
                    "{sign}{:02}{:02}",
                    secs.abs() / 3600,
                    (secs.abs() % 3600) / 60
                )
            }
            'Z' => (t.offset().local_minus_utc() / 60).to_string(),
            'b' => t.format("%b").to_string(),
            'B' => t.format("%B").to_string(),
            '%' => "%".to_string(),
            other => {
                return Err(err(
                    18536,
                    format!("Invalid format character '%{other}' in format string"),
                ));
            }
        };
        out.push_str(&piece);
    }
    Ok(out)
}

fn from_local(n: NaiveDateTime, tz: &Zone) -> Result<DateTime<Utc>> {
    tz.instant(n).ok_or_else(|| err(1, "date out of range"))
}

/// `startOfWeek`, read only for weeks (mongod ignores it otherwise);
/// `None` when null.
fn start_of_week_arg(a: &NamedVals, unit: Unit) -> Result<Option<u32>> {
    if unit != Unit::Week || !a.has("startOfWeek") {
        return Ok(Some(0));
    }
    match a.get("startOfWeek") {
        v if nullish(v) => Ok(None),
        v => calendar::parse_start_of_week(v).map(Some),
    }
}

/// A date argument of `$dateTrunc`/`$dateDiff`: 5166307 if not a date.
fn convert_date(op: &str, name: &str, v: &Bson) -> Result<DateTime<Utc>> {
    instant(v).ok_or_else(|| {
        err(
            5166307,
            format!(
                "{op} requires '{name}' to be a date, but got {}",
                value::type_alias(v)
            ),
        )
    })
}

pub(super) fn call_named(op: &str, a: &NamedVals) -> Option<Result<Option<Bson>>> {
    Some(match op {
        "$dateToString" => (|| {
            if let Some(k) = a.unknown(&["date", "format", "timezone", "onNull"]) {
                return Err(err(
                    18534,
                    format!("Unrecognized argument to $dateToString: {k}"),
                ));
            }
            // mongod's order: the format, then the zone, then a null date.
            let fmt = match a.get("format") {
                None => None,
                Some(v) if nullish(Some(v)) => None,
                Some(Bson::String(f)) => {
                    date_string::validate_format(f, TO_STRING_SPECIFIERS)?;
                    Some(f.clone())
                }
                Some(other) => {
                    return Err(err(
                        18533,
                        format!(
                            "$dateToString requires that 'format' be a string, found: {} with value {other}",
                            value::type_alias(other)
                        ),
                    ));
                }
            };
            let tz = zone_arg(a)?;
            let date = match a.get("date") {
                v if nullish(v) => {
                    return Ok(if a.has("onNull") {
                        a.get("onNull").cloned()
                    } else {
                        Some(Bson::Null)
                    });
                }
                Some(v) => v,
                None => return Ok(Some(Bson::Null)),
            };
            let Some(tz) = tz else {
                return Ok(Some(Bson::Null));
            };
            let fmt = match fmt {
                Some(f) => f,
                None if a.has("format") => return Ok(Some(Bson::Null)),
                // Without a format: ISO 8601, with a `Z` only in UTC.
                None if tz == Zone::utc() => "%Y-%m-%dT%H:%M:%S.%LZ".to_string(),
                None => "%Y-%m-%dT%H:%M:%S.%L".to_string(),
            };
            let date = require_date(date)?;
            Ok(Some(Bson::String(format_date(&tz.at(date), &fmt)?)))
        })(),
        "$dateFromString" => (|| {
            if let Some(k) = a.unknown(&["dateString", "format", "timezone", "onError", "onNull"]) {
                return Err(err(
                    40541,
                    format!("Unrecognized argument to $dateFromString: {k}"),
                ));
            }
            // mongod's order: the format, then the zone, then a null string;
            // only failures to read the string go to `onError`.
            let fmt = match a.get("format") {
                None => None,
                Some(v) if nullish(Some(v)) => None,
                Some(Bson::String(f)) => {
                    date_string::validate_from_string_format(f)?;
                    Some(f.as_str())
                }
                Some(other) => {
                    return Err(err(
                        40684,
                        format!(
                            "$dateFromString requires that 'format' be a string, found: {} with value {other}",
                            value::type_alias(other)
                        ),
                    ));
                }
            };
            let tz = zone_arg(a)?;
            let s = match a.get("dateString") {
                v if nullish(v) => {
                    return Ok(if a.has("onNull") {
                        a.get("onNull").cloned()
                    } else {
                        Some(Bson::Null)
                    });
                }
                Some(v) => v,
                None => return Ok(Some(Bson::Null)),
            };
            let parsed = match s {
                Bson::String(s) => match tz {
                    None => return Ok(Some(Bson::Null)),
                    Some(_) if fmt.is_none() && a.has("format") => return Ok(Some(Bson::Null)),
                    Some(tz) => date_string::parse_date_string(s, fmt, Some(tz)),
                },
                other => Err(err(
                    241,
                    format!(
                        "$dateFromString requires that 'dateString' be a string, found: {} with value {other}",
                        value::type_alias(other)
                    ),
                )),
            };
            match parsed {
                Ok(d) => Ok(Some(d)),
                Err(e) if e.code.code() == 241 && a.has("onError") => Ok(a.get("onError").cloned()),
                Err(e) => Err(e),
            }
        })(),
        // mongod's order for these three: the date (null gives null), the
        // other arguments in turn (each null gives null), the zone, then the
        // dates' types.
        "$dateTrunc" => (|| {
            let date = match a.get("date") {
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(v) => v,
                None => return Ok(Some(Bson::Null)),
            };
            let bin = match a.get("binSize") {
                None if !a.has("binSize") => 1,
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(b) => match value::as_i64(b) {
                    Some(n) if n > 0 => n,
                    Some(n) => {
                        return Err(err(
                            5439018,
                            format!(
                                "$dateTrunc requires 'binSize' to be greater than 0, but got value {n}"
                            ),
                        ));
                    }
                    None => {
                        return Err(err(
                            5439017,
                            format!(
                                "$dateTrunc requires 'binSize' to be a 64-bit integer, but got value '{b}' of type {}",
                                value::type_alias(b)
                            ),
                        ));
                    }
                },
                None => return Ok(Some(Bson::Null)),
            };
            if nullish(a.get("unit")) {
                return Ok(Some(Bson::Null));
            }
            let unit = Unit::parse(op, a.get("unit"))?;
            let Some(sow) = start_of_week_arg(a, unit)? else {
                return Ok(Some(Bson::Null));
            };
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let date = convert_date(op, "date", date)?;
            Ok(Some(to_bson(calendar::trunc(date, unit, bin, &tz, sow)?)))
        })(),
        "$dateAdd" | "$dateSubtract" => (|| {
            let start = match a.get("startDate") {
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(v) => v,
                None => return Ok(Some(Bson::Null)),
            };
            if nullish(a.get("unit")) {
                return Ok(Some(Bson::Null));
            }
            let unit = Unit::parse(op, a.get("unit"))?;
            let amount = match a.get("amount") {
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(v) => v,
                None => return Ok(Some(Bson::Null)),
            };
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let date = instant(start).ok_or_else(|| {
                err(
                    5166403,
                    format!("{op} requires startDate to be convertible to a date"),
                )
            })?;
            let mut amt = value::as_i64(amount)
                .filter(|_| value::is_number(amount))
                .ok_or_else(|| {
                    err(
                        5166405,
                        format!("{op} expects integer amount of time units"),
                    )
                })?;
            if op == "$dateSubtract" {
                amt = amt.checked_neg().ok_or_else(|| {
                    err(
                        6045000,
                        format!("invalid $dateSubtract 'amount' parameter value: {amt}"),
                    )
                })?;
            }
            Ok(Some(to_bson(calendar::add(op, date, unit, amt, &tz)?)))
        })(),
        "$dateDiff" => (|| {
            let (s, e) = match (a.get("startDate"), a.get("endDate")) {
                (s, _) if nullish(s) => return Ok(Some(Bson::Null)),
                (_, e) if nullish(e) => return Ok(Some(Bson::Null)),
                (Some(s), Some(e)) => (s, e),
                _ => return Ok(Some(Bson::Null)),
            };
            if nullish(a.get("unit")) {
                return Ok(Some(Bson::Null));
            }
            let unit = Unit::parse(op, a.get("unit"))?;
            let Some(sow) = start_of_week_arg(a, unit)? else {
                return Ok(Some(Bson::Null));
            };
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let (s, e) = (
                convert_date(op, "startDate", s)?,
                convert_date(op, "endDate", e)?,
            );
            Ok(Some(Bson::Int64(calendar::diff(s, e, unit, &tz, sow))))
        })(),
        "$dateToParts" => (|| {
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let iso = match a.get("iso8601") {
                None if !a.has("iso8601") => false,
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(Bson::Boolean(b)) => *b,
                other => {
                    return Err(err(
                        40521,
                        format!(
                            "iso8601 must evaluate to a bool, found {}",
                            type_name(other)
                        ),
                    ));
                }
            };
            let date = match a.get("date") {
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(v) => require_date(v)?,
                None => return Ok(Some(Bson::Null)),
            };
            let t = tz.at(date);
            let mut d = Document::new();
            if iso {
                d.insert("isoWeekYear", t.iso_week().year());
                d.insert("isoWeek", t.iso_week().week() as i32);
                d.insert("isoDayOfWeek", t.weekday().number_from_monday() as i32);
            } else {
                d.insert("year", t.year());
                d.insert("month", t.month() as i32);
                d.insert("day", t.day() as i32);
            }
            d.insert("hour", t.hour() as i32);
            d.insert("minute", t.minute() as i32);
            d.insert("second", t.second() as i32);
            d.insert("millisecond", t.timestamp_subsec_millis() as i32);
            Ok(Some(Bson::Document(d)))
        })(),
        "$dateFromParts" => (|| {
            const NATURAL: [&str; 3] = ["year", "month", "day"];
            const ISO: [&str; 3] = ["isoWeekYear", "isoWeek", "isoDayOfWeek"];
            const TIME: [&str; 5] = ["hour", "minute", "second", "millisecond", "timezone"];
            if let Some(k) = a.unknown(&[&NATURAL[..], &ISO[..], &TIME[..]].concat()) {
                return Err(err(
                    40518,
                    format!("Unrecognized argument to $dateFromParts: {k}"),
                ));
            }
            let natural = NATURAL.iter().any(|k| a.has(k));
            let iso = ISO.iter().any(|k| a.has(k));
            if natural && iso {
                return Err(err(
                    40489,
                    "$dateFromParts does not allow mixing natural dates with ISO dates",
                ));
            }
            if !a.has("year") && !a.has("isoWeekYear") {
                return Err(err(
                    40516,
                    "$dateFromParts requires either 'year' or 'isoWeekYear' to be present",
                ));
            }
            // A part: its default when not given, `None` when null; some
            // parts are bounded as in mongod.
            let get = |k: &str, default: i64, bounded: bool| -> Result<Option<i64>> {
                let n = match a.get(k) {
                    None if !a.has(k) => return Ok(Some(default)),
                    v if nullish(v) => return Ok(None),
                    Some(v) => value::as_i64(v).ok_or_else(|| {
                        err(
                            40515,
                            format!(
                                "'{k}' must evaluate to an integer, found {} with value {v}",
                                value::type_alias(v)
                            ),
                        )
                    })?,
                    None => return Ok(None),
                };
                if bounded && !(-32768..=32767).contains(&n) {
                    return Err(err(
                        31034,
                        format!(
                            "'{k}' must evaluate to a value in the range [-32768, 32767]; value {n} is not in range"
                        ),
                    ));
                }
                Ok(Some(n))
            };
            let time = [
                get("hour", 0, true)?,
                get("minute", 0, true)?,
                get("second", 0, false)?,
                get("millisecond", 0, false)?,
            ];
            let Some(time) = time.iter().copied().collect::<Option<Vec<i64>>>() else {
                return Ok(Some(Bson::Null));
            };
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let out_of_range = || err(40523, "date parts out of range");
            let midnight = if iso {
                let parts = [
                    get("isoWeekYear", 1970, false)?,
                    get("isoWeek", 1, true)?,
                    get("isoDayOfWeek", 1, true)?,
                ];
                let Some(p) = parts.iter().copied().collect::<Option<Vec<i64>>>() else {
                    return Ok(Some(Bson::Null));
                };
                if !(1..=9999).contains(&p[0]) {
                    return Err(err(
                        31095,
                        format!(
                            "'isoWeekYear' must evaluate to an integer in the range 1 to 9999, found {}",
                            p[0]
                        ),
                    ));
                }
                // Monday of ISO week 1 is the Monday on or before January 4th.
                let jan4 = NaiveDate::from_ymd_opt(p[0] as i32, 1, 4).ok_or_else(out_of_range)?;
                let week1 = jan4 - Duration::days(i64::from(jan4.weekday().num_days_from_monday()));
                week1
                    .checked_add_signed(Duration::days((p[1] - 1) * 7 + (p[2] - 1)))
                    .and_then(|d| d.and_hms_opt(0, 0, 0))
                    .ok_or_else(out_of_range)?
            } else {
                let parts = [
                    get("year", 1970, false)?,
                    get("month", 1, true)?,
                    get("day", 1, true)?,
                ];
                let Some(p) = parts.iter().copied().collect::<Option<Vec<i64>>>() else {
                    return Ok(Some(Bson::Null));
                };
                if !(1..=9999).contains(&p[0]) {
                    return Err(err(
                        40523,
                        format!(
                            "'year' must evaluate to an integer in the range 1 to 9999, found {}",
                            p[0]
                        ),
                    ));
                }
                let base = NaiveDate::from_ymd_opt(p[0] as i32, 1, 1)
                    .and_then(|d| d.and_hms_opt(0, 0, 0))
                    .ok_or_else(out_of_range)?;
                calendar::add_months(base, p[1] - 1)
                    .and_then(|n| n.checked_add_signed(Duration::days(p[2] - 1)))
                    .ok_or_else(out_of_range)?
            };
            let offset = [
                Duration::try_hours(time[0]),
                Duration::try_minutes(time[1]),
                Duration::try_seconds(time[2]),
                Duration::try_milliseconds(time[3]),
            ];
            let n = offset
                .iter()
                .try_fold(midnight, |acc, d| d.and_then(|d| acc.checked_add_signed(d)))
                .ok_or_else(out_of_range)?;
            Ok(Some(to_bson(from_local(n, &tz)?)))
        })(),
        _ => return None,
    })
}
