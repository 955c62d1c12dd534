//! The `schemalab` command line: the only place that uses `anyhow`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use schemalab::connect::Database;
use schemalab::exercises::Workspace;
use tokio::runtime::Runtime;

/// mimalloc: the engine allocates and frees many small values (documents,
/// index keys); mimalloc does this faster than the system allocator and
/// gives freed pages back to the system (a dropped database's memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc keeps freed pages for a second (its default purge delay)
/// before giving them back, so that memory freed and allocated again
/// within a step is not faulted in anew: returning every page at once cost
/// a fifth of a course run's CPU in page faults. The engine says when to
/// give everything back at once (`engine::release`): after a database is
/// dropped, and from the server once a second, so that a process gone
/// idle after a run does not keep what it freed.
fn tune_allocator() {
    schemalab_engine::release::set_hook(collect_freed_memory);
    disable_transparent_huge_pages();
}

/// mimalloc asks the kernel for transparent huge pages on its arenas
/// (`madvise`), and the kernel then backs them with 2 MiB pages: zeroing
/// each one on first touch (a seventh of a large lesson's load step in a
/// profile), and keeping a whole one resident while any of it is in use,
/// whatever the allocator has given back inside it. Measured with the
/// process's huge pages off, every lesson ran as fast or faster at large
/// scale (one-to-squillions 15.5 -> 12.3 s, computed 28.6 -> 26.3 s), with
/// lower peaks (case-study 1900 -> 1800 MiB), and 1M small documents held
/// about 10 MiB less. A `mongod` this process starts inherits the setting,
/// which MongoDB's production notes for 7.0 recommend too. Where the kernel
/// refuses, nothing changes.
fn disable_transparent_huge_pages() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

/// mimalloc's forced collect: the calling thread's free pages go back to
/// the arenas, and every arena's pending purges (the whole program's) are
/// done now.
#[allow(unsafe_code)]
fn collect_freed_memory() {
    // SAFETY: `mi_collect` only walks mimalloc's own structures; it may be
    // called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// schemalab: learn MongoDB schema design by measurement.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
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
    #[command(subcommand)]
    command: Option<Command>,
}

