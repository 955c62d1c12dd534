//! Figures: what the server says about a database after a variant ran
//! (collection counts and sizes, exact BSON document sizes, index sizes,
//! whether the sizes are modelled) and what an `explain("executionStats")`
//! reply says about a read (stage chain, index, examined counts, time).
//! Explain parsing accepts the classic and the SBE shapes, and aggregate
//! explains with a `$cursor` first stage. What a reply lacks is said in a
//! [`Message`]; the driver's and the server's own errors stay as written.

use bson::{Bson, Document, doc};
use futures_util::{StreamExt, TryStreamExt};
use mongodb::Client;
use serde::{Deserialize, Serialize};

use crate::locale::Message;

/// Which server the figures come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineInfo {
    /// "schemalab embedded engine (sizes modelled)" or "MongoDB <version>".
    pub name: String,
    /// Whether storage and index sizes are modelled rather than measured.
    pub modelled: bool,
}

impl EngineInfo {
    /// The name in `lang`: the embedded engine's is schemalab's own words,
    /// a server's version string stays as it is.
    pub fn name_in(&self, lang: crate::locale::Lang) -> String {
        lang.lookup(&self.name).unwrap_or(&self.name).to_string()
    }
}

/// The embedded engine's name in a report.
const EMBEDDED_ENGINE: &str = "schemalab embedded engine (sizes modelled)";

/// Ask `buildInfo` which server this is.
pub async fn engine_info(client: &Client) -> Result<EngineInfo, String> {
    let info = client
        .database("admin")
        .run_command(doc! {"buildInfo": 1})
        .await
        .map_err(|e| e.to_string())?;
    if info.contains_key("schemalab") {
        Ok(EngineInfo {
            name: EMBEDDED_ENGINE.into(),
            modelled: true,
        })
    } else {
        let version = info.get_str("version").unwrap_or("unknown version");
        Ok(EngineInfo {
            name: format!("MongoDB {version}"),
            modelled: false,
        })
    }
}

/// One collection's figures (bytes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CollStats {
    pub name: String,
    pub count: i64,
    pub size: i64,
    pub avg_obj_size: f64,
    pub max_obj_size: i64,
    pub storage_size: i64,
    pub total_index_size: i64,
    pub nindexes: i64,
    /// Index name → size, in the server's order.
    pub indexes: Vec<IndexSize>,
    /// `storageSize` and index sizes are modelled by the embedded engine.
    pub modelled: bool,
}

/// One index's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexSize {
    pub name: String,
    pub size: i64,
}

