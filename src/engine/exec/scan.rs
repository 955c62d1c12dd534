//! Leaf stages: COLLSCAN walks the records, IXSCAN walks index keys inside
//! bounds, IDHACK looks one `_id` up directly.

use std::collections::HashSet;
use std::ops::Bound;

use bson::{Bson, Document, doc};

use super::{Counters, Ctx, Member, Stage, State, counted, stage_doc};
use crate::engine::catalog::to_document;
use crate::engine::error::Result;
use crate::engine::index::{Index, RecordId};
use crate::engine::keystring;
use crate::engine::planner::IxScanPlan;

/// Match a loaded document against the query filter.
fn check(ctx: &Ctx<'_>, rid: RecordId, doc: Document) -> Result<State> {
    let details = ctx.filter.match_details(&doc, ctx.vars)?;
    Ok(if details.matched {
        State::Advanced(Member {
            rid,
            doc: Some(doc),
            position: details.array_position,
        })
    } else {
        State::NeedTime
    })
}

/// `COLLSCAN`: every record in insertion order, filtered.
pub struct CollScan {
    rids: Vec<RecordId>,
    next: usize,
    c: Counters,
}

impl CollScan {
    pub fn new(ctx: &Ctx<'_>) -> Self {
        CollScan {
            rids: ctx.coll.records().map(|(rid, _)| rid).collect(),
            next: 0,
            c: Counters::default(),
        }
    }
}

impl<'a> Stage<'a> for CollScan {
    fn work(&mut self, ctx: &Ctx<'a>) -> Result<State> {
        let (rids, next) = (&self.rids, &mut self.next);
        counted(&mut self.c, || {
            let Some(&rid) = rids.get(*next) else {
                return Ok(State::Eof);
            };
            *next += 1;
            match ctx.coll.raw(rid) {
                Some(raw) => check(ctx, rid, to_document(raw)?),
                None => Ok(State::NeedTime),
            }
        })
        .inspect(|s| {
            if !matches!(s, State::Eof) {
                self.c.docs_examined += 1;
            }
        })
    }

    fn explain(&self, ctx: &Ctx<'a>, stats: bool) -> Document {
        let mut fields = Document::new();
        if !ctx.filter.is_empty() {
            fields.insert("filter", ctx.filter.source().clone());
        }
        fields.insert("direction", "forward");
        stage_doc(
            "COLLSCAN",
            fields,
            stats.then_some(&self.c),
            doc! {"docsExamined": self.c.docs_examined as i64},
            Vec::new(),
        )
    }

    fn totals(&self) -> (u64, u64) {
        (0, self.c.docs_examined)
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}

/// `IXSCAN`: keys inside the plan's bounds, in index (or reverse) order.
pub struct IxScan {
    plan: IxScanPlan,
    rids: Option<Vec<RecordId>>,
    next: usize,
    seen: HashSet<RecordId>,
    seeks: u64,
    dups_tested: u64,
    dups_dropped: u64,
    multikey: bool,
    c: Counters,
}

impl IxScan {
    pub fn new(plan: IxScanPlan, ctx: &Ctx<'_>) -> Self {
        let multikey = ctx
            .coll
            .indexes()
            .get(plan.index)
            .is_some_and(Index::is_multikey);
        IxScan {
            plan,
            rids: None,
            next: 0,
            seen: HashSet::new(),
            seeks: 0,
            dups_tested: 0,
            dups_dropped: 0,
            multikey,
            c: Counters::default(),
        }
    }

    /// The record ids of every key in bounds, in scan order.
    fn keys(&mut self, index: &Index) -> Vec<RecordId> {
        let spec = &index.spec;
        let collation = spec.collation.as_ref();
        let n = self.plan.scan_fields;
        let encode = |v: &Bson, asc: bool| {
            let mut out = Vec::new();
            keystring::append_value(&mut out, v, collation);
            if !asc {
                for b in &mut out {
                    *b = !*b;
                }
            }
            out
        };
        // Per field, its intervals in key order (descending fields reversed).
        let per_field: Vec<Vec<&crate::engine::planner::Interval>> = (0..n)
            .map(|i| {
                let mut iv: Vec<_> = self.plan.bounds[i].iter().collect();
                if !spec.fields[i].1 {
                    iv.reverse();
                }
                iv
            })
            .collect();
        // Cartesian product of the leading intervals, in key order.
        let mut combos: Vec<Vec<&crate::engine::planner::Interval>> = vec![Vec::new()];
        for field in &per_field {
            let mut next = Vec::with_capacity(combos.len() * field.len());
            for c in &combos {
                for iv in field {
                    let mut c = c.clone();
                    c.push(*iv);
                    next.push(c);
                }
            }
            combos = next;
        }
        let mut out = Vec::new();
        for combo in combos {
            self.seeks += 1;
            if combo.is_empty() {
                out.extend(
                    index
                        .scan(Bound::Unbounded, Bound::Unbounded)
                        .map(|(_, rid)| rid),
                );
                continue;
            }
            let mut prefix = Vec::new();
            let last = combo.len() - 1;
            for (i, iv) in combo[..last].iter().enumerate() {
                prefix.extend(encode(&iv.lo, spec.fields[i].1));
            }
            let asc = spec.fields[last].1;
            let iv = combo[last];
            let (lo_v, lo_incl, hi_v, hi_incl) = if asc {
                (&iv.lo, iv.lo_incl, &iv.hi, iv.hi_incl)
            } else {
                (&iv.hi, iv.hi_incl, &iv.lo, iv.lo_incl)
            };
            let lo = [prefix.as_slice(), &encode(lo_v, asc)].concat();
            let hi = [prefix.as_slice(), &encode(hi_v, asc)].concat();
            for (k, rid) in index.scan(Bound::Included(&lo), Bound::Unbounded) {
                if k.starts_with(&lo) && !lo_incl {
                    continue;
                }
                if k.starts_with(&hi) {
                    if !hi_incl {
                        break;
                    }
                } else if k > hi.as_slice() {
                    break;
                }
                out.push(rid);
            }
        }
        if !self.plan.forward {
            out.reverse();
        }
        out
    }
}

impl<'a> Stage<'a> for IxScan {
    fn work(&mut self, ctx: &Ctx<'a>) -> Result<State> {
        let started = std::time::Instant::now();
        if self.rids.is_none() {
            let keys = match ctx.coll.indexes().get(self.plan.index) {
                Some(index) => self.keys(index),
                None => Vec::new(),
            };
            self.rids = Some(keys);
        }
        let state = match self.rids.as_ref().and_then(|r| r.get(self.next)) {
            None => State::Eof,
            Some(&rid) => {
                self.next += 1;
                self.c.keys_examined += 1;
                if self.multikey {
                    self.dups_tested += 1;
                    if !self.seen.insert(rid) {
                        self.dups_dropped += 1;
                        return Ok(self.finish(started, State::NeedTime));
                    }
                }
                State::Advanced(Member {
                    rid,
                    doc: None,
                    position: None,
                })
            }
        };
        Ok(self.finish(started, state))
    }

