//! Data-driven query semantics: every `tests/semantics/*.txt` fixture is a
//! script of queries against the embedded engine with the results a real
//! mongod 7.0 returns.
//!
//! # Fixture format
//!
//! Lines starting with `#` are comments; blank lines are ignored. Every other
//! line begins a *directive* `name: <value>`, whose value (MongoDB Extended
//! JSON v2, parsed in order by `serde_json` into `bson::Bson`) may continue on
//! the following lines until the next directive:
//!
//! ```text
//! insert: [<documents>]     replace the collection's contents with these
//! find: <filter>            start a query (options below apply to it)
//! sort: <sort>              optional query options, as the find command
//! projection: <projection>
//! collation: <collation>
//! skip: <n>
//! limit: <n>
//! expect: [<documents>]     run the query: results must equal these, in
//!                           order, field order and numeric types included
//! expect ids: [<ids>]       run the query: the `_id`s of the results, in order
//! expect error: <codeName>  run the query: it must fail with this codeName
//!                           (or numeric code)
//! ```
//!
//! Without `sort`, results come back in insertion order (a collection scan),
//! as they do from a freshly written mongod collection. Each `expect…` is one
//! case; a file's collection is named after the file.

use std::path::{Path, PathBuf};

use bson::{Bson, Document, RawDocumentBuf};
use schemalab_engine::{Engine, FindRequest};

const DB: &str = "semantics";

#[derive(Debug, Clone)]
enum Expect {
    Docs(Vec<Document>),
    Ids(Vec<Bson>),
    Error(String),
}

#[derive(Debug, Clone)]
enum Step {
    Insert(Vec<Document>),
    Query {
        line: usize,
        req: Box<FindRequest>,
        expect: Expect,
    },
}

fn fixture_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/semantics");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

const DIRECTIVES: &[&str] = &[
    "insert",
    "find",
    "sort",
    "projection",
    "collation",
    "skip",
    "limit",
    "expect",
    "expect ids",
    "expect error",
];

fn directive(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = line.split_once(':')?;
    DIRECTIVES
        .contains(&name)
        .then_some((name, rest.trim_start()))
}

fn json(text: &str, line: usize) -> Result<Bson, String> {
    serde_json::from_str::<Bson>(text).map_err(|e| format!("line {line}: bad JSON: {e}"))
}

fn doc(text: &str, line: usize) -> Result<Document, String> {
    match json(text, line)? {
        Bson::Document(d) => Ok(d),
        other => Err(format!("line {line}: expected a document, got {other}")),
    }
}

fn docs(text: &str, line: usize) -> Result<Vec<Document>, String> {
    match json(text, line)? {
        Bson::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Bson::Document(d) => Ok(d),
                other => Err(format!("line {line}: expected documents, got {other}")),
            })
            .collect(),
        other => Err(format!("line {line}: expected an array, got {other}")),
    }
}

/// Parse a fixture into steps.
fn parse(text: &str) -> Result<Vec<Step>, String> {
    // Group lines into (line number, directive, value text).
    let mut entries: Vec<(usize, String, String)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        match directive(raw) {
            Some((name, rest)) => entries.push((line, name.to_string(), rest.to_string())),
            None => match entries.last_mut() {
                Some((_, _, value)) => {
                    value.push('\n');
                    value.push_str(raw);
                }
                None => return Err(format!("line {line}: text before any directive")),
            },
        }
    }
    let mut steps = Vec::new();
    let mut current: Option<(usize, FindRequest)> = None;
    for (line, name, value) in entries {
        let value = value.trim();
        match name.as_str() {
            "insert" => steps.push(Step::Insert(docs(value, line)?)),
            "find" => {
                current = Some((
                    line,
                    FindRequest {
                        filter: doc(value, line)?,
                        ..FindRequest::default()
                    },
                ))
            }
            "expect" | "expect ids" | "expect error" => {
                let Some((qline, req)) = current.take() else {
                    return Err(format!("line {line}: {name} without a find"));
                };
                let expect = match name.as_str() {
                    "expect" => Expect::Docs(docs(value, line)?),
                    "expect ids" => match json(value, line)? {
                        Bson::Array(ids) => Expect::Ids(ids),
                        _ => return Err(format!("line {line}: expect ids needs an array")),
                    },
                    _ => Expect::Error(value.to_string()),
                };
                steps.push(Step::Query {
                    line: qline,
                    req: Box::new(req),
                    expect,
                });
            }
            option => {
                let Some((_, req)) = current.as_mut() else {
                    return Err(format!("line {line}: {option} without a find"));
                };
                match option {
                    "sort" => req.sort = Some(doc(value, line)?),
                    "projection" => req.projection = Some(doc(value, line)?),
                    "collation" => req.collation = Some(doc(value, line)?),
                    "skip" => req.skip = value.parse().map_err(|e| format!("line {line}: {e}"))?,
                    _ => req.limit = Some(value.parse().map_err(|e| format!("line {line}: {e}"))?),
                }
            }
        }
    }
    if current.is_some() {
        return Err("a find without an expect at the end of the file".into());
    }
    Ok(steps)
}

