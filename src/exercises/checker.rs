//! The checker: a learner's solution and the hidden reference, each in a
//! fresh database (`schemalab_ex_<id>` and `schemalab_ex_<id>_ref`) loaded
//! with the exercise's seeded dataset; parameters drawn from that data with
//! the check's seed; setup, then every workload operation measured by the
//! course's own path ([`crate::measure::Meter`]: reads explained as sent
//! and run for their answer, writes executed, stress operations
//! repeated), then the course's measurements; finally each check, printed as a checklist with the
//! measured figure, the bound and, on failure, the check's hint. What the
//! checker says itself (figures' wording, reasons, errors) is a
//! [`Message`], rendered in the learner's language by
//! [`CheckReport::render_in`] and, for `--json`, by
//! [`crate::locale::serialize_in`]; the server's words stay as written.

use crate::locale::{Lang, Message};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;
use mongodb::Client;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::manifest::{CheckSpec, Exercise, Order, Param, Pick, ResultSpec, Solution};
use super::{ExerciseError, guard_db};
use crate::course::DbNames;
use crate::course::claims::{Check, CmpOp, Val, format_number, parse_expr};
use crate::course::runner::{ExperimentMetrics, VariantReport, stays_in};
use crate::course::{DatasetLoader, OpKind, Scale};
use crate::dialect::{DialectError, Session, WritePolicy, parse_program};
use crate::measure::figures::{EngineInfo, engine_info, measure_db};
use crate::measure::{Meter, OpError, OpResult, Timing};

/// How to check.
pub struct CheckOptions<'a> {
    /// Overrides the exercise's own scale.
    pub scale: Option<Scale>,
    /// Seeds the parameter draw; the same seed draws the same values.
    pub seed: u64,
    pub loader: &'a dyn DatasetLoader,
    /// Where the reference's side of earlier checks is kept, when many
    /// solutions are graded against one reference ([`ReferenceSides`]);
    /// `None`: the reference is measured afresh.
    pub references: Option<&'a ReferenceSides>,
    /// How the check's two databases are named (a learner's own on a
    /// shared server).
    pub names: DbNames,
}

/// The reference's side of checks already run, by exercise, seed and
/// scale. Those three decide everything the reference's side is (the same
/// program on the same generated data with the same drawn parameters), so
/// when many solutions are graded against one reference (`schemalab
/// exercises grade`, the test sweep) it is measured once per seed and
/// reused. Counts and sizes are the same on every run; a check that
/// compared times with the reference would compare with its first run's.
#[derive(Default)]
pub struct ReferenceSides(Mutex<HashMap<(String, u64, Scale), Arc<Side>>>);

impl ReferenceSides {
    pub fn new() -> ReferenceSides {
        ReferenceSides::default()
    }

    fn get(&self, key: &(String, u64, Scale)) -> Option<Arc<Side>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    fn keep(&self, key: (String, u64, Scale), side: Arc<Side>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, side);
    }
}

/// One checklist line. In JSON `measured` and `bound` are numbers (or
/// `null` when the check has none); `measured_text` and `bound_text` are
/// the same figures as the checklist prints them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub id: String,
    pub text: String,
    pub passed: bool,
    /// The measured figure (or the learner's answer); empty when none.
    #[serde(rename = "measured_text")]
    pub measured: Message,
    /// What it had to be; empty when nothing is bounded.
    #[serde(rename = "bound_text")]
    pub bound: Message,
    /// The measured figure as a number, when it is one.
    #[serde(rename = "measured", default)]
    pub measured_num: Option<f64>,
    /// The bound as a number, when it is one.
    #[serde(rename = "bound", default)]
    pub bound_num: Option<f64>,
    /// How `measured` is compared with `bound` (`<=`, `==`, `within 25%`
    /// …); empty when the check is no comparison of numbers.
    #[serde(default)]
    pub comparison: String,
    /// Why it failed, or extra detail (differences, reasons of a key).
    pub detail: Message,
    /// Why the check matters (the principle), shown on failure; never the
    /// design, which only the staged hints give.
    #[serde(rename = "why")]
    pub hint: String,
    /// The workload operations the check reads.
    #[serde(default)]
    pub operations: Vec<String>,
}

/// A section of the learner's file that failed on the shell's side (a
/// syntax or reference error, a refused language feature, a statement
/// leaving its database) or a setup that failed: printed before the
/// checks it affects, at its line and column in `solution.js`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SectionError {
    /// `setup` or the operation's id.
    pub section: String,
    pub file: String,
    /// 1-based line and column in the file.
    pub line: usize,
    pub col: usize,
    pub message: Message,
}

/// The checks that passed out of all of them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Score {
    pub passed: usize,
    pub total: usize,
}

/// A whole check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub exercise: String,
    pub title: String,
    /// Every check passed and the learner's setup ran (see
    /// [`CheckReport::passed`]).
    pub passed: bool,
    pub score: Score,
    pub seed: u64,
    pub scale: Scale,
    pub engine: EngineInfo,
    /// Checks of this exercise in the workspace, this one included
    /// (`null` outside a workspace).
    #[serde(default)]
    pub attempts: Option<u32>,
    /// Staged hints the learner has seen (`null` outside a workspace).
    #[serde(default)]
    pub hints_used: Option<u32>,
    /// The drawn parameters, as mongosh shows them.
    pub params: Vec<(String, String)>,
    /// Sections of the learner's file that failed on the shell's side,
    /// in file order.
    #[serde(default)]
    pub section_errors: Vec<SectionError>,
    /// Failures of the learner's side (load, setup, measure).
    pub errors: Vec<Message>,
    /// Failures of the reference (a content bug if ever non-empty).
    pub ref_errors: Vec<Message>,
    pub results: Vec<CheckResult>,
    /// The learner's operations, with what they measured.
    pub operations: Vec<OpResult>,
    /// Outcomes of the operations marked `show` (stress runs).
    pub notes: Vec<Message>,
    /// Staged hints this failed check revealed (the exercise's
    /// `hints_after` was reached), numbered from 1.
    #[serde(default)]
    pub revealed: Vec<(usize, String)>,
    /// The progress file could not be written (a full disk): the verdict
    /// stands, the attempt was not recorded.
    #[serde(default)]
    pub progress_error: Option<Message>,
}

