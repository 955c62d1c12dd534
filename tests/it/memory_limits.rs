//! Memory and time bounds as mongod's, through the wire server: blocking
//! `$sort`/`$group` memory, `$push`/`$addToSet`, `$graphLookup`, string
//! sizes, result document size, cursor timeout, `maxTimeMS`.
//!
//! The limits are server parameters, process-wide as mongod's are, so this
//! binary holds every test that changes them, serialised by one lock and
//! restored afterwards; each test lowers a limit so that nothing needs to
//! allocate 100 MB.

use std::net::TcpStream;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::support::raw::{Shared, call, receive, send};
use bson::{Bson, Document, doc};

static SERVER: Shared = Shared::new();

fn connect() -> TcpStream {
    SERVER.connect(Duration::from_secs(120))
}

/// Serialises the tests that change server parameters.
fn params_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn ok(reply: &Document) {
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
}

fn code(reply: &Document) -> i32 {
    assert_eq!(reply.get_f64("ok"), Ok(0.0), "{reply}");
    reply.get_i32("code").unwrap()
}

/// Set a server parameter for the life of the guard.
struct Param {
    name: &'static str,
    was: Bson,
}

impl Param {
    fn set(name: &'static str, value: i64) -> Param {
        Self::set_value(name, Bson::Int64(value))
    }

    fn set_bool(name: &'static str, value: bool) -> Param {
        Self::set_value(name, Bson::Boolean(value))
    }

    fn set_value(name: &'static str, value: Bson) -> Param {
        let reply = call(
            &mut connect(),
            doc! {"setParameter": 1, name: value, "$db": "admin"},
        );
        ok(&reply);
        Param {
            name,
            was: reply.get("was").unwrap().clone(),
        }
    }
}

impl Drop for Param {
    fn drop(&mut self) {
        let reply = call(
            &mut connect(),
            doc! {"setParameter": 1, self.name: self.was.clone(), "$db": "admin"},
        );
        ok(&reply);
    }
}

fn fill(stream: &mut TcpStream, db: &str, coll: &str, n: i32) {
    let docs: Vec<Document> = (0..n)
        .map(|i| doc! {"_id": i, "next": (i + 1) % n, "pad": "x".repeat(200)})
        .collect();
    ok(&call(
        stream,
        doc! {"insert": coll, "documents": docs, "$db": db},
    ));
}

fn aggregate(coll: &str, pipeline: Vec<Document>, extra: Document) -> Document {
    let mut body = doc! {"aggregate": coll, "pipeline": pipeline, "cursor": {}, "$db": "mem"};
    body.extend(extra);
    body
}

#[test]
fn set_parameter_follows_mongod() {
    let _guard = params_lock();
    let mut s = connect();
    let reply = call(
        &mut s,
        doc! {"setParameter": 1, "internalQueryMaxPushBytes": 5, "$db": "test"},
    );
    assert_eq!(code(&reply), 13);
    let reply = call(
        &mut s,
        doc! {"setParameter": 1, "noSuchParameter": 5, "$db": "admin"},
    );
    assert_eq!(code(&reply), 72);
    let reply = call(
        &mut s,
        doc! {"getParameter": 1, "internalQueryMaxPushBytes": 1, "$db": "admin"},
    );
    assert_eq!(reply.get_i64("internalQueryMaxPushBytes"), Ok(104_857_600));
    // schemalab's own: the records kept in memory before cold collections
    // are spilled, 512 MiB unless set.
    let reply = call(
        &mut s,
        doc! {"getParameter": 1, "schemalabRecordCacheBytes": 1, "$db": "admin"},
    );
    assert_eq!(reply.get_i64("schemalabRecordCacheBytes"), Ok(512 << 20));
}

#[test]
fn blocking_sort_stops_at_its_memory_limit_with_allow_disk_use_false() {
    let _guard = params_lock();
    let mut s = connect();
    fill(&mut s, "mem", "sort", 100);
    let _p = Param::set("internalQueryMaxBlockingSortMemoryUsageBytes", 10_000);
    let sort = || vec![doc! {"$sort": {"pad": 1, "_id": -1}}];
    let reply = call(
        &mut s,
        aggregate("sort", sort(), doc! {"allowDiskUse": false}),
    );
    assert_eq!(code(&reply), 292);
    assert_eq!(
        reply.get_str("codeName"),
        Ok("QueryExceededMemoryLimitNoDiskUseAllowed")
    );
    // The same limit bounds a find's SORT stage.
    let reply = call(
        &mut s,
        doc! {"find": "sort", "sort": {"pad": 1, "_id": -1}, "allowDiskUse": false, "$db": "mem"},
    );
    assert_eq!(code(&reply), 292);
    // Opting in lifts it, and so does saying nothing: mongod 7.0's
    // `allowDiskUseByDefault` is true. With that parameter false, saying
    // nothing stops at the limit again.
    ok(&call(
        &mut s,
        aggregate("sort", sort(), doc! {"allowDiskUse": true}),
    ));
    ok(&call(&mut s, aggregate("sort", sort(), doc! {})));
    {
        let _d = Param::set_bool("allowDiskUseByDefault", false);
        assert_eq!(code(&call(&mut s, aggregate("sort", sort(), doc! {}))), 292);
    }
    // A $sort after stages that stream is fed by them one document at a
    // time, within the same limit.
    let after = || {
        vec![
            doc! {"$set": {"k": "$pad"}},
            doc! {"$sort": {"k": 1, "_id": -1}},
        ]
    };
    let reply = call(
        &mut s,
        aggregate("sort", after(), doc! {"allowDiskUse": false}),
    );
    assert_eq!(code(&reply), 292);
    ok(&call(
        &mut s,
        aggregate("sort", after(), doc! {"allowDiskUse": true}),
    ));
    // A following $limit makes it a bounded top-k.
    let mut limited = sort();
    limited.push(doc! {"$limit": 3});
    ok(&call(
        &mut s,
        aggregate("sort", limited, doc! {"allowDiskUse": false}),
    ));
}

