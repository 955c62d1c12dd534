//! Running a lesson: for each experiment and each variant, a fresh
//! `schemalab_<lesson>_<variant>` database, the seeded dataset, the setup
//! script (one function, `prepare_variant`, which [`prepare_lesson`] also
//! uses to open `schemalab shell --lesson` on those databases), every
//! operation (measured by [`crate::measure::Meter`]), then the measurements;
//! finally the claims. Each dataset is generated once per lesson: the
//! first variant to need it is loaded and, before its setup, copied on the
//! server into every other variant that starts from it (`Seeding`).
//! Failures of a step are recorded in the report (with the server's
//! codeName) rather than aborting the run, so a learner sees everything
//! that did run. Progress goes to a callback and a cancel flag is checked
//! between steps.
//!
//! Everything the report says in words (step errors, a variant's failure,
//! an operation's error, a claim's reason) is a [`Message`], rendered in
//! the reader's language by `report`, the TUI and the JSON writer; what
//! the server or the driver wrote stays inside it as written.

use futures_util::future::BoxFuture;
use mongodb::Client;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::claims::{Check, CollField, Metric, MetricSource, Target, Val, Verdict};
use super::manifest::{Experiment, Lesson, OpKind, Variant};
use super::{CourseError, DbNames, Scale, guard_db};
use crate::dialect::Program;
use crate::dialect::{Output, Session, parse_program};
use crate::locale::Message;
use crate::measure::figures::{CollStats, EngineInfo, engine_info, measure_db, sample_documents};
use crate::measure::{Meter, OpError, OpResult};

/// A shared flag: set it and the run stops at the next step boundary.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Loads a dataset into a database (the seeded generators in
/// `crate::datasets`; tests supply small fixtures). The same `(dataset,
/// scale, seed)` must give the same data whatever the database: a run
/// loads the first variant to need a dataset and copies what it loaded
/// into the other variants' databases on the server (see `Seeding`).
pub trait DatasetLoader: Send + Sync {
    fn load<'a>(
        &'a self,
        client: &'a Client,
        db: &'a str,
        dataset: &'a str,
        scale: Scale,
        seed: u64,
    ) -> BoxFuture<'a, Result<(), Message>>;
}

/// One step of a run, for a progress display.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub experiment: String,
    pub variant: String,
    /// `drop`, `load`, `setup`, `op <id>`, `measure`, `claims`.
    pub step: String,
    /// Steps finished so far and in all (for a progress bar).
    pub done: usize,
    pub total: usize,
}

impl Progress {
    /// The step's name in `lang` (`step` itself is the stable id, the same
    /// in every language).
    pub fn step_in(&self, lang: crate::locale::Lang) -> String {
        let m = match self.step.as_str() {
            "drop" => Message::new("drop"),
            "load" => Message::new("load"),
            "setup" => Message::new("setup"),
            "measure" => Message::new("measure"),
            "claims" => Message::new("claims"),
            other => match other.strip_prefix("op ") {
                Some(id) => Message::new("op {id}").arg("id", id),
                None => return other.to_string(),
            },
        };
        m.render_in(lang)
    }
}

/// How to run.
pub struct RunOptions<'a> {
    pub scale: Scale,
    /// How the run's databases are named (a learner's own on a shared
    /// server).
    pub names: DbNames,
    pub loader: &'a dyn DatasetLoader,
    pub cancel: CancelFlag,
    pub progress: Option<&'a (dyn Fn(&Progress) + Send + Sync)>,
}

/// The result of running a lesson (rendered by `report` and the TUI).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LessonReport {
    pub lesson: String,
    pub title: String,
    pub scale: Scale,
    pub engine: EngineInfo,
    pub experiments: Vec<ExperimentReport>,
}

/// One experiment's variants, operations and claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentReport {
    pub id: String,
    pub title: String,
    pub dataset: String,
    pub seed: u64,
    pub operations: Vec<OpInfo>,
    pub variants: Vec<VariantReport>,
    pub claims: Vec<ClaimResult>,
}

/// An operation as declared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpInfo {
    pub id: String,
    pub title: String,
    pub kind: OpKind,
    /// Share of the workload mix, in percent of all weights.
    pub weight_percent: f64,
}

/// One variant: its database, step errors, operations and collections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantReport {
    pub id: String,
    pub title: String,
    pub database: String,
    /// Loading the dataset failed.
    pub load_error: Option<Message>,
    /// The setup script failed (the rest still ran).
    pub setup_error: Option<Message>,
    pub operations: Vec<OpResult>,
    pub collections: Vec<CollStats>,
    /// Measuring failed.
    pub measure_error: Option<Message>,
    /// The lesson recommends this design.
    #[serde(default)]
    pub recommended: bool,
    /// Why this variant's figures cannot be trusted: its load, setup or
    /// measurement failed, or an operation failed with an error the lesson
    /// does not expect. `null` when everything ran. A failed variant wins
    /// nothing and every claim reading its figures fails with this reason.
    #[serde(default)]
    pub failure: Option<Message>,
    /// The first documents of each collection, read when the collections
    /// were measured (after the workload), for a learner to look at.
    #[serde(default)]
    pub samples: Vec<Sample>,
    /// The steady-state working-set figure, when the experiment declares
    /// one (`[experiments.working_set]`).
    #[serde(default)]
    pub working_set: Option<super::working_set::WorkingSetFigure>,
}

