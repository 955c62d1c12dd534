//! One measurement path for lessons and exercises. A statement runs in a
//! [`Session`] that shows every command it sends to a recorder
//! ([`record`]); what it sent is what gets measured, whatever the
//! statement's shape:
//!
//! - a **read** is run once (its value is the answer), then every read
//!   command it sent (find, aggregate, count, distinct) is re-sent as
//!   `explain` with `executionStats` and the figures add up
//!   ([`figures::parse_explain`]); its time is the median of several timed
//!   runs, with their spread ([`timing`]);
//! - a **write** runs once with the profiler on: the servers' replies give
//!   the counts, `system.profile` the index keys ([`profile`]), and a write
//!   whose reply has no counts (findAndModify, `$merge`, `$out`) is
//!   measured by what it changed ([`snapshot`]). A write a workload runs
//!   many times (an exercise's `repeat = 300`) is one series
//!   ([`Meter::write_series`]): the profiler stays on and the cache is
//!   emptied once for all its runs.
//!
//! Both also carry the **bytes read into the cache** ([`CacheRead`]): on
//! the embedded engine the modelled cache is emptied first
//! (`schemalabEvictCache`) and the measured run's `serverStatus`
//! `wiredTiger.cache` delta is the operation's cold figure ([`cache`]); on
//! a server that cannot be emptied it is the profiler's
//! `storage.data.bytesRead` of the run, as that server's cache stood.
//!
//! The lesson runner and the exercise checker both call [`Meter`], and
//! share its report types ([`OpResult`], [`OpError`]).

pub mod cache;
pub mod figures;
mod profile;
pub mod record;
mod snapshot;
pub mod timing;

use std::time::Instant;

use bson::Bson;
use mongodb::Client;
use serde::{Deserialize, Serialize};

use crate::dialect::{DialectError, Program, Session};
use crate::locale::Message;
pub use cache::CacheRead;
use figures::{ReadMetrics, WriteMetrics, parse_explain};
use record::Recorder;
pub use timing::Timing;

/// Read (explained) or write (executed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Read,
    Write,
}

/// One operation's outcome in one variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpResult {
    pub id: String,
    pub kind: OpKind,
    /// Untimed statements run first to bind names (`null` when none).
    #[serde(default)]
    pub prepare: Option<String>,
    pub statement: String,
    /// The median of [`OpResult::timing`]'s samples.
    pub millis: Option<f64>,
    /// Every timed sample, with the median and the spread.
    #[serde(default)]
    pub timing: Option<Timing>,
    pub read: Option<ReadMetrics>,
    pub write: Option<WriteMetrics>,
    /// Bytes the operation read into the cache (`null`: not reported).
    #[serde(default)]
    pub cache: Option<CacheRead>,
    pub error: Option<OpError>,
    /// The error is one the lesson declared as expected (`expect_error`).
    #[serde(default)]
    pub expected_error: bool,
}

impl OpResult {
    /// An operation not run yet.
    pub fn new(id: &str, kind: OpKind, statement: &str) -> OpResult {
        OpResult {
            id: id.to_string(),
            kind,
            prepare: None,
            statement: statement.to_string(),
            millis: None,
            timing: None,
            read: None,
            write: None,
            cache: None,
            error: None,
            expected_error: false,
        }
    }

