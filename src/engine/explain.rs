//! `explain`: what the planner considered and what the winning plan did.
//!
//! The reply has mongod 7.0's classic shape (`explainVersion: "1"`):
//! `queryPlanner` with the winning and rejected plans, `executionStats`
//! measured by running the winner to completion (without writing anything,
//! for updates and deletes), and with `allPlansExecution` the trial figures
//! of every candidate. Aggregations report a `$cursor` stage for the part
//! pushed into the query layer and per-stage counts for the rest; `$lookup`
//! reports how its foreign reads went (index or collection scan).

pub(crate) mod aggregate;

use std::time::Instant;

use bson::{Bson, Document, doc};

use super::catalog::{Catalog, Collection};
use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::exec::{self, BoxStage, Ctx, Member};
use super::expr::Vars;
use super::filter::Filter;
use super::planner::{self, Query};
use super::sort::SortSpec;
use super::update::{ApplyContext, Update};
use super::value;

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

/// A write the explained command would do to the matches.
enum Write {
    Update {
        update: Box<Update>,
        multi: bool,
        upsert: bool,
    },
    Delete {
        multi: bool,
    },
}

/// One explained query: the pieces `find`, `count`, `distinct`, `update`,
/// `delete` and `findAndModify` share.
pub(super) struct Explained {
    pub(super) query_planner: Document,
    pub(super) execution_stats: Option<Document>,
}

fn num(d: &Document, key: &str) -> u64 {
    d.get(key)
        .and_then(value::as_i64)
        .map_or(0, |n| n.unsigned_abs())
}

fn coll_name<'a>(command: &'a Document, key: &str) -> Result<&'a str> {
    command.get_str(key).map_err(|_| {
        EngineError::new(
            ErrorCode::INVALID_NAMESPACE,
            format!(
                "collection name has invalid type {}",
                command.get(key).map_or("missing", value::type_alias)
            ),
        )
    })
}

fn opt_doc<'a>(command: &'a Document, key: &str) -> Option<&'a Document> {
    command.get(key).and_then(Bson::as_document)
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

fn effective_collation(
    c: Option<&Collection>,
    given: Option<&Document>,
) -> Result<Option<Collation>> {
    match given {
        Some(spec) => Collation::parse(spec),
        None => Ok(c.and_then(|c| c.collation().cloned())),
    }
}

/// Plan and (unless only planning) run one query: the explain sections and
/// the results of the winning plan. With `run`, the winner runs even at
/// `queryPlanner` verbosity (an aggregation needs its results).
#[allow(clippy::too_many_arguments)]
fn explain_query(
    cat: &Catalog,
    db: &str,
    coll: &str,
    q: &Query<'_>,
    filter: &Filter,
    vars: &Vars,
    verbosity: Verbosity,
    write: Option<&Write>,
    run: bool,
) -> Result<(Explained, Vec<Member>)> {
    let ns = format!("{db}.{coll}");
    let mut qp = doc! {
        "namespace": ns,
        "indexFilterSet": false,
        "parsedQuery": parsed_query(q.filter.source()),
        "queryHash": shape_hash(&[Some(q.filter.source()), q.projection]),
        "planCacheKey": shape_hash(&[Some(q.filter.source()), q.projection, Some(&Document::new())]),
        "maxIndexedOrSolutionsReached": false,
        "maxIndexedAndSolutionsReached": false,
        "maxScansToExplodeReached": false,
    };
    let Some(c) = cat.collection(db, coll) else {
        let eof = wrap_write(doc! {"stage": "EOF"}, write);
        qp.insert("winningPlan", eof.clone());
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
        return Ok((
            Explained {
                query_planner: qp,
                execution_stats: stats,
            },
            Vec::new(),
        ));
    };
    let ctx = Ctx {
        coll: c,
        filter,
        vars,
        collation: q.collation,
    };
    let started = Instant::now();
    let plans = planner::candidates(c, q)?;
    let chosen = exec::choose(plans, &ctx)?;
    let plan = &chosen.plans[chosen.winner];
    super::metrics::plan_summary(|| plan.summary(c));
    let mut winner = exec::build(plan, &ctx);
    let rejected: Vec<Bson> = chosen
        .trials
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != chosen.winner)
        .map(|(_, s)| Bson::Document(s.explain(&ctx, false)))
        .collect();
    let mut members: Vec<Member> = Vec::new();
    if run || verbosity != Verbosity::QueryPlanner {
        let single = matches!(
            write,
            Some(Write::Update { multi: false, .. } | Write::Delete { multi: false })
        );
        exec::drain(&mut winner, &ctx, |m| {
            members.push(m);
            !single
        })?;
    }
    let execution_stats = if verbosity == Verbosity::QueryPlanner {
        None
    } else {
        let stages = winner.explain(&ctx, true);
        let (keys, docs) = winner.totals();
        let n_returned = if write.is_some() {
            0
        } else {
            members.len() as i64
        };
        let stages = match write {
            Some(w) => write_stats(stages, w, &members, c, vars)?,
            None => stages,
        };
        let mut s = doc! {
            "executionSuccess": true,
            "nReturned": n_returned,
            "executionTimeMillis": started.elapsed().as_millis() as i64,
            "totalKeysExamined": keys as i64,
            "totalDocsExamined": docs as i64,
            "executionStages": stages,
        };
        if verbosity == Verbosity::AllPlansExecution {
            let all: Vec<Bson> = chosen
                .trials
                .iter()
                .map(|t| Bson::Document(trial_stats(t, &ctx)))
                .collect();
            s.insert("allPlansExecution", all);
        }
        Some(s)
    };
    let winning = match chosen.trials.get(chosen.winner) {
        Some(t) => t.explain(&ctx, false),
        None => winner.explain(&ctx, false),
    };
    qp.insert("winningPlan", wrap_write(winning, write));
    qp.insert("rejectedPlans", rejected);
    Ok((
        Explained {
            query_planner: qp,
            execution_stats,
        },
        members,
    ))
}

