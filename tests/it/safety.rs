//! Hostile input never aborts the process: long chains and deep nesting in
//! the shell dialect, deep claim `check`s, out-of-range numbers in
//! `datasets/catalog.toml`. Each entry point gets an error naming the
//! place, never a stack overflow or a panic (a test that overflowed would
//! abort this whole test binary).

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use schemalab::course::Check;
use schemalab::datasets::Catalog;
use schemalab::dialect::{DialectError, Output, Session};
use schemalab_engine::Engine;
use schemalab_wire::{BackgroundServer, spawn_background};

async fn session(db: &str) -> (BackgroundServer, Session) {
    let server = spawn_background(Engine::new()).unwrap();
    let s = Session::connect(&crate::support::client(&server.uri()).await, db).unwrap();
    (server, s)
}

fn texts(out: &[Output]) -> Vec<String> {
    out.iter().map(Output::render).collect()
}

/// `1+1+…` with `n` terms.
fn sum_chain(n: usize) -> String {
    vec!["1"; n].join("+")
}

/// Long chains are ordinary JavaScript now: they run, on the engine's own
/// thread, and print.
#[tokio::test]
async fn long_chains_run() {
    let (_server, mut s) = session("safety_chains").await;
    let out = s.eval(&sum_chain(2000)).await.unwrap();
    assert_eq!(texts(&out), ["2000"]);
    s.eval("db.c.insertMany([{ _id: 1 }, { _id: 2 }])")
        .await
        .unwrap();
    let src = format!("db.c.find().sort({{ _id: 1 }}){}", ".limit(1)".repeat(1000));
    let out = s.eval(&src).await.unwrap();
    assert_eq!(texts(&out), ["[ { _id: 1 } ]"]);
}

/// Nesting deeper than the parser's stack, and runaway recursion, are
/// errors that name themselves; the session goes on working.
#[tokio::test]
async fn deep_nesting_and_recursion_are_errors_and_the_session_survives() {
    let (_server, mut s) = session("safety_deep").await;
    let src = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let e = s.eval(&src).await.unwrap_err();
    assert!(!matches!(e, DialectError::Driver { .. }), "{e:?}");
    let e = s
        .eval("function f(n) { return f(n + 1) + 1 }\nf(0)")
        .await
        .unwrap_err();
    assert!(e.to_string().starts_with("RangeError: "), "{e}");
    assert_eq!(e.position().map(|p| p.line), Some(1), "{e}");
    let out = s.eval("1 + 2").await.unwrap();
    assert_eq!(texts(&out), ["3"]);
}

