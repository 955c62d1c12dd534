//! Data-driven tests of the aggregation engine.
//!
//! Every `tests/aggregation/*.json` file holds an array of cases, written in
//! MongoDB Extended JSON (relaxed: `1` is an int, `1.0` a double). A case is
//! either a pipeline case
//!
//! ```json
//! {"name": "...", "docs": [...], "collections": {"other": [...]},
//!  "pipeline": [...], "expected": [...], "unordered": false}
//! ```
//!
//! or an expression case evaluated against one document
//!
//! ```json
//! {"name": "...", "doc": {...}, "expr": ..., "expected": <value>}
//! ```
//!
//! where `"missing": true` expects a missing result. Either kind may give
//! `"error": <code>` instead of `expected`. Expected values were taken from
//! mongod 7.0 (many from the MongoDB manual's examples) and are compared
//! exactly: BSON types and field order included.

use std::collections::HashMap;
use std::path::Path;

use bson::{Bson, Document};
use proptest::prelude::*;
use schemalab_engine::Result;
use schemalab_engine::collation::Collation;
use schemalab_engine::expr::{Expr, Vars};
use schemalab_engine::pipeline::{Pipeline, Source};

/// Collections a fixture makes visible to `$lookup` and friends.
struct Collections(HashMap<String, Vec<Document>>);

impl Source for Collections {
    fn collection_docs(&self, collection: &str) -> Result<Vec<Document>> {
        Ok(self.0.get(collection).cloned().unwrap_or_default())
    }
}

fn now() -> bson::DateTime {
    bson::DateTime::parse_rfc3339_str("2024-03-15T12:00:00Z").unwrap()
}

fn docs_of(v: Option<&Bson>) -> Vec<Document> {
    match v {
        Some(Bson::Array(items)) => items
            .iter()
            .map(|d| d.as_document().expect("documents").clone())
            .collect(),
        _ => Vec::new(),
    }
}

fn vars_for(case: &Document) -> Vars {
    let mut vars = Vars::with_now(now());
    if let Some(Bson::Document(c)) = case.get("collation") {
        vars.set_collation(Collation::parse(c).unwrap());
    }
    if let Some(Bson::Document(l)) = case.get("let") {
        vars.bind_let(l, &Document::new()).unwrap();
    }
    vars
}

/// Run one case; `Err` describes how it failed.
fn run_case(case: &Document) -> std::result::Result<(), String> {
    let vars = vars_for(case);
    let got: Result<Bson> = if let Some(e) = case.get("expr") {
        let doc = case.get_document("doc").cloned().unwrap_or_default();
        Expr::parse(e)
            .and_then(|x| x.eval(&doc, &vars))
            .map(|r| r.unwrap_or(Bson::String("<missing>".into())))
    } else {
        let pipeline = docs_of(case.get("pipeline"));
        let mut colls = HashMap::new();
        if let Some(Bson::Document(c)) = case.get("collections") {
            for (name, docs) in c {
                colls.insert(name.clone(), docs_of(Some(docs)));
            }
        }
        let source = Collections(colls);
        Pipeline::parse(&pipeline)
            .and_then(|p| p.run(docs_of(case.get("docs")), &source, &vars))
            .map(|docs| Bson::Array(docs.into_iter().map(Bson::Document).collect()))
    };
    if let Some(code) = case.get("error") {
        let want = code.as_i32().expect("error code");
        return match got {
            Err(e) if e.code.code() == want => {
                if let Some(Bson::String(msg)) = case.get("message")
                    && &e.message != msg
                {
                    return Err(format!("message {:?}, want {msg:?}", e.message));
                }
                Ok(())
            }
            Err(e) => Err(format!(
                "error {} ({}), want code {want}",
                e.code.code(),
                e.message
            )),
            Ok(v) => Err(format!("got {v}, want error {want}")),
        };
    }
    let got = got.map_err(|e| format!("error {}: {}", e.code.code(), e.message))?;
    let want = if case.get_bool("missing").unwrap_or(false) {
        Bson::String("<missing>".into())
    } else {
        case.get("expected")
            .cloned()
            .ok_or("case has no expectation")?
    };
    let same = match (&got, &want, case.get_bool("unordered").unwrap_or(false)) {
        (Bson::Array(g), Bson::Array(w), true) => {
            let mut rest = g.clone();
            w.len() == g.len()
                && w.iter().all(|x| match rest.iter().position(|y| y == x) {
                    Some(i) => {
                        rest.remove(i);
                        true
                    }
                    None => false,
                })
        }
        _ => got == want,
    };
    if same {
        Ok(())
    } else {
        Err(format!("\n   got  {got:?}\n   want {want:?}"))
    }
}

