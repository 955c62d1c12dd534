//! Commands: parsing a command document into a typed [`Command`] and
//! applying it to the engine.
//!
//! [`Command::from_doc`] dispatches on the body's first key, case-sensitive
//! as mongod (with its aliases `isMaster`/`ismaster`, `buildinfo`,
//! `findandmodify`). Each family of commands lives in its own file with a
//! `parse` and an `apply` per command; failures are [`EngineError`]s, which
//! [`error_reply`] turns into mongod's `{ok: 0, errmsg, code, codeName}`.
//! A command error never closes the connection.

pub mod admin;
pub mod args;
pub mod catalog;
pub mod explain;
pub mod index;
pub mod profile;
pub mod query;
pub mod status;
pub mod write;

use std::net::SocketAddr;
use std::sync::Arc;

use bson::{Bson, Document, RawBsonRef, RawDocument, RawDocumentBuf, doc};

use super::cursor::CursorTable;
use super::frame::OpMsg;
use schemalab_engine::{Engine, EngineError, ErrorCode, Result, codec, limits};

/// What a connection brings to every command it runs.
#[derive(Debug, Clone)]
pub struct Session {
    pub engine: Engine,
    /// The server's cursor table, shared by all connections.
    pub cursors: Arc<CursorTable>,
    /// The server's running operations, for `currentOp`.
    pub ops: Arc<crate::ops::OpTable>,
    /// The `connectionId` reported by `hello`.
    pub connection_id: i32,
    /// The client's address, for `whatsmyuri`.
    pub peer: Option<SocketAddr>,
    /// The server's own address on this connection, for explain's
    /// `serverInfo`.
    pub local: Option<SocketAddr>,
    /// Says whether the client has gone, so that its running command stops.
    pub client_gone: Option<limits::Probe>,
}

/// What a command may touch while it runs.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub engine: &'a Engine,
    pub cursors: &'a CursorTable,
    /// The server's running operations.
    pub ops: &'a crate::ops::OpTable,
    pub connection_id: i32,
    pub peer: Option<SocketAddr>,
    /// The server's own address on this connection.
    pub local: Option<SocketAddr>,
    /// The command's database.
    pub db: &'a str,
    /// The command's session (`lsid`), which a cursor it opens belongs to.
    pub lsid: Option<&'a Bson>,
}

/// A command as it arrived: the body with any document sequences merged in.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandDoc {
    /// The target database (`$db`, or the OP_QUERY namespace).
    pub db: String,
    pub body: Document,
    /// An `insert`'s documents, kept as raw BSON all the way to the engine.
    pub raw_documents: Option<Vec<RawDocumentBuf>>,
}

fn to_bson(value: RawBsonRef<'_>) -> Result<Bson> {
    let converted = match value {
        RawBsonRef::Document(d) => codec::decode(d)
            .map(Bson::Document)
            .map_err(|e| e.to_string()),
        RawBsonRef::Array(a) => codec::decode_array(a)
            .map(Bson::Array)
            .map_err(|e| e.to_string()),
        v => Bson::try_from(v.to_raw_bson()).map_err(|e| e.to_string()),
    };
    converted.map_err(EngineError::bad_value)
}

/// A kind-1 identifier or body field that appears twice.
fn duplicate_field(name: &str) -> EngineError {
    EngineError::new(
        ErrorCode(40413),
        format!("Duplicate field name in OP_MSG body and document sequence: '{name}'"),
    )
}