/// A runaway loop is stopped by the statement's JavaScript budget, with an
/// error that says so; the session goes on working.
#[tokio::test]
async fn a_runaway_loop_is_stopped_by_the_budget() {
    let (_server, s) = session("safety_budget").await;
    let mut s = s.with_budget(std::time::Duration::from_millis(300));
    let e = s.eval("let n = 0\nwhile (true) { n++ }").await.unwrap_err();
    assert!(
        matches!(e, DialectError::Interrupted { budget_ms: 300, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("0.3 s budget"), "{e}");
    // Recursion through a callback is stopped the same way or by the stack.
    let e = s
        .eval("function spin() { for (let i = 0; i < 1e5; i++) {} }\nfor (;;) spin()")
        .await
        .unwrap_err();
    assert!(matches!(e, DialectError::Interrupted { .. }), "{e:?}");
    let out = s.eval("1 + 1").await.unwrap();
    assert_eq!(texts(&out), ["2"]);
}

/// Ctrl-C (the interrupter, from another thread) stops the statement that
/// runs, not the session.
#[tokio::test]
async fn the_interrupter_stops_a_running_statement() {
    let (_server, s) = session("safety_interrupt").await;
    let mut s = s.with_budget(std::time::Duration::from_secs(3600));
    let interrupter = s.interrupter().unwrap();
    let stopper = std::thread::spawn(move || {
        while !interrupter.is_running() {
            std::thread::yield_now();
        }
        interrupter.interrupt();
    });
    let e = s.eval("while (true) {}").await.unwrap_err();
    stopper.join().unwrap();
    assert!(matches!(e, DialectError::Interrupted { .. }), "{e:?}");
    let out = s.eval("'still here'").await.unwrap();
    assert_eq!(texts(&out), ["still here"]);
}

/// Scripts reach nothing but the database: no modules, no process, no
/// files, and the host function is gone from the global object.
#[tokio::test]
async fn scripts_have_no_file_process_or_network_access() {
    let (_server, mut s) = session("safety_sandbox").await;
    let out = s
        .eval("[typeof require, typeof process, typeof std, typeof os, typeof load, typeof __host, typeof fetch].join(' ')")
        .await
        .unwrap();
    assert_eq!(
        texts(&out),
        ["undefined undefined undefined undefined undefined undefined undefined"]
    );
}

/// A value nested deeper than a document may be is refused when it is
/// sent, with the place of the statement that sends it.
#[tokio::test]
async fn values_built_deep_at_run_time_are_refused() {
    let (_server, mut s) = session("safety_values").await;
    let src = "let x = {}\nfor (let i = 0; i < 400; i++) {\n  x = { a: x }\n}\ndb.c.insertOne(x)";
    let e = s.eval(src).await.unwrap_err();
    assert!(e.to_string().starts_with("RangeError: "), "{e}");
    assert_eq!(e.position().map(|p| p.line), Some(5), "{e}");
}

#[test]
fn deep_and_long_claim_checks_are_errors() {
    let deep = format!("{}1{} == 1", "(".repeat(20_000), ")".repeat(20_000));
    let e = Check::parse(&deep).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
    let long = format!("{} == 1", sum_chain(20_000));
    let e = Check::parse(&long).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
    // Ordinary checks are unaffected.
    assert!(Check::parse("(1 + 2) * 3 == 9").is_ok());
}

const CATALOG: &str = include_str!("../../datasets/catalog.toml");

#[test]
fn catalog_numbers_are_range_checked() {
    let bad = CATALOG.replacen("users = 60", "users = 9223372036854775807", 1);
    assert_ne!(bad, CATALOG, "the fixture line is in the catalog");
    let e = Catalog::parse(&bad, "datasets/catalog.toml").unwrap_err();
    let line = bad
        .lines()
        .position(|l| l.starts_with("users = 9223372036854775807"))
        .unwrap()
        + 1;
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("datasets/catalog.toml:{line}:9: ")),
        "{msg}"
    );
    assert!(msg.contains("at most"), "{msg}");
}

fn lint_lines(root: &Path) -> Vec<String> {
    schemalab::course::lint(root)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn lint_reports_an_out_of_range_catalog_number() {
    let dir = course_copy();
    let path = dir.path().join("datasets/catalog.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let bad = text.replacen("users = 60", "users = 9223372036854775807", 1);
    std::fs::write(&path, &bad).unwrap();
    let line = bad
        .lines()
        .position(|l| l.starts_with("users = 9223372036854775807"))
        .unwrap()
        + 1;
    let errors = lint_lines(dir.path());
    let want = format!("{}:{line}:9: ", path.display());
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with(&want) && e.contains("at most")),
        "{errors:#?}"
    );
}

