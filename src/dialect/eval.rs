//! Evaluation: walks the [`Program`] tree, turning mongosh calls into
//! database commands sent through the official driver. Values are BSON plus
//! the shell's own handles (database, collection, lazy cursor); a cursor
//! runs only when printed, iterated or converted, as in mongosh.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;
use mongodb::Client;

use super::ast::{BinOp, Expr, ExprKind, Program, Stmt, StmtKind};
use super::gate::WritePolicy;
use super::observe::{Observer, Reply};
use super::parser::MAX_DEPTH;
use super::print::{format_number, inspect, iso_string, render_bson};
use super::suggest::suggest;
use super::{DialectError, Pos, parse_program};
use crate::locale::Message;

/// How many documents the shell shows per cursor batch (`it` shows more).
pub const DISPLAY_BATCH: usize = 20;

type R<T> = Result<T, DialectError>;
type BoxFut<'a, T> = Pin<Box<dyn Future<Output = R<T>> + Send + 'a>>;

/// Polls a nested evaluation step on a fresh stack segment when the
/// current one runs low. Evaluation recurses once per tree level through
/// large `poll` frames (tens of kB each in a debug build), so even within
/// [`MAX_EVAL_DEPTH`] a 2 MiB worker thread could overflow; this keeps the
/// depth limit, not the caller's stack size, the only bound.
struct GrowStack<F>(F);

impl<F: Future + Unpin> Future for GrowStack<F> {
    type Output = F::Output;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let inner = &mut self.0;
        stacker::maybe_grow(256 * 1024, 2 * 1024 * 1024, || Pin::new(inner).poll(cx))
    }
}

/// A shell value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Any BSON value (documents, arrays, numbers, dates …).
    Bson(Bson),
    /// A database handle (`db`, `db.getSiblingDB(…)`).
    Db(String),
    /// A collection handle (`db.users`).
    Collection { db: String, name: String },
    /// A not-yet-run `find` or `aggregate`.
    Cursor(Box<CursorSpec>),
    /// `db.c.explain(verbosity)`: the next find/aggregate is explained.
    Explainable {
        db: String,
        coll: String,
        verbosity: String,
    },
    /// A global helper referenced without calling it (`print`, `Date` …).
    Builtin(String),
}

/// What a lazy cursor will run.
#[derive(Debug, Clone, PartialEq)]
pub struct CursorSpec {
    pub db: String,
    pub coll: String,
    pub kind: CursorKind,
    /// `Some(verbosity)` when the cursor was made through `explain(…)`.
    pub explain: Option<String>,
    /// Already run when it was created (an aggregate ending in `$out` or
    /// `$merge`, which mongosh runs at once): iterating it yields nothing
    /// and does not write again.
    pub executed: bool,
}

/// A find (filter + options) or an aggregate (pipeline + options).
#[derive(Debug, Clone, PartialEq)]
pub enum CursorKind {
    Find {
        filter: Document,
        options: Document,
    },
    Aggregate {
        pipeline: Vec<Document>,
        options: Document,
    },
}

/// One thing a statement produced for the user to see.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// The value of an expression statement.
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
            Value::Cursor(spec) => format!("[cursor on {}.{}]", spec.db, spec.coll),
            Value::Explainable { db, coll, .. } => format!("Explainable({db}.{coll})"),
            Value::Builtin(name) => format!("[Function: {name}]"),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Value::Bson(b) => bson_type_name(b),
            Value::Db(_) => "Database",
            Value::Collection { .. } => "Collection",
            Value::Cursor(_) => "Cursor",
            Value::Explainable { .. } => "Explainable",
            Value::Builtin(_) => "function",
        }
    }
}

fn bson_type_name(b: &Bson) -> &'static str {
    match b {
        Bson::Document(_) => "object",
        Bson::Array(_) => "array",
        Bson::String(_) => "string",
        Bson::Double(_) | Bson::Int32(_) => "number",
        Bson::Int64(_) => "Long",
        Bson::Decimal128(_) => "Decimal128",
        Bson::Boolean(_) => "boolean",
        Bson::Null => "null",
        Bson::Undefined => "undefined",
        Bson::DateTime(_) => "Date",
        Bson::ObjectId(_) => "ObjectId",
        _ => "BSON value",
    }
}

/// A JavaScript number as the Node driver stores it: integral values that
/// fit in 32 bits become Int32, everything else a double.
pub fn js_number(n: f64) -> Bson {
    if n.fract() == 0.0
        && n >= f64::from(i32::MIN)
        && n <= f64::from(i32::MAX)
        && !(n == 0.0 && n.is_sign_negative())
    {
        Bson::Int32(n as i32)
    } else {
        Bson::Double(n)
    }
}

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
    "Object",
    "bsonsize",
    "RegExp",
];

const DB_METHODS: &[&str] = &[
    "getCollection",
    "getCollectionNames",
    "createCollection",
    "runCommand",
    "adminCommand",
    "stats",
    "dropDatabase",
    "getSiblingDB",
    "getName",
];

const COLL_METHODS: &[&str] = &[
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
    "dataSize",
    "storageSize",
    "totalIndexSize",
    "drop",
    "explain",
    "getName",
];

