//! Data-driven tests of the planner, the executor and `explain`.
//!
//! Every `tests/explain/*.json` file (MongoDB Extended JSON, relaxed) holds
//!
//! ```json
//! {"docs": [...], "indexes": [{"key": {...}, ...}], "collections": {"other": {"docs": [...], "indexes": [...]}},
//!  "cases": [{"name": "...", "command": {"find": "c", ...}, "verbosity": "executionStats",
//!             "expect": {"chain": "FETCH<-IXSCAN", "indexName": "a_1", "nReturned": 3,
//!                        "totalKeysExamined": 3, "totalDocsExamined": 3, "rejectedPlans": 1,
//!                        "indexBounds": {...}, "direction": "forward", "isMultiKey": true,
//!                        "error": 2, "paths": {"<dotted path in the reply>": <value>},
//!                        "sameAs": {<filter>}}}]}
//! ```
//!
//! The main collection is `c`. `chain` is the winning plan's stage names
//! from the root down the first children (`inputStage`, or the first of
//! `inputStages`); for an aggregation it is read from `stages[0].$cursor`.
//! `sameAs` requires the `find` to return the same documents as a
//! collection scan with that filter (for `min`/`max`, whose bounds are not a
//! filter). Figures from the MongoDB manual's "Analyze Query Performance" tutorial
//! are reproduced in `inventory.json`.

use std::path::Path;

use bson::{Bson, Document, RawDocumentBuf, doc};
use schemalab_engine::{Engine, FindRequest};

fn load(e: &Engine, coll: &str, spec: &Document) {
    let docs: Vec<RawDocumentBuf> = spec
        .get_array("docs")
        .map(|a| {
            a.iter()
                .map(|d| RawDocumentBuf::from_document(d.as_document().unwrap()).unwrap())
                .collect()
        })
        .unwrap_or_default();
    e.create_collection("t", coll, &Document::new()).unwrap();
    if !docs.is_empty() {
        e.insert("t", coll, docs, true).unwrap();
    }
    if let Ok(indexes) = spec.get_array("indexes") {
        let specs: Vec<Document> = indexes
            .iter()
            .map(|i| i.as_document().unwrap().clone())
            .collect();
        e.create_indexes("t", coll, &specs).unwrap();
    }
}

/// The plan root: `winningPlan` / `executionStages`, or inside `$cursor`.
fn planner_of(reply: &Document) -> &Document {
    match reply.get_array("stages") {
        Ok(stages) => stages[0]
            .as_document()
            .unwrap()
            .get_document("$cursor")
            .unwrap()
            .get_document("queryPlanner")
            .unwrap(),
        Err(_) => reply.get_document("queryPlanner").unwrap(),
    }
}

fn stats_of(reply: &Document) -> Option<&Document> {
    match reply.get_array("stages") {
        Ok(stages) => stages[0]
            .as_document()
            .unwrap()
            .get_document("$cursor")
            .unwrap()
            .get_document("executionStats")
            .ok(),
        Err(_) => reply.get_document("executionStats").ok(),
    }
}

fn chain(plan: &Document) -> String {
    let name = plan.get_str("stage").unwrap().to_string();
    let child = plan.get_document("inputStage").ok().or_else(|| {
        plan.get_array("inputStages")
            .ok()
            .and_then(|a| a.first())
            .and_then(Bson::as_document)
    });
    match child {
        Some(c) => format!("{name}<-{}", chain(c)),
        None => name,
    }
}

fn find_stage<'a>(plan: &'a Document, stage: &str) -> Option<&'a Document> {
    if plan.get_str("stage").ok() == Some(stage) {
        return Some(plan);
    }
    if let Ok(c) = plan.get_document("inputStage") {
        return find_stage(c, stage);
    }
    plan.get_array("inputStages")
        .ok()?
        .iter()
        .filter_map(Bson::as_document)
        .find_map(|c| find_stage(c, stage))
}

fn at_path<'a>(d: &'a Bson, path: &str) -> Option<&'a Bson> {
    let mut cur = d;
    for part in path.split('.') {
        cur = match cur {
            Bson::Document(d) => d.get(part)?,
            Bson::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn as_i64(v: &Bson) -> i64 {
    match v {
        Bson::Int32(i) => i64::from(*i),
        Bson::Int64(i) => *i,
        Bson::Double(d) => *d as i64,
        other => panic!("not a number: {other}"),
    }
}

fn same(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_),
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_),
        ) => as_i64(a) == as_i64(b),
        (Bson::Document(x), Bson::Document(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b,
    }
}

