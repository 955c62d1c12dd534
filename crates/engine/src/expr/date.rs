//! Date operators, computed with chrono in UTC or a fixed offset. Olson
//! time-zone names other than UTC/GMT are not known to the engine (Partial).

use bson::{Bson, Document};
use chrono::{
    DateTime, Datelike, Duration, FixedOffset, Months, NaiveDate, NaiveDateTime, TimeZone,
    Timelike, Utc,
};

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

/// Parse a `timezone` argument: UTC/GMT/Z or a `±hh[:mm]` offset.
fn parse_tz(v: Option<&Bson>) -> Result<FixedOffset> {
    let utc = FixedOffset::east_opt(0).ok_or_else(|| err(1, "offset"))?;
    let Some(v) = v else {
        return Ok(utc);
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
    if matches!(s.as_str(), "UTC" | "GMT" | "Z" | "Etc/UTC" | "Etc/GMT") {
        return Ok(utc);
    }
    let bad = || err(40485, format!("unrecognized time zone identifier: \"{s}\""));
    let (sign, rest) = match s.chars().next() {
        Some('+') => (1, &s[1..]),
        Some('-') => (-1, &s[1..]),
        _ => return Err(bad()),
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) || !matches!(digits.len(), 2 | 4) {
        return Err(bad());
    }
    let h: i32 = digits[..2].parse().map_err(|_| bad())?;
    let m: i32 = if digits.len() == 4 {
        digits[2..].parse().map_err(|_| bad())?
    } else {
        0
    };
    FixedOffset::east_opt(sign * (h * 3600 + m * 60)).ok_or_else(bad)
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
        let tz = parse_tz(tz_arg)?;
        let t = require_date(v)?.with_timezone(&tz);
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

/// Parse a date string as `$dateFromString`/`$toDate` do: ISO 8601 forms by
/// default, or a `%`-format.
pub(crate) fn parse_date_string(
    s: &str,
    format: Option<&str>,
    tz: Option<FixedOffset>,
) -> Result<Bson> {
    let tz = match tz {
        Some(t) => t,
        None => parse_tz(None)?,
    };
    let bad = || err(241, format!("Error parsing date string '{s}'"));
    if let Some(f) = format {
        let chrono_fmt = f.replace("%L", "%3f");
        if let Ok(t) = DateTime::parse_from_str(s, &chrono_fmt) {
            return Ok(to_bson(t.with_timezone(&Utc)));
        }
        if let Ok(n) = NaiveDateTime::parse_from_str(s, &chrono_fmt) {
            return tz
                .from_local_datetime(&n)
                .single()
                .map(|t| to_bson(t.with_timezone(&Utc)))
                .ok_or_else(bad);
        }
        if let Ok(d) = NaiveDate::parse_from_str(s, &chrono_fmt) {
            let n = d.and_hms_opt(0, 0, 0).ok_or_else(bad)?;
            return tz
                .from_local_datetime(&n)
                .single()
                .map(|t| to_bson(t.with_timezone(&Utc)))
                .ok_or_else(bad);
        }
        return Err(bad());
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(to_bson(t.with_timezone(&Utc)));
    }
    for f in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%.f%z"] {
        if let Ok(t) = DateTime::parse_from_str(s, f) {
            return Ok(to_bson(t.with_timezone(&Utc)));
        }
    }
    let trimmed = s.strip_suffix('Z').unwrap_or(s);
    let explicit_utc = trimmed.len() != s.len();
    let zone = if explicit_utc { parse_tz(None)? } else { tz };
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(trimmed, f) {
            return zone
                .from_local_datetime(&n)
                .single()
                .map(|t| to_bson(t.with_timezone(&Utc)))
                .ok_or_else(bad);
        }
    }
    for f in ["%Y-%m-%d", "%Y/%m/%d", "%B %d, %Y", "%b %d %Y"] {
        if let Ok(d) = NaiveDate::parse_from_str(trimmed, f) {
            let n = d.and_hms_opt(0, 0, 0).ok_or_else(bad)?;
            return zone
                .from_local_datetime(&n)
                .single()
                .map(|t| to_bson(t.with_timezone(&Utc)))
                .ok_or_else(bad);
        }
    }
    Err(bad())
}

/// Units of `$dateTrunc`/`$dateAdd`/`$dateDiff`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
}

fn parse_unit(op: &str, v: Option<&Bson>) -> Result<Unit> {
    let Some(Bson::String(s)) = v else {
        return Err(err(
            5439013,
            format!(
                "{op} requires 'unit' to be a string, but got {}",
                type_name(v)
            ),
        ));
    };
    Ok(match s.as_str() {
        "year" => Unit::Year,
        "quarter" => Unit::Quarter,
        "month" => Unit::Month,
        "week" => Unit::Week,
        "day" => Unit::Day,
        "hour" => Unit::Hour,
        "minute" => Unit::Minute,
        "second" => Unit::Second,
        "millisecond" => Unit::Millisecond,
        other => {
            return Err(err(
                5439014,
                format!("{op} parameter 'unit' value cannot be recognized as a time unit: {other}"),
            ));
        }
    })
}

