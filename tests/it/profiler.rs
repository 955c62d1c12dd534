//! The database profiler through the official driver: `profile` (what
//! `db.setProfilingLevel` sends) and the `system.profile` entries, with the
//! index keys each write inserted and deleted.

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;
use mongodb::Client;
use schemalab_engine::Engine;
use schemalab_wire::serve;

fn n(d: &Document, key: &str) -> i64 {
    match d.get(key) {
        Some(Bson::Int32(v)) => i64::from(*v),
        Some(Bson::Int64(v)) => *v,
        other => panic!("{key}: {other:?} in {d}"),
    }
}

#[tokio::test]
async fn profiler_records_keys_inserted_and_deleted() {
    let server = serve("127.0.0.1:0".parse().unwrap(), Engine::new())
        .await
        .unwrap();
    let client = Client::with_uri_str(server.uri()).await.unwrap();
    let db = client.database("prof");
    let c = db.collection::<Document>("c");
    c.create_index(mongodb::IndexModel::builder().keys(doc! {"a": 1}).build())
        .await
        .unwrap();
    // Level 0 until asked: nothing recorded.
    c.insert_one(doc! {"_id": 0, "a": 0}).await.unwrap();
    let was = db.run_command(doc! {"profile": 2}).await.unwrap();
    assert_eq!(n(&was, "was"), 0);
    assert_eq!(n(&was, "slowms"), 100);

    c.insert_many([doc! {"_id": 1, "a": 1}, doc! {"_id": 2, "a": 2}])
        .await
        .unwrap();
    c.update_one(doc! {"_id": 1}, doc! {"$set": {"a": 5}})
        .await
        .unwrap();
    c.update_one(doc! {"_id": 2}, doc! {"$set": {"b": 1}})
        .await
        .unwrap();
    c.delete_one(doc! {"_id": 2}).await.unwrap();
    let found: Vec<Document> = c
        .find(doc! {"a": 5})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(found.len(), 1);

    let level = db.run_command(doc! {"profile": -1}).await.unwrap();
    assert_eq!(n(&level, "was"), 2);
    let entries: Vec<Document> = db
        .collection::<Document>("system.profile")
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let ops: Vec<&str> = entries.iter().map(|e| e.get_str("op").unwrap()).collect();
    assert_eq!(ops, ["insert", "update", "update", "remove", "query"]);
    for e in &entries {
        assert_eq!(e.get_str("ns").unwrap(), "prof.c");
        assert!(e.get_document("command").is_ok());
        assert!(e.get("millis").is_some() && e.get("ts").is_some());
    }
    // Two documents, two indexes: four keys.
    assert_eq!(n(&entries[0], "ninserted"), 2);
    assert_eq!(n(&entries[0], "keysInserted"), 4);
    assert_eq!(n(&entries[0], "keysDeleted"), 0);
    // Changing the indexed field swaps one key of a_1; `_id_` is unchanged.
    assert_eq!(n(&entries[1], "nModified"), 1);
    assert_eq!(n(&entries[1], "keysInserted"), 1);
    assert_eq!(n(&entries[1], "keysDeleted"), 1);
    assert_eq!(n(&entries[1], "keysExamined"), 1);
    assert_eq!(n(&entries[1], "docsExamined"), 1);
    assert_eq!(entries[1].get_str("planSummary").unwrap(), "IDHACK");
    // An unindexed field changes no key.
    assert_eq!(n(&entries[2], "keysInserted"), 0);
    assert_eq!(n(&entries[2], "keysDeleted"), 0);
    assert_eq!(n(&entries[3], "ndeleted"), 1);
    assert_eq!(n(&entries[3], "keysDeleted"), 2);
    // A read: what it examined and returned, and no write figures.
    let q = &entries[4];
    assert_eq!(n(q, "keysExamined"), 1);
    assert_eq!(n(q, "docsExamined"), 1);
    assert_eq!(n(q, "nreturned"), 1);
    assert_eq!(q.get_str("planSummary").unwrap(), "IXSCAN { a: 1 }");
    assert!(q.get("keysInserted").is_none() && q.get("keysDeleted").is_none());

    // Write replies carry no key figures: mongod reports them only in the
    // profiler and the slow-query log.
    let reply = db
        .run_command(doc! {"insert": "c", "documents": [{"_id": 9, "a": 9}]})
        .await
        .unwrap();
    assert!(!reply.contains_key("keysInserted"));
    db.run_command(doc! {"profile": 0}).await.unwrap();
    let count = db
        .collection::<Document>("system.profile")
        .count_documents(doc! {})
        .await
        .unwrap();
    // The insert above was recorded (level 2 then), the profile command not.
    assert_eq!(count, 6);
    server.shutdown();
}

