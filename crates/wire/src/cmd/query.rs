//! Read commands: `find`, `getMore`, `killCursors`, `aggregate`, `count`,
//! `distinct`.
//!
//! `find` opens a cursor on the query's plan, not on its results: the
//! cursor table ([`crate::cursor`]) runs the plan a batch at a time.
//! `aggregate` does the same when every stage streams, and otherwise runs
//! its pipeline to completion and hands the results out in batches.

use bson::{Bson, Document, RawDocumentBuf, doc};

use super::args;
use super::{CommandDoc, Context};
use schemalab_engine::{AggregateOptions, CountRequest, EngineError, FindRequest, Result};

fn to_usize(v: i64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// `find`.
#[derive(Debug, Clone)]
pub struct Find {
    pub coll: String,
    pub request: FindRequest,
    pub batch_size: Option<usize>,
    pub single_batch: bool,
}

impl Find {
    /// Read every `find` option the engine honours; `maxTimeMS`,
    /// `comment` and cursor flags are accepted and ignored.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let c = "find";
        let coll = args::collection(cmd, c)?;
        let mut single_batch = args::bool(cmd, c, "singleBatch")?.unwrap_or(false);
        // A negative limit is the legacy "one batch of |limit|" request.
        let limit = match args::int(cmd, c, "limit")? {
            Some(l) if l < 0 => {
                single_batch = true;
                Some(l.unsigned_abs())
            }
            Some(0) | None => None,
            Some(l) => Some(l.unsigned_abs()),
        };
        let request = FindRequest {
            filter: args::doc(cmd, c, "filter")?.unwrap_or_default(),
            sort: args::doc(cmd, c, "sort")?,
            projection: args::doc(cmd, c, "projection")?,
            skip: args::non_negative(cmd, c, "skip")?
                .unwrap_or(0)
                .unsigned_abs(),
            limit,
            collation: args::doc(cmd, c, "collation")?,
            hint: args::hint(&cmd.body, c)?,
            let_vars: args::doc(cmd, c, "let")?,
            min: args::doc(cmd, c, "min")?,
            max: args::doc(cmd, c, "max")?,
        };
        Ok(Self {
            coll,
            request,
            batch_size: args::non_negative(cmd, c, "batchSize")?.map(to_usize),
            single_batch,
        })
    }

    /// Plan the query and open a cursor on it: the first batch runs the
    /// plan until it is full, `getMore` continues it.
    pub fn apply(self, ctx: &Context<'_>) -> Result<RawDocumentBuf> {
        let stream = ctx.engine.find_stream(ctx.db, &self.coll, &self.request)?;
        let batch = match (self.batch_size, self.request.limit) {
            // With a limit under the default batch, one batch holds it all.
            (None, Some(l)) if self.single_batch => Some(usize::try_from(l).unwrap_or(usize::MAX)),
            (b, _) => b,
        };
        ctx.cursors.open_source(
            ctx.lsid,
            format!("{}.{}", ctx.db, self.coll),
            Box::new(stream),
            batch,
            self.single_batch,
        )
    }
}

/// `getMore`.
#[derive(Debug, Clone)]
pub struct GetMore {
    id: i64,
    collection: String,
    batch_size: Option<usize>,
}

impl GetMore {
    /// Read the cursor id, `collection` and `batchSize`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let id = match cmd.body.get("getMore") {
            Some(Bson::Int64(id)) => *id,
            Some(Bson::Int32(id)) => i64::from(*id),
            Some(other) => return Err(args::wrong_type("getMore.getMore", other, "'long'")),
            None => return Err(args::missing("getMore.getMore")),
        };
        let collection = args::string(cmd, "getMore", "collection")?
            .ok_or_else(|| args::missing("getMore.collection"))?;
        let batch_size = match args::int(cmd, "getMore", "batchSize")? {
            Some(b) if b < 0 => {
                return Err(EngineError::bad_value(format!(
                    "BSON field 'batchSize' value must be >= 0, actual value '{b}'"
                )));
            }
            // 0 means "no limit but the byte limit", as an absent batchSize.
            Some(0) | None => None,
            Some(b) => Some(to_usize(b)),
        };
        Ok(Self {
            id,
            collection,
            batch_size,
        })
    }

    /// The next batch.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<RawDocumentBuf> {
        let ns = format!("{}.{}", ctx.db, self.collection);
        ctx.cursors
            .get_more(self.id, &ns, self.batch_size, ctx.lsid)
    }
}

/// `killCursors`.
#[derive(Debug, Clone)]
pub struct KillCursors {
    ids: Vec<i64>,
}

impl KillCursors {
    /// Read the cursor ids.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        args::collection(cmd, "killCursors")?;
        let ids = match cmd.body.get("cursors") {
            Some(Bson::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Bson::Int64(id) => Ok(*id),
                    Bson::Int32(id) => Ok(i64::from(*id)),
                    other => Err(args::wrong_type("killCursors.cursors", other, "'long'")),
                })
                .collect::<Result<Vec<_>>>()?,
            Some(other) => return Err(args::wrong_type("killCursors.cursors", other, "'array'")),
            None => return Err(args::missing("killCursors.cursors")),
        };
        Ok(Self { ids })
    }

    /// `{cursorsKilled, cursorsNotFound, cursorsAlive, cursorsUnknown}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Document {
        let outcome = ctx.cursors.kill(&self.ids);
        doc! {
            "cursorsKilled": outcome.killed,
            "cursorsNotFound": outcome.not_found,
            "cursorsAlive": [],
            "cursorsUnknown": [],
        }
    }
}

