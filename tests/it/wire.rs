//! The wire server through the official driver and through raw bytes.

use std::net::SocketAddr;

use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};
use futures_util::TryStreamExt;
use mongodb::Client;
use mongodb::error::{ErrorKind, WriteFailure};
use schemalab_engine::Engine;
use schemalab_wire::frame::{self, DocumentSequence};
use schemalab_wire::{ServerHandle, serve, spawn_background};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start() -> (ServerHandle, Client) {
    let server = serve("127.0.0.1:0".parse().unwrap(), Engine::new())
        .await
        .unwrap();
    let client = Client::with_uri_str(server.uri()).await.unwrap();
    (server, client)
}

fn command_code(err: &mongodb::error::Error) -> i32 {
    match err.kind.as_ref() {
        ErrorKind::Command(c) => c.code,
        other => panic!("expected a command error, got {other:?}"),
    }
}

#[tokio::test]
async fn handshake_and_ping() {
    let (server, client) = start().await;
    let reply = client
        .database("admin")
        .run_command(doc! {"ping": 1})
        .await
        .unwrap();
    assert_eq!(reply.get("ok"), Some(&Bson::Double(1.0)));
    let hello = client
        .database("admin")
        .run_command(doc! {"hello": 1})
        .await
        .unwrap();
    assert_eq!(hello.get_i32("maxWireVersion").unwrap(), 21);
    assert!(hello.get_bool("isWritablePrimary").unwrap());
    assert!(!hello.contains_key("topologyVersion"));
    assert!(!hello.contains_key("compression"));
    assert!(hello.get_i32("connectionId").is_ok());
    server.shutdown();
}

#[tokio::test]
async fn build_info_fields() {
    let (_server, client) = start().await;
    let info = client
        .database("admin")
        .run_command(doc! {"buildInfo": 1})
        .await
        .unwrap();
    assert_eq!(info.get_str("version").unwrap(), "7.0.12");
    let array = info.get_array("versionArray").unwrap();
    assert_eq!(
        array,
        &vec![
            Bson::Int32(7),
            Bson::Int32(0),
            Bson::Int32(12),
            Bson::Int32(0)
        ]
    );
    assert!(info.get_array("modules").unwrap().is_empty());
    assert_eq!(info.get_i32("bits").unwrap(), 64);
    assert!(info.get_str("gitVersion").is_ok());
    assert_eq!(
        info.get_document("schemalab")
            .unwrap()
            .get_str("engine")
            .unwrap(),
        "schemalab embedded engine"
    );
    let fcv = client
        .database("admin")
        .run_command(doc! {"getParameter": 1, "featureCompatibilityVersion": 1})
        .await
        .unwrap();
    assert_eq!(
        fcv.get_document("featureCompatibilityVersion")
            .unwrap()
            .get_str("version")
            .unwrap(),
        "7.0"
    );
    let log = client
        .database("admin")
        .run_command(doc! {"getLog": "startupWarnings"})
        .await
        .unwrap();
    assert!(log.get_array("log").unwrap().is_empty());
}

#[tokio::test]
async fn unknown_command_is_59() {
    let (_server, client) = start().await;
    let err = client
        .database("test")
        .run_command(doc! {"frobnicate": 1})
        .await
        .unwrap_err();
    assert_eq!(command_code(&err), 59);
    assert!(err.to_string().contains("no such command: 'frobnicate'"));
}

#[tokio::test]
async fn transactions_are_refused_with_20() {
    let (_server, client) = start().await;
    let err = client
        .database("test")
        .run_command(doc! {
            "find": "c", "txnNumber": 1_i64, "startTransaction": true, "autocommit": false,
        })
        .await
        .unwrap_err();
    assert_eq!(command_code(&err), 20);
    // The driver rewrites exactly this error, recognised by its code 20
    // and a message starting "Transaction numbers".
    assert!(
        err.to_string()
            .contains("does not support retryable writes"),
        "{err}"
    );
}

