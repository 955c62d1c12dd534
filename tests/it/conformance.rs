//! Runs the MongoDB drivers' unified CRUD spec tests
//! (`../shared/conformance/crud-unified`, beside the crate; never copied into
//! it) through the official `mongodb` driver against the embedded engine
//! served over the wire protocol.
//!
//! A test is *eligible* when its `runOnRequirements` allow a standalone 7.0
//! server; eligible tests that need something the runner lacks (failPoint,
//! sessions, `client.bulkWrite`...) are *skipped* with a reason. Every other
//! eligible test must pass unless `tests/conformance_expected_failures.txt`
//! lists it, and every listed test must still fail: the list only shrinks.
//! `SCHEMALAB_BLESS=1 cargo test --test conformance` rewrites the list.

mod bulk;
mod expectations;
mod matcher;
mod operations;
mod runner;
mod spec;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use bson::Bson;

use runner::{Outcome, Runner};

/// The corpus beside the crate, or `SCHEMALAB_CONFORMANCE_DIR` (for checkouts
/// that do not sit beside `shared/`, such as git worktrees).
fn corpus_dir() -> PathBuf {
    std::env::var_os("SCHEMALAB_CONFORMANCE_DIR").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../shared/conformance/crud-unified"
            ))
        },
        PathBuf::from,
    )
}

fn expected_failures_path() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/conformance_expected_failures.txt"
    ))
}

/// A guard, not a wait: a server that accepts a command and never answers
/// would otherwise hang the suite (the driver has no socket timeout).
const TEST_BOUND: Duration = Duration::from_secs(30);

fn print_grouped(title: &str, reasons: &BTreeMap<String, usize>) {
    if reasons.is_empty() {
        return;
    }
    println!("{title}:");
    let mut by_count: Vec<_> = reasons.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (reason, n) in by_count {
        println!("  {n:4}  {reason}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unified_crud_spec() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        println!(
            "skipped: ../shared/conformance not found ({})",
            dir.display()
        );
        return;
    }
    let files = spec::load_dir(&dir).unwrap();
    assert!(!files.is_empty(), "no spec files in {}", dir.display());

    let server = schemalab_wire::serve(
        "127.0.0.1:0".parse().unwrap(),
        schemalab_engine::Engine::new(),
    )
    .await
    .unwrap();
    let mut runner = Runner::new(&server.uri()).await.unwrap();

    let mut ineligible: BTreeMap<String, usize> = BTreeMap::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut passed: Vec<String> = Vec::new();
    let mut failed: Vec<(String, String)> = Vec::new();
    let mut skipped_keys: Vec<String> = Vec::new();
    for file in &files {
        let file_ok = spec::eligible(file.doc.get("runOnRequirements"));
        for test in file
            .doc
            .get_array("tests")
            .into_iter()
            .flatten()
            .filter_map(Bson::as_document)
        {
            let key = format!(
                "{} :: {}",
                file.name,
                test.get_str("description").unwrap_or("?")
            );
            if let Err(why) = file_ok
                .clone()
                .and_then(|()| spec::eligible(test.get("runOnRequirements")))
            {
                *ineligible.entry(why).or_default() += 1;
                continue;
            }
            if let Some(why) = spec::unsupported(&file.doc, test) {
                *skipped.entry(why).or_default() += 1;
                skipped_keys.push(key);
                continue;
            }
            let outcome =
                match tokio::time::timeout(TEST_BOUND, runner.run_test(&file.doc, test)).await {
                    Ok(o) => o,
                    Err(_) => Outcome::Fail(format!("no answer within {TEST_BOUND:?}")),
                };
            match outcome {
                Outcome::Pass => passed.push(key),
                Outcome::Fail(m) => failed.push((key, m)),
                Outcome::Skip(why) => {
                    *skipped.entry(why).or_default() += 1;
                    skipped_keys.push(key);
                }
            }
        }
    }

    let eligible = passed.len() + failed.len() + skipped_keys.len();
    println!(
        "unified CRUD spec: {} files; {eligible} eligible tests: {} passed, {} failed, {} skipped; {} ineligible",
        files.len(),
        passed.len(),
        failed.len(),
        skipped_keys.len(),
        ineligible.values().sum::<usize>()
    );
    print_grouped("skipped (runner lacks the feature)", &skipped);
    print_grouped("assertions not checked", &runner.skipped_assertions);
    print_grouped("ineligible on a 7.0 standalone", &ineligible);
    for (key, msg) in &failed {
        println!("FAIL {key}\n     {}", expectations::reason(msg));
    }

    let path = expected_failures_path();
    if std::env::var_os("SCHEMALAB_BLESS").is_some_and(|v| v == "1") {
        expectations::write(&path, &failed).unwrap();
        println!(
            "blessed {} expected failures into {}",
            failed.len(),
            path.display()
        );
        return;
    }
    let expected = expectations::read(&path);
    let mut problems = Vec::new();
    for (key, msg) in &failed {
        if !expected.contains_key(key) {
            problems.push(format!(
                "new failure: {key}\n    {}",
                expectations::reason(msg)
            ));
        }
    }
    for key in &passed {
        if expected.contains_key(key) {
            problems.push(format!("now passes, remove from the list: {key}"));
        }
    }
    for key in expected.keys() {
        let known = failed.iter().any(|(k, _)| k == key) || passed.contains(key);
        if !known {
            let state = if skipped_keys.contains(key) {
                "skipped"
            } else {
                "not an eligible test"
            };
            problems.push(format!("listed but {state}: {key}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} disagreement(s) with {} (SCHEMALAB_BLESS=1 rewrites it):\n{}",
        problems.len(),
        path.display(),
        problems.join("\n")
    );
}
