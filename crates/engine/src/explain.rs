//! `explain`: what the planner considered and what the winning plan did.
//!
//! Nothing here plans or runs a query of its own: each command is handed,
//! typed ([`Explainable`]), to the function that runs it (`ops::*_run`,
//! `aggregate::run_aggregate`), which returns the explain of the stage
//! tree it executed; this module renders those trees.
//!
//! The reply has mongod 7.0's classic shape (`explainVersion: "1"`):
//! `queryPlanner` with the winning and rejected plans, `executionStats`
//! measured by running the winner to completion (without writing anything,
//! for updates and deletes), and with `allPlansExecution` the trial figures
//! of every candidate. Aggregations report a `$cursor` stage for the part
//! pushed into the query layer and per-stage counts for the rest; `$lookup`
//! reports how its foreign reads went (index or collection scan).

pub(crate) mod aggregate;

use bson::{Bson, Document, doc};

use super::catalog::Catalog;
use super::error::{EngineError, Result};
use super::exec::{BoxStage, Ctx, Execution};
use super::planner::Query;
use super::{Explainable, ops, value};

/// The server version explain reports.
pub const VERSION: &str = "7.0.12";

/// How much explain reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    QueryPlanner,
    ExecutionStats,
    AllPlansExecution,
}

impl Verbosity {
    /// The name mongod uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Verbosity::QueryPlanner => "queryPlanner",
            Verbosity::ExecutionStats => "executionStats",
            Verbosity::AllPlansExecution => "allPlansExecution",
        }
    }

    /// Parse mongod's verbosity names.
    pub fn parse(s: &str) -> Result<Verbosity> {
        match s {
            "queryPlanner" => Ok(Verbosity::QueryPlanner),
            "executionStats" => Ok(Verbosity::ExecutionStats),
            "allPlansExecution" => Ok(Verbosity::AllPlansExecution),
            _ => Err(EngineError::bad_value(
                "verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}",
            )),
        }
    }
}

/// One explained query: the pieces `find`, `count`, `distinct`, `update`,
/// `delete` and `findAndModify` share.
pub(super) struct Explained {
    pub(super) query_planner: Document,
    pub(super) execution_stats: Option<Document>,
}

/// A stable 8-hex-digit hash of the query's shape (field names and
/// operators, not values), standing in for mongod's `queryHash`.
fn shape_hash(parts: &[Option<&Document>]) -> String {
    fn shape(v: &Bson, out: &mut String) {
        match v {
            Bson::Document(d) => {
                out.push('{');
                for (k, v) in d {
                    out.push_str(k);
                    out.push(':');
                    shape(v, out);
                }
                out.push('}');
            }
            Bson::Array(a) => {
                out.push('[');
                for v in a {
                    shape(v, out);
                }
                out.push(']');
            }
            other => out.push_str(value::type_alias(other)),
        }
    }
    let mut s = String::new();
    for p in parts {
        if let Some(d) = p {
            shape(&Bson::Document((*d).clone()), &mut s);
        }
        s.push('|');
    }
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08X}")
}

