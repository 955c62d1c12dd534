//! The exercise workspace writes only inside itself and loses nothing:
//! symlinks planted in it are replaced, not written through; a dangling
//! one is left alone by `init`; every `reset` keeps a new backup; files
//! that are not regular (a FIFO, `/dev/zero`) are refused instead of
//! blocking or filling the memory; a progress file that claims more hints
//! than there are does not panic `hint`.

use crate::support::{cli::schemalab_in, root};
use schemalab::exercises::{self, Workspace};
use schemalab::locale::Lang;

fn workspace() -> (tempfile::TempDir, Workspace, Vec<exercises::Exercise>) {
    let all = exercises::exercises(root(), Lang::En).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace {
        dir: tmp.path().join("ws"),
    };
    ws.init(&all).unwrap();
    (tmp, ws, all)
}

#[cfg(unix)]
#[test]
fn reset_and_progress_never_write_through_a_symlink_and_keep_every_backup() {
    let (tmp, ws, all) = workspace();
    let ex = &all[0];
    let outside = tmp.path().join("outside.txt");
    std::fs::write(&outside, "precious").unwrap();
    let sol = ws.solution_path(&ex.id);
    std::fs::remove_file(&sol).unwrap();
    std::os::unix::fs::symlink(&outside, &sol).unwrap();
    ws.reset(ex).unwrap();
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    assert!(!std::fs::symlink_metadata(&sol).unwrap().is_symlink());

    // Two resets keep two backups: the learner's work and the starter.
    std::fs::write(&sol, "// my work\n").unwrap();
    ws.reset(ex).unwrap();
    ws.reset(ex).unwrap();
    let bak = |s: &str| std::fs::read_to_string(sol.with_file_name(format!("solution.js{s}")));
    assert_eq!(bak(".bak").unwrap(), "// my work\n");
    assert_ne!(bak(".bak.2").unwrap(), "// my work\n");

    // The progress file behind a symlink (to a file that reads as an empty
    // progress): replaced, the target untouched.
    let elsewhere = tmp.path().join("elsewhere.toml");
    std::fs::write(&elsewhere, "# precious\n").unwrap();
    let progress = ws.dir.join(".progress.toml");
    let _ = std::fs::remove_file(&progress);
    std::os::unix::fs::symlink(&elsewhere, &progress).unwrap();
    ws.record_check(&ex.id, false, 1).unwrap();
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "# precious\n");
    assert!(!std::fs::symlink_metadata(&progress).unwrap().is_symlink());
}

#[cfg(unix)]
#[test]
fn init_leaves_a_dangling_symlink_and_creates_nothing_outside() {
    let all = exercises::exercises(root(), Lang::En).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace {
        dir: tmp.path().join("ws"),
    };
    let dir = ws.solution_path(&all[0].id);
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    let target = tmp.path().join("created-outside.js");
    std::os::unix::fs::symlink(&target, &dir).unwrap();
    let written = ws.init(&all).unwrap();
    assert!(!written.contains(&dir));
    assert!(!target.exists());
}

#[test]
fn more_hints_used_than_there_are_shows_them_all() {
    let (_tmp, ws, all) = workspace();
    let ex = &all[0];
    let id = &ex.id;
    std::fs::write(
        ws.dir.join(".progress.toml"),
        format!("[exercises.{id}]\nhints_used = 99\n"),
    )
    .unwrap();
    let (shown, total) = ws.next_hint(ex).unwrap();
    assert_eq!(shown.len(), total);
    let out = schemalab_in(
        &root(),
        &[],
        &["hint", id, "--dir", &ws.dir.display().to_string()],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn a_solution_that_is_not_a_regular_file_is_refused_at_once() {
    let (_tmp, ws, all) = workspace();
    let ex = &all[0];
    let sol = ws.solution_path(&ex.id);
    std::fs::remove_file(&sol).unwrap();
    // A FIFO nobody writes to (reading it used to block `check` forever),
    // then a device that never ends (reading it filled the memory).
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &sol,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();
    let e = ws.attempt(ex).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
    std::fs::remove_file(&sol).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &sol).unwrap();
    let e = ws.attempt(ex).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

/// A lesson whose setup path leaves its folder is refused, by lint at the
/// place it is named and by the runner, and the file outside is not read.
#[test]
fn a_content_path_that_leaves_its_folder_is_not_read() {
    let dir = crate::support::course_copy();
    let toml = dir.path().join("lessons/10-bucket/lesson.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let escaped = text.replacen(
        "setup = \"naive.setup.js\"",
        "setup = \"../../../../../../etc/passwd\"",
        1,
    );
    assert_ne!(text, escaped);
    std::fs::write(&toml, escaped).unwrap();
    let problems: Vec<String> = schemalab::course::lint(dir.path())
        .iter()
        .map(|e| e.to_string())
        .collect();
    let hit = problems
        .iter()
        .find(|p| p.contains("leaves its folder"))
        .unwrap_or_else(|| panic!("{problems:#?}"));
    assert!(hit.contains("lesson.toml:13:"), "{hit}");
    let course = schemalab::course::Course::load(dir.path(), Lang::En).unwrap();
    let lesson = course.lesson("bucket").unwrap();
    let variant = &lesson.experiments[0].variants[0];
    let e = lesson.setup_text(variant).unwrap_err().to_string();
    assert!(e.contains("leaves its folder"), "{e}");
    assert!(!e.contains("root:"), "{e}");
}
