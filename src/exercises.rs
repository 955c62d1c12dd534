//! Exercises: self-study that grades a learner's own schema by measurement.
//!
//! An exercise lives next to the lesson it practises, under
//! `lessons/<dir>/exercises/<id>/` (format in `docs/CONTENT_FORMAT.md`):
//! a prompt, an `exercise.toml` with the workload, parameters, checks and
//! staged hints, a starter file, a reference solution and one plausible
//! wrong solution. [`manifest`] loads them; [`checker`] runs a learner's
//! solution and the hidden reference on the same seeded data, each in a
//! fresh `schemalab_ex_…` database, through the course's own explain and
//! measure path, and evaluates the checks (the course's claim language
//! over the variants `mine`, `ref`, `mine_start` and `ref_start`, plus
//! result comparison, COLLSCAN bans, estimates and classifications);
//! [`workspace`] is the learner's folder (init, reset, progress, hints,
//! solutions); [`lint`] checks exercise content without a server and
//! [`watch`] re-checks on save.

pub mod checker;
pub mod lint;
pub mod manifest;
pub mod watch;
pub mod workspace;

pub use checker::{CheckOptions, CheckReport, CheckResult, ReferenceSides, check_exercise};
pub use manifest::{Exercise, ExerciseSpec, Solution, exercises};
pub use workspace::{Progress, Workspace};

use crate::locale::Message;

