//! Storage, index and write-path behaviour of the embedded engine, through
//! its public API: `_id` handling, the 16 MiB limit, unique/sparse/partial/
//! collated/multikey indexes, atomic failed writes, TTL expiry and catalog
//! commands.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use bson::{Bson, Document, RawDocumentBuf, doc};
use proptest::prelude::*;
use schemalab_engine::{Clock, DeleteStatement, Engine, ErrorCode, FindRequest, UpdateStatement};

/// A figure as mongod sends it: int32 when it fits, int64 otherwise.
fn int(d: &bson::Document, key: &str) -> i64 {
    match d.get(key) {
        Some(bson::Bson::Int32(n)) => i64::from(*n),
        Some(bson::Bson::Int64(n)) => *n,
        other => panic!("{key} is not an integer: {other:?}"),
    }
}

fn raw(d: Document) -> RawDocumentBuf {
    RawDocumentBuf::from_document(&d).unwrap()
}

fn insert(e: &Engine, coll: &str, docs: Vec<Document>) -> schemalab_engine::InsertOutcome {
    e.insert("t", coll, docs.into_iter().map(raw).collect(), true)
        .unwrap()
}

fn find(e: &Engine, coll: &str, filter: Document) -> Vec<Document> {
    e.find(
        "t",
        coll,
        &FindRequest {
            filter,
            ..Default::default()
        },
    )
    .unwrap()
}

/// `find` read through the index named `hint`.
fn find_hinted(e: &Engine, coll: &str, filter: Document, hint: &str) -> Vec<Document> {
    e.find(
        "t",
        coll,
        &FindRequest {
            filter,
            hint: Some(Bson::String(hint.into())),
            ..Default::default()
        },
    )
    .unwrap()
}

fn index(e: &Engine, coll: &str, spec: Document) -> schemalab_engine::Result<()> {
    e.create_indexes("t", coll, &[spec]).map(|_| ())
}

#[test]
fn generated_id_is_an_object_id_placed_first() {
    let e = Engine::new();
    insert(&e, "c", vec![doc! {"a": 1}, doc! {"b": 2, "_id": 7}]);
    let all = find(&e, "c", doc! {});
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].keys().next().unwrap(), "_id");
    assert!(matches!(all[0].get("_id"), Some(Bson::ObjectId(_))));
    assert_eq!(all[1], doc! {"_id": 7, "b": 2}, "_id moved to the front");
}

#[test]
fn duplicate_id_reports_key_pattern_and_value() {
    let e = Engine::new();
    let out = e
        .insert(
            "t",
            "c",
            vec![
                raw(doc! {"_id": 1}),
                raw(doc! {"_id": 1}),
                raw(doc! {"_id": 2}),
            ],
            true,
        )
        .unwrap();
    assert_eq!(out.inserted, 1, "ordered insert stops at the first error");
    let err = &out.errors[0];
    assert_eq!(err.index, 1);
    assert_eq!(err.error.code, ErrorCode::DUPLICATE_KEY);
    assert!(
        err.error.message.starts_with(
            "E11000 duplicate key error collection: t.c index: _id_ dup key: { _id: 1 }"
        )
    );
    let info = err.error.info.as_ref().unwrap();
    assert_eq!(info.get_document("keyPattern").unwrap(), &doc! {"_id": 1});
    assert_eq!(info.get_document("keyValue").unwrap(), &doc! {"_id": 1});

    let unordered = e
        .insert(
            "t",
            "d",
            vec![
                raw(doc! {"_id": 1}),
                raw(doc! {"_id": 1}),
                raw(doc! {"_id": 2}),
            ],
            false,
        )
        .unwrap();
    assert_eq!(
        unordered.inserted, 2,
        "unordered insert goes on after an error"
    );
}

#[test]
fn documents_over_16_mib_are_refused() {
    let e = Engine::new();
    let big = "x".repeat(16 * 1024 * 1024);
    let out = e
        .insert("t", "c", vec![raw(doc! {"s": big})], true)
        .unwrap();
    assert_eq!(out.errors[0].error.code, ErrorCode::BSON_OBJECT_TOO_LARGE);
    assert_eq!(out.errors[0].error.code_name(), "BSONObjectTooLarge");
    assert!(find(&e, "c", doc! {}).is_empty());
}

#[test]
fn unique_index_refuses_duplicates_and_existing_duplicates() {
    let e = Engine::new();
    insert(
        &e,
        "u",
        vec![
            doc! {"_id": 1, "email": "a@x"},
            doc! {"_id": 2, "email": "a@x"},
        ],
    );
    let err = index(&e, "u", doc! {"key": {"email": 1}, "unique": true}).unwrap_err();
    assert_eq!(err.code, ErrorCode::DUPLICATE_KEY);
    assert_eq!(
        e.list_indexes("t", "u").unwrap().len(),
        1,
        "failed build adds nothing"
    );

    index(&e, "v", doc! {"key": {"email": 1}, "unique": true}).unwrap();
    insert(&e, "v", vec![doc! {"_id": 1, "email": "a@x"}]);
    let out = e
        .insert("t", "v", vec![raw(doc! {"_id": 2, "email": "a@x"})], true)
        .unwrap();
    let err = &out.errors[0].error;
    assert_eq!(err.code, ErrorCode::DUPLICATE_KEY);
    assert!(
        err.message
            .contains("index: email_1 dup key: { email: \"a@x\" }"),
        "{}",
        err.message
    );
}