fn num(b: Option<&Bson>) -> Option<f64> {
    match b? {
        Bson::Int32(i) => Some(f64::from(*i)),
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

fn int(d: &Document, k: &str) -> i64 {
    num(d.get(k)).unwrap_or(0.0) as i64
}

/// Measure every collection of `db` (system collections excluded), sorted
/// by name.
pub async fn measure_db(client: &Client, db: &str) -> Result<Vec<CollStats>, String> {
    let database = client.database(db);
    let mut names = database
        .list_collection_names()
        .await
        .map_err(|e| e.to_string())?;
    names.retain(|n| !n.starts_with("system."));
    names.sort();
    // Two collections at a time (in order): each measurement is two reads
    // that run in parallel on the server, which nothing writes meanwhile.
    futures_util::stream::iter(names)
        .map(|name| async move { measure_collection(client, db, &name).await })
        .buffered(2)
        .try_collect()
        .await
}

/// Measure one collection: `$collStats` storage stats (falling back to the
/// `collStats` command) plus the exact largest document, both asked at once.
pub async fn measure_collection(
    client: &Client,
    db: &str,
    coll: &str,
) -> Result<CollStats, String> {
    let (stats, max_obj_size) = tokio::try_join!(
        storage_stats(client, db, coll),
        max_obj_size(client, db, coll)
    )?;
    let modelled = stats
        .get_document("schemalab")
        .ok()
        .and_then(|s| s.get_bool("sizesModelled").ok())
        .unwrap_or(false);
    let mut indexes = Vec::new();
    if let Ok(sizes) = stats.get_document("indexSizes") {
        for (name, v) in sizes {
            indexes.push(IndexSize {
                name: name.clone(),
                size: num(Some(v)).unwrap_or(0.0) as i64,
            });
        }
    }
    let count = int(&stats, "count");
    let size = int(&stats, "size");
    Ok(CollStats {
        name: coll.to_string(),
        count,
        size,
        // collStats rounds avgObjSize down; the exact mean is more useful.
        avg_obj_size: if count > 0 {
            size as f64 / count as f64
        } else {
            0.0
        },
        max_obj_size,
        storage_size: int(&stats, "storageSize"),
        total_index_size: int(&stats, "totalIndexSize"),
        nindexes: int(&stats, "nindexes"),
        indexes,
        modelled,
    })
}

/// A collection's storage statistics: `$collStats` (falling back to the
/// `collStats` command).
async fn storage_stats(client: &Client, db: &str, coll: &str) -> Result<Document, String> {
    let database = client.database(db);
    let pipeline = vec![doc! {"$collStats": {"storageStats": {}}}];
    match database
        .collection::<Document>(coll)
        .aggregate(pipeline)
        .await
    {
        Ok(cursor) => {
            let docs: Vec<Document> = cursor.try_collect().await.map_err(|e| e.to_string())?;
            Ok(docs
                .first()
                .and_then(|d| d.get_document("storageStats").ok())
                .cloned()
                .unwrap_or_default())
        }
        Err(_) => database
            .run_command(doc! {"collStats": coll})
            .await
            .map_err(|e| e.to_string()),
    }
}

/// The largest document's exact BSON size: `$bsonSize` on the server, or
/// the documents fetched and measured here when the server lacks it.
async fn max_obj_size(client: &Client, db: &str, coll: &str) -> Result<i64, String> {
    let c = client.database(db).collection::<Document>(coll);
    let pipeline = vec![
        doc! {"$project": {"_id": 0, "s": {"$bsonSize": "$$ROOT"}}},
        doc! {"$group": {"_id": Bson::Null, "max": {"$max": "$s"}}},
    ];
    if let Ok(cursor) = c.aggregate(pipeline).await
        && let Ok(docs) = cursor.try_collect::<Vec<Document>>().await
    {
        return Ok(docs.first().and_then(|d| num(d.get("max"))).unwrap_or(0.0) as i64);
    }
    let mut cursor = c
        .clone_with_type::<bson::RawDocumentBuf>()
        .find(doc! {})
        .await
        .map_err(|e| e.to_string())?;
    let mut max = 0i64;
    while let Some(raw) = cursor.try_next().await.map_err(|e| e.to_string())? {
        max = max.max(raw.as_bytes().len() as i64);
    }
    Ok(max)
}

/// What an explain says about a read: the whole pipeline's work, summed
/// over every stage that reads (the `$cursor` query, each `$lookup`,
/// `$graphLookup`, `$unionWith` branch and `$facet` branch), with the
/// per-stage breakdown kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadMetrics {
    /// The winning plan of the query (the `$cursor` stage for a pipeline),
    /// root first: `FETCH<-IXSCAN`.
    pub stages: String,
    /// The index (or indexes, comma-separated) the query scans, or "".
    pub index: String,
    /// What the read returned: the last stage's nReturned for a pipeline.
    pub n_returned: i64,
    /// Summed over every stage that reports it.
    pub keys_examined: i64,
    /// Summed over every stage that reports it.
    pub docs_examined: i64,
    /// BSON bytes of the documents examined, summed over every stage: an
    /// exact figure of the embedded engine's (`totalDocBytesExamined`,
    /// schemalab's addition to explain); `null` where the server does not
    /// report it (mongod).
    #[serde(default)]
    pub bytes_examined: Option<i64>,
    /// `max(keysExamined, docsExamined) / max(nReturned, 1)`.
    pub ratio: f64,
    /// BSON bytes of the documents the read sends to the client (`null`
    /// when they could not be fetched).
    pub bytes_returned: Option<i64>,
    /// Per stage, in pipeline order (one entry for a find).
    pub pipeline: Vec<StageFigures>,
    /// Stages that read data but whose examined counts the server did not
    /// report: the totals leave them out.
    pub not_reported: Vec<String>,
    /// The raw `explain("executionStats")` reply every figure above was
    /// read from (set by the runner; `null` when the figures were summed
    /// over several explains), so a plan view shows exactly what was
    /// measured.
    #[serde(default)]
    pub explain: Option<Document>,
}

/// One stage's figures from an explain (`null` when the server gives none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageFigures {
    /// `find`, `$cursor`, `$lookup`, `$unionWith(other)/$cursor`,
    /// `$facet.byType/$lookup` …
    pub stage: String,
    /// The winning plan of a query stage, root first.
    pub plan: Option<String>,
    pub n_returned: Option<i64>,
    pub keys_examined: Option<i64>,
    pub docs_examined: Option<i64>,
    /// BSON bytes of the documents examined (the embedded engine's
    /// `totalDocBytesExamined`).
    #[serde(default)]
    pub bytes_examined: Option<i64>,
    /// executionTimeMillis(Estimate) as the server reports it.
    pub millis: Option<f64>,
}