/// Deep or long generated input for the dialect, and whether it is past
/// every limit (more than 400 links or levels of any shape).
fn hostile_source() -> impl Strategy<Value = (String, bool)> {
    let n = 1usize..4000;
    let shaped = |f: fn(usize) -> String| n.clone().prop_map(move |n| (f(n), n > 400));
    prop_oneof![
        shaped(sum_chain),
        shaped(|n| format!("db{}", ".a".repeat(n))),
        shaped(|n| format!("[0]{}", "[0]".repeat(n))),
        shaped(|n| format!("db.c.find(){}", ".limit(1)".repeat(n))),
        shaped(|n| format!("{}1{}", "[".repeat(n), "]".repeat(n))),
        shaped(|n| format!("{}1{}", "({ a: ".repeat(n), " })".repeat(n))),
        shaped(|n| format!("{}1", "-".repeat(n))),
        shaped(|n| "(".repeat(n)),
        shaped(|n| format!("{}print(1)", "for (const x of [1]) ".repeat(n))),
        (n.clone(), n).prop_map(|(a, b)| (
            format!("({})+{}", sum_chain(a), sum_chain(b)),
            a.max(b) > 400
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Parse and evaluate on a server: an error or a value, never an abort.
    #[test]
    fn dialect_survives_deep_and_long_input((src, _deep) in hostile_source()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let server = spawn_background(Engine::new()).unwrap();
        rt.block_on(async {
            let mut s = Session::connect(&crate::support::client(&server.uri()).await, "safety_prop").unwrap();
            let (_, res) = s.eval_partial(&src).await;
            // Whatever it is, it is an answer or a named error, never a
            // failure of the machinery.
            if let Err(e) = res {
                prop_assert!(!matches!(e, DialectError::Driver { .. }), "{}", e);
            }
            Ok(())
        })?;
    }

    /// The claim parser on deep and long input: an error, never an abort.
    #[test]
    fn claim_parser_survives_deep_and_long_input(n in 1usize..30_000, shape in 0..3u8) {
        let src = match shape {
            0 => format!("{}1{} == 1", "(".repeat(n), ")".repeat(n)),
            1 => format!("{} == 1", sum_chain(n)),
            _ => "(".repeat(n),
        };
        if let Ok(c) = Check::parse(&src) {
            prop_assert!(n < 200, "a {n}-level check parsed");
            drop(c);
        }
    }

    /// The catalog parser with any integer or float in any parameter.
    #[test]
    fn catalog_parser_survives_any_number(
        value in prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            (0i64..100_000).prop_map(|n| n.to_string()),
            (0.0f64..10.0).prop_map(|x| format!("{x:?}")),
            Just(schemalab::datasets::MAX_COUNT.to_string()),
            Just((schemalab::datasets::MAX_COUNT + 1).to_string()),
            Just("-1".to_string()),
            any::<f64>().prop_map(|x| format!("{x:?}")),
            Just("inf".to_string()),
            Just("nan".to_string()),
        ],
        which in 0usize..400,
    ) {
        let lines: Vec<&str> = CATALOG.lines().collect();
        let params: Vec<usize> = (0..lines.len())
            .filter(|&i| {
                let l = lines[i];
                l.contains(" = ") && !l.starts_with("summary") && !l.starts_with("collections")
                    && !l.starts_with('#')
            })
            .collect();
        let i = params[which % params.len()];
        let key = lines[i].split(" = ").next().unwrap();
        let mut edited: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
        edited[i] = format!("{key} = {value}");
        let text = edited.join("\n");
        let parsed = Catalog::parse(&text, "catalog.toml");
        if let Ok(n) = value.parse::<i64>()
            && !(0..=schemalab::datasets::MAX_COUNT).contains(&n)
        {
            prop_assert!(parsed.is_err(), "{} = {} was accepted", key, value);
        }
        let small = value.parse::<f64>().is_ok_and(|x| (0.0..=100_000.0).contains(&x));
        if let (Ok(catalog), true) = (parsed, small) {
            // Whatever parses can start generating without a panic.
            for spec in catalog.datasets() {
                let name = spec.name.clone();
                if let Ok(stream) = catalog.generate(&name, schemalab::datasets::Scale::Tiny, 1) {
                    let _ = stream.take(20).count();
                }
            }
        }
    }
}

/// A private tmux server: the pseudo-terminal the TUI runs in.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap()
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    fn wait_for(&self, limit: std::time::Duration, want: impl Fn(&str) -> bool) -> Option<String> {
        let start = std::time::Instant::now();
        loop {
            let screen = self.screen();
            if want(&screen) {
                return Some(screen);
            }
            if start.elapsed() > limit {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// Every catchable terminating signal gives the terminal back: canonical
/// mode on, the alternate screen left (SIGQUIT and SIGUSR1 used to leave
/// it raw).
#[test]
fn tui_restores_the_terminal_on_signals() {
    use std::time::Duration;
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: tmux is not installed, so there is no pseudo-terminal to drive");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = env!("CARGO_BIN_EXE_schemalab");
    for signal in ["QUIT", "USR1", "USR2", "TERM", "INT", "HUP", "ALRM"] {
        let data = tempfile::tempdir().unwrap();
        let tmux = Tmux {
            socket: format!("schemalab-safety-{}-{signal}", std::process::id()),
        };
        let script = format!(
            "cd '{}' && XDG_DATA_HOME='{d}' HOME='{d}' '{bin}'; echo; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-*icanon'; echo RESTORED; sleep 30",
            root.display(),
            d = data.path().display(),
        );
        let started = tmux.cmd(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "100",
            "-y",
            "30",
            &script,
        ]);
        assert!(started.status.success());
        tmux.wait_for(Duration::from_secs(60), |s| s.contains("jump to lesson"))
            .unwrap_or_else(|| panic!("SIG{signal}: the TUI did not open:\n{}", tmux.screen()));
        let shell_pid = String::from_utf8_lossy(
            &tmux
                .cmd(&["display", "-p", "-t", "t", "#{pane_pid}"])
                .stdout,
        )
        .trim()
        .to_string();
        let child = std::process::Command::new("pgrep")
            .args(["-P", &shell_pid])
            .output()
            .unwrap();
        let pid = String::from_utf8_lossy(&child.stdout).trim().to_string();
        assert!(
            !pid.is_empty(),
            "SIG{signal}: no TUI process under {shell_pid}"
        );
        let killed = std::process::Command::new("kill")
            .args([format!("-{signal}"), pid.clone()])
            .status()
            .unwrap();
        assert!(killed.success());
        let screen = tmux
            .wait_for(Duration::from_secs(20), |s| s.contains("RESTORED"))
            .unwrap_or_else(|| panic!("SIG{signal}: the TUI did not leave:\n{}", tmux.screen()));
        assert!(
            screen.lines().any(|l| l.trim() == "icanon"),
            "SIG{signal}: the terminal stayed raw:\n{screen}"
        );
        let alternate = tmux.cmd(&["display", "-p", "-t", "t", "#{alternate_on}"]);
        assert_eq!(
            String::from_utf8_lossy(&alternate.stdout).trim(),
            "0",
            "SIG{signal}: still on the alternate screen"
        );
    }
}

// ----- the `schemalab_` guard (issue 11, part 4) -----

use crate::support::cli::schemalab;
use crate::support::{copy_dir, course_copy};
use bson::{RawDocumentBuf, doc};
use futures_util::TryStreamExt;
use schemalab::dialect::WritePolicy;

/// Everything observable about one database, as raw bytes: collection
/// names and options, every document's BSON in `_id` order, every index.
async fn snapshot(client: &mongodb::Client, db: &str) -> Vec<(String, Vec<Vec<u8>>)> {
    let d = client.database(db);
    let mut out = Vec::new();
    let specs: Vec<RawDocumentBuf> = d
        .run_cursor_command(doc! { "listCollections": 1 })
        .await
        .unwrap()
        .with_type::<RawDocumentBuf>()
        .try_collect()
        .await
        .unwrap();
    let mut names: Vec<(String, Vec<u8>)> = specs
        .iter()
        .map(|s| {
            let name = s.get_str("name").unwrap().to_string();
            (name, s.as_bytes().to_vec())
        })
        .collect();
    names.sort();
    for (name, spec) in names {
        let mut parts = vec![spec];
        let docs: Vec<RawDocumentBuf> = d
            .collection::<RawDocumentBuf>(&name)
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        parts.extend(docs.iter().map(|r| r.as_bytes().to_vec()));
        let mut idx: Vec<Vec<u8>> = d
            .run_cursor_command(doc! { "listIndexes": &name })
            .await
            .unwrap()
            .with_type::<RawDocumentBuf>()
            .try_collect::<Vec<_>>()
            .await
            .unwrap()
            .iter()
            .map(|r| r.as_bytes().to_vec())
            .collect();
        idx.sort();
        parts.extend(idx);
        out.push((name, parts));
    }
    out
}

/// A foreign database with data, an index and a second collection.
async fn plant_victim(client: &mongodb::Client) {
    let v = client.database("victim");
    v.collection::<bson::Document>("data")
        .insert_many(vec![
            doc! { "_id": 1, "secret": "keep me", "n": 2.5 },
            doc! { "_id": 2, "secret": "and me", "tags": ["a", "b"] },
        ])
        .await
        .unwrap();
    v.collection::<bson::Document>("data")
        .create_index(
            mongodb::IndexModel::builder()
                .keys(doc! { "secret": 1 })
                .build(),
        )
        .await
        .unwrap();
    v.collection::<bson::Document>("x")
        .insert_one(doc! { "_id": "x" })
        .await
        .unwrap();
}

/// Every way the issue (and this file) found to write into `victim` from
/// content that may only write `schemalab_…` databases.
const BYPASSES: &[&str] = &[
    // A $merge target held in a variable.
    "const t = { db: 'victim', coll: 'x' }\ndb.src.aggregate([{ $merge: { into: t } }])",
    // A duplicate key: the first `db` passes a text check, the last one wins.
    "db.src.aggregate([{ $out: { db: 'schemalab_x', db: 'victim', coll: 'data' } }])",
    "const o = { db: 'victim', coll: 'data' }\ndb.src.aggregate([{ $out: o }])",
    "db.src.aggregate([{ $merge: { into: { db: 'victim', coll: 'data' }, whenMatched: 'replace' } }])",
    "const n = 'vic' + 'tim'\ndb.src.aggregate([{ $out: { db: n, coll: 'data' } }])",
    "db.src.explain('executionStats').aggregate([{ $out: { db: 'victim', coll: 'data' } }])",
    "const t = { db: 'victim', coll: 'data' }\ndb.runCommand({ aggregate: 'src', pipeline: [{ $out: t }], cursor: {} })",
    "db.src.aggregate([{ $facet: { f: [{ $merge: { into: { db: 'victim', coll: 'x' } } }] } }])",
    "db.getSiblingDB('victim').data.insertOne({ _id: 3 })",
    "const n = 'vic' + 'tim'\ndb.getSiblingDB(n).data.deleteMany({})",
    "db.getSiblingDB('victim').data.updateMany({}, { $set: { secret: 'gone' } })",
    "db.getSiblingDB('victim').data.replaceOne({ _id: 1 }, { x: 1 })",
    "db.getSiblingDB('victim').data.findOneAndDelete({ _id: 1 })",
    "db.getSiblingDB('victim').data.bulkWrite([{ deleteOne: { filter: { _id: 1 } } }])",
    "db.getSiblingDB('victim').data.drop()",
    "db.getSiblingDB('victim').dropDatabase()",
    "db.getSiblingDB('victim').createCollection('planted')",
    "db.getSiblingDB('victim').data.createIndex({ n: 1 })",
    "db.getSiblingDB('victim').data.dropIndexes()",
    "db.getSiblingDB('victim').runCommand({ collMod: 'data', validator: { a: 1 } })",
    "use victim\ndb.data.deleteMany({})",
    "use victim\ndb.runCommand({ delete: 'data', deletes: [{ q: {}, limit: 0 }] })",
    "db.adminCommand({ renameCollection: 'HERE.src', to: 'victim.data', dropTarget: true })",
    "db.adminCommand({ renameCollection: 'victim.data', to: 'HERE.stolen' })",
    "db.getSiblingDB('admin').runCommand({ renameCollection: 'victim.x', to: 'victim.y' })",
];

/// Runs every bypass in a session with `policy`, starting in `here`;
/// returns the errors (one per bypass that failed).
async fn try_bypasses(uri: &str, here: &str, policy: WritePolicy) -> Vec<Option<DialectError>> {
    let mut errors = Vec::new();
    for src in BYPASSES {
        let src = src.replace("HERE", here);
        let mut s = Session::connect(&crate::support::client(uri).await, here)
            .unwrap()
            .with_policy(policy.clone());
        s.eval("db.src.deleteMany({}); db.src.insertMany([{ _id: 1, secret: 'overwritten' }])")
            .await
            .unwrap();
        let (_, res) = s.eval_partial(&src).await;
        errors.push(res.err());
    }
    errors
}

#[tokio::test]
async fn every_bypass_is_refused_and_the_foreign_database_is_byte_identical() {
    let server = spawn_background(Engine::new()).unwrap();
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    plant_victim(&client).await;
    let before = snapshot(&client, "victim").await;
    assert_eq!(before.len(), 2);

    for policy in [
        WritePolicy::Only("schemalab_l_v".into()),
        WritePolicy::Prefix("schemalab_".into()),
    ] {
        let errors = try_bypasses(&server.uri(), "schemalab_l_v", policy.clone()).await;
        for (src, e) in BYPASSES.iter().zip(&errors) {
            let e = e
                .as_ref()
                .unwrap_or_else(|| panic!("{policy:?}: not refused:\n{src}"));
            let refused = matches!(e, DialectError::Refused { .. })
                || (matches!(e, DialectError::Syntax { .. })
                    && e.to_string().contains("duplicate key"));
            assert!(refused, "{policy:?}: {src}\n→ {e}");
            assert!(e.position().is_some(), "{src}: {e}");
        }
        assert_eq!(snapshot(&client, "victim").await, before, "{policy:?}");
    }

    // The same statements do reach the foreign database when nothing
    // guards it: the snapshot sees writes, so its equality above means
    // something.
    let errors = try_bypasses(&server.uri(), "schemalab_l_v", WritePolicy::Unrestricted).await;
    assert!(
        errors.iter().filter(|e| e.is_none()).count() > 10,
        "{errors:?}"
    );
    assert_ne!(snapshot(&client, "victim").await, before);
}

/// Reads are not writes: the shell's prefix policy reads anywhere, and
/// lesson content may still ask the server who it is.
#[tokio::test]
async fn the_gate_lets_reads_through() {
    let server = spawn_background(Engine::new()).unwrap();
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    plant_victim(&client).await;
    let mut s = Session::connect(&crate::support::client(&server.uri()).await, "victim")
        .unwrap()
        .with_policy(WritePolicy::Prefix("schemalab_".into()));
    let mut out = Vec::new();
    for line in [
        "db.data.countDocuments({})",
        "db.data.find({ _id: 1 }, { _id: 1 })",
        "show collections",
    ] {
        out.extend(texts(&s.eval(line).await.unwrap()));
    }
    assert_eq!(out, ["2", "[ { _id: 1 } ]", "data\nx"]);
    let mut lesson = Session::connect(
        &crate::support::client(&server.uri()).await,
        "schemalab_l_v",
    )
    .unwrap()
    .with_policy(WritePolicy::Only("schemalab_l_v".into()));
    lesson
        .eval("db.c.insertOne({ _id: 1 })\nshow dbs")
        .await
        .unwrap();
    let e = lesson
        .eval("db.getSiblingDB('victim').data.findOne()")
        .await
        .unwrap_err();
    assert!(matches!(e, DialectError::Refused { .. }), "{e}");
}

/// Lint names literal foreign targets (and the duplicate-key spelling).
#[test]
fn lint_flags_literal_foreign_targets() {
    for (stmt, want) in [
        (
            "db.src.aggregate([{ $merge: { into: { db: 'victim', coll: 'x' } } }])",
            "$merge leaves",
        ),
        (
            "db.src.aggregate([{ $out: { db: 'victim', coll: 'x' } }])",
            "$out leaves",
        ),
        (
            "db.src.aggregate([{ $out: { db: 'schemalab_x', db: 'victim', coll: 'data' } }])",
            "$out leaves",
        ),
    ] {
        let dir = course_copy();
        let setup = dir
            .path()
            .join("lessons/01-thinking-in-documents/document.setup.js");
        let mut text = std::fs::read_to_string(&setup).unwrap();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let line = text.lines().count() + 1;
        text.push_str(stmt);
        text.push('\n');
        std::fs::write(&setup, text).unwrap();
        let errors = lint_lines(dir.path());
        let at = format!("{}:{line}:", setup.display());
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&at) && e.contains(want)),
            "{stmt}: want {at} … {want} in {errors:#?}"
        );
    }
}

/// Lessons run through the runner's gate: every lesson of the course at
/// the tiny scale, then a lesson whose setup holds each bypass, against a
/// server holding a foreign database that stays byte-identical.
#[test]
fn lessons_and_bypassing_setups_leave_a_foreign_database_untouched() {
    use schemalab::course::{self, CancelFlag, CatalogLoader, RunOptions, Scale};
    use schemalab::locale::Lang;
    let (server, rt, client) = crate::support::served();
    rt.block_on(plant_victim(&client));
    let before = rt.block_on(snapshot(&client, "victim"));

    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let loader = CatalogLoader::for_course(&root).unwrap();
    let lesson_client = rt.block_on(crate::support::client(&server.uri()));
    let opts = || RunOptions {
        names: Default::default(),
        scale: Scale::Tiny,
        loader: &loader,
        cancel: CancelFlag::new(),
        progress: None,
    };
    for lesson in course::list_lessons(&root, schemalab::locale::Lang::En).unwrap() {
        rt.block_on(course::run_by_id(
            &root,
            &lesson.id,
            &lesson_client,
            &opts(),
            Lang::En,
        ))
        .unwrap_or_else(|e| panic!("{}: {e}", lesson.id));
    }
    assert_eq!(rt.block_on(snapshot(&client, "victim")), before);

    let dir = course_copy();
    let setup = dir
        .path()
        .join("lessons/01-thinking-in-documents/document.setup.js");
    let here = "schemalab_thinking-in-documents_document";
    for src in BYPASSES {
        std::fs::write(&setup, src.replace("HERE", here)).unwrap();
        let report = rt
            .block_on(course::run_by_id(
                dir.path(),
                "thinking-in-documents",
                &lesson_client,
                &opts(),
                Lang::En,
            ))
            .unwrap();
        let variant = report.experiments[0]
            .variants
            .iter()
            .find(|v| v.id == "document")
            .unwrap();
        let err = variant
            .setup_error
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| panic!("not refused:\n{src}"));
        assert!(
            err.contains("refusing to")
                || err.contains("leaves this variant's database")
                || err.contains("duplicate key"),
            "{src}\n→ {err}"
        );
        assert_eq!(rt.block_on(snapshot(&client, "victim")), before, "{src}");
    }
}

