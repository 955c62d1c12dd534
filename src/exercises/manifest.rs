//! Exercise files: `lessons/<dir>/exercises/<id>/exercise.toml` and the
//! files it names, found for every lesson of the manifest in course order,
//! and the learner-facing solution file format (`solution.js`): a setup
//! section, then one `// @op <id>` section per workload operation.
//! [`load_exercise`] gives an exercise in another language: the same
//! model, its strings from `exercise.<lang>.toml` ([`ExerciseStrings`]) and
//! its prompt and explanation from `prompt.<lang>.md`/`explanation.<lang>.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{ExerciseError, io_err};
use crate::course::{Course, OpKind};
use crate::locale::Lang;

/// `exercise.toml`, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExerciseSpec {
    pub title: String,
    #[serde(default)]
    pub summary: String,
    /// A dataset of `datasets/catalog.toml`, loaded into both databases.
    pub dataset: Spanned<String>,
    /// The dataset's seed (parameters are drawn with the check's seed).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// tiny, default or large (the command line may override it).
    #[serde(default = "default_scale")]
    pub scale: String,
    #[serde(default = "default_prompt")]
    pub prompt: Spanned<String>,
    #[serde(default = "default_starter")]
    pub starter: Spanned<String>,
    #[serde(default = "default_reference")]
    pub reference: Spanned<String>,
    #[serde(default = "default_wrong")]
    pub wrong: Spanned<String>,
    /// What the wrong solution gets wrong, in one sentence.
    #[serde(default)]
    pub wrong_idea: String,
    /// Checks the wrong solution must fail (tests prove it does).
    #[serde(default)]
    pub wrong_fails: Vec<Spanned<String>>,
    /// Other correct solutions, written independently of the reference
    /// (another index, another tie-breaker, another write form): the tests
    /// require each to pass, with the reference's answers file. Never
    /// shown to the learner.
    #[serde(default)]
    pub alternatives: Vec<Spanned<String>>,
    /// More wrong solutions, each a realistic mistake with the checks it
    /// must fail (the tests prove it does, with the reference's answers
    /// file, so a mistake fails for its design, not its answers).
    #[serde(default)]
    pub mistakes: Vec<Mistake>,
    /// The reference's explanation, shown by `schemalab solution`.
    #[serde(default = "default_explanation")]
    pub explanation: Spanned<String>,
    /// Answers files for predictions and classifications: the learner's
    /// starting file, the reference's and the wrong solution's.
    pub answers: Option<AnswerFiles>,
    #[serde(default)]
    pub params: Vec<Param>,
    #[serde(default)]
    pub operations: Vec<ExOp>,
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
    /// Staged hints, the only place for design content (an index's keys,
    /// a stage order, a shape): revealed one at a time by `schemalab
    /// hint`, or by failed checks once `hints_after` is reached.
    #[serde(default)]
    pub hints: Vec<String>,
    /// After this many failed checks, each further failed check reveals
    /// the next staged hint under the checklist (none: only `schemalab
    /// hint` reveals them).
    #[serde(default)]
    pub hints_after: Option<u32>,
}

fn default_seed() -> u64 {
    42
}
fn default_scale() -> String {
    "tiny".into()
}
fn spanned(s: &str) -> Spanned<String> {
    Spanned::new(0..0, s.to_string())
}
fn default_prompt() -> Spanned<String> {
    spanned("prompt.md")
}
fn default_starter() -> Spanned<String> {
    spanned("starter.js")
}
fn default_reference() -> Spanned<String> {
    spanned("reference.js")
}
fn default_wrong() -> Spanned<String> {
    spanned("wrong.js")
}
fn default_explanation() -> Spanned<String> {
    spanned("explanation.md")
}

/// `[answers]`: three answers files (TOML).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerFiles {
    pub starter: Spanned<String>,
    pub reference: Spanned<String>,
    pub wrong: Spanned<String>,
}

/// `[[mistakes]]`: a wrong solution beside `wrong`, and what it fails.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mistake {
    pub file: Spanned<String>,
    /// Checks this solution must fail.
    pub fails: Vec<Spanned<String>>,
}

/// How a parameter is drawn from the loaded dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Pick {
    /// Any distinct value, chosen with the check's seed.
    #[default]
    Random,
    /// The value that occurs most often (a celebrity, the busiest host).
    Most,
    /// The smallest / largest distinct value.
    Min,
    Max,
}