fn run_case(file: &str, fixture: &Document, case: &Document) -> Result<(), String> {
    let e = Engine::new();
    load(&e, "c", fixture);
    if let Ok(others) = fixture.get_document("collections") {
        for (name, spec) in others {
            load(&e, name, spec.as_document().unwrap());
        }
    }
    let name = case.get_str("name").unwrap();
    let ctx = format!("{file} / {name}");
    let command = case.get_document("command").unwrap();
    let verbosity = case.get_str("verbosity").unwrap_or("executionStats");
    let expect = case.get_document("expect").unwrap();
    let reply = e.explain_doc("t", command, verbosity);
    if let Some(code) = expect.get("error") {
        // A refused `min`/`max` is refused by `find` itself too.
        if command.contains_key("min") || command.contains_key("max") {
            let found = e.find("t", "c", &find_request(command));
            if !matches!(&found, Err(err) if i64::from(err.code.code()) == as_i64(code)) {
                return Err(format!("{ctx}: find: expected error {code}, got {found:?}"));
            }
        }
        return match reply {
            Err(err) if i64::from(err.code.code()) == as_i64(code) => Ok(()),
            Err(err) => Err(format!("{ctx}: expected error {code}, got {err:?}")),
            Ok(r) => Err(format!("{ctx}: expected error {code}, got {r}")),
        };
    }
    let reply = reply.map_err(|err| format!("{ctx}: explain failed: {err:?}"))?;
    let fail = |what: &str| format!("{ctx}: {what}\nreply: {reply}");
    let qp = planner_of(&reply);
    let winning = qp.get_document("winningPlan").unwrap();
    if let Ok(want) = expect.get_str("chain")
        && chain(winning) != want
    {
        return Err(fail(&format!("chain {} != {want}", chain(winning))));
    }
    let ixscan = find_stage(winning, "IXSCAN");
    for key in ["indexName", "direction", "isMultiKey", "indexBounds"] {
        if let Some(want) = expect.get(key) {
            let got = ixscan.and_then(|s| s.get(key));
            if !got.is_some_and(|g| same(g, want)) {
                return Err(fail(&format!("{key}: {got:?} != {want}")));
            }
        }
    }
    if let Some(want) = expect.get("rejectedPlans") {
        let got = qp.get_array("rejectedPlans").unwrap().len() as i64;
        if got != as_i64(want) {
            return Err(fail(&format!("rejectedPlans {got} != {want}")));
        }
    }
    for key in ["nReturned", "totalKeysExamined", "totalDocsExamined"] {
        if let Some(want) = expect.get(key) {
            let got = stats_of(&reply).and_then(|s| s.get(key)).map(as_i64);
            if got != Some(as_i64(want)) {
                return Err(fail(&format!("{key}: {got:?} != {want}")));
            }
        }
    }
    if let Ok(paths) = expect.get_document("paths") {
        let root = Bson::Document(reply.clone());
        for (path, want) in paths {
            let got = at_path(&root, path);
            if !got.is_some_and(|g| same(g, want)) {
                return Err(fail(&format!("{path}: {got:?} != {want}")));
            }
        }
    }
    // The explained find returns what find itself returns.
    if let Some(Bson::String(coll)) = command.get("find") {
        let n = stats_of(&reply)
            .and_then(|s| s.get("nReturned"))
            .map(as_i64);
        let req = find_request(command);
        let found = e
            .find("t", coll, &req)
            .map_err(|err| format!("{ctx}: find failed: {err:?}"))?;
        if let Some(n) = n
            && n != found.len() as i64
        {
            return Err(fail(&format!(
                "find returned {} but explain nReturned {n}",
                found.len()
            )));
        }
        // `sameAs`: the same documents as a collection scan with this filter.
        if let Ok(filter) = expect.get_document("sameAs") {
            let scan = FindRequest {
                filter: filter.clone(),
                hint: Some(Bson::Document(doc! {"$natural": 1})),
                ..Default::default()
            };
            let scanned = e
                .find("t", coll, &scan)
                .map_err(|err| format!("{ctx}: scan failed: {err:?}"))?;
            let ids = |docs: &[Document]| {
                let mut ids: Vec<String> = docs
                    .iter()
                    .map(|d| d.get("_id").map(ToString::to_string).unwrap_or_default())
                    .collect();
                ids.sort();
                ids
            };
            if scanned.is_empty() || ids(&found) != ids(&scanned) {
                return Err(fail(&format!(
                    "found {:?} but the collection scan {:?}",
                    ids(&found),
                    ids(&scanned)
                )));
            }
        }
    }
    Ok(())
}

