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

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;
use mongodb::Client;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::manifest::{CheckSpec, Exercise, Order, Param, Pick, ResultSpec, Solution};
use super::{ExerciseError, db_name, guard_db, ref_db_name};
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
}

/// One checklist line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub id: String,
    pub text: String,
    pub passed: bool,
    /// The measured figure (or the learner's answer); empty when none.
    pub measured: Message,
    /// What it had to be; empty when nothing is bounded.
    pub bound: Message,
    /// Why it failed, or extra detail (differences, reasons of a key).
    pub detail: Message,
    /// The check's hint (shown on failure).
    pub hint: String,
}

/// A whole check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub exercise: String,
    pub title: String,
    pub seed: u64,
    pub scale: Scale,
    pub engine: EngineInfo,
    /// The drawn parameters, as mongosh shows them.
    pub params: Vec<(String, String)>,
    /// Failures of the learner's side (load, setup, measure).
    pub errors: Vec<Message>,
    /// Failures of the reference (a content bug if ever non-empty).
    pub ref_errors: Vec<Message>,
    pub results: Vec<CheckResult>,
    /// The learner's operations, with what they measured.
    pub operations: Vec<OpResult>,
    /// Outcomes of the operations marked `show` (stress runs).
    pub notes: Vec<Message>,
}

impl CheckReport {
    /// Every check passed and nothing failed on the learner's side.
    pub fn passed(&self) -> bool {
        self.errors.is_empty() && self.results.iter().all(|r| r.passed)
    }

    /// "5/7" checks passed.
    pub fn score(&self) -> (usize, usize) {
        (
            self.results.iter().filter(|r| r.passed).count(),
            self.results.len(),
        )
    }

    /// The printed checklist, in English.
    pub fn render(&self) -> String {
        self.render_in(Lang::En)
    }

