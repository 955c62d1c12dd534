//! Type operators: `$type`, `$isNumber`, `$convert` and its `$toX` shorthands.
//! A failed conversion is `ConversionFailure` (241) unless `onError` is given.

use bson::{Bson, oid::ObjectId};

use super::arith::dec_from_f64;
use super::{NamedVals, err, nullish};
use crate::error::{EngineError, Result};
use crate::value;

const CONVERSION_FAILURE: i32 = 241;

fn fail(msg: String) -> EngineError {
    err(CONVERSION_FAILURE, msg)
}

/// Format a double as mongod's `$toString` does.
fn double_text(d: f64) -> String {
    if d.is_nan() {
        "NaN".to_string()
    } else if d.is_infinite() {
        if d > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else if d == d.trunc() && d.abs() < 1e15 {
        format!("{}", d as i64)
    } else {
        format!("{d}")
    }
}

fn date_text(d: &bson::DateTime) -> String {
    let ms = d.timestamp_millis();
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => ms.to_string(),
    }
}

/// The string form `$toString` gives a value, if it has one.
pub(crate) fn to_string_value(v: &Bson) -> Option<String> {
    Some(match v {
        Bson::String(s) => s.clone(),
        Bson::Int32(i) => i.to_string(),
        Bson::Int64(i) => i.to_string(),
        Bson::Double(d) => double_text(*d),
        Bson::Decimal128(d) => d.to_string(),
        Bson::Boolean(b) => b.to_string(),
        Bson::ObjectId(o) => o.to_hex(),
        Bson::DateTime(d) => date_text(d),
        _ => return None,
    })
}

fn parse_number_text(s: &str, target: &str) -> Result<Bson> {
    let bad = || {
        fail(format!(
            "Failed to parse number '{s}' in $convert with no onError value: Did not consume whole string."
        ))
    };
    match target {
        "int" => s.parse::<i32>().map(Bson::Int32).map_err(|_| bad()),
        "long" => s.parse::<i64>().map(Bson::Int64).map_err(|_| bad()),
        "double" => s.trim().parse::<f64>().map(Bson::Double).map_err(|_| bad()),
        _ => s
            .parse::<bson::Decimal128>()
            .map(Bson::Decimal128)
            .map_err(|_| bad()),
    }
}

fn type_of_target(t: &Bson) -> Result<&'static str> {
    let name = match t {
        Bson::String(s) => s.as_str(),
        n if value::is_number(n) => match value::as_i64(n) {
            Some(1) => "double",
            Some(2) => "string",
            Some(7) => "objectId",
            Some(8) => "bool",
            Some(9) => "date",
            Some(16) => "int",
            Some(18) => "long",
            Some(19) => "decimal",
            Some(other) => {
                return Err(err(2, format!("Unsupported conversion to type {other}")));
            }
            None => "",
        },
        _ => "",
    };
    Ok(match name {
        "double" => "double",
        "string" => "string",
        "objectId" => "objectId",
        "bool" => "bool",
        "date" => "date",
        "int" => "int",
        "long" => "long",
        "decimal" => "decimal",
        other => {
            return Err(err(2, format!("Unknown type name: {other}")));
        }
    })
}

fn unsupported(from: &Bson, to: &str) -> EngineError {
    fail(format!(
        "Unsupported conversion from {} to {to} in $convert with no onError value",
        value::type_alias(from)
    ))
}

