//! Measures what issue 11 reported, against a running `schemalab serve`
//! (or any server) on 127.0.0.1: peak memory of the server process for a
//! `$graphLookup` over a 1,000-node cycle and for 20 open cursors with
//! `batchSize: 1` on a ~50 MB collection (and the resident memory one such
//! `find` adds), and how long a `ping` and an insert into another database
//! wait while a long read runs; and how long a `ping`, writes to another
//! collection and another database, and reads of another collection and of
//! the same one wait while a long `updateMany` runs (`write-stall`).
//!
//! `cargo run --release --example limits_measure -- <port> <server pid>
//! graph|cursors|stall|write-stall`; peak memory is the server's `VmHWM`.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bson::{Document, RawDocumentBuf, doc};
use schemalab_wire::frame;

fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port)).unwrap()
}

fn send(s: &mut TcpStream, body: Document) {
    let body = RawDocumentBuf::from_document(&body).unwrap();
    s.write_all(&frame::encode_msg_request(1, 0, &body, &[]))
        .unwrap();
}

fn receive(s: &mut TcpStream) -> Document {
    let mut header = [0u8; 16];
    s.read_exact(&mut header).unwrap();
    let len = i32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
    let mut rest = vec![0u8; len - 16];
    s.read_exact(&mut rest).unwrap();
    Document::from_reader(&rest[5..]).unwrap()
}

fn call(s: &mut TcpStream, body: Document) -> Document {
    send(s, body);
    receive(s)
}