#[tokio::test]
async fn aggregate_needs_a_cursor_and_explain_answers() {
    let (server, client) = start().await;
    let db = client.database("test");
    let err = db
        .run_command(doc! {"aggregate": "c", "pipeline": []})
        .await
        .unwrap_err();
    assert_eq!(command_code(&err), 9);
    db.collection::<Document>("c")
        .insert_many((0..5).map(|i| doc! {"_id": i, "k": i % 2}))
        .await
        .unwrap();
    let explained = db
        .run_command(
            doc! {"explain": {"find": "c", "filter": {"k": 1}}, "verbosity": "executionStats"},
        )
        .await
        .unwrap();
    assert_eq!(explained.get_str("explainVersion").unwrap(), "1");
    let stats = explained.get_document("executionStats").unwrap();
    assert_eq!(stats.get_i32("nReturned").unwrap(), 2);
    assert_eq!(stats.get_i32("totalDocsExamined").unwrap(), 5);
    let planner = explained.get_document("queryPlanner").unwrap();
    assert_eq!(
        planner
            .get_document("winningPlan")
            .unwrap()
            .get_str("stage")
            .unwrap(),
        "COLLSCAN"
    );
    // serverInfo names the address this server really listens on.
    let info = explained.get_document("serverInfo").unwrap();
    assert_eq!(
        info.get_i32("port").unwrap(),
        i32::from(server.local_addr().port())
    );
    assert_eq!(info.get_str("host").unwrap(), "127.0.0.1");
    // `aggregate` with `explain: true` and no cursor answers at
    // queryPlanner verbosity.
    let agg = db
        .run_command(doc! {"aggregate": "c", "pipeline": [{"$match": {"k": 0}}], "explain": true})
        .await
        .unwrap();
    assert!(
        agg.contains_key("queryPlanner") || agg.contains_key("stages"),
        "{agg}"
    );
    let err = db
        .run_command(doc! {"find": "c", "filter": "nope"})
        .await
        .unwrap_err();
    assert_eq!(command_code(&err), 14);
}

#[tokio::test]
async fn unknown_cursor_is_43() {
    let (_server, client) = start().await;
    let err = client
        .database("test")
        .run_command(doc! {"getMore": 12345_i64, "collection": "c"})
        .await
        .unwrap_err();
    assert_eq!(command_code(&err), 43);
}

#[tokio::test]
async fn insert_many_then_find_across_get_mores() {
    let (_server, client) = start().await;
    let coll = client.database("shop").collection::<Document>("items");
    let docs: Vec<Document> = (0..250).map(|i| doc! {"_id": i, "i": i}).collect();
    let inserted = coll.insert_many(docs).await.unwrap();
    assert_eq!(inserted.inserted_ids.len(), 250);

    let found: Vec<Document> = coll
        .find(doc! {})
        .sort(doc! {"i": -1})
        .limit(200)
        .batch_size(30)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let got: Vec<i32> = found.iter().map(|d| d.get_i32("i").unwrap()).collect();
    let want: Vec<i32> = (50..250).rev().collect();
    assert_eq!(got, want);

    // The protocol underneath: a first batch of 30, the rest by getMore.
    let db = client.database("shop");
    let first = db
        .run_command(doc! {"find": "items", "batchSize": 30})
        .await
        .unwrap();
    let cursor = first.get_document("cursor").unwrap();
    assert_eq!(cursor.get_str("ns").unwrap(), "shop.items");
    assert_eq!(cursor.get_array("firstBatch").unwrap().len(), 30);
    let id = cursor.get_i64("id").unwrap();
    assert_ne!(id, 0);
    let mut seen = 30;
    let mut id = id;
    while id != 0 {
        let more = db
            .run_command(doc! {"getMore": id, "collection": "items", "batchSize": 100})
            .await
            .unwrap();
        let cursor = more.get_document("cursor").unwrap();
        seen += cursor.get_array("nextBatch").unwrap().len();
        id = cursor.get_i64("id").unwrap();
    }
    assert_eq!(seen, 250);

    let names = client.list_database_names().await.unwrap();
    assert!(names.contains(&"shop".to_string()), "{names:?}");
}

/// A `find` over more than 16 MiB of small documents: each `getMore`'s
/// batch counts every array element's overhead (type byte and index key),
/// so its reply stays under the 16 MiB + 16 KiB limit instead of failing
/// with 10334 BSONObjectTooLarge, and every document comes back once.
#[tokio::test]
async fn find_over_sixteen_mebibytes_of_small_documents() {
    let (_server, client) = start().await;
    let coll = client.database("big").collection::<Document>("small");
    // 41 bytes each: 430,000 of them are 17.6 MB, more than one batch, and
    // a full batch of ~409,000 carries ~3.2 MB of element overhead.
    let n = 430_000;
    let docs: Vec<Document> = (0..n)
        .map(|i| doc! {"_id": i, "s": "x".repeat(19)})
        .collect();
    assert_eq!(bson::to_vec(&docs[0]).unwrap().len(), 41);
    coll.insert_many(docs).await.unwrap();
    let mut cursor = coll.find(doc! {}).await.unwrap();
    let mut next = 0;
    while let Some(d) = cursor.try_next().await.unwrap() {
        assert_eq!(d.get_i32("_id").unwrap(), next);
        next += 1;
    }
    assert_eq!(next, n);
}

