//! The executor: a plan ([`super::planner::Plan`]) becomes a tree of stages,
//! each doing one unit of work per call, as mongod's classic engine does.
//!
//! A call to [`Stage::work`] returns a result (`Advanced`), asks to be called
//! again (`NeedTime`: it examined something that did not qualify) or reports
//! the end (`Eof`). Every stage counts what it did — works, keys and
//! documents examined, seeks — so `explain` reports measured figures, and
//! [`choose`] can race candidate plans round-robin the way mongod's
//! multi-planner does and keep the most productive.

mod fetch;
mod scan;
mod shape;
mod sort;
mod stream;

pub use stream::{AggStream, FindStream, StreamParts, StreamStage};

use std::time::Instant;

use bson::{Bson, Document};

use super::catalog::Collection;
use super::collation::Collation;
use super::error::Result;
use super::expr::Vars;
use super::filter::Filter;
use super::index::RecordId;
use super::planner::Plan;

/// A result flowing between stages: a record, its document once fetched,
/// and the array position the filter matched (for positional `$`).
#[derive(Debug, Clone)]
pub struct Member {
    pub rid: RecordId,
    pub doc: Option<Document>,
    pub position: Option<usize>,
}

/// The outcome of one unit of work.
#[derive(Debug)]
pub enum State {
    Advanced(Member),
    NeedTime,
    Eof,
}

/// What every stage reads from.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub coll: &'a Collection,
    pub filter: &'a Filter,
    pub vars: &'a Vars,
    pub collation: Option<&'a Collation>,
}

/// Counters common to every stage, plus the ones only some stages use.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub works: u64,
    pub advanced: u64,
    pub need_time: u64,
    pub is_eof: bool,
    pub nanos: u128,
    pub keys_examined: u64,
    pub docs_examined: u64,
    /// BSON bytes of the documents examined (schemalab's addition: mongod
    /// reports no such figure).
    pub bytes_examined: u64,
}

/// One work in [`TIME_EVERY`] of a stage reads the clock, after the first
/// `TIME_EVERY`, which all do: reading it on every work was a noticeable
/// part of a scan. The counters stay exact; the time is an estimate, as
/// mongod's `executionTimeMillisEstimate` is.
const TIME_EVERY: u64 = 64;

/// The start of a timed work, and how many works its time stands for
/// (`None`: this work is not timed).
#[derive(Debug, Clone, Copy)]
pub struct Timer(Option<(Instant, u32)>);

impl Timer {
    /// The timer of call number `n` (from 0) of something run many times:
    /// timed if it is one of the first [`TIME_EVERY`] or the first of each
    /// later run of `TIME_EVERY`, which it then stands for.
    pub(crate) fn sampled(n: u64) -> Timer {
        if n < TIME_EVERY {
            Timer(Some((Instant::now(), 1)))
        } else if n.is_multiple_of(TIME_EVERY) {
            Timer(Some((Instant::now(), TIME_EVERY as u32)))
        } else {
            Timer(None)
        }
    }

    /// The time since it started, times the calls it stands for (0 when
    /// this call was not timed).
    pub(crate) fn elapsed_nanos(self) -> u128 {
        match self.0 {
            Some((started, weight)) => started.elapsed().as_nanos() * u128::from(weight),
            None => 0,
        }
    }
}

impl Counters {
    /// Start a work: timed if it is one of the first [`TIME_EVERY`] or the
    /// first of each later run of `TIME_EVERY`, which it then stands for.
    fn start(&self) -> Timer {
        Timer::sampled(self.works)
    }

    fn record(&mut self, started: Timer, state: &Result<State>) {
        match state {
            Ok(s) => self.record_state(started, s),
            Err(_) => {
                self.works += 1;
                self.nanos += started.elapsed_nanos();
            }
        }
    }

    fn record_state(&mut self, started: Timer, state: &State) {
        self.works += 1;
        self.nanos += started.elapsed_nanos();
        match state {
            State::Advanced(_) => self.advanced += 1,
            State::NeedTime => self.need_time += 1,
            State::Eof => self.is_eof = true,
        }
    }

    /// The fields every stage reports in executionStats mode.
    fn common(&self, out: &mut Document) {
        out.insert("nReturned", self.advanced as i64);
        out.insert(
            "executionTimeMillisEstimate",
            (self.nanos / 1_000_000) as i64,
        );
        out.insert("works", self.works as i64);
        out.insert("advanced", self.advanced as i64);
        out.insert("needTime", self.need_time as i64);
        out.insert("needYield", 0i64);
        out.insert("saveState", 0i64);
        out.insert("restoreState", 0i64);
        out.insert("isEOF", i32::from(self.is_eof));
    }
}

/// One executing stage.
pub trait Stage: Send {
    /// Do one unit of work.
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State>;
    /// The stage's explain document; with `stats`, its execution counters.
    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document;
    /// Keys and documents examined by this stage and its children.
    fn totals(&self) -> (u64, u64);
    /// BSON bytes of the documents examined by this stage and its
    /// children (a leaf's own, unless a stage has children).
    fn bytes_examined(&self) -> u64 {
        self.counters().bytes_examined
    }
    /// The stage's own counters.
    fn counters(&self) -> &Counters;
}