fn load_cases() -> Vec<(String, Document)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/aggregation");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let Bson::Array(items) = Bson::try_from(json).unwrap() else {
            panic!("{}: expected an array of cases", f.display());
        };
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        for item in items {
            let case = item.as_document().unwrap().clone();
            let name = format!("{stem}/{}", case.get_str("name").unwrap());
            cases.push((name, case));
        }
    }
    cases
}

#[test]
fn fixtures() {
    let cases = load_cases();
    let mut names: Vec<&String> = cases.iter().map(|(n, _)| n).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), cases.len(), "case names must be unique");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(name, case)| run_case(case).err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(cases.len() >= 120, "only {} cases", cases.len());
}

/// Every stage named in the fixtures and every expression family is covered.
#[test]
fn fixtures_cover_every_stage() {
    let cases = load_cases();
    let mut stages = std::collections::BTreeSet::new();
    for (_, case) in &cases {
        for stage in docs_of(case.get("pipeline")) {
            stages.extend(stage.keys().cloned());
        }
    }
    for s in [
        "$match",
        "$project",
        "$addFields",
        "$set",
        "$unset",
        "$group",
        "$sort",
        "$skip",
        "$limit",
        "$unwind",
        "$lookup",
        "$graphLookup",
        "$unionWith",
        "$count",
        "$sortByCount",
        "$replaceRoot",
        "$replaceWith",
        "$facet",
        "$bucket",
        "$bucketAuto",
        "$sample",
        "$documents",
        "$redact",
    ] {
        assert!(stages.contains(s), "no fixture uses {s}");
    }
}

const OPS: &[&str] = &[
    "$add",
    "$subtract",
    "$multiply",
    "$divide",
    "$mod",
    "$abs",
    "$round",
    "$pow",
    "$sqrt",
    "$eq",
    "$lt",
    "$cmp",
    "$and",
    "$or",
    "$not",
    "$cond",
    "$ifNull",
    "$switch",
    "$size",
    "$arrayElemAt",
    "$first",
    "$slice",
    "$filter",
    "$map",
    "$reduce",
    "$in",
    "$concatArrays",
    "$range",
    "$setUnion",
    "$zip",
    "$sortArray",
    "$concat",
    "$toUpper",
    "$substrCP",
    "$split",
    "$trim",
    "$regexMatch",
    "$type",
    "$toInt",
    "$convert",
    "$toDate",
    "$mergeObjects",
    "$getField",
    "$objectToArray",
    "$arrayToObject",
    "$year",
    "$hour",
    "$dateToString",
    "$dateFromString",
    "$dateToParts",
    "$dateFromParts",
    "$dateTrunc",
    "$dateAdd",
    "$dateSubtract",
    "$dateDiff",
    "$sum",
    "$avg",
    "$max",
    "$literal",
    "$let",
    "$bsonSize",
    "$indexOfArray",
    "$strLenBytes",
    "$foo",
];

