//! End-to-end benchmarks of the embedded engine through the official driver,
//! measuring what the lessons promise: bulk load speed, point-lookup latency
//! and memory per byte of data.
//!
//! - `insert_many_1m`: 1,000,000 ~100-byte documents by `insert_many`
//!   (target >= 200,000 docs/s; criterion reports elements/s).
//! - `insert_200k_plain` / `insert_200k_validated`: 200,000 of them into a
//!   plain collection and into one with a `$jsonSchema` validator they all
//!   meet; the difference is the cost of validation (no target).
//! - `find_one_indexed`: `find_one` on an indexed field (target median
//!   <= 200 µs); also printed as the median of 10,000 timed lookups.
//! - `memory_after_load`: resident memory the `schemalab serve` process
//!   grew by during the load (from `/proc/<pid>/statm`, read once the
//!   server has given back what it freed, 1.5 s after the load, and also at
//!   once) against the raw BSON bytes loaded (target <= 3x).
//!
//! - `scan`: a COLLSCAN inside the engine (its public `find`, no driver)
//!   over 1,000,000 small documents `{_id, a, b: 20 chars}` (49 bytes of
//!   BSON) with a filter `{a: -1}` that matches nothing, against a plain
//!   Rust loop reading field `a` from the same raw BSON; the ratio of their
//!   docs/s is printed (target >= 0.5), both measured in the same run.
//!
//! - `codec`: the engine's BSON codec (`schemalab_engine::codec`) against
//!   the `bson` crate's own conversions, on a community `post` (a
//!   1,500-character body, an author sub-document, tags, a comment array;
//!   about 2 KB) and on the small `{_id, a, b}` of `scan`: `decode` against
//!   `Document::try_from(&RawDocument)`, `encode` against
//!   `RawDocumentBuf::from_document`, `size` against `to_writer` into a
//!   buffer (what `$bsonSize` and the sort's memory accounting did).
//!
//! Benchmarks whose name no command-line filter selects skip their set-up
//! too (`cargo bench --bench engine -- scan` loads nothing else).
//!
//! The server runs on its own runtime thread (`spawn_background`), as the
//! TUI runs it; the client on a separate runtime, as an application would.

#![allow(clippy::unwrap_used)]

use std::future::IntoFuture;
use std::time::{Duration, Instant};

use bson::{Document, RawDocumentBuf, doc, oid::ObjectId};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use mongodb::{Client, Collection, IndexModel};
use schemalab_engine::{Engine, FindRequest};
use schemalab_wire::{BackgroundServer, spawn_background};
use tokio::runtime::Runtime;

const LOAD: usize = 1_000_000;
const LOOKUPS: usize = 10_000;
const CITIES: [&str; 4] = ["Lisbon__", "Oslo____", "Nairobi_", "Quito___"];

/// A ~100-byte document (100 bytes exactly with its ObjectId `_id`).
fn document(i: usize) -> Document {
    doc! {
        "_id": ObjectId::new(),
        "k": i as i64,
        "name": format!("user-{i:08}"),
        "city": CITIES[i % CITIES.len()],
        "score": (i % 1000) as f64 / 10.0,
        "active": i.is_multiple_of(2),
    }
}

fn documents(n: usize) -> Vec<Document> {
    (0..n).map(document).collect()
}

struct Setup {
    _server: BackgroundServer,
    rt: Runtime,
    client: Client,
}

fn setup() -> Setup {
    let server = spawn_background(Engine::new()).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client = rt.block_on(Client::with_uri_str(server.uri())).unwrap();
    Setup {
        _server: server,
        rt,
        client,
    }
}

