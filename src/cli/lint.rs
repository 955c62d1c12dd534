//! `schemalab lint`: every lesson, statement, claim and dataset reference
//! checked; exit 1 when any problem is found.

use std::process::ExitCode;

use super::Context;

pub fn run(ctx: &Context) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let errors = schemalab::course::lint(ctx.content_root()?);
    for e in &errors {
        outln!("{}", schemalab::locale::Localized::render_in(e, lang));
    }
    if !errors.is_empty() {
        eprintln!("{}", lang.f("{n} problem(s)", &[("n", &errors.len())]));
        return Ok(ExitCode::FAILURE);
    }
    eprintln!("{}", lang.t("lint: clean"));
    Ok(ExitCode::SUCCESS)
}
