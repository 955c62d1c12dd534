//! `explain`: the query plan of a `find`, `aggregate`, `count`, `distinct`,
//! `update`, `delete` or `findAndModify`.
//!
//! The command is parsed here (the inner command through the same
//! [`Command::from_doc`] as any other, so its errors are the usual ones);
//! answering it waits for the planner, which will take the parsed inner
//! command and the verbosity and build the classic explain document.

use bson::{Bson, Document};

use super::args;
use super::{Command, CommandDoc, Context};
use crate::engine::{EngineError, Result};

/// How much an explain reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    QueryPlanner,
    ExecutionStats,
    AllPlansExecution,
}

/// A parsed `explain`.
#[derive(Debug, Clone)]
pub struct Explain {
    pub inner: Box<Command>,
    pub verbosity: Verbosity,
}

/// The reply while the planner is missing.
pub fn not_yet(what: &str) -> EngineError {
    EngineError::not_implemented(format!("explain of {what}"))
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
            body,
            raw_documents: None,
        })?;
        Ok(Self {
            inner: Box::new(inner),
            verbosity,
        })
    }

    /// Not yet: the planner is a later piece of work.
    pub fn apply(&self, _ctx: &Context<'_>) -> Result<Document> {
        let what = match self.inner.as_ref() {
            Command::Find(_) => "find",
            Command::Aggregate(_) => "aggregate",
            Command::Count(_) => "count",
            Command::Distinct(_) => "distinct",
            Command::Update(_) => "update",
            Command::Delete(_) => "delete",
            Command::FindAndModify(_) => "findAndModify",
            _ => {
                return Err(EngineError::bad_value(
                    "Explain is not supported for this command",
                ));
            }
        };
        Err(not_yet(what))
    }
}