// ----- failures that name their place (issue 11, part 5) -----

#[test]
fn shell_file_failures_print_one_line_with_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.js");
    let bad_utf8 = dir.path().join("latin1.js");
    std::fs::write(&bad_utf8, b"print(1)\nprint('caf\xe9')\n").unwrap();
    let d = dir.path().display().to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--file".into(), missing.display().to_string()],
            format!(
                "Error: {}: cannot read the script: no such file",
                missing.display()
            ),
        ),
        (
            vec!["--file".into(), d.clone()],
            format!("Error: {d}: is a directory, not a script file"),
        ),
        (
            vec!["--file".into(), bad_utf8.display().to_string()],
            format!(
                "Error: {}:2:11: the script is not valid UTF-8 (byte 0xE9)",
                bad_utf8.display()
            ),
        ),
        (
            vec![
                "--uri".into(),
                "notauri".into(),
                "--file".into(),
                missing.display().to_string(),
            ],
            "Error: --uri 'notauri': not a MongoDB connection string: ".into(),
        ),
    ];
    for (args, want) in cases {
        let mut full = vec!["shell"];
        full.extend(args.iter().map(String::as_str));
        let (code, stdout, stderr) = schemalab(&full);
        assert_ne!(code, 0, "{args:?}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&want),
            "{args:?}:\n{stderr}\nwant {want}"
        );
    }
}

