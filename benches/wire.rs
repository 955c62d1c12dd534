//! The cost of one request to the wire server, measured on the server's
//! side: how much CPU `schemalab serve` spends, and how often its threads
//! sleep, to answer a `ping` and an indexed point lookup.
//!
//! The server runs in a child process (`schemalab serve --port 0`, which
//! prints its URI on stdout), so its CPU is read cleanly from
//! `/proc/<pid>/…` and the client's own work is not counted. The client is
//! a plain blocking OP_MSG client over a `TcpStream`: it sends one message
//! and waits for its reply, as a driver does on one connection.
//!
//! - `wire/roundtrip/{ping,point_lookup}`: client-side round trip.
//! - `wire/server_cpu/{ping,point_lookup}`: criterion's "time" here is the
//!   server's CPU per request (the run time of all its threads, from
//!   `/proc/<pid>/task/*/schedstat`, in nanoseconds), not wall time.
//! - A summary line per request kind over a fixed 20,000 requests: server
//!   CPU per request from `/proc/<pid>/stat` (utime + stime of the whole
//!   process, dead threads included, in clock ticks), voluntary and
//!   involuntary context switches per request summed over the server's
//!   threads, and the mean round trip.
//!
//! The point lookup is `find({_id: k}).limit(1)` on a collection of 10,000
//! documents, `k` cycling through them.
//!
//! With `SCHEMALAB_WIRE_BASELINE=<path to another schemalab binary>` the
//! same measurements run against that server too (as `<name>/baseline`),
//! so that a change to the request path is compared in one run.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bson::{Document, doc};
use criterion::{Criterion, criterion_group, criterion_main};

const DOCS: i64 = 10_000;
const SUMMARY_REQUESTS: u32 = 20_000;
const OP_MSG: i32 = 2013;