impl CheckReport {
    /// Every check passed, the learner's setup ran and nothing else
    /// failed on the learner's side.
    pub fn passed(&self) -> bool {
        self.passed
    }

    fn compute_passed(&self) -> bool {
        self.errors.is_empty()
            && self.section_errors.iter().all(|e| e.section != SETUP)
            && self.results.iter().all(|r| r.passed)
    }

    /// "5/7" checks passed.
    pub fn score(&self) -> (usize, usize) {
        (self.score.passed, self.score.total)
    }

    /// The printed checklist, in English.
    pub fn render(&self) -> String {
        self.render_in(Lang::En)
    }

    /// The printed checklist with schemalab's own words in `lang` (check
    /// texts and hints come translated with the exercise): the failed
    /// sections first, at their line and column, then each check with
    /// what was measured, the bound and, on failure, why it matters.
    pub fn render_in(&self, lang: Lang) -> String {
        let colon = lang.t(": ");
        let mut s = Message::new("{id} · {title} ({details})")
            .arg("id", &self.exercise)
            .arg("title", &self.title)
            .arg_msg(
                "details",
                Message::new("seed {seed}, scale {scale}, {engine}")
                    .arg("seed", self.seed)
                    .arg("scale", self.scale.as_str())
                    .arg("engine", self.engine.name_in(lang)),
            )
            .render_in(lang);
        s.push('\n');
        if !self.params.is_empty() {
            let p: Vec<String> = self
                .params
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect();
            s.push_str(&format!(
                "  {}{colon}{}\n",
                lang.t("parameters"),
                p.join(", ")
            ));
        }
        for e in &self.section_errors {
            let mut lines = e.message.render_in(lang);
            lines = lines.replace('\n', "\n      ");
            s.push_str(&format!("  ! {}:{}:{}: {lines}\n", e.file, e.line, e.col));
            let affected: Vec<&str> = self
                .results
                .iter()
                .filter(|r| e.section == SETUP || r.operations.contains(&e.section))
                .map(|r| r.id.as_str())
                .collect();
            let what = if e.section == SETUP {
                Message::new("in the setup; every check depends on it")
            } else {
                Message::new("in section '{op}'").arg("op", &e.section)
            };
            let mut tail = what.render_in(lang);
            if e.section != SETUP && !affected.is_empty() {
                tail = lang.f(
                    "{what}; it affects {checks}",
                    &[("what", &tail), ("checks", &affected.join(", "))],
                );
            }
            s.push_str(&format!("      ({tail})\n"));
        }
        for e in &self.errors {
            s.push_str(&format!("  ! {}\n", e.render_in(lang)));
        }
        for e in &self.ref_errors {
            s.push_str(&format!(
                "  ! {}{colon}{}\n",
                lang.t("reference"),
                e.render_in(lang)
            ));
        }
        for n in &self.notes {
            s.push_str(&format!(
                "  {}{colon}{}\n",
                lang.t("stress run"),
                n.render_in(lang)
            ));
        }
        for r in &self.results {
            let mark = if r.passed { '✓' } else { '✗' };
            s.push_str(&format!("  {mark} {}  [{}]\n", r.text, r.id));
            let (measured, bound) = (r.measured.render_in(lang), r.bound.render_in(lang));
            if !measured.is_empty() || !bound.is_empty() {
                s.push_str(&format!(
                    "      {}\n",
                    lang.f(
                        "measured {measured}   required {bound}",
                        &[("measured", &measured), ("bound", &bound)]
                    )
                ));
            }
            // A check that failed because its section did is pointed at
            // the error printed above, not told it again.
            let failed_section = self
                .section_errors
                .iter()
                .find(|e| !r.passed && r.operations.contains(&e.section));
            let detail = match failed_section {
                Some(e) => Message::new("its section failed: see {place} above")
                    .arg("place", format!("{}:{}:{}", e.file, e.line, e.col))
                    .render_in(lang),
                None => r.detail.render_in(lang),
            };
            if !detail.is_empty() && (!r.passed || detail.contains('\n')) {
                for line in detail.lines() {
                    s.push_str(&format!("      {line}\n"));
                }
            }
            if !r.passed && !r.hint.is_empty() {
                s.push_str(&format!("      {}{colon}{}\n", lang.t("why"), r.hint));
            }
        }
        for (n, h) in &self.revealed {
            s.push_str(&format!(
                "  {}\n",
                lang.f(
                    "after {attempts} failed checks, hint {n}: {hint}",
                    &[
                        ("attempts", &self.attempts.unwrap_or_default()),
                        ("n", n),
                        ("hint", h)
                    ]
                )
            ));
        }
        if let Some(e) = &self.progress_error {
            s.push_str(&format!(
                "  ! {}\n",
                Message::new("progress not saved (this check is not counted): {e}")
                    .arg_msg("e", e.clone())
                    .render_in(lang)
            ));
        }
        let (ok, all) = self.score();
        s.push_str(&lang.f("{ok}/{all} checks pass", &[("ok", &ok), ("all", &all)]));
        if self.passed() {
            s.push_str(lang.t(" — exercise passed"));
        }
        s.push('\n');
        s
    }
}

/// The section name of the setup (everything before the first marker).
pub const SETUP: &str = "setup";

/// One side's outcome.
struct Side {
    start: VariantReport,
    end: VariantReport,
    /// Normalised answers of reads, by operation id.
    answers: Vec<(String, Result<Vec<String>, Message>)>,
    errors: Vec<Message>,
    section_errors: Vec<SectionError>,
}

/// The scale a check runs at: the one asked for, else the exercise's own.
fn scale_of(ex: &Exercise, asked: Option<Scale>) -> Result<Scale, ExerciseError> {
    match asked {
        Some(s) => Ok(s),
        None => ex
            .spec
            .scale
            .parse()
            .map_err(|e: crate::course::CourseError| {
                ExerciseError::Invalid(
                    Message::new("{id}: {e}")
                        .arg("id", &ex.id)
                        .arg_msg("e", e.message()),
                )
            }),
    }
}

