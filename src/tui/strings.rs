//! Every piece of text the TUI shows, in one place, so wording stays
//! consistent and can be reviewed (or translated) without reading screens.
//! Each constant is the English text and the key of its translation
//! (`src/locale/zh-CN.toml`); screens show [`t`]`(X)`, the text in the
//! interface's language, which [`set_lang`] chooses for the thread that
//! draws (the TUI's own thread; each test its own).

use std::cell::Cell;

use crate::locale::Lang;

thread_local! {
    static LANG: Cell<Lang> = const { Cell::new(Lang::En) };
}

/// Choose the interface's language for this thread.
pub fn set_lang(lang: Lang) {
    LANG.with(|l| l.set(lang));
}

/// The interface's language on this thread.
pub fn lang() -> Lang {
    LANG.with(Cell::get)
}

/// `msgid` (one of this module's texts) in the interface's language.
pub fn t(msgid: &'static str) -> &'static str {
    lang().t(msgid)
}

pub const APP: &str = "schemalab";
pub const EMBEDDED_ENGINE: &str = "embedded engine · sizes modelled";
/// The status bar's label of a real server.
pub const SERVER_LABEL: &str = "MongoDB {version} at {host}";
/// The server did not answer the status bar's probe in time.
pub const CONNECT_TIMED_OUT: &str = "timed out";
pub const CONNECTING: &str = "connecting…";
pub const CONNECTED: &str = "connected";
pub const DISCONNECTED: &str = "not connected";
pub const TOO_SMALL: &str = "terminal too small (need 80×24)";
pub const MODELLED: &str = "modelled";
pub const PRESS_R_TO_MEASURE: &str = "press r to measure";

pub const OUTLINE_TITLE: &str = "Course";
pub const OUTLINE_EMPTY: &str = "No lessons found.";
pub const OUTLINE_HINT: &str =
    "Type a lesson's number to jump to it, Enter to read, r to run its experiment.";
pub const SEARCH_PROMPT: &str = "search: ";
pub const NO_EXPERIMENT: &str = "This lesson has no experiment.";
pub const LESSON_BROKEN: &str =
    "This lesson's files did not load (`schemalab lint` lists every problem):";
pub const MARK_BROKEN: &str = "✗";
pub const MARK_DONE: &str = "✓";
pub const MARK_SEEN: &str = "•";
pub const MARK_NONE: &str = " ";

pub const READER_NEXT_SECTION: &str = "── press space to reveal the next section ──";

pub const EXP_NOT_RUN: &str = "Not run yet: press r to run this experiment.";
pub const EXP_RUNNING: &str = "running";
pub const EXP_CANCELLED: &str = "Run cancelled.";
pub const EXP_FAILED: &str = "Run failed";
/// The experiment to run was removed from the lesson since it loaded.
pub const EXPERIMENT_GONE: &str = "lesson '{lesson}' has no experiment '{experiment}' any more";
/// A failed variant in its column (`{problem}`: why, as the report says).
pub const VARIANT_FAILED: &str = "FAILED: {problem}";
pub const TAB_OPERATIONS: &str = "Operations";
pub const TAB_COLLECTIONS: &str = "Collections";
pub const TAB_SAMPLES: &str = "Samples";
pub const TAB_CLAIMS: &str = "Claims";
pub const OPERATIONS: &str = "Workload";
/// The last entry of the workload list: the whole experiment's figures.
pub const SUMMARY_ITEM: &str = "Σ summary";
/// The heading of the summary pane.
pub const SUMMARY_TITLE: &str = "The whole experiment: sizes and cost per 100 requests";
/// Under the summary's table when a variant is recommended.
pub const RECOMMENDED_LEGEND: &str = "◆ = the design this lesson recommends.";
pub const STAGES: &str = "stages";
pub const INDEX: &str = "index";
pub const NO_INDEX: &str = "none (collection scan)";
pub const RETURNED: &str = "returned";
pub const KEYS_EXAMINED: &str = "keys examined";
pub const DOCS_EXAMINED: &str = "docs examined";
pub const BYTES_RETURNED: &str = "bytes returned";
pub const BYTES_EXAMINED: &str = "bytes examined";
pub const BYTES_READ_INTO_CACHE: &str = "read into cache";
pub const KEYS_INSERTED: &str = "keys inserted";
pub const KEYS_DELETED: &str = "keys deleted";
pub const NOT_REPORTED: &str = "not reported";
pub const RATIO: &str = "exam:returned";
pub const TIME: &str = "time (ms)";
pub const WRITE_N: &str = "n";
pub const WRITE_MODIFIED: &str = "nModified";
pub const WRITE_ERROR: &str = "error";
pub const NOT_MEASURED: &str = "not measured";
pub const TIME_CAVEAT: &str = "Times vary run to run: counts are the figures to trust; a time wins only when all its runs beat all of the others'.";
pub const DATA_SIZE: &str = "data";
pub const STORAGE_SIZE: &str = "storage";
pub const DOCUMENTS: &str = "documents";
pub const AVG_SIZE: &str = "avg doc";
pub const MAX_SIZE: &str = "max doc";
pub const NO_SAMPLES: &str = "No sample documents.";
pub const FOLDED: &str = "folded: f to unfold";
pub const CLAIM_PASS: &str = "✓ pass";
pub const CLAIM_FAIL: &str = "✗ fail";
pub const NO_CLAIMS: &str = "No claims.";

pub const EXPLAIN_TITLE: &str = "Explain";
pub const EXPLAIN_NONE: &str = "No explain output for this operation (a write, or not run).";
pub const EXPLAIN_HEAVIEST: &str = "◀ heaviest";
pub const EXPLAIN_RAW: &str = "raw explain (as mongosh prints it)";
pub const EXPLAIN_RULE: &str =
    "◀ heaviest = most keys + docs examined by the stage itself, ties to the deeper stage";
pub const EXPLAIN_ABBREV: &str = "r returned, k keys, d docs examined";
pub const NODE_FIGURES: &str = "returned {n} · keys {keys} · docs {docs} · {ms} ms";
pub const NODE_FIGURES_SHORT: &str = "r {n} k {keys} d {docs} {ms}ms";
pub const EXPLAIN_TOTALS: &str = "examined: {keys} keys, {docs} docs";
pub const EXPLAIN_TOTALS_SHORT: &str = "Σ k {keys} d {docs}";
pub const SHARE: &str = "share";
pub const INDEX_BOUNDS: &str = "index bounds";
pub const NO_INDEX_USED: &str = "none";

pub const SHELL_TITLE: &str = "Shell";
pub const SHELL_HINT: &str =
    "mongosh JavaScript, against the lesson's databases. Try: show collections";
pub const SHELL_BUSY: &str = "running…";

pub const HELP_TITLE: &str = "Keys (any key closes)";
pub const RUNNER_MISSING: &str = "The experiment runner is not available in this build.";

// Footer and help labels.
pub const K_QUIT: &str = "quit";
pub const K_HELP: &str = "help";
pub const K_MOVE: &str = "move";
pub const K_OPEN: &str = "open";
pub const K_JUMP: &str = "jump to lesson";
pub const K_SEARCH: &str = "search";
pub const K_RUN: &str = "run";
pub const K_CANCEL: &str = "cancel run";
pub const K_SCALE: &str = "scale";
pub const K_SHELL: &str = "shell";
pub const K_BACK: &str = "back";
pub const K_SCROLL: &str = "scroll";
pub const K_SECTION: &str = "section";
pub const K_REVEAL: &str = "reveal";
pub const K_RESULTS: &str = "results";
pub const K_TAB: &str = "next tab";
pub const K_EXPLAIN: &str = "explain";
pub const K_SIDE: &str = "side";
pub const K_RAW: &str = "raw JSON";
pub const K_OPERATION: &str = "operation";
pub const K_FOLD: &str = "fold";
pub const K_SEND: &str = "run statement";
pub const K_HISTORY: &str = "history";
pub const K_CLEAR: &str = "clear search";
pub const K_VARIANT: &str = "next variant";

/// The status bar's dataset scale.
pub fn scale_label(scale: crate::course::Scale) -> String {
    lang().f("scale: {scale}", &[("scale", &scale.as_str())])
}

pub fn factor(f: f64) -> String {
    if f >= 10.0 {
        format!("{f:.0}×")
    } else {
        format!("{f:.1}×")
    }
}

pub const STARTUP_ERROR_TITLE: &str = " schemalab cannot open the course ";
pub const STARTUP_ERROR_LEAD: &str =
    "The course files have problems (the same ones `schemalab lint` reports):";
pub const STARTUP_ERROR_HINT: &str =
    "Fix them and start schemalab again; `schemalab lint` lists them too.";
pub const STARTUP_ERROR_KEYS: &str = " q / Esc / Enter  quit";
pub const EXERCISES_TITLE: &str = "Exercises";
pub const EXERCISES_EMPTY: &str = "No exercises in this course.";
pub const EXERCISE_TRIED: &str = "✗";
pub const EXERCISE_EDIT: &str = "edit";
pub const EXERCISE_LESSON: &str = "lesson";
pub const EXERCISE_ATTEMPTS: &str = "attempts";
pub const EXERCISE_HINTS: &str = "hints";
pub const EXERCISE_HINT: &str = "hint";
pub const EXERCISE_CHECKING: &str = "checking…";
pub const EXERCISE_WATCHING: &str = "watching: every save re-checks";
pub const EXERCISE_PASSED: &str = "Passed: `schemalab solution <id>` shows the reference.";
pub const K_EXERCISES: &str = "exercises";
pub const K_CHECK: &str = "check";
pub const K_WATCH: &str = "watch";
pub const K_HINT: &str = "hint";

// Presenter view, stale results, legends and indicators (issue 13 §3, §5).
pub const FAILED_SHORT: &str = "failed";
pub const DATA_SIZE_TOTAL: &str = "data size";
pub const STORAGE_SIZE_TOTAL: &str = "storage size";
pub const INDEX_SIZE_TOTAL: &str = "index size";
pub const LEGEND_RECOMMENDED: &str = "◆ = the variant the lesson recommends.";
pub const PRESENT_LEGEND: &str =
    "★ lowest cost in its row (×N: N times lower than the highest) · ◆ recommended";
pub const PRESENT_OPERATION: &str = "operation {n}/{total}";
pub const PRESENT_SIZES: &str = "sizes";
pub const PRESENT_CLAIM: &str = "claim {n}/{total}";
pub const PRESENT_ENGINE: &str = "engine: {engine} · {scale}";
pub const PRESENT_NO_CLAIMS: &str = "This experiment states no claims.";
pub const CLAIM_HOLDS: &str = "✓ holds";
pub const CLAIM_FAILS: &str = "✗ does not hold";
pub const EXPERIMENT_N: &str = "experiment {n}/{total}";
pub const STALE: &str = "⚠ stale: measured at {ran}, now {now} (r re-runs)";
pub const STALE_MARK: &str = "⚠ stale";
pub const STALE_LEGEND: &str =
    "⚠ stale = measured at another scale than the one now chosen; r re-runs.";
pub const OUTLINE_LEGEND: &str =
    "✓ run · • opened · ✗ does not load · 3/4 claims held in its last run";
pub const K_NEXT: &str = "next";
pub const K_PREVIOUS: &str = "previous";
pub const K_CLAIMS: &str = "operations ⇄ claims";
pub const K_EXPERIMENT: &str = "experiment";
pub const K_VARIANT_FOCUS: &str = "variant";
pub const PRESENTER_TITLE: &str = "Presenter";
