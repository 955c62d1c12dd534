//! Hostile input through the wire server: deep documents, long paths and
//! values built deep at run time get mongod's error reply, never an abort,
//! and the connection keeps serving. See `engine::limits` and COMPAT.md.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::support::raw::{Shared, call_raw as call};
use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};
use proptest::prelude::*;
use schemalab_wire::frame;

static SERVER: Shared = Shared::new();

fn connect() -> TcpStream {
    SERVER.connect(Duration::from_secs(60))
}

fn raw(d: Document) -> RawDocumentBuf {
    RawDocumentBuf::from_document(&d).unwrap()
}

/// `{a: {a: … {x: 1}}}` nested `depth` levels (the outer document is 1).
fn nested_raw(depth: usize) -> RawDocumentBuf {
    let mut d = rawdoc! {"x": 1};
    for _ in 1..depth {
        d = rawdoc! {"a": d};
    }
    d
}

fn long_path(parts: usize) -> String {
    vec!["a"; parts].join(".")
}

/// The error code of a reply: its own, or its first write error's.
fn code(reply: &Document) -> Option<i32> {
    if reply.get_f64("ok") == Ok(0.0) {
        return reply.get_i32("code").ok();
    }
    let errors = reply.get_array("writeErrors").ok()?;
    match errors.first()? {
        Bson::Document(e) => e.get_i32("code").ok(),
        _ => None,
    }
}

fn ping(stream: &mut TcpStream) {
    let reply = call(stream, &rawdoc! {"ping": 1, "$db": "admin"});
    assert_eq!(reply.get_f64("ok"), Ok(1.0));
}

#[derive(Debug, Clone)]
enum Hostile {
    DeepInsert(usize),
    DeepFilterValue(usize),
    DeepExpression(usize),
    LongUpdatePath(usize),
    LongFilterPath(usize),
    LongAddFieldsPath(usize),
    LongSortPath(usize),
    LongProjectionPath(usize),
    ReduceObject(i32),
    ReduceArray(i32),
    StackedProjects(usize),
}

fn hostile() -> impl Strategy<Value = Hostile> {
    prop_oneof![
        (181usize..3000).prop_map(Hostile::DeepInsert),
        (201usize..3000).prop_map(Hostile::DeepFilterValue),
        (201usize..3000).prop_map(Hostile::DeepExpression),
        (181usize..4000).prop_map(Hostile::LongUpdatePath),
        (181usize..4000).prop_map(Hostile::LongFilterPath),
        (201usize..4000).prop_map(Hostile::LongAddFieldsPath),
        (201usize..4000).prop_map(Hostile::LongSortPath),
        (201usize..4000).prop_map(Hostile::LongProjectionPath),
        (201i32..3000).prop_map(Hostile::ReduceObject),
        (201i32..3000).prop_map(Hostile::ReduceArray),
        (2usize..40).prop_map(Hostile::StackedProjects),
    ]
}

/// The request, and the code mongod answers it with.
fn request(h: &Hostile) -> (RawDocumentBuf, i32) {
    let agg = |pipeline: Vec<Document>| {
        raw(doc! {"aggregate": "c", "pipeline": pipeline, "cursor": {}, "$db": "lim"})
    };
    match h {
        Hostile::DeepInsert(depth) => {
            let mut body = rawdoc! {"insert": "c", "$db": "lim"};
            let mut docs = bson::RawArrayBuf::new();
            docs.push(nested_raw(*depth));
            body.append("documents", docs);
            // Over 199 levels the command itself is too deep off the wire.
            (body, 15)
        }
        Hostile::DeepFilterValue(depth) => {
            let mut body = rawdoc! {"find": "c", "$db": "lim"};
            body.append("filter", nested_raw(*depth));
            (body, 15)
        }
        Hostile::DeepExpression(depth) => {
            // Built as raw bytes: the test itself must not recurse.
            let mut e = rawdoc! {"$add": [1]};
            for _ in 0..*depth {
                let mut args = bson::RawArrayBuf::new();
                args.push(e);
                e = rawdoc! {"$add": args};
            }
            let mut project = rawdoc! {};
            project.append("x", e);
            let mut stages = bson::RawArrayBuf::new();
            stages.push(rawdoc! {"$project": project});
            let mut body = rawdoc! {"aggregate": "c", "cursor": {}, "$db": "lim"};
            body.append("pipeline", stages);
            (body, 15)
        }
        Hostile::LongUpdatePath(parts) => (
            raw(
                doc! {"update": "c", "updates": [{"q": {}, "u": {"$set": {long_path(*parts): 1}}}], "$db": "lim"},
            ),
            15,
        ),
        Hostile::LongFilterPath(parts) => (
            raw(doc! {"find": "c", "filter": {long_path(*parts): 1}, "$db": "lim"}),
            5729100,
        ),
        Hostile::LongAddFieldsPath(parts) => {
            (agg(vec![doc! {"$addFields": {long_path(*parts): 1}}]), 15)
        }
        Hostile::LongSortPath(parts) => (
            raw(doc! {"find": "c", "sort": {long_path(*parts): 1}, "$db": "lim"}),
            15,
        ),
        Hostile::LongProjectionPath(parts) => (
            raw(doc! {"find": "c", "projection": {long_path(*parts): 1}, "$db": "lim"}),
            15,
        ),
        Hostile::ReduceObject(n) => (
            agg(vec![doc! {"$project": {"x": {"$reduce": {
            "input": {"$range": [0, n]}, "initialValue": {}, "in": {"a": "$$value"}}}}}]),
            15,
        ),
        Hostile::ReduceArray(n) => (
            agg(vec![doc! {"$project": {"x": {"$reduce": {
            "input": {"$range": [0, n]}, "initialValue": [], "in": ["$$value"]}}}}]),
            15,
        ),
        Hostile::StackedProjects(stages) => {
            // Each stage wraps `x` 100 levels deeper.
            let mut wrap = Bson::String("$x".into());
            for _ in 0..100 {
                wrap = Bson::Document(doc! {"y": wrap});
            }
            let stage = doc! {"$project": {"x": wrap}};
            (agg(vec![stage; *stages]), 15)
        }
    }
}

