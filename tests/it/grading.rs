//! The grader as a teacher and for teachers (issue 28, items 4–6, and
//! issue 36, items 8 and 10): feedback that gives the principle, never the
//! design, until the staged hints or the declared number of failures;
//! failed sections first, at their line and column; `check --json` with a
//! verdict, a score and numbers; `exercises grade` over many workspaces;
//! `shell --exercise`; `watch` with no exercise; a server lost mid-check
//! (exit 2, nothing graded); unreadable files and a progress file that
//! cannot be written.

use std::future::IntoFuture;
use std::io::{BufRead, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::support::cli::{Out, schemalab_in};
use crate::support::root;
use schemalab::course::CatalogLoader;
use schemalab::exercises::lint::gives_design;
use schemalab::exercises::{self, CheckOptions, Exercise, Workspace};
use schemalab::locale::Lang;

fn exercise(id: &str, lang: Lang) -> Exercise {
    exercises::manifest::find(root(), id, lang).unwrap()
}

/// A workspace in a temporary folder, made by the CLI.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().display().to_string();
    let out = schemalab_in(&root(), &[], &["exercises", "init", "--dir", &ws]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    dir
}

fn run(dir: &Path, args: &[&str]) -> Out {
    let ws = dir.display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--dir", &ws]);
    schemalab_in(&root(), &[], &all)
}

/// No check's words give the design, in either language: index keys,
/// operators and statements are for the staged hints only.
#[test]
fn no_check_hint_gives_the_design_in_either_language() {
    let mut found = Vec::new();
    for lang in [Lang::En, Lang::ZhCn] {
        for ex in exercises::exercises(root(), lang).unwrap() {
            for c in &ex.spec.checks {
                if let Some(d) = gives_design(&c.hint) {
                    found.push(format!("{lang:?} {}/{}: {d}", ex.id, c.id.get_ref()));
                }
            }
            assert!(
                ex.spec.hints_after.is_some_and(|n| n >= 1),
                "{}: declares after how many failed checks the hints come",
                ex.id
            );
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert_eq!(
        gives_design("Index {host_id: 1, level: 1, ts: -1}."),
        Some("{host_id: 1, level: 1, ts: -1}".into())
    );
    assert_eq!(
        gives_design("Sort and $limit to 3 before unwinding"),
        Some("$limit".into())
    );
    assert_eq!(
        gives_design("updateMany the author's posts"),
        Some("updateMany".into())
    );
    assert_eq!(gives_design("A bucket has a fixed capacity."), None);
}

/// The design hints come staged: a failed check reveals nothing until the
/// exercise's `hints_after` failures, then one more stage per failure; a
/// hint revealed by `schemalab hint` is not revealed again.
#[test]
fn failed_checks_reveal_staged_hints_only_after_the_declared_number() {
    let ex = exercise("history-buckets", Lang::En);
    let after = ex.spec.hints_after.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace {
        dir: tmp.path().join("ws"),
    };
    ws.init(std::slice::from_ref(&ex)).unwrap();
    for n in 1..=after {
        let r = ws.record_attempt(&ex, false, u64::from(n)).unwrap();
        assert!(
            r.revealed.is_empty(),
            "failure {n} revealed {:?}",
            r.revealed
        );
        assert_eq!(r.attempts, n);
    }
    let r = ws.record_attempt(&ex, false, 9).unwrap();
    assert_eq!(r.revealed, vec![(1, ex.spec.hints[0].clone())]);
    assert_eq!(r.hints_used, 1);
    // The learner asks for the second stage; the next failure gives the
    // third, not the second again.
    let (shown, _) = ws.next_hint(&ex).unwrap();
    assert_eq!(shown.len(), 2);
    let r = ws.record_attempt(&ex, false, 10).unwrap();
    assert!(r.revealed.is_empty(), "{:?}", r.revealed);
    let r = ws.record_attempt(&ex, false, 11).unwrap();
    assert_eq!(r.revealed, vec![(3, ex.spec.hints[2].clone())]);
    // A pass reveals nothing.
    let r = ws.record_attempt(&ex, true, 12).unwrap();
    assert!(r.revealed.is_empty());
    assert_eq!(r.attempts, after + 4);
}

/// Attempts stop at the largest count instead of wrapping to 0.
#[test]
fn attempts_never_wrap() {
    let ex = exercise("spec-search", Lang::En);
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace {
        dir: tmp.path().join("ws"),
    };
    ws.init(std::slice::from_ref(&ex)).unwrap();
    std::fs::write(
        ws.dir.join(".progress.toml"),
        format!(
            "[exercises.spec-search]\nattempts = {max}\nfailed = {max}\n",
            max = u32::MAX
        ),
    )
    .unwrap();
    let r = ws.record_attempt(&ex, false, 1).unwrap();
    assert_eq!(r.attempts, u32::MAX);
    ws.record_check(&ex.id, false, 2).unwrap();
    let p = ws.progress().unwrap();
    assert_eq!(p.exercises["spec-search"].attempts, u32::MAX);
    assert_eq!(p.exercises["spec-search"].failed, u32::MAX);
}

/// The workspace links the shell's language reference: a copy of
/// docs/SHELL.md beside the README, linked from the README and from each
/// prompt.
#[test]
fn the_workspace_links_the_shell_language_reference() {
    let all = exercises::exercises(root(), Lang::En).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace {
        dir: tmp.path().join("ws"),
    };
    ws.init(&all).unwrap();
    let shell = std::fs::read_to_string(ws.dir.join("SHELL.md")).unwrap();
    assert_eq!(
        shell,
        std::fs::read_to_string(root().join("docs/SHELL.md")).unwrap()
    );
    let readme = std::fs::read_to_string(ws.dir.join("README.md")).unwrap();
    assert!(readme.contains("[SHELL.md](SHELL.md)"), "{readme}");
    for ex in &all {
        let prompt = std::fs::read_to_string(ws.ex_dir(&ex.id).join("PROMPT.md")).unwrap();
        assert!(prompt.contains("(../SHELL.md)"), "{}: {prompt}", ex.id);
    }
}

/// spec-search's reference with its `by_ram` section broken on line 3 of
/// the section: an unknown name in the query.
fn broken_spec_search() -> (String, usize, usize) {
    let ex = exercise("spec-search", Lang::En);
    let reference = ex.read(ex.spec.reference.get_ref()).unwrap();
    let broken = reference.replace(
        "db.products.find({attrs: {$elemMatch: {k: \"ram_gb\", v: {$gte: ramMin}}}})",
        "db.products.find({attrs: {$elemMatch: {k: \"ram_gb\", v: {$gte: ramMinimum}}}})",
    );
    assert_ne!(broken, reference);
    let line = broken
        .lines()
        .position(|l| l.contains("ramMinimum"))
        .unwrap()
        + 1;
    let col = broken
        .lines()
        .nth(line - 1)
        .unwrap()
        .find("ramMinimum")
        .unwrap()
        + 1;
    (broken, line, col)
}

/// A failed section's error comes first, at its line and column in
/// solution.js, with the checks it affects; the checks then show the
/// measured figure, the bound and why, and list comparisons name items.
/// Checked in a workspace through the library, then as `check --json`.
#[test]
fn a_failed_section_is_shown_first_at_its_place_and_json_has_numbers() {
    let ex = exercise("spec-search", Lang::En);
    let (_server, rt, client) = crate::support::served();
    let loader = CatalogLoader::for_course(root()).unwrap();
    let opts = CheckOptions {
        names: Default::default(),
        scale: None,
        seed: 4,
        loader: &loader,
        references: None,
    };
    let (broken, line, col) = broken_spec_search();
    let r = rt
        .block_on(exercises::check_exercise(
            &client, &ex, &broken, None, &opts,
        ))
        .unwrap();
    assert!(!r.passed());
    assert_eq!(r.section_errors.len(), 1, "{}", r.render());
    let e = &r.section_errors[0];
    assert_eq!((e.section.as_str(), e.line, e.col), ("by_ram", line, col));
    let text = r.render();
    let first_check = text
        .find("  ✓")
        .into_iter()
        .chain(text.find("  ✗"))
        .min()
        .unwrap();
    let at = format!("! solution.js:{line}:{col}: ReferenceError");
    let error_at = text.find(&at).unwrap_or_else(|| panic!("{at}:\n{text}"));
    assert!(error_at < first_check, "{text}");
    assert!(
        text.contains("it affects ram_correct, ram_index, tight"),
        "{text}"
    );
    // A failing check says why (the principle), never `hint:`.
    assert!(text.contains("      why: "), "{text}");
    assert!(!text.contains("hint: "), "{text}");

    // The untouched starter: no design anywhere in what the learner reads.
    let starter = ex.read(ex.spec.starter.get_ref()).unwrap();
    let r = rt
        .block_on(exercises::check_exercise(
            &client, &ex, &starter, None, &opts,
        ))
        .unwrap();
    let text = r.render();
    assert!(r.section_errors.is_empty(), "{text}");
    for h in &ex.spec.hints {
        assert!(!text.contains(h.as_str()), "{text}");
    }
    assert_eq!(gives_design(&text.replace("{", "")), None, "{text}");

    // A set answer missing items is told by items.
    let half = ex.read(ex.spec.reference.get_ref()).unwrap().replace(
        "db.products.find({attrs: {$elemMatch: {k: \"colour\", v: colour}}})",
        "db.products.find({attrs: {$elemMatch: {k: \"colour\", v: colour}}}).limit(1)",
    );
    let r = rt
        .block_on(exercises::check_exercise(&client, &ex, &half, None, &opts))
        .unwrap();
    let colour = r.results.iter().find(|c| c.id == "colour_correct").unwrap();
    assert!(!colour.passed);
    let detail = colour.detail.to_string();
    assert!(detail.starts_with("missing "), "{detail}");
    assert!(!detail.contains("item "), "{detail}");
    assert_eq!(colour.measured_num, Some(1.0));
    assert!(colour.bound_num.is_some_and(|n| n > 1.0));

    // The same broken solution through the CLI, as JSON.
    let dir = workspace();
    std::fs::write(dir.path().join("spec-search/solution.js"), &broken).unwrap();
    let out = run(
        dir.path(),
        &["check", "spec-search", "--seed", "4", "--json"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["passed"], false);
    assert_eq!(json["attempts"], 1);
    assert_eq!(json["hints_used"], 0);
    let total = json["score"]["total"].as_u64().unwrap();
    assert_eq!(total, ex.spec.checks.len() as u64);
    assert!(json["score"]["passed"].as_u64().unwrap() < total);
    assert_eq!(json["section_errors"][0]["line"], line);
    assert_eq!(json["section_errors"][0]["col"], col);
    let one_index = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "one_index")
        .unwrap();
    assert!(one_index["measured"].is_number(), "{one_index}");
    assert_eq!(one_index["bound"], 2.0);
    assert_eq!(one_index["comparison"], "<=");
    assert!(one_index["measured_text"].is_string());
    assert!(one_index["why"].is_string());
}

/// `schemalab exercises grade` over two learners: one with a correct
/// solution, one who never touched the starter; a fixed seed set, a
/// table, JSON and CSV; the learners' progress is not touched.
#[test]
fn exercises_grade_grades_many_workspaces_on_fixed_seeds() {
    let ex = exercise("spec-search", Lang::En);
    let good = workspace();
    let idle = workspace();
    std::fs::write(
        good.path().join("spec-search/solution.js"),
        ex.read(ex.spec.alternatives[0].get_ref()).unwrap(),
    )
    .unwrap();
    let (g, i) = (
        good.path().display().to_string(),
        idle.path().display().to_string(),
    );
    let args = [
        "exercises",
        "grade",
        &g,
        &i,
        "--exercise",
        "spec-search",
        "--seeds",
        "2,5",
    ];
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let out = schemalab_in(&root(), &[], &json_args);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["seeds"], serde_json::json!([2, 5]));
    let learners = json["learners"].as_array().unwrap();
    assert_eq!(learners.len(), 2);
    let good_row = &learners[0]["exercises"][0];
    assert_eq!(good_row["verdict"], "passed", "{good_row}");
    assert_eq!(good_row["seeds_passed"], 2);
    assert_eq!(good_row["checks_passed"], good_row["checks_total"]);
    let idle_row = &learners[1]["exercises"][0];
    assert_eq!(idle_row["verdict"], "untouched");
    assert_eq!(idle_row["passed"], false);
    assert_eq!(learners[0]["passed"], 1);
    assert_eq!(learners[1]["passed"], 0);

    let mut csv_args = args.to_vec();
    csv_args.push("--csv");
    let csv = schemalab_in(&root(), &[], &csv_args);
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", csv.stdout);
    assert!(lines[0].starts_with("learner,workspace,exercise,verdict"));
    assert!(
        lines[1].contains(",spec-search,passed,2,2,"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains(",spec-search,untouched,0,2,"),
        "{}",
        lines[2]
    );

    let table = schemalab_in(&root(), &[], &args);
    assert!(
        table.stdout.contains("1/1 exercises passed"),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("0/1 exercises passed"),
        "{}",
        table.stdout
    );
    // Grading is not an attempt of the learner's.
    assert!(!good.path().join(".progress.toml").exists());

    // Only the good learner: everyone passed, exit 0.
    let alone = schemalab_in(
        &root(),
        &[],
        &[
            "exercises",
            "grade",
            &g,
            "--exercise",
            "spec-search",
            "--seeds",
            "3",
        ],
    );
    assert_eq!(alone.code, 0, "{}{}", alone.stdout, alone.stderr);
    // An exercise the course does not have stops grading: exit 2.
    let unknown = schemalab_in(
        &root(),
        &[],
        &["exercises", "grade", &g, "--exercise", "no-such-exercise"],
    );
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(unknown.stderr.contains("no exercise 'no-such-exercise'"));
}

/// `shell --exercise` loads the exercise's data into the learner's
/// database and binds the parameters drawn with the seed, the same values
/// a check with that seed draws.
#[test]
fn shell_exercise_loads_the_data_and_binds_the_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("probe.js");
    std::fs::write(
        &script,
        "print(db.getName(), typeof ramMin !== 'undefined', db.products.countDocuments({}) > 0)\n",
    )
    .unwrap();
    let script = script.display().to_string();
    let out = schemalab_in(
        &root(),
        &[],
        &[
            "shell",
            "--exercise",
            "spec-search",
            "--seed",
            "6",
            "--file",
            &script,
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "schemalab_ex_spec-search true true");
    assert!(out.stderr.contains("seed 6"), "{}", out.stderr);
    // The values are a check's with that seed.
    let ws = workspace();
    let check = run(
        ws.path(),
        &["check", "spec-search", "--seed", "6", "--json"],
    );
    let json: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    for p in json["params"].as_array().unwrap() {
        let line = format!("  {} = {}", p[0].as_str().unwrap(), p[1].as_str().unwrap());
        assert!(out.stderr.contains(&line), "{line} in:\n{}", out.stderr);
    }
    let unknown = schemalab_in(
        &root(),
        &[],
        &["shell", "--exercise", "nope", "--file", &script],
    );
    assert_eq!(unknown.code, 1);
    assert!(
        unknown.stderr.contains("no exercise 'nope'"),
        "{}",
        unknown.stderr
    );
}

/// `watch` with no exercise checks nothing before a file changes, so it
/// counts no attempt on an exercise it did not check.
#[test]
fn watch_without_an_exercise_counts_no_attempt_before_a_save() {
    let ws = workspace();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_schemalab"))
        .current_dir(root())
        .args(["watch", "--dir", &ws.path().display().to_string()])
        .env("RUST_BACKTRACE", "0")
        .env("TERM", "dumb")
        .env_remove("MONGODB_URI")
        .env_remove("LANG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let done = line.starts_with("watching ");
        seen.push(line);
        if done {
            break;
        }
    }
    child.kill().unwrap();
    let _ = child.wait();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(
        seen.iter().any(|l| l.starts_with("next unfinished: ")),
        "{seen:?}"
    );
    assert!(!stdout.contains("checks pass"), "{stdout}");
    assert!(!ws.path().join(".progress.toml").exists());
}

/// A solution that is not UTF-8 is named at the line and column of its
/// first bad byte, and nothing is graded (exit 2).
#[test]
fn a_solution_that_is_not_utf8_is_named_at_its_place() {
    let ws = workspace();
    std::fs::write(
        ws.path().join("spec-search/solution.js"),
        b"// setup\ndb.a.fi\xffnd()\n".as_slice(),
    )
    .unwrap();
    let out = run(ws.path(), &["check", "spec-search"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("solution.js:2:8: not UTF-8 text (byte 0xff)"),
        "{}",
        out.stderr
    );
}

/// A progress file that cannot be written (a full disk, here a folder in
/// its place) does not lose the report: the checklist is printed, with a
/// line saying the attempt was not recorded, and the exit code is the
/// verdict's.
#[test]
fn the_report_is_shown_when_progress_cannot_be_saved() {
    let ws = workspace();
    std::fs::create_dir_all(ws.path().join(".progress.toml/blocked")).unwrap();
    let out = run(ws.path(), &["check", "spec-search", "--seed", "1"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("checks pass"), "{}", out.stdout);
    assert!(out.stdout.contains("progress not saved"), "{}", out.stdout);
}

/// A TCP relay to a server that cuts every connection, and answers no
/// new one, as soon as a client sends `marker`: a server that dies in the
/// middle of a check, at a point the test chooses.
struct DyingRelay {
    port: u16,
    dead: Arc<AtomicBool>,
}

impl DyingRelay {
    fn start(upstream: String, marker: &'static [u8]) -> DyingRelay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let dead = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let d = dead.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if d.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                open.lock().unwrap().push(client.try_clone().unwrap());
                open.lock().unwrap().push(server.try_clone().unwrap());
                let (mut c_read, mut s_write) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (mut s_read, mut c_write) = (server, client);
                let (d2, open2) = (d.clone(), open.clone());
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n) = c_read.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        if buf[..n].windows(marker.len()).any(|w| w == marker) {
                            d2.store(true, Ordering::SeqCst);
                            for s in open2.lock().unwrap().iter() {
                                let _ = s.shutdown(Shutdown::Both);
                            }
                            break;
                        }
                        if s_write.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                });
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut s_read, &mut c_write);
                });
            }
        });
        DyingRelay { port, dead }
    }
}

