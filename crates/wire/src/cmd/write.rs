//! Write commands: `insert`, `update`, `delete`, `findAndModify`.
//!
//! A batch's per-statement failures are not command errors: they come back
//! in `writeErrors` next to `ok: 1`, each with its statement `index`, `code`
//! and `errmsg`, plus the engine's extra fields (`keyPattern`/`keyValue` for
//! a duplicate key, `errInfo` for a validation failure).

use bson::{Bson, Document, RawDocumentBuf, doc};

use super::args;
use super::{CommandDoc, Context};
use schemalab_engine::{
    DeleteStatement, EngineError, ErrorCode, FindAndModifyRequest, Result, UpdateStatement,
    WriteError,
};

/// mongod's `maxWriteBatchSize`.
pub const MAX_WRITE_BATCH: usize = 100_000;

fn batch_size_error(n: usize) -> EngineError {
    EngineError::new(
        ErrorCode(16),
        format!("Write batch sizes must be between 1 and {MAX_WRITE_BATCH}. Got {n} operations."),
    )
}

/// Fields every write command's IDL (`WriteCommandRequestBase`) defines.
const WRITE_BASE_FIELDS: &[&str] = &[
    "ordered",
    "bypassDocumentValidation",
    "stmtIds",
    "isTimeseriesNamespace",
    "collectionUUID",
    "encryptionInformation",
    "originalQuery",
    "originalCollation",
];

/// Refuse a top-level field the write command's IDL does not define.
fn reject_unknown_write(cmd: &CommandDoc, command: &str, own: &[&str]) -> Result<()> {
    let known: Vec<&str> = WRITE_BASE_FIELDS.iter().chain(own).copied().collect();
    args::reject_unknown(cmd, command, &known)
}

fn check_batch(n: usize) -> Result<()> {
    if n == 0 || n > MAX_WRITE_BATCH {
        return Err(batch_size_error(n));
    }
    Ok(())
}

fn count(n: impl TryInto<i32>) -> i32 {
    n.try_into().unwrap_or(i32::MAX)
}

/// The `writeErrors` array.
pub fn write_errors(errors: &[WriteError]) -> Vec<Bson> {
    errors
        .iter()
        .map(|e| {
            let mut entry = doc! {
                "index": count(e.index),
                "code": e.error.code.code(),
                "errmsg": e.error.message.clone(),
            };
            if let Some(info) = &e.error.info {
                for (k, v) in info {
                    entry.insert(k.clone(), v.clone());
                }
            }
            Bson::Document(entry)
        })
        .collect()
}

fn with_errors(mut reply: Document, errors: &[WriteError]) -> Document {
    if !errors.is_empty() {
        reply.insert("writeErrors", write_errors(errors));
    }
    reply
}

/// `insert`.
#[derive(Debug, Clone)]
pub struct Insert {
    coll: String,
    documents: Vec<RawDocumentBuf>,
    ordered: bool,
}

impl Insert {
    /// Take the documents, raw from a kind-1 section or from the body.
    pub fn parse(mut cmd: CommandDoc) -> Result<Self> {
        let coll = args::collection(&cmd, "insert")?;
        reject_unknown_write(&cmd, "insert", &["documents"])?;
        let documents = match cmd.raw_documents.take() {
            Some(docs) => docs,
            None => args::docs(&cmd, "insert", "documents")?
                .ok_or_else(|| args::missing("insert.documents"))?
                .iter()
                .map(|d| super::raw(d.clone()))
                .collect::<Result<Vec<_>>>()?,
        };
        check_batch(documents.len())?;
        Ok(Self {
            coll,
            documents,
            ordered: args::bool(&cmd, "insert", "ordered")?.unwrap_or(true),
        })
    }

    /// Insert; `{n, writeErrors?}`.
    pub fn apply(self, ctx: &Context<'_>) -> Result<Document> {
        let outcome = ctx
            .engine
            .insert(ctx.db, &self.coll, self.documents, self.ordered)?;
        Ok(with_errors(
            doc! {"n": count(outcome.inserted)},
            &outcome.errors,
        ))
    }
}