#[tokio::test]
async fn kill_cursors() {
    let (_server, client) = start().await;
    let coll = client.database("k").collection::<Document>("c");
    coll.insert_many((0..10).map(|i| doc! {"i": i}))
        .await
        .unwrap();
    let db = client.database("k");
    let first = db
        .run_command(doc! {"find": "c", "batchSize": 2})
        .await
        .unwrap();
    let id = first.get_document("cursor").unwrap().get_i64("id").unwrap();
    assert_ne!(id, 0);
    let killed = db
        .run_command(doc! {"killCursors": "c", "cursors": [id, 77_i64]})
        .await
        .unwrap();
    assert_eq!(
        killed.get_array("cursorsKilled").unwrap(),
        &vec![Bson::Int64(id)]
    );
    assert_eq!(
        killed.get_array("cursorsNotFound").unwrap(),
        &vec![Bson::Int64(77)]
    );
    let err = db
        .run_command(doc! {"getMore": id, "collection": "c"})
        .await
        .unwrap_err();
    assert_eq!(command_code(&err), 43);
}

#[tokio::test]
async fn duplicate_key_is_a_write_error() {
    let (_server, client) = start().await;
    let coll = client.database("d").collection::<Document>("c");
    coll.insert_one(doc! {"_id": 1}).await.unwrap();
    let err = coll.insert_one(doc! {"_id": 1}).await.unwrap_err();
    match err.kind.as_ref() {
        ErrorKind::Write(WriteFailure::WriteError(e)) => assert_eq!(e.code, 11000),
        other => panic!("expected a write error, got {other:?}"),
    }
    let err = coll
        .insert_many(vec![doc! {"_id": 2}, doc! {"_id": 1}])
        .await
        .unwrap_err();
    match err.kind.as_ref() {
        ErrorKind::InsertMany(e) => {
            let errors = e.write_errors.as_ref().unwrap();
            assert_eq!(errors[0].index, 1);
            assert_eq!(errors[0].code, 11000);
        }
        other => panic!("expected an insert-many error, got {other:?}"),
    }
}

#[test]
fn background_server_and_loopback_only() {
    let server = spawn_background(Engine::new()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut raw = Raw::connect(server.local_addr()).await;
        let reply = raw
            .msg(1, 0, rawdoc! {"ping": 1, "$db": "admin"}, &[])
            .await;
        assert_eq!(reply.get_f64("ok").unwrap(), 1.0);
        let refused = serve("0.0.0.0:0".parse().unwrap(), Engine::new()).await;
        assert_eq!(
            refused.unwrap_err().kind(),
            std::io::ErrorKind::PermissionDenied
        );
    });
    server.shutdown();
}

/// A client that speaks raw bytes.
struct Raw {
    stream: TcpStream,
}

impl Raw {
    async fn connect(addr: SocketAddr) -> Self {
        Self {
            stream: TcpStream::connect(addr).await.unwrap(),
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
    }

    /// Read one reply: (responseTo, opCode, body after the header).
    async fn read(&mut self) -> (i32, i32, Vec<u8>) {
        let mut header = [0u8; 16];
        self.stream.read_exact(&mut header).await.unwrap();
        let field = |i: usize| i32::from_le_bytes(header[i..i + 4].try_into().unwrap());
        let mut body = vec![0u8; field(0) as usize - 16];
        self.stream.read_exact(&mut body).await.unwrap();
        (field(8), field(12), body)
    }

    /// Read an OP_MSG reply to request `id`.
    async fn read_msg(&mut self, id: i32) -> Document {
        let (response_to, op, body) = self.read().await;
        assert_eq!(op, frame::OP_MSG);
        assert_eq!(response_to, id);
        assert_eq!(&body[..5], &[0, 0, 0, 0, 0], "flags 0, kind 0");
        Document::from_reader(&body[5..]).unwrap()
    }

    async fn msg(
        &mut self,
        id: i32,
        flags: u32,
        body: RawDocumentBuf,
        seqs: &[DocumentSequence],
    ) -> Document {
        self.send(&frame::encode_msg_request(id, flags, &body, seqs))
            .await;
        self.read_msg(id).await
    }

    /// Whether the server closed the connection.
    async fn closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.stream.read(&mut byte).await, Ok(0) | Err(_))
    }
}

