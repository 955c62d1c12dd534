//! The course: lessons as plain files under `lessons/` (format in
//! `docs/CONTENT_FORMAT.md`), run as measured experiments against any
//! MongoDB-compatible server through the official driver, reported as a
//! table, Markdown or JSON, and checked by `lint`.
//!
//! Pipeline: [`manifest`] (files → [`Course`]/[`Lesson`]) → [`runner`]
//! (variants: fresh database, dataset, setup, operations measured by
//! [`crate::measure`]: collStats, exact BSON sizes, explain) → [`claims`] (the `check` language
//! and `{{ expr }}` prose placeholders) → [`report`] (table, Markdown,
//! JSON). [`lint`] checks a course without a server.
//!
//! Safety: every database this module writes to or drops passes through
//! [`guard_db`], which only admits `schemalab_<lesson>_<variant>` names, so
//! a run against a real server never touches anything else.

pub mod claims;
pub mod lint;
pub mod lint_locale;
pub mod manifest;
pub mod names;
pub mod report;
pub mod runner;
pub mod template;
pub mod working_set;

use serde::{Deserialize, Serialize};

use crate::locale::{Lang, Localized, Message};

pub use crate::measure::figures::{CollStats, EngineInfo, ReadMetrics, StageFigures, WriteMetrics};
pub use crate::measure::{OpError, OpResult};
pub use claims::{Check, ClaimError, Metric, MetricSource, Val};
pub use lint::{LintError, lint};
pub use manifest::{Course, Experiment, Lesson, LessonEntry, OpKind, Operation, Variant};
pub use names::{DB_PREFIX, DbNames, NamesError, is_plain_name};
pub use report::{Format, render};
pub use runner::{
    CancelFlag, CatalogLoader, DatasetLoader, ExperimentReport, LessonReport, PreparedLesson,
    PreparedVariant, Progress, RunOptions, Sample, VariantReport, prepare_lesson, run_lesson,
};
pub use template::TemplateLoader;

/// A lesson as `schemalab lessons` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LessonSummary {
    pub id: String,
    /// The number it goes by in the outline ([`Course::lesson_numbers`]).
    pub number: String,
    pub title: String,
    pub summary: String,
    pub experiments: usize,
}

/// The lessons of the course under `root`, in course order, in `lang`.
pub fn list_lessons(
    root: impl AsRef<std::path::Path>,
    lang: crate::locale::Lang,
) -> Result<Vec<LessonSummary>, CourseError> {
    let course = Course::load(root, lang)?;
    let numbers = course.lesson_numbers();
    Ok(course
        .lessons()?
        .into_iter()
        .zip(numbers)
        .map(|(l, number)| LessonSummary {
            id: l.id.clone(),
            number,
            title: l.title.clone(),
            summary: l.summary.clone(),
            experiments: l.experiments.len(),
        })
        .collect())
}

/// Run lesson `id` of the course under `root` through `client`, its
/// strings in `lang`: what `schemalab run` does once the database is open.
/// `id` may be the lesson id, its number in the outline (`10`) or its
/// folder (`10-bucket`).
pub async fn run_by_id(
    root: impl AsRef<std::path::Path>,
    id: &str,
    client: &mongodb::Client,
    opts: &RunOptions<'_>,
    lang: crate::locale::Lang,
) -> Result<LessonReport, CourseError> {
    let course = Course::load(root, lang)?;
    let id = course.resolve(id)?;
    let lesson = course.lesson(&id)?;
    run_lesson(client, &lesson, opts).await
}

/// Prepare lesson `id`'s databases (every variant, or only `variant`) as a
/// run would before measuring: what `schemalab shell --lesson` does before
/// it opens the shell. `id` is resolved as for [`run_by_id`].
pub async fn prepare_by_id(
    root: impl AsRef<std::path::Path>,
    id: &str,
    variant: Option<&str>,
    client: &mongodb::Client,
    opts: &RunOptions<'_>,
    lang: crate::locale::Lang,
) -> Result<PreparedLesson, CourseError> {
    let course = Course::load(root, lang)?;
    let id = course.resolve(id)?;
    let lesson = course.lesson(&id)?;
    prepare_lesson(client, &lesson, variant, opts).await
}

/// How a run ended: `schemalab run` exits 0 only when every variant ran and
/// every claim holds, 1 when a claim fails, 2 on errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStatus {
    /// Every variant ran and every claim holds.
    Ok { claims: usize },
    /// Every variant ran, but these claims fail (`experiment: claim`).
    ClaimsFail(Vec<Message>),
    /// These variants failed (their load, setup, measurement or an
    /// operation), each `experiment/variant: why`; failing claims are
    /// counted in the message.
    Errors(Vec<Message>),
}

impl RunStatus {
    /// Work out how a run ended.
    pub fn of(report: &LessonReport) -> RunStatus {
        let mut errors = Vec::new();
        let mut failing = Vec::new();
        let mut claims = 0;
        for exp in &report.experiments {
            for v in &exp.variants {
                if let Some(f) = &v.failure {
                    errors.push(
                        Message::new("{outer}: {cause}")
                            .arg("outer", format!("{}/{}", exp.id, v.id))
                            .arg_msg("cause", f.clone()),
                    );
                }
            }
            for c in &exp.claims {
                claims += 1;
                if !c.verdict.passed {
                    failing.push(
                        Message::new("{outer}: {cause}")
                            .arg("outer", &exp.id)
                            .arg("cause", &c.text),
                    );
                }
            }
        }
        if !errors.is_empty() {
            RunStatus::Errors(errors)
        } else if !failing.is_empty() {
            RunStatus::ClaimsFail(failing)
        } else {
            RunStatus::Ok { claims }
        }
    }

