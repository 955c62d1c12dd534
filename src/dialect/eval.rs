//! Evaluation: a [`Session`] runs JavaScript on its engine thread
//! ([`super::js`]) and answers the script's host calls here, where the
//! driver, the write gate, the recorder and the open cursors live. Every
//! command a script sends leaves through [`Session::command`] or
//! [`Session::cursor`], so the gate and the observer see all of them
//! whatever the script's shape.

use std::collections::HashMap;

use bson::{Bson, Document};
use futures_util::TryStreamExt;
use mongodb::Client;

use super::gate::WritePolicy;
use super::js::{self, Answer, Call, Engine, Event, Interrupter, Job, Mode, Scope, Shown};
use super::observe::{Observer, Reply};
use super::print::{inspect, render_bson};
use super::{DialectError, Program, parse_program};

type R<T> = Result<T, DialectError>;

/// A shell value, as the host sees a statement's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Any BSON value (documents, arrays, numbers, dates …).
    Bson(Bson),
    /// A database handle (`db`, `db.getSiblingDB(…)`).
    Db(String),
    /// A collection handle (`db.users`).
    Collection { db: String, name: String },
    /// Something only JavaScript has (a function, an `Explainable`),
    /// shown as mongosh shows it.
    Text(String),
}

/// One thing a statement produced for the user to see.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// The value of the statement.
    Value(Value),
    /// Text written by `print`/`printjson`/`console.log`.
    Print(String),
    /// A batch of cursor results; `has_more` means `it` would show more.
    Batch { docs: Vec<Document>, has_more: bool },
    /// A shell message (`switched to db x`, `show collections` lines).
    Message(String),
}

impl Output {
    /// The text mongosh would show for this output.
    pub fn render(&self) -> String {
        match self {
            Output::Value(v) => v.render(),
            Output::Print(s) | Output::Message(s) => s.clone(),
            Output::Batch { docs, has_more } => {
                if docs.is_empty() {
                    return String::new();
                }
                let arr = Bson::Array(docs.iter().cloned().map(Bson::Document).collect());
                let mut s = inspect(&arr);
                if *has_more {
                    s.push_str("\nType \"it\" for more");
                }
                s
            }
        }
    }
}

impl Value {
    /// mongosh's rendering of the value.
    pub fn render(&self) -> String {
        match self {
            Value::Bson(b) => render_bson(b),
            Value::Db(name) => name.clone(),
            Value::Collection { db, name } => format!("{db}.{name}"),
            Value::Text(s) => s.clone(),
        }
    }
}

/// A shell session: a driver client, the current database, a JavaScript
/// context (started on first use) whose global scope keeps the user's
/// bindings, and the cursors its scripts hold open.
pub struct Session {
    client: Client,
    db: String,
    /// What the write gate admits; every command passes it before sending.
    policy: WritePolicy,
    /// Sees every command sent (the measurement path's recorder). Behind a
    /// mutex only so `&Session` is `Sync`; taken out while a command is in
    /// flight and put back after.
    observer: std::sync::Mutex<Option<Box<dyn Observer>>>,
    engine: Option<Engine>,
    interrupter: Option<Interrupter>,
    /// Driver cursors the script holds, by the id the script knows them by.
    /// Behind a mutex only so `&Session` is `Sync` (driver cursors are not).
    cursors: std::sync::Mutex<HashMap<u64, mongodb::Cursor<Document>>>,
    next_cursor: u64,
    /// Constants bound by the host (exercise parameters), as Extended JSON.
    bindings: Vec<(String, String)>,
    budget: std::time::Duration,
    /// Where printed output goes as a statement runs (`shell --file`
    /// streams to stdout); without one it is kept, up to
    /// [`OUTPUT_LIMIT`](super::OUTPUT_LIMIT), and returned when the
    /// statement ends. Behind a mutex only so `&Session` is `Sync`.
    sink: std::sync::Mutex<Option<OutputSink>>,
    /// Output handed over by the running statement and kept, with its size.
    printed: Vec<Output>,
    printed_bytes: usize,
}

