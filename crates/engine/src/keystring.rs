//! Index keys as byte strings whose binary order is mongod's BSON order.
//!
//! An index is an ordered set of byte strings, so every key must be encoded
//! such that comparing the bytes gives the same answer as
//! [`super::value::compare`]. The layout follows the idea of mongod's
//! KeyString: a type byte per value (in canonical type order), then a
//! self-delimiting, order-preserving encoding of the value. Every component
//! is prefix-free, so a compound key is simply its components concatenated;
//! a descending component is stored with every byte complemented. A key ends
//! with [`END`], and an index entry appends the record id after it.
//!
//! Numbers of every BSON numeric type share one encoding by value (so `1`,
//! `1.0` and `NumberLong(1)` collide, as they must): a type byte that says the
//! sign and how many bytes the integer part needs, the integer part's
//! magnitude, then a suffix byte marking whether a fractional part follows.
//! Decimal128 values go through `f64` and may lose precision (COMPAT.md).

use bson::{Bson, Document};

use super::collation::Collation;

const MIN_KEY: u8 = 0x0A;
const UNDEFINED: u8 = 0x0F;
const NULL: u8 = 0x14;
const NUM_NAN: u8 = 0x19;
const NUM_NEG_LARGE: u8 = 0x1A;
/// `NUM_NEG_1 - (n - 1)` is a negative number whose integer part needs n bytes.
const NUM_NEG_1: u8 = 0x22;
const NUM_NEG_SMALL: u8 = 0x23;
const NUM_ZERO: u8 = 0x24;
const NUM_POS_SMALL: u8 = 0x25;
/// `NUM_POS_1 + (n - 1)` is a positive number whose integer part needs n bytes.
const NUM_POS_1: u8 = 0x26;
const NUM_POS_LARGE: u8 = 0x2E;
const STRING: u8 = 0x3C;
const OBJECT: u8 = 0x46;
const ARRAY: u8 = 0x50;
const BIN_DATA: u8 = 0x5A;
const OBJECT_ID: u8 = 0x64;
const FALSE: u8 = 0x6E;
const TRUE: u8 = 0x6F;
const DATE: u8 = 0x78;
const TIMESTAMP: u8 = 0x79;
const REGEX: u8 = 0x7A;
const DB_POINTER: u8 = 0x7B;
const CODE: u8 = 0x7C;
const CODE_W_SCOPE: u8 = 0x7D;
const MAX_KEY: u8 = 0x7F;

/// Ends every key, before the record id. Never complemented, so that a
/// descending last component still orders correctly.
pub const END: u8 = 0x04;
/// Ends an embedded object or array; below every type byte.
const CONTAINER_END: u8 = 0x00;
/// Number suffixes: an integer, or a fraction of a positive (`POS_FRACTION`)
/// or negative (`NEG_FRACTION`) number follows.
const NEG_FRACTION: u8 = 0x0F;
const INTEGER: u8 = 0x10;
const POS_FRACTION: u8 = 0x11;