    /// The process exit code: 0, 1 or 2.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunStatus::Ok { .. } => 0,
            RunStatus::ClaimsFail(_) => 1,
            RunStatus::Errors(_) => 2,
        }
    }

    /// [`RunStatus::message`] in `lang`.
    pub fn message(&self, lang: crate::locale::Lang) -> String {
        let list = |items: &[Message]| {
            items
                .iter()
                .map(|m| m.render_in(lang))
                .collect::<Vec<_>>()
                .join(lang.t("; "))
        };
        match self {
            RunStatus::Ok { claims } => lang.f(
                "run: every variant ran and all {claims} claim(s) hold (exit 0)",
                &[("claims", claims)],
            ),
            RunStatus::ClaimsFail(c) => lang.f(
                "run: every variant ran, but {n} claim(s) fail (exit 1): {list}",
                &[("n", &c.len()), ("list", &list(c))],
            ),
            RunStatus::Errors(e) => lang.f(
                "run: {n} variant(s) failed, so their figures and the claims reading them are void (exit 2): {list}",
                &[("n", &e.len()), ("list", &list(e))],
            ),
        }
    }
}

/// How much data an experiment loads (the parameters live in
/// `datasets/catalog.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    Tiny,
    #[default]
    Default,
    Large,
}

impl Scale {
    /// The name used on the command line and in the catalog.
    pub fn as_str(self) -> &'static str {
        match self {
            Scale::Tiny => "tiny",
            Scale::Default => "default",
            Scale::Large => "large",
        }
    }
}

impl std::str::FromStr for Scale {
    type Err = CourseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tiny" => Ok(Scale::Tiny),
            "default" => Ok(Scale::Default),
            "large" => Ok(Scale::Large),
            other => Err(CourseError::Invalid(
                Message::new("unknown scale '{scale}' (expected tiny, default or large)")
                    .arg("scale", other),
            )),
        }
    }
}

/// Everything that can stop a course operation as a whole (per-operation
/// failures are recorded in the report instead). Each variant's words are
/// one [`Message`] ([`CourseError::message`]): `Display` is its English
/// rendering, [`Localized::render_in`] any other language's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CourseError {
    /// A file could not be read (`message` is the operating system's).
    #[error("{}", self.message())]
    Io { path: String, message: String },
    /// A course file is malformed (run `schemalab lint` for every problem).
    #[error("{}", self.message())]
    Invalid(Message),
    /// No lesson with that id in the manifest.
    #[error("{}", self.message())]
    UnknownLesson {
        id: String,
        known: String,
        /// The closest lesson id, when one is close enough to be a typo.
        suggestion: Option<String>,
    },
    /// A database name outside `schemalab_<lesson>_<variant>` was about to be
    /// written to.
    #[error("{}", self.message())]
    ForbiddenDatabase(String),
    /// The server could not be reached or refused a command the run needs
    /// (the driver's or the server's text kept as written, inside what
    /// schemalab was doing).
    #[error("{}", self.message())]
    Server(Message),
    /// The run was cancelled between two steps.
    #[error("{}", self.message())]
    Cancelled,
}

impl CourseError {
    /// The error's words, for any language.
    pub fn message(&self) -> Message {
        match self {
            CourseError::Io { path, message } => Message::new("{path}: {message}")
                .arg("path", path)
                .arg("message", message),
            CourseError::Invalid(m) => m.clone(),
            CourseError::UnknownLesson {
                id,
                known,
                suggestion: Some(s),
            } => Message::new("no lesson '{id}' in the manifest; did you mean '{suggestion}'? (lessons: {known})")
                .arg("id", id)
                .arg("suggestion", s)
                .arg("known", known),
            CourseError::UnknownLesson {
                id,
                known,
                suggestion: None,
            } => Message::new("no lesson '{id}' in the manifest (lessons: {known})")
                .arg("id", id)
                .arg("known", known),
            CourseError::ForbiddenDatabase(db) => Message::new(
                "refusing to write to database '{db}': schemalab only writes databases named schemalab_<lesson>_<variant>",
            )
            .arg("db", db),
            CourseError::Server(e) => Message::new("server: {e}").arg_msg("e", e.clone()),
            CourseError::Cancelled => Message::new("cancelled"),
        }
    }
}

impl Localized for CourseError {
    fn render_in(&self, lang: Lang) -> String {
        self.message().render_in(lang)
    }
}

/// The one gate every write or drop of a lesson run goes through: only
/// the database `names` gives `lesson`/`variant` is admitted
/// ([`DbNames::guard_lesson`]).
pub fn guard_db(
    names: &DbNames,
    name: &str,
    lesson: &str,
    variant: &str,
) -> Result<(), CourseError> {
    names
        .guard_lesson(name, lesson, variant)
        .map_err(|_| CourseError::ForbiddenDatabase(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_admits_only_the_variant_database() {
        let n = DbNames::default();
        assert!(guard_db(&n, "schemalab_bucket_naive", "bucket", "naive").is_ok());
        assert!(guard_db(&n, "schemalab_bucket_naivex", "bucket", "naive").is_err());
    }

    #[test]
    fn scale_parses() {
        assert_eq!("tiny".parse::<Scale>().unwrap(), Scale::Tiny);
        assert!("huge".parse::<Scale>().is_err());
    }
}
