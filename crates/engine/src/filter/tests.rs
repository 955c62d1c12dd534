#![allow(clippy::unwrap_used)]

use super::*;
use bson::{Regex, doc};
use proptest::prelude::*;

fn m(filter: Document, d: Document) -> bool {
    Filter::parse(&filter, None)
        .unwrap()
        .matches(&d, &Vars::default())
        .unwrap()
}

fn err(filter: Document) -> EngineError {
    Filter::parse(&filter, None).unwrap_err()
}

#[test]
fn equality_traverses_arrays() {
    assert!(m(doc! {"a.b": 1}, doc! {"a": [{"b": 1}, {"b": 2}]}));
    assert!(m(doc! {"a": 2}, doc! {"a": [1, 2]}));
    assert!(m(doc! {"a": [1, 2]}, doc! {"a": [1, 2]}));
    assert!(m(doc! {"a": [1, 2]}, doc! {"a": [[1, 2], 3]}));
    assert!(!m(doc! {"a": 1}, doc! {"a": [[1]]}));
    assert!(m(doc! {"a.1": 2}, doc! {"a": [1, 2]}));
    assert!(m(doc! {"a.0.b": 1}, doc! {"a": [{"b": 1}]}));
}

#[test]
fn null_matches_missing() {
    assert!(m(doc! {"a": null}, doc! {"b": 1}));
    assert!(m(doc! {"a": null}, doc! {"a": null}));
    assert!(m(doc! {"a": null}, doc! {"a": [1, null]}));
    assert!(!m(doc! {"a": null}, doc! {"a": []}));
    assert!(m(doc! {"a.b": null}, doc! {"a": [{"b": 1}, {"c": 1}]}));
    assert!(m(doc! {"a.b": null}, doc! {"a": 5}));
    assert!(!m(doc! {"a.b": null}, doc! {"a": [1]}));
    assert!(!m(doc! {"a": {"$ne": null}}, doc! {"b": 1}));
}

#[test]
fn type_bracketing_and_nan() {
    assert!(!m(doc! {"a": {"$gt": 5}}, doc! {"a": "z"}));
    assert!(m(doc! {"a": {"$gt": 5}}, doc! {"a": 5.5}));
    assert!(!m(doc! {"a": {"$lt": 5}}, doc! {"a": f64::NAN}));
    assert!(m(doc! {"a": f64::NAN}, doc! {"a": f64::NAN}));
    assert!(m(doc! {"a": {"$gt": 1, "$lt": 5}}, doc! {"a": [0, 10]}));
    assert!(m(doc! {"a": {"$lt": Bson::MaxKey}}, doc! {"a": "x"}));
}

#[test]
fn negations_cover_all_values() {
    assert!(!m(doc! {"a": {"$ne": 1}}, doc! {"a": [1, 2]}));
    assert!(m(doc! {"a": {"$nin": [3]}}, doc! {"a": [1, 2]}));
    assert!(m(doc! {"a": {"$exists": false}}, doc! {"b": 1}));
    assert!(m(doc! {"a": {"$not": {"$gt": 5}}}, doc! {"a": "x"}));
    assert!(m(
        doc! {"a": {"$not": Regex { pattern: "^x".into(), options: String::new() }}},
        doc! {"a": "yx"}
    ));
}