impl CommandDoc {
    /// Assemble a command from an OP_MSG: the body, `$db`, and the
    /// document sequences merged under their identifiers.
    pub fn from_msg(msg: OpMsg) -> Result<Self> {
        limits::check_request_depth(&msg.body)?;
        for seq in &msg.sequences {
            for d in &seq.documents {
                limits::check_request_depth(d)?;
            }
        }
        let is_insert = first_key(&msg.body) == Some("insert");
        let mut body = Document::new();
        let mut raw_documents = None;
        for element in &msg.body {
            let (key, value) = element.map_err(|e| EngineError::bad_value(e.to_string()))?;
            if is_insert
                && key == "documents"
                && let RawBsonRef::Array(array) = value
            {
                let mut docs = Vec::new();
                for item in array {
                    match item.map_err(|e| EngineError::bad_value(e.to_string()))? {
                        RawBsonRef::Document(d) => docs.push(d.to_raw_document_buf()),
                        other => {
                            return Err(args::wrong_type(
                                "insert.documents.0",
                                &to_bson(other)?,
                                "'object'",
                            ));
                        }
                    }
                }
                raw_documents = Some(docs);
                continue;
            }
            body.insert(key, to_bson(value)?);
        }
        for seq in msg.sequences {
            if body.contains_key(&seq.identifier) {
                return Err(duplicate_field(&seq.identifier));
            }
            if is_insert && seq.identifier == "documents" {
                if raw_documents.is_some() {
                    return Err(duplicate_field("documents"));
                }
                raw_documents = Some(seq.documents);
            } else {
                let docs = seq
                    .documents
                    .iter()
                    .map(|d| codec::decode(d).map(Bson::Document))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(|e| EngineError::bad_value(e.to_string()))?;
                body.insert(seq.identifier, docs);
            }
        }
        let db = match body.get("$db") {
            Some(Bson::String(db)) => db.clone(),
            Some(other) => return Err(args::wrong_type("$db", other, "'string'")),
            None => {
                return Err(EngineError::new(
                    ErrorCode(40571),
                    "OP_MSG requests require a $db argument",
                ));
            }
        };
        Ok(Self {
            db,
            body,
            raw_documents,
        })
    }

    /// Assemble a command from an OP_QUERY on `<db>.$cmd`. As mongod 7.0,
    /// only the handshake (`hello`, `isMaster`) and the few commands old
    /// drivers still send that way are accepted; anything else is error 352
    /// `UnsupportedOpQueryCommand`.
    pub fn from_query(full_collection_name: &str, query: &RawDocument) -> Result<Self> {
        let Some(db) = full_collection_name.strip_suffix(".$cmd") else {
            return Err(EngineError::new(
                ErrorCode::UNSUPPORTED_OP_QUERY_COMMAND,
                format!(
                    "Unsupported OP_QUERY command on '{full_collection_name}': only commands on <db>.$cmd are supported; use OP_MSG"
                ),
            ));
        };
        limits::check_request_depth(query)?;
        let query = Document::try_from(query).map_err(|e| EngineError::bad_value(e.to_string()))?;
        // Legacy clients may wrap the command with read preference.
        let body = match query.get("$query") {
            Some(Bson::Document(inner)) => inner.clone(),
            _ => query,
        };
        let name = body.keys().next().map(String::as_str).unwrap_or("");
        if !OP_QUERY_COMMANDS.contains(&name) {
            return Err(EngineError::new(
                ErrorCode::UNSUPPORTED_OP_QUERY_COMMAND,
                format!(
                    "Unsupported OP_QUERY command: {name}. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal"
                ),
            ));
        }
        Ok(Self {
            db: db.to_string(),
            body,
            raw_documents: None,
        })
    }
}

/// The commands mongod 7.0 still accepts over OP_QUERY (its
/// `checkAllowedOpQueryCommand`: the handshake, plus the deprecated ones old
/// drivers send).
const OP_QUERY_COMMANDS: [&str; 9] = [
    "hello",
    "isMaster",
    "ismaster",
    "_isSelf",
    "authenticate",
    "buildinfo",
    "buildInfo",
    "saslContinue",
    "saslStart",
];

fn first_key(doc: &RawDocument) -> Option<&str> {
    doc.into_iter().next()?.ok().map(|(k, _)| k)
}