#[test]
fn shell_file_accepts_a_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom.js");
    std::fs::write(&path, b"\xEF\xBB\xBFprint('with a BOM')\n").unwrap();
    let (code, stdout, stderr) = schemalab(&["shell", "--file", &path.display().to_string()]);
    assert_eq!((code, stdout.as_str()), (0, "with a BOM\n"), "{stderr}");
}

#[test]
fn runtime_errors_carry_the_statement_place() {
    let dir = tempfile::tempdir().unwrap();
    for (src, want) in [
        (
            "print(1)\nconst a = 1\n  prnt(a)\n",
            "ReferenceError: prnt is not defined (did you mean print?) (3:3)",
        ),
        (
            "\ndb.c.find().sortt({ a: 1 })\n",
            "TypeError: sortt is not a function (did you mean sort?) (2:13)",
        ),
        (
            "db.c.insertOne({ _id: 1 })\n\n   db.c.insertOne({ _id: 1 })\n",
            "MongoServerError: E11000 duplicate key error collection: test.c index: _id_ dup key: { _id: 1 } (3:9)",
        ),
        (
            "for (const i of [1]) {\n  db.runCommand({ nosuchcommand: 1 })\n}\n",
            "MongoServerError[CommandNotFound]: no such command: 'nosuchcommand' (2:6)",
        ),
    ] {
        let path = dir.path().join("s.js");
        std::fs::write(&path, src).unwrap();
        let shown = path.display().to_string();
        let (code, _, stderr) = schemalab(&["shell", "--file", &shown]);
        assert_eq!(code, 1, "{src}");
        let first = stderr.lines().next().unwrap_or_default();
        assert_eq!(first, format!("{shown}: {want}"), "{src}");
    }
}

