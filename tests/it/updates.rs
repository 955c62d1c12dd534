//! Data-driven tests of the update language: each case in
//! `tests/updates/*.json` gives a document, an update (with arrayFilters,
//! the matched array position, insert mode) and what mongod 7.0 does: the
//! document after, whether it counts as modified, or the error code. Cases
//! with `seed` check the document an upsert starts from.
//!
//! Values are MongoDB extended JSON (relaxed): `1` is an int32,
//! `{"$numberLong": "1"}` an int64, `1.0` a double.

use std::path::Path;

use bson::{Bson, Document};
use proptest::prelude::*;
use schemalab_engine::error::{EngineError, ErrorCode};
use schemalab_engine::expr::Vars;
use schemalab_engine::update::{ApplyContext, Update, upsert_seed};

fn to_bson(v: &serde_json::Value) -> Bson {
    Bson::try_from(v.clone()).unwrap()
}

fn to_doc(v: &serde_json::Value) -> Document {
    match to_bson(v) {
        Bson::Document(d) => d,
        other => panic!("expected a document, got {other:?}"),
    }
}

fn bytes(d: &Document) -> Vec<u8> {
    bson::to_vec(d).unwrap()
}

/// The filter module (branch wt/query) may still be a stub; cases that need
/// it are skipped, loudly, until it lands.
fn filter_available() -> bool {
    let f = schemalab_engine::filter::Filter::parse(&bson::doc! {"a": 1}, None).unwrap();
    f.matches(&bson::doc! {"a": 1}, &Vars::default()).is_ok()
}

/// Likewise for update pipelines (branch wt/agg).
fn pipeline_available() -> bool {
    schemalab_engine::pipeline::Pipeline::parse(&[bson::doc! {"$set": {"a": 1}}]).is_ok()
}

fn now() -> bson::DateTime {
    bson::DateTime::from_millis(1_704_067_200_000)
}

fn run_case(case: &serde_json::Value, file: &str) -> Option<String> {
    let name = case["name"].as_str().unwrap_or("?");
    let label = format!("{file}: {name}");
    if let Some(filter) = case.get("seed") {
        let got = upsert_seed(&to_doc(filter));
        return check(&label, case, got.map(|d| (d, None)));
    }
    let update = to_bson(&case["update"]);
    let filters: Vec<Document> = case
        .get("arrayFilters")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().map(to_doc).collect())
        .unwrap_or_default();
    let vars = Vars::with_now(now());
    let ctx = ApplyContext {
        array_position: case
            .get("position")
            .and_then(|v| v.as_u64())
            .map(|p| p as usize),
        is_insert: case
            .get("insert")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
        now: now(),
        vars: &vars,
    };
    let mut doc = to_doc(&case["doc"]);
    let before = doc.clone();
    let result = Update::parse(&update, &filters, None).and_then(|u| {
        let changed = u.apply(&mut doc, &ctx)?;
        Ok((doc.clone(), Some(changed)))
    });
    if result.is_err() {
        // On error the document must be untouched.
        assert_eq!(
            bytes(&doc),
            bytes(&before),
            "{label}: document changed on error"
        );
    }
    check(&label, case, result)
}

fn check(
    label: &str,
    case: &serde_json::Value,
    got: Result<(Document, Option<bool>), EngineError>,
) -> Option<String> {
    match (case.get("error"), got) {
        (Some(code), Err(e)) => {
            let want = code.as_i64().unwrap() as i32;
            if e.code != ErrorCode(want) {
                return Some(format!(
                    "{label}: want code {want}, got {} ({})",
                    e.code.0, e.message
                ));
            }
            if let Some(msg) = case.get("errmsg").and_then(|m| m.as_str())
                && e.message != msg
            {
                return Some(format!(
                    "{label}: message\n  want {msg}\n  got  {}",
                    e.message
                ));
            }
            None
        }
        (Some(code), Ok((d, _))) => Some(format!("{label}: want error {code}, got {d}")),
        (None, Err(e)) => Some(format!(
            "{label}: unexpected error {} {}",
            e.code.0, e.message
        )),
        (None, Ok((d, changed))) => {
            let want = to_doc(&case["expect"]);
            if bytes(&d) != bytes(&want) {
                return Some(format!("{label}:\n  want {want}\n  got  {d}"));
            }
            if let Some(changed) = changed {
                let want_modified = case
                    .get("modified")
                    .and_then(|m| m.as_bool())
                    .unwrap_or_else(|| bytes(&want) != bytes(&to_doc(&case["doc"])));
                if changed != want_modified {
                    return Some(format!(
                        "{label}: modified want {want_modified}, got {changed}"
                    ));
                }
            }
            None
        }
    }
}