/// A parsed command.
#[derive(Debug, Clone)]
pub enum Command {
    Hello(admin::Hello),
    BuildInfo,
    Ping,
    CurrentOp(admin::CurrentOp),
    KillOp(admin::KillOp),
    GetParameter(admin::GetParameter),
    SetParameter(admin::SetParameter),
    ServerStatus(status::ServerStatus),
    GetLog(admin::GetLog),
    ConnectionStatus,
    WhatsMyUri,
    EndSessions,
    ListDatabases(catalog::ListDatabases),
    ListCollections(catalog::ListCollections),
    Create(catalog::Create),
    CollMod(catalog::CollMod),
    Drop(catalog::Drop),
    DropDatabase(catalog::DropDatabase),
    RenameCollection(catalog::RenameCollection),
    DbStats(catalog::DbStats),
    CollStats(catalog::CollStats),
    Validate(catalog::Validate),
    DataSize(catalog::DataSize),
    Insert(write::Insert),
    Update(write::Update),
    Delete(write::Delete),
    FindAndModify(write::FindAndModify),
    Find(query::Find),
    GetMore(query::GetMore),
    KillCursors(query::KillCursors),
    Aggregate(query::Aggregate),
    Count(query::Count),
    Distinct(query::Distinct),
    CreateIndexes(index::CreateIndexes),
    ListIndexes(index::ListIndexes),
    DropIndexes(index::DropIndexes),
    Explain(explain::Explain),
    Profile(profile::Profile),
    /// A name mongod would not know either.
    Unknown(String),
}

/// Fields that put a command inside a transaction, which needs a replica set.
const TRANSACTION_FIELDS: [&str; 3] = ["startTransaction", "autocommit", "txnNumber"];

impl Command {
    /// Parse a command by its first key.
    pub fn from_doc(cmd: CommandDoc) -> Result<Command> {
        if TRANSACTION_FIELDS.iter().any(|f| cmd.body.contains_key(f)) {
            return Err(EngineError::new(
                ErrorCode::ILLEGAL_OPERATION,
                "Transaction numbers are only allowed on a replica set member or mongos",
            ));
        }
        let Some(name) = cmd.body.keys().next().cloned() else {
            return Err(EngineError::failed_to_parse("no command name given"));
        };
        let command = match name.as_str() {
            "hello" | "isMaster" | "ismaster" => Command::Hello(admin::Hello::parse(&name)),
            "buildInfo" | "buildinfo" => Command::BuildInfo,
            "ping" => Command::Ping,
            "currentOp" => Command::CurrentOp(admin::CurrentOp::parse(&cmd)?),
            "killOp" => Command::KillOp(admin::KillOp::parse(&cmd)?),
            "getParameter" => Command::GetParameter(admin::GetParameter::parse(&cmd)),
            "setParameter" => Command::SetParameter(admin::SetParameter::parse(&cmd)?),
            "getLog" => Command::GetLog(admin::GetLog::parse(&cmd)?),
            "serverStatus" => Command::ServerStatus(status::ServerStatus::parse(&cmd)?),
            "connectionStatus" => Command::ConnectionStatus,
            "whatsmyuri" => Command::WhatsMyUri,
            "endSessions" => Command::EndSessions,
            "listDatabases" => Command::ListDatabases(catalog::ListDatabases::parse(&cmd)?),
            "listCollections" => Command::ListCollections(catalog::ListCollections::parse(&cmd)?),
            "create" => Command::Create(catalog::Create::parse(&cmd)?),
            "collMod" => Command::CollMod(catalog::CollMod::parse(&cmd)?),
            "drop" => Command::Drop(catalog::Drop::parse(&cmd)?),
            "dropDatabase" => Command::DropDatabase(catalog::DropDatabase::parse(&cmd)),
            "renameCollection" => {
                Command::RenameCollection(catalog::RenameCollection::parse(&cmd)?)
            }
            "dbStats" => Command::DbStats(catalog::DbStats::parse(&cmd)?),
            "collStats" => Command::CollStats(catalog::CollStats::parse(&cmd)?),
            "validate" => Command::Validate(catalog::Validate::parse(&cmd)?),
            "dataSize" | "datasize" => Command::DataSize(catalog::DataSize::parse(&cmd, &name)?),
            "insert" => Command::Insert(write::Insert::parse(cmd)?),
            "update" => Command::Update(write::Update::parse(&cmd)?),
            "delete" => Command::Delete(write::Delete::parse(&cmd)?),
            "findAndModify" | "findandmodify" => {
                Command::FindAndModify(write::FindAndModify::parse(&cmd, &name)?)
            }
            "find" => Command::Find(query::Find::parse(&cmd)?),
            "getMore" => Command::GetMore(query::GetMore::parse(&cmd)?),
            "killCursors" => Command::KillCursors(query::KillCursors::parse(&cmd)?),
            "aggregate" => Command::Aggregate(query::Aggregate::parse(&cmd)?),
            "count" => Command::Count(query::Count::parse(&cmd)?),
            "distinct" => Command::Distinct(query::Distinct::parse(&cmd)?),
            "createIndexes" => Command::CreateIndexes(index::CreateIndexes::parse(&cmd)?),
            "listIndexes" => Command::ListIndexes(index::ListIndexes::parse(&cmd)?),
            "dropIndexes" | "deleteIndexes" => {
                Command::DropIndexes(index::DropIndexes::parse(&cmd)?)
            }
            "explain" => Command::Explain(explain::Explain::parse(&cmd)?),
            "profile" => Command::Profile(profile::Profile::parse(&cmd)?),
            _ => Command::Unknown(name),
        };
        Ok(command)
    }

