//! The JavaScript engine (QuickJS-ng, through `rquickjs`) that runs every
//! statement: the shell, lessons' `prepare` and statements, exercise
//! solutions. It lives on its own thread with a large stack, because
//! QuickJS recurses on the native stack; a [`Session`](super::Session)
//! talks to it through two channels:
//!
//! - the session sends a [`Job`] (run this source, in this scope);
//! - the thread runs it, and every time the script needs the database it
//!   sends an [`Event::Call`] back and blocks until the session answers
//!   (the session owns the driver, the write gate, the recorder and the
//!   open cursors, and does the `await`s); at the end it sends
//!   [`Event::Done`].
//!
//! The script cannot escape: the context has no file-system, process or
//! network bindings, the prelude (`js/prelude.js`) is the only caller of
//! the host function, and every command passes the gate on the session's
//! side. Runaway scripts are bounded: an interrupt handler stops a
//! statement after [`DEFAULT_BUDGET`] of JavaScript time (time waiting for
//! the server does not count) or when the session cancels it (Ctrl-C), the
//! heap is capped at [`HEAP_LIMIT`] and the JavaScript stack at
//! [`JS_STACK`].

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bson::{Bson, Document};
use rquickjs::context::EvalOptions;
use rquickjs::function::Rest;
use rquickjs::module::WriteOptions;
use rquickjs::{CaughtError, Context, Ctx, Function, Module, Runtime};

use super::{DialectError, Pos};
use crate::locale::Message;

/// How long a statement's JavaScript may run (time spent waiting for the
/// server excluded) before it is stopped.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(10);
/// The budget: `SCHEMALAB_SCRIPT_BUDGET` (seconds, e.g. `2.5`) when set to
/// a positive number, else [`DEFAULT_BUDGET`].
pub fn budget_from_env() -> Duration {
    std::env::var("SCHEMALAB_SCRIPT_BUDGET")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 86_400.0)
        .map_or(DEFAULT_BUDGET, Duration::from_secs_f64)
}

/// The JavaScript heap's bound.
pub const HEAP_LIMIT: usize = 512 << 20;
/// The JavaScript stack's bound (recursion deeper than this is a
/// `RangeError`); the thread's own stack is [`THREAD_STACK`].
pub const JS_STACK: usize = 8 << 20;
const THREAD_STACK: usize = 64 << 20;
/// The file name errors in a statement are reported against.
pub const SCRIPT_NAME: &str = "<statement>";

const PRELUDE: &str = include_str!("js/prelude.js");

/// The prelude's global names, for "did you mean" on an unknown name.
const GLOBALS: &[&str] = &[
    "db",
    "print",
    "printjson",
    "console",
    "ObjectId",
    "ISODate",
    "Date",
    "NumberInt",
    "NumberLong",
    "NumberDecimal",
    "Int32",
    "Long",
    "Double",
    "Decimal128",
    "UUID",
    "Timestamp",
    "MinKey",
    "MaxKey",
    "BinData",
    "HexData",
    "bsonsize",
    "sleep",
];

/// Where a job's top-level declarations live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The context's global scope: `let x` stays for later jobs (the shell,
    /// a lesson's `prepare`).
    Global,
    /// A block of its own: the job's `let`/`const` vanish when it ends, so
    /// the same statement can run again (measured samples, repetitions).
    Block,
}

/// What to hand back: what the shell shows, or the whole value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Shell,
    Value,
    /// Show nothing (a script file): a final cursor is not even run.
    Silent,
}

/// One request for the engine thread.
pub enum Job {
    Eval {
        id: u64,
        src: String,
        scope: Scope,
        mode: Mode,
        budget: Duration,
        /// Names to bind first (exercise parameters), as Extended JSON.
        bindings: Vec<(String, String)>,
        /// The database `db` starts in when the context is new.
        db: String,
    },
    /// Throw the global scope away: the next job starts in a fresh context.
    Reset,
}

/// What a host call asks of the session.
#[derive(Debug)]
pub enum Call {
    Command {
        db: String,
        cmd: Document,
    },
    CursorOpen {
        db: String,
        cmd: Document,
    },
    CursorNext {
        id: u64,
        max: usize,
    },
    CursorClose {
        id: u64,
    },
    Use {
        db: String,
    },
    Sleep {
        ms: u64,
    },
    /// What the statement printed since the last flush: handed over every
    /// [`FLUSH_BYTES`] or [`FLUSH_EVERY`], so a script's output streams
    /// and the engine never holds more than one chunk of it.
    Flush {
        outputs: Vec<super::Output>,
    },
}

/// Printed bytes the engine thread holds before handing them over.
pub const FLUSH_BYTES: usize = 64 << 10;
/// How long printed text may wait in the engine thread.
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// The session's answer to a [`Call`].
#[derive(Debug)]
pub enum Answer {
    Doc(Document),
    Docs { docs: Vec<Document>, done: bool },
    Id(u64),
    Unit,
}

