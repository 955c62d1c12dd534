//! Locking no coarser than per collection (issue 11): while one client runs
//! a long write, others ping, read and write other collections and other
//! databases, and all of that completes while the long write is provably
//! still running (`currentOp` lists it). Ordering, not timing: nothing
//! sleeps, and the long operations are far longer than everything they
//! are raced against, in debug and release builds alike.
//!
//! Also: concurrent multi-document writes on one collection, which yield
//! between chunks, lose no update; a long write whose collection is
//! dropped under it fails as mongod's does.

use std::net::TcpStream;
use std::time::Duration;

use crate::support::raw::{Shared, call, receive, send};
use bson::{Bson, Document, RawDocumentBuf, doc};
use schemalab_engine::{DeleteStatement, Engine, UpdateStatement};

static SERVER: Shared = Shared::new();

fn connect() -> TcpStream {
    SERVER.connect(Duration::from_secs(300))
}

fn ok(reply: &Document) -> &Document {
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    assert!(!reply.contains_key("writeErrors"), "{reply}");
    reply
}

/// Whether `currentOp` lists an operation of kind `op` on `ns`.
fn running(s: &mut TcpStream, ns: &str, op: &str) -> bool {
    let reply = call(s, doc! {"currentOp": 1, "ns": ns, "op": op, "$db": "admin"});
    !ok(&reply).get_array("inprog").unwrap().is_empty()
}

/// Ask `currentOp` until it says yes (or no): no sleeping, each question is
/// a round trip.
fn until_running(s: &mut TcpStream, ns: &str, op: &str, wanted: bool) {
    for _ in 0..1_000_000 {
        if running(s, ns, op) == wanted {
            return;
        }
    }
    panic!("{op} on {ns} never became running={wanted}");
}

/// Per document, a `$reduce` over a million numbers: a second or more per
/// document in a debug build, tens of milliseconds in a release build.
fn heavy() -> Document {
    doc! {"$reduce": {"input": {"$range": [0, 1_000_000]}, "initialValue": 0,
    "in": {"$add": ["$$value", "$$this"]}}}
}

fn fill(s: &mut TcpStream, db: &str, coll: &str, n: i32) {
    let docs: Vec<Document> = (0..n).map(|i| doc! {"_id": i, "n": 0}).collect();
    ok(&call(
        s,
        doc! {"insert": coll, "documents": docs, "$db": db},
    ));
}