/// The `FindRequest` a `find` command carries.
fn find_request(command: &Document) -> FindRequest {
    FindRequest {
        filter: command.get_document("filter").cloned().unwrap_or_default(),
        sort: command.get_document("sort").ok().cloned(),
        projection: command.get_document("projection").ok().cloned(),
        skip: command.get("skip").map_or(0, |v| as_i64(v) as u64),
        limit: command.get("limit").map(|v| as_i64(v) as u64),
        collation: command.get_document("collation").ok().cloned(),
        hint: command.get("hint").cloned(),
        let_vars: command.get_document("let").ok().cloned(),
        min: command.get_document("min").ok().cloned(),
        max: command.get_document("max").ok().cloned(),
    }
}

#[test]
fn explain_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let (mut n, mut failures) = (0, Vec::new());
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let text = std::fs::read_to_string(path).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let Bson::Document(fixture) = Bson::try_from(json).unwrap() else {
            panic!("{}: not an object", path.display());
        };
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        for case in fixture.get_array("cases").unwrap() {
            n += 1;
            if let Err(msg) = run_case(&file, &fixture, case.as_document().unwrap()) {
                failures.push(msg);
            }
        }
    }
    assert!(n >= 20, "only {n} cases");
    assert!(
        failures.is_empty(),
        "{} of {n} cases failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn verbosity_controls_sections() {
    let e = Engine::new();
    e.insert(
        "t",
        "v",
        vec![RawDocumentBuf::from_document(&doc! {"a": 1}).unwrap()],
        true,
    )
    .unwrap();
    e.create_indexes(
        "t",
        "v",
        &[doc! {"key": {"a": 1}}, doc! {"key": {"a": 1, "b": 1}}],
    )
    .unwrap();
    let cmd = doc! {"find": "v", "filter": {"a": 1}};
    let qp = e.explain_doc("t", &cmd, "queryPlanner").unwrap();
    assert!(qp.get("executionStats").is_none());
    assert_eq!(qp.get_str("explainVersion").unwrap(), "1");
    assert_eq!(
        qp.get_document("serverInfo")
            .unwrap()
            .get_str("version")
            .unwrap(),
        "7.0.12"
    );
    assert_eq!(
        qp.get_document("command").unwrap().get_str("$db").unwrap(),
        "t"
    );
    let all = e.explain_doc("t", &cmd, "allPlansExecution").unwrap();
    let plans = all
        .get_document("executionStats")
        .unwrap()
        .get_array("allPlansExecution")
        .unwrap();
    assert_eq!(plans.len(), 2);
    assert!(e.explain_doc("t", &cmd, "loud").is_err());
}

#[test]
fn sort_over_memory_limit_fails_with_292_when_disk_use_is_refused() {
    // 110 documents of ~1 MiB each: more than the 100 MB sort budget.
    let e = Engine::new();
    let big = "x".repeat(1024 * 1024);
    let docs: Vec<RawDocumentBuf> = (0..110)
        .map(|i| RawDocumentBuf::from_document(&doc! {"i": i, "s": &big}).unwrap())
        .collect();
    e.insert("t", "big", docs, true).unwrap();
    let req = FindRequest {
        sort: Some(doc! {"i": -1}),
        ..Default::default()
    };
    // With `allowDiskUse: false` the sort stops at its budget…
    let refused = schemalab_engine::limits::Operation {
        allow_disk_use: Some(false),
        ..Default::default()
    };
    let err = schemalab_engine::limits::run_as(refused, || e.find("t", "big", &req)).unwrap_err();
    assert_eq!(err.code.code(), 292);
    // …and saying nothing lets it through, as mongod 7.0 spills to disk
    // (`allowDiskUseByDefault`).
    assert_eq!(e.find("t", "big", &req).unwrap().len(), 110);
    // With a limit only the best few are kept, which fits.
    let req = FindRequest {
        sort: Some(doc! {"i": -1}),
        limit: Some(2),
        ..Default::default()
    };
    let top = e.find("t", "big", &req).unwrap();
    assert_eq!(top.len(), 2);
    assert_eq!(top[0].get_i32("i").unwrap(), 109);
}