/// `update`.
#[derive(Debug, Clone)]
pub struct Update {
    pub coll: String,
    pub statements: Vec<UpdateStatement>,
    ordered: bool,
}

fn update_statement(d: &Document, let_vars: Option<&Document>) -> Result<UpdateStatement> {
    let path = "update.updates";
    // MongoDB 8.0 added `sort`; this server answers as 7.0 and refuses it.
    args::reject_unknown_in(
        d,
        path,
        &[
            "q",
            "u",
            "c",
            "arrayFilters",
            "hint",
            "multi",
            "upsert",
            "upsertSupplied",
            "collation",
            "sampleId",
            "$_allowShardKeyUpdatesWithoutFullShardKeyInQuery",
        ],
    )?;
    let filter = args::doc_in(d, path, "q")?.ok_or_else(|| args::missing("update.updates.q"))?;
    let update = match d.get("u") {
        Some(u @ (Bson::Document(_) | Bson::Array(_))) => u.clone(),
        Some(other) => {
            return Err(args::wrong_type(
                "update.updates.u",
                other,
                "'[object, array]'",
            ));
        }
        None => return Err(args::missing("update.updates.u")),
    };
    Ok(UpdateStatement {
        filter,
        update,
        upsert: args::bool_in(d, path, "upsert")?.unwrap_or(false),
        multi: args::bool_in(d, path, "multi")?.unwrap_or(false),
        array_filters: args::docs_in(d, path, "arrayFilters")?.unwrap_or_default(),
        collation: args::doc_in(d, path, "collation")?,
        hint: args::hint(d, path)?,
        sort: None,
        let_vars: let_vars.cloned(),
    })
}

impl Update {
    /// Read the statements.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let coll = args::collection(cmd, "update")?;
        reject_unknown_write(
            cmd,
            "update",
            &[
                "updates",
                "let",
                "runtimeConstants",
                "$_allowShardKeyUpdatesWithoutFullShardKeyInQuery",
            ],
        )?;
        let raw =
            args::docs(cmd, "update", "updates")?.ok_or_else(|| args::missing("update.updates"))?;
        check_batch(raw.len())?;
        let let_vars = args::doc(cmd, "update", "let")?;
        Ok(Self {
            coll,
            statements: raw
                .iter()
                .map(|d| update_statement(d, let_vars.as_ref()))
                .collect::<Result<_>>()?,
            ordered: args::bool(cmd, "update", "ordered")?.unwrap_or(true),
        })
    }

    /// Update; `{n, nModified, upserted?, writeErrors?}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let outcome = ctx
            .engine
            .update(ctx.db, &self.coll, &self.statements, self.ordered)?;
        let mut reply = doc! {
            "n": count(outcome.matched),
            "nModified": count(outcome.modified),
        };
        if !outcome.upserted.is_empty() {
            let upserted: Vec<Bson> = outcome
                .upserted
                .iter()
                .map(|(i, id)| Bson::Document(doc! {"index": count(*i), "_id": id.clone()}))
                .collect();
            reply.insert("upserted", upserted);
        }
        Ok(with_errors(reply, &outcome.errors))
    }
}

/// `delete`.
#[derive(Debug, Clone)]
pub struct Delete {
    pub coll: String,
    pub statements: Vec<DeleteStatement>,
    ordered: bool,
}

fn delete_statement(d: &Document, let_vars: Option<&Document>) -> Result<DeleteStatement> {
    let path = "delete.deletes";
    args::reject_unknown_in(d, path, &["q", "limit", "hint", "collation", "sampleId"])?;
    let filter = args::doc_in(d, path, "q")?.ok_or_else(|| args::missing("delete.deletes.q"))?;
    let limit =
        args::int_in(d, path, "limit")?.ok_or_else(|| args::missing("delete.deletes.limit"))?;
    if limit != 0 && limit != 1 {
        return Err(EngineError::failed_to_parse(format!(
            "The limit field in delete objects must be 0 or 1. Got {limit}"
        )));
    }
    Ok(DeleteStatement {
        filter,
        limit: u32::from(limit == 1),
        collation: args::doc_in(d, path, "collation")?,
        hint: args::hint(d, path)?,
        let_vars: let_vars.cloned(),
    })
}