/// A few documents of one collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub collection: String,
    pub documents: Vec<bson::Document>,
}

/// How many documents [`VariantReport::samples`] keeps per collection.
pub const SAMPLES_PER_COLLECTION: i64 = 2;

impl VariantReport {
    /// Work out [`VariantReport::failure`] from the recorded errors.
    pub fn compute_failure(&self) -> Option<Message> {
        for (what, e) in [
            ("loading the dataset failed: {e}", &self.load_error),
            ("setup failed: {e}", &self.setup_error),
            ("measuring failed: {e}", &self.measure_error),
        ] {
            if let Some(e) = e {
                return Some(Message::new(what).arg_msg("e", e.clone().first_line()));
            }
        }
        self.operations.iter().find_map(|o| {
            let e = o.error.as_ref()?;
            if o.expected_error {
                return None;
            }
            let why = e.message.clone().first_line();
            Some(
                Message::new("operation '{id}' failed: {e}")
                    .arg("id", &o.id)
                    .arg_msg(
                        "e",
                        if e.code_name.is_empty() || e.code.is_none() {
                            why
                        } else {
                            Message::new("{code_name} {message}")
                                .arg("code_name", &e.code_name)
                                .arg_msg("message", why)
                        },
                    ),
            )
        })
    }
}

/// A claim with its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimResult {
    pub text: String,
    pub check: String,
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// Whether an error looks like the environment's fault (a slow or
/// unreachable server) rather than the lesson's.
pub fn is_environment_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "timeout",
        "timed out",
        "server selection",
        "connection",
        "monitor",
        "broken pipe",
        "reset by peer",
    ]
    .iter()
    .any(|k| m.contains(k))
}

/// Run every experiment of `lesson` against `client`.
pub async fn run_lesson(
    client: &Client,
    lesson: &Lesson,
    opts: &RunOptions<'_>,
) -> Result<LessonReport, CourseError> {
    let engine = engine_info(client)
        .await
        .map_err(|e| CourseError::Server(Message::verbatim(e)))?;
    let total: usize = lesson
        .experiments
        .iter()
        .map(|e| e.variants.len() * (4 + e.operations.len()) + 1)
        .sum();
    let mut done = 0;
    let mut experiments = Vec::new();
    let mut seeding = Seeding::new(
        &opts.names,
        &lesson.id,
        lesson
            .experiments
            .iter()
            .flat_map(|e| e.variants.iter().map(move |v| (e, v))),
    );
    for exp in &lesson.experiments {
        experiments
            .push(run_experiment(client, lesson, exp, opts, &mut seeding, &mut done, total).await?);
    }
    Ok(LessonReport {
        lesson: lesson.id.clone(),
        title: lesson.title.clone(),
        scale: opts.scale,
        engine,
        experiments,
    })
}