/// `--help` states the promise, and `--uri` holds the shell to it unless
/// `--allow-writes` is given.
#[test]
fn shell_with_uri_writes_only_schemalab_databases_unless_allowed() {
    let (_, help, _) = schemalab(&["shell", "--help"]);
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("On the embedded engine (no --uri) the shell may write anywhere. With --uri it writes, drops and renames only in databases whose names start with `schemalab_` (reads go anywhere) unless started with --allow-writes."),
        "{help}"
    );
    assert!(flat.contains("--allow-writes"), "{help}");

    let (server, rt, client) = crate::support::served();
    rt.block_on(plant_victim(&client));
    let before = rt.block_on(snapshot(&client, "victim"));
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("w.js");
    std::fs::write(
        &script,
        "print(db.data.countDocuments({}))\ndb.data.insertOne({ _id: 9 })\nprint('wrote')\n",
    )
    .unwrap();
    let script = script.display().to_string();
    let uri = server.uri();
    let (code, stdout, stderr) =
        schemalab(&["shell", "--uri", &uri, "--db", "victim", "--file", &script]);
    assert_eq!(code, 1);
    assert_eq!(stdout, "2\n");
    assert!(
        stderr.starts_with(&format!(
            "{script}: Error: refusing to write to database 'victim' (insert)"
        )),
        "{stderr}"
    );
    assert!(stderr.lines().next().unwrap().contains(" (2:"), "{stderr}");
    assert_eq!(rt.block_on(snapshot(&client, "victim")), before);
    // Inside `schemalab_` databases it writes.
    let (code, stdout, stderr) = schemalab(&[
        "shell",
        "--uri",
        &uri,
        "--db",
        "schemalab_mine",
        "--file",
        &script,
    ]);
    assert_eq!((code, stdout.as_str()), (0, "0\nwrote\n"), "{stderr}");
    // With --allow-writes it writes anywhere.
    let (code, stdout, stderr) = schemalab(&[
        "shell",
        "--uri",
        &uri,
        "--allow-writes",
        "--db",
        "victim",
        "--file",
        &script,
    ]);
    assert_eq!((code, stdout.as_str()), (0, "2\nwrote\n"), "{stderr}");
    assert_ne!(rt.block_on(snapshot(&client, "victim")), before);
}

