//! Measurements: what the server says about a database after a variant ran
//! (collection counts and sizes, exact BSON document sizes, index sizes,
//! whether the sizes are modelled) and what an `explain("executionStats")`
//! reply says about a read (stage chain, index, examined counts, time).
//! Explain parsing accepts the classic and the SBE shapes, and aggregate
//! explains with a `$cursor` first stage.

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;
use mongodb::Client;
use serde::{Deserialize, Serialize};

/// Which server the figures come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineInfo {
    /// "schemalab embedded engine (sizes modelled)" or "MongoDB <version>".
    pub name: String,
    /// Whether storage and index sizes are modelled rather than measured.
    pub modelled: bool,
}

/// Ask `buildInfo` which server this is.
pub async fn engine_info(client: &Client) -> Result<EngineInfo, String> {
    let info = client
        .database("admin")
        .run_command(doc! {"buildInfo": 1})
        .await
        .map_err(|e| e.to_string())?;
    if info.contains_key("schemalab") {
        Ok(EngineInfo {
            name: "schemalab embedded engine (sizes modelled)".into(),
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
    let mut out = Vec::new();
    for name in names {
        out.push(measure_collection(client, db, &name).await?);
    }
    Ok(out)
}

/// Measure one collection: `$collStats` storage stats (falling back to the
/// `collStats` command) plus the exact largest document.
pub async fn measure_collection(
    client: &Client,
    db: &str,
    coll: &str,
) -> Result<CollStats, String> {
    let database = client.database(db);
    let stats = match database
        .collection::<Document>(coll)
        .aggregate(vec![doc! {"$collStats": {"storageStats": {}}}])
        .await
    {
        Ok(cursor) => {
            let docs: Vec<Document> = cursor.try_collect().await.map_err(|e| e.to_string())?;
            docs.first()
                .and_then(|d| d.get_document("storageStats").ok())
                .cloned()
                .unwrap_or_default()
        }
        Err(_) => database
            .run_command(doc! {"collStats": coll})
            .await
            .map_err(|e| e.to_string())?,
    };
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
        max_obj_size: max_obj_size(client, db, coll).await?,
        storage_size: int(&stats, "storageSize"),
        total_index_size: int(&stats, "totalIndexSize"),
        nindexes: int(&stats, "nindexes"),
        indexes,
        modelled,
    })
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

/// What an explain says about a read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadMetrics {
    /// The winning plan, root first: `FETCH<-IXSCAN`.
    pub stages: String,
    /// The index (or indexes, comma-separated) the plan scans, or "".
    pub index: String,
    pub n_returned: i64,
    pub keys_examined: i64,
    pub docs_examined: i64,
    /// `max(keysExamined, docsExamined) / max(nReturned, 1)`.
    pub ratio: f64,
}

/// What a write reply says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteMetrics {
    pub n: i64,
    pub n_modified: i64,
    pub n_upserted: i64,
}

/// Read the metrics out of an `explain("executionStats")` reply, plus the
/// server's execution time in milliseconds when it reports one.
pub fn parse_explain(explain: &Document) -> Result<(ReadMetrics, Option<f64>), String> {
    // Aggregate explains wrap the query in a `$cursor` first stage; the last
    // stage's nReturned is what the pipeline returned.
    let (query, pipeline_returned) = match explain.get_array("stages") {
        Ok(stages) => {
            let cursor = stages
                .first()
                .and_then(Bson::as_document)
                .and_then(|s| s.get_document("$cursor").ok())
                .ok_or("aggregate explain without a $cursor stage")?;
            let last = stages
                .last()
                .and_then(Bson::as_document)
                .and_then(|s| num(s.get("nReturned")));
            (cursor, if stages.len() > 1 { last } else { None })
        }
        Err(_) => (explain, None),
    };
    let planner = query
        .get_document("queryPlanner")
        .map_err(|_| "explain reply without queryPlanner".to_string())?;
    let winning = planner
        .get_document("winningPlan")
        .map_err(|_| "explain reply without queryPlanner.winningPlan".to_string())?;
    // SBE nests the classic-looking tree under queryPlan.
    let plan = winning.get_document("queryPlan").unwrap_or(winning);
    let mut indexes = Vec::new();
    let stages = stage_chain(plan, &mut indexes);
    let exec = query
        .get_document("executionStats")
        .map_err(|_| "explain reply without executionStats (verbosity too low?)".to_string())?;
    let n_returned = pipeline_returned.map_or_else(|| int(exec, "nReturned"), |n| n as i64);
    let keys_examined = int(exec, "totalKeysExamined");
    let docs_examined = int(exec, "totalDocsExamined");
    let millis = num(exec.get("executionTimeMillis"));
    Ok((
        ReadMetrics {
            stages,
            index: indexes.join(","),
            n_returned,
            keys_examined,
            docs_examined,
            ratio: keys_examined.max(docs_examined) as f64 / n_returned.max(1) as f64,
        },
        millis,
    ))
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

/// The write metrics from a mongosh-style write result (`insertOne`,
/// `updateMany`, `deleteOne`, `bulkWrite` …).
pub fn parse_write_result(r: &Document) -> WriteMetrics {
    let has = |k: &str| r.contains_key(k);
    let upserted = int(r, "upsertedCount");
    let n = if has("insertedCount") {
        int(r, "insertedCount") + int(r, "matchedCount") + upserted + int(r, "deletedCount")
    } else if let Ok(ids) = r.get_document("insertedIds") {
        ids.len() as i64
    } else if has("matchedCount") {
        int(r, "matchedCount") + upserted
    } else if has("deletedCount") {
        int(r, "deletedCount")
    } else if has("insertedId") {
        1
    } else {
        int(r, "n")
    };
    WriteMetrics {
        n,
        n_modified: int(r, "modifiedCount"),
        n_upserted: upserted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn write_results() {
        let w = parse_write_result(
            &doc! {"acknowledged": true, "insertedId": Bson::Null, "matchedCount": 2, "modifiedCount": 1, "upsertedCount": 0},
        );
        assert_eq!((w.n, w.n_modified, w.n_upserted), (2, 1, 0));
        let w = parse_write_result(&doc! {"acknowledged": true, "insertedIds": {"0": 1, "1": 2}});
        assert_eq!(w.n, 2);
        let w = parse_write_result(&doc! {"acknowledged": true, "deletedCount": 4});
        assert_eq!(w.n, 4);
    }
}