/// Check `solution` (the text of a `solution.js`) and `answers` (the text
/// of an answers file, when the exercise has one) against the reference.
pub async fn check_exercise(
    client: &Client,
    ex: &Exercise,
    solution: &str,
    answers: Option<&str>,
    opts: &CheckOptions<'_>,
) -> Result<CheckReport, ExerciseError> {
    let engine = engine_info(client)
        .await
        .map_err(|e| ExerciseError::Server(Message::verbatim(e)))?;
    let scale = scale_of(ex, opts.scale)?;
    let reference = Solution::parse(&ex.read(ex.spec.reference.get_ref())?);
    let mine = Solution::parse(solution);

    let mine_db = opts.names.exercise(&ex.id);
    let ref_db = opts.names.exercise_ref(&ex.id);
    let key = (ex.id.clone(), opts.seed, scale);
    let kept = opts.references.and_then(|r| r.get(&key));
    let dbs = if kept.is_some() {
        vec![&mine_db]
    } else {
        vec![&mine_db, &ref_db]
    };
    for db in dbs {
        guard_db(&opts.names, db, &ex.id)?;
        client.database(db).drop().await.map_err(|e| {
            ExerciseError::Server(Message::new("dropping {db}: {e}").arg("db", db).arg("e", e))
        })?;
        // The dataset is ours, not the learner's: a check that cannot
        // load it grades nothing (a dead server, a full disk).
        if let Err(e) = opts
            .loader
            .load(client, db, ex.spec.dataset.get_ref(), scale, ex.spec.seed)
            .await
        {
            return Err(ExerciseError::Server(
                Message::new("loading {dataset}: {e}")
                    .arg("dataset", ex.spec.dataset.get_ref())
                    .arg_msg("e", e),
            ));
        }
    }
    let params = draw_params(client, &mine_db, &ex.spec.params, opts.seed).await?;
    let mine_side = run_side(client, ex, &mine, &mine_db, "mine", &params).await?;
    let ref_side = match kept {
        Some(side) => side,
        None => {
            let side = Arc::new(run_side(client, ex, &reference, &ref_db, "ref", &params).await?);
            if let Some(r) = opts.references {
                r.keep(key, Arc::clone(&side));
            }
            side
        }
    };

    let variants = vec![
        mine_side.end.clone(),
        ref_side.end.clone(),
        mine_side.start.clone(),
        ref_side.start.clone(),
    ];
    let source = ExperimentMetrics {
        variants: &variants,
    };
    let answers_table = answers.map(|a| a.parse::<toml::Table>());
    let results = ex
        .spec
        .checks
        .iter()
        .map(|c| evaluate(c, &source, &mine_side, &ref_side, answers_table.as_ref()))
        .collect();
    let notes = ex
        .spec
        .operations
        .iter()
        .filter(|o| o.show)
        .filter_map(|o| {
            let r = mine_side
                .end
                .operations
                .iter()
                .find(|r| &r.id == o.id.get_ref())?;
            Some(
                match (&r.error, &r.write, &r.read) {
                    (Some(e), _, _) if e.code_name.is_empty() => {
                        Message::new("{title} — failed: {e}").arg_msg("e", e.message.clone())
                    }
                    (Some(e), _, _) => Message::new("{title} — failed with {code_name}: {e}")
                        .arg("code_name", &e.code_name)
                        .arg_msg("e", e.message.clone()),
                    (None, Some(w), _) => Message::new("{title} — n {n}, modified {modified}")
                        .arg("n", w.n)
                        .arg("modified", w.n_modified),
                    (None, None, Some(m)) => {
                        Message::new("{title} — {n} returned").arg("n", m.n_returned)
                    }
                    _ => Message::new("{title} — no result"),
                }
                .arg("title", &o.title),
            )
        })
        .collect();
    let shown_params = params
        .iter()
        .filter(|p| p.seq.is_none())
        .map(|p| (p.name.clone(), crate::dialect::print::inspect(&p.value)))
        .collect();
    let results: Vec<CheckResult> = results;
    let mut report = CheckReport {
        exercise: ex.id.clone(),
        title: ex.spec.title.clone(),
        passed: false,
        score: Score {
            passed: results.iter().filter(|r| r.passed).count(),
            total: results.len(),
        },
        seed: opts.seed,
        scale,
        engine,
        attempts: None,
        hints_used: None,
        params: shown_params,
        section_errors: mine_side.section_errors,
        errors: mine_side.errors,
        ref_errors: ref_side.errors.clone(),
        results,
        operations: mine_side.end.operations,
        notes,
        revealed: Vec::new(),
        progress_error: None,
    };
    report.passed = report.compute_passed();
    Ok(report)
}

/// Load exercise `ex`'s dataset into the learner's database (dropped
/// first) and draw its parameters with `seed`, as a check does, without
/// running anything of the learner's: what `schemalab shell --exercise`
/// opens. Returns the database and the parameters (sequence parameters
/// at their first value).
pub async fn prepare_learner_db(
    client: &Client,
    ex: &Exercise,
    seed: u64,
    scale: Option<Scale>,
    loader: &dyn DatasetLoader,
    names: &DbNames,
) -> Result<(String, Vec<(String, Bson)>), ExerciseError> {
    let scale = scale_of(ex, scale)?;
    let db = names.exercise(&ex.id);
    guard_db(names, &db, &ex.id)?;
    client.database(&db).drop().await.map_err(|e| {
        ExerciseError::Server(
            Message::new("dropping {db}: {e}")
                .arg("db", &db)
                .arg("e", e),
        )
    })?;
    loader
        .load(client, &db, ex.spec.dataset.get_ref(), scale, ex.spec.seed)
        .await
        .map_err(|e| {
            ExerciseError::Server(
                Message::new("loading {dataset}: {e}")
                    .arg("dataset", ex.spec.dataset.get_ref())
                    .arg_msg("e", e),
            )
        })?;
    let params = draw_params(client, &db, &ex.spec.params, seed).await?;
    Ok((db, params.into_iter().map(|p| (p.name, p.value)).collect()))
}

/// A drawn parameter.
#[derive(Debug, Clone)]
struct Drawn {
    name: String,
    value: Bson,
    seq: Option<i64>,
}

fn int_bson(n: i64) -> Bson {
    i32::try_from(n).map_or(Bson::Int64(n), Bson::Int32)
}

