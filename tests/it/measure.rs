//! The one measurement path (`schemalab::measure::Meter`), end to end on
//! the embedded engine: a read is explained as the commands it sent,
//! whatever the statement's shape; a write without counts in its reply is
//! measured by its effect; times carry their samples.

use schemalab::connect::Database;
use schemalab::dialect::{Session, WritePolicy, parse_program};
use schemalab::measure::{Measured, Meter, OpError, OpKind, SAMPLES, SHELL_ERROR};

const DB: &str = "schemalab_measure_test";

/// Seed `a` (100 documents, `k` 0..99 indexed) and `b` (`k` 0..9, indexed).
async fn seed(client: &mongodb::Client) {
    let a = (0..100).map(|i| bson::doc! {"k": i, "t": 100 - i});
    let b = (0..10).map(|i| bson::doc! {"k": i});
    for (name, docs) in [("a", a.collect::<Vec<_>>()), ("b", b.collect())] {
        let c = client.database(DB).collection::<bson::Document>(name);
        c.drop().await.unwrap();
        c.insert_many(docs).await.unwrap();
        c.create_index(
            mongodb::IndexModel::builder()
                .keys(bson::doc! {"k": 1})
                .build(),
        )
        .await
        .unwrap();
    }
}

/// Seed (see [`seed`]), then measure `src` as `kind` with `samples` timed
/// runs.
fn measure(src: &str, kind: OpKind, samples: usize) -> Result<Measured, OpError> {
    let database = Database::open(None).unwrap();
    let client = database.client().clone();
    let out = database.block_on(async {
        let mut session = Session::connect(&client, DB)
            .unwrap()
            .with_policy(WritePolicy::Only(DB.into()));
        seed(&client).await;
        let program = parse_program(src).unwrap();
        let mut meter = Meter::new(&client, DB).with_samples(samples);
        meter.run(&mut session, &program, src, kind).await
    });
    database.close();
    out
}

/// Seed, then measure `src` as a write run `runs` times, `v` bound to the
/// run's number (0, 1, ...).
fn measure_series(src: &str, runs: u32) -> Result<Measured, OpError> {
    let database = Database::open(None).unwrap();
    let client = database.client().clone();
    let out = database.block_on(async {
        let mut session = Session::connect(&client, DB)
            .unwrap()
            .with_policy(WritePolicy::Only(DB.into()));
        seed(&client).await;
        let program = parse_program(src).unwrap();
        let mut meter = Meter::new(&client, DB);
        meter
            .write_series(&mut session, &program, src, runs, |s, run| {
                s.bind("v", bson::Bson::Int32(run as i32));
            })
            .await
    });
    database.close();
    out
}

#[test]
fn a_materialised_and_indexed_read_is_explained_as_the_find_it_sent() {
    let m = measure(
        "db.a.find({k: {$lt: 10}}).sort({t: -1}).toArray()[0]",
        OpKind::Read,
        0,
    )
    .unwrap();
    let read = m.read.unwrap();
    // The whole find, not the one element the statement kept.
    assert_eq!(read.n_returned, 10);
    assert_eq!(read.keys_examined, 10);
    assert_eq!(read.docs_examined, 10);
    assert!(read.stages.contains("IXSCAN"), "{}", read.stages);
    assert!(read.explain.is_some());
    // Ten documents of 36 bytes ({_id: ObjectId, k: int, t: int}) read.
    assert_eq!(read.bytes_examined, Some(360));
    // The answer is the statement's own value: the first of the ten by t
    // descending (t = 100 - k).
    let value = m.value.unwrap();
    let doc = value.as_document().unwrap();
    assert_eq!(doc.get_i32("k").unwrap(), 0);
    // One untimed run, one time.
    assert_eq!(m.timing.unwrap().samples.len(), 1);
}

#[test]
fn every_read_a_statement_sends_adds_up() {
    let src = "const ks = db.b.distinct('k', {k: {$lt: 3}})\ndb.a.find({k: {$in: ks}})";
    let m = measure(src, OpKind::Read, 0).unwrap();
    let read = m.read.unwrap();
    // distinct: 3 keys on b; find: 3 keys + 3 documents on a.
    assert_eq!(read.keys_examined, 6);
    assert_eq!(read.docs_examined, 3);
    assert_eq!(read.n_returned, 3);
    assert!(read.stages.contains(" ; "), "two plans: {}", read.stages);
    // Summed figures come from two explains: no one raw explain.
    assert!(read.explain.is_none());
    // Bytes of what the last statement returned: three documents.
    assert!(read.bytes_returned.unwrap() > 0);
}

#[test]
fn a_statement_that_sends_no_read_is_not_measured_as_one() {
    let e = measure("const x = 1 + 1\nx", OpKind::Read, 0).unwrap_err();
    assert_eq!(e.code_name, SHELL_ERROR);
    assert!(
        e.message.to_string().contains("sent no read"),
        "{}",
        e.message
    );
}