/// What the engine thread tells the session.
pub enum Event {
    Call {
        job: u64,
        call: Call,
        reply: std::sync::mpsc::Sender<Result<Answer, DialectError>>,
    },
    Done {
        job: u64,
        outcome: Outcome,
    },
}

/// How a job ended: what it printed, then its shown value or its error.
#[derive(Debug)]
pub struct Outcome {
    /// What `print` and the shell commands wrote, in order.
    pub prints: Vec<super::Output>,
    pub result: Result<Shown, DialectError>,
}

/// A statement's value as the host shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    None,
    Value(Bson),
    Batch {
        docs: Vec<Document>,
        more: bool,
    },
    Message(String),
    Text(String),
    Db(String),
    Collection {
        db: String,
        name: String,
    },
    /// A cursor not yet run, whose whole answer is wanted: the session
    /// runs `cmd` in `db` itself.
    Cursor {
        db: String,
        cmd: Document,
    },
}

/// The session's handle on its engine thread.
pub struct Engine {
    jobs: std::sync::mpsc::Sender<Job>,
    pub events: tokio::sync::mpsc::UnboundedReceiver<Event>,
    next_job: u64,
}

/// Stops a running statement from anywhere (the shell's Ctrl-C handler).
#[derive(Debug, Clone)]
pub struct Interrupter {
    cancel: Arc<AtomicU64>,
    running: Arc<AtomicU64>,
}

impl Interrupter {
    /// Whether a statement is running now.
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst) != 0
    }

    /// Stop the statement running now, if any.
    pub fn interrupt(&self) {
        self.cancel
            .store(self.running.load(Ordering::SeqCst), Ordering::SeqCst);
    }
}

/// The engine could not start (no thread, or QuickJS refused to start).
#[derive(Debug, thiserror::Error)]
#[error("the JavaScript engine could not start: {0}")]
pub struct StartError(String);

impl Engine {
    /// Start an engine thread.
    pub fn start() -> Result<(Engine, Interrupter), StartError> {
        let (jobs, job_rx) = std::sync::mpsc::channel::<Job>();
        let (event_tx, events) = tokio::sync::mpsc::unbounded_channel();
        let cancel = Arc::new(AtomicU64::new(0));
        let running = Arc::new(AtomicU64::new(0));
        let (c2, r2) = (cancel.clone(), running.clone());
        std::thread::Builder::new()
            .name("schemalab-js".into())
            .stack_size(THREAD_STACK)
            .spawn(move || worker(job_rx, event_tx, c2, r2))
            .map_err(|e| StartError(e.to_string()))?;
        Ok((
            Engine {
                jobs,
                events,
                next_job: 1,
            },
            Interrupter { cancel, running },
        ))
    }

    /// Hand a job to the thread; its id.
    pub fn submit(&mut self, make: impl FnOnce(u64) -> Job) -> Result<u64, DialectError> {
        let id = self.next_job;
        self.next_job += 1;
        self.jobs
            .send(make(id))
            .map_err(|_| DialectError::driver("the JavaScript engine stopped"))?;
        Ok(id)
    }

    /// Throw the global scope away.
    pub fn reset(&mut self) {
        let _ = self.jobs.send(Job::Reset);
    }
}

/// State the host function shares with the job loop, on the engine thread.
struct Shared {
    events: tokio::sync::mpsc::UnboundedSender<Event>,
    job: u64,
    db: String,
    prints: Vec<super::Output>,
    /// Bytes in `prints`, and when they were last handed over.
    pending: usize,
    flushed: Instant,
    /// Why the interrupt handler stopped the job, when it was not the
    /// budget or Ctrl-C (the session refused more output).
    stopped_by: Option<DialectError>,
    /// Errors raised by host calls, kept whole so an uncaught one reaches
    /// the session as it was (its code, its words), not as JavaScript text.
    host_errors: Vec<DialectError>,
    /// Time this job spent waiting for the session (not charged to its
    /// budget).
    waited: Duration,
}