    /// Run the command. The reply lacks `ok`, which [`execute`] appends.
    pub fn apply(self, ctx: &Context<'_>) -> Result<RawDocumentBuf> {
        match self {
            Command::Hello(c) => raw(c.apply(ctx)),
            Command::BuildInfo => raw(admin::build_info()),
            Command::Ping | Command::EndSessions => raw(Document::new()),
            Command::CurrentOp(c) => raw(c.apply(ctx)?),
            Command::KillOp(c) => raw(c.apply(ctx)),
            Command::GetParameter(c) => raw(c.apply(ctx.engine.params())),
            Command::SetParameter(c) => raw(c.apply(ctx.engine.params())),
            Command::ServerStatus(c) => raw(c.apply(ctx)),
            Command::GetLog(c) => raw(c.apply()),
            Command::ConnectionStatus => raw(admin::connection_status()),
            Command::WhatsMyUri => raw(admin::whatsmyuri(ctx)),
            Command::ListDatabases(c) => raw(c.apply(ctx)?),
            Command::ListCollections(c) => c.apply(ctx),
            Command::Create(c) => raw(c.apply(ctx)?),
            Command::CollMod(c) => raw(c.apply(ctx)?),
            Command::Drop(c) => raw(c.apply(ctx)?),
            Command::DropDatabase(c) => raw(c.apply(ctx)?),
            Command::RenameCollection(c) => raw(c.apply(ctx)?),
            Command::DbStats(c) => raw(c.apply(ctx)?),
            Command::CollStats(c) => raw(c.apply(ctx)?),
            Command::Validate(c) => raw(c.apply(ctx)?),
            Command::DataSize(c) => raw(c.apply(ctx)?),
            Command::Insert(c) => raw(c.apply(ctx)?),
            Command::Update(c) => raw(c.apply(ctx)?),
            Command::Delete(c) => raw(c.apply(ctx)?),
            Command::FindAndModify(c) => raw(c.apply(ctx)?),
            Command::Find(c) => c.apply(ctx),
            Command::GetMore(c) => c.apply(ctx),
            Command::KillCursors(c) => raw(c.apply(ctx)),
            Command::Aggregate(c) => c.apply(ctx),
            Command::Count(c) => raw(c.apply(ctx)?),
            Command::Distinct(c) => raw(c.apply(ctx)?),
            Command::CreateIndexes(c) => raw(c.apply(ctx)?),
            Command::ListIndexes(c) => c.apply(ctx),
            Command::DropIndexes(c) => raw(c.apply(ctx)?),
            Command::Explain(c) => raw(c.apply(ctx)?),
            Command::Profile(c) => raw(c.apply(ctx)),
            Command::Unknown(name) => Err(EngineError::new(
                ErrorCode::COMMAND_NOT_FOUND,
                format!("no such command: '{name}'"),
            )),
        }
    }
}

