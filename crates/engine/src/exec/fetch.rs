//! Stages that turn index entries into documents: FETCH loads a record and
//! applies the filter, OR unions its children's records without duplicates.

use std::collections::HashSet;

use bson::{Document, doc};

use super::{BoxStage, Counters, Ctx, Member, Stage, State, stage_doc};
use crate::error::Result;
use crate::index::RecordId;

/// `FETCH`: load each record its child names and keep those matching.
pub struct Fetch {
    child: BoxStage,
    residual: Option<Document>,
    c: Counters,
}

impl Fetch {
    pub fn new(child: BoxStage, residual: Option<Document>) -> Self {
        Fetch {
            child,
            residual,
            c: Counters::default(),
        }
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let m = match self.child.work(ctx)? {
            State::Advanced(m) => m,
            other => return Ok(other),
        };
        let doc = match m.doc {
            Some(doc) => doc,
            None => {
                let Some(raw) = ctx.coll.raw(m.rid) else {
                    return Ok(State::NeedTime);
                };
                self.c.docs_examined += 1;
                self.c.bytes_examined += raw.as_bytes().len() as u64;
                ctx.coll.touch_record(m.rid);
                // The whole filter is re-applied (index bounds are only a
                // superset), on the raw record: only a match is decoded.
                return super::scan::check_raw(ctx, m.rid, raw);
            }
        };
        // The whole filter is re-applied: index bounds are only a superset.
        let details = ctx.filter.match_details(&doc, ctx.vars)?;
        Ok(if details.matched {
            State::Advanced(Member {
                rid: m.rid,
                doc: Some(doc),
                position: details.array_position,
            })
        } else {
            State::NeedTime
        })
    }
}

impl Stage for Fetch {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let started = self.c.start();
        let state = self.step(ctx);
        self.c.record(started, &state);
        state
    }

    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document {
        let mut fields = Document::new();
        if let Some(f) = &self.residual {
            fields.insert("filter", f.clone());
        }
        stage_doc(
            "FETCH",
            fields,
            stats.then_some(&self.c),
            doc! {
                "docsExamined": self.c.docs_examined as i64,
                "alreadyHasObj": 0i64,
                "docBytesExamined": self.c.bytes_examined as i64,
            },
            vec![self.child.explain(ctx, stats)],
        )
    }

    fn totals(&self) -> (u64, u64) {
        let (k, d) = self.child.totals();
        (k, d + self.c.docs_examined)
    }

    fn bytes_examined(&self) -> u64 {
        self.child.bytes_examined() + self.c.bytes_examined
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}

/// `OR`: each child in turn, dropping records already returned.
pub struct Or {
    children: Vec<BoxStage>,
    current: usize,
    seen: HashSet<RecordId>,
    dups_tested: u64,
    dups_dropped: u64,
    c: Counters,
}

impl Or {
    pub fn new(children: Vec<BoxStage>) -> Self {
        Or {
            children,
            current: 0,
            seen: HashSet::new(),
            dups_tested: 0,
            dups_dropped: 0,
            c: Counters::default(),
        }
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let Some(child) = self.children.get_mut(self.current) else {
            return Ok(State::Eof);
        };
        match child.work(ctx)? {
            State::Advanced(m) => {
                self.dups_tested += 1;
                if self.seen.insert(m.rid) {
                    Ok(State::Advanced(m))
                } else {
                    self.dups_dropped += 1;
                    Ok(State::NeedTime)
                }
            }
            State::NeedTime => Ok(State::NeedTime),
            State::Eof => {
                self.current += 1;
                Ok(if self.current >= self.children.len() {
                    State::Eof
                } else {
                    State::NeedTime
                })
            }
        }
    }
}

impl Stage for Or {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let started = self.c.start();
        let state = self.step(ctx);
        self.c.record(started, &state);
        state
    }

    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document {
        stage_doc(
            "OR",
            Document::new(),
            stats.then_some(&self.c),
            doc! {"dupsTested": self.dups_tested as i64, "dupsDropped": self.dups_dropped as i64},
            self.children
                .iter()
                .map(|c| c.explain(ctx, stats))
                .collect(),
        )
    }

    fn totals(&self) -> (u64, u64) {
        self.children.iter().fold((0, 0), |(k, d), c| {
            let (ck, cd) = c.totals();
            (k + ck, d + cd)
        })
    }

    fn bytes_examined(&self) -> u64 {
        self.children.iter().map(|c| c.bytes_examined()).sum()
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}