async fn raw_server() -> (ServerHandle, Raw) {
    let server = serve("127.0.0.1:0".parse().unwrap(), Engine::new())
        .await
        .unwrap();
    let raw = Raw::connect(server.local_addr()).await;
    (server, raw)
}

#[tokio::test]
async fn op_query_is_master_gets_op_reply() {
    let (_server, mut raw) = raw_server().await;
    let query = rawdoc! {"ismaster": 1, "helloOk": true, "client": {"driver": {"name": "x"}}};
    raw.send(&frame::encode_query(41, "admin.$cmd", &query))
        .await;
    let (response_to, op, body) = raw.read().await;
    assert_eq!(op, frame::OP_REPLY);
    assert_eq!(response_to, 41);
    assert_eq!(
        i32::from_le_bytes(body[16..20].try_into().unwrap()),
        1,
        "numberReturned"
    );
    let reply = Document::from_reader(&body[20..]).unwrap();
    assert!(reply.get_bool("ismaster").unwrap());
    assert_eq!(reply.get_i32("maxWireVersion").unwrap(), 21);
    assert_eq!(reply.get_i32("maxMessageSizeBytes").unwrap(), 48_000_000);
    // The connection goes on in OP_MSG.
    let ping = raw
        .msg(42, 0, rawdoc! {"ping": 1, "$db": "admin"}, &[])
        .await;
    assert_eq!(ping.get_f64("ok").unwrap(), 1.0);
}

#[tokio::test]
async fn op_msg_with_checksum_and_more_to_come() {
    let (_server, mut raw) = raw_server().await;
    let reply = raw
        .msg(
            1,
            frame::FLAG_CHECKSUM_PRESENT,
            rawdoc! {"ping": 1, "$db": "admin"},
            &[],
        )
        .await;
    assert_eq!(reply.get_f64("ok").unwrap(), 1.0);
    // moreToCome: no reply to request 2, so the next reply answers 3.
    raw.send(&frame::encode_msg_request(
        2,
        frame::FLAG_MORE_TO_COME,
        &rawdoc! {"ping": 1, "$db": "admin"},
        &[],
    ))
    .await;
    let reply = raw
        .msg(3, 0, rawdoc! {"ping": 1, "$db": "admin"}, &[])
        .await;
    assert_eq!(reply.get_f64("ok").unwrap(), 1.0);
}

#[tokio::test]
async fn malformed_messages_close_only_their_connection() {
    let (server, mut raw) = raw_server().await;
    let mut compressed = frame::encode_msg_request(1, 0, &rawdoc! {"ping": 1, "$db": "a"}, &[]);
    compressed[12..16].copy_from_slice(&frame::OP_COMPRESSED.to_le_bytes());
    raw.send(&compressed).await;
    assert!(raw.closed().await);
    let mut other = Raw::connect(server.local_addr()).await;
    let bad_flags = frame::encode_msg_request(1, 1 << 7, &rawdoc! {"ping": 1}, &[]);
    other.send(&bad_flags).await;
    assert!(other.closed().await);
    let mut fresh = Raw::connect(server.local_addr()).await;
    let reply = fresh
        .msg(9, 0, rawdoc! {"ping": 1, "$db": "admin"}, &[])
        .await;
    assert_eq!(reply.get_f64("ok").unwrap(), 1.0);
    // A missing $db is a command error, not a closed connection.
    let reply = fresh.msg(10, 0, rawdoc! {"ping": 1}, &[]).await;
    assert_eq!(reply.get_f64("ok").unwrap(), 0.0);
    assert_eq!(reply.get_i32("code").unwrap(), 40571);
}