fn trial_stats<'a>(t: &BoxStage<'a>, ctx: &Ctx<'a>) -> Document {
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

fn wrap_write(plan: Document, write: Option<&Write>) -> Document {
    match write {
        Some(Write::Update { .. }) => doc! {"stage": "UPDATE", "inputStage": plan},
        Some(Write::Delete { .. }) => doc! {"stage": "DELETE", "inputStage": plan},
        None => plan,
    }
}

/// The UPDATE/DELETE stage's figures: what the write would have done.
fn write_stats(
    input: Document,
    write: &Write,
    members: &[Member],
    c: &Collection,
    vars: &Vars,
) -> Result<Document> {
    let mut out = match write {
        Write::Update { .. } => doc! {"stage": "UPDATE"},
        Write::Delete { .. } => doc! {"stage": "DELETE"},
    };
    let time = input
        .get("executionTimeMillisEstimate")
        .cloned()
        .unwrap_or(Bson::Int64(0));
    let works = input.get_i64("works").unwrap_or(0) + 1;
    out.extend(doc! {
        "nReturned": 0i64, "executionTimeMillisEstimate": time, "works": works,
        "advanced": 0i64, "needTime": works - 1, "needYield": 0i64, "saveState": 0i64,
        "restoreState": 0i64, "isEOF": 1,
    });
    match write {
        Write::Update { update, upsert, .. } => {
            let mut modify = 0i64;
            for m in members {
                let doc = match &m.doc {
                    Some(d) => d.clone(),
                    None => c.doc(m.rid)?.unwrap_or_default(),
                };
                let mut new = doc.clone();
                let ctx = ApplyContext {
                    array_position: m.position,
                    is_insert: false,
                    now: bson::DateTime::now(),
                    vars,
                };
                if update.apply(&mut new, &ctx)? {
                    modify += 1;
                }
            }
            out.insert("nMatched", members.len() as i64);
            out.insert("nWouldModify", modify);
            out.insert("nWouldUpsert", i64::from(*upsert && members.is_empty()));
        }
        Write::Delete { .. } => {
            out.insert("nWouldDelete", members.len() as i64);
        }
    }
    out.insert("inputStage", input);
    Ok(out)
}

/// The request pieces every query command carries.
struct Parts {
    coll: String,
    filter: Document,
    sort: Option<Document>,
    projection: Option<Document>,
    skip: u64,
    limit: Option<u64>,
    hint: Option<Bson>,
    collation: Option<Document>,
    write: Option<(Bson, Vec<Document>, bool, bool, bool)>,
    /// `distinct`'s key.
    distinct_key: Option<String>,
    /// `find`'s `min` and `max`.
    min: Option<Document>,
    max: Option<Document>,
}