    fn explain(&self, ctx: &Ctx<'a>, stats: bool) -> Document {
        let Some(index) = ctx.coll.indexes().get(self.plan.index) else {
            return doc! {"stage": "IXSCAN"};
        };
        let spec = &index.spec;
        let mut multikey_paths = Document::new();
        let mut bounds = Document::new();
        for (i, (path, asc)) in spec.fields.iter().enumerate() {
            let paths: Vec<Bson> = index
                .multikey_paths()
                .get(i)
                .map(|p| p.iter().cloned().map(Bson::String).collect())
                .unwrap_or_default();
            multikey_paths.insert(path.clone(), paths);
            let reversed = !asc ^ !self.plan.forward;
            let mut iv: Vec<Bson> = self.plan.bounds[i]
                .iter()
                .map(|iv| Bson::String(iv.render(reversed)))
                .collect();
            if reversed {
                iv.reverse();
            }
            bounds.insert(path.clone(), iv);
        }
        let mut fields = doc! {
            "keyPattern": spec.key.clone(),
            "indexName": spec.name.clone(),
        };
        if let Some(c) = &spec.collation {
            fields.insert("collation", c.to_document());
        }
        fields.extend(doc! {
            "isMultiKey": index.is_multikey(),
            "multiKeyPaths": multikey_paths,
            "isUnique": spec.unique,
            "isSparse": spec.sparse,
            "isPartial": spec.partial.is_some(),
            "indexVersion": 2,
            "direction": if self.plan.forward { "forward" } else { "backward" },
            "indexBounds": bounds,
        });
        stage_doc(
            "IXSCAN",
            fields,
            stats.then_some(&self.c),
            doc! {
                "keysExamined": self.c.keys_examined as i64,
                "seeks": self.seeks as i64,
                "dupsTested": self.dups_tested as i64,
                "dupsDropped": self.dups_dropped as i64,
            },
            Vec::new(),
        )
    }

    fn totals(&self) -> (u64, u64) {
        (self.c.keys_examined, 0)
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}

impl IxScan {
    fn finish(&mut self, started: std::time::Instant, state: State) -> State {
        self.c.record_state(started, &state);
        state
    }
}

/// `IDHACK`: the `_id` index probed for one value.
pub struct IdHack {
    id: Bson,
    done: bool,
    c: Counters,
}

impl IdHack {
    pub fn new(id: Bson) -> Self {
        IdHack {
            id,
            done: false,
            c: Counters::default(),
        }
    }
}

impl<'a> Stage<'a> for IdHack {
    fn work(&mut self, ctx: &Ctx<'a>) -> Result<State> {
        let (id, done) = (&self.id, &mut self.done);
        let mut found = false;
        let state = counted(&mut self.c, || {
            if *done {
                return Ok(State::Eof);
            }
            *done = true;
            match ctx.coll.find_by_id(id) {
                Some(rid) => match ctx.coll.raw(rid) {
                    Some(raw) => {
                        found = true;
                        match check(ctx, rid, to_document(raw)?)? {
                            State::Advanced(m) => Ok(State::Advanced(m)),
                            _ => Ok(State::Eof),
                        }
                    }
                    None => Ok(State::Eof),
                },
                None => Ok(State::Eof),
            }
        });
        if found {
            self.c.keys_examined += 1;
            self.c.docs_examined += 1;
        }
        state
    }

    fn explain(&self, _ctx: &Ctx<'a>, stats: bool) -> Document {
        stage_doc(
            "IDHACK",
            Document::new(),
            stats.then_some(&self.c),
            doc! {
                "keysExamined": self.c.keys_examined as i64,
                "docsExamined": self.c.docs_examined as i64,
            },
            Vec::new(),
        )
    }

    fn totals(&self) -> (u64, u64) {
        (self.c.keys_examined, self.c.docs_examined)
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}