#[tokio::test]
async fn kind_one_section_insert() {
    let (_server, mut raw) = raw_server().await;
    let seq = DocumentSequence {
        identifier: "documents".into(),
        documents: vec![rawdoc! {"_id": 1, "x": "a"}, rawdoc! {"_id": 2, "x": "b"}],
    };
    let reply = raw
        .msg(
            1,
            0,
            rawdoc! {"insert": "seq", "ordered": true, "$db": "raw"},
            &[seq],
        )
        .await;
    assert_eq!(reply.get_i32("n").unwrap(), 2, "{reply}");
    let found = raw
        .msg(
            2,
            0,
            rawdoc! {"find": "seq", "sort": {"_id": 1}, "$db": "raw"},
            &[],
        )
        .await;
    let batch = found
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    assert_eq!(batch.len(), 2);
    assert_eq!(batch[1].as_document().unwrap().get_str("x").unwrap(), "b");
    // A sequence clashing with a body field is refused.
    let seq = DocumentSequence {
        identifier: "documents".into(),
        documents: vec![rawdoc! {"_id": 3}],
    };
    let reply = raw
        .msg(
            3,
            0,
            rawdoc! {"insert": "seq", "documents": [], "$db": "raw"},
            &[seq],
        )
        .await;
    assert_eq!(reply.get_f64("ok").unwrap(), 0.0);
}

#[tokio::test]
async fn writes_reads_and_catalog_through_the_driver() {
    use mongodb::IndexModel;
    use mongodb::options::ReturnDocument;

    let (_server, client) = start().await;
    let db = client.database("lab");
    let coll = db.collection::<Document>("people");
    coll.insert_many((0..20).map(|i| doc! {"_id": i, "age": i * 5, "team": i % 3}))
        .await
        .unwrap();

    let upd = coll
        .update_many(doc! {"age": {"$gte": 50}}, doc! {"$set": {"senior": true}})
        .await
        .unwrap();
    assert_eq!((upd.matched_count, upd.modified_count), (10, 10));
    let ups = coll
        .update_one(doc! {"_id": 100}, doc! {"$set": {"age": 1}})
        .upsert(true)
        .await
        .unwrap();
    assert_eq!(ups.upserted_id, Some(Bson::Int32(100)));

    let before = coll
        .find_one_and_update(doc! {"_id": 1}, doc! {"$inc": {"age": 1}})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(before.get_i32("age").unwrap(), 5);
    let after = coll
        .find_one_and_update(doc! {"_id": 1}, doc! {"$inc": {"age": 1}})
        .return_document(ReturnDocument::After)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.get_i32("age").unwrap(), 7);
    let removed = coll.find_one_and_delete(doc! {"_id": 100}).await.unwrap();
    assert!(removed.is_some());

    let n = db
        .run_command(doc! {"count": "people", "query": {"team": 0}})
        .await
        .unwrap();
    assert_eq!(n.get_i32("n").unwrap(), 7);
    assert_eq!(coll.estimated_document_count().await.unwrap(), 20);
    let mut teams = coll.distinct("team", doc! {}).await.unwrap();
    teams.sort_by_key(|b| b.as_i32());
    assert_eq!(teams, vec![Bson::Int32(0), Bson::Int32(1), Bson::Int32(2)]);
    let mut groups: Vec<Document> = coll
        .aggregate(vec![doc! {"$match": {"team": 0}}])
        .batch_size(2)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    groups.sort_by_key(|d| d.get_i32("_id").unwrap());
    assert_eq!(groups.len(), 7);
    assert_eq!(groups[1].get_i32("_id").unwrap(), 3);

    let deleted = coll.delete_many(doc! {"senior": true}).await.unwrap();
    assert_eq!(deleted.deleted_count, 10);

    let created = coll
        .create_index(IndexModel::builder().keys(doc! {"age": 1}).build())
        .await
        .unwrap();
    assert_eq!(created.index_name, "age_1");
    let names = coll.list_index_names().await.unwrap();
    assert_eq!(names.len(), 2, "{names:?}");
    let dropped = db
        .run_command(doc! {"dropIndexes": "people", "index": "age_1"})
        .await
        .unwrap();
    assert_eq!(dropped.get_i32("nIndexesWas").unwrap(), 2);

    db.create_collection("empty").await.unwrap();
    let mut colls = db.list_collection_names().await.unwrap();
    colls.sort();
    assert_eq!(colls, vec!["empty".to_string(), "people".to_string()]);
    client
        .database("admin")
        .run_command(doc! {"renameCollection": "lab.empty", "to": "lab.full"})
        .await
        .unwrap();
    let err = db
        .run_command(doc! {"renameCollection": "lab.full", "to": "lab.x"})
        .await
        .unwrap_err();
    assert_eq!(command_code(&err), 13);
    let stats = db.run_command(doc! {"collStats": "people"}).await.unwrap();
    assert_eq!(stats.get_f64("ok").unwrap(), 1.0);
    let stats = db.run_command(doc! {"dbStats": 1}).await.unwrap();
    assert_eq!(stats.get_f64("ok").unwrap(), 1.0);
    db.collection::<Document>("full").drop().await.unwrap();
    assert_eq!(
        db.list_collection_names().await.unwrap(),
        vec!["people".to_string()]
    );
    db.drop().await.unwrap();
    assert!(
        !client
            .list_database_names()
            .await
            .unwrap()
            .contains(&"lab".to_string())
    );
}

