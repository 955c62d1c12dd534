//! End to end: the built binary in a pseudo-terminal (tmux on a private
//! socket), driven by keystrokes as a learner types them: `-` (the tiny
//! scale), `1` `0` (lesson 10, the bucket pattern), `r` (run its
//! experiment on the embedded engine). The comparison must appear with a
//! winner marked; Enter must open both variants' explain trees side by
//! side; the shell pane must run statements in the variant's database and
//! tab must move it to the other variant's; with `--present` the
//! comparison must come as big numbers one operation at a time, step to
//! the claims and be marked stale after a scale change; `q` must exit.
//!
//! Skips (saying so) only when tmux is missing: a binary that prints its
//! usage, a missing lesson, a refused explain or a failed run fail.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap()
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "e2e"]).stdout).into_owned()
    }

    /// The pane including its scrollback (a usage message scrolls off).
    fn history(&self) -> String {
        String::from_utf8_lossy(
            &self
                .cmd(&["capture-pane", "-p", "-S", "-", "-t", "e2e"])
                .stdout,
        )
        .into_owned()
    }

    fn alive(&self) -> bool {
        self.cmd(&["has-session", "-t", "e2e"]).status.success()
    }

    /// Polls the pane until `want` holds or `limit` passes.
    fn wait_for(&self, limit: Duration, want: impl Fn(&str) -> bool) -> Option<String> {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            // A capture can catch the terminal mid-redraw: take a screen
            // only once it holds and the next capture shows it unchanged.
            if want(&screen) && self.screen() == screen {
                return Some(screen);
            }
            if start.elapsed() > limit || !self.alive() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// The binary started in a 100×30 tmux pane with `args`, showing the
/// outline; `None` when tmux is not installed.
fn start(name: &str, args: &[&str]) -> Option<(Tmux, tempfile::TempDir)> {
    if Command::new("tmux").arg("-V").output().is_err() {
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_schemalab");
    let tmux = Tmux {
        socket: format!("schemalab-e2e-{name}-{}", std::process::id()),
    };
    let shell_cmd = format!(
        "cd '{}' && XDG_DATA_HOME='{}' HOME='{}' '{}' {}; sleep 5",
        root.display(),
        data.path().display(),
        data.path().display(),
        bin,
        args.join(" ")
    );
    let started = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "e2e",
        "-x",
        "100",
        "-y",
        "30",
        &shell_cmd,
    ]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let first = tmux
        .wait_for(Duration::from_secs(30), |s| s.contains("jump to lesson"))
        .unwrap_or_else(|| {
            panic!(
                "the TUI did not open (a usage message or an error instead):\n{}",
                tmux.history()
            )
        });
    assert!(
        first.contains("0-9") && first.contains("The bucket pattern"),
        "the outline lists the lessons and the footer the keys:\n{first}"
    );
    Some((tmux, data))
}

impl Tmux {
    fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.cmd(&["send-keys", "-t", "e2e", key]);
        }
    }

    /// Types `text` literally, then Enter.
    fn line(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "e2e", "-l", text]);
        self.cmd(&["send-keys", "-t", "e2e", "Enter"]);
    }

    fn expect(&self, what: &str, limit: Duration, want: impl Fn(&str) -> bool) -> String {
        self.wait_for(limit, want)
            .unwrap_or_else(|| panic!("{what}:\n{}", self.screen()))
    }

    /// `q` leaves the TUI: the pane no longer shows it.
    fn quit(&self, marker: &str) {
        self.keys(&["q"]);
        let exited = self.wait_for(Duration::from_secs(10), |s| !s.contains(marker));
        assert!(exited.is_some() || !self.alive(), "q leaves the TUI");
    }
}