/// mongod's `parsedQuery`: implicit equalities made explicit, several
/// conditions under one `$and`.
pub fn parsed_query(filter: &Document) -> Document {
    let mut terms = Vec::new();
    for (k, v) in filter {
        // Nested `$and`s flatten into one, as mongod's parser does (two
        // merged `$match` stages arrive as one `$and`).
        if k == "$and"
            && let Bson::Array(items) = v
            && items.iter().all(|i| matches!(i, Bson::Document(_)))
        {
            for item in items.iter().filter_map(Bson::as_document) {
                match parsed_query(item) {
                    d if d.is_empty() => {}
                    d => match d.get_array("$and") {
                        Ok(inner) if d.len() == 1 => {
                            terms.extend(inner.iter().filter_map(|b| b.as_document().cloned()));
                        }
                        _ => terms.push(d),
                    },
                }
            }
            continue;
        }
        if k.starts_with('$') {
            terms.push(doc! {k.clone(): v.clone()});
            continue;
        }
        match v {
            Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')) => {
                for (op, arg) in d {
                    match op.as_str() {
                        // `$options` belongs to its `$regex`.
                        "$options" if d.contains_key("$regex") => {}
                        "$regex" => {
                            let mut re = doc! {"$regex": arg.clone()};
                            if let Some(o) = d.get("$options") {
                                re.insert("$options", o.clone());
                            }
                            terms.push(doc! {k.clone(): re});
                        }
                        _ => terms.push(doc! {k.clone(): {op.clone(): arg.clone()}}),
                    }
                }
            }
            other => terms.push(doc! {k.clone(): {"$eq": other.clone()}}),
        }
    }
    match terms.len() {
        0 => Document::new(),
        1 => terms.pop().unwrap_or_default(),
        _ => doc! {"$and": terms.into_iter().map(Bson::Document).collect::<Vec<_>>()},
    }
}

/// The `queryPlanner` fields every query's explain opens with.
fn planner_head(ns: &str, q: &Query<'_>) -> Document {
    let filter = q.filter.source();
    doc! {
        "namespace": ns,
        "indexFilterSet": false,
        "parsedQuery": parsed_query(filter),
        "queryHash": shape_hash(&[Some(filter), q.projection]),
        "planCacheKey": shape_hash(&[Some(filter), q.projection, Some(&Document::new())]),
        "maxIndexedOrSolutionsReached": false,
        "maxIndexedAndSolutionsReached": false,
        "maxScansToExplodeReached": false,
    }
}

/// The explain of a query over a collection that does not exist: an `EOF`
/// plan that did nothing.
pub(super) fn eof(ns: &str, q: &Query<'_>, verbosity: Verbosity) -> Explained {
    let mut qp = planner_head(ns, q);
    qp.insert("winningPlan", doc! {"stage": "EOF"});
    qp.insert("rejectedPlans", Vec::<Bson>::new());
    let stats = (verbosity != Verbosity::QueryPlanner).then(|| {
        let mut s = doc! {
            "executionSuccess": true, "nReturned": 0, "executionTimeMillis": 0,
            "totalKeysExamined": 0, "totalDocsExamined": 0,
            "executionStages": doc! {"stage": "EOF", "nReturned": 0, "executionTimeMillisEstimate": 0, "works": 1, "advanced": 0, "needTime": 0, "needYield": 0, "saveState": 0, "restoreState": 0, "isEOF": 1},
        };
        if verbosity == Verbosity::AllPlansExecution {
            s.insert("allPlansExecution", Vec::<Bson>::new());
        }
        s
    });
    Explained {
        query_planner: qp,
        execution_stats: stats,
    }
}

/// The explain sections of a read that ran ([`super::exec::execute`]): the
/// winning plan as the trial left it, the rejected candidates and, past
/// `queryPlanner`, the winner's stage tree with the counters of its run.
/// Only renders: nothing is planned or run again.
pub(super) fn sections(
    ns: &str,
    q: &Query<'_>,
    run: &Execution,
    ctx: &Ctx<'_>,
    verbosity: Verbosity,
) -> Explained {
    let mut qp = planner_head(ns, q);
    let chosen = &run.chosen;
    let rejected: Vec<Bson> = chosen
        .trials
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != chosen.winner)
        .map(|(_, s)| Bson::Document(s.explain(ctx, false)))
        .collect();
    let execution_stats = (verbosity != Verbosity::QueryPlanner).then(|| {
        let (keys, docs) = run.root.totals();
        let mut s = doc! {
            "executionSuccess": true,
            "nReturned": run.returned as i64,
            "executionTimeMillis": run.started.elapsed().as_millis() as i64,
            "totalKeysExamined": keys as i64,
            "totalDocsExamined": docs as i64,
            // schemalab's addition (COMPAT.md): mongod reports no bytes.
            "totalDocBytesExamined": run.root.bytes_examined() as i64,
            "executionStages": run.root.explain(ctx, true),
        };
        if verbosity == Verbosity::AllPlansExecution {
            let all: Vec<Bson> = chosen
                .trials
                .iter()
                .map(|t| Bson::Document(trial_stats(t, ctx)))
                .collect();
            s.insert("allPlansExecution", all);
        }
        s
    });
    let winning = match chosen.trials.get(chosen.winner) {
        Some(t) => t.explain(ctx, false),
        None => run.root.explain(ctx, false),
    };
    qp.insert("winningPlan", winning);
    qp.insert("rejectedPlans", rejected);
    Explained {
        query_planner: qp,
        execution_stats,
    }
}