/// Serialise a reply document.
pub fn raw(doc: Document) -> Result<RawDocumentBuf> {
    codec::encode(&doc).map_err(|e| EngineError::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
}

/// mongod's command-error reply for an engine error, `info` fields included.
pub fn error_reply(err: &EngineError) -> Document {
    let mut reply = doc! {
        "ok": 0.0,
        "errmsg": err.message.clone(),
        "code": err.code.code(),
        "codeName": err.code_name(),
    };
    if let Some(info) = &err.info {
        for (k, v) in info {
            reply.insert(k.clone(), v.clone());
        }
    }
    reply
}

/// Parse and run one command, producing the full reply (`ok` included).
/// Never fails: errors become error replies, and so does a panic inside the
/// command (as `InternalError`, 1), so that one broken command costs neither
/// the connection nor the server. Writes compute everything before applying
/// anything and the catalog's locks (parking_lot) are not poisoned by a panic,
/// so a command that panics leaves no half-written state behind.
pub fn execute(cmd: Result<CommandDoc>, session: &Session) -> RawDocumentBuf {
    // With the database profiler on, measure the operation and record it in
    // `system.profile` (never the profiler's own reads of it).
    let profiled = cmd.as_ref().ok().and_then(|c| {
        let name = c.body.keys().next()?;
        let op = profile::op_of(name)?;
        let (level, slow_ms) = session.engine.profiling(&c.db);
        let own = c.body.get_str(name).is_ok_and(|n| n == "system.profile")
            || c.body
                .get_str("collection")
                .is_ok_and(|n| n == "system.profile");
        (level > 0 && !own).then(|| (op, level, slow_ms, c.clone()))
    });
    if profiled.is_some() {
        schemalab_engine::metrics::begin();
    }
    let started = std::time::Instant::now();
    let reply = execute_unprofiled(cmd, session);
    if let Some((op, level, slow_ms, cmd)) = profiled {
        let metrics = schemalab_engine::metrics::end().unwrap_or_default();
        let millis = started.elapsed().as_millis() as i64;
        if level == 2 || millis >= slow_ms {
            let entry = profile::entry(
                op,
                &cmd,
                &reply,
                &metrics,
                millis,
                session.engine.now(),
                session.peer,
            );
            // A failure to record never fails the operation itself.
            let _ = session.engine.record_profile(&cmd.db, entry);
        }
    }
    reply
}

fn execute_unprofiled(cmd: Result<CommandDoc>, session: &Session) -> RawDocumentBuf {
    // Listed by `currentOp` (and open to `killOp`) for as long as it runs.
    let running = cmd.as_ref().ok().map(|c| {
        session
            .ops
            .register(session.connection_id, session.peer, &c.db, &c.body)
    });
    let op = match &cmd {
        Ok(c) => operation(c, session).map(|op| limits::Operation {
            killed: running.as_ref().map(|r| r.kill_flag()),
            ..op
        }),
        Err(_) => Ok(limits::Operation {
            params: Some(session.engine.params().clone()),
            ..limits::Operation::default()
        }),
    };
    // `bypassDocumentValidation` holds for every write the command makes
    // (inserts, updates, `findAndModify`, an aggregate's `$out`/`$merge`).
    let bypass = cmd.as_ref().is_ok_and(|c| {
        c.body
            .get("bypassDocumentValidation")
            .is_some_and(|v| match v {
                Bson::Boolean(b) => *b,
                other => schemalab_engine::value::as_f64(other).is_some_and(|n| n != 0.0),
            })
    });
    let outcome = op.and_then(|op| {
        limits::run_as(op, || {
            schemalab_engine::bypassing_validation(bypass, || guarded(|| run_command(cmd, session)))
        })
    });
    reply_of(outcome)
}

/// The bounds of one command: its `maxTimeMS` (checked as mongod's
/// `parseMaxTimeMS`), `allowDiskUse`, and the connection's cancel flag.
fn operation(cmd: &CommandDoc, session: &Session) -> Result<limits::Operation> {
    let started = std::time::Instant::now();
    let deadline = match cmd.body.get("maxTimeMS") {
        None | Some(Bson::Null) => None,
        Some(v) => {
            let ms = match v {
                Bson::Int32(i) => i64::from(*i),
                Bson::Int64(i) => *i,
                Bson::Double(d) if d.fract() != 0.0 => {
                    return Err(EngineError::bad_value("maxTimeMS has non-integral value"));
                }
                Bson::Double(d) if d.is_finite() => *d as i64,
                Bson::Double(_) => return Err(EngineError::bad_value("maxTimeMS out of range")),
                _ => return Err(EngineError::bad_value("maxTimeMS must be a number")),
            };
            if !(0..=i64::from(i32::MAX)).contains(&ms) {
                return Err(EngineError::bad_value("maxTimeMS out of range"));
            }
            // The engine's cursors are never tailable (awaitData).
            if cmd.body.keys().next().map(String::as_str) == Some("getMore") {
                return Err(EngineError::bad_value(
                    "cannot set maxTimeMS on getMore command for a non-awaitData cursor",
                ));
            }
            // 0 means no limit.
            (ms > 0).then(|| started + std::time::Duration::from_millis(ms as u64))
        }
    };
    let allow_disk_use = match cmd.body.get("allowDiskUse") {
        Some(Bson::Boolean(b)) => Some(*b),
        _ => None,
    };
    Ok(limits::Operation {
        deadline,
        client_gone: session.client_gone.clone(),
        allow_disk_use,
        killed: None,
        params: Some(session.engine.params().clone()),
    })
}

thread_local! {
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a panic on this thread right now happens inside a command and
/// will become that command's `InternalError` reply: a process-wide panic
/// hook (the TUI's, which restores the terminal) can leave such panics
/// alone.
pub fn panic_will_be_caught() -> bool {
    GUARDED.with(std::cell::Cell::get)
}

/// Run `f`, turning a panic into `InternalError`.
fn guarded(f: impl FnOnce() -> Result<RawDocumentBuf>) -> Result<RawDocumentBuf> {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            GUARDED.with(|g| g.set(self.0));
        }
    }
    let _reset = Reset(GUARDED.with(|g| g.replace(true)));
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        Err(EngineError::new(
            ErrorCode::INTERNAL_ERROR,
            format!("internal error while running the command: {what}"),
        ))
    })
}