fn seed(stream: &mut TcpStream) {
    let reply = call(
        stream,
        &raw(doc! {"insert": "c", "documents": [{"_id": 1, "x": 1}], "$db": "lim"}),
    );
    assert!(reply.get_f64("ok") == Ok(1.0), "{reply}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn deep_and_long_requests_get_error_replies(h in hostile()) {
        let mut stream = connect();
        seed(&mut stream);
        let (body, expected) = request(&h);
        let reply = call(&mut stream, &body);
        prop_assert_eq!(code(&reply), Some(expected), "{:?}: {}", h, reply);
        // The same connection still serves.
        ping(&mut stream);
    }
}

#[test]
fn storage_depth_is_mongods() {
    let mut stream = connect();
    let mut body = rawdoc! {"insert": "depth", "$db": "lim"};
    let mut docs = bson::RawArrayBuf::new();
    docs.push(nested_raw(180));
    docs.push(nested_raw(181));
    body.append("documents", docs);
    body.append("ordered", false);
    let reply = call(&mut stream, &body);
    assert_eq!(reply.get_i32("n"), Ok(1), "{reply}");
    let errors = reply.get_array("writeErrors").unwrap();
    let Bson::Document(e) = &errors[0] else {
        panic!()
    };
    assert_eq!(e.get_i32("index"), Ok(1));
    assert_eq!(e.get_i32("code"), Ok(15));
    assert_eq!(
        e.get_str("errmsg"),
        Ok("cannot insert document because it exceeds 180 levels of nesting")
    );
    // An update that would nest one level deeper than storage allows is
    // refused and the stored document is unchanged.
    let reply = call(
        &mut stream,
        &raw(
            doc! {"update": "depth", "updates": [{"q": {}, "u": {"$set": {long_path(180): {"b": 1}}}}], "$db": "lim"},
        ),
    );
    assert_eq!(code(&reply), Some(15), "{reply}");
    assert_eq!(
        reply.get_array("writeErrors").unwrap()[0]
            .as_document()
            .unwrap()
            .get_str("errmsg"),
        Ok("Document exceeds maximum nesting depth of 180")
    );
    let count = |filter: Document, stream: &mut TcpStream| {
        let reply = call(
            stream,
            &raw(doc! {"count": "depth", "query": filter, "$db": "lim"}),
        );
        reply.get_i32("n").unwrap()
    };
    let deepest = long_path(179);
    assert_eq!(count(doc! {format!("{deepest}.x"): 1}, &mut stream), 1);
    assert_eq!(
        count(
            doc! {format!("{deepest}.a"): {"$exists": true}},
            &mut stream
        ),
        0
    );
}

#[test]
fn a_frame_too_deep_is_answered_not_dropped() {
    let mut stream = connect();
    let mut body = rawdoc! {"ping": 1, "$db": "admin"};
    body.append("comment", nested_raw(5000));
    let reply = call(&mut stream, &body);
    assert_eq!(reply.get_i32("code"), Ok(15), "{reply}");
    assert_eq!(
        reply.get_str("errmsg"),
        Ok("BSONObj exceeds maximum nested object depth: 200")
    );
    ping(&mut stream);
}