/// An empty `manifest.toml` opens the TUI on a screen saying what is
/// wrong, as lint says it; a key leaves, restoring the terminal.
#[test]
fn empty_manifest_opens_an_error_screen() {
    use std::time::Duration;
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: tmux is not installed, so there is no pseudo-terminal to drive");
        return;
    }
    let course = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(course.path().join("lessons")).unwrap();
    std::fs::write(course.path().join("lessons/manifest.toml"), "").unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets"),
        &course.path().join("datasets"),
    );
    let lint = lint_lines(course.path());
    assert_eq!(lint.len(), 1, "{lint:?}");
    let data = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("schemalab-safety-{}-manifest", std::process::id()),
    };
    let script = format!(
        "cd '{}' && RUST_BACKTRACE=0 XDG_DATA_HOME='{d}' HOME='{d}' '{}'; echo \"EXIT=$?\"; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-*icanon'; echo DONE; sleep 30",
        course.path().display(),
        env!("CARGO_BIN_EXE_schemalab"),
        d = data.path().display(),
    );
    assert!(
        tmux.cmd(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "30",
            &script
        ])
        .status
        .success()
    );
    let screen = tmux
        .wait_for(Duration::from_secs(30), |s| {
            s.contains("cannot open the course")
        })
        .unwrap_or_else(|| panic!("no error screen:\n{}", tmux.screen()));
    assert!(
        screen.contains("lessons/manifest.toml:1:1: malformed TOML:")
            && screen.contains("missing field `format_version`"),
        "{screen}"
    );
    tmux.cmd(&["send-keys", "-t", "t", "q"]);
    let after = tmux
        .wait_for(Duration::from_secs(20), |s| s.contains("DONE"))
        .unwrap_or_else(|| panic!("did not leave:\n{}", tmux.screen()));
    assert!(after.contains("EXIT=1"), "{after}");
    assert!(after.lines().any(|l| l.trim() == "icanon"), "{after}");
}