/// Replace `{db}` in every string of `v` with the case's database name.
fn with_db(v: &Bson, db: &str) -> Bson {
    match v {
        Bson::String(s) => Bson::String(s.replace("{db}", db)),
        Bson::Document(d) => {
            Bson::Document(d.iter().map(|(k, x)| (k.clone(), with_db(x, db))).collect())
        }
        Bson::Array(a) => Bson::Array(a.iter().map(|x| with_db(x, db)).collect()),
        other => other.clone(),
    }
}

/// `want` holds in `got`: every field of an expected document is present
/// and equal (numbers by value, nested documents and arrays recursively,
/// arrays element by element).
fn holds(want: &Bson, got: &Bson) -> bool {
    let num = |b: &Bson| match b {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    };
    match (want, got) {
        (Bson::Document(w), Bson::Document(g)) => {
            w.iter().all(|(k, v)| g.get(k).is_some_and(|x| holds(v, x)))
        }
        (Bson::Array(w), Bson::Array(g)) => {
            w.len() == g.len() && w.iter().zip(g).all(|(a, b)| holds(a, b))
        }
        _ => match (num(want), num(got)) {
            (Some(a), Some(b)) => a == b,
            _ => want == got,
        },
    }
}

/// Run one command fixture against a fresh database; `Err` says how it
/// failed.
async fn run_command_case(client: &Client, case: &Document, db: &str) -> Result<(), String> {
    let database = client.database(db);
    for setup in case.get_array("setup").map(|a| a.as_slice()).unwrap_or(&[]) {
        let Bson::Document(cmd) = with_db(setup, db) else {
            return Err("setup entries are documents".into());
        };
        database
            .run_command(cmd.clone())
            .await
            .map_err(|e| format!("setup {cmd} failed: {e}"))?;
    }
    let Bson::Document(cmd) = with_db(case.get("command").ok_or("no command")?, db) else {
        return Err("command is a document".into());
    };
    let got = database.run_command(cmd).await;
    if let Some(code) = case.get("error") {
        let want = code.as_i32().ok_or("error is an int32 code")?;
        let err = match got {
            Ok(reply) => return Err(format!("got {reply}, want error {want}")),
            Err(e) => e,
        };
        let ErrorKind::Command(c) = err.kind.as_ref() else {
            return Err(format!("not a command error: {err}"));
        };
        if c.code != want {
            return Err(format!(
                "error {} {} ({}), want {want}",
                c.code, c.code_name, c.message
            ));
        }
        if let Ok(name) = case.get_str("codeName")
            && c.code_name != name
        {
            return Err(format!("codeName {}, want {name}", c.code_name));
        }
        if let Bson::String(m) = with_db(case.get("message").unwrap_or(&Bson::Null), db)
            && c.message != m
        {
            return Err(format!("message\n   got  {:?}\n   want {m:?}", c.message));
        }
        if let Ok(part) = case.get_str("contains")
            && !c.message.contains(part)
        {
            return Err(format!("message {:?} lacks {part:?}", c.message));
        }
    } else {
        let reply = got.map_err(|e| format!("unexpected error: {e}"))?;
        let want = with_db(case.get("reply").ok_or("no reply expectation")?, db);
        if !holds(&want, &Bson::Document(reply.clone())) {
            return Err(format!("\n   got  {reply}\n   want {want}"));
        }
    }
    for then in case.get_array("then").map(|a| a.as_slice()).unwrap_or(&[]) {
        let Bson::Document(then) = with_db(then, db) else {
            return Err("then entries are documents".into());
        };
        let cmd = then.get_document("command").map_err(|e| e.to_string())?;
        let reply = database
            .run_command(cmd.clone())
            .await
            .map_err(|e| format!("then {cmd} failed: {e}"))?;
        let want = then.get("reply").ok_or("then needs a reply")?;
        if !holds(want, &Bson::Document(reply.clone())) {
            return Err(format!("then {cmd}:\n   got  {reply}\n   want {want}"));
        }
    }
    Ok(())
}