    /// Keep what [`Meter::run`] measured, or its error.
    pub fn set(&mut self, measured: Result<Measured, OpError>) -> Option<Bson> {
        match measured {
            Ok(m) => {
                self.millis = m.timing.as_ref().map(|t| t.median);
                self.timing = m.timing;
                self.read = m.read;
                self.write = m.write;
                self.cache = m.cache;
                m.value
            }
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

/// A failed operation: the server's code and codeName when it gave them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpError {
    pub code: Option<i32>,
    pub code_name: String,
    /// The server's or the driver's errmsg as written, or the shell's
    /// error (in the reader's language, the place and class name kept),
    /// inside whatever schemalab says around it.
    pub message: Message,
    /// Where in the statement's source the shell placed it (line and
    /// column of the section's text), when it did; not serialised (the
    /// message says it in words).
    #[serde(skip)]
    pub pos: Option<crate::dialect::Pos>,
}

/// codeName of an error raised on the shell side (syntax, type, unknown
/// name, a statement that leaves its database …): never `""`, so a check
/// `error == ""` only holds when the statement succeeded.
pub const SHELL_ERROR: &str = "ShellError";
/// codeName of a driver-side failure (connection, timeout …).
pub const DRIVER_ERROR: &str = "DriverError";

impl OpError {
    /// An error schemalab raises itself.
    pub fn shell(message: Message) -> OpError {
        OpError {
            code: None,
            code_name: SHELL_ERROR.into(),
            message,
            pos: None,
        }
    }

    /// A statement's error; the shell's own point into `src`.
    pub fn from_dialect(e: &DialectError, src: &str) -> OpError {
        let mut op = OpError::from_dialect_unplaced(e, src);
        op.pos = e.position();
        op
    }

    fn from_dialect_unplaced(e: &DialectError, src: &str) -> OpError {
        match e {
            DialectError::Server {
                code,
                code_name,
                message,
                ..
            } => OpError {
                code: Some(*code),
                code_name: crate::dialect::code_name(*code, code_name),
                message: Message::verbatim(message),
                pos: None,
            },
            DialectError::BulkWrite { code, message, .. } => OpError {
                code: Some(*code),
                code_name: crate::dialect::code_name(*code, ""),
                message: Message::verbatim(message),
                pos: None,
            },
            DialectError::Driver { message, .. } => OpError {
                code: None,
                code_name: DRIVER_ERROR.into(),
                message: Message::verbatim(message),
                pos: None,
            },
            other => OpError::shell(other.with_source(src)),
        }
    }
}

/// What [`Meter::run`] measured.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub timing: Option<Timing>,
    pub read: Option<ReadMetrics>,
    pub write: Option<WriteMetrics>,
    /// Bytes read into the cache by the measured run.
    pub cache: Option<CacheRead>,
    /// A read's value (its last statement's, a cursor read in full).
    pub value: Option<Bson>,
}

/// Runs of a write series between two takes of the profiler: mongod's
/// `system.profile` is a capped collection (1 MiB by default), which a
/// long series would overrun, losing its first entries; two hundred
/// entries stay well inside it.
const PROFILE_CHUNK: u32 = 200;

/// Timed runs of a read after the first, untimed one, when the reader
/// asks for a spread ([`Meter::with_samples`]).
pub const SAMPLES: usize = 5;
/// At most this many when the first [`SAMPLES`] spread widely.
pub const MAX_SAMPLES: usize = 15;

/// Measures statements run in one database.
pub struct Meter<'a> {
    client: &'a Client,
    db: &'a str,
    /// Timed runs of each read; 0: the first run's time only.
    samples: usize,
    /// Profiler entries already taken (when `system.profile` could not be
    /// dropped).
    profile_seen: usize,
    /// Whether the server empties its cache on request (the embedded
    /// engine); `None` until the first operation asks.
    evicts: Option<bool>,
}