async fn run_experiment(
    client: &Client,
    lesson: &Lesson,
    exp: &Experiment,
    opts: &RunOptions<'_>,
    seeding: &mut Seeding,
    done: &mut usize,
    total: usize,
) -> Result<ExperimentReport, CourseError> {
    let exp_id = exp.id.get_ref().clone();
    let step = |variant: &str, step: String, done: &mut usize| -> Result<(), CourseError> {
        if opts.cancel.is_cancelled() {
            return Err(CourseError::Cancelled);
        }
        if let Some(p) = opts.progress {
            p(&Progress {
                experiment: exp_id.clone(),
                variant: variant.to_string(),
                step,
                done: *done,
                total,
            });
        }
        *done += 1;
        Ok(())
    };
    let weights: f64 = exp.operations.iter().map(|o| o.weight.max(0.0)).sum();
    let operations = exp
        .operations
        .iter()
        .map(|o| OpInfo {
            id: o.id.get_ref().clone(),
            title: o.title.clone(),
            kind: o.kind,
            weight_percent: if weights > 0.0 {
                100.0 * o.weight.max(0.0) / weights
            } else {
                0.0
            },
        })
        .collect();
    let mut variants = Vec::new();
    for v in &exp.variants {
        let vid = v.id.get_ref().as_str();
        let db = opts.names.lesson(&lesson.id, vid);
        guard_db(&opts.names, &db, &lesson.id, vid)?;
        let mut report = VariantReport {
            id: vid.to_string(),
            title: v.title.clone(),
            database: db.clone(),
            load_error: None,
            setup_error: None,
            operations: Vec::new(),
            collections: Vec::new(),
            measure_error: None,
            recommended: v.recommended,
            failure: None,
            samples: Vec::new(),
            working_set: None,
        };

        let (mut session, prepared) =
            prepare_variant(client, lesson, exp, v, opts, seeding, &mut |s| {
                step(vid, s.into(), done)
            })
            .await?;
        report.load_error = prepared.load_error;
        report.setup_error = prepared.setup_error;
        let mut meter = Meter::new(client, &db).with_samples(crate::measure::SAMPLES);

        for op in &exp.operations {
            let oid = op.id.get_ref().clone();
            step(vid, format!("op {oid}"), done)?;
            let Some(stmt) = op.run.get(vid) else {
                let mut missing = OpResult::new(&oid, op.kind, "");
                missing.error = Some(OpError::shell(
                    Message::new("no statement for variant '{vid}'").arg("vid", vid),
                ));
                report.operations.push(missing);
                continue;
            };
            let spec = OpSpec {
                id: &oid,
                kind: op.kind,
                prepare: op.prepare.get(vid).map(|p| p.get_ref().as_str()),
                stmt: stmt.get_ref(),
                expect: op.expect_error.get(vid).map_or(&[][..], Vec::as_slice),
            };
            report
                .operations
                .push(run_op(&mut meter, &mut session, &spec, &db).await);
        }

        step(vid, "measure".into(), done)?;
        match measure_db(client, &db).await {
            Ok(c) => report.collections = c,
            Err(e) => report.measure_error = Some(Message::verbatim(e)),
        }
        for c in &report.collections {
            // A sample that cannot be read is only a missing illustration.
            if let Ok(documents) =
                sample_documents(client, &db, &c.name, SAMPLES_PER_COLLECTION).await
            {
                report.samples.push(Sample {
                    collection: c.name.clone(),
                    documents,
                });
            }
        }
        report.failure = report.compute_failure();
        variants.push(report);
    }
    if let Some(ws) = &exp.working_set {
        super::working_set::run(client, exp, ws, &mut variants).await;
    }
    step("", "claims".into(), done)?;
    let source = ExperimentMetrics {
        variants: &variants,
    };
    let claims = exp
        .claims
        .iter()
        .map(|c| ClaimResult {
            text: c.text.clone(),
            check: c.check.get_ref().clone(),
            verdict: match Check::parse(c.check.get_ref()) {
                Ok(check) => check.evaluate(&source),
                Err(e) => Verdict {
                    passed: false,
                    left: None,
                    right: None,
                    reason: Message::new("check does not parse: {e}").arg_msg("e", e.to_message()),
                },
            },
        })
        .collect();
    Ok(ExperimentReport {
        id: exp.id.get_ref().clone(),
        title: exp.title.clone(),
        dataset: exp.dataset.get_ref().clone(),
        seed: exp.seed,
        operations,
        variants,
        claims,
    })
}

/// One variant's database as a run leaves it before its operations: what
/// [`prepare_lesson`] reports for each variant it prepared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedVariant {
    pub experiment: String,
    pub variant: String,
    /// The variant's title, for a listing.
    pub title: String,
    /// `schemalab_<lesson>_<variant>`.
    pub database: String,
    /// Why the dataset did not load, if it did not.
    pub load_error: Option<Message>,
    /// Why the setup script failed, if it did (with its file and place).
    pub setup_error: Option<Message>,
}

/// The databases [`prepare_lesson`] prepared, and the one to start in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedLesson {
    pub lesson: String,
    pub title: String,
    pub scale: Scale,
    /// In course order: experiment by experiment, variant by variant (only
    /// the one asked for, when one was).
    pub variants: Vec<PreparedVariant>,
}

impl PreparedLesson {
    /// The database to open the shell in: the variant asked for, else the
    /// first variant of the first experiment.
    pub fn current_db(&self) -> &str {
        self.variants
            .first()
            .map_or("test", |v| v.database.as_str())
    }

    /// [`Prepared::listing`] in `lang`.
    pub fn listing(&self, lang: crate::locale::Lang) -> String {
        let width = self
            .variants
            .iter()
            .map(|v| v.database.len())
            .max()
            .unwrap_or(0);
        let mut out = lang.f(
            "lesson {lesson} ({title}), prepared at scale {scale}:",
            &[
                ("lesson", &self.lesson),
                ("title", &self.title),
                ("scale", &self.scale.as_str()),
            ],
        );
        out.push('\n');
        for v in &self.variants {
            let mark = if v.database == self.current_db() {
                '*'
            } else {
                ' '
            };
            out.push_str(&format!(
                "{mark} {:<width$}  {} · {}{}{}\n",
                v.database,
                v.experiment,
                v.variant,
                lang.t(": "),
                v.title
            ));
            if let Some(e) = &v.load_error {
                out.push_str(&format!(
                    "    {}\n",
                    lang.f(
                        "the dataset did not load: {e}",
                        &[("e", &e.render_in(lang))]
                    )
                ));
            }
            if let Some(e) = &v.setup_error {
                out.push_str(&format!(
                    "    {}\n",
                    lang.f("the setup failed: {e}", &[("e", &e.render_in(lang))])
                ));
            }
        }
        out.push_str(&lang.f(
            "current database: {db} (switch with `use <database>`; `show collections` lists what it holds)",
            &[("db", &self.current_db())],
        ));
        out.push('\n');
        out
    }
}

