//! The listener, one task per connection, and the TTL monitor.
//!
//! Shaped like mini-redis: the accept loop and every connection task
//! `select!` on a broadcast shutdown signal. A connection runs its commands
//! one after another (the wire protocol has no pipelining within a
//! connection); a framing error closes that connection only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;

use super::cmd::{self, CommandDoc, Session};
use super::connection::Connection;
use super::cursor::{CursorTable, cursor_timeout_of};
use super::dispatch::{self, Weight};
use super::frame::{self, Frame, Request};
use super::ops::OpTable;
use schemalab_engine::Engine;

/// How often expired TTL documents are deleted, as mongod's
/// `ttlMonitorSleepSecs`.
pub const TTL_MONITOR_PERIOD: Duration = Duration::from_secs(60);

/// State every connection of one server shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub engine: Engine,
    pub cursors: Arc<CursorTable>,
    /// The operations running, for `currentOp`.
    pub ops: Arc<OpTable>,
    /// Source of `connectionId`s (and of reply request ids, which only need
    /// to be distinct).
    next_id: AtomicI32,
    /// Set once writing the spill file has failed: records then stay in
    /// memory.
    spill_failed: AtomicBool,
}

impl Shared {
    fn next_id(&self) -> i32 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// Accept connections until `shutdown` fires.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: broadcast::Receiver<()>,
    notify: broadcast::Sender<()>,
) {
    let mut backoff: Option<Duration> = None;
    loop {
        tokio::select! {
            _ = shutdown.recv() => return,
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(accepted) => {
                        backoff = None;
                        accepted
                    }
                    Err(e) => {
                        // Out of file descriptors (the pending connection
                        // stays in the backlog, so accept fails again at
                        // once) or a reset before accept: keep serving the
                        // clients we have, and wait before trying again
                        // rather than spin.
                        backoff = accept_backoff(backoff, &e);
                        if let Some(wait) = backoff {
                            tokio::select! {
                                _ = shutdown.recv() => return,
                                _ = tokio::time::sleep(wait) => {}
                            }
                        }
                        continue;
                    }
                };
                let shared = shared.clone();
                let shutdown = notify.subscribe();
                tokio::spawn(async move {
                    handle(stream, shared, shutdown).await;
                });
            }
        }
    }
}

/// The first wait after `accept` fails for lack of resources.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);
/// The longest wait between two failing `accept`s.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// How long to wait after `accept` failed with `err`, given the previous
/// wait: nothing for a connection reset before it was accepted (the next
/// one is unrelated), a doubling wait from 5 ms up to 1 s while the process
/// or system is out of descriptors or memory (EMFILE, ENFILE, ENOBUFS,
/// ENOMEM), which would otherwise fail again at once and spin a core.
fn accept_backoff(previous: Option<Duration>, err: &std::io::Error) -> Option<Duration> {
    const ENFILE: i32 = 23;
    const EMFILE: i32 = 24;
    const ENOBUFS: i32 = 105;
    const ENOMEM: i32 = 12;
    let exhausted = matches!(err.raw_os_error(), Some(ENFILE | EMFILE | ENOBUFS | ENOMEM))
        || err.kind() == std::io::ErrorKind::OutOfMemory;
    if !exhausted {
        return None;
    }
    Some(match previous {
        None => ACCEPT_BACKOFF_MIN,
        Some(p) => (p * 2).min(ACCEPT_BACKOFF_MAX),
    })
}