/// Convert a present, non-null value to the target type.
pub(crate) fn convert_to(v: &Bson, to: &str) -> Result<Bson> {
    match to {
        "string" => to_string_value(v)
            .map(Bson::String)
            .ok_or_else(|| unsupported(v, to)),
        "bool" => Ok(Bson::Boolean(match v {
            Bson::Boolean(b) => *b,
            n if value::is_number(n) => value::as_f64(n).is_some_and(|f| f != 0.0),
            _ => true,
        })),
        "int" | "long" => {
            let out = match v {
                Bson::Boolean(b) => i64::from(*b),
                Bson::String(s) => return parse_number_text(s, to),
                Bson::DateTime(d) if to == "long" => d.timestamp_millis(),
                Bson::Int32(i) => i64::from(*i),
                Bson::Int64(i) => *i,
                Bson::Double(_) | Bson::Decimal128(_) => {
                    let f = value::as_f64(v).unwrap_or(f64::NAN);
                    if !f.is_finite() {
                        return Err(fail("Attempt to convert NaN value to integer in $convert with no onError value".to_string()));
                    }
                    let t = f.trunc();
                    if !(-9.2e18..=9.2e18).contains(&t) {
                        return Err(fail(format!(
                            "Conversion would overflow target type in $convert with no onError value: {f}"
                        )));
                    }
                    t as i64
                }
                _ => return Err(unsupported(v, to)),
            };
            if to == "int" {
                i32::try_from(out).map(Bson::Int32).map_err(|_| {
                    fail(format!(
                        "Conversion would overflow target type in $convert with no onError value: {v}"
                    ))
                })
            } else {
                Ok(Bson::Int64(out))
            }
        }
        "double" => match v {
            Bson::Boolean(b) => Ok(Bson::Double(if *b { 1.0 } else { 0.0 })),
            Bson::String(s) => parse_number_text(s, to),
            Bson::DateTime(d) => Ok(Bson::Double(d.timestamp_millis() as f64)),
            n if value::is_number(n) => Ok(Bson::Double(value::as_f64(n).unwrap_or(f64::NAN))),
            _ => Err(unsupported(v, to)),
        },
        "decimal" => match v {
            Bson::Boolean(b) => Ok(dec_from_f64(if *b { 1.0 } else { 0.0 })),
            Bson::String(s) => parse_number_text(s, to),
            Bson::Decimal128(_) => Ok(v.clone()),
            Bson::Int32(i) => Ok(dec_from_f64(f64::from(*i))),
            Bson::Int64(i) => i
                .to_string()
                .parse::<bson::Decimal128>()
                .map(Bson::Decimal128)
                .map_err(|_| unsupported(v, to)),
            Bson::Double(d) => Ok(dec_from_f64(*d)),
            Bson::DateTime(d) => Ok(dec_from_f64(d.timestamp_millis() as f64)),
            _ => Err(unsupported(v, to)),
        },
        "date" => match v {
            Bson::DateTime(_) => Ok(v.clone()),
            Bson::Int64(i) => Ok(Bson::DateTime(bson::DateTime::from_millis(*i))),
            Bson::Double(_) | Bson::Decimal128(_) => Ok(Bson::DateTime(
                bson::DateTime::from_millis(value::as_f64(v).unwrap_or(0.0) as i64),
            )),
            Bson::ObjectId(o) => Ok(Bson::DateTime(o.timestamp())),
            Bson::Timestamp(t) => Ok(Bson::DateTime(bson::DateTime::from_millis(
                i64::from(t.time) * 1000,
            ))),
            Bson::String(s) => super::date_string::parse_date_string(s, None, None).map_err(|e| {
                fail(format!("{} in $convert with no onError value", e.message))
            }),
            _ => Err(unsupported(v, to)),
        },
        "objectId" => match v {
            Bson::ObjectId(_) => Ok(v.clone()),
            Bson::String(s) => ObjectId::parse_str(s).map(Bson::ObjectId).map_err(|_| {
                fail(format!(
                    "Failed to parse objectId '{s}' in $convert with no onError value: Invalid string length for parsing to OID, expected 24 but found {}",
                    s.len()
                ))
            }),
            _ => Err(unsupported(v, to)),
        },
        _ => Err(unsupported(v, to)),
    }
}

pub(super) fn call(op: &str, vals: &[Option<Bson>]) -> Option<Result<Option<Bson>>> {
    let target = match op {
        "$type" => {
            return Some(Ok(Some(Bson::String(
                vals[0]
                    .as_ref()
                    .map_or("missing", value::type_alias)
                    .to_string(),
            ))));
        }
        "$isNumber" => {
            return Some(Ok(Some(Bson::Boolean(
                vals[0].as_ref().is_some_and(value::is_number),
            ))));
        }
        "$toString" => "string",
        "$toInt" => "int",
        "$toLong" => "long",
        "$toDouble" => "double",
        "$toDecimal" => "decimal",
        "$toBool" => "bool",
        "$toDate" => "date",
        "$toObjectId" => "objectId",
        _ => return None,
    };
    Some(match &vals[0] {
        v if nullish(v.as_ref()) => Ok(Some(Bson::Null)),
        Some(v) => convert_to(v, target).map(Some),
        None => Ok(Some(Bson::Null)),
    })
}

pub(super) fn call_named(op: &str, a: &NamedVals) -> Option<Result<Option<Bson>>> {
    if op != "$convert" {
        return None;
    }
    Some((|| {
        if let Some(k) = a.unknown(&["input", "to", "onError", "onNull"]) {
            return Err(err(9, format!("$convert found an unknown argument: {k}")));
        }
        if !a.has("input") {
            return Err(err(9, "Missing 'input' parameter to $convert"));
        }
        let to = match a.get("to") {
            None if !a.has("to") => {
                return Err(err(9, "Missing 'to' parameter to $convert"));
            }
            v if nullish(v) => return Ok(Some(Bson::Null)),
            Some(t) => type_of_target(t)?,
            None => return Ok(Some(Bson::Null)),
        };
        match a.get("input") {
            v if nullish(v) => Ok(if a.has("onNull") {
                a.get("onNull").cloned()
            } else {
                Some(Bson::Null)
            }),
            Some(v) => match convert_to(v, to) {
                Ok(r) => Ok(Some(r)),
                Err(e) if a.has("onError") && e.code.0 == CONVERSION_FAILURE => {
                    Ok(a.get("onError").cloned())
                }
                Err(e) => Err(e),
            },
            None => Ok(Some(Bson::Null)),
        }
    })())
}