/// How the variant databases of a lesson get their datasets: the first
/// variant (in run order) to need a given dataset and seed is loaded, and
/// right after its load (before its setup runs) the server copies it into
/// every other variant's database that needs the same dataset and seed,
/// in this experiment or a later one ([`crate::datasets::copy_database`]:
/// `$out` per collection, the same documents in the same order, empty
/// collections too, `_id` index only), which the generators would have
/// filled with the same bytes. Those variants then skip their drop and
/// load. A variant whose copy failed or was cancelled, or all of them when
/// the first load failed, loads on its own as before.
///
/// A copy costs no more memory than the load it replaces, and on the
/// embedded engine much less: a lone `$out` stores the records it reads
/// by sharing them, so every variant of a lesson that starts from one
/// dataset holds one set of its records until its setup rewrites them.
struct Seeding {
    names: DbNames,
    groups: Vec<SeedGroup>,
    /// Databases holding their fresh copy, not yet prepared.
    filled: Vec<String>,
}

/// The variants of a lesson that start from one dataset and seed.
struct SeedGroup {
    dataset: String,
    seed: u64,
    /// The database loaded first: the copies' source.
    source: String,
    /// The other variants (id, database), to copy into once `source` is
    /// loaded.
    targets: Vec<(String, String)>,
}

impl Seeding {
    /// The plan for `variants` (each with its experiment, in run order) of
    /// `lesson`. A database belongs to the group of its first appearance
    /// only, and is filled once.
    fn new<'a>(
        names: &DbNames,
        lesson: &str,
        variants: impl Iterator<Item = (&'a Experiment, &'a Variant)>,
    ) -> Self {
        let mut groups: Vec<SeedGroup> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for (exp, v) in variants {
            let vid = v.id.get_ref();
            let db = names.lesson(lesson, vid);
            if seen.contains(&db) {
                continue;
            }
            seen.push(db.clone());
            let dataset = exp.dataset.get_ref();
            match groups
                .iter_mut()
                .find(|g| g.dataset == *dataset && g.seed == exp.seed)
            {
                Some(g) => g.targets.push((vid.clone(), db)),
                None => groups.push(SeedGroup {
                    dataset: dataset.clone(),
                    seed: exp.seed,
                    source: db,
                    targets: Vec::new(),
                }),
            }
        }
        Seeding {
            names: names.clone(),
            groups,
            filled: Vec::new(),
        }
    }

    /// Copy `db`, freshly loaded with `dataset` and `seed`, into every
    /// target of its group, when `db` is the group's source. Each target
    /// passes [`guard_db`] first; one that fails to copy, or comes after
    /// `cancel` is set, is left to load on its own.
    async fn copy_from(
        &mut self,
        client: &Client,
        lesson: &str,
        (db, dataset, seed): (&str, &str, u64),
        cancel: &CancelFlag,
    ) {
        let Some(group) = self
            .groups
            .iter_mut()
            .find(|g| g.source == db && g.dataset == dataset && g.seed == seed)
        else {
            return;
        };
        for (vid, target) in std::mem::take(&mut group.targets) {
            if cancel.is_cancelled() {
                break;
            }
            if guard_db(&self.names, &target, lesson, &vid).is_err() {
                continue;
            }
            if crate::datasets::copy_database(client, db, &target)
                .await
                .is_ok()
            {
                self.filled.push(target);
            }
        }
    }

    /// Whether `db` already holds its copy (taken: asked once).
    fn take_filled(&mut self, db: &str) -> bool {
        let before = self.filled.len();
        self.filled.retain(|d| d != db);
        self.filled.len() != before
    }
}

