//! Deterministic course and report data for snapshot tests, the rendering
//! bench and the fixture runner: no live run, so frames never change
//! between runs. Shaped like the bucket lesson (lesson 10 of the course).

use std::collections::BTreeMap;

use bson::doc;

use super::model::{
    ClaimResult, CollectionStats, Course, Experiment, IndexSize, Lesson, OpResult, Operation,
    Report, RunProgress, Variant, VariantReport,
};
use super::{ExperimentRunner, RunContext};

const BUCKET_PROSE: &str = r#"# The bucket pattern

Sensors report a reading every minute. Stored one per document, a day of one
sensor is **1,440 documents**; bucketed, it is a handful.

## The experiment

The naive design keeps {{ naive.coll.readings.count }} readings; the bucket
design keeps {{ bucket.coll.buckets.count }} buckets, *{{ naive.coll.readings.count / bucket.coll.buckets.count }} times fewer*.

| design | documents | index |
|---|---|---|
| naive | one per reading | `{sensor_id: 1, ts: 1}` |
| bucket | one per sensor-hour | `{sensor_id: 1, start: 1}` |

```js
db.buckets.find({sensor_id: 3, start: {$gte: ISODate('2026-01-02')}})
```

## Why it works

- fewer documents to fetch
- fewer index entries: see the [manual](https://www.mongodb.com/docs/manual/)
  1. one key per bucket

> Measure counts and sizes, not milliseconds.
"#;

fn op(id: &str, title: &str, kind: &str, weight: f64, naive: &str, bucket: &str) -> Operation {
    let mut run = BTreeMap::new();
    run.insert("naive".to_string(), naive.to_string());
    run.insert("bucket".to_string(), bucket.to_string());
    Operation {
        id: id.into(),
        title: title.into(),
        kind: kind.into(),
        weight,
        run,
    }
}

/// The bucket lesson.
pub fn bucket_lesson() -> Lesson {
    Lesson {
        id: "bucket".into(),
        title: "The bucket pattern".into(),
        summary: "Group many small time-series documents into one per sensor-hour.".into(),
        prose: BUCKET_PROSE.into(),
        experiments: vec![Experiment {
            id: "readings".into(),
            title: "One document per reading, or buckets of 200".into(),
            dataset: "sensors".into(),
            variants: vec![
                Variant {
                    id: "naive".into(),
                    title: "One document per reading".into(),
                },
                Variant {
                    id: "bucket".into(),
                    title: "Buckets of at most 200 readings".into(),
                },
            ],
            operations: vec![
                op(
                    "one_day",
                    "A day of readings for one sensor",
                    "read",
                    90.0,
                    "db.readings.find({sensor_id: 3, ts: {$gte: ISODate('2026-01-02'), $lt: ISODate('2026-01-03')}})",
                    "db.buckets.find({sensor_id: 3, start: {$gte: ISODate('2026-01-02'), $lt: ISODate('2026-01-03')}})",
                ),
                op(
                    "add_reading",
                    "Record one reading",
                    "write",
                    10.0,
                    "db.readings.insertOne({sensor_id: 3, ts: new Date(), value: 21.5})",
                    "db.buckets.updateOne({sensor_id: 3, count: {$lt: 200}}, {$push: {readings: {ts: new Date(), value: 21.5}}, $inc: {count: 1}}, {upsert: true})",
                ),
            ],
            claims: vec![
                "Buckets hold the same readings in at least 100 times fewer documents.".into(),
            ],
        }],
    }
}

/// Twelve lessons; the bucket lesson is number 10, as in the course.
pub fn course() -> Course {
    let titles = [
        "Thinking in documents",
        "Embed or reference",
        "One-to-few: embed",
        "One-to-many: references",
        "One-to-squillions",
        "Many-to-many",
        "Extended reference",
        "Subset",
        "Computed",
    ];
    let mut lessons: Vec<Lesson> = titles
        .iter()
        .enumerate()
        .map(|(i, t)| Lesson {
            id: format!("lesson{}", i + 1),
            title: (*t).into(),
            summary: format!("Summary of {t}."),
            prose: format!("# {t}\n\nIntro.\n\n## One\n\nText.\n\n## Two\n\nMore text.\n"),
            experiments: Vec::new(),
        })
        .collect();
    lessons.push(bucket_lesson());
    lessons.push(Lesson {
        id: "attribute".into(),
        title: "Attribute".into(),
        ..Lesson::default()
    });
    lessons.push(Lesson {
        id: "polymorphic".into(),
        title: "Polymorphic".into(),
        ..Lesson::default()
    });
    Course {
        title: "MongoDB schema design, by measurement".into(),
        lessons,
    }
}

fn classic_explain() -> bson::Document {
    doc! {
        "explainVersion": "1",
        "queryPlanner": {"winningPlan": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "sensor_id_1_ts_1", "keyPattern": {"sensor_id": 1, "ts": 1}}}},
        "executionStats": {
            "nReturned": 1440, "executionTimeMillis": 12, "totalKeysExamined": 1440, "totalDocsExamined": 1440,
            "executionStages": {"stage": "FETCH", "nReturned": 1440, "executionTimeMillisEstimate": 9, "docsExamined": 1440,
                "inputStage": {"stage": "IXSCAN", "nReturned": 1440, "executionTimeMillisEstimate": 3, "keysExamined": 1440,
                    "indexName": "sensor_id_1_ts_1", "keyPattern": {"sensor_id": 1, "ts": 1}}}
        }
    }
}