fn parts_of(command: &Document) -> Result<Parts> {
    let Some((name, _)) = command.iter().next() else {
        return Err(EngineError::failed_to_parse(
            "explain command requires a nested object",
        ));
    };
    let mut p = Parts {
        coll: coll_name(command, name)?.to_string(),
        filter: Document::new(),
        sort: None,
        projection: None,
        skip: 0,
        limit: None,
        hint: None,
        collation: None,
        write: None,
        distinct_key: None,
        min: None,
        max: None,
    };
    let from = |p: &mut Parts, d: &Document, filter_key: &str| {
        p.filter = opt_doc(d, filter_key).cloned().unwrap_or_default();
        p.hint = d.get("hint").cloned();
        p.collation = opt_doc(d, "collation").cloned();
    };
    match name.as_str() {
        "find" => {
            from(&mut p, command, "filter");
            p.sort = opt_doc(command, "sort").cloned();
            p.projection = opt_doc(command, "projection").cloned();
            p.skip = num(command, "skip");
            p.limit = Some(num(command, "limit")).filter(|l| *l > 0);
            p.min = opt_doc(command, "min").cloned();
            p.max = opt_doc(command, "max").cloned();
        }
        "count" => {
            from(&mut p, command, "query");
            p.skip = num(command, "skip");
            p.limit = Some(num(command, "limit")).filter(|l| *l > 0);
        }
        "distinct" => {
            from(&mut p, command, "query");
            p.distinct_key = command.get_str("key").ok().map(str::to_string);
        }
        "update" => {
            let st = first_statement(command, "updates")?;
            from(&mut p, &st, "q");
            let filters = array_filters(&st);
            p.write = Some((
                st.get("u")
                    .cloned()
                    .unwrap_or(Bson::Document(Document::new())),
                filters,
                st.get_bool("multi").unwrap_or(false),
                st.get_bool("upsert").unwrap_or(false),
                false,
            ));
        }
        "delete" => {
            let st = first_statement(command, "deletes")?;
            from(&mut p, &st, "q");
            let multi = st.get("limit").and_then(value::as_i64).unwrap_or(0) == 0;
            p.write = Some((Bson::Null, Vec::new(), multi, false, true));
        }
        "findAndModify" | "findandmodify" => {
            from(&mut p, command, "query");
            p.sort = opt_doc(command, "sort").cloned();
            let remove = command.get_bool("remove").unwrap_or(false);
            p.write = Some((
                command
                    .get("update")
                    .cloned()
                    .unwrap_or(Bson::Document(Document::new())),
                array_filters(command),
                false,
                command.get_bool("upsert").unwrap_or(false),
                remove,
            ));
        }
        other => {
            return Err(EngineError::new(
                ErrorCode::COMMAND_NOT_FOUND,
                format!("Explain failed due to unknown command: {other}"),
            ));
        }
    }
    Ok(p)
}

fn first_statement(command: &Document, key: &str) -> Result<Document> {
    match command.get(key) {
        Some(Bson::Array(items)) => items
            .first()
            .and_then(Bson::as_document)
            .cloned()
            .ok_or_else(|| {
                EngineError::failed_to_parse(format!("'{key}' must contain at least one statement"))
            }),
        _ => Err(EngineError::failed_to_parse(format!(
            "BSON field '{key}' is missing but a required field"
        ))),
    }
}

