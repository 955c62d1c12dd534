//! The terminal user interface: course outline, lesson reader, experiment
//! comparison, explain drill-down, shell pane and presenter mode.
//!
//! Shape (state → action → update → pure render): [`event`] turns terminal
//! input, background reports and signals into [`action::Action`]s through
//! [`keys`]; [`app::App::update`] changes state and returns
//! [`action::Effect`]s; the loop in [`run_with`] performs the effects (the
//! only I/O: starting runs, shell statements, saving progress) and draws
//! with [`view::render`], which only reads state. Background work reports
//! through one channel, and the loop blocks on it (ticking only while
//! something runs), so an idle TUI uses no CPU.
//!
//! Domain apart from UI, as gitui keeps git apart from its screens: state
//! holds the course module's own types ([`lessons::CourseState`] over
//! `course::Course`/`Lesson`, `course::LessonReport` per lesson), prose
//! placeholders are filled by `course::claims::render_prose`, the explain
//! tree draws the explain the runner measured, and the database is opened
//! by [`crate::connect`], as for every command.

pub mod action;
pub mod app;
pub mod course_runner;
pub mod event;
pub mod highlight;
pub mod keys;
pub mod lessons;
pub mod markdown;
pub mod progress;
pub mod strings;
pub mod terminal;
pub mod theme;
pub mod view;

/// One module per screen.
pub mod screens {
    pub mod exercises;
    pub mod experiment;
    pub mod explain_tree;
    pub mod help;
    pub mod outline;
    pub mod presenter;
    pub mod reader;
    pub mod shell;
    pub mod startup_error;
}

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::connect::{ConnectError, Database};
use crate::course::{CancelFlag, LessonReport, Scale};
use crate::locale::{Lang, Localized};
use action::{Action, Effect, TaskMsg};
use app::{App, ConnState, EngineStatus};
use event::Event;
use lessons::CourseState;
use progress::Progress;
use theme::Theme;

/// How the TUI is started (`schemalab` with no subcommand).
#[derive(Debug, Clone, PartialEq)]
pub struct TuiOptions {
    /// A MongoDB URI; `None` starts the embedded engine.
    pub uri: Option<String>,
    /// Presenter mode: high contrast, sections revealed one at a time.
    pub present: bool,
    /// Dataset scale for runs (changed in the TUI with `+`/`-`).
    pub scale: Scale,
    /// The folder holding `lessons/` and `datasets/`.
    pub root: PathBuf,
    /// The language the course is shown in (English wherever a translation
    /// is missing).
    pub lang: Lang,
    /// How runs and checks name their databases (a learner's own on a
    /// shared server).
    pub names: crate::course::DbNames,
}

