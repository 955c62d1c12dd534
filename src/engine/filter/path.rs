//! Dotted-path traversal with mongod's implicit array semantics.
//!
//! A path such as `a.b.c` names a *set* of values in a document, not one:
//! every array met along the way fans out over its elements, numeric
//! components both index into arrays and name fields of documents inside
//! them, and a path that leads nowhere yields one *missing* value (so that
//! `{a: null}` can match it). The positions of the first array crossed are
//! kept for the positional `$` operator.

use bson::{Bson, Document};

/// One value a path reaches. `value: None` is a missing field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate<'a> {
    pub value: Option<&'a Bson>,
    /// Index of the element in the first array the path crossed.
    pub position: Option<usize>,
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
) -> Vec<Candidate<'a>> {
    let mut out = Vec::new();
    if path.is_empty() {
        return out;
    }
    walk(doc, path, expand_leaf, None, &mut out);
    out
}

fn walk<'a>(
    doc: &'a Document,
    path: &[String],
    expand_leaf: bool,
    position: Option<usize>,
    out: &mut Vec<Candidate<'a>>,
) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match doc.get(first) {
        None => out.push(Candidate {
            value: None,
            position,
        }),
        Some(v) if rest.is_empty() => push_leaf(v, expand_leaf, position, out),
        Some(Bson::Document(d)) => walk(d, rest, expand_leaf, position, out),
        Some(Bson::Array(a)) => walk_array(a, rest, expand_leaf, position, out),
        // A scalar in the middle of a path: the rest of the path is missing.
        Some(_) => out.push(Candidate {
            value: None,
            position,
        }),
    }
}

fn walk_array<'a>(
    array: &'a [Bson],
    rest: &[String],
    expand_leaf: bool,
    position: Option<usize>,
    out: &mut Vec<Candidate<'a>>,
) {
    let index = rest.first().and_then(|c| array_index(c));
    for (i, element) in array.iter().enumerate() {
        // Documents inside the array are searched with the whole remaining
        // path (a numeric component may be a field name there); scalars and
        // nested arrays contribute nothing to an implicit traversal.
        if let Bson::Document(d) = element {
            walk(d, rest, expand_leaf, position.or(Some(i)), out);
        }
        if index != Some(i) {
            continue;
        }
        // The numeric component addresses this element explicitly. That is
        // not an implicit traversal, so it records no array position, and an
        // array found there is not expanded.
        let after = &rest[1..];
        match element {
            _ if after.is_empty() => out.push(Candidate {
                value: Some(element),
                position,
            }),
            Bson::Document(d) => walk(d, after, expand_leaf, position, out),
            Bson::Array(inner) => walk_array(inner, after, expand_leaf, position, out),
            _ => {}
        }
    }
}

fn push_leaf<'a>(
    value: &'a Bson,
    expand_leaf: bool,
    position: Option<usize>,
    out: &mut Vec<Candidate<'a>>,
) {
    if expand_leaf && let Bson::Array(a) = value {
        for (i, element) in a.iter().enumerate() {
            out.push(Candidate {
                value: Some(element),
                position: position.or(Some(i)),
            });
        }
    }
    out.push(Candidate {
        value: Some(value),
        position,
    });
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