/// Order-sensitive, type-exact equality (bson's own `PartialEq` ignores
/// field order; NaN must equal NaN here).
fn same(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Document(x), Bson::Document(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((kx, vx), (ky, vy))| kx == ky && same(vx, vy))
        }
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(p, q))
        }
        (Bson::Double(x), Bson::Double(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

fn show(docs: &[Document]) -> String {
    let items: Vec<String> = docs
        .iter()
        .map(|d| Bson::Document(d.clone()).into_relaxed_extjson().to_string())
        .collect();
    format!("[{}]", items.join(", "))
}

fn run_file(path: &Path) -> Vec<String> {
    let name = path.file_stem().unwrap().to_string_lossy().to_string();
    let text = std::fs::read_to_string(path).unwrap();
    let steps = match parse(&text) {
        Ok(s) => s,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let engine = Engine::new();
    let mut failures = Vec::new();
    for step in steps {
        match step {
            Step::Insert(documents) => {
                engine.drop_collection(DB, &name).unwrap();
                let raws = documents
                    .iter()
                    .map(|d| RawDocumentBuf::from_document(d).unwrap())
                    .collect();
                let out = engine.insert(DB, &name, raws, true).unwrap();
                assert!(
                    out.errors.is_empty(),
                    "{name}: insert failed: {:?}",
                    out.errors
                );
            }
            Step::Query { line, req, expect } => {
                let got = engine.find(DB, &name, &req);
                let ok = match (&expect, &got) {
                    (Expect::Docs(want), Ok(have)) => {
                        want.len() == have.len()
                            && want.iter().zip(have.iter()).all(|(w, h)| {
                                same(&Bson::Document(w.clone()), &Bson::Document(h.clone()))
                            })
                    }
                    (Expect::Ids(want), Ok(have)) => {
                        let ids: Vec<Bson> = have
                            .iter()
                            .map(|d| d.get("_id").cloned().unwrap_or(Bson::Null))
                            .collect();
                        want.len() == ids.len() && want.iter().zip(&ids).all(|(w, h)| same(w, h))
                    }
                    (Expect::Error(want), Err(e)) => {
                        *want == e.code_name() || *want == e.code.code().to_string()
                    }
                    _ => false,
                };
                if !ok {
                    let have = match &got {
                        Ok(d) => show(d),
                        Err(e) => {
                            format!("error {} ({}): {}", e.code_name(), e.code.code(), e.message)
                        }
                    };
                    failures.push(format!(
                        "{name}.txt:{line}: filter {}\n    expected {expect:?}\n    got      {have}",
                        Bson::Document(req.filter.clone()).into_relaxed_extjson()
                    ));
                }
            }
        }
    }
    failures
}

#[test]
fn fixtures_parse_and_are_not_empty() {
    let files = fixture_files();
    assert!(!files.is_empty(), "no fixtures found");
    let mut cases = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let steps = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let n = steps
            .iter()
            .filter(|s| matches!(s, Step::Query { .. }))
            .count();
        assert!(n > 0, "{} has no cases", f.display());
        cases += n;
    }
    assert!(cases >= 120, "only {cases} cases");
}

#[test]
fn parser_rejects_malformed_fixtures() {
    assert!(parse("find: {\"a\": 1}\n").is_err());
    assert!(parse("expect: []\n").is_err());
    assert!(parse("insert: [{\"a\": \n").is_err());
    assert!(parse("stray text\n").is_err());
    assert!(parse("find: {}\nexpect ids: []\n").is_ok());
}

#[test]
fn fixtures_match_mongod() {
    let mut failures = Vec::new();
    for f in fixture_files() {
        failures.extend(run_file(&f));
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
