//! Dotted-path traversal with mongod's implicit array semantics.
//!
//! A path such as `a.b.c` names a *set* of values in a document, not one:
//! every array met along the way fans out over its elements, numeric
//! components both index into arrays and name fields of documents inside
//! them, and a path that leads nowhere yields one *missing* value (so that
//! `{a: null}` can match it). The positions of the first array crossed are
//! kept for the positional `$` operator.

use bson::{Bson, Document};

use crate::codec::walk;

/// One value a path reaches. `value: None` is a missing field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate<V> {
    pub value: Option<V>,
    /// Index of the element in the first array the path crossed.
    pub position: Option<usize>,
}

/// What a path step sees of a value: a document to look a field up in, an
/// array to fan out over, or a scalar that ends the path.
pub(crate) enum Shape<D, A> {
    Doc(D),
    Array(A),
    Other,
}

/// A view of BSON values that paths can be walked through: decoded
/// (`&Bson`) or raw (`walk::Value`, straight from a stored record). There is
/// one traversal, written once over this trait, so that the two views
/// cannot disagree on mongod's array semantics.
pub(crate) trait View<'a>: Copy {
    type Doc: Copy;
    type Array: Copy;
    fn shape(self) -> Shape<Self::Doc, Self::Array>;
    /// A field of a document (the first with that name).
    fn field(doc: Self::Doc, key: &str) -> Option<Self>;
    /// The elements of an array, in order.
    fn elements(array: Self::Array) -> impl Iterator<Item = Self>;
}

impl<'a> View<'a> for &'a Bson {
    type Doc = &'a Document;
    type Array = &'a [Bson];
    fn shape(self) -> Shape<&'a Document, &'a [Bson]> {
        match self {
            Bson::Document(d) => Shape::Doc(d),
            Bson::Array(a) => Shape::Array(a),
            _ => Shape::Other,
        }
    }
    fn field(doc: &'a Document, key: &str) -> Option<Self> {
        doc.get(key)
    }
    fn elements(array: &'a [Bson]) -> impl Iterator<Item = Self> {
        array.iter()
    }
}

thread_local! {
    /// Set when a raw walk met malformed BSON: the raw matcher's answer is
    /// then discarded and the record decoded, which reports the corruption.
    static MALFORMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

pub(crate) fn malformed<T, E>(r: std::result::Result<T, E>) -> Option<T> {
    r.map_err(|_| MALFORMED.with(|m| m.set(true))).ok()
}

/// Whether a raw walk met malformed BSON since the last call (the flag is
/// cleared): every raw match ends by asking.
pub(crate) fn take_malformed() -> bool {
    MALFORMED.with(|m| m.replace(false))
}

impl<'a> View<'a> for walk::Value<'a> {
    type Doc = walk::Doc<'a>;
    type Array = walk::Doc<'a>;
    fn shape(self) -> Shape<walk::Doc<'a>, walk::Doc<'a>> {
        if let Some(d) = self.as_document() {
            Shape::Doc(d)
        } else if let Some(a) = self.as_array() {
            Shape::Array(a)
        } else {
            Shape::Other
        }
    }
    fn field(doc: walk::Doc<'a>, key: &str) -> Option<Self> {
        malformed(doc.get(key)).flatten()
    }
    fn elements(array: walk::Doc<'a>) -> impl Iterator<Item = Self> {
        array.values().map_while(malformed)
    }
}

/// The array index a path component denotes, if it is a canonical decimal
/// number (mongod does not treat `"01"` as index 1).
pub(crate) fn array_index(component: &str) -> Option<usize> {
    let bytes = component.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    component.parse().ok()
}

/// Every value `path` reaches in `doc`. With `expand_leaf`, an array found
/// at the end of the path yields each of its elements and then itself, as
/// most predicates expect; `$size`, `$elemMatch` and `$exists` look at the
/// array itself only.
pub(crate) fn candidates<'a>(
    doc: &'a Document,
    path: &[String],
    expand_leaf: bool,
) -> Vec<Candidate<&'a Bson>> {
    let mut out = Vec::new();
    visit_candidates::<&'a Bson>(doc, path, expand_leaf, &mut |c| {
        out.push(c);
        false
    });
    out
}

/// [`candidates`] in any view of the document, handed to `visit` one by one
/// in the same order, until it returns true ("stop"); returns whether it
/// stopped. The raw matcher walks this way and allocates nothing.
pub(crate) fn visit_candidates<'a, V: View<'a>>(
    doc: V::Doc,
    path: &[String],
    expand_leaf: bool,
    visit: &mut impl FnMut(Candidate<V>) -> bool,
) -> bool {
    !path.is_empty() && walk::<V>(doc, path, expand_leaf, None, visit)
}

