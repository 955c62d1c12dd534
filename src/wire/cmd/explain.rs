//! `explain`: the query plan of a `find`, `aggregate`, `count`, `distinct`,
//! `update`, `delete` or `findAndModify`.
//!
//! The command is parsed here (the inner command through the same
//! [`Command::from_doc`] as any other, so its errors are the usual ones);
//! the engine's planner then answers with the classic explain document.

use bson::{Bson, Document};

use super::args;
use super::{Command, CommandDoc, Context};
use crate::engine::{EngineError, Result};

/// How much an explain reports: the engine's own type.
pub use crate::engine::explain::Verbosity;

/// A parsed `explain`.
#[derive(Debug, Clone)]
pub struct Explain {
    pub inner: Box<Command>,
    /// The inner command as sent, which the engine's explain reads.
    pub inner_doc: Document,
    pub verbosity: Verbosity,
}

impl Explain {
    /// Parse `{explain: <command>, verbosity}`; the inner command inherits
    /// the outer `$db`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let inner = match cmd.body.get("explain") {
            Some(Bson::Document(d)) => d.clone(),
            Some(other) => return Err(args::wrong_type("explain.explain", other, "'object'")),
            None => return Err(args::missing("explain.explain")),
        };
        let verbosity = match args::string(cmd, "explain", "verbosity")?.as_deref() {
            None | Some("allPlansExecution") => Verbosity::AllPlansExecution,
            Some("queryPlanner") => Verbosity::QueryPlanner,
            Some("executionStats") => Verbosity::ExecutionStats,
            Some(other) => {
                return Err(EngineError::bad_value(format!(
                    "Enumeration value '{other}' for field 'explain.verbosity' is not a valid value."
                )));
            }
        };
        let mut body = inner;
        // The inner command names no database of its own.
        body.insert("$db", cmd.db.clone());
        // `aggregate` inside explain needs no cursor.
        if body.keys().next().is_some_and(|k| k == "aggregate") && !body.contains_key("cursor") {
            body.insert("cursor", Document::new());
        }
        let inner = Command::from_doc(CommandDoc {
            db: cmd.db.clone(),
            body: body.clone(),
            raw_documents: None,
        })?;
        Ok(Self {
            inner: Box::new(inner),
            inner_doc: body,
            verbosity,
        })
    }

    /// The engine's explain of the inner command.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        match self.inner.as_ref() {
            Command::Find(_)
            | Command::Aggregate(_)
            | Command::Count(_)
            | Command::Distinct(_)
            | Command::Update(_)
            | Command::Delete(_)
            | Command::FindAndModify(_) => {
                let reply = ctx
                    .engine
                    .explain_at(ctx.db, &self.inner_doc, self.verbosity)?;
                Ok(with_server_address(reply, ctx))
            }
            _ => Err(EngineError::bad_value(
                "Explain is not supported for this command",
            )),
        }
    }
}

/// Put the server's address into an explain reply's `serverInfo`, as
/// mongod reports its own host and port.
pub fn with_server_address(mut reply: Document, ctx: &Context<'_>) -> Document {
    if let (Some(addr), Ok(info)) = (ctx.local, reply.get_document_mut("serverInfo")) {
        let mut with_addr =
            bson::doc! {"host": addr.ip().to_string(), "port": i32::from(addr.port())};
        with_addr.extend(std::mem::take(info));
        *info = with_addr;
    }
    reply
}
