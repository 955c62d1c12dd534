//! `schemalab shell` as a learner starts it: on a lesson's prepared
//! databases (`--lesson`, `--variant`, `--scale`), and running a script
//! the way `mongosh file.js` does (only what the script prints is shown).
//! Every case runs the built binary; servers bind 127.0.0.1:0.

use crate::support::cli::schemalab;
use schemalab_engine::Engine;
use schemalab_wire::spawn_background;

/// A script file in a fresh folder (kept alive by the returned guard).
fn script(src: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.js");
    std::fs::write(&path, src).unwrap();
    let shown = path.display().to_string();
    (dir, shown)
}

/// `schemalab shell <args>` running, its stdin, stdout and stderr piped,
/// with a JavaScript budget (600 s) no test statement reaches, so only
/// the test ends it.
fn spawn_shell(args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_schemalab"))
        .arg("shell")
        .args(args)
        .env("SCHEMALAB_SCRIPT_BUDGET", "600")
        .env("RUST_BACKTRACE", "0")
        .env_remove("MONGODB_URI")
        .env_remove("LANG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn number(line: &str) -> u64 {
    line.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a count: {line:?}"))
}

/// "Open the shell on the bucket variant" from the command line: the
/// lesson's dataset and setup are there, and the shell starts in
/// `schemalab_bucket_bucket`.
#[test]
fn shell_lesson_opens_on_the_named_variant() {
    let (_dir, path) = script("print(db.getName())\nprint(db.buckets.countDocuments({}))\n");
    let (code, stdout, stderr) = schemalab(&[
        "shell",
        "--lesson",
        "bucket",
        "--variant",
        "bucket",
        "--scale",
        "tiny",
        "--file",
        &path,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0], "schemalab_bucket_bucket");
    assert!(number(lines[1]) > 0, "{stdout}");
    // The listing (on stderr, apart from the script's output) names the
    // database and says how to switch.
    assert!(stderr.contains("* schemalab_bucket_bucket"), "{stderr}");
    assert!(stderr.contains("use <database>"), "{stderr}");
    // Only the variant asked for is prepared.
    assert!(!stderr.contains("schemalab_bucket_naive"), "{stderr}");
}

/// Without `--variant` every variant is prepared and the shell starts in
/// the first variant of the first experiment; the lesson may be named by
/// its folder or outline number, and `use` reaches hyphenated names.
#[test]
fn shell_lesson_prepares_every_variant_and_use_switches_between_them() {
    let (_dir, path) = script(
        "print(db.getName())\n\
         print(db.getCollectionNames().length)\n\
         use schemalab_one-to-few_separate\n\
         print(db.getName())\n\
         print(db.getCollectionNames().length)\n",
    );
    for lesson in ["one-to-few", "03-one-to-few", "3"] {
        let (code, stdout, stderr) = schemalab(&[
            "shell", "--lesson", lesson, "--scale", "tiny", "--file", &path,
        ]);
        assert_eq!(code, 0, "{lesson}: {stderr}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 4, "{lesson}: {stdout}");
        assert_eq!(lines[0], "schemalab_one-to-few_embedded", "{lesson}");
        assert!(number(lines[1]) > 0, "{lesson}: {stdout}");
        assert_eq!(lines[2], "schemalab_one-to-few_separate", "{lesson}");
        assert!(number(lines[3]) > 0, "{lesson}: {stdout}");
        assert!(
            stderr.contains("* schemalab_one-to-few_embedded")
                && stderr.contains("  schemalab_one-to-few_separate"),
            "{lesson}: {stderr}"
        );
    }
}

/// `--help` says what --lesson does and which scale it prepares by default.
#[test]
fn shell_help_describes_lesson_and_its_default_scale() {
    let (code, help, _) = schemalab(&["shell", "--help"]);
    assert_eq!(code, 0);
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "--lesson <LESSON>",
        "--variant <VARIANT>",
        "Default tiny, so the shell opens at once",
        "[default: tiny]",
        "it shows only what the script prints",
    ] {
        assert!(flat.contains(want), "{want}\n{help}");
    }
}

#[test]
fn shell_lesson_names_an_unknown_lesson_or_variant() {
    let (_dir, path) = script("print(1)\n");
    let (code, stdout, stderr) = schemalab(&[
        "shell",
        "--lesson",
        "bucket",
        "--variant",
        "buckt",
        "--scale",
        "tiny",
        "--file",
        &path,
    ]);
    assert_ne!(code, 0);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("lesson 'bucket' has no variant 'buckt'; did you mean 'bucket'?"),
        "{stderr}"
    );
    let (code, _, stderr) = schemalab(&["shell", "--lesson", "buckett", "--file", &path]);
    assert_ne!(code, 0);
    assert!(stderr.contains("did you mean 'bucket'?"), "{stderr}");
    // --variant and --scale belong to --lesson; --db does not mix with it.
    let (code, _, stderr) = schemalab(&["shell", "--variant", "bucket", "--file", &path]);
    assert_ne!(code, 0);
    assert!(stderr.contains("--lesson"), "{stderr}");
    let (code, _, stderr) =
        schemalab(&["shell", "--lesson", "bucket", "--db", "x", "--file", &path]);
    assert_ne!(code, 0);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

/// With `--uri` the lesson's databases are prepared there (they are all
/// `schemalab_` databases) and the shell keeps its write rule: nothing
/// outside `schemalab_` is written.
#[test]
fn shell_lesson_with_uri_keeps_the_write_rule() {
    let server = spawn_background(Engine::new()).unwrap();
    let uri = server.uri();
    let (_dir, path) = script(
        "print(db.buckets.countDocuments({}))\n\
         db.getSiblingDB('victim').data.insertOne({ _id: 1 })\n\
         print('not reached')\n",
    );
    let (code, stdout, stderr) = schemalab(&[
        "shell",
        "--uri",
        &uri,
        "--lesson",
        "bucket",
        "--variant",
        "bucket",
        "--scale",
        "tiny",
        "--file",
        &path,
    ]);
    assert_eq!(code, 1, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(number(lines[0]) > 0, "{stdout}");
    assert!(
        stderr.contains("refusing to write to database 'victim' (insert)"),
        "{stderr}"
    );
    // The lesson's database is on that server, the victim database is not.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let names = rt.block_on(async {
        let client = mongodb::Client::with_uri_str(&uri).await.unwrap();
        client.list_database_names().await.unwrap()
    });
    assert!(
        names.contains(&"schemalab_bucket_bucket".to_string()),
        "{names:?}"
    );
    assert!(!names.contains(&"victim".to_string()), "{names:?}");
}

