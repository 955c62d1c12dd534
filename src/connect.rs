//! The one place that opens the database every command and the TUI talk
//! to: the embedded engine, served over the wire protocol on an ephemeral
//! loopback port from a thread of its own, or the server a `--uri` names.
//! Either way callers get one [`Database`]: a tokio runtime and one driver
//! `Client` (whose clones share its connection pool) to reach it with, so
//! every figure comes through the same path. Runtimes and clients are
//! built here and nowhere else.

use std::future::Future;
use std::time::Duration;

use tokio::runtime::{Handle, Runtime};

use crate::locale::Message;
use schemalab_engine::Engine;
use schemalab_wire::BackgroundServer;

/// Why the database could not be opened.
/// Each variant's words are one [`Message`] ([`ConnectError::message`]);
/// the operating system's and the driver's own text stays as written.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The async runtime could not start.
    #[error("{}", self.message())]
    Runtime(std::io::Error),
    /// The embedded engine's server could not start.
    #[error("{}", self.message())]
    Embedded(std::io::Error),
    /// The `--uri` is not a connection string the driver can parse, or
    /// the driver refused its options.
    #[error("{}", self.message())]
    BadUri { uri: String, message: String },
    /// No host the `--uri` names accepted a connection within
    /// [`REACH_TIMEOUT`] (the last host's failure is kept).
    #[error("{}", self.message())]
    Unreachable {
        uri: String,
        host: String,
        reason: std::io::Error,
    },
}

/// How long a `--uri`'s host has to accept a TCP connection when the
/// database is opened. A refused connection fails at once; a host that
/// does not answer fails after this, not after the driver's 30 s of
/// server selection.
pub const REACH_TIMEOUT: Duration = Duration::from_secs(3);

impl ConnectError {
    /// The error's words, for any language.
    pub fn message(&self) -> Message {
        match self {
            ConnectError::Runtime(e) => Message::new("starting the async runtime: {e}").arg("e", e),
            ConnectError::Embedded(e) => {
                Message::new("starting the embedded engine: {e}").arg("e", e)
            }
            ConnectError::BadUri { uri, message } => {
                Message::new("--uri '{uri}': not a MongoDB connection string: {message}")
                    .arg("uri", uri)
                    .arg("message", message)
            }
            ConnectError::Unreachable { uri, host, reason } => {
                let why = match reason.kind() {
                    std::io::ErrorKind::ConnectionRefused => Message::new("connection refused"),
                    std::io::ErrorKind::TimedOut => {
                        Message::new("no answer within {s} s").arg("s", REACH_TIMEOUT.as_secs())
                    }
                    _ => Message::verbatim(reason),
                };
                Message::new(
                    "--uri '{uri}': cannot connect to {host}: {why}. Is a MongoDB server running there? Check the host and port, or leave --uri out to use the embedded engine.",
                )
                .arg("uri", uri)
                .arg("host", host)
                .arg_msg("why", why)
            }
        }
    }
}

impl crate::locale::Localized for ConnectError {
    fn render_in(&self, lang: crate::locale::Lang) -> String {
        self.message().render_in(lang)
    }
}

/// The multi-thread runtime a command drives the driver (or `serve` the
/// wire server) with, a worker per core.
pub fn runtime() -> Result<Runtime, ConnectError> {
    Runtime::new().map_err(ConnectError::Runtime)
}

/// A runtime of one worker thread named `name`, for a process that mostly
/// waits (the TUI: the engine serves from threads of its own).
pub fn small_runtime(name: &str) -> Result<Runtime, ConnectError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .thread_name(name)
        .build()
        .map_err(ConnectError::Runtime)
}

/// An open database: a runtime for the driver, the URI to connect to and,
/// on the embedded engine, the server that keeps it alive. Dropping it
/// stops the embedded server.
#[derive(Debug)]
pub struct Database {
    runtime: Runtime,
    uri: String,
    /// The driver's client, made on `runtime` (its monitors run there).
    client: mongodb::Client,
    /// The embedded engine's server (on its own threads, named
    /// `schemalab-server`/`schemalab-wire`); `None` with `--uri`.
    server: Option<BackgroundServer>,
}