fn worker(
    jobs: std::sync::mpsc::Receiver<Job>,
    events: tokio::sync::mpsc::UnboundedSender<Event>,
    cancel: Arc<AtomicU64>,
    running: Arc<AtomicU64>,
) {
    let shared = Rc::new(RefCell::new(Shared {
        events: events.clone(),
        job: 0,
        db: "test".into(),
        prints: Vec::new(),
        pending: 0,
        flushed: Instant::now(),
        stopped_by: None,
        host_errors: Vec::new(),
        waited: Duration::ZERO,
    }));
    let clock: Rc<RefCell<(Instant, Duration)>> =
        Rc::new(RefCell::new((Instant::now(), DEFAULT_BUDGET)));
    let mut context: Option<(Runtime, Context)> = None;
    while let Ok(job) = jobs.recv() {
        match job {
            Job::Reset => context = None,
            Job::Eval {
                id,
                src,
                scope,
                mode,
                budget,
                bindings,
                db,
            } => {
                {
                    let mut s = shared.borrow_mut();
                    s.job = id;
                    s.prints.clear();
                    s.pending = 0;
                    s.flushed = Instant::now();
                    s.stopped_by = None;
                    s.host_errors.clear();
                    s.waited = Duration::ZERO;
                    s.db = db;
                }
                *clock.borrow_mut() = (Instant::now(), budget);
                if context.is_none() {
                    context = match new_context(&shared, &clock, &cancel, &running) {
                        Ok(c) => Some(c),
                        Err(e) => {
                            let outcome = Outcome {
                                prints: Vec::new(),
                                result: Err(DialectError::driver(e)),
                            };
                            let _ = events.send(Event::Done { job: id, outcome });
                            continue;
                        }
                    };
                }
                let Some((rt, ctx)) = &context else { continue };
                // From here Ctrl-C (the interrupter) may stop this job.
                running.store(id, Ordering::SeqCst);
                let result = ctx.with(|ctx| run(&ctx, &src, scope, mode, &bindings));
                // Promise callbacks (`.then`, async functions) run now, as
                // Node runs its microtasks after the statement.
                while rt.is_job_pending() {
                    if rt.execute_pending_job().is_err() {
                        break;
                    }
                }
                let result = result.map_err(|e| match e {
                    Failure::Host(i, pos) => {
                        let e = shared
                            .borrow_mut()
                            .host_errors
                            .get(i)
                            .cloned()
                            .unwrap_or_else(|| DialectError::driver("host error"));
                        match pos {
                            Some(p) => e.at_statement(p),
                            None => e,
                        }
                    }
                    Failure::Error(e) => e,
                });
                // A statement stopped by its budget: say so with the budget;
                // stopped for its output: say that.
                let stopped_by = shared.borrow_mut().stopped_by.take();
                let result = result.map_err(|e| match stopped_by {
                    Some(why) => match e.position() {
                        Some(p) => why.at_statement(p),
                        None => why,
                    },
                    None => budget_error(e, budget),
                });
                let prints = std::mem::take(&mut shared.borrow_mut().prints);
                running.store(0, Ordering::SeqCst);
                let _ = events.send(Event::Done {
                    job: id,
                    outcome: Outcome { prints, result },
                });
            }
        }
    }
}

fn budget_error(e: DialectError, budget: Duration) -> DialectError {
    match e {
        DialectError::Js {
            class,
            message,
            pos,
        } if class == "InternalError" && message == "interrupted" => DialectError::Interrupted {
            budget_ms: budget.as_millis() as u64,
            pos,
        },
        other => other,
    }
}

fn new_context(
    shared: &Rc<RefCell<Shared>>,
    clock: &Rc<RefCell<(Instant, Duration)>>,
    cancel: &Arc<AtomicU64>,
    running: &Arc<AtomicU64>,
) -> Result<(Runtime, Context), String> {
    let rt = Runtime::new().map_err(|e| e.to_string())?;
    rt.set_memory_limit(HEAP_LIMIT);
    rt.set_max_stack_size(JS_STACK);
    let (sh, ck, cancel, running) = (
        shared.clone(),
        clock.clone(),
        cancel.clone(),
        running.clone(),
    );
    rt.set_interrupt_handler(Some(Box::new(move || {
        let job = running.load(Ordering::SeqCst);
        if job != 0 && cancel.load(Ordering::SeqCst) == job {
            return true;
        }
        // Printed text does not wait for the next print: a statement
        // that prints, then computes for long, still shows its line.
        let due = sh
            .try_borrow()
            .is_ok_and(|s| s.pending > 0 && s.flushed.elapsed() >= FLUSH_EVERY);
        if due && let Err(e) = flush(&sh) {
            // Refused (too much output kept): stop, with that error.
            if let Ok(mut s) = sh.try_borrow_mut() {
                s.stopped_by = Some(e);
            }
            return true;
        }
        let (start, budget) = *ck.borrow();
        let waited = sh.try_borrow().map(|s| s.waited).unwrap_or_default();
        start.elapsed().saturating_sub(waited) > budget
    })));
    let ctx = Context::full(&rt).map_err(|e| e.to_string())?;
    let sh = shared.clone();
    ctx.with(|ctx| -> Result<(), String> {
        let f = Function::new(ctx.clone(), move |args: Rest<rquickjs::Value<'_>>| {
            host(&sh, args.0)
        })
        .map_err(|e| e.to_string())?;
        ctx.globals().set("__host", f).map_err(|e| e.to_string())?;
        load_prelude(&ctx).map_err(|e| format!("prelude: {e}"))
    })?;
    Ok((rt, ctx))
}

use rquickjs::CatchResultExt;