#[test]
fn fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/updates");
    let (has_filter, has_pipeline) = (filter_available(), pipeline_available());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let (mut ran, mut skipped, mut failures) = (0, 0, Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let cases: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        for case in cases.as_array().unwrap() {
            let needs = |k: &str| case.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
            if (needs("needs_filter") && !has_filter) || (needs("needs_pipeline") && !has_pipeline)
            {
                skipped += 1;
                continue;
            }
            ran += 1;
            if let Some(f) = run_case(case, &file) {
                failures.push(f);
            }
        }
    }
    eprintln!("update fixtures: {ran} ran, {skipped} skipped (filter/pipeline not merged yet)");
    assert!(ran >= 100, "only {ran} cases ran");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn arb_value() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        (-1e6f64..1e6).prop_map(Bson::Double),
        "[a-c]{0,2}".prop_map(Bson::String),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            prop::collection::vec(("[abc0-2]", inner), 0..4)
                .prop_map(|kv| Bson::Document(kv.into_iter().collect())),
        ]
    })
}

fn arb_path() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "[abc]",
            "[0-3]",
            Just("$".to_string()),
            Just("$[]".to_string()),
            Just("$[x]".to_string())
        ],
        1..4,
    )
    .prop_map(|parts| parts.join("."))
}

fn arb_update() -> impl Strategy<Value = Document> {
    let op = prop_oneof![
        Just("$set"),
        Just("$unset"),
        Just("$inc"),
        Just("$mul"),
        Just("$min"),
        Just("$max"),
        Just("$push"),
        Just("$addToSet"),
        Just("$pop"),
        Just("$pull"),
        Just("$pullAll"),
        Just("$rename"),
        Just("$setOnInsert"),
        Just("$currentDate"),
        Just("$bit"),
    ];
    prop::collection::vec(
        (op, prop::collection::vec((arb_path(), arb_value()), 1..3)),
        1..3,
    )
    .prop_map(|ops| {
        let mut d = Document::new();
        for (op, fields) in ops {
            let mut f = Document::new();
            for (p, v) in fields {
                let v = match op {
                    "$rename" => Bson::String(format!("r{}", p.replace('$', "z"))),
                    _ => v,
                };
                f.insert(p, v);
            }
            d.insert(op, f);
        }
        d
    })
}

fn no_duplicate_fields(v: &Bson) -> bool {
    match v {
        Bson::Document(d) => {
            let raw = bson::to_vec(d).unwrap();
            let raw = bson::RawDocument::from_bytes(&raw).unwrap();
            let mut names: Vec<&str> = raw.iter().map(|e| e.unwrap().0).collect();
            let n = names.len();
            names.sort_unstable();
            names.dedup();
            names.len() == n && d.values().all(no_duplicate_fields)
        }
        Bson::Array(a) => a.iter().all(no_duplicate_fields),
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn arbitrary_updates_never_panic(doc in arb_value(), update in arb_update(), pos in prop::option::of(0usize..4), insert in any::<bool>()) {
        let mut doc = match doc { Bson::Document(d) => d, other => bson::doc! {"a": other} };
        let vars = Vars::default();
        let ctx = ApplyContext { array_position: pos, is_insert: insert, now: now(), vars: &vars };
        let filters = [bson::doc! {"x": {"$gt": 0}}];
        for af in [&filters[..], &[]] {
            if let Ok(u) = Update::parse(&Bson::Document(update.clone()), af, None) {
                let before = doc.clone();
                match u.apply(&mut doc, &ctx) {
                    Ok(changed) => {
                        if !changed {
                            prop_assert_eq!(bytes(&before), bytes(&doc));
                        }
                    }
                    Err(_) => prop_assert_eq!(bytes(&before), bytes(&doc)),
                }
                prop_assert!(no_duplicate_fields(&Bson::Document(doc.clone())));
            }
        }
    }
}