#[test]
fn sparse_and_partial_unique_indexes_only_cover_their_documents() {
    let e = Engine::new();
    index(
        &e,
        "s",
        doc! {"key": {"nick": 1}, "unique": true, "sparse": true},
    )
    .unwrap();
    let out = insert(
        &e,
        "s",
        vec![
            doc! {"_id": 1},
            doc! {"_id": 2},
            doc! {"_id": 3, "nick": "z"},
        ],
    );
    assert!(
        out.errors.is_empty(),
        "missing fields are not indexed when sparse"
    );

    index(
        &e,
        "p",
        doc! {"key": {"sku": 1}, "unique": true, "partialFilterExpression": {"active": true}},
    )
    .unwrap();
    let out = insert(
        &e,
        "p",
        vec![
            doc! {"_id": 1, "sku": "a", "active": false},
            doc! {"_id": 2, "sku": "a", "active": true},
            doc! {"_id": 3, "sku": "a", "active": false},
        ],
    );
    assert!(out.errors.is_empty());
    let out = e
        .insert(
            "t",
            "p",
            vec![raw(doc! {"_id": 4, "sku": "a", "active": true})],
            true,
        )
        .unwrap();
    assert_eq!(out.errors[0].error.code, ErrorCode::DUPLICATE_KEY);
}

#[test]
fn case_insensitive_unique_index() {
    let e = Engine::new();
    index(
        &e,
        "ci",
        doc! {"key": {"name": 1}, "unique": true, "collation": {"locale": "en", "strength": 2}},
    )
    .unwrap();
    insert(&e, "ci", vec![doc! {"_id": 1, "name": "Alice"}]);
    let out = e
        .insert("t", "ci", vec![raw(doc! {"_id": 2, "name": "aLiCe"})], true)
        .unwrap();
    assert_eq!(out.errors[0].error.code, ErrorCode::DUPLICATE_KEY);
    let listed = e.list_indexes("t", "ci").unwrap();
    assert_eq!(
        listed[1]
            .get_document("collation")
            .unwrap()
            .get_i32("strength")
            .unwrap(),
        2
    );
}

#[test]
fn parallel_arrays_fail_atomically() {
    let e = Engine::new();
    index(&e, "m", doc! {"key": {"a": 1, "b": 1}}).unwrap();
    insert(&e, "m", vec![doc! {"_id": 1, "a": [1, 2], "b": 1}]);
    let out = e
        .insert(
            "t",
            "m",
            vec![raw(doc! {"_id": 2, "a": [1], "b": [2, 3]})],
            true,
        )
        .unwrap();
    assert_eq!(
        out.errors[0].error.code,
        ErrorCode::CANNOT_INDEX_PARALLEL_ARRAYS
    );
    assert_eq!(find(&e, "m", doc! {}).len(), 1);
    // The failed document left no key behind: its _id can be used again.
    insert(&e, "m", vec![doc! {"_id": 2, "a": 5, "b": 6}]);
    assert_eq!(find(&e, "m", doc! {"a": 5}).len(), 1);
}

#[test]
fn failed_update_changes_nothing() {
    let e = Engine::new();
    index(&e, "f", doc! {"key": {"k": 1}, "unique": true}).unwrap();
    insert(
        &e,
        "f",
        vec![doc! {"_id": 1, "k": 1}, doc! {"_id": 2, "k": 2}],
    );
    let out = e
        .update(
            "t",
            "f",
            &[UpdateStatement {
                filter: doc! {"_id": 2},
                update: Bson::Document(doc! {"$set": {"k": 1}}),
                upsert: false,
                multi: false,
                array_filters: vec![],
                collation: None,
                hint: None,
                sort: None,
                let_vars: None,
            }],
            true,
        )
        .unwrap();
    assert_eq!(out.errors[0].error.code, ErrorCode::DUPLICATE_KEY);
    assert_eq!(find(&e, "f", doc! {"k": 2}), vec![doc! {"_id": 2, "k": 2}]);
    assert_eq!(find(&e, "f", doc! {"k": 1}).len(), 1);
}

#[derive(Debug)]
struct ManualClock(AtomicI64);

impl Clock for ManualClock {
    fn now(&self) -> bson::DateTime {
        bson::DateTime::from_millis(self.0.load(Ordering::SeqCst))
    }
}

#[test]
fn ttl_index_expires_documents_on_the_clock() {
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000_000)));
    let e = Engine::with_clock(clock.clone());
    index(
        &e,
        "sessions",
        doc! {"key": {"at": 1}, "expireAfterSeconds": 60},
    )
    .unwrap();
    insert(
        &e,
        "sessions",
        vec![
            doc! {"_id": 1, "at": bson::DateTime::from_millis(1_000_000)},
            doc! {"_id": 2, "at": bson::DateTime::from_millis(1_030_000)},
            doc! {"_id": 3, "at": "not a date"},
        ],
    );
    assert_eq!(e.expire_ttl(e.now()), 0);
    clock.0.store(1_000_000 + 60_000, Ordering::SeqCst);
    assert_eq!(e.expire_ttl(e.now()), 1);
    clock.0.store(1_000_000 + 90_000, Ordering::SeqCst);
    assert_eq!(e.expire_ttl(e.now()), 1);
    assert_eq!(
        find(&e, "sessions", doc! {}),
        vec![doc! {"_id": 3, "at": "not a date"}]
    );
}

