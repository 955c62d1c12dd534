//! `schemalab hint <exercise>`: the next hint of an exercise, one stage at
//! a time, with the ones already shown.

use std::process::ExitCode;

use super::Context;
use super::exercises::ExerciseArgs;

pub fn run(ctx: &Context, args: ExerciseArgs) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let (ws, ex) = args.open(ctx)?;
    let (shown, total) = ws.next_hint(&ex)?;
    for (i, h) in shown.iter().enumerate() {
        outln!(
            "{}",
            lang.f(
                "hint {n}/{total}: {hint}",
                &[("n", &(i + 1)), ("total", &total), ("hint", h)]
            )
        );
    }
    if shown.len() == total {
        outln!(
            "{}",
            lang.f(
                "(that was the last hint; `schemalab solution {id} --reveal` shows the reference)",
                &[("id", &args.id())]
            )
        );
    }
    Ok(ExitCode::SUCCESS)
}