/// What a write did: the reply's counts plus the index keys it inserted
/// and deleted (from `system.profile`; `null` when the server reports
/// none), summed over the operation's measured statements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteMetrics {
    pub n: i64,
    pub n_modified: i64,
    pub n_upserted: i64,
    #[serde(default)]
    pub keys_inserted: Option<i64>,
    #[serde(default)]
    pub keys_deleted: Option<i64>,
}

impl WriteMetrics {
    /// Add another measured statement's reply.
    pub fn add(&mut self, other: &WriteMetrics) {
        self.n += other.n;
        self.n_modified += other.n_modified;
        self.n_upserted += other.n_upserted;
    }
}

fn opt_int(d: &Document, k: &str) -> Option<i64> {
    num(d.get(k)).map(|n| n as i64)
}

/// The explain of one query (a find, or a pipeline's `$cursor` stage).
fn query_figures(stage: String, query: &Document) -> Result<(StageFigures, Vec<String>), Message> {
    let planner = query
        .get_document("queryPlanner")
        .map_err(|_| Message::new("explain reply without queryPlanner"))?;
    let winning = planner
        .get_document("winningPlan")
        .map_err(|_| Message::new("explain reply without queryPlanner.winningPlan"))?;
    // SBE nests the classic-looking tree under queryPlan.
    let plan = winning.get_document("queryPlan").unwrap_or(winning);
    let mut indexes = Vec::new();
    let chain = stage_chain(plan, &mut indexes);
    let exec = query
        .get_document("executionStats")
        .map_err(|_| Message::new("explain reply without executionStats (verbosity too low?)"))?;
    Ok((
        StageFigures {
            stage,
            plan: Some(chain),
            n_returned: opt_int(exec, "nReturned"),
            keys_examined: opt_int(exec, "totalKeysExamined"),
            docs_examined: opt_int(exec, "totalDocsExamined"),
            bytes_examined: opt_int(exec, "totalDocBytesExamined"),
            millis: num(exec.get("executionTimeMillis"))
                .or_else(|| num(exec.get("executionTimeMillisEstimate"))),
        },
        indexes,
    ))
}

/// Stages that read a collection: their examined counts belong in the total.
const READING_STAGES: [&str; 2] = ["$lookup", "$graphLookup"];

