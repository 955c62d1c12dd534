//! BSON values as mongod orders and names them.
//!
//! MongoDB compares values of different types by a fixed *canonical type
//! order* (MinKey < null < numbers < strings < objects < arrays < binary <
//! ObjectId < booleans < dates < timestamps < regexes < MaxKey), and numbers of
//! different BSON types by their numeric value. Sorting, range queries, index
//! keys and `$min`/`$max` all rest on the comparison defined here.

use std::cmp::Ordering;

use bson::{Bson, Document, spec::ElementType};

use super::collation::{Collation, compare_strings};

/// The canonical rank of a value's type: values of types with different ranks
/// compare by rank alone. Numbers share one rank, as do strings and symbols.
pub fn canonical_rank(v: &Bson) -> u8 {
    rank_of_type(v.element_type())
}

/// The canonical rank of a BSON element type, so that raw values
/// (`RawBsonRef`) are bracketed without being decoded.
pub fn rank_of_type(t: ElementType) -> u8 {
    match t {
        ElementType::MinKey => 0,
        ElementType::Undefined => 1,
        ElementType::Null => 2,
        ElementType::Int32 | ElementType::Int64 | ElementType::Double | ElementType::Decimal128 => {
            3
        }
        ElementType::String | ElementType::Symbol => 4,
        ElementType::EmbeddedDocument => 5,
        ElementType::Array => 6,
        ElementType::Binary => 7,
        ElementType::ObjectId => 8,
        ElementType::Boolean => 9,
        ElementType::DateTime => 10,
        ElementType::Timestamp => 11,
        ElementType::RegularExpression => 12,
        ElementType::DbPointer => 13,
        ElementType::JavaScriptCode => 14,
        ElementType::JavaScriptCodeWithScope => 15,
        ElementType::MaxKey => 16,
    }
}

/// Is this one of the four numeric BSON types?
pub fn is_number(v: &Bson) -> bool {
    canonical_rank(v) == 3
}

/// A number as `f64` (decimals through their text form), or `None`.
pub fn as_f64(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(i) => Some(f64::from(*i)),
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        Bson::Decimal128(d) => d.to_string().parse::<f64>().ok().or_else(|| {
            let s = d.to_string();
            match s.as_str() {
                "Infinity" => Some(f64::INFINITY),
                "-Infinity" => Some(f64::NEG_INFINITY),
                _ => Some(f64::NAN),
            }
        }),
        _ => None,
    }
}

/// A number that holds an exact integer, as `i64`.
pub fn as_i64(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(i) => Some(i64::from(*i)),
        Bson::Int64(i) => Some(*i),
        Bson::Double(d) if d.fract() == 0.0 && d.is_finite() && d.abs() < 9.2e18 => Some(*d as i64),
        Bson::Decimal128(_) => as_f64(v).and_then(|d| as_i64(&Bson::Double(d))),
        _ => None,
    }
}

/// Compare two numbers exactly where both are integers, numerically otherwise.
/// NaN sorts below every other number and equals itself, as in mongod.
pub fn compare_numbers(a: &Bson, b: &Bson) -> Ordering {
    if let (Some(x), Some(y)) = (int_exact(a), int_exact(b)) {
        return x.cmp(&y);
    }
    let x = as_f64(a).unwrap_or(f64::NAN);
    let y = as_f64(b).unwrap_or(f64::NAN);
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

fn int_exact(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(i) => Some(i64::from(*i)),
        Bson::Int64(i) => Some(*i),
        _ => None,
    }
}

/// mongod's total order on BSON values, with strings compared under
/// `collation` (binary when `None`).
pub fn compare(a: &Bson, b: &Bson, collation: Option<&Collation>) -> Ordering {
    let (ra, rb) = (canonical_rank(a), canonical_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        _ if ra == 3 => compare_numbers(a, b),
        (Bson::String(x) | Bson::Symbol(x), Bson::String(y) | Bson::Symbol(y)) => {
            compare_strings(x, y, collation)
        }
        (Bson::Document(x), Bson::Document(y)) => compare_documents(x, y, collation),
        (Bson::Array(x), Bson::Array(y)) => {
            for (ex, ey) in x.iter().zip(y.iter()) {
                let c = compare(ex, ey, collation);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Bson::Binary(x), Bson::Binary(y)) => x
            .bytes
            .len()
            .cmp(&y.bytes.len())
            .then_with(|| u8::from(x.subtype).cmp(&u8::from(y.subtype)))
            .then_with(|| x.bytes.cmp(&y.bytes)),
        (Bson::ObjectId(x), Bson::ObjectId(y)) => x.bytes().cmp(&y.bytes()),
        (Bson::Boolean(x), Bson::Boolean(y)) => x.cmp(y),
        (Bson::DateTime(x), Bson::DateTime(y)) => x.timestamp_millis().cmp(&y.timestamp_millis()),
        (Bson::Timestamp(x), Bson::Timestamp(y)) => {
            (x.time, x.increment).cmp(&(y.time, y.increment))
        }
        (Bson::RegularExpression(x), Bson::RegularExpression(y)) => x
            .pattern
            .cmp(&y.pattern)
            .then_with(|| x.options.cmp(&y.options)),
        (Bson::JavaScriptCode(x), Bson::JavaScriptCode(y)) => x.cmp(y),
        (Bson::JavaScriptCodeWithScope(x), Bson::JavaScriptCodeWithScope(y)) => x
            .code
            .cmp(&y.code)
            .then_with(|| compare_documents(&x.scope, &y.scope, collation)),
        _ => Ordering::Equal,
    }
}

/// Compare embedded documents field by field: the value's type rank, then the
/// field name, then the value; a document that runs out first is smaller.
pub fn compare_documents(x: &Document, y: &Document, collation: Option<&Collation>) -> Ordering {
    let mut ix = x.iter();
    let mut iy = y.iter();
    loop {
        match (ix.next(), iy.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((kx, vx)), Some((ky, vy))) => {
                let c = canonical_rank(vx)
                    .cmp(&canonical_rank(vy))
                    .then_with(|| kx.cmp(ky))
                    .then_with(|| compare(vx, vy, collation));
                if c != Ordering::Equal {
                    return c;
                }
            }
        }
    }
}

