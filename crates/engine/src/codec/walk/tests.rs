#![allow(clippy::unwrap_used)]

//! The walker against `bson`'s own raw API, the model it must agree with:
//! on generated documents and on mutated (malformed, truncated) bytes,
//! `Doc::get` answers as `RawDocument::get` answers and `Doc::iter` yields
//! what `RawDocument::iter` yields, and nothing panics.

use super::*;
use crate::codec::encode;
use crate::codec::tests::{document, mutate, mutations, same};
use bson::{Document, RawBsonRef, doc};
use proptest::prelude::*;

/// A value decoded into a one-field document, so that `same` compares it
/// (NaNs, subtypes and all).
fn wrapped(v: std::result::Result<Bson, ()>) -> std::result::Result<Document, ()> {
    v.map(|v| doc! {"v": v})
}

/// Whether our value and `bson`'s are the same: same type, same text for
/// strings, same bytes for documents and arrays, and the same decoding
/// (both failing, or equal).
fn agree(ours: Value<'_>, theirs: RawBsonRef<'_>) -> std::result::Result<(), String> {
    if ours.element_type() != theirs.element_type() {
        return Err(format!("types {:?} vs {:?}", ours.element_type(), theirs));
    }
    match theirs {
        RawBsonRef::String(s) | RawBsonRef::Symbol(s) if ours.as_str() != Some(s) => {
            return Err(format!("text {:?} vs {s:?}", ours.as_str()));
        }
        RawBsonRef::Document(d) if ours.as_document().map(Doc::as_bytes) != Some(d.as_bytes()) => {
            return Err("document bytes differ".into());
        }
        RawBsonRef::Array(a) if ours.as_array().map(Doc::as_bytes) != Some(a.as_bytes()) => {
            return Err("array bytes differ".into());
        }
        RawBsonRef::Int32(n) if ours.as_int() != Some(i64::from(n)) => {
            return Err(format!("int32 {:?} vs {n}", ours.as_int()));
        }
        RawBsonRef::Int64(n) if ours.as_int() != Some(n) => {
            return Err(format!("int64 {:?} vs {n}", ours.as_int()));
        }
        _ => {}
    }
    let a = wrapped(ours.decode().map_err(|_| ()));
    let b = wrapped(Bson::try_from(theirs).map_err(|_| ()));
    match (&a, &b) {
        (Ok(x), Ok(y)) if same(x, y) => Ok(()),
        (Err(()), Err(())) => Ok(()),
        _ => Err(format!("decoded {a:?} vs {b:?}")),
    }
}

/// `Doc::get` against `RawDocument::get` for one key.
fn check_get(bytes: &[u8], key: &str) -> std::result::Result<(), String> {
    let theirs = RawDocument::from_bytes(bytes).and_then(|d| d.get(key));
    let ours = Doc::new(bytes).and_then(|d| d.get(key));
    match (ours, theirs) {
        (Ok(None), Ok(None)) | (Err(_), Err(_)) => Ok(()),
        (Ok(Some(a)), Ok(Some(b))) => agree(a, b).map_err(|e| format!("key {key:?}: {e}")),
        (a, b) => Err(format!("key {key:?}: ours {a:?}, bson {b:?}")),
    }
}

/// `Doc::iter` against `RawDocument::iter`, element by element.
fn check_iter(bytes: &[u8]) -> std::result::Result<(), String> {
    let (Ok(ours), Ok(theirs)) = (Doc::new(bytes), RawDocument::from_bytes(bytes)) else {
        return match (Doc::new(bytes), RawDocument::from_bytes(bytes)) {
            (Err(_), Err(_)) => Ok(()),
            (a, b) => Err(format!("framing: ours {a:?}, bson {b:?}")),
        };
    };
    let ours: Vec<_> = ours.iter().collect();
    let theirs: Vec<_> = theirs.iter().collect();
    if ours.len() != theirs.len() {
        return Err(format!("{} elements vs {}", ours.len(), theirs.len()));
    }
    for (i, (a, b)) in ours.into_iter().zip(theirs).enumerate() {
        match (a, b) {
            (Ok((ka, va)), Ok((kb, vb))) => {
                if ka != kb {
                    return Err(format!("element {i}: key {ka:?} vs {kb:?}"));
                }
                agree(va, vb).map_err(|e| format!("element {i}: {e}"))?;
            }
            (Err(_), Err(_)) => {}
            (a, b) => return Err(format!("element {i}: ours {a:?}, bson {b:?}")),
        }
    }
    Ok(())
}