#[test]
fn elem_match_forms_and_position() {
    let f = Filter::parse(&doc! {"a": {"$elemMatch": {"b": 1, "c": 2}}}, None).unwrap();
    let d = doc! {"a": [{"b": 1}, {"c": 2}, {"b": 1, "c": 2}]};
    let det = f.match_details(&d, &Vars::default()).unwrap();
    assert_eq!(det.array_position, Some(2));
    assert!(m(
        doc! {"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}},
        doc! {"a": [0, 2]}
    ));
    assert!(!m(
        doc! {"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}},
        doc! {"a": [0, 5]}
    ));
    let f = Filter::parse(&doc! {"a": {"$gte": 3}}, None).unwrap();
    let det = f
        .match_details(&doc! {"a": [1, 5, 3]}, &Vars::default())
        .unwrap();
    assert_eq!(det.array_position, Some(1));
}

#[test]
fn errors_are_mongods() {
    assert_eq!(
        err(doc! {"a": {"$foo": 1}}).message,
        "unknown operator: $foo"
    );
    assert!(
        err(doc! {"$foo": 1})
            .message
            .starts_with("unknown top level operator: $foo")
    );
    assert_eq!(err(doc! {"a": {"$in": 1}}).message, "$in needs an array");
    assert_eq!(
        err(doc! {"$or": []}).message,
        "$and/$or/$nor must be a nonempty array"
    );
    assert_eq!(err(doc! {"$where": "1"}).code.code(), 238);
    assert_eq!(err(doc! {"a": {"$near": [0, 0]}}).code.code(), 238);
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let mut f = doc! {"a": 1};
    for _ in 0..150 {
        f = doc! {"$and": [f]};
    }
    assert!(err(f).message.contains("depth"));
    let mut f = doc! {"$gt": 1};
    for _ in 0..150 {
        f = doc! {"$not": f};
    }
    assert!(err(doc! {"a": f}).message.contains("depth"));
}

#[test]
fn equalities_for_upserts() {
    let f = Filter::parse(
        &doc! {"a": 1, "b": {"$eq": 2}, "c": {"$gt": 3}, "$and": [{"d": 4}]},
        None,
    )
    .unwrap();
    assert_eq!(
        f.equalities(),
        vec![
            ("a".to_string(), Bson::Int32(1)),
            ("b".to_string(), Bson::Int32(2)),
            ("d".to_string(), Bson::Int32(4)),
        ]
    );
}

#[test]
fn json_schema_subset() {
    let f = doc! {"$jsonSchema": {"bsonType": "object", "required": ["name"],
    "properties": {"age": {"bsonType": "int", "minimum": 0}}}};
    assert!(m(f.clone(), doc! {"name": "x", "age": 3}));
    assert!(!m(f.clone(), doc! {"age": 3}));
    assert!(!m(f.clone(), doc! {"name": "x", "age": -1}));
    assert!(!m(f, doc! {"name": "x", "age": "3"}));
}

fn arb_bson() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        Just(Bson::Null),
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        any::<f64>().prop_map(Bson::Double),
        any::<bool>().prop_map(Bson::Boolean),
        "[a-z$.0-9]{0,4}".prop_map(Bson::String),
        "[a-z()*\\[\\\\]{0,4}".prop_map(|p| Bson::RegularExpression(Regex {
            pattern: p,
            options: "i".into()
        })),
        Just(Bson::MinKey),
        Just(Bson::MaxKey),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|kv| Bson::Document(kv.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_string()),
        Just("a.b".to_string()),
        Just("0".to_string()),
        Just("a.0".to_string()),
        Just("$and".to_string()),
        Just("$or".to_string()),
        Just("$not".to_string()),
        Just("$in".to_string()),
        Just("$all".to_string()),
        Just("$elemMatch".to_string()),
        Just("$size".to_string()),
        Just("$type".to_string()),
        Just("$mod".to_string()),
        Just("$regex".to_string()),
        Just("$options".to_string()),
        Just("$exists".to_string()),
        Just("$gt".to_string()),
        Just("$bitsAnySet".to_string()),
        Just("$jsonSchema".to_string()),
    ]
}

fn arb_doc() -> impl Strategy<Value = Document> {
    prop::collection::vec((key(), arb_bson()), 0..4).prop_map(|kv| kv.into_iter().collect())
}

proptest! {
    #[test]
    fn never_panics(filter in arb_doc(), d in arb_doc()) {
        if let Ok(f) = Filter::parse(&filter, None) {
            let _ = f.match_details(&d, &Vars::default());
            let _ = f.equalities();
        }
    }
}

/// Values stored in generated documents: scalars of the bracketing-relevant
/// types, and arrays and sub-documents whose fields are the generated
/// paths' components.
fn stored_value() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        Just(Bson::Null),
        (-3i32..4).prop_map(Bson::Int32),
        (-3i64..4).prop_map(Bson::Int64),
        prop_oneof![Just(f64::NAN), Just(1.0), Just(2.5), Just(-0.0)].prop_map(Bson::Double),
        any::<bool>().prop_map(Bson::Boolean),
        "[a-c]{0,2}".prop_map(Bson::String),
        Just(Bson::RegularExpression(Regex {
            pattern: "^a".into(),
            options: String::new()
        })),
        Just(Bson::MinKey),
        Just(Bson::MaxKey),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            prop::collection::vec((field_name(), inner), 0..3)
                .prop_map(|kv| Bson::Document(kv.into_iter().collect())),
        ]
    })
}