/// Issue 9, item 6: explain and execution share one plan-and-run path, so
/// the explain of a `find` (with `let` variables read by `$expr`, and a
/// covered projection) reports exactly what running it recorded.
#[tokio::test]
async fn explain_reports_what_the_run_recorded() {
    let server = serve("127.0.0.1:0".parse().unwrap(), Engine::new())
        .await
        .unwrap();
    let client = Client::with_uri_str(server.uri()).await.unwrap();
    let db = client.database("same");
    let c = db.collection::<Document>("c");
    c.create_index(mongodb::IndexModel::builder().keys(doc! {"a": 1}).build())
        .await
        .unwrap();
    c.create_index(
        mongodb::IndexModel::builder()
            .keys(doc! {"a": 1, "b": 1})
            .build(),
    )
    .await
    .unwrap();
    let docs: Vec<Document> = (0..40)
        .map(|i| doc! {"_id": i, "a": i % 4, "b": i})
        .collect();
    c.insert_many(docs).await.unwrap();
    let finds = [
        doc! {"find": "c", "filter": {"a": 3, "$expr": {"$gt": ["$b", "$$min"]}}, "let": {"min": 20}},
        doc! {"find": "c", "filter": {"a": {"$gte": 2}}, "projection": {"a": 1, "b": 1, "_id": 0}},
        doc! {"find": "c", "filter": {"b": {"$lt": 7}}, "sort": {"a": -1}, "limit": 3},
    ];
    for find in &finds {
        db.run_command(doc! {"profile": 2}).await.unwrap();
        let reply = db.run_command(find.clone()).await.unwrap();
        db.run_command(doc! {"profile": 0}).await.unwrap();
        let returned = reply
            .get_document("cursor")
            .unwrap()
            .get_array("firstBatch")
            .unwrap()
            .len() as i64;
        let entry = db
            .collection::<Document>("system.profile")
            .find_one(doc! {"op": "query"})
            .sort(doc! {"ts": -1})
            .await
            .unwrap()
            .unwrap();
        db.collection::<Document>("system.profile")
            .drop()
            .await
            .unwrap();
        let explained = db
            .run_command(doc! {"explain": find.clone(), "verbosity": "executionStats"})
            .await
            .unwrap();
        let stats = explained.get_document("executionStats").unwrap();
        assert_eq!(n(stats, "nReturned"), returned, "{find}");
        assert_eq!(n(&entry, "nreturned"), returned, "{find}");
        assert_eq!(
            n(stats, "totalKeysExamined"),
            n(&entry, "keysExamined"),
            "{find}: {entry}"
        );
        assert_eq!(
            n(stats, "totalDocsExamined"),
            n(&entry, "docsExamined"),
            "{find}: {entry}"
        );
        let winning = explained
            .get_document("queryPlanner")
            .unwrap()
            .get_document("winningPlan")
            .unwrap();
        assert_eq!(
            entry.get_str("planSummary").unwrap(),
            summary(winning),
            "{find}"
        );
    }
    // The covered read examined no document, run or explained.
    let covered = db
        .run_command(doc! {"explain": finds[1].clone(), "verbosity": "executionStats"})
        .await
        .unwrap();
    assert_eq!(
        n(
            covered.get_document("executionStats").unwrap(),
            "totalDocsExamined"
        ),
        0
    );
    server.shutdown();
}

/// mongod's `planSummary` of a winning plan with one access path.
fn summary(plan: &Document) -> String {
    let mut stage = plan;
    while let Ok(input) = stage.get_document("inputStage") {
        stage = input;
    }
    match stage.get_str("stage").unwrap() {
        "IXSCAN" => {
            let key: Vec<String> = stage
                .get_document("keyPattern")
                .unwrap()
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            format!("IXSCAN {{ {} }}", key.join(", "))
        }
        other => other.to_string(),
    }
}
