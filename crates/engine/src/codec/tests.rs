#![allow(clippy::unwrap_used)]

use super::*;
use bson::doc;
use proptest::prelude::*;

/// `bson`'s own encoding, the reference.
fn reference(d: &Document) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    d.to_writer(&mut out)
        .map(|()| out)
        .map_err(|e| e.to_string())
}

/// `bson`'s own conversion of raw bytes, the reference.
fn reference_decode(raw: &RawDocument) -> std::result::Result<Document, String> {
    Document::try_from(raw).map_err(|e| e.to_string())
}

/// A DBPointer, which can only be made by decoding one.
fn dbpointer_value(ns: &str, id: [u8; 12]) -> Bson {
    let mut value = Vec::new();
    write_string(&mut value, ns);
    value.extend_from_slice(&id);
    dbpointer(&value).unwrap()
}

/// Two decoded documents are the same: same bytes when encoded by `bson`
/// and same structure (`Debug` tells NaN from NaN, and subtypes apart).
pub(super) fn same(a: &Document, b: &Document) -> bool {
    reference(a) == reference(b) && format!("{a:?}") == format!("{b:?}")
}

/// `d` with regex options sorted, as decoding gives them back.
fn normalised(d: &Document) -> Document {
    d.iter()
        .map(|(k, v)| (k.clone(), normalised_value(v)))
        .collect()
}

fn normalised_value(v: &Bson) -> Bson {
    match v {
        Bson::Document(d) => Bson::Document(normalised(d)),
        Bson::Array(items) => Bson::Array(items.iter().map(normalised_value).collect()),
        Bson::RegularExpression(re) => Bson::RegularExpression(Regex {
            pattern: re.pattern.clone(),
            options: sorted_options(&re.options),
        }),
        Bson::JavaScriptCodeWithScope(c) => {
            Bson::JavaScriptCodeWithScope(JavaScriptCodeWithScope {
                code: c.code.clone(),
                scope: normalised(&c.scope),
            })
        }
        v => v.clone(),
    }
}

fn key(nul: bool) -> BoxedStrategy<String> {
    if nul {
        prop_oneof![
            20 => "[a-z_$.]{0,4}",
            1 => "[a-z]{0,2}\0[a-z]{0,2}",
        ]
        .boxed()
    } else {
        prop_oneof!["[a-z_$.]{0,4}", "\\PC{0,3}"].boxed()
    }
}

fn leaf(nul: bool) -> BoxedStrategy<Bson> {
    let cstring = if nul {
        prop_oneof![20 => "[a-z.*]{0,4}", 1 => "a\0"].boxed()
    } else {
        "[a-z.*]{0,4}".boxed()
    };
    prop_oneof![
        any::<f64>().prop_map(Bson::Double),
        "\\PC{0,8}".prop_map(Bson::String),
        "[a\0b]{0,3}".prop_map(Bson::String),
        (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..12)).prop_map(|(t, bytes)| {
            Bson::Binary(Binary {
                subtype: BinarySubtype::from(t),
                bytes,
            })
        }),
        proptest::collection::vec(any::<u8>(), 0..6).prop_map(|bytes| Bson::Binary(Binary {
            subtype: BinarySubtype::BinaryOld,
            bytes
        })),
        Just(Bson::Undefined),
        any::<[u8; 12]>().prop_map(|b| Bson::ObjectId(ObjectId::from_bytes(b))),
        any::<bool>().prop_map(Bson::Boolean),
        any::<i64>().prop_map(|n| Bson::DateTime(DateTime::from_millis(n))),
        Just(Bson::Null),
        (cstring, "[imxsul]{0,4}")
            .prop_map(|(pattern, options)| Bson::RegularExpression(Regex { pattern, options })),
        ("\\PC{0,4}", any::<[u8; 12]>()).prop_map(|(ns, id)| dbpointer_value(&ns, id)),
        "\\PC{0,6}".prop_map(Bson::JavaScriptCode),
        "\\PC{0,6}".prop_map(Bson::Symbol),
        any::<i32>().prop_map(Bson::Int32),
        (any::<u32>(), any::<u32>())
            .prop_map(|(time, increment)| Bson::Timestamp(Timestamp { time, increment })),
        any::<i64>().prop_map(Bson::Int64),
        any::<[u8; 16]>().prop_map(|b| Bson::Decimal128(Decimal128::from_bytes(b))),
        Just(Bson::MinKey),
        Just(Bson::MaxKey),
    ]
    .boxed()
}