impl Default for TuiOptions {
    fn default() -> Self {
        TuiOptions {
            uri: None,
            present: false,
            scale: Scale::Default,
            root: PathBuf::from("."),
            lang: Lang::En,
            names: crate::course::DbNames::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Io(#[from] std::io::Error),
    #[error("course content: {0}")]
    Content(String),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("{0}")]
    Runtime(String),
}

/// What a runner gets for one experiment run.
pub struct RunContext<'a> {
    /// The TUI's database: its runtime and the driver's client.
    pub runtime: &'a tokio::runtime::Handle,
    pub client: &'a mongodb::Client,
    /// The lesson's id.
    pub lesson: &'a str,
    /// The id of the experiment to run.
    pub experiment: &'a str,
    pub scale: Scale,
    /// Report progress (called from the runner's threads).
    pub progress: &'a (dyn Fn(crate::course::Progress) + Send + Sync),
    /// Set when the user cancels; the runner stops at the next step.
    pub cancel: &'a CancelFlag,
    /// How the run's databases are named.
    pub names: &'a crate::course::DbNames,
}

/// Runs an experiment and measures it. The course module provides the real
/// one; tests may supply their own. Called on a background thread.
pub trait ExperimentRunner: Send + Sync {
    fn run(&self, ctx: RunContext<'_>) -> Result<LessonReport, String>;
}

/// Used until a runner is wired in: every run fails with an explanation.
pub struct NoRunner;

impl ExperimentRunner for NoRunner {
    fn run(&self, _ctx: RunContext<'_>) -> Result<LessonReport, String> {
        Err(strings::RUNNER_MISSING.to_string())
    }
}

/// Opens the TUI and returns when the user quits. Experiments run through
/// the course runner ([`course_runner::CourseRunner`]).
pub fn run(opts: TuiOptions) -> Result<(), TuiError> {
    let runner = course_runner::CourseRunner::new(&opts.root, opts.lang);
    run_with(opts, Arc::new(runner))
}

/// [`run`] with an explicit experiment runner.
pub fn run_with(opts: TuiOptions, runner: Arc<dyn ExperimentRunner>) -> Result<(), TuiError> {
    // Before any thread exists, so no panic can leave the terminal raw.
    terminal::install_panic_hook();
    strings::set_lang(opts.lang);
    let course = match load_course(&opts.root, opts.lang) {
        Ok(course) => course,
        Err(e) => {
            show_startup_error(&startup_problems(&opts.root, &e))?;
            return Err(e);
        }
    };
    // The embedded engine (or --uri) lives as long as the TUI, opened the
    // way every command opens it; runs, checks and the shell all go
    // through its one client, on its one runtime.
    let rt = crate::connect::small_runtime("schemalab-tui")?;
    let database = Database::open_with(opts.uri.clone(), rt)?;
    let uri = database.uri().to_string();
    let embedded = database.is_embedded();
    let label = if embedded {
        strings::t(strings::EMBEDDED_ENGINE).to_string()
    } else {
        uri.clone()
    };
    let progress_path = Progress::default_path();
    let progress = progress_path
        .as_deref()
        .map(Progress::load)
        .unwrap_or_default();
    let theme = Theme::select(opts.present, Theme::no_color_requested());
    let mut app = App::new(
        course,
        theme,
        opts.present,
        EngineStatus {
            label,
            state: ConnState::Connecting,
        },
        opts.scale,
        progress,
    );
    app.names = opts.names.clone();

    // Exercises: the workspace in the working folder (or ./schemalab-exercises).
    let course_root = opts.root.clone();
    let workspace = crate::exercises::Workspace::locate(None);
    app.exercises = screens::exercises::ExercisesState::load(&course_root, &workspace, opts.lang);
    let mut watcher: Option<crate::exercises::watch::Watcher> = None;

    let (tx, rx) = mpsc::channel::<Event>();
    terminal::spawn_signal_listener(tx.clone())?;
    let mut guard = terminal::Guard::new(tx.clone())?;
    event::spawn_input_reader(tx.clone());
    // Fault injection for tests/safety.rs (debug builds only): a thread
    // that panics once the TUI owns the terminal.
    if cfg!(debug_assertions) && std::env::var_os("SCHEMALAB_FAULT_PANIC_THREAD").is_some() {
        std::thread::Builder::new()
            .name("schemalab-fault".into())
            .spawn(|| panic!("injected fault: a background thread panicked"))?;
    }
    database.handle().spawn(probe(
        database.client().clone(),
        uri.clone(),
        embedded,
        opts.lang,
        tx.clone(),
    ));
    // The shell pane writes anywhere on the embedded engine; against a real
    // server only into `schemalab_` databases, as the `--uri` help promises.
    let shell_policy = if embedded {
        crate::dialect::WritePolicy::Unrestricted
    } else {
        crate::dialect::WritePolicy::Prefix(opts.names.prefix())
    };
    let shell_control = std::sync::Arc::new(ShellControl::default());
    let shell_tx = spawn_shell_worker(
        shell_control.clone(),
        database.handle().clone(),
        database.client().clone(),
        shell_policy,
        tx.clone(),
    );
    let mut cancel: Option<CancelFlag> = None;

    let size = guard.terminal.size()?;
    app.update(Action::Resize {
        width: size.width,
        height: size.height,
    });
    const TICK: Duration = Duration::from_millis(120);
    loop {
        // A panic or a signal gave the terminal back: never draw over it.
        if !terminal::active() {
            break;
        }
        guard.terminal.draw(|frame| view::render(&app, frame))?;
        let event = if app.busy() {
            match rx.recv_timeout(TICK) {
                Ok(ev) => Some(ev),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match rx.recv() {
                Ok(ev) => Some(ev),
                Err(_) => break,
            }
        };
        let action = match event {
            None => Some(Action::Tick),
            // Ctrl-C while a shell statement runs stops the statement,
            // not the program.
            Some(Event::Term(ev)) if is_ctrl_c(&ev) && shell_control.interrupt() => continue,
            Some(Event::Term(ev)) => event::to_action(app.key_context(), &ev),
            Some(Event::Task(msg)) => Some(Action::Task(msg)),
            Some(Event::Signal) => Some(Action::Quit),
        };
        let Some(action) = action else { continue };
        for effect in app.update(action) {
            match effect {
                Effect::StartRun {
                    run_id,
                    lesson,
                    experiment,
                    scale,
                } => {
                    let Some(l) = app.course.lessons.get(lesson) else {
                        continue;
                    };
                    let Some(e) = l.experiments().get(experiment) else {
                        continue;
                    };
                    let (l, e) = (l.id.clone(), e.id.get_ref().clone());
                    let flag = CancelFlag::new();
                    cancel = Some(flag.clone());
                    let job = RunJob {
                        runner: runner.clone(),
                        runtime: database.handle().clone(),
                        client: database.client().clone(),
                        lesson: l,
                        experiment: e,
                        scale,
                        run_id,
                        cancel: flag,
                        tx: tx.clone(),
                        names: opts.names.clone(),
                    };
                    std::thread::Builder::new()
                        .name("schemalab-run".into())
                        .spawn(move || job.run())?;
                }
                Effect::CancelRun => {
                    if let Some(flag) = &cancel {
                        flag.cancel();
                    }
                }
                Effect::ShellEval { db, src } => {
                    let _ = shell_tx.send((db, src));
                }
                Effect::CheckExercise { id } => {
                    let (tx, client, root, ws) = (
                        tx.clone(),
                        database.client().clone(),
                        course_root.clone(),
                        workspace.clone(),
                    );
                    let lang = opts.lang;
                    // Checks may overlap (a save while one runs): each has
                    // its own databases, dropped when it ends.
                    let names = opts.names.clone().for_one_check();
                    database.handle().spawn(async move {
                        let seed = crate::exercises::fresh_seed();
                        let res = crate::exercises::check_in_workspace(
                            &root, &ws, &client, &id, seed, None, lang, &names,
                        )
                        .await;
                        let (text, passed) = match res {
                            Ok(r) => (r.render_in(lang), r.passed()),
                            Err(e) => (format!("! {}", e.render_in(lang)), false),
                        };
                        let _ = tx.send(Event::Task(TaskMsg::CheckFinished { id, text, passed }));
                    });
                }
                Effect::WatchExercises(on) => {
                    watcher = None;
                    if on {
                        let ids = app.exercises.items.iter().map(|i| i.id.clone()).collect();
                        let tx = tx.clone();
                        match crate::exercises::watch::spawn(&workspace.dir, ids, move |id| {
                            let _ = tx.send(Event::Task(TaskMsg::ExerciseChanged(id)));
                        }) {
                            Ok(w) => watcher = Some(w),
                            Err(e) => {
                                app.exercises.watching = false;
                                app.notice = Some(e.to_string());
                            }
                        }
                    }
                }
                Effect::RecordHint { id } => {
                    let res = crate::exercises::manifest::find(&course_root, &id, opts.lang)
                        .and_then(|ex| workspace.next_hint(&ex));
                    if let Err(e) = res {
                        app.notice = Some(e.to_string());
                    }
                }
                Effect::SaveProgress => {
                    if let Some(path) = &progress_path
                        && let Err(e) = app.progress.save(path)
                    {
                        app.notice = Some(format!("{}: {e}", path.display()));
                    }
                }
            }
        }
        if app.should_quit {
            break;
        }
    }
    if let Some(flag) = &cancel {
        flag.cancel();
    }
    // Stop watching the exercises workspace.
    drop(watcher);
    drop(guard);
    for message in terminal::take_held_messages() {
        eprintln!("{message}");
    }
    database.close();
    if terminal::panicked() {
        return Err(TuiError::Runtime(
            "a thread panicked (its message is above); the interface was closed".into(),
        ));
    }
    Ok(())
}

/// The course under `root`: its manifest must load, pass lint and list a
/// lesson; a lesson that does not load is kept with its error.
pub fn load_course(root: &Path, lang: Lang) -> Result<CourseState, TuiError> {
    let course = CourseState::load(root, lang).map_err(|e| TuiError::Content(e.render_in(lang)))?;
    // A manifest lint rejects (an empty file, a missing version) or one
    // listing no lesson opens no course: say so instead of showing an
    // empty outline.
    let manifest = manifest_problems(root, lang);
    if !manifest.is_empty() {
        Err(TuiError::Content(manifest.join("\n")))
    } else if course.lessons.is_empty() {
        Err(TuiError::Content(format!(
            "{}: lists no lessons",
            root.join("lessons").join("manifest.toml").display()
        )))
    } else {
        Ok(course)
    }
}

/// `lint`'s problems with `lessons/manifest.toml` itself.
fn manifest_problems(root: &Path, lang: Lang) -> Vec<String> {
    let manifest = root.join("lessons").join("manifest.toml");
    crate::course::lint(root)
        .iter()
        .filter(|e| e.file == manifest)
        .map(|e| e.render_in(lang))
        .collect()
}

/// What is wrong with a course that cannot be opened: `lint`'s lines for
/// the course root, or the loading error itself when lint finds nothing.
pub fn startup_problems(root: &Path, error: &TuiError) -> Vec<String> {
    let lang = strings::lang();
    let mut lines: Vec<String> = crate::course::lint(root)
        .iter()
        .map(|e| e.render_in(lang))
        .collect();
    if lines.is_empty() {
        lines.push(error.to_string());
    }
    lines
}

/// The startup error screen: shown until a key (q, Esc, Enter, Ctrl-C) or
/// a signal, then the terminal is given back.
fn show_startup_error(problems: &[String]) -> Result<(), TuiError> {
    use ratatui::crossterm::event::{Event as Ct, KeyCode, KeyEventKind, KeyModifiers};
    let (tx, rx) = mpsc::channel::<Event>();
    terminal::spawn_signal_listener(tx.clone())?;
    let mut guard = terminal::Guard::new(tx.clone())?;
    event::spawn_input_reader(tx);
    while terminal::active() {
        guard
            .terminal
            .draw(|frame| screens::startup_error::render(frame, problems))?;
        match rx.recv() {
            Ok(Event::Term(Ct::Key(k))) if k.kind != KeyEventKind::Release => {
                let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
                if matches!(k.code, KeyCode::Char('q') | KeyCode::Esc | KeyCode::Enter)
                    || (ctrl && matches!(k.code, KeyCode::Char('c')))
                {
                    break;
                }
            }
            Ok(Event::Term(_) | Event::Task(_)) => {}
            Ok(Event::Signal) | Err(_) => break,
        }
    }
    drop(guard);
    Ok(())
}

struct RunJob {
    runner: Arc<dyn ExperimentRunner>,
    runtime: tokio::runtime::Handle,
    client: mongodb::Client,
    lesson: String,
    experiment: String,
    scale: Scale,
    run_id: u64,
    cancel: CancelFlag,
    tx: Sender<Event>,
    names: crate::course::DbNames,
}

impl RunJob {
    fn run(self) {
        let tx = self.tx.clone();
        let run_id = self.run_id;
        let report = move |progress: crate::course::Progress| {
            let _ = tx.send(Event::Task(TaskMsg::RunProgress { run_id, progress }));
        };
        let result = self.runner.run(RunContext {
            runtime: &self.runtime,
            client: &self.client,
            lesson: &self.lesson,
            experiment: &self.experiment,
            scale: self.scale,
            progress: &report,
            cancel: &self.cancel,
            names: &self.names,
        });
        let _ = self.tx.send(Event::Task(TaskMsg::RunFinished {
            run_id,
            result: result.map(Box::new),
        }));
    }
}

/// Asks the server who it is, for the status bar (in `lang`: this runs on
/// a worker thread, not the one that draws).
async fn probe(
    client: mongodb::Client,
    uri: String,
    embedded: bool,
    lang: Lang,
    tx: Sender<Event>,
) {
    let msg = match tokio::time::timeout(Duration::from_secs(10), build_info(&client, &uri)).await {
        Ok(Ok((version, host))) => TaskMsg::Connected {
            label: if embedded {
                lang.t(strings::EMBEDDED_ENGINE).to_string()
            } else {
                lang.f(
                    strings::SERVER_LABEL,
                    &[("version", &version), ("host", &host)],
                )
            },
        },
        Ok(Err(e)) => TaskMsg::ConnectionFailed(e),
        Err(_) => TaskMsg::ConnectionFailed(lang.t(strings::CONNECT_TIMED_OUT).to_string()),
    };
    let _ = tx.send(Event::Task(msg));
}

/// The server's version, and the first host `uri` names (for the label).
async fn build_info(client: &mongodb::Client, uri: &str) -> Result<(String, String), String> {
    let options = mongodb::options::ClientOptions::parse(uri)
        .await
        .map_err(|e| e.to_string())?;
    let host = options
        .hosts
        .first()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let info = client
        .database("admin")
        .run_command(bson::doc! {"buildInfo": 1})
        .await
        .map_err(|e| e.to_string())?;
    Ok((info.get_str("version").unwrap_or("?").to_string(), host))
}

/// The shell's session lives on its own thread (one statement at a time,
/// in order); statements arrive over a channel, output goes back as tasks.
/// What the main loop needs to stop the shell pane's running statement.
#[derive(Default)]
struct ShellControl {
    running: std::sync::atomic::AtomicBool,
    interrupter: parking_lot::Mutex<Option<crate::dialect::Interrupter>>,
}

impl ShellControl {
    /// Stop the running statement; false when none runs.
    fn interrupt(&self) -> bool {
        if !self.running.load(std::sync::atomic::Ordering::SeqCst) {
            return false;
        }
        if let Some(i) = self.interrupter.lock().as_ref() {
            i.interrupt();
        }
        true
    }
}

fn is_ctrl_c(ev: &crossterm::event::Event) -> bool {
    use crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};
    matches!(ev, crossterm::event::Event::Key(k)
        if k.kind != KeyEventKind::Release
            && k.modifiers.contains(KeyModifiers::CONTROL)
            && k.code == KeyCode::Char('c'))
}

fn spawn_shell_worker(
    control: std::sync::Arc<ShellControl>,
    rt: tokio::runtime::Handle,
    client: mongodb::Client,
    policy: crate::dialect::WritePolicy,
    tx: Sender<Event>,
) -> Sender<(String, String)> {
    let (shell_tx, shell_rx) = mpsc::channel::<(String, String)>();
    let _ = std::thread::Builder::new()
        .name("schemalab-shell".into())
        .spawn(move || {
            let mut session: Option<(String, crate::dialect::Session)> = None;
            while let Ok((db, src)) = shell_rx.recv() {
                let msg = rt.block_on(async {
                    if session.as_ref().is_none_or(|(d, _)| d != &db) {
                        match crate::dialect::Session::connect(&client, &db) {
                            Ok(s) => session = Some((db.clone(), s.with_policy(policy.clone()))),
                            Err(e) => {
                                return TaskMsg::ShellOutput {
                                    text: e.to_string(),
                                    error: true,
                                    db: String::new(),
                                };
                            }
                        }
                    }
                    let Some((name, s)) = session.as_mut() else {
                        return TaskMsg::ShellOutput {
                            text: String::new(),
                            error: true,
                            db: String::new(),
                        };
                    };
                    *control.interrupter.lock() = s.interrupter().ok();
                    control
                        .running
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                    let (outputs, result) = s.eval_partial(&src).await;
                    control
                        .running
                        .store(false, std::sync::atomic::Ordering::SeqCst);
                    // `use` moves the session: remember where it is.
                    let db = s.db_name().to_string();
                    *name = db.clone();
                    let mut text: Vec<String> = outputs
                        .iter()
                        .map(|o| o.render())
                        .filter(|t| !t.is_empty())
                        .collect();
                    match result {
                        Ok(()) => TaskMsg::ShellOutput {
                            text: text.join("\n"),
                            error: false,
                            db,
                        },
                        Err(e) => {
                            text.push(e.render(&src));
                            TaskMsg::ShellOutput {
                                text: text.join("\n"),
                                error: true,
                                db,
                            }
                        }
                    }
                });
                if tx.send(Event::Task(msg)).is_err() {
                    break;
                }
            }
        });
    shell_tx
}
