//! Planning overhead: a query that five indexes could answer, over 100,000
//! documents, through the engine's API.
//!
//! - `planned`: `find` without a hint, so the multi-planner builds five
//!   candidate plans and races them in its trial before running the winner;
//! - `hinted`: the same `find` hinted to the winning index, so there is one
//!   plan and no trial.
//!
//! The difference between the two is the time spent choosing the plan; the
//! hinted time is the execution itself. Both return the same documents.
#![allow(clippy::unwrap_used)]

use bson::{Bson, Document, RawDocumentBuf, doc};
use criterion::{Criterion, criterion_group, criterion_main};
use schemalab_engine::{Engine, FindRequest};

const DOCS: i64 = 100_000;

fn setup() -> Engine {
    let e = Engine::new();
    let docs: Vec<RawDocumentBuf> = (0..DOCS)
        .map(|i| {
            RawDocumentBuf::from_document(&doc! {
                "_id": i,
                // Five fields of different selectivity.
                "a": i % 10,
                "b": i % 100,
                "c": i % 1_000,
                "d": i % 5_000,
                "e": i % 20_000,
            })
            .unwrap()
        })
        .collect();
    e.insert("bench", "plans", docs, true).unwrap();
    let specs: Vec<Document> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|f| doc! {"key": {*f: 1}})
        .collect();
    e.create_indexes("bench", "plans", &specs).unwrap();
    e
}

fn query(hint: Option<&str>) -> FindRequest {
    FindRequest {
        filter: doc! {"a": 7, "b": 17, "c": 117, "d": 117, "e": {"$gte": 0}},
        hint: hint.map(|h| Bson::String(h.to_string())),
        ..Default::default()
    }
}

fn planning(c: &mut Criterion) {
    let e = setup();
    let winner = {
        let explained = schemalab_wire::cmd::explain::explain_document(
            &e,
            "bench",
            &doc! {"find": "plans", "filter": query(None).filter},
            "queryPlanner",
        )
        .unwrap();
        let plan = explained
            .get_document("queryPlanner")
            .unwrap()
            .get_document("winningPlan")
            .unwrap();
        let ixscan = plan.get_document("inputStage").unwrap_or(plan);
        ixscan.get_str("indexName").unwrap().to_string()
    };
    let planned = e.find("bench", "plans", &query(None)).unwrap();
    let hinted = e.find("bench", "plans", &query(Some(&winner))).unwrap();
    assert_eq!(
        planned, hinted,
        "hinting the winner must not change results"
    );
    println!(
        "planner bench: 5 candidate indexes over {DOCS} documents; winner {winner}; {} documents returned",
        planned.len()
    );
    let mut group = c.benchmark_group("five_candidates");
    group.bench_function("planned", |b| {
        b.iter(|| e.find("bench", "plans", &query(None)).unwrap())
    });
    group.bench_function("hinted", |b| {
        b.iter(|| e.find("bench", "plans", &query(Some(&winner))).unwrap())
    });
    group.finish();
}

criterion_group!(benches, planning);
criterion_main!(benches);
