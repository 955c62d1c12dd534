//! The embedded engine: an in-memory, MongoDB-compatible database.
//!
//! It knows nothing of sockets, lessons or terminals; the wire layer
//! (`schemalab-wire`) speaks the MongoDB protocol and calls the methods of
//! [`Engine`]. Its modules follow the path of a request:
//!
//! - `value` and `collation`: how BSON values order and compare;
//! - `filter`, `projection`, `sort`, `update`, `expr`, `pipeline`: the query,
//!   update and aggregation languages, parsed into typed trees and applied to
//!   one document (or a stream of them) at a time;
//! - `keystring` and `index`: ordered index structures whose keys are
//!   byte strings in BSON order, maintained on every write;
//! - `catalog`: databases, collections and their records;
//! - `error`: mongod's error codes.
//!
//! The engine is `Clone` and thread-safe: clones share one live catalog
//! (`catalog::Store`) locked per collection. A writer holds only its own
//! collection's lock, and only while it applies changes: a multi-document
//! update or delete selects and computes on a snapshot of the collection
//! and applies its changes in chunks of [`WRITE_CHUNK`] documents, letting
//! go between them, as mongod yields; an insert takes the lock per
//! [`INSERT_CHUNK`] documents. Readers take a snapshot of the names (a
//! moment under the names lock) and of each collection they touch (a
//! moment under its lock), then read without any lock, so a long read
//! holds up nobody, and nobody but a writer of the same collection (for
//! one chunk) holds up a reader. `hello`, `ping` and other catalog-free
//! commands take no lock at all.

#![forbid(unsafe_code)]

pub mod cache;
pub(crate) mod catalog;
pub mod codec;
pub mod collation;
pub mod error;
pub mod exec;
pub mod explain;
pub mod expr;
pub mod filter;
pub mod index;
pub(crate) mod keystring;
pub mod limits;
pub mod metrics;
pub mod pipeline;
pub(crate) mod planner;
pub(crate) mod projection;
pub mod release;
pub mod size_model;
pub mod sort;
pub mod update;
pub mod value;

mod ops;

use std::sync::Arc;

use bson::{Bson, Document, RawDocumentBuf};

pub use catalog::validation::{bypassing as bypassing_validation, global_log};
pub use catalog::{Catalog, SpillReport, Store};
pub use error::{EngineError, ErrorCode, Result};

/// Documents an `insert` writes per acquisition of its collection's lock.
pub const INSERT_CHUNK: usize = 256;

/// Documents a multi-document update or delete changes per acquisition of
/// its collection's lock (between them, it yields). A chunk that found its
/// collection shared with a reader had to copy it first, so the next chunk
/// is twice as big: a long write next to busy readers copies the
/// collection a logarithmic number of times, not once per chunk.
pub const WRITE_CHUNK: usize = 256;

/// mongod's largest document: 16 MiB.
pub const MAX_BSON_OBJECT_SIZE: usize = 16 * 1024 * 1024;

/// A source of the current time, so that TTL expiry and `$currentDate` can be
/// tested without waiting.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> bson::DateTime;
}

/// The wall clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> bson::DateTime {
        bson::DateTime::now()
    }
}

/// The in-memory engine. Cheap to clone; clones share state.
#[derive(Debug, Clone)]
pub struct Engine {
    /// The live catalog, locked per collection.
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    /// Per database, the profiler's level and `slowms` (absent: level 0).
    profiling: Arc<parking_lot::Mutex<std::collections::HashMap<String, (i32, i64)>>>,
    /// This server's `setParameter` values (each engine is a server).
    params: Arc<limits::Params>,
}

/// mongod's default `slowms`.
pub const DEFAULT_SLOW_MS: i64 = 100;

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

/// A `find` request, as the `find` command carries it.
#[derive(Debug, Clone, Default)]
pub struct FindRequest {
    pub filter: Document,
    pub sort: Option<Document>,
    pub projection: Option<Document>,
    pub skip: u64,
    /// `None` or `0`: no limit.
    pub limit: Option<u64>,
    pub collation: Option<Document>,
    /// An index name or key pattern.
    pub hint: Option<Bson>,
    /// `let` variables.
    pub let_vars: Option<Document>,
    /// `min`: the inclusive lower index key bound over the hinted index
    /// (mongosh's `cursor.min()`).
    pub min: Option<Document>,
    /// `max`: the exclusive upper index key bound (`cursor.max()`).
    pub max: Option<Document>,
}