/// Whether a command-line filter selects the benchmark `name` (none given
/// selects every one), so that unselected benchmarks skip their set-up.
fn wanted(name: &str) -> bool {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

const SCAN: usize = 1_000_000;

/// `{_id, a, b}`: 49 bytes of BSON.
fn small_document(i: usize) -> RawDocumentBuf {
    RawDocumentBuf::from_document(&doc! {
        "_id": i as i32,
        "a": (i % 1000) as i32,
        "b": format!("{:020}", i),
    })
    .unwrap()
}

/// The plain loop a scan is held to: read `a` from each raw document and
/// compare it with the filter's value.
fn raw_field_read(docs: &[RawDocumentBuf]) -> usize {
    docs.iter()
        .filter(|d| matches!(d.get_i32("a"), Ok(-1)))
        .count()
}

fn collscan(engine: &Engine, req: &FindRequest) -> usize {
    engine.find("bench", "scan", req).unwrap().len()
}

fn scan(c: &mut Criterion) {
    if !wanted("scan/collscan_unmatched_1m") && !wanted("scan/raw_field_read_1m") {
        return;
    }
    let docs: Vec<RawDocumentBuf> = (0..SCAN).map(small_document).collect();
    assert_eq!(docs[0].as_bytes().len(), 49);
    let engine = Engine::new();
    engine.insert("bench", "scan", docs.clone(), true).unwrap();
    let req = FindRequest {
        filter: doc! {"a": -1},
        ..FindRequest::default()
    };
    assert_eq!(collscan(&engine, &req), 0);

    // The ratio, from interleaved runs so that both see the same machine.
    let best = |f: &dyn Fn() -> usize| {
        (0..5)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed()
            })
            .min()
            .unwrap()
    };
    let (mut scan_t, mut raw_t) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        scan_t = scan_t.min(best(&|| collscan(&engine, &req)));
        raw_t = raw_t.min(best(&|| raw_field_read(&docs)));
    }
    let rate = |t: Duration| SCAN as f64 / t.as_secs_f64();
    println!(
        "scan: COLLSCAN {:.2}M docs/s, raw field read {:.2}M docs/s, ratio {:.3} (target >= 0.5)",
        rate(scan_t) / 1e6,
        rate(raw_t) / 1e6,
        rate(scan_t) / rate(raw_t)
    );

    let mut group = c.benchmark_group("scan");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(SCAN as u64));
    group.bench_function("collscan_unmatched_1m", |b| {
        b.iter(|| collscan(&engine, &req))
    });
    group.bench_function("raw_field_read_1m", |b| b.iter(|| raw_field_read(&docs)));
    group.finish();
}

fn insert_many(c: &mut Criterion) {
    if !wanted("load/insert_many_1m") {
        return;
    }
    let s = setup();
    let docs = documents(LOAD);
    let coll: Collection<Document> = s.client.database("bench").collection("load");
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Elements(LOAD as u64));
    group.bench_function("insert_many_1m", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                s.rt.block_on(coll.drop().into_future()).unwrap();
                let start = Instant::now();
                s.rt.block_on(coll.insert_many(docs.iter()).into_future())
                    .unwrap();
                total += start.elapsed();
            }
            total
        });
    });
    group.finish();
}

/// Documents per run of the validation benchmarks.
const VALIDATED: usize = 200_000;

/// `insert_many` of [`VALIDATED`] documents into a plain collection and
/// into one with a `$jsonSchema` validator every document meets (types,
/// `required`, a bound, an `enum`, a `pattern`): the difference is what
/// validation costs per write.
fn insert_validated(c: &mut Criterion) {
    if !wanted("load/insert_200k") {
        return;
    }
    let s = setup();
    let docs = documents(VALIDATED);
    let db = s.client.database("bench");
    let schema = doc! {"$jsonSchema": {
        "bsonType": "object",
        "required": ["k", "name", "city", "score", "active"],
        "properties": {
            "k": {"bsonType": "long", "minimum": 0},
            "name": {"bsonType": "string", "pattern": "^user-"},
            "city": {"enum": CITIES.to_vec()},
            "score": {"bsonType": "double", "minimum": 0, "maximum": 100},
            "active": {"bsonType": "bool"},
        },
    }};
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(VALIDATED as u64));
    for (name, validator) in [
        ("insert_200k_plain", None),
        ("insert_200k_validated", Some(schema)),
    ] {
        let coll: Collection<Document> = db.collection(name);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    s.rt.block_on(coll.drop().into_future()).unwrap();
                    let mut create = doc! {"create": name};
                    if let Some(v) = &validator {
                        create.insert("validator", v.clone());
                    }
                    s.rt.block_on(db.run_command(create).into_future()).unwrap();
                    let start = Instant::now();
                    s.rt.block_on(coll.insert_many(docs.iter()).into_future())
                        .unwrap();
                    total += start.elapsed();
                }
                total
            });
        });
    }
    group.finish();
}

fn find_one_indexed(c: &mut Criterion) {
    if !wanted("find_one_indexed") {
        return;
    }
    let s = setup();
    let coll: Collection<Document> = s.client.database("bench").collection("lookup");
    let n = 100_000;
    s.rt.block_on(async {
        coll.insert_many(documents(n)).await.unwrap();
        coll.create_index(IndexModel::builder().keys(doc! {"k": 1}).build())
            .await
            .unwrap();
    });
    // A fixed pseudo-random walk over the keys, so every run looks up the
    // same values.
    let key = |i: usize| ((i * 7919) % n) as i64;

    let mut times: Vec<Duration> = (0..LOOKUPS)
        .map(|i| {
            let start = Instant::now();
            let found =
                s.rt.block_on(coll.find_one(doc! {"k": key(i)}).into_future())
                    .unwrap();
            let took = start.elapsed();
            assert!(found.is_some());
            took
        })
        .collect();
    times.sort();
    println!(
        "find_one_indexed: {LOOKUPS} lookups, median {:?}, p99 {:?} (target median <= 200µs)",
        times[LOOKUPS / 2],
        times[LOOKUPS * 99 / 100]
    );

    let mut i = 0;
    c.bench_function("find_one_indexed", |b| {
        b.iter(|| {
            i += 1;
            s.rt.block_on(coll.find_one(doc! {"k": key(i)}).into_future())
                .unwrap()
        });
    });
}

