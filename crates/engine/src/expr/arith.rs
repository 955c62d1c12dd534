//! Arithmetic operators and the accumulators usable as expressions, with
//! mongod's numeric type rules: int + int widens to long on overflow, long
//! overflow falls back to double, any double makes a double, any decimal a
//! decimal (decimal arithmetic goes through `f64` here, hence Partial).

use bson::{Bson, Decimal128};

use super::{err, nullish, type_name};
use crate::error::Result;
use crate::value;

/// A number in one of the four BSON numeric types.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i32),
    Long(i64),
    Double(f64),
    Dec(f64),
}

/// A decimal from an `f64`, through its shortest text form.
pub(crate) fn dec_from_f64(f: f64) -> Bson {
    let text = if f.is_nan() {
        "NaN".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        format!("{f:E}")
    };
    match text.parse::<Decimal128>() {
        Ok(d) => Bson::Decimal128(d),
        Err(_) => Bson::Double(f),
    }
}

impl Num {
    pub(crate) fn from_bson(v: &Bson) -> Option<Num> {
        match v {
            Bson::Int32(i) => Some(Num::Int(*i)),
            Bson::Int64(i) => Some(Num::Long(*i)),
            Bson::Double(d) => Some(Num::Double(*d)),
            Bson::Decimal128(_) => value::as_f64(v).map(Num::Dec),
            _ => None,
        }
    }

    pub(crate) fn to_bson(self) -> Bson {
        match self {
            Num::Int(i) => Bson::Int32(i),
            Num::Long(i) => Bson::Int64(i),
            Num::Double(d) => Bson::Double(d),
            Num::Dec(d) => dec_from_f64(d),
        }
    }

    fn rank(self) -> u8 {
        match self {
            Num::Int(_) => 0,
            Num::Long(_) => 1,
            Num::Double(_) => 2,
            Num::Dec(_) => 3,
        }
    }

    pub(crate) fn f(self) -> f64 {
        match self {
            Num::Int(i) => f64::from(i),
            Num::Long(i) => i as f64,
            Num::Double(d) | Num::Dec(d) => d,
        }
    }

    fn int(self) -> Option<i64> {
        match self {
            Num::Int(i) => Some(i64::from(i)),
            Num::Long(i) => Some(i),
            _ => None,
        }
    }

    /// The same kind of number as `self` (or wider) holding `f`.
    fn like(self, other: Num, f: f64) -> Num {
        if self.rank().max(other.rank()) == 3 {
            Num::Dec(f)
        } else {
            Num::Double(f)
        }
    }
}

fn narrow(i: i64) -> Num {
    match i32::try_from(i) {
        Ok(n) => Num::Int(n),
        Err(_) => Num::Long(i),
    }
}

/// Combine two integers with `op`, widening int to long and long to double.
fn int_op(a: Num, b: Num, op: fn(i64, i64) -> Option<i64>, fop: fn(f64, f64) -> f64) -> Num {
    match (a.int(), b.int()) {
        (Some(x), Some(y)) => {
            let both_int = a.rank() == 0 && b.rank() == 0;
            match op(x, y) {
                Some(r) if both_int => narrow(r),
                Some(r) => Num::Long(r),
                None => Num::Double(fop(a.f(), b.f())),
            }
        }
        _ => a.like(b, fop(a.f(), b.f())),
    }
}

pub(crate) fn add_nums(a: Num, b: Num) -> Num {
    int_op(a, b, i64::checked_add, |x, y| x + y)
}

fn mul_nums(a: Num, b: Num) -> Num {
    int_op(a, b, i64::checked_mul, |x, y| x * y)
}

/// `$add` over two values as `$sum` accumulates them (non-numbers ignored).
pub(crate) fn add_values(acc: Num, v: &Bson) -> Num {
    match Num::from_bson(v) {
        Some(n) => add_nums(acc, n),
        None => acc,
    }
}

