//! Arithmetic for `$inc`, `$mul` and `$bit` with mongod's type rules: int32
//! results that overflow widen to int64, int64 overflow is an error, any
//! double makes a double and any decimal a decimal.

use std::str::FromStr;

use bson::{Bson, Decimal128};

use crate::value::as_f64;

/// `+` or `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Mul,
}

/// `a op b` for two numbers; `None` when the result cannot be represented
/// (int64 overflow) or an operand is not a number.
pub fn apply(op: ArithOp, a: &Bson, b: &Bson) -> Option<Bson> {
    match (a, b) {
        (Bson::Decimal128(_), _) | (_, Bson::Decimal128(_)) => decimal(op, a, b),
        (Bson::Double(_), _) | (_, Bson::Double(_)) => {
            let (x, y) = (as_f64(a)?, as_f64(b)?);
            Some(Bson::Double(match op {
                ArithOp::Add => x + y,
                ArithOp::Mul => x * y,
            }))
        }
        (Bson::Int32(x), Bson::Int32(y)) => {
            let r = match op {
                ArithOp::Add => x.checked_add(*y),
                ArithOp::Mul => x.checked_mul(*y),
            };
            match r {
                Some(v) => Some(Bson::Int32(v)),
                // Two int32 operands always fit in an int64.
                None => long(op, i64::from(*x), i64::from(*y)),
            }
        }
        (Bson::Int32(_) | Bson::Int64(_), Bson::Int32(_) | Bson::Int64(_)) => {
            long(op, int(a)?, int(b)?)
        }
        _ => None,
    }
}

fn int(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(i) => Some(i64::from(*i)),
        Bson::Int64(i) => Some(*i),
        _ => None,
    }
}

fn long(op: ArithOp, x: i64, y: i64) -> Option<Bson> {
    match op {
        ArithOp::Add => x.checked_add(y),
        ArithOp::Mul => x.checked_mul(y),
    }
    .map(Bson::Int64)
}

/// A finite decimal as sign-carrying coefficient and base-10 exponent.
fn parse_decimal(v: &Bson) -> Option<(i128, i32)> {
    let text = match v {
        Bson::Decimal128(d) => d.to_string(),
        Bson::Int32(i) => i.to_string(),
        Bson::Int64(i) => i.to_string(),
        // Doubles go through their shortest round-trip text, as mongod's
        // conversion of a double to decimal keeps ~15 significant digits.
        Bson::Double(d) if d.is_finite() => format!("{d:e}"),
        _ => return None,
    };
    let (mantissa, exp) = match text.find(['E', 'e']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
        None => (text.as_str(), 0),
    };
    let (neg, digits) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let (int_part, frac_part) = match digits.find('.') {
        Some(i) => (&digits[..i], &digits[i + 1..]),
        None => (digits, ""),
    };
    let all: String = format!("{int_part}{frac_part}");
    if all.is_empty() || all.len() > 36 || !all.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let coeff = all.parse::<i128>().ok()?;
    let exp = exp.checked_sub(i32::try_from(frac_part.len()).ok()?)?;
    Some((if neg { -coeff } else { coeff }, exp))
}

fn decimal(op: ArithOp, a: &Bson, b: &Bson) -> Option<Bson> {
    let exact = || -> Option<Bson> {
        let (ca, ea) = parse_decimal(a)?;
        let (cb, eb) = parse_decimal(b)?;
        let (c, e) = match op {
            ArithOp::Mul => (ca.checked_mul(cb)?, ea.checked_add(eb)?),
            ArithOp::Add => {
                let e = ea.min(eb);
                let sa = ca.checked_mul(10i128.checked_pow(u32::try_from(ea - e).ok()?)?)?;
                let sb = cb.checked_mul(10i128.checked_pow(u32::try_from(eb - e).ok()?)?)?;
                (sa.checked_add(sb)?, e)
            }
        };
        // Decimal128 holds 34 significant digits; beyond that fall back.
        if c.unsigned_abs() >= 10u128.pow(34) {
            return None;
        }
        Decimal128::from_str(&format!("{c}E{e}"))
            .ok()
            .map(Bson::Decimal128)
    };
    if let Some(v) = exact() {
        return Some(v);
    }
    let (x, y) = (as_f64(a)?, as_f64(b)?);
    let r = match op {
        ArithOp::Add => x + y,
        ArithOp::Mul => x * y,
    };
    let text = if r.is_nan() {
        "NaN".to_string()
    } else if r.is_infinite() {
        if r > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        format!("{r:e}")
    };
    Decimal128::from_str(&text).ok().map(Bson::Decimal128)
}

/// mongod's debug rendering of a number in overflow messages.
pub fn debug_string(v: &Bson) -> String {
    match v {
        Bson::Int32(i) => format!("(NumberInt){i}"),
        Bson::Int64(i) => format!("(NumberLong){i}"),
        Bson::Double(d) => format!("(NumberDouble){d}"),
        Bson::Decimal128(d) => format!("(NumberDecimal){d}"),
        other => format!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_and_overflow() {
        assert_eq!(
            apply(ArithOp::Add, &Bson::Int32(i32::MAX), &Bson::Int32(1)),
            Some(Bson::Int64(i64::from(i32::MAX) + 1))
        );
        assert_eq!(
            apply(ArithOp::Add, &Bson::Int64(i64::MAX), &Bson::Int32(1)),
            None
        );
        assert_eq!(
            apply(ArithOp::Mul, &Bson::Int32(2), &Bson::Double(1.5)),
            Some(Bson::Double(3.0))
        );
    }

    #[test]
    fn decimals_are_exact() {
        let a = Bson::Decimal128(Decimal128::from_str("0.1").unwrap());
        let b = Bson::Decimal128(Decimal128::from_str("0.2").unwrap());
        assert_eq!(
            apply(ArithOp::Add, &a, &b).unwrap().to_string(),
            Bson::Decimal128(Decimal128::from_str("0.3").unwrap()).to_string()
        );
    }
}
