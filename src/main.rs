//! The `schemalab` binary: parse the command line, run the command
//! (`cli/<command>.rs`), and turn an error into one line and exit 1. The
//! only place that uses `anyhow`; no backtrace for ordinary errors (a bad
//! argument, a missing file, an unreachable server).

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::allocator::tune();
    let cli = cli::parse();
    let lang = match cli.lang() {
        Ok(lang) => lang,
        Err(e) => return fail(&e, schemalab::locale::Lang::from_env()),
    };
    match cli.dispatch(lang) {
        Ok(code) => code,
        Err(e) => fail(&e, lang),
    }
}

/// An error as one line and exit 1; output cut short by its reader (a
/// closed pipe) is no error.
fn fail(e: &anyhow::Error, lang: schemalab::locale::Lang) -> ExitCode {
    if cli::is_closed_pipe(e) {
        return ExitCode::SUCCESS;
    }
    eprintln!("{}", cli::error_line(e, lang));
    ExitCode::FAILURE
}