async fn draw_params(
    client: &Client,
    db: &str,
    params: &[Param],
    seed: u64,
) -> Result<Vec<Drawn>, ExerciseError> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for p in params {
        let name = p.name.get_ref().clone();
        if let Some(seq) = p.seq {
            out.push(Drawn {
                name,
                value: int_bson(seq),
                seq: Some(seq),
            });
            continue;
        }
        if let Some(v) = &p.value {
            let value = if p.literal {
                let src = v.as_str().unwrap_or_default();
                literal(client, db, src).await.map_err(|e| {
                    ExerciseError::Invalid(
                        Message::new("parameter {name}: {e}")
                            .arg("name", &name)
                            .arg_msg("e", e.with_source(src)),
                    )
                })?
            } else {
                toml_to_bson(v)
            };
            out.push(Drawn {
                name,
                value,
                seq: None,
            });
            continue;
        }
        if let (Some(coll), Some(stages)) = (&p.from, &p.pipeline) {
            let invalid = |e: Message| {
                ExerciseError::Invalid(
                    Message::new("parameter {name}: {e}")
                        .arg("name", &name)
                        .arg_msg("e", e),
                )
            };
            let mut pipeline: Vec<Document> = match literal(client, db, stages).await {
                Ok(Bson::Array(a)) => a
                    .into_iter()
                    .filter_map(|s| match s {
                        Bson::Document(d) => Some(d),
                        _ => None,
                    })
                    .collect(),
                Ok(other) => return Err(invalid(Message::verbatim(other))),
                Err(e) => return Err(invalid(e.with_source(stages))),
            };
            pipeline.push(doc! {"$sort": {"_id": 1}});
            let values: Vec<Document> = client
                .database(db)
                .collection::<Document>(coll)
                .aggregate(pipeline)
                .await
                .map_err(|e| drawing(&name, e))?
                .try_collect()
                .await
                .map_err(|e| drawing(&name, e))?;
            if values.is_empty() {
                return Err(ExerciseError::Invalid(
                    Message::new("parameter {name}: {coll}.{field} has no values in the dataset")
                        .arg("name", &name)
                        .arg("coll", coll)
                        .arg("field", "_id"),
                ));
            }
            let i = match p.pick {
                Pick::Random => rng.random_range(0..values.len()),
                Pick::Most | Pick::Min => 0,
                Pick::Max => values.len() - 1,
            };
            out.push(Drawn {
                name,
                value: values[i].get("_id").cloned().unwrap_or(Bson::Null),
                seq: None,
            });
            continue;
        }
        let (Some(coll), Some(field)) = (&p.from, &p.field) else {
            return Err(ExerciseError::Invalid(
                Message::new("parameter {name} needs from + field, seq or value")
                    .arg("name", &name),
            ));
        };
        let sort = if p.pick == Pick::Most {
            doc! {"n": -1, "_id": 1}
        } else {
            doc! {"_id": 1}
        };
        let pipeline = vec![
            doc! {"$match": {field: {"$exists": true, "$ne": Bson::Null}}},
            doc! {"$group": {"_id": format!("${field}"), "n": {"$sum": 1}}},
            doc! {"$sort": sort},
        ];
        let values: Vec<Document> = client
            .database(db)
            .collection::<Document>(coll)
            .aggregate(pipeline)
            .await
            .map_err(|e| drawing(&name, e))?
            .try_collect()
            .await
            .map_err(|e| drawing(&name, e))?;
        if values.is_empty() {
            return Err(ExerciseError::Invalid(
                Message::new("parameter {name}: {coll}.{field} has no values in the dataset")
                    .arg("name", &name)
                    .arg("coll", coll)
                    .arg("field", field),
            ));
        }
        let i = match p.pick {
            Pick::Random => rng.random_range(0..values.len()),
            Pick::Most | Pick::Min => 0,
            Pick::Max => values.len() - 1,
        };
        out.push(Drawn {
            name,
            value: values[i].get("_id").cloned().unwrap_or(Bson::Null),
            seq: None,
        });
    }
    Ok(out)
}

/// The server refused the query that draws parameter `name`.
fn drawing(name: &str, e: mongodb::error::Error) -> ExerciseError {
    ExerciseError::Server(
        Message::new("drawing {name}: {e}")
            .arg("name", name)
            .arg("e", e),
    )
}

async fn literal(client: &Client, db: &str, src: &str) -> Result<Bson, DialectError> {
    let program = parse_program(src)?;
    let mut s =
        Session::new(client.clone(), db.to_string()).with_policy(WritePolicy::Only(db.to_string()));
    s.eval_value(&program).await.1
}

fn toml_to_bson(v: &toml::Value) -> Bson {
    match v {
        toml::Value::String(s) => Bson::String(s.clone()),
        toml::Value::Integer(i) => int_bson(*i),
        toml::Value::Float(f) => Bson::Double(*f),
        toml::Value::Boolean(b) => Bson::Boolean(*b),
        toml::Value::Array(a) => Bson::Array(a.iter().map(toml_to_bson).collect()),
        toml::Value::Table(t) => Bson::Document(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_bson(v)))
                .collect(),
        ),
        toml::Value::Datetime(d) => Bson::String(d.to_string()),
    }
}

fn empty_variant(id: &str, db: &str) -> VariantReport {
    VariantReport {
        id: id.to_string(),
        title: String::new(),
        database: db.to_string(),
        load_error: None,
        setup_error: None,
        operations: Vec::new(),
        collections: Vec::new(),
        measure_error: None,
        recommended: false,
        failure: None,
        samples: Vec::new(),
        working_set: None,
    }
}

