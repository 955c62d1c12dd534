//! The `schemalab` command line: the only place that uses `anyhow`.

use anyhow::Context;
use clap::{Parser, Subcommand};

/// schemalab: learn MongoDB schema design by measurement.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
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
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Serve { port }) => {
            let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
            runtime
                .block_on(schemalab::wire::run_serve(port))
                .with_context(|| format!("serving on 127.0.0.1:{port}"))?;
        }
        None => {
            use clap::CommandFactory;
            Cli::command().print_help()?;
        }
    }
    Ok(())
}