/// The learner's path: run, compare, explain side by side, the shell pane
/// on each variant's database.
#[test]
fn run_bucket_compare_explain_and_query_each_variant() {
    let Some((tmux, _data)) = start("learner", &[]) else {
        eprintln!("skipped: tmux is not installed, so there is no pseudo-terminal to drive");
        return;
    };
    tmux.keys(&["-", "1", "0", "r"]);
    let screen = tmux.expect("no comparison on screen", Duration::from_secs(240), |s| {
        s.contains("keys examined") || s.contains("Run failed") || s.contains("not available")
    });
    assert!(!screen.contains("Run failed"), "{screen}");
    assert!(screen.contains("The bucket pattern"), "{screen}");
    assert!(screen.contains("scale: tiny"), "{screen}");
    // The table: one row per figure, the winner of a row starred.
    let row = screen
        .lines()
        .find(|l| l.contains("docs examined"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(row.contains("120") && row.contains("★ ×120"), "{row}");
    // Enter opens the explain trees of the measured read, side by side at
    // 100 columns, every node with its counters, one marked heaviest.
    tmux.keys(&["Enter"]);
    let tree = tmux.expect("no explain tree", Duration::from_secs(10), |s| {
        s.contains("Explain ·")
    });
    assert!(!tree.contains("No explain output"), "{tree}");
    assert!(
        tree.contains("IXSCAN sensor_id_1_ts_1") && tree.contains("IXSCAN sensor_id_1_start_1"),
        "both variants' trees side by side:\n{tree}"
    );
    assert!(tree.contains("returned 120 · keys 120"), "{tree}");
    assert!(tree.contains("returned 1 ·"), "{tree}");
    assert_eq!(
        tree.matches("◀ heaviest").count(),
        3,
        "one mark per tree and the legend:\n{tree}"
    );
    // The raw toggle shows mongosh's notation; another variant, the tree.
    tmux.keys(&["t"]);
    let raw = tmux.expect("no raw explain", Duration::from_secs(10), |s| {
        s.contains("explainVersion: '1'")
    });
    assert!(raw.contains("raw explain"), "{raw}");
    tmux.keys(&["l"]);
    tmux.expect("raw view not reset", Duration::from_secs(10), |s| {
        s.contains("IXSCAN sensor_id_1_start_1") && !s.contains("explainVersion")
    });
    // The shell pane starts in the first variant's database, which the run
    // filled: `readings` is there, `buckets` is not.
    tmux.keys(&["Escape", "s"]);
    tmux.expect("no shell pane", Duration::from_secs(10), |s| {
        s.contains("schemalab_bucket_naive>")
    });
    tmux.line("show collections");
    let naive = tmux.expect(
        "show collections gave nothing",
        Duration::from_secs(20),
        |s| {
            s.lines()
                .any(|l| l.trim_matches(|c| c == '│' || c == ' ') == "readings")
        },
    );
    assert!(
        !naive
            .lines()
            .any(|l| l.trim_matches(|c| c == '│' || c == ' ') == "buckets"),
        "{naive}"
    );
    // Tab moves it to the bucket variant's database.
    tmux.keys(&["Tab"]);
    tmux.expect(
        "tab did not switch the variant",
        Duration::from_secs(10),
        |s| s.contains("now in schemalab_bucket_bucket"),
    );
    tmux.line("show collections");
    let bucket = tmux.expect(
        "the bucket database's collections did not show",
        Duration::from_secs(20),
        |s| {
            s.lines()
                .any(|l| l.trim_matches(|c| c == '│' || c == ' ') == "buckets")
        },
    );
    assert!(
        bucket.contains("schemalab_bucket_bucket> show collections"),
        "{bucket}"
    );
    tmux.keys(&["Escape"]);
    tmux.quit("keys examined");
}

/// The instructor's path: `--present`, the comparison as big numbers, one
/// operation at a time, then the claims; stale after `+`.
#[test]
fn presenter_mode_projects_the_comparison() {
    let Some((tmux, _data)) = start("presenter", &["--present"]) else {
        eprintln!("skipped: tmux is not installed, so there is no pseudo-terminal to drive");
        return;
    };
    tmux.keys(&["-", "1", "0", "r"]);
    let slide = tmux.expect("no presenter comparison", Duration::from_secs(240), |s| {
        s.contains("operation 1/7") && s.contains("engine:") || s.contains("Run failed")
    });
    assert!(!slide.contains("Run failed"), "{slide}");
    // Big numbers (quadrant glyphs), the winner starred, the engine named.
    assert!(slide.contains('▀') && slide.contains('★'), "{slide}");
    assert!(
        slide.contains("docs examined") && slide.contains("◆ bucket"),
        "{slide}"
    );
    assert!(!slide.contains("stale"), "{slide}");
    tmux.keys(&["Space"]);
    tmux.expect("space did not step", Duration::from_secs(10), |s| {
        s.contains("operation 2/7")
    });
    tmux.keys(&["Tab"]);
    let claim = tmux.expect(
        "tab did not reach the claims",
        Duration::from_secs(10),
        |s| s.contains("claim 1/"),
    );
    assert!(
        claim.contains("✓ holds") || claim.contains("✗ does not hold"),
        "{claim}"
    );
    tmux.keys(&["+"]);
    tmux.expect("no stale mark after +", Duration::from_secs(10), |s| {
        s.contains("stale: measured at tiny, now default")
    });
    tmux.quit("engine:");
}
