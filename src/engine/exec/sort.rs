//! `SORT`: a blocking, in-memory sort. It buffers every input (only the
//! best `limitAmount` when the query has a limit), within mongod's 100 MB
//! `memLimit`; going over fails with code 292 as mongod does without
//! `allowDiskUse`.

use bson::{Document, doc};

use super::{BoxStage, Counters, Ctx, Member, Stage, State, ensure_doc, stage_doc};
use crate::engine::error::{EngineError, ErrorCode, Result};
use crate::engine::sort::SortSpec;
use crate::engine::value::bson_size;

pub struct Sort {
    child: BoxStage,
    spec: SortSpec,
    pattern: Document,
    limit: Option<u64>,
    buffer: Vec<(Member, u64)>,
    bytes: u64,
    total_sorted: u64,
    output: Option<std::vec::IntoIter<Member>>,
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

    fn order(&mut self, ctx: &Ctx<'_>) {
        let spec = &self.spec;
        let collation = ctx.collation;
        let empty = Document::new();
        // Stable: ties keep their input order.
        self.buffer.sort_by(|(a, _), (b, _)| {
            spec.compare(
                a.doc.as_ref().unwrap_or(&empty),
                b.doc.as_ref().unwrap_or(&empty),
                collation,
            )
        });
        if let Some(l) = self.limit
            && self.buffer.len() as u64 > l
        {
            for (_, size) in self.buffer.drain(l as usize..) {
                self.bytes -= size;
            }
        }
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        if let Some(out) = &mut self.output {
            return Ok(match out.next() {
                Some(m) => State::Advanced(m),
                None => State::Eof,
            });
        }
        match self.child.work(ctx)? {
            State::Advanced(mut m) => {
                ensure_doc(&mut m, ctx)?;
                let size = m.doc.as_ref().map_or(0, |d| bson_size(d) as u64);
                self.bytes += size;
                self.total_sorted += size;
                self.buffer.push((m, size));
                if let Some(l) = self.limit
                    && self.buffer.len() as u64 > 2 * l.max(1)
                {
                    self.order(ctx);
                }
                let limit = crate::engine::limits::SORT_MEMORY.get();
                if self.bytes > limit && !crate::engine::limits::allow_disk_use() {
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
                self.order(ctx);
                let members: Vec<Member> = std::mem::take(&mut self.buffer)
                    .into_iter()
                    .map(|(m, _)| m)
                    .collect();
                self.output = Some(members.into_iter());
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
        let mut fields = doc! {"sortPattern": self.pattern.clone(), "memLimit": crate::engine::limits::SORT_MEMORY.get() as i64};
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

    fn counters(&self) -> &Counters {
        &self.c
    }
}