fn trial_stats(t: &BoxStage, ctx: &Ctx<'_>) -> Document {
    let (keys, docs) = t.totals();
    let c = t.counters();
    doc! {
        "nReturned": c.advanced as i64,
        "executionTimeMillisEstimate": (c.nanos / 1_000_000) as i64,
        "totalKeysExamined": keys as i64,
        "totalDocsExamined": docs as i64,
        "executionStages": t.explain(ctx, true),
    }
}

/// Put an UPDATE or DELETE stage (`stage`) over a read's plan, with
/// `figures`: what the write would have done to the matches. A read of a
/// collection that does not exist keeps its bare `EOF` execution stages.
pub(super) fn wrap_write(e: &mut Explained, stage: &str, figures: Document, exists: bool) {
    if let Ok(plan) = e.query_planner.get_document("winningPlan") {
        let wrapped = doc! {"stage": stage, "inputStage": plan.clone()};
        e.query_planner.insert("winningPlan", wrapped);
    }
    let Some(s) = &mut e.execution_stats else {
        return;
    };
    s.insert("nReturned", 0i64);
    if !exists {
        return;
    }
    if let Ok(input) = s.get_document("executionStages") {
        let time = input
            .get("executionTimeMillisEstimate")
            .cloned()
            .unwrap_or(Bson::Int64(0));
        let works = input.get_i64("works").unwrap_or(0) + 1;
        let mut out = doc! {
            "stage": stage,
            "nReturned": 0i64, "executionTimeMillisEstimate": time, "works": works,
            "advanced": 0i64, "needTime": works - 1, "needYield": 0i64, "saveState": 0i64,
            "restoreState": 0i64, "isEOF": 1,
        };
        out.extend(figures);
        out.insert("inputStage", input.clone());
        s.insert("executionStages", out);
    }
}

/// The engine does not know where it is served; the wire layer adds `host`
/// and `port` from the connection.
fn server_info() -> Document {
    doc! {
        "version": VERSION,
        "gitVersion": "schemalab-embedded",
    }
}

fn server_parameters() -> Document {
    doc! {
        "internalQueryFacetBufferSizeBytes": 104_857_600,
        "internalQueryFacetMaxOutputDocSizeBytes": 104_857_600,
        "internalLookupStageIntermediateDocumentMaxSizeBytes": 104_857_600,
        "internalDocumentSourceGroupMaxMemoryBytes": 104_857_600,
        "internalQueryMaxBlockingSortMemoryUsageBytes": 104_857_600,
        "internalQueryProhibitBlockingMergeOnMongoS": 0,
        "internalQueryMaxAddToSetBytes": 104_857_600,
        "internalDocumentSourceSetWindowFieldsMaxMemoryBytes": 104_857_600,
        "internalQueryFrameworkControl": "forceClassicEngine",
    }
}

