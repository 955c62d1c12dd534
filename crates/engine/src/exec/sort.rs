//! `SORT`: a blocking, in-memory sort. It buffers every input (only the
//! best `limitAmount` when the query has a limit), within mongod's 100 MB
//! `memLimit`; going over fails with code 292 as mongod does without
//! `allowDiskUse`.
//!
//! What it buffers is each input's sort values, computed once (from the
//! raw record where the document was not decoded yet) and encoded as one
//! index key whose byte order is the sort order (`SortSpec::encoded_key`),
//! so that the sort compares bytes; and its record id, never the document: the collection cannot change under a running plan,
//! so the record is read again when the sorted member is consumed. The
//! memory it accounts (and `totalDataSizeSorted`) is still the documents'
//! BSON size, as mongod's.

use bson::{Document, doc};

use super::{BoxStage, Counters, Ctx, Member, Stage, State, stage_doc};
use crate::error::{EngineError, ErrorCode, Result};
use crate::sort::SortSpec;
use crate::value::bson_size;

/// One buffered input: its sort values encoded, the member without its
/// document, and the document's size.
struct Entry {
    key: Box<[u8]>,
    member: Member,
    size: u64,
}

pub struct Sort {
    child: BoxStage,
    spec: SortSpec,
    pattern: Document,
    limit: Option<u64>,
    buffer: Vec<Entry>,
    bytes: u64,
    total_sorted: u64,
    output: Option<std::vec::IntoIter<Entry>>,
    c: Counters,
}

impl Sort {
    pub fn new(child: BoxStage, spec: SortSpec, pattern: Document, limit: Option<u64>) -> Self {
        Sort {
            child,
            spec,
            pattern,
            limit,
            buffer: Vec::new(),
            bytes: 0,
            total_sorted: 0,
            output: None,
            c: Counters::default(),
        }
    }

    fn order(&mut self) {
        // Stable: ties keep their input order.
        self.buffer.sort_by(|a, b| a.key.cmp(&b.key));
        if let Some(l) = self.limit
            && self.buffer.len() as u64 > l
        {
            for e in self.buffer.drain(l as usize..) {
                self.bytes -= e.size;
            }
        }
    }

    /// The member's sort values and document size, from its document or
    /// its stored record; `None` when the record is gone.
    fn entry(&self, m: Member, ctx: &Ctx<'_>) -> Result<Option<Entry>> {
        let (key, size) = match &m.doc {
            Some(d) => (self.spec.encoded_key(d, ctx.collation), bson_size(d) as u64),
            None => match ctx.coll.raw(m.rid) {
                Some(raw) => (
                    self.spec.encoded_key_of_raw(raw, ctx.collation)?,
                    raw.as_bytes().len() as u64,
                ),
                None => return Ok(None),
            },
        };
        Ok(Some(Entry {
            key: key.into_boxed_slice(),
            member: Member { doc: None, ..m },
            size,
        }))
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        if let Some(out) = &mut self.output {
            return Ok(match out.next() {
                Some(e) => State::Advanced(e.member),
                None => State::Eof,
            });
        }
        match self.child.work(ctx)? {
            State::Advanced(m) => {
                let Some(entry) = self.entry(m, ctx)? else {
                    return Ok(State::NeedTime);
                };
                self.bytes += entry.size;
                self.total_sorted += entry.size;
                self.buffer.push(entry);
                if let Some(l) = self.limit
                    && self.buffer.len() as u64 > 2 * l.max(1)
                {
                    self.order();
                }
                let limit = crate::limits::SORT_MEMORY.get();
                if self.bytes > limit && !crate::limits::allow_disk_use() {
                    return Err(EngineError::new(
                        ErrorCode::QUERY_EXCEEDED_MEMORY_LIMIT,
                        format!(
                            "Executor error during find command :: caused by :: Sort exceeded memory limit of {limit} bytes, but did not opt in to external sorting."
                        ),
                    ));
                }
                Ok(State::NeedTime)
            }
            State::NeedTime => Ok(State::NeedTime),
            State::Eof => {
                self.order();
                self.output = Some(std::mem::take(&mut self.buffer).into_iter());
                Ok(State::NeedTime)
            }
        }
    }
}

impl Stage for Sort {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let started = self.c.start();
        let state = self.step(ctx);
        self.c.record(started, &state);
        state
    }

    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document {
        let mut fields = doc! {"sortPattern": self.pattern.clone(), "memLimit": crate::limits::SORT_MEMORY.get() as i64};
        if let Some(l) = self.limit {
            fields.insert("limitAmount", l as i64);
        }
        fields.insert("type", "simple");
        stage_doc(
            "SORT",
            fields,
            stats.then_some(&self.c),
            doc! {
                "totalDataSizeSorted": self.total_sorted as i64,
                "usedDisk": false,
                "spills": 0i64,
                "spilledDataStorageSize": 0i64,
            },
            vec![self.child.explain(ctx, stats)],
        )
    }

    fn totals(&self) -> (u64, u64) {
        self.child.totals()
    }

    fn bytes_examined(&self) -> u64 {
        self.child.bytes_examined()
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}