/// Resident set size in bytes of process `pid`, from `/proc/<pid>/statm`
/// (Linux; pages of 4 KiB, the size on every platform this runs on).
fn resident_bytes(pid: u32) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// The server's resident bytes once it has given back what it freed: the
/// allocator keeps freed pages for up to a second, and the server's memory
/// monitor returns them at its first pass that finds the server idle since
/// the pass before (`engine::release`). The pass after the last request
/// may still see it, so the memory is given back within two passes (2 s):
/// the bench waits a little longer. A figure read at once also counts what
/// was freed in the last seconds (the load's transient buffers), so both
/// are printed.
fn settled_resident_bytes(pid: u32) -> Option<u64> {
    std::thread::sleep(Duration::from_millis(2500));
    resident_bytes(pid)
}

/// Kills the server process when the measurement ends, however it ends.
struct ServeProcess(std::process::Child);

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `schemalab serve` in its own process (so that its memory is its own),
/// and a client that has pinged it.
fn serve() -> (ServeProcess, Runtime, Client) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_schemalab"))
        .args(["serve", "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = ServeProcess(child);
    let mut uri = String::new();
    std::io::BufReader::new(stdout).read_line(&mut uri).unwrap();
    let rt = Runtime::new().unwrap();
    let client = rt.block_on(Client::with_uri_str(uri.trim())).unwrap();
    rt.block_on(
        client
            .database("admin")
            .run_command(doc! {"ping": 1})
            .into_future(),
    )
    .unwrap();
    (server, rt, client)
}

/// The server's own memory: `schemalab serve` runs as its own process, so
/// the driver's copies of the documents and its batches are not counted.
fn memory_after_load(_c: &mut Criterion) {
    if !wanted("memory_after_load") {
        return;
    }
    let (server, rt, client) = serve();
    let pid = server.0.id();
    let coll: Collection<Document> = client.database("bench").collection("memory");
    let docs = documents(LOAD);
    let raw_bytes: usize = docs.iter().map(|d| bson::to_vec(d).unwrap().len()).sum();
    let before = resident_bytes(pid);
    rt.block_on(coll.insert_many(docs.iter()).into_future())
        .unwrap();
    let at_once = resident_bytes(pid);
    let after = settled_resident_bytes(pid);
    match (before, at_once, after) {
        (Some(before), Some(at_once), Some(after)) => {
            let grown = after.saturating_sub(before);
            println!(
                "memory_after_load: {LOAD} docs, raw BSON {:.1} MiB, server resident grew {:.1} MiB \
                 (to {:.1} MiB; {:.1} MiB read at once), ratio {:.2}x (target <= 3x)",
                raw_bytes as f64 / 1048576.0,
                grown as f64 / 1048576.0,
                after as f64 / 1048576.0,
                at_once.saturating_sub(before) as f64 / 1048576.0,
                grown as f64 / raw_bytes as f64
            );
        }
        _ => println!("memory_after_load: /proc/<pid>/statm unavailable"),
    }
}

/// Issue 15's memory targets on 1M documents of 49 bytes (`{_id, a, b}`):
/// the server's resident growth after loading them, divided by their BSON
/// bytes (target <= 2.0x); then what opening `find({})` and running a
/// `$group` over them add (target: no more than 2x the data size each).
fn memory_small(_c: &mut Criterion) {
    if !wanted("memory_small") {
        return;
    }
    use futures_util::TryStreamExt;
    let (server, rt, client) = serve();
    let pid = server.0.id();
    let coll: Collection<RawDocumentBuf> = client.database("bench").collection("small");
    let mib = |b: u64| b as f64 / 1048576.0;
    let Some(before) = resident_bytes(pid) else {
        println!("memory_small: /proc/<pid>/statm unavailable");
        return;
    };
    let mut bytes = 0u64;
    for chunk in 0..SCAN / 10_000 {
        let docs: Vec<RawDocumentBuf> = (chunk * 10_000..(chunk + 1) * 10_000)
            .map(small_document)
            .collect();
        bytes += docs.iter().map(|d| d.as_bytes().len() as u64).sum::<u64>();
        rt.block_on(coll.insert_many(docs).into_future()).unwrap();
    }
    let at_once = resident_bytes(pid).unwrap_or(0).saturating_sub(before);
    let loaded = settled_resident_bytes(pid).unwrap_or(0);
    let grown = loaded.saturating_sub(before);
    println!(
        "memory_small: {SCAN} docs, BSON {:.1} MiB, server resident grew {:.1} MiB, ratio {:.2}x \
         (target <= 2.0x; read at once: {:.1} MiB, {:.2}x)",
        mib(bytes),
        mib(grown),
        grown as f64 / bytes as f64,
        mib(at_once),
        at_once as f64 / bytes as f64
    );
    let mut cursor = rt
        .block_on(coll.find(doc! {}).batch_size(1).into_future())
        .unwrap();
    let first = rt.block_on(cursor.try_next()).unwrap();
    assert!(first.is_some());
    let open = resident_bytes(pid).unwrap_or(0);
    println!(
        "memory_small: find({{}}) open with its first batch adds {:.1} MiB ({:.2}x the data, target <= 2x)",
        mib(open.saturating_sub(loaded)),
        open.saturating_sub(loaded) as f64 / bytes as f64
    );
    drop(cursor);
    let groups: Vec<Document> = rt
        .block_on(async {
            coll.clone_with_type::<Document>()
                .aggregate([doc! {"$group": {"_id": "$a", "n": {"$sum": 1}}}])
                .await?
                .try_collect()
                .await
        })
        .unwrap();
    assert_eq!(groups.len(), 1000);
    let peak = proc_peak(pid).unwrap_or(0);
    println!(
        "memory_small: $group over them: server peak {:.1} MiB, {:.2}x the data above the loaded size (target <= 2x)",
        mib(peak),
        peak.saturating_sub(loaded) as f64 / bytes as f64
    );
}

/// The peak resident size (`VmHWM`) of process `pid`, in bytes.
fn proc_peak(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A community post, about 2 KB of BSON.
fn post() -> Document {
    let body: String = "Schema design is a question of access patterns. "
        .chars()
        .cycle()
        .take(1500)
        .collect();
    doc! {
        "_id": ObjectId::new(),
        "title": "Embedding or referencing comments?",
        "body": body,
        "author": {"_id": ObjectId::new(), "name": "Ada Lovelace", "karma": 4210_i64},
        "tags": ["schema", "embedding", "one-to-many"],
        "score": 17.5,
        "published": bson::DateTime::from_millis(1_764_000_000_000),
        "comments": (0..3).map(|i| doc! {
            "by": format!("reader-{i}"),
            "text": "Measured it: embedding wins for this read pattern.",
            "votes": i,
        }).collect::<Vec<_>>(),
    }
}

fn codec(c: &mut Criterion) {
    use schemalab_engine::codec;
    let cases = [
        ("post", post()),
        ("small", doc! {"_id": 1, "a": 7, "b": format!("{:020}", 1)}),
    ];
    if !cases.iter().any(|(name, _)| {
        ["decode", "encode", "size"]
            .iter()
            .any(|op| wanted(&format!("codec/{op}_{name}")))
    }) {
        return;
    }
    let mut group = c.benchmark_group("codec");
    for (name, doc) in &cases {
        let raw = RawDocumentBuf::from_document(doc).unwrap();
        assert_eq!(codec::encode(doc).unwrap(), raw);
        assert_eq!(codec::size(doc), raw.as_bytes().len());
        println!("codec: {name} is {} bytes", raw.as_bytes().len());
        group.bench_function(format!("decode_{name}/ours"), |b| {
            b.iter(|| codec::decode(std::hint::black_box(&raw)).unwrap())
        });
        group.bench_function(format!("decode_{name}/bson"), |b| {
            b.iter(|| Document::try_from(std::hint::black_box(raw.as_ref())).unwrap())
        });
        group.bench_function(format!("encode_{name}/ours"), |b| {
            b.iter(|| codec::encode(std::hint::black_box(doc)).unwrap())
        });
        group.bench_function(format!("encode_{name}/bson"), |b| {
            b.iter(|| RawDocumentBuf::from_document(std::hint::black_box(doc)).unwrap())
        });
        group.bench_function(format!("size_{name}/ours"), |b| {
            b.iter(|| codec::try_size(std::hint::black_box(doc)).unwrap())
        });
        group.bench_function(format!("size_{name}/bson"), |b| {
            b.iter(|| {
                let mut buf = Vec::new();
                std::hint::black_box(doc).to_writer(&mut buf).unwrap();
                buf.len()
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    codec,
    scan,
    insert_many,
    insert_validated,
    find_one_indexed,
    memory_after_load,
    memory_small
);
criterion_main!(benches);
