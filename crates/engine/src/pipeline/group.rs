//! Grouping stages: `$group` and its accumulators, and the stages mongod
//! defines in terms of it (`$bucket`, `$bucketAuto`, `$sortByCount`).
//!
//! Groups are kept in first-seen order (mongod's order is unspecified; a
//! stable order makes lessons reproducible), keyed by mongod's value
//! comparison so that `1`, `1.0` and `NumberLong(1)` share a group.

use std::cmp::Ordering;
use std::collections::HashMap;

use bson::{Bson, Document};

use super::Ctx;
use crate::collation::Collation;
use crate::error::Result;
use crate::expr::{Expr, Num, Vars, add_values, err, merge_objects, type_name};
use crate::keystring;
use crate::limits;
use crate::sort::SortSpec;
use crate::value;

#[derive(Debug, Clone, Copy, PartialEq)]
enum AccOp {
    Sum,
    Avg,
    Min,
    Max,
    First,
    Last,
    Push,
    AddToSet,
    Count,
    MergeObjects,
    StdDevPop,
    StdDevSamp,
    Top,
    Bottom,
    TopN,
    BottomN,
    FirstN,
    LastN,
    MaxN,
    MinN,
}

/// One accumulator: its operator, the expression it accumulates, and for
/// the `N`/`top` family the `n` and `sortBy` arguments.
#[derive(Debug, Clone)]
pub(super) struct Acc {
    op: AccOp,
    arg: Expr,
    /// `arg` cannot fail to evaluate ([`Expr::cannot_fail`]).
    infallible: bool,
    n: Option<Expr>,
    sort: Option<SortSpec>,
}

fn parse_acc(field: &str, spec: &Bson) -> Result<Acc> {
    let Bson::Document(d) = spec else {
        return Err(err(
            40234,
            format!("The field '{field}' must be an accumulator object"),
        ));
    };
    if d.len() != 1 {
        return Err(err(
            40238,
            format!("The field '{field}' must specify one accumulator"),
        ));
    }
    let Some((name, arg)) = d.iter().next() else {
        return Err(err(
            40238,
            format!("The field '{field}' must specify one accumulator"),
        ));
    };
    let op = match name.as_str() {
        "$sum" => AccOp::Sum,
        "$avg" => AccOp::Avg,
        "$min" => AccOp::Min,
        "$max" => AccOp::Max,
        "$first" => AccOp::First,
        "$last" => AccOp::Last,
        "$push" => AccOp::Push,
        "$addToSet" => AccOp::AddToSet,
        "$count" => AccOp::Count,
        "$mergeObjects" => AccOp::MergeObjects,
        "$stdDevPop" => AccOp::StdDevPop,
        "$stdDevSamp" => AccOp::StdDevSamp,
        "$top" => AccOp::Top,
        "$bottom" => AccOp::Bottom,
        "$topN" => AccOp::TopN,
        "$bottomN" => AccOp::BottomN,
        "$firstN" => AccOp::FirstN,
        "$lastN" => AccOp::LastN,
        "$maxN" => AccOp::MaxN,
        "$minN" => AccOp::MinN,
        "$accumulator" | "$median" | "$percentile" => {
            return Err(crate::error::EngineError::not_implemented(format!(
                "the {name} accumulator"
            )));
        }
        other => {
            return Err(err(15952, format!("unknown group operator '{other}'")));
        }
    };
    match op {
        AccOp::Count => {
            if !matches!(arg, Bson::Document(a) if a.is_empty()) {
                return Err(err(40237, "$count takes no arguments, i.e. $count:{}"));
            }
            Ok(Acc {
                op,
                arg: Expr::Literal(Bson::Int32(1)),
                infallible: true,
                n: None,
                sort: None,
            })
        }
        AccOp::Top
        | AccOp::Bottom
        | AccOp::TopN
        | AccOp::BottomN
        | AccOp::FirstN
        | AccOp::LastN
        | AccOp::MaxN
        | AccOp::MinN => {
            let Bson::Document(a) = arg else {
                return Err(err(
                    5788001,
                    format!("specification must be an object; found {arg}"),
                ));
            };
            let takes_sort = matches!(
                op,
                AccOp::Top | AccOp::Bottom | AccOp::TopN | AccOp::BottomN
            );
            let takes_n = !matches!(op, AccOp::Top | AccOp::Bottom);
            let value_key = if takes_sort { "output" } else { "input" };
            for k in a.keys() {
                let ok = k == value_key || (takes_n && k == "n") || (takes_sort && k == "sortBy");
                if !ok {
                    return Err(err(5787901, format!("Unknown argument for '{name}': {k}")));
                }
            }
            let value = a.get(value_key).ok_or_else(|| {
                err(
                    5788004,
                    format!("{name} requires '{value_key}' to be specified"),
                )
            })?;
            let n = if takes_n {
                let nv = a
                    .get("n")
                    .ok_or_else(|| err(5787906, format!("Missing value for 'n' in {name}")))?;
                Some(Expr::parse(nv)?)
            } else {
                None
            };
            let sort = if takes_sort {
                match a.get("sortBy") {
                    Some(Bson::Document(s)) => Some(SortSpec::parse(s)?),
                    _ => {
                        return Err(err(
                            5788005,
                            format!("Missing value for 'sortBy' in {name}"),
                        ));
                    }
                }
            } else {
                None
            };
            let arg = Expr::parse(value)?;
            Ok(Acc {
                op,
                infallible: arg.cannot_fail(),
                arg,
                n,
                sort,
            })
        }
        _ => {
            if let Bson::Array(items) = arg
                && (items.len() != 1 || op == AccOp::Push)
            {
                return Err(err(
                    40237,
                    format!("The {name} accumulator is a unary operator"),
                ));
            }
            let arg = match arg {
                Bson::Array(items) => Expr::parse(&items[0])?,
                other => Expr::parse(other)?,
            };
            Ok(Acc {
                op,
                infallible: arg.cannot_fail(),
                arg,
                n: None,
                sort: None,
            })
        }
    }
}