/// A figure of an explain entry (an int, or a long past an int's range).
fn figure(entry: &Document, key: &str) -> i64 {
    match entry.get(key) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        other => panic!("{key} is {other:?} in {entry}"),
    }
}

/// The `$sort` entry of an aggregate's `executionStats` explain.
fn explained_sort(s: &mut TcpStream, coll: &str, pipeline: Vec<Document>) -> Document {
    let mut cmd = aggregate(coll, pipeline, doc! {});
    cmd.remove("$db");
    let reply = call(
        s,
        doc! {"explain": cmd, "verbosity": "executionStats", "$db": "mem"},
    );
    ok(&reply);
    reply
        .get_array("stages")
        .unwrap()
        .iter()
        .filter_map(Bson::as_document)
        .find(|st| st.contains_key("$sort"))
        .unwrap_or_else(|| panic!("no $sort stage in {reply}"))
        .clone()
}

#[test]
fn a_sort_past_its_limit_spills_to_disk_when_allowed_and_orders_as_in_memory() {
    let _guard = params_lock();
    let mut s = connect();
    let n = 400;
    let docs: Vec<Document> = (0..n)
        .map(|i| doc! {"_id": i, "k": (i * 7) % 13, "pad": "y".repeat(100 + (i % 5) as usize)})
        .collect();
    ok(&call(
        &mut s,
        doc! {"insert": "spill", "documents": docs, "$db": "mem"},
    ));
    // `$set` streams, so the `$sort` after it is fed one document at a
    // time; keys repeat, so ties must keep input (`_id`) order.
    let pipeline = || {
        vec![
            doc! {"$set": {"k2": "$k"}},
            doc! {"$sort": {"k2": 1}},
            doc! {"$project": {"_id": 1}},
        ]
    };
    let mut expected: Vec<(i32, i32)> = (0..n).map(|i| ((i * 7) % 13, i)).collect();
    expected.sort();
    let expected: Vec<i32> = expected.into_iter().map(|(_, id)| id).collect();
    let ids = |s: &mut TcpStream| -> Vec<i32> {
        let mut cmd = aggregate("spill", pipeline(), doc! {"allowDiskUse": true});
        cmd.insert("cursor", doc! {"batchSize": 1000});
        let reply = call(s, cmd);
        ok(&reply);
        reply
            .get_document("cursor")
            .unwrap()
            .get_array("firstBatch")
            .unwrap()
            .iter()
            .map(|d| d.as_document().unwrap().get_i32("_id").unwrap())
            .collect()
    };

    let in_memory = explained_sort(&mut s, "spill", pipeline());
    assert_eq!(in_memory.get_bool("usedDisk"), Ok(false), "{in_memory}");
    assert_eq!(figure(&in_memory, "spills"), 0);
    assert_eq!(figure(&in_memory, "spilledDataStorageSize"), 0);
    // Only the fields the pipeline depends on reach the sort (`_id`, `k`
    // and `k2`), as on mongod: some 29 bytes a document.
    let sorted_bytes = figure(&in_memory, "totalDataSizeSortedBytesEstimate");
    assert!(sorted_bytes >= i64::from(n) * 25, "{in_memory}");
    assert_eq!(ids(&mut s), expected);

    // About a tenth of the input fits: some ten runs go to disk.
    let _p = Param::set(
        "internalQueryMaxBlockingSortMemoryUsageBytes",
        sorted_bytes / 10,
    );
    let spilled = explained_sort(&mut s, "spill", pipeline());
    assert_eq!(spilled.get_bool("usedDisk"), Ok(true), "{spilled}");
    let spills = figure(&spilled, "spills");
    assert!((9..=11).contains(&spills), "{spilled}");
    assert!(figure(&spilled, "spilledDataStorageSize") > sorted_bytes / 2);
    assert_eq!(
        figure(&spilled, "totalDataSizeSortedBytesEstimate"),
        sorted_bytes
    );
    assert_eq!(figure(&spilled, "nReturned"), i64::from(n));
    assert_eq!(ids(&mut s), expected);
    // Without leave to use the disk, the same sort stops at the limit.
    assert_eq!(
        code(&call(
            &mut s,
            aggregate("spill", pipeline(), doc! {"allowDiskUse": false})
        )),
        292
    );
}