fn document_of(v: BoxedStrategy<Bson>, nul: bool) -> BoxedStrategy<Document> {
    proptest::collection::vec((key(nul), v), 0..6)
        .prop_map(|fields| fields.into_iter().collect())
        .boxed()
}

pub(super) fn value(nul: bool) -> BoxedStrategy<Bson> {
    leaf(nul)
        .prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                document_of(inner.clone(), nul).prop_map(Bson::Document),
                proptest::collection::vec(inner.clone(), 0..12).prop_map(Bson::Array),
                ("\\PC{0,4}", document_of(inner, nul)).prop_map(|(code, scope)| {
                    Bson::JavaScriptCodeWithScope(JavaScriptCodeWithScope { code, scope })
                }),
            ]
        })
        .boxed()
}

pub(super) fn document(nul: bool) -> BoxedStrategy<Document> {
    document_of(value(nul), nul)
}

/// A change to valid bytes that may make them invalid.
#[derive(Debug, Clone)]
pub(super) enum Mutation {
    Set(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
}

pub(super) fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    let one = prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
    ];
    proptest::collection::vec(one, 1..4)
}

/// Apply the mutations to the body (never the length prefix nor the
/// terminator), then make the prefix and terminator consistent again, so
/// that the bytes pass `RawDocument::from_bytes` and reach the decoders.
pub(super) fn mutate(bytes: &[u8], ms: &[Mutation]) -> Vec<u8> {
    let mut body = bytes[4..bytes.len() - 1].to_vec();
    for m in ms {
        match *m {
            Mutation::Set(i, b) if !body.is_empty() => {
                let i = i % body.len();
                body[i] = b;
            }
            Mutation::Truncate(n) if !body.is_empty() => body.truncate(n % body.len()),
            Mutation::Insert(i, b) => {
                let i = i % (body.len() + 1);
                body.insert(i, b);
            }
            _ => {}
        }
    }
    let mut out = ((body.len() + 5) as i32).to_le_bytes().to_vec();
    out.extend_from_slice(&body);
    out.push(0);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Encoding gives `bson`'s bytes, or fails where `bson` fails with the
    /// same message; `try_size` agrees with both and `size` is the length.
    #[test]
    fn encode_and_size_match_bson(d in document(true)) {
        let mut ours = Vec::new();
        let result = encode_into(&d, &mut ours).map(|()| ours).map_err(|e| e.to_string());
        prop_assert_eq!(&result, &reference(&d));
        match result {
            Ok(bytes) => {
                prop_assert_eq!(size(&d), bytes.len());
                prop_assert_eq!(try_size(&d), Ok(bytes.len()));
                let buf = encode(&d).unwrap();
                prop_assert_eq!(buf.as_bytes(), &bytes[..]);
            }
            Err(_) => {
                prop_assert!(try_size(&d).is_err());
                let ours = encode(&d).unwrap_err().to_string();
                let theirs = RawDocumentBuf::from_document(&d).unwrap_err().to_string();
                prop_assert_eq!(ours, theirs);
            }
        }
    }

    /// Decoding gives back the document (regex options sorted, as `bson`
    /// stores them), and exactly what `bson`'s own conversion gives.
    #[test]
    fn decode_round_trips_and_matches_bson(d in document(false)) {
        let raw = encode(&d).unwrap();
        let ours = decode(&raw).unwrap();
        prop_assert!(same(&ours, &normalised(&d)), "{:?} vs {:?}", ours, d);
        prop_assert!(same(&ours, &reference_decode(&raw).unwrap()));
        let all = decode_fields(&raw, &|_| true).unwrap();
        prop_assert!(same(&all, &ours));
    }

    /// Mutated encodings: `decode` errs exactly when `bson`'s conversion
    /// errs, agrees with it when both succeed, and never panics.
    #[test]
    fn decode_errs_where_bson_errs(d in document(false), ms in mutations()) {
        let bytes = mutate(encode(&d).unwrap().as_bytes(), &ms);
        let raw = RawDocument::from_bytes(&bytes).unwrap();
        let ours = decode(raw);
        let theirs = reference_decode(raw);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => prop_assert!(same(a, b), "{:?} vs {:?}", a, b),
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "ours {:?}, bson {:?} on {:?}", ours, theirs, bytes),
        }
        // The selective decoder never panics either, and selecting
        // everything of a valid document is the whole document.
        let all = decode_fields(raw, &|_| true);
        if let Ok(a) = &ours {
            prop_assert!(same(&all.unwrap(), a));
        }
    }

    /// `decode_fields` keeps exactly the wanted top-level fields, in
    /// document order.
    #[test]
    fn decode_fields_selects_in_order(d in document(false), pick in "[a-z]{0,3}") {
        let raw = encode(&d).unwrap();
        let wanted = |k: &str| k.contains(|c: char| pick.contains(c));
        let ours = decode_fields(&raw, &wanted).unwrap();
        let expected: Document = decode(&raw)
            .unwrap()
            .into_iter()
            .filter(|(k, _)| wanted(k))
            .collect();
        prop_assert!(same(&ours, &expected));
    }
}

