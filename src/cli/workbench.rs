//! `schemalab` with no command: the terminal workbench (TUI), unless the
//! terminal cannot draw it.

use std::process::ExitCode;

use super::{Context, dumb_terminal};

pub fn run(ctx: &Context, present: bool) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    if dumb_terminal() {
        anyhow::bail!(
            "{}",
            lang.t("TERM=dumb: this terminal cannot draw the workbench. \
                 The same course runs as plain text: `schemalab lessons`, \
                 `schemalab run <lesson>`, `schemalab shell`, `schemalab exercises list`.")
        );
    }
    schemalab::tui::run(schemalab::tui::TuiOptions {
        uri: ctx.uri.clone(),
        present,
        scale: schemalab::course::Scale::Default,
        root: ctx.content_root()?,
        lang,
        names: ctx.names.clone(),
    })?;
    Ok(ExitCode::SUCCESS)
}