/// `aggregate`.
#[derive(Debug, Clone)]
pub struct Aggregate {
    /// `None` for a database-level pipeline (`aggregate: 1`).
    pub coll: Option<String>,
    pub pipeline: Vec<Document>,
    pub options: AggregateOptions,
    pub batch_size: Option<usize>,
    /// With `explain: true`, the command to explain (without `explain`),
    /// answered at queryPlanner verbosity as mongod does.
    pub explain: Option<Document>,
}

impl Aggregate {
    /// Read the pipeline and options; `cursor` is required unless
    /// `explain` is set.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let c = "aggregate";
        let coll = match cmd.body.get(c) {
            Some(Bson::Int32(1)) | Some(Bson::Int64(1)) => None,
            Some(Bson::Double(f)) if *f == 1.0 => None,
            _ => Some(args::collection(cmd, c)?),
        };
        let pipeline =
            args::docs(cmd, c, "pipeline")?.ok_or_else(|| args::missing("aggregate.pipeline"))?;
        let explain = args::bool(cmd, c, "explain")?.unwrap_or(false);
        if !explain && !cmd.body.contains_key("cursor") {
            return Err(EngineError::failed_to_parse(
                "The 'cursor' option is required, except for aggregate with the explain argument",
            ));
        }
        Ok(Self {
            coll,
            pipeline,
            options: AggregateOptions {
                collation: args::doc(cmd, c, "collation")?,
                let_vars: args::doc(cmd, c, "let")?,
                hint: args::hint(&cmd.body, c)?,
            },
            batch_size: args::cursor_batch_size(cmd, c)?,
            explain: explain.then(|| {
                let mut inner = cmd.body.clone();
                inner.remove("explain");
                inner
            }),
        })
    }

    /// Run the pipeline and open a cursor on its results.
    pub fn apply(self, ctx: &Context<'_>) -> Result<RawDocumentBuf> {
        if let Some(inner) = &self.explain {
            // Explained as parsed, at queryPlanner verbosity, as mongod does.
            let command = schemalab_engine::Explainable::Aggregate {
                coll: self.coll.clone(),
                pipeline: self.pipeline.clone(),
                options: self.options.clone(),
            };
            let reply = ctx.engine.explain(
                ctx.db,
                &command,
                inner,
                schemalab_engine::explain::Verbosity::QueryPlanner,
            )?;
            return super::raw(super::explain::with_server_address(reply, ctx));
        }
        let ns = match &self.coll {
            Some(coll) => format!("{}.{coll}", ctx.db),
            None => format!("{}.$cmd.aggregate", ctx.db),
        };
        // A pipeline whose stages all stream opens a cursor on its plan;
        // one with a blocking stage runs whole.
        if let Some(coll) = &self.coll
            && let Some(stream) =
                ctx.engine
                    .aggregate_stream(ctx.db, coll, &self.pipeline, &self.options)?
        {
            return ctx
                .cursors
                .open_source(ctx.lsid, ns, Box::new(stream), self.batch_size, false);
        }
        let docs =
            ctx.engine
                .aggregate(ctx.db, self.coll.as_deref(), &self.pipeline, &self.options)?;
        ctx.cursors.open(ctx.lsid, ns, docs, self.batch_size, false)
    }
}

/// `count`.
#[derive(Debug, Clone)]
pub struct Count {
    pub coll: String,
    pub request: CountRequest,
}

impl Count {
    /// Read `query`, `skip`, `limit`, `hint`, `collation`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let c = "count";
        let limit = match args::int(cmd, c, "limit")? {
            Some(0) | None => None,
            // A negative limit counts like its absolute value, as in mongod.
            Some(l) => Some(l.unsigned_abs()),
        };
        Ok(Self {
            coll: args::collection(cmd, c)?,
            request: CountRequest {
                filter: args::doc(cmd, c, "query")?.unwrap_or_default(),
                skip: args::non_negative(cmd, c, "skip")?
                    .unwrap_or(0)
                    .unsigned_abs(),
                limit,
                collation: args::doc(cmd, c, "collation")?,
                hint: args::hint(&cmd.body, c)?,
            },
        })
    }

    /// `{n}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let n = ctx.engine.count(ctx.db, &self.coll, &self.request)?;
        Ok(match i32::try_from(n) {
            Ok(n) => doc! {"n": n},
            Err(_) => doc! {"n": i64::try_from(n).unwrap_or(i64::MAX)},
        })
    }
}

/// `distinct`.
#[derive(Debug, Clone)]
pub struct Distinct {
    pub coll: String,
    pub key: String,
    pub filter: Document,
    pub collation: Option<Document>,
}

impl Distinct {
    /// Read `key`, `query`, `collation`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let c = "distinct";
        Ok(Self {
            coll: args::collection(cmd, c)?,
            key: args::string(cmd, c, "key")?.ok_or_else(|| args::missing("distinct.key"))?,
            filter: args::doc(cmd, c, "query")?.unwrap_or_default(),
            collation: args::doc(cmd, c, "collation")?,
        })
    }

    /// `{values}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let values = ctx.engine.distinct(
            ctx.db,
            &self.coll,
            &self.key,
            &self.filter,
            self.collation.as_ref(),
        )?;
        Ok(doc! {"values": values})
    }
}