#[test]
fn catalog_commands() {
    let e = Engine::new();
    e.create_collection("t", "a", &doc! {}).unwrap();
    let err = e
        .create_collection("t", "a", &doc! {"capped": true})
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NAMESPACE_EXISTS);
    insert(&e, "b", vec![doc! {"x": 1}]);
    let names: Vec<String> = e
        .list_collections("t", &doc! {})
        .unwrap()
        .iter()
        .map(|c| c.get_str("name").unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["a", "b"]);
    e.rename_collection("t.b", "t.c", false).unwrap();
    assert_eq!(find(&e, "c", doc! {}).len(), 1);
    assert!(e.drop_collection("t", "c").unwrap());
    assert!(
        !e.drop_collection("t", "c").unwrap(),
        "dropping a missing collection succeeds"
    );
    assert!(e.drop_database("t"));
    assert!(e.list_databases().is_empty());
    let err = e.create_collection("bad.db", "x", &doc! {}).unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_NAMESPACE);
}

#[test]
fn drop_indexes_forms() {
    let e = Engine::new();
    insert(&e, "d", vec![doc! {"a": 1, "b": 1}]);
    index(&e, "d", doc! {"key": {"a": 1}}).unwrap();
    index(&e, "d", doc! {"key": {"b": -1}, "name": "bee"}).unwrap();
    assert_eq!(
        e.drop_indexes("t", "d", &Bson::Document(doc! {"a": 1}))
            .unwrap(),
        3
    );
    let err = e
        .drop_indexes("t", "d", &Bson::String("_id_".into()))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_OPTIONS);
    let err = e
        .drop_indexes("t", "d", &Bson::String("nope".into()))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INDEX_NOT_FOUND);
    assert_eq!(
        e.drop_indexes("t", "d", &Bson::String("*".into())).unwrap(),
        2
    );
    assert_eq!(e.list_indexes("t", "d").unwrap().len(), 1);
}

#[test]
fn delete_one_and_many() {
    let e = Engine::new();
    insert(
        &e,
        "x",
        (0..5)
            .map(|i| doc! {"_id": i, "even": i % 2 == 0})
            .collect(),
    );
    let del = |filter: Document, limit| {
        e.delete(
            "t",
            "x",
            &[DeleteStatement {
                filter,
                limit,
                collation: None,
                hint: None,
                let_vars: None,
            }],
            true,
        )
        .unwrap()
        .deleted
    };
    assert_eq!(del(doc! {"even": true}, 1), 1);
    assert_eq!(del(doc! {"even": true}, 0), 2);
    assert_eq!(find(&e, "x", doc! {}).len(), 2);
}

#[test]
fn stats_count_exact_sizes_and_label_modelled_ones() {
    let e = Engine::new();
    let docs: Vec<Document> = (0..100)
        .map(|i| doc! {"_id": i, "v": "x".repeat(i as usize)})
        .collect();
    let exact: i64 = docs
        .iter()
        .map(|d| raw(d.clone()).as_bytes().len() as i64)
        .sum();
    insert(&e, "s", docs);
    let stats = e.coll_stats("t", "s", 1).unwrap();
    assert_eq!(int(&stats, "size"), exact);
    assert_eq!(int(&stats, "count"), 100);
    assert!(int(&stats, "storageSize") % 4096 == 0);
    assert!(
        stats
            .get_document("schemalab")
            .unwrap()
            .get_bool("sizesModelled")
            .unwrap()
    );
}