/// A server that dies mid-check stops the check at the first failure:
/// exit 2 with the reason, no checklist, and none of the knock-on
/// failures (a ReferenceError of a later section) graded as the
/// learner's.
#[test]
fn a_server_that_dies_mid_check_stops_it_with_exit_2_and_grades_nothing() {
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let uri = server.uri();
    let upstream = uri
        .trim_start_matches("mongodb://")
        .split(['/', '?'])
        .next()
        .unwrap()
        .to_string();
    let relay = DyingRelay::start(upstream, b"relay_dies_here");
    let ex = exercise("spec-search", Lang::En);
    let reference = ex.read(ex.spec.reference.get_ref()).unwrap();
    // The server dies while the `by_ram` section runs.
    let solution = reference.replace(
        "// @op by_ram\n",
        "// @op by_ram\ndb.relay_dies_here.findOne()\n",
    );
    assert_ne!(solution, reference);
    let ws = workspace();
    std::fs::write(ws.path().join("spec-search/solution.js"), solution).unwrap();
    let uri = format!(
        "mongodb://127.0.0.1:{}/?serverSelectionTimeoutMS=1500&directConnection=true",
        relay.port
    );
    let out = run(
        ws.path(),
        &["check", "spec-search", "--seed", "3", "--uri", &uri],
    );
    assert!(
        relay.dead.load(Ordering::SeqCst),
        "the marker was never sent: {}\n{}",
        out.stdout,
        out.stderr
    );
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("the server stopped answering while solution.js section 'by_ram' ran"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("nothing was graded"), "{}", out.stderr);
    assert!(!out.stdout.contains("checks pass"), "{}", out.stdout);
    assert!(!out.stderr.contains("ReferenceError"), "{}", out.stderr);
    // Nothing was recorded as an attempt.
    assert!(!ws.path().join(".progress.toml").exists());
}