fn arb_bson() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        (-3i32..12).prop_map(Bson::Int32),
        (-3i32..12).prop_map(Bson::Int32),
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        any::<f64>().prop_map(Bson::Double),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
        "[a-z$.]{0,6}".prop_map(Bson::String),
        prop::sample::select(vec!["$a", "$a.b", "$$ROOT", "$$NOW", "$$this", "$$x", "$"])
            .prop_map(|s| Bson::String(s.to_string())),
        // Time zones, date strings and formats for the date operators.
        prop::sample::select(vec![
            "Europe/London",
            "America/New_York",
            "Asia/Kolkata",
            "+05:30",
            "-0530",
            "+03",
            "2017-02-08T12:10:40.787Z",
            "2024-03-10 02:30",
            "15 June 2018",
            "%Y-%m-%d %H:%M:%S%z",
            "%G-W%V-%u",
            "%d %B %Y%Z",
            "week",
            "month",
            "hour",
        ])
        .prop_map(|s| Bson::String(s.to_string())),
        (-5_000_000_000_000i64..5_000_000_000_000)
            .prop_map(|m| Bson::DateTime(bson::DateTime::from_millis(m))),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            (prop::sample::select(OPS), inner.clone()).prop_map(|(op, arg)| {
                let mut d = Document::new();
                d.insert(op, arg);
                Bson::Document(d)
            }),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "input",
                        "as",
                        "in",
                        "cond",
                        "date",
                        "unit",
                        "amount",
                        "format",
                        "n",
                        "sortBy",
                        "to",
                        "field",
                        "a",
                        "regex",
                        "inputs",
                        "vars",
                        "year",
                        "month",
                        "day",
                        "binSize",
                        "startDate",
                        "endDate",
                        "dateString",
                        "timezone",
                        "onNull",
                        "onError",
                        "startOfWeek",
                        "iso8601",
                        "isoWeekYear",
                        "isoWeek",
                        "hour",
                        "value",
                        "branches",
                    ]),
                    inner
                ),
                0..4
            )
            .prop_map(|kv| {
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
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Arbitrary expressions parse or fail, and evaluate or fail, but never panic.
    #[test]
    fn expressions_never_panic(e in arb_bson(), a in arb_bson()) {
        let mut doc = Document::new();
        doc.insert("a", a);
        if let Ok(expr) = Expr::parse(&e) {
            let _ = expr.eval(&doc, &Vars::with_now(now()));
        }
    }
}

/// Group keys of many types that often compare equal across types.
fn group_key() -> impl Strategy<Value = Bson> {
    let scalar = prop_oneof![
        (-3i32..3).prop_map(Bson::Int32),
        (-3i64..3).prop_map(Bson::Int64),
        (-6i32..6).prop_map(|n| Bson::Double(f64::from(n) / 2.0)),
        (-6i32..6)
            .prop_map(|n| Bson::Decimal128(format!("{}", f64::from(n) / 2.0).parse().unwrap())),
        Just(Bson::Null),
        Just(Bson::Double(f64::NAN)),
        "[aAbB]{0,2}".prop_map(Bson::String),
    ];
    scalar.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..2).prop_map(Bson::Array),
            inner.prop_map(|v| Bson::Document(bson::doc! {"a": v})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `$group` puts two documents in one group exactly when their keys
    /// compare equal, and lists the groups in first-seen order, as a
    /// one-by-one comparison against every group seen so far does.
    #[test]
    fn groups_are_the_classes_of_equal_keys(
        keys in proptest::collection::vec(group_key(), 0..40),
        collated in any::<bool>(),
    ) {
        let collation = if collated {
            Collation::parse(&bson::doc! {"locale": "en", "strength": 2}).unwrap()
        } else {
            None
        };
        let docs: Vec<Document> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| bson::doc! {"_id": i as i32, "k": k.clone()})
            .collect();
        let mut vars = Vars::with_now(now());
        vars.set_collation(collation.clone());
        let pipeline = [bson::doc! {"$group": {"_id": "$k", "ids": {"$push": "$_id"}}}];
        let got = Pipeline::parse(&pipeline)
            .unwrap()
            .run(docs, &Collections(HashMap::new()), &vars)
            .unwrap();
        let mut want: Vec<(Bson, Vec<Bson>)> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let id = Bson::Int32(i as i32);
            match want.iter_mut().find(|(g, _)| {
                schemalab_engine::value::compare(g, k, collation.as_ref()) == std::cmp::Ordering::Equal
            }) {
                Some((_, ids)) => ids.push(id),
                None => want.push((k.clone(), vec![id])),
            }
        }
        let want: Vec<Document> = want
            .into_iter()
            .map(|(k, ids)| bson::doc! {"_id": k, "ids": ids})
            .collect();
        prop_assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }
}

