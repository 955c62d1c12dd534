//! Global helpers (`ObjectId`, `ISODate`, `print` …) and the few methods the
//! dialect offers on plain values (`d.getTime()`, `id.getTimestamp()` …).

use bson::{Binary, Bson, Decimal128, oid::ObjectId, spec::BinarySubtype};

use super::{Args, Output, R, Value, as_f64, bson_type_name, js_number, js_string, type_err};
use crate::dialect::print::{inspect, iso_string};
use crate::dialect::suggest::suggest;
use crate::dialect::{DialectError, Pos};
use crate::locale::Message;

const HELPERS: &[&str] = &[
    "print",
    "printjson",
    "console.log",
    "ObjectId",
    "ISODate",
    "Date",
    "Date.now",
    "NumberInt",
    "NumberLong",
    "NumberDecimal",
    "Int32",
    "Long",
    "Double",
    "Decimal128",
    "UUID",
    "Timestamp",
    "MinKey",
    "MaxKey",
    "Object.bsonsize",
    "Object.keys",
    "bsonsize",
    "RegExp",
];

/// Call a global helper by its (possibly dotted) name.
pub(super) fn call_global(
    name: &str,
    args: Vec<(Value, Pos)>,
    pos: Pos,
    out: &mut Vec<Output>,
) -> R<Value> {
    let mut a = Args::new(args, pos, format!("{name}()"));
    let v = match name {
        "print" | "console.log" => {
            let parts: Vec<String> = a
                .rest()
                .into_iter()
                .map(|(v, _)| match v {
                    Value::Bson(Bson::String(s)) => s,
                    Value::Bson(b) => inspect(&b),
                    other => other.render(),
                })
                .collect();
            out.push(Output::Print(parts.join(" ")));
            Value::Bson(Bson::Undefined)
        }
        "printjson" => {
            let parts: Vec<String> = a
                .rest()
                .into_iter()
                .map(|(v, _)| match v {
                    Value::Bson(b) => crate::dialect::print::inspect_expanded(&b),
                    other => other.render(),
                })
                .collect();
            out.push(Output::Print(parts.join(" ")));
            Value::Bson(Bson::Undefined)
        }
        "ObjectId" => match a.opt_bson() {
            None | Some((Bson::Undefined, _)) => Value::Bson(Bson::ObjectId(ObjectId::new())),
            Some((Bson::String(s), p)) => match ObjectId::parse_str(&s) {
                Ok(o) => Value::Bson(Bson::ObjectId(o)),
                Err(_) => {
                    return Err(type_err(
                        "ObjectId() takes a 24-character hex string (or nothing for a new id)",
                        p,
                    ));
                }
            },
            Some((Bson::ObjectId(o), _)) => Value::Bson(Bson::ObjectId(o)),
            Some((b, p)) => {
                return Err(type_err(
                    Message::new("ObjectId() cannot take a {type}").arg("type", bson_type_name(&b)),
                    p,
                ));
            }
        },
        "ISODate" => match a.opt_bson() {
            None | Some((Bson::Undefined, _)) => Value::Bson(Bson::DateTime(bson::DateTime::now())),
            Some((Bson::String(s), p)) => Value::Bson(Bson::DateTime(parse_date(&s, p)?)),
            Some((b, p)) => Value::Bson(Bson::DateTime(date_from_bson(&b, p)?)),
        },
        "Date.now" => Value::Bson(Bson::Double(bson::DateTime::now().timestamp_millis() as f64)),
        "Date" => {
            return Err(DialectError::unsupported(
                "Date() without 'new' (it returns a string); use new Date()",
                pos,
            ));
        }
        "NumberInt" | "Int32" => {
            let n = number_or_string(&mut a, "value")?;
            Value::Bson(Bson::Int32(n.trunc() as i32))
        }
        "Double" => Value::Bson(Bson::Double(number_or_string(&mut a, "value")?)),
        "NumberLong" | "Long" => match a.value("value")? {
            (Value::Bson(Bson::String(s)), p) => match s.trim().parse::<i64>() {
                Ok(i) => Value::Bson(Bson::Int64(i)),
                Err(_) => {
                    return Err(type_err(
                        Message::new("invalid Long string '{s}'").arg("s", s),
                        p,
                    ));
                }
            },
            (Value::Bson(b), p) => match as_f64(&b) {
                Some(n) => Value::Bson(Bson::Int64(n.trunc() as i64)),
                None => {
                    return Err(type_err(
                        Message::new("{name}() cannot take a {type}")
                            .arg("name", name)
                            .arg("type", bson_type_name(&b)),
                        p,
                    ));
                }
            },
            (v, p) => {
                return Err(type_err(
                    Message::new("{name}() cannot take a {type}")
                        .arg("name", name)
                        .arg("type", v.type_name()),
                    p,
                ));
            }
        },
        "NumberDecimal" | "Decimal128" => {
            let (v, p) = a.value("value")?;
            let s = match v {
                Value::Bson(Bson::String(s)) => s,
                Value::Bson(b) if as_f64(&b).is_some() => js_string(&Value::Bson(b)),
                other => {
                    return Err(type_err(
                        Message::new("{name}() cannot take a {type}")
                            .arg("name", name)
                            .arg("type", other.type_name()),
                        p,
                    ));
                }
            };
            match s.trim().parse::<Decimal128>() {
                Ok(d) => Value::Bson(Bson::Decimal128(d)),
                Err(_) => {
                    return Err(type_err(
                        Message::new("invalid Decimal128 string '{s}'").arg("s", s),
                        p,
                    ));
                }
            }
        }
        "UUID" => match a.opt_bson() {
            None => Value::Bson(uuid_bson(bson::Uuid::new())),
            Some((Bson::String(s), p)) => match bson::Uuid::parse_str(&s) {
                Ok(u) => Value::Bson(uuid_bson(u)),
                Err(_) => {
                    return Err(type_err(
                        Message::new("invalid UUID string '{s}'").arg("s", s),
                        p,
                    ));
                }
            },
            Some((b, p)) => {
                return Err(type_err(
                    Message::new("UUID() cannot take a {type}").arg("type", bson_type_name(&b)),
                    p,
                ));
            }
        },
        "Timestamp" => {
            let (t, i) = match a.opt_bson() {
                None => (0.0, 0.0),
                Some((Bson::Document(d), _)) => (
                    d.get("t").and_then(as_f64).unwrap_or(0.0),
                    d.get("i").and_then(as_f64).unwrap_or(0.0),
                ),
                Some((b, p)) => {
                    let t = as_f64(&b)
                        .ok_or_else(|| type_err("Timestamp() takes { t, i } or two numbers", p))?;
                    (t, a.number("increment").unwrap_or(0.0))
                }
            };
            Value::Bson(Bson::Timestamp(bson::Timestamp {
                time: t as u32,
                increment: i as u32,
            }))
        }
        "MinKey" => Value::Bson(Bson::MinKey),
        "MaxKey" => Value::Bson(Bson::MaxKey),
        "bsonsize" | "Object.bsonsize" => {
            let d = a.doc("document")?;
            let bytes = bson::to_vec(&d)
                .map_err(|e| type_err(Message::new("cannot encode: {e}").arg("e", e), pos))?;
            Value::Bson(js_number(bytes.len() as f64))
        }
        "Object.keys" => {
            let d = a.doc("object")?;
            Value::Bson(Bson::Array(
                d.keys().map(|k| Bson::String(k.clone())).collect(),
            ))
        }
        "RegExp" => {
            let pattern = a.string("pattern")?;
            let flags = match a.opt_bson() {
                Some((Bson::String(f), _)) => f,
                _ => String::new(),
            };
            Value::Bson(Bson::RegularExpression(bson::Regex {
                pattern,
                options: super::sorted_flags(&flags),
            }))
        }
        other => {
            return Err(DialectError::Type {
                message: Message::new("{other} is not a function").arg("other", other),
                suggestion: suggest(other, HELPERS.iter().copied()),
                pos: Some(pos),
            });
        }
    };
    a.done()?;
    Ok(v)
}

