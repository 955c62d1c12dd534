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

/// One exercise's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExProgress {
    #[serde(default)]
    pub passed: bool,
    #[serde(default)]
    pub attempts: u32,
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
        for ex in exercises {
            put(
                self.solution_path(&ex.id),
                &ex.read(ex.spec.starter.get_ref())?,
            )?;
            put(self.ex_dir(&ex.id).join("PROMPT.md"), &ex.prompt_text()?)?;
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

    /// The learner's solution and answers texts.
    pub fn attempt(&self, ex: &Exercise) -> Result<(String, Option<String>), ExerciseError> {
        self.require()?;
        let p = self.solution_path(&ex.id);
        let sol = files::read_text(&p).map_err(|e| io_err(&p, e))?;
        let answers = if ex.spec.answers.is_some() {
            let a = self.answers_path(&ex.id);
            Some(files::read_text(&a).map_err(|e| io_err(&a, e))?)
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

    /// Record a check's outcome (once passed, an exercise stays passed).
    pub fn record_check(&self, id: &str, passed: bool, seed: u64) -> Result<(), ExerciseError> {
        let mut p = self.progress()?;
        let e = p.exercises.entry(id.to_string()).or_default();
        e.attempts = e.attempts.saturating_add(1);
        e.passed |= passed;
        e.last_seed = Some(seed);
        self.save(&p)
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
Some exercises also ask for predictions in `answers.toml`.\n\n\
    schemalab check <exercise>        grade it (exit 0 when every check passes)\n\
    schemalab check <exercise> --seed N   repeat a check with the same parameters\n\
    schemalab watch [<exercise>]      re-check on every save\n\
    schemalab hint <exercise>         the next hint\n\
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
