//! Sort specifications and mongod's array-aware sort order (an ascending
//! sort uses an array's smallest element, a descending sort its largest).
//!
//! The value a document sorts by is derived like an index key: a dotted
//! path fans out over arrays, a missing field counts as null, and an empty
//! array counts as `undefined`, just below null (the manual: "an empty array
//! is less than null or a missing field").

use std::cmp::Ordering;

use bson::{Bson, Document};

use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::keystring;
use super::value;

/// A parsed sort specification such as `{a: 1, b: -1}`.
#[derive(Debug, Clone, PartialEq)]
pub struct SortSpec {
    /// (dotted path, ascending?) in priority order.
    pub keys: Vec<(String, bool)>,
}

impl SortSpec {
    /// Parse a sort document; values other than 1/-1 (or `{$meta}`) fail
    /// with mongod's errors (codes 15974/15975).
    pub fn parse(spec: &Document) -> Result<SortSpec> {
        let mut keys = Vec::with_capacity(spec.len());
        for (path, v) in spec {
            if path.is_empty() {
                return Err(EngineError::new(
                    ErrorCode(40352),
                    "FieldPath cannot be constructed with empty string",
                ));
            }
            super::limits::check_field_path(path)?;
            if let Bson::Document(d) = v {
                if d.get("$meta").is_some() {
                    return Err(EngineError::not_implemented("$meta sort"));
                }
                return Err(EngineError::new(
                    ErrorCode(17312),
                    "$meta is the only expression supported by $sort right now",
                ));
            }
            let Some(n) = value::as_f64(v).filter(|_| value::is_number(v)) else {
                return Err(EngineError::new(
                    ErrorCode(15974),
                    format!("Illegal key in $sort specification: {path}: {v}"),
                ));
            };
            let order = n.trunc();
            if order != 1.0 && order != -1.0 {
                return Err(EngineError::new(
                    ErrorCode(15975),
                    "$sort key ordering must be 1 (for ascending) or -1 (for descending)",
                ));
            }
            keys.push((path.clone(), order == 1.0));
        }
        Ok(SortSpec { keys })
    }

    /// Compare two documents under this sort.
    pub fn compare(&self, a: &Document, b: &Document, collation: Option<&Collation>) -> Ordering {
        for (path, ascending) in &self.keys {
            let parts: Vec<&str> = path.split('.').collect();
            let ka = sort_key(a, &parts, *ascending, collation);
            let kb = sort_key(b, &parts, *ascending, collation);
            let ord = value::compare(&ka, &kb, collation);
            let ord = if *ascending { ord } else { ord.reverse() };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }

    /// The values `doc` sorts by, one per key, for [`SortSpec::compare_keys`]:
    /// a sort that buffers computes them once per document, not once per
    /// comparison.
    pub fn keys_of(&self, doc: &Document, collation: Option<&Collation>) -> Box<[Bson]> {
        self.keys
            .iter()
            .map(|(path, ascending)| {
                let parts: Vec<&str> = path.split('.').collect();
                sort_key(doc, &parts, *ascending, collation)
            })
            .collect()
    }

    /// The values `doc` sorts by ([`SortSpec::keys_of`]) encoded as one
    /// index key ([`keystring`]): comparing two of them as bytes orders as
    /// [`SortSpec::compare`] does, and they are equal exactly when the
    /// documents compare equal. What a buffering sort keeps instead of the
    /// values themselves (a `Bson` is over 100 bytes).
    pub fn encoded_key(&self, doc: &Document, collation: Option<&Collation>) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 * self.keys.len());
        for (path, ascending) in &self.keys {
            let parts: Vec<&str> = path.split('.').collect();
            let v = sort_key(doc, &parts, *ascending, collation);
            keystring::append_component(&mut out, &v, *ascending, collation);
        }
        keystring::end_key(&mut out);
        out
    }

    /// [`SortSpec::encoded_key`] of a stored record, read from its bytes
    /// (only the top-level fields the sort reads are decoded).
    pub fn encoded_key_of_raw(
        &self,
        raw: &bson::RawDocument,
        collation: Option<&Collation>,
    ) -> Result<Vec<u8>> {
        let wanted = |name: &str| {
            self.keys
                .iter()
                .any(|(path, _)| path.split('.').next() == Some(name))
        };
        let fields = super::codec::decode_fields(raw, &wanted)
            .map_err(|e| EngineError::new(ErrorCode::INTERNAL_ERROR, e.to_string()))?;
        Ok(self.encoded_key(&fields, collation))
    }

    /// Compare the sort values of two documents ([`SortSpec::keys_of`]), as
    /// [`SortSpec::compare`] compares the documents.
    pub fn compare_keys(&self, a: &[Bson], b: &[Bson], collation: Option<&Collation>) -> Ordering {
        for (((_, ascending), ka), kb) in self.keys.iter().zip(a).zip(b) {
            let ord = value::compare(ka, kb, collation);
            let ord = if *ascending { ord } else { ord.reverse() };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }
}

/// The value `doc` sorts by on `path`: the smallest (ascending) or largest
/// (descending) of the values the path reaches.
pub fn sort_key(
    doc: &Document,
    path: &[&str],
    ascending: bool,
    collation: Option<&Collation>,
) -> Bson {
    let mut values = Vec::new();
    collect(doc, path, &mut values);
    let pick = |x: &Bson, best: &Bson| {
        let c = value::compare(x, best, collation);
        if ascending { c.is_lt() } else { c.is_gt() }
    };
    let mut best: Option<Bson> = None;
    for v in values {
        if best.as_ref().is_none_or(|b| pick(&v, b)) {
            best = Some(v);
        }
    }
    best.unwrap_or(Bson::Null)
}

