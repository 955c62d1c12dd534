//! `schemalab reset <exercise>`: restore an exercise's starter files (a
//! `.bak` keeps the learner's).

use std::process::ExitCode;

use super::Context;
use super::exercises::ExerciseArgs;

pub fn run(ctx: &Context, args: ExerciseArgs) -> anyhow::Result<ExitCode> {
    let (ws, ex) = args.open(ctx)?;
    for f in ws.reset(&ex)? {
        outln!(
            "{}",
            ctx.lang.f("restored {path}", &[("path", &f.display())])
        );
    }
    Ok(ExitCode::SUCCESS)
}