fn walk<'a, V: View<'a>>(
    doc: V::Doc,
    path: &[String],
    expand_leaf: bool,
    position: Option<usize>,
    visit: &mut impl FnMut(Candidate<V>) -> bool,
) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    let Some(v) = V::field(doc, first) else {
        return visit(Candidate {
            value: None,
            position,
        });
    };
    if rest.is_empty() {
        return push_leaf(v, expand_leaf, position, visit);
    }
    match v.shape() {
        Shape::Doc(d) => walk::<V>(d, rest, expand_leaf, position, visit),
        Shape::Array(a) => walk_array::<V>(a, rest, expand_leaf, position, visit),
        // A scalar in the middle of a path: the rest of the path is missing.
        Shape::Other => visit(Candidate {
            value: None,
            position,
        }),
    }
}

fn walk_array<'a, V: View<'a>>(
    array: V::Array,
    rest: &[String],
    expand_leaf: bool,
    position: Option<usize>,
    visit: &mut impl FnMut(Candidate<V>) -> bool,
) -> bool {
    let index = rest.first().and_then(|c| array_index(c));
    for (i, element) in V::elements(array).enumerate() {
        // Documents inside the array are searched with the whole remaining
        // path (a numeric component may be a field name there); scalars and
        // nested arrays contribute nothing to an implicit traversal.
        if let Shape::Doc(d) = element.shape()
            && walk::<V>(d, rest, expand_leaf, position.or(Some(i)), visit)
        {
            return true;
        }
        if index != Some(i) {
            continue;
        }
        // The numeric component addresses this element explicitly. That is
        // not an implicit traversal, so it records no array position, and an
        // array found there is not expanded.
        let after = &rest[1..];
        let stop = if after.is_empty() {
            visit(Candidate {
                value: Some(element),
                position,
            })
        } else {
            match element.shape() {
                Shape::Doc(d) => walk::<V>(d, after, expand_leaf, position, visit),
                Shape::Array(inner) => walk_array::<V>(inner, after, expand_leaf, position, visit),
                Shape::Other => false,
            }
        };
        if stop {
            return true;
        }
    }
    false
}

fn push_leaf<'a, V: View<'a>>(
    value: V,
    expand_leaf: bool,
    position: Option<usize>,
    visit: &mut impl FnMut(Candidate<V>) -> bool,
) -> bool {
    if expand_leaf && let Shape::Array(a) = value.shape() {
        for (i, element) in V::elements(a).enumerate() {
            if visit(Candidate {
                value: Some(element),
                position: position.or(Some(i)),
            }) {
                return true;
            }
        }
    }
    visit(Candidate {
        value: Some(value),
        position,
    })
}

/// An array viewed as a document with keys `"0"`, `"1"`, …, as mongod sees
/// arrays that an `$elemMatch` object predicate is applied to.
pub(crate) fn array_as_document(array: &[Bson]) -> Document {
    array
        .iter()
        .enumerate()
        .map(|(i, v)| (i.to_string(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn p(s: &str) -> Vec<String> {
        s.split('.').map(str::to_string).collect()
    }

    #[test]
    fn fans_out_over_arrays_of_documents() {
        let d = doc! {"a": [{"b": 1}, {"b": [2, 3]}, {"c": 0}, 7]};
        let got: Vec<_> = candidates(&d, &p("a.b"), true)
            .iter()
            .map(|c| (c.value.cloned(), c.position))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some(Bson::Int32(1)), Some(0)),
                (Some(Bson::Int32(2)), Some(1)),
                (Some(Bson::Int32(3)), Some(1)),
                (Some(Bson::Array(vec![2.into(), 3.into()])), Some(1)),
                (None, Some(2)),
            ]
        );
    }

    #[test]
    fn explicit_index_into_nested_array_traverses_it() {
        let d = doc! {"a": [[{"b": 1}]]};
        let vals: Vec<_> = candidates(&d, &p("a.0.b"), true)
            .iter()
            .filter_map(|c| c.value.cloned())
            .collect();
        assert_eq!(vals, vec![Bson::Int32(1)]);
        assert!(candidates(&d, &p("a.b"), true).is_empty());
    }

    #[test]
    fn numeric_components_index_and_name_fields() {
        let d = doc! {"a": [{"b": 5}, {"0": {"b": 6}}]};
        let vals: Vec<_> = candidates(&d, &p("a.0.b"), true)
            .iter()
            .filter_map(|c| c.value.cloned())
            .collect();
        assert_eq!(vals, vec![Bson::Int32(5), Bson::Int32(6)]);
        assert_eq!(array_index("01"), None);
        assert_eq!(array_index("10"), Some(10));
    }
}
