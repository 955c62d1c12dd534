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
        let tz_arg = vals.get(1).and_then(|t| t.as_ref());
        if vals.len() > 1 && nullish(tz_arg) {
            return Ok(Some(Bson::Null));
        }
        let tz = Zone::parse(tz_arg)?;
        let t = tz.at(require_date(v)?);
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

fn amount(op: &str, v: Option<&Bson>, key: &str) -> Result<i64> {
    match v {
        Some(b) if value::is_number(b) => value::as_i64(b)
            .ok_or_else(|| err(5166402, format!("{op} expects integer {key}, found {b}"))),
        other => Err(err(
            5166403,
            format!("{op} expects integer {key}, found {}", type_name(other)),
        )),
    }
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
        "$dateTrunc" => (|| {
            let date = match a.get("date") {
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(v) => require_date(v)?,
                None => return Ok(Some(Bson::Null)),
            };
            if nullish(a.get("unit")) {
                return Ok(Some(Bson::Null));
            }
            let unit = Unit::parse(op, a.get("unit"))?;
            let bin = match a.get("binSize") {
                None => 1,
                Some(b) => match value::as_i64(b) {
                    Some(n) if n > 0 => n,
                    _ => {
                        return Err(err(
                            5439017,
                            "$dateTrunc requires 'binSize' to be a positive 64-bit integer",
                        ));
                    }
                },
            };
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let sow = calendar::parse_start_of_week(a.get("startOfWeek"))?;
            Ok(Some(to_bson(calendar::trunc(date, unit, bin, &tz, sow)?)))
        })(),
        "$dateAdd" | "$dateSubtract" => (|| {
            let date = match a.get("startDate") {
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(v) => require_date(v)?,
                None => return Ok(Some(Bson::Null)),
            };
            if nullish(a.get("unit")) || nullish(a.get("amount")) {
                return Ok(Some(Bson::Null));
            }
            let unit = Unit::parse(op, a.get("unit"))?;
            let mut amt = amount(op, a.get("amount"), "amount")?;
            if op == "$dateSubtract" {
                amt = -amt;
            }
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let out = calendar::add(op, date, unit, amt, &tz)?;
            Ok(Some(to_bson(out)))
        })(),
        "$dateDiff" => (|| {
            let (Some(s), Some(e)) = (a.get("startDate"), a.get("endDate")) else {
                return Ok(Some(Bson::Null));
            };
            if nullish(Some(s)) || nullish(Some(e)) || nullish(a.get("unit")) {
                return Ok(Some(Bson::Null));
            }
            let (s, e) = (require_date(s)?, require_date(e)?);
            let unit = Unit::parse(op, a.get("unit"))?;
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let sow = calendar::parse_start_of_week(a.get("startOfWeek"))?;
            let diff = calendar::diff(s, e, unit, &tz, sow);
            Ok(Some(Bson::Int64(diff)))
        })(),
        "$dateToParts" => (|| {
            let date = match a.get("date") {
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(v) => require_date(v)?,
                None => return Ok(Some(Bson::Null)),
            };
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let t = tz.at(date);
            let iso = matches!(a.get("iso8601"), Some(Bson::Boolean(true)));
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
            let get = |k: &str, default: i64| -> Result<Option<i64>> {
                match a.get(k) {
                    None if !a.has(k) => Ok(Some(default)),
                    v if nullish(v) => Ok(None),
                    Some(v) => value::as_i64(v).map(Some).ok_or_else(|| {
                        err(
                            40515,
                            format!(
                                "'{k}' must evaluate to an integer, found {} with value {v}",
                                value::type_alias(v)
                            ),
                        )
                    }),
                    None => Ok(None),
                }
            };
            let parts = [
                get("year", 1970)?,
                get("month", 1)?,
                get("day", 1)?,
                get("hour", 0)?,
                get("minute", 0)?,
                get("second", 0)?,
                get("millisecond", 0)?,
            ];
            let Some(p) = parts.iter().copied().collect::<Option<Vec<i64>>>() else {
                return Ok(Some(Bson::Null));
            };
            let Some(tz) = zone_arg(a)? else {
                return Ok(Some(Bson::Null));
            };
            let base = NaiveDate::from_ymd_opt(p[0] as i32, 1, 1)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .ok_or_else(|| {
                    err(
                        40523,
                        "'year' must evaluate to an integer in the range 1 to 9999",
                    )
                })?;
            let offset = [
                Duration::try_days(p[2].saturating_sub(1)),
                Duration::try_hours(p[3]),
                Duration::try_minutes(p[4]),
                Duration::try_seconds(p[5]),
                Duration::try_milliseconds(p[6]),
            ];
            let n = calendar::add_months(base, p[1].saturating_sub(1))
                .and_then(|n| {
                    offset
                        .iter()
                        .try_fold(n, |acc, d| d.and_then(|d| acc.checked_add_signed(d)))
                })
                .ok_or_else(|| err(40523, "date parts out of range"))?;
            Ok(Some(to_bson(from_local(n, &tz)?)))
        })(),
        _ => return None,
    })
}