const CURSOR_METHODS: &[&str] = &[
    "sort",
    "limit",
    "skip",
    "projection",
    "hint",
    "batchSize",
    "count",
    "size",
    "toArray",
    "explain",
    "itcount",
    "pretty",
    "collation",
    "maxTimeMS",
    "comment",
    "allowDiskUse",
];

#[derive(Debug, Clone)]
struct Binding {
    value: Value,
    constant: bool,
}

/// A shell session: a driver client, the current database, the user's
/// bindings and the cursor `it` continues.
pub struct Session {
    client: Client,
    db: String,
    bindings: HashMap<String, Binding>,
    /// Behind a mutex only so `&Session` is `Sync` (driver cursors are not);
    /// it is only touched through `&mut self`, so it is never contended.
    last_cursor: std::sync::Mutex<Option<LiveCursor>>,
    /// How many statements and expressions are being evaluated inside one
    /// another (reset by every program), bounded by [`MAX_EVAL_DEPTH`].
    depth: u32,
    /// What the write gate admits; every command passes it before sending.
    policy: WritePolicy,
    /// Sees every command sent (the measurement path's recorder). Behind a
    /// mutex for the same reason as `last_cursor`; taken out while a
    /// command is in flight and put back after.
    observer: std::sync::Mutex<Option<Box<dyn Observer>>>,
}

/// How deeply statements and expressions may nest while evaluating: room
/// for anything the parser accepts (expressions [`MAX_DEPTH`] deep inside
/// `for` bodies as deep), and a hard stop for hand-built trees, so
/// evaluation can never overflow the stack.
pub const MAX_EVAL_DEPTH: u32 = 2 * MAX_DEPTH + 16;

/// How deeply a value built while evaluating (`x = {a: x}` in a loop) may
/// nest. mongod stores documents up to 100 levels and accepts commands up
/// to 200 (`maxBSONDepth`); past that nothing could be sent anyway, and
/// printing, copying or dropping deeper values would recurse without bound.
pub const MAX_VALUE_DEPTH: usize = 200;

struct LiveCursor {
    cursor: mongodb::Cursor<Document>,
    /// A document already read from the cursor (to learn whether more exist).
    pending: Option<Document>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("db", &self.db)
            .field("bindings", &self.bindings.keys().collect::<Vec<_>>())
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

fn type_err(message: impl Into<Message>, pos: Pos) -> DialectError {
    DialectError::Type {
        message: message.into(),
        suggestion: None,
        pos: Some(pos),
    }
}

/// Replace `undefined` with `null` before sending, as the Node driver does.
fn sanitize(b: Bson) -> Bson {
    match b {
        Bson::Undefined => Bson::Null,
        Bson::Document(d) => Bson::Document(sanitize_doc(d)),
        Bson::Array(a) => Bson::Array(a.into_iter().map(sanitize).collect()),
        other => other,
    }
}

fn sanitize_doc(d: Document) -> Document {
    d.into_iter().map(|(k, v)| (k, sanitize(v))).collect()
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
            bindings: HashMap::new(),
            last_cursor: std::sync::Mutex::new(None),
            depth: 0,
            policy: WritePolicy::Unrestricted,
            observer: std::sync::Mutex::new(None),
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

    /// What this session's write gate admits.
    pub fn policy(&self) -> &WritePolicy {
        &self.policy
    }

    fn cursor_slot(&mut self) -> &mut Option<LiveCursor> {
        self.last_cursor
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn take_cursor(&mut self) -> Option<LiveCursor> {
        self.cursor_slot().take()
    }

    /// The current database name.
    pub fn db_name(&self) -> &str {
        &self.db
    }

    /// Evaluate `src`, returning everything it printed; the first error
    /// stops evaluation (earlier outputs are lost, see [`Session::eval_partial`]).
    pub async fn eval(&mut self, src: &str) -> R<Vec<Output>> {
        let (out, res) = self.eval_partial(src).await;
        res.map(|()| out)
    }

    /// Evaluate `src`, returning the outputs produced before any error
    /// together with that error.
    pub async fn eval_partial(&mut self, src: &str) -> (Vec<Output>, R<()>) {
        let program = match parse_program(src) {
            Ok(p) => p,
            Err(e) => return (Vec::new(), Err(e)),
        };
        self.eval_program(&program).await
    }

    /// The driver client this session talks through.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Bind `name` to a constant value, as `const name = value` would (the
    /// exercise checker supplies operation parameters this way).
    pub fn bind(&mut self, name: &str, value: Bson) {
        self.bindings.insert(
            name.to_string(),
            Binding {
                value: Value::Bson(value),
                constant: true,
            },
        );
    }

    /// Evaluate a parsed program whose last statement is an expression and
    /// return that expression's value in full instead of showing it: a
    /// cursor is run to its end (an array of its documents), anything else
    /// is returned as it is. Earlier statements run as in
    /// [`Session::eval_program`].
    pub async fn eval_value(&mut self, program: &Program) -> (Vec<Output>, R<Bson>) {
        let mut out = Vec::new();
        let Some((last, init)) = program.stmts.split_last() else {
            return (out, Ok(Bson::Undefined));
        };
        for stmt in init {
            if let Err(e) = self.stmt(stmt, &mut out, true).await {
                return (out, Err(e));
            }
        }
        let StmtKind::Expr(e) = &last.kind else {
            let res = self.stmt(last, &mut out, true).await;
            return (out, res.map(|()| Bson::Undefined));
        };
        let v = match self.expr(e, &mut out).await {
            Ok(v) => v,
            Err(err) => return (out, Err(err)),
        };
        let res = match v {
            Value::Cursor(spec) => match &spec.explain {
                Some(verbosity) => self.explain(&spec, verbosity).await.map(Bson::Document),
                None => self
                    .run_all(&spec)
                    .await
                    .map(|docs| Bson::Array(docs.into_iter().map(Bson::Document).collect())),
            },
            Value::Bson(b) => Ok(b),
            other => Ok(Bson::String(other.render())),
        };
        (out, res)
    }

    /// Evaluate a parsed program.
    pub async fn eval_program(&mut self, program: &Program) -> (Vec<Output>, R<()>) {
        let mut out = Vec::new();
        // A program interrupted mid-way (its future dropped) may have left
        // the counter raised; every program starts from the top.
        self.depth = 0;
        for stmt in &program.stmts {
            if let Err(e) = self.stmt(stmt, &mut out, true).await {
                return (out, Err(e));
            }
        }
        (out, Ok(()))
    }

    fn stmt<'a>(
        &'a mut self,
        stmt: &'a Stmt,
        out: &'a mut Vec<Output>,
        top: bool,
    ) -> BoxFut<'a, ()> {
        Box::pin(GrowStack(Box::pin(async move {
            self.descend(stmt.pos)?;
            let r = self.stmt_inner(stmt, out, top).await;
            self.depth -= 1;
            r.map_err(|e| e.at_statement(stmt.pos))
        })))
    }