/// The first steps of every variant's run, in order, each announced to
/// `step` first (which may stop the run): `drop` (a fresh database),
/// `load` (the experiment's seeded dataset at the run's scale, or nothing
/// more when `seeding` already copied it here), `setup` (the variant's
/// setup script, through a write gate that admits only this database).
/// Returns the variant's session, ready for its operations, and what went
/// wrong loading or setting up (recorded, not raised, as for every step of
/// a run).
#[allow(clippy::too_many_arguments)]
async fn prepare_variant(
    client: &Client,
    lesson: &Lesson,
    exp: &Experiment,
    v: &Variant,
    opts: &RunOptions<'_>,
    seeding: &mut Seeding,
    step: &mut (dyn FnMut(&str) -> Result<(), CourseError> + Send),
) -> Result<(Session, PreparedVariant), CourseError> {
    let vid = v.id.get_ref().as_str();
    let db = opts.names.lesson(&lesson.id, vid);
    guard_db(&opts.names, &db, &lesson.id, vid)?;
    let mut prepared = PreparedVariant {
        experiment: exp.id.get_ref().clone(),
        variant: vid.to_string(),
        title: v.title.clone(),
        database: db.clone(),
        load_error: None,
        setup_error: None,
    };

    // Copied from the experiment's first variant, fresh: nothing to drop
    // or load.
    let copied = seeding.take_filled(&db);
    step("drop")?;
    if !copied {
        client.database(&db).drop().await.map_err(|e| {
            CourseError::Server(
                Message::new("dropping {db}: {e}")
                    .arg("db", &db)
                    .arg("e", e),
            )
        })?;
    }

    step("load")?;
    if !copied {
        match opts
            .loader
            .load(client, &db, exp.dataset.get_ref(), opts.scale, exp.seed)
            .await
        {
            Ok(()) => {
                let loaded = (db.as_str(), exp.dataset.get_ref().as_str(), exp.seed);
                seeding
                    .copy_from(client, &lesson.id, loaded, &opts.cancel)
                    .await
            }
            Err(e) => prepared.load_error = Some(e),
        }
    }

    step("setup")?;
    // The write gate: whatever the content evaluates to, every command
    // it sends must stay in this variant's database.
    let mut session = Session::new(client.clone(), db.clone())
        .with_policy(crate::dialect::WritePolicy::Only(db.clone()));
    match lesson.setup_text(v) {
        Ok(Some(src)) => {
            if let Err(e) = run_guarded(&mut session, &src, &db).await {
                let file = v.setup.as_ref().map_or("", |s| s.get_ref().as_str());
                prepared.setup_error = Some(
                    Message::new("{outer}: {cause}")
                        .arg("outer", file)
                        .arg_msg("cause", e),
                );
            }
        }
        Ok(None) => {}
        Err(e) => prepared.setup_error = Some(e.message()),
    }
    Ok((session, prepared))
}

/// Prepare `lesson`'s databases exactly as a run does before it measures
/// (fresh database, dataset at `opts.scale`, setup script), for every
/// variant of every experiment, or only for the variant `only`; no
/// operation runs and nothing is measured. This is what
/// `schemalab shell --lesson` opens the shell on. Every database passes
/// [`guard_db`] first, so only `schemalab_<lesson>_<variant>` is ever
/// dropped or written. A variant id that two experiments share names one
/// database: the first experiment's preparation is kept.
pub async fn prepare_lesson(
    client: &Client,
    lesson: &Lesson,
    only: Option<&str>,
    opts: &RunOptions<'_>,
) -> Result<PreparedLesson, CourseError> {
    let mut chosen: Vec<(&Experiment, &Variant)> = Vec::new();
    for exp in &lesson.experiments {
        for v in &exp.variants {
            let id = v.id.get_ref();
            let wanted = only.is_none_or(|o| o == id);
            if wanted && !chosen.iter().any(|(_, c)| c.id.get_ref() == id) {
                chosen.push((exp, v));
            }
        }
    }
    if chosen.is_empty() {
        let known: Vec<&str> = lesson
            .experiments
            .iter()
            .flat_map(|e| e.variants.iter().map(|v| v.id.get_ref().as_str()))
            .collect();
        return Err(CourseError::Invalid(match only {
            Some(o) => match crate::dialect::suggest(o, known.iter().copied()) {
                Some(s) => Message::new(
                    "lesson '{lesson}' has no variant '{variant}'; did you mean '{suggestion}'? (variants: {known})",
                )
                .arg("suggestion", s),
                None => Message::new("lesson '{lesson}' has no variant '{variant}' (variants: {known})"),
            }
            .arg("lesson", &lesson.id)
            .arg("variant", o)
            .arg("known", known.join(", ")),
            None => Message::new("lesson '{lesson}' has no variants to prepare").arg("lesson", &lesson.id),
        }));
    }
    let total = chosen.len() * 3;
    let mut done = 0;
    let mut variants = Vec::new();
    let mut seeding = Seeding::new(&opts.names, &lesson.id, chosen.iter().copied());
    for &(exp, v) in &chosen {
        let exp_id = exp.id.get_ref();
        let vid = v.id.get_ref();
        let mut step = |s: &str| -> Result<(), CourseError> {
            if opts.cancel.is_cancelled() {
                return Err(CourseError::Cancelled);
            }
            if let Some(p) = opts.progress {
                p(&Progress {
                    experiment: exp_id.clone(),
                    variant: vid.clone(),
                    step: s.to_string(),
                    done,
                    total,
                });
            }
            done += 1;
            Ok(())
        };
        let (_, prepared) =
            prepare_variant(client, lesson, exp, v, opts, &mut seeding, &mut step).await?;
        variants.push(prepared);
    }
    Ok(PreparedLesson {
        lesson: lesson.id.clone(),
        title: lesson.title.clone(),
        scale: opts.scale,
        variants,
    })
}

/// Parse, check that it stays inside `db`, evaluate; an error comes with
/// its place and the source line under it.
async fn run_guarded(session: &mut Session, src: &str, db: &str) -> Result<Vec<Output>, Message> {
    let program = parse_program(src).map_err(|e| e.with_source(src))?;
    stays_in(&program, db).map_err(|e| e.to_message())?;
    let (out, res) = session.eval_program(&program).await;
    res.map_err(|e| e.with_source(src))?;
    Ok(out)
}