fn fixed_ms(unit: Unit) -> Option<i64> {
    Some(match unit {
        Unit::Week => 7 * 86_400_000,
        Unit::Day => 86_400_000,
        Unit::Hour => 3_600_000,
        Unit::Minute => 60_000,
        Unit::Second => 1000,
        Unit::Millisecond => 1,
        _ => return None,
    })
}

fn months_of(unit: Unit) -> i64 {
    match unit {
        Unit::Year => 12,
        Unit::Quarter => 3,
        _ => 1,
    }
}

fn parse_start_of_week(v: Option<&Bson>) -> Result<u32> {
    let Some(v) = v else {
        return Ok(0);
    };
    let Bson::String(s) = v else {
        return Err(err(5439015, "startOfWeek must be a string"));
    };
    let days = [
        "sunday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
    ];
    let lower = s.to_lowercase();
    days.iter()
        .position(|d| *d == lower || d[..3] == lower)
        .map(|p| p as u32)
        .ok_or_else(|| {
            err(
                5439016,
                format!("startOfWeek parameter value cannot be recognized as a day of a week: {s}"),
            )
        })
}

fn local(t: DateTime<Utc>, tz: &FixedOffset) -> NaiveDateTime {
    t.with_timezone(tz).naive_local()
}

fn from_local(n: NaiveDateTime, tz: &FixedOffset) -> Result<DateTime<Utc>> {
    tz.from_local_datetime(&n)
        .single()
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(|| err(1, "date out of range"))
}

/// Start of the unit containing `n`, in local time.
fn unit_start(n: NaiveDateTime, unit: Unit, start_of_week: u32) -> NaiveDateTime {
    let date = n.date();
    let midnight = |d: NaiveDate| d.and_hms_opt(0, 0, 0).unwrap_or(n);
    match unit {
        Unit::Year => NaiveDate::from_ymd_opt(date.year(), 1, 1).map_or(n, midnight),
        Unit::Quarter => {
            NaiveDate::from_ymd_opt(date.year(), (date.month0() / 3) * 3 + 1, 1).map_or(n, midnight)
        }
        Unit::Month => NaiveDate::from_ymd_opt(date.year(), date.month(), 1).map_or(n, midnight),
        Unit::Week => {
            let dow = date.weekday().num_days_from_sunday();
            let back = (dow + 7 - start_of_week) % 7;
            midnight(date - Duration::days(i64::from(back)))
        }
        Unit::Day => midnight(date),
        Unit::Hour => n
            .with_minute(0)
            .and_then(|x| x.with_second(0))
            .and_then(|x| x.with_nanosecond(0))
            .unwrap_or(n),
        Unit::Minute => n
            .with_second(0)
            .and_then(|x| x.with_nanosecond(0))
            .unwrap_or(n),
        Unit::Second => n.with_nanosecond(0).unwrap_or(n),
        Unit::Millisecond => n,
    }
}

fn month_index(n: NaiveDateTime) -> i64 {
    i64::from(n.year()) * 12 + i64::from(n.month0())
}