/// Like `mongosh file.js`: the value of a bare expression statement is
/// not printed, nor the replies of `use` and `show`; `print`, `printjson`
/// and `console.log` are.
#[test]
fn shell_file_prints_only_what_the_script_prints() {
    let (_dir, path) = script(
        "1 + 1\n\
         'a bare string'\n\
         db.c.insertOne({ _id: 1, a: 1 })\n\
         db.c.find()\n\
         db.c.countDocuments({})\n\
         use other-db\n\
         show collections\n\
         use test\n\
         print('printed', 2)\n\
         printjson(db.c.findOne())\n\
         console.log('logged')\n",
    );
    let (code, stdout, stderr) = schemalab(&["shell", "--file", &path]);
    assert_eq!(code, 0, "{stderr}");
    // printjson lays a document out over lines, as mongosh's does.
    assert_eq!(stdout, "printed 2\n{\n  _id: 1,\n  a: 1\n}\nlogged\n");
    assert!(stderr.is_empty(), "{stderr}");
}

/// `shell --file` streams: a line the script prints reaches stdout while
/// the script is still running (here, a loop that only its time budget
/// would end), as `mongosh file.js` prints it.
#[test]
fn shell_file_streams_what_the_script_prints() {
    use std::io::{BufRead, Read};
    let (_dir, path) = script("print('first')\nwhile (true) {}\n");
    let mut child = spawn_shell(&["--file", &path]);
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "first\n");
    // The loop had not ended: nothing was said about its budget.
    assert!(
        child.try_wait().unwrap().is_none(),
        "the script ended first"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("budget"), "{stderr}");
}

/// `shell --file x.js | head -1`: once the reader closes stdout, a script
/// that would print forever stops at once and the command exits 0 with
/// nothing on stderr (no panic, no budget error).
#[test]
fn shell_file_stops_when_its_reader_closes_stdout() {
    use std::io::{BufRead, Read};
    let (_dir, path) = script("let i = 0\nwhile (true) print('line ' + i++)\n");
    let mut child = spawn_shell(&["--file", &path]);
    {
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line, "line 0\n");
    }
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// A class on one server (`--db-prefix`): a learner's lesson databases
/// are their own (`schemalab_alice_…`), the shell starts in one of them,
/// and it writes no other database, not even another learner's or the
/// plain `schemalab_` ones.
#[test]
fn a_learner_prefix_keeps_each_learner_in_their_own_databases() {
    let server = spawn_background(Engine::new()).unwrap();
    let uri = server.uri();
    let (_dir, path) = script(
        "print(db.getName())\n\
         print(db.buckets.countDocuments({}))\n\
         db.getSiblingDB('schemalab_alice_scratch').notes.insertOne({ _id: 1 })\n\
         print('own scratch written')\n\
         db.getSiblingDB('schemalab_bob_bucket_bucket').buckets.insertOne({ _id: 1 })\n\
         print('not reached')\n",
    );
    let (code, stdout, stderr) = schemalab(&[
        "--db-prefix",
        "alice",
        "shell",
        "--uri",
        &uri,
        "--lesson",
        "bucket",
        "--variant",
        "bucket",
        "--scale",
        "tiny",
        "--file",
        &path,
    ]);
    assert_eq!(code, 1, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0], "schemalab_alice_bucket_bucket");
    assert!(number(lines[1]) > 0, "{stdout}");
    assert_eq!(lines[2], "own scratch written");
    assert!(
        stderr.contains("refusing to write to database 'schemalab_bob_bucket_bucket'"),
        "{stderr}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let names = rt.block_on(async {
        let client = mongodb::Client::with_uri_str(&uri).await.unwrap();
        client.list_database_names().await.unwrap()
    });
    let ours: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("schemalab_"))
        .collect();
    assert!(
        ours.iter().all(|n| n.starts_with("schemalab_alice_")),
        "{names:?}"
    );
    assert!(ours.len() >= 2, "{names:?}");
    // A name that cannot be part of a database name is refused up front,
    // as a bad --lang is.
    let (code, _, stderr) = schemalab(&["--db-prefix", "Alice.B", "lessons"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--db-prefix \"Alice.B\""), "{stderr}");
}

/// At the interactive prompt a statement's prints show as they are
/// printed, while it still runs, as at mongosh's prompt.
#[test]
fn the_interactive_shell_streams_what_a_statement_prints() {
    use std::io::{BufRead, Write};
    let mut child = spawn_shell(&[]);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"print('first'); while (true) {}\n")
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let first = stdout
        .lines()
        .map(Result::unwrap)
        .find(|l| l.ends_with("first"))
        .expect("the print reached stdout");
    assert!(first.ends_with("first"), "{first}");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the statement ended first"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
