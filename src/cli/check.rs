//! `schemalab check <exercise>`: grade a solution by measurement and print
//! the checklist. Exit 0 when every check passes, 1 when one fails, 2
//! when nothing could be graded (the server unreachable or lost during
//! the check, an unknown exercise, an unreadable file): an autograder
//! never takes an environment error for the learner's (docs/GRADING.md).
//! `watch` grades through [`check_once`] too.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use schemalab::connect::Database;
use schemalab::course::Scale;
use schemalab::exercises::{self, Workspace, manifest, workspace};

use super::{Context, ServerArgs, bad_option};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The exercise id (see `schemalab exercises list`).
    exercise: String,
    /// Repeat a check with the same drawn parameters.
    #[arg(long)]
    seed: Option<u64>,
    /// tiny, default or large (default: the exercise's own).
    #[arg(long)]
    scale: Option<String>,
    /// Print the whole report as JSON instead of the checklist.
    #[arg(long)]
    json: bool,
    /// The workspace folder.
    #[arg(long)]
    dir: Option<PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    match grade(ctx, args) {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::FAILURE),
        Err(e) if super::is_closed_pipe(&e) => Err(e),
        Err(e) => {
            eprintln!("{}", super::error_line(&e, ctx.lang));
            eprintln!("{}", ctx.lang.t("check: nothing was graded (exit 2)"));
            Ok(ExitCode::from(2))
        }
    }
}

fn grade(ctx: &Context, args: Args) -> anyhow::Result<bool> {
    let ws = Workspace::locate(args.dir.as_deref());
    let scale = args
        .scale
        .map(|s| s.parse())
        .transpose()
        .map_err(bad_option("--scale"))?;
    let database = ctx.open(&args.server)?;
    let root = ctx.content_root()?;
    let draw = Draw {
        seed: args.seed,
        scale,
        json: args.json,
    };
    check_once(ctx, &database, &ws, &root, &args.exercise, draw)
}

/// How one check is drawn and shown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Draw {
    /// The seed of the drawn parameters (a fresh one when `None`).
    pub seed: Option<u64>,
    /// The dataset scale (the exercise's own when `None`).
    pub scale: Option<Scale>,
    /// The whole report as JSON instead of the checklist.
    pub json: bool,
}

/// Check exercise `id` of workspace `ws`, print the checklist, record the
/// attempt; true when it passed.
pub fn check_once(
    ctx: &Context,
    database: &Database,
    ws: &Workspace,
    root: &Path,
    id: &str,
    draw: Draw,
) -> anyhow::Result<bool> {
    let lang = ctx.lang;
    let seed = draw.seed.unwrap_or_else(exercises::fresh_seed);
    // On a server other checks may use at the same time (a class, or
    // `watch` beside `check`), this check's databases are its own.
    let names = if database.is_embedded() {
        ctx.names.clone()
    } else {
        ctx.names.clone().for_one_check()
    };
    let report = database.block_on(exercises::check_in_workspace(
        root,
        ws,
        database.client(),
        id,
        seed,
        draw.scale,
        lang,
        &names,
    ))?;
    if draw.json {
        // The checker's own words in the chosen language; keys unchanged.
        let json = schemalab::locale::serialize_in(lang, || serde_json::to_string_pretty(&report))?;
        outln!("{json}");
        return Ok(report.passed());
    }
    out!("{}", report.render_in(lang));
    outln!(
        "{}",
        lang.f(
            "(edit {path}; repeat this draw with --seed {seed})",
            &[("path", &ws.solution_path(id).display()), ("seed", &seed)]
        )
    );
    if report.passed() && report.progress_error.is_none() {
        let all = manifest::exercises(root, lang)?;
        let rows = ws.rows(&all)?;
        let (score, next) = workspace::summary(&rows);
        outln!(
            "{}",
            lang.f(
                "progress {score}; `schemalab solution {id}` shows the reference",
                &[("score", &score), ("id", &id)]
            )
        );
        if let Some(n) = next {
            outln!("{}", lang.f("next: {id}", &[("id", &n.id)]));
        }
    }
    Ok(report.passed())
}
