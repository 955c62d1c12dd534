//! A read that continues where its last batch stopped: the winning plan's
//! stage tree, with everything it reads owned (the collection as the read's
//! snapshot saw it, the filter, the variables, the projection), so that a
//! cursor can hold it between `getMore`s instead of holding the results.
//!
//! [`FindStream::next_raw`] works the plan until it advances one document
//! (mongod's `PlanExecutor::getNext`), projects it and hands it out as raw
//! BSON; nothing ahead of the current document is materialised, except
//! what a blocking stage (`SORT`) must hold. The examined keys and
//! documents are reported to the profiler per batch, as mongod reports
//! them per `find` and per `getMore`.

use std::sync::Arc;

use std::collections::VecDeque;

use bson::{Document, RawDocumentBuf};

use super::{BoxStage, Ctx, State};
use crate::catalog::Collection;
use crate::collation::Collation;
use crate::error::{EngineError, ErrorCode, Result};
use crate::expr::Vars;
use crate::filter::Filter;
use crate::pipeline::Pipeline;
use crate::projection::Projection;

/// The plan of one `find`, suspended between batches.
pub struct FindStream {
    /// The collection as the read's snapshot saw it (`None`: it did not
    /// exist, and the stream is empty). Shared, not copied: a write to the
    /// collection while the cursor is open copies the collection for the
    /// writer (copy on write), and the cursor keeps reading the old one.
    coll: Option<Arc<Collection>>,
    filter: Filter,
    vars: Vars,
    collation: Option<Collation>,
    projection: Option<Projection>,
    root: Option<BoxStage>,
    /// Keys and documents examined already reported to the profiler.
    reported: (u64, u64),
    /// Documents handed out so far (a test hook: what the stream has
    /// materialised).
    produced: u64,
}

/// The parts of a planned read a [`FindStream`] takes over.
pub struct StreamParts {
    pub coll: Option<Arc<Collection>>,
    pub filter: Filter,
    pub vars: Vars,
    pub collation: Option<Collation>,
    pub projection: Option<Projection>,
    pub root: Option<BoxStage>,
}

impl FindStream {
    /// A stream over a planned (not yet run) stage tree.
    pub fn new(parts: StreamParts) -> Self {
        FindStream {
            coll: parts.coll,
            filter: parts.filter,
            vars: parts.vars,
            collation: parts.collation,
            projection: parts.projection,
            root: parts.root,
            reported: (0, 0),
            produced: 0,
        }
    }

    /// The next result as a document (unprojected: what an aggregation's
    /// `$cursor` hands its later stages); `None` at the end.
    pub fn next_doc(&mut self) -> Result<Option<Document>> {
        let (Some(coll), Some(root)) = (self.coll.as_deref(), self.root.as_mut()) else {
            return Ok(None);
        };
        let ctx = Ctx {
            coll,
            filter: &self.filter,
            vars: &self.vars,
            collation: self.collation.as_ref(),
        };
        loop {
            let member = match root.work(&ctx)? {
                State::Advanced(m) => m,
                State::NeedTime => continue,
                State::Eof => return Ok(None),
            };
            let doc = match member.doc {
                Some(doc) => doc,
                None => match coll.doc(member.rid)? {
                    Some(doc) => doc,
                    None => continue,
                },
            };
            self.produced += 1;
            return Ok(Some(doc));
        }
    }

    /// The variables the plan runs with.
    pub fn vars(&self) -> &Vars {
        &self.vars
    }

    /// The next result, projected, as raw BSON; `None` at the end.
    pub fn next_raw(&mut self) -> Result<Option<RawDocumentBuf>> {
        let (Some(coll), Some(root)) = (self.coll.as_deref(), self.root.as_mut()) else {
            return Ok(None);
        };
        let ctx = Ctx {
            coll,
            filter: &self.filter,
            vars: &self.vars,
            collation: self.collation.as_ref(),
        };
        loop {
            let member = match root.work(&ctx)? {
                State::Advanced(m) => m,
                State::NeedTime => continue,
                State::Eof => return Ok(None),
            };
            let raw = match (&self.projection, member.doc) {
                // Unprojected and not loaded by the plan (a covered or
                // index-only path): the stored bytes as they are.
                (None, None) => match coll.raw(member.rid) {
                    Some(raw) => raw.to_raw_document_buf(),
                    None => continue,
                },
                (None, Some(doc)) => to_raw(&doc)?,
                (Some(p), doc) => {
                    // A covered plan leaves the document out; it is read
                    // here, not counted as examined (mongod would have read
                    // the index key).
                    let doc = match doc {
                        Some(doc) => doc,
                        None => match coll.doc(member.rid)? {
                            Some(doc) => doc,
                            None => continue,
                        },
                    };
                    to_raw(&p.apply(&doc, member.position, &self.vars)?)?
                }
            };
            self.produced += 1;
            return Ok(Some(raw));
        }
    }