    /// Count one more level of nesting, refusing to go past the limit.
    fn descend(&mut self, pos: Pos) -> R<()> {
        if self.depth >= MAX_EVAL_DEPTH {
            return Err(DialectError::Range {
                message: Message::new("statements and expressions nested deeper than {max} levels")
                    .arg("max", MAX_EVAL_DEPTH),
                pos,
            });
        }
        self.depth += 1;
        Ok(())
    }

    fn stmt_inner<'a>(
        &'a mut self,
        stmt: &'a Stmt,
        out: &'a mut Vec<Output>,
        top: bool,
    ) -> BoxFut<'a, ()> {
        Box::pin(async move {
            match &stmt.kind {
                StmtKind::Expr(e) => {
                    let v = self.expr(e, out).await?;
                    // Inside a loop body values are not printed (only print() is),
                    // as in a mongosh script; an unprinted cursor never runs.
                    if top {
                        self.show_value(v, out).await?;
                    }
                }
                StmtKind::Let { constant, decls } => {
                    for (name, init) in decls {
                        let value = match init {
                            Some(e) => self.expr(e, out).await?,
                            None => Value::Bson(Bson::Undefined),
                        };
                        if self.bindings.get(name).is_some_and(|b| b.constant) {
                            return Err(type_err(
                                Message::new("Assignment to constant variable '{name}'")
                                    .arg("name", name),
                                stmt.pos,
                            ));
                        }
                        self.bindings.insert(
                            name.clone(),
                            Binding {
                                value,
                                constant: *constant,
                            },
                        );
                    }
                }
                StmtKind::Assign { name, value } => {
                    let v = self.expr(value, out).await?;
                    match self.bindings.get_mut(name) {
                        Some(b) if b.constant => {
                            return Err(type_err(
                                Message::new("Assignment to constant variable '{name}'")
                                    .arg("name", name),
                                stmt.pos,
                            ));
                        }
                        Some(b) => b.value = v.clone(),
                        // Like sloppy-mode JavaScript, assigning an unknown name creates it.
                        None => {
                            self.bindings.insert(
                                name.clone(),
                                Binding {
                                    value: v.clone(),
                                    constant: false,
                                },
                            );
                        }
                    }
                    if top {
                        self.show_value(v, out).await?;
                    }
                }
                StmtKind::ForOf {
                    name,
                    iterable,
                    body,
                } => {
                    let it = self.expr(iterable, out).await?;
                    let items: Vec<Bson> = match it {
                        Value::Cursor(spec) => self
                            .run_all(&spec)
                            .await?
                            .into_iter()
                            .map(Bson::Document)
                            .collect(),
                        Value::Bson(Bson::Array(a)) => a,
                        Value::Bson(Bson::String(s)) => {
                            s.chars().map(|c| Bson::String(c.to_string())).collect()
                        }
                        other => {
                            return Err(type_err(
                                Message::new("{type} is not iterable")
                                    .arg("type", other.type_name()),
                                iterable.pos,
                            ));
                        }
                    };
                    let saved = self.bindings.get(name).cloned();
                    let mut result = Ok(());
                    for item in items {
                        self.bindings.insert(
                            name.clone(),
                            Binding {
                                value: Value::Bson(item),
                                constant: true,
                            },
                        );
                        for s in body {
                            result = self.stmt(s, out, false).await;
                            if result.is_err() {
                                break;
                            }
                        }
                        if result.is_err() {
                            break;
                        }
                    }
                    match saved {
                        Some(b) => {
                            self.bindings.insert(name.clone(), b);
                        }
                        None => {
                            self.bindings.remove(name);
                        }
                    }
                    result?;
                }
                StmtKind::Show(what) => {
                    if what == "collections" {
                        let names = self.collection_names(&self.db.clone()).await?;
                        if !names.is_empty() {
                            out.push(Output::Message(names.join("\n")));
                        }
                    } else {
                        let reply = self.admin_command(doc! { "listDatabases": 1 }).await?;
                        let mut lines = Vec::new();
                        let dbs = reply.get_array("databases").cloned().unwrap_or_default();
                        let names: Vec<(String, f64)> = dbs
                            .iter()
                            .filter_map(|d| d.as_document())
                            .map(|d| {
                                let size = d.get("sizeOnDisk").and_then(bson_f64).unwrap_or(0.0);
                                (d.get_str("name").unwrap_or("").to_string(), size)
                            })
                            .collect();
                        // The embedded engine models on-disk sizes and says
                        // so; label them rather than pass them off as measured.
                        let modelled = reply
                            .get_document("schemalab")
                            .ok()
                            .and_then(|p| p.get_bool("sizesModelled").ok())
                            .unwrap_or(false);
                        let label = if modelled { " (modelled)" } else { "" };
                        let width = names.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
                        for (n, size) in names {
                            lines.push(format!("{n:<width$}  {}{label}", human_size(size)));
                        }
                        out.push(Output::Message(lines.join("\n")));
                    }
                }
                StmtKind::Use(name) => {
                    // mongosh's two replies.
                    let reply = if *name == self.db {
                        format!("already on db {name}")
                    } else {
                        format!("switched to db {name}")
                    };
                    self.db = name.clone();
                    out.push(Output::Message(reply));
                }
                StmtKind::It => match self.take_cursor() {
                    Some(live) => self.emit_batch(live, out).await?,
                    None => out.push(Output::Message("no cursor".into())),
                },
            }
            Ok(())
        })
    }

    /// Print a statement's value: cursors run and show their first batch.
    async fn show_value(&mut self, v: Value, out: &mut Vec<Output>) -> R<()> {
        match v {
            Value::Cursor(spec) => {
                if let Some(verbosity) = &spec.explain {
                    let plan = self.explain(&spec, verbosity).await?;
                    out.push(Output::Value(Value::Bson(Bson::Document(plan))));
                    return Ok(());
                }
                let cursor = self.open(&spec).await?;
                self.emit_batch(
                    LiveCursor {
                        cursor,
                        pending: None,
                    },
                    out,
                )
                .await
            }
            Value::Bson(Bson::Undefined) => Ok(()),
            other => {
                out.push(Output::Value(other));
                Ok(())
            }
        }
    }

    async fn emit_batch(&mut self, mut live: LiveCursor, out: &mut Vec<Output>) -> R<()> {
        let mut docs: Vec<Document> = live.pending.take().into_iter().collect();
        while docs.len() < DISPLAY_BATCH {
            match live.cursor.try_next().await.map_err(driver_err)? {
                Some(d) => docs.push(d),
                None => break,
            }
        }
        // More to show if the batch is full and the cursor is not exhausted.
        let has_more =
            docs.len() == DISPLAY_BATCH && live.cursor.advance().await.map_err(driver_err)?;
        if has_more {
            // `advance` moved onto the next document; keep it for `it`.
            let next: Document = live.cursor.deserialize_current().map_err(driver_err)?;
            live.pending = Some(next);
            *self.cursor_slot() = Some(live);
        } else {
            *self.cursor_slot() = None;
        }
        out.push(Output::Batch { docs, has_more });
        Ok(())
    }

    // ----- expressions -----

    fn expr<'a>(&'a mut self, e: &'a Expr, out: &'a mut Vec<Output>) -> BoxFut<'a, Value> {
        Box::pin(GrowStack(Box::pin(async move {
            self.descend(e.pos)?;
            let r = self.expr_inner(e, out).await;
            self.depth -= 1;
            r
        })))
    }

    fn expr_inner<'a>(&'a mut self, e: &'a Expr, out: &'a mut Vec<Output>) -> BoxFut<'a, Value> {
        Box::pin(async move {
            let pos = e.pos;
            Ok(match &e.kind {
                ExprKind::Number(n) => Value::Bson(js_number(*n)),
                ExprKind::Str(s) => Value::Bson(Bson::String(s.clone())),
                ExprKind::Bool(b) => Value::Bson(Bson::Boolean(*b)),
                ExprKind::Null => Value::Bson(Bson::Null),
                ExprKind::Undefined => Value::Bson(Bson::Undefined),
                ExprKind::Regex { pattern, flags } => {
                    Value::Bson(Bson::RegularExpression(bson::Regex {
                        pattern: pattern.clone(),
                        options: sorted_flags(flags),
                    }))
                }
                ExprKind::Ident(name) => self.lookup(name, pos)?,
                ExprKind::Array(items) => {
                    let mut a = Vec::with_capacity(items.len());
                    for it in items {
                        let v = self.expr(it, out).await?;
                        a.push(nestable(to_bson(v, it.pos)?, it.pos)?);
                    }
                    Value::Bson(Bson::Array(a))
                }
                ExprKind::Object(fields) => {
                    let mut d = Document::new();
                    for (k, ve) in fields {
                        let v = self.expr(ve, out).await?;
                        d.insert(k.clone(), nestable(to_bson(v, ve.pos)?, ve.pos)?);
                    }
                    Value::Bson(Bson::Document(d))
                }
                ExprKind::Member { object, name } => {
                    let obj = self.expr(object, out).await?;
                    member(obj, name, pos)?
                }
                ExprKind::Index { object, index } => {
                    let obj = self.expr(object, out).await?;
                    let idx = self.expr(index, out).await?;
                    match (obj, idx) {
                        (Value::Db(db), Value::Bson(Bson::String(name))) => {
                            Value::Collection { db, name }
                        }
                        (Value::Bson(Bson::Array(a)), Value::Bson(b)) if as_f64(&b).is_some() => {
                            let i = as_f64(&b).unwrap_or(-1.0);
                            if i >= 0.0 && i.fract() == 0.0 {
                                Value::Bson(a.get(i as usize).cloned().unwrap_or(Bson::Undefined))
                            } else {
                                Value::Bson(Bson::Undefined)
                            }
                        }
                        (obj, Value::Bson(Bson::String(key))) => member(obj, &key, pos)?,
                        (obj, Value::Bson(b)) if as_f64(&b).is_some() => {
                            member(obj, &format_number(as_f64(&b).unwrap_or(0.0)), pos)?
                        }
                        (obj, idx) => {
                            return Err(type_err(
                                Message::new("cannot index {type} with {type2}")
                                    .arg("type", obj.type_name())
                                    .arg("type2", idx.type_name()),
                                pos,
                            ));
                        }
                    }
                }
                ExprKind::Neg(inner) => {
                    let v = self.expr(inner, out).await?;
                    match v {
                        Value::Bson(Bson::Int64(i)) => Value::Bson(Bson::Int64(i.wrapping_neg())),
                        Value::Bson(b) => Value::Bson(js_number(-to_number(&b, pos)?)),
                        other => {
                            return Err(type_err(
                                Message::new("cannot negate a {type}")
                                    .arg("type", other.type_name()),
                                pos,
                            ));
                        }
                    }
                }
                ExprKind::Binary { op, left, right } => {
                    let l = self.expr(left, out).await?;
                    let r = self.expr(right, out).await?;
                    arith(*op, l, r, pos)?
                }
                ExprKind::New { callee, args } => {
                    let args = self.args(args, out).await?;
                    match callee.as_str() {
                        "Date" => Value::Bson(Bson::DateTime(new_date(&args, pos)?)),
                        "ObjectId" | "ISODate" | "UUID" | "Timestamp" | "RegExp" | "NumberInt"
                        | "NumberLong" | "NumberDecimal" | "Int32" | "Long" | "Double"
                        | "Decimal128" | "MinKey" | "MaxKey" => {
                            call_global(callee, args, pos, out)?
                        }
                        other => {
                            return Err(DialectError::Type {
                                message: Message::new("{other} is not a constructor")
                                    .arg("other", other),
                                suggestion: suggest(other, GLOBALS.iter().copied()),
                                pos: Some(pos),
                            });
                        }
                    }
                }
                ExprKind::Call { callee, args } => self.call(callee, args, pos, out).await?,
            })
        })
    }

    async fn args(&mut self, args: &[Expr], out: &mut Vec<Output>) -> R<Vec<(Value, Pos)>> {
        let mut v = Vec::with_capacity(args.len());
        for a in args {
            v.push((self.expr(a, out).await?, a.pos));
        }
        Ok(v)
    }

    fn lookup(&self, name: &str, pos: Pos) -> R<Value> {
        if let Some(b) = self.bindings.get(name) {
            return Ok(b.value.clone());
        }
        match name {
            "db" => Ok(Value::Db(self.db.clone())),
            "MinKey" => Ok(Value::Bson(Bson::MinKey)),
            "MaxKey" => Ok(Value::Bson(Bson::MaxKey)),
            "NaN" => Ok(Value::Bson(Bson::Double(f64::NAN))),
            "Infinity" => Ok(Value::Bson(Bson::Double(f64::INFINITY))),
            n if GLOBALS.contains(&n) => Ok(Value::Builtin(n.to_string())),
            _ => {
                let mut names: Vec<&str> = self.bindings.keys().map(String::as_str).collect();
                names.extend(GLOBALS.iter().copied());
                Err(DialectError::Reference {
                    name: name.to_string(),
                    suggestion: suggest(name, names),
                    pos,
                })
            }
        }
    }

    async fn call(
        &mut self,
        callee: &Expr,
        args: &[Expr],
        pos: Pos,
        out: &mut Vec<Output>,
    ) -> R<Value> {
        match &callee.kind {
            ExprKind::Member { object, name } => {
                let obj = self.expr(object, out).await?;
                let args = self.args(args, out).await?;
                let mpos = callee.pos;
                match obj {
                    Value::Db(db) => self.db_method(&db, name, args, mpos).await,
                    Value::Collection { db, name: coll } => {
                        self.coll_method(&db, &coll, name, args, mpos).await
                    }
                    Value::Cursor(spec) => self.cursor_method(*spec, name, args, mpos).await,
                    Value::Explainable {
                        db,
                        coll,
                        verbosity,
                    } => match name.as_str() {
                        "find" => {
                            let mut spec = find_spec(&db, &coll, args)?;
                            spec.explain = Some(verbosity);
                            Ok(Value::Cursor(Box::new(spec)))
                        }
                        "aggregate" => {
                            let spec = aggregate_spec(&db, &coll, args, mpos)?;
                            Ok(Value::Bson(Bson::Document(
                                self.explain(&spec, &verbosity).await?,
                            )))
                        }
                        other => Err(DialectError::Type {
                            message: Message::new("explain().{other} is not a function")
                                .arg("other", other),
                            suggestion: suggest(other, ["find", "aggregate"]),
                            pos: Some(mpos),
                        }),
                    },
                    Value::Builtin(b) => call_global(&format!("{b}.{name}"), args, pos, out),
                    Value::Bson(v) => bson_method(v, name, args, mpos),
                }
            }
            _ => {
                let f = self.expr(callee, out).await?;
                let args = self.args(args, out).await?;
                match f {
                    Value::Builtin(name) => call_global(&name, args, pos, out),
                    other => Err(type_err(
                        Message::new("{value} is not a function").arg("value", other.render()),
                        callee.pos,
                    )),
                }
            }
        }
    }

    // ----- database methods -----

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
    pub(super) async fn cursor(&self, db: &str, cmd: Document) -> R<mongodb::Cursor<Document>> {
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

    async fn admin_command(&self, cmd: Document) -> R<Document> {
        self.command("admin", cmd).await
    }

    async fn collection_names(&self, db: &str) -> R<Vec<String>> {
        self.gate(db, &doc! { "listCollections": 1 })?;
        let mut names = self
            .database(db)
            .list_collection_names()
            .await
            .map_err(driver_err)?;
        names.sort();
        Ok(names)
    }

    async fn db_method(
        &mut self,
        db: &str,
        name: &str,
        args: Vec<(Value, Pos)>,
        pos: Pos,
    ) -> R<Value> {
        let mut a = Args::new(args, pos, format!("db.{name}"));
        let v = match name {
            "getCollection" => {
                let coll = a.string("collection name")?;
                Value::Collection {
                    db: db.to_string(),
                    name: coll,
                }
            }
            "getSiblingDB" => {
                let name = a.string("database name")?;
                super::names::check_db_name(&name).map_err(|e| e.at_statement(pos))?;
                Value::Db(name)
            }
            "getName" => Value::Bson(Bson::String(db.to_string())),
            "getCollectionNames" => Value::Bson(Bson::Array(
                self.collection_names(db)
                    .await?
                    .into_iter()
                    .map(Bson::String)
                    .collect(),
            )),
            "createCollection" => {
                let coll = a.string("collection name")?;
                let opts = a.opt_doc("options")?.unwrap_or_default();
                let mut cmd = doc! { "create": coll };
                cmd.extend(opts);
                let reply = self.command(db, sanitize_doc(cmd)).await?;
                Value::Bson(Bson::Document(ok_only(reply)))
            }
            "runCommand" | "adminCommand" => {
                let target = if name == "adminCommand" { "admin" } else { db };
                let cmd = match a.next_value() {
                    Some((Value::Bson(Bson::String(s)), _)) => doc! { s: 1 },
                    Some((v, p)) => to_doc(v, p, "command")?,
                    None => {
                        return Err(type_err(
                            Message::new("db.{name} needs a command document").arg("name", name),
                            pos,
                        ));
                    }
                };
                Value::Bson(Bson::Document(
                    self.command(target, sanitize_doc(cmd)).await?,
                ))
            }
            "stats" => {
                let scale = scale_arg(&mut a)?;
                Value::Bson(Bson::Document(
                    self.command(db, doc! { "dbStats": 1, "scale": scale })
                        .await?,
                ))
            }
            "dropDatabase" => {
                self.command(db, doc! { "dropDatabase": 1 }).await?;
                Value::Bson(Bson::Document(doc! { "ok": 1, "dropped": db }))
            }
            other => {
                return Err(DialectError::Type {
                    message: Message::new("db.{other} is not a function").arg("other", other),
                    suggestion: suggest(other, DB_METHODS.iter().copied()),
                    pos: Some(pos),
                });
            }
        };
        a.done()?;
        Ok(v)
    }
}