fn field_name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "0", "1"]).prop_map(str::to_string)
}

fn stored_doc() -> impl Strategy<Value = Document> {
    prop::collection::vec((field_name(), stored_value()), 0..4)
        .prop_map(|kv| kv.into_iter().collect())
}

/// One path condition: a literal or an operator expression.
fn condition() -> impl Strategy<Value = Bson> {
    let v = stored_value;
    let cmp = prop::sample::select(vec!["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]);
    prop_oneof![
        v(),
        (cmp, v()).prop_map(|(op, x)| Bson::Document(doc! {op: x})),
        (
            prop::sample::select(vec!["$in", "$nin", "$all"]),
            prop::collection::vec(v(), 0..3)
        )
            .prop_map(|(op, xs)| Bson::Document(doc! {op: xs})),
        any::<bool>().prop_map(|b| Bson::Document(doc! {"$exists": b})),
        prop::sample::select(vec![
            "string", "number", "array", "object", "null", "int", "double"
        ])
        .prop_map(|t| Bson::Document(doc! {"$type": t})),
        (0i32..3).prop_map(|n| Bson::Document(doc! {"$size": n})),
        Just(Bson::Document(doc! {"$mod": [2, 1]})),
        Just(Bson::Document(doc! {"$bitsAnySet": 3})),
        "[a-c^]{0,2}".prop_map(|p| Bson::Document(doc! {"$regex": p})),
        (prop::sample::select(vec!["$gt", "$eq", "$lt"]), v())
            .prop_map(|(op, x)| Bson::Document(doc! {"$not": {op: x}})),
        (prop::sample::select(vec!["$gt", "$eq"]), v())
            .prop_map(|(op, x)| Bson::Document(doc! {"$elemMatch": {op: x}})),
        (field_name(), v()).prop_map(|(k, x)| Bson::Document(doc! {"$elemMatch": {k: x}})),
    ]
}

fn filter_path() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a", "b", "a.b", "a.0", "a.1", "a.b.c", "a.0.b", "b.a", "a.b.0",
    ])
    .prop_map(str::to_string)
}

fn conditions() -> impl Strategy<Value = Document> {
    prop::collection::vec((filter_path(), condition()), 1..3)
        .prop_map(|kv| kv.into_iter().collect())
}

fn arb_filter() -> impl Strategy<Value = Document> {
    prop_oneof![
        3 => conditions(),
        1 => (
            prop::sample::select(vec!["$and", "$or", "$nor"]),
            prop::collection::vec(conditions(), 1..3)
        )
            .prop_map(|(op, cs)| doc! {op: cs}),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// The raw matcher answers exactly as the decoded one, array position
    /// included, wherever it answers at all.
    #[test]
    fn raw_matcher_agrees_with_decoded(filter in arb_filter(), d in stored_doc()) {
        let Ok(f) = Filter::parse(&filter, None) else {
            return Ok(());
        };
        let raw = bson::RawDocumentBuf::from_document(&d).unwrap();
        let decoded = f.match_details(&d, &Vars::default());
        let via_raw = f.match_raw(&raw);
        match (decoded, via_raw) {
            (Ok(expected), Ok(Some(got))) => prop_assert_eq!(got, expected, "{} on {}", filter, d),
            (Ok(_), Ok(None)) => prop_assert!(false, "raw matcher declined {}", filter),
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "{:?} vs {:?} for {} on {}", a, b, filter, d),
        }
    }

    /// The random filters of `never_panics` too, where they parse.
    #[test]
    fn raw_matcher_agrees_on_arbitrary_filters(filter in arb_doc(), d in arb_doc()) {
        let Ok(f) = Filter::parse(&filter, None) else {
            return Ok(());
        };
        let raw = bson::RawDocumentBuf::from_document(&d).unwrap();
        if let (Ok(expected), Ok(Some(got))) = (f.match_details(&d, &Vars::default()), f.match_raw(&raw)) {
            prop_assert_eq!(got, expected);
        }
    }
}