/// One statement of an `update` command.
#[derive(Debug, Clone)]
pub struct UpdateStatement {
    pub filter: Document,
    /// A replacement or operator document, or a pipeline (array).
    pub update: Bson,
    pub upsert: bool,
    pub multi: bool,
    pub array_filters: Vec<Document>,
    pub collation: Option<Document>,
    pub hint: Option<Bson>,
    /// `sort` for updateOne/replaceOne. MongoDB 8.0 added it; the wire
    /// layer answers as 7.0 and refuses it, but the engine can apply it.
    pub sort: Option<Document>,
    /// The command's `let` variables.
    pub let_vars: Option<Document>,
}

/// One statement of a `delete` command.
#[derive(Debug, Clone)]
pub struct DeleteStatement {
    pub filter: Document,
    /// 0 deletes every match, 1 deletes the first.
    pub limit: u32,
    pub collation: Option<Document>,
    pub hint: Option<Bson>,
    /// The command's `let` variables.
    pub let_vars: Option<Document>,
}

/// A write that failed, and the position of its statement in the batch.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteError {
    pub index: usize,
    pub error: EngineError,
}

/// What an `insert` did.
#[derive(Debug, Clone, Default)]
pub struct InsertOutcome {
    pub inserted: u64,
    pub errors: Vec<WriteError>,
}

/// What an `update` did.
#[derive(Debug, Clone, Default)]
pub struct UpdateOutcome {
    /// Documents matched (plus upserts), mongod's `n`.
    pub matched: u64,
    pub modified: u64,
    /// (statement index, `_id`) of each upserted document.
    pub upserted: Vec<(usize, Bson)>,
    pub errors: Vec<WriteError>,
}

/// What a `delete` did.
#[derive(Debug, Clone, Default)]
pub struct DeleteOutcome {
    pub deleted: u64,
    pub errors: Vec<WriteError>,
}

/// A `findAndModify` request.
#[derive(Debug, Clone, Default)]
pub struct FindAndModifyRequest {
    pub query: Document,
    pub sort: Option<Document>,
    pub remove: bool,
    pub update: Option<Bson>,
    /// Return the document after the update rather than before.
    pub new: bool,
    pub fields: Option<Document>,
    pub upsert: bool,
    pub array_filters: Vec<Document>,
    pub collation: Option<Document>,
    pub hint: Option<Bson>,
    pub let_vars: Option<Document>,
}

/// What a `findAndModify` did (`value` and `lastErrorObject`).
#[derive(Debug, Clone, Default)]
pub struct FindAndModifyOutcome {
    pub value: Option<Document>,
    pub matched: u64,
    pub updated_existing: bool,
    pub upserted: Option<Bson>,
}

/// Options of an `aggregate` command.
#[derive(Debug, Clone, Default)]
pub struct AggregateOptions {
    pub collation: Option<Document>,
    pub let_vars: Option<Document>,
    pub hint: Option<Bson>,
}

/// A `count` request.
#[derive(Debug, Clone, Default)]
pub struct CountRequest {
    pub filter: Document,
    pub skip: u64,
    pub limit: Option<u64>,
    pub collation: Option<Document>,
    pub hint: Option<Bson>,
}

/// A command `explain` can explain, as the wire layer parsed it: the same
/// typed request the command itself runs with.
#[derive(Debug, Clone)]
pub enum Explainable {
    Find {
        coll: String,
        request: FindRequest,
    },
    /// `coll` is `None` for a database-level pipeline (`aggregate: 1`).
    Aggregate {
        coll: Option<String>,
        pipeline: Vec<Document>,
        options: AggregateOptions,
    },
    Count {
        coll: String,
        request: CountRequest,
    },
    Distinct {
        coll: String,
        key: String,
        filter: Document,
        collation: Option<Document>,
    },
    /// An `update`'s first statement.
    Update {
        coll: String,
        statement: UpdateStatement,
    },
    /// A `delete`'s first statement.
    Delete {
        coll: String,
        statement: DeleteStatement,
    },
    FindAndModify {
        coll: String,
        request: FindAndModifyRequest,
    },
}

