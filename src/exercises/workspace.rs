//! The learner's workspace: a folder with one sub-folder per exercise
//! (`solution.js`, the prompt, and `answers.toml` where the exercise asks
//! for predictions), a README, and `.progress.toml` (passed, attempts,
//! hints used). `init` never overwrites a learner's file; `reset` keeps a
//! `.bak` of what it replaces.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::manifest::Exercise;
use super::{ExerciseError, io_err};
use crate::files;
use crate::locale::Message;

/// The default workspace folder name.
pub const DEFAULT_DIR: &str = "schemalab-exercises";
/// Marks a folder as a workspace (so commands run inside it find it).
pub const MARKER: &str = ".schemalab-workspace";
const PROGRESS: &str = ".progress.toml";
/// The shell's language reference, copied into the workspace.
pub const SHELL_REFERENCE: &str = "SHELL.md";
const SHELL_MD: &str = include_str!("../../docs/SHELL.md");

/// One exercise's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExProgress {
    #[serde(default)]
    pub passed: bool,
    /// Checks run, never wrapping (it stops at `u32::MAX`).
    #[serde(default)]
    pub attempts: u32,
    /// Checks that failed (they count towards `hints_after`).
    #[serde(default)]
    pub failed: u32,
    #[serde(default)]
    pub hints_used: u32,
    /// The seed of the last check (to repeat it).
    #[serde(default)]
    pub last_seed: Option<u64>,
}

/// Everything kept in `.progress.toml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    #[serde(default)]
    pub exercises: BTreeMap<String, ExProgress>,
}

/// What recording a check did to an exercise's progress.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recorded {
    pub attempts: u32,
    pub hints_used: u32,
    /// Staged hints this failed check revealed (1-based number, text).
    pub revealed: Vec<(usize, String)>,
}

/// A workspace folder.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub dir: PathBuf,
}

/// A row of `schemalab exercises list`.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub lesson: String,
    pub title: String,
    pub progress: ExProgress,
}

impl Workspace {
    /// The workspace at `dir`, or (none given) the current folder when it
    /// is one, else `./schemalab-exercises`.
    pub fn locate(dir: Option<&Path>) -> Workspace {
        let dir = match dir {
            Some(d) => d.to_path_buf(),
            None if Path::new(MARKER).is_file() => PathBuf::from("."),
            None => PathBuf::from(DEFAULT_DIR),
        };
        Workspace { dir }
    }

    /// Whether `init` has run here.
    pub fn exists(&self) -> bool {
        self.dir.join(MARKER).is_file()
    }

    fn require(&self) -> Result<(), ExerciseError> {
        if self.exists() {
            Ok(())
        } else {
            Err(ExerciseError::Invalid(
                Message::new(
                    "{dir} is not an exercises workspace: run `schemalab exercises init` (or pass --dir)",
                )
                .arg("dir", self.dir.display()),
            ))
        }
    }

