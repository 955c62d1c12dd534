//! Index commands: `createIndexes`, `listIndexes`, `dropIndexes`.

use bson::{Bson, Document, RawDocumentBuf, doc};

use super::args;
use super::{CommandDoc, Context};
use schemalab_engine::Result;

/// `createIndexes`.
#[derive(Debug, Clone)]
pub struct CreateIndexes {
    coll: String,
    specs: Vec<Document>,
}

impl CreateIndexes {
    /// Read the index specs; the engine validates each.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            coll: args::collection(cmd, "createIndexes")?,
            specs: args::docs(cmd, "createIndexes", "indexes")?
                .ok_or_else(|| args::missing("createIndexes.indexes"))?,
        })
    }

    /// `{numIndexesBefore, numIndexesAfter, createdCollectionAutomatically, note?}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let outcome = ctx.engine.create_indexes(ctx.db, &self.coll, &self.specs)?;
        let n = |v: usize| i32::try_from(v).unwrap_or(i32::MAX);
        let mut reply = doc! {
            "numIndexesBefore": n(outcome.indexes_before),
            "numIndexesAfter": n(outcome.indexes_after),
            "createdCollectionAutomatically": outcome.created_collection,
        };
        if let Some(note) = outcome.note {
            reply.insert("note", note);
        }
        Ok(reply)
    }
}

/// `listIndexes`.
#[derive(Debug, Clone)]
pub struct ListIndexes {
    coll: String,
    batch_size: Option<usize>,
}

impl ListIndexes {
    /// Read the collection and `cursor.batchSize`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            coll: args::collection(cmd, "listIndexes")?,
            batch_size: args::cursor_batch_size(cmd, "listIndexes")?,
        })
    }

    /// A cursor over the index specs.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<RawDocumentBuf> {
        let specs = ctx.engine.list_indexes(ctx.db, &self.coll)?;
        ctx.cursors.open(
            ctx.lsid,
            format!("{}.{}", ctx.db, self.coll),
            specs,
            self.batch_size,
            false,
        )
    }
}

/// `dropIndexes`.
#[derive(Debug, Clone)]
pub struct DropIndexes {
    coll: String,
    which: Bson,
}

impl DropIndexes {
    /// Read `index`: `"*"`, a name, a key pattern or an array of names.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let which = match cmd.body.get("index") {
            Some(w @ (Bson::String(_) | Bson::Document(_) | Bson::Array(_))) => w.clone(),
            Some(other) => {
                return Err(args::wrong_type(
                    "dropIndexes.index",
                    other,
                    "'[string, object, array]'",
                ));
            }
            None => return Err(args::missing("dropIndexes.index")),
        };
        Ok(Self {
            coll: args::collection(cmd, "dropIndexes")?,
            which,
        })
    }

    /// `{nIndexesWas}`, plus mongod's `msg` when every index but `_id_`
    /// went.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let was = ctx.engine.drop_indexes(ctx.db, &self.coll, &self.which)?;
        let mut reply = doc! {"nIndexesWas": i32::try_from(was).unwrap_or(i32::MAX)};
        if matches!(&self.which, bson::Bson::String(s) if s == "*") {
            reply.insert("msg", "non-_id indexes dropped for collection");
        }
        Ok(reply)
    }
}