/// A boxed stage.
pub type BoxStage = Box<dyn Stage>;

/// Run `work` on a stage body, timing and counting it.
fn counted(c: &mut Counters, f: impl FnOnce() -> Result<State>) -> Result<State> {
    // `maxTimeMS` and a vanished client stop a plan between two works.
    crate::limits::checkpoint()?;
    let started = c.start();
    let state = f();
    c.record(started, &state);
    state
}

/// Build the stage tree of a plan.
pub fn build(plan: &Plan, ctx: &Ctx<'_>) -> BoxStage {
    match plan {
        Plan::CollScan => Box::new(scan::CollScan::new(ctx)),
        Plan::IdHack(id) => Box::new(scan::IdHack::new(id.clone())),
        Plan::IxScan(p) => Box::new(scan::IxScan::new(p.clone(), ctx)),
        Plan::Fetch { child, residual } => {
            Box::new(fetch::Fetch::new(build(child, ctx), residual.clone()))
        }
        Plan::Or(children) => Box::new(fetch::Or::new(
            children.iter().map(|c| build(c, ctx)).collect(),
        )),
        Plan::Sort {
            child,
            spec,
            pattern,
            limit,
        } => Box::new(sort::Sort::new(
            build(child, ctx),
            spec.clone(),
            pattern.clone(),
            *limit,
        )),
        Plan::Skip(child, n) => Box::new(shape::Skip::new(build(child, ctx), *n)),
        Plan::Limit(child, n) => Box::new(shape::Limit::new(build(child, ctx), *n)),
        Plan::Projection { child, kind, spec } => Box::new(shape::Projection::new(
            build(child, ctx),
            *kind,
            spec.clone(),
        )),
    }
}

/// mongod's trial budget per candidate (`internalQueryPlanEvaluationWorks`).
pub const TRIAL_WORKS: u64 = 10_000;
/// A candidate that produces this many results ends the trial
/// (`internalQueryPlanEvaluationMaxResults`).
pub const TRIAL_RESULTS: u64 = 101;

/// The outcome of planning: the winner (fresh, not yet run) and every
/// candidate as it stood at the end of the trial.
pub struct Chosen {
    pub winner: usize,
    pub plans: Vec<Plan>,
    /// The candidates after their trial (empty when there was only one).
    pub trials: Vec<BoxStage>,
    pub scores: Vec<f64>,
}

/// mongod's plan score: 1 + productivity, plus a tiny bonus for avoiding a
/// FETCH or a SORT, plus one for finishing during the trial.
fn score(stage: &dyn Stage, plan: &Plan) -> f64 {
    let c = stage.counters();
    let works = c.works.max(1) as f64;
    let productivity = c.advanced as f64 / works;
    let epsilon = (1.0 / (10.0 * works)).min(1e-4);
    let mut bonus = 0.0;
    if !plan.fetches() {
        bonus += epsilon;
    }
    if !plan.sorts() {
        bonus += epsilon;
    }
    bonus += epsilon; // no index intersection: we never build one
    let eof = if c.is_eof { 1.0 } else { 0.0 };
    1.0 + productivity + bonus + eof
}

/// Race the candidates round-robin and pick the best; ties go to the
/// earliest candidate (index order), as mongod's stable sort does.
pub fn choose(plans: Vec<Plan>, ctx: &Ctx<'_>) -> Result<Chosen> {
    // Never without a plan: a collection scan always answers.
    let plans = if plans.is_empty() {
        vec![Plan::CollScan]
    } else {
        plans
    };
    if plans.len() <= 1 {
        return Ok(Chosen {
            winner: 0,
            plans,
            trials: Vec::new(),
            scores: Vec::new(),
        });
    }
    let mut stages: Vec<BoxStage> = plans.iter().map(|p| build(p, ctx)).collect();
    let mut results = vec![0u64; stages.len()];
    let mut done = false;
    for _ in 0..TRIAL_WORKS {
        for (i, s) in stages.iter_mut().enumerate() {
            match s.work(ctx)? {
                State::Advanced(_) => {
                    results[i] += 1;
                    if results[i] >= TRIAL_RESULTS {
                        done = true;
                    }
                }
                State::NeedTime => {}
                State::Eof => done = true,
            }
        }
        if done {
            break;
        }
    }
    let scores: Vec<f64> = stages
        .iter()
        .zip(&plans)
        .map(|(s, p)| score(s.as_ref(), p))
        .collect();
    let mut winner = 0;
    for (i, sc) in scores.iter().enumerate() {
        if *sc > scores[winner] {
            winner = i;
        }
    }
    Ok(Chosen {
        winner,
        plans,
        trials: stages,
        scores,
    })
}