fn small_value() -> impl Strategy<Value = Bson> {
    prop_oneof![
        (0i32..4).prop_map(Bson::Int32),
        (0i32..4).prop_map(|i| Bson::Double(f64::from(i))),
        "[ab]".prop_map(Bson::String),
        Just(Bson::Null),
        prop::collection::vec((0i32..4).prop_map(Bson::Int32), 0..3).prop_map(Bson::Array),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// An equality answered through an index returns exactly what a
    /// collection scan returns.
    #[test]
    fn index_lookups_agree_with_scans(
        values in prop::collection::vec(small_value(), 1..30),
        probe in small_value(),
        descending in any::<bool>(),
    ) {
        let plain = Engine::new();
        let indexed = Engine::new();
        let dir = if descending { -1 } else { 1 };
        indexed.create_indexes("t", "c", &[doc! {"key": {"v": dir}}]).unwrap();
        let docs: Vec<Document> = values.iter().enumerate().map(|(i, v)| doc! {"_id": i as i32, "v": v.clone()}).collect();
        insert(&plain, "c", docs.clone());
        insert(&indexed, "c", docs);
        let filter = doc! {"v": probe};
        prop_assert_eq!(find(&plain, "c", filter.clone()), find(&indexed, "c", filter));
    }
}

#[test]
fn id_shapes_mongod_refuses() {
    let e = Engine::new();
    let code = |d: Document| {
        e.insert("t", "ids", vec![raw(d)], true)
            .unwrap()
            .errors
            .first()
            .map(|w| w.error.code)
    };
    assert_eq!(code(doc! {"_id": [1, 2]}), Some(ErrorCode::BAD_VALUE));
    assert_eq!(
        code(doc! {"_id": {"$a": 1}}),
        Some(ErrorCode::DOLLAR_PREFIXED_FIELD_NAME)
    );
    assert_eq!(
        code(doc! {"_id": {"a": {"$b": 1}}}),
        Some(ErrorCode::DOLLAR_PREFIXED_FIELD_NAME)
    );
    assert_eq!(
        code(doc! {"_id": {"a": [1, 2]}}),
        None,
        "arrays inside an _id document are fine"
    );
}

/// Regression (found by the planned-equals-scanned property): an equality on
/// a multikey field must not let the index provide a sort on that field,
/// because a document's sort key is its largest (descending) element.
#[test]
fn multikey_equality_does_not_provide_the_sort() {
    let e = Engine::new();
    index(&e, "mk", doc! {"key": {"a": -1, "b": 1}}).unwrap();
    insert(
        &e,
        "mk",
        vec![
            doc! {"_id": 0, "a": [3], "b": 0},
            doc! {"_id": 1, "a": [3, 4], "b": 0},
        ],
    );
    let got = e
        .find(
            "t",
            "mk",
            &FindRequest {
                filter: doc! {"a": 3},
                sort: Some(doc! {"a": -1}),
                ..Default::default()
            },
        )
        .unwrap();
    let ids: Vec<i32> = got.iter().map(|d| d.get_i32("_id").unwrap()).collect();
    assert_eq!(ids, vec![1, 0]);
}

/// The attribute pattern: a compound index over two fields of one array of
/// documents is accepted (mongod refuses only *different* arrays) and keys
/// each element's pair, so the index holds exactly one entry per element.
#[test]
fn attribute_pattern_index_keys_each_element() {
    let e = Engine::new();
    index(&e, "attrs", doc! {"key": {"attrs.k": 1, "attrs.v": 1}}).unwrap();
    let out = insert(
        &e,
        "attrs",
        vec![doc! {"_id": 1, "attrs": [{"k": "color", "v": "red"}, {"k": "size", "v": 9}]}],
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let stats = e
        .explain_doc(
            "t",
            &doc! {"find": "attrs", "filter": {"attrs": {"$elemMatch": {"k": "size", "v": 9}}}},
            "executionStats",
        )
        .unwrap();
    let text = stats.to_string();
    assert!(text.contains("attrs.k_1_attrs.v_1"), "index used: {text}");
    // One $elemMatch pins both fields of one element: bounds compound.
    assert!(
        text.contains(r#""attrs.v": ["[9, 9]"]"#),
        "compounded bounds: {text}"
    );
    assert_eq!(
        find(
            &e,
            "attrs",
            doc! {"attrs": {"$elemMatch": {"k": "size", "v": 9}}}
        )
        .len(),
        1
    );
    assert!(
        find(
            &e,
            "attrs",
            doc! {"attrs": {"$elemMatch": {"k": "color", "v": 9}}}
        )
        .is_empty()
    );
    // A non-array field combines with every element, and a nested array
    // inside one element expands there.
    index(
        &e,
        "attrs",
        doc! {"key": {"sku": 1, "attrs.k": 1, "attrs.v": 1}},
    )
    .unwrap();
    let out = insert(
        &e,
        "attrs",
        vec![doc! {"_id": 2, "sku": "x", "attrs": [{"k": "size", "v": [8, 9]}, {"k": "color"}]}],
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let got = find(
        &e,
        "attrs",
        doc! {"sku": "x", "attrs": {"$elemMatch": {"k": "size", "v": 8}}},
    );
    assert_eq!(got.len(), 1);
    // Two different arrays stay parallel arrays.
    index(&e, "par", doc! {"key": {"a.x": 1, "b.y": 1}}).unwrap();
    let out = e
        .insert(
            "t",
            "par",
            vec![raw(doc! {"_id": 1, "a": [{"x": 1}], "b": [{"y": 2}]})],
            true,
        )
        .unwrap();
    let err = &out.errors[0].error;
    assert_eq!(err.code, ErrorCode::CANNOT_INDEX_PARALLEL_ARRAYS);
    assert_eq!(err.message, "cannot index parallel arrays [b] [a]");
}

fn attr_element() -> impl Strategy<Value = Bson> {
    prop_oneof![
        4 => ((0i32..3), small_value()).prop_map(|(k, v)| Bson::Document(doc! {"k": k, "v": v})),
        1 => (0i32..3).prop_map(|k| Bson::Document(doc! {"k": k})),
        1 => (0i32..3).prop_map(Bson::Int32),
    ]
}

fn attrs_value() -> impl Strategy<Value = Bson> {
    prop_oneof![
        6 => prop::collection::vec(attr_element(), 0..4).prop_map(Bson::Array),
        1 => attr_element(),
        1 => Just(Bson::Null),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// `$elemMatch` over the attribute pattern returns the same documents
    /// with and without a compound index on the shared array (the planner
    /// may compound the bounds there; the filter is re-applied either way).
    #[test]
    fn attribute_elem_match_agrees_with_scans(
        values in prop::collection::vec(attrs_value(), 1..20),
        k in 0i32..3,
        v in small_value(),
        descending in any::<bool>(),
    ) {
        let plain = Engine::new();
        let indexed = Engine::new();
        let dir = if descending { -1 } else { 1 };
        indexed.create_indexes("t", "c", &[doc! {"key": {"attrs.k": 1, "attrs.v": dir}}]).unwrap();
        let docs: Vec<Document> = values.iter().enumerate().map(|(i, a)| doc! {"_id": i as i32, "attrs": a.clone()}).collect();
        insert(&plain, "c", docs.clone());
        let out = insert(&indexed, "c", docs);
        prop_assert!(out.errors.is_empty(), "{:?}", out.errors);
        // Without a sort the order is the plan's: compare the sets.
        let ids = |e: &Engine, f: &Document| {
            let mut ids: Vec<i32> = find(e, "c", f.clone()).iter().map(|d| d.get_i32("_id").unwrap()).collect();
            ids.sort_unstable();
            ids
        };
        let filter = doc! {"attrs": {"$elemMatch": {"k": k, "v": v.clone()}}};
        prop_assert_eq!(ids(&plain, &filter), ids(&indexed, &filter));
        let range = doc! {"attrs": {"$elemMatch": {"k": k, "v": {"$gte": v}}}};
        prop_assert_eq!(ids(&plain, &range), ids(&indexed, &range));
    }
}

/// Plain dotted equalities on two fields of one array may be met by
/// different elements, so the index's per-element keys cannot answer them
/// with compounded bounds: the later field must scan all values (mongod's
/// rule). Needs the planner change described in the wt/mkey report.
#[test]
fn plain_dotted_fields_on_one_array_are_not_compounded() {
    let plain = Engine::new();
    let indexed = Engine::new();
    indexed
        .create_indexes("t", "c", &[doc! {"key": {"attrs.k": 1, "attrs.v": 1}}])
        .unwrap();
    let d = vec![doc! {"_id": 1, "attrs": [{"k": "color", "v": "red"}, {"k": "size", "v": 9}]}];
    insert(&plain, "c", d.clone());
    insert(&indexed, "c", d);
    let f = doc! {"attrs.k": "color", "attrs.v": 9};
    assert_eq!(find(&plain, "c", f.clone()).len(), 1);
    assert_eq!(find(&indexed, "c", f).len(), 1);
}

/// `explain` of a command document, parsed as the wire layer parses it.
trait ExplainDoc {
    fn explain_doc(
        &self,
        db: &str,
        command: &Document,
        verbosity: &str,
    ) -> schemalab_engine::Result<Document>;
}

impl ExplainDoc for Engine {
    fn explain_doc(
        &self,
        db: &str,
        command: &Document,
        verbosity: &str,
    ) -> schemalab_engine::Result<Document> {
        schemalab_wire::cmd::explain::explain_document(self, db, command, verbosity)
    }
}

/// A lone `$out` (copied as stored, never decoded) gives the target exactly
/// the source's documents in the same order, keeps the target's indexes
/// (checking the new contents against them, all or nothing), and can write
/// to another database.
#[test]
fn lone_out_copies_the_stored_documents() {
    let e = Engine::new();
    insert(
        &e,
        "src",
        (0..50)
            .map(|i| doc! {"_id": 50 - i, "k": i % 7, "s": format!("v{i}")})
            .collect(),
    );
    let opts = schemalab_engine::AggregateOptions::default();
    let out = e
        .aggregate(
            "t",
            Some("src"),
            &[doc! {"$out": {"db": "other", "coll": "copy"}}],
            &opts,
        )
        .unwrap();
    assert!(out.is_empty());
    let source = find(&e, "src", doc! {});
    let copied = e.find("other", "copy", &FindRequest::default()).unwrap();
    assert_eq!(copied, source);
    assert_eq!(copied.len(), 50);
    // The target's unique index refuses the duplicates, and the target is
    // left as it was.
    insert(&e, "dst", vec![doc! {"_id": 1, "k": 100}]);
    index(
        &e,
        "dst",
        doc! {"key": {"k": 1}, "name": "k_1", "unique": true},
    )
    .unwrap();
    let err = e
        .aggregate("t", Some("src"), &[doc! {"$out": "dst"}], &opts)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::DUPLICATE_KEY);
    assert_eq!(find(&e, "dst", doc! {}), vec![doc! {"_id": 1, "k": 100}]);
}

/// A pipeline ending in `$out` or `$merge` writes exactly what the same
/// pipeline returns without its last stage, whichever way its results
/// reach the writer: straight from the streaming stages, from a `$group`
/// through the stages that follow it one group at a time, or after a
/// blocking stage.
#[test]
fn writes_store_what_the_pipeline_returns() {
    use schemalab_engine::AggregateOptions;
    let e = Engine::new();
    let docs: Vec<Document> = (0..300)
        .map(|i| doc! {"_id": i, "k": i % 7, "v": format!("v{i}"), "n": i64::from(i) * 3})
        .collect();
    insert(&e, "src", docs);
    let bodies: Vec<Vec<Document>> = vec![
        // Streaming stages only.
        vec![
            doc! {"$match": {"k": {"$lt": 5}}},
            doc! {"$set": {"w": {"$concat": ["$v", "!"]}}},
        ],
        // A group, then stages that stream.
        vec![
            doc! {"$sort": {"n": -1}},
            doc! {"$group": {"_id": "$k", "c": {"$sum": 1}, "xs": {"$push": {"v": "$v", "n": "$n"}},
            "lo": {"$min": "$n"}, "hi": {"$max": "$n"}, "avg": {"$avg": "$n"},
            "first": {"$first": "$v"}, "last": {"$last": "$v"}}},
            doc! {"$set": {"xs": {"$slice": ["$xs", 3]}}},
            doc! {"$project": {"c": 1, "xs": 1, "lo": 1, "hi": 1, "avg": 1, "first": 1, "last": 1}},
        ],
        // A group, then a blocking stage.
        vec![
            doc! {"$group": {"_id": "$k", "xs": {"$push": "$v"}}},
            doc! {"$sort": {"_id": -1}},
        ],
    ];
    let opts = AggregateOptions::default();
    for (i, body) in bodies.iter().enumerate() {
        let mut expected = e.aggregate("t", Some("src"), body, &opts).unwrap();
        assert!(!expected.is_empty(), "pipeline {i} returned nothing");
        expected.sort_by_key(|d| d.get("_id").map(ToString::to_string));
        for last in [
            doc! {"$out": format!("out{i}")},
            doc! {"$merge": {"into": format!("merged{i}"), "whenNotMatched": "insert"}},
        ] {
            let target = last
                .get_str("$out")
                .map(str::to_string)
                .unwrap_or_else(|_| format!("merged{i}"));
            let mut pipeline = body.clone();
            pipeline.push(last);
            assert!(
                e.aggregate("t", Some("src"), &pipeline, &opts)
                    .unwrap()
                    .is_empty()
            );
            let mut stored = find(&e, &target, doc! {});
            stored.sort_by_key(|d| d.get("_id").map(ToString::to_string));
            assert_eq!(stored, expected, "pipeline {i} into {target}");
        }
    }
}

/// `$merge` with `whenMatched: "merge"`: the fields the target has keep
/// their places with the new values, the others are appended in order,
/// every index follows, a unique index refuses the merge that would hold a
/// key twice, and an input matching nothing is discarded.
#[test]
fn merging_into_matched_documents_sets_fields_in_place_and_keeps_indexes_true() {
    use schemalab_engine::AggregateOptions;
    let e = Engine::new();
    insert(
        &e,
        "dst",
        vec![
            doc! {"_id": 1, "a": 1, "b": "x", "tag": "p"},
            doc! {"_id": 2, "a": 2, "b": "y", "tag": "q"},
            doc! {"_id": {"k": 1}, "a": 3},
        ],
    );
    index(&e, "dst", doc! {"key": {"b": 1}, "name": "b_1"}).unwrap();
    index(
        &e,
        "dst",
        doc! {"key": {"tag": 1}, "name": "tag_1", "unique": true},
    )
    .unwrap();
    insert(
        &e,
        "src",
        vec![
            doc! {"_id": 1, "c": [1, 2], "b": "z"},
            doc! {"_id": 2, "c": 5},
            doc! {"_id": {"k": 1}, "b": "w"},
            doc! {"_id": 9, "b": "new"},
        ],
    );
    let merge = |src: &str| {
        e.aggregate(
            "t",
            Some(src),
            &[doc! {"$merge": {"into": "dst", "whenMatched": "merge", "whenNotMatched": "discard"}}],
            &AggregateOptions::default(),
        )
    };
    merge("src").unwrap();
    let mut all = find(&e, "dst", doc! {});
    all.sort_by_key(|d| d.get("a").map(ToString::to_string));
    assert_eq!(
        all,
        vec![
            doc! {"_id": 1, "a": 1, "b": "z", "tag": "p", "c": [1, 2]},
            doc! {"_id": 2, "a": 2, "b": "y", "tag": "q", "c": 5},
            doc! {"_id": {"k": 1}, "a": 3, "b": "w"},
        ]
    );
    // Read through each index: the old keys are gone, the new ones there.
    let by = |filter: Document, hint: &str| {
        find_hinted(&e, "dst", filter, hint)
            .into_iter()
            .map(|d| d.get("a").cloned().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(by(doc! {"b": "x"}, "b_1"), Vec::<Bson>::new());
    assert_eq!(by(doc! {"b": "z"}, "b_1"), vec![Bson::Int32(1)]);
    assert_eq!(by(doc! {"b": "w"}, "b_1"), vec![Bson::Int32(3)]);
    // Taking another document's tag is refused, and changes nothing.
    insert(
        &e,
        "steal",
        vec![doc! {"_id": 2, "tag": "p", "b": "stolen"}],
    );
    let err = merge("steal").unwrap_err();
    assert_eq!(err.code, ErrorCode::DUPLICATE_KEY);
    assert!(
        err.message.contains("index: tag_1 dup key: { tag: \"p\" }"),
        "{}",
        err.message
    );
    assert_eq!(by(doc! {"tag": "q"}, "tag_1"), vec![Bson::Int32(2)]);
    assert_eq!(by(doc! {"b": "stolen"}, "b_1"), Vec::<Bson>::new());
}

/// What a `Pipeline` reads of another collection, for the reference runs
/// of `the_cursor_hands_on_what_the_stages_read`.
struct Whole(std::collections::HashMap<String, Vec<Document>>);

impl schemalab_engine::pipeline::Source for Whole {
    fn collection_docs(&self, collection: &str) -> schemalab_engine::Result<Vec<Document>> {
        Ok(self.0.get(collection).cloned().unwrap_or_default())
    }
}

/// The `$cursor` decodes only the top-level fields the later stages can
/// read (`pipeline::deps`). Every answer must be the one the same pipeline
/// gives over whole documents: a field the analysis missed would be
/// missing from a result, or change a group, a sort or a join.
#[test]
fn the_cursor_hands_on_what_the_stages_read() {
    let e = Engine::new();
    let docs: Vec<Document> = (0..40)
        .map(|i| {
            doc! {
                "_id": i,
                "k": i % 4,
                "w": i * 10,
                "name": format!("n{}", i % 7),
                "tags": (0..(i % 3)).map(|t| format!("t{t}")).collect::<Vec<_>>(),
                "sub": {"a": i % 5, "b": format!("b{i}")},
                "ref": i % 6,
                "extra": "not read",
            }
        })
        .collect();
    let refs: Vec<Document> = (0..6)
        .map(|i| doc! {"_id": i, "label": format!("r{i}")})
        .collect();
    insert(&e, "src", docs.clone());
    insert(&e, "refs", refs.clone());
    let pipelines: Vec<Vec<Document>> = vec![
        vec![doc! {"$group": {"_id": "$k", "n": {"$sum": 1}, "w": {"$sum": "$w"}}}],
        vec![doc! {"$group": {"_id": "$sub.a", "names": {"$addToSet": "$name"}}}],
        vec![
            doc! {"$set": {"x": {"$add": ["$w", "$sub.a"]}}},
            doc! {"$project": {"x": 1, "name": 1}},
        ],
        vec![doc! {"$project": {"_id": 0, "who": "$name", "first": {"$first": "$tags"}}}],
        vec![
            doc! {"$unwind": "$tags"},
            doc! {"$group": {"_id": "$tags", "total": {"$sum": "$w"}}},
        ],
        vec![
            doc! {"$match": {"$expr": {"$gt": ["$w", "$k"]}}},
            doc! {"$count": "n"},
        ],
        vec![
            doc! {"$sort": {"name": 1, "_id": -1}},
            doc! {"$group": {"_id": "$k", "first": {"$first": "$name"}, "last": {"$last": "$sub"}}},
        ],
        vec![
            doc! {"$group": {"_id": "$k", "top": {"$top": {"sortBy": {"w": -1}, "output": "$name"}}}},
        ],
        vec![doc! {"$group": {"_id": "$k", "all": {"$push": "$$ROOT"}}}],
        vec![doc! {"$replaceWith": {"$mergeObjects": ["$sub", {"n": "$name"}]}}],
        vec![
            doc! {"$lookup": {"from": "refs", "localField": "ref", "foreignField": "_id", "as": "r"}},
            doc! {"$project": {"label": {"$first": "$r.label"}, "w": 1}},
        ],
        vec![doc! {"$sortByCount": "$name"}],
        vec![doc! {"$project": {"extra": 0}}],
        vec![doc! {"$match": {"k": 1}}, doc! {"$project": {"_id": 0}}],
        // A $sort after streaming stages holds their output encoded and
        // hands it on in order, ties in input order.
        vec![
            doc! {"$unwind": "$tags"},
            doc! {"$sort": {"tags": 1, "w": -1}},
        ],
        vec![
            doc! {"$set": {"x": {"$mod": ["$w", 7]}}},
            doc! {"$sort": {"x": 1}},
            doc! {"$group": {"_id": "$k", "xs": {"$push": "$x"}, "ids": {"$push": "$_id"}}},
        ],
        vec![
            doc! {"$match": {"k": {"$gte": 1}}},
            doc! {"$set": {"x": {"$mod": ["$w", 3]}}},
            doc! {"$sort": {"x": -1}},
            doc! {"$project": {"x": 1, "name": 1}},
        ],
    ];
    let source = Whole([("refs".to_string(), refs)].into_iter().collect());
    let opts = schemalab_engine::AggregateOptions::default();
    for p in pipelines {
        let got = e.aggregate("t", Some("src"), &p, &opts).unwrap();
        let want = schemalab_engine::pipeline::Pipeline::parse(&p)
            .unwrap()
            .run(
                docs.clone(),
                &source,
                &schemalab_engine::expr::Vars::default(),
            )
            .unwrap();
        assert!(!want.is_empty(), "{p:?} returns nothing");
        assert_eq!(got, want, "{p:?}");
    }
}

/// A value for a sort key: every type bracket a sort crosses, numbers that
/// compare equal across types, strings that share prefixes, arrays (a sort
/// reads their least or greatest element) and nested documents.
fn sort_value() -> impl Strategy<Value = Option<Bson>> {
    let scalar = prop_oneof![
        Just(Bson::Null),
        (-3..3i32).prop_map(Bson::Int32),
        (-3..3i64).prop_map(Bson::Int64),
        (-6..6i32).prop_map(|x| Bson::Double(f64::from(x) / 2.0)),
        Just(Bson::Double(f64::NAN)),
        "[ab]{0,3}".prop_map(Bson::String),
        any::<bool>().prop_map(Bson::Boolean),
        (0..3i64).prop_map(|x| Bson::DateTime(bson::DateTime::from_millis(x))),
    ];
    prop_oneof![
        1 => Just(None),
        6 => scalar.clone().prop_map(Some),
        1 => proptest::collection::vec(scalar.clone(), 0..3).prop_map(|v| Some(Bson::Array(v))),
        1 => scalar.prop_map(|s| Some(Bson::Document(doc! {"x": s}))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// A `$sort` after streaming stages holds each document behind its sort
    /// key encoded as an index key and orders them by those bytes; that
    /// order, ties in input order, is the order the in-memory `$sort`
    /// gives by comparing values, for either direction of either key.
    #[test]
    fn the_streamed_sort_orders_as_comparing_values_does(
        rows in proptest::collection::vec((sort_value(), sort_value()), 1..60),
        asc_a in any::<bool>(),
        asc_b in any::<bool>(),
    ) {
        let e = Engine::new();
        let docs: Vec<Document> = rows
            .iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let mut d = doc! {"_id": i as i32};
                if let Some(a) = a { d.insert("a", a.clone()); }
                if let Some(b) = b { d.insert("b", b.clone()); }
                d
            })
            .collect();
        insert(&e, "s", docs.clone());
        let dir = |asc: bool| if asc { 1 } else { -1 };
        let pipeline = vec![
            doc! {"$set": {"seen": true}},
            doc! {"$sort": {"a": dir(asc_a), "b": dir(asc_b)}},
            doc! {"$project": {"_id": 1}},
        ];
        let opts = schemalab_engine::AggregateOptions::default();
        let got = e.aggregate("t", Some("s"), &pipeline, &opts).unwrap();
        let want = schemalab_engine::pipeline::Pipeline::parse(&pipeline)
            .unwrap()
            .run(docs, &Whole(Default::default()), &schemalab_engine::expr::Vars::default())
            .unwrap();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn unsetting_top_level_fields_of_many_documents_removes_them_and_their_keys() {
    let e = Engine::new();
    index(&e, "u", doc! {"key": {"gone": 1}, "name": "gone_1"}).unwrap();
    index(&e, "u", doc! {"key": {"kept": 1}, "name": "kept_1"}).unwrap();
    insert(
        &e,
        "u",
        vec![
            doc! {"_id": 1, "gone": 1, "kept": "a", "also": [1, 2], "z": 0},
            doc! {"_id": 2, "kept": "b"},
            doc! {"_id": 3, "also": {"x": 1}, "gone": "s", "kept": "c"},
        ],
    );
    let unset = |filter: Document, fields: Document| {
        e.update(
            "t",
            "u",
            &[UpdateStatement {
                filter,
                update: Bson::Document(doc! {"$unset": fields}),
                upsert: false,
                multi: true,
                array_filters: vec![],
                collation: None,
                hint: None,
                sort: None,
                let_vars: None,
            }],
            true,
        )
        .unwrap()
    };
    let out = unset(doc! {}, doc! {"gone": "", "also": 1, "missing": ""});
    // Every document matched; the one holding none of the fields is left
    // as it was, and not counted as modified.
    assert_eq!((out.matched, out.modified), (3, 2));
    assert_eq!(
        find(&e, "u", doc! {}),
        vec![
            doc! {"_id": 1, "kept": "a", "z": 0},
            doc! {"_id": 2, "kept": "b"},
            doc! {"_id": 3, "kept": "c"},
        ]
    );
    // The removed field's index now holds null for every document; the
    // other index still finds each one by its value.
    let hinted = |filter: Document, hint: &str| find_hinted(&e, "u", filter, hint).len();
    assert_eq!(hinted(doc! {"gone": null}, "gone_1"), 3);
    assert_eq!(hinted(doc! {"gone": {"$in": [1, "s"]}}, "gone_1"), 0);
    assert_eq!(hinted(doc! {"kept": "c"}, "kept_1"), 1);
    // `_id` is immutable: unsetting it is refused, and nothing changes.
    let out = unset(doc! {"_id": 2}, doc! {"_id": ""});
    assert_eq!(out.errors[0].error.code, ErrorCode::IMMUTABLE_FIELD);
    assert_eq!(find(&e, "u", doc! {"_id": 2}).len(), 1);
}

/// A `$project` of the document's size and top-level fields at the head of
/// a pipeline is answered from the stored bytes: the same results as the
/// decoded stage gives (the size of each stored document, missing fields
/// left out), and its explain entry still counts every document it passed.
#[test]
fn a_leading_size_projection_reads_the_stored_bytes_and_is_counted() {
    let e = Engine::new();
    let docs: Vec<Document> = (0..50)
        .map(|i| match i % 3 {
            0 => doc! {"_id": i, "k": i % 5, "pad": "x".repeat(i as usize)},
            1 => doc! {"_id": i, "pad": [i, {"n": i}]},
            _ => doc! {"_id": i, "k": "five", "sub": {"a": i}},
        })
        .collect();
    let sizes: Vec<i64> = docs
        .iter()
        .map(|d| raw(d.clone()).as_bytes().len() as i64)
        .collect();
    insert(&e, "sized", docs);
    let opts = schemalab_engine::AggregateOptions::default();
    let pipeline = [
        doc! {"$project": {"_id": 0, "k": "$k", "s": {"$bsonSize": "$$ROOT"}}},
        doc! {"$group": {"_id": null, "max": {"$max": "$s"}, "sum": {"$sum": "$s"}, "ks": {"$addToSet": "$k"}}},
    ];
    let out = e.aggregate("t", Some("sized"), &pipeline, &opts).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(int(&out[0], "max"), *sizes.iter().max().unwrap());
    assert_eq!(int(&out[0], "sum"), sizes.iter().sum::<i64>());
    // `k` is missing from a third of the documents: left out, not null.
    let ks = out[0].get_array("ks").unwrap();
    assert_eq!(ks.len(), 6, "{ks:?}");
    assert!(!ks.contains(&Bson::Null));

    let explained = e
        .explain_doc(
            "t",
            &doc! {"aggregate": "sized", "pipeline": pipeline.to_vec(), "cursor": {}},
            "executionStats",
        )
        .unwrap();
    let stages = explained.get_array("stages").unwrap();
    let project = stages
        .iter()
        .filter_map(Bson::as_document)
        .find(|s| s.contains_key("$project"))
        .expect("a $project entry");
    assert_eq!(int(project, "nReturned"), 50, "{explained}");
    let cursor = stages[0]
        .as_document()
        .unwrap()
        .get_document("$cursor")
        .unwrap();
    assert_eq!(
        int(
            cursor.get_document("executionStats").unwrap(),
            "totalDocsExamined"
        ),
        50
    );
}