/// Sort regex flags the way MongoDB stores them.
fn sorted_flags(flags: &str) -> String {
    let mut f: Vec<char> = flags.chars().filter(|c| *c != 'g' && *c != 'y').collect();
    f.sort_unstable();
    f.into_iter().collect()
}

fn bson_f64(b: &Bson) -> Option<f64> {
    as_f64(b)
}

fn as_f64(b: &Bson) -> Option<f64> {
    match b {
        Bson::Double(d) => Some(*d),
        Bson::Int32(i) => Some(f64::from(*i)),
        Bson::Int64(i) => Some(*i as f64),
        _ => None,
    }
}

fn human_size(bytes: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.2} {}", units[u])
}

fn ok_only(reply: Document) -> Document {
    let ok = reply.get("ok").cloned().unwrap_or(Bson::Int32(1));
    let ok = match as_f64(&ok) {
        Some(f) => js_number(f),
        None => ok,
    };
    doc! { "ok": ok }
}

fn scale_arg(a: &mut Args) -> R<i64> {
    Ok(match a.next_value() {
        None => 1,
        Some((Value::Bson(Bson::Document(d)), _)) => {
            d.get("scale").and_then(as_f64).unwrap_or(1.0) as i64
        }
        Some((Value::Bson(b), p)) => to_number(&b, p)? as i64,
        Some((v, p)) => {
            return Err(type_err(
                Message::new("scale must be a number, not {type}").arg("type", v.type_name()),
                p,
            ));
        }
    })
}

