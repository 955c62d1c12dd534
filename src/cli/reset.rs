//! `schemalab reset <exercise>`: restore an exercise's starter files (a
//! `.bak` keeps the learner's).

use std::path::PathBuf;
use std::process::ExitCode;

use schemalab::exercises::{Workspace, manifest};

use super::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The exercise id (see `schemalab exercises list`).
    exercise: String,
    /// The workspace folder.
    #[arg(long)]
    dir: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let ws = Workspace::locate(args.dir.as_deref());
    let ex = manifest::find_in(ctx.content_root()?, &args.exercise, lang)?;
    for f in ws.reset(&ex)? {
        println!("{}", lang.f("restored {path}", &[("path", &f.display())]));
    }
    Ok(ExitCode::SUCCESS)
}