fn uuid_bson(u: bson::Uuid) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Uuid,
        bytes: u.bytes().to_vec(),
    })
}

fn number_or_string(a: &mut Args, name: &str) -> R<f64> {
    match a.value(name)? {
        (Value::Bson(Bson::String(s)), p) => s
            .trim()
            .parse::<f64>()
            .map_err(|_| type_err(Message::new("invalid number string '{s}'").arg("s", s), p)),
        (Value::Bson(b), p) => as_f64(&b).ok_or_else(|| {
            type_err(
                Message::new("expected a number, not {type}").arg("type", bson_type_name(&b)),
                p,
            )
        }),
        (v, p) => Err(type_err(
            Message::new("expected a number, not {type}").arg("type", v.type_name()),
            p,
        )),
    }
}

fn date_from_bson(b: &Bson, p: Pos) -> R<bson::DateTime> {
    match b {
        Bson::DateTime(d) => Ok(*d),
        Bson::String(s) => parse_date(s, p),
        other => match as_f64(other) {
            Some(ms) if ms.is_finite() => Ok(bson::DateTime::from_millis(ms as i64)),
            _ => Err(type_err(
                Message::new("cannot make a date from a {type}").arg("type", bson_type_name(other)),
                p,
            )),
        },
    }
}

/// `new Date(…)`: now, milliseconds, a date string, or (UTC!) components.
pub(super) fn new_date(args: &[(Value, Pos)], pos: Pos) -> R<bson::DateTime> {
    match args {
        [] => Ok(bson::DateTime::now()),
        [(Value::Bson(b), p)] => date_from_bson(b, *p),
        many if many.len() <= 7 => {
            let mut parts = [0f64, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
            for (k, (v, p)) in many.iter().enumerate() {
                parts[k] = match v {
                    Value::Bson(b) => {
                        as_f64(b).ok_or_else(|| type_err("date components must be numbers", *p))?
                    }
                    _ => return Err(type_err("date components must be numbers", *p)),
                };
            }
            // Month is 0-based and may overflow into years, as in JavaScript.
            let months = parts[0] as i64 * 12 + parts[1] as i64;
            let (y, m) = (months.div_euclid(12), months.rem_euclid(12) + 1);
            let base = chrono::NaiveDate::from_ymd_opt(y as i32, m as u32, 1)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .ok_or_else(|| type_err("date out of range", pos))?;
            let ms = base.and_utc().timestamp_millis() as f64
                + (parts[2] - 1.0) * 86_400_000.0
                + parts[3] * 3_600_000.0
                + parts[4] * 60_000.0
                + parts[5] * 1000.0
                + parts[6];
            Ok(bson::DateTime::from_millis(ms as i64))
        }
        _ => Err(type_err("new Date() takes at most 7 arguments", pos)),
    }
}

/// Parse the date strings ISODate/new Date accept: ISO 8601 with or without
/// time, fraction and offset (no offset means UTC).
pub(super) fn parse_date(s: &str, p: Pos) -> R<bson::DateTime> {
    let t = s.trim();
    if let Ok(d) = chrono::DateTime::parse_from_rfc3339(t) {
        return Ok(bson::DateTime::from_millis(d.timestamp_millis()));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%#z",
        "%Y-%m-%d %H:%M:%S%.f%#z",
        "%Y-%m-%dT%H:%M%#z",
    ] {
        if let Ok(d) = chrono::DateTime::parse_from_str(t, fmt) {
            return Ok(bson::DateTime::from_millis(d.timestamp_millis()));
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
            return Ok(bson::DateTime::from_millis(d.and_utc().timestamp_millis()));
        }
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(naive, "%Y-%m-%d")
        && let Some(dt) = d.and_hms_opt(0, 0, 0)
    {
        return Ok(bson::DateTime::from_millis(dt.and_utc().timestamp_millis()));
    }
    Err(type_err(
        Message::new("invalid ISO date: {s}").arg("s", s),
        p,
    ))
}

/// Methods on plain values.
pub(super) fn bson_method(v: Bson, name: &str, args: Vec<(Value, Pos)>, pos: Pos) -> R<Value> {
    let a = Args::new(args, pos, format!("{name}()"));
    let methods: &[&str] = match &v {
        Bson::DateTime(_) => &["getTime", "valueOf", "toISOString", "toJSON", "toString"],
        Bson::ObjectId(_) => &["toString", "toHexString", "getTimestamp", "valueOf"],
        Bson::String(_) => &["toUpperCase", "toLowerCase", "trim", "toString"],
        Bson::Document(_) => &["toString"],
        _ => &["toString"],
    };
    let r = match (&v, name) {
        (Bson::DateTime(d), "getTime" | "valueOf") => Bson::Double(d.timestamp_millis() as f64),
        (Bson::DateTime(d), "toISOString" | "toJSON" | "toString") => Bson::String(iso_string(*d)),
        (Bson::ObjectId(o), "toString" | "toHexString" | "valueOf") => Bson::String(o.to_hex()),
        (Bson::ObjectId(o), "getTimestamp") => Bson::DateTime(o.timestamp()),
        (Bson::String(s), "toUpperCase") => Bson::String(s.to_uppercase()),
        (Bson::String(s), "toLowerCase") => Bson::String(s.to_lowercase()),
        (Bson::String(s), "trim") => Bson::String(s.trim().to_string()),
        (_, "toString") => Bson::String(js_string(&Value::Bson(v.clone()))),
        (Bson::Array(_), "forEach" | "map" | "filter" | "reduce" | "find" | "some" | "every") => {
            return Err(DialectError::unsupported(
                Message::new(
                    "array.{name}() (callbacks need functions); use for (const x of array) { … }",
                )
                .arg("name", name),
                pos,
            ));
        }
        _ => {
            return Err(DialectError::Type {
                message: Message::new("{name} is not a function on a {type}")
                    .arg("name", name)
                    .arg("type", bson_type_name(&v)),
                suggestion: suggest(name, methods.iter().copied()),
                pos: Some(pos),
            });
        }
    };
    a.done()?;
    Ok(Value::Bson(r))
}
