//! The course files: `lessons/manifest.toml` (the outline) and each
//! `lessons/<dir>/lesson.toml` with its prose, deserialised as written.
//! Fields keep their TOML spans so [`super::lint`] can point at them.
//!
//! A course loaded in another language ([`Course::load`]) is the same
//! model with its strings replaced from the translation files beside the
//! English ones ([`LessonStrings`], `lesson.<lang>.md`), English wherever a
//! translation is missing: the runner, reports and TUI never know which
//! language they show.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::CourseError;
use crate::locale::{Lang, Message};

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
    /// Where the experiment's trade-off reverses: another workload or
    /// scale under which a design the lesson does not recommend wins the
    /// named row. Read by the course's tests (`tests/it/lessons.rs`), not
    /// by the runner.
    #[serde(default)]
    pub reversal: Option<Reversal>,
    /// The steady-state working-set run (`[experiments.working_set]`).
    #[serde(default)]
    pub working_set: Option<WorkingSetSpec>,
}

/// `[experiments.reversal]`: one alternative workload (`weights`, operation
/// id → weight, operations left out weigh 0) or `scale` under which
/// `winner` costs less than `loser` (default: the recommended variant) on
/// `row`: `"documents"` (per 100 requests, the documents reads examine plus
/// those writes write), `"keys"` (the keys reads examine plus those writes
/// insert and delete), `"docs_examined"` or `"bytes_examined"` (per 100
/// requests, reads only, as the report's weighted rows), or a metric of the
/// check language without its variant (`"op.move.nModified"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reversal {
    #[serde(default)]
    pub weights: BTreeMap<String, f64>,
    pub scale: Option<String>,
    pub row: String,
    pub winner: String,
    pub loser: Option<String>,
}

/// `[experiments.working_set]`: the experiment's read workload, by its
/// weights and on keys drawn with a Zipf skew, run under a cache of a
/// stated size; after a warm-up, the bytes read into the cache per 100
/// requests (docs/CONTENT_FORMAT.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkingSetSpec {
    /// The cache: a share of the largest variant's data (`"25%"`) or a
    /// size (`"8M"`, WiredTiger's suffixes).
    pub cache: Spanned<String>,
    /// A read, the same in every variant, whose value is the array of keys
    /// most popular first (`db.posts.find({}, {_id: 1}).sort(…).toArray().map(p => p._id)`).
    pub keys: Spanned<String>,
    /// The name the operations' statements read the key from: bound to a
    /// drawn key instead of running their `prepare`.
    pub bind: Spanned<String>,
    /// Requests measured, after the warm-up.
    #[serde(default = "default_ws_requests")]
    pub requests: u32,
    /// Requests run first to fill the cache, not measured.
    #[serde(default = "default_ws_requests")]
    pub warmup: u32,
    /// The Zipf exponent of the key draw (1: the r-th key drawn 1/r as
    /// often as the first).
    #[serde(default = "default_ws_skew")]
    pub skew: f64,
}

fn default_ws_requests() -> u32 {
    200
}

fn default_ws_skew() -> f64 {
    1.0
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

pub use crate::measure::OpKind;

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
    /// Names the claim for translations (`lesson.<lang>.toml` keys its
    /// text by this id); unique within its experiment.
    #[serde(default)]
    pub id: Option<Spanned<String>>,
    pub text: String,
    pub check: Spanned<String>,
}

/// A course on disk: `root/lessons/` and `root/datasets/`.
#[derive(Debug, Clone)]
pub struct Course {
    pub root: PathBuf,
    pub manifest: Manifest,
    /// The language its lessons are given in.
    pub lang: Lang,
}

/// `lessons/manifest.<lang>.toml`: the course title in a translation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestStrings {
    pub title: Option<Spanned<String>>,
}

/// `lessons/<dir>/lesson.<lang>.toml`: a lesson's strings in a translation,
/// keyed by the ids of `lesson.toml` (format in `docs/CONTENT_FORMAT.md`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LessonStrings {
    pub title: Option<Spanned<String>>,
    pub summary: Option<Spanned<String>>,
    /// The translated prose; default `lesson.<lang>.md` beside the English
    /// prose, when it exists.
    pub prose: Option<Spanned<String>>,
    #[serde(default)]
    pub experiments: BTreeMap<Spanned<String>, ExperimentStrings>,
}

/// One experiment's strings in a translation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentStrings {
    pub title: Option<Spanned<String>>,
    /// Variant id → title.
    #[serde(default)]
    pub variants: BTreeMap<Spanned<String>, Spanned<String>>,
    /// Operation id → title.
    #[serde(default)]
    pub operations: BTreeMap<Spanned<String>, Spanned<String>>,
    /// Claim id → text.
    #[serde(default)]
    pub claims: BTreeMap<Spanned<String>, Spanned<String>>,
}

/// The value under `key` of a map keyed by spanned strings.
pub(crate) fn lookup<'a, V>(map: &'a BTreeMap<Spanned<String>, V>, key: &str) -> Option<&'a V> {
    map.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
}

