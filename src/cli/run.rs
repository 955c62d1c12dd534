//! `schemalab run <lesson>`: a lesson's experiments side by side, reported
//! as a table, markdown or JSON. Exit codes: 0 every variant ran and every
//! claim holds, 1 a claim fails, 2 an error (bad arguments, unreachable
//! server, a failed variant).

use std::process::ExitCode;

use schemalab::course::{self, Format, LessonReport};

use super::{Context, ServerArgs, bad_option, error_line};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The lesson id (see `schemalab lessons`).
    lesson: String,
    /// tiny, default or large.
    #[arg(long, default_value = "default")]
    scale: String,
    /// table, markdown or json.
    #[arg(long, default_value = "table")]
    format: String,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    match measure(ctx, &args) {
        Ok((report, format)) => {
            out!("{}", course::report::render_in(&report, format, lang));
            let status = course::RunStatus::of(&report);
            eprintln!("{}", status.message(lang));
            Ok(ExitCode::from(
                u8::try_from(status.exit_code()).unwrap_or(2),
            ))
        }
        Err(e) => {
            eprintln!("{}", error_line(&e, lang));
            // A database that cannot be opened has said what is wrong; the
            // advice is for a server that failed during the run.
            let opening = e
                .downcast_ref::<schemalab::connect::ConnectError>()
                .is_some();
            if !opening && course::runner::is_environment_error(&format!("{e:#}")) {
                eprintln!(
                    "{}",
                    lang.t(
                        "This looks like the environment (a slow or unreachable server), not the lesson: \
                         retry the same command when the machine is less busy, or try a smaller --scale."
                    )
                );
            }
            eprintln!("{}", lang.t("run: the lesson could not run (exit 2)"));
            Ok(ExitCode::from(2))
        }
    }
}

fn measure(ctx: &Context, args: &Args) -> anyhow::Result<(LessonReport, Format)> {
    let root = ctx.content_root()?;
    let scale = args.scale.parse().map_err(bad_option("--scale"))?;
    let format = args.format.parse().map_err(bad_option("--format"))?;
    let database = ctx.open(&args.server)?;
    let report = ctx.with_run_options(&root, scale, |opts| {
        database.block_on(course::run_by_id(
            &root,
            &args.lesson,
            database.client(),
            opts,
            ctx.lang,
        ))
    })??;
    Ok((report, format))
}