#[test]
fn a_write_without_counts_is_measured_by_what_it_changed() {
    let m = measure(
        "db.a.aggregate([{$match: {k: {$lt: 4}}}, {$project: {k: 1}}, {$merge: {into: 'b', on: '_id'}}])",
        OpKind::Write,
        0,
    )
    .unwrap();
    let w = m.write.unwrap();
    // Four documents merged into b, none of them there before.
    assert_eq!((w.n, w.n_modified), (4, 0));
    let m = measure(
        "db.a.findOneAndUpdate({k: 7}, {$set: {t: 0}})",
        OpKind::Write,
        0,
    )
    .unwrap();
    let w = m.write.unwrap();
    assert_eq!((w.n, w.n_modified), (1, 1));
}

#[test]
fn a_counted_write_takes_the_servers_counts_and_the_profilers_keys() {
    let m = measure(
        "db.a.updateMany({k: {$lt: 5}}, {$set: {k: -1}})\ndb.b.insertOne({k: 42})",
        OpKind::Write,
        0,
    )
    .unwrap();
    let w = m.write.unwrap();
    assert_eq!((w.n, w.n_modified, w.n_upserted), (6, 5, 0));
    // Five k keys moved (inserted and deleted), one _id and one k key new.
    assert_eq!(w.keys_inserted, Some(7));
    assert_eq!(w.keys_deleted, Some(5));
    let e = measure("db.a.find({k: 1})", OpKind::Write, 0).unwrap_err();
    assert!(
        e.message.to_string().contains("sent no write"),
        "{}",
        e.message
    );
}

#[test]
fn a_sampled_read_keeps_every_timed_run() {
    let m = measure("db.a.find({t: {$gt: 50}})", OpKind::Read, SAMPLES).unwrap();
    let t = m.timing.unwrap();
    assert!(t.samples.len() >= SAMPLES, "{:?}", t.samples);
    assert!(t.low <= t.median && t.median <= t.high);
    assert_eq!(m.read.unwrap().docs_examined, 100);
}

#[test]
fn reads_inside_a_loop_count_every_command_they_send() {
    // A loop of point reads cannot hide its cost behind a last cheap read
    // (issue 36, item 7): every command the statement sent is explained.
    let src = "for (const k of [10, 20, 30]) { db.a.findOne({k: k}) }\ndb.a.findOne({k: 1})";
    let m = measure(src, OpKind::Read, 0).unwrap();
    let read = m.read.unwrap();
    assert_eq!(read.keys_examined, 4);
    assert_eq!(read.docs_examined, 4);
    assert_eq!(read.bytes_examined, Some(4 * 36));
    let src = "for (const t of [1, 2, 3]) { db.a.findOne({t: t}) }\ndb.a.findOne({k: 1})";
    let read = measure(src, OpKind::Read, 0).unwrap().read.unwrap();
    // Three collection scans (t is not indexed; t = 100 - k, so t = 1 is
    // the 100th document in natural order, t = 2 the 99th, t = 3 the 98th)
    // and one point read.
    assert_eq!(read.docs_examined, 100 + 99 + 98 + 1);
}

#[test]
fn bytes_examined_count_every_document_a_pipeline_reads_joins_included() {
    let src =
        "db.b.aggregate([{$lookup: {from: 'a', localField: 'k', foreignField: 'k', as: 'm'}}])";
    let read = measure(src, OpKind::Read, 0).unwrap().read.unwrap();
    // Ten local documents of 29 bytes ({_id: ObjectId, k: int}) and, through
    // the index on a.k, one 36-byte foreign document for each.
    assert_eq!(read.docs_examined, 20);
    assert_eq!(read.bytes_examined, Some(10 * 29 + 10 * 36));
    // A collection scan reads every document in full.
    let read = measure("db.a.find({t: {$gt: 50}})", OpKind::Read, 0)
        .unwrap()
        .read
        .unwrap();
    assert_eq!(read.bytes_examined, Some(100 * 36));
}

#[test]
fn a_write_series_is_measured_as_one_operation_across_its_runs() {
    // Five runs, each inserting one document into b (an _id and a k key).
    let m = measure_series("db.b.insertOne({k: 100 + v})", 5).unwrap();
    let w = m.write.unwrap();
    assert_eq!((w.n, w.n_modified), (5, 0));
    assert_eq!(
        w.keys_inserted,
        Some(10),
        "every run's keys, not the first's"
    );
    assert_eq!(w.keys_deleted, Some(0));
    let cache = m.cache.unwrap();
    assert!(cache.cold && cache.modelled, "{cache:?}");
    // A long series is taken from the profiler in chunks (mongod caps
    // system.profile): every run's keys still count.
    let w = measure_series("db.b.insertOne({k: 100 + v})", 450)
        .unwrap()
        .write
        .unwrap();
    assert_eq!((w.n, w.keys_inserted), (450, Some(900)));
    // A run that fails ends the series with its error, placed in the text.
    let e = measure_series("if (v == 2) { db.b.insertOne({_id: 1}); db.b.insertOne({_id: 1}) }\ndb.b.insertOne({k: v})", 5)
        .unwrap_err();
    assert_eq!(e.code, Some(11000), "{}", e.message);
}