fn add(vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    let mut total = Num::Int(0);
    let mut date: Option<i64> = None;
    for v in vals {
        match v {
            x if nullish(x.as_ref()) => return Ok(Some(Bson::Null)),
            Some(Bson::DateTime(d)) => {
                if date.is_some() {
                    return Err(err(16612, "only one date allowed in an $add expression"));
                }
                date = Some(d.timestamp_millis());
            }
            Some(x) => match Num::from_bson(x) {
                Some(n) => total = add_nums(total, n),
                None => {
                    return Err(err(
                        14,
                        format!(
                            "$add only supports numeric or date types, not {}",
                            value::type_alias(x)
                        ),
                    ));
                }
            },
            None => {}
        }
    }
    Ok(Some(match date {
        Some(ms) => {
            let delta = match total {
                Num::Int(i) => i64::from(i),
                Num::Long(i) => i,
                Num::Double(d) | Num::Dec(d) => d.round() as i64,
            };
            Bson::DateTime(bson::DateTime::from_millis(ms.saturating_add(delta)))
        }
        None => total.to_bson(),
    }))
}

fn numeric_args(op: &str, vals: &[Option<Bson>]) -> Result<Option<Vec<Num>>> {
    let mut out = Vec::with_capacity(vals.len());
    for v in vals {
        if nullish(v.as_ref()) {
            return Ok(None);
        }
        match v.as_ref().and_then(Num::from_bson) {
            Some(n) => out.push(n),
            None => {
                return Err(err(
                    if op == "$multiply" { 16555 } else { 28765 },
                    format!(
                        "{op} only supports numeric types, not {}",
                        type_name(v.as_ref())
                    ),
                ));
            }
        }
    }
    Ok(Some(out))
}

fn single_num(op: &str, v: &Option<Bson>) -> Result<Option<Num>> {
    if nullish(v.as_ref()) {
        return Ok(None);
    }
    match v.as_ref().and_then(Num::from_bson) {
        Some(n) => Ok(Some(n)),
        None => Err(err(
            28765,
            format!(
                "{op} only supports numeric types, not {}",
                type_name(v.as_ref())
            ),
        )),
    }
}

fn float_fn(op: &str, v: &Option<Bson>, f: fn(f64) -> f64) -> Result<Option<Bson>> {
    Ok(single_num(op, v)?.map(|n| match n {
        Num::Dec(d) => dec_from_f64(f(d)),
        other => Bson::Double(f(other.f())),
    }))
}

fn round_like(op: &str, vals: &[Option<Bson>], trunc: bool) -> Result<Option<Bson>> {
    let Some(n) = single_num(op, &vals[0])? else {
        return Ok(Some(Bson::Null));
    };
    let place = match vals.get(1) {
        None => 0,
        Some(p) if nullish(p.as_ref()) => return Ok(Some(Bson::Null)),
        Some(Some(p)) => match value::as_i64(p) {
            Some(x) if (-20..=100).contains(&x) => x,
            _ => {
                return Err(err(
                    51083,
                    format!(
                        "cannot apply {op} with precision value {p} value must be in [-20, 100]"
                    ),
                ));
            }
        },
        Some(None) => 0,
    };
    let apply = |x: f64| -> f64 {
        let scale = 10f64.powi(place as i32);
        let y = x * scale;
        let r = if trunc {
            y.trunc()
        } else {
            // Round half to even, as mongod does.
            let r = y.round();
            if (y - y.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
                r - y.signum()
            } else {
                r
            }
        };
        r / scale
    };
    Ok(Some(match n {
        Num::Int(_) | Num::Long(_) if place >= 0 => n.to_bson(),
        Num::Int(i) => narrow(apply(f64::from(i)) as i64).to_bson(),
        Num::Long(i) => Bson::Int64(apply(i as f64) as i64),
        Num::Double(d) => Bson::Double(apply(d)),
        Num::Dec(d) => dec_from_f64(apply(d)),
    }))
}