    /// The printed checklist with schemalab's own words in `lang` (check
    /// texts and hints come translated with the exercise).
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
            let detail = r.detail.render_in(lang);
            if !detail.is_empty() && (!r.passed || detail.contains('\n')) {
                for line in detail.lines() {
                    s.push_str(&format!("      {line}\n"));
                }
            }
            if !r.passed && !r.hint.is_empty() {
                s.push_str(&format!("      {}{colon}{}\n", lang.t("hint"), r.hint));
            }
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

/// One side's outcome.
struct Side {
    start: VariantReport,
    end: VariantReport,
    /// Normalised answers of reads, by operation id.
    answers: Vec<(String, Result<Vec<String>, Message>)>,
    errors: Vec<Message>,
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
    let scale = match opts.scale {
        Some(s) => s,
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
            })?,
    };
    let reference = Solution::parse(&ex.read(ex.spec.reference.get_ref())?);
    let mine = Solution::parse(solution);

    let mine_db = db_name(&ex.id);
    let ref_db = ref_db_name(&ex.id);
    let mut params = Vec::new();
    let mut load_errors = Vec::new();
    for db in [&mine_db, &ref_db] {
        guard_db(db, &ex.id)?;
        client.database(db).drop().await.map_err(|e| {
            ExerciseError::Server(Message::new("dropping {db}: {e}").arg("db", db).arg("e", e))
        })?;
        if let Err(e) = opts
            .loader
            .load(client, db, ex.spec.dataset.get_ref(), scale, ex.spec.seed)
            .await
        {
            load_errors.push(
                Message::new("loading {dataset}: {e}")
                    .arg("dataset", ex.spec.dataset.get_ref())
                    .arg_msg("e", e),
            );
        }
    }
    if load_errors.is_empty() {
        params = draw_params(client, &mine_db, &ex.spec.params, opts.seed).await?;
    }
    let mut mine_side = run_side(client, ex, &mine, &mine_db, "mine", &params).await;
    let ref_side = run_side(client, ex, &reference, &ref_db, "ref", &params).await;
    mine_side.errors.splice(0..0, load_errors);

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
    Ok(CheckReport {
        exercise: ex.id.clone(),
        title: ex.spec.title.clone(),
        seed: opts.seed,
        scale,
        engine,
        params: shown_params,
        errors: mine_side.errors,
        ref_errors: ref_side.errors,
        results,
        operations: mine_side.end.operations,
        notes,
    })
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
) -> Side {
    let file = if variant == "ref" {
        ex.spec.reference.get_ref().as_str()
    } else {
        "solution.js"
    };
    let mut errors = Vec::new();
    let mut session =
        Session::new(client.clone(), db.to_string()).with_policy(WritePolicy::Only(db.to_string()));
    for p in params {
        session.bind(&p.name, p.value.clone());
    }
    if let Err(e) = run_script(&mut session, &sol.setup, db).await {
        errors.push(
            Message::new("{file} (setup): {e}")
                .arg("file", file)
                .arg_msg("e", e),
        );
    }
    let mut start = empty_variant(&format!("{variant}_start"), db);
    match measure_db(client, db).await {
        Ok(c) => start.collections = c,
        Err(e) => errors.push(measuring(db, e)),
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
        let mut total: Option<OpResult> = None;
        let mut answer = None;
        let mut session = Session::new(session.client().clone(), db.to_string())
            .with_policy(WritePolicy::Only(db.to_string()));
        for rep in 0..op.repeat.max(1) {
            // Each run of a section is its own script, as in mongosh: it
            // runs in a block of its own (its `const`s start afresh), with
            // the parameters bound.
            for p in params {
                let v = p
                    .seq
                    .map_or_else(|| p.value.clone(), |s| int_bson(s + i64::from(rep)));
                session.bind(&p.name, v);
            }
            for (name, param) in &op.with {
                if let Some(p) = params.iter().find(|p| &p.name == param) {
                    let v = p
                        .seq
                        .map_or_else(|| p.value.clone(), |s| int_bson(s + i64::from(rep)));
                    session.bind(name, v);
                }
            }
            session.bind("i", int_bson(i64::from(rep)));
            let mut meter = Meter::new(client, db);
            let (r, a) = run_op(&mut meter, &mut session, &id, op.kind, &section.text, db).await;
            answer = a;
            let failed = r.error.is_some();
            total = Some(match total {
                None => r,
                Some(t) => add_op(t, r),
            });
            if failed {
                break;
            }
        }
        let Some(mut result) = total else { continue };
        if let Some(e) = &mut result.error {
            let why = std::mem::take(&mut e.message);
            e.message = if op.probe.is_some() {
                Message::new("probe '{id}': {e}")
                    .arg("id", &id)
                    .arg_msg("e", why)
            } else {
                Message::new("{file}:{line}: {e}")
                    .arg("file", file)
                    .arg("line", section.line)
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
        Err(e) => errors.push(measuring(db, e)),
    }
    Side {
        start,
        end,
        answers,
        errors,
    }
}

/// Measuring `db` failed (`e`: the driver's or the server's words).
fn measuring(db: &str, e: String) -> Message {
    Message::new("measuring {db}: {e}")
        .arg("db", db)
        .arg("e", e)
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

async fn run_script(session: &mut Session, src: &str, db: &str) -> Result<(), Message> {
    let program = parse_program(src).map_err(|e| e.with_source(src))?;
    stays_in(&program, db).map_err(|e| e.to_message())?;
    let (_, res) = session.eval_program(&program).await;
    res.map_err(|e| e.with_source(src))
}

/// Run one operation through the measurement path ([`Meter`]): a read's
/// answer is its last statement's value.
async fn run_op(
    meter: &mut Meter<'_>,
    session: &mut Session,
    id: &str,
    kind: OpKind,
    src: &str,
    db: &str,
) -> (OpResult, Option<Bson>) {
    let mut result = OpResult::new(id, kind, src.trim());
    let program = match parse_program(src) {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(OpError::shell(e.with_source(src)));
            return (result, None);
        }
    };
    if program.is_empty() {
        result.error = Some(OpError::shell(Message::new(
            "the section has no statement yet",
        )));
        return (result, None);
    }
    if let Err(e) = stays_in(&program, db) {
        result.error = Some(OpError::shell(e.to_message()));
        return (result, None);
    }
    let answer = result.set(meter.run(session, &program, src, kind).await);
    (result, answer)
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
        detail: Message::default(),
        hint: c.hint.clone(),
    };
    if let Some(check) = &c.check {
        match Check::parse(check.get_ref()) {
            Ok(parsed) => {
                let v = parsed.evaluate(source);
                r.passed = v.passed;
                if let (Some(l), Some(rt)) = (&v.left, &v.right) {
                    r.measured = Message::verbatim(l);
                    r.bound = Message::verbatim(format!("{} {rt}", cmp_symbol(parsed.op)));
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
                r.passed = m == rf;
                if !r.passed {
                    r.detail = first_difference(&m, &rf);
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

fn first_difference(mine: &[String], reference: &[String]) -> Message {
    let mut sorted_mine = mine.to_vec();
    let mut sorted_ref = reference.to_vec();
    sorted_mine.sort();
    sorted_ref.sort();
    let reordered = sorted_mine == sorted_ref;
    for (i, (a, b)) in mine.iter().zip(reference).enumerate() {
        if a != b && reordered {
            // The right items in another order: say so, the order is the fault.
            return Message::new(
                "the same items in another order: item {n} is yours {mine}, the reference's {reference}",
            )
            .arg("n", i + 1)
            .arg("mine", a)
            .arg("reference", b);
        }
        if a != b {
            return Message::new("item {n}: yours {mine}, the reference's {reference}")
                .arg("n", i + 1)
                .arg("mine", a)
                .arg("reference", b);
        }
    }
    if mine.len() > reference.len() {
        Message::new("you return extra items, first {item}").arg("item", &mine[reference.len()])
    } else if reference.len() > mine.len() {
        Message::new("you miss items, first {item}").arg("item", &reference[mine.len()])
    } else {
        Message::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_in_another_order_is_said_to_be_reordered() {
        let v = |xs: &[&str]| xs.iter().map(ToString::to_string).collect::<Vec<_>>();
        let reordered = first_difference(&v(&["a", "c", "b"]), &v(&["a", "b", "c"])).to_string();
        assert!(
            reordered.contains("another order") && reordered.contains("item 2"),
            "{reordered}"
        );
        let wrong = first_difference(&v(&["a", "x", "c"]), &v(&["a", "b", "c"])).to_string();
        assert!(
            !wrong.contains("another order") && wrong.contains("item 2"),
            "{wrong}"
        );
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