/// Run a stage to the end, handing each result to `visit` until it returns
/// false.
pub fn drain(
    stage: &mut BoxStage,
    ctx: &Ctx<'_>,
    mut visit: impl FnMut(Member) -> bool,
) -> Result<()> {
    let result = loop {
        match stage.work(ctx) {
            Ok(State::Advanced(m)) => {
                if !visit(m) {
                    break Ok(());
                }
            }
            Ok(State::NeedTime) => {}
            Ok(State::Eof) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    let (keys, docs) = stage.totals();
    super::metrics::examined(keys, docs);
    result
}

/// The explain document of a leaf or inner stage: name, its own fields,
/// then counters, then children.
fn stage_doc(
    name: &str,
    fields: Document,
    counters: Option<&Counters>,
    extra: Document,
    children: Vec<Document>,
) -> Document {
    let mut out = bson::doc! {"stage": name};
    out.extend(fields);
    if let Some(c) = counters {
        c.common(&mut out);
        out.extend(extra);
    }
    match children.len() {
        0 => {}
        1 => {
            if let Some(child) = children.into_iter().next() {
                out.insert("inputStage", child);
            }
        }
        _ => {
            out.insert(
                "inputStages",
                children.into_iter().map(Bson::Document).collect::<Vec<_>>(),
            );
        }
    }
    out
}

/// How far [`execute`] runs the winning plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Only plan (and race the candidates): explain at `queryPlanner`.
    Plan,
    /// Run to the end.
    All,
    /// Stop at the first result (an update or delete of one document).
    First,
}

/// One planned and executed read: the candidates as the trial left them,
/// the winner's stage tree after it ran (its counters are what explain
/// reports) and the results it produced.
pub struct Execution {
    pub chosen: Chosen,
    /// The winning plan's stages, as they ran.
    pub root: BoxStage,
    /// The results, in order (none when only planned, or when they were
    /// handed to a consumer as they came: [`Execution::returned`] counts
    /// them either way).
    pub members: Vec<Member>,
    /// How many results the winner produced.
    pub returned: u64,
    /// When planning began.
    pub started: Instant,
}

impl Execution {
    /// The winning plan.
    pub fn plan(&self) -> &Plan {
        &self.chosen.plans[self.chosen.winner]
    }
}

#[cfg(test)]
thread_local! {
    /// How many times [`execute`] ran on this thread: tests check that
    /// explain plans and runs a query once.
    pub(crate) static EXECUTIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Plan `q`, pick the winner and run it: the one way the operations read a
/// collection, and what explain reports on.
pub fn execute(q: &super::planner::Query<'_>, ctx: &Ctx<'_>, mode: Mode) -> Result<Execution> {
    #[cfg(test)]
    EXECUTIONS.with(|n| n.set(n.get() + 1));
    let started = Instant::now();
    let plans = super::planner::candidates(ctx.coll, q)?;
    let chosen = choose(plans, ctx)?;
    let plan = &chosen.plans[chosen.winner];
    super::metrics::plan_summary(|| plan.summary(ctx.coll));
    let mut root = build(plan, ctx);
    let mut members = Vec::new();
    if mode != Mode::Plan {
        drain(&mut root, ctx, |m| {
            members.push(m);
            mode == Mode::All
        })?;
    }
    Ok(Execution {
        chosen,
        root,
        returned: members.len() as u64,
        members,
        started,
    })
}

/// What a planned read examined, and the index it used.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReadStats {
    pub keys_examined: u64,
    pub docs_examined: u64,
    /// BSON bytes of the documents examined.
    pub bytes_examined: u64,
    /// The index used, or `None` for a collection scan.
    pub index: Option<String>,
}

/// The documents of `c` whose `path` equals any of `values` (with
/// `$lookup`'s array and null semantics, which are `$in`'s), read through
/// the planner: an index on `path` when there is one, a collection scan
/// otherwise. `$lookup` and `$graphLookup` read their foreign side this way.
pub fn read_matching_any(
    c: &Collection,
    path: &str,
    values: &[Bson],
    collation: Option<&Collation>,
    now: bson::DateTime,
) -> Result<(Vec<Document>, ReadStats)> {
    let filter_doc = bson::doc! {path: {"$in": values.to_vec()}};
    let filter = Filter::parse(&filter_doc, collation)?;
    let vars = Vars::with_now(now);
    let ctx = Ctx {
        coll: c,
        filter: &filter,
        vars: &vars,
        collation,
    };
    let mut q = super::planner::Query::new(&filter);
    q.collation = collation;
    let run = execute(&q, &ctx, Mode::All)?;
    let mut out = Vec::with_capacity(run.members.len());
    for m in run.members {
        match m.doc {
            Some(doc) => out.push(doc),
            None => out.extend(c.doc(m.rid)?),
        }
    }
    let (keys_examined, docs_examined) = run.root.totals();
    Ok((
        out,
        ReadStats {
            keys_examined,
            docs_examined,
            bytes_examined: run.root.bytes_examined(),
            index: run.chosen.plans[run.chosen.winner].index_name(c),
        },
    ))
}