fn collect(doc: &Document, path: &[&str], out: &mut Vec<Bson>) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match doc.get(*first) {
        None => out.push(Bson::Null),
        Some(v) => collect_value(v, rest, out),
    }
}

fn collect_value(v: &Bson, rest: &[&str], out: &mut Vec<Bson>) {
    match v {
        Bson::Array(items) if rest.is_empty() => {
            if items.is_empty() {
                out.push(Bson::Undefined);
            } else {
                out.extend(items.iter().cloned());
            }
        }
        _ if rest.is_empty() => out.push(v.clone()),
        Bson::Document(d) => collect(d, rest, out),
        Bson::Array(items) => {
            // A numeric component picks that element, as index keys do.
            if let Some(i) = rest.first().and_then(|c| crate::filter::array_index(c))
                && let Some(item) = items.get(i)
            {
                collect_value(item, &rest[1..], out);
                return;
            }
            if items.is_empty() {
                out.push(Bson::Null);
            }
            for item in items {
                match item {
                    Bson::Document(d) => collect(d, rest, out),
                    _ => out.push(Bson::Null),
                }
            }
        }
        _ => out.push(Bson::Null),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bson::doc;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Bson> {
        let leaf = prop_oneof![
            Just(Bson::Null),
            (-3i32..3).prop_map(Bson::Int32),
            (-3i64..3).prop_map(Bson::Int64),
            (-3.0f64..3.0).prop_map(Bson::Double),
            prop_oneof![Just("a"), Just("A"), Just("b"), Just("ab"), Just("")]
                .prop_map(|s| Bson::String(s.into())),
            any::<bool>().prop_map(Bson::Boolean),
            (0i64..3).prop_map(|m| Bson::DateTime(bson::DateTime::from_millis(m))),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
                proptest::collection::vec(("[xy]", inner), 0..2)
                    .prop_map(|kv| Bson::Document(kv.into_iter().collect())),
            ]
        })
    }

    fn document() -> impl Strategy<Value = Document> {
        proptest::collection::vec((prop_oneof![Just("a"), Just("b")], value()), 0..3)
            .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    fn spec() -> impl Strategy<Value = Document> {
        proptest::collection::vec(
            (
                prop_oneof![Just("a"), Just("b"), Just("a.x"), Just("b.0")],
                prop_oneof![Just(1), Just(-1)],
            ),
            1..3,
        )
        .prop_map(|keys| {
            keys.into_iter()
                .map(|(k, d)| (k.to_string(), Bson::Int32(d)))
                .collect()
        })
    }

    proptest! {
        /// The encoded sort key orders documents as the sort does, ties
        /// included, with and without a case-insensitive collation: what
        /// the `SORT` stage, the `$sort` buffer and the `$top` family
        /// compare instead of the values.
        #[test]
        fn encoded_keys_order_as_the_sort_does(
            a in document(),
            b in document(),
            spec in spec(),
            collated in any::<bool>(),
        ) {
            let Ok(s) = SortSpec::parse(&spec) else {
                return Ok(()); // a repeated path: refused, as mongod does
            };
            let collation = collated
                .then(|| Collation::parse(&doc! {"locale": "en", "strength": 2}).unwrap())
                .flatten();
            let c = collation.as_ref();
            prop_assert_eq!(
                s.encoded_key(&a, c).cmp(&s.encoded_key(&b, c)),
                s.compare(&a, &b, c),
                "{} vs {} by {}", a, b, spec
            );
        }
    }

    fn sorted(spec: Document, docs: Vec<Document>) -> Vec<i32> {
        let s = SortSpec::parse(&spec).unwrap();
        let mut docs = docs;
        docs.sort_by(|a, b| s.compare(a, b, None));
        docs.iter().map(|d| d.get_i32("_id").unwrap()).collect()
    }

    #[test]
    fn arrays_sort_by_min_or_max() {
        let docs = vec![
            doc! {"_id": 1, "a": [1, 9]},
            doc! {"_id": 2, "a": 5},
            doc! {"_id": 3, "a": []},
            doc! {"_id": 4},
            doc! {"_id": 5, "a": [3, 4]},
        ];
        assert_eq!(sorted(doc! {"a": 1}, docs.clone()), vec![3, 4, 1, 5, 2]);
        assert_eq!(sorted(doc! {"a": -1}, docs), vec![1, 2, 5, 4, 3]);
    }

    #[test]
    fn dotted_paths_through_arrays() {
        let docs = vec![
            doc! {"_id": 1, "a": [{"b": 5}, {"b": 1}]},
            doc! {"_id": 2, "a": {"b": 3}},
        ];
        assert_eq!(sorted(doc! {"a.b": 1}, docs.clone()), vec![1, 2]);
        assert_eq!(sorted(doc! {"a.b": -1}, docs), vec![1, 2]);
    }

    #[test]
    fn bad_orders_are_refused() {
        assert_eq!(
            SortSpec::parse(&doc! {"a": 2}).unwrap_err().code,
            ErrorCode(15975)
        );
        assert_eq!(
            SortSpec::parse(&doc! {"a": "x"}).unwrap_err().code,
            ErrorCode(15974)
        );
        assert_eq!(
            SortSpec::parse(&doc! {"a": {"$meta": "textScore"}})
                .unwrap_err()
                .code,
            ErrorCode::NOT_IMPLEMENTED
        );
        assert!(SortSpec::parse(&doc! {}).unwrap().keys.is_empty());
    }
}
