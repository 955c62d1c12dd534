//! Hostile input never aborts the process: long chains and deep nesting in
//! the shell dialect, deep claim `check`s, out-of-range numbers in
//! `datasets/catalog.toml`. Each entry point gets an error naming the
//! place, never a stack overflow or a panic (a test that overflowed would
//! abort this whole test binary).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use schemalab::course::Check;
use schemalab::datasets::Catalog;
use schemalab::dialect::ast::{Expr, ExprKind, Program, Stmt, StmtKind};
use schemalab::dialect::{DialectError, Output, Pos, Session, parse_program};
use schemalab::engine::Engine;
use schemalab::wire::{BackgroundServer, spawn_background};

async fn session(db: &str) -> (BackgroundServer, Session) {
    let server = spawn_background(Engine::new()).unwrap();
    let s = Session::connect(&server.uri(), db).await.unwrap();
    (server, s)
}

fn texts(out: &[Output]) -> Vec<String> {
    out.iter().map(Output::render).collect()
}

/// `1+1+…` with `n` terms.
fn sum_chain(n: usize) -> String {
    vec!["1"; n].join("+")
}

/// The four chains of the issue, at the lengths that used to abort.
fn long_chains() -> Vec<(&'static str, String)> {
    vec![
        ("sum", sum_chain(2000)),
        ("member", format!("db{}", ".a".repeat(3000))),
        ("index", format!("const x = [[0]]\nx{}", "[0]".repeat(3000))),
        ("limit", format!("db.c.find(){}", ".limit(1)".repeat(1000))),
    ]
}

#[test]
fn long_chains_are_syntax_errors_with_a_place() {
    for (name, src) in long_chains() {
        let e = parse_program(&src).expect_err(name);
        assert!(matches!(e, DialectError::Syntax { .. }), "{name}: {e:?}");
        assert!(e.to_string().contains("nested too deeply"), "{name}: {e}");
        let pos = e.position().unwrap();
        // The error is where the chain crosses the limit, on its own line.
        let line = src.lines().count() as u32;
        assert_eq!(pos.line, line, "{name}: {e}");
        assert!(pos.col > 100, "{name}: {e}");
    }
}

#[tokio::test]
async fn long_chains_evaluate_to_errors_on_a_server() {
    let (_server, mut s) = session("safety_chains").await;
    for (name, src) in long_chains() {
        let (_, res) = s.eval_partial(&src).await;
        let e = res.expect_err(name);
        assert!(e.position().is_some(), "{name}: {e}");
    }
    // The session is still usable afterwards.
    let out = s.eval("1 + 2").await.unwrap();
    assert_eq!(texts(&out), ["3"]);
}

/// Chains and nesting up to the limit still work, and evaluate (and print)
/// on this test thread's stack.
#[tokio::test]
async fn chains_within_the_limit_still_work() {
    let (_server, mut s) = session("safety_within").await;
    let out = s.eval(&sum_chain(150)).await.unwrap();
    assert_eq!(texts(&out), ["150"]);
    s.eval("db.c.insertMany([{ _id: 1 }, { _id: 2 }])")
        .await
        .unwrap();
    let src = format!("db.c.find().sort({{ _id: 1 }}){}", ".limit(1)".repeat(90));
    let out = s.eval(&src).await.unwrap();
    assert_eq!(texts(&out), ["[ { _id: 1 } ]"]);
    // Nested arrays right at the limit: parsed, evaluated, printed.
    let depth = 95;
    let src = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let out = s.eval(&src).await.unwrap();
    let shown = texts(&out)[0].clone();
    assert!(
        shown.starts_with("[\n  [\n") && shown.contains("[ [Array] ]"),
        "{shown}"
    );
    let src = format!("{}1{}", "[".repeat(250), "]".repeat(250));
    assert!(matches!(
        parse_program(&src),
        Err(DialectError::Syntax { .. })
    ));
}

/// A value nested deeper and deeper at run time is refused at the limit,
/// with the place of the statement that would cross it.
#[tokio::test]
async fn values_built_deep_at_run_time_are_refused() {
    let (_server, mut s) = session("safety_values").await;
    let items = vec!["0"; 400].join(", ");
    let src = format!("let x = {{}}\nfor (const i of [{items}]) {{\n  x = {{ a: x }}\n}}");
    let e = s.eval(&src).await.unwrap_err();
    assert!(matches!(e, DialectError::Range { .. }), "{e:?}");
    assert_eq!(e.position(), Some(Pos { line: 3, col: 12 }), "{e}");
    assert!(e.to_string().starts_with("RangeError: "), "{e}");
}