async fn run_side(
    client: &Client,
    ex: &Exercise,
    sol: &Solution,
    db: &str,
    variant: &str,
    params: &[Drawn],
) -> Result<Side, ExerciseError> {
    let file = if variant == "ref" {
        ex.spec.reference.get_ref().as_str()
    } else {
        "solution.js"
    };
    let mut errors = Vec::new();
    let mut section_errors = Vec::new();
    let mut session =
        Session::new(client.clone(), db.to_string()).with_policy(WritePolicy::Only(db.to_string()));
    for p in params {
        session.bind(&p.name, p.value.clone());
    }
    if let Err(e) = run_script(&mut session, &sol.setup, db).await {
        if let Some(env) = environment(&e, file, SETUP) {
            return Err(env);
        }
        // The setup ends where the first section begins: a place past
        // it (the end of the text) is its last line with code.
        let last = sol
            .setup
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .last()
            .map_or(1, |(i, _)| i + 1);
        let (line, col) = e
            .position()
            .map_or((1, 1), |p| (p.line as usize, p.col as usize));
        let (line, col) = if line > last { (last, 1) } else { (line, col) };
        section_errors.push(SectionError {
            section: SETUP.to_string(),
            file: file.to_string(),
            line,
            col,
            message: e.with_source(&sol.setup),
        });
    }
    let mut start = empty_variant(&format!("{variant}_start"), db);
    match measure_db(client, db).await {
        Ok(c) => start.collections = c,
        Err(e) => errors.push(measuring(db, e)?),
    }
    let mut end = empty_variant(variant, db);
    let mut answers = Vec::new();
    for op in &ex.spec.operations {
        let id = op.id.get_ref().clone();
        if variant == "ref" && op.show && op.probe.is_some() {
            continue;
        }
        let probe;
        let section = match &op.probe {
            Some(stmt) => {
                probe = super::manifest::Section {
                    text: stmt.get_ref().clone(),
                    line: 0,
                };
                Some(&probe)
            }
            None => sol.ops.get(op.uses.as_ref().map_or(&id, |u| u.get_ref())),
        };
        let Some(section) = section else {
            let msg = Message::new("{file} has no `// @op {id}` section")
                .arg("file", file)
                .arg("id", &id);
            end.operations.push(failed_op(&id, op.kind, msg.clone()));
            if op.result.is_some() {
                answers.push((id, Err(msg)));
            }
            continue;
        };
        let mut session = Session::new(session.client().clone(), db.to_string())
            .with_policy(WritePolicy::Only(db.to_string()));
        // One meter for every run of the section: it asks once whether the
        // server's cache can be emptied.
        let mut meter = Meter::new(client, db);
        // Each run of a section is its own script, as in mongosh: it runs
        // in a block of its own (its `const`s start afresh), with the
        // parameters bound, a `seq` parameter counting up from run to run.
        let bind = |session: &mut Session, rep: u32| {
            let value = |p: &Drawn| {
                p.seq
                    .map_or_else(|| p.value.clone(), |s| int_bson(s + i64::from(rep)))
            };
            for p in params {
                session.bind(&p.name, value(p));
            }
            for (name, param) in &op.with {
                if let Some(p) = params.iter().find(|p| &p.name == param) {
                    session.bind(name, value(p));
                }
            }
            session.bind("i", int_bson(i64::from(rep)));
        };
        let (mut result, answer) = run_op(
            &mut meter,
            &mut session,
            &id,
            op.kind,
            &section.text,
            db,
            op.repeat.max(1),
            bind,
        )
        .await;
        if let Some(e) = &mut result.error {
            if e.code_name == crate::measure::DRIVER_ERROR
                && is_environment_error(&e.message.to_string())
            {
                return Err(died(file, &id, e.message.clone()));
            }
            let why = std::mem::take(&mut e.message);
            // A place before the section's marker is no place in it (an
            // interrupted script is placed at its start): the marker's line.
            let (line, col) = e
                .pos
                .map(|p| (p.line as usize, p.col as usize))
                .filter(|(l, _)| *l > section.line)
                .unwrap_or((section.line.max(1), 1));
            if op.probe.is_none()
                && e.code_name == crate::measure::SHELL_ERROR
                && why != empty_section()
                && !section_errors.iter().any(|s: &SectionError| {
                    s.section == *op.uses.as_ref().map_or(&id, |u| u.get_ref())
                })
            {
                section_errors.push(SectionError {
                    section: op.uses.as_ref().map_or(&id, |u| u.get_ref()).clone(),
                    file: file.to_string(),
                    line,
                    col,
                    message: why.clone(),
                });
            }
            e.message = if op.probe.is_some() {
                Message::new("probe '{id}': {e}")
                    .arg("id", &id)
                    .arg_msg("e", why)
            } else {
                Message::new("{file}:{line}:{col}: {e}")
                    .arg("file", file)
                    .arg("line", line)
                    .arg("col", col)
                    .arg_msg("e", why)
            };
        }
        if let Some(spec) = &op.result {
            let norm = match (&result.error, answer) {
                (Some(e), _) => {
                    Err(Message::new("the operation failed: {e}").arg_msg("e", e.message.clone()))
                }
                (None, Some(a)) => Ok(normalise(&a, spec)),
                (None, None) => Err(Message::new("the operation returned no answer")),
            };
            answers.push((id, norm));
        }
        end.operations.push(result);
    }
    match measure_db(client, db).await {
        Ok(c) => end.collections = c,
        Err(e) => errors.push(measuring(db, e)?),
    }
    Ok(Side {
        start,
        end,
        answers,
        errors,
        section_errors,
    })
}

/// Measuring `db` failed (`e`: the driver's or the server's words): a
/// lost server stops the check, anything else is reported.
fn measuring(db: &str, e: String) -> Result<Message, ExerciseError> {
    let m = Message::new("measuring {db}: {e}")
        .arg("db", db)
        .arg("e", e.as_str());
    if is_environment_error(&e) {
        Err(ExerciseError::Server(m))
    } else {
        Ok(m)
    }
}

/// Whether a driver's words say the server is gone or unreachable (a
/// connection reset or refused, server selection given up), as opposed
/// to the server answering with an error.
fn is_environment_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    crate::course::runner::is_environment_error(&m)
        || [
            "i/o error",
            "end of file",
            "eof",
            "pool cleared",
            "no available servers",
        ]
        .iter()
        .any(|k| m.contains(k))
}

/// The server was lost while `file`'s section `section` ran: the check
/// stops there and grades nothing (every later step would fail for the
/// same reason, not the solution's).
fn died(file: &str, section: &str, e: Message) -> ExerciseError {
    ExerciseError::Server(
        Message::new(
            "the server stopped answering while {file} section '{section}' ran, so nothing was graded: {e}",
        )
        .arg("file", file)
        .arg("section", section)
        .arg_msg("e", e),
    )
}

