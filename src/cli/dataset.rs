//! `schemalab dataset export`: a dataset written as Extended JSON arrays
//! that `mongoimport --jsonArray` accepts, one file per collection.

use std::path::PathBuf;
use std::process::ExitCode;

use schemalab::datasets as d;

use super::{Context, bad_option};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Write a dataset as Extended JSON arrays that `mongoimport --jsonArray`
    /// accepts, one file per collection.
    Export {
        /// The dataset name (see datasets/catalog.toml).
        name: String,
        /// tiny, default or large.
        #[arg(long, default_value = "default")]
        scale: String,
        /// The seed; the same seed gives the same bytes.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Folder to write into.
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
}

pub fn run(ctx: &Context, command: Command) -> anyhow::Result<ExitCode> {
    let Command::Export {
        name,
        scale,
        seed,
        out,
    } = command;
    let catalog = d::load_catalog(ctx.content_root()?.join("datasets/catalog.toml"))?;
    let scale = scale.parse().map_err(bad_option("--scale"))?;
    let files = d::export_extjson_with(
        &catalog,
        &name,
        scale,
        seed,
        &out,
        d::ExtJsonMode::Canonical,
    )?;
    for f in files {
        outln!("{}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}