/// A panic on a background thread gives the terminal back, shows its
/// message and ends the TUI with a failure status (the injected fault
/// exists in debug builds only).
#[test]
fn tui_restores_the_terminal_on_a_panic_in_another_thread() {
    use std::time::Duration;
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: tmux is not installed, so there is no pseudo-terminal to drive");
        return;
    }
    if !cfg!(debug_assertions) {
        eprintln!("skipped: the fault injection exists in debug builds only");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("schemalab-safety-{}-panic", std::process::id()),
    };
    let script = format!(
        "cd '{}' && SCHEMALAB_FAULT_PANIC_THREAD=1 RUST_BACKTRACE=0 XDG_DATA_HOME='{d}' HOME='{d}' '{}'; echo \"EXIT=$?\"; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-*icanon'; echo DONE; sleep 30",
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_BIN_EXE_schemalab"),
        d = data.path().display(),
    );
    assert!(
        tmux.cmd(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "30",
            &script
        ])
        .status
        .success()
    );
    let after = tmux
        .wait_for(Duration::from_secs(60), |s| s.contains("DONE"))
        .unwrap_or_else(|| panic!("the TUI did not leave:\n{}", tmux.screen()));
    assert!(
        after.contains("thread 'schemalab-fault'") && after.contains("injected fault"),
        "{after}"
    );
    assert!(after.contains("EXIT=1"), "{after}");
    assert!(after.lines().any(|l| l.trim() == "icanon"), "{after}");
    let alternate = tmux.cmd(&["display", "-p", "-t", "t", "#{alternate_on}"]);
    assert_eq!(String::from_utf8_lossy(&alternate.stdout).trim(), "0");
}