/// A setup error that is the environment's, not the learner's.
fn environment(e: &DialectError, file: &str, section: &str) -> Option<ExerciseError> {
    match e {
        DialectError::Driver { message, .. } if is_environment_error(message) => {
            Some(died(file, section, Message::verbatim(message)))
        }
        _ => None,
    }
}

fn failed_op(id: &str, kind: OpKind, message: Message) -> OpResult {
    let mut op = OpResult::new(id, kind, "");
    op.error = Some(OpError::shell(message));
    op
}

/// Repetitions of a write add up; a read keeps its last measurement.
fn add_op(a: OpResult, b: OpResult) -> OpResult {
    let write = match (a.write, b.write) {
        (Some(mut x), Some(y)) => {
            x.add(&y);
            Some(x)
        }
        (x, y) => y.or(x),
    };
    let millis = a.millis.unwrap_or(0.0) + b.millis.unwrap_or(0.0);
    OpResult {
        millis: Some(millis),
        timing: Some(Timing::of(vec![millis])),
        write,
        read: b.read.or(a.read),
        error: b.error.or(a.error),
        ..b
    }
}

async fn run_script(session: &mut Session, src: &str, db: &str) -> Result<(), DialectError> {
    let program = parse_program(src)?;
    stays_in(&program, db).map_err(|e| DialectError::Refused {
        message: e.message,
        pos: Some(e.pos),
    })?;
    let (_, res) = session.eval_program(&program).await;
    res
}

/// Run one operation through the measurement path ([`Meter`]), `runs`
/// times with `bind` setting each run's parameters: a write's runs are
/// measured as one series ([`Meter::write_series`]), a read's one by one
/// and added up. A read's answer is its last run's last statement's value.
#[allow(clippy::too_many_arguments)]
async fn run_op(
    meter: &mut Meter<'_>,
    session: &mut Session,
    id: &str,
    kind: OpKind,
    src: &str,
    db: &str,
    runs: u32,
    mut bind: impl FnMut(&mut Session, u32),
) -> (OpResult, Option<Bson>) {
    let mut result = OpResult::new(id, kind, src.trim());
    let program = match parse_program(src) {
        Ok(p) => p,
        Err(e) => {
            let mut err = OpError::shell(e.with_source(src));
            err.pos = e.position();
            result.error = Some(err);
            return (result, None);
        }
    };
    if program.is_empty() {
        result.error = Some(OpError::shell(empty_section()));
        return (result, None);
    }
    if let Err(e) = stays_in(&program, db) {
        let mut err = OpError::shell(e.to_message());
        err.pos = Some(e.pos);
        result.error = Some(err);
        return (result, None);
    }
    match kind {
        OpKind::Write => {
            let answer = result.set(meter.write_series(session, &program, src, runs, bind).await);
            (result, answer)
        }
        OpKind::Read => {
            let mut total: Option<OpResult> = None;
            let mut answer = None;
            for run in 0..runs.max(1) {
                bind(session, run);
                let mut r = OpResult::new(id, kind, src.trim());
                answer = r.set(meter.run(session, &program, src, kind).await);
                let failed = r.error.is_some();
                total = Some(match total {
                    None => r,
                    Some(t) => add_op(t, r),
                });
                if failed {
                    break;
                }
            }
            (total.unwrap_or(result), answer)
        }
    }
}

/// What an operation of an untouched section reports (no section error:
/// nothing was written there yet).
fn empty_section() -> Message {
    Message::new("the section has no statement yet")
}

/// A value in a comparable text form: numbers of any BSON type compare
/// by value, documents field by field.
fn canon(b: &Bson) -> String {
    match b {
        Bson::Int32(i) => format_number(f64::from(*i)),
        Bson::Int64(i) => format!("{i}"),
        Bson::Double(d) => format_number(*d),
        Bson::Array(a) => format!("[{}]", a.iter().map(canon).collect::<Vec<_>>().join(",")),
        Bson::Document(d) => format!(
            "{{{}}}",
            d.iter()
                .map(|(k, v)| format!("{k}:{}", canon(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => crate::dialect::print::inspect(other),
    }
}

fn get_path<'a>(d: &'a Document, path: &str) -> Option<&'a Bson> {
    let mut cur: Option<&Bson> = None;
    let mut doc = d;
    for part in path.split('.') {
        let v = doc.get(part)?;
        cur = Some(v);
        if let Bson::Document(inner) = v {
            doc = inner;
        }
    }
    cur
}

/// Apply an exercise's normalisation to an answer.
pub fn normalise(answer: &Bson, spec: &ResultSpec) -> Vec<String> {
    let items: Vec<Bson> = match answer {
        Bson::Array(a) => a.clone(),
        Bson::Null | Bson::Undefined => Vec::new(),
        other => vec![other.clone()],
    };
    let mut flat = Vec::new();
    for item in items {
        match (&spec.unwind, &item) {
            (Some(path), Bson::Document(d)) => {
                if let Some(Bson::Array(inner)) = get_path(d, path) {
                    flat.extend(inner.iter().cloned());
                }
            }
            _ => flat.push(item),
        }
    }
    let mut out: Vec<String> = flat
        .iter()
        .map(|item| match item {
            Bson::Document(d) if !spec.fields.is_empty() => spec
                .fields
                .iter()
                .map(|f| get_path(d, f).map_or_else(|| "∅".to_string(), canon))
                .collect::<Vec<_>>()
                .join(" | "),
            other if !spec.fields.is_empty() && spec.fields.len() == 1 => canon(other),
            other => canon(other),
        })
        .collect();
    if spec.order == Order::Set {
        out.sort();
    }
    out
}

fn cmp_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
    }
}

fn lookup_answer<'a>(t: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut parts = path.split('.');
    let mut cur = t.get(parts.next()?)?;
    for p in parts {
        cur = cur.as_table()?.get(p)?;
    }
    Some(cur)
}