#[test]
fn group_push_and_add_to_set_are_bounded() {
    let _guard = params_lock();
    let mut s = connect();
    fill(&mut s, "mem", "group", 100);
    {
        let _p = Param::set("internalDocumentSourceGroupMaxMemoryBytes", 1_000);
        let group = vec![doc! {"$group": {"_id": "$_id", "p": {"$push": "$pad"}}}];
        assert_eq!(
            code(&call(
                &mut s,
                aggregate("group", group.clone(), doc! {"allowDiskUse": false})
            )),
            292
        );
        ok(&call(
            &mut s,
            aggregate("group", group, doc! {"allowDiskUse": true}),
        ));
    }
    {
        let _p = Param::set("internalQueryMaxPushBytes", 1_000);
        let group = vec![doc! {"$group": {"_id": null, "p": {"$push": "$pad"}}}];
        let reply = call(
            &mut s,
            aggregate("group", group, doc! {"allowDiskUse": true}),
        );
        assert_eq!(code(&reply), 146);
        assert_eq!(
            reply.get_str("errmsg"),
            Ok("$push used too much memory and cannot spill to disk. Memory limit: 1000 bytes")
        );
    }
    {
        let _p = Param::set("internalQueryMaxAddToSetBytes", 1_000);
        let group = vec![doc! {"$group": {"_id": null, "p": {"$addToSet": "$_id"}}}];
        // 100 small integers fit…
        ok(&call(&mut s, aggregate("group", group, doc! {})));
        let group = vec![doc! {"$group": {"_id": null, "p": {"$addToSet": "$pad"}}}];
        // …100 strings of 200 bytes do not.
        assert_eq!(code(&call(&mut s, aggregate("group", group, doc! {}))), 146);
    }
}

#[test]
fn graph_lookup_over_a_cycle_is_bounded() {
    let _guard = params_lock();
    let mut s = connect();
    fill(&mut s, "mem", "cycle", 100);
    let pipeline = vec![
        doc! {"$match": {"_id": 0}},
        doc! {"$graphLookup": {"from": "cycle", "startWith": "$next", "connectFromField": "next",
        "connectToField": "_id", "as": "reach"}},
    ];
    let reply = call(&mut s, aggregate("cycle", pipeline.clone(), doc! {}));
    ok(&reply);
    let _p = Param::set("internalDocumentSourceGraphLookupMaxMemoryBytes", 5_000);
    let reply = call(&mut s, aggregate("cycle", pipeline, doc! {}));
    assert_eq!(code(&reply), 40099);
    assert_eq!(
        reply.get_str("errmsg"),
        Ok("$graphLookup reached maximum memory consumption")
    );
}

#[test]
fn strings_and_result_documents_have_mongods_size_limits() {
    let mut s = connect();
    ok(&call(
        &mut s,
        doc! {"insert": "str", "documents": [{"_id": 1}], "$db": "mem"},
    ));
    // Doubling a string 24 times reaches 16 MiB.
    let doubling = |times: i32| {
        doc! {"$reduce": {"input": {"$range": [0, times]}, "initialValue": "a",
        "in": {"$concat": ["$$value", "$$value"]}}}
    };
    let reply = call(
        &mut s,
        aggregate("str", vec![doc! {"$project": {"s": doubling(24)}}], doc! {}),
    );
    assert_eq!(code(&reply), 16493);
    // 8 MiB strings are fine, but three of them in one document are not.
    let reply = call(
        &mut s,
        aggregate(
            "str",
            vec![doc! {"$project": {"s": doubling(23), "t": doubling(23), "u": doubling(23)}}],
            doc! {},
        ),
    );
    assert_eq!(code(&reply), 10334);
    let reply = call(
        &mut s,
        aggregate(
            "str",
            vec![doc! {"$project": {"n": {"$strLenBytes": doubling(23)}}}],
            doc! {},
        ),
    );
    ok(&reply);
    let first = &reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0];
    assert_eq!(first.as_document().unwrap().get_i32("n"), Ok(1 << 23));
    // A range is sized before it is built.
    let reply = call(
        &mut s,
        aggregate(
            "str",
            vec![doc! {"$project": {"r": {"$range": [0, 2_147_483_647]}}}],
            doc! {},
        ),
    );
    assert_eq!(code(&reply), 146);
    assert!(
        reply
            .get_str("errmsg")
            .unwrap()
            .starts_with("$range would use too much memory (34359738376 bytes)"),
        "{reply}"
    );
}