/// `[[params]]`: a value bound by name in every operation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub name: Spanned<String>,
    /// Drawn from this collection of the freshly loaded dataset …
    pub from: Option<String>,
    /// … and this field (dotted path), …
    pub field: Option<String>,
    /// … or the `_id`s this aggregation pipeline (a mongosh array
    /// literal) outputs from that collection: a value with a property the
    /// workload needs (a comment with grandchildren).
    pub pipeline: Option<String>,
    #[serde(default)]
    pub pick: Pick,
    /// Or a number that counts up with each repetition of an operation
    /// (`seq + i`), for stress operations that need fresh values.
    pub seq: Option<i64>,
    /// Or a fixed value (TOML scalar or a mongosh literal string such as
    /// `"ISODate('2026-03-01')"` when `literal = true`).
    pub value: Option<toml::Value>,
    #[serde(default)]
    pub literal: bool,
}

/// `[[operations]]`: one workload operation; the learner writes its
/// statement in a `// @op <id>` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExOp {
    pub id: Spanned<String>,
    #[serde(default)]
    pub title: String,
    pub kind: OpKind,
    /// Share of the workload mix (any unit).
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Run this many times (a stress operation); `seq` parameters count up.
    #[serde(default = "default_repeat")]
    pub repeat: u32,
    /// How a read's answer is compared with the reference's.
    pub result: Option<ResultSpec>,
    /// Run the learner's section of another operation instead of one of
    /// its own (the same statement on other values, e.g. a double follow).
    pub uses: Option<Spanned<String>>,
    /// Extra names bound for this operation: name → parameter, e.g.
    /// `with = { a = "userId", b = "userId" }` for a self-follow.
    #[serde(default)]
    pub with: BTreeMap<String, String>,
    /// Print this operation's outcome under the checklist (a stress run
    /// the learner is meant to see, e.g. the 16 MiB failure). A shown
    /// probe runs on the learner's side only: nothing compares it.
    #[serde(default)]
    pub show: bool,
    /// A fixed statement the checker runs on both sides (a probe of the
    /// shape the prompt prescribes); the learner writes no section for it.
    pub probe: Option<Spanned<String>>,
}

fn default_weight() -> f64 {
    1.0
}
fn default_repeat() -> u32 {
    1
}

/// `result = { … }`: the normalisation applied to both answers.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ResultSpec {
    /// Flatten this array field of each returned document first.
    pub unwind: Option<String>,
    /// The fields compared (dotted paths); empty compares whole documents.
    #[serde(default)]
    pub fields: Vec<String>,
    /// `set` (order ignored) or `list` (order matters).
    #[serde(default)]
    pub order: Order,
}

/// Whether order matters in a compared answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    #[default]
    Set,
    List,
}

/// `[[checks]]`: one line of the checklist. Exactly one of `check`,
/// `same`, `no_collscan`, `answer` or `classify` says what it verifies.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    pub id: Spanned<String>,
    pub text: String,
    /// Shown when the check fails, as "why": the principle the check
    /// holds the design to, never the design itself (that goes in the
    /// staged `hints`; lint refuses index keys, operators and statements
    /// here).
    #[serde(default)]
    pub hint: String,
    /// A claim in the course's check language over `mine`, `ref`,
    /// `mine_start` and `ref_start`.
    pub check: Option<Spanned<String>>,
    /// This read returns the reference's answer (after normalisation).
    pub same: Option<Spanned<String>>,
    /// This read's plan has no COLLSCAN.
    pub no_collscan: Option<Spanned<String>>,
    /// A number in the answers file (dotted path) …
    pub answer: Option<Spanned<String>>,
    /// … within `tolerance` (relative) of this measured expression.
    pub expect: Option<Spanned<String>>,
    pub tolerance: Option<f64>,
    /// A table of the answers file whose entries must match `key`.
    pub classify: Option<Spanned<String>>,
    #[serde(default)]
    pub key: BTreeMap<String, KeyEntry>,
}

/// The expected label of one classified item, and why.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    pub answer: String,
    pub why: String,
}

