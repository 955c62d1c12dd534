//! Leaf stages: COLLSCAN walks the records, IXSCAN walks index keys inside
//! bounds, IDHACK looks one `_id` up directly.

use std::collections::HashSet;
use std::ops::Bound;

use bson::{Bson, Document, RawDocument, doc};

use super::{Counters, Ctx, Member, Stage, State, counted, stage_doc};
use crate::catalog::to_document;
use crate::error::Result;
use crate::index::{Index, RecordId};
use crate::keystring;
use crate::planner::IxScanPlan;

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

/// Match a stored record against the query filter, on its raw BSON when
/// the filter allows: a record is decoded only when the raw matcher cannot
/// answer, and a match that was not decoded is left to its consumer.
pub(super) fn check_raw(ctx: &Ctx<'_>, rid: RecordId, raw: &RawDocument) -> Result<State> {
    match ctx.filter.match_raw(raw)? {
        Some(details) if !details.matched => Ok(State::NeedTime),
        // Decoded only where it is consumed (a sort reads only its keys,
        // a count or a skip nothing).
        Some(details) => Ok(State::Advanced(Member {
            rid,
            doc: None,
            position: details.array_position,
        })),
        None => check(ctx, rid, to_document(raw)?),
    }
}

/// Whether a stored record matches `filter`, on its raw BSON if it can.
fn record_matches(
    filter: &crate::filter::Filter,
    raw: &RawDocument,
    ctx: &Ctx<'_>,
) -> Result<bool> {
    match filter.match_raw(raw)? {
        Some(details) => Ok(details.matched),
        None => filter.matches(&to_document(raw)?, ctx.vars),
    }
}

/// `COLLSCAN`: every record in insertion order, filtered. It keeps only
/// its position, so a cursor can hold it between batches.
pub struct CollScan {
    /// The next record id to look at (the first live one at or after it).
    next: RecordId,
    c: Counters,
}

impl CollScan {
    pub fn new(_ctx: &Ctx<'_>) -> Self {
        CollScan {
            next: 0,
            c: Counters::default(),
        }
    }
}