/// One operation of one variant, as declared.
struct OpSpec<'a> {
    id: &'a str,
    kind: OpKind,
    prepare: Option<&'a str>,
    stmt: &'a str,
    expect: &'a [String],
}

pub(super) fn parse_in(src: &str, db: &str) -> Result<Program, OpError> {
    let program = parse_program(src).map_err(|e| OpError::shell(e.with_source(src)))?;
    stays_in(&program, db).map_err(|e| OpError::shell(e.to_message()))?;
    Ok(program)
}

/// Run one operation through the measurement path ([`Meter`]), its
/// `prepare` lines first (untimed, unmeasured: they bind the names the
/// measured statement uses).
async fn run_op(
    meter: &mut Meter<'_>,
    session: &mut Session,
    spec: &OpSpec<'_>,
    db: &str,
) -> OpResult {
    let mut result = OpResult::new(spec.id, spec.kind, spec.stmt);
    result.prepare = spec.prepare.map(str::to_string);
    // Each operation starts in a fresh global scope: its `prepare` binds
    // names for its own statement only.
    session.new_scope();
    let measured = async {
        if let Some(prep) = spec.prepare {
            let program = parse_in(prep, db)?;
            let (_, res) = session.eval_program(&program).await;
            res.map_err(|e| {
                let mut err = OpError::from_dialect(&e, prep);
                err.message = Message::new("preparing: {e}").arg_msg("e", e.with_source(prep));
                err
            })?;
        }
        let program = parse_in(spec.stmt, db)?;
        meter.run(session, &program, spec.stmt, spec.kind).await
    }
    .await;
    result.set(measured);
    if let Some(e) = &result.error {
        result.expected_error = spec
            .expect
            .iter()
            .any(|x| *x == e.code_name || e.code.is_some_and(|c| c.to_string() == *x));
    }
    result
}

/// A statement that would leave the variant's database.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({pos})")]
pub struct Escape {
    pub pos: crate::dialect::Pos,
    pub message: Message,
}

impl Escape {
    /// The refusal with its place, for any language (its `Display` is the
    /// English).
    pub fn to_message(&self) -> Message {
        Message::new("{m} ({pos})")
            .arg_msg("m", self.message.clone())
            .arg("pos", self.pos)
    }
}

/// Refuse, before it runs, a program whose text reaches a database other
/// than `db`: `use`, `getSiblingDB`/`getDB` naming another database (or a
/// computed name), `getMongo`/`adminCommand`, and `$out`/`$merge` naming
/// a `db`. This is the early, readable refusal; the guarantee is the write
/// gate ([`crate::dialect::WritePolicy::Only`]), which checks every
/// command the program really sends, whatever its JavaScript computes.
pub fn stays_in(program: &Program, db: &str) -> Result<(), Escape> {
    use std::sync::LazyLock;
    static USE: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r#"__shell\.use\("([^"]*)"\)"#).expect("valid regex"));
    static SIBLING: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r#"\.(getSiblingDB|getDB)\s*\(\s*(?:'([^']*)'|"([^"]*)")?\s*(\))?"#)
            .expect("valid regex")
    });
    static SERVER: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"\.(getMongo|adminCommand)\s*\(").expect("valid regex")
    });
    static OUT: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r#"\$(out|merge)\b"#).expect("valid regex"));
    static OUT_DB: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r#"\bdb["']?\s*:\s*(?:'([^']*)'|"([^"]*)"|([A-Za-z_$][\w$.]*))"#)
            .expect("valid regex")
    });
    let src = program.source();
    let leave = |at: usize, what: String| {
        Err(Escape {
            pos: pos_at(src, at),
            message: Message::new("{what} leaves this variant's database {db}")
                .arg("what", what)
                .arg("db", db),
        })
    };
    if let Some(c) = USE.captures_iter(src).find(|c| &c[1] != db) {
        let at = c.get(0).map_or(0, |m| m.start());
        return Err(Escape {
            pos: pos_at(src, at),
            message: Message::new("`use {name}` leaves this variant's database {db}")
                .arg("name", &c[1])
                .arg("db", db),
        });
    }
    for c in SIBLING.captures_iter(src) {
        let named = c.get(2).or(c.get(3)).map(|m| m.as_str());
        if c.get(4).is_none() || named != Some(db) {
            return leave(c.get(0).map_or(0, |m| m.start()), format!("{}(…)", &c[1]));
        }
    }
    if let Some(m) = SERVER.captures(src) {
        return leave(m.get(0).map_or(0, |m| m.start()), format!("{}(…)", &m[1]));
    }
    for m in OUT.find_iter(src) {
        let window: String = src[m.end()..].chars().take(300).collect();
        let stage_end = window.find(['}', ']']).map_or(window.len(), |i| {
            // `$merge: {into: {db, coll}}` closes its inner object first.
            window[i + 1..]
                .find(['}', ']'])
                .map_or(window.len(), |j| i + 1 + j)
        });
        if let Some(c) = OUT_DB.captures(&window[..stage_end]) {
            let named = c.get(1).or(c.get(2)).map(|x| x.as_str());
            if named != Some(db) {
                return leave(m.start(), m.as_str().to_string());
            }
        }
    }
    Ok(())
}

