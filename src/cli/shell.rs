//! `schemalab shell`: the mongosh JavaScript shell, interactive or running a
//! file, optionally on a lesson's prepared databases or an exercise's
//! data (`--exercise`: the learner's database loaded as a check loads it,
//! the parameters drawn with `--seed` and bound). With `--uri` it writes
//! only `schemalab_` databases unless `--allow-writes` is given.

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
    #[arg(long, default_value = "test", conflicts_with_all = ["lesson", "exercise"])]
    db: String,
    /// Load this exercise's data into your database for it
    /// (`schemalab_ex_<id>`, as `check` loads it, without your setup),
    /// bind its parameters (userId, …) drawn with --seed, and start there.
    #[arg(long, value_name = "EXERCISE", conflicts_with = "lesson")]
    exercise: Option<String>,
    /// With --exercise: the seed of the drawn parameters (a check prints
    /// its seed; the same seed draws the same values).
    #[arg(long, requires = "exercise")]
    seed: Option<u64>,
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
        Some(_) if !args.allow_writes => WritePolicy::Prefix(ctx.names.prefix()),
        _ => WritePolicy::Unrestricted,
    };
    let database = schemalab::connect::Database::open(uri)?;
    let mut bindings = Vec::new();
    let db = match (&args.lesson, &args.exercise) {
        (None, Some(id)) => {
            let root = ctx.content_root()?;
            let ex = schemalab::exercises::manifest::find(&root, id, lang)?;
            let loader = course::CatalogLoader::for_course(&root)?;
            let seed = args.seed.unwrap_or_else(schemalab::exercises::fresh_seed);
            let (db, params) =
                database.block_on(schemalab::exercises::checker::prepare_learner_db(
                    database.client(),
                    &ex,
                    seed,
                    None,
                    &loader,
                    &ctx.names,
                ))?;
            eprintln!(
                "{}",
                lang.f(
                    "{id}: the exercise's data is loaded into {db} (seed {seed}); your setup has not run",
                    &[("id", &ex.id), ("db", &db), ("seed", &seed)]
                )
            );
            for (name, value) in &params {
                eprintln!("  {name} = {}", schemalab::dialect::print::inspect(value));
            }
            bindings = params;
            db
        }
        (None, None) => args.db,
        (Some(query), _) => {
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
            let ran = database.block_on(dialect::run_file_with(
                database.client(),
                &db,
                &path,
                policy,
                lang,
                &bindings,
            ));
            // run_file has already printed the error, with its place.
            if ran.is_err() {
                return Ok(ExitCode::FAILURE);
            }
        }
        None => dialect::run_interactive_with(
            database.handle(),
            database.client(),
            &db,
            policy,
            lang,
            &bindings,
        )
        .map_err(|e| anyhow::anyhow!("shell: {}", e.line(lang)))?,
    }
    Ok(ExitCode::SUCCESS)
}