/// The prelude compiled once per process: QuickJS bytecode of it as a
/// module (it is one strict IIFE over `globalThis`, so as a module it
/// defines the same globals). Every lesson operation starts a fresh
/// scope, so a course run starts hundreds of contexts; loading this
/// instead of parsing 1,000 lines again makes a context about four
/// times cheaper (5.1 ms → 1.2 ms each, measured).
fn prelude_bytecode() -> Result<&'static [u8], String> {
    static BYTES: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let rt = Runtime::new().map_err(|e| e.to_string())?;
            let ctx = Context::full(&rt).map_err(|e| e.to_string())?;
            ctx.with(|ctx| {
                Module::declare(ctx.clone(), "prelude.js", PRELUDE)
                    .and_then(|m| m.write(WriteOptions::default()))
                    .catch(&ctx)
                    .map_err(|e| e.to_string())
            })
        })
        .as_deref()
        .map_err(Clone::clone)
}

/// Run the prelude in `ctx` from its bytecode.
#[allow(unsafe_code)]
fn load_prelude(ctx: &Ctx<'_>) -> Result<(), String> {
    let bytes = prelude_bytecode()?;
    // SAFETY: `Module::load` trusts its bytes to be well-formed QuickJS
    // bytecode of the linked QuickJS version. These bytes are exactly what
    // `Module::write` produced from the embedded prelude, in this process,
    // with this QuickJS; they never come from outside. This is the
    // library's only `unsafe` (see `lib.rs`).
    let module = unsafe { Module::load(ctx.clone(), bytes) }
        .catch(ctx)
        .map_err(|e| e.to_string())?;
    let (_, done) = module.eval().catch(ctx).map_err(|e| e.to_string())?;
    done.finish::<()>().catch(ctx).map_err(|e| e.to_string())
}

enum Failure {
    /// A host call's error (by index), and where the script made the call.
    Host(usize, Option<Pos>),
    Error(DialectError),
}

/// Run `src` and turn its completion value into a [`Shown`].
fn run(
    ctx: &Ctx<'_>,
    src: &str,
    scope: Scope,
    mode: Mode,
    bindings: &[(String, String)],
) -> Result<Shown, Failure> {
    let bind: Function = ctx
        .globals()
        .get("__bind")
        .map_err(|e| Failure::Error(DialectError::driver(e.to_string())))?;
    for (name, value) in bindings {
        bind.call::<_, ()>((name.as_str(), value.as_str()))
            .catch(ctx)
            .map_err(|e| caught(e, 0, ""))?;
    }
    let (text, shift) = match scope {
        Scope::Global => (src.to_string(), 0),
        Scope::Block => (format!("{{\n{src}\n}}"), 1),
    };
    let mut opts = EvalOptions::default();
    opts.global = true;
    opts.strict = false;
    opts.backtrace_barrier = true;
    opts.filename = Some(SCRIPT_NAME.into());
    let value: rquickjs::Value = ctx
        .eval_with_options(text, opts)
        .catch(ctx)
        .map_err(|e| caught(e, shift, src))?;
    let display: Function = ctx
        .globals()
        .get("__display")
        .map_err(|e| Failure::Error(DialectError::driver(e.to_string())))?;
    let mode_name = match mode {
        Mode::Shell => "shell",
        Mode::Value => "value",
        Mode::Silent => "silent",
    };
    // An error while showing the value (a cursor's first batch) belongs to
    // the last statement, whose value it is.
    let json: String =
        display
            .call((value, mode_name))
            .catch(ctx)
            .map_err(|e| match caught(e, shift, src) {
                Failure::Host(i, None) => Failure::Host(i, last_statement(src)),
                other => other,
            })?;
    shown(&json).map_err(Failure::Error)
}