/// Receives a running statement's printed output as it is printed;
/// `false` when nobody reads it any more (the statement is then stopped).
pub type OutputSink = Box<dyn FnMut(Vec<Output>) -> bool + Send>;

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("db", &self.db)
            .field("bindings", &self.bindings)
            .finish_non_exhaustive()
    }
}

pub(crate) fn driver_err(e: mongodb::error::Error) -> DialectError {
    use mongodb::error::{ErrorKind, WriteFailure};
    match e.kind.as_ref() {
        ErrorKind::Command(c) => {
            DialectError::server(c.code, c.code_name.clone(), c.message.clone())
        }
        ErrorKind::Write(WriteFailure::WriteError(w)) => DialectError::server(
            w.code,
            w.code_name.clone().unwrap_or_default(),
            w.message.clone(),
        ),
        other => DialectError::driver(other.to_string()),
    }
}

/// Sets the job's cancel mark if the future running it is dropped (the
/// TUI's Ctrl-C, a timeout), so its JavaScript stops too.
struct CancelOnDrop<'a> {
    engine: &'a Interrupter,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.engine.interrupt();
        }
    }
}

impl Session {
    /// A session through `client` (a clone shares its connection pool),
    /// starting in database `db`, whose name is checked first.
    pub fn connect(client: &Client, db: &str) -> R<Self> {
        super::names::check_db_name(db)?;
        Ok(Session::new(client.clone(), db))
    }

    /// A session over an existing client.
    pub fn new(client: Client, db: impl Into<String>) -> Self {
        Session {
            client,
            db: db.into(),
            policy: WritePolicy::Unrestricted,
            observer: std::sync::Mutex::new(None),
            engine: None,
            interrupter: None,
            cursors: std::sync::Mutex::new(HashMap::new()),
            next_cursor: 1,
            bindings: Vec::new(),
            budget: js::budget_from_env(),
            sink: std::sync::Mutex::new(None),
            printed: Vec::new(),
            printed_bytes: 0,
        }
    }

    /// Show every command this session sends from now on to `observer`
    /// (replacing any earlier one).
    pub fn observe(&mut self, observer: Box<dyn Observer>) {
        *self.observer_slot() = Some(observer);
    }

    /// Stop showing commands to the observer, and give it back.
    pub fn stop_observing(&mut self) -> Option<Box<dyn Observer>> {
        self.observer_slot().take()
    }