/// Explain one parsed command (`sent` is its document as sent, which the
/// reply echoes); the reply without `ok`. Each command is planned and run by
/// the same function that answers it, asked for the explain of what ran.
pub fn explain(
    cat: &Catalog,
    db: &str,
    command: &Explainable,
    sent: &Document,
    verbosity: Verbosity,
    now: bson::DateTime,
) -> Result<Document> {
    let mut echoed = sent.clone();
    echoed.insert("$db", db);
    let mut out = doc! {"explainVersion": "1"};
    let v = Some(verbosity);
    let e = match command {
        Explainable::Aggregate {
            coll,
            pipeline,
            options,
        } => {
            out.extend(aggregate::explain(
                cat,
                db,
                coll.as_deref(),
                pipeline,
                options,
                verbosity,
                now,
            )?);
            None
        }
        Explainable::Find { coll, request } => ops::find_run(cat, db, coll, request, now, v)?.1,
        Explainable::Count { coll, request } => ops::count_run(cat, db, coll, request, now, v)?.1,
        Explainable::Distinct {
            coll,
            key,
            filter,
            collation,
        } => ops::distinct_run(cat, db, coll, key, filter, collation.as_ref(), now, v)?.1,
        Explainable::Update { coll, statement } => {
            ops::update_run(cat.collection(db, coll), db, coll, statement, now, v, false)?.1
        }
        Explainable::Delete { coll, statement } => {
            ops::delete_run(cat.collection(db, coll), db, coll, statement, now, v)?.1
        }
        Explainable::FindAndModify { coll, request } => {
            ops::find_and_modify_run(cat.collection(db, coll), db, coll, request, now, v)?.1
        }
    };
    if let Some(e) = e {
        out.insert("queryPlanner", e.query_planner);
        if let Some(s) = e.execution_stats {
            out.insert("executionStats", s);
        }
    }
    int32_counters(&mut out);
    truncate_stats_trees(&mut out, crate::limits::EXPLAIN_SIZE_THRESHOLD.get());
    out.insert("command", echoed);
    out.insert("serverInfo", server_info());
    out.insert("serverParameters", server_parameters());
    Ok(out)
}

/// What mongod writes in place of a plan stage once the explain it is
/// building has grown past `internalQueryExplainSizeThresholdBytes`.
pub const STATS_TREE_WARNING: &str = "stats tree exceeded BSON size limit for explain";

/// mongod's explain size threshold: it writes the reply in order and, before
/// each plan stage, checks how large the reply has grown; past `limit`
/// bytes the stage (with everything under it) becomes
/// `{warning: STATS_TREE_WARNING}`. Here the finished reply is walked in
/// the same order, counting each field's BSON bytes as mongod's builder
/// would have written them.
fn truncate_stats_trees(out: &mut Document, limit: u64) {
    /// Fields whose value (or each element of whose array) is a plan
    /// stage; a user's filter may well hold a field called `stage`.
    const PLAN_SLOTS: [&str; 6] = [
        "winningPlan",
        "rejectedPlans",
        "executionStages",
        "inputStage",
        "inputStages",
        "queryPlan",
    ];
    fn walk(doc: &mut Document, written: &mut u64, limit: u64) {
        *written += 5;
        for (key, value) in doc.iter_mut() {
            *written += key.len() as u64 + 2;
            walk_value(value, PLAN_SLOTS.contains(&key.as_str()), written, limit);
        }
    }
    fn walk_value(value: &mut Bson, stage: bool, written: &mut u64, limit: u64) {
        match value {
            Bson::Document(d) if stage && *written > limit => {
                *d = doc! {"warning": STATS_TREE_WARNING};
                *written += crate::codec::size_of_value(value) as u64;
            }
            Bson::Document(d) => walk(d, written, limit),
            Bson::Array(items) => {
                *written += 5;
                for (i, item) in items.iter_mut().enumerate() {
                    *written += decimal_len(i) + 2;
                    walk_value(item, stage, written, limit);
                }
            }
            leaf => *written += crate::codec::size_of_value(leaf) as u64,
        }
    }
    fn decimal_len(i: usize) -> u64 {
        i.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
    }
    let mut written = 0;
    walk(out, &mut written, limit);
}

