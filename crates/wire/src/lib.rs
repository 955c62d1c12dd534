//! The MongoDB wire protocol server: exposes an [`schemalab_engine::Engine`] on
//! 127.0.0.1 so that drivers and shells can use it.
//!
//! A request travels down the modules in order:
//!
//! - [`frame`]: bytes to OP_MSG / OP_QUERY messages and replies to bytes;
//! - [`connection`]: buffered reads and writes on one TCP stream;
//! - [`cmd`]: a command document to a typed [`cmd::Command`], applied to
//!   the engine (one file per command family);
//! - [`cursor`]: results that span several batches, between `find` and
//!   `getMore`;
//! - [`ops`]: the operations running, for `currentOp`;
//! - [`dispatch`]: whether a request runs on its connection's task (the
//!   handshake, `ping`, `_id` lookups) or off the async workers (anything
//!   that may run long);
//! - [`server`]: the accept loop, a task per connection, the TTL monitor.

#![forbid(unsafe_code)]

pub mod cmd;
pub mod connection;
pub mod cursor;
pub mod dispatch;
pub mod frame;
pub mod ops;
mod server;

use std::net::{Ipv4Addr, SocketAddr};

use tokio::sync::broadcast;

use schemalab_engine::Engine;

pub use server::TTL_MONITOR_PERIOD;

/// A running server; dropping the handle does not stop it, `shutdown` does.
#[derive(Debug)]
pub struct ServerHandle {
    local_addr: SocketAddr,
    /// Every task of the server listens here for the end.
    shutdown: broadcast::Sender<()>,
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// A `mongodb://` URI for the server.
    pub fn uri(&self) -> String {
        format!("mongodb://{}/?directConnection=true", self.local_addr)
    }

    /// Stop accepting, and close every connection after its current command.
    pub fn shutdown(&self) {
        // An error only means every task has already gone.
        let _ = self.shutdown.send(());
    }
}

/// Bind `addr` (a loopback address) and serve `engine` on the current tokio
/// runtime.
pub async fn serve(addr: SocketAddr, engine: Engine) -> std::io::Result<ServerHandle> {
    server::check_loopback(addr)?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let (shutdown, _) = broadcast::channel(1);
    let shared = server::shared(engine);
    tokio::spawn(server::accept_loop(
        listener,
        shared.clone(),
        shutdown.subscribe(),
        shutdown.clone(),
    ));
    tokio::spawn(server::ttl_monitor(shared.clone(), shutdown.subscribe()));
    tokio::spawn(server::memory_monitor(shared, shutdown.subscribe()));
    Ok(ServerHandle {
        local_addr,
        shutdown,
    })
}

/// A server on its own runtime and thread, for callers without one (tests,
/// the TUI). Dropping it stops the server and joins the thread.
#[derive(Debug)]
pub struct BackgroundServer {
    handle: ServerHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundServer {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    /// A `mongodb://` URI for the server.
    pub fn uri(&self) -> String {
        self.handle.uri()
    }

    /// Stop the server and wait for its thread.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.handle.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for BackgroundServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Serve `engine` on 127.0.0.1 (a free port) from a background thread
/// running its own multi-thread tokio runtime.
pub fn spawn_background(engine: Engine) -> std::io::Result<BackgroundServer> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("schemalab-wire")
        .enable_all()
        .build()?;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("schemalab-server".into())
        .spawn(move || {
            runtime.block_on(async move {
                let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
                match serve(addr, engine).await {
                    Ok(handle) => {
                        let mut done = handle.shutdown.subscribe();
                        let _ = ready_tx.send(Ok((handle.local_addr, handle.shutdown.clone())));
                        let _ = done.recv().await;
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            });
        })?;
    let (local_addr, shutdown) = ready_rx
        .recv()
        .map_err(|_| std::io::Error::other("server thread exited before binding"))??;
    Ok(BackgroundServer {
        handle: ServerHandle {
            local_addr,
            shutdown,
        },
        thread: Some(thread),
    })
}

/// `schemalab serve [--port N]`: serve a fresh engine on 127.0.0.1:`port`,
/// print its URI, and run until Ctrl-C.
pub async fn run_serve(port: u16) -> std::io::Result<()> {
    run_serve_engine(port, Engine::new()).await
}

/// [`run_serve`] with a given engine (its cache sized by the caller, as
/// `--wiredTigerCacheSizeGB` does).
pub async fn run_serve_engine(port: u16, engine: Engine) -> std::io::Result<()> {
    let handle = serve(SocketAddr::from((Ipv4Addr::LOCALHOST, port)), engine).await?;
    println!("{}", handle.uri());
    eprintln!(
        "schemalab serve: the embedded engine is listening on {}. Its data lives in memory \
         and is gone when it stops. Press Ctrl-C to stop it.",
        handle.uri()
    );
    tokio::signal::ctrl_c().await?;
    handle.shutdown();
    Ok(())
}
