//! The operations the server is running, for `currentOp` and `killOp`.
//!
//! Every command registers itself for as long as it runs (a guard removes
//! it, panics included), with its connection, namespace and command
//! document, so that a client can see what else is running, as mongod's
//! `currentOp` shows; tests use it to prove that one operation is still
//! running while others complete.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use bson::{Bson, Document, doc};
use parking_lot::Mutex;

use schemalab_engine::limits::approx_size;

/// How much of a command `currentOp` shows: mongod truncates a command
/// document over 1 KB to `$truncated`.
const COMMAND_SHOWN_BYTES: u64 = 1024;

/// Every running operation of one server.
#[derive(Debug, Default)]
pub struct OpTable {
    next: AtomicU32,
    running: Mutex<BTreeMap<u32, Running>>,
    /// `next` when [`OpTable::idle_since_last_look`] last looked.
    looked: AtomicU32,
    /// Uptime, connections and operation counters, for `serverStatus`.
    pub counters: ServerCounters,
}

/// What `serverStatus` reports of the server's life: when it started, its
/// connections, and the commands run by kind (`opcounters`, counted per
/// command).
#[derive(Debug)]
pub struct ServerCounters {
    pub started: Instant,
    pub started_at: bson::DateTime,
    pub connections_current: AtomicU32,
    pub connections_total: AtomicU32,
    /// insert, query, update, delete, getmore, command.
    pub opcounters: [std::sync::atomic::AtomicU64; 6],
}

impl Default for ServerCounters {
    fn default() -> Self {
        ServerCounters {
            started: Instant::now(),
            started_at: bson::DateTime::now(),
            connections_current: AtomicU32::new(0),
            connections_total: AtomicU32::new(0),
            opcounters: Default::default(),
        }
    }
}

/// The names of [`ServerCounters::opcounters`], in order.
pub const OPCOUNTERS: [&str; 6] = ["insert", "query", "update", "delete", "getmore", "command"];

/// Counts a connection as current until dropped.
#[derive(Debug)]
pub struct Connected(Arc<OpTable>);

impl Drop for Connected {
    fn drop(&mut self) {
        self.0
            .counters
            .connections_current
            .fetch_sub(1, Ordering::Relaxed);
    }
}

/// One running operation.
#[derive(Debug, Clone)]
struct Running {
    connection_id: i32,
    client: Option<SocketAddr>,
    ns: String,
    op: &'static str,
    command: Document,
    started: Instant,
    /// Set by `killOp`; the operation checks it at its checkpoints.
    killed: Arc<AtomicBool>,
}

/// Removes its operation from the table when dropped.
#[derive(Debug)]
pub struct Registered {
    table: Arc<OpTable>,
    opid: u32,
    killed: Arc<AtomicBool>,
}

impl Registered {
    /// The flag `killOp` sets, for the operation to check.
    pub fn kill_flag(&self) -> Arc<AtomicBool> {
        self.killed.clone()
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.table.running.lock().remove(&self.opid);
    }
}

/// mongod's `op` for a command: the CRUD commands by their kind, anything
/// else `command`.
fn op_kind(name: &str) -> &'static str {
    match name {
        "insert" => "insert",
        "update" | "findAndModify" | "findandmodify" => "update",
        "delete" => "remove",
        "find" => "query",
        "getMore" => "getmore",
        _ => "command",
    }
}

/// The command document as `currentOp` shows it: whole up to about 1 KB,
/// else `$truncated` (as mongod shows a large command). Sized before it is
/// copied, so that a big batch costs no copy.
fn shown(command: &Document) -> Document {
    let mut size = 0u64;
    for (k, v) in command {
        let big_array = matches!(v, Bson::Array(items) if items.len() > 64);
        size += k.len() as u64
            + if big_array {
                u64::MAX / 2
            } else {
                approx_size(v)
            };
        if size > COMMAND_SHOWN_BYTES {
            let name = command.keys().next().cloned().unwrap_or_default();
            return doc! {"$truncated": format!("{{ {name}: … }}")};
        }
    }
    command.clone()
}