/// The keys worth looking up in `bytes`: the document's own, those `bson`
/// still finds after a mutation, and some that are likely absent.
fn keys(d: &Document, bytes: &[u8], extra: &str) -> Vec<String> {
    let mut keys: Vec<String> = d.keys().cloned().collect();
    if let Ok(raw) = RawDocument::from_bytes(bytes) {
        keys.extend(raw.iter().filter_map(|r| r.ok()).map(|(k, _)| k.to_owned()));
    }
    keys.extend([extra.to_owned(), String::new(), "a\0".to_owned()]);
    keys
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// On valid documents: every key, present or not, is found as `bson`
    /// finds it, and iteration yields the same elements.
    #[test]
    fn agrees_with_bson_on_valid_documents(d in document(false), extra in "[a-z_$.]{0,3}") {
        let raw = encode(&d).unwrap();
        let bytes = raw.as_bytes();
        for key in keys(&d, bytes, &extra) {
            if let Err(e) = check_get(bytes, &key) {
                prop_assert!(false, "{}", e);
            }
        }
        if let Err(e) = check_iter(bytes) {
            prop_assert!(false, "{}", e);
        }
    }

    /// On mutated bytes (framing kept consistent, so that they reach the
    /// element walk): errors exactly where `bson` errs, the same values
    /// where it succeeds, no panic.
    #[test]
    fn agrees_with_bson_on_malformed_bytes(
        d in document(false),
        ms in mutations(),
        extra in "[a-z_$.]{0,3}",
    ) {
        let bytes = mutate(encode(&d).unwrap().as_bytes(), &ms);
        for key in keys(&d, &bytes, &extra) {
            if let Err(e) = check_get(&bytes, &key) {
                prop_assert!(false, "{} on {:?}", e, bytes);
            }
        }
        if let Err(e) = check_iter(&bytes) {
            prop_assert!(false, "{} on {:?}", e, bytes);
        }
    }

    /// Truncated or extended bytes whose length prefix no longer fits:
    /// refused by `Doc::new` exactly when `RawDocument::from_bytes` refuses.
    #[test]
    fn frames_documents_as_bson_does(d in document(false), cut in any::<usize>(), tail in any::<u8>()) {
        let bytes = encode(&d).unwrap().into_bytes();
        let truncated = &bytes[..cut % (bytes.len() + 1)];
        prop_assert_eq!(Doc::new(truncated).is_ok(), RawDocument::from_bytes(truncated).is_ok());
        if let Err(e) = check_get(truncated, "a") {
            prop_assert!(false, "{}", e);
        }
        let mut extended = bytes.clone();
        extended.push(tail);
        prop_assert_eq!(Doc::new(&extended).is_ok(), RawDocument::from_bytes(&extended).is_ok());
    }

    /// Arbitrary bytes behind a consistent length prefix and terminator:
    /// the walk never panics and agrees with `bson`.
    #[test]
    fn agrees_with_bson_on_arbitrary_bodies(
        body in proptest::collection::vec(any::<u8>(), 0..40),
        key in "[a-c]{0,2}",
    ) {
        let mut bytes = ((body.len() + 5) as i32).to_le_bytes().to_vec();
        bytes.extend_from_slice(&body);
        bytes.push(0);
        if let Err(e) = check_get(&bytes, &key) {
            prop_assert!(false, "{} on {:?}", e, bytes);
        }
        if let Err(e) = check_iter(&bytes) {
            prop_assert!(false, "{} on {:?}", e, bytes);
        }
    }
}