/// The database option, on the commands that talk to a database.
#[derive(Debug, Clone, clap::Args)]
struct ServerArgs {
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
    Serve {
        /// Port to listen on (0 picks a free one).
        #[arg(long, default_value_t = 27017)]
        port: u16,
    },
    /// The course outline.
    Lessons,
    /// Run a lesson's experiments side by side and report what each
    /// variant examined, returned and weighed.
    Run {
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
    },
    /// Check every lesson, statement, claim and dataset reference.
    Lint,
    /// Benchmarks. `bench course`: every lesson's run time and peak memory.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Datasets.
    #[command(subcommand)]
    Dataset(DatasetCommand),
    /// The mongosh-dialect shell, interactive or running a file.
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
    Shell {
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
    },
    /// Self-study exercises: create the workspace, see your progress.
    #[command(subcommand)]
    Exercises(ExercisesCommand),
    /// Grade your solution of an exercise by measurement (exit 0 when every
    /// check passes, 1 otherwise).
    Check {
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
    },
    /// Re-check on every save (the given exercise, or whichever you edit).
    Watch {
        /// The exercise to re-check (default: whichever solution you save).
        exercise: Option<String>,
        /// The workspace folder.
        #[arg(long)]
        dir: Option<PathBuf>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Reveal the next hint of an exercise, one stage at a time.
    Hint {
        /// The exercise id (see `schemalab exercises list`).
        exercise: String,
        /// The workspace folder.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Restore an exercise's starter files (a .bak keeps yours).
    Reset {
        /// The exercise id (see `schemalab exercises list`).
        exercise: String,
        /// The workspace folder.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// The reference solution and its explanation, once you have passed.
    Solution {
        /// The exercise id (see `schemalab exercises list`).
        exercise: String,
        /// Show it without having passed.
        #[arg(long)]
        reveal: bool,
        /// The workspace folder.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum ExercisesCommand {
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

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Run every lesson (or the ones named) on the embedded engine in this
    /// process and print each one's wall time, peak resident memory (the
    /// engine included) and resident memory once its databases are
    /// dropped. Exits 1 when a lesson fails.
    Course {
        /// Lessons to run (ids, numbers or folders); all when none.
        lessons: Vec<String>,
        /// tiny, default or large.
        #[arg(long, default_value = "default")]
        scale: String,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
        /// Fail (exit 1) when a lesson's peak resident memory exceeds this
        /// many MiB.
        #[arg(long, value_name = "MIB")]
        max_peak_mib: Option<u64>,
        /// Fail (exit 1) when a lesson takes longer than this many seconds.
        #[arg(long, value_name = "SECONDS")]
        max_seconds: Option<f64>,
        /// Also print, on stderr, each step's wall time and peak resident
        /// memory as it ends.
        #[arg(long)]
        steps: bool,
    },
}

#[derive(Debug, Subcommand)]
enum DatasetCommand {
    /// Write a dataset as Extended JSON arrays that `mongoimport --jsonArray`
    /// accepts, one file per collection.
    Export {
        /// The dataset name (see datasets/catalog.toml).
        name: String,
        /// tiny, default or large.
        #[arg(long, default_value = "default")]
        scale: String,
        /// The seed; the same seed gives the same bytes.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Folder to write into.
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
}

/// The folder holding `lessons/` and `datasets/`: the working directory
/// when it has them, else the folder the program was built from.
fn content_root(explicit: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    Ok(schemalab::bundle::course_root(explicit)?)
}

/// Check one exercise of workspace `ws`, print the checklist, record the
/// attempt; true when it passed.
#[allow(clippy::too_many_arguments)]
fn check_once(
    database: &Database,
    ws: &Workspace,
    id: &str,
    seed: Option<u64>,
    scale: Option<schemalab::course::Scale>,
    json: bool,
    lang: schemalab::locale::Lang,
    root: &std::path::Path,
) -> anyhow::Result<bool> {
    let seed = seed.unwrap_or_else(schemalab::exercises::fresh_seed);
    let report = database.block_on(schemalab::exercises::check_in_workspace_in(
        root,
        ws,
        database.uri(),
        id,
        seed,
        scale,
        lang,
    ))?;
    if json {
        // The checker's own words in the chosen language; keys unchanged.
        let json = schemalab::locale::serialize_in(lang, || serde_json::to_string_pretty(&report))?;
        println!("{json}");
        return Ok(report.passed());
    }
    print!("{}", report.render_in(lang));
    println!(
        "{}",
        lang.f(
            "(edit {path}; repeat this draw with --seed {seed})",
            &[("path", &ws.solution_path(id).display()), ("seed", &seed)]
        )
    );
    if report.passed() {
        let all = schemalab::exercises::manifest::exercises_in(root, lang)?;
        let rows = ws.rows(&all)?;
        let (score, next) = schemalab::exercises::workspace::summary(&rows);
        println!(
            "{}",
            lang.f(
                "progress {score}; `schemalab solution {id}` shows the reference",
                &[("score", &score), ("id", &id)]
            )
        );
        if let Some(n) = next {
            println!("{}", lang.f("next: {id}", &[("id", &n.id)]));
        }
    }
    Ok(report.passed())
}

/// Ordinary errors (a bad argument, a missing file, an unreachable server)
/// print one message with its causes and exit 1; no backtrace.
fn main() -> std::process::ExitCode {
    tune_allocator();
    match real_main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            let lang = LANG
                .get()
                .copied()
                .unwrap_or_else(schemalab::locale::Lang::from_env);
            eprintln!("{}", error_line(&e, lang));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The language chosen for this run, for `main` to write a final error in.
static LANG: std::sync::OnceLock<schemalab::locale::Lang> = std::sync::OnceLock::new();

/// An error and its causes on one line (`Error: outer: cause: …`, as
/// anyhow's `{:#}` writes them), each of schemalab's own errors in `lang`;
/// text from elsewhere (the operating system, the driver, the server)
/// stays as it was written.
fn error_line(e: &anyhow::Error, lang: schemalab::locale::Lang) -> String {
    lang.f("Error: {e}", &[("e", &causes_in(e, lang))])
}

/// An error and its causes joined as anyhow's `{:#}` joins them, each of
/// schemalab's own in `lang`.
fn causes_in(e: &anyhow::Error, lang: schemalab::locale::Lang) -> String {
    let parts: Vec<String> = e.chain().map(|c| cause_in(c, lang)).collect();
    let joined = schemalab::locale::Message::new("{outer}: {cause}");
    parts
        .into_iter()
        .reduce(|outer, cause| {
            joined
                .clone()
                .arg("outer", outer)
                .arg("cause", cause)
                .render_in(lang)
        })
        .unwrap_or_default()
}

/// One cause in `lang` when it is one of schemalab's own errors.
fn cause_in(c: &(dyn std::error::Error + 'static), lang: schemalab::locale::Lang) -> String {
    use schemalab::locale::Localized;
    macro_rules! try_as {
        ($($t:ty),*) => {
            $(if let Some(e) = c.downcast_ref::<$t>() {
                return Localized::render_in(e, lang);
            })*
        };
    }
    try_as!(
        schemalab::course::CourseError,
        schemalab::exercises::ExerciseError,
        schemalab::connect::ConnectError,
        schemalab::bundle::BundleError,
        schemalab::datasets::DatasetError,
        schemalab::bench::BenchError,
        schemalab::locale::LocaleError,
        schemalab::dialect::DialectError
    );
    c.to_string()
}

/// A `--scale`/`--format` value that did not parse, named by its option.
fn bad_option<E: std::error::Error + Send + Sync + 'static>(
    option: &'static str,
) -> impl Fn(E) -> anyhow::Error {
    move |e| anyhow::Error::new(e).context(option)
}

/// One line on stderr per step of a lesson's run or preparation.
fn print_progress(p: &schemalab::course::Progress) {
    let lang = LANG.get().copied().unwrap_or_default();
    eprintln!(
        "[{}/{}] {} · {} · {}",
        p.done + 1,
        p.total,
        p.experiment,
        p.variant,
        p.step_in(lang)
    );
}

/// The command line, with its help and parse errors in the language it
/// asks for (`--lang` anywhere on it, else the environment).
fn parse_cli() -> Cli {
    use schemalab::locale::{Lang, cli};
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

/// Whether the terminal cannot draw (TERM=dumb): plain output, no TUI.
fn dumb_terminal() -> bool {
    std::env::var("TERM").is_ok_and(|t| t == "dumb")
}

fn real_main() -> anyhow::Result<()> {
    let cli = parse_cli();
    let lang = schemalab::locale::Lang::choose(cli.lang.as_deref()).context("--lang")?;
    let _ = LANG.set(lang);
    let content = cli.content.clone();
    let content_root = || content_root(content.as_deref());
    match cli.command {
        Some(Command::Serve { port }) => {
            let runtime = Runtime::new().context(lang.t("starting the async runtime"))?;
            runtime
                .block_on(schemalab_wire::run_serve(port))
                .with_context(|| lang.f("serving on 127.0.0.1:{port}", &[("port", &port)]))?;
        }
        Some(Command::Lessons) => {
            for (n, l) in schemalab::course::list_lessons_in(content_root()?, lang)?
                .iter()
                .enumerate()
            {
                println!(
                    "{:>2}. {} {}",
                    n + 1,
                    schemalab::locale::pad(&l.id, 24, true),
                    l.title
                );
            }
        }
        Some(Command::Run {
            lesson,
            scale,
            format,
            server,
        }) => {
            // Exit codes: 0 every variant ran and every claim holds, 1 a
            // claim fails, 2 an error (bad arguments, unreachable server, a
            // failed variant).
            let run = || -> anyhow::Result<(schemalab::course::LessonReport, schemalab::course::Format)> {
                let root = content_root()?;
                let scale = scale.parse().map_err(bad_option("--scale"))?;
                let format = format
                    .parse()
                    .map_err(bad_option("--format"))?;
                let database = Database::open(server.uri.or(cli.server.uri.clone()))?;
                let loader = schemalab::course::CatalogLoader::for_course(&root)?;
                let opts = schemalab::course::RunOptions {
                    scale,
                    loader: &loader,
                    cancel: schemalab::course::CancelFlag::new(),
                    progress: Some(&print_progress),
                };
                let report = database.block_on(schemalab::course::run_by_id_in(
                    &root,
                    &lesson,
                    database.uri(),
                    &opts,
                    lang,
                ))?;
                Ok((report, format))
            };
            match run() {
                Ok((report, format)) => {
                    print!(
                        "{}",
                        schemalab::course::report::render_in(&report, format, lang)
                    );
                    let status = schemalab::course::RunStatus::of(&report);
                    eprintln!("{}", status.message_in(lang));
                    if status.exit_code() != 0 {
                        std::process::exit(status.exit_code());
                    }
                }
                Err(e) => {
                    eprintln!("{}", error_line(&e, lang));
                    if schemalab::course::runner::is_environment_error(&format!("{e:#}")) {
                        eprintln!(
                            "{}",
                            lang.t(
                                "This looks like the environment (a slow or unreachable server), not the lesson: \
                                 retry the same command when the machine is less busy, or try a smaller --scale."
                            )
                        );
                    }
                    eprintln!("{}", lang.t("run: the lesson could not run (exit 2)"));
                    std::process::exit(2);
                }
            }
        }
        Some(Command::Lint) => {
            let errors = schemalab::course::lint(content_root()?);
            for e in &errors {
                println!("{}", schemalab::locale::Localized::render_in(e, lang));
            }
            if !errors.is_empty() {
                eprintln!("{}", lang.f("{n} problem(s)", &[("n", &errors.len())]));
                std::process::exit(1);
            }
            eprintln!("{}", lang.t("lint: clean"));
        }
        Some(Command::Bench(BenchCommand::Course {
            lessons,
            scale,
            json,
            max_peak_mib,
            max_seconds,
            steps,
        })) => {
            let root = content_root()?;
            let scale = scale.parse().map_err(bad_option("--scale"))?;
            let database = Database::open(None)?;
            if !json {
                println!("{}", schemalab::bench::header_in(lang));
            }
            let all = database.block_on(schemalab::bench::bench_course(
                &root,
                database.uri(),
                scale,
                &lessons,
                steps.then_some(&|s: &schemalab::bench::StepBench| {
                    eprintln!("  {}", schemalab::bench::step_row(s));
                }),
                |b| {
                    if !json {
                        println!("{}", schemalab::bench::row_in(b, lang));
                    }
                },
            ))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            } else {
                println!("{}", schemalab::bench::summary_in(&all, lang));
            }
            let missed = schemalab::bench::missed_targets_in(&all, max_peak_mib, max_seconds, lang);
            for line in &missed {
                eprintln!("{line}");
            }
            if all.iter().any(|b| !b.held) || !missed.is_empty() {
                std::process::exit(1);
            }
        }
        Some(Command::Dataset(DatasetCommand::Export {
            name,
            scale,
            seed,
            out,
        })) => {
            use schemalab::datasets as d;
            let catalog = d::load_catalog(content_root()?.join("datasets/catalog.toml"))?;
            let scale = scale.parse().map_err(bad_option("--scale"))?;
            let files = d::export_extjson_with(
                &catalog,
                &name,
                scale,
                seed,
                &out,
                d::ExtJsonMode::Canonical,
            )?;
            for f in files {
                println!("{}", f.display());
            }
        }
        Some(Command::Shell {
            file,
            db,
            allow_writes,
            server,
            lesson,
            variant,
            scale,
        }) => {
            use schemalab::dialect::WritePolicy;
            let uri = server.uri.or(cli.server.uri);
            let policy = match &uri {
                Some(_) if !allow_writes => WritePolicy::Prefix("schemalab_".to_string()),
                _ => WritePolicy::Unrestricted,
            };
            let database = Database::open(uri)?;
            let db = match &lesson {
                None => db,
                Some(query) => {
                    // The same preparation as `run` (only
                    // schemalab_<lesson>_<variant> databases are
                    // dropped and written); progress and the listing go
                    // to stderr so a --file script's output stays its own.
                    let root = content_root()?;
                    let scale = scale.parse().map_err(bad_option("--scale"))?;
                    let loader = schemalab::course::CatalogLoader::for_course(&root)?;
                    let opts = schemalab::course::RunOptions {
                        scale,
                        loader: &loader,
                        cancel: schemalab::course::CancelFlag::new(),
                        progress: Some(&print_progress),
                    };
                    let prepared = database
                        .block_on(schemalab::course::prepare_by_id_in(
                            &root,
                            query,
                            variant.as_deref(),
                            database.uri(),
                            &opts,
                            lang,
                        ))
                        .map_err(|e| {
                            anyhow::Error::new(e).context(format!("shell --lesson {query}"))
                        })?;
                    eprint!("{}", prepared.listing_in(lang));
                    prepared.current_db().to_string()
                }
            };
            match file {
                Some(path) => {
                    let ok = database.block_on(schemalab::dialect::run_file_in(
                        database.uri(),
                        &db,
                        &path,
                        policy,
                        lang,
                    ));
                    if ok.is_err() {
                        // run_file has already printed the error, with its
                        // place.
                        std::process::exit(1);
                    }
                }
                None => schemalab::dialect::run_interactive_in(
                    database.handle(),
                    database.uri(),
                    &db,
                    policy,
                    lang,
                )
                .map_err(|e| anyhow::anyhow!("shell: {}", e.line_in(lang)))?,
            }
        }
        Some(Command::Exercises(ExercisesCommand::Init { dir })) => {
            let ws =
                Workspace::locate(Some(&dir.unwrap_or_else(|| {
                    PathBuf::from(schemalab::exercises::workspace::DEFAULT_DIR)
                })));
            let all = schemalab::exercises::manifest::exercises_in(content_root()?, lang)?;
            let written = ws.init(&all)?;
            println!(
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
            println!(
                "{}",
                lang.f(
                    "start with: schemalab exercises list --dir {dir}",
                    &[("dir", &ws.dir.display())]
                )
            );
        }
        Some(Command::Exercises(ExercisesCommand::List { dir })) => {
            let ws = Workspace::locate(dir.as_deref());
            let all = schemalab::exercises::manifest::exercises_in(content_root()?, lang)?;
            let rows = ws.rows(&all)?;
            for r in &rows {
                let status = if r.progress.passed {
                    format!("✓ {}", lang.t("passed"))
                } else if r.progress.attempts > 0 {
                    format!("✗ {}", lang.t("tried"))
                } else {
                    format!("· {}", lang.t("new"))
                };
                println!(
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
            let (score, next) = schemalab::exercises::workspace::summary(&rows);
            println!("\n{}", lang.f("{score} passed", &[("score", &score)]));
            match next {
                Some(n) => println!(
                    "{}",
                    lang.f(
                        "next: {id} · edit {path} then `schemalab check {id}`",
                        &[("id", &n.id), ("path", &ws.solution_path(&n.id).display())]
                    )
                ),
                None => println!("{}", lang.t("every exercise passed")),
            }
        }
        Some(Command::Check {
            exercise,
            seed,
            scale,
            json,
            dir,
            server,
        }) => {
            let ws = Workspace::locate(dir.as_deref());
            let scale = scale
                .map(|s| s.parse())
                .transpose()
                .map_err(bad_option("--scale"))?;
            let database = Database::open(server.uri.or(cli.server.uri))?;
            let root = content_root()?;
            let passed = check_once(&database, &ws, &exercise, seed, scale, json, lang, &root)?;
            if !passed {
                std::process::exit(1);
            }
        }
        Some(Command::Watch {
            exercise,
            dir,
            server,
        }) => {
            let ws = Workspace::locate(dir.as_deref());
            let root = content_root()?;
            let all = schemalab::exercises::manifest::exercises_in(&root, lang)?;
            let ids: Vec<String> = all.iter().map(|e| e.id.clone()).collect();
            let rows = ws.rows(&all)?;
            let first = exercise.clone().or_else(|| {
                schemalab::exercises::workspace::summary(&rows)
                    .1
                    .map(|r| r.id.clone())
            });
            let database = Database::open(server.uri.or(cli.server.uri))?;
            if let Some(id) = &first {
                let _ = check_once(&database, &ws, id, None, None, false, lang, &root)
                    .map_err(|e| eprintln!("{}", causes_in(&e, lang)));
            }
            eprintln!(
                "{}",
                lang.f(
                    "watching {dir} — save a solution.js to re-check, Ctrl-C to stop",
                    &[("dir", &ws.dir.display())]
                )
            );
            schemalab::exercises::watch::watch(&ws.dir, &ids, exercise.as_deref(), |id| {
                if !dumb_terminal() {
                    print!("\x1b[2J\x1b[H");
                }
                if let Err(e) = check_once(&database, &ws, id, None, None, false, lang, &root) {
                    eprintln!("{}", causes_in(&e, lang));
                }
                true
            })?;
        }
        Some(Command::Hint { exercise, dir }) => {
            let ws = Workspace::locate(dir.as_deref());
            let ex = schemalab::exercises::manifest::find_in(content_root()?, &exercise, lang)?;
            let (shown, total) = ws.next_hint(&ex)?;
            for (i, h) in shown.iter().enumerate() {
                println!(
                    "{}",
                    lang.f(
                        "hint {n}/{total}: {hint}",
                        &[("n", &(i + 1)), ("total", &total), ("hint", h)]
                    )
                );
            }
            if shown.len() == total {
                println!(
                    "{}",
                    lang.f(
                        "(that was the last hint; `schemalab solution {id} --reveal` shows the reference)",
                        &[("id", &exercise)]
                    )
                );
            }
        }
        Some(Command::Reset { exercise, dir }) => {
            let ws = Workspace::locate(dir.as_deref());
            let ex = schemalab::exercises::manifest::find_in(content_root()?, &exercise, lang)?;
            for f in ws.reset(&ex)? {
                println!("{}", lang.f("restored {path}", &[("path", &f.display())]));
            }
        }
        Some(Command::Solution {
            exercise,
            reveal,
            dir,
        }) => {
            let ws = Workspace::locate(dir.as_deref());
            let ex = schemalab::exercises::manifest::find_in(content_root()?, &exercise, lang)?;
            print!("{}", ws.solution_in(&ex, reveal, lang)?);
        }
        None => {
            if dumb_terminal() {
                anyhow::bail!(
                    "{}",
                    lang.t("TERM=dumb: this terminal cannot draw the workbench. \
                         The same course runs as plain text: `schemalab lessons`, \
                         `schemalab run <lesson>`, `schemalab shell`, `schemalab exercises list`.")
                );
            }
            let root = content_root()?;
            schemalab::tui::run(schemalab::tui::TuiOptions {
                uri: cli.server.uri,
                present: cli.present,
                scale: schemalab::course::Scale::Default,
                root,
                lang,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemalab::locale::{Lang, cli};

    /// The process's transparent huge pages are off once the allocator is
    /// tuned, as the kernel reports them (`THP_enabled` in
    /// `/proc/self/status`, Linux 5.0 on; older kernels skip the check).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn tuning_the_allocator_turns_transparent_huge_pages_off() {
        disable_transparent_huge_pages();
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().ok(),
            Some(true)
        );
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        if let Some(line) = status.lines().find(|l| l.starts_with("THP_enabled:")) {
            assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
        }
    }

    #[test]
    fn an_error_line_is_anyhows_in_english_and_chinese_for_our_own_causes() {
        let e = anyhow::Error::new(schemalab::course::CourseError::UnknownLesson {
            id: "nosuch".into(),
            known: "a, b".into(),
            suggestion: None,
        })
        .context("shell --lesson nosuch");
        assert_eq!(error_line(&e, Lang::En), format!("Error: {e:#}"));
        assert_eq!(
            error_line(&e, Lang::ZhCn),
            "错误：shell --lesson nosuch：课程清单中没有 'nosuch' 这一课（现有的课：a, b）"
        );
        // A cause from elsewhere stays as written.
        let io = anyhow::Error::new(std::io::Error::other("disk on fire")).context("--scale");
        assert_eq!(error_line(&io, Lang::ZhCn), "错误：--scale：disk on fire");
    }

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