impl<'a> Meter<'a> {
    /// A meter for statements run in `db`, timing each read once.
    pub fn new(client: &'a Client, db: &'a str) -> Meter<'a> {
        Meter {
            client,
            db,
            samples: 0,
            profile_seen: 0,
            evicts: None,
        }
    }

    /// Time each read `n` times after its first run (more when they
    /// spread widely, up to [`MAX_SAMPLES`]).
    #[must_use]
    pub fn with_samples(mut self, n: usize) -> Self {
        self.samples = n;
        self
    }

    /// Whether the server empties its cache on request, asked once (by
    /// emptying it).
    async fn evicts(&mut self) -> bool {
        if let Some(e) = self.evicts {
            return e;
        }
        let e = cache::evict(self.client).await.is_ok();
        self.evicts = Some(e);
        e
    }

    /// Run `program` (whose text is `src`) in `session` and measure it.
    pub async fn run(
        &mut self,
        session: &mut Session,
        program: &Program,
        src: &str,
        kind: OpKind,
    ) -> Result<Measured, OpError> {
        match kind {
            OpKind::Read => self.read(session, program, src).await,
            OpKind::Write => self.write(session, program, src).await,
        }
    }

    async fn read(
        &mut self,
        session: &mut Session,
        program: &Program,
        src: &str,
    ) -> Result<Measured, OpError> {
        let evicts = self.evicts().await;
        // A server whose cache cannot be emptied: the profiler's bytes of
        // the first run, as its cache stood.
        let profiling = !evicts && profile::start(self.client, self.db).await.is_ok();
        let recorder = Recorder::new();
        session.observe(Box::new(recorder.clone()));
        let started = Instant::now();
        let (_, res) = session.eval_value(program).await;
        let first = started.elapsed().as_secs_f64() * 1000.0;
        session.stop_observing();
        let mut cache_read = None;
        if profiling {
            cache_read = profile::take(self.client, self.db, &mut self.profile_seen)
                .await
                .map(|e| cache::from_profile(&e, false));
        }
        let value = res.map_err(|e| OpError::from_dialect(&e, src))?;
        let reads = recorder.reads();
        if reads.is_empty() {
            return Err(OpError::shell(Message::new(
                "the statement sent no read (find, findOne, aggregate, countDocuments or distinct)",
            )));
        }
        let mut metrics: Option<ReadMetrics> = None;
        // The embedded engine: the explains run on an emptied cache, and
        // what they read in is the read's cold figure.
        let before = if evicts && cache::evict(self.client).await.is_ok() {
            cache::stats(self.client).await.ok()
        } else {
            None
        };
        for sent in &reads {
            let m = match self.explain(&sent.db, &sent.command).await {
                Ok(m) => m,
                Err(Explained::TooLarge) => {
                    // The explain reply would pass 16 MiB (a huge `$in`
                    // echoed three times), as on mongod: measure the
                    // statement through the profiler instead.
                    return self.read_through_profiler(session, program, src).await;
                }
                Err(Explained::Failed(e)) => return Err(e),
            };
            metrics = Some(figures::sum_reads(metrics, m));
        }
        let Some(mut m) = metrics else {
            return Err(OpError::shell(Message::new("the statement sent no read")));
        };
        if let Some(before) = before {
            cache_read = cache::stats(self.client)
                .await
                .ok()
                .map(|after| cache::delta(&before, &after));
        }
        m.bytes_returned = Some(bson_bytes(&value));
        let timing = self.time_read(session, program, src, first).await?;
        Ok(Measured {
            timing: Some(timing),
            read: Some(m),
            write: None,
            cache: cache_read,
            value: Some(value),
        })
    }

    /// Explain `command` as it was sent, with `executionStats`.
    async fn explain(&self, db: &str, command: &bson::Document) -> Result<ReadMetrics, Explained> {
        let mut inner = command.clone();
        if inner.keys().next().is_some_and(|k| k == "find") {
            // A batch size shapes the first reply, not the plan; the
            // explain runs the whole read.
            inner.remove("batchSize");
        }
        let reply = self
            .client
            .database(db)
            .run_command(bson::doc! {"explain": inner, "verbosity": "executionStats"})
            .await;
        let doc = match reply {
            Ok(d) => d,
            Err(e) => {
                let e = crate::dialect::driver_error(e);
                if let DialectError::Server { code: 10334, .. } = e {
                    return Err(Explained::TooLarge);
                }
                return Err(Explained::Failed(OpError::from_dialect(&e, "")));
            }
        };
        let (mut m, _) = parse_explain(&doc).map_err(|e| Explained::Failed(OpError::shell(e)))?;
        // Keep what was measured, so a plan view never re-explains (a
        // later write would change the plan it describes).
        m.explain = Some(doc);
        Ok(m)
    }

    /// The first run's time, or the median of further timed runs.
    async fn time_read(
        &self,
        session: &mut Session,
        program: &Program,
        src: &str,
        first: f64,
    ) -> Result<Timing, OpError> {
        if self.samples == 0 {
            return Ok(Timing::of(vec![first]));
        }
        let mut samples = Vec::with_capacity(self.samples);
        while samples.len() < MAX_SAMPLES {
            let started = Instant::now();
            let (_, res) = session.eval_value(program).await;
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
            res.map_err(|e| OpError::from_dialect(&e, src))?;
            if samples.len() >= self.samples && !Timing::of(samples.clone()).is_wide() {
                break;
            }
        }
        Ok(Timing::of(samples))
    }

    /// Measure a read whose explain the server cannot send: run it with
    /// the profiler on, and take its figures from the entries.
    async fn read_through_profiler(
        &mut self,
        session: &mut Session,
        program: &Program,
        src: &str,
    ) -> Result<Measured, OpError> {
        profile::start(self.client, self.db).await.map_err(|e| {
            OpError::shell(Message::new("profiling the read: {cause}").arg("cause", e))
        })?;
        let evicts = self.evicts().await && cache::evict(self.client).await.is_ok();
        let started = Instant::now();
        let (_, res) = session.eval_value(program).await;
        let millis = started.elapsed().as_secs_f64() * 1000.0;
        let entries = profile::take(self.client, self.db, &mut self.profile_seen).await;
        let value = res.map_err(|e| OpError::from_dialect(&e, src))?;
        let mut m = entries
            .as_deref()
            .and_then(figures::read_from_profile)
            .ok_or_else(|| {
                OpError::shell(Message::new(
                    "the profiler recorded no read for the statement",
                ))
            })?;
        m.bytes_returned = Some(bson_bytes(&value));
        Ok(Measured {
            timing: Some(Timing::of(vec![millis])),
            read: Some(m),
            write: None,
            cache: entries.as_deref().map(|e| cache::from_profile(e, evicts)),
            value: Some(value),
        })
    }

    async fn write(
        &mut self,
        session: &mut Session,
        program: &Program,
        src: &str,
    ) -> Result<Measured, OpError> {
        self.write_series(session, program, src, 1, |_, _| {}).await
    }

    /// Measure a write run `runs` times as one operation (a workload's
    /// "300 new log lines"): `bind` sets each run's parameters before it
    /// runs. The profiler stays on across the runs and the cache is
    /// emptied once, before the first, so the figures are the series' own:
    /// its counts and index keys summed, the bytes it read into a cold
    /// cache, its time the sum of the runs' times. The first run that
    /// fails ends the series with its error.
    pub async fn write_series(
        &mut self,
        session: &mut Session,
        program: &Program,
        src: &str,
        runs: u32,
        mut bind: impl FnMut(&mut Session, u32),
    ) -> Result<Measured, OpError> {
        // The profiler's entries so far; `None` once it cannot be read.
        let mut entries: Option<Vec<bson::Document>> = profile::start(self.client, self.db)
            .await
            .is_ok()
            .then(Vec::new);
        let cold = self.evicts().await && cache::evict(self.client).await.is_ok();
        let recorder = Recorder::new();
        session.observe(Box::new(recorder.clone()));
        let mut wall = 0.0;
        let mut res = Ok(());
        let runs = runs.max(1);
        for run in 0..runs {
            bind(session, run);
            let started = Instant::now();
            let (_, r) = session.eval_scoped(program).await;
            wall += started.elapsed().as_secs_f64() * 1000.0;
            if r.is_err() {
                res = r;
                break;
            }
            // Take what a chunk of runs left in `system.profile` before a
            // long series overruns it (see PROFILE_CHUNK).
            if (run + 1) % PROFILE_CHUNK == 0 && run + 1 < runs && entries.is_some() {
                let taken = profile::take(self.client, self.db, &mut self.profile_seen).await;
                let restarted = profile::start(self.client, self.db).await.is_ok();
                entries = match (entries, taken) {
                    (Some(mut all), Some(more)) if restarted => {
                        all.extend(more);
                        Some(all)
                    }
                    _ => None,
                };
            }
        }
        session.stop_observing();
        if entries.is_some() {
            let taken = profile::take(self.client, self.db, &mut self.profile_seen).await;
            entries = entries.zip(taken).map(|(mut all, more)| {
                all.extend(more);
                all
            });
        }
        let (keys, cache_read) = match &entries {
            Some(entries) => (
                figures::profile_keys(entries),
                Some(cache::from_write_profile(entries, cold)),
            ),
            None => ((None, None), None),
        };
        res.map_err(|e| OpError::from_dialect(&e, src))?;
        let writes = recorder
            .writes()
            .map_err(|e| OpError::shell(Message::new("measuring the write: {e}").arg("e", e)))?;
        let Some((first, rest)) = writes.split_first() else {
            return Err(OpError::shell(Message::new(
                "the statement sent no write (insert, update, delete, findAndModify, or aggregate with $merge or $out)",
            )));
        };
        let mut w = first.clone();
        for r in rest {
            w.add(r);
        }
        (w.keys_inserted, w.keys_deleted) = keys;
        // What the recorder spent snapshotting is not the write's time.
        let millis = (wall - recorder.overhead_millis()).max(0.0);
        Ok(Measured {
            timing: Some(Timing::of(vec![millis])),
            read: None,
            write: Some(w),
            cache: cache_read,
            value: None,
        })
    }
}

/// Why a read command could not be explained.
enum Explained {
    /// The reply would pass 16 MiB (10334).
    TooLarge,
    Failed(OpError),
}

/// BSON bytes the client receives for a read's result: the sum of each
/// document's size (an array of documents, one document, or nothing).
pub fn bson_bytes(b: &Bson) -> i64 {
    match b {
        Bson::Array(items) => items.iter().map(bson_bytes).sum(),
        Bson::Document(d) => bson::to_vec(d).map_or(0, |v| v.len() as i64),
        _ => 0,
    }
}