    /// An exercise's folder.
    pub fn ex_dir(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// The file the learner edits.
    pub fn solution_path(&self, id: &str) -> PathBuf {
        self.ex_dir(id).join("solution.js")
    }

    /// The learner's answers file (exercises with predictions).
    pub fn answers_path(&self, id: &str) -> PathBuf {
        self.ex_dir(id).join("answers.toml")
    }

    /// Create the workspace and every exercise's starter files; files that
    /// exist are left alone. Returns the files written.
    pub fn init(&self, exercises: &[Exercise]) -> Result<Vec<PathBuf>, ExerciseError> {
        self.init_in(exercises, crate::locale::Lang::En)
    }

    /// [`Workspace::init`], the line that links each prompt to the shell's
    /// language reference (`SHELL.md`, written beside the README) in
    /// `lang`.
    pub fn init_in(
        &self,
        exercises: &[Exercise],
        lang: crate::locale::Lang,
    ) -> Result<Vec<PathBuf>, ExerciseError> {
        let mut written = Vec::new();
        std::fs::create_dir_all(&self.dir).map_err(|e| io_err(&self.dir, e))?;
        // Only what is not there is created: a file, a folder or a
        // symlink (dangling or not) in its place is left alone.
        let mut put = |path: PathBuf, text: &str| -> Result<(), ExerciseError> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
            }
            if files::write_new(&path, text.as_bytes()).map_err(|e| io_err(&path, e))? {
                written.push(path);
            }
            Ok(())
        };
        put(
            self.dir.join(MARKER),
            "schemalab exercises workspace, version 1\n",
        )?;
        put(self.dir.join("README.md"), &readme(exercises))?;
        put(self.dir.join(SHELL_REFERENCE), SHELL_MD)?;
        let link = Message::new(
            "The language you write in (mongosh JavaScript, what works and what does not): [{file}](../{file}).",
        )
        .arg("file", SHELL_REFERENCE)
        .render_in(lang);
        for ex in exercises {
            put(
                self.solution_path(&ex.id),
                &ex.read(ex.spec.starter.get_ref())?,
            )?;
            let prompt = ex.prompt_text()?;
            put(
                self.ex_dir(&ex.id).join("PROMPT.md"),
                &format!("{}\n\n{link}\n", prompt.trim_end()),
            )?;
            if let Some(a) = &ex.spec.answers {
                put(self.answers_path(&ex.id), &ex.read(a.starter.get_ref())?)?;
            }
        }
        Ok(written)
    }

    /// Restore an exercise's starter files, keeping the learner's as a
    /// new backup each time (`.bak`, `.bak.2`, …), written atomically in
    /// the workspace (a symlink there is replaced, not followed).
    pub fn reset(&self, ex: &Exercise) -> Result<Vec<PathBuf>, ExerciseError> {
        self.require()?;
        let mut files = vec![(self.solution_path(&ex.id), ex.spec.starter.get_ref())];
        if let Some(a) = &ex.spec.answers {
            files.push((self.answers_path(&ex.id), a.starter.get_ref()));
        }
        let mut out = Vec::new();
        for (path, starter) in files {
            let is_file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
            if is_file {
                files::backup(&path).map_err(|e| io_err(&path, e))?;
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
            }
            files::write_atomic(&path, ex.read(starter)?.as_bytes())
                .map_err(|e| io_err(&path, e))?;
            out.push(path);
        }
        Ok(out)
    }

    /// The learner's solution and answers texts (a file that is not
    /// UTF-8 is named at the line and column of its first bad byte).
    pub fn attempt(&self, ex: &Exercise) -> Result<(String, Option<String>), ExerciseError> {
        self.require()?;
        let sol = read_learner_text(&self.solution_path(&ex.id))?;
        let answers = if ex.spec.answers.is_some() {
            Some(read_learner_text(&self.answers_path(&ex.id))?)
        } else {
            None
        };
        Ok((sol, answers))
    }

    /// Read `.progress.toml` (empty when there is none yet).
    pub fn progress(&self) -> Result<Progress, ExerciseError> {
        let p = self.dir.join(PROGRESS);
        match files::read_text(&p) {
            Ok(t) => toml::from_str(&t).map_err(|e| {
                ExerciseError::Invalid(
                    Message::new("{path}: {message}")
                        .arg("path", p.display())
                        .arg("message", e.message()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Progress::default()),
            Err(e) => Err(io_err(&p, e)),
        }
    }

    fn save(&self, progress: &Progress) -> Result<(), ExerciseError> {
        let p = self.dir.join(PROGRESS);
        let text = toml::to_string(progress)
            .map_err(|e| ExerciseError::Invalid(Message::new("{e}").arg("e", e)))?;
        // Written beside it and renamed over it: an interrupted save never
        // corrupts it, and a symlink in its place is not written through.
        files::write_atomic(&p, text.as_bytes()).map_err(|e| io_err(&p, e))
    }

    /// Forget the progress of exercise `id`, or of every exercise: how
    /// many had any. The learner's files are not touched.
    pub fn forget(&self, id: Option<&str>) -> Result<usize, ExerciseError> {
        let mut p = self.progress()?;
        let before = p.exercises.len();
        match id {
            Some(id) => {
                p.exercises.remove(id);
            }
            None => p.exercises.clear(),
        }
        let forgotten = before - p.exercises.len();
        if forgotten > 0 {
            self.save(&p)?;
        }
        Ok(forgotten)
    }

    /// Record a check's outcome (once passed, an exercise stays passed).
    pub fn record_check(&self, id: &str, passed: bool, seed: u64) -> Result<(), ExerciseError> {
        let mut p = self.progress()?;
        let e = p.exercises.entry(id.to_string()).or_default();
        count_check(e, passed, seed);
        self.save(&p)
    }

    /// Record a check of `ex` and, when it failed past the exercise's
    /// `hints_after`, reveal the next staged hint (counted as used).
    pub fn record_attempt(
        &self,
        ex: &Exercise,
        passed: bool,
        seed: u64,
    ) -> Result<Recorded, ExerciseError> {
        let mut p = self.progress()?;
        let e = p.exercises.entry(ex.id.clone()).or_default();
        count_check(e, passed, seed);
        let mut revealed = Vec::new();
        if let Some(after) = ex.spec.hints_after
            && !passed
            && !e.passed
        {
            let total = ex.spec.hints.len();
            let due = (e.failed.saturating_sub(after) as usize).min(total);
            let used = (e.hints_used as usize).min(total);
            if due > used {
                revealed = (used + 1..=due)
                    .map(|n| (n, ex.spec.hints[n - 1].clone()))
                    .collect();
                e.hints_used = u32::try_from(due).unwrap_or(u32::MAX);
            }
        }
        let recorded = Recorded {
            attempts: e.attempts,
            hints_used: e.hints_used,
            revealed,
        };
        self.save(&p)?;
        Ok(recorded)
    }

    /// Reveal the next hint: returns every hint revealed so far (the last
    /// is the new one) and how many there are.
    pub fn next_hint(&self, ex: &Exercise) -> Result<(Vec<String>, usize), ExerciseError> {
        self.require()?;
        let mut p = self.progress()?;
        let e = p.exercises.entry(ex.id.clone()).or_default();
        let total = ex.spec.hints.len();
        // A progress file may say more hints were used than there are (an
        // exercise lost a hint, or the file was edited): all are shown.
        let used = (e.hints_used as usize).min(total);
        let used = (used + 1).min(total);
        e.hints_used = u32::try_from(used).unwrap_or(u32::MAX);
        let shown = ex.spec.hints[..used].to_vec();
        self.save(&p)?;
        Ok((shown, total))
    }

    /// [`Workspace::solution`] with its heading in `lang` (the explanation
    /// comes translated with the exercise).
    pub fn solution(
        &self,
        ex: &Exercise,
        reveal: bool,
        lang: crate::locale::Lang,
    ) -> Result<String, ExerciseError> {
        let passed = self
            .progress()?
            .exercises
            .get(&ex.id)
            .is_some_and(|e| e.passed);
        if !passed && !reveal {
            return Err(ExerciseError::Locked(
                Message::new(
                    "{id} has not passed yet: `schemalab check {id}` first, or `schemalab solution {id} --reveal` to give up on it",
                )
                .arg("id", &ex.id),
            ));
        }
        let mut s = Message::new("# Reference solution: {title}")
            .arg("title", &ex.spec.title)
            .render_in(lang);
        s.push_str("\n\n");
        s.push_str(&ex.read(ex.spec.explanation.get_ref())?);
        s.push_str("\n\n```js\n");
        s.push_str(&ex.read(ex.spec.reference.get_ref())?);
        s.push_str("```\n");
        if let Some(a) = &ex.spec.answers {
            s.push_str("\nanswers.toml:\n\n```toml\n");
            s.push_str(&ex.read(a.reference.get_ref())?);
            s.push_str("```\n");
        }
        Ok(s)
    }

    /// Every exercise with its progress, in course order.
    pub fn rows(&self, exercises: &[Exercise]) -> Result<Vec<Row>, ExerciseError> {
        let p = self.progress()?;
        Ok(exercises
            .iter()
            .map(|ex| Row {
                id: ex.id.clone(),
                lesson: ex.lesson.clone(),
                title: ex.spec.title.clone(),
                progress: p.exercises.get(&ex.id).cloned().unwrap_or_default(),
            })
            .collect())
    }
}

/// Count one check in `e`: attempts and failures stop at `u32::MAX`
/// instead of wrapping to 0.
fn count_check(e: &mut ExProgress, passed: bool, seed: u64) {
    e.attempts = e.attempts.saturating_add(1);
    if !passed {
        e.failed = e.failed.saturating_add(1);
    }
    e.passed |= passed;
    e.last_seed = Some(seed);
}

/// A learner's file as text; bytes that are not UTF-8 are named by their
/// line and column (the column counts characters, as everywhere).
pub fn read_learner_text(path: &Path) -> Result<String, ExerciseError> {
    let bytes = files::read_bytes(path).map_err(|e| io_err(path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // Only the valid prefix is text: count its lines and characters.
        let prefix = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
        let (line, col) = crate::place::line_col(prefix, prefix.len());
        ExerciseError::Invalid(
            Message::new(
                "{path}:{line}:{col}: not UTF-8 text (byte 0x{byte}); save the file as UTF-8",
            )
            .arg("path", path.display())
            .arg("line", line)
            .arg("col", col)
            .arg(
                "byte",
                format!("{:02x}", bytes.get(good).copied().unwrap_or(0)),
            ),
        )
    })
}

/// "7/14" and the next unfinished exercise.
pub fn summary(rows: &[Row]) -> (String, Option<&Row>) {
    let done = rows.iter().filter(|r| r.progress.passed).count();
    (
        format!("{done}/{}", rows.len()),
        rows.iter().find(|r| !r.progress.passed),
    )
}

fn readme(exercises: &[Exercise]) -> String {
    let mut s = String::from(
        "# schemalab exercises\n\n\
Each folder is one exercise. Read its `PROMPT.md`, then edit its\n\
`solution.js`: the lines before the first `// @op` marker are your setup\n\
(reshape the seeded data into your design: collections, indexes,\n\
validators); each `// @op <name>` section is the statement (or short\n\
sequence) that runs that workload operation. Parameters such as `userId`\n\
are supplied by the checker, drawn at random from the data on each check.\n\
Some exercises also ask for predictions in `answers.toml`. The language\n\
you write in is mongosh's JavaScript; [SHELL.md](SHELL.md) says what\n\
works (and what the shell refuses).\n\n\
    schemalab check <exercise>        grade it (exit 0 when every check passes)\n\
    schemalab check <exercise> --seed N   repeat a check with the same parameters\n\
    schemalab watch [<exercise>]      re-check on every save\n\
    schemalab hint <exercise>         the next hint (the design, in stages)\n\
    schemalab shell --exercise <exercise> [--seed N]   try statements on its data\n\
    schemalab reset <exercise>        back to the starter (keeps a .bak)\n\
    schemalab solution <exercise>     the reference, once you have passed\n\
    schemalab exercises list          your progress and what to do next\n\n\
## Exercises\n\n",
    );
    for ex in exercises {
        s.push_str(&format!(
            "- `{}` ({}): {}\n",
            ex.id, ex.lesson, ex.spec.title
        ));
    }
    s
}