fn non_empty(s: &Option<Spanned<String>>) -> Option<String> {
    s.as_ref()
        .map(|v| v.get_ref().trim().to_string())
        .filter(|v| !v.is_empty())
}

impl LessonStrings {
    /// Replace `lesson`'s strings with these, keeping English where a
    /// string is missing or empty.
    pub fn apply(&self, lesson: &mut Lesson) {
        if let Some(t) = non_empty(&self.title) {
            lesson.title = t;
        }
        if let Some(t) = non_empty(&self.summary) {
            lesson.summary = t;
        }
        for exp in &mut lesson.experiments {
            let Some(tr) = lookup(&self.experiments, exp.id.get_ref()) else {
                continue;
            };
            if let Some(t) = non_empty(&tr.title) {
                exp.title = t;
            }
            for v in &mut exp.variants {
                if let Some(t) =
                    lookup(&tr.variants, v.id.get_ref()).filter(|t| !t.get_ref().trim().is_empty())
                {
                    v.title = t.get_ref().clone();
                }
            }
            for op in &mut exp.operations {
                if let Some(t) = lookup(&tr.operations, op.id.get_ref())
                    .filter(|t| !t.get_ref().trim().is_empty())
                {
                    op.title = t.get_ref().clone();
                }
            }
            for c in &mut exp.claims {
                let Some(id) = &c.id else { continue };
                if let Some(t) =
                    lookup(&tr.claims, id.get_ref()).filter(|t| !t.get_ref().trim().is_empty())
                {
                    c.text = t.get_ref().clone();
                }
            }
        }
    }
}

/// Read and parse a translation's TOML file; `Ok(None)` when it does not
/// exist (the edition falls back to English), an error naming the file and
/// line:col when it is malformed.
pub(crate) fn read_strings<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<Option<T>, CourseError> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = read(path)?;
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| malformed(path, &text, &e))
}

/// A course file that does not parse as the TOML it should be, named with
/// the file and the line:col where the parser stopped. The parser's own
/// description (from the `toml` crate) is kept as it wrote it, inside our
/// sentence.
pub(crate) fn malformed(path: &Path, text: &str, e: &toml::de::Error) -> CourseError {
    let at = e.span().map_or(0, |s| s.start).min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    CourseError::Invalid(
        Message::new("{file}:{line}:{col}: malformed course file: {detail}")
            .arg("file", path.display())
            .arg("line", line)
            .arg("col", col)
            .arg("detail", e.message().trim()),
    )
}