    fn observer_slot(&self) -> std::sync::MutexGuard<'_, Option<Box<dyn Observer>>> {
        self.observer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The same session with every command it sends checked against
    /// `policy` (lesson content: [`WritePolicy::Only`] its database).
    #[must_use]
    pub fn with_policy(mut self, policy: WritePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Send what statements print to `sink` as they print it, instead of
    /// keeping it until they end (and without the limit on kept output).
    pub fn stream_output(&mut self, sink: OutputSink) {
        *self.sink.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(sink);
    }

    /// The same session with another JavaScript time budget per statement.
    #[must_use]
    pub fn with_budget(mut self, budget: std::time::Duration) -> Self {
        self.budget = budget;
        self
    }

    /// What this session's write gate admits.
    pub fn policy(&self) -> &WritePolicy {
        &self.policy
    }

    /// The current database name.
    pub fn db_name(&self) -> &str {
        &self.db
    }

    /// The driver client this session talks through.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// A handle that stops the statement running now (Ctrl-C), from any
    /// thread. Starts the engine if it has not started.
    pub fn interrupter(&mut self) -> R<Interrupter> {
        self.engine()?;
        self.interrupter
            .clone()
            .ok_or_else(|| DialectError::driver("the JavaScript engine did not start"))
    }

    /// Bind `name` to a constant value, as `const name = value` would (the
    /// exercise checker supplies operation parameters this way).
    pub fn bind(&mut self, name: &str, value: Bson) {
        let text = value.into_canonical_extjson().to_string();
        self.bindings.retain(|(n, _)| n != name);
        self.bindings.push((name.to_string(), text));
    }

    /// Forget every top-level binding the scripts made (not the host's
    /// [`Session::bind`]ings): the next statement starts in a fresh
    /// global scope, in the current database. Each lesson operation starts
    /// this way, so operations cannot see or clash with each other's names.
    pub fn new_scope(&mut self) {
        if let Some(e) = &mut self.engine {
            e.reset();
        }
        self.cursors_mut().clear();
    }

    fn engine(&mut self) -> R<&mut Engine> {
        if self.engine.is_none() {
            let (engine, interrupter) =
                Engine::start().map_err(|e| DialectError::driver(e.to_string()))?;
            self.engine = Some(engine);
            self.interrupter = Some(interrupter);
        }
        self.engine
            .as_mut()
            .ok_or_else(|| DialectError::driver("the JavaScript engine did not start"))
    }

    fn cursors_mut(&mut self) -> &mut HashMap<u64, mongodb::Cursor<Document>> {
        self.cursors
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Evaluate `src` as the shell does, returning everything it printed;
    /// the first error stops evaluation (earlier outputs are lost, see
    /// [`Session::eval_partial`]).
    pub async fn eval(&mut self, src: &str) -> R<Vec<Output>> {
        let (out, res) = self.eval_partial(src).await;
        res.map(|()| out)
    }

    /// Evaluate `src` as the shell does (its top-level names stay for the
    /// next input), returning the outputs produced before any error
    /// together with that error.
    pub async fn eval_partial(&mut self, src: &str) -> (Vec<Output>, R<()>) {
        let program = match parse_program(src) {
            Ok(p) => p,
            Err(e) => return (Vec::new(), Err(e)),
        };
        self.eval_program(&program).await
    }

    /// Run a script file as `mongosh file.js` does: only what it prints is
    /// shown, and its last value is neither shown nor (a cursor) run.
    pub async fn eval_script(&mut self, src: &str) -> (Vec<Output>, R<()>) {
        let program = match parse_program(src) {
            Ok(p) => p,
            Err(e) => return (Vec::new(), Err(e)),
        };
        let (out, res) = self
            .run(program.source(), Scope::Global, Mode::Silent)
            .await;
        (out, res.map(|_| ()))
    }

    /// Evaluate a program in the global scope (a lesson's setup or
    /// `prepare`: the names it declares stay for the next statement).
    pub async fn eval_program(&mut self, program: &Program) -> (Vec<Output>, R<()>) {
        let (out, res) = self.run(program.source(), Scope::Global, Mode::Shell).await;
        (out, res.map(|_| ()))
    }

    /// Evaluate a program in a block of its own (a measured statement,
    /// which may run several times): what it declares ends with it.
    pub async fn eval_scoped(&mut self, program: &Program) -> (Vec<Output>, R<()>) {
        let (out, res) = self.run(program.source(), Scope::Block, Mode::Shell).await;
        (out, res.map(|_| ()))
    }

    /// Evaluate a program in a block of its own and return its value in
    /// full instead of showing it: a cursor is run to its end (an array of
    /// its documents), an explain cursor explained, anything else returned
    /// as it is.
    pub async fn eval_value(&mut self, program: &Program) -> (Vec<Output>, R<Bson>) {
        let (out, res) = self.run(program.source(), Scope::Block, Mode::Value).await;
        let res = res.map(|shown| match shown {
            Shown::None => Bson::Undefined,
            Shown::Value(b) => b,
            Shown::Batch { docs, .. } => {
                Bson::Array(docs.into_iter().map(Bson::Document).collect())
            }
            Shown::Db(name) => Bson::String(name),
            Shown::Collection { db, name } => Bson::String(format!("{db}.{name}")),
            Shown::Message(s) | Shown::Text(s) => Bson::String(s),
            Shown::Cursor { .. } => Bson::Undefined,
        });
        (out, res)
    }

    /// Run `src` on the engine, answering its host calls until it ends.
    async fn run(&mut self, src: &str, scope: Scope, mode: Mode) -> (Vec<Output>, R<Shown>) {
        let (budget, bindings, db) = (self.budget, self.bindings.clone(), self.db.clone());
        let src = src.to_string();
        let id = match self.engine().and_then(|e| {
            e.submit(|id| Job::Eval {
                id,
                src,
                scope,
                mode,
                budget,
                bindings,
                db,
            })
        }) {
            Ok(id) => id,
            Err(e) => return (Vec::new(), Err(e)),
        };
        self.printed.clear();
        self.printed_bytes = 0;
        let Some(interrupter) = self.interrupter.clone() else {
            return (
                Vec::new(),
                Err(DialectError::driver("the JavaScript engine did not start")),
            );
        };
        let mut guard = CancelOnDrop {
            engine: &interrupter,
            armed: true,
        };
        loop {
            let event = match self.engine.as_mut() {
                Some(e) => e.events.recv().await,
                None => None,
            };
            let Some(event) = event else {
                guard.armed = false;
                return (
                    Vec::new(),
                    Err(DialectError::driver("the JavaScript engine stopped")),
                );
            };
            match event {
                Event::Call { job, call, reply } if job == id => {
                    let answer = self.answer(call).await;
                    // The engine gave up waiting only if the job was stopped.
                    let _ = reply.send(answer);
                }
                Event::Call { .. } => {}
                Event::Done { job, outcome } if job == id => {
                    guard.armed = false;
                    let mut out = std::mem::take(&mut self.printed);
                    out.extend(outcome.prints);
                    return match outcome.result {
                        Ok(Shown::Cursor { db, cmd }) => match self.run_cursor(&db, cmd).await {
                            Ok(docs) => (out, Ok(Shown::Value(docs))),
                            Err(e) => (out, Err(e)),
                        },
                        Ok(shown) => {
                            if mode == Mode::Shell {
                                out.extend(shown_output(shown.clone()));
                            }
                            (out, Ok(shown))
                        }
                        Err(e) => (out, Err(e)),
                    };
                }
                Event::Done { .. } => {}
            }
        }
    }

    /// Run a cursor command to its end, through the gate and the observer.
    async fn run_cursor(&mut self, db: &str, cmd: Document) -> R<Bson> {
        let cursor = self.cursor(db, cmd).await?;
        let docs: Vec<Document> = cursor.try_collect().await.map_err(driver_err)?;
        Ok(Bson::Array(docs.into_iter().map(Bson::Document).collect()))
    }

    /// Do what the script asked.
    async fn answer(&mut self, call: Call) -> R<Answer> {
        match call {
            Call::Command { db, cmd } => self.command(&db, cmd).await.map(Answer::Doc),
            Call::CursorOpen { db, cmd } => {
                let cursor = self.cursor(&db, cmd).await?;
                let id = self.next_cursor;
                self.next_cursor += 1;
                self.cursors_mut().insert(id, cursor);
                Ok(Answer::Id(id))
            }
            Call::CursorNext { id, max } => {
                let Some(mut cursor) = self.cursors_mut().remove(&id) else {
                    return Ok(Answer::Docs {
                        docs: Vec::new(),
                        done: true,
                    });
                };
                let mut docs = Vec::new();
                let mut done = false;
                while docs.len() < max {
                    match cursor.try_next().await.map_err(driver_err)? {
                        Some(d) => docs.push(d),
                        None => {
                            done = true;
                            break;
                        }
                    }
                }
                if !done {
                    self.cursors_mut().insert(id, cursor);
                }
                Ok(Answer::Docs { docs, done })
            }
            Call::CursorClose { id } => {
                self.cursors_mut().remove(&id);
                Ok(Answer::Unit)
            }
            Call::Use { db } => {
                self.db = db;
                Ok(Answer::Unit)
            }
            Call::Sleep { ms } => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                Ok(Answer::Unit)
            }
            Call::Flush { outputs } => self.take_printed(outputs).map(|()| Answer::Unit),
        }
    }

    /// Output a running statement handed over: to the sink, or kept while
    /// what is kept stays within [`OUTPUT_LIMIT`](super::OUTPUT_LIMIT).
    fn take_printed(&mut self, outputs: Vec<Output>) -> R<()> {
        if let Some(sink) = self
            .sink
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            return if sink(outputs) {
                Ok(())
            } else {
                Err(DialectError::OutputClosed { pos: None })
            };
        }
        self.printed_bytes += outputs
            .iter()
            .map(|o| match o {
                Output::Print(t) | Output::Message(t) => t.len() + 1,
                _ => 0,
            })
            .sum::<usize>();
        if self.printed_bytes > super::OUTPUT_LIMIT {
            return Err(DialectError::OutputLimit {
                limit_mib: (super::OUTPUT_LIMIT >> 20) as u64,
                pos: None,
            });
        }
        self.printed.extend(outputs);
        Ok(())
    }