impl Stage for CollScan {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let next = &mut self.next;
        let mut read = 0;
        let bytes = &mut read;
        let state = counted(&mut self.c, || {
            let Some(rid) = ctx.coll.live_from(*next) else {
                return Ok(State::Eof);
            };
            *next = rid + 1;
            match ctx.coll.raw(rid) {
                Some(raw) => {
                    *bytes += raw.as_bytes().len() as u64;
                    ctx.coll.touch_record(rid);
                    check_raw(ctx, rid, raw)
                }
                None => Ok(State::NeedTime),
            }
        });
        self.c.bytes_examined += read;
        state.inspect(|s| {
            if !matches!(s, State::Eof) {
                self.c.docs_examined += 1;
            }
        })
    }

    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document {
        let mut fields = Document::new();
        if !ctx.filter.is_empty() {
            fields.insert("filter", ctx.filter.source().clone());
        }
        fields.insert("direction", "forward");
        stage_doc(
            "COLLSCAN",
            fields,
            stats.then_some(&self.c),
            doc! {
                "docsExamined": self.c.docs_examined as i64,
                "docBytesExamined": self.c.bytes_examined as i64,
            },
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
    /// The entry ranges to read, in scan order (built on the first call).
    ranges: Option<Vec<EntryRange>>,
    /// The range being read, and the last entry read from it.
    range: usize,
    resume: Option<Vec<u8>>,
    /// Record ids read ahead from the index but not yet returned.
    ahead: std::collections::VecDeque<RecordId>,
    seen: HashSet<RecordId>,
    seeks: u64,
    dups_tested: u64,
    dups_dropped: u64,
    multikey: bool,
    /// The plan's key filter.
    key_filter: Option<Box<crate::filter::Filter>>,
    c: Counters,
}

impl IxScan {
    pub fn new(plan: IxScanPlan, ctx: &Ctx<'_>) -> Self {
        let multikey = ctx
            .coll
            .indexes()
            .get(plan.index)
            .is_some_and(Index::is_multikey);
        let key_filter = plan.key_filter.clone();
        IxScan {
            key_filter,
            plan,
            ranges: None,
            range: 0,
            resume: None,
            ahead: std::collections::VecDeque::new(),
            seen: HashSet::new(),
            seeks: 0,
            dups_tested: 0,
            dups_dropped: 0,
            multikey,
            c: Counters::default(),
        }
    }

    /// The bounds as ranges of raw index entries, in scan order. Keys are
    /// sequences of prefix-free components, and a byte that follows a whole
    /// component is never 0xFF, so "every key starting with `p`" is the
    /// entry range from `p` to `p` + 0xFF.
    fn entry_ranges(&self, index: &Index) -> Vec<EntryRange> {
        let spec = &index.spec;
        let collation = spec.collation.as_ref();
        // `min`/`max`: one range of whole keys, `min` in, `max` out.
        if let Some(range) = &self.plan.key_range {
            return vec![(
                Bound::Included(range.encode(&spec.fields, collation, true)),
                Bound::Excluded(range.encode(&spec.fields, collation, false)),
            )];
        }
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
        let per_field: Vec<Vec<&crate::planner::Interval>> = (0..n)
            .map(|i| {
                let mut iv: Vec<_> = self.plan.bounds[i].iter().collect();
                if !spec.fields[i].1 {
                    iv.reverse();
                }
                iv
            })
            .collect();
        // Cartesian product of the leading intervals, in key order.
        let mut combos: Vec<Vec<&crate::planner::Interval>> = vec![Vec::new()];
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
        let with_ff = |mut p: Vec<u8>| {
            p.push(0xFF);
            p
        };
        let mut ranges: Vec<EntryRange> = combos
            .into_iter()
            .map(|combo| {
                if combo.is_empty() {
                    return (Bound::Unbounded, Bound::Unbounded);
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
                let lo = if lo_incl {
                    Bound::Included(lo)
                } else {
                    Bound::Excluded(with_ff(lo))
                };
                let hi = if hi_incl {
                    Bound::Included(with_ff(hi))
                } else {
                    Bound::Excluded(hi)
                };
                (lo, hi)
            })
            .collect();
        if !self.plan.forward {
            ranges.reverse();
        }
        ranges
    }

    /// Read up to [`READ_AHEAD`] more record ids, moving on to the next
    /// range when one runs out. Returns false at the end of the last range.
    fn refill(&mut self, index: &Index) -> bool {
        let Some(ranges) = &self.ranges else {
            return false;
        };
        while self.range < ranges.len() {
            if self.resume.is_none() {
                self.seeks += 1;
            }
            let (lo, hi) = &ranges[self.range];
            let (lo, hi) = match (&self.resume, self.plan.forward) {
                (None, _) => (as_ref(lo), as_ref(hi)),
                (Some(last), true) => (Bound::Excluded(last.as_slice()), as_ref(hi)),
                (Some(last), false) => (as_ref(lo), Bound::Excluded(last.as_slice())),
            };
            let mut read = Vec::with_capacity(READ_AHEAD);
            if self.plan.forward {
                read.extend(index.entries_between(lo, hi).take(READ_AHEAD));
            } else {
                read.extend(index.entries_between(lo, hi).rev().take(READ_AHEAD));
            }
            // The cache model: the index pages these entries are on.
            for e in &read {
                index.touch_entry(e);
            }
            let exhausted = read.len() < READ_AHEAD;
            self.ahead
                .extend(read.iter().map(|e| Index::entry_record_id(e)));
            self.resume = read.last().map(|e| e.to_vec());
            if exhausted {
                self.range += 1;
                self.resume = None;
            }
            if !self.ahead.is_empty() {
                return true;
            }
        }
        false
    }
}

/// An entry-level range of an index: (lower, upper).
type EntryRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// How many entries an index scan reads at a time. Small enough that a
/// losing candidate in the planner's trial reads little more than it is
/// worked; large enough that re-seeking costs nothing on long scans.
const READ_AHEAD: usize = 128;

fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(v) => Bound::Included(v.as_slice()),
        Bound::Excluded(v) => Bound::Excluded(v.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Stage for IxScan {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let started = self.c.start();
        let Some(index) = ctx.coll.indexes().get(self.plan.index) else {
            return Ok(self.finish(started, State::Eof));
        };
        if self.ranges.is_none() {
            self.ranges = Some(self.entry_ranges(index));
        }
        if self.plan.distinct {
            let state = self.distinct_step(index, ctx)?;
            return Ok(self.finish(started, state));
        }
        if self.ahead.is_empty() {
            self.refill(index);
        }
        let state = match self.ahead.pop_front() {
            None => State::Eof,
            Some(rid) => {
                self.c.keys_examined += 1;
                if self.multikey {
                    self.dups_tested += 1;
                    if !self.seen.insert(rid) {
                        self.dups_dropped += 1;
                        return Ok(self.finish(started, State::NeedTime));
                    }
                }
                // The key filter reads the key's values; on fields that are
                // not multikey they are the document's, read here without
                // counting a document examined (mongod reads no document).
                if let Some(f) = &self.key_filter
                    && let Some(raw) = ctx.coll.raw(rid)
                    && !record_matches(f, raw, ctx)?
                {
                    return Ok(self.finish(started, State::NeedTime));
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

    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document {
        let Some(index) = ctx.coll.indexes().get(self.plan.index) else {
            return doc! {"stage": "IXSCAN"};
        };
        let spec = &index.spec;
        let mut multikey_paths = Document::new();
        let mut bounds = Document::new();
        // A `min`/`max` scan is mongod's "simple range", whose bounds
        // `IndexBounds::toBSON` renders as an empty document.
        let simple_range = self.plan.key_range.is_some();
        for (i, (path, asc)) in spec.fields.iter().enumerate() {
            let paths: Vec<Bson> = index
                .multikey_paths()
                .get(i)
                .map(|p| p.iter().cloned().map(Bson::String).collect())
                .unwrap_or_default();
            multikey_paths.insert(path.clone(), paths);
            if simple_range {
                continue;
            }
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
        let mut fields = Document::new();
        if let Some(f) = &self.plan.key_filter {
            fields.insert("filter", super::super::explain::parsed_query(f.source()));
        }
        fields.extend(doc! {
            "keyPattern": spec.key.clone(),
            "indexName": spec.name.clone(),
        });
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
        });
        if self.plan.distinct {
            fields.extend(doc! {"direction": "forward", "indexBounds": bounds});
            return stage_doc(
                "DISTINCT_SCAN",
                fields,
                stats.then_some(&self.c),
                doc! {"keysExamined": self.c.keys_examined as i64},
                Vec::new(),
            );
        }
        if self.plan.count_scan {
            // COUNT_SCAN reports its one range as start and end keys.
            let (start, end) = count_scan_keys(&self.plan, &spec.fields);
            fields.insert(
                "indexBounds",
                doc! {
                    "startKey": start.0, "startKeyInclusive": start.1,
                    "endKey": end.0, "endKeyInclusive": end.1,
                },
            );
            return stage_doc(
                "COUNT_SCAN",
                fields,
                stats.then_some(&self.c),
                doc! {"keysExamined": self.c.keys_examined as i64},
                Vec::new(),
            );
        }
        fields.extend(doc! {
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

/// The start and end keys (with inclusiveness) of a one-range scan, in
/// index order.
fn count_scan_keys(
    plan: &IxScanPlan,
    fields: &[(String, bool)],
) -> ((Document, bool), (Document, bool)) {
    let mut start = Document::new();
    let mut end = Document::new();
    let (mut start_incl, mut end_incl) = (true, true);
    for (i, (path, asc)) in fields.iter().enumerate() {
        let Some(iv) = plan.bounds.get(i).and_then(|b| b.first()) else {
            continue;
        };
        let (lo, lo_incl, hi, hi_incl) = if *asc {
            (&iv.lo, iv.lo_incl, &iv.hi, iv.hi_incl)
        } else {
            (&iv.hi, iv.hi_incl, &iv.lo, iv.lo_incl)
        };
        start.insert(path.clone(), lo.clone());
        end.insert(path.clone(), hi.clone());
        start_incl &= lo_incl;
        end_incl &= hi_incl;
    }
    ((start, start_incl), (end, end_incl))
}

impl IxScan {
    /// DISTINCT_SCAN: the next key of the one range, then a seek past every
    /// key sharing its first field.
    fn distinct_step(&mut self, index: &Index, ctx: &Ctx<'_>) -> Result<State> {
        let Some((lo, hi)) = self.ranges.as_ref().and_then(|r| r.first()) else {
            return Ok(State::Eof);
        };
        let lo = match &self.resume {
            Some(r) => Bound::Excluded(r.as_slice()),
            None => as_ref(lo),
        };
        self.seeks += 1;
        let Some(entry) = index.entries_between(lo, as_ref(hi)).next() else {
            return Ok(State::Eof);
        };
        let rid = Index::entry_record_id(entry);
        index.touch_entry(entry);
        self.c.keys_examined += 1;
        // The first field's value, read from the document without counting
        // it (the key holds it): its encoding is the prefix to skip.
        let (path, asc) = &index.spec.fields[0];
        let parts: Vec<String> = path.split('.').map(str::to_string).collect();
        let value = match ctx.coll.doc(rid)? {
            Some(d) => crate::pipeline::get_dotted(&d, &parts)
                .cloned()
                .unwrap_or(Bson::Null),
            None => Bson::Null,
        };
        let mut prefix = Vec::new();
        keystring::append_value(&mut prefix, &value, index.spec.collation.as_ref());
        if !asc {
            for b in &mut prefix {
                *b = !*b;
            }
        }
        prefix.push(0xFF);
        self.resume = Some(prefix);
        Ok(State::Advanced(Member {
            rid,
            doc: None,
            position: None,
        }))
    }

    fn finish(&mut self, started: super::Timer, state: State) -> State {
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

impl Stage for IdHack {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let (id, done) = (&self.id, &mut self.done);
        let mut found = false;
        let mut read = 0;
        let state = counted(&mut self.c, || {
            if *done {
                return Ok(State::Eof);
            }
            *done = true;
            match ctx.coll.find_by_id(id) {
                Some(rid) => match ctx.coll.raw(rid) {
                    Some(raw) => {
                        found = true;
                        ctx.coll.touch_id_entry(id, rid);
                        ctx.coll.touch_record(rid);
                        read = raw.as_bytes().len() as u64;
                        match check_raw(ctx, rid, raw)? {
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
            self.c.bytes_examined += read;
        }
        state
    }

    fn explain(&self, _ctx: &Ctx<'_>, stats: bool) -> Document {
        stage_doc(
            "IDHACK",
            Document::new(),
            stats.then_some(&self.c),
            doc! {
                "keysExamined": self.c.keys_examined as i64,
                "docsExamined": self.c.docs_examined as i64,
                "docBytesExamined": self.c.bytes_examined as i64,
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