#[test]
fn idle_cursors_time_out_with_cursor_not_found() {
    let _guard = params_lock();
    let mut s = connect();
    fill(&mut s, "mem", "cursors", 10);
    let open = |s: &mut TcpStream| {
        let reply = call(s, doc! {"find": "cursors", "batchSize": 1, "$db": "mem"});
        reply.get_document("cursor").unwrap().get_i64("id").unwrap()
    };
    let first = open(&mut s);
    assert_ne!(first, 0);
    {
        // Every cursor is now past its idle timeout: opening another reaps
        // the first.
        let _p = Param::set("cursorTimeoutMillis", 0);
        open(&mut s);
    }
    let reply = call(
        &mut s,
        doc! {"getMore": first, "collection": "cursors", "$db": "mem"},
    );
    assert_eq!(code(&reply), 43);
}

/// A pipeline that runs for many seconds in a debug build unless stopped.
/// (Three ranges of a million: one of three million is over 16 MiB.)
fn long_pipeline() -> Vec<Document> {
    vec![
        doc! {"$project": {"n": {"$map": {"input": {"$range": [0, 3]}, "as": "i", "in": {"$reduce": {
        "input": {"$range": [0, 1_000_000]}, "initialValue": 0,
        "in": {"$add": ["$$value", {"$multiply": ["$$this", 2]}]}}}}}}},
    ]
}

#[test]
fn max_time_ms_stops_a_long_operation() {
    let mut s = connect();
    ok(&call(
        &mut s,
        doc! {"insert": "slow", "documents": [{"_id": 1}], "$db": "mem"},
    ));
    let reply = call(
        &mut s,
        aggregate("slow", long_pipeline(), doc! {"maxTimeMS": 20}),
    );
    assert_eq!(code(&reply), 50);
    assert_eq!(reply.get_str("codeName"), Ok("MaxTimeMSExpired"));
    // A find scanning with an expensive filter stops too (one matching
    // nothing, so that its first batch must scan the whole collection).
    let docs: Vec<Document> = (0..2000).map(|i| doc! {"_id": i}).collect();
    ok(&call(
        &mut s,
        doc! {"insert": "scan", "documents": docs, "$db": "mem"},
    ));
    let heavy = doc! {"$expr": {"$lt": [{"$size": {"$range": [0, 20_000]}}, 0]}};
    let reply = call(
        &mut s,
        doc! {"find": "scan", "filter": heavy, "maxTimeMS": 20, "$db": "mem"},
    );
    assert_eq!(code(&reply), 50);
    let reply = call(&mut s, doc! {"find": "scan", "maxTimeMS": -1, "$db": "mem"});
    assert_eq!(code(&reply), 2);
    let reply = call(
        &mut s,
        doc! {"find": "scan", "maxTimeMS": "soon", "$db": "mem"},
    );
    assert_eq!(code(&reply), 2);
    ok(&call(
        &mut s,
        doc! {"find": "scan", "maxTimeMS": 0, "$db": "mem"},
    ));
    let reply = call(
        &mut s,
        doc! {"getMore": 1_i64, "collection": "scan", "maxTimeMS": 10, "$db": "mem"},
    );
    assert_eq!(code(&reply), 2);
}

