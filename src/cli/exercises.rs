//! `schemalab exercises init|list`: create the self-study workspace, and
//! every exercise with its status, score and what to do next.

use std::path::PathBuf;
use std::process::ExitCode;

use schemalab::exercises::{Exercise, Workspace, manifest, workspace};

use super::Context;

/// One exercise of a workspace: what `hint`, `reset` and `solution` are
/// given.
#[derive(Debug, clap::Args)]
pub struct ExerciseArgs {
    /// The exercise id (see `schemalab exercises list`).
    exercise: String,
    /// The workspace folder.
    #[arg(long)]
    dir: Option<PathBuf>,
}

impl ExerciseArgs {
    /// The workspace and the exercise, its words in the context's language.
    pub fn open(&self, ctx: &Context) -> anyhow::Result<(Workspace, Exercise)> {
        let ws = Workspace::locate(self.dir.as_deref());
        let ex = manifest::find(ctx.content_root()?, &self.exercise, ctx.lang)?;
        Ok((ws, ex))
    }

    /// The exercise's id as given.
    pub fn id(&self) -> &str {
        &self.exercise
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Create the workspace with every exercise's starter files (never
    /// overwrites a file that exists).
    Init {
        /// Where (default ./schemalab-exercises).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Every exercise with its status, your score and what to do next.
    List {
        /// The workspace folder.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

pub fn run(ctx: &Context, command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Init { dir } => init(ctx, dir),
        Command::List { dir } => list(ctx, dir),
    }
}

fn init(ctx: &Context, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let dir = dir.unwrap_or_else(|| PathBuf::from(workspace::DEFAULT_DIR));
    let ws = Workspace::locate(Some(&dir));
    let all = manifest::exercises(ctx.content_root()?, lang)?;
    let written = ws.init(&all)?;
    outln!(
        "{}",
        lang.f(
            "{n} exercises in {dir} ({new} new file(s); existing files were kept)",
            &[
                ("n", &all.len()),
                ("dir", &ws.dir.display()),
                ("new", &written.len())
            ]
        )
    );
    outln!(
        "{}",
        lang.f(
            "start with: schemalab exercises list --dir {dir}",
            &[("dir", &ws.dir.display())]
        )
    );
    Ok(ExitCode::SUCCESS)
}

fn list(ctx: &Context, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let ws = Workspace::locate(dir.as_deref());
    let all = manifest::exercises(ctx.content_root()?, lang)?;
    let rows = ws.rows(&all)?;
    for r in &rows {
        let status = if r.progress.passed {
            format!("✓ {}", lang.t("passed"))
        } else if r.progress.attempts > 0 {
            format!("✗ {}", lang.t("tried"))
        } else {
            format!("· {}", lang.t("new"))
        };
        outln!(
            "{}  {:<22} {:<20} {}  {}",
            schemalab::locale::pad(&status, 8, true),
            r.id,
            r.lesson,
            r.title,
            lang.f(
                "(attempts {attempts}, hints {hints})",
                &[
                    ("attempts", &r.progress.attempts),
                    ("hints", &r.progress.hints_used)
                ]
            )
        );
    }
    let (score, next) = workspace::summary(&rows);
    outln!("\n{}", lang.f("{score} passed", &[("score", &score)]));
    match next {
        Some(n) => outln!(
            "{}",
            lang.f(
                "next: {id} · edit {path} then `schemalab check {id}`",
                &[("id", &n.id), ("path", &ws.solution_path(&n.id).display())]
            )
        ),
        None => outln!("{}", lang.t("every exercise passed")),
    }
    Ok(ExitCode::SUCCESS)
}