fn evaluate(
    c: &CheckSpec,
    source: &ExperimentMetrics<'_>,
    mine: &Side,
    reference: &Side,
    answers: Option<&Result<toml::Table, toml::de::Error>>,
) -> CheckResult {
    let mut r = CheckResult {
        id: c.id.get_ref().clone(),
        text: c.text.clone(),
        passed: false,
        measured: Message::default(),
        bound: Message::default(),
        measured_num: None,
        bound_num: None,
        comparison: String::new(),
        detail: Message::default(),
        hint: c.hint.clone(),
        operations: check_operations(c),
    };
    if let Some(check) = &c.check {
        match Check::parse(check.get_ref()) {
            Ok(parsed) => {
                let v = parsed.evaluate(source);
                r.passed = v.passed;
                if let (Some(l), Some(rt)) = (&v.left, &v.right) {
                    r.measured = Message::verbatim(l);
                    r.bound = Message::verbatim(format!("{} {rt}", cmp_symbol(parsed.op)));
                    r.comparison = cmp_symbol(parsed.op).to_string();
                    if let (Val::Num(a), Val::Num(b)) = (l, rt) {
                        r.measured_num = Some(*a);
                        r.bound_num = Some(*b);
                    }
                }
                if !v.passed {
                    r.detail = v.reason;
                }
            }
            Err(e) => {
                r.detail = Message::new("check does not parse: {e}").arg_msg("e", e.to_message());
            }
        }
    } else if let Some(op) = &c.same {
        let op = op.get_ref();
        let find = |s: &Side| {
            s.answers
                .iter()
                .find(|(id, _)| id == op)
                .map(|(_, a)| a.clone())
        };
        match (find(mine), find(reference)) {
            (Some(Ok(m)), Some(Ok(rf))) => {
                r.measured = Message::new("{n} item(s)").arg("n", m.len());
                r.bound = Message::new("the reference's {n} item(s)").arg("n", rf.len());
                r.measured_num = Some(m.len() as f64);
                r.bound_num = Some(rf.len() as f64);
                r.comparison = "same items".into();
                r.passed = m == rf;
                if !r.passed {
                    r.detail = differences(&m, &rf);
                }
            }
            (Some(Err(e)), _) => r.detail = e,
            (_, Some(Err(e))) => {
                r.detail = Message::new("the reference failed: {e}").arg_msg("e", e);
            }
            _ => {
                r.detail = Message::new("operation '{op}' has no compared result").arg("op", op);
            }
        }
    } else if let Some(op) = &c.no_collscan {
        let op = op.get_ref();
        match mine.end.operations.iter().find(|o| &o.id == op) {
            Some(OpResult {
                read: Some(m),
                error: None,
                ..
            }) => {
                r.measured = Message::verbatim(&m.stages);
                r.bound = Message::new("no COLLSCAN");
                r.passed = !m.stages.contains("COLLSCAN");
            }
            Some(OpResult { error: Some(e), .. }) => {
                r.detail = Message::new("operation '{id}' failed: {e}")
                    .arg("id", op)
                    .arg_msg("e", e.message.clone());
            }
            _ => {
                r.detail = Message::new("operation '{op}' did not run as a read").arg("op", op);
            }
        }
    } else if let (Some(path), Some(expect)) = (&c.answer, &c.expect) {
        let expected = parse_expr(expect.get_ref())
            .map_err(|e| e.to_message())
            .and_then(|e| e.eval(source));
        let path = path.get_ref();
        let given = match answers {
            None => Err(Message::new("this exercise's answers file is missing")),
            Some(Err(e)) => Err(answers_unparsed(e)),
            Some(Ok(t)) => match lookup_answer(t, path) {
                Some(toml::Value::Integer(i)) => Ok(*i as f64),
                Some(toml::Value::Float(f)) => Ok(*f),
                Some(_) => {
                    Err(Message::new("answers.toml: {path} must be a number").arg("path", path))
                }
                None => {
                    Err(Message::new("answers.toml: {path} is not answered yet").arg("path", path))
                }
            },
        };
        let tol = c.tolerance.unwrap_or(0.25);
        match (given, expected) {
            (Ok(g), Ok(Val::Num(e))) => {
                r.measured = Message::new("your answer {n}").arg("n", format_number(g));
                r.bound = Message::new("within {pct}% of {value} (measured)")
                    .arg("pct", format_number(tol * 100.0))
                    .arg("value", format_number(e));
                r.measured_num = Some(g);
                r.bound_num = Some(e);
                r.comparison = format!("within {}%", format_number(tol * 100.0));
                r.passed = (g - e).abs() <= tol * e.abs();
            }
            (Err(e), _) => r.detail = e,
            (_, Err(e)) => r.detail = Message::new("the measurement failed: {e}").arg_msg("e", e),
            (_, Ok(v)) => {
                r.detail = Message::new("the expectation is not a number: {v}").arg("v", v);
            }
        }
    } else if let Some(table) = &c.classify {
        let table = table.get_ref();
        let got = match answers {
            None => Err(Message::new("this exercise's answers file is missing")),
            Some(Err(e)) => Err(answers_unparsed(e)),
            Some(Ok(t)) => t
                .get(table)
                .and_then(toml::Value::as_table)
                .cloned()
                .ok_or_else(|| {
                    Message::new("answers.toml has no [{table}] table").arg("table", table)
                }),
        };
        match got {
            Err(e) => r.detail = e,
            Ok(t) => {
                let mut right = 0;
                let mut lines = Vec::new();
                for (item, k) in &c.key {
                    let given = t.get(item).and_then(toml::Value::as_str).unwrap_or("");
                    let ok = given.trim().eq_ignore_ascii_case(k.answer.trim());
                    if ok {
                        right += 1;
                    }
                    lines.push(
                        Message::new("{mark} {item}: {given} — {why}")
                            .arg("mark", if ok { '✓' } else { '✗' })
                            .arg("item", item)
                            .arg_msg(
                                "given",
                                if given.is_empty() {
                                    Message::new("(no answer)")
                                } else {
                                    Message::verbatim(given)
                                },
                            )
                            .arg_msg(
                                "why",
                                if ok {
                                    // The key's reason comes translated with
                                    // the exercise.
                                    Message::verbatim(&k.why)
                                } else {
                                    Message::new("think again about this one")
                                },
                            ),
                    );
                }
                r.measured = Message::new("{n} right").arg("n", right);
                r.bound = Message::new("all {n}").arg("n", c.key.len());
                r.measured_num = Some(right as f64);
                r.bound_num = Some(c.key.len() as f64);
                r.comparison = "==".into();
                r.passed = right == c.key.len();
                r.detail = join_lines(lines);
            }
        }
    } else {
        r.detail = Message::new("the check says nothing to verify");
    }
    r
}

