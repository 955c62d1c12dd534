//! The date strings `ISODate(…)` accepts: ISO 8601 with or without a time,
//! a fraction and an offset (no offset means UTC, as in mongosh).

/// Parse a date string, or `None` when it is not one `ISODate` accepts.
pub fn parse_date(s: &str) -> Option<bson::DateTime> {
    let t = s.trim();
    if let Ok(d) = chrono::DateTime::parse_from_rfc3339(t) {
        return Some(bson::DateTime::from_millis(d.timestamp_millis()));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%#z",
        "%Y-%m-%d %H:%M:%S%.f%#z",
        "%Y-%m-%dT%H:%M%#z",
    ] {
        if let Ok(d) = chrono::DateTime::parse_from_str(t, fmt) {
            return Some(bson::DateTime::from_millis(d.timestamp_millis()));
        }
    }
    let naive = t.strip_suffix('Z').unwrap_or(t);
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(d) = chrono::NaiveDateTime::parse_from_str(naive, fmt) {
            return Some(bson::DateTime::from_millis(d.and_utc().timestamp_millis()));
        }
    }
    let d = chrono::NaiveDate::parse_from_str(naive, "%Y-%m-%d").ok()?;
    let dt = d.and_hms_opt(0, 0, 0)?;
    Some(bson::DateTime::from_millis(dt.and_utc().timestamp_millis()))
}

#[cfg(test)]
mod tests {
    use super::parse_date;

    #[test]
    fn iso_forms() {
        let ms = |s| parse_date(s).map(|d| d.timestamp_millis());
        assert_eq!(ms("2024-01-02T03:04:05Z"), Some(1_704_164_645_000));
        assert_eq!(ms("2024-01-02"), Some(1_704_153_600_000));
        assert_eq!(ms("2024-01-02T04:04:05+01:00"), Some(1_704_164_645_000));
        assert_eq!(ms("yesterday"), None);
    }
}
