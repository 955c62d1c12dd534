//! The `schemalab` command line.

use clap::Parser;

/// schemalab: learn MongoDB schema design by measurement.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