/// The memory mongod counts for a value an accumulator keeps.
fn held(v: &Option<Bson>) -> u64 {
    v.as_ref().map_or(0, limits::approx_size)
}

/// Values collected for one accumulator of one group.
#[derive(Debug, Default, Clone)]
struct Collected {
    values: Vec<Option<Bson>>,
    /// The memory mongod would count for this accumulator: the values a
    /// `$push`, `$addToSet` or n-accumulator keeps, the value `$first`,
    /// `$last`, `$min` or `$max` keeps, and so on (every accumulator but the
    /// running totals).
    bytes: u64,
    /// For the `$top`/`$bottom` family, each value kept, encoded after the
    /// sort values of the document it came from ([`ranked`]).
    ranked: Vec<Box<[u8]>>,
    /// Whether `ranked` has been trimmed: its first `n` values are then
    /// the best so far, in order ([`Acc::outranked`]).
    trimmed: bool,
    /// Boxed, as `best` is: a `Bson` is over 100 bytes, and a group keeps
    /// one `Collected` per accumulator, most of which use neither.
    n: Option<Box<Bson>>,
    /// What the reducing accumulators keep instead of their values: the
    /// running total (`$sum`, `$count`), count, total and whether a decimal
    /// was seen (`$avg`), the best value so far (`$min`, `$max`).
    sum: Option<Num>,
    avg: (usize, f64, bool),
    best: Option<Box<Bson>>,
    /// `$push`'s values, encoded as they come (a million pushed documents
    /// held decoded took several times their BSON size).
    pushed: crate::codec::ArrayBuilder,
}