fn run_command(cmd: Result<CommandDoc>, session: &Session) -> Result<RawDocumentBuf> {
    cmd.and_then(|cmd| {
        // Cloned because `from_doc` consumes the command.
        let db = cmd.db.clone();
        let lsid = cmd.body.get("lsid").cloned();
        let ctx = Context {
            engine: &session.engine,
            cursors: &session.cursors,
            ops: &session.ops,
            connection_id: session.connection_id,
            peer: session.peer,
            local: session.local,
            db: &db,
            lsid: lsid.as_ref(),
        };
        Command::from_doc(cmd).and_then(|c| c.apply(&ctx))
    })
}

fn reply_of(outcome: Result<RawDocumentBuf>) -> RawDocumentBuf {
    match outcome {
        // mongod refuses to send a reply over its internal BSON limit.
        Ok(reply) if reply.as_bytes().len() > limits::MAX_INTERNAL_OBJECT_SIZE => {
            reply_of(Err(limits::object_too_large(reply.as_bytes().len())))
        }
        Ok(mut reply) => {
            reply.append("ok", 1.0);
            reply
        }
        Err(err) => raw(error_reply(&err)).unwrap_or_else(|_| {
            // Only a key with a NUL byte could fail to serialise; fall back
            // to a reply without the engine's info fields.
            let mut r = RawDocumentBuf::new();
            r.append("ok", 0.0);
            r.append("errmsg", err.message.replace('\0', ""));
            r.append("code", err.code.code());
            r.append("codeName", err.code_name());
            r
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn session() -> Session {
        Session {
            engine: Engine::new(),
            cursors: Arc::new(CursorTable::default()),
            ops: Arc::default(),
            connection_id: 7,
            peer: None,
            local: None,
            client_gone: None,
        }
    }

    fn run(body: Document) -> Document {
        let cmd = CommandDoc {
            db: "test".into(),
            body,
            raw_documents: None,
        };
        execute(Ok(cmd), &session()).to_document().unwrap()
    }

    #[test]
    fn hello_aliases_and_case_sensitivity() {
        for name in ["hello", "isMaster", "ismaster"] {
            let reply = run(doc! {name: 1});
            assert_eq!(reply.get_f64("ok").unwrap(), 1.0, "{name}");
            assert_eq!(reply.get_i32("connectionId").unwrap(), 7);
        }
        let reply = run(doc! {"Ping": 1});
        assert_eq!(reply.get_i32("code").unwrap(), 59);
        assert_eq!(reply.get_str("codeName").unwrap(), "CommandNotFound");
        assert_eq!(reply.get_str("errmsg").unwrap(), "no such command: 'Ping'");
    }

    #[test]
    fn error_reply_carries_info() {
        let err = EngineError::new(ErrorCode::DUPLICATE_KEY, "E11000 duplicate key")
            .with_info(doc! {"keyPattern": {"a": 1}, "keyValue": {"a": 2}});
        let reply = error_reply(&err);
        assert_eq!(reply.get_f64("ok").unwrap(), 0.0);
        assert_eq!(reply.get_i32("code").unwrap(), 11000);
        assert_eq!(reply.get_str("codeName").unwrap(), "DuplicateKey");
        assert_eq!(reply.get_document("keyValue").unwrap(), &doc! {"a": 2});
    }

    #[test]
    fn a_panicking_command_becomes_internal_error() {
        assert!(!panic_will_be_caught());
        let reply = reply_of(guarded(|| {
            assert!(panic_will_be_caught());
            panic!("boom")
        }));
        assert!(!panic_will_be_caught());
        let reply = reply.to_document().unwrap();
        assert_eq!(reply.get_f64("ok").unwrap(), 0.0);
        assert_eq!(reply.get_i32("code").unwrap(), 1);
        assert_eq!(reply.get_str("codeName").unwrap(), "InternalError");
        assert!(reply.get_str("errmsg").unwrap().contains("boom"));
        // The session still runs commands afterwards.
        assert_eq!(run(doc! {"ping": 1}).get_f64("ok").unwrap(), 1.0);
    }

    #[test]
    fn op_query_unwraps_dollar_query() {
        let query =
            bson::rawdoc! {"$query": {"ismaster": 1}, "$readPreference": {"mode": "primary"}};
        let cmd = CommandDoc::from_query("admin.$cmd", &query).unwrap();
        assert_eq!(cmd.db, "admin");
        assert_eq!(cmd.body, doc! {"ismaster": 1});
        let err = CommandDoc::from_query("admin.users", &bson::rawdoc! {}).unwrap_err();
        assert_eq!(err.code.code(), 352);
    }

    #[test]
    fn op_query_accepts_only_the_handshake() {
        let err = CommandDoc::from_query("admin.$cmd", &bson::rawdoc! {"ping": 1}).unwrap_err();
        assert_eq!(err.code.code(), 352);
        assert_eq!(err.code_name(), "UnsupportedOpQueryCommand");
        assert!(
            err.message
                .starts_with("Unsupported OP_QUERY command: ping.")
        );
        let err = CommandDoc::from_query("t.$cmd", &bson::rawdoc! {"find": "c", "filter": {}})
            .unwrap_err();
        assert_eq!(err.code.code(), 352);
        assert!(CommandDoc::from_query("admin.$cmd", &bson::rawdoc! {"hello": 1}).is_ok());
        assert!(CommandDoc::from_query("admin.$cmd", &bson::rawdoc! {"buildinfo": 1}).is_ok());
    }

    #[test]
    fn write_parsing_follows_mongod() {
        let reply = run(doc! {"insert": "c", "documents": []});
        assert_eq!(reply.get_i32("code").unwrap(), 16);
        let reply = run(doc! {"delete": "c", "deletes": [{"q": {}}]});
        assert_eq!(reply.get_i32("code").unwrap(), 40414);
        let reply = run(doc! {"findAndModify": "c", "query": {}});
        assert_eq!(reply.get_i32("code").unwrap(), 9);
        let reply = run(doc! {"find": 3});
        assert_eq!(reply.get_i32("code").unwrap(), 73);
        let reply = run(doc! {"ping": 1, "autocommit": false});
        assert_eq!(reply.get_i32("code").unwrap(), 20);
    }
}
