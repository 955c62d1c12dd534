//! The course files: `lessons/manifest.toml` (the outline) and each
//! `lessons/<dir>/lesson.toml` with its prose, deserialised as written.
//! Fields keep their TOML spans so [`super::lint`] can point at them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::CourseError;

/// The only format this build reads.
pub const FORMAT_VERSION: i64 = 1;

/// `lessons/manifest.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format_version: Spanned<i64>,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub lessons: Vec<LessonEntry>,
}

/// One `[[lessons]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LessonEntry {
    pub id: Spanned<String>,
    pub dir: Spanned<String>,
}

/// `lessons/<dir>/lesson.toml`, plus where it came from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    /// The id from the manifest (not in the file).
    #[serde(skip)]
    pub id: String,
    /// The lesson's folder (not in the file).
    #[serde(skip)]
    pub dir: PathBuf,
    pub title: String,
    #[serde(default)]
    pub summary: String,
    pub prose: Option<Spanned<String>>,
    #[serde(default)]
    pub experiments: Vec<Experiment>,
}

/// One `[[experiments]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub id: Spanned<String>,
    #[serde(default)]
    pub title: String,
    pub dataset: Spanned<String>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default)]
    pub variants: Vec<Variant>,
    #[serde(default)]
    pub operations: Vec<Operation>,
    #[serde(default)]
    pub claims: Vec<ClaimSpec>,
}

fn default_seed() -> u64 {
    42
}

/// One `[[experiments.variants]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub id: Spanned<String>,
    #[serde(default)]
    pub title: String,
    pub setup: Option<Spanned<String>>,
    /// The design the lesson recommends: highlighted, and the report says
    /// on which costs it wins and on which it loses.
    #[serde(default)]
    pub recommended: bool,
}

/// Read (explained) or write (executed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Read,
    Write,
}

/// One `[[experiments.operations]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operation {
    pub id: Spanned<String>,
    #[serde(default)]
    pub title: String,
    pub kind: OpKind,
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Variant id → statements run first, untimed and unmeasured, to bind
    /// names the measured statements use (`const post = db.posts.findOne(…)`).
    #[serde(default)]
    pub prepare: BTreeMap<String, Spanned<String>>,
    /// Variant id → the measured statement(s). A read is one statement; a
    /// write may be several, whose counts and time are summed.
    #[serde(default)]
    pub run: BTreeMap<String, Spanned<String>>,
    /// Variant id → the errors (codeName or code) this operation is
    /// expected to fail with there; such a failure is the lesson's point,
    /// not a failed variant.
    #[serde(default)]
    pub expect_error: BTreeMap<String, Vec<String>>,
}

fn default_weight() -> f64 {
    1.0
}

/// One `[[experiments.claims]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    pub text: String,
    pub check: Spanned<String>,
}

/// A course on disk: `root/lessons/` and `root/datasets/`.
#[derive(Debug, Clone)]
pub struct Course {
    pub root: PathBuf,
    pub manifest: Manifest,
}

pub(crate) fn read(path: &Path) -> Result<String, CourseError> {
    std::fs::read_to_string(path).map_err(|e| CourseError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

impl Course {
    /// Read `root/lessons/manifest.toml`.
    pub fn load(root: impl AsRef<Path>) -> Result<Course, CourseError> {
        let root = root.as_ref().to_path_buf();
        let path = root.join("lessons").join("manifest.toml");
        let manifest: Manifest = toml::from_str(&read(&path)?)
            .map_err(|e| CourseError::Invalid(format!("{}: {}", path.display(), e.message())))?;
        if *manifest.format_version.get_ref() != FORMAT_VERSION {
            return Err(CourseError::Invalid(format!(
                "{}: format_version {} is not supported (this build reads {FORMAT_VERSION})",
                path.display(),
                manifest.format_version.get_ref()
            )));
        }
        Ok(Course { root, manifest })
    }

    /// The lesson ids in course order.
    pub fn lesson_ids(&self) -> Vec<String> {
        self.manifest
            .lessons
            .iter()
            .map(|l| l.id.get_ref().clone())
            .collect()
    }

    /// Load one lesson by id.
    pub fn lesson(&self, id: &str) -> Result<Lesson, CourseError> {
        let entry = self
            .manifest
            .lessons
            .iter()
            .find(|l| l.id.get_ref() == id)
            .ok_or_else(|| CourseError::UnknownLesson {
                id: id.to_string(),
                known: self.lesson_ids().join(", "),
            })?;
        let dir = self.root.join("lessons").join(entry.dir.get_ref());
        let path = dir.join("lesson.toml");
        let mut lesson: Lesson = toml::from_str(&read(&path)?)
            .map_err(|e| CourseError::Invalid(format!("{}: {}", path.display(), e.message())))?;
        lesson.id = id.to_string();
        lesson.dir = dir;
        Ok(lesson)
    }

    /// Every lesson, in order.
    pub fn lessons(&self) -> Result<Vec<Lesson>, CourseError> {
        self.lesson_ids().iter().map(|id| self.lesson(id)).collect()
    }
}

impl Lesson {
    /// The prose Markdown, if the lesson has a `prose` file.
    pub fn prose_text(&self) -> Result<Option<String>, CourseError> {
        match &self.prose {
            Some(p) => read(&self.dir.join(p.get_ref())).map(Some),
            None => Ok(None),
        }
    }

    /// A variant's setup script, if it has one.
    pub fn setup_text(&self, v: &Variant) -> Result<Option<String>, CourseError> {
        match &v.setup {
            Some(p) => read(&self.dir.join(p.get_ref())).map(Some),
            None => Ok(None),
        }
    }
}