impl Acc {
    fn collect(&self, state: &mut Collected, doc: &Document, vars: &Vars) -> Result<()> {
        if let Some(spec) = &self.sort {
            return self.collect_ranked(spec, state, doc, vars);
        }
        let v = self.arg.eval(doc, vars)?;
        if state.n.is_none()
            && let Some(n) = &self.n
        {
            state.n = n.eval(doc, vars)?.map(Box::new);
        }
        if let Some(value) = &v {
            let keeps = match self.op {
                AccOp::Push => Some(("$push", &limits::PUSH_BYTES)),
                AccOp::AddToSet => Some(("$addToSet", &limits::ADD_TO_SET_BYTES)),
                _ => None,
            };
            if let Some((name, limit)) = keeps {
                state.bytes += limits::approx_size(value);
                if state.bytes > limit.get() {
                    return Err(limits::accumulator_too_big(name, limit.get()));
                }
            }
        }
        // The reducing accumulators keep one running value, not every
        // input's (a `$sum: 1` over a million documents held a million).
        match self.op {
            AccOp::Sum | AccOp::Count => {
                if let Some(v) = &v {
                    state.sum = Some(add_values(state.sum.unwrap_or(Num::Int(0)), v));
                }
            }
            AccOp::Avg => {
                if let Some(x) = v.as_ref().and_then(Num::from_bson) {
                    state.avg.0 += 1;
                    state.avg.1 += x.f();
                    state.avg.2 |= matches!(x, Num::Dec(_));
                }
            }
            AccOp::Min | AccOp::Max => {
                let want = if self.op == AccOp::Min {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                if let Some(v) = v.filter(|v| !matches!(v, Bson::Null | Bson::Undefined))
                    && state
                        .best
                        .as_ref()
                        .is_none_or(|b| value::compare(&v, b, vars.collation()) == want)
                {
                    state.bytes = limits::approx_size(&v);
                    state.best = Some(Box::new(v));
                }
            }
            AccOp::First => {
                if state.values.is_empty() {
                    state.bytes = held(&v);
                    state.values.push(v);
                }
            }
            AccOp::Last => {
                state.bytes = held(&v);
                state.values.clear();
                state.values.push(v);
            }
            AccOp::Push => {
                if let Some(v) = &v {
                    state.pushed.push(v).map_err(|e| {
                        crate::error::EngineError::new(
                            crate::error::ErrorCode::INTERNAL_ERROR,
                            format!("$push: {e}"),
                        )
                    })?;
                }
            }
            AccOp::FirstN => {
                // The first n are all it returns: the rest is not kept.
                if self.kept(state).is_none_or(|n| state.values.len() < n) {
                    state.bytes += held(&v);
                    state.values.push(v);
                }
            }
            AccOp::LastN | AccOp::MaxN | AccOp::MinN => {
                state.bytes += held(&v);
                state.values.push(v);
                let before = state.values.len();
                self.bound(state, vars.collation());
                if state.values.len() < before {
                    state.bytes = state.values.iter().map(held).sum();
                }
            }
            _ => {
                // (`$addToSet` counted its value above.)
                if self.op != AccOp::AddToSet {
                    state.bytes += held(&v);
                }
                state.values.push(v);
            }
        }
        Ok(())
    }

    /// [`Acc::collect`] for the `$top`/`$bottom` family. The document's
    /// sort values are encoded first; when the values kept already
    /// outrank it ([`Acc::outranked`]) and its output cannot fail to
    /// evaluate, it is passed over without evaluating or encoding that
    /// output: `finish` could never return it. An output that can fail is
    /// evaluated for every document, as mongod evaluates it, so its errors
    /// are the same.
    fn collect_ranked(
        &self,
        spec: &SortSpec,
        state: &mut Collected,
        doc: &Document,
        vars: &Vars,
    ) -> Result<()> {
        let infallible = self.infallible;
        let early = if infallible {
            None
        } else {
            Some(self.arg.eval(doc, vars)?)
        };
        if state.n.is_none()
            && let Some(n) = &self.n
        {
            state.n = n.eval(doc, vars)?.map(Box::new);
        }
        let key = spec.encoded_key(doc, vars.collation());
        if infallible && self.outranked(state, &key) {
            return Ok(());
        }
        let v = match early {
            Some(v) => v,
            None => self.arg.eval(doc, vars)?,
        };
        let entry = ranked(&key, v)?;
        state.bytes += entry.len() as u64;
        state.ranked.push(entry);
        let before = state.ranked.len();
        self.bound(state, vars.collation());
        if state.ranked.len() < before {
            state.bytes = state.ranked.iter().map(|r| r.len() as u64).sum();
        }
        Ok(())
    }

    /// Whether a document whose sort values encode as `key` can no longer
    /// be among the values a `$top`-family accumulator returns. Once
    /// [`Acc::bound`] has trimmed the state, its first `n` values are the
    /// best so far, in order, and stay in place until the next trim: for
    /// `$top`/`$topN` a key not below the n-th loses (a tie goes to the
    /// earlier document, as the stable sort orders them), for
    /// `$bottom`/`$bottomN` a key below the first of them loses (a tie
    /// goes to the later one).
    fn outranked(&self, state: &Collected, key: &[u8]) -> bool {
        if !state.trimmed {
            return false;
        }
        let Some(n) = self.kept(state) else {
            return false;
        };
        match self.op {
            AccOp::Top | AccOp::TopN => state
                .ranked
                .get(n.saturating_sub(1))
                .is_some_and(|worst| key >= keystring::key_of(worst)),
            AccOp::Bottom | AccOp::BottomN => state
                .ranked
                .first()
                .is_some_and(|least| key < keystring::key_of(least)),
            _ => false,
        }
    }

    /// How many values the n-accumulators return, once `n` is known and
    /// valid (an invalid one fails when the group is finished); 1 for
    /// `$top` and `$bottom`.
    fn kept(&self, state: &Collected) -> Option<usize> {
        match self.op {
            AccOp::Top | AccOp::Bottom => Some(1),
            _ => take_n(state.n.as_deref()).ok(),
        }
    }

    /// Keep an n-accumulator's state within a small multiple of the `n`
    /// values it returns, as mongod's does: once it holds twice as many
    /// (and at least 16), drop those that [`Acc::finish`] could no longer
    /// return. Its sorts are stable, like `finish`'s, and the state keeps
    /// the input order of equal values, so `finish` returns exactly what
    /// it would have returned from every value.
    fn bound(&self, state: &mut Collected, coll: Option<&Collation>) {
        let Some(n) = self.kept(state) else {
            return;
        };
        let at = n.saturating_mul(2).max(16);
        match self.op {
            AccOp::LastN if state.values.len() >= at => {
                let extra = state.values.len() - n;
                state.values.drain(..extra);
            }
            AccOp::MaxN | AccOp::MinN if state.values.len() >= at => {
                // What `finish` keeps: the present values, best first.
                state
                    .values
                    .retain(|v| !matches!(v, None | Some(Bson::Null | Bson::Undefined)));
                state.values.sort_by(|a, b| {
                    let (Some(a), Some(b)) = (a, b) else {
                        return Ordering::Equal;
                    };
                    let c = value::compare(a, b, coll);
                    if self.op == AccOp::MaxN {
                        c.reverse()
                    } else {
                        c
                    }
                });
                state.values.truncate(n);
            }
            AccOp::Top | AccOp::Bottom | AccOp::TopN | AccOp::BottomN
                if state.ranked.len() >= at =>
            {
                state
                    .ranked
                    .sort_by(|a, b| keystring::key_of(a).cmp(keystring::key_of(b)));
                if matches!(self.op, AccOp::Top | AccOp::TopN) {
                    state.ranked.truncate(n);
                } else {
                    let extra = state.ranked.len() - n;
                    state.ranked.drain(..extra);
                }
                state.trimmed = true;
            }
            _ => {}
        }
    }

    fn finish(&self, state: Collected, coll: Option<&Collation>) -> Result<Bson> {
        let present = || state.values.iter().flatten();
        Ok(match self.op {
            AccOp::Sum | AccOp::Count => state.sum.unwrap_or(Num::Int(0)).to_bson(),
            AccOp::Avg => {
                let (n, total, dec) = state.avg;
                if n == 0 {
                    Bson::Null
                } else if dec {
                    Num::Dec(total / n as f64).to_bson()
                } else {
                    Bson::Double(total / n as f64)
                }
            }
            AccOp::Min | AccOp::Max => state.best.map_or(Bson::Null, |b| *b),
            AccOp::First => state
                .values
                .first()
                .cloned()
                .flatten()
                .unwrap_or(Bson::Null),
            AccOp::Last => state.values.last().cloned().flatten().unwrap_or(Bson::Null),
            AccOp::Push => Bson::Array(state.pushed.finish().map_err(|e| {
                crate::error::EngineError::new(
                    crate::error::ErrorCode::INTERNAL_ERROR,
                    format!("$push: {e}"),
                )
            })?),
            AccOp::AddToSet => {
                let mut out: Vec<Bson> = Vec::new();
                for v in present() {
                    if !out.iter().any(|o| value::values_equal(o, v, coll)) {
                        out.push(v.clone());
                    }
                }
                Bson::Array(out)
            }
            AccOp::MergeObjects => merge_objects(state.values.iter().map(Option::as_ref))?
                .unwrap_or_else(|| Bson::Document(Document::new())),
            AccOp::StdDevPop | AccOp::StdDevSamp => {
                let xs: Vec<f64> = present().filter_map(Num::from_bson).map(Num::f).collect();
                let sample = self.op == AccOp::StdDevSamp;
                let n = xs.len();
                if n == 0 || (sample && n == 1) {
                    Bson::Null
                } else {
                    let mean = xs.iter().sum::<f64>() / n as f64;
                    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
                    Bson::Double((ss / (if sample { n - 1 } else { n }) as f64).sqrt())
                }
            }
            AccOp::Top | AccOp::Bottom | AccOp::TopN | AccOp::BottomN => {
                let mut ranked = state.ranked;
                ranked.sort_by(|a, b| keystring::key_of(a).cmp(keystring::key_of(b)));
                let keep = match self.op {
                    AccOp::Top => ranked.get(..1),
                    AccOp::Bottom => ranked.get(ranked.len().saturating_sub(1)..),
                    AccOp::TopN => ranked.get(..take_n(state.n.as_deref())?.min(ranked.len())),
                    _ => ranked.get(ranked.len().saturating_sub(take_n(state.n.as_deref())?)..),
                };
                let vals = keep
                    .unwrap_or_default()
                    .iter()
                    .map(|r| ranked_value(r))
                    .collect::<Result<Vec<Bson>>>()?;
                match self.op {
                    AccOp::Top | AccOp::Bottom => vals.into_iter().next().unwrap_or(Bson::Null),
                    _ => Bson::Array(vals),
                }
            }
            AccOp::FirstN | AccOp::LastN => {
                let n = take_n(state.n.as_deref())?;
                let vals: Vec<Bson> = state
                    .values
                    .into_iter()
                    .map(|v| v.unwrap_or(Bson::Null))
                    .collect();
                if self.op == AccOp::FirstN {
                    Bson::Array(vals.into_iter().take(n).collect())
                } else {
                    let skip = vals.len().saturating_sub(n);
                    Bson::Array(vals.into_iter().skip(skip).collect())
                }
            }
            AccOp::MaxN | AccOp::MinN => {
                let n = take_n(state.n.as_deref())?;
                let mut vals: Vec<Bson> = present()
                    .filter(|v| !matches!(v, Bson::Null | Bson::Undefined))
                    .cloned()
                    .collect();
                vals.sort_by(|a, b| {
                    let c = value::compare(a, b, coll);
                    if self.op == AccOp::MaxN {
                        c.reverse()
                    } else {
                        c
                    }
                });
                vals.truncate(n);
                Bson::Array(vals)
            }
        })
    }
}

/// One value a `$top`-family accumulator keeps, in one allocation
/// ([`keystring::keyed`]): the document's sort values encoded as an index
/// key ([`SortSpec::encoded_key`], whose byte order is the `sortBy`
/// order), then the value as the BSON document `{"": value}` (a missing
/// value is null, as `finish` returns it).
fn ranked(key: &[u8], v: Option<Bson>) -> Result<Box<[u8]>> {
    let mut wrapper = Document::new();
    wrapper.insert("", v.unwrap_or(Bson::Null));
    keystring::keyed(key, |out| crate::codec::encode_into(&wrapper, out)).map_err(|e| {
        crate::error::EngineError::new(
            crate::error::ErrorCode::INTERNAL_ERROR,
            format!("$top: {e}"),
        )
    })
}

/// The value of a [`ranked`] value.
fn ranked_value(item: &[u8]) -> Result<Bson> {
    let bytes = keystring::payload_of(item);
    let raw = bson::RawDocument::from_bytes(bytes).map_err(|e| {
        crate::error::EngineError::new(
            crate::error::ErrorCode::INTERNAL_ERROR,
            format!("corrupt $top value: {e}"),
        )
    })?;
    let mut doc = crate::catalog::to_document(raw)?;
    Ok(doc.remove("").unwrap_or(Bson::Null))
}

fn take_n(n: Option<&Bson>) -> Result<usize> {
    match n {
        Some(v) if value::is_number(v) => match value::as_i64(v) {
            Some(x) if x > 0 => Ok(x as usize),
            _ => Err(err(
                5787908,
                format!("'n' must be greater than 0, found {v}"),
            )),
        },
        other => Err(err(
            5787902,
            format!(
                "Value for 'n' must be of integral type, but found {}",
                type_name(other)
            ),
        )),
    }
}

/// Groups keyed by mongod's value comparison, in first-seen order, found
/// through a hash table as mongod's `$group` finds them. A key is hashed by
/// its index-key encoding ([`keystring`]), which is the same for values
/// that compare equal (`1`, `1.0`, `NumberLong(1)` and `NumberDecimal("1")`
/// alike, strings through the collation's key); since some values that
/// differ encode alike (decimals go through a double, DBPointers encode
/// their type only), every candidate is confirmed with [`value::compare`].
struct Groups {
    keys: Vec<Bson>,
    /// Each group's accumulator states, one after another (group `g`'s
    /// `i`-th accumulator at `g * accumulators + i`): no vector per group.
    states: Vec<Collected>,
    /// The first group of each hash, then each group's next one of the same
    /// hash (`NONE` ends a chain): some 28 bytes a group.
    heads: HashMap<u64, usize>,
    next: Vec<usize>,
    /// The key being looked up, encoded (one buffer for every input).
    encoded: Vec<u8>,
}

const NONE: usize = usize::MAX;

impl Groups {
    fn new() -> Self {
        Groups {
            keys: Vec::new(),
            states: Vec::new(),
            heads: HashMap::new(),
            next: Vec::new(),
            encoded: Vec::new(),
        }
    }

