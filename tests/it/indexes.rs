//! Data-driven tests of `createIndexes` validation and conflicts.
//!
//! Every `tests/indexes/*.json` file holds an array of cases, in relaxed
//! Extended JSON:
//!
//! ```json
//! {"name": "...", "existing": [<spec>, …], "create": [<spec>, …],
//!  "error": <code>, "message": "<exact errmsg>" | "contains": "<part>"}
//! ```
//!
//! `existing` specs are created first (they must succeed); `create` is then
//! one `createIndexes` call, which must fail with `error` (and the message,
//! when given) or, without `error`, succeed leaving `indexes` index names
//! (`_id_` included) in that order. Codes and messages are mongod 7.0's
//! (`index_key_validate.cpp`, `index_catalog_impl.cpp`).

use std::path::Path;

use bson::{Bson, Document};
use schemalab_engine::Engine;

fn docs(v: Option<&Bson>) -> Vec<Document> {
    match v {
        Some(Bson::Array(a)) => a.iter().map(|d| d.as_document().unwrap().clone()).collect(),
        _ => Vec::new(),
    }
}

fn run_case(case: &Document) -> Result<(), String> {
    let e = Engine::new();
    for spec in docs(case.get("existing")) {
        e.create_indexes("t", "c", std::slice::from_ref(&spec))
            .map_err(|err| format!("existing {spec} failed: {err}"))?;
    }
    let got = e.create_indexes("t", "c", &docs(case.get("create")));
    if let Some(code) = case.get("error") {
        let want = code.as_i32().unwrap();
        let err = match got {
            Ok(_) => return Err(format!("succeeded, want error {want}")),
            Err(err) => err,
        };
        if err.code.code() != want {
            return Err(format!(
                "error {} ({}), want {want}",
                err.code.code(),
                err.message
            ));
        }
        if let Some(Bson::String(m)) = case.get("message")
            && &err.message != m
        {
            return Err(format!("message\n   got  {:?}\n   want {m:?}", err.message));
        }
        if let Some(Bson::String(m)) = case.get("contains")
            && !err.message.contains(m.as_str())
        {
            return Err(format!("message {:?} lacks {m:?}", err.message));
        }
        // A refused createIndexes leaves the catalog as it was: no new
        // index, and no collection created for it.
        let names = index_names(&e);
        let existing = docs(case.get("existing")).len();
        let want = if existing == 0 { 0 } else { 1 + existing };
        if names.len() != want {
            return Err(format!("catalog changed by a failed call: {names:?}"));
        }
        return Ok(());
    }
    got.map_err(|err| format!("error {}: {}", err.code.code(), err.message))?;
    let want: Vec<String> = match case.get("indexes") {
        Some(Bson::Array(a)) => a.iter().map(|n| n.as_str().unwrap().to_string()).collect(),
        _ => return Err("case has no expectation".into()),
    };
    let names = index_names(&e);
    if names == want {
        Ok(())
    } else {
        Err(format!("indexes {names:?}, want {want:?}"))
    }
}

fn index_names(e: &Engine) -> Vec<String> {
    e.list_indexes("t", "c")
        .map(|l| {
            l.iter()
                .map(|d| d.get_str("name").unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/indexes");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut n = 0;
    for f in files {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let Bson::Array(cases) = Bson::try_from(json).unwrap() else {
            panic!("{}: expected an array", f.display());
        };
        for case in cases {
            let case = case.as_document().unwrap().clone();
            n += 1;
            if let Err(e) = run_case(&case) {
                failures.push(format!("{}: {e}", case.get_str("name").unwrap()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(n >= 30, "only {n} cases");
}