/// A loaded exercise.
#[derive(Debug, Clone)]
pub struct Exercise {
    /// The folder name, unique in the course.
    pub id: String,
    /// The lesson it practises.
    pub lesson: String,
    pub dir: PathBuf,
    pub spec: ExerciseSpec,
}

impl Exercise {
    /// Read a file of the exercise folder.
    pub fn read(&self, name: &str) -> Result<String, ExerciseError> {
        let p =
            crate::files::inside(&self.dir, name).map_err(|e| io_err(&self.dir.join(name), e))?;
        crate::files::read_text(&p).map_err(|e| io_err(&p, e))
    }

    pub fn prompt_text(&self) -> Result<String, ExerciseError> {
        self.read(self.spec.prompt.get_ref())
    }

    /// The checks in order.
    pub fn check_ids(&self) -> Vec<String> {
        self.spec
            .checks
            .iter()
            .map(|c| c.id.get_ref().clone())
            .collect()
    }
}

/// `exercise.<lang>.toml`: an exercise's strings in a translation, keyed
/// by the ids of `exercise.toml` (format in `docs/CONTENT_FORMAT.md`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExerciseStrings {
    pub title: Option<Spanned<String>>,
    pub summary: Option<Spanned<String>>,
    pub wrong_idea: Option<Spanned<String>>,
    /// As many as the English hints, in the same order.
    pub hints: Option<Spanned<Vec<String>>>,
    /// Operation id → title.
    #[serde(default)]
    pub operations: BTreeMap<Spanned<String>, Spanned<String>>,
    /// Check id → its text, hint and key explanations.
    #[serde(default)]
    pub checks: BTreeMap<Spanned<String>, CheckStrings>,
}

/// One check's strings in a translation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckStrings {
    pub text: Option<Spanned<String>>,
    pub hint: Option<Spanned<String>>,
    /// Classified item → why (the expected labels are never translated).
    #[serde(default)]
    pub key: BTreeMap<Spanned<String>, KeyStrings>,
}

/// One classified item's explanation in a translation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyStrings {
    pub why: Option<Spanned<String>>,
}

fn set(target: &mut String, tr: Option<&Spanned<String>>) {
    if let Some(t) = tr.filter(|t| !t.get_ref().trim().is_empty()) {
        *target = t.get_ref().clone();
    }
}

impl ExerciseStrings {
    /// Replace `spec`'s strings with these, keeping English where one is
    /// missing (hints only when the translation has as many).
    pub fn apply(&self, spec: &mut ExerciseSpec) {
        use crate::course::manifest::lookup;
        set(&mut spec.title, self.title.as_ref());
        set(&mut spec.summary, self.summary.as_ref());
        set(&mut spec.wrong_idea, self.wrong_idea.as_ref());
        if let Some(h) = &self.hints
            && h.get_ref().len() == spec.hints.len()
        {
            for (en, zh) in spec.hints.iter_mut().zip(h.get_ref()) {
                if !zh.trim().is_empty() {
                    *en = zh.clone();
                }
            }
        }
        for op in &mut spec.operations {
            set(&mut op.title, lookup(&self.operations, op.id.get_ref()));
        }
        for c in &mut spec.checks {
            let Some(tr) = lookup(&self.checks, c.id.get_ref()) else {
                continue;
            };
            set(&mut c.text, tr.text.as_ref());
            set(&mut c.hint, tr.hint.as_ref());
            for (item, entry) in &mut c.key {
                if let Some(k) = lookup(&tr.key, item) {
                    set(&mut entry.why, k.why.as_ref());
                }
            }
        }
    }
}

/// Load one exercise folder with its strings and prose files in `lang`
/// (English wherever the translation is missing).
pub fn load_exercise(lesson: &str, dir: &Path, lang: Lang) -> Result<Exercise, ExerciseError> {
    let path = dir.join("exercise.toml");
    let text = crate::files::read_text(&path).map_err(|e| io_err(&path, e))?;
    let mut spec: ExerciseSpec = toml::from_str(&text).map_err(|e| {
        ExerciseError::Invalid(crate::course::manifest::malformed(&path, &text, &e).message())
    })?;
    if let Some(tr) = lang.translated_path(&path) {
        if let Some(strings) = crate::course::manifest::read_strings::<ExerciseStrings>(&tr)? {
            strings.apply(&mut spec);
        }
        for file in [&mut spec.prompt, &mut spec.explanation] {
            let picked = lang.pick(&dir.join(file.get_ref()));
            if let Some(name) = picked.file_name().and_then(|n| n.to_str())
                && picked != dir.join(file.get_ref())
            {
                *file = Spanned::new(file.span(), name.to_string());
            }
        }
    }
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Exercise {
        id,
        lesson: lesson.to_string(),
        dir: dir.to_path_buf(),
        spec,
    })
}