mod planned_equals_scanned {
    //! Whatever plan wins, a query returns what a collection scan returns.
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Bson> {
        prop_oneof![
            (0i32..6).prop_map(Bson::Int32),
            (0i32..6).prop_map(|i| Bson::Double(f64::from(i) + 0.5)),
            "[a-c]".prop_map(Bson::String),
            proptest::collection::vec((0i32..6).prop_map(Bson::Int32), 0..3).prop_map(Bson::Array),
            Just(Bson::Null),
        ]
    }

    fn scalar() -> impl Strategy<Value = Bson> {
        prop_oneof![
            (0i32..6).prop_map(Bson::Int32),
            "[a-c]".prop_map(Bson::String)
        ]
    }

    fn predicate() -> impl Strategy<Value = Bson> {
        prop_oneof![
            scalar(),
            (
                prop_oneof![Just("$gt"), Just("$gte"), Just("$lt"), Just("$lte")],
                scalar()
            )
                .prop_map(|(op, v)| Bson::Document(doc! {op: v})),
            (scalar(), scalar()).prop_map(|(lo, hi)| Bson::Document(doc! {"$gte": lo, "$lt": hi})),
            proptest::collection::vec(scalar(), 1..4).prop_map(|v| Bson::Document(doc! {"$in": v})),
            (scalar(), scalar())
                .prop_map(|(lo, hi)| Bson::Document(doc! {"$elemMatch": {"$gte": lo, "$lte": hi}})),
        ]
    }

    fn filter() -> impl Strategy<Value = Document> {
        (
            proptest::option::of(predicate()),
            proptest::option::of(predicate()),
            any::<bool>(),
        )
            .prop_map(|(a, b, or)| {
                let mut d = Document::new();
                match (a, b, or) {
                    (Some(a), Some(b), true) => {
                        d.insert(
                            "$or",
                            vec![Bson::Document(doc! {"a": a}), Bson::Document(doc! {"b": b})],
                        );
                    }
                    (a, b, _) => {
                        if let Some(a) = a {
                            d.insert("a", a);
                        }
                        if let Some(b) = b {
                            d.insert("b", b);
                        }
                    }
                }
                d
            })
    }

    fn ids(docs: &[Document]) -> Vec<String> {
        let mut out: Vec<String> = docs
            .iter()
            .map(|d| d.get("_id").unwrap().to_string())
            .collect();
        out.sort();
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn same_results(docs in proptest::collection::vec((value(), value()), 0..25), f in filter(), desc in any::<bool>()) {
            let e = Engine::new();
            let raws: Vec<RawDocumentBuf> = docs
                .iter()
                .enumerate()
                .map(|(i, (a, b))| {
                    let mut d = doc! {"_id": i as i32};
                    if !matches!(a, Bson::Null) { d.insert("a", a.clone()); }
                    d.insert("b", b.clone());
                    RawDocumentBuf::from_document(&d).unwrap()
                })
                .collect();
            e.create_collection("t", "p", &Document::new()).unwrap();
            if !raws.is_empty() {
                e.insert("t", "p", raws, false).unwrap();
            }
            // Arrays in both a and b would make the compound indexes refuse
            // the document (parallel arrays), so index only what fits.
            let _ = e.create_indexes("t", "p", &[doc! {"key": {"a": 1}}, doc! {"key": {"b": -1}}]);
            let _ = e.create_indexes("t", "p", &[doc! {"key": {"a": -1, "b": 1}}]);
            let planned = e.find("t", "p", &FindRequest { filter: f.clone(), ..Default::default() }).unwrap();
            let scanned = e.find("t", "p", &FindRequest { filter: f.clone(), hint: Some(Bson::Document(doc! {"$natural": 1})), ..Default::default() }).unwrap();
            prop_assert_eq!(ids(&planned), ids(&scanned));
            // With a sort, the sort-key sequence is the same too.
            let sort = doc! {"a": if desc { -1 } else { 1 }};
            let sorted = e.find("t", "p", &FindRequest { filter: f.clone(), sort: Some(sort.clone()), ..Default::default() }).unwrap();
            let reference = e.find("t", "p", &FindRequest { filter: f.clone(), sort: Some(sort), hint: Some(Bson::Document(doc! {"$natural": 1})), ..Default::default() }).unwrap();
            // Compare sort keys (an array sorts by its smallest element
            // ascending, its largest descending), not raw values: documents
            // with equal sort keys may come in either order, in mongod too.
            let keys = |v: &[Document]| v.iter().map(|d| schemalab_engine::sort::sort_key(d, &["a"], !desc, None).to_string()).collect::<Vec<_>>();
            prop_assert_eq!(keys(&sorted), keys(&reference));
            prop_assert_eq!(ids(&sorted), ids(&reference));
        }
    }
}

