//! The command line as people use it: lessons by number or folder with a
//! "did you mean" for typos, options only on the commands that use them, the
//! course built into the binary (any working directory works; `--content`
//! overrides it), the language from `--lang` or the environment, and
//! `TERM=dumb` getting plain text instead of a TUI.

use crate::support::cli::schemalab_in;
use std::path::Path;

fn here() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_lesson_is_found_by_id_number_or_folder_and_typos_get_a_suggestion() {
    for query in ["bucket", "10", "10-bucket"] {
        let out = schemalab_in(
            here(),
            &[],
            &["run", query, "--scale", "tiny", "--format", "json"],
        );
        assert_eq!(out.code, 0, "{query}: {}", out.stderr);
        let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(report["lesson"], "bucket", "{query}");
    }
    let out = schemalab_in(here(), &[], &["run", "buckt", "--scale", "tiny"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("did you mean 'bucket'?"),
        "{}",
        out.stderr
    );
    // Nothing close: no suggestion, the list of lessons instead.
    let out = schemalab_in(here(), &[], &["run", "zzzzzz", "--scale", "tiny"]);
    assert_eq!(out.code, 2);
    assert!(!out.stderr.contains("did you mean"), "{}", out.stderr);
    assert!(
        out.stderr.contains("lessons: thinking-in-documents"),
        "{}",
        out.stderr
    );
    let out = schemalab_in(here(), &[], &["run", "99", "--scale", "tiny"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
}

#[test]
fn options_appear_only_on_the_commands_that_use_them() {
    let help = |cmd: &str| schemalab_in(here(), &[], &[cmd, "--help"]).stdout;
    for cmd in ["lint", "lessons", "serve"] {
        let h = help(cmd);
        assert!(!h.contains("--uri"), "{cmd} offers --uri:\n{h}");
        assert!(!h.contains("--present"), "{cmd} offers --present:\n{h}");
    }
    for cmd in ["run", "shell", "check", "watch"] {
        assert!(help(cmd).contains("--uri"), "{cmd} lacks --uri");
    }
    let out = schemalab_in(here(), &[], &["lint", "--present"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("--present"), "{}", out.stderr);
}

#[test]
fn the_course_is_built_in_so_any_folder_works_and_content_overrides_it() {
    let elsewhere = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let cache_env = cache.path().display().to_string();
    let env = [
        ("XDG_CACHE_HOME", cache_env.as_str()),
        ("HOME", cache_env.as_str()),
    ];
    // One line per lesson of the course's manifest.
    let lessons = std::fs::read_to_string(here().join("lessons/manifest.toml"))
        .unwrap()
        .matches("[[lessons]]")
        .count();
    assert!(lessons >= 18, "the manifest lists {lessons} lessons");
    let out = schemalab_in(elsewhere.path(), &env, &["lessons"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), lessons, "{}", out.stdout);
    assert!(out.stdout.contains("10. bucket"), "{}", out.stdout);
    // A lesson goes by its folder's number: 07b-working-set is 7b, between
    // 7 and 8, and the lessons after it keep theirs.
    let numbers: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.trim_start().split('.').next())
        .collect();
    let seven = numbers.iter().position(|n| *n == "7").unwrap();
    assert_eq!(
        &numbers[seven..seven + 3],
        ["7", "7b", "8"],
        "{}",
        out.stdout
    );
    let out = schemalab_in(elsewhere.path(), &env, &["lint"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // --content names an instructor's own copy; a folder without a course
    // is an error that says so.
    let out = schemalab_in(elsewhere.path(), &env, &["--content", ".", "lessons"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("no lessons/manifest.toml"),
        "{}",
        out.stderr
    );
    let course = here().display().to_string();
    let out = schemalab_in(elsewhere.path(), &env, &["--content", &course, "lessons"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), lessons);
}

#[test]
fn the_language_comes_from_the_flag_or_the_environment() {
    let zh = schemalab_in(here(), &[], &["--lang", "zh-CN", "lessons"]);
    assert!(
        zh.stdout.contains("10. bucket                   桶模式"),
        "{}",
        zh.stdout
    );
    let env = schemalab_in(here(), &[("LANG", "zh_CN.UTF-8")], &["lessons"]);
    assert_eq!(env.stdout, zh.stdout);
    // --lang wins over the environment; LC_ALL over LANG.
    let forced = schemalab_in(
        here(),
        &[("LANG", "zh_CN.UTF-8")],
        &["--lang", "en", "lessons"],
    );
    assert!(
        forced.stdout.contains("The bucket pattern"),
        "{}",
        forced.stdout
    );
    let lc_all = schemalab_in(
        here(),
        &[("LANG", "zh_CN.UTF-8"), ("LC_ALL", "C")],
        &["lessons"],
    );
    assert_eq!(lc_all.stdout, forced.stdout);
    let bad = schemalab_in(here(), &[], &["--lang", "fr", "lessons"]);
    assert_ne!(bad.code, 0);
    assert!(
        bad.stderr.contains("unknown language 'fr'"),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_dumb_terminal_gets_plain_text_not_the_workbench() {
    let out = schemalab_in(here(), &[("TERM", "dumb")], &[]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("TERM=dumb"), "{}", out.stderr);
    assert!(
        out.stderr.contains("schemalab run <lesson>"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains('\u{1b}') && !out.stderr.contains('\u{1b}'));
    // Ordinary errors are one message, no backtrace.
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

/// Output cut short by its reader (`schemalab lessons | head -1`) ends the
/// command quietly with exit 0: stdout is a pipe whose reading end is
/// closed before the command starts, so its first write fails with
/// EPIPE, which used to panic (exit 101, "failed printing to stdout").
#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("print.js");
    std::fs::write(&script, "print('one')\nprint('two')\n").unwrap();
    let script = script.display().to_string();
    for args in [
        &["lessons"][..],
        &["exercises", "list", "--dir", "no-such-workspace"],
        &["run", "10", "--scale", "tiny", "--format", "json"],
        &[
            "solution",
            "host-logs",
            "--reveal",
            "--dir",
            "no-such-workspace",
        ],
        &["shell", "--file", &script],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_schemalab"))
            .current_dir(here())
            .args(args)
            .env("RUST_BACKTRACE", "0")
            .env_remove("MONGODB_URI")
            .env_remove("LANG")
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

/// A `--uri` whose server is not running fails when the database is
/// opened, by the kind of the failure: "connection refused" and the
/// address, with what to do, and no advice to retry (the driver's
/// server selection used to wait 30 s and print its topology dump). The
/// workbench opens the database the same way before it takes the
/// terminal.
#[test]
fn a_refused_connection_is_named_with_its_address() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let uri = format!("mongodb://127.0.0.1:{port}");
    let host = format!("127.0.0.1:{port}");
    let run = schemalab_in(
        here(),
        &[],
        &["run", "10", "--scale", "tiny", "--uri", &uri],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("connection refused"), "{}", run.stderr);
    assert!(run.stderr.contains(&host), "{}", run.stderr);
    assert!(run.stderr.contains("leave --uri out"), "{}", run.stderr);
    assert!(!run.stderr.contains("retry"), "{}", run.stderr);
    // `check` says nothing was graded (exit 2); the workbench exits 1.
    for (args, code) in [
        (&["check", "host-logs", "--uri", &uri][..], 2),
        (&["--uri", &uri], 1),
    ] {
        let out = schemalab_in(here(), &[("TERM", "xterm")], args);
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("connection refused"), "{}", out.stderr);
        assert!(out.stderr.contains(&host), "{}", out.stderr);
    }
    let zh = schemalab_in(
        here(),
        &[],
        &["--lang", "zh-CN", "run", "10", "--uri", &uri],
    );
    assert!(zh.stderr.contains("连接被拒绝"), "{}", zh.stderr);
}

/// `watch` with an exercise the course does not have fails at once with
/// the list of exercises, instead of watching forever.
#[test]
fn watching_an_unknown_exercise_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    assert_eq!(
        schemalab_in(here(), &[], &["exercises", "init", "--dir", &ws]).code,
        0
    );
    let out = schemalab_in(here(), &[], &["watch", "no-such-exercise", "--dir", &ws]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("no exercise 'no-such-exercise'"),
        "{}",
        out.stderr
    );
}

/// A solution whose section never ends (`while (true) {}`) is stopped by
/// the statement budget (`SCHEMALAB_SCRIPT_BUDGET`, here half a second):
/// the check fails with an error that says why and names the section's
/// line, and the other checks still report.
#[test]
fn a_runaway_solution_is_stopped_and_named_at_its_section() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    assert_eq!(
        schemalab_in(here(), &[], &["exercises", "init", "--dir", &ws]).code,
        0
    );
    let reference = std::fs::read_to_string(
        here().join("lessons/10-bucket/exercises/history-buckets/reference.js"),
    )
    .unwrap();
    let (setup, _) = reference.split_once("// @op view").unwrap();
    let solution = format!(
        "{setup}// @op view\nlet n = 0\nwhile (true) {{ n++ }}\n\n// @op latest\ndb.history.find({{user_id: userId}})\n"
    );
    let view_line = setup.lines().count() + 1;
    std::fs::write(dir.path().join("history-buckets/solution.js"), solution).unwrap();
    let out = schemalab_in(
        here(),
        &[("SCHEMALAB_SCRIPT_BUDGET", "0.5")],
        &["check", "history-buckets", "--dir", &ws, "--scale", "tiny"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("InternalError: interrupted"), "{all}");
    assert!(all.contains("0.5 s budget"), "{all}");
    assert!(
        all.contains(&format!(":{view_line}")),
        "line {view_line}: {all}"
    );
}

/// `schemalab doctor`: on the embedded engine and on a server named by
/// `--uri`, every check the course needs passes (exit 0), the scratch
/// database is the learner's own and is dropped afterwards; an unreachable
/// server is exit 1 with its address.
#[test]
fn doctor_checks_what_the_course_needs_of_a_server() {
    let out = schemalab_in(here(), &[], &["doctor"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    for line in [
        "✓ server       MongoDB 7.0.12, schemalab's embedded engine",
        "✓ writing      created and wrote schemalab_doctor",
        "✓ sizes",
        "✓ profiler",
        "The course can run here",
    ] {
        assert!(out.stdout.contains(line), "{line}:\n{}", out.stdout);
    }
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let uri = server.uri();
    let out = schemalab_in(
        here(),
        &[],
        &["--db-prefix", "alice", "doctor", "--uri", &uri],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("MongoDB 7.0.12, a standalone"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("created and wrote schemalab_alice_doctor"),
        "{}",
        out.stdout
    );
    let left = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async {
            let client = mongodb::Client::with_uri_str(&uri).await?;
            client.list_database_names().await
        })
        .unwrap();
    assert!(!left.iter().any(|d| d.contains("doctor")), "{left:?}");
    let out = schemalab_in(here(), &[], &["doctor", "--uri", "mongodb://127.0.0.1:1"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("127.0.0.1:1"), "{}", out.stderr);
}

/// `exercises forget` starts an exercise (or all) over: its progress goes,
/// the learner's files stay; an unknown id forgets nothing.
#[test]
fn forgetting_progress_keeps_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let ws_dir = dir.path().display().to_string();
    assert_eq!(
        schemalab_in(here(), &[], &["exercises", "init", "--dir", &ws_dir]).code,
        0
    );
    let ws = schemalab::exercises::Workspace {
        dir: dir.path().to_path_buf(),
    };
    ws.record_check("host-logs", false, 1).unwrap();
    ws.record_check("spec-search", true, 2).unwrap();
    std::fs::write(dir.path().join("host-logs/solution.js"), "// mine\n").unwrap();
    let out = schemalab_in(
        here(),
        &[],
        &["exercises", "forget", "nosuch", "--dir", &ws_dir],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("no exercise 'nosuch'"),
        "{}",
        out.stderr
    );
    assert_eq!(ws.progress().unwrap().exercises.len(), 2);
    let out = schemalab_in(
        here(),
        &[],
        &["exercises", "forget", "host-logs", "--dir", &ws_dir],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("forgot the progress of 1 exercise(s)"),
        "{}",
        out.stdout
    );
    let left = ws.progress().unwrap();
    assert!(!left.exercises.contains_key("host-logs"));
    assert!(left.exercises["spec-search"].passed);
    let out = schemalab_in(here(), &[], &["exercises", "forget", "--dir", &ws_dir]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(ws.progress().unwrap().exercises.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("host-logs/solution.js")).unwrap(),
        "// mine\n"
    );
}

/// `dataset list` names every dataset of the catalog with its collections
/// and the parameters of each scale.
#[test]
fn dataset_list_shows_every_dataset_and_scale() {
    let out = schemalab_in(here(), &[], &["dataset", "list"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let catalog = schemalab::datasets::Catalog::builtin().unwrap();
    for spec in catalog.datasets() {
        assert!(
            out.stdout
                .contains(&format!("{}  {}", spec.name, spec.summary)),
            "{}",
            spec.name
        );
    }
    assert!(
        out.stdout.contains("    collections: actors, films"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("films 100000"), "{}", out.stdout);
}
