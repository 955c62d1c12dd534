//! Calendar arithmetic of `$dateAdd`, `$dateSubtract`, `$dateDiff` and
//! `$dateTrunc`, done as mongod does it in a time zone.
//!
//! Units of a day and more are counted on the wall clock of the zone, so
//! adding a day across a daylight-saving change keeps the local time of day
//! and the change does not shift day boundaries; hours and smaller units are
//! counted in elapsed time. Months clamp to the month's last day (January 31st
//! plus a month is February 28th or 29th). `$dateDiff` counts unit boundaries
//! crossed; `$dateTrunc` counts bins from 2000-01-01 in the zone (for weeks,
//! from the first `startOfWeek` day on or after it).

use bson::Bson;
use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, NaiveDateTime, Timelike, Utc};

use super::zone::Zone;
use super::{err, type_name};
use crate::error::Result;

/// Units of `$dateTrunc`/`$dateAdd`/`$dateDiff`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Unit {
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

const MS_PER_DAY: i64 = 86_400_000;

impl Unit {
    pub(super) fn parse(op: &str, v: Option<&Bson>) -> Result<Unit> {
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
                    format!(
                        "{op} parameter 'unit' value cannot be recognized as a time unit: {other}"
                    ),
                ));
            }
        })
    }

    /// Milliseconds of the units that are elapsed time (hour and smaller).
    fn elapsed_ms(self) -> Option<i64> {
        Some(match self {
            Unit::Hour => 3_600_000,
            Unit::Minute => 60_000,
            Unit::Second => 1000,
            Unit::Millisecond => 1,
            _ => return None,
        })
    }

    /// Months in a unit of a month or more.
    fn months(self) -> Option<i64> {
        Some(match self {
            Unit::Year => 12,
            Unit::Quarter => 3,
            Unit::Month => 1,
            _ => return None,
        })
    }
}

