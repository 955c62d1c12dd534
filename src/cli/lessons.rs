//! `schemalab lessons`: the course outline, one numbered line per lesson.

use std::process::ExitCode;

use super::Context;

pub fn run(ctx: &Context) -> anyhow::Result<ExitCode> {
    let lessons = schemalab::course::list_lessons(ctx.content_root()?, ctx.lang)?;
    for l in &lessons {
        outln!(
            "{:>2}. {} {}",
            l.number,
            schemalab::locale::pad(&l.id, 24, true),
            l.title
        );
    }
    Ok(ExitCode::SUCCESS)
}