fn to_bson(v: Value, pos: Pos) -> R<Bson> {
    match v {
        Value::Bson(b) => Ok(b),
        other => Err(type_err(
            Message::new("a {type} cannot be stored in a document").arg("type", other.type_name()),
            pos,
        )),
    }
}

/// A value about to become an element of a new array or object: refused
/// when that would nest deeper than [`MAX_VALUE_DEPTH`].
fn nestable(b: Bson, pos: Pos) -> R<Bson> {
    if deeper_than(&b, MAX_VALUE_DEPTH - 1) {
        return Err(DialectError::Range {
            message: Message::new("a value may nest at most {max} levels deep")
                .arg("max", MAX_VALUE_DEPTH),
            pos,
        });
    }
    Ok(b)
}

/// Whether `b` nests more than `limit` levels (a scalar is 0, `{}` is 1).
/// Recursion stops at `limit`, so this never goes deeper than that.
fn deeper_than(b: &Bson, limit: usize) -> bool {
    let children: Box<dyn Iterator<Item = &Bson>> = match b {
        Bson::Document(d) => Box::new(d.values()),
        Bson::Array(a) => Box::new(a.iter()),
        _ => return false,
    };
    if limit == 0 {
        return true;
    }
    children.into_iter().any(|c| deeper_than(c, limit - 1))
}