/// Append the encoding of `v` (type byte and value) to `out`. Strings go
/// through `collation`'s key when one is given.
pub fn append_value(out: &mut Vec<u8>, v: &Bson, collation: Option<&Collation>) {
    match v {
        Bson::MinKey => out.push(MIN_KEY),
        Bson::MaxKey => out.push(MAX_KEY),
        Bson::Undefined => out.push(UNDEFINED),
        Bson::Null => out.push(NULL),
        Bson::Int32(i) => append_integer(out, i64::from(*i)),
        Bson::Int64(i) => append_integer(out, *i),
        Bson::Double(d) => append_double(out, *d),
        Bson::Decimal128(_) => append_double(out, super::value::as_f64(v).unwrap_or(f64::NAN)),
        Bson::String(s) | Bson::Symbol(s) => {
            out.push(STRING);
            match collation {
                Some(c) => append_cstr(out, c.key(s).as_bytes()),
                None => append_cstr(out, s.as_bytes()),
            }
        }
        Bson::Document(d) => {
            out.push(OBJECT);
            append_document_body(out, d, collation);
        }
        Bson::Array(items) => {
            out.push(ARRAY);
            for item in items {
                append_value(out, item, collation);
            }
            out.push(CONTAINER_END);
        }
        Bson::Binary(b) => {
            out.push(BIN_DATA);
            out.extend_from_slice(&(b.bytes.len() as u32).to_be_bytes());
            out.push(u8::from(b.subtype));
            out.extend_from_slice(&b.bytes);
        }
        Bson::ObjectId(oid) => {
            out.push(OBJECT_ID);
            out.extend_from_slice(&oid.bytes());
        }
        Bson::Boolean(b) => out.push(if *b { TRUE } else { FALSE }),
        Bson::DateTime(dt) => {
            out.push(DATE);
            out.extend_from_slice(&flip_sign(dt.timestamp_millis()).to_be_bytes());
        }
        Bson::Timestamp(ts) => {
            out.push(TIMESTAMP);
            out.extend_from_slice(&ts.time.to_be_bytes());
            out.extend_from_slice(&ts.increment.to_be_bytes());
        }
        Bson::RegularExpression(re) => {
            out.push(REGEX);
            append_cstr(out, re.pattern.as_bytes());
            append_cstr(out, re.options.as_bytes());
        }
        Bson::DbPointer(_) => out.push(DB_POINTER),
        Bson::JavaScriptCode(code) => {
            out.push(CODE);
            append_cstr(out, code.as_bytes());
        }
        Bson::JavaScriptCodeWithScope(c) => {
            out.push(CODE_W_SCOPE);
            append_cstr(out, c.code.as_bytes());
            append_document_body(out, &c.scope, collation);
        }
    }
}

fn append_document_body(out: &mut Vec<u8>, d: &Document, collation: Option<&Collation>) {
    // Objects compare by each element's canonical type rank, then its name,
    // then its value: write them in that order. The rank byte is offset so
    // that it stays above CONTAINER_END.
    for (name, value) in d {
        out.push(super::value::canonical_rank(value) + 1);
        append_cstr(out, name.as_bytes());
        append_value(out, value, collation);
    }
    out.push(CONTAINER_END);
}