fn add_months(n: NaiveDateTime, months: i64) -> Option<NaiveDateTime> {
    if months >= 0 {
        n.checked_add_months(Months::new(u32::try_from(months).ok()?))
    } else {
        n.checked_sub_months(Months::new(u32::try_from(-months).ok()?))
    }
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
            let date = match a.get("date") {
                v if nullish(v) => {
                    return Ok(if a.has("onNull") {
                        a.get("onNull").cloned()
                    } else {
                        Some(Bson::Null)
                    });
                }
                Some(v) => require_date(v)?,
                None => return Ok(Some(Bson::Null)),
            };
            if a.has("timezone") && nullish(a.get("timezone")) {
                return Ok(Some(Bson::Null));
            }
            let tz = parse_tz(a.get("timezone"))?;
            let fmt = match a.get("format") {
                None if !a.has("format") => "%Y-%m-%dT%H:%M:%S.%LZ".to_string(),
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(Bson::String(f)) => f.clone(),
                Some(other) => {
                    return Err(err(
                        18533,
                        format!(
                            "$dateToString requires that 'format' be a string, found: {} with value {other}",
                            value::type_alias(other)
                        ),
                    ));
                }
                None => return Ok(Some(Bson::Null)),
            };
            Ok(Some(Bson::String(format_date(
                &date.with_timezone(&tz),
                &fmt,
            )?)))
        })(),
        "$dateFromString" => (|| {
            if let Some(k) = a.unknown(&["dateString", "format", "timezone", "onError", "onNull"]) {
                return Err(err(
                    40541,
                    format!("Unrecognized argument to $dateFromString: {k}"),
                ));
            }
            let s = match a.get("dateString") {
                v if nullish(v) => {
                    return Ok(if a.has("onNull") {
                        a.get("onNull").cloned()
                    } else {
                        Some(Bson::Null)
                    });
                }
                Some(Bson::String(s)) => s.clone(),
                Some(other) => {
                    if a.has("onError") {
                        return Ok(a.get("onError").cloned());
                    }
                    return Err(err(
                        241,
                        format!(
                            "$dateFromString requires that 'dateString' be a string, found: {} with value {other}",
                            value::type_alias(other)
                        ),
                    ));
                }
                None => return Ok(Some(Bson::Null)),
            };
            let tz = if a.has("timezone") {
                Some(parse_tz(a.get("timezone"))?)
            } else {
                None
            };
            let fmt = match a.get("format") {
                Some(Bson::String(f)) => Some(f.as_str()),
                _ => None,
            };
            match parse_date_string(&s, fmt, tz) {
                Ok(d) => Ok(Some(d)),
                Err(_) if a.has("onError") => Ok(a.get("onError").cloned()),
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
            let unit = parse_unit(op, a.get("unit"))?;
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
            let tz = parse_tz(a.get("timezone"))?;
            let sow = parse_start_of_week(a.get("startOfWeek"))?;
            let n = local(date, &tz);
            let out = match fixed_ms(unit) {
                Some(ms) if bin == 1 || unit == Unit::Millisecond => {
                    if ms == 1 {
                        let total = n.and_utc().timestamp_millis();
                        let floor = total.div_euclid(bin) * bin;
                        DateTime::from_timestamp_millis(floor).map_or(n, |t| t.naive_utc())
                    } else {
                        unit_start(n, unit, sow)
                    }
                }
                Some(ms) => {
                    // Bins count from the 2000-01-01 reference, as in mongod.
                    let anchor = NaiveDate::from_ymd_opt(2000, 1, 1)
                        .and_then(|d| d.and_hms_opt(0, 0, 0))
                        .ok_or_else(|| err(1, "anchor"))?;
                    let anchor = if unit == Unit::Week {
                        unit_start(anchor, Unit::Week, sow)
                    } else {
                        anchor
                    };
                    let width = ms.saturating_mul(bin);
                    let since = (n - anchor).num_milliseconds();
                    Duration::try_milliseconds(since.div_euclid(width).saturating_mul(width))
                        .and_then(|d| anchor.checked_add_signed(d))
                        .ok_or_else(|| err(5439018, "$dateTrunc overflowed"))?
                }
                None => {
                    let width = months_of(unit).saturating_mul(bin);
                    let since = month_index(n) - 2000 * 12;
                    let m = since
                        .div_euclid(width)
                        .saturating_mul(width)
                        .saturating_add(2000 * 12);
                    NaiveDate::from_ymd_opt(
                        (m.div_euclid(12)) as i32,
                        (m.rem_euclid(12) + 1) as u32,
                        1,
                    )
                    .and_then(|d| d.and_hms_opt(0, 0, 0))
                    .unwrap_or(n)
                }
            };
            Ok(Some(to_bson(from_local(out, &tz)?)))
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
            let unit = parse_unit(op, a.get("unit"))?;
            let mut amt = amount(op, a.get("amount"), "amount")?;
            if op == "$dateSubtract" {
                amt = -amt;
            }
            let tz = parse_tz(a.get("timezone"))?;
            let out = match fixed_ms(unit) {
                Some(ms) => Duration::try_milliseconds(ms.saturating_mul(amt))
                    .and_then(|d| date.checked_add_signed(d))
                    .ok_or_else(|| err(5166406, format!("{op} overflowed")))?,
                None => {
                    let n = local(date, &tz);
                    let moved = add_months(n, amt.saturating_mul(months_of(unit)))
                        .ok_or_else(|| err(5166406, format!("{op} overflowed")))?;
                    from_local(moved, &tz)?
                }
            };
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
            let unit = parse_unit(op, a.get("unit"))?;
            let tz = parse_tz(a.get("timezone"))?;
            let sow = parse_start_of_week(a.get("startOfWeek"))?;
            let (ls, le) = (local(s, &tz), local(e, &tz));
            let diff = match unit {
                Unit::Year | Unit::Quarter | Unit::Month => {
                    (month_index(le).div_euclid(months_of(unit)))
                        - (month_index(ls).div_euclid(months_of(unit)))
                }
                Unit::Millisecond => (e - s).num_milliseconds(),
                other => {
                    let ms = fixed_ms(other).unwrap_or(1);
                    let a0 = unit_start(ls, other, sow);
                    let b0 = unit_start(le, other, sow);
                    (b0 - a0).num_milliseconds().div_euclid(ms)
                }
            };
            Ok(Some(Bson::Int64(diff)))
        })(),
        "$dateToParts" => (|| {
            let date = match a.get("date") {
                v if nullish(v) => return Ok(Some(Bson::Null)),
                Some(v) => require_date(v)?,
                None => return Ok(Some(Bson::Null)),
            };
            let tz = parse_tz(a.get("timezone"))?;
            let t = date.with_timezone(&tz);
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
            let tz = parse_tz(a.get("timezone"))?;
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
            let n = add_months(base, p[1].saturating_sub(1))
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