/// mongod appends explain counters with `appendNumber`, which writes an
/// int32 whenever the value fits; drivers and mongosh show them as plain
/// numbers. Rewrite our int64 counters the same way, leaving alone every
/// subtree that echoes the user's own values.
fn int32_counters(doc: &mut Document) {
    const ECHOES: [&str; 7] = [
        "filter",
        "parsedQuery",
        "command",
        "keyPattern",
        "sortPattern",
        "transformBy",
        "indexBounds",
    ];
    for (key, value) in doc.iter_mut() {
        // A pipeline stage's spec sits under its `$name`; only `$cursor`
        // holds figures of ours.
        let stage_spec =
            key.starts_with('$') && !matches!(key.as_str(), "$cursor" | "$unionWith" | "$facet");
        if stage_spec || ECHOES.contains(&key.as_str()) {
            continue;
        }
        match value {
            Bson::Int64(n) => {
                if let Ok(small) = i32::try_from(*n) {
                    *value = Bson::Int32(small);
                }
            }
            Bson::Document(inner) => int32_counters(inner),
            Bson::Array(items) => {
                for item in items {
                    if let Bson::Document(inner) = item {
                        int32_counters(inner);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `count` with an empty query reads the collection's record count: `n`
/// after `skip`.
pub(super) fn fast_count(ns: &str, n: u64, skip: u64, verbosity: Verbosity) -> Explained {
    let plan = doc! {"stage": "RECORD_STORE_FAST_COUNT"};
    Explained {
        query_planner: doc! {
            "namespace": ns,
            "indexFilterSet": false,
            "parsedQuery": {},
            "maxIndexedOrSolutionsReached": false,
            "maxIndexedAndSolutionsReached": false,
            "maxScansToExplodeReached": false,
            "winningPlan": {"stage": "COUNT", "inputStage": plan},
            "rejectedPlans": [],
        },
        execution_stats: (verbosity != Verbosity::QueryPlanner).then(|| {
            doc! {
                "executionSuccess": true, "nReturned": 0, "executionTimeMillis": 0,
                "totalKeysExamined": 0, "totalDocsExamined": 0,
                "executionStages": {
                    "stage": "COUNT", "nReturned": 0, "executionTimeMillisEstimate": 0, "works": 1,
                    "advanced": 0, "needTime": 0, "needYield": 0, "saveState": 0, "restoreState": 0,
                    "isEOF": 1, "nCounted": n as i64, "nSkipped": skip as i64,
                    "inputStage": {"stage": "RECORD_STORE_FAST_COUNT", "nReturned": 0, "executionTimeMillisEstimate": 0,
                        "works": 1, "advanced": 0, "needTime": 0, "needYield": 0, "saveState": 0,
                        "restoreState": 0, "isEOF": 1, "nCounted": n as i64, "nSkipped": skip as i64},
                },
            }
        }),
    }
}

/// Put a COUNT stage over a query plan; the count's results are counted,
/// not returned.
pub(super) fn wrap_count(e: &mut Explained) {
    if let Ok(plan) = e.query_planner.get_document("winningPlan") {
        let wrapped = doc! {"stage": "COUNT", "inputStage": plan.clone()};
        e.query_planner.insert("winningPlan", wrapped);
    }
    if let Some(s) = &mut e.execution_stats {
        let n = s.get_i64("nReturned").unwrap_or(0);
        if let Ok(stages) = s.get_document("executionStages") {
            let mut count = doc! {"stage": "COUNT", "nReturned": 0i64};
            for key in [
                "executionTimeMillisEstimate",
                "works",
                "needTime",
                "needYield",
                "saveState",
                "restoreState",
                "isEOF",
            ] {
                if let Some(v) = stages.get(key) {
                    count.insert(key, v.clone());
                }
            }
            count.insert("nCounted", n);
            count.insert("nSkipped", 0i64);
            count.insert("inputStage", stages.clone());
            s.insert("executionStages", count);
        }
        s.insert("nReturned", 0i64);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use bson::{RawDocumentBuf, doc};

    use super::Verbosity;
    use crate::exec::EXECUTIONS;
    use crate::{
        AggregateOptions, CountRequest, DeleteStatement, Engine, Explainable, FindAndModifyRequest,
        FindRequest, UpdateStatement,
    };

    fn executions() -> u64 {
        EXECUTIONS.with(std::cell::Cell::get)
    }

    /// Each explainable command is planned and run once by its explain:
    /// the stage tree reported is the one that ran, not a second run.
    #[test]
    fn explain_plans_and_runs_each_command_once() {
        let e = Engine::new();
        e.create_indexes("t", "c", &[doc! {"key": {"a": 1}, "name": "a_1"}])
            .unwrap();
        let docs: Vec<RawDocumentBuf> = (0..30)
            .map(|i| RawDocumentBuf::from_document(&doc! {"_id": i, "a": i % 3, "b": i}).unwrap())
            .collect();
        e.insert("t", "c", docs, true).unwrap();
        let filter = doc! {"a": 1, "$expr": {"$gt": ["$b", "$$min"]}};
        let statement = UpdateStatement {
            filter: filter.clone(),
            update: bson::Bson::Document(doc! {"$set": {"x": 1}}),
            upsert: false,
            multi: true,
            array_filters: Vec::new(),
            collation: None,
            hint: None,
            sort: None,
            let_vars: Some(doc! {"min": 10}),
        };
        let commands = [
            Explainable::Find {
                coll: "c".into(),
                request: FindRequest {
                    filter: filter.clone(),
                    let_vars: Some(doc! {"min": 10}),
                    ..FindRequest::default()
                },
            },
            Explainable::Count {
                coll: "c".into(),
                request: CountRequest {
                    filter: doc! {"a": 2},
                    ..CountRequest::default()
                },
            },
            Explainable::Distinct {
                coll: "c".into(),
                key: "b".into(),
                filter: doc! {"a": 2},
                collation: None,
            },
            Explainable::Update {
                coll: "c".into(),
                statement,
            },
            Explainable::Delete {
                coll: "c".into(),
                statement: DeleteStatement {
                    filter: doc! {"a": 0},
                    limit: 1,
                    collation: None,
                    hint: None,
                    let_vars: None,
                },
            },
            Explainable::FindAndModify {
                coll: "c".into(),
                request: FindAndModifyRequest {
                    query: doc! {"a": 1},
                    remove: true,
                    ..FindAndModifyRequest::default()
                },
            },
            Explainable::Aggregate {
                coll: Some("c".into()),
                pipeline: vec![
                    doc! {"$match": {"a": 1, "$expr": {"$gt": ["$b", "$$min"]}}},
                    doc! {"$group": {"_id": "$a", "n": {"$sum": 1}}},
                ],
                options: AggregateOptions {
                    let_vars: Some(doc! {"min": 10}),
                    ..AggregateOptions::default()
                },
            },
        ];
        for command in &commands {
            for verbosity in [
                Verbosity::QueryPlanner,
                Verbosity::ExecutionStats,
                Verbosity::AllPlansExecution,
            ] {
                let before = executions();
                let reply = e.explain("t", command, &doc! {}, verbosity).unwrap();
                assert_eq!(
                    executions() - before,
                    1,
                    "{command:?} at {verbosity:?}: {reply}"
                );
            }
        }
        // `let` reaches `$expr` in the explained run: b > 10 among a = 1.
        let reply = e
            .explain("t", &commands[0], &doc! {}, Verbosity::ExecutionStats)
            .unwrap();
        let stats = reply.get_document("executionStats").unwrap();
        assert_eq!(stats.get_i32("nReturned").unwrap(), 6);
        // Nothing was written.
        let all = e.find("t", "c", &FindRequest::default()).unwrap();
        assert_eq!(all.len(), 30);
        assert!(all.iter().all(|d| !d.contains_key("x")));
    }
}