/// A sort value with many ties: null, or a small number as an int or a
/// double (`1` and `1.0` compare equal but print apart, so the order among
/// equal values shows).
fn tied_value() -> impl Strategy<Value = Bson> {
    prop_oneof![
        1 => Just(Bson::Null),
        3 => (0..4i32).prop_map(Bson::Int32),
        3 => (0..4i32).prop_map(|x| Bson::Double(f64::from(x))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    /// The n-accumulators and `$top`/`$bottom` keep only what they can
    /// still return, yet return exactly what a stable sort of every value
    /// gives: the same values, equal ones in input order. Groups of up to
    /// 600 values go well past the point where the state is trimmed.
    #[test]
    fn n_accumulators_return_what_sorting_every_value_returns(
        ks in proptest::collection::vec(tied_value(), 0..600),
        n in 1..6usize,
    ) {
        use schemalab_engine::value::compare;
        let docs: Vec<Document> = ks
            .iter()
            .enumerate()
            .map(|(i, k)| bson::doc! {"_id": 0, "i": i as i32, "k": k.clone()})
            .collect();
        let n32 = n as i32;
        let pipeline = [bson::doc! {"$group": {
            "_id": null,
            "first": {"$firstN": {"n": n32, "input": "$i"}},
            "last": {"$lastN": {"n": n32, "input": "$i"}},
            "max": {"$maxN": {"n": n32, "input": "$k"}},
            "min": {"$minN": {"n": n32, "input": "$k"}},
            "top": {"$topN": {"n": n32, "sortBy": {"k": 1}, "output": "$i"}},
            "bottom": {"$bottomN": {"n": n32, "sortBy": {"k": -1}, "output": "$i"}},
            "top1": {"$top": {"sortBy": {"k": -1}, "output": "$i"}},
            "bottom1": {"$bottom": {"sortBy": {"k": 1}, "output": "$i"}},
        }}];
        let got = Pipeline::parse(&pipeline)
            .unwrap()
            .run(docs, &Collections(HashMap::new()), &Vars::with_now(now()))
            .unwrap();

        let ids: Vec<i32> = (0..ks.len() as i32).collect();
        let by_k = |desc: bool| {
            let mut order = ids.clone();
            order.sort_by(|&a, &b| {
                let c = compare(&ks[a as usize], &ks[b as usize], None);
                if desc { c.reverse() } else { c }
            });
            order
        };
        let ints = |v: &[i32]| Bson::Array(v.iter().map(|&i| Bson::Int32(i)).collect());
        let present: Vec<Bson> = ks.iter().filter(|k| !matches!(k, Bson::Null)).cloned().collect();
        let sorted_values = |desc: bool| {
            let mut v = present.clone();
            v.sort_by(|a, b| {
                let c = compare(a, b, None);
                if desc { c.reverse() } else { c }
            });
            v.truncate(n);
            Bson::Array(v)
        };
        let asc = by_k(false);
        let desc = by_k(true);
        let want = if ks.is_empty() {
            Vec::new()
        } else {
            vec![bson::doc! {
                "_id": null,
                "first": ints(&ids[..n.min(ids.len())]),
                "last": ints(&ids[ids.len().saturating_sub(n)..]),
                "max": sorted_values(true),
                "min": sorted_values(false),
                "top": ints(&asc[..n.min(asc.len())]),
                "bottom": ints(&desc[desc.len().saturating_sub(n)..]),
                "top1": Bson::Int32(desc[0]),
                "bottom1": Bson::Int32(asc[asc.len() - 1]),
            }]
        };
        prop_assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }
}

/// A `$topN` passes over a document its kept values outrank without
/// evaluating its output only when that output cannot fail: an output
/// that fails on such a document (here, a division by zero in the last
/// and worst-ranked one) fails the group, as mongod evaluates it for
/// every document. With a field path as output, the same documents give
/// the n best.
#[test]
fn top_n_evaluates_an_output_that_can_fail_for_every_document() {
    let docs: Vec<Document> = (0..40)
        .map(|i| bson::doc! {"_id": i, "k": i, "d": if i == 39 { 0 } else { 1 }})
        .collect();
    let run = |output: Bson| {
        let pipeline = [bson::doc! {"$group": {
            "_id": null,
            "top": {"$topN": {"n": 2, "sortBy": {"k": 1}, "output": output}},
        }}];
        Pipeline::parse(&pipeline).unwrap().run(
            docs.clone(),
            &Collections(HashMap::new()),
            &Vars::with_now(now()),
        )
    };
    let err = run(bson::bson!({"$divide": [1, "$d"]})).unwrap_err();
    assert_eq!(err.code.0, 2, "{err}");
    let kept = run(Bson::String("$_id".into())).unwrap();
    assert_eq!(kept, vec![bson::doc! {"_id": null, "top": [0, 1]}]);
}