/// Walk an explain's `stages` array (recursing into `$unionWith`
/// sub-pipelines and `$facet` branches), pushing one entry per stage.
fn walk_stages(
    stages: &[Bson],
    prefix: &str,
    out: &mut Vec<StageFigures>,
    not_reported: &mut Vec<String>,
    indexes: &mut Vec<String>,
    depth: usize,
) -> Result<(), Message> {
    if depth > 32 {
        return Err(Message::new("explain nests sub-pipelines too deeply"));
    }
    for s in stages.iter().filter_map(Bson::as_document) {
        let Some(name) = s.keys().find(|k| k.starts_with('$')).cloned() else {
            continue;
        };
        let label = format!("{prefix}{name}");
        if name == "$cursor" {
            let query = s
                .get_document("$cursor")
                .map_err(|_| Message::new("$cursor stage is not a document"))?;
            let (mut f, ix) = query_figures(label, query)?;
            // Some servers put nReturned/time beside $cursor rather than in it.
            f.n_returned = f.n_returned.or_else(|| opt_int(s, "nReturned"));
            f.millis = f
                .millis
                .or_else(|| num(s.get("executionTimeMillisEstimate")));
            for i in ix {
                if !indexes.contains(&i) {
                    indexes.push(i);
                }
            }
            out.push(f);
            continue;
        }
        let mut f = StageFigures {
            stage: label.clone(),
            plan: None,
            n_returned: opt_int(s, "nReturned"),
            keys_examined: None,
            docs_examined: None,
            bytes_examined: None,
            millis: num(s.get("executionTimeMillisEstimate")),
        };
        if READING_STAGES.contains(&name.as_str()) {
            f.keys_examined = opt_int(s, "totalKeysExamined");
            f.docs_examined = opt_int(s, "totalDocsExamined");
            f.bytes_examined = opt_int(s, "totalDocBytesExamined");
            if f.keys_examined.is_none() && f.docs_examined.is_none() {
                not_reported.push(label.clone());
            }
            if let Ok(used) = s.get_array("indexesUsed") {
                for i in used.iter().filter_map(Bson::as_str) {
                    if !indexes.iter().any(|x| x == i) {
                        indexes.push(i.to_string());
                    }
                }
            }
            out.push(f);
        } else if name == "$unionWith" {
            out.push(f);
            let spec = s.get_document("$unionWith").ok();
            let coll = spec.and_then(|d| d.get_str("coll").ok()).unwrap_or("");
            let sub_prefix = format!("{label}({coll})/");
            match spec.and_then(|d| d.get("pipeline")) {
                Some(Bson::Array(sub)) if sub.iter().any(has_figures) => {
                    walk_stages(sub, &sub_prefix, out, not_reported, indexes, depth + 1)?
                }
                Some(Bson::Document(q)) if q.contains_key("queryPlanner") => {
                    let (f, _) = query_figures(format!("{sub_prefix}find"), q)?;
                    out.push(f);
                }
                _ => not_reported.push(label),
            }
        } else if name == "$facet" {
            out.push(f);
            let branches = s.get_document("$facet").cloned().unwrap_or_default();
            for (branch, sub) in &branches {
                let sub_prefix = format!("{label}.{branch}/");
                match sub {
                    Bson::Array(sub) if sub.iter().any(has_figures) => {
                        walk_stages(sub, &sub_prefix, out, not_reported, indexes, depth + 1)?
                    }
                    _ => {
                        // A branch that only transforms its input reads
                        // nothing; one that joins must report its figures.
                        if branch_reads(sub) {
                            not_reported.push(format!("{label}.{branch}"));
                        }
                    }
                }
            }
        } else {
            out.push(f);
        }
    }
    Ok(())
}

/// Whether a stage entry carries execution figures (an explained stage
/// rather than the stage as written).
fn has_figures(b: &Bson) -> bool {
    b.as_document().is_some_and(|d| {
        d.contains_key("nReturned")
            || d.contains_key("$cursor")
            || d.contains_key("totalDocsExamined")
    })
}

/// Whether a pipeline as written contains a stage that reads a collection.
fn branch_reads(b: &Bson) -> bool {
    match b {
        Bson::Array(items) => items.iter().any(branch_reads),
        Bson::Document(d) => d.iter().any(|(k, v)| {
            ["$lookup", "$graphLookup", "$unionWith"].contains(&k.as_str()) || branch_reads(v)
        }),
        _ => false,
    }
}