    /// Report what the plan examined since the last report to the
    /// operation's measurement (the profiler's `keysExamined` and
    /// `docsExamined` of this batch).
    pub fn report(&mut self) {
        let Some(root) = &self.root else {
            return;
        };
        let (keys, docs) = root.totals();
        crate::metrics::examined(
            keys.saturating_sub(self.reported.0),
            docs.saturating_sub(self.reported.1),
        );
        self.reported = (keys, docs);
    }

    /// How many documents the stream has handed out.
    pub fn produced(&self) -> u64 {
        self.produced
    }
}

fn to_raw(doc: &bson::Document) -> Result<RawDocumentBuf> {
    crate::codec::encode(doc)
        .map_err(|e| EngineError::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
}

/// A stage after an aggregation's `$cursor` that passes documents on one at
/// a time (`$match`, `$project`, `$addFields`, `$unwind`, …), or a `$skip`
/// or `$limit` with what is left of its count.
pub enum StreamStage {
    Run(Pipeline),
    Skip(u64),
    Limit(u64),
}

/// Reads nothing: the streaming stages never read another collection.
struct NoSource;

impl crate::pipeline::Source for NoSource {
    fn collection_docs(&self, _collection: &str) -> Result<Vec<Document>> {
        Ok(Vec::new())
    }
}

/// An `aggregate` whose stages all stream: its `$cursor` (a [`FindStream`])
/// pulled one document at a time through the later stages, so that the
/// cursor holds the plan and what one input document became (an `$unwind`
/// may make several), not the results.
pub struct AggStream {
    find: FindStream,
    stages: Vec<StreamStage>,
    queue: VecDeque<Document>,
    /// A `$limit` is used up (or the input ended): pull no more input.
    done: bool,
}

impl AggStream {
    pub fn new(find: FindStream, stages: Vec<StreamStage>) -> Self {
        AggStream {
            find,
            stages,
            queue: VecDeque::new(),
            done: false,
        }
    }

    /// The next result as raw BSON; `None` at the end.
    pub fn next_raw(&mut self) -> Result<Option<RawDocumentBuf>> {
        loop {
            if let Some(doc) = self.queue.pop_front() {
                return to_raw(&doc).map(Some);
            }
            if self.done {
                return Ok(None);
            }
            let Some(doc) = self.find.next_doc()? else {
                self.done = true;
                continue;
            };
            let mut docs = vec![doc];
            for stage in &mut self.stages {
                if docs.is_empty() {
                    break;
                }
                crate::limits::checkpoint()?;
                match stage {
                    StreamStage::Run(p) => {
                        docs = p.run_streaming(docs, &NoSource, self.find.vars())?
                    }
                    StreamStage::Skip(n) => {
                        let k = usize::try_from(*n).unwrap_or(usize::MAX).min(docs.len());
                        docs.drain(..k);
                        *n -= k as u64;
                    }
                    StreamStage::Limit(n) => {
                        docs.truncate(usize::try_from(*n).unwrap_or(usize::MAX));
                        *n -= docs.len() as u64;
                        if *n == 0 {
                            self.done = true;
                        }
                    }
                }
            }
            self.queue.extend(docs);
        }
    }

    /// Report what the `$cursor` examined since the last report.
    pub fn report(&mut self) {
        self.find.report();
    }

    /// The approximate bytes of the documents waiting to be handed out.
    pub fn held_bytes(&self) -> u64 {
        self.queue
            .iter()
            .map(|d| {
                d.iter()
                    .map(|(k, v)| k.len() as u64 + 2 + crate::limits::approx_size(v))
                    .sum::<u64>()
                    + 5
            })
            .sum()
    }

    /// How many documents the `$cursor` has handed to the stages.
    pub fn produced(&self) -> u64 {
        self.find.produced()
    }
}