/// `startOfWeek`: days after Sunday of the first day of a week.
pub(super) fn parse_start_of_week(v: Option<&Bson>) -> Result<u32> {
    let Some(v) = v else {
        return Ok(0);
    };
    let Bson::String(s) = v else {
        return Err(err(
            5439015,
            format!(
                "requires 'startOfWeek' to be a string, but got {}",
                type_name(Some(v))
            ),
        ));
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

fn month_index(d: NaiveDate) -> i64 {
    i64::from(d.year()) * 12 + i64::from(d.month0())
}

pub(super) fn add_months(n: NaiveDateTime, months: i64) -> Option<NaiveDateTime> {
    if months >= 0 {
        n.checked_add_months(Months::new(u32::try_from(months).ok()?))
    } else {
        n.checked_sub_months(Months::new(u32::try_from(-months).ok()?))
    }
}

/// Days from the week's first day (`start_of_week` days after Sunday) to `d`.
fn day_in_week(d: NaiveDate, start_of_week: u32) -> i64 {
    i64::from((d.weekday().num_days_from_sunday() + 7 - start_of_week) % 7)
}

/// `$dateAdd`: `amount` units after `date` (negative: before).
pub(super) fn add(
    op: &str,
    date: DateTime<Utc>,
    unit: Unit,
    amount: i64,
    tz: &Zone,
) -> Result<DateTime<Utc>> {
    let overflow = || err(5166406, format!("{op} overflowed"));
    let elapsed = |ms: i64| {
        ms.checked_mul(amount)
            .and_then(Duration::try_milliseconds)
            .and_then(|d| date.checked_add_signed(d))
            .ok_or_else(overflow)
    };
    if let Some(ms) = unit.elapsed_ms() {
        return elapsed(ms);
    }
    let local = tz.local(date);
    let moved = match unit.months() {
        Some(m) => amount.checked_mul(m).and_then(|m| add_months(local, m)),
        None => {
            let days = if unit == Unit::Week {
                amount.checked_mul(7)
            } else {
                Some(amount)
            };
            days.and_then(Duration::try_days)
                .and_then(|d| local.checked_add_signed(d))
        }
    };
    moved.and_then(|n| tz.instant(n)).ok_or_else(overflow)
}

/// `$dateDiff`: unit boundaries crossed from `start` to `end` in the zone.
pub(super) fn diff(
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    unit: Unit,
    tz: &Zone,
    start_of_week: u32,
) -> i64 {
    if unit == Unit::Millisecond {
        return end.timestamp_millis() - start.timestamp_millis();
    }
    let (s, e) = (tz.at(start), tz.at(end));
    let (ls, le) = (s.naive_local(), e.naive_local());
    if let Some(m) = unit.months() {
        let (a, b) = (month_index(ls.date()), month_index(le.date()));
        return if m == 12 {
            i64::from(le.year()) - i64::from(ls.year())
        } else {
            b.div_euclid(m) - a.div_euclid(m)
        };
    }
    let days = (le.date() - ls.date()).num_days();
    if unit == Unit::Week {
        let shift = day_in_week(ls.date(), start_of_week) - day_in_week(le.date(), start_of_week);
        return (days + shift) / 7;
    }
    if unit == Unit::Day {
        return days;
    }
    // Wall-clock fields, corrected by the change of offset in between.
    let offset_change = i64::from(s.offset().local_minus_utc() - e.offset().local_minus_utc());
    let hours = days * 24 + i64::from(le.hour()) - i64::from(ls.hour());
    if unit == Unit::Hour {
        return hours + offset_change / 3600;
    }
    let minutes = hours * 60 + i64::from(le.minute()) - i64::from(ls.minute());
    if unit == Unit::Minute {
        return minutes + offset_change / 60;
    }
    minutes * 60 + i64::from(le.second()) - i64::from(ls.second()) + offset_change
}

/// `$dateTrunc`: the start of the `bin`-unit bin holding `date`.
pub(super) fn trunc(
    date: DateTime<Utc>,
    unit: Unit,
    bin: i64,
    tz: &Zone,
    start_of_week: u32,
) -> Result<DateTime<Utc>> {
    let overflow = || err(5439001, "dateTrunc overflowed");
    let reference_date = NaiveDate::from_ymd_opt(2000, 1, 1).ok_or_else(overflow)?;
    let reference_utc = reference_date
        .and_hms_opt(0, 0, 0)
        .ok_or_else(overflow)?
        .and_utc();
    // 2000-01-01T00:00 on the zone's clock, with the offset of that moment.
    let reference_ms = reference_utc.timestamp_millis()
        - i64::from(tz.offset_at(reference_utc).local_minus_utc()) * 1000;
    if let Some(ms) = unit.elapsed_ms() {
        let width = ms
            .checked_mul(bin)
            .ok_or_else(|| err(5439002, "dateTrunc overflowed"))?;
        let t = date.timestamp_millis();
        let since = t.checked_sub(reference_ms).ok_or_else(overflow)?;
        return DateTime::from_timestamp_millis(t - since.rem_euclid(width)).ok_or_else(overflow);
    }
    if bin > 100_000_000_000 {
        return Err(err(5439006, "dateTrunc unsupported binSize value"));
    }
    // The reference point, moved to the first day of a week for weeks.
    let (mut reference, mut ref_date) = (reference_ms, reference_date);
    if unit == Unit::Week {
        let ahead = (7 - day_in_week(reference_date, start_of_week)) % 7;
        reference += ahead * MS_PER_DAY;
        ref_date = reference_date + Duration::days(ahead);
    }
    let reference = DateTime::from_timestamp_millis(reference).ok_or_else(overflow)?;
    let local = tz.local(date).date();
    let distance = match unit {
        Unit::Day => (local - ref_date).num_days(),
        Unit::Week => {
            let days = (local - ref_date).num_days();
            (days + day_in_week(ref_date, start_of_week) - day_in_week(local, start_of_week)) / 7
        }
        _ => {
            let m = unit.months().unwrap_or(1);
            if m == 12 {
                i64::from(local.year()) - 2000
            } else {
                month_index(local).div_euclid(m) - month_index(ref_date).div_euclid(m)
            }
        }
    };
    let lower = distance - distance.rem_euclid(bin);
    add("$dateTrunc", reference, unit, lower, tz).map_err(|_| overflow())
}