#[test]
fn the_deepest_accepted_requests_are_served() {
    let mut stream = connect();
    seed(&mut stream);
    // An expression nested just under the request limit (the command, the
    // pipeline array, the stage and `$project` take four levels).
    let mut e = rawdoc! {"$add": [1]};
    for _ in 0..96 {
        let mut args = bson::RawArrayBuf::new();
        args.push(e);
        e = rawdoc! {"$add": args};
    }
    let mut project = rawdoc! {};
    project.append("x", e);
    let mut stages = bson::RawArrayBuf::new();
    stages.push(rawdoc! {"$project": project});
    let mut body = rawdoc! {"aggregate": "c", "cursor": {}, "$db": "lim"};
    body.append("pipeline", stages);
    let reply = call(&mut stream, &body);
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    // A filter value 190 levels deep.
    let mut body = rawdoc! {"find": "c", "$db": "lim"};
    body.append("filter", rawdoc! {"x": nested_raw(190)});
    let reply = call(&mut stream, &body);
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    // A value built by $reduce to 199 levels, then sorted and grouped.
    let reply = call(
        &mut stream,
        &raw(
            doc! {"aggregate": "c", "cursor": {}, "$db": "lim", "pipeline": [
                {"$project": {"x": {"$reduce": {"input": {"$range": [0, 198]}, "initialValue": [], "in": ["$$value"]}}}},
                {"$sort": {"x": 1}},
                {"$group": {"_id": "$x"}},
            ]},
        ),
    );
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
}

#[test]
fn a_regex_out_of_budget_is_an_error_naming_it() {
    let mut stream = connect();
    let reply = call(
        &mut stream,
        &raw(doc! {"insert": "re", "documents": [{"s": "a".repeat(64)}], "$db": "lim"}),
    );
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    let reply = call(
        &mut stream,
        &raw(doc! {"find": "re", "filter": {"s": {"$regex": r"^(a|a)*\1b$"}}, "$db": "lim"}),
    );
    assert_eq!(code(&reply), Some(51156), "{reply}");
    assert!(
        reply.get_str("errmsg").unwrap().contains(r"/^(a|a)*\1b$/"),
        "{reply}"
    );
    ping(&mut stream);
}

#[test]
fn namespace_rules_are_mongods() {
    let mut stream = connect();
    let reply = call(&mut stream, &rawdoc! {"dropDatabase": 1, "$db": "admin"});
    assert_eq!(code(&reply), Some(20), "{reply}");
    assert_eq!(
        reply.get_str("errmsg"),
        Ok("Dropping the 'admin' database is prohibited.")
    );
    // `local` is refused only while replication is active; a standalone
    // mongod, which the engine is, drops it.
    let reply = call(
        &mut stream,
        &raw(doc! {"insert": "startup_log", "documents": [{}], "$db": "local"}),
    );
    assert_eq!(reply.get_i32("n"), Ok(1), "{reply}");
    let reply = call(&mut stream, &rawdoc! {"dropDatabase": 1, "$db": "local"});
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    // Reserved system collections cannot be written, legal ones can.
    let reply = call(
        &mut stream,
        &raw(doc! {"insert": "system.foo", "documents": [{"a": 1}], "$db": "admin"}),
    );
    assert_eq!(code(&reply), Some(73), "{reply}");
    let reply = call(
        &mut stream,
        &raw(doc! {"insert": "system.js", "documents": [{"_id": "f"}], "$db": "lim"}),
    );
    assert_eq!(reply.get_i32("n"), Ok(1), "{reply}");
    let reply = call(
        &mut stream,
        &raw(doc! {"create": "system.indexes", "$db": "lim"}),
    );
    assert_eq!(code(&reply), Some(73), "{reply}");
    // Reading a system collection is not writing it.
    let reply = call(
        &mut stream,
        &raw(doc! {"find": "system.version", "$db": "admin"}),
    );
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    // `lim.` plus 250 bytes is 254: allowed; one more over 255 is not.
    let fits = "c".repeat(250);
    let reply = call(
        &mut stream,
        &raw(doc! {"create": fits.as_str(), "$db": "lim"}),
    );
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    let long = "c".repeat(252);
    let reply = call(
        &mut stream,
        &raw(doc! {"insert": long.as_str(), "documents": [{}], "$db": "lim"}),
    );
    assert_eq!(code(&reply), Some(73), "{reply}");
    assert!(
        reply
            .get_str("errmsg")
            .unwrap()
            .starts_with("Fully qualified namespace is too long."),
        "{reply}"
    );
}