mod regex_planned_equals_scanned {
    //! Regex bounds never change what a query returns: planned (possibly
    //! covered) results equal a collection scan's.
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Bson> {
        prop_oneof![
            8 => "a?b?[abA\n.|]{0,2}".prop_map(Bson::String),
            1 => (0i32..3).prop_map(Bson::Int32),
            1 => proptest::collection::vec("[ab]{0,2}".prop_map(Bson::String), 0..3).prop_map(Bson::Array),
            1 => prop_oneof![Just("^a"), Just("ab")].prop_map(|p| Bson::RegularExpression(bson::Regex { pattern: p.into(), options: String::new() })),
            1 => Just(Bson::Null),
        ]
    }

    fn pattern() -> impl Strategy<Value = (&'static str, &'static str)> {
        (
            prop_oneof![
                Just("^a"),
                Just("^ab"),
                Just("^a.*"),
                Just("^a.*b"),
                Just("a"),
                Just("^a?b"),
                Just("\\Aab"),
                Just("^a|b"),
                Just("^a\\|b"),
                Just("^(ab)"),
                Just("^ab$"),
                Just("^\\Qa.\\E"),
                Just("^a\\.b"),
                Just("^"),
                Just("^A"),
                Just("^a b"),
                Just("^\\n"),
            ],
            prop_oneof![
                Just(""),
                Just("i"),
                Just("m"),
                Just("s"),
                Just("x"),
                Just("ms")
            ],
        )
    }

    fn values(docs: &[Document]) -> Vec<String> {
        let mut out: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
        out.sort();
        out
    }

    proptest! {
        // Default case count, so that PROPTEST_CASES raises it.
        #[test]
        fn same_results(docs in proptest::collection::vec(value(), 0..20), (p, o) in pattern(), form in 0u8..3, desc in any::<bool>(), arrays in any::<bool>()) {
            let e = Engine::new();
            // Without arrays the index stays non-multikey, so an exact
            // regex with the projection below gets a covered plan.
            let raws: Vec<RawDocumentBuf> = docs
                .iter()
                .filter(|a| arrays || !matches!(a, Bson::Array(_)))
                .enumerate()
                .map(|(i, a)| {
                    let mut d = doc! {"_id": i as i32};
                    if !matches!(a, Bson::Null) { d.insert("a", a.clone()); }
                    RawDocumentBuf::from_document(&d).unwrap()
                })
                .collect();
            e.create_collection("t", "p", &Document::new()).unwrap();
            if !raws.is_empty() {
                e.insert("t", "p", raws, false).unwrap();
            }
            e.create_indexes("t", "p", &[doc! {"key": {"a": 1}}]).unwrap();
            let re = Bson::RegularExpression(bson::Regex { pattern: p.into(), options: o.into() });
            let filter = match form {
                0 => doc! {"a": re.clone()},
                1 => doc! {"a": {"$regex": p, "$options": o}},
                _ => doc! {"a": {"$regex": re}},
            };
            let natural = Some(Bson::Document(doc! {"$natural": 1}));
            // Some patterns (`\\Q…\\E`) our regex engine rejects: then both
            // ways must fail alike.
            let run = |req: FindRequest| e.find("t", "p", &req).map_err(|err| err.code.code());
            for projection in [None, Some(doc! {"a": 1, "_id": 0})] {
                let sort = Some(doc! {"a": if desc { -1 } else { 1 }});
                let planned = run(FindRequest { filter: filter.clone(), projection: projection.clone(), ..Default::default() });
                let scanned = run(FindRequest { filter: filter.clone(), projection: projection.clone(), hint: natural.clone(), ..Default::default() });
                prop_assert_eq!(planned.as_deref().map(values), scanned.as_deref().map(values));
                let sorted = run(FindRequest { filter: filter.clone(), projection: projection.clone(), sort: sort.clone(), ..Default::default() });
                let reference = run(FindRequest { filter: filter.clone(), projection: projection.clone(), sort, hint: natural.clone(), ..Default::default() });
                let keys = |v: &[Document]| v.iter().map(|d| schemalab_engine::sort::sort_key(d, &["a"], !desc, None).to_string()).collect::<Vec<_>>();
                prop_assert_eq!(sorted.as_deref().map(keys), reference.as_deref().map(keys));
            }
        }
    }
}

