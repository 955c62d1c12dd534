//! The `schemalab` command line: the only place that uses `anyhow`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tokio::runtime::Runtime;

/// schemalab: learn MongoDB schema design by measurement.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    /// A MongoDB to use instead of the embedded engine. schemalab only
    /// writes and drops databases whose names start with `schemalab_`.
    #[arg(long, env = "MONGODB_URI", global = true)]
    uri: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the embedded engine over the MongoDB wire protocol on
    /// 127.0.0.1, for mongosh, pymongo, Compass or any driver.
    Serve {
        /// Port to listen on (0 picks a free one).
        #[arg(long, default_value_t = 27017)]
        port: u16,
    },
    /// The mongosh-dialect shell, interactive or running a file.
    Shell {
        /// Run this file instead of prompting.
        #[arg(long)]
        file: Option<PathBuf>,
        /// The database to start in.
        #[arg(long, default_value = "test")]
        db: String,
    },
}

/// The database everything talks to: the embedded engine on an ephemeral
/// loopback port, or the server named by `--uri`.
struct Database {
    runtime: Runtime,
    uri: String,
    /// Keeps the embedded server alive for as long as the command runs.
    _server: Option<schemalab::wire::ServerHandle>,
}

impl Database {
    fn open(uri: Option<String>) -> anyhow::Result<Self> {
        let runtime = Runtime::new().context("starting the async runtime")?;
        match uri {
            Some(uri) => Ok(Database {
                runtime,
                uri,
                _server: None,
            }),
            None => {
                let addr = "127.0.0.1:0".parse().context("loopback address")?;
                let server = runtime
                    .block_on(schemalab::wire::serve(
                        addr,
                        schemalab::engine::Engine::new(),
                    ))
                    .context("starting the embedded engine")?;
                Ok(Database {
                    runtime,
                    uri: server.uri(),
                    _server: Some(server),
                })
            }
        }
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Serve { port }) => {
            let runtime = Runtime::new().context("starting the async runtime")?;
            runtime
                .block_on(schemalab::wire::run_serve(port))
                .with_context(|| format!("serving on 127.0.0.1:{port}"))?;
        }
        Some(Command::Shell { file, db }) => {
            let database = Database::open(cli.uri)?;
            match file {
                Some(path) => {
                    let ok = database.runtime.block_on(schemalab::dialect::run_file(
                        &database.uri,
                        &db,
                        &path,
                    ));
                    if ok.is_err() {
                        // run_file has already printed the error with its
                        // caret line.
                        std::process::exit(1);
                    }
                }
                None => schemalab::dialect::run_interactive_on(
                    database.runtime.handle(),
                    &database.uri,
                    &db,
                )
                .context("running the shell")?,
            }
        }
        None => {
            use clap::CommandFactory;
            Cli::command().print_help()?;
        }
    }
    Ok(())
}