/// Serve one client until it leaves, sends garbage, or the server stops.
async fn handle(stream: TcpStream, shared: Arc<Shared>, mut shutdown: broadcast::Receiver<()>) {
    let mut conn = Connection::new(stream);
    let _connected = shared.ops.connected();
    let session = Session {
        engine: shared.engine.clone(),
        cursors: shared.cursors.clone(),
        ops: shared.ops.clone(),
        connection_id: shared.next_id(),
        peer: conn.peer_addr(),
        local: conn.local_addr(),
        client_gone: conn.disconnect_probe(),
    };
    loop {
        let request = tokio::select! {
            _ = shutdown.recv() => return,
            r = conn.read_request() => r,
        };
        let request = match request {
            Ok(Some(r)) => r,
            // Clean close, or malformed input: either way this client is
            // done, and nobody else is affected.
            Ok(None) | Err(_) => return,
        };
        // Light commands (the handshake, `ping`, an `_id` lookup) answer
        // here: a thread hop would cost more than they do. A command that
        // may run long (a scan, a big `$merge`, an index build) must not
        // hold up the async workers that answer every other connection,
        // the drivers' heartbeats among them, so it runs off them.
        let inline = match Weight::of(&request.frame) {
            Weight::Light => true,
            // Its snapshot would wait for a writer that holds the catalog,
            // and so would recording it in a profiled database.
            Weight::PointLookup => dispatch::database(&request.frame).is_some_and(|db| {
                let coll = dispatch::collection(&request.frame).unwrap_or("");
                !shared.engine.is_writing(db, coll) && shared.engine.profiling(db).0 == 0
            }),
            Weight::Heavy => false,
        };
        let reply = if inline {
            respond(&shared, &session, request)
        } else {
            match respond_heavy(&shared, &session, request).await {
                Some(reply) => reply,
                // The command panicked outside its guard: only this
                // connection goes.
                None => return,
            }
        };
        let Some(reply) = reply else {
            continue;
        };
        if conn.write(&reply).await.is_err() {
            return;
        }
    }
}

/// Run a request that may take long, off the async workers: on a
/// multi-threaded runtime the worker hands its other tasks off and runs the
/// command in place (`block_in_place`); a single-threaded runtime sends it
/// to the blocking pool instead. `None` if it panicked outside the
/// command's own guard.
async fn respond_heavy(
    shared: &Arc<Shared>,
    session: &Session,
    request: Request,
) -> Option<Option<Vec<u8>>> {
    let multi_thread = matches!(
        tokio::runtime::Handle::current().runtime_flavor(),
        tokio::runtime::RuntimeFlavor::MultiThread
    );
    if multi_thread {
        Some(tokio::task::block_in_place(|| {
            respond(shared, session, request)
        }))
    } else {
        let (task_shared, task_session) = (shared.clone(), session.clone());
        tokio::task::spawn_blocking(move || respond(&task_shared, &task_session, request))
            .await
            .ok()
    }
}

/// Run a request; `None` when the client asked for no reply.
fn respond(shared: &Shared, session: &Session, request: Request) -> Option<Vec<u8>> {
    let request_id = request.header.request_id;
    match request.frame {
        Frame::Msg(msg) => {
            let quiet = msg.more_to_come();
            let reply = cmd::execute(CommandDoc::from_msg(msg), session);
            (!quiet).then(|| frame::encode_msg(shared.next_id(), request_id, &reply))
        }
        Frame::Query(query) => {
            let cmd = CommandDoc::from_query(&query.full_collection_name, &query.query);
            let reply = cmd::execute(cmd, session);
            Some(frame::encode_reply(shared.next_id(), request_id, &reply))
        }
    }
}

/// Run `pass` every `period` on the blocking pool, the first time a
/// period after start (not at once, which would race with tests' setup),
/// until the server shuts down. A pass may wait for collections' writers
/// or do I/O: on the blocking pool, no async worker (and no driver's
/// heartbeat behind it) waits with it.
async fn every(
    period: Duration,
    shared: Arc<Shared>,
    mut shutdown: broadcast::Receiver<()>,
    pass: fn(&Shared),
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.recv() => return,
            _ = ticks.tick() => {
                let shared = shared.clone();
                // A pass that panics runs again at the next tick.
                let _ = tokio::task::spawn_blocking(move || pass(&shared)).await;
            }
        }
    }
}

