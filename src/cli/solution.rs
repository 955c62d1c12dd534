//! `schemalab solution <exercise>`: the reference solution and its
//! explanation, once the learner has passed (or with `--reveal`).

use std::path::PathBuf;
use std::process::ExitCode;

use schemalab::exercises::{Workspace, manifest};

use super::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The exercise id (see `schemalab exercises list`).
    exercise: String,
    /// Show it without having passed.
    #[arg(long)]
    reveal: bool,
    /// The workspace folder.
    #[arg(long)]
    dir: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let ws = Workspace::locate(args.dir.as_deref());
    let ex = manifest::find_in(ctx.content_root()?, &args.exercise, ctx.lang)?;
    print!("{}", ws.solution_in(&ex, args.reveal, ctx.lang)?);
    Ok(ExitCode::SUCCESS)
}