/// Read the metrics out of an `explain("executionStats")` reply, plus the
/// server's execution time in milliseconds when it reports one for the
/// whole read (a find; a pipeline's time is the caller's wall clock).
pub fn parse_explain(explain: &Document) -> Result<(ReadMetrics, Option<f64>), Message> {
    let mut pipeline = Vec::new();
    let mut not_reported = Vec::new();
    let mut indexes = Vec::new();
    let (chain, n_returned, millis) = match explain.get_array("stages") {
        Ok(stages) => {
            let first_is_cursor = stages
                .first()
                .and_then(Bson::as_document)
                .is_some_and(|s| s.contains_key("$cursor"));
            if !first_is_cursor {
                return Err(Message::new("aggregate explain without a $cursor stage"));
            }
            walk_stages(
                stages,
                "",
                &mut pipeline,
                &mut not_reported,
                &mut indexes,
                0,
            )?;
            let chain = pipeline
                .first()
                .and_then(|f| f.plan.clone())
                .unwrap_or_default();
            // The last top-level stage's nReturned is what the pipeline returned.
            let last = stages
                .last()
                .and_then(Bson::as_document)
                .and_then(|s| {
                    if s.contains_key("$cursor") {
                        s.get_document("$cursor")
                            .ok()
                            .and_then(|c| c.get_document("executionStats").ok())
                            .and_then(|e| opt_int(e, "nReturned"))
                            .or_else(|| opt_int(s, "nReturned"))
                    } else {
                        opt_int(s, "nReturned")
                    }
                })
                .ok_or_else(|| {
                    Message::new("the last stage of the explained pipeline reports no nReturned")
                })?;
            (chain, last, None)
        }
        Err(_) => {
            let (f, ix) = query_figures("find".into(), explain)?;
            indexes = ix;
            let chain = f.plan.clone().unwrap_or_default();
            let n = f.n_returned.unwrap_or(0);
            let millis = f.millis;
            pipeline.push(f);
            (chain, n, millis)
        }
    };
    let keys_examined: i64 = pipeline.iter().filter_map(|f| f.keys_examined).sum();
    let docs_examined: i64 = pipeline.iter().filter_map(|f| f.docs_examined).sum();
    Ok((
        ReadMetrics {
            stages: chain,
            index: indexes.join(","),
            n_returned,
            keys_examined,
            docs_examined,
            bytes_examined: bytes_of(&pipeline),
            ratio: keys_examined.max(docs_examined) as f64 / n_returned.max(1) as f64,
            bytes_returned: None,
            pipeline,
            not_reported,
            explain: None,
        },
        millis,
    ))
}

/// Bytes examined over every stage that examined documents, or `None`
/// when one of them does not say (a server other than the embedded
/// engine).
fn bytes_of(pipeline: &[StageFigures]) -> Option<i64> {
    pipeline
        .iter()
        .filter(|f| f.docs_examined.is_some() || f.bytes_examined.is_some())
        .map(|f| f.bytes_examined)
        .sum()
}

/// The figures of a read from the database profiler's entries for it (its
/// `find` or `aggregate` and every `getMore`), for a read whose explain
/// mongod cannot send (a reply over 16 MiB, error 10334): the counts
/// summed over the entries, the plan as the first entry's `planSummary`
/// (`IXSCAN { _id: 1 }`), no per-stage tree. `None` when no entry is a
/// read.
pub fn read_from_profile(entries: &[Document]) -> Option<ReadMetrics> {
    let reads: Vec<&Document> = entries
        .iter()
        .filter(|e| matches!(e.get_str("op"), Ok("query" | "getmore" | "command")))
        .filter(|e| e.contains_key("docsExamined") || e.contains_key("keysExamined"))
        .collect();
    let first = reads.first()?;
    let sum = |k: &str| reads.iter().filter_map(|e| opt_int(e, k)).sum::<i64>();
    let (keys_examined, docs_examined, n_returned) =
        (sum("keysExamined"), sum("docsExamined"), sum("nreturned"));
    let plan = first.get_str("planSummary").unwrap_or("?").to_string();
    let index = plan
        .split(", ")
        .filter_map(|p| p.strip_prefix("IXSCAN "))
        .collect::<Vec<_>>()
        .join(",");
    Some(ReadMetrics {
        stages: plan.clone(),
        index,
        n_returned,
        keys_examined,
        docs_examined,
        bytes_examined: None,
        ratio: keys_examined.max(docs_examined) as f64 / n_returned.max(1) as f64,
        bytes_returned: None,
        pipeline: vec![StageFigures {
            // One figure for the whole read: the profiler has no stages.
            stage: if first.get_str("op") == Ok("command") {
                "aggregate".into()
            } else {
                "find".into()
            },
            plan: Some(plan),
            n_returned: Some(n_returned),
            keys_examined: Some(keys_examined),
            docs_examined: Some(docs_examined),
            bytes_examined: None,
            // Like the counts, over the command and its getMores.
            millis: Some(reads.iter().filter_map(|e| num(e.get("millis"))).sum()),
        }],
        not_reported: Vec::new(),
        explain: None,
    })
}