fn array_filters(d: &Document) -> Vec<Document> {
    match d.get("arrayFilters") {
        Some(Bson::Array(a)) => a.iter().filter_map(|v| v.as_document().cloned()).collect(),
        _ => Vec::new(),
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

/// Explain one command (the inner document of `{explain: …}`); the reply
/// without `ok`.
pub fn explain(
    cat: &Catalog,
    db: &str,
    command: &Document,
    verbosity: Verbosity,
    now: bson::DateTime,
) -> Result<Document> {
    let mut echoed = command.clone();
    echoed.insert("$db", db);
    let name = command.keys().next().cloned().unwrap_or_default();
    let mut out = doc! {"explainVersion": "1"};
    if name == "aggregate" {
        out.extend(explain_aggregate(cat, db, command, verbosity, now)?);
    } else {
        let p = parts_of(command)?;
        let c = cat.collection(db, &p.coll);
        let collation = effective_collation(c, p.collation.as_ref())?;
        let filter = Filter::parse(&p.filter, collation.as_ref())?;
        let sort = p.sort.as_ref().map(SortSpec::parse).transpose()?;
        let vars = vars_of(command, collation.as_ref(), now)?;
        let write = match &p.write {
            Some((_, _, multi, _, true)) => Some(Write::Delete { multi: *multi }),
            Some((u, filters, multi, upsert, false)) => Some(Write::Update {
                update: Box::new(Update::parse(u, filters, collation.as_ref())?),
                multi: *multi,
                upsert: *upsert,
            }),
            None => None,
        };
        let q = Query {
            filter: &filter,
            sort: sort.as_ref().filter(|s| !s.keys.is_empty()),
            projection: p.projection.as_ref(),
            skip: p.skip,
            limit: p.limit,
            hint: p.hint.as_ref(),
            collation: collation.as_ref(),
            count: name == "count",
            distinct: p.distinct_key.as_deref(),
            min: p.min.as_ref(),
            max: p.max.as_ref(),
        };
        let e = if name == "count" && p.filter.is_empty() && p.hint.is_none() {
            fast_count(cat, db, &p, verbosity)
        } else {
            let (mut e, _) = explain_query(
                cat,
                db,
                &p.coll,
                &q,
                &filter,
                &vars,
                verbosity,
                write.as_ref(),
                false,
            )?;
            if name == "count" {
                wrap_count(&mut e);
            }
            e
        };
        out.insert("queryPlanner", e.query_planner);
        if let Some(s) = e.execution_stats {
            out.insert("executionStats", s);
        }
    }
    int32_counters(&mut out);
    out.insert("command", echoed);
    out.insert("serverInfo", server_info());
    out.insert("serverParameters", server_parameters());
    Ok(out)
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

/// `count` with an empty query reads the collection's record count.
fn fast_count(cat: &Catalog, db: &str, p: &Parts, verbosity: Verbosity) -> Explained {
    let n = cat.collection(db, &p.coll).map_or(0, |c| c.len() as u64);
    let n = n.saturating_sub(p.skip);
    let n = p.limit.map_or(n, |l| n.min(l));
    let plan = doc! {"stage": "RECORD_STORE_FAST_COUNT"};
    Explained {
        query_planner: doc! {
            "namespace": format!("{db}.{}", p.coll),
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
                    "isEOF": 1, "nCounted": n as i64, "nSkipped": p.skip as i64,
                    "inputStage": {"stage": "RECORD_STORE_FAST_COUNT", "nReturned": 0, "executionTimeMillisEstimate": 0,
                        "works": 1, "advanced": 0, "needTime": 0, "needYield": 0, "saveState": 0,
                        "restoreState": 0, "isEOF": 1, "nCounted": n as i64, "nSkipped": p.skip as i64},
                },
            }
        }),
    }
}

/// Put a COUNT stage over a query plan; the count's results are counted,
/// not returned.
fn wrap_count(e: &mut Explained) {
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

fn explain_aggregate(
    cat: &Catalog,
    db: &str,
    command: &Document,
    verbosity: Verbosity,
    now: bson::DateTime,
) -> Result<Document> {
    let pipeline: Vec<Document> = match command.get("pipeline") {
        Some(Bson::Array(a)) => a.iter().filter_map(|v| v.as_document().cloned()).collect(),
        _ => return Err(aggregate::no_pipeline()),
    };
    let coll = match command.get("aggregate") {
        Some(Bson::String(s)) => Some(s.clone()),
        _ => None,
    };
    let c = coll.as_deref().and_then(|n| cat.collection(db, n));
    let collation = effective_collation(c, opt_doc(command, "collation"))?;
    let vars = vars_of(command, collation.as_ref(), now)?;
    let out = match coll {
        Some(name) => aggregate::run_aggregate(
            cat,
            db,
            &name,
            &pipeline,
            command.get("hint"),
            &vars,
            Some(verbosity),
            now,
        )?,
        None => aggregate::run_collectionless(cat, db, &pipeline, &vars, Some(verbosity), now)?,
    };
    Ok(out.explain)
}

/// The variables a command runs with: `$$NOW`, its collation and its `let`.
fn vars_of(command: &Document, collation: Option<&Collation>, now: bson::DateTime) -> Result<Vars> {
    let mut vars = Vars::with_now(now);
    vars.set_collation(collation.cloned());
    if let Some(spec) = opt_doc(command, "let") {
        vars.bind_let(spec, &Document::new())?;
    }
    Ok(vars)
}