fn to_doc(v: Value, pos: Pos, what: &str) -> R<Document> {
    match v {
        Value::Bson(Bson::Document(d)) => Ok(d),
        other => Err(type_err(
            Message::new("{what} must be an object, not {type}")
                .arg("what", what)
                .arg("type", other.type_name()),
            pos,
        )),
    }
}

fn to_number(b: &Bson, pos: Pos) -> R<f64> {
    match b {
        Bson::Double(d) => Ok(*d),
        Bson::Int32(i) => Ok(f64::from(*i)),
        Bson::Int64(i) => Ok(*i as f64),
        Bson::Boolean(b) => Ok(if *b { 1.0 } else { 0.0 }),
        Bson::Null => Ok(0.0),
        Bson::Undefined => Ok(f64::NAN),
        Bson::DateTime(d) => Ok(d.timestamp_millis() as f64),
        Bson::String(s) => Ok(s.trim().parse::<f64>().unwrap_or(f64::NAN)),
        other => Err(DialectError::unsupported(
            Message::new("arithmetic on a {type} value").arg("type", bson_type_name(other)),
            pos,
        )),
    }
}

/// JavaScript's `String(v)` for concatenation.
fn js_string(v: &Value) -> String {
    match v {
        Value::Bson(Bson::String(s)) => s.clone(),
        Value::Bson(Bson::Double(d)) => format_number(*d),
        Value::Bson(Bson::Int32(i)) => i.to_string(),
        Value::Bson(Bson::Document(_)) => "[object Object]".into(),
        Value::Bson(Bson::ObjectId(o)) => o.to_hex(),
        Value::Bson(Bson::Array(a)) => a
            .iter()
            .map(|b| match b {
                Bson::Null | Bson::Undefined => String::new(),
                other => js_string(&Value::Bson(other.clone())),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Bson(Bson::Int64(i)) => i.to_string(),
        Value::Bson(Bson::Decimal128(d)) => d.to_string(),
        Value::Bson(Bson::DateTime(d)) => iso_string(*d),
        other => other.render(),
    }
}

fn arith(op: BinOp, l: Value, r: Value, pos: Pos) -> R<Value> {
    let is_str = |v: &Value| matches!(v, Value::Bson(Bson::String(_)));
    if op == BinOp::Add && (is_str(&l) || is_str(&r)) {
        return Ok(Value::Bson(Bson::String(format!(
            "{}{}",
            js_string(&l),
            js_string(&r)
        ))));
    }
    let (Value::Bson(lb), Value::Bson(rb)) = (&l, &r) else {
        return Err(type_err(
            Message::new("cannot apply '{op}' to {type} and {type2}")
                .arg("op", op.symbol())
                .arg("type", l.type_name())
                .arg("type2", r.type_name()),
            pos,
        ));
    };
    if op == BinOp::Add && (matches!(lb, Bson::DateTime(_)) || matches!(rb, Bson::DateTime(_))) {
        return Err(DialectError::unsupported(
            "'+' on a Date (JavaScript would join strings); write new Date(d.getTime() + n)",
            pos,
        ));
    }
    if let (Bson::Int64(a), Bson::Int64(b)) = (lb, rb) {
        // Long arithmetic stays exact.
        let v = match op {
            BinOp::Add => a.checked_add(*b),
            BinOp::Sub => a.checked_sub(*b),
            BinOp::Mul => a.checked_mul(*b),
            BinOp::Div | BinOp::Rem => None,
        };
        if let Some(v) = v {
            return Ok(Value::Bson(Bson::Int64(v)));
        }
    }
    let a = to_number(lb, pos)?;
    let b = to_number(rb, pos)?;
    let v = match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Rem => a % b,
    };
    Ok(Value::Bson(js_number(v)))
}

/// Property access: document fields, array/string length, collection names.
fn member(obj: Value, name: &str, pos: Pos) -> R<Value> {
    Ok(match obj {
        Value::Db(db) => Value::Collection {
            db,
            name: name.to_string(),
        },
        // `db.a.b` names the collection "a.b", as in mongosh.
        Value::Collection { db, name: coll } => Value::Collection {
            db,
            name: format!("{coll}.{name}"),
        },
        Value::Builtin(b) => Value::Builtin(format!("{b}.{name}")),
        Value::Bson(Bson::Document(d)) => {
            Value::Bson(d.get(name).cloned().unwrap_or(Bson::Undefined))
        }
        Value::Bson(Bson::Array(a)) => match name {
            "length" => Value::Bson(js_number(a.len() as f64)),
            n => match n.parse::<usize>() {
                Ok(i) => Value::Bson(a.get(i).cloned().unwrap_or(Bson::Undefined)),
                Err(_) => Value::Bson(Bson::Undefined),
            },
        },
        Value::Bson(Bson::String(s)) if name == "length" => {
            Value::Bson(js_number(s.encode_utf16().count() as f64))
        }
        Value::Bson(Bson::Null | Bson::Undefined) => {
            return Err(type_err(
                Message::new("Cannot read properties of {value} (reading '{name}')")
                    .arg("name", name)
                    .arg("value", obj.render()),
                pos,
            ));
        }
        Value::Bson(_) => Value::Bson(Bson::Undefined),
        other => {
            return Err(type_err(
                Message::new("{type} has no property '{name}'")
                    .arg("name", name)
                    .arg("type", other.type_name()),
                pos,
            ));
        }
    })
}

/// Argument reader for helper and method calls.
pub(crate) struct Args {
    items: std::vec::IntoIter<(Value, Pos)>,
    pos: Pos,
    what: String,
    count: usize,
}

impl Args {
    fn new(args: Vec<(Value, Pos)>, pos: Pos, what: String) -> Self {
        Args {
            items: args.into_iter(),
            pos,
            what,
            count: 0,
        }
    }

    fn next_value(&mut self) -> Option<(Value, Pos)> {
        let v = self.items.next();
        if v.is_some() {
            self.count += 1;
        }
        v
    }

    fn value(&mut self, name: &str) -> R<(Value, Pos)> {
        self.next_value().ok_or_else(|| {
            type_err(
                Message::new("{what} needs a {name} argument")
                    .arg("name", name)
                    .arg("what", &self.what),
                self.pos,
            )
        })
    }

    fn string(&mut self, name: &str) -> R<String> {
        match self.value(name)? {
            (Value::Bson(Bson::String(s)), _) => Ok(s),
            (v, p) => Err(type_err(
                Message::new("{name} must be a string, not {type}")
                    .arg("name", name)
                    .arg("type", v.type_name()),
                p,
            )),
        }
    }

    fn doc(&mut self, name: &str) -> R<Document> {
        let (v, p) = self.value(name)?;
        to_doc(v, p, name)
    }

    /// An optional document; `undefined`/`null` count as absent.
    fn opt_doc(&mut self, name: &str) -> R<Option<Document>> {
        match self.next_value() {
            None | Some((Value::Bson(Bson::Undefined | Bson::Null), _)) => Ok(None),
            Some((v, p)) => Ok(Some(to_doc(v, p, name)?)),
        }
    }

    fn opt_bson(&mut self) -> Option<(Bson, Pos)> {
        match self.next_value() {
            Some((Value::Bson(b), p)) => Some((b, p)),
            _ => None,
        }
    }

    fn number(&mut self, name: &str) -> R<f64> {
        match self.value(name)? {
            (Value::Bson(b), p) => match as_f64(&b) {
                Some(n) => Ok(n),
                None => Err(type_err(
                    Message::new("{name} must be a number, not {type}")
                        .arg("name", name)
                        .arg("type", bson_type_name(&b)),
                    p,
                )),
            },
            (v, p) => Err(type_err(
                Message::new("{name} must be a number, not {type}")
                    .arg("name", name)
                    .arg("type", v.type_name()),
                p,
            )),
        }
    }

    fn rest(&mut self) -> Vec<(Value, Pos)> {
        let v: Vec<_> = self.items.by_ref().collect();
        self.count += v.len();
        v
    }

    /// Error on extra arguments, rather than silently ignoring them.
    fn done(mut self) -> R<()> {
        match self.items.next() {
            Some((_, p)) => Err(type_err(
                Message::new("too many arguments to {what}").arg("what", &self.what),
                p,
            )),
            None => Ok(()),
        }
    }
}

mod collection;
mod helpers;

use collection::{aggregate_spec, find_spec};
use helpers::{bson_method, call_global, new_date};