#[test]
fn op_query_serves_only_the_handshake() {
    let mut stream = connect();
    let query = |stream: &mut TcpStream, body: RawDocumentBuf| {
        stream
            .write_all(&frame::encode_query(9, "admin.$cmd", &body))
            .unwrap();
        let mut header = [0u8; 16];
        stream.read_exact(&mut header).unwrap();
        let len = i32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
        let mut rest = vec![0u8; len - 16];
        stream.read_exact(&mut rest).unwrap();
        // OP_REPLY: flags, cursor id, starting from, number returned.
        Document::from_reader(&rest[20..]).unwrap()
    };
    let reply = query(&mut stream, rawdoc! {"isMaster": 1});
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    let reply = query(&mut stream, rawdoc! {"find": "c", "$db": "lim"});
    assert_eq!(reply.get_i32("code"), Ok(352), "{reply}");
    ping(&mut stream);
}

#[test]
fn large_inserts_report_errors_at_their_batch_position() {
    // Inserts take the lock a chunk at a time; positions and the ordered
    // stop must not notice.
    let mut stream = connect();
    let docs = |coll: &str| {
        let docs: Vec<Document> = (0..600)
            .map(|i| doc! {"_id": if i == 400 { 7 } else { i }})
            .collect();
        doc! {"insert": coll, "documents": docs, "$db": "lim"}
    };
    let mut unordered = docs("chunked_u");
    unordered.insert("ordered", false);
    let reply = call(&mut stream, &raw(unordered));
    assert_eq!(reply.get_i32("n"), Ok(599), "{reply}");
    let errors = reply.get_array("writeErrors").unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].as_document().unwrap().get_i32("index"), Ok(400));
    let reply = call(&mut stream, &raw(docs("chunked_o")));
    assert_eq!(reply.get_i32("n"), Ok(400), "{reply}");
    let errors = reply.get_array("writeErrors").unwrap();
    assert_eq!(errors[0].as_document().unwrap().get_i32("index"), Ok(400));
}

/// A cursor belongs to the session (`lsid`) that opened it: a `getMore`
/// from another session, or from none, is refused as mongod refuses it
/// (50738, 50737), and one outside any session cannot be continued in a
/// session (50736). The cursor still serves its own session afterwards.
#[test]
fn get_more_is_refused_from_another_session() {
    let mut stream = connect();
    let docs: Vec<Document> = (0..10).map(|i| doc! {"_id": i}).collect();
    let reply = call(
        &mut stream,
        &raw(doc! {"insert": "sessions", "documents": docs, "$db": "lim"}),
    );
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    let lsid = |b: u8| doc! {"id": bson::Binary {subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![b; 16]}};
    let open = |stream: &mut TcpStream, session: Option<Document>| {
        let mut find = doc! {"find": "sessions", "batchSize": 1, "$db": "lim"};
        if let Some(s) = session {
            find.insert("lsid", s);
        }
        let reply = call(stream, &raw(find));
        reply.get_document("cursor").unwrap().get_i64("id").unwrap()
    };
    let more = |stream: &mut TcpStream, id: i64, session: Option<Document>| {
        let mut get_more =
            doc! {"getMore": id, "collection": "sessions", "batchSize": 1, "$db": "lim"};
        if let Some(s) = session {
            get_more.insert("lsid", s);
        }
        call(stream, &raw(get_more))
    };
    let id = open(&mut stream, Some(lsid(1)));
    let reply = more(&mut stream, id, Some(lsid(2)));
    assert_eq!(code(&reply), Some(50738), "{reply}");
    assert_eq!(reply.get_str("codeName"), Ok("Location50738"));
    assert_eq!(
        reply.get_str("errmsg").unwrap(),
        format!(
            "Cannot run getMore on cursor {id}, which was created in session \
             01010101-0101-0101-0101-010101010101 - 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= -  - , \
             in session 02020202-0202-0202-0202-020202020202 - 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= -  - "
        )
    );
    assert_eq!(code(&more(&mut stream, id, None)), Some(50737));
    // Its own session goes on reading it.
    let reply = more(&mut stream, id, Some(lsid(1)));
    assert_eq!(reply.get_f64("ok"), Ok(1.0), "{reply}");
    let id = open(&mut stream, None);
    assert_eq!(code(&more(&mut stream, id, Some(lsid(3)))), Some(50736));
    assert_eq!(more(&mut stream, id, None).get_f64("ok"), Ok(1.0));
}