/// `answers.toml` did not parse (`e`: the TOML parser's own words).
fn answers_unparsed(e: &toml::de::Error) -> Message {
    Message::new("answers.toml does not parse: {e}").arg("e", e.message())
}

/// Messages one under the other, each rendered in the same language.
fn join_lines(lines: Vec<Message>) -> Message {
    lines
        .into_iter()
        .reduce(|above, below| {
            Message::new("{above}\n{below}")
                .arg_msg("above", above)
                .arg_msg("below", below)
        })
        .unwrap_or_default()
}

/// The operations a check reads: its `same` or `no_collscan` operation,
/// or every `<variant>.op.<id>.` its claim names.
fn check_operations(c: &CheckSpec) -> Vec<String> {
    let mut ops: Vec<String> = Vec::new();
    if let Some(op) = c.same.as_ref().or(c.no_collscan.as_ref()) {
        ops.push(op.get_ref().clone());
    }
    if let Some(check) = &c.check {
        let text = check.get_ref();
        for (i, _) in text.match_indices(".op.") {
            let id: String = text[i + 4..]
                .chars()
                .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_' || *ch == '-')
                .collect();
            if !id.is_empty() && !ops.contains(&id) {
                ops.push(id);
            }
        }
    }
    ops
}

/// At most this many items are named per kind of difference.
const SHOWN_ITEMS: usize = 3;

/// Items named one after the other, and how many more there are.
fn item_list(items: &[(&String, usize)]) -> Message {
    let shown: Vec<String> = items
        .iter()
        .take(SHOWN_ITEMS)
        .map(|(item, n)| {
            if *n > 1 {
                format!("{item} (×{n})")
            } else {
                (*item).clone()
            }
        })
        .collect();
    let more = items.len().saturating_sub(SHOWN_ITEMS);
    let list = Message::verbatim(shown.join("; "));
    if more > 0 {
        Message::new("{list} and {n} more")
            .arg_msg("list", list)
            .arg("n", more)
    } else {
        list
    }
}

/// How the learner's items differ from the reference's, as items, not
/// positions: what is missing, what is extra, what is duplicated; when
/// the items are the same in another order, the first place it differs.
fn differences(mine: &[String], reference: &[String]) -> Message {
    use std::collections::BTreeMap;
    fn count(xs: &[String]) -> BTreeMap<&String, usize> {
        let mut m: BTreeMap<&String, usize> = BTreeMap::new();
        for x in xs {
            *m.entry(x).or_default() += 1;
        }
        m
    }
    let (mc, rc) = (count(mine), count(reference));
    let mut missing = Vec::new();
    let mut extra = Vec::new();
    let mut duplicated = Vec::new();
    for (item, &n) in &rc {
        let have = mc.get(item).copied().unwrap_or(0);
        if have < n {
            missing.push((*item, n - have));
        }
    }
    for (item, &n) in &mc {
        match rc.get(item).copied().unwrap_or(0) {
            0 => extra.push((*item, n)),
            r if n > r => duplicated.push((*item, n)),
            _ => {}
        }
    }
    let mut lines = Vec::new();
    if !missing.is_empty() {
        lines.push(
            Message::new("missing {n}: {items}")
                .arg("n", missing.iter().map(|(_, n)| n).sum::<usize>())
                .arg_msg("items", item_list(&missing)),
        );
    }
    if !extra.is_empty() {
        lines.push(
            Message::new("extra {n}: {items}")
                .arg("n", extra.iter().map(|(_, n)| n).sum::<usize>())
                .arg_msg("items", item_list(&extra)),
        );
    }
    if !duplicated.is_empty() {
        lines.push(Message::new("duplicated: {items}").arg_msg("items", item_list(&duplicated)));
    }
    if lines.is_empty()
        && let Some((i, (a, b))) = mine
            .iter()
            .zip(reference)
            .enumerate()
            .find(|(_, (a, b))| a != b)
    {
        // The right items in another order: the order is the fault.
        lines.push(
            Message::new(
                "the same items in another order: from place {n} on, yours is {mine} where the reference has {reference}",
            )
            .arg("n", i + 1)
            .arg("mine", a)
            .arg("reference", b),
        );
    }
    join_lines(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_missing_extra_and_duplicated_items_not_positions() {
        let v = |xs: &[&str]| xs.iter().map(ToString::to_string).collect::<Vec<_>>();
        let reordered = differences(&v(&["a", "c", "b"]), &v(&["a", "b", "c"])).to_string();
        assert!(
            reordered.contains("another order") && reordered.contains("place 2"),
            "{reordered}"
        );
        let wrong = differences(&v(&["a", "x", "c", "c"]), &v(&["a", "b", "c", "d"])).to_string();
        assert_eq!(
            wrong, "missing 2: b; d\nextra 1: x\nduplicated: c (×2)",
            "{wrong}"
        );
        let many = differences(&v(&[]), &v(&["1", "2", "3", "4", "5"])).to_string();
        assert_eq!(many, "missing 5: 1; 2; 3 and 2 more");
        assert!(differences(&v(&["a"]), &v(&["a"])).to_string().is_empty());
    }

    #[test]
    fn normalisation_unwinds_projects_and_sorts() {
        let spec = ResultSpec {
            unwind: Some("views".into()),
            fields: vec!["p".into()],
            order: Order::Set,
        };
        let a = Bson::Array(vec![
            Bson::Document(doc! {"views": [{"p": 3}, {"p": 1_i64}]}),
            Bson::Document(doc! {"views": [{"p": 2.0}]}),
        ]);
        assert_eq!(normalise(&a, &spec), vec!["1", "2", "3"]);
        let list = ResultSpec {
            order: Order::List,
            ..spec
        };
        assert_eq!(normalise(&a, &list), vec!["3", "1", "2"]);
    }
}