/// While `long` (a write on `cc.<busy>`) runs, everything below completes,
/// and the long write is still running afterwards.
fn others_complete_during(busy: &str, op: &str, long: Document) {
    let mut setup = connect();
    fill(&mut setup, "cc", busy, 256);
    fill(&mut setup, "cc", &format!("{busy}_other"), 1);
    fill(&mut setup, &format!("{busy}_db"), "w", 1);
    let ns = format!("cc.{busy}");
    let mut slow = connect();
    send(&mut slow, long);
    let mut watch = connect();
    until_running(&mut watch, &ns, op, true);

    let other = format!("{busy}_other");
    let other_db = format!("{busy}_db");
    let mut fresh = connect();
    for _ in 0..5 {
        ok(&call(&mut fresh, doc! {"ping": 1, "$db": "admin"}));
    }
    ok(&call(&mut fresh, doc! {"hello": 1, "$db": "admin"}));
    let mut c = connect();
    // Writes to another collection of the same database, and to another
    // database.
    ok(&call(
        &mut c,
        doc! {"insert": &other, "documents": [{"_id": 1}], "$db": "cc"},
    ));
    ok(&call(
        &mut c,
        doc! {"update": &other, "updates": [{"q": {}, "u": {"$inc": {"n": 1}}, "multi": true}], "$db": "cc"},
    ));
    ok(&call(
        &mut c,
        doc! {"insert": "w", "documents": [{"_id": 1}], "$db": &other_db},
    ));
    ok(&call(
        &mut c,
        doc! {"delete": "w", "deletes": [{"q": {"_id": 0}, "limit": 0}], "$db": &other_db},
    ));
    ok(&call(
        &mut c,
        doc! {"createIndexes": &other, "indexes": [{"key": {"n": 1}, "name": "n_1"}], "$db": "cc"},
    ));
    // Structural changes of the catalog.
    ok(&call(
        &mut c,
        doc! {"create": format!("{busy}_new"), "$db": "cc"},
    ));
    ok(&call(
        &mut c,
        doc! {"drop": format!("{busy}_new"), "$db": "cc"},
    ));
    // Reads of another collection, and of the busy one itself (the last
    // committed state of each document).
    let found = call(&mut c, doc! {"find": &other, "$db": "cc"});
    let batch = ok(&found)
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    assert_eq!(batch.len(), 2);
    let counted = call(&mut c, doc! {"count": busy, "$db": "cc"});
    assert!(ok(&counted).get_i32("n").unwrap() > 0);
    ok(&call(&mut c, doc! {"listCollections": 1, "$db": "cc"}));
    ok(&call(&mut c, doc! {"listDatabases": 1, "$db": "admin"}));

    // The long write is still running: listed, and no reply yet.
    assert!(
        running(&mut watch, &ns, op),
        "the long {op} ended before the others"
    );
    slow.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let pending = slow.peek(&mut byte);
    assert!(
        matches!(&pending, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the long {op} answered before the others: {pending:?}"
    );
    // Its client leaves, and the write stops.
    drop(slow);
    until_running(&mut watch, &ns, op, false);
}

#[test]
fn issue_11_others_complete_while_a_long_update_many_runs() {
    others_complete_during(
        "upd",
        "update",
        doc! {"update": "upd", "updates": [{"q": {}, "u": [{"$set": {"n": heavy()}}], "multi": true}],
        "maxTimeMS": 20_000, "$db": "cc"},
    );
}

#[test]
fn issue_11_others_complete_while_a_long_delete_many_runs() {
    others_complete_during(
        "del",
        "remove",
        doc! {"delete": "del", "deletes": [{"q": {"$expr": {"$lt": [heavy(), 0]}}, "limit": 0}],
        "maxTimeMS": 20_000, "$db": "cc"},
    );
}

#[test]
fn issue_11_a_long_update_many_whose_collection_is_dropped_is_killed() {
    let mut setup = connect();
    fill(&mut setup, "cc", "dropped", 64);
    let mut slow = connect();
    send(
        &mut slow,
        doc! {"update": "dropped", "updates": [{"q": {}, "u": [{"$set": {"n": heavy()}}], "multi": true}],
        "maxTimeMS": 20_000, "$db": "cc"},
    );
    until_running(&mut setup, "cc.dropped", "update", true);
    // The drop waits for no more than the update's current chunk.
    ok(&call(&mut setup, doc! {"drop": "dropped", "$db": "cc"}));
    let reply = receive(&mut slow);
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    let errors = reply.get_array("writeErrors").unwrap();
    let first = errors[0].as_document().unwrap();
    // QueryPlanKilled.
    assert_eq!(first.get_i32("code"), Ok(175), "{reply}");
    // Nothing of the dropped collection came back.
    let counted = call(&mut setup, doc! {"count": "dropped", "$db": "cc"});
    assert_eq!(ok(&counted).get_i32("n"), Ok(0));
}

#[test]
fn current_op_lists_running_operations_on_admin_only() {
    let mut s = connect();
    let reply = call(&mut s, doc! {"currentOp": 1, "$db": "admin"});
    let inprog = ok(&reply).get_array("inprog").unwrap();
    // At least itself.
    assert!(inprog.iter().any(|e| {
        e.as_document().is_some_and(|d| {
            d.get_document("command")
                .is_ok_and(|c| c.contains_key("currentOp"))
        })
    }));
    let reply = call(&mut s, doc! {"currentOp": 1, "$db": "cc"});
    assert_eq!(reply.get_i32("code"), Ok(13), "{reply}");
}

fn inc_all(engine: &Engine, coll: &str) {
    let st = UpdateStatement {
        filter: doc! {},
        update: Bson::Document(doc! {"$inc": {"n": 1}}),
        upsert: false,
        multi: true,
        array_filters: Vec::new(),
        collation: None,
        hint: None,
        sort: None,
        let_vars: None,
    };
    let outcome = engine.update("e", coll, &[st], true).unwrap();
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
}

#[test]
fn yielding_multi_document_writes_lose_no_update() {
    let engine = Engine::new();
    // Three chunks' worth, so that writers interleave between chunks.
    let docs: Vec<RawDocumentBuf> = (0..700)
        .map(|i| {
            let kind = if i % 7 == 0 { "doomed" } else { "kept" };
            RawDocumentBuf::from_document(&doc! {"_id": i, "n": 0, "kind": kind}).unwrap()
        })
        .collect();
    engine.insert("e", "c", docs, true).unwrap();
    engine
        .create_indexes("e", "c", &[doc! {"key": {"n": 1}, "name": "n_1"}])
        .unwrap();
    let threads = 4;
    let rounds = 10;
    let barrier = std::sync::Barrier::new(threads + 2);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                barrier.wait();
                for _ in 0..rounds {
                    inc_all(&engine, "c");
                }
            });
        }
        // Deletes of some documents while the increments run.
        scope.spawn(|| {
            barrier.wait();
            let st = DeleteStatement {
                filter: doc! {"kind": "doomed"},
                limit: 0,
                collation: None,
                hint: None,
                let_vars: None,
            };
            engine.delete("e", "c", &[st], true).unwrap();
        });
        // Writes and reads of another collection.
        scope.spawn(|| {
            barrier.wait();
            for i in 0..200 {
                let raw = RawDocumentBuf::from_document(&doc! {"_id": i}).unwrap();
                engine.insert("e", "other", vec![raw], true).unwrap();
                inc_all(&engine, "other");
            }
        });
    });
    let all = engine.find("e", "c", &Default::default()).unwrap();
    assert_eq!(all.len(), 600);
    for d in &all {
        assert_eq!(d.get_str("kind"), Ok("kept"), "{d}");
        assert_eq!(d.get_i32("n"), Ok(threads as i32 * rounds), "{d}");
    }
    let report = engine.validate("e", "c").unwrap();
    assert_eq!(report.get_bool("valid"), Ok(true), "{report}");
    assert_eq!(
        engine
            .find("e", "other", &Default::default())
            .unwrap()
            .len(),
        200
    );
}

