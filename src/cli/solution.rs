//! `schemalab solution <exercise>`: the reference solution and its
//! explanation, once the learner has passed (or with `--reveal`).

use std::process::ExitCode;

use super::Context;
use super::exercises::ExerciseArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    exercise: ExerciseArgs,
    /// Show it without having passed.
    #[arg(long)]
    reveal: bool,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let (ws, ex) = args.exercise.open(ctx)?;
    out!("{}", ws.solution(&ex, args.reveal, ctx.lang)?);
    Ok(ExitCode::SUCCESS)
}
