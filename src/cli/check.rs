//! `schemalab check <exercise>`: grade a solution by measurement and print
//! the checklist (exit 0 when every check passes, 1 otherwise). `watch`
//! grades through [`check_once`] too.

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
    let passed = check_once(ctx, &database, &ws, &root, &args.exercise, draw)?;
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
    let report = database.block_on(exercises::check_in_workspace(
        root,
        ws,
        database.client(),
        id,
        seed,
        draw.scale,
        lang,
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
    if report.passed() {
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