/// Delete expired TTL documents and idle cursors every minute.
pub(crate) async fn ttl_monitor(shared: Arc<Shared>, shutdown: broadcast::Receiver<()>) {
    every(TTL_MONITOR_PERIOD, shared, shutdown, |shared| {
        let engine = &shared.engine;
        engine.expire_ttl(engine.now());
        shared
            .cursors
            .reap_idle(cursor_timeout_of(shared.engine.params()));
    })
    .await
}

/// How often the spill pass looks at the records held in memory.
const SPILL_PERIOD: Duration = Duration::from_secs(1);
/// A collection unused for this long may be spilled. One pass period: a
/// lesson's steps come back to back, and a longer wait (3 s) left the
/// collections a step had just finished with in memory while the next step
/// read a spilled one back, so the two added up (computed at large scale
/// peaked at 2120 MiB instead of 1778). A chunk read back and spilled
/// again is not written twice (its bytes are still in the file).
const COLD_AFTER: Duration = Duration::from_secs(1);

/// Every second: keep the engine's records within
/// `schemalabRecordCacheBytes` by spilling the coldest collections, then
/// give what that freed back to the system (see `engine::release`), and
/// everything freed once the server has gone idle, so that it does not
/// keep it.
pub(crate) async fn memory_monitor(shared: Arc<Shared>, shutdown: broadcast::Receiver<()>) {
    every(SPILL_PERIOD, shared, shutdown, |shared| {
        let mut spilled = false;
        if !shared.spill_failed.load(Ordering::Relaxed) {
            let budget = shared
                .engine
                .params()
                .get(&schemalab_engine::limits::RECORD_CACHE_BYTES);
            match shared.engine.spill_cold(budget, COLD_AFTER) {
                Ok(report) => spilled = report.freed > 0,
                // No temporary file to write to (or it is full): nothing
                // is lost, what was not written stays in memory, and the
                // server stops trying.
                Err(_) => shared.spill_failed.store(true, Ordering::Relaxed),
            }
        }
        // Records just spilled are given back at once; anything else only
        // once the server has been idle a whole period. While it works,
        // the allocator reuses what was freed (and returns what it keeps
        // unused past its own delay), and giving everything back every
        // second made it fault the same pages in again, zeroed, a moment
        // later (a seventh of a large lesson's time).
        let idle = shared.ops.idle_since_last_look();
        if spilled || idle {
            schemalab_engine::release::give_back();
        }
    })
    .await
}

/// Build the shared state of a new server.
pub(crate) fn shared(engine: Engine) -> Arc<Shared> {
    Arc::new(Shared {
        engine,
        cursors: Arc::new(CursorTable::default()),
        ops: Arc::default(),
        spill_failed: AtomicBool::new(false),
        next_id: AtomicI32::new(1),
    })
}

/// Refuse to listen anywhere but loopback: the engine has no
/// authentication and is meant for this machine only.
pub(crate) fn check_loopback(addr: SocketAddr) -> std::io::Result<()> {
    if addr.ip().is_loopback() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("the embedded engine listens on loopback only, not {addr}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn accept_backs_off_when_out_of_descriptors() {
        let emfile = std::io::Error::from_raw_os_error(24);
        let mut wait = None;
        let mut waits = Vec::new();
        for _ in 0..12 {
            wait = accept_backoff(wait, &emfile);
            waits.push(wait.unwrap());
        }
        assert_eq!(waits[0], ACCEPT_BACKOFF_MIN);
        assert_eq!(waits[1], ACCEPT_BACKOFF_MIN * 2);
        assert_eq!(*waits.last().unwrap(), ACCEPT_BACKOFF_MAX);
        assert!(waits.windows(2).all(|w| w[0] <= w[1]));
        // A connection reset before accept is no reason to wait.
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionAborted);
        assert_eq!(accept_backoff(wait, &reset), None);
    }
}
