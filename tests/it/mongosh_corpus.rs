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

/// schemalab's error line as mongosh's: schemalab names the file and the
/// place (`f.js: TypeError: … (3:9)`, then the source line and a caret),
/// mongosh writes only `TypeError: …`. The file prefix, the place and the
/// excerpt are dropped; the class and the words must match.
fn schemalab_error(stderr: &str, path: &str) -> String {
    let Some(first) = stderr.lines().next() else {
        return String::new();
    };
    let line = first.strip_prefix(&format!("{path}: ")).unwrap_or(first);
    let line = match line.rfind(" (") {
        Some(i)
            if line.ends_with(')')
                && line[i + 2..line.len() - 1]
                    .split(':')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) =>
        {
            &line[..i]
        }
        _ => line,
    };
    format!("{line}\n")
}

/// Syntax errors are compared by class only: mongosh's words come from its
/// Babel parser, schemalab's from QuickJS (both name the place).
fn syntax_class_only(fixture: &str) -> String {
    fixture
        .lines()
        .map(|l| {
            if l.starts_with("SyntaxError") {
                "SyntaxError"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
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
    let actual = syntax_class_only(&fixture(code, &stdout, &schemalab_error(&stderr, &path)));
    let expected = syntax_class_only(&expected);
    (actual != expected).then(|| format!("{rel}:\n{}", excerpt(&expected, &actual)))
}

/// Scripts whose output differs from mongosh's, each with the reason
/// (docs/SHELL.md and COMPAT.md list them too). The test fails if a listed
/// script starts to match, so the list cannot go stale.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "admin/146-capped-collection.js",
        "the embedded engine has no capped collections",
    ),
    (
        "bson/153-number-int.js",
        "a local NumberInt prints as a number, not Int32(…)",
    ),
    (
        "bson/162-nested-bson-doc.js",
        "a local NumberInt prints as a number, not Int32(…)",
    ),
    (
        "bson/163-bson-in-print.js",
        "a local NumberInt prints as a number, not Int32(…)",
    ),
    (
        "cursors/103-cursor-close-is-exhausted.js",
        "isClosed() is true after close()",
    ),
    (
        "errors/196-range-error.js",
        "QuickJS's words for built-in RangeErrors and TypeErrors",
    ),
    (
        "errors/197-caught-errors-fields.js",
        "QuickJS's words for a TypeError caught in the script",
    ),
    (
        "errors/205-bad-operator-uncaught.js",
        "the codeName is shown, as mongosh's REPL shows it",
    ),
    ("errors/212-quit-exit-code.js", "quit() is not offered"),
    (
        "output/177-big-arrays.js",
        "long number arrays are padded to a wider column",
    ),
    (
        "output/179-functions-and-classes-print.js",
        "functions, classes and Maps print as BSON would store them",
    ),
    (
        "output/182-ejson-parse.js",
        "EJSON.parse keeps $numberLong as Long (relaxed parsing not offered)",
    ),
    (
        "output/183-ejson-serialize.js",
        "EJSON.serialize's wrappers are read back as BSON values",
    ),
];

#[test]
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
    let known = |f: &String| {
        KNOWN_DIFFERENCES
            .iter()
            .any(|(k, _)| f.starts_with(&format!("{k}:")))
    };
    let now_pass: Vec<&str> = KNOWN_DIFFERENCES
        .iter()
        .filter(|(k, _)| {
            all.iter().any(|(_, rel)| rel == k)
                && !failures.iter().any(|f| f.starts_with(&format!("{k}:")))
        })
        .map(|(k, _)| *k)
        .collect();
    assert!(
        now_pass.is_empty(),
        "listed as different but now match mongosh: {now_pass:?}"
    );
    failures.retain(|f| !known(f));
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