    fn database(&self, db: &str) -> mongodb::Database {
        self.client.database(db)
    }

    /// The write gate: every command leaves through here or [`Self::cursor`].
    fn gate(&self, db: &str, cmd: &Document) -> R<()> {
        self.policy
            .check(db, cmd)
            .map_err(|message| DialectError::Refused { message, pos: None })
    }

    async fn command(&self, db: &str, cmd: Document) -> R<Document> {
        self.gate(db, &cmd)?;
        let observer = self.observer_slot().take();
        let Some(mut observer) = observer else {
            return self.database(db).run_command(cmd).await.map_err(driver_err);
        };
        observer.before(&self.client, db, &cmd).await;
        let res = self.database(db).run_command(cmd.clone()).await;
        let reply = match &res {
            Ok(r) => Reply::Document(r),
            Err(_) => Reply::Failed,
        };
        observer.after(&self.client, db, &cmd, reply).await;
        *self.observer_slot() = Some(observer);
        res.map_err(driver_err)
    }

    /// A command that opens a cursor, through the write gate.
    async fn cursor(&self, db: &str, cmd: Document) -> R<mongodb::Cursor<Document>> {
        self.gate(db, &cmd)?;
        let observer = self.observer_slot().take();
        let Some(mut observer) = observer else {
            return self
                .database(db)
                .run_cursor_command(cmd)
                .await
                .map_err(driver_err);
        };
        observer.before(&self.client, db, &cmd).await;
        let res = self.database(db).run_cursor_command(cmd.clone()).await;
        let reply = match &res {
            Ok(_) => Reply::Cursor,
            Err(_) => Reply::Failed,
        };
        observer.after(&self.client, db, &cmd, reply).await;
        *self.observer_slot() = Some(observer);
        res.map_err(driver_err)
    }
}

/// What the shell shows for a statement's value.
fn shown_output(shown: Shown) -> Option<Output> {
    Some(match shown {
        Shown::None => return None,
        Shown::Value(Bson::Undefined) => return None,
        Shown::Value(b) => Output::Value(Value::Bson(b)),
        Shown::Batch { docs, more } => Output::Batch {
            docs,
            has_more: more,
        },
        Shown::Message(s) => Output::Message(s),
        Shown::Text(s) => Output::Value(Value::Text(s)),
        Shown::Db(name) => Output::Value(Value::Db(name)),
        Shown::Collection { db, name } => Output::Value(Value::Collection { db, name }),
        Shown::Cursor { .. } => return None,
    })
}