#[test]
fn finds_the_first_of_duplicate_keys_and_stops_there() {
    // `{a: 1, a: 2}` followed by an element with an invalid type byte:
    // found before the bad element is reached, as `bson` finds it.
    let mut bytes = encode(&doc! {"a": 1, "b": 2}).unwrap().into_bytes();
    // Rename `b` to `a`, then add a bad element before the terminator.
    let b_at = bytes.iter().rposition(|&c| c == b'b').unwrap();
    bytes[b_at] = b'a';
    bytes.pop();
    bytes.extend_from_slice(&[0x42, b'z', 0, 0]);
    let len = bytes.len() as i32;
    bytes[..4].copy_from_slice(&len.to_le_bytes());
    let doc = Doc::new(&bytes).unwrap();
    assert_eq!(doc.get("a").unwrap().unwrap().as_int(), Some(1));
    assert!(doc.get("missing").is_err());
    check_get(&bytes, "a").unwrap();
    check_get(&bytes, "missing").unwrap();
    check_iter(&bytes).unwrap();
}

#[test]
fn an_invalid_key_before_the_one_wanted_is_an_error() {
    let mut bytes = encode(&doc! {"x": 1, "a": 2}).unwrap().into_bytes();
    let x_at = bytes.iter().position(|&c| c == b'x').unwrap();
    bytes[x_at] = 0xFF;
    assert!(Doc::new(&bytes).unwrap().get("a").is_err());
    assert!(RawDocument::from_bytes(&bytes).unwrap().get("a").is_err());
}

/// The nesting depth as it was measured over `bson`'s own iterator: the
/// model `limits::raw_depth_within` (now walked with [`Doc`]) must agree
/// with, malformed levels included.
fn depth_by_bson(doc: &RawDocument, limit: usize) -> Option<usize> {
    let mut stack = vec![doc.into_iter()];
    let mut max = 1;
    while let Some(top) = stack.last_mut() {
        match top.next() {
            None | Some(Err(_)) => {
                stack.pop();
            }
            Some(Ok((_, value))) => {
                let child = match value {
                    RawBsonRef::Document(d) => Some(d),
                    RawBsonRef::Array(a) => RawDocument::from_bytes(a.as_bytes()).ok(),
                    RawBsonRef::JavaScriptCodeWithScope(c) => Some(c.scope),
                    _ => None,
                };
                if let Some(child) = child {
                    if stack.len() >= limit {
                        return None;
                    }
                    stack.push(child.into_iter());
                    max = max.max(stack.len());
                }
            }
        }
    }
    Some(max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// `raw_depth_within` measures what `bson`'s iterator measured, on
    /// valid and on mutated bytes, at every limit up to past the depth.
    #[test]
    fn depth_agrees_with_bson(d in document(false), ms in mutations(), limit in 1usize..8) {
        let valid = encode(&d).unwrap();
        let mutated = mutate(valid.as_bytes(), &ms);
        for bytes in [valid.as_bytes(), &mutated[..]] {
            if let Ok(raw) = RawDocument::from_bytes(bytes) {
                prop_assert_eq!(
                    crate::limits::raw_depth_within(raw, limit),
                    depth_by_bson(raw, limit),
                    "limit {} on {:?}", limit, bytes
                );
            }
        }
    }
}

#[test]
fn depth_counts_documents_arrays_and_scopes() {
    use crate::limits::raw_depth_within;
    let d = doc! {"a": {"b": [1, {"c": 2}]}, "s": "x"};
    let raw = encode(&d).unwrap();
    assert_eq!(raw_depth_within(&raw, 10), Some(4));
    assert_eq!(raw_depth_within(&raw, 4), Some(4));
    assert_eq!(raw_depth_within(&raw, 3), None);
    let scoped = doc! {"f": bson::Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope {
        code: "x".into(),
        scope: doc! {"y": {"z": 1}},
    })};
    let raw = encode(&scoped).unwrap();
    assert_eq!(raw_depth_within(&raw, 10), Some(3));
}