    fn slot(&mut self, key: Bson, n_accs: usize, coll: Option<&Collation>) -> usize {
        let keys = &self.keys;
        let equal = |i: usize| value::compare(&keys[i], &key, coll) == Ordering::Equal;
        self.encoded.clear();
        keystring::append_value(&mut self.encoded, &key, coll);
        let hash = xxhash_rust::xxh3::xxh3_64(&self.encoded);
        let head = self.heads.get(&hash).copied().unwrap_or(NONE);
        let mut i = head;
        while i != NONE {
            if equal(i) {
                return i;
            }
            i = self.next[i];
        }
        let idx = self.keys.len();
        self.heads.insert(hash, idx);
        self.next.push(head);
        self.keys.push(key);
        self.states
            .extend(std::iter::repeat_with(Collected::default).take(n_accs));
        idx
    }
}

/// Accumulators running over documents grouped by a key, fed one document
/// at a time (so a `$group` need not hold its input), within mongod's
/// `$group` memory limit.
pub(crate) struct Grouping {
    groups: Groups,
    /// mongod's `$group` memory: every group's key plus what its
    /// accumulators keep, bounded unless the client allowed disk use.
    memory: u64,
    limit: u64,
    bounded: bool,
    /// `memory`, counted against the operation's budget as well (with
    /// `allowDiskUse`, mongod spills past `limit`; this engine keeps the
    /// groups in memory, up to the operation's budget).
    held: limits::Held,
}

impl Grouping {
    fn new() -> Self {
        Grouping {
            groups: Groups::new(),
            memory: 0,
            limit: limits::GROUP_MEMORY.get(),
            bounded: !limits::allow_disk_use(),
            held: limits::Held::new(),
        }
    }