/// `schemalab serve --port 0` in a child process, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(binary: &str) -> Server {
        let mut child = Command::new(binary)
            .args(["serve", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // mongodb://127.0.0.1:PORT/?directConnection=true
        let port = line
            .trim()
            .trim_start_matches("mongodb://127.0.0.1:")
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        Server { child, port }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// utime + stime of the whole process, in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // Fields after the command name, which is in parentheses.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of stat, 12 and 13 here.
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    /// The run time of the server's live threads, in nanoseconds.
    fn cpu_ns(&self) -> u64 {
        self.per_thread(|task| {
            std::fs::read_to_string(format!("{task}/schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        })
    }

    /// (voluntary, involuntary) context switches of the server's live
    /// threads.
    fn context_switches(&self) -> (u64, u64) {
        let field = |name: &'static str| {
            move |task: &str| {
                std::fs::read_to_string(format!("{task}/status"))
                    .ok()
                    .and_then(|s| {
                        s.lines()
                            .find_map(|l| l.strip_prefix(name))
                            .and_then(|v| v.trim().parse().ok())
                    })
                    .unwrap_or(0)
            }
        };
        (
            self.per_thread(field("voluntary_ctxt_switches:")),
            self.per_thread(field("nonvoluntary_ctxt_switches:")),
        )
    }

    fn per_thread(&self, read: impl Fn(&str) -> u64) -> u64 {
        std::fs::read_dir(format!("/proc/{}/task", self.pid()))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| read(&e.path().to_string_lossy()))
            .sum()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A blocking OP_MSG client on one connection.
struct Client {
    stream: TcpStream,
    next_id: i32,
    reply: Vec<u8>,
}

impl Client {
    fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            stream,
            next_id: 1,
            reply: Vec::new(),
        }
    }

    /// Send an already encoded message and read its reply's bytes.
    fn round_trip(&mut self, message: &[u8]) -> &[u8] {
        self.stream.write_all(message).unwrap();
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).unwrap();
        let len = i32::from_le_bytes(len) as usize;
        self.reply.resize(len - 4, 0);
        self.stream.read_exact(&mut self.reply).unwrap();
        &self.reply
    }

    /// Run a command and return its reply body.
    fn command(&mut self, body: &Document) -> Document {
        let message = encode(self.next_id, body);
        self.next_id += 1;
        let reply = self.round_trip(&message);
        // Header after the length (12 bytes), flag bits (4), kind 0 (1).
        bson::from_slice(&reply[12 + 4 + 1..]).unwrap()
    }
}

/// An OP_MSG with one body section.
fn encode(request_id: i32, body: &Document) -> Vec<u8> {
    let body = bson::to_vec(body).unwrap();
    let len = 16 + 4 + 1 + body.len();
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(&(len as i32).to_le_bytes());
    out.extend_from_slice(&request_id.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&OP_MSG.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(0);
    out.extend_from_slice(&body);
    out
}

fn ping() -> Document {
    doc! {"ping": 1, "$db": "admin"}
}

fn point_lookup(k: i64) -> Document {
    doc! {"find": "c", "filter": {"_id": k}, "limit": 1, "singleBatch": true, "$db": "bench"}
}

/// The messages a request kind sends, encoded ahead so that the client does
/// as little as it can between requests.
fn messages(kind: &str) -> Vec<Vec<u8>> {
    match kind {
        "ping" => vec![encode(1, &ping())],
        _ => (0..DOCS)
            .step_by(7)
            .map(|k| encode(1, &point_lookup(k)))
            .collect(),
    }
}

fn setup(binary: &str) -> (Server, Client) {
    let server = Server::start(binary);
    let mut client = Client::connect(server.port);
    let docs: Vec<Document> = (0..DOCS)
        .map(|i| doc! {"_id": i, "a": i % 100, "b": format!("{i:020}")})
        .collect();
    let reply = client.command(&doc! {"insert": "c", "documents": docs, "$db": "bench"});
    assert_eq!(reply.get_i32("n").unwrap() as i64, DOCS, "{reply}");
    let reply = client.command(&point_lookup(42));
    let batch = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    assert_eq!(batch.len(), 1, "{reply}");
    (server, client)
}

fn wire(c: &mut Criterion) {
    let mut servers = vec![("current", env!("CARGO_BIN_EXE_schemalab").to_string())];
    if let Ok(baseline) = std::env::var("SCHEMALAB_WIRE_BASELINE") {
        servers.insert(0, ("baseline", baseline));
    }
    for (label, binary) in &servers {
        measure(c, label, binary);
    }
}

fn measure(c: &mut Criterion, label: &str, binary: &str) {
    let (server, mut client) = setup(binary);
    for kind in ["ping", "point_lookup"] {
        let name = format!("{kind}/{label}");
        let messages = messages(kind);
        let mut next = 0;
        let mut send = |client: &mut Client| {
            let m = &messages[next % messages.len()];
            next += 1;
            client.round_trip(m).len()
        };
        // Warm the server up (its worker threads, the blocking pool).
        for _ in 0..2_000 {
            send(&mut client);
        }

        let mut group = c.benchmark_group("wire/roundtrip");
        group.bench_function(&name, |b| b.iter(|| send(&mut client)));
        group.finish();

        let mut group = c.benchmark_group("wire/server_cpu");
        group.bench_function(&name, |b| {
            b.iter_custom(|iters| {
                let before = server.cpu_ns();
                for _ in 0..iters {
                    send(&mut client);
                }
                Duration::from_nanos(server.cpu_ns().saturating_sub(before))
            })
        });
        group.finish();

        let ticks_before = server.cpu_ticks();
        let (vol_before, invol_before) = server.context_switches();
        let started = Instant::now();
        for _ in 0..SUMMARY_REQUESTS {
            send(&mut client);
        }
        let elapsed = started.elapsed();
        let ticks = server.cpu_ticks() - ticks_before;
        let (vol, invol) = server.context_switches();
        let n = f64::from(SUMMARY_REQUESTS);
        // The kernel's USER_HZ is 100 on every Linux this runs on.
        let cpu_us = ticks as f64 * 10_000.0 / n;
        println!(
            "wire summary {name}: {SUMMARY_REQUESTS} requests, server CPU {cpu_us:.1} µs/request, \
             voluntary context switches {:.2}/request, involuntary {:.2}/request, \
             round trip {:.1} µs",
            (vol - vol_before) as f64 / n,
            (invol - invol_before) as f64 / n,
            elapsed.as_secs_f64() * 1e6 / n,
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = wire
}
criterion_main!(benches);
