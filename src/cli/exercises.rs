//! `schemalab exercises init|list|grade`: create the self-study workspace,
//! every exercise with its status, score and what to do next, and, for an
//! instructor, many learners' workspaces graded on a fixed seed set as a
//! table, JSON or CSV (format and exit codes in docs/GRADING.md).

use std::path::PathBuf;
use std::process::ExitCode;

use schemalab::exercises::{Exercise, Workspace, manifest, workspace};

use super::{Context, ServerArgs};

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
    /// For instructors: grade many learners' workspaces (one folder each)
    /// on a fixed set of seeds, without touching their progress. Exit 0
    /// when every learner passed every exercise graded, 1 when one did
    /// not, 2 when grading stopped (see docs/GRADING.md).
    Grade(GradeArgs),
    /// Start over: forget an exercise's progress (attempts, hints revealed,
    /// passed), or every exercise's when none is named. Your files stay as
    /// they are (`schemalab reset` restores an exercise's starter).
    Forget {
        /// The exercise id (default: every exercise).
        exercise: Option<String>,
        /// The workspace folder.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// `schemalab exercises grade`'s options.
#[derive(Debug, clap::Args)]
pub struct GradeArgs {
    /// The learners' workspace folders.
    #[arg(required = true, value_name = "WORKSPACE")]
    workspaces: Vec<PathBuf>,
    /// Grade only this exercise (repeat for several; default: all).
    #[arg(long = "exercise", value_name = "EXERCISE")]
    exercises: Vec<String>,
    /// The seeds every solution is checked on, comma-separated; an
    /// exercise passes when it passes on every one.
    #[arg(long, value_delimiter = ',', default_values_t = [1u64, 7, 13])]
    seeds: Vec<u64>,
    /// One JSON document instead of the table.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// CSV, one row per learner and exercise, instead of the table.
    #[arg(long)]
    csv: bool,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(ctx: &Context, command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Init { dir } => init(ctx, dir),
        Command::List { dir } => list(ctx, dir),
        Command::Forget { exercise, dir } => forget(ctx, exercise.as_deref(), dir),
        Command::Grade(args) => match grade(ctx, &args) {
            Ok(code) => Ok(code),
            Err(e) if super::is_closed_pipe(&e) => Err(e),
            Err(e) => {
                eprintln!("{}", super::error_line(&e, ctx.lang));
                eprintln!("{}", ctx.lang.t("grade: grading stopped (exit 2)"));
                Ok(ExitCode::from(2))
            }
        },
    }
}

/// One learner's result on one exercise.
#[derive(Debug, serde::Serialize)]
struct Graded {
    exercise: String,
    /// `passed`, `failed`, `untouched` (the starter as given) or
    /// `unreadable` (no workspace, a missing or non-UTF-8 file).
    verdict: &'static str,
    passed: bool,
    seeds_passed: usize,
    seeds: usize,
    /// Checks passed and run, over every seed.
    checks_passed: usize,
    checks_total: usize,
    /// Checks that failed on some seed, in the exercise's order.
    failing: Vec<String>,
    /// Why the files could not be read, or the first section error.
    error: Option<String>,
}

/// One learner.
#[derive(Debug, serde::Serialize)]
struct Learner {
    workspace: String,
    name: String,
    passed: usize,
    exercises: Vec<Graded>,
}

fn grade(ctx: &Context, args: &GradeArgs) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let root = ctx.content_root()?;
    let chosen: Vec<Exercise> = if args.exercises.is_empty() {
        manifest::exercises(&root, lang)?
    } else {
        args.exercises
            .iter()
            .map(|id| manifest::find(&root, id, lang))
            .collect::<Result<_, _>>()?
    };
    if args.seeds.is_empty() {
        anyhow::bail!("--seeds: give at least one seed");
    }
    // Each exercise's data is generated once and copied for every check.
    let loader = schemalab::course::TemplateLoader::new(
        schemalab::course::CatalogLoader::for_course(&root)?,
        "grade",
    )
    .named(&ctx.names);
    let database = ctx.open(&args.server)?;
    // The reference of each exercise and seed is measured once, for the
    // whole class.
    let references = schemalab::exercises::ReferenceSides::new();
    let mut learners = Vec::new();
    for dir in &args.workspaces {
        let ws = Workspace::locate(Some(dir));
        let name = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        eprintln!("{}", lang.f("grading {name}", &[("name", &name)]));
        let mut graded = Vec::new();
        for ex in &chosen {
            let one = grade_one(&database, &ws, ex, &args.seeds, &loader, &references, ctx);
            if one.is_err() {
                database.block_on(loader.drop_templates(database.client()));
            }
            graded.push(one?);
        }
        learners.push(Learner {
            workspace: dir.display().to_string(),
            name,
            passed: graded.iter().filter(|g| g.passed).count(),
            exercises: graded,
        });
    }
    database.block_on(loader.drop_templates(database.client()));
    if args.json {
        let json = serde_json::json!({
            "seeds": args.seeds,
            "exercises": chosen.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
            "learners": learners,
        });
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else if args.csv {
        outln!(
            "learner,workspace,exercise,verdict,seeds_passed,seeds,checks_passed,checks_total,failing"
        );
        for l in &learners {
            for g in &l.exercises {
                outln!(
                    "{},{},{},{},{},{},{},{},{}",
                    csv_field(&l.name),
                    csv_field(&l.workspace),
                    g.exercise,
                    g.verdict,
                    g.seeds_passed,
                    g.seeds,
                    g.checks_passed,
                    g.checks_total,
                    csv_field(&g.failing.join(" "))
                );
            }
        }
    } else {
        let seeds: Vec<String> = args.seeds.iter().map(ToString::to_string).collect();
        outln!(
            "{}",
            lang.f("seeds {seeds}", &[("seeds", &seeds.join(", "))])
        );
        for l in &learners {
            outln!(
                "\n{}",
                lang.f(
                    "{name}: {passed}/{total} exercises passed",
                    &[
                        ("name", &l.name),
                        ("passed", &l.passed),
                        ("total", &l.exercises.len())
                    ]
                )
            );
            for g in &l.exercises {
                let mark = if g.passed { '✓' } else { '✗' };
                let mut line = format!(
                    "  {mark} {:<22} {:<10} {}/{} {}  {}/{} {}",
                    g.exercise,
                    lang.t(g.verdict),
                    g.seeds_passed,
                    g.seeds,
                    lang.t("seeds"),
                    g.checks_passed,
                    g.checks_total,
                    lang.t("checks"),
                );
                if !g.failing.is_empty() {
                    line.push_str(&format!("  [{}]", g.failing.join(", ")));
                }
                outln!("{line}");
                if let Some(e) = &g.error {
                    outln!("      {e}");
                }
            }
        }
    }
    let everyone = learners
        .iter()
        .all(|l| l.exercises.iter().all(|g| g.passed));
    Ok(if everyone {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Grade exercise `ex` of one workspace on every seed.
fn grade_one(
    database: &schemalab::connect::Database,
    ws: &Workspace,
    ex: &Exercise,
    seeds: &[u64],
    loader: &schemalab::course::TemplateLoader<schemalab::course::CatalogLoader>,
    references: &schemalab::exercises::ReferenceSides,
    ctx: &Context,
) -> anyhow::Result<Graded> {
    let lang = ctx.lang;
    let mut g = Graded {
        exercise: ex.id.clone(),
        verdict: "failed",
        passed: false,
        seeds_passed: 0,
        seeds: seeds.len(),
        checks_passed: 0,
        checks_total: 0,
        failing: Vec::new(),
        error: None,
    };
    // An untouched starter fails without a check (it is no attempt).
    let starter = ex.read(ex.spec.starter.get_ref())?;
    if ws
        .attempt(ex)
        .is_ok_and(|(sol, _)| sol.trim_end() == starter.trim_end())
    {
        g.verdict = "untouched";
        g.checks_total = ex.spec.checks.len() * seeds.len();
        return Ok(g);
    }
    let reports = match database.block_on(schemalab::exercises::grade_workspace(
        database.client(),
        ex,
        ws,
        seeds,
        loader,
        references,
        &ctx.names,
    ))? {
        Ok(r) => r,
        Err(e) => {
            g.verdict = "unreadable";
            g.checks_total = ex.spec.checks.len() * seeds.len();
            g.error = Some(e.message().render_in(lang));
            return Ok(g);
        }
    };
    for r in &reports {
        let (ok, all) = r.score();
        g.checks_passed += ok;
        g.checks_total += all;
        if r.passed() {
            g.seeds_passed += 1;
        }
        for c in r.results.iter().filter(|c| !c.passed) {
            if !g.failing.contains(&c.id) {
                g.failing.push(c.id.clone());
            }
        }
        if g.error.is_none()
            && let Some(e) = r.section_errors.first()
        {
            g.error = Some(format!(
                "{}:{}:{}: {}",
                e.file,
                e.line,
                e.col,
                e.message.render_in(lang).lines().next().unwrap_or_default()
            ));
        }
    }
    let order = ex.check_ids();
    g.failing
        .sort_by_key(|id| order.iter().position(|o| o == id).unwrap_or(usize::MAX));
    g.passed = g.seeds_passed == seeds.len();
    if g.passed {
        g.verdict = "passed";
    }
    Ok(g)
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn forget(ctx: &Context, id: Option<&str>, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ws = Workspace::locate(dir.as_deref());
    // A named exercise must be one of the course's (a typo forgets nothing).
    if let Some(id) = id {
        manifest::find(ctx.content_root()?, id, ctx.lang)?;
    }
    let n = ws.forget(id)?;
    outln!(
        "{}",
        ctx.lang.f(
            "forgot the progress of {n} exercise(s) in {dir}; your files are as they were",
            &[("n", &n), ("dir", &ws.dir.display())]
        )
    );
    Ok(ExitCode::SUCCESS)
}

fn init(ctx: &Context, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let dir = dir.unwrap_or_else(|| PathBuf::from(workspace::DEFAULT_DIR));
    let ws = Workspace::locate(Some(&dir));
    let all = manifest::exercises(ctx.content_root()?, lang)?;
    let written = ws.init_in(&all, lang)?;
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