/// The exercise folders of the course under `root`, in course order (by
/// lesson, then folder name), as (lesson id, folder).
pub fn exercise_dirs(root: &Path) -> Result<Vec<(String, PathBuf)>, ExerciseError> {
    // Only the folders are read: any edition lists the same ones.
    let course = Course::load(root, Lang::En)?;
    let mut out = Vec::new();
    for entry in &course.manifest.lessons {
        let ex_dir = root
            .join("lessons")
            .join(entry.dir.get_ref())
            .join("exercises");
        let Ok(read) = std::fs::read_dir(&ex_dir) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = read
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("exercise.toml").is_file())
            .collect();
        dirs.sort();
        out.extend(dirs.into_iter().map(|d| (entry.id.get_ref().clone(), d)));
    }
    Ok(out)
}

/// Every exercise of the course under `root`, in course order, in `lang`.
pub fn exercises(root: impl AsRef<Path>, lang: Lang) -> Result<Vec<Exercise>, ExerciseError> {
    exercise_dirs(root.as_ref())?
        .iter()
        .map(|(lesson, dir)| load_exercise(lesson, dir, lang))
        .collect()
}

/// Find one exercise by id, in `lang`.
pub fn find(root: impl AsRef<Path>, id: &str, lang: Lang) -> Result<Exercise, ExerciseError> {
    let all = exercises(root, lang)?;
    let known = all
        .iter()
        .map(|e| e.id.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    all.into_iter()
        .find(|e| e.id == id)
        .ok_or_else(|| ExerciseError::Unknown {
            id: id.to_string(),
            known,
        })
}

/// One section of a solution file: its text, padded with blank lines so
/// the dialect's line numbers are the file's.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub text: String,
    /// 1-based line of the marker (0 for the setup section).
    pub line: usize,
}

/// A solution file split into its setup and its operations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Solution {
    pub setup: String,
    pub ops: BTreeMap<String, Section>,
    /// Markers that appear twice, with their lines.
    pub duplicates: Vec<(String, usize)>,
}

/// The marker that opens an operation's section.
pub const OP_MARKER: &str = "// @op ";

impl Solution {
    /// Split `text` at its `// @op <id>` lines.
    pub fn parse(text: &str) -> Solution {
        let mut sol = Solution::default();
        let mut current: Option<(String, usize)> = None;
        let mut buf = String::new();
        let flush = |cur: &Option<(String, usize)>, buf: &mut String, sol: &mut Solution| {
            let text = std::mem::take(buf);
            match cur {
                None => sol.setup = text,
                Some((id, line)) => {
                    if sol.ops.contains_key(id) {
                        sol.duplicates.push((id.clone(), *line));
                    } else {
                        sol.ops.insert(id.clone(), Section { text, line: *line });
                    }
                }
            }
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(rest) = line.trim_start().strip_prefix(OP_MARKER) {
                flush(&current, &mut buf, &mut sol);
                // Keep line numbers: everything before this section is blank.
                buf = "\n".repeat(i + 1);
                current = Some((rest.trim().to_string(), i + 1));
            } else {
                buf.push_str(line);
                buf.push('\n');
            }
        }
        flush(&current, &mut buf, &mut sol);
        sol
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solution_sections_keep_file_line_numbers() {
        let s = Solution::parse(
            "db.a.createIndex({x: 1})\n// @op one\n\ndb.a.find({x: 1})\n// @op two\ndb.a.find()\n// @op one\n",
        );
        assert_eq!(s.setup, "db.a.createIndex({x: 1})\n");
        let one = &s.ops["one"];
        assert_eq!(one.line, 2);
        assert_eq!(one.text.lines().nth(3), Some("db.a.find({x: 1})"));
        assert_eq!(s.ops["two"].text.lines().nth(5), Some("db.a.find()"));
        assert_eq!(s.duplicates, vec![("one".to_string(), 7)]);
    }
}