/// The line and column (1-based, in characters) of byte offset `at`.
fn pos_at(src: &str, at: usize) -> crate::dialect::Pos {
    let before = &src[..at.min(src.len())];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
    crate::dialect::Pos { line, col }
}

/// Metrics of one experiment's variants, for claims.
pub struct ExperimentMetrics<'a> {
    pub variants: &'a [VariantReport],
}

impl MetricSource for ExperimentMetrics<'_> {
    fn metric(&self, m: &Metric) -> Result<Val, Message> {
        let v = self
            .variants
            .iter()
            .find(|v| v.id == m.variant)
            .ok_or_else(|| {
                Message::new("no variant '{variant}' in this experiment").arg("variant", &m.variant)
            })?;
        if let Some(f) = &v.failure {
            return Err(variant_failed(v, f));
        }
        variant_metric(v, m)
    }
}

/// Metrics across a whole lesson, for prose placeholders: the first
/// experiment whose variant has the metric answers.
pub struct LessonMetrics<'a>(pub &'a LessonReport);

impl MetricSource for LessonMetrics<'_> {
    fn metric(&self, m: &Metric) -> Result<Val, Message> {
        let mut last =
            Message::new("no variant '{variant}' in this lesson").arg("variant", &m.variant);
        for exp in &self.0.experiments {
            if let Some(v) = exp.variants.iter().find(|v| v.id == m.variant) {
                if let Some(f) = &v.failure {
                    last = variant_failed(v, f);
                    continue;
                }
                match variant_metric(v, m) {
                    Ok(val) => return Ok(val),
                    Err(e) => last = e,
                }
            }
        }
        Err(last)
    }
}

/// Why no figure of `v` can be read: it failed.
fn variant_failed(v: &VariantReport, failure: &Message) -> Message {
    Message::new("variant '{variant}' failed: {f}")
        .arg("variant", &v.id)
        .arg_msg("f", failure.clone())
}

fn variant_metric(v: &VariantReport, m: &Metric) -> Result<Val, Message> {
    use super::claims::OpField as F;
    let n = |x: i64| Ok(Val::Num(x as f64));
    match &m.target {
        Target::Coll { name, field } => {
            let c = v
                .collections
                .iter()
                .find(|c| &c.name == name)
                .ok_or_else(|| {
                    let have: Vec<&str> = v.collections.iter().map(|c| c.name.as_str()).collect();
                    if have.is_empty() {
                        Message::new("no collection '{name}' in {db} (it has none)")
                    } else {
                        Message::new("no collection '{name}' in {db} (it has: {known})")
                            .arg("known", have.join(", "))
                    }
                    .arg("name", name)
                    .arg("db", &v.database)
                })?;
            match field {
                CollField::Count => n(c.count),
                CollField::Size => n(c.size),
                CollField::AvgObjSize => Ok(Val::Num(c.avg_obj_size)),
                CollField::MaxObjSize => n(c.max_obj_size),
                CollField::StorageSize => n(c.storage_size),
                CollField::TotalIndexSize => n(c.total_index_size),
                CollField::NIndexes => n(c.nindexes),
                CollField::Index(i) => c
                    .indexes
                    .iter()
                    .find(|x| &x.name == i)
                    .map(|x| Val::Num(x.size as f64))
                    .ok_or_else(|| {
                        Message::new("no index '{index}' on {coll}")
                            .arg("index", i)
                            .arg("coll", &c.name)
                    }),
            }
        }
        Target::WorkingSet { field } => super::working_set::metric(v, *field),
        Target::Op { id, field } => {
            let op = v.operations.iter().find(|o| &o.id == id).ok_or_else(|| {
                Message::new("operation '{id}' did not run in variant '{variant}'")
                    .arg("id", id)
                    .arg("variant", &v.id)
            })?;
            if *field == F::Error {
                return Ok(Val::Str(
                    op.error
                        .as_ref()
                        .map(|e| e.code_name.clone())
                        .unwrap_or_default(),
                ));
            }
            if *field == F::ExpectedError {
                return Ok(Val::Num(if op.expected_error { 1.0 } else { 0.0 }));
            }
            if *field == F::Millis {
                return op.millis.map(Val::Num).ok_or_else(|| unavailable(op));
            }
            let read = || op.read.as_ref().ok_or_else(|| unavailable(op));
            let write = || op.write.as_ref().ok_or_else(|| unavailable(op));
            // Examined totals that leave out a stage are no figure at all.
            let complete = || {
                let m = read()?;
                if m.not_reported.is_empty() {
                    Ok(m)
                } else {
                    Err(
                        Message::new("{field} of '{id}': not reported by this server for {stages}")
                            .arg("field", field.name())
                            .arg("id", id)
                            .arg("stages", m.not_reported.join(", ")),
                    )
                }
            };
            match field {
                F::NReturned => n(read()?.n_returned),
                F::KeysExamined => n(complete()?.keys_examined),
                F::DocsExamined => n(complete()?.docs_examined),
                F::BytesExamined => complete()?
                    .bytes_examined
                    .map(|b| Val::Num(b as f64))
                    .ok_or_else(|| {
                        Message::new("{field} of '{id}': not reported by this server")
                            .arg("field", "bytesExamined")
                            .arg("id", id)
                    }),
                F::BytesRead => match (&op.cache, &op.error) {
                    (Some(c), _) => Ok(Val::Num(c.bytes as f64)),
                    (None, Some(_)) => Err(unavailable(op)),
                    (None, None) => Err(Message::new(
                        "{field} of '{id}': not reported by this server",
                    )
                    .arg("field", "bytesRead")
                    .arg("id", id)),
                },
                F::Ratio => Ok(Val::Num(complete()?.ratio)),
                F::Stages => Ok(Val::Str(read()?.stages.clone())),
                F::Index => Ok(Val::Str(read()?.index.clone())),
                F::N => n(write()?.n),
                F::NModified => n(write()?.n_modified),
                F::NUpserted => n(write()?.n_upserted),
                F::BytesReturned => read()?
                    .bytes_returned
                    .map(|b| Val::Num(b as f64))
                    .ok_or_else(|| {
                        Message::new("bytesReturned of '{id}': not reported").arg("id", id)
                    }),
                F::KeysInserted => write()?
                    .keys_inserted
                    .map(|b| Val::Num(b as f64))
                    .ok_or_else(|| {
                        Message::new("{field} of '{id}': not reported by this server's profiler")
                            .arg("field", "keysInserted")
                            .arg("id", id)
                    }),
                F::KeysDeleted => write()?
                    .keys_deleted
                    .map(|b| Val::Num(b as f64))
                    .ok_or_else(|| {
                        Message::new("{field} of '{id}': not reported by this server's profiler")
                            .arg("field", "keysDeleted")
                            .arg("id", id)
                    }),
                F::Error | F::Millis | F::ExpectedError => Err(Message::verbatim("unreachable")),
            }
        }
    }
}