/// What `createIndexes` did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreateIndexesOutcome {
    pub indexes_before: usize,
    pub indexes_after: usize,
    pub created_collection: bool,
    /// Set when every requested index already existed.
    pub note: Option<String>,
}

impl Engine {
    /// An empty engine on the wall clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty engine on the given clock.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self {
            store: Arc::default(),
            clock,
            profiling: Arc::default(),
            params: Arc::default(),
        }
    }

    /// This server's parameters: what `setParameter` changes, and what
    /// every operation run with them in its [`limits::Operation`] obeys.
    pub fn params(&self) -> &Arc<limits::Params> {
        &self.params
    }

    /// The `profile` command: set the database profiler's level (0, 1, 2;
    /// `None` or -1 only reads it) and `slowms`; returns the previous
    /// level and `slowms`.
    pub fn set_profiling(&self, db: &str, level: Option<i32>, slow_ms: Option<i64>) -> (i32, i64) {
        let mut p = self.profiling.lock();
        let was = p.get(db).copied().unwrap_or((0, DEFAULT_SLOW_MS));
        let level = level.filter(|l| *l >= 0).unwrap_or(was.0);
        p.insert(db.to_string(), (level, slow_ms.unwrap_or(was.1)));
        was
    }

    /// Whether a writer holds collection `db.coll` (or the catalog's
    /// names) right now, so that a read taking its snapshot would wait for
    /// it (the wire server then runs even a point lookup off its async
    /// workers).
    pub fn is_writing(&self, db: &str, coll: &str) -> bool {
        self.store.is_writing(db, coll)
    }

    /// The profiler's level and `slowms` for a database.
    pub fn profiling(&self, db: &str) -> (i32, i64) {
        self.profiling
            .lock()
            .get(db)
            .copied()
            .unwrap_or((0, DEFAULT_SLOW_MS))
    }

    /// Append an entry to `<db>.system.profile`.
    pub fn record_profile(&self, db: &str, entry: Document) -> Result<()> {
        let raw = RawDocumentBuf::from_document(&entry)
            .map_err(|e| EngineError::bad_value(e.to_string()))?;
        ops::insert(&self.store, db, "system.profile", vec![raw], true).map(|_| ())
    }

    /// The engine's current time.
    pub fn now(&self) -> bson::DateTime {
        self.clock.now()
    }

    /// Insert documents. Each is a raw BSON document; one without `_id` gets
    /// an ObjectId. With `ordered`, the first failure stops the batch.
    ///
    /// The collection's lock is taken per [`INSERT_CHUNK`] documents, as
    /// mongod yields between the batches of a large insert, so that a big
    /// `insertMany` does not hold up that collection's readers until it
    /// ends.
    pub fn insert(
        &self,
        db: &str,
        coll: &str,
        docs: Vec<RawDocumentBuf>,
        ordered: bool,
    ) -> Result<InsertOutcome> {
        let mut outcome = InsertOutcome::default();
        let mut docs = docs.into_iter();
        let mut offset = 0;
        loop {
            let chunk: Vec<RawDocumentBuf> = docs.by_ref().take(INSERT_CHUNK).collect();
            let n = chunk.len();
            let part = ops::insert(&self.store, db, coll, chunk, ordered)?;
            outcome.inserted += part.inserted;
            let stop = ordered && !part.errors.is_empty();
            outcome.errors.extend(part.errors.into_iter().map(|mut e| {
                e.index += offset;
                e
            }));
            offset += n;
            if stop || n < INSERT_CHUNK {
                return Ok(outcome);
            }
        }
    }

    /// Run a query and return every matching document, projected and sorted.
    pub fn find(&self, db: &str, coll: &str, req: &FindRequest) -> Result<Vec<Document>> {
        let cat = self.store.snapshot_one(db, coll);
        ops::find(&cat, db, coll, req, self.now())
    }

    /// Plan a query and return it as a stream that runs one batch at a
    /// time over the snapshot taken now (what a `find` cursor holds).
    pub fn find_stream(&self, db: &str, coll: &str, req: &FindRequest) -> Result<exec::FindStream> {
        let cat = self.snapshot();
        ops::find_open(&cat, db, coll, req, self.now())
    }

    /// Plan an aggregation over `coll` as a stream that runs one batch at
    /// a time over the snapshot taken now, when every stage after its
    /// `$cursor` streams; `None` when it must run whole ([`Self::aggregate`]).
    pub fn aggregate_stream(
        &self,
        db: &str,
        coll: &str,
        pipeline: &[Document],
        opts: &AggregateOptions,
    ) -> Result<Option<exec::AggStream>> {
        let cat = self.snapshot();
        ops::aggregate_open(&cat, db, coll, pipeline, opts, self.now())
    }

    /// Apply update statements.
    pub fn update(
        &self,
        db: &str,
        coll: &str,
        statements: &[UpdateStatement],
        ordered: bool,
    ) -> Result<UpdateOutcome> {
        ops::update(&self.store, db, coll, statements, ordered, self.now())
    }

    /// Apply delete statements.
    pub fn delete(
        &self,
        db: &str,
        coll: &str,
        statements: &[DeleteStatement],
        ordered: bool,
    ) -> Result<DeleteOutcome> {
        ops::delete(&self.store, db, coll, statements, ordered, self.now())
    }

    /// Find one document and update or remove it.
    pub fn find_and_modify(
        &self,
        db: &str,
        coll: &str,
        req: &FindAndModifyRequest,
    ) -> Result<FindAndModifyOutcome> {
        ops::find_and_modify(&self.store, db, coll, req, self.now())
    }

    /// Run an aggregation. `coll` is `None` for a database-level pipeline
    /// (`aggregate: 1`). A trailing `$out`/`$merge` writes its results and the
    /// returned batch is empty.
    pub fn aggregate(
        &self,
        db: &str,
        coll: Option<&str>,
        pipeline: &[Document],
        opts: &AggregateOptions,
    ) -> Result<Vec<Document>> {
        let now = self.now();
        if let Some(coll) = coll
            && let Some(copied) = ops::copy_out(&self.store, db, coll, pipeline)
        {
            return copied.map(|()| Vec::new());
        }
        if ops::pipeline_writes(pipeline) {
            // Read on a snapshot; hold the target's lock only to write.
            let docs = ops::aggregate_write_input(
                &self.store,
                &self.store.snapshot_db(db),
                db,
                coll,
                pipeline,
                opts,
                now,
            )?;
            ops::aggregate_write_output(&self.store, db, pipeline, docs, now)
        } else {
            let cat = self.store.snapshot_db(db);
            ops::aggregate(&cat, db, coll, pipeline, opts, now)
        }
    }

    /// The `count` command.
    pub fn count(&self, db: &str, coll: &str, req: &CountRequest) -> Result<u64> {
        let cat = self.store.snapshot_one(db, coll);
        ops::count(&cat, db, coll, req, self.now())
    }

    /// The `distinct` command.
    pub fn distinct(
        &self,
        db: &str,
        coll: &str,
        key: &str,
        filter: &Document,
        collation: Option<&Document>,
    ) -> Result<Vec<Bson>> {
        let cat = self.store.snapshot_one(db, coll);
        ops::distinct(&cat, db, coll, key, filter, collation, self.now())
    }

    /// Create indexes from `createIndexes` specs (`{key, name, unique, …}`).
    pub fn create_indexes(
        &self,
        db: &str,
        coll: &str,
        specs: &[Document],
    ) -> Result<CreateIndexesOutcome> {
        let outcome = self.store.create_indexes(db, coll, specs);
        // A build gathers and sorts every key first: give that back before
        // the next build (a setup makes several in a row) adds its own.
        release::give_back();
        outcome
    }

    /// The index specs of a collection, as `listIndexes` returns them.
    pub fn list_indexes(&self, db: &str, coll: &str) -> Result<Vec<Document>> {
        let cat = self.store.snapshot_one(db, coll);
        cat.list_indexes(db, coll)
    }

    /// Drop indexes: `"*"` (all but `_id_`), a name, a key pattern, or an
    /// array of names. Returns the number of indexes before the drop.
    pub fn drop_indexes(&self, db: &str, coll: &str, which: &Bson) -> Result<usize> {
        self.store.drop_indexes(db, coll, which)
    }

    /// Create a collection explicitly (with `validator` and other options).
    pub fn create_collection(&self, db: &str, coll: &str, options: &Document) -> Result<()> {
        self.store.create_collection(db, coll, options)
    }

    /// `collMod`: `cmd` is the command without its generic arguments;
    /// the reply's fields besides `ok`.
    pub fn coll_mod(&self, db: &str, coll: &str, cmd: &Document) -> Result<Document> {
        self.store.coll_mod(db, coll, cmd)
    }

    /// Drop a collection; dropping one that does not exist succeeds, as in
    /// MongoDB 7.0. Returns whether it existed.
    pub fn drop_collection(&self, db: &str, coll: &str) -> Result<bool> {
        let existed = self.store.drop_collection(db, coll);
        if existed {
            release::give_back();
        }
        Ok(existed)
    }

    /// Drop a database; returns whether it existed.
    pub fn drop_database(&self, db: &str) -> bool {
        let existed = self.store.drop_database(db);
        if existed {
            release::give_back();
        }
        existed
    }

    /// `listCollections` entries (`{name, type, options, info, idIndex}`).
    pub fn list_collections(&self, db: &str, filter: &Document) -> Result<Vec<Document>> {
        let cat = self.store.snapshot_db(db);
        cat.list_collections(db, filter)
    }

    /// `listDatabases` entries (`{name, sizeOnDisk, empty}`).
    pub fn list_databases(&self) -> Vec<Document> {
        let cat = self.snapshot();
        cat.list_databases()
    }

    /// `renameCollection` between full namespaces (`db.coll`).
    pub fn rename_collection(&self, from: &str, to: &str, drop_target: bool) -> Result<()> {
        self.store.rename_collection(from, to, drop_target)
    }

    /// `explain` of a parsed command at a verbosity: the command is
    /// planned (and, past `queryPlanner`, run) by the very function that
    /// runs it, and the stage tree that ran is reported. `command` is the
    /// inner command as sent, which the reply echoes. Returns the whole
    /// reply without `ok`; nothing is written.
    pub fn explain(
        &self,
        db: &str,
        command: &Explainable,
        sent: &Document,
        verbosity: explain::Verbosity,
    ) -> Result<Document> {
        let cat = self.store.snapshot_db(db);
        explain::explain(&cat, db, command, sent, verbosity, self.now())
    }

    /// `collStats`-shaped statistics for a collection.
    pub fn coll_stats(&self, db: &str, coll: &str, scale: i64) -> Result<Document> {
        let cat = self.store.snapshot_one(db, coll);
        cat.coll_stats(db, coll, scale)
    }

    /// The `validate` command's report for a collection, measured by
    /// regenerating every index's keys from the documents.
    pub fn validate(&self, db: &str, coll: &str) -> Result<Document> {
        self.store.snapshot_one(db, coll).validate(db, coll)
    }

    /// `(size, numObjects)` of a collection for the `dataSize` command:
    /// the exact sum of its documents' BSON sizes and their count.
    pub fn data_size(&self, db: &str, coll: &str) -> (u64, usize) {
        self.store.snapshot_one(db, coll).data_size_of(db, coll)
    }

    /// `dbStats`-shaped statistics for a database.
    pub fn db_stats(&self, db: &str, scale: i64) -> Result<Document> {
        let cat = self.store.snapshot_db(db);
        cat.db_stats(db, scale)
    }

    /// Delete documents whose TTL index says they expired before `now`, as
    /// mongod's TTL monitor does every 60 seconds. Returns how many went.
    pub fn expire_ttl(&self, now: bson::DateTime) -> u64 {
        // Scan a snapshot, so that neither readers nor writers wait for the
        // scan; only the deletions take each collection's lock.
        let expired = self.snapshot().ttl_expired(now);
        if expired.is_empty() {
            return 0;
        }
        self.store.remove_expired(expired, now)
    }

    /// Keep the records held in memory within `budget` bytes by spilling
    /// the chunks of collections unused for `cold_after` to a temporary
    /// file (see `catalog::spill`); the server runs this every second.
    pub fn spill_cold(
        &self,
        budget: u64,
        cold_after: std::time::Duration,
    ) -> std::io::Result<SpillReport> {
        self.store.spill_cold(budget, cold_after)
    }

    /// The catalog as it is now, for a reader to run on without holding any
    /// lock (collections are shared, not copied; see `catalog`).
    fn snapshot(&self) -> Catalog {
        self.store.snapshot()
    }
}