fn peak_rss_kb(pid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn rss_kb(pid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn summary(reply: &Document) -> String {
    if reply.get_f64("ok") == Ok(1.0) {
        "ok".into()
    } else {
        format!(
            "error {} {}",
            reply.get_i32("code").unwrap_or(0),
            reply.get_str("codeName").unwrap_or("")
        )
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = args[1].parse().unwrap();
    let pid = &args[2];
    let mut s = connect(port);
    match args[3].as_str() {
        "graph" => {
            let docs: Vec<Document> = (0..1000)
                .map(|i| doc! {"_id": i, "next": (i + 1) % 1000, "pad": "x".repeat(100)})
                .collect();
            call(
                &mut s,
                doc! {"insert": "cycle", "documents": docs, "$db": "m"},
            );
            let before = peak_rss_kb(pid);
            let started = Instant::now();
            let reply = call(
                &mut s,
                doc! {"aggregate": "cycle", "cursor": {"batchSize": 1}, "$db": "m", "pipeline": [
                    {"$graphLookup": {"from": "cycle", "startWith": "$next",
                        "connectFromField": "next", "connectToField": "_id", "as": "reach"}},
                ]},
            );
            println!(
                "graphLookup over a 1000-node cycle: {} in {:?}; server VmHWM {} MB before, {} MB after",
                summary(&reply),
                started.elapsed(),
                before / 1024,
                peak_rss_kb(pid) / 1024
            );
        }
        "cursors" => {
            // 50,000 documents of ~1 KB: ~50 MB.
            for batch in 0..50 {
                let docs: Vec<Document> = (0..1000)
                    .map(|i| doc! {"_id": batch * 1000 + i, "pad": "y".repeat(1000)})
                    .collect();
                call(
                    &mut s,
                    doc! {"insert": "big", "documents": docs, "$db": "m"},
                );
            }
            let before = peak_rss_kb(pid);
            let rss_before = rss_kb(pid);
            let one = call(&mut s, doc! {"find": "big", "batchSize": 1, "$db": "m"});
            let mut ids = vec![one.get_document("cursor").unwrap().get_i64("id").unwrap()];
            println!(
                "one find({{}}) with batchSize 1 on 50 MB: server VmRSS {} MB before, {} MB after",
                rss_before / 1024,
                rss_kb(pid) / 1024
            );
            let rss = rss_kb(pid);
            let agg = call(
                &mut s,
                doc! {"aggregate": "big", "pipeline": [{"$set": {"x": 1}}],
                "cursor": {"batchSize": 1}, "$db": "m"},
            );
            ids.push(agg.get_document("cursor").unwrap().get_i64("id").unwrap());
            println!(
                "one aggregate [$set] with batchSize 1 on 50 MB: server VmRSS {} MB before, {} MB after",
                rss / 1024,
                rss_kb(pid) / 1024
            );
            for _ in 2..20 {
                let reply = call(&mut s, doc! {"find": "big", "batchSize": 1, "$db": "m"});
                ids.push(reply.get_document("cursor").unwrap().get_i64("id").unwrap());
            }
            let mut alive = 0;
            for id in &ids {
                let reply = call(
                    &mut s,
                    doc! {"getMore": id, "collection": "big", "batchSize": 1, "$db": "m"},
                );
                if reply.get_f64("ok") == Ok(1.0) {
                    alive += 1;
                }
            }
            println!(
                "20 cursors with batchSize 1 on 50 MB: {alive} still open; server VmHWM {} MB before, {} MB after; VmRSS {} MB before, {} MB after",
                before / 1024,
                peak_rss_kb(pid) / 1024,
                rss_before / 1024,
                rss_kb(pid) / 1024
            );
        }
        "stall" => {
            call(
                &mut s,
                doc! {"insert": "slow", "documents": [{"_id": 1}], "$db": "m"},
            );
            let mut other = connect(port);
            call(
                &mut other,
                doc! {"insert": "w", "documents": [{"_id": 0}], "$db": "other"},
            );
            send(
                &mut s,
                doc! {"aggregate": "slow", "cursor": {}, "$db": "m", "pipeline": [
                {"$project": {"n": {"$reduce": {"input": {"$range": [0, 3_000_000]},
                    "initialValue": 0, "in": {"$add": ["$$value", "$$this"]}}}}}]},
            );
            std::thread::sleep(Duration::from_millis(200));
            let started = Instant::now();
            let mut fresh = connect(port);
            call(&mut fresh, doc! {"ping": 1, "$db": "admin"});
            let ping = started.elapsed();
            let started = Instant::now();
            call(
                &mut other,
                doc! {"insert": "w", "documents": [{"_id": 1}], "$db": "other"},
            );
            let insert = started.elapsed();
            let started = Instant::now();
            let reply = receive(&mut s);
            println!(
                "during a long read: ping on a fresh connection {ping:?}, insert into another database {insert:?}; the read then took {:?} more ({})",
                started.elapsed(),
                summary(&reply)
            );
        }
        "write-stall" => {
            let docs: Vec<Document> = (0..150).map(|i| doc! {"_id": i, "n": 0}).collect();
            call(&mut s, doc! {"insert": "a", "documents": docs, "$db": "m"});
            call(
                &mut s,
                doc! {"insert": "b", "documents": [{"_id": 0}], "$db": "m"},
            );
            call(
                &mut s,
                doc! {"insert": "w", "documents": [{"_id": 0}], "$db": "other"},
            );
            // A pipeline update whose every document costs a `$reduce`.
            let started = Instant::now();
            send(
                &mut s,
                doc! {"update": "a", "$db": "m", "updates": [{"q": {}, "multi": true, "u": [
                {"$set": {"n": {"$reduce": {"input": {"$range": [0, 20_000]},
                    "initialValue": 0, "in": {"$add": ["$$value", "$$this"]}}}}}]}]},
            );
            std::thread::sleep(Duration::from_millis(200));
            // Each probe on its own connection, all at once.
            let probes: Vec<(&str, Document)> = vec![
                ("ping", doc! {"ping": 1, "$db": "admin"}),
                (
                    "insert into m.b",
                    doc! {"insert": "b", "documents": [{"_id": 1}], "$db": "m"},
                ),
                (
                    "insert into other.w",
                    doc! {"insert": "w", "documents": [{"_id": 1}], "$db": "other"},
                ),
                ("find on m.b", doc! {"find": "b", "$db": "m"}),
                ("find on m.a", doc! {"find": "a", "limit": 1, "$db": "m"}),
                (
                    "updateOne on m.a",
                    doc! {"update": "a", "updates": [{"q": {"_id": 149}, "u": {"$set": {"seen": true}}}], "$db": "m"},
                ),
            ];
            let handles: Vec<_> = probes
                .into_iter()
                .map(|(name, body)| {
                    let mut c = connect(port);
                    std::thread::spawn(move || {
                        let started = Instant::now();
                        let reply = call(&mut c, body);
                        format!("{name} {:?} ({})", started.elapsed(), summary(&reply))
                    })
                })
                .collect();
            let timings: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let reply = receive(&mut s);
            println!(
                "during a long updateMany on m.a (150 documents): {}; the update took {:?} in all ({})",
                timings.join(", "),
                started.elapsed(),
                summary(&reply)
            );
        }
        other => panic!("unknown scenario {other}"),
    }
}