/// `tests/commands/*.json`: commands sent through the driver, each with
/// mongod 7.0's error code, codeName and message, or the reply fields it
/// must carry (`{db}` stands for the case's fresh database).
#[tokio::test]
async fn command_fixtures() {
    let (_server, client) = start().await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/commands");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut n = 0;
    for f in files {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let Bson::Array(cases) = Bson::try_from(json).unwrap() else {
            panic!("{}: expected an array", f.display());
        };
        for case in cases {
            let case = case.as_document().unwrap().clone();
            n += 1;
            let db = format!("cmdfix{n}");
            if let Err(e) = run_command_case(&client, &case, &db).await {
                failures.push(format!("{}: {e}", case.get_str("name").unwrap()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(n >= 20, "only {n} cases");
}

#[tokio::test]
async fn find_with_min_and_max_through_the_driver() {
    let (_server, client) = start().await;
    let coll = client.database("t").collection::<Document>("mm");
    coll.insert_many((0..10).map(|i| doc! {"_id": i, "a": i % 5}))
        .await
        .unwrap();
    coll.create_index(mongodb::IndexModel::builder().keys(doc! {"a": 1}).build())
        .await
        .unwrap();
    // [1, 3) over {a: 1}: a = 1 and a = 2, two documents each.
    let got: Vec<Document> = coll
        .find(doc! {})
        .min(doc! {"a": 1})
        .max(doc! {"a": 3})
        .hint(mongodb::options::Hint::Keys(doc! {"a": 1}))
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut ids: Vec<i32> = got.iter().map(|d| d.get_i32("_id").unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![1, 2, 6, 7]);
    // Without a hint mongod refuses with 51173.
    let err = coll.find(doc! {}).min(doc! {"a": 1}).await.unwrap_err();
    assert_eq!(command_code(&err), 51173);
}

/// A command that runs long on one connection never holds up the others:
/// with more long commands running than the server has async workers,
/// `ping`, `hello` (the drivers' heartbeat) and an `_id` lookup on another
/// connection still answer at once.
#[test]
fn long_commands_do_not_starve_other_connections() {
    use std::time::{Duration, Instant};
    let server = spawn_background(Engine::new()).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = Client::with_uri_str(server.uri()).await.unwrap();
        let db = client.database("starve");
        let docs: Vec<Document> = (0..40).map(|i| doc! {"_id": i}).collect();
        db.collection::<Document>("c")
            .insert_many(docs)
            .await
            .unwrap();
        // Each document sums a long range: CPU-bound work in one command.
        let long = doc! {
            "aggregate": "c",
            "pipeline": [{"$project": {"s": {"$reduce": {
                "input": {"$range": [0, 20_000]},
                "initialValue": 0,
                "in": {"$add": ["$$value", "$$this"]},
            }}}}],
            "cursor": {},
        };
        let started = Instant::now();
        db.run_command(long.clone()).await.unwrap();
        let alone = started.elapsed();

        // Three at once, each on its own connection, against two workers.
        let mut running = Vec::new();
        for _ in 0..3 {
            let client = Client::with_uri_str(server.uri()).await.unwrap();
            let long = long.clone();
            running.push(tokio::spawn(async move {
                client.database("starve").run_command(long).await.unwrap();
                Instant::now()
            }));
        }
        tokio::time::sleep(alone / 10).await;
        let mut slowest = Duration::ZERO;
        let mut samples = 0;
        let ends_by = started.elapsed() + alone;
        while started.elapsed() < ends_by && !running.iter().all(|t| t.is_finished()) {
            for command in [
                doc! {"ping": 1},
                doc! {"hello": 1},
                doc! {"find": "c", "filter": {"_id": 7}, "limit": 1, "singleBatch": true},
            ] {
                let sent = Instant::now();
                db.run_command(command).await.unwrap();
                slowest = slowest.max(sent.elapsed());
                samples += 1;
            }
        }
        for task in running {
            task.await.unwrap();
        }
        assert!(
            samples >= 3,
            "only {samples} requests while the long ones ran"
        );
        assert!(
            slowest < alone / 2,
            "a light request took {slowest:?} while long commands ran (one alone takes {alone:?})"
        );
    });
    server.shutdown();
}
