//! `schemalab shell`: the mongosh JavaScript shell, interactive or running a
//! file, optionally on a lesson's prepared databases. With `--uri` it
//! writes only `schemalab_` databases unless `--allow-writes` is given.

use std::path::PathBuf;
use std::process::ExitCode;

use schemalab::course;
use schemalab::dialect::{self, WritePolicy};

use super::{Context, ServerArgs, bad_option};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run this file instead of prompting: like `mongosh file.js`, it
    /// shows only what the script prints (print, printjson,
    /// console.log), not the values of its expression statements.
    #[arg(long)]
    file: Option<PathBuf>,
    /// The database to start in.
    #[arg(long, default_value = "test", conflicts_with = "lesson")]
    db: String,
    /// Prepare this lesson's databases first and start in one of them
    /// (a lesson id, its number in the outline or its folder, as for
    /// `run`).
    #[arg(long, value_name = "LESSON")]
    lesson: Option<String>,
    /// With --lesson: prepare only this variant and start in its
    /// database (default: every variant; start in the first variant
    /// of the first experiment).
    #[arg(long, requires = "lesson")]
    variant: Option<String>,
    /// With --lesson: the dataset scale, tiny, default or large.
    /// Default tiny, so the shell opens at once; `run` measures at
    /// default, which the largest lessons take tens of seconds to
    /// prepare (pass --scale default to look at that data).
    #[arg(long, default_value = "tiny", requires = "lesson")]
    scale: String,
    /// With --uri: also write outside `schemalab_` databases (without
    /// it, any command that would write elsewhere is refused before
    /// it is sent). Without --uri the shell is unrestricted anyway.
    #[arg(long)]
    allow_writes: bool,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let uri = ctx.uri(&args.server);
    let policy = match &uri {
        Some(_) if !args.allow_writes => WritePolicy::Prefix("schemalab_".to_string()),
        _ => WritePolicy::Unrestricted,
    };
    let database = schemalab::connect::Database::open(uri)?;
    let db = match &args.lesson {
        None => args.db,
        Some(query) => {
            // The same preparation as `run` (only
            // schemalab_<lesson>_<variant> databases are dropped and
            // written); progress and the listing go to stderr so a --file
            // script's output stays its own.
            let root = ctx.content_root()?;
            let scale = args.scale.parse().map_err(bad_option("--scale"))?;
            let prepared = ctx
                .with_run_options(&root, scale, |opts| {
                    database.block_on(course::prepare_by_id(
                        &root,
                        query,
                        args.variant.as_deref(),
                        database.client(),
                        opts,
                        lang,
                    ))
                })?
                .map_err(|e| anyhow::Error::new(e).context(format!("shell --lesson {query}")))?;
            eprint!("{}", prepared.listing(lang));
            prepared.current_db().to_string()
        }
    };
    match args.file {
        Some(path) => {
            let ran = database.block_on(dialect::run_file(
                database.client(),
                &db,
                &path,
                policy,
                lang,
            ));
            // run_file has already printed the error, with its place.
            if ran.is_err() {
                return Ok(ExitCode::FAILURE);
            }
        }
        None => dialect::run_interactive(database.handle(), database.client(), &db, policy, lang)
            .map_err(|e| anyhow::anyhow!("shell: {}", e.line(lang)))?,
    }
    Ok(ExitCode::SUCCESS)
}
