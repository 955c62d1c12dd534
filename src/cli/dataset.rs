//! `schemalab dataset list`: the catalog's datasets, their collections and
//! sizes per scale; `schemalab dataset export`: a dataset written as
//! Extended JSON arrays that `mongoimport --jsonArray` accepts, one file per
//! collection.

use std::path::PathBuf;
use std::process::ExitCode;

use schemalab::datasets as d;

use super::{Context, bad_option};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Every dataset of the course: what it holds, its collections and
    /// their sizes at each scale.
    List,
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
    let catalog = d::load_catalog(ctx.content_root()?.join("datasets/catalog.toml"))?;
    let Command::Export {
        name,
        scale,
        seed,
        out,
    } = command
    else {
        return list(ctx, &catalog);
    };
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

/// One paragraph per dataset: its name and summary, its collections, then
/// per scale the generator's parameters from the catalog (document
/// counts are named after their collection).
fn list(ctx: &Context, catalog: &d::Catalog) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    for spec in catalog.datasets() {
        outln!("{}  {}", spec.name, spec.summary);
        outln!(
            "    {}",
            lang.f(
                "collections: {list}",
                &[("list", &spec.collections.join(", "))]
            )
        );
        for scale in d::Scale::ALL {
            let sizes: Vec<String> = spec
                .params(scale)
                .iter()
                .map(|(k, v)| match v {
                    d::ParamValue::Int(n) => format!("{k} {n}"),
                    d::ParamValue::Float(x) => format!("{k} {x}"),
                })
                .collect();
            outln!("    {:<8} {}", scale.as_str(), sizes.join(", "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