/// Equality under mongod's comparison (so `1 == 1.0 == NumberLong(1)`).
pub fn values_equal(a: &Bson, b: &Bson, collation: Option<&Collation>) -> bool {
    compare(a, b, collation) == Ordering::Equal
}

/// The `$type` alias of a value ("double", "string", "objectId", …).
pub fn type_alias(v: &Bson) -> &'static str {
    match v.element_type() {
        ElementType::Double => "double",
        ElementType::String => "string",
        ElementType::EmbeddedDocument => "object",
        ElementType::Array => "array",
        ElementType::Binary => "binData",
        ElementType::Undefined => "undefined",
        ElementType::ObjectId => "objectId",
        ElementType::Boolean => "bool",
        ElementType::DateTime => "date",
        ElementType::Null => "null",
        ElementType::RegularExpression => "regex",
        ElementType::DbPointer => "dbPointer",
        ElementType::JavaScriptCode => "javascript",
        ElementType::Symbol => "symbol",
        ElementType::JavaScriptCodeWithScope => "javascriptWithScope",
        ElementType::Int32 => "int",
        ElementType::Timestamp => "timestamp",
        ElementType::Int64 => "long",
        ElementType::Decimal128 => "decimal",
        ElementType::MaxKey => "maxKey",
        ElementType::MinKey => "minKey",
    }
}

/// The BSON type number of a value (1 for double … 19 for decimal, -1 for
/// MinKey, 127 for MaxKey), as `$type` accepts it.
pub fn type_number(v: &Bson) -> i32 {
    match v {
        Bson::MinKey => -1,
        Bson::MaxKey => 127,
        other => other.element_type() as i32,
    }
}

/// Map a `$type` alias to its type number; `"number"` is handled by callers.
pub fn type_number_of_alias(alias: &str) -> Option<i32> {
    Some(match alias {
        "double" => 1,
        "string" => 2,
        "object" => 3,
        "array" => 4,
        "binData" => 5,
        "undefined" => 6,
        "objectId" => 7,
        "bool" => 8,
        "date" => 9,
        "null" => 10,
        "regex" => 11,
        "dbPointer" => 12,
        "javascript" => 13,
        "symbol" => 14,
        "javascriptWithScope" => 15,
        "int" => 16,
        "timestamp" => 17,
        "long" => 18,
        "decimal" => 19,
        "minKey" => -1,
        "maxKey" => 127,
        _ => return None,
    })
}

/// The exact BSON size in bytes of a document.
/// (0 for a document BSON cannot encode, as before.)
pub fn bson_size(doc: &Document) -> usize {
    super::codec::try_size(doc).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, oid::ObjectId};

    #[test]
    fn cross_type_order() {
        let ordered = [
            Bson::MinKey,
            Bson::Null,
            Bson::Int32(-5),
            Bson::Double(2.5),
            Bson::Int64(3),
            Bson::String("a".into()),
            Bson::Document(doc! {}),
            Bson::Array(vec![]),
            Bson::ObjectId(ObjectId::new()),
            Bson::Boolean(false),
            Bson::Boolean(true),
            Bson::DateTime(bson::DateTime::from_millis(0)),
            Bson::MaxKey,
        ];
        for w in ordered.windows(2) {
            assert_eq!(compare(&w[0], &w[1], None), Ordering::Less, "{w:?}");
        }
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(values_equal(&Bson::Int32(1), &Bson::Double(1.0), None));
        assert!(values_equal(&Bson::Int64(7), &Bson::Int32(7), None));
        assert_eq!(
            compare(&Bson::Double(f64::NAN), &Bson::Int32(-100), None),
            Ordering::Less
        );
        assert_eq!(
            compare(&Bson::Int64(i64::MAX), &Bson::Int64(i64::MAX - 1), None),
            Ordering::Greater
        );
    }

    #[test]
    fn documents_compare_field_by_field() {
        assert_eq!(
            compare_documents(&doc! {"a": 1}, &doc! {"a": 1, "b": 0}, None),
            Ordering::Less
        );
        assert_eq!(
            compare_documents(&doc! {"a": 2}, &doc! {"b": 1}, None),
            Ordering::Less
        );
    }
}
