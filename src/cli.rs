//! The `schemalab` command line: its options, one file per command
//! (`cli/<command>.rs`, each owning its arguments and what it does), and the
//! [`Context`] every command gets. `main.rs` only parses and dispatches.
//!
//! Commands return `anyhow::Result<ExitCode>`: the binary's edge is the one
//! place where errors of every layer meet, and `error` renders them in the
//! chosen language. A command never calls `process::exit`, so what it
//! opened (the embedded engine above all) is closed on the way out.

/// `println!` for a command's output: a closed stdout (`schemalab lessons
/// | head -1`) is an error the command returns, which `main` takes as the
/// normal end it is, instead of a panic.
macro_rules! outln {
    () => {
        $crate::cli::write_out(format_args!("\n"))?
    };
    ($($arg:tt)*) => {
        $crate::cli::write_out(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// `print!` for a command's output, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::write_out(format_args!($($arg)*))?
    };
}

pub mod allocator;
mod bench;
mod check;
mod dataset;
mod doctor;
mod error;
mod exercises;
mod hint;
mod lessons;
mod lint;
mod reset;
mod run;
mod serve;
mod shell;
mod solution;
mod watch;
mod workbench;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use schemalab::connect::{ConnectError, Database};
use schemalab::locale::Lang;

pub use error::error_line;

/// schemalab: learn MongoDB schema design by measurement.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    server: ServerArgs,
    /// Presenter mode for instructors (the workbench only): high contrast,
    /// generous spacing, lessons revealed section by section.
    #[arg(long)]
    present: bool,
    /// The language of the course and of schemalab's own words: en or
    /// zh-CN. Default: from LC_ALL, LC_MESSAGES or LANG (zh… chooses
    /// Chinese), else English. Missing translations show in English.
    #[arg(long, global = true, value_name = "LANG")]
    lang: Option<String>,
    /// A course folder (holding lessons/ and datasets/) to use instead of
    /// the one built into schemalab; default: the working directory when
    /// it has lessons/manifest.toml.
    #[arg(long, global = true, value_name = "DIR")]
    content: Option<PathBuf>,
    /// On a server a class shares: your name (1 to 16 lowercase letters,
    /// digits or '-'). Your databases are then `schemalab_<name>_…`, apart
    /// from everyone else's, and nothing you run may write any other.
    #[arg(long, global = true, env = "SCHEMALAB_DB_PREFIX", value_name = "NAME")]
    db_prefix: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The database option, on the commands that talk to a database.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// A MongoDB to use instead of the embedded engine. schemalab only
    /// writes and drops databases whose names start with `schemalab_`
    /// (unless `schemalab shell` is started with --allow-writes).
    #[arg(long, env = "MONGODB_URI")]
    uri: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the embedded engine over the MongoDB wire protocol on
    /// 127.0.0.1, for mongosh, pymongo, Compass or any driver.
    Serve(serve::Args),
    /// The course outline.
    Lessons,
    /// Run a lesson's experiments side by side and report what each
    /// variant examined, returned and weighed.
    Run(run::Args),
    /// Check every lesson, statement, claim and dataset reference.
    Lint,
    /// Benchmarks. `bench course`: every lesson's run time and peak memory.
    #[command(subcommand)]
    Bench(bench::Command),
    /// Datasets.
    #[command(subcommand)]
    Dataset(dataset::Command),
    /// Check what the course needs of a server (version and topology,
    /// writing and dropping its databases, sizes, the profiler, free space,
    /// the clock): exit 0 when the course can run there, 1 when it cannot.
    Doctor(doctor::Args),
    /// The mongosh JavaScript shell, interactive or running a file.
    ///
    /// On the embedded engine (no --uri) the shell may write anywhere.
    /// With --uri it writes, drops and renames only in databases whose
    /// names start with `schemalab_` (reads go anywhere) unless started
    /// with --allow-writes.
    ///
    /// With --lesson it first prepares that lesson's databases as `run`
    /// does before measuring (dataset and setup for every variant, or only
    /// --variant; only `schemalab_<lesson>_<variant>` databases are
    /// written, also with --uri) and starts in the first of them.
    Shell(shell::Args),
    /// Self-study exercises: create the workspace, see your progress.
    #[command(subcommand)]
    Exercises(exercises::Command),
    /// Grade your solution of an exercise by measurement (exit 0 when every
    /// check passes, 1 when one fails, 2 when nothing could be graded).
    Check(check::Args),
    /// Re-check on every save (the given exercise, or whichever you edit).
    Watch(watch::Args),
    /// Reveal the next hint of an exercise, one stage at a time.
    Hint(exercises::ExerciseArgs),
    /// Restore an exercise's starter files (a .bak keeps yours).
    Reset(exercises::ExerciseArgs),
    /// The reference solution and its explanation, once you have passed.
    Solution(solution::Args),
}

/// What every command is given: the language chosen, the course folder
/// and the global `--uri`.
#[derive(Debug, Clone)]
pub struct Context {
    pub lang: Lang,
    content: Option<PathBuf>,
    uri: Option<String>,
    /// How this command's databases are named (`--db-prefix`).
    pub names: schemalab::course::DbNames,
}