fn sbe_explain() -> bson::Document {
    doc! {
        "explainVersion": "2",
        "queryPlanner": {"winningPlan": {"queryPlan": {"stage": "FETCH", "planNodeId": 2,
            "inputStage": {"stage": "IXSCAN", "planNodeId": 1, "indexName": "sensor_id_1_start_1", "keyPattern": {"sensor_id": 1, "start": 1}}},
            "slotBasedPlan": {"stages": "[2] nlj ..."}}},
        "executionStats": {
            "nReturned": 8, "executionTimeMillis": 0, "totalKeysExamined": 8, "totalDocsExamined": 8,
            "executionStages": {"stage": "nlj", "planNodeId": 2, "nReturned": 8, "executionTimeMillisEstimate": 0,
                "outerStage": {"stage": "ixseek", "planNodeId": 1, "nReturned": 8, "numReads": 8, "executionTimeMillisEstimate": 0},
                "innerStage": {"stage": "seek", "planNodeId": 2, "nReturned": 8, "numReads": 8, "executionTimeMillisEstimate": 0}}
        }
    }
}

/// A measured run of the bucket experiment.
pub fn bucket_report() -> Report {
    let idx = |name: &str, size: u64| IndexSize {
        name: name.into(),
        size,
        modelled: true,
    };
    Report {
        lesson: "bucket".into(),
        experiment: "readings".into(),
        scale: "default".into(),
        variants: vec![
            VariantReport {
                id: "naive".into(),
                collections: vec![CollectionStats {
                    name: "readings".into(),
                    count: 144_000,
                    size: 11_520_000,
                    avg_obj_size: 80.0,
                    max_obj_size: 80,
                    storage_size: 4_300_000,
                    storage_modelled: true,
                    indexes: vec![idx("_id_", 1_440_000), idx("sensor_id_1_ts_1", 2_100_000)],
                }],
                operations: vec![
                    OpResult {
                        id: "one_day".into(),
                        statement: String::new(),
                        stages: vec!["FETCH".into(), "IXSCAN".into()],
                        index: Some("sensor_id_1_ts_1".into()),
                        index_keys: Some("{sensor_id: 1, ts: 1}".into()),
                        n_returned: 1440,
                        keys_examined: 1440,
                        docs_examined: 1440,
                        millis: 12.0,
                        explain: Some(classic_explain()),
                        ..OpResult::default()
                    },
                    OpResult {
                        id: "add_reading".into(),
                        n: Some(1),
                        n_modified: Some(0),
                        millis: 1.0,
                        ..OpResult::default()
                    },
                ],
                samples: vec![(
                    "readings".into(),
                    vec![
                        doc! {"_id": 1, "sensor_id": 3, "ts": bson::DateTime::from_millis(1_767_312_000_000), "value": 21.5},
                    ],
                )],
                errors: Vec::new(),
                failed: false,
                recommended: false,
            },
            VariantReport {
                id: "bucket".into(),
                collections: vec![CollectionStats {
                    name: "buckets".into(),
                    count: 720,
                    size: 5_900_000,
                    avg_obj_size: 8194.0,
                    max_obj_size: 8300,
                    storage_size: 2_200_000,
                    storage_modelled: true,
                    indexes: vec![idx("_id_", 8_000), idx("sensor_id_1_start_1", 12_000)],
                }],
                operations: vec![
                    OpResult {
                        id: "one_day".into(),
                        statement: String::new(),
                        stages: vec!["FETCH".into(), "IXSCAN".into()],
                        index: Some("sensor_id_1_start_1".into()),
                        index_keys: Some("{sensor_id: 1, start: 1}".into()),
                        n_returned: 8,
                        keys_examined: 8,
                        docs_examined: 8,
                        millis: 0.0,
                        explain: Some(sbe_explain()),
                        ..OpResult::default()
                    },
                    OpResult {
                        id: "add_reading".into(),
                        n: Some(1),
                        n_modified: Some(1),
                        millis: 1.0,
                        ..OpResult::default()
                    },
                ],
                samples: vec![(
                    "buckets".into(),
                    vec![
                        doc! {"_id": 1, "sensor_id": 3, "start": bson::DateTime::from_millis(1_767_312_000_000), "count": 200,
                        "readings": [
                            {"ts": bson::DateTime::from_millis(1_767_312_000_000), "value": 21.5},
                            {"ts": bson::DateTime::from_millis(1_767_312_060_000), "value": 21.6},
                            {"ts": bson::DateTime::from_millis(1_767_312_120_000), "value": 21.4}
                        ]},
                    ],
                )],
                errors: Vec::new(),
                failed: false,
                recommended: false,
            },
        ],
        claims: vec![
            ClaimResult {
                text: "Buckets hold the same readings in at least 100 times fewer documents."
                    .into(),
                passed: true,
                reason: None,
            },
            ClaimResult {
                text: "The bucket read examines at most 10 documents.".into(),
                passed: false,
                reason: Some("bucket.op.one_day.docsExamined = 12, expected <= 10".into()),
            },
        ],
    }
}

/// Returns [`bucket_report`] after reporting a few progress steps; honours
/// cancellation between steps.
pub struct FixtureRunner;

impl ExperimentRunner for FixtureRunner {
    fn run(&self, ctx: RunContext<'_>) -> Result<Report, String> {
        for (i, step) in ["loading dataset", "running setup", "measuring"]
            .iter()
            .enumerate()
        {
            if ctx.cancel.is_cancelled() {
                return Err("cancelled".into());
            }
            (ctx.progress)(RunProgress {
                fraction: i as f64 / 3.0,
                step: (*step).into(),
            });
        }
        Ok(bucket_report())
    }
}