/// Grading many solutions against one reference measures the reference's
/// side of a seed once: a second check of the seed leaves the reference's
/// database as the first left it (a fresh check drops and reloads it), and
/// its verdicts are those of a fresh check, check by check.
#[test]
fn the_reference_is_measured_once_per_seed_for_many_solutions() {
    let ex = exercise("host-logs", Lang::En);
    let (_server, rt, client) = crate::support::served();
    let loader = CatalogLoader::for_course(root()).unwrap();
    let refs = exercises::ReferenceSides::new();
    let check = |file: &str, references| {
        let opts = CheckOptions {
            names: Default::default(),
            scale: None,
            seed: 5,
            loader: &loader,
            references,
        };
        let sol = ex.read(file).unwrap();
        rt.block_on(exercises::check_exercise(&client, &ex, &sol, None, &opts))
            .unwrap()
    };
    let verdicts = |r: &exercises::CheckReport| {
        r.results
            .iter()
            .map(|c| (c.id.clone(), c.passed, c.measured_num))
            .collect::<Vec<_>>()
    };
    let marker = client
        .database(&schemalab::course::DbNames::default().exercise_ref(&ex.id))
        .collection::<bson::Document>("marker");
    let count = |c: &mongodb::Collection<bson::Document>| {
        rt.block_on(c.count_documents(bson::doc! {}).into_future())
            .unwrap()
    };

    let first = check("wrong-oldest-first.js", Some(&refs));
    assert!(!first.passed());
    rt.block_on(marker.insert_one(bson::doc! {"left": "here"}).into_future())
        .unwrap();
    let kept = check("wrong-oldest-first.js", Some(&refs));
    assert_eq!(count(&marker), 1, "the kept reference was measured again");
    let fresh = check("wrong-oldest-first.js", None);
    assert_eq!(count(&marker), 0, "a fresh check reloads the reference");
    assert_eq!(verdicts(&kept), verdicts(&fresh));
    assert_eq!(verdicts(&first), verdicts(&fresh));
    // The reference itself passes against its kept side.
    assert!(check("reference.js", Some(&refs)).passed());
}