/// Sum numeric values as `$sum` does (non-numbers ignored).
pub(crate) fn sum_of<'a>(items: impl Iterator<Item = &'a Bson>) -> Num {
    items.fold(Num::Int(0), add_values)
}

/// Average of the numeric values, `None` when there are none.
pub(crate) fn avg_of<'a>(items: impl Iterator<Item = &'a Bson>) -> Option<Bson> {
    let mut n = 0usize;
    let mut total = 0f64;
    let mut dec = false;
    for v in items {
        if let Some(x) = Num::from_bson(v) {
            n += 1;
            total += x.f();
            dec |= matches!(x, Num::Dec(_));
        }
    }
    if n == 0 {
        return None;
    }
    let avg = total / n as f64;
    Some(if dec {
        dec_from_f64(avg)
    } else {
        Bson::Double(avg)
    })
}

/// Population or sample standard deviation of the numeric values.
pub(crate) fn std_dev<'a>(items: impl Iterator<Item = &'a Bson>, sample: bool) -> Bson {
    let xs: Vec<f64> = items.filter_map(Num::from_bson).map(Num::f).collect();
    let n = xs.len();
    if n == 0 || (sample && n == 1) {
        return Bson::Null;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    let d = if sample { n - 1 } else { n };
    Bson::Double((ss / d as f64).sqrt())
}

/// Operands of an accumulator used as an expression: one array operand is
/// spread; several operands are taken as they are.
fn accumulator_operands(vals: &[Option<Bson>]) -> Vec<Bson> {
    match vals {
        [Some(Bson::Array(items))] => items.clone(),
        _ => vals.iter().flatten().cloned().collect(),
    }
}

pub(super) fn call(op: &str, vals: &[Option<Bson>]) -> Option<Result<Option<Bson>>> {
    Some(match op {
        "$add" => add(vals),
        "$multiply" => numeric_args(op, vals).map(|ns| {
            Some(match ns {
                None => Bson::Null,
                Some(ns) => ns.into_iter().fold(Num::Int(1), mul_nums).to_bson(),
            })
        }),
        "$subtract" => subtract(vals),
        "$divide" => divide(vals),
        "$mod" => modulo(vals),
        "$abs" => single_num(op, &vals[0]).and_then(|n| {
            Ok(Some(match n {
                None => Bson::Null,
                Some(Num::Int(i)) => narrow(i64::from(i).abs()).to_bson(),
                Some(Num::Long(i)) => match i.checked_abs() {
                    Some(a) => Bson::Int64(a),
                    None => return Err(err(28680, "can't take $abs of long long min")),
                },
                Some(Num::Double(d)) => Bson::Double(d.abs()),
                Some(Num::Dec(d)) => dec_from_f64(d.abs()),
            }))
        }),
        "$ceil" | "$floor" => single_num(op, &vals[0]).map(|n| {
            Some(match n {
                None => Bson::Null,
                Some(i @ (Num::Int(_) | Num::Long(_))) => i.to_bson(),
                Some(Num::Double(d)) => {
                    Bson::Double(if op == "$ceil" { d.ceil() } else { d.floor() })
                }
                Some(Num::Dec(d)) => dec_from_f64(if op == "$ceil" { d.ceil() } else { d.floor() }),
            })
        }),
        "$round" => round_like(op, vals, false),
        "$trunc" => round_like(op, vals, true),
        "$sqrt" => match single_num(op, &vals[0]) {
            Ok(Some(n)) if n.f() < 0.0 => Err(err(
                28714,
                "$sqrt's argument must be greater than or equal to 0",
            )),
            _ => float_fn(op, &vals[0], f64::sqrt),
        },
        "$exp" => float_fn(op, &vals[0], f64::exp),
        "$ln" | "$log10" => match single_num(op, &vals[0]) {
            Ok(Some(n)) if n.f() <= 0.0 => Err(err(
                if op == "$ln" { 28766 } else { 28761 },
                format!(
                    "{op}'s argument must be a positive number, but is {}",
                    n.to_bson()
                ),
            )),
            _ => float_fn(op, &vals[0], if op == "$ln" { f64::ln } else { f64::log10 }),
        },
        "$log" => numeric_args(op, vals).map(|ns| {
            Some(match ns {
                None => Bson::Null,
                Some(ns) => Bson::Double(ns[0].f().log(ns[1].f())),
            })
        }),
        "$pow" => pow(vals),
        "$sin" => float_fn(op, &vals[0], f64::sin),
        "$cos" => float_fn(op, &vals[0], f64::cos),
        "$tan" => float_fn(op, &vals[0], f64::tan),
        "$sinh" => float_fn(op, &vals[0], f64::sinh),
        "$cosh" => float_fn(op, &vals[0], f64::cosh),
        "$tanh" => float_fn(op, &vals[0], f64::tanh),
        "$asinh" => float_fn(op, &vals[0], f64::asinh),
        "$atan" => float_fn(op, &vals[0], f64::atan),
        "$degreesToRadians" => float_fn(op, &vals[0], f64::to_radians),
        "$radiansToDegrees" => float_fn(op, &vals[0], f64::to_degrees),
        "$asin" | "$acos" | "$atanh" | "$acosh" => {
            let (lo, hi, f): (f64, f64, fn(f64) -> f64) = match op {
                "$asin" => (-1.0, 1.0, f64::asin),
                "$acos" => (-1.0, 1.0, f64::acos),
                "$atanh" => (-1.0, 1.0, f64::atanh),
                _ => (1.0, f64::INFINITY, f64::acosh),
            };
            match single_num(op, &vals[0]) {
                Ok(Some(n)) if !(lo..=hi).contains(&n.f()) && !n.f().is_nan() => Err(err(
                    50989,
                    format!(
                        "cannot apply {op} to {}, value must be in [{lo},{}]",
                        n.to_bson(),
                        if hi.is_infinite() {
                            "inf".to_string()
                        } else {
                            hi.to_string()
                        }
                    ),
                )),
                _ => float_fn(op, &vals[0], f),
            }
        }
        "$atan2" => numeric_args(op, vals).map(|ns| {
            Some(match ns {
                None => Bson::Null,
                Some(ns) => Bson::Double(ns[0].f().atan2(ns[1].f())),
            })
        }),
        "$sum" => Ok(Some(match vals {
            [single] if !matches!(single, Some(Bson::Array(_))) => {
                match single.as_ref().and_then(Num::from_bson) {
                    Some(n) => add_nums(Num::Int(0), n).to_bson(),
                    None => Bson::Int32(0),
                }
            }
            _ => sum_of(accumulator_operands(vals).iter()).to_bson(),
        })),
        "$avg" => Ok(Some(
            avg_of(accumulator_operands(vals).iter()).unwrap_or(Bson::Null),
        )),
        "$min" | "$max" => {
            let items = accumulator_operands(vals);
            let best = items
                .iter()
                .filter(|v| !nullish(Some(v)))
                .fold(None::<&Bson>, |best, v| match best {
                    None => Some(v),
                    Some(b) => {
                        let c = value::compare(v, b, None);
                        let better = if op == "$min" { c.is_lt() } else { c.is_gt() };
                        Some(if better { v } else { b })
                    }
                });
            Ok(Some(best.cloned().unwrap_or(Bson::Null)))
        }
        "$stdDevPop" | "$stdDevSamp" => Ok(Some(std_dev(
            accumulator_operands(vals).iter(),
            op == "$stdDevSamp",
        ))),
        _ => return None,
    })
}

fn subtract(vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    let (a, b) = (&vals[0], &vals[1]);
    if nullish(a.as_ref()) || nullish(b.as_ref()) {
        return Ok(Some(Bson::Null));
    }
    match (a, b) {
        (Some(Bson::DateTime(x)), Some(Bson::DateTime(y))) => Ok(Some(Bson::Int64(
            x.timestamp_millis().saturating_sub(y.timestamp_millis()),
        ))),
        (Some(Bson::DateTime(x)), Some(n)) if value::is_number(n) => {
            let delta = value::as_f64(n).unwrap_or(0.0).round() as i64;
            Ok(Some(Bson::DateTime(bson::DateTime::from_millis(
                x.timestamp_millis().saturating_sub(delta),
            ))))
        }
        (Some(x), Some(y)) => match (Num::from_bson(x), Num::from_bson(y)) {
            (Some(p), Some(q)) => Ok(Some(int_op(p, q, i64::checked_sub, |x, y| x - y).to_bson())),
            _ => Err(err(
                16556,
                format!(
                    "can't $subtract {} from {}",
                    value::type_alias(y),
                    value::type_alias(x)
                ),
            )),
        },
        _ => Ok(Some(Bson::Null)),
    }
}

/// The two operands of `$divide`/`$mod`: `None` when either is null or
/// missing (the result is null), mongod's type error (`code`) when either
/// is not a number, and the "by zero" error (`zero_code`) for a zero divisor.
fn dividend_and_divisor(
    op: &str,
    vals: &[Option<Bson>],
    code: i32,
    zero_code: i32,
) -> Result<Option<(Num, Num)>> {
    let (a, b) = (&vals[0], &vals[1]);
    if nullish(a.as_ref()) || nullish(b.as_ref()) {
        return Ok(None);
    }
    let (Some(p), Some(q)) = (
        a.as_ref().and_then(Num::from_bson),
        b.as_ref().and_then(Num::from_bson),
    ) else {
        return Err(err(
            code,
            format!(
                "{op} only supports numeric types, not {} and {}",
                type_name(a.as_ref()),
                type_name(b.as_ref())
            ),
        ));
    };
    if q.f() == 0.0 {
        return Err(err(zero_code, format!("can't {op} by zero")));
    }
    Ok(Some((p, q)))
}

fn divide(vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    Ok(Some(
        match dividend_and_divisor("$divide", vals, 16609, 2)? {
            Some((p, q)) => p.like(q, p.f() / q.f()).to_bson(),
            None => Bson::Null,
        },
    ))
}

fn modulo(vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    Ok(Some(
        match dividend_and_divisor("$mod", vals, 16611, 16610)? {
            Some((p, q)) => int_op(p, q, i64::checked_rem, |x, y| x % y).to_bson(),
            None => Bson::Null,
        },
    ))
}

fn pow(vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    let (a, b) = (&vals[0], &vals[1]);
    if nullish(a.as_ref()) || nullish(b.as_ref()) {
        return Ok(Some(Bson::Null));
    }
    let (Some(p), Some(q)) = (
        a.as_ref().and_then(Num::from_bson),
        b.as_ref().and_then(Num::from_bson),
    ) else {
        let bad = if a.as_ref().and_then(Num::from_bson).is_none() {
            a
        } else {
            b
        };
        return Err(err(
            if bad == a { 28762 } else { 28763 },
            format!(
                "$pow's {} must be numeric, not {}",
                if bad == a { "base" } else { "exponent" },
                type_name(bad.as_ref())
            ),
        ));
    };
    if p.f() == 0.0 && q.f() < 0.0 {
        return Err(err(
            28764,
            "$pow cannot take a base of 0 and a negative exponent",
        ));
    }
    if let (Some(x), Some(y)) = (p.int(), q.int()) {
        if y >= 0 {
            let both_int = matches!((p, q), (Num::Int(_), Num::Int(_)));
            if let Some(r) = u32::try_from(y).ok().and_then(|e| x.checked_pow(e)) {
                return Ok(Some(
                    if both_int { narrow(r) } else { Num::Long(r) }.to_bson(),
                ));
            }
        }
        return Ok(Some(Bson::Double((x as f64).powf(y as f64))));
    }
    Ok(Some(p.like(q, p.f().powf(q.f())).to_bson()))
}