fn unavailable(op: &OpResult) -> Message {
    match &op.error {
        Some(e) if !e.code_name.is_empty() => {
            Message::new("unavailable: operation '{id}' failed with {code_name}: {e}")
                .arg("code_name", &e.code_name)
                .arg_msg("e", e.message.clone())
        }
        Some(e) => Message::new("unavailable: operation '{id}' failed: {e}")
            .arg_msg("e", e.message.clone()),
        None => Message::new(match op.kind {
            OpKind::Read => "unavailable: '{id}' is a read operation",
            OpKind::Write => "unavailable: '{id}' is a write operation",
        }),
    }
    .arg("id", &op.id)
}

/// Collection metrics keyed by name, handy for the TUI.
pub fn collections_by_name(v: &VariantReport) -> BTreeMap<&str, &CollStats> {
    v.collections.iter().map(|c| (c.name.as_str(), c)).collect()
}

/// The production [`DatasetLoader`]: the seeded generators of
/// [`crate::datasets`] with the parameters of a catalog (the course's own
/// `datasets/catalog.toml` when it has one, so instructors' edits apply).
pub struct CatalogLoader {
    pub catalog: crate::datasets::Catalog,
}

impl CatalogLoader {
    /// The catalog under `root/datasets/catalog.toml`, or the built-in one
    /// when the course has none.
    pub fn for_course(root: impl AsRef<std::path::Path>) -> Result<Self, CourseError> {
        let path = root.as_ref().join("datasets").join("catalog.toml");
        let catalog = if path.is_file() {
            crate::datasets::load_catalog(&path)
        } else {
            crate::datasets::Catalog::builtin()
        }
        .map_err(|e| CourseError::Invalid(e.message()))?;
        Ok(CatalogLoader { catalog })
    }
}

impl From<Scale> for crate::datasets::Scale {
    fn from(s: Scale) -> Self {
        match s {
            Scale::Tiny => crate::datasets::Scale::Tiny,
            Scale::Default => crate::datasets::Scale::Default,
            Scale::Large => crate::datasets::Scale::Large,
        }
    }
}

impl DatasetLoader for CatalogLoader {
    fn load<'a>(
        &'a self,
        client: &'a Client,
        db: &'a str,
        dataset: &'a str,
        scale: Scale,
        seed: u64,
    ) -> BoxFuture<'a, Result<(), Message>> {
        Box::pin(async move {
            crate::datasets::load_with(
                &self.catalog,
                client,
                db,
                dataset,
                scale.into(),
                seed,
                |_| {},
            )
            .await
            .map(|_| ())
            .map_err(|e| e.message())
        })
    }
}