impl Context {
    /// The folder holding `lessons/` and `datasets/`: `--content`, else
    /// the working directory when it has them, else the course built in.
    pub fn content_root(&self) -> anyhow::Result<PathBuf> {
        Ok(schemalab::bundle::course_root(self.content.as_deref())?)
    }

    /// Open the database a command's own `--uri` names, else the global
    /// one, else the embedded engine.
    pub fn open(&self, server: &ServerArgs) -> Result<Database, ConnectError> {
        Database::open(self.uri(server))
    }

    /// The `--uri` in force for a command with its own `--uri` option.
    pub fn uri(&self, server: &ServerArgs) -> Option<String> {
        server.uri.clone().or_else(|| self.uri.clone())
    }

    /// Run `f` with the options of a lesson run at `scale` over the
    /// course under `root`, each step reported on stderr as one line.
    pub fn with_run_options<T>(
        &self,
        root: &std::path::Path,
        scale: schemalab::course::Scale,
        f: impl FnOnce(&schemalab::course::RunOptions<'_>) -> T,
    ) -> anyhow::Result<T> {
        use schemalab::course::{CancelFlag, CatalogLoader, Progress, RunOptions};
        let loader = CatalogLoader::for_course(root)?;
        let progress = |p: &Progress| {
            eprintln!(
                "[{}/{}] {} · {} · {}",
                p.done + 1,
                p.total,
                p.experiment,
                p.variant,
                p.step_in(self.lang)
            );
        };
        let opts = RunOptions {
            scale,
            names: self.names.clone(),
            loader: &loader,
            cancel: CancelFlag::new(),
            progress: Some(&progress),
        };
        Ok(f(&opts))
    }
}

/// The command line, with its help and parse errors in the language it
/// asks for (`--lang` anywhere on it, else the environment).
pub fn parse() -> Cli {
    use schemalab::locale::cli;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let lang = cli::lang_from_args(&args, |k| std::env::var(k).ok());
    let matches = cli::localize(Cli::command(), lang)
        .try_get_matches_from(&args)
        .unwrap_or_else(|e| {
            use clap::error::ErrorKind as K;
            let shown = matches!(
                e.kind(),
                K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand
            );
            if lang == Lang::ZhCn && !shown {
                e.apply::<cli::ZhFormatter>().exit()
            }
            e.exit()
        });
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

impl Cli {
    /// The language `--lang` (or the environment) chooses.
    pub fn lang(&self) -> anyhow::Result<Lang> {
        use anyhow::Context as _;
        Lang::choose(self.lang.as_deref()).context("--lang")
    }

    /// Run the command the line names (the workbench when it names none).
    pub fn dispatch(self, lang: Lang) -> anyhow::Result<ExitCode> {
        let ctx = Context {
            lang,
            content: self.content,
            uri: self.server.uri,
            names: schemalab::course::DbNames::for_learner(self.db_prefix.as_deref())?,
        };
        match self.command {
            Some(Command::Serve(args)) => serve::run(&ctx, args),
            Some(Command::Lessons) => lessons::run(&ctx),
            Some(Command::Run(args)) => run::run(&ctx, args),
            Some(Command::Lint) => lint::run(&ctx),
            Some(Command::Bench(cmd)) => bench::run(&ctx, cmd),
            Some(Command::Dataset(cmd)) => dataset::run(&ctx, cmd),
            Some(Command::Doctor(args)) => doctor::run(&ctx, args),
            Some(Command::Shell(args)) => shell::run(&ctx, args),
            Some(Command::Exercises(cmd)) => exercises::run(&ctx, cmd),
            Some(Command::Check(args)) => check::run(&ctx, args),
            Some(Command::Watch(args)) => watch::run(&ctx, args),
            Some(Command::Hint(args)) => hint::run(&ctx, args),
            Some(Command::Reset(args)) => reset::run(&ctx, args),
            Some(Command::Solution(args)) => solution::run(&ctx, args),
            None => workbench::run(&ctx, self.present),
        }
    }
}

/// Write a command's output to stdout (see [`outln!`]).
pub fn write_out(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    use std::io::Write;
    std::io::stdout().lock().write_fmt(args)
}

/// Whether `e` is stdout (or stderr) closed by the reader: `schemalab
/// lessons | head -1` has printed what was wanted.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A `--scale`/`--format` value that did not parse, named by its option.
fn bad_option<E: std::error::Error + Send + Sync + 'static>(
    option: &'static str,
) -> impl Fn(E) -> anyhow::Error {
    move |e| anyhow::Error::new(e).context(option)
}

/// Whether the terminal cannot draw (TERM=dumb): plain output, no TUI.
fn dumb_terminal() -> bool {
    std::env::var("TERM").is_ok_and(|t| t == "dumb")
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemalab::locale::cli;

    #[test]
    fn every_help_text_has_a_chinese_entry() {
        let missing = cli::missing_translations(&Cli::command(), Lang::ZhCn);
        assert!(
            missing.is_empty(),
            "{} without zh-CN:\n{}",
            missing.len(),
            missing.join("\n")
        );
    }
}