/// While `pipeline` runs on one connection (stopped by its `maxTimeMS`),
/// another pings, reads and writes other collections and databases, and
/// all of that completes before the long operation answers.
fn others_are_served_during(pipeline: Vec<Document>) {
    let mut slow = connect();
    ok(&call(
        &mut slow,
        doc! {"insert": "busy", "documents": [{"_id": 1}], "$db": "mem"},
    ));
    let mut other = connect();
    ok(&call(
        &mut other,
        doc! {"insert": "quiet", "documents": [{"_id": 1}], "$db": "mem2"},
    ));
    // Ordering, not timing: the slow connection's reply must not have
    // arrived once everything below has completed.
    send(
        &mut slow,
        aggregate("busy", pipeline, doc! {"maxTimeMS": 3000}),
    );
    for _ in 0..20 {
        ok(&call(&mut other, doc! {"ping": 1, "$db": "admin"}));
    }
    ok(&call(&mut other, doc! {"find": "quiet", "$db": "mem2"}));
    ok(&call(
        &mut other,
        doc! {"insert": "quiet", "documents": [{}], "$db": "mem2"},
    ));
    ok(&call(
        &mut other,
        doc! {"insert": "busy2", "documents": [{}], "$db": "mem"},
    ));
    ok(&call(
        &mut other,
        doc! {"update": "busy", "updates": [{"q": {"_id": 1}, "u": {"$set": {"seen": true}}}], "$db": "mem"},
    ));
    // The long operation is still running: nothing to read yet.
    slow.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let pending = slow.peek(&mut byte);
    assert!(
        matches!(&pending, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the long operation finished before the others: {pending:?}"
    );
    slow.set_nonblocking(false).unwrap();
    // It then ends on its own deadline.
    assert_eq!(code(&receive(&mut slow)), 50);
}

#[test]
fn others_are_served_while_a_long_read_runs() {
    others_are_served_during(long_pipeline());
}

#[test]
fn others_are_served_while_a_long_out_pipeline_reads() {
    let mut pipeline = long_pipeline();
    pipeline.push(doc! {"$out": "busy_out"});
    others_are_served_during(pipeline);
}

#[test]
fn a_command_stops_when_its_client_goes() {
    let mut setup = connect();
    let docs: Vec<Document> = (0..40).map(|i| doc! {"_id": i}).collect();
    ok(&call(
        &mut setup,
        doc! {"insert": "gone", "documents": docs, "$db": "mem"},
    ));
    // An update whose filter takes seconds per document in a debug build.
    let heavy = doc! {"$expr": {"$gte": [{"$reduce": {
    "input": {"$range": [0, 400_000]}, "initialValue": 0,
    "in": {"$add": ["$$value", 1]}}}, 0]}};
    let mut leaving = connect();
    send(
        &mut leaving,
        doc! {"update": "gone", "updates": [{"q": heavy, "u": {"$set": {"touched": true}}, "multi": true}], "$db": "mem"},
    );
    // Once `currentOp` lists it, its client leaves; once `currentOp` no
    // longer lists it, it has ended, cut short rather than run to the end.
    let running = |s: &mut TcpStream| {
        let reply = call(
            s,
            doc! {"currentOp": 1, "ns": "mem.gone", "op": "update", "$db": "admin"},
        );
        !reply.get_array("inprog").unwrap().is_empty()
    };
    while !running(&mut setup) {}
    drop(leaving);
    while running(&mut setup) {}
    let reply = call(
        &mut setup,
        doc! {"count": "gone", "query": {"touched": true}, "$db": "mem"},
    );
    assert!(reply.get_i32("n").unwrap() < 40, "{reply}");
}

/// The explain of a find with `values` in its `$in` on `_id`.
fn explain_in(values: Vec<i32>) -> Document {
    doc! {
        "explain": {"find": "huge_in", "filter": {"_id": {"$in": values}}},
        "verbosity": "executionStats",
        "$db": "mem",
    }
}

#[test]
fn explain_leaves_out_plan_stages_past_its_size_threshold() {
    let _guard = params_lock();
    let mut s = connect();
    fill(&mut s, "mem", "huge_in", 50);
    let values: Vec<i32> = (0..200).collect();
    // Under the default 10 MiB, the whole tree is there.
    let whole = call(&mut s, explain_in(values.clone()));
    ok(&whole);
    let stats = whole.get_document("executionStats").unwrap();
    assert_eq!(stats.get_i32("totalKeysExamined"), Ok(50), "{whole}");
    let stages = stats.get_document("executionStages").unwrap();
    assert_eq!(stages.get_str("stage"), Ok("FETCH"), "{whole}");
    // A threshold just past what comes before the winning plan (the
    // parsed query's 200 values): the winning plan is written whole, as
    // mongod checks before each stage and its index scan's 200 bounds come
    // after the check, but every stage after them is a warning.
    let mut head = whole.get_document("queryPlanner").unwrap().clone();
    head.remove("winningPlan");
    head.remove("rejectedPlans");
    let before = bson::to_vec(&head).unwrap().len() as i64;
    let _small = Param::set("internalQueryExplainSizeThresholdBytes", before + 100);
    let cut = call(&mut s, explain_in(values));
    ok(&cut);
    let warning = "stats tree exceeded BSON size limit for explain";
    let stats = cut.get_document("executionStats").unwrap();
    assert_eq!(
        stats
            .get_document("executionStages")
            .unwrap()
            .get_str("warning"),
        Ok(warning),
        "{cut}"
    );
    // The figures outside the trees stay whole.
    assert_eq!(stats.get_i32("totalKeysExamined"), Ok(50), "{cut}");
    assert_eq!(stats.get_i32("nReturned"), Ok(50), "{cut}");
    let winning = cut
        .get_document("queryPlanner")
        .unwrap()
        .get_document("winningPlan")
        .unwrap();
    assert_eq!(winning.get_str("stage"), Ok("FETCH"), "{cut}");
    // The bounds took the reply past the threshold only once written.
    assert_eq!(
        winning.get_document("inputStage").unwrap().get_str("stage"),
        Ok("IXSCAN"),
        "{cut}"
    );
}

#[test]
fn a_reply_over_the_bson_limit_is_mongods_error_10334() {
    let _guard = params_lock();
    let mut s = connect();
    fill(&mut s, "mem", "huge_in", 50);
    // 700,000 values: the command is 8 MB and its echo, parsed query and
    // index bounds take the explain past 16 MiB, even with no threshold.
    let _large = Param::set(
        "internalQueryExplainSizeThresholdBytes",
        i64::from(i32::MAX),
    );
    let reply = call(&mut s, explain_in((0..700_000).collect()));
    assert_eq!(
        code(&reply),
        10334,
        "{}",
        reply.get_str("errmsg").unwrap_or("")
    );
    assert!(
        reply
            .get_str("errmsg")
            .unwrap()
            .starts_with("BSONObj size: "),
        "{}",
        reply.get_str("errmsg").unwrap()
    );
    // The connection goes on.
    ok(&call(&mut s, doc! {"ping": 1, "$db": "admin"}));
}

/// `$lookup` gathers at most `internalLookupStageIntermediateDocumentMaxSizeBytes`
/// of foreign documents into one input's array (mongod: 100 MB, then
/// 4568), and an array under the limit may pass 16 MiB on its way, as on
/// mongod, when a later stage shrinks the document.
#[test]
fn lookup_arrays_are_bounded_by_mongods_parameter() {
    let _guard = params_lock();
    let mut s = connect();
    fill(&mut s, "mem", "lookup_local", 1);
    let foreign: Vec<Document> = (0..20)
        .map(|i| doc! {"_id": i, "k": 1, "pad": "x".repeat(1_000_000)})
        .collect();
    ok(&call(
        &mut s,
        doc! {"insert": "lookup_foreign", "documents": foreign, "$db": "mem"},
    ));
    let pipeline = || {
        vec![
            doc! {"$limit": 1},
            doc! {"$set": {"k": 1}},
            doc! {"$lookup": {"from": "lookup_foreign", "localField": "k", "foreignField": "k", "as": "all"}},
            doc! {"$project": {"n": {"$size": "$all"}}},
        ]
    };
    // 20 MB gathered, 100 MB allowed: answered.
    let reply = call(&mut s, aggregate("lookup_local", pipeline(), doc! {}));
    ok(&reply);
    let first = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    assert_eq!(first[0].as_document().unwrap().get_i32("n"), Ok(20));
    // A limit of 5 MB: mongod's error, naming the collection and limit.
    let _limit = Param::set(
        "internalLookupStageIntermediateDocumentMaxSizeBytes",
        5_000_000,
    );
    let reply = call(&mut s, aggregate("lookup_local", pipeline(), doc! {}));
    assert_eq!(code(&reply), 4568, "{reply}");
    let msg = reply.get_str("errmsg").unwrap();
    assert!(
        msg.contains("lookup_foreign") && msg.contains("5000000 bytes"),
        "{msg}"
    );
}

/// The first document of a reply's first batch.
fn first_doc(reply: &Document) -> Document {
    ok(reply);
    reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .clone()
}

/// `$project: {v: <expr>}` over one document of `mem.one`.
fn project_one(s: &mut TcpStream, expr: Document, extra: Document) -> Document {
    ok(&call(
        s,
        doc! {"update": "one", "updates": [{"q": {"_id": 1}, "u": {"_id": 1}, "upsert": true}], "$db": "mem"},
    ));
    call(
        s,
        aggregate("one", vec![doc! {"$project": {"_id": 0, "v": expr}}], extra),
    )
}

/// Issue 36's doubling and spreading attacks, at sizes a test can afford:
/// each value an expression builds stops at 16 MiB with mongod's error for
/// a value that size (10334 BSONObjectTooLarge; 16493 for a string),
/// where it is built, instead of growing until the server runs out of
/// memory. Under the bound the same expressions answer.
#[test]
fn values_built_by_expressions_stop_at_16_mib() {
    let mut s = connect();
    let hundred = "x".repeat(100);
    // `$concatArrays` doubling inside `$reduce`: 2^18 strings of 100
    // bytes are 28 MB; 2^17 are 14 MB.
    let concat = |times: i32| {
        doc! {"$size": {"$reduce": {"input": {"$range": [0, times]}, "initialValue": [&hundred],
        "in": {"$concatArrays": ["$$value", "$$value"]}}}}
    };
    assert_eq!(
        first_doc(&project_one(&mut s, concat(17), doc! {})).get_i32("v"),
        Ok(1 << 17)
    );
    let reply = project_one(&mut s, concat(18), doc! {});
    assert_eq!(code(&reply), 10334, "{reply}");
    assert!(
        reply
            .get_str("errmsg")
            .unwrap()
            .starts_with("BSONObj size: ")
    );
    // `{l: "$$value", r: "$$value"}` doubling: 2^15 leaves of 1,000 bytes.
    let thousand = "y".repeat(1000);
    let halves = |times: i32| {
        doc! {"$type": {"$reduce": {"input": {"$range": [0, times]}, "initialValue": &thousand,
        "in": {"l": "$$value", "r": "$$value"}}}}
    };
    assert_eq!(
        first_doc(&project_one(&mut s, halves(13), doc! {})).get_str("v"),
        Ok("object")
    );
    assert_eq!(code(&project_one(&mut s, halves(15), doc! {})), 10334);
    // `$split` of a 4 MB string into two million pieces.
    let split = |times: i32| {
        doc! {"$size": {"$split": [{"$reduce": {"input": {"$range": [0, times]}, "initialValue": "a,",
        "in": {"$concat": ["$$value", "$$value"]}}}, ","]}}
    };
    assert_eq!(
        first_doc(&project_one(&mut s, split(19), doc! {})).get_i32("v"),
        Ok((1 << 19) + 1)
    );
    assert_eq!(code(&project_one(&mut s, split(21), doc! {})), 10334);
    // `$map` over many values: 20,000 of 1,000 bytes.
    let map = |n: i32| {
        doc! {"$size": {"$map": {"input": {"$range": [0, n]}, "in": &thousand}}}
    };
    assert_eq!(
        first_doc(&project_one(&mut s, map(10_000), doc! {})).get_i32("v"),
        Ok(10_000)
    );
    assert_eq!(code(&project_one(&mut s, map(20_000), doc! {})), 10334);
    // `$filter` keeps values as `$map` makes them.
    let filter = doc! {"$size": {"$filter": {"input": {"$map": {"input": {"$range": [0, 20_000]}, "in": &thousand}}, "cond": true}}};
    assert_eq!(code(&project_one(&mut s, filter, doc! {})), 10334);
    // `$range`: a million and a half values fit (8 bytes each), three do not,
    // though mongod's own `$range` limit (100 MB at 16 bytes) allows them.
    let range = |n: i32| doc! {"$size": {"$range": [0, n]}};
    assert_eq!(
        first_doc(&project_one(&mut s, range(1_500_000), doc! {})).get_i32("v"),
        Ok(1_500_000)
    );
    assert_eq!(code(&project_one(&mut s, range(3_000_000), doc! {})), 10334);
    // A string past 16 MiB is mongod's 16493.
    let string = doc! {"$strLenBytes": {"$reduce": {"input": {"$range": [0, 25]}, "initialValue": "a",
    "in": {"$concat": ["$$value", "$$value"]}}}};
    assert_eq!(code(&project_one(&mut s, string, doc! {})), 16493);
    // The server goes on.
    ok(&call(&mut s, doc! {"ping": 1, "$db": "admin"}));
}

/// mongod counts what every accumulator keeps against `$group`'s memory
/// limit, not only `$push` and `$addToSet`'s values: with `allowDiskUse:
/// false`, a `$first`, `$last`, `$max`, `$mergeObjects`, `$firstN` or
/// `$top` that keeps more than the limit answers 292.
#[test]
fn every_accumulator_counts_against_the_group_limit() {
    let _guard = params_lock();
    let mut s = connect();
    let docs: Vec<Document> = (0..40)
        .map(|i| doc! {"_id": i, "pad": "p".repeat(50_000)})
        .collect();
    ok(&call(
        &mut s,
        doc! {"insert": "accs", "documents": docs, "$db": "mem"},
    ));
    // 40 groups of one 50 KB value each: 2 MB kept, 1 MB allowed.
    let _limit = Param::set("internalDocumentSourceGroupMaxMemoryBytes", 1_000_000);
    for acc in [
        doc! {"$first": "$pad"},
        doc! {"$last": "$pad"},
        doc! {"$max": "$pad"},
        doc! {"$min": "$pad"},
        doc! {"$mergeObjects": {"p": "$pad"}},
        doc! {"$firstN": {"input": "$pad", "n": 2}},
        doc! {"$lastN": {"input": "$pad", "n": 2}},
        doc! {"$top": {"output": "$pad", "sortBy": {"_id": 1}}},
    ] {
        let group = vec![doc! {"$group": {"_id": "$_id", "v": acc.clone()}}];
        let reply = call(
            &mut s,
            aggregate("accs", group.clone(), doc! {"allowDiskUse": false}),
        );
        assert_eq!(code(&reply), 292, "{acc}: {reply}");
        // Allowed to go past the limit, the group completes.
        ok(&call(
            &mut s,
            aggregate("accs", group, doc! {"allowDiskUse": true}),
        ));
    }
    // One group keeping one value is within the limit.
    let one = vec![doc! {"$group": {"_id": null, "v": {"$last": "$pad"}}}];
    ok(&call(
        &mut s,
        aggregate("accs", one, doc! {"allowDiskUse": false}),
    ));
}

/// `schemalabOperationMemoryBytes` bounds what one operation's stages hold
/// at once, whatever `allowDiskUse` says: groups kept in memory, the
/// copies `$unwind` makes, the arrays of nested `$lookup`s and
/// `$graphLookup`, the outputs of `$facet`. Past it: 146
/// ExceededMemoryLimit, and the server goes on.
#[test]
fn one_operation_holds_at_most_its_memory_budget() {
    let _guard = params_lock();
    let mut s = connect();
    let docs: Vec<Document> = (0..10)
        .map(|i| doc! {"_id": i, "k": 1, "next": (i + 1) % 10, "pad": "q".repeat(10_000), "arr": (0..100).collect::<Vec<i32>>()})
        .collect();
    ok(&call(
        &mut s,
        doc! {"insert": "budget", "documents": docs, "$db": "mem"},
    ));
    // Within the default budget, each of these answers.
    let lookup = |depth: usize| {
        let mut inner = vec![doc! {"$match": {"$expr": {"$eq": ["$k", 1]}}}];
        for _ in 0..depth {
            inner = vec![doc! {"$lookup": {"from": "budget", "pipeline": inner, "as": "sub"}}];
        }
        let mut p = inner;
        p.push(doc! {"$group": {"_id": null, "n": {"$sum": {"$bsonSize": "$$ROOT"}}}});
        p
    };
    let attacks = [
        (
            vec![doc! {"$group": {"_id": "$_id", "all": {"$push": "$$ROOT"}}}],
            doc! {"allowDiskUse": true},
        ),
        (
            // (Each copy keeps the pad: a `$count` alone would let
            // the copies leave it out.)
            vec![
                doc! {"$unwind": "$arr"},
                doc! {"$group": {"_id": null, "n": {"$sum": {"$strLenBytes": "$pad"}}}},
            ],
            doc! {},
        ),
        (lookup(2), doc! {}),
        (
            vec![
                doc! {"$graphLookup": {"from": "budget", "startWith": "$next", "connectFromField": "next", "connectToField": "_id", "as": "chain"}},
                doc! {"$group": {"_id": null, "n": {"$sum": {"$bsonSize": "$$ROOT"}}}},
            ],
            doc! {},
        ),
        (
            vec![
                doc! {"$facet": {"a": [{"$match": {}}], "b": [{"$match": {}}]}},
                doc! {"$project": {"n": {"$bsonSize": "$$ROOT"}}},
            ],
            doc! {},
        ),
    ];
    for (pipeline, extra) in &attacks {
        ok(&call(
            &mut s,
            aggregate("budget", pipeline.clone(), extra.clone()),
        ));
    }
    // A budget of 50 KB: each holds more.
    let _budget = Param::set("schemalabOperationMemoryBytes", 50_000);
    for (pipeline, extra) in &attacks {
        let reply = call(&mut s, aggregate("budget", pipeline.clone(), extra.clone()));
        assert_eq!(code(&reply), 146, "{pipeline:?}: {reply}");
        assert_eq!(reply.get_str("codeName"), Ok("ExceededMemoryLimit"));
    }
    // What holds little still answers.
    ok(&call(
        &mut s,
        aggregate(
            "budget",
            vec![doc! {"$group": {"_id": null, "n": {"$sum": 1}}}],
            doc! {},
        ),
    ));
}

/// An expired `maxTimeMS` stops one document's long expression inside
/// the step: each of these runs under 128 loop steps on one document (so
/// that a check every 128 steps never comes) while each step builds or
/// walks 300,000 values; before the fix each answered after seconds
/// with a result.
#[test]
fn max_time_ms_stops_long_steps_inside_one_expression() {
    let mut s = connect();
    let heavy = doc! {"$size": {"$range": [0, 300_000]}};
    let string = doc! {"$strLenBytes": {"$reduce": {"input": {"$range": [0, 23]}, "initialValue": "a",
    "in": {"$concat": ["$$value", "$$value"]}}}};
    let cases = [
        doc! {"$reduce": {"input": {"$range": [0, 100]}, "initialValue": 0, "in": {"$add": ["$$value", heavy.clone()]}}},
        doc! {"$map": {"input": {"$range": [0, 100]}, "in": heavy.clone()}},
        doc! {"$filter": {"input": {"$range": [0, 100]}, "cond": {"$gt": [heavy.clone(), 0]}}},
        doc! {"$map": {"input": {"$range": [0, 100]}, "in": {"$size": {"$concatArrays": [{"$range": [0, 150_000]}, {"$range": [0, 150_000]}]}}}},
        // Each string doubles to 8 MiB: 2,000 of them is seconds of
        // copying even in release, far past the limit.
        doc! {"$map": {"input": {"$range": [0, 2000]}, "in": string}},
    ];
    for expr in cases {
        let reply = project_one(&mut s, expr.clone(), doc! {"maxTimeMS": 200});
        assert_eq!(code(&reply), 50, "{expr}: {reply}");
    }
}

/// `$unwind` of one large array checks the operation per value it makes.
#[test]
fn max_time_ms_stops_an_unwind_of_one_large_array() {
    let mut s = connect();
    ok(&call(
        &mut s,
        doc! {"insert": "wide", "documents": [{"_id": 1, "a": (0..1_000_000).collect::<Vec<i32>>()}], "$db": "mem"},
    ));
    // The unwind alone: a stage after it would check once per document.
    let pipeline = vec![doc! {"$unwind": "$a"}];
    let reply = call(&mut s, aggregate("wide", pipeline, doc! {"maxTimeMS": 200}));
    assert_eq!(code(&reply), 50, "{reply}");
}