    /// Add one document, grouped under `k`.
    fn add(&mut self, k: Bson, d: &Document, accs: &[(String, Acc)], ctx: &Ctx<'_>) -> Result<()> {
        limits::checkpoint()?;
        let groups = &mut self.groups;
        let key_size = limits::approx_size(&k);
        let before = groups.keys.len();
        let slot = groups.slot(k, accs.len(), ctx.collation());
        if groups.keys.len() > before {
            self.memory += key_size;
        }
        for (i, (_, acc)) in accs.iter().enumerate() {
            let state = &mut groups.states[slot * accs.len() + i];
            let had = state.bytes;
            acc.collect(state, d, ctx.vars)?;
            self.memory = (self.memory - had) + state.bytes;
        }
        if self.bounded && self.memory > self.limit {
            return Err(limits::blocking_stage_too_big(
                "Exceeded memory limit for $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.",
            ));
        }
        self.held.set(self.memory)
    }

    /// Each group's key and accumulated fields, in first-seen order.
    fn finish(self, accs: &[(String, Acc)], ctx: &Ctx<'_>) -> Result<Vec<(Bson, Document)>> {
        let mut out = Vec::with_capacity(self.groups.keys.len());
        self.finish_each(accs, ctx, &mut |k, fields| {
            out.push((k, fields));
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Grouping::finish`], handing each group to `each` as it is
    /// finished (and letting go of its state), in the same order.
    fn finish_each(
        self,
        accs: &[(String, Acc)],
        ctx: &Ctx<'_>,
        each: &mut dyn FnMut(Bson, Document) -> Result<()>,
    ) -> Result<()> {
        let coll = ctx.collation();
        let groups = self.groups;
        let mut states = groups.states.into_iter();
        for k in groups.keys {
            limits::checkpoint()?;
            let mut fields = Document::new();
            for ((name, acc), state) in accs.iter().zip(states.by_ref().take(accs.len())) {
                fields.insert(name.clone(), acc.finish(state, coll)?);
            }
            each(k, fields)?;
        }
        Ok(())
    }
}

/// Run accumulators over documents grouped by `key`.
fn group_docs(
    docs: &[Document],
    key: &dyn Fn(&Document) -> Result<Bson>,
    accs: &[(String, Acc)],
    ctx: &Ctx<'_>,
) -> Result<Vec<(Bson, Document)>> {
    let mut grouping = Grouping::new();
    for d in docs {
        grouping.add(key(d)?, d, accs, ctx)?;
    }
    grouping.finish(accs, ctx)
}

fn parse_accs(spec: &Document, skip: &[&str]) -> Result<Vec<(String, Acc)>> {
    let mut accs = Vec::new();
    for (k, v) in spec {
        if skip.contains(&k.as_str()) {
            continue;
        }
        if k.contains('.') {
            return Err(err(
                40235,
                format!("The field name '{k}' cannot contain '.'"),
            ));
        }
        if k.starts_with('$') {
            return Err(err(
                40236,
                format!("The field name '{k}' cannot be an operator name"),
            ));
        }
        accs.push((k.clone(), parse_acc(k, v)?));
    }
    Ok(accs)
}

/// A parsed `$group`.
#[derive(Debug, Clone)]
pub(super) struct Group {
    id: Expr,
    accs: Vec<(String, Acc)>,
}

impl Group {
    pub(super) fn parse(spec: &Document) -> Result<Group> {
        let id = spec
            .get("_id")
            .ok_or_else(|| err(15955, "a group specification must include an _id"))?;
        Ok(Group {
            id: Expr::parse(id)?,
            accs: parse_accs(spec, &["_id"])?,
        })
    }

    pub(super) fn run(&self, docs: Vec<Document>, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
        // Each input is let go once added: the groups grow as the input
        // shrinks.
        let mut sink = self.sink();
        for d in docs {
            sink.add(&d, ctx)?;
        }
        sink.finish(ctx)
    }

    /// This `$group` as a sink fed one document at a time.
    pub(super) fn sink(&self) -> GroupSink<'_> {
        GroupSink {
            group: self,
            grouping: Grouping::new(),
        }
    }
}

/// A `$group` being fed its input one document at a time.
pub(crate) struct GroupSink<'g> {
    group: &'g Group,
    grouping: Grouping,
}

impl GroupSink<'_> {
    /// Add one input document.
    pub(crate) fn add(&mut self, d: &Document, ctx: &Ctx<'_>) -> Result<()> {
        let k = self.group.id.eval_or_null(d, ctx.vars)?;
        self.grouping.add(k, d, &self.group.accs, ctx)
    }

    /// The groups, as `$group` outputs them.
    pub(crate) fn finish(self, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
        let mut out = Vec::new();
        self.finish_each(ctx, &mut |d| {
            out.push(d);
            Ok(())
        })?;
        Ok(out)
    }

    /// The groups' documents, each handed to `each` as it is finished: a
    /// caller that passes them on (to stages that stream, then a writer)
    /// never holds them all.
    pub(crate) fn finish_each(
        self,
        ctx: &Ctx<'_>,
        each: &mut dyn FnMut(Document) -> Result<()>,
    ) -> Result<()> {
        self.grouping
            .finish_each(&self.group.accs, ctx, &mut |k, fields| {
                let mut d = Document::new();
                d.insert("_id", k);
                d.extend(fields);
                each(d)
            })
    }
}

/// `$sortByCount`: group by the expression, count, most frequent first.
pub(super) fn sort_by_count(e: &Expr, docs: Vec<Document>, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
    let accs = vec![(
        "count".to_string(),
        Acc {
            op: AccOp::Sum,
            arg: Expr::Literal(Bson::Int32(1)),
            infallible: true,
            n: None,
            sort: None,
        },
    )];
    let key = |d: &Document| e.eval_or_null(d, ctx.vars);
    let mut out: Vec<Document> = group_docs(&docs, &key, &accs, ctx)?
        .into_iter()
        .map(|(k, fields)| {
            let mut d = Document::new();
            d.insert("_id", k);
            d.extend(fields);
            d
        })
        .collect();
    out.sort_by(|a, b| {
        let ca = a.get("count").and_then(value::as_i64).unwrap_or(0);
        let cb = b.get("count").and_then(value::as_i64).unwrap_or(0);
        cb.cmp(&ca)
    });
    Ok(out)
}

fn default_output() -> Vec<(String, Acc)> {
    vec![(
        "count".to_string(),
        Acc {
            op: AccOp::Sum,
            arg: Expr::Literal(Bson::Int32(1)),
            infallible: true,
            n: None,
            sort: None,
        },
    )]
}

fn parse_group_by(v: Option<&Bson>, stage: &str, code: i32) -> Result<Expr> {
    let ok = match v {
        Some(Bson::String(s)) => s.starts_with('$'),
        Some(Bson::Document(d)) => d.keys().next().is_some_and(|k| k.starts_with('$')),
        _ => false,
    };
    match v {
        Some(g) if ok => Expr::parse(g),
        other => Err(err(
            code,
            format!(
                "The {stage} 'groupBy' field must be defined as a $-prefixed path or an expression, but found: {}.",
                other.map_or("missing".to_string(), |b| b.to_string())
            ),
        )),
    }
}

fn parse_output(v: Option<&Bson>, stage: &str) -> Result<Vec<(String, Acc)>> {
    match v {
        None => Ok(default_output()),
        Some(Bson::Document(d)) => parse_accs(d, &[]),
        Some(other) => Err(err(
            40196,
            format!(
                "The {stage} 'output' field must be an object, but found type: {}.",
                value::type_alias(other)
            ),
        )),
    }
}

/// A parsed `$bucket`.
#[derive(Debug, Clone)]
pub(super) struct Bucket {
    group_by: Expr,
    boundaries: Vec<Bson>,
    default: Option<Bson>,
    output: Vec<(String, Acc)>,
}

impl Bucket {
    pub(super) fn parse(spec: &Document) -> Result<Bucket> {
        for k in spec.keys() {
            if !matches!(k.as_str(), "groupBy" | "boundaries" | "default" | "output") {
                return Err(err(40197, format!("Unrecognized option to $bucket: {k}.")));
            }
        }
        if !spec.contains_key("groupBy") || !spec.contains_key("boundaries") {
            return Err(err(
                40198,
                "$bucket requires 'groupBy' and 'boundaries' to be specified.",
            ));
        }
        let group_by = parse_group_by(spec.get("groupBy"), "$bucket", 40202)?;
        let boundaries = match spec.get("boundaries") {
            Some(Bson::Array(b)) => b.clone(),
            Some(other) => {
                return Err(err(
                    40200,
                    format!(
                        "The $bucket 'boundaries' field must be an array, but found type: {}.",
                        value::type_alias(other)
                    ),
                ));
            }
            None => Vec::new(),
        };
        if boundaries.len() < 2 {
            return Err(err(
                40192,
                format!(
                    "The $bucket 'boundaries' field must have at least 2 values, but found {} value(s).",
                    boundaries.len()
                ),
            ));
        }
        for (i, w) in boundaries.windows(2).enumerate() {
            if value::canonical_rank(&w[0]) != value::canonical_rank(&w[1]) {
                return Err(err(
                    40193,
                    format!(
                        "All values in the the 'boundaries' option to $bucket must have the same type. Found conflicting types {} and {}.",
                        value::type_alias(&w[0]),
                        value::type_alias(&w[1])
                    ),
                ));
            }
            if value::compare(&w[0], &w[1], None) != Ordering::Less {
                return Err(err(
                    40194,
                    format!(
                        "The 'boundaries' option to $bucket must be sorted in ascending order, but elements {} and {} are not in ascending order ({} is not less than {}).",
                        i,
                        i + 1,
                        w[0],
                        w[1]
                    ),
                ));
            }
        }
        let default = spec.get("default").cloned();
        if let Some(d) = &default {
            let lo = &boundaries[0];
            let hi = &boundaries[boundaries.len() - 1];
            let same_type = value::canonical_rank(d) == value::canonical_rank(lo);
            if same_type
                && value::compare(d, lo, None) != Ordering::Less
                && value::compare(d, hi, None) == Ordering::Less
            {
                return Err(err(
                    40199,
                    "The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.",
                ));
            }
        }
        Ok(Bucket {
            group_by,
            boundaries,
            default,
            output: parse_output(spec.get("output"), "$bucket")?,
        })
    }

    pub(super) fn run(&self, docs: Vec<Document>, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
        let coll = ctx.collation();
        let key = |d: &Document| -> Result<Bson> {
            let v = self.group_by.eval_or_null(d, ctx.vars)?;
            for w in self.boundaries.windows(2) {
                if value::compare(&v, &w[0], coll) != Ordering::Less
                    && value::compare(&v, &w[1], coll) == Ordering::Less
                {
                    return Ok(w[0].clone());
                }
            }
            self.default.clone().ok_or_else(|| {
                err(
                    40066,
                    "$switch could not find a matching branch for an input, and no default was specified.",
                )
            })
        };
        let mut groups = group_docs(&docs, &key, &self.output, ctx)?;
        // Buckets come out in boundary order, the default bucket last.
        let rank = |k: &Bson| {
            self.boundaries
                .iter()
                .position(|b| value::values_equal(b, k, coll))
                .unwrap_or(usize::MAX)
        };
        groups.sort_by_key(|(k, _)| rank(k));
        Ok(groups
            .into_iter()
            .map(|(k, fields)| {
                let mut d = Document::new();
                d.insert("_id", k);
                d.extend(fields);
                d
            })
            .collect())
    }
}

/// A parsed `$bucketAuto` (no `granularity` support: Partial).
#[derive(Debug, Clone)]
pub(super) struct BucketAuto {
    group_by: Expr,
    buckets: usize,
    output: Vec<(String, Acc)>,
}

impl BucketAuto {
    pub(super) fn parse(spec: &Document) -> Result<BucketAuto> {
        for k in spec.keys() {
            if !matches!(k.as_str(), "groupBy" | "buckets" | "output" | "granularity") {
                return Err(err(
                    40245,
                    format!("Unrecognized option to $bucketAuto: {k}."),
                ));
            }
        }
        if spec.contains_key("granularity") {
            return Err(crate::error::EngineError::not_implemented(
                "$bucketAuto granularity",
            ));
        }
        let group_by = parse_group_by(spec.get("groupBy"), "$bucketAuto", 40239)?;
        let buckets = match spec.get("buckets").and_then(|b| {
            if value::is_number(b) {
                value::as_i64(b)
            } else {
                None
            }
        }) {
            Some(n) if n > 0 => n as usize,
            _ => {
                return Err(err(
                    40243,
                    "The $bucketAuto 'buckets' field must be greater than 0",
                ));
            }
        };
        Ok(BucketAuto {
            group_by,
            buckets,
            output: parse_output(spec.get("output"), "$bucketAuto")?,
        })
    }

    pub(super) fn run(&self, docs: Vec<Document>, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
        let coll = ctx.collation();
        let mut keyed: Vec<(Bson, Document)> = Vec::with_capacity(docs.len());
        for d in docs {
            let v = self.group_by.eval_or_null(&d, ctx.vars)?;
            keyed.push((v, d));
        }
        keyed.sort_by(|a, b| value::compare(&a.0, &b.0, coll));
        let n = keyed.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let per = n.div_ceil(self.buckets).max(1);
        let mut out = Vec::new();
        let mut i = 0;
        while i < n {
            let mut end = (i + per).min(n);
            // Equal values never straddle two buckets.
            while end < n && value::values_equal(&keyed[end - 1].0, &keyed[end].0, coll) {
                end += 1;
            }
            let min = keyed[i].0.clone();
            let max = if end < n {
                keyed[end].0.clone()
            } else {
                keyed[n - 1].0.clone()
            };
            let chunk: Vec<Document> = keyed[i..end].iter().map(|(_, d)| d.clone()).collect();
            let key = |_: &Document| Ok(Bson::Null);
            let grouped = group_docs(&chunk, &key, &self.output, ctx)?;
            let mut d = Document::new();
            d.insert("_id", bson::doc! {"min": min, "max": max});
            if let Some((_, fields)) = grouped.into_iter().next() {
                d.extend(fields);
            }
            out.push(d);
            i = end;
        }
        Ok(out)
    }
}