pub(crate) fn read(path: &Path) -> Result<String, CourseError> {
    crate::files::read_text(path).map_err(|e| CourseError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// The text of the content file `rel` of folder `dir`, which must stay
/// inside it.
fn read_inside(dir: &Path, rel: &str) -> Result<String, CourseError> {
    let path = crate::files::inside(dir, rel).map_err(|e| CourseError::Io {
        path: dir.join(rel).display().to_string(),
        message: e.to_string(),
    })?;
    read(&path)
}

impl Course {
    /// Read `root/lessons/manifest.toml` and give its lessons in `lang`
    /// (English wherever the translation is missing).
    pub fn load(root: impl AsRef<Path>, lang: Lang) -> Result<Course, CourseError> {
        let root = root.as_ref().to_path_buf();
        let path = root.join("lessons").join("manifest.toml");
        let text = read(&path)?;
        let manifest: Manifest = toml::from_str(&text).map_err(|e| malformed(&path, &text, &e))?;
        if *manifest.format_version.get_ref() != FORMAT_VERSION {
            return Err(CourseError::Invalid(
                Message::new(
                    "{file}: format_version {found} is not supported (this build reads {supported})",
                )
                .arg("file", path.display())
                .arg("found", manifest.format_version.get_ref())
                .arg("supported", FORMAT_VERSION),
            ));
        }
        let mut manifest = manifest;
        if let Some(tr) = lang.translated_path(&path)
            && let Some(strings) = read_strings::<ManifestStrings>(&tr)?
            && let Some(title) = non_empty(&strings.title)
        {
            manifest.title = title;
        }
        Ok(Course {
            root,
            manifest,
            lang,
        })
    }

    /// The lesson ids in course order.
    pub fn lesson_ids(&self) -> Vec<String> {
        self.manifest
            .lessons
            .iter()
            .map(|l| l.id.get_ref().clone())
            .collect()
    }

    /// The number each lesson goes by, in course order: its folder's
    /// leading number (`10-bucket` is 10, `07b-working-set` is 7b), so a
    /// lesson placed between two others takes a number of its own and the
    /// lessons after it, and the prose that cites them by number, keep
    /// theirs; a folder without one goes by its position (1-based).
    pub fn lesson_numbers(&self) -> Vec<String> {
        self.manifest
            .lessons
            .iter()
            .enumerate()
            .map(|(i, l)| folder_number(l.dir.get_ref()).unwrap_or_else(|| (i + 1).to_string()))
            .collect()
    }

    /// The lesson id a learner means: an id (`bucket`), a lesson's number
    /// in the outline (`10`, `7b`, `07b`) or a folder name (`10-bucket`).
    /// An unknown name gets the closest id as a suggestion.
    pub fn resolve(&self, query: &str) -> Result<String, CourseError> {
        let q = query.trim();
        let lessons = &self.manifest.lessons;
        if let Some(l) = lessons.iter().find(|l| l.id.get_ref() == q) {
            return Ok(l.id.get_ref().clone());
        }
        if let Some(l) = lessons.iter().find(|l| l.dir.get_ref() == q) {
            return Ok(l.id.get_ref().clone());
        }
        if let Some(n) = folder_number(q)
            && let Some(i) = self.lesson_numbers().iter().position(|x| *x == n)
        {
            return Ok(lessons[i].id.get_ref().clone());
        }
        Err(self.unknown(q))
    }

    fn unknown(&self, id: &str) -> CourseError {
        let suggestion = self
            .manifest
            .lessons
            .iter()
            .map(|l| {
                let (i, d) = (l.id.get_ref(), l.dir.get_ref());
                let score = strsim::jaro_winkler(id, i).max(strsim::jaro_winkler(id, d));
                (score, i.clone())
            })
            .filter(|(score, _)| *score >= 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, i)| i);
        CourseError::UnknownLesson {
            id: id.to_string(),
            known: self.lesson_ids().join(", "),
            suggestion,
        }
    }

    /// Load one lesson by id.
    pub fn lesson(&self, id: &str) -> Result<Lesson, CourseError> {
        let entry = self
            .manifest
            .lessons
            .iter()
            .find(|l| l.id.get_ref() == id)
            .ok_or_else(|| self.unknown(id))?;
        let dir = self.root.join("lessons").join(entry.dir.get_ref());
        let path = dir.join("lesson.toml");
        let text = read(&path)?;
        let mut lesson: Lesson = toml::from_str(&text).map_err(|e| malformed(&path, &text, &e))?;
        lesson.id = id.to_string();
        lesson.dir = dir;
        if let Some(tr) = self.lang.translated_path(&path) {
            if let Some(strings) = read_strings::<LessonStrings>(&tr)? {
                strings.apply(&mut lesson);
                if let Some(p) = &strings.prose {
                    lesson.prose = Some(p.clone());
                } else if let Some(p) = &lesson.prose {
                    lesson.prose = Some(localized_prose(&lesson.dir, p, self.lang));
                }
            } else if let Some(p) = &lesson.prose {
                lesson.prose = Some(localized_prose(&lesson.dir, p, self.lang));
            }
        }
        Ok(lesson)
    }

    /// Every lesson, in order.
    pub fn lessons(&self) -> Result<Vec<Lesson>, CourseError> {
        self.lesson_ids().iter().map(|id| self.lesson(id)).collect()
    }
}

/// The prose file for `lang`: its translation beside the English file when
/// that exists, else the English one (same span, for lint's positions).
fn localized_prose(dir: &Path, english: &Spanned<String>, lang: Lang) -> Spanned<String> {
    let picked = lang.pick(&dir.join(english.get_ref()));
    match picked.strip_prefix(dir).ok().and_then(|p| p.to_str()) {
        Some(rel) if rel != english.get_ref() => Spanned::new(english.span(), rel.to_string()),
        _ => english.clone(),
    }
}

/// The number at the head of a lesson folder's name, leading zeros
/// dropped: `07b-working-set` gives "7b", `10-bucket` "10", `intro` none.
fn folder_number(dir: &str) -> Option<String> {
    let head = dir.split('-').next().unwrap_or_default();
    if !head.starts_with(|c: char| c.is_ascii_digit())
        || !head.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return None;
    }
    let trimmed = head.trim_start_matches('0');
    Some(if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        trimmed.to_string()
    } else {
        format!("0{trimmed}")
    })
}

impl Lesson {
    /// The prose Markdown, if the lesson has a `prose` file.
    pub fn prose_text(&self) -> Result<Option<String>, CourseError> {
        match &self.prose {
            Some(p) => read_inside(&self.dir, p.get_ref()).map(Some),
            None => Ok(None),
        }
    }

    /// A variant's setup script, if it has one.
    pub fn setup_text(&self, v: &Variant) -> Result<Option<String>, CourseError> {
        match &v.setup {
            Some(p) => read_inside(&self.dir, p.get_ref()).map(Some),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::folder_number;

    #[test]
    fn a_folder_names_its_lessons_number() {
        assert_eq!(folder_number("10-bucket").as_deref(), Some("10"));
        assert_eq!(folder_number("07b-working-set").as_deref(), Some("7b"));
        assert_eq!(folder_number("07b").as_deref(), Some("7b"));
        assert_eq!(folder_number("00-intro").as_deref(), Some("0"));
        assert_eq!(folder_number("intro"), None);
        assert_eq!(folder_number("1.5-x"), None);
    }
}
