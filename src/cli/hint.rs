//! `schemalab hint <exercise>`: the next hint of an exercise, one stage at
//! a time, with the ones already shown.

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
    let (shown, total) = ws.next_hint(&ex)?;
    for (i, h) in shown.iter().enumerate() {
        println!(
            "{}",
            lang.f(
                "hint {n}/{total}: {hint}",
                &[("n", &(i + 1)), ("total", &total), ("hint", h)]
            )
        );
    }
    if shown.len() == total {
        println!(
            "{}",
            lang.f(
                "(that was the last hint; `schemalab solution {id} --reveal` shows the reference)",
                &[("id", &args.exercise)]
            )
        );
    }
    Ok(ExitCode::SUCCESS)
}
