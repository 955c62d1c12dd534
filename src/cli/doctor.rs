//! `schemalab doctor`: one screen saying what works and what degrades on
//! the server a class will use (`--uri`, else the embedded engine); exit 0
//! when the course can run there, 1 when it cannot.

use std::process::ExitCode;

use super::{Context, ServerArgs};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let database = ctx.open(&args.server)?;
    let report = database.block_on(schemalab::doctor::examine(
        database.client(),
        &ctx.names,
        database.is_embedded(),
    ));
    outln!(
        "{}",
        lang.f("schemalab doctor: {uri}", &[("uri", &database.uri())])
    );
    for c in &report.checks {
        outln!(
            "  {} {} {}",
            c.status.mark(),
            schemalab::locale::pad(&c.name.render_in(lang), 12, true),
            c.detail.render_in(lang)
        );
    }
    if report.usable() {
        outln!(
            "{}",
            lang.t(
                "The course can run here (✓ works, ! works with less measured, · for information)."
            )
        );
        Ok(ExitCode::SUCCESS)
    } else {
        outln!("{}", lang.t("The course cannot run here: see the ✗ lines."));
        Ok(ExitCode::FAILURE)
    }
}
