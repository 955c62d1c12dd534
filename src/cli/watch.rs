//! `schemalab watch [exercise]`: re-check on every save of a solution,
//! the given exercise's (checked once at the start) or, with none given,
//! whichever the learner edits: nothing is checked, and no attempt
//! counted, before a file of an exercise changes.

use std::path::PathBuf;
use std::process::ExitCode;

use schemalab::exercises::{Workspace, manifest, watch, workspace};

use super::check::{Draw, check_once};
use super::error::causes_in;
use super::{Context, ServerArgs, dumb_terminal};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The exercise to re-check (default: whichever solution you save).
    exercise: Option<String>,
    /// The workspace folder.
    #[arg(long)]
    dir: Option<PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let ws = Workspace::locate(args.dir.as_deref());
    let root = ctx.content_root()?;
    let all = manifest::exercises(&root, lang)?;
    let ids: Vec<String> = all.iter().map(|e| e.id.clone()).collect();
    // An id the course does not have is said at once (it used to watch
    // for a file that no save would ever touch).
    if let Some(id) = &args.exercise {
        manifest::find(&root, id, lang)?;
    }
    // Only a workspace is watched (and its progress must be readable).
    let rows = ws.rows(&all)?;
    let next = workspace::summary(&rows).1.map(|r| r.id.clone());
    let database = ctx.open(&args.server)?;
    let check = |id: &str| {
        if let Err(e) = check_once(ctx, &database, &ws, &root, id, Draw::default()) {
            eprintln!("{}", causes_in(&e, lang));
        }
    };
    match (&args.exercise, &next) {
        (Some(id), _) => check(id),
        (None, Some(id)) => eprintln!(
            "{}",
            lang.f(
                "next unfinished: {id} (edit {path}; it is checked when you save it)",
                &[("id", id), ("path", &ws.solution_path(id).display())]
            )
        ),
        (None, None) => {}
    }
    eprintln!(
        "{}",
        lang.f(
            "watching {dir} — save a solution.js to re-check, Ctrl-C to stop",
            &[("dir", &ws.dir.display())]
        )
    );
    watch::watch(&ws.dir, &ids, args.exercise.as_deref(), |id| {
        if !dumb_terminal() {
            // Clearing the screen is a nicety: a closed stdout stops nothing.
            let _ = super::write_out(format_args!("\x1b[2J\x1b[H"));
        }
        check(id);
        true
    })?;
    Ok(ExitCode::SUCCESS)
}