#[test]
fn exact_prefix_regex_needs_no_filter_but_others_do() {
    let e = Engine::new();
    let docs: Vec<RawDocumentBuf> = ["abc", "abd", "b"]
        .iter()
        .map(|s| RawDocumentBuf::from_document(&doc! {"a": *s}).unwrap())
        .collect();
    e.insert("t", "r", docs, true).unwrap();
    e.create_indexes("t", "r", &[doc! {"key": {"a": 1}}])
        .unwrap();
    // mongod tests an inexact regex against the index keys (a filter on
    // IXSCAN), so only the matching keys' documents are fetched.
    let filters = |filter: Document| {
        let reply = e
            .explain_doc("t", &doc! {"find": "r", "filter": filter}, "queryPlanner")
            .unwrap();
        let plan = reply
            .get_document("queryPlanner")
            .unwrap()
            .get_document("winningPlan")
            .unwrap()
            .clone();
        assert_eq!(plan.get_str("stage").unwrap(), "FETCH");
        let ixscan = plan.get_document("inputStage").unwrap();
        (plan.get("filter").cloned(), ixscan.get("filter").cloned())
    };
    assert_eq!(filters(doc! {"a": {"$regex": "^ab"}}), (None, None));
    assert_eq!(filters(doc! {"a": {"$regex": "^ab.*"}}), (None, None));
    for inexact in [
        doc! {"a": {"$regex": "^ab$"}},
        doc! {"a": {"$regex": "b"}},
        doc! {"a": {"$regex": "^ab", "$options": "i"}},
    ] {
        let (fetch, ixscan) = filters(inexact.clone());
        assert_eq!(fetch, None, "{inexact}");
        assert!(ixscan.is_some(), "{inexact}");
    }
    // Conditions on other fields stay on the FETCH.
    let (fetch, ixscan) = filters(doc! {"a": {"$regex": "b"}, "z": 1});
    assert_eq!(fetch, Some(Bson::Document(doc! {"z": 1})));
    assert!(ixscan.is_some());
}

#[test]
fn count_and_find_honour_a_hinted_sparse_index() {
    let e = Engine::new();
    let docs = [
        doc! {"_id": 1, "a": 1},
        doc! {"_id": 2, "a": 2},
        doc! {"_id": 3, "x": 1},
    ];
    e.insert(
        "t",
        "s",
        docs.iter()
            .map(|d| RawDocumentBuf::from_document(d).unwrap())
            .collect(),
        true,
    )
    .unwrap();
    e.create_indexes("t", "s", &[doc! {"key": {"a": 1}, "sparse": true}])
        .unwrap();
    // Without a hint the record count answers; with the sparse index
    // hinted, mongod counts what the index holds.
    let plain = schemalab_engine::CountRequest::default();
    assert_eq!(e.count("t", "s", &plain).unwrap(), 3);
    let hinted = schemalab_engine::CountRequest {
        hint: Some(Bson::String("a_1".into())),
        ..Default::default()
    };
    assert_eq!(e.count("t", "s", &hinted).unwrap(), 2);
    let found = e
        .find(
            "t",
            "s",
            &FindRequest {
                hint: Some(Bson::Document(doc! {"a": 1})),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(found.len(), 2);
}

#[test]
fn distinct_through_distinct_scan_returns_every_value() {
    let e = Engine::new();
    let docs: Vec<RawDocumentBuf> = [(1, "x"), (1, "y"), (2, "x"), (3, "x"), (3, "z")]
        .iter()
        .map(|(a, b)| RawDocumentBuf::from_document(&doc! {"a": *a, "b": *b}).unwrap())
        .collect();
    e.insert("t", "d", docs, true).unwrap();
    let plain = e.distinct("t", "d", "a", &Document::new(), None).unwrap();
    e.create_indexes("t", "d", &[doc! {"key": {"a": -1, "b": 1}}])
        .unwrap();
    let reply = e
        .explain_doc("t", &doc! {"distinct": "d", "key": "a"}, "executionStats")
        .unwrap();
    let stats = reply.get_document("executionStats").unwrap();
    assert_eq!(
        as_i64(stats.get("totalKeysExamined").unwrap()),
        3,
        "{reply}"
    );
    let mut scanned = e.distinct("t", "d", "a", &Document::new(), None).unwrap();
    let mut plain = plain;
    let key = |v: &Bson| as_i64(v);
    scanned.sort_by_key(key);
    plain.sort_by_key(key);
    assert_eq!(scanned, plain);
    assert_eq!(plain.len(), 3);
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