#[test]
fn regex_options_are_sorted_as_bson_sorts_them() {
    let d = doc! {"r": Regex { pattern: "a.c".into(), options: "xmi".into() }};
    let raw = encode(&d).unwrap();
    assert_eq!(raw.as_bytes(), &reference(&d).unwrap()[..]);
    assert_eq!(
        decode(&raw).unwrap(),
        doc! {"r": Regex { pattern: "a.c".into(), options: "imx".into() }}
    );
}

#[test]
fn old_binary_subtype_carries_an_inner_length() {
    let d = doc! {"b": Binary { subtype: BinarySubtype::BinaryOld, bytes: vec![7, 8, 9] }};
    let raw = encode(&d).unwrap();
    let b = raw.as_bytes();
    // tag, "b\0", outer length 7, subtype 2, inner length 3, bytes
    assert_eq!(&b[4..7], &[0x05, b'b', 0]);
    assert_eq!(&b[7..11], &7i32.to_le_bytes());
    assert_eq!(b[11], 0x02);
    assert_eq!(&b[12..16], &3i32.to_le_bytes());
    assert_eq!(&b[16..19], &[7, 8, 9]);
    assert_eq!(b, &reference(&d).unwrap()[..]);
    assert_eq!(size(&d), b.len());
    assert_eq!(decode(&raw).unwrap(), d);
}

#[test]
fn nul_in_a_key_fails_with_bsons_message() {
    let d = doc! {"ok": 1, "inner": {"a\0b": 1}};
    assert_eq!(
        encode(&d).unwrap_err().to_string(),
        RawDocumentBuf::from_document(&d).unwrap_err().to_string()
    );
    assert_eq!(try_size(&d), Err(CodecError::NulInCString("a\0b".into())));
    assert_eq!(
        size(&d),
        reference(&doc! {"ok": 1, "inner": {"a_b": 1}})
            .unwrap()
            .len()
    );
}

#[test]
fn nul_in_a_string_value_is_fine() {
    let d = doc! {"s": "a\0b", "code": Bson::JavaScriptCode("x\0".into())};
    assert_eq!(encode(&d).unwrap().as_bytes(), &reference(&d).unwrap()[..]);
}

#[test]
fn long_arrays_get_multi_digit_keys() {
    let d = doc! {"a": (0..1234).collect::<Vec<i32>>()};
    let raw = encode(&d).unwrap();
    assert_eq!(raw.as_bytes(), &reference(&d).unwrap()[..]);
    assert_eq!(size(&d), raw.as_bytes().len());
    assert_eq!(decode(&raw).unwrap(), d);
}

#[test]
fn invalid_utf8_in_a_string_is_an_error() {
    let mut bytes = encode(&doc! {"s": "ab"}).unwrap().into_bytes();
    let at = bytes.len() - 3;
    bytes[at] = 0xFF;
    let raw = RawDocument::from_bytes(&bytes).unwrap();
    assert!(reference_decode(raw).is_err());
    assert!(matches!(decode(raw), Err(CodecError::Utf8 { .. })));
}

#[test]
fn a_boolean_other_than_0_or_1_is_an_error() {
    let mut bytes = encode(&doc! {"t": true}).unwrap().into_bytes();
    let at = bytes.len() - 2;
    bytes[at] = 2;
    let raw = RawDocument::from_bytes(&bytes).unwrap();
    assert!(reference_decode(raw).is_err());
    assert!(decode(raw).is_err());
}

#[test]
fn decode_fields_skips_without_converting() {
    let raw = encode(&doc! {"_id": 1, "body": "long text", "n": {"x": 2}, "t": true}).unwrap();
    let picked = decode_fields(&raw, &|k| k == "n" || k == "_id").unwrap();
    assert_eq!(picked, doc! {"_id": 1, "n": {"x": 2}});
    // A malformed value in a skipped field goes unnoticed; in a wanted one
    // it is an error.
    let mut bytes = raw.into_bytes();
    let at = bytes.len() - 2;
    bytes[at] = 7; // the boolean `t`
    let raw = RawDocument::from_bytes(&bytes).unwrap();
    assert_eq!(
        decode_fields(raw, &|k| k == "_id").unwrap(),
        doc! {"_id": 1}
    );
    assert!(decode_fields(raw, &|k| k == "t").is_err());
}