impl OpTable {
    /// A client connected; it counts as current until the guard drops.
    pub fn connected(self: &Arc<Self>) -> Connected {
        self.counters
            .connections_current
            .fetch_add(1, Ordering::Relaxed);
        self.counters
            .connections_total
            .fetch_add(1, Ordering::Relaxed);
        Connected(self.clone())
    }

    /// Register a command run on connection `connection_id` until the
    /// returned guard is dropped.
    pub fn register(
        self: &Arc<Self>,
        connection_id: i32,
        client: Option<SocketAddr>,
        db: &str,
        command: &Document,
    ) -> Registered {
        let name = command.keys().next().map(String::as_str).unwrap_or("");
        let ns = match command.get(name) {
            Some(Bson::String(coll)) => format!("{db}.{coll}"),
            _ => format!("{db}.$cmd"),
        };
        let counter = match op_kind(name) {
            "insert" => 0,
            "query" => 1,
            "update" => 2,
            "remove" => 3,
            "getmore" => 4,
            _ => 5,
        };
        self.counters.opcounters[counter].fetch_add(1, Ordering::Relaxed);
        let opid = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let killed = Arc::new(AtomicBool::new(false));
        let running = Running {
            killed: killed.clone(),
            connection_id,
            client,
            ns,
            op: op_kind(name),
            command: shown(command),
            started: Instant::now(),
        };
        self.running.lock().insert(opid, running);
        Registered {
            table: self.clone(),
            opid,
            killed,
        }
    }

    /// Whether nothing is running and no command started since the last
    /// call (the first call counts every command since the start): the
    /// server has been idle at least since then.
    pub fn idle_since_last_look(&self) -> bool {
        let started = self.next.load(Ordering::Relaxed);
        let before = self.looked.swap(started, Ordering::Relaxed);
        started == before && self.running.lock().is_empty()
    }

    /// `killOp`: mark operation `opid` killed, if it is running; it stops
    /// at its next checkpoint with 11601 Interrupted.
    pub fn kill(&self, opid: u32) -> bool {
        match self.running.lock().get(&opid) {
            Some(r) => {
                r.killed.store(true, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// The `inprog` entries, as mongod's `currentOp` reports them.
    pub fn in_progress(&self) -> Vec<Document> {
        let running: Vec<(u32, Running)> = self
            .running
            .lock()
            .iter()
            .map(|(id, r)| (*id, r.clone()))
            .collect();
        running
            .into_iter()
            .map(|(opid, r)| {
                let elapsed = r.started.elapsed();
                let mut entry = doc! {
                    "type": "op",
                    "host": "127.0.0.1",
                    "desc": format!("conn{}", r.connection_id),
                    "connectionId": r.connection_id,
                    "active": true,
                    "opid": i64::from(opid),
                    "secs_running": i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX),
                    "microsecs_running": i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX),
                    "op": r.op,
                    "ns": r.ns,
                    "command": r.command,
                };
                if let Some(client) = r.client {
                    entry.insert("client", client.to_string());
                }
                entry
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn operations_are_listed_while_they_run() {
        let table = Arc::new(OpTable::default());
        let guard = table.register(3, None, "d", &doc! {"update": "c", "updates": []});
        let listed = table.in_progress();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].get_str("ns").unwrap(), "d.c");
        assert_eq!(listed[0].get_str("op").unwrap(), "update");
        assert_eq!(listed[0].get_i32("connectionId").unwrap(), 3);
        drop(guard);
        assert!(table.in_progress().is_empty());
        let _ping = table.register(3, None, "admin", &doc! {"ping": 1});
        assert_eq!(table.in_progress()[0].get_str("ns").unwrap(), "admin.$cmd");
    }

    /// Idle means a whole period without a command: one that ran and
    /// ended since the last look counts, and so does one still running.
    #[test]
    fn idle_means_no_command_since_the_last_look() {
        let table = Arc::new(OpTable::default());
        assert!(table.idle_since_last_look());
        drop(table.register(1, None, "d", &doc! {"ping": 1}));
        assert!(!table.idle_since_last_look(), "one ran since");
        assert!(table.idle_since_last_look());
        let running = table.register(1, None, "d", &doc! {"find": "c"});
        assert!(!table.idle_since_last_look());
        assert!(!table.idle_since_last_look(), "still running");
        drop(running);
        assert!(table.idle_since_last_look());
    }
}
