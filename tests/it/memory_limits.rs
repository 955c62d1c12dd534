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
fn long_pipeline() -> Vec<Document> {
    vec![doc! {"$project": {"n": {"$reduce": {
    "input": {"$range": [0, 3_000_000]}, "initialValue": 0,
    "in": {"$add": ["$$value", {"$multiply": ["$$this", 2]}]}}}}}]
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