fn shown(json: &str) -> Result<Shown, DialectError> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(json_error)?;
    let text = |k: &str| v.get(k).and_then(|s| s.as_str()).unwrap_or("").to_string();
    Ok(match v.get("k").and_then(|k| k.as_str()) {
        Some("none") => Shown::None,
        Some("msg") => Shown::Message(text("s")),
        Some("text") => Shown::Text(text("s")),
        Some("db") => Shown::Db(text("s")),
        Some("coll") => Shown::Collection {
            db: text("db"),
            name: text("s"),
        },
        Some("cursor") => match ej_to_bson(v.get("cmd").cloned().unwrap_or_default())? {
            Bson::Document(cmd) => Shown::Cursor {
                db: text("db"),
                cmd,
            },
            _ => {
                return Err(DialectError::driver(
                    "a cursor's command must be a document",
                ));
            }
        },
        Some("batch") => {
            let docs = match ej_to_bson(v.get("docs").cloned().unwrap_or_default())? {
                Bson::Array(a) => a
                    .into_iter()
                    .filter_map(|d| match d {
                        Bson::Document(d) => Some(d),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            Shown::Batch {
                docs,
                more: v.get("more").and_then(|m| m.as_bool()).unwrap_or(false),
            }
        }
        _ => Shown::Value(ej_to_bson(v.get("v").cloned().unwrap_or_default())?),
    })
}

/// Canonical Extended JSON to BSON.
pub fn ej_to_bson(v: serde_json::Value) -> Result<Bson, DialectError> {
    Bson::try_from(v).map_err(|e| DialectError::driver(format!("bad value from the script: {e}")))
}

fn ej_text_to_doc(text: &str) -> Result<Document, DialectError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(json_error)?;
    match ej_to_bson(v)? {
        Bson::Document(d) => Ok(d),
        _ => Err(DialectError::driver("a command must be a document")),
    }
}

fn doc_to_ej(d: Document) -> serde_json::Value {
    Bson::Document(d).into_canonical_extjson()
}

/// A caught JavaScript exception as a [`DialectError`], with the place in
/// the statement it came from.
fn caught(e: CaughtError<'_>, shift: u32, src: &str) -> Failure {
    match e {
        CaughtError::Error(e) => Failure::Error(DialectError::driver(e.to_string())),
        CaughtError::Value(v) => {
            // mongosh shows a thrown string or number as an Error of it.
            let text = v
                .as_string()
                .and_then(|s| s.to_string().ok())
                .or_else(|| v.as_number().map(super::print::format_number))
                .unwrap_or_else(|| format!("{v:?}"));
            Failure::Error(DialectError::Js {
                class: "Error".into(),
                message: text,
                pos: None,
            })
        }
        CaughtError::Exception(ex) => {
            let obj = ex.as_object();
            let stack = ex.stack().unwrap_or_default();
            let pos = position(&stack, shift);
            if let Ok(Some(i)) = obj.get::<_, Option<f64>>("__hostError") {
                return Failure::Host(i as usize, pos);
            }
            let class: String = obj
                .get::<_, Option<String>>("name")
                .ok()
                .flatten()
                .unwrap_or_else(|| "Error".into());
            let message = v8_words(ex.message().unwrap_or_default());
            Failure::Error(match class.as_str() {
                "MongoServerError" => {
                    let code = obj
                        .get::<_, Option<f64>>("code")
                        .ok()
                        .flatten()
                        .unwrap_or(0.0) as i32;
                    let code_name = obj
                        .get::<_, Option<String>>("codeName")
                        .ok()
                        .flatten()
                        .unwrap_or_default();
                    let mut e = DialectError::server(code, code_name, message);
                    if let Some(p) = pos {
                        e = e.at_statement(p);
                    }
                    e
                }
                "MongoBulkWriteError" => DialectError::BulkWrite {
                    code: obj
                        .get::<_, Option<f64>>("code")
                        .ok()
                        .flatten()
                        .unwrap_or(0.0) as i32,
                    message,
                    pos,
                },
                "SyntaxError" => DialectError::Syntax {
                    message: Message::new("{m}").arg("m", message),
                    pos: pos.unwrap_or_default(),
                },
                "ReferenceError" => match message.strip_suffix(" is not defined") {
                    Some(name) => {
                        let name = name.trim_matches('\'').to_string();
                        DialectError::Reference {
                            suggestion: super::suggest(&name, GLOBALS.iter().copied()),
                            name,
                            pos: pos.unwrap_or_default(),
                        }
                    }
                    None => DialectError::Js {
                        class,
                        message,
                        pos,
                    },
                },
                "TypeError" => match (message.as_str(), pos.and_then(|p| name_at(src, p))) {
                    // QuickJS does not name what is not a function; the
                    // source does, at the place it points to.
                    ("not a function", Some(name)) => DialectError::Type {
                        message: Message::new("{name} is not a function").arg("name", &name),
                        suggestion: super::suggest(&name, METHODS.iter().copied())
                            .filter(|s| *s != name),
                        pos,
                    },
                    _ => DialectError::Type {
                        message: Message::new("{m}").arg("m", message),
                        suggestion: None,
                        pos,
                    },
                },
                _ => DialectError::Js {
                    class,
                    message,
                    pos,
                },
            })
        }
    }
}

/// QuickJS's words for the commonest TypeError in V8's (mongosh's) words:
/// `cannot read property 'x' of null` → `Cannot read properties of null
/// (reading 'x')`.
fn v8_words(message: String) -> String {
    let Some(rest) = message.strip_prefix("cannot read property '") else {
        return message;
    };
    match rest.split_once("' of ") {
        Some((prop, what)) => format!("Cannot read properties of {what} (reading '{prop}')"),
        None => message,
    }
}

/// Where the last statement of `src` starts (its last line with code).
fn last_statement(src: &str) -> Option<Pos> {
    let (i, line) = src
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
        .last()?;
    let col = line.chars().take_while(|c| c.is_whitespace()).count() + 1;
    Some(Pos {
        line: i as u32 + 1,
        col: col as u32,
    })
}

/// The identifier at `pos` in `src` (after a `.`, as in `cursor.sortt`).
fn name_at(src: &str, pos: Pos) -> Option<String> {
    let line = src.lines().nth(pos.line.checked_sub(1)? as usize)?;
    let rest: String = line
        .chars()
        .skip(pos.col.checked_sub(1)? as usize)
        .collect();
    let rest = rest.trim_start_matches('.');
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Methods of the shell's objects, for "did you mean" on a mistyped one.
const METHODS: &[&str] = &[
    "find",
    "findOne",
    "insertOne",
    "insertMany",
    "updateOne",
    "updateMany",
    "replaceOne",
    "deleteOne",
    "deleteMany",
    "findOneAndUpdate",
    "findOneAndReplace",
    "findOneAndDelete",
    "bulkWrite",
    "countDocuments",
    "estimatedDocumentCount",
    "count",
    "distinct",
    "aggregate",
    "createIndex",
    "createIndexes",
    "dropIndex",
    "dropIndexes",
    "getIndexes",
    "stats",
    "drop",
    "explain",
    "getName",
    "renameCollection",
    "validate",
    "sort",
    "limit",
    "skip",
    "project",
    "projection",
    "hint",
    "batchSize",
    "toArray",
    "forEach",
    "map",
    "hasNext",
    "next",
    "itcount",
    "size",
    "getCollection",
    "getSiblingDB",
    "runCommand",
    "adminCommand",
    "getCollectionNames",
    "createCollection",
    "dropDatabase",
    "setProfilingLevel",
    "getProfilingStatus",
    "serverStatus",
];

/// The first place in the statement (not in the prelude) a stack names:
/// QuickJS writes frames as `at f (<statement>:3:10)` and a syntax error as
/// `at <statement>:2:9`.
fn position(stack: &str, shift: u32) -> Option<Pos> {
    let marker = format!("{SCRIPT_NAME}:");
    let at = stack.find(&marker)?;
    let rest = &stack[at + marker.len()..];
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let line: u32 = parts.next()?.parse().ok()?;
    let col: u32 = parts.next()?.parse().ok()?;
    Some(Pos {
        line: line.saturating_sub(shift).max(1),
        col: col.max(1),
    })
}

/// The host function behind the prelude: `__host(op, …)`. It returns a
/// JSON text `{"r": result}` or `{"e": error}`; errors kept whole in
/// `host_errors` are referred to by index.
fn host(shared: &Rc<RefCell<Shared>>, args: Vec<rquickjs::Value<'_>>) -> String {
    let arg = |i: usize| -> String {
        args.get(i)
            .and_then(|v| v.as_string())
            .and_then(|s| s.to_string().ok())
            .unwrap_or_default()
    };
    let num = |i: usize| -> f64 { args.get(i).and_then(|v| v.as_number()).unwrap_or(0.0) };
    let op = arg(0);
    let result: Result<serde_json::Value, DialectError> = (|| {
        Ok(match op.as_str() {
            "initialDb" => serde_json::Value::String(shared.borrow().db.clone()),
            "print" => {
                printed(shared, super::Output::Print(arg(1)))?;
                serde_json::Value::Null
            }
            "message" => {
                printed(shared, super::Output::Message(arg(1)))?;
                serde_json::Value::Null
            }
            "inspect" => {
                let b = ej_to_bson(parse_json(&arg(1))?)?;
                let text = if num(2) != 0.0 {
                    super::print::inspect_expanded(&b)
                } else {
                    match &b {
                        Bson::String(s) => s.clone(),
                        other => super::print::inspect(other),
                    }
                };
                serde_json::Value::String(text)
            }
            "newObjectId" => serde_json::Value::String(bson::oid::ObjectId::new().to_hex()),
            "checkDbName" => {
                let name = arg(1);
                super::names::check_db_name(&name)?;
                serde_json::Value::String(name)
            }
            "codeName" => serde_json::Value::String(super::code_name(num(1) as i32, "")),
            "checkDecimal" => {
                let s = arg(1);
                let d: bson::Decimal128 = s.trim().parse().map_err(|_| DialectError::Type {
                    message: Message::new("invalid Decimal128 string '{s}'").arg("s", &s),
                    suggestion: None,
                    pos: None,
                })?;
                serde_json::Value::String(d.to_string())
            }
            "uuid" => {
                let u = match args.get(1).and_then(|v| v.as_string()) {
                    None => bson::Uuid::new(),
                    Some(s) => {
                        let s = s.to_string().unwrap_or_default();
                        bson::Uuid::parse_str(&s).map_err(|_| DialectError::Type {
                            message: Message::new("invalid UUID string '{s}'").arg("s", &s),
                            suggestion: None,
                            pos: None,
                        })?
                    }
                };
                let b = Bson::Binary(bson::Binary {
                    subtype: bson::spec::BinarySubtype::Uuid,
                    bytes: u.bytes().to_vec(),
                });
                b.into_canonical_extjson()
                    .pointer("/$binary/base64")
                    .cloned()
                    .unwrap_or_default()
            }
            "uuidHex" => {
                let b = base64_decode(&arg(1));
                let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                let h = |a: usize, z: usize| hex.get(a..z).unwrap_or("").to_string();
                serde_json::Value::String(format!(
                    "{}-{}-{}-{}-{}",
                    h(0, 8),
                    h(8, 12),
                    h(12, 16),
                    h(16, 20),
                    h(20, 32)
                ))
            }
            "hexToBase64" => {
                let hex = arg(1);
                let bytes: Vec<u8> = (0..hex.len() / 2)
                    .filter_map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
                    .collect();
                let b = Bson::Binary(bson::Binary {
                    subtype: bson::spec::BinarySubtype::Generic,
                    bytes,
                });
                b.into_canonical_extjson()
                    .pointer("/$binary/base64")
                    .cloned()
                    .unwrap_or_default()
            }
            "parseDate" => {
                let d = super::dates::parse_date(&arg(1)).ok_or_else(|| DialectError::Type {
                    message: Message::new("invalid ISO date: {s}").arg("s", arg(1)),
                    suggestion: None,
                    pos: None,
                })?;
                serde_json::Value::from(d.timestamp_millis())
            }
            "bsonsize" => {
                let d = ej_text_to_doc(&arg(1))?;
                let n = bson::to_vec(&d).map(|v| v.len()).unwrap_or(0);
                serde_json::Value::from(n)
            }
            "ejsonStringify" => {
                let b = ej_to_bson(parse_json(&arg(1))?)?;
                let v = if num(2) != 0.0 {
                    b.into_relaxed_extjson()
                } else {
                    b.into_canonical_extjson()
                };
                let indent = num(3) as usize;
                let text = if indent > 0 {
                    pretty_json(&v, indent)
                } else {
                    v.to_string()
                };
                serde_json::Value::String(text)
            }
            "ejsonParse" => {
                let v = parse_json(&arg(1))?;
                ej_to_bson(v)?.into_canonical_extjson().to_string().into()
            }
            "command" => {
                let cmd = ej_text_to_doc(&arg(2))?;
                match call(shared, Call::Command { db: arg(1), cmd })? {
                    Answer::Doc(d) => doc_to_ej(d),
                    _ => serde_json::Value::Null,
                }
            }
            "cursorOpen" => {
                let cmd = ej_text_to_doc(&arg(2))?;
                match call(shared, Call::CursorOpen { db: arg(1), cmd })? {
                    Answer::Id(id) => serde_json::Value::from(id),
                    _ => serde_json::Value::Null,
                }
            }
            "cursorNext" => {
                let id = num(1) as u64;
                let max = num(2).max(1.0) as usize;
                match call(shared, Call::CursorNext { id, max })? {
                    Answer::Docs { docs, done } => serde_json::json!({
                        "docs": docs.into_iter().map(doc_to_ej).collect::<Vec<_>>(),
                        "done": done,
                    }),
                    _ => serde_json::json!({"docs": [], "done": true}),
                }
            }
            "cursorClose" => {
                call(shared, Call::CursorClose { id: num(1) as u64 })?;
                serde_json::Value::Null
            }
            "use" => {
                let db = arg(1);
                shared.borrow_mut().db = db.clone();
                call(shared, Call::Use { db })?;
                serde_json::Value::Null
            }
            "sleep" => {
                call(
                    shared,
                    Call::Sleep {
                        ms: num(1).max(0.0) as u64,
                    },
                )?;
                serde_json::Value::Null
            }
            other => {
                return Err(DialectError::driver(format!("unknown host call {other}")));
            }
        })
    })();
    match result {
        Ok(r) => serde_json::json!({ "r": r }).to_string(),
        Err(e) => {
            let (kind, code, code_name, message) = match &e {
                DialectError::Server {
                    code,
                    code_name,
                    message,
                    ..
                } => ("server", *code, code_name.clone(), message.clone()),
                DialectError::BulkWrite { code, message, .. } => {
                    ("bulk", *code, String::new(), message.clone())
                }
                other => ("other", 0, String::new(), other.to_string()),
            };
            let mut s = shared.borrow_mut();
            s.host_errors.push(e);
            let id = s.host_errors.len() - 1;
            serde_json::json!({"e": {"kind": kind, "code": code, "codeName": code_name, "message": message, "id": id}})
                .to_string()
        }
    }
}

fn parse_json(s: &str) -> Result<serde_json::Value, DialectError> {
    serde_json::from_str(s).map_err(json_error)
}

/// A value the host cannot take: nested past what a BSON document may be
/// (serde's limit, 128, is above mongod's 100 for stored documents).
fn json_error(e: serde_json::Error) -> DialectError {
    if e.to_string().contains("recursion limit") {
        DialectError::Js {
            class: "RangeError".into(),
            message: "a value nests too deeply to send or show (documents may nest 100 levels)"
                .into(),
            pos: None,
        }
    } else {
        DialectError::driver(e.to_string())
    }
}

fn pretty_json(v: &serde_json::Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    use serde::Serialize;
    if v.serialize(&mut ser).is_err() {
        return v.to_string();
    }
    String::from_utf8(buf).unwrap_or_default()
}

fn base64_decode(s: &str) -> Vec<u8> {
    let v = serde_json::json!({"$binary": {"base64": s, "subType": "00"}});
    match Bson::try_from(v) {
        Ok(Bson::Binary(b)) => b.bytes,
        _ => Vec::new(),
    }
}

/// Keep what a statement printed; hand the kept output to the session
/// once it reaches [`FLUSH_BYTES`] or has waited [`FLUSH_EVERY`] (the
/// session refuses it past its limit, which stops the statement).
fn printed(shared: &Rc<RefCell<Shared>>, out: super::Output) -> Result<(), DialectError> {
    let due = {
        let mut s = shared.borrow_mut();
        if let super::Output::Print(t) | super::Output::Message(t) = &out {
            s.pending += t.len() + 1;
        }
        s.prints.push(out);
        s.pending >= FLUSH_BYTES || s.flushed.elapsed() >= FLUSH_EVERY
    };
    if due {
        flush(shared)?;
    }
    Ok(())
}

/// Hand what was printed so far to the session.
fn flush(shared: &Rc<RefCell<Shared>>) -> Result<(), DialectError> {
    let outputs = {
        let mut s = shared.borrow_mut();
        s.pending = 0;
        s.flushed = Instant::now();
        std::mem::take(&mut s.prints)
    };
    call(shared, Call::Flush { outputs }).map(|_| ())
}

/// Ask the session to do `c` and wait for its answer; the wait is not
/// charged to the statement's budget.
fn call(shared: &Rc<RefCell<Shared>>, c: Call) -> Result<Answer, DialectError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let started = Instant::now();
    let job = shared.borrow().job;
    let sent = shared.borrow().events.send(Event::Call {
        job,
        call: c,
        reply: tx,
    });
    if sent.is_err() {
        return Err(DialectError::Js {
            class: "InternalError".into(),
            message: "interrupted".into(),
            pos: None,
        });
    }
    let answer = rx.recv();
    shared.borrow_mut().waited += started.elapsed();
    answer.unwrap_or_else(|_| {
        Err(DialectError::Js {
            class: "InternalError".into(),
            message: "interrupted".into(),
            pos: None,
        })
    })
}

/// Check that `src` parses as a script, without running it: the source is
/// compiled as the body of a function that is never called.
pub fn check_syntax(src: &str) -> Result<(), DialectError> {
    match compile_only(src) {
        // QuickJS raises a few syntax errors without a place (a regular
        // expression's flags are checked after its literal was read):
        // find the place as the shortest prefix failing the same way.
        Err(DialectError::Syntax { message, pos }) if pos.line == 0 => {
            let pos = locate(src, &message);
            Err(DialectError::Syntax { message, pos })
        }
        other => other,
    }
}

/// Lines searched for a place-less syntax error before giving up on line 1.
const LOCATE_LINES: usize = 2_000;

/// Where the syntax error `message` is in `src`: the first line at whose
/// end the source fails with it, and the first column on that line where
/// it does (the end of the offending token).
fn locate(src: &str, message: &Message) -> Pos {
    let wanted = message.render_in(crate::locale::Lang::En);
    let fails_so = |prefix: &str| {
        matches!(compile_only(prefix), Err(DialectError::Syntax { message: m, .. })
            if m.render_in(crate::locale::Lang::En) == wanted)
    };
    let mut start = 0usize;
    for (i, line) in src.split('\n').enumerate().take(LOCATE_LINES) {
        let end = start + line.len();
        if fails_so(&src[..end]) {
            let col = line
                .char_indices()
                .map(|(j, c)| j + c.len_utf8())
                .find(|&j| fails_so(&src[..start + j]))
                .map_or(1, |j| line[..j].chars().count());
            return Pos {
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
                col: u32::try_from(col).unwrap_or(u32::MAX).max(1),
            };
        }
        start = end + 1;
    }
    Pos { line: 1, col: 1 }
}

/// Compile `src` as the body of a function that is never called.
fn compile_only(src: &str) -> Result<(), DialectError> {
    thread_local! {
        static CHECKER: Option<(Runtime, Context)> = Runtime::new()
            .ok()
            .and_then(|rt| Context::full(&rt).ok().map(|c| (rt, c)));
    }
    CHECKER.with(|c| {
        let Some((_, ctx)) = c else { return Ok(()) };
        ctx.with(|ctx| {
            let mut opts = EvalOptions::default();
            opts.global = true;
            opts.strict = false;
            opts.filename = Some(SCRIPT_NAME.into());
            let text = format!("(function(){{\n{src}\n}})");
            match ctx
                .eval_with_options::<rquickjs::Value, _>(text, opts)
                .catch(&ctx)
            {
                Ok(_) => Ok(()),
                Err(e) => match caught(e, 1, src) {
                    Failure::Error(e) => Err(e),
                    Failure::Host(..) => Ok(()),
                },
            }
        })
    })
}