#[test]
fn raw_matcher_declines_whole_document_predicates() {
    let raw = bson::RawDocumentBuf::from_document(&doc! {"a": 1}).unwrap();
    let f = Filter::parse(&doc! {"$expr": {"$eq": ["$a", 1]}}, None).unwrap();
    assert_eq!(f.match_raw(&raw).unwrap(), None);
    let f = Filter::parse(&doc! {"a": 1, "$jsonSchema": {"required": ["a"]}}, None).unwrap();
    assert_eq!(f.match_raw(&raw).unwrap(), None);
    let f = Filter::parse(&doc! {"a": {"$in": [1, 2]}}, None).unwrap();
    assert_eq!(f.match_raw(&raw).unwrap().map(|d| d.matched), Some(true));
}

#[test]
fn raw_matcher_with_collation_compares_strings_in_place() {
    let coll = crate::collation::Collation::parse(&doc! {"locale": "en", "strength": 2})
        .unwrap()
        .unwrap();
    let f = Filter::parse(&doc! {"s": "ABC"}, Some(&coll)).unwrap();
    let raw = bson::RawDocumentBuf::from_document(&doc! {"s": "abc"}).unwrap();
    assert_eq!(f.match_raw(&raw).unwrap().map(|d| d.matched), Some(true));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// A long `$in`, searched in its sorted values, answers as the `$or` of
    /// its equalities, decoded and raw, with and without a collation.
    #[test]
    fn long_in_agrees_with_its_equalities(
        values in prop::collection::vec(stored_value(), super::SORTED_IN_FROM..40),
        d in stored_doc(),
        with_collation in any::<bool>(),
    ) {
        let values: Vec<Bson> = values
            .into_iter()
            .filter(|v| !matches!(v, Bson::RegularExpression(_)))
            .collect();
        let coll = with_collation
            .then(|| crate::collation::Collation::parse(&doc! {"locale": "en", "strength": 2}).unwrap())
            .flatten();
        let f_in = Filter::parse(&doc! {"a": {"$in": values.clone()}}, coll.as_ref()).unwrap();
        let ors: Vec<Bson> = values.iter().map(|v| Bson::Document(doc! {"a": {"$eq": v.clone()}})).collect();
        let f_or = if ors.is_empty() {
            Filter::parse(&doc! {"a": {"$in": []}}, coll.as_ref()).unwrap()
        } else {
            Filter::parse(&doc! {"$or": ors}, coll.as_ref()).unwrap()
        };
        let expected = f_or.matches(&d, &Vars::default()).unwrap();
        prop_assert_eq!(f_in.matches(&d, &Vars::default()).unwrap(), expected, "{:?} on {}", values, d);
        let raw = bson::RawDocumentBuf::from_document(&d).unwrap();
        if let Some(got) = f_in.match_raw(&raw).unwrap() {
            prop_assert_eq!(got.matched, expected, "raw: {:?} on {}", values, d);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Records with a damaged byte: the raw matcher never panics, and on a
    /// record that still decodes to a document encoding back to the same
    /// bytes (no duplicate keys) it answers as the decoded matcher.
    #[test]
    fn raw_matcher_on_damaged_records(
        filter in arb_filter(),
        d in stored_doc(),
        at in any::<usize>(),
        byte in any::<u8>(),
    ) {
        let Ok(f) = Filter::parse(&filter, None) else {
            return Ok(());
        };
        let mut bytes = bson::RawDocumentBuf::from_document(&d).unwrap().into_bytes();
        let body = 4..bytes.len() - 1;
        if !body.is_empty() {
            bytes[body.start + at % body.len()] = byte;
        }
        let raw = bson::RawDocument::from_bytes(&bytes).unwrap();
        let via_raw = f.match_raw(raw);
        let Ok(decoded) = Document::try_from(raw) else {
            return Ok(());
        };
        if bson::RawDocumentBuf::from_document(&decoded).map(|b| b.into_bytes()) != Ok(bytes.clone()) {
            return Ok(());
        }
        match (f.match_details(&decoded, &Vars::default()), via_raw) {
            (Ok(expected), Ok(Some(got))) => prop_assert_eq!(got, expected, "{} on {}", filter, decoded),
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "{:?} vs {:?} for {} on {}", a, b, filter, decoded),
        }
    }
}