impl Database {
    /// Open the server `uri` names, or the embedded engine when it is
    /// `None`, with a default multi-thread runtime.
    pub fn open(uri: Option<String>) -> Result<Database, ConnectError> {
        Database::open_with(uri, runtime()?)
    }

    /// [`Database::open`] on a runtime made by [`runtime`] or
    /// [`small_runtime`].
    pub fn open_with(uri: Option<String>, runtime: Runtime) -> Result<Database, ConnectError> {
        let (uri, server) = match uri {
            Some(uri) => (uri, None),
            None => {
                let server = schemalab_wire::spawn_background(Engine::new())
                    .map_err(ConnectError::Embedded)?;
                (server.uri(), Some(server))
            }
        };
        let client = runtime.block_on(async {
            let options = options(&uri).await?;
            if server.is_none() {
                reach(&uri, &options).await?;
            }
            mongodb::Client::with_options(options).map_err(|e| bad_uri(&uri, e))
        })?;
        Ok(Database {
            runtime,
            uri,
            client,
            server,
        })
    }

    /// The driver's client (clone it to hand it to a task: clones share
    /// one connection pool).
    pub fn client(&self) -> &mongodb::Client {
        &self.client
    }

    /// The `mongodb://` URI to connect to.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Whether this is the embedded engine (no `--uri`).
    pub fn is_embedded(&self) -> bool {
        self.server.is_some()
    }

    /// The runtime the driver runs on.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// A handle on [`Database::runtime`].
    pub fn handle(&self) -> &Handle {
        self.runtime.handle()
    }

    /// Run `future` to completion on the runtime.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Stop the embedded server, then the runtime without waiting for its
    /// tasks (a background check still running is abandoned).
    pub fn close(self) {
        drop(self.server);
        self.runtime.shutdown_background();
    }
}

/// Check that a host `uri` names accepts a TCP connection, so that a
/// wrong address or a server that is not running is said at once, by the
/// kind of its failure, instead of after the driver's server selection
/// gives up. A unix socket is left to the driver.
async fn reach(uri: &str, options: &mongodb::options::ClientOptions) -> Result<(), ConnectError> {
    let mut last = None;
    for address in &options.hosts {
        let mongodb::options::ServerAddress::Tcp { host, port } = address else {
            return Ok(());
        };
        let port = port.unwrap_or(27017);
        let attempt = tokio::net::TcpStream::connect((host.as_str(), port));
        let reason = match tokio::time::timeout(REACH_TIMEOUT, attempt).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) => e,
            Err(_) => std::io::Error::from(std::io::ErrorKind::TimedOut),
        };
        last = Some((format!("{host}:{port}"), reason));
    }
    match last {
        Some((host, reason)) => Err(ConnectError::Unreachable {
            uri: uri.to_string(),
            host,
            reason,
        }),
        None => Ok(()),
    }
}

/// A driver client for `uri` (to be awaited on the runtime that will drive
/// it). A `--uri` the driver cannot parse is named in one line, before
/// anything tries to connect with it; creating the client does not
/// connect.
pub async fn client(uri: &str) -> Result<mongodb::Client, ConnectError> {
    mongodb::Client::with_options(options(uri).await?).map_err(|e| bad_uri(uri, e))
}

/// The driver's options for `uri`, or the one-line error naming it.
async fn options(uri: &str) -> Result<mongodb::options::ClientOptions, ConnectError> {
    mongodb::options::ClientOptions::parse(uri)
        .await
        .map_err(|e| bad_uri(uri, e))
}

fn bad_uri(uri: &str, e: mongodb::error::Error) -> ConnectError {
    ConnectError::BadUri {
        uri: uri.to_string(),
        message: e.kind.to_string(),
    }
}
