//! The mongosh compatibility corpus (issue 30): every script under
//! `tests/mongosh/` is run by `schemalab shell --uri … --file` against a
//! fresh embedded server, and what it prints, its error and its exit code
//! must be exactly what real mongosh printed for it (the `.out` file
//! beside it, recorded by `tests/mongosh/record.sh`; the format and the
//! normalisation are described in `tests/mongosh/README.md`).
//!
//! Every mismatching script is reported in one failure, each with the
//! first lines where it differs. `MONGOSH_CORPUS=crud/` (a substring of
//! the script's path under `tests/mongosh/`) runs only some of them.

use crate::support::cli::schemalab;
use schemalab_engine::Engine;
use schemalab_wire::spawn_background;
use std::path::{Path, PathBuf};

/// The corpus folder.
fn corpus_dir() -> PathBuf {
    crate::support::root().join("tests").join("mongosh")
}

/// Every `.js` file under `dir`, sorted by path.
fn scripts(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "js") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The normalisation `record.sh` applies to mongosh's stderr: Node.js
/// process warnings (`(node:PID) …` and the `(Use \`node
/// --trace-warnings …\`` hint) are dropped, and of a SyntaxError only its
/// first line is kept (mongosh appends a code frame of the script).
fn normalise_stderr(stderr: &str) -> String {
    let mut out = String::new();
    for line in stderr.lines() {
        if line.starts_with("(node:") || line.starts_with("(Use `node --trace-warnings") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if line.starts_with("SyntaxError: ") {
            break;
        }
    }
    out
}

/// A run in the fixture format: stdout as printed, then `--- stderr` and
/// the normalised stderr when there is any, then `--- exit N`.
fn fixture(code: i32, stdout: &str, stderr: &str) -> String {
    let mut out = stdout.to_string();
    let stderr = normalise_stderr(stderr);
    if !stderr.is_empty() {
        out.push_str("--- stderr\n");
        out.push_str(&stderr);
    }
    out.push_str(&format!("--- exit {code}\n"));
    out
}

/// The first lines where `expected` and `actual` differ, diff-style.
fn excerpt(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let first = e
        .iter()
        .zip(a.iter())
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let mut out = format!("  first difference at line {}\n", first + 1);
    for line in e.iter().skip(first).take(6) {
        out.push_str(&format!("  -{line}\n"));
    }
    if e.len() > first + 6 {
        out.push_str(&format!(
            "  -… ({} more expected lines)\n",
            e.len() - first - 6
        ));
    }
    for line in a.iter().skip(first).take(6) {
        out.push_str(&format!("  +{line}\n"));
    }
    if a.len() > first + 6 {
        out.push_str(&format!(
            "  +… ({} more actual lines)\n",
            a.len() - first - 6
        ));
    }
    out
}

/// Run one script on a fresh server; `None` when it matches its `.out`.
fn check(script: &Path, rel: &str) -> Option<String> {
    let expected_path = script.with_extension("out");
    let Ok(expected) = std::fs::read_to_string(&expected_path) else {
        return Some(format!(
            "{rel}: no {} (run tests/mongosh/record.sh)\n",
            expected_path.display()
        ));
    };
    let server = spawn_background(Engine::new()).unwrap();
    let uri = server.uri();
    let path = script.display().to_string();
    let (code, stdout, stderr) =
        schemalab(&["shell", "--uri", &uri, "--db", "test", "--file", &path]);
    server.shutdown();
    let actual = fixture(code, &stdout, &stderr);
    (actual != expected).then(|| format!("{rel}:\n{}", excerpt(&expected, &actual)))
}

#[test]
#[ignore = "turned on when the JavaScript engine lands (issue 30)"]
fn mongosh_corpus_matches_recorded_mongosh_output() {
    let dir = corpus_dir();
    let filter = std::env::var("MONGOSH_CORPUS").unwrap_or_default();
    let all: Vec<(PathBuf, String)> = scripts(&dir)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&dir).unwrap().display().to_string();
            (p, rel)
        })
        .filter(|(_, rel)| rel.contains(&filter))
        .collect();
    assert!(
        !all.is_empty(),
        "no script under {} matches {filter:?}",
        dir.display()
    );
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let chunk = all.len().div_ceil(threads);
    let mut failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = all
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .filter_map(|(p, rel)| check(p, rel))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} mongosh corpus scripts differ from their recorded output:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn mongosh_corpus_fixtures_are_complete() {
    // Not ignored: every script has its recorded output, each ends with
    // its exit line, and every script writes only its own database.
    let dir = corpus_dir();
    let all = scripts(&dir);
    assert!(all.len() >= 150, "only {} scripts", all.len());
    for script in &all {
        let out = std::fs::read_to_string(script.with_extension("out"))
            .unwrap_or_else(|_| panic!("{} has no .out", script.display()));
        let last = out.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("--- exit "),
            "{}: last line {last:?}",
            script.display()
        );
        let src = std::fs::read_to_string(script).unwrap();
        for db in src.split("getSiblingDB('").skip(1) {
            assert!(
                db.starts_with("schemalab_") || db.starts_with("admin')"),
                "{} uses a database outside schemalab_: {db:.40}",
                script.display()
            );
        }
    }
}