/// `killOp` with an `opid` from `currentOp` ends a long operation with
/// mongod's 11601 Interrupted; the server and the connection stay usable,
/// and `killOp` is refused outside `admin` as mongod refuses it.
#[test]
fn kill_op_stops_a_long_operation() {
    let mut setup = connect();
    fill(&mut setup, "kill", "c", 256);
    let mut slow = connect();
    send(
        &mut slow,
        doc! {"aggregate": "c", "pipeline": [{"$project": {"x": heavy()}}],
        "cursor": {}, "$db": "kill"},
    );
    let mut watch = connect();
    until_running(&mut watch, "kill.c", "command", true);
    let reply = call(
        &mut watch,
        doc! {"currentOp": 1, "ns": "kill.c", "op": "command", "$db": "admin"},
    );
    let opid = ok(&reply).get_array("inprog").unwrap()[0]
        .as_document()
        .unwrap()
        .get_i64("opid")
        .unwrap();
    let refused = call(&mut watch, doc! {"killOp": 1, "op": opid, "$db": "kill"});
    assert_eq!(refused.get_i32("code"), Ok(13), "{refused}");
    let reply = call(&mut watch, doc! {"killOp": 1, "op": opid, "$db": "admin"});
    assert_eq!(
        ok(&reply).get_str("info"),
        Ok("attempting to kill op"),
        "{reply}"
    );
    let ended = receive(&mut slow);
    assert_eq!(ended.get_f64("ok"), Ok(0.0), "{ended}");
    assert_eq!(ended.get_i32("code"), Ok(11601), "{ended}");
    assert_eq!(ended.get_str("codeName"), Ok("Interrupted"), "{ended}");
    ok(&call(&mut slow, doc! {"ping": 1, "$db": "admin"}));
    until_running(&mut watch, "kill.c", "command", false);
}