#[test]
fn decode_array_matches_bson() {
    let d = doc! {"a": [1, "two", {"three": [3.0]}, [Bson::Null], Bson::MaxKey]};
    let raw = encode(&d).unwrap();
    let array = raw.get_array("a").unwrap();
    let theirs: Vec<Bson> = array.try_into().unwrap();
    assert_eq!(decode_array(array).unwrap(), theirs);
}

#[test]
fn dbpointer_round_trips() {
    let d = doc! {"p": dbpointer_value("db.coll", [1; 12])};
    let raw = encode(&d).unwrap();
    assert_eq!(raw.as_bytes(), &reference(&d).unwrap()[..]);
    assert_eq!(size(&d), raw.as_bytes().len());
    assert_eq!(decode(&raw).unwrap(), d);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// An array built value by value decodes to those values, in order.
    #[test]
    fn array_builder_gives_back_its_values(items in prop::collection::vec(value(false), 0..12)) {
        let mut b = ArrayBuilder::default();
        for v in &items {
            b.push(v).unwrap();
        }
        prop_assert_eq!(b.len(), items.len());
        // As the same array round-trips inside a document (regex options
        // come back sorted, as `bson` writes them).
        let mut d = Document::new();
        d.insert("a", items);
        let expected = decode(&encode(&d).unwrap()).unwrap();
        prop_assert_eq!(&Bson::Array(b.finish().unwrap()), expected.get("a").unwrap());
    }
}

#[test]
fn array_builder_keeps_nothing_of_a_value_it_cannot_encode() {
    let mut b = ArrayBuilder::default();
    b.push(&Bson::Int32(1)).unwrap();
    let mut bad = Document::new();
    bad.insert("a\0b", 1);
    assert!(b.push(&Bson::Document(bad)).is_err());
    b.push(&Bson::Int32(2)).unwrap();
    assert_eq!(b.finish().unwrap(), vec![Bson::Int32(1), Bson::Int32(2)]);
}

proptest! {
    #[test]
    fn removing_fields_from_bytes_is_removing_them_from_the_document(
        d in document(false),
        picks in proptest::collection::vec(any::<proptest::sample::Index>(), 0..3),
    ) {
        let keys: Vec<String> = d.keys().cloned().collect();
        let mut names: Vec<&str> = Vec::new();
        if !keys.is_empty() {
            names = picks.iter().map(|i| keys[i.index(keys.len())].as_str()).collect();
        }
        names.push("not-a-field");
        let raw = encode(&d).unwrap();
        let mut expected = d.clone();
        for name in &names {
            expected.remove(*name);
        }
        match without_fields(&raw, &names).unwrap() {
            None => prop_assert_eq!(expected.len(), d.len()),
            Some(out) => {
                prop_assert!(expected.len() < d.len());
                let want = encode(&expected).unwrap();
                prop_assert_eq!(out.as_bytes(), want.as_bytes());
            }
        }
    }

    #[test]
    fn merging_in_bytes_is_inserting_into_the_document(
        base in document(false),
        fields in document(false),
    ) {
        let mut expected = base.clone();
        for (k, v) in &fields {
            expected.insert(k.clone(), v.clone());
        }
        let merged = merge_fields(&encode(&base).unwrap(), &encode(&fields).unwrap()).unwrap();
        let want = encode(&expected).unwrap();
        prop_assert_eq!(merged.as_bytes(), want.as_bytes());
    }
}

#[test]
fn merging_sets_a_field_the_base_holds_twice_once_in_its_first_place() {
    let mut base = RawDocumentBuf::new();
    base.append("a", 1);
    base.append("b", 2);
    base.append("a", 3);
    let merged = merge_fields(&base, &encode(&doc! {"a": "x", "c": true}).unwrap()).unwrap();
    assert_eq!(
        merged.as_bytes(),
        encode(&doc! {"a": "x", "b": 2, "c": true})
            .unwrap()
            .as_bytes()
    );
    let mut twice = RawDocumentBuf::new();
    twice.append("a", 1);
    twice.append("b", 2);
    twice.append("a", 3);
    let out = without_fields(&twice, &["a"]).unwrap().unwrap();
    assert_eq!(out.as_bytes(), encode(&doc! {"b": 2}).unwrap().as_bytes());
}
