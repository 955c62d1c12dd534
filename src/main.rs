//! The `schemalab` command line: the only place that uses `anyhow`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tokio::runtime::Runtime;

/// schemalab: learn MongoDB schema design by measurement.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    /// A MongoDB to use instead of the embedded engine. schemalab only
    /// writes and drops databases whose names start with `schemalab_`
    /// (unless `schemalab shell` is started with --allow-writes).
    #[arg(long, env = "MONGODB_URI", global = true)]
    uri: Option<String>,
    /// Presenter mode for instructors: high contrast, generous spacing,
    /// lessons revealed section by section.
    #[arg(long, global = true)]
    present: bool,
    #[command(subcommand)]
    command: Option<Command>,
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
    },
    /// Check every lesson, statement, claim and dataset reference.
    Lint,
    /// Datasets.
    #[command(subcommand)]
    Dataset(DatasetCommand),
    /// The mongosh-dialect shell, interactive or running a file.
    ///
    /// On the embedded engine (no --uri) the shell may write anywhere.
    /// With --uri it writes, drops and renames only in databases whose
    /// names start with `schemalab_` (reads go anywhere) unless started
    /// with --allow-writes.
    Shell {
        /// Run this file instead of prompting.
        #[arg(long)]
        file: Option<PathBuf>,
        /// The database to start in.
        #[arg(long, default_value = "test")]
        db: String,
        /// With --uri: also write outside `schemalab_` databases (without
        /// it, any command that would write elsewhere is refused before
        /// it is sent). Without --uri the shell is unrestricted anyway.
        #[arg(long)]
        allow_writes: bool,
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
fn content_root() -> PathBuf {
    let cwd = PathBuf::from(".");
    if cwd.join("lessons/manifest.toml").exists() {
        cwd
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }
}

/// The database everything talks to: the embedded engine on an ephemeral
/// loopback port, or the server named by `--uri`.
struct Database {
    runtime: Runtime,
    uri: String,
    /// Keeps the embedded server alive for as long as the command runs.
    _server: Option<schemalab::wire::ServerHandle>,
}

impl Database {
    fn open(uri: Option<String>) -> anyhow::Result<Self> {
        let runtime = Runtime::new().context("starting the async runtime")?;
        match uri {
            Some(uri) => Ok(Database {
                runtime,
                uri,
                _server: None,
            }),
            None => {
                let addr = "127.0.0.1:0".parse().context("loopback address")?;
                let server = runtime
                    .block_on(schemalab::wire::serve(
                        addr,
                        schemalab::engine::Engine::new(),
                    ))
                    .context("starting the embedded engine")?;
                Ok(Database {
                    runtime,
                    uri: server.uri(),
                    _server: Some(server),
                })
            }
        }
    }
}

/// A `--uri` the driver cannot parse is named in one line, before anything
/// tries to connect with it.
fn check_uri(uri: &str) -> anyhow::Result<()> {
    let runtime = Runtime::new().context("starting the async runtime")?;
    runtime
        .block_on(async { mongodb::options::ClientOptions::parse(uri).await })
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("--uri '{uri}': not a MongoDB connection string: {}", e.kind))
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Serve { port }) => {
            let runtime = Runtime::new().context("starting the async runtime")?;
            runtime
                .block_on(schemalab::wire::run_serve(port))
                .with_context(|| format!("serving on 127.0.0.1:{port}"))?;
        }
        Some(Command::Lessons) => {
            for (n, l) in schemalab::course::list_lessons(content_root())?
                .iter()
                .enumerate()
            {
                println!("{:>2}. {:<24} {}", n + 1, l.id, l.title);
            }
        }
        Some(Command::Run {
            lesson,
            scale,
            format,
        }) => {
            // Exit codes: 0 every variant ran and every claim holds, 1 a
            // claim fails, 2 an error (bad arguments, unreachable server, a
            // failed variant).
            let run = || -> anyhow::Result<(schemalab::course::LessonReport, schemalab::course::Format)> {
                let root = content_root();
                let scale = scale.parse().map_err(|e| anyhow::anyhow!("--scale: {e}"))?;
                let format = format
                    .parse()
                    .map_err(|e| anyhow::anyhow!("--format: {e}"))?;
                let database = Database::open(cli.uri.clone())?;
                let loader = schemalab::course::CatalogLoader::for_course(&root)?;
                let progress = |p: &schemalab::course::Progress| {
                    eprintln!(
                        "[{}/{}] {} · {} · {}",
                        p.done + 1,
                        p.total,
                        p.experiment,
                        p.variant,
                        p.step
                    );
                };
                let opts = schemalab::course::RunOptions {
                    scale,
                    loader: &loader,
                    cancel: schemalab::course::CancelFlag::new(),
                    progress: Some(&progress),
                };
                let report = database.runtime.block_on(schemalab::course::run_by_id(
                    &root,
                    &lesson,
                    &database.uri,
                    &opts,
                ))?;
                Ok((report, format))
            };
            match run() {
                Ok((report, format)) => {
                    print!("{}", schemalab::course::render(&report, format));
                    let status = schemalab::course::RunStatus::of(&report);
                    eprintln!("{}", status.message());
                    if status.exit_code() != 0 {
                        std::process::exit(status.exit_code());
                    }
                }
                Err(e) => {
                    eprintln!("Error: {e:#}");
                    if schemalab::course::runner::is_environment_error(&format!("{e:#}")) {
                        eprintln!(
                            "This looks like the environment (a slow or unreachable server), not the lesson: \
                             retry the same command when the machine is less busy, or try a smaller --scale."
                        );
                    }
                    eprintln!("run: the lesson could not run (exit 2)");
                    std::process::exit(2);
                }
            }
        }
        Some(Command::Lint) => {
            let errors = schemalab::course::lint(content_root());
            for e in &errors {
                println!("{e}");
            }
            if !errors.is_empty() {
                eprintln!("{} problem(s)", errors.len());
                std::process::exit(1);
            }
            eprintln!("lint: clean");
        }
        Some(Command::Dataset(DatasetCommand::Export {
            name,
            scale,
            seed,
            out,
        })) => {
            use schemalab::datasets as d;
            let catalog = d::load_catalog(content_root().join("datasets/catalog.toml"))?;
            let scale = scale.parse().map_err(|e| anyhow::anyhow!("--scale: {e}"))?;
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
        }) => {
            use schemalab::dialect::WritePolicy;
            let policy = match &cli.uri {
                Some(_) if !allow_writes => WritePolicy::Prefix("schemalab_".to_string()),
                _ => WritePolicy::Unrestricted,
            };
            if let Some(uri) = &cli.uri {
                check_uri(uri)?;
            }
            let database = Database::open(cli.uri)?;
            match file {
                Some(path) => {
                    let ok = database.runtime.block_on(schemalab::dialect::run_file(
                        &database.uri,
                        &db,
                        &path,
                        policy,
                    ));
                    if ok.is_err() {
                        // run_file has already printed the error, with its
                        // place.
                        std::process::exit(1);
                    }
                }
                None => schemalab::dialect::run_interactive_on(
                    database.runtime.handle(),
                    &database.uri,
                    &db,
                    policy,
                )
                .map_err(|e| anyhow::anyhow!("shell: {}", e.line()))?,
            }
        }
        None => {
            let root = content_root();
            schemalab::tui::run(schemalab::tui::TuiOptions {
                uri: cli.uri,
                present: cli.present,
                scale: schemalab::course::Scale::Default,
                lessons_dir: root.join("lessons"),
                datasets_dir: root.join("datasets"),
            })?;
        }
    }
    Ok(())
}
