//! `schemalab bench course`: every lesson (or the ones named) run on the
//! embedded engine in this process, with each one's wall time and peak
//! resident memory; exit 1 when a lesson fails or misses a target.

use std::process::ExitCode;

use schemalab::bench;
use schemalab::connect::Database;

use super::{Context, bad_option};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
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

pub fn run(ctx: &Context, command: Command) -> anyhow::Result<ExitCode> {
    let Command::Course {
        lessons,
        scale,
        json,
        max_peak_mib,
        max_seconds,
        steps,
    } = command;
    let lang = ctx.lang;
    let root = ctx.content_root()?;
    let scale = scale.parse().map_err(bad_option("--scale"))?;
    // Always the embedded engine: its memory is this process's.
    let database = Database::open(None)?;
    if !json {
        outln!("{}", bench::header_in(lang));
    }
    let all = database.block_on(bench::bench_course(
        &root,
        database.client(),
        scale,
        &lessons,
        steps.then_some(&|s: &bench::StepBench| {
            eprintln!("  {}", bench::step_row(s));
        }),
        |b| {
            // A closed stdout does not stop the benchmark.
            if !json {
                let _ = super::write_out(format_args!("{}\n", bench::row(b, lang)));
            }
        },
    ))?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&all)?);
    } else {
        outln!("{}", bench::summary_in(&all, lang));
    }
    let missed = bench::missed_targets_in(&all, max_peak_mib, max_seconds, lang);
    for line in &missed {
        eprintln!("{line}");
    }
    if all.iter().any(|b| !b.held) || !missed.is_empty() {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