/// A NUL-free-safe C string: 0x00 inside is escaped as 00 FF, the end is
/// 00 00, so no encoding is a prefix of another.
fn append_cstr(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

fn flip_sign(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

fn magnitude_bytes(m: u64) -> usize {
    (8 - (m.leading_zeros() / 8) as usize).max(1)
}

/// Integer part `int` (sign from `negative`) and an optional fraction in (0, 1).
fn append_number(out: &mut Vec<u8>, negative: bool, magnitude: u64, fraction: Option<f64>) {
    let mut body = Vec::with_capacity(10);
    let type_byte = if magnitude == 0 {
        match (fraction.is_some(), negative) {
            (false, _) => NUM_ZERO,
            (true, false) => NUM_POS_SMALL,
            (true, true) => NUM_NEG_SMALL,
        }
    } else {
        let n = magnitude_bytes(magnitude);
        body.extend_from_slice(&magnitude.to_be_bytes()[8 - n..]);
        if negative {
            NUM_NEG_1 - (n as u8 - 1)
        } else {
            NUM_POS_1 + (n as u8 - 1)
        }
    };
    match fraction {
        None => body.push(INTEGER),
        Some(f) => {
            body.push(if negative { NEG_FRACTION } else { POS_FRACTION });
            body.extend_from_slice(&f.to_bits().to_be_bytes());
        }
    }
    out.push(type_byte);
    if negative {
        // A larger magnitude is a smaller number: complement the magnitude
        // and the fraction. The suffix byte was chosen to order already.
        let last = body.len();
        for (i, b) in body.iter_mut().enumerate() {
            let is_suffix =
                (fraction.is_none() && i == last - 1) || (fraction.is_some() && i == last - 9);
            if !is_suffix {
                *b = !*b;
            }
        }
    }
    out.extend_from_slice(&body);
}

fn append_integer(out: &mut Vec<u8>, v: i64) {
    append_number(out, v < 0, v.unsigned_abs(), None);
}

/// 2^63: from here on a double's integer part no longer fits an `i64`.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

fn append_double(out: &mut Vec<u8>, d: f64) {
    if d.is_nan() {
        out.push(NUM_NAN);
        return;
    }
    // Beyond i64's range (and infinities) the bit pattern of a positive f64
    // orders like the number; negatives are complemented.
    if d.abs() >= TWO_POW_63 {
        if d > 0.0 {
            out.push(NUM_POS_LARGE);
            out.extend_from_slice(&d.to_bits().to_be_bytes());
        } else {
            out.push(NUM_NEG_LARGE);
            out.extend_from_slice(&(!(-d).to_bits()).to_be_bytes());
        }
        return;
    }
    let int_part = d.trunc();
    let fraction = (d - int_part).abs();
    let negative = d < 0.0;
    let magnitude = int_part.abs() as u64;
    append_number(
        out,
        negative,
        magnitude,
        (fraction > 0.0).then_some(fraction),
    );
}

/// Encode one value as a complete single-field ascending key.
pub fn encode_single(v: &Bson, collation: Option<&Collation>) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    append_value(&mut out, v, collation);
    out.push(END);
    out
}

/// Encode a compound key: one value per index field, with its direction.
pub fn encode_key(values: &[&Bson], ascending: &[bool], collation: Option<&Collation>) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 * values.len());
    for (v, asc) in values.iter().zip(ascending) {
        append_component(&mut out, v, *asc, collation);
    }
    end_key(&mut out);
    out
}