impl Delete {
    /// Read the statements.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let coll = args::collection(cmd, "delete")?;
        reject_unknown_write(
            cmd,
            "delete",
            &[
                "deletes",
                "let",
                "runtimeConstants",
                "$_allowShardKeyUpdatesWithoutFullShardKeyInQuery",
            ],
        )?;
        let raw =
            args::docs(cmd, "delete", "deletes")?.ok_or_else(|| args::missing("delete.deletes"))?;
        check_batch(raw.len())?;
        let let_vars = args::doc(cmd, "delete", "let")?;
        Ok(Self {
            coll,
            statements: raw
                .iter()
                .map(|d| delete_statement(d, let_vars.as_ref()))
                .collect::<Result<_>>()?,
            ordered: args::bool(cmd, "delete", "ordered")?.unwrap_or(true),
        })
    }

    /// Delete; `{n, writeErrors?}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let outcome = ctx
            .engine
            .delete(ctx.db, &self.coll, &self.statements, self.ordered)?;
        Ok(with_errors(
            doc! {"n": count(outcome.deleted)},
            &outcome.errors,
        ))
    }
}

/// `findAndModify`.
#[derive(Debug, Clone)]
pub struct FindAndModify {
    pub coll: String,
    pub request: FindAndModifyRequest,
}

impl FindAndModify {
    /// Read the request and check its option combinations as mongod does.
    pub fn parse(cmd: &CommandDoc, name: &str) -> Result<Self> {
        let coll = args::collection(cmd, name)?;
        args::reject_unknown(
            cmd,
            name,
            &[
                "query",
                "fields",
                "sort",
                "hint",
                "collation",
                "arrayFilters",
                "remove",
                "update",
                "new",
                "upsert",
                "bypassDocumentValidation",
                "let",
                "runtimeConstants",
                "encryptionInformation",
                "sampleId",
                "$_allowShardKeyUpdatesWithoutFullShardKeyInQuery",
            ],
        )?;
        let update = match cmd.body.get("update") {
            None | Some(Bson::Null) => None,
            Some(u @ (Bson::Document(_) | Bson::Array(_))) => Some(u.clone()),
            Some(other) => {
                return Err(args::wrong_type(
                    "findAndModify.update",
                    other,
                    "'[object, array]'",
                ));
            }
        };
        let c = "findAndModify";
        let request = FindAndModifyRequest {
            query: args::doc(cmd, c, "query")?.unwrap_or_default(),
            sort: args::doc(cmd, c, "sort")?,
            remove: args::bool(cmd, c, "remove")?.unwrap_or(false),
            update,
            new: args::bool(cmd, c, "new")?.unwrap_or(false),
            fields: args::doc(cmd, c, "fields")?,
            upsert: args::bool(cmd, c, "upsert")?.unwrap_or(false),
            array_filters: args::docs(cmd, c, "arrayFilters")?.unwrap_or_default(),
            collation: args::doc(cmd, c, "collation")?,
            hint: args::hint(&cmd.body, c)?,
            let_vars: args::doc(cmd, c, "let")?,
        };
        let fail = |m: &str| Err(EngineError::failed_to_parse(m));
        match (request.remove, request.update.is_some()) {
            (true, true) => return fail("Cannot specify both an update and remove=true"),
            (false, false) => return fail("Either an update or remove=true must be specified"),
            (true, false) if request.new => {
                return fail(
                    "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document",
                );
            }
            (true, false) if request.upsert => {
                return fail("Cannot specify both upsert=true and remove=true");
            }
            _ => {}
        }
        Ok(Self { coll, request })
    }

    /// `{lastErrorObject: {n, updatedExisting?, upserted?}, value}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let outcome = ctx
            .engine
            .find_and_modify(ctx.db, &self.coll, &self.request)?;
        let mut last_error = doc! {"n": count(outcome.matched)};
        if !self.request.remove {
            last_error.insert("updatedExisting", outcome.updated_existing);
            if let Some(id) = outcome.upserted {
                last_error.insert("upserted", id);
            }
        }
        Ok(doc! {
            "lastErrorObject": last_error,
            "value": outcome.value.map_or(Bson::Null, Bson::Document),
        })
    }
}