fn stage_chain(plan: &Document, indexes: &mut Vec<String>) -> String {
    let stage = plan.get_str("stage").unwrap_or("?").to_string();
    if let Ok(name) = plan.get_str("indexName")
        && !indexes.iter().any(|i| i == name)
    {
        indexes.push(name.to_string());
    }
    if let Ok(input) = plan.get_document("inputStage") {
        return format!("{stage}<-{}", stage_chain(input, indexes));
    }
    if let Ok(inputs) = plan.get_array("inputStages") {
        let inner: Vec<String> = inputs
            .iter()
            .filter_map(Bson::as_document)
            .map(|d| stage_chain(d, indexes))
            .collect();
        return format!("{stage}<-({})", inner.join(", "));
    }
    stage
}

/// The first `n` documents of `db.coll` in natural order, as a sample for a
/// learner to look at.
pub async fn sample_documents(
    client: &Client,
    db: &str,
    coll: &str,
    n: i64,
) -> Result<Vec<Document>, String> {
    client
        .database(db)
        .collection::<Document>(coll)
        .find(doc! {})
        .limit(n)
        .await
        .map_err(|e| e.to_string())?
        .try_collect()
        .await
        .map_err(|e| e.to_string())
}

/// Index keys inserted and deleted by the writes `system.profile` recorded
/// (`keysInserted`/`keysDeleted`, as mongod's profiler writes them), or
/// `None` when no entry reports them.
pub fn profile_keys(entries: &[Document]) -> (Option<i64>, Option<i64>) {
    let sum = |k: &str| {
        let vals: Vec<i64> = entries.iter().filter_map(|e| opt_int(e, k)).collect();
        (!vals.is_empty()).then(|| vals.iter().sum())
    };
    let ins = sum("keysInserted");
    let del = sum("keysDeleted");
    // An entry that reports one of them reports the other as zero.
    match (ins, del) {
        (None, None) => (None, None),
        (i, d) => (Some(i.unwrap_or(0)), Some(d.unwrap_or(0))),
    }
}