/// With a learner's names a check writes only that learner's two
/// databases (`schemalab_<learner>_ex_<id>` and its `_ref`), and grades
/// as it does without them.
#[test]
fn a_learner_s_check_writes_only_their_own_databases() {
    let ex = exercise("spec-search", Lang::En);
    let (_server, rt, client) = crate::support::served();
    let loader = CatalogLoader::for_course(root()).unwrap();
    let names = schemalab::course::DbNames::for_learner(Some("alice")).unwrap();
    let opts = CheckOptions {
        names: names.clone(),
        scale: None,
        seed: 4,
        loader: &loader,
        references: None,
    };
    let reference = ex.read(ex.spec.reference.get_ref()).unwrap();
    let r = rt
        .block_on(exercises::check_exercise(
            &client, &ex, &reference, None, &opts,
        ))
        .unwrap();
    assert!(r.passed(), "{}", r.render());
    let dbs = rt
        .block_on(async { client.list_database_names().await })
        .unwrap();
    let ours: Vec<&String> = dbs.iter().filter(|d| d.starts_with("schemalab_")).collect();
    assert!(ours.contains(&&names.exercise(&ex.id)), "{dbs:?}");
    assert!(ours.contains(&&names.exercise_ref(&ex.id)), "{dbs:?}");
    assert!(
        ours.iter().all(|d| d.starts_with("schemalab_alice_")),
        "{dbs:?}"
    );
}

/// Three checks of one exercise at once against one server (three
/// terminals of a class): each has its own databases, so each grades its
/// own correct solution as passed, and none is left behind.
#[test]
fn concurrent_checks_on_one_server_do_not_share_databases() {
    let ex = exercise("spec-search", Lang::En);
    let reference = ex.read(ex.spec.reference.get_ref()).unwrap();
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let uri = server.uri();
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| workspace()).collect();
    let children: Vec<std::process::Child> = dirs
        .iter()
        .map(|d| {
            std::fs::write(d.path().join("spec-search/solution.js"), &reference).unwrap();
            std::process::Command::new(env!("CARGO_BIN_EXE_schemalab"))
                .current_dir(root())
                .args([
                    "check",
                    "spec-search",
                    "--seed",
                    "4",
                    "--uri",
                    &uri,
                    "--dir",
                ])
                .arg(d.path())
                .env_remove("MONGODB_URI")
                .env_remove("LANG")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let left = rt
        .block_on(async {
            let client = mongodb::Client::with_uri_str(&uri).await?;
            client.list_database_names().await
        })
        .unwrap();
    assert!(
        !left.iter().any(|d| d.starts_with("schemalab_ex_")),
        "{left:?}"
    );
}