/// Append one component of a compound key, with its direction (a
/// descending component's bytes complemented); [`end_key`] closes the key.
pub fn append_component(
    out: &mut Vec<u8>,
    v: &Bson,
    ascending: bool,
    collation: Option<&Collation>,
) {
    let start = out.len();
    append_value(out, v, collation);
    if !ascending {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
}

/// Close a key built with [`append_component`].
pub fn end_key(out: &mut Vec<u8>) {
    out.push(END);
}

/// A value held behind its key in one allocation, as a buffering stage
/// keeps what it orders by key: the key's length (4 bytes, little-endian),
/// the key, then the value's bytes, which `payload` appends.
pub fn keyed<E>(
    key: &[u8],
    payload: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<Box<[u8]>, E> {
    // A key is shorter than the 16 MiB document it comes from.
    let len = u32::try_from(key.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(4 + key.len() + 64);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(key);
    payload(&mut out)?;
    Ok(out.into_boxed_slice())
}

/// The key of a [`keyed`] value.
pub fn key_of(item: &[u8]) -> &[u8] {
    let len = item
        .first_chunk::<4>()
        .map_or(0, |n| u32::from_le_bytes(*n) as usize);
    item.get(4..4 + len).unwrap_or_default()
}

/// The value's bytes of a [`keyed`] value.
pub fn payload_of(item: &[u8]) -> &[u8] {
    item.get(4 + key_of(item).len()..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::compare;
    use bson::{doc, oid::ObjectId};
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn enc(v: &Bson) -> Vec<u8> {
        encode_single(v, None)
    }

    #[test]
    fn equal_numbers_of_different_types_collide() {
        assert_eq!(enc(&Bson::Int32(7)), enc(&Bson::Double(7.0)));
        assert_eq!(enc(&Bson::Int64(-300)), enc(&Bson::Double(-300.0)));
    }

    #[test]
    fn hand_picked_values_order_like_bson() {
        let values = [
            Bson::MinKey,
            Bson::Null,
            Bson::Double(f64::NAN),
            Bson::Double(f64::NEG_INFINITY),
            Bson::Double(-1e20),
            Bson::Int64(-70000),
            Bson::Double(-2.5),
            Bson::Int32(-2),
            Bson::Double(-0.25),
            Bson::Int32(0),
            Bson::Double(1e-300),
            Bson::Double(0.5),
            Bson::Int32(2),
            Bson::Double(2.5),
            Bson::Int32(3),
            Bson::Int64(1 << 40),
            Bson::Double(f64::INFINITY),
            Bson::String(String::new()),
            Bson::String("a".into()),
            Bson::String("a\0".into()),
            Bson::String("ab".into()),
            Bson::Document(doc! {}),
            Bson::Document(doc! {"a": 1}),
            Bson::Document(doc! {"a": 1, "b": 1}),
            Bson::Array(vec![]),
            Bson::Array(vec![Bson::Int32(-3)]),
            Bson::Array(vec![Bson::Double(-2.5)]),
            Bson::Array(vec![Bson::Int32(-2)]),
            Bson::ObjectId(ObjectId::from_bytes([0; 12])),
            Bson::Boolean(false),
            Bson::Boolean(true),
            Bson::DateTime(bson::DateTime::from_millis(-5)),
            Bson::DateTime(bson::DateTime::from_millis(5)),
            Bson::MaxKey,
        ];
        for w in values.windows(2) {
            assert_eq!(compare(&w[0], &w[1], None), Ordering::Less, "{w:?}");
            assert!(enc(&w[0]) < enc(&w[1]), "{w:?}");
        }
    }

    #[test]
    fn keyed_values_give_back_their_key_and_bytes() {
        for (key, payload) in [
            (&b""[..], &b"doc"[..]),
            (b"k\x00y", b""),
            (b"key", b"\x05\x00"),
        ] {
            let item = keyed(key, |out| {
                out.extend_from_slice(payload);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(key_of(&item), key);
            assert_eq!(payload_of(&item), payload);
        }
        assert_eq!(keyed(b"k", |_| Err::<(), _>("no")), Err("no"));
        assert_eq!(key_of(&[1, 0]), b"", "too short to hold a length");
    }

    #[test]
    fn descending_components_reverse_order() {
        let a = encode_key(
            &[&Bson::Int32(1), &Bson::String("x".into())],
            &[true, false],
            None,
        );
        let b = encode_key(
            &[&Bson::Int32(1), &Bson::String("xy".into())],
            &[true, false],
            None,
        );
        let c = encode_key(&[&Bson::Int32(1), &Bson::Double(1.5)], &[true, false], None);
        let d = encode_key(&[&Bson::Int32(1), &Bson::Int32(1)], &[true, false], None);
        assert!(b < a, "xy before x when descending");
        assert!(c < d, "1.5 before 1 when descending");
    }

    fn scalar() -> impl Strategy<Value = Bson> {
        prop_oneof![
            any::<i32>().prop_map(Bson::Int32),
            any::<i64>().prop_map(Bson::Int64),
            any::<f64>().prop_map(Bson::Double),
            (-1000i64..1000, 0u8..4).prop_map(|(i, q)| Bson::Double(i as f64 + f64::from(q) / 4.0)),
            "[a-c\u{0}]{0,4}".prop_map(Bson::String),
            any::<bool>().prop_map(Bson::Boolean),
            Just(Bson::Null),
        ]
    }

    fn value() -> impl Strategy<Value = Bson> {
        scalar().prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
                prop::collection::vec(("[ab]", inner), 0..3).prop_map(|kv| {
                    let mut d = Document::new();
                    for (k, v) in kv {
                        d.insert(k, v);
                    }
                    Bson::Document(d)
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn byte_order_is_bson_order(a in value(), b in value(), asc in any::<bool>()) {
            let ka = encode_key(&[&a], &[asc], None);
            let kb = encode_key(&[&b], &[asc], None);
            let expected = if asc { compare(&a, &b, None) } else { compare(&b, &a, None) };
            prop_assert_eq!(ka.cmp(&kb), expected, "{:?} vs {:?}", a, b);
        }
    }
}