/// Two reads' figures as one: counts add up, the plans are listed in
/// order, and the last read's `nReturned` is what the whole returned.
pub fn sum_reads(acc: Option<ReadMetrics>, m: ReadMetrics) -> ReadMetrics {
    match acc {
        None => m,
        Some(a) => {
            let keys = a.keys_examined + m.keys_examined;
            let docs = a.docs_examined + m.docs_examined;
            let index = [a.index, m.index]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(",");
            ReadMetrics {
                stages: format!("{} ; {}", a.stages, m.stages),
                index,
                n_returned: m.n_returned,
                keys_examined: keys,
                docs_examined: docs,
                bytes_examined: a.bytes_examined.zip(m.bytes_examined).map(|(x, y)| x + y),
                ratio: keys.max(docs) as f64 / m.n_returned.max(1) as f64,
                bytes_returned: a.bytes_returned.zip(m.bytes_returned).map(|(x, y)| x + y),
                pipeline: a.pipeline.into_iter().chain(m.pipeline).collect(),
                not_reported: a.not_reported.into_iter().chain(m.not_reported).collect(),
                // Summed over several explains: no one of them says it all.
                explain: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_from_its_profiler_entries() {
        // A find and its getMore, then the profiler's own unrelated write.
        let entries = vec![
            doc! {"op": "query", "ns": "d.logs", "keysExamined": 300, "docsExamined": 120,
            "nreturned": 101, "planSummary": "IXSCAN { _id: 1 }", "millis": 4},
            doc! {"op": "getmore", "ns": "d.logs", "keysExamined": 0, "docsExamined": 0,
            "nreturned": 19, "millis": 2},
            doc! {"op": "insert", "ns": "d.other", "keysInserted": 1, "millis": 0},
        ];
        let m = read_from_profile(&entries).unwrap();
        assert_eq!(m.n_returned, 120);
        assert_eq!(m.keys_examined, 300);
        assert_eq!(m.docs_examined, 120);
        assert_eq!(m.ratio, 2.5);
        assert_eq!(m.stages, "IXSCAN { _id: 1 }");
        assert_eq!(m.index, "{ _id: 1 }");
        assert_eq!(m.pipeline.len(), 1);
        assert_eq!(m.pipeline[0].stage, "find");
        assert_eq!(m.pipeline[0].millis, Some(6.0));
        assert!(m.explain.is_none());
        // No read among the entries: nothing to report.
        assert!(read_from_profile(&entries[2..]).is_none());
    }

    #[test]
    fn classic_find_explain() {
        let e = doc! {
            "queryPlanner": {"winningPlan": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "a_1"}}},
            "executionStats": {"nReturned": 5, "totalKeysExamined": 5, "totalDocsExamined": 5, "executionTimeMillis": 1},
        };
        let (m, ms) = parse_explain(&e).unwrap();
        assert_eq!(m.stages, "FETCH<-IXSCAN");
        assert_eq!(m.index, "a_1");
        assert_eq!(m.ratio, 1.0);
        assert_eq!(ms, Some(1.0));
    }

    #[test]
    fn sbe_and_aggregate_explain() {
        let e = doc! {
            "stages": [
                {"$cursor": {
                    "queryPlanner": {"winningPlan": {"queryPlan": {"stage": "COLLSCAN"}}},
                    "executionStats": {"nReturned": 100, "totalKeysExamined": 0, "totalDocsExamined": 100},
                }},
                {"$group": {}, "nReturned": 3},
            ]
        };
        let (m, _) = parse_explain(&e).unwrap();
        assert_eq!(m.stages, "COLLSCAN");
        assert_eq!(m.n_returned, 3);
        assert!((m.ratio - 100.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn pipeline_figures_sum_every_reading_stage() {
        // mongod 7.0's shape: $cursor first, then $lookup with its totals, a
        // $unionWith carrying its sub-pipeline's explain, a $facet branch.
        let e = doc! {
            "stages": [
                {"$cursor": {
                    "queryPlanner": {"winningPlan": {"stage": "IDHACK"}},
                    "executionStats": {"nReturned": 1, "totalKeysExamined": 1, "totalDocsExamined": 1, "executionTimeMillis": 0},
                }, "nReturned": 1, "executionTimeMillisEstimate": 0},
                {"$lookup": {"from": "phones"}, "nReturned": 1, "executionTimeMillisEstimate": 3,
                 "totalDocsExamined": 500, "totalKeysExamined": 0, "collectionScans": 1, "indexesUsed": []},
                {"$unionWith": {"coll": "archive", "pipeline": [
                    {"$cursor": {
                        "queryPlanner": {"winningPlan": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "a_1"}}},
                        "executionStats": {"nReturned": 4, "totalKeysExamined": 4, "totalDocsExamined": 4},
                    }}
                ]}, "nReturned": 5},
                {"$facet": {"byKind": [{"$lookup": {"from": "x"}, "nReturned": 5, "totalDocsExamined": 10, "totalKeysExamined": 2}]}, "nReturned": 1},
            ]
        };
        let (m, _) = parse_explain(&e).unwrap();
        assert_eq!(m.stages, "IDHACK");
        assert_eq!(m.n_returned, 1);
        assert_eq!(m.docs_examined, 1 + 500 + 4 + 10);
        assert_eq!(m.keys_examined, 1 + 4 + 2);
        assert_eq!(m.index, "a_1");
        let names: Vec<&str> = m.pipeline.iter().map(|f| f.stage.as_str()).collect();
        assert_eq!(
            names,
            [
                "$cursor",
                "$lookup",
                "$unionWith",
                "$unionWith(archive)/$cursor",
                "$facet",
                "$facet.byKind/$lookup"
            ]
        );
        assert!(m.not_reported.is_empty());
    }

    #[test]
    fn a_join_without_figures_is_not_reported_not_zero() {
        let e = doc! {
            "stages": [
                {"$cursor": {
                    "queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}},
                    "executionStats": {"nReturned": 2, "totalKeysExamined": 0, "totalDocsExamined": 2},
                }},
                {"$graphLookup": {"from": "t"}, "nReturned": 2},
                {"$unionWith": {"coll": "u", "pipeline": [{"$match": {}}]}, "nReturned": 3},
            ]
        };
        let (m, _) = parse_explain(&e).unwrap();
        assert_eq!(m.docs_examined, 2);
        assert_eq!(m.not_reported, ["$graphLookup", "$unionWith"]);
    }

    #[test]
    fn profile_keys_are_summed_or_not_reported() {
        assert_eq!(profile_keys(&[]), (None, None));
        assert_eq!(
            profile_keys(&[
                doc! {"op": "insert", "keysInserted": 3},
                doc! {"op": "update", "keysInserted": 2, "keysDeleted": 2}
            ]),
            (Some(5), Some(2))
        );
    }
}