/// Everything that can stop an exercise command. Each variant's words are
/// one [`Message`] ([`ExerciseError::message`]); causes from outside (the
/// operating system, the server, the watcher) stay as they wrote them.
#[derive(Debug, thiserror::Error)]
pub enum ExerciseError {
    /// A file could not be read or written.
    #[error("{}", self.message())]
    Io { path: String, message: String },
    /// An exercise file is malformed (run `schemalab lint` for every problem).
    #[error("{}", self.message())]
    Invalid(Message),
    /// No exercise with that id.
    #[error("{}", self.message())]
    Unknown { id: String, known: String },
    /// The course could not be loaded.
    #[error(transparent)]
    Course(#[from] crate::course::CourseError),
    /// A database outside `schemalab_ex_<id>` / `schemalab_ex_<id>_ref`
    /// was about to be written.
    #[error("{}", self.message())]
    ForbiddenDatabase(String),
    /// The server could not be reached or refused a command the check
    /// needs (the driver's or the server's text kept as written, inside
    /// what schemalab was doing).
    #[error("{}", self.message())]
    Server(Message),
    /// The solution is locked until the exercise passes.
    #[error("{}", self.message())]
    Locked(Message),
    /// Watching the workspace failed.
    #[error("{}", self.message())]
    Watch(String),
}

impl ExerciseError {
    /// The error's words, for any language.
    pub fn message(&self) -> Message {
        match self {
            ExerciseError::Io { path, message } => Message::new("{path}: {message}")
                .arg("path", path)
                .arg("message", message),
            ExerciseError::Invalid(m) | ExerciseError::Locked(m) => m.clone(),
            ExerciseError::Unknown { id, known } => {
                Message::new("no exercise '{id}' (exercises: {known})")
                    .arg("id", id)
                    .arg("known", known)
            }
            ExerciseError::Course(e) => e.message(),
            ExerciseError::ForbiddenDatabase(db) => Message::new(
                "refusing to write to database '{db}': exercises only write schemalab_ex_<exercise> databases",
            )
            .arg("db", db),
            ExerciseError::Server(e) => Message::new("server: {e}").arg_msg("e", e.clone()),
            ExerciseError::Watch(e) => Message::new("watch: {e}").arg("e", e),
        }
    }
}

impl crate::locale::Localized for ExerciseError {
    fn render_in(&self, lang: crate::locale::Lang) -> String {
        self.message().render_in(lang)
    }
}

pub(crate) fn io_err(path: &std::path::Path, e: impl std::fmt::Display) -> ExerciseError {
    ExerciseError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The gate every write or drop of the checker goes through: only the two
/// databases `names` gives exercise `id` are admitted
/// ([`DbNames::guard_exercise`](crate::course::DbNames::guard_exercise)).
pub fn guard_db(names: &crate::course::DbNames, name: &str, id: &str) -> Result<(), ExerciseError> {
    names
        .guard_exercise(name, id)
        .map_err(|_| ExerciseError::ForbiddenDatabase(name.to_string()))
}

/// What `schemalab check` does once the database is open: load exercise
/// `id` of the course under `root` (its strings in `lang`), check the
/// learner's files of `ws` against the reference through `client`, and
/// record the attempt in the workspace's progress. A failed check past
/// the exercise's `hints_after` reveals the next staged hint. A progress
/// file that cannot be written (a full disk) does not lose the report:
/// it says so in [`CheckReport::progress_error`].
#[allow(clippy::too_many_arguments)]
pub async fn check_in_workspace(
    root: &std::path::Path,
    ws: &Workspace,
    client: &mongodb::Client,
    id: &str,
    seed: u64,
    scale: Option<crate::course::Scale>,
    lang: crate::locale::Lang,
    names: &crate::course::DbNames,
) -> Result<CheckReport, ExerciseError> {
    let ex = manifest::find(root, id, lang)?;
    let (solution, answers) = ws.attempt(&ex)?;
    let loader = crate::course::CatalogLoader::for_course(root)?;
    let opts = CheckOptions {
        scale,
        seed,
        loader: &loader,
        references: None,
        names: names.clone(),
    };
    let checked = check_exercise(client, &ex, &solution, answers.as_deref(), &opts).await;
    // A check's own databases go when it ends, whatever the verdict.
    if names.is_one_check() {
        for db in [names.exercise(&ex.id), names.exercise_ref(&ex.id)] {
            if guard_db(names, &db, &ex.id).is_ok() {
                let _ = client.database(&db).drop().await;
            }
        }
    }
    let mut report = checked?;
    match ws.record_attempt(&ex, report.passed(), seed) {
        Ok(p) => {
            report.attempts = Some(p.attempts);
            report.hints_used = Some(p.hints_used);
            report.revealed = p.revealed;
        }
        Err(e) => report.progress_error = Some(e.message()),
    }
    Ok(report)
}

/// Grade exercise `ex` of the workspace `ws` on each of `seeds`, as an
/// instructor does (`schemalab exercises grade`): the learner's progress
/// is neither read nor written. A file that cannot be read is the
/// learner's (it fails every seed with the reason); a server that cannot
/// be used is an error. The reference's side of each seed is measured
/// once in `references` and reused for every workspace graded with it.
pub async fn grade_workspace(
    client: &mongodb::Client,
    ex: &Exercise,
    ws: &Workspace,
    seeds: &[u64],
    loader: &dyn crate::course::DatasetLoader,
    references: &ReferenceSides,
    names: &crate::course::DbNames,
) -> Result<Result<Vec<CheckReport>, ExerciseError>, ExerciseError> {
    let (solution, answers) = match ws.attempt(ex) {
        Ok(a) => a,
        Err(e) => return Ok(Err(e)),
    };
    let mut reports = Vec::new();
    for &seed in seeds {
        let opts = CheckOptions {
            scale: None,
            seed,
            loader,
            references: Some(references),
            names: names.clone(),
        };
        reports.push(check_exercise(client, ex, &solution, answers.as_deref(), &opts).await?);
    }
    Ok(Ok(reports))
}

/// A seed for a check when none is given (the check prints it).
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64 % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_admits_only_the_exercise_databases() {
        let n = crate::course::DbNames::default();
        assert!(guard_db(&n, "schemalab_ex_feed", "feed").is_ok());
        assert!(guard_db(&n, "schemalab_ex_feed_ref", "feed").is_ok());
        assert!(guard_db(&n, "schemalab_ex_feedx", "feed").is_err());
        assert!(guard_db(&n, "admin", "feed").is_err());
        assert!(guard_db(&n, "schemalab_ex_a.b", "a.b").is_err());
    }
}