/// A syntax tree built by hand (not by the parser) deeper than the
/// evaluator's limit is refused, not recursed into.
#[tokio::test]
async fn hand_built_deep_trees_are_refused() {
    let (_server, mut s) = session("safety_tree").await;
    let pos = Pos { line: 1, col: 1 };
    let mut e = Expr {
        pos,
        kind: ExprKind::Number(1.0),
    };
    for _ in 0..5000 {
        e = Expr {
            pos,
            kind: ExprKind::Neg(Box::new(e)),
        };
    }
    let program = Program {
        stmts: vec![Stmt {
            pos,
            kind: StmtKind::Expr(e),
        }],
    };
    let (_, res) = s.eval_program(&program).await;
    assert!(matches!(res, Err(DialectError::Range { .. })), "{res:?}");
    // Dropping a 5,000-deep tree recurses; do it on a thread with room.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || drop(program))
        .unwrap()
        .join()
        .unwrap();
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

const CATALOG: &str = include_str!("../datasets/catalog.toml");

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

/// A copy of the course (lessons and datasets) to break on purpose.
fn course_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["lessons", "datasets"] {
        copy_dir(&root.join(sub), &dir.path().join(sub));
    }
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
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

/// The first setup script of the course, as a path.
fn some_setup(root: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> = Vec::new();
    for lesson in std::fs::read_dir(root.join("lessons")).unwrap() {
        let lesson = lesson.unwrap().path();
        if !lesson.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&lesson).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "js") {
                found.push(f);
            }
        }
    }
    found.sort();
    found
        .into_iter()
        .next()
        .expect("the course has a setup script")
}

#[test]
fn lint_reports_a_long_chain_in_a_setup_file() {
    let dir = course_copy();
    assert!(lint_lines(dir.path()).is_empty(), "the course lints clean");
    let setup = some_setup(dir.path());
    let mut text = std::fs::read_to_string(&setup).unwrap();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let line = text.lines().count() + 1;
    text.push_str(&format!("print({})\n", sum_chain(2000)));
    std::fs::write(&setup, text).unwrap();
    let errors = lint_lines(dir.path());
    let want = format!("{}:{line}:", setup.display());
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with(&want) && e.contains("nested too deeply")),
        "{want} in {errors:#?}"
    );
}

/// Deep or long generated input for the dialect.
fn hostile_source() -> impl Strategy<Value = String> {
    let n = 1usize..4000;
    prop_oneof![
        n.clone().prop_map(sum_chain),
        n.clone().prop_map(|n| format!("db{}", ".a".repeat(n))),
        n.clone().prop_map(|n| format!("[0]{}", "[0]".repeat(n))),
        n.clone()
            .prop_map(|n| format!("db.c.find(){}", ".limit(1)".repeat(n))),
        n.clone()
            .prop_map(|n| format!("{}1{}", "[".repeat(n), "]".repeat(n))),
        n.clone()
            .prop_map(|n| format!("{}1{}", "({ a: ".repeat(n), " })".repeat(n))),
        n.clone().prop_map(|n| format!("{}1", "-".repeat(n))),
        n.clone().prop_map(|n| "(".repeat(n)),
        n.clone()
            .prop_map(|n| format!("{}print(1)", "for (const x of [1]) ".repeat(n))),
        (n.clone(), n).prop_map(|(a, b)| format!("({})+{}", sum_chain(a), sum_chain(b))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Parse and evaluate on a server: an error or a value, never an abort.
    #[test]
    fn dialect_survives_deep_and_long_input(src in hostile_source()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let server = spawn_background(Engine::new()).unwrap();
        rt.block_on(async {
            let mut s = Session::connect(&server.uri(), "safety_prop").await.unwrap();
            let (_, res) = s.eval_partial(&src).await;
            if let Err(e) = res {
                prop_assert!(
                    !matches!(e, DialectError::Driver(_)),
                    "{}", e
                );
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
        if let Ok(catalog) = Catalog::parse(&text, "catalog.toml") {
            // Whatever parses can start generating without a panic.
            for spec in catalog.datasets() {
                let name = spec.name.clone();
                let _ = catalog.generate(&name, schemalab::datasets::Scale::Tiny, 1);
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
