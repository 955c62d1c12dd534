//! `explain`: the query plan of a `find`, `aggregate`, `count`, `distinct`,
//! `update`, `delete` or `findAndModify`.
//!
//! The command is parsed here (the inner command through the same
//! [`Command::from_doc`] as any other, so its errors are the usual ones)
//! and handed to the engine as the typed request it runs with
//! ([`Explainable`]); the engine plans and runs it with the function that
//! answers it and reports the stage tree that ran.

use bson::{Bson, Document};

use super::args;
use super::{Command, CommandDoc, Context};
use schemalab_engine::{Engine, EngineError, Explainable, Result};

/// How much an explain reports: the engine's own type.
pub use schemalab_engine::explain::Verbosity;

/// A parsed `explain`.
#[derive(Debug, Clone)]
pub struct Explain {
    pub inner: Box<Command>,
    /// The inner command as sent, which the reply echoes.
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
        let verbosity = match args::string(cmd, "explain", "verbosity")? {
            None => Verbosity::AllPlansExecution,
            Some(name) => Verbosity::parse(&name).map_err(|_| {
                EngineError::bad_value(format!(
                    "Enumeration value '{name}' for field 'explain.verbosity' is not a valid value."
                ))
            })?,
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
        let reply = self.explain(ctx.engine, ctx.db)?;
        Ok(with_server_address(reply, ctx))
    }

    /// The engine's explain of the inner command, without the server's
    /// address.
    pub fn explain(&self, engine: &Engine, db: &str) -> Result<Document> {
        let command = explainable(&self.inner)
            .ok_or_else(|| EngineError::bad_value("Explain is not supported for this command"))?;
        engine.explain(db, &command, &self.inner_doc, self.verbosity)
    }
}

/// The typed request of an explainable command: an `update` or `delete`
/// is explained by its first statement, as mongod does.
fn explainable(command: &Command) -> Option<Explainable> {
    Some(match command {
        Command::Find(f) => Explainable::Find {
            coll: f.coll.clone(),
            request: f.request.clone(),
        },
        Command::Aggregate(a) => Explainable::Aggregate {
            coll: a.coll.clone(),
            pipeline: a.pipeline.clone(),
            options: a.options.clone(),
        },
        Command::Count(c) => Explainable::Count {
            coll: c.coll.clone(),
            request: c.request.clone(),
        },
        Command::Distinct(d) => Explainable::Distinct {
            coll: d.coll.clone(),
            key: d.key.clone(),
            filter: d.filter.clone(),
            collation: d.collation.clone(),
        },
        Command::Update(u) => Explainable::Update {
            coll: u.coll.clone(),
            statement: u.statements.first()?.clone(),
        },
        Command::Delete(d) => Explainable::Delete {
            coll: d.coll.clone(),
            statement: d.statements.first()?.clone(),
        },
        Command::FindAndModify(f) => Explainable::FindAndModify {
            coll: f.coll.clone(),
            request: f.request.clone(),
        },
        _ => return None,
    })
}

/// Explain a command given as its inner document (`{find: "c", filter, …}`,
/// `{aggregate: "c", pipeline}`, `{count}`, `{distinct}`, `{update,
/// updates}`, `{delete, deletes}`, `{findAndModify}`) at a verbosity
/// (`queryPlanner`, `executionStats`, `allPlansExecution`), as `{explain:
/// command, verbosity}` would over the wire; for tests and embedders that
/// hold an [`Engine`].
pub fn explain_document(
    engine: &Engine,
    db: &str,
    command: &Document,
    verbosity: &str,
) -> Result<Document> {
    let explain = Explain::parse(&CommandDoc {
        db: db.to_string(),
        body: bson::doc! {"explain": command.clone(), "verbosity": verbosity},
        raw_documents: None,
    })?;
    explain.explain(engine, db)
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
