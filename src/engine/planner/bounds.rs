//! Index bounds: the value intervals a filter's predicates allow on each
//! path, in mongod's notation (`"[5, 5]"`, `"(5, inf.0]"`, `"[\"a\", {})"`).
//!
//! Ranges are type-bracketed as mongod brackets them: `$gt: 5` scans the
//! numbers above 5 up to infinity and never strings, because a comparison
//! only matches values of the same canonical type.

use std::cmp::Ordering;

use bson::{Bson, Document, oid::ObjectId};

use super::{has_strings, index_friendly};
use crate::engine::collation::Collation;
use crate::engine::expr::Vars;
use crate::engine::filter::Filter;
use crate::engine::value;

/// One interval of values.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub lo: Bson,
    pub lo_incl: bool,
    pub hi: Bson,
    pub hi_incl: bool,
}

impl Interval {
    /// `[MinKey, MaxKey]`.
    pub fn all() -> Self {
        Interval {
            lo: Bson::MinKey,
            lo_incl: true,
            hi: Bson::MaxKey,
            hi_incl: true,
        }
    }

    fn point(v: &Bson) -> Self {
        Interval {
            lo: v.clone(),
            lo_incl: true,
            hi: v.clone(),
            hi_incl: true,
        }
    }

    /// Whether the interval holds a single value.
    pub fn is_point(&self) -> bool {
        self.lo_incl && self.hi_incl && value::compare(&self.lo, &self.hi, None) == Ordering::Equal
    }

    /// mongod's rendering; `reversed` for a descending key field or a
    /// backward scan, which lists the high end first.
    pub fn render(&self, reversed: bool) -> String {
        let (open, a, b, close) = if reversed {
            (
                if self.hi_incl { '[' } else { '(' },
                &self.hi,
                &self.lo,
                if self.lo_incl { ']' } else { ')' },
            )
        } else {
            (
                if self.lo_incl { '[' } else { '(' },
                &self.lo,
                &self.hi,
                if self.hi_incl { ']' } else { ')' },
            )
        };
        format!("{open}{}, {}{close}", render_value(a), render_value(b))
    }

    fn intersect(&self, other: &Interval, collation: Option<&Collation>) -> Option<Interval> {
        let (lo, lo_incl) = match value::compare(&self.lo, &other.lo, collation) {
            Ordering::Greater => (&self.lo, self.lo_incl),
            Ordering::Less => (&other.lo, other.lo_incl),
            Ordering::Equal => (&self.lo, self.lo_incl && other.lo_incl),
        };
        let (hi, hi_incl) = match value::compare(&self.hi, &other.hi, collation) {
            Ordering::Less => (&self.hi, self.hi_incl),
            Ordering::Greater => (&other.hi, other.hi_incl),
            Ordering::Equal => (&self.hi, self.hi_incl && other.hi_incl),
        };
        match value::compare(lo, hi, collation) {
            Ordering::Greater => None,
            Ordering::Equal if !(lo_incl && hi_incl) => None,
            _ => Some(Interval {
                lo: lo.clone(),
                lo_incl,
                hi: hi.clone(),
                hi_incl,
            }),
        }
    }
}

/// A value as mongod prints it in index bounds.
pub fn render_value(v: &Bson) -> String {
    match v {
        Bson::MinKey => "MinKey".into(),
        Bson::MaxKey => "MaxKey".into(),
        Bson::Null => "null".into(),
        Bson::Undefined => "undefined".into(),
        Bson::Int32(i) => i.to_string(),
        Bson::Int64(i) => i.to_string(),
        Bson::Double(d) if d.is_infinite() => {
            if *d > 0.0 {
                "inf.0".into()
            } else {
                "-inf.0".into()
            }
        }
        Bson::Double(d) if d.is_nan() => "nan.0".into(),
        Bson::Double(d) => {
            let s = d.to_string();
            if s.contains('.') || s.contains('e') {
                s
            } else {
                format!("{s}.0")
            }
        }
        Bson::Decimal128(d) => d.to_string(),
        Bson::String(s) | Bson::Symbol(s) => format!("{s:?}"),
        Bson::Boolean(b) => b.to_string(),
        Bson::ObjectId(o) => format!("ObjectId('{o}')"),
        Bson::DateTime(d) => format!("new Date({})", d.timestamp_millis()),
        Bson::Document(d) if d.is_empty() => "{}".into(),
        Bson::Array(a) if a.is_empty() => "[]".into(),
        Bson::Document(d) => {
            let fields: Vec<String> = d
                .iter()
                .map(|(k, v)| format!("{k}: {}", render_value(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        Bson::Array(a) => {
            let items: Vec<String> = a.iter().map(render_value).collect();
            format!("[ {} ]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// The interval `op v` allows, type-bracketed; `None` when the value's type
/// has no bracket we model (the predicate is then left to the filter).
fn range(op: &str, v: &Bson) -> Option<Interval> {
    if !index_friendly(v) {
        return None;
    }
    let (min, max, max_incl) = match v {
        _ if value::is_number(v) => (
            Bson::Double(f64::NEG_INFINITY),
            Bson::Double(f64::INFINITY),
            true,
        ),
        Bson::String(_) => (
            Bson::String(String::new()),
            Bson::Document(Document::new()),
            false,
        ),
        Bson::DateTime(_) => (
            Bson::DateTime(bson::DateTime::from_millis(i64::MIN)),
            Bson::DateTime(bson::DateTime::MAX),
            true,
        ),
        Bson::ObjectId(_) => (
            Bson::ObjectId(ObjectId::from_bytes([0; 12])),
            Bson::ObjectId(ObjectId::from_bytes([0xFF; 12])),
            true,
        ),
        Bson::Boolean(_) => (Bson::Boolean(false), Bson::Boolean(true), true),
        _ => return None,
    };
    Some(match op {
        "$gt" | "$gte" => Interval {
            lo: v.clone(),
            lo_incl: op == "$gte",
            hi: max,
            hi_incl: max_incl,
        },
        _ => Interval {
            lo: min,
            lo_incl: true,
            hi: v.clone(),
            hi_incl: op == "$lte",
        },
    })
}

/// One predicate on one path, as intervals.
#[derive(Debug, Clone)]
struct Pred {
    intervals: Vec<Interval>,
    strings: bool,
    /// Predicates of one `$elemMatch` share a group: they constrain the same
    /// array element, so their bounds may be intersected even on a multikey
    /// field.
    group: Option<usize>,
}

/// The indexable predicates of a filter, by path.
#[derive(Debug, Clone, Default)]
pub struct PathPredicates {
    preds: Vec<(String, Pred)>,
    /// Paths with a predicate that gave no bounds.
    inexact: Vec<String>,
    /// Whether every predicate became a bound (no `$or`, `$ne`, `$regex`…).
    pub all_exact: bool,
    /// Top-level equalities, for partial-index implication.
    eqs: Vec<(String, Bson)>,
    groups: usize,
    /// Per `$elemMatch` group, the path of the array it matches elements of.
    group_paths: Vec<String>,
}

/// Collect the predicates of a filter document.
pub fn collect_predicates(filter: &Document) -> PathPredicates {
    let mut out = PathPredicates {
        all_exact: true,
        ..Default::default()
    };
    out.walk(filter, "", None);
    out
}

fn is_operator_doc(d: &Document) -> bool {
    d.keys().next().is_some_and(|k| k.starts_with('$'))
}

impl PathPredicates {
    fn walk(&mut self, filter: &Document, prefix: &str, group: Option<usize>) {
        for (key, v) in filter {
            if key == "$and" {
                if let Bson::Array(items) = v {
                    for item in items {
                        if let Bson::Document(d) = item {
                            self.walk(d, prefix, group);
                        }
                    }
                }
                continue;
            }
            if key.starts_with('$') {
                self.all_exact = false;
                continue;
            }
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            match v {
                Bson::Document(d) if is_operator_doc(d) => self.operators(&path, d, group),
                other => {
                    if group.is_none() {
                        self.eqs.push((path.clone(), other.clone()));
                    }
                    self.eq(&path, other, group);
                }
            }
            if group.is_some() {
                self.all_exact = false;
            }
        }
    }

    fn eq(&mut self, path: &str, v: &Bson, group: Option<usize>) {
        if index_friendly(v) {
            self.push(path, vec![Interval::point(v)], has_strings(v), group);
        } else {
            self.inexact(path);
        }
    }

    fn operators(&mut self, path: &str, ops: &Document, group: Option<usize>) {
        for (op, v) in ops {
            match op.as_str() {
                "$eq" => {
                    if group.is_none() {
                        self.eqs.push((path.to_string(), v.clone()));
                    }
                    self.eq(path, v, group)
                }
                "$gt" | "$gte" | "$lt" | "$lte" => match range(op, v) {
                    Some(iv) => self.push(path, vec![iv], has_strings(v), group),
                    None => self.inexact(path),
                },
                "$in" => match v {
                    Bson::Array(items) if !items.is_empty() && items.iter().all(index_friendly) => {
                        let mut points: Vec<Interval> = items.iter().map(Interval::point).collect();
                        points.sort_by(|a, b| value::compare(&a.lo, &b.lo, None));
                        points.dedup_by(|a, b| value::compare(&a.lo, &b.lo, None).is_eq());
                        self.push(path, points, items.iter().any(has_strings), group);
                    }
                    _ => self.inexact(path),
                },
                "$elemMatch" => {
                    let g = self.groups;
                    self.groups += 1;
                    self.group_paths.push(path.to_string());
                    self.all_exact = false;
                    match v {
                        Bson::Document(d) if is_operator_doc(d) => self.operators(path, d, Some(g)),
                        Bson::Document(d) => self.walk(d, path, Some(g)),
                        _ => self.inexact(path),
                    }
                }
                // Options of `$regex` and `$near` ride along; everything
                // else is left to the filter.
                _ => self.inexact(path),
            }
        }
    }

    fn push(&mut self, path: &str, intervals: Vec<Interval>, strings: bool, group: Option<usize>) {
        self.preds.push((
            path.to_string(),
            Pred {
                intervals,
                strings,
                group,
            },
        ));
    }

    fn inexact(&mut self, path: &str) {
        self.all_exact = false;
        self.inexact.push(path.to_string());
    }

    /// Every path with a predicate.
    pub fn paths(&self) -> impl Iterator<Item = &String> {
        self.preds.iter().map(|(p, _)| p).chain(self.inexact.iter())
    }

    /// Whether some predicate on `path` could not become an exact bound.
    pub fn dropped(&self, path: &str, same_collation: bool) -> bool {
        self.inexact.iter().any(|p| p == path)
            || self
                .preds
                .iter()
                .any(|(p, pred)| p == path && pred.strings && !same_collation)
    }

    /// The intervals on `path`, or `None` when no predicate bounds it. On a
    /// multikey field only one predicate (with its `$elemMatch` siblings) is
    /// used: different predicates may be satisfied by different elements.
    pub fn intervals(
        &self,
        path: &str,
        multikey: bool,
        same_collation: bool,
        collation: Option<&Collation>,
    ) -> Option<Vec<Interval>> {
        let mut usable = self
            .preds
            .iter()
            .filter(|(p, pred)| p == path && (!pred.strings || same_collation))
            .map(|(_, pred)| pred);
        let first = usable.next()?;
        let mut acc = first.intervals.clone();
        for pred in usable {
            if multikey && (first.group.is_none() || pred.group != first.group) {
                continue;
            }
            let mut next = Vec::new();
            for a in &acc {
                for b in &pred.intervals {
                    if let Some(i) = a.intersect(b, collation) {
                        next.push(i);
                    }
                }
            }
            acc = next;
        }
        Some(acc)
    }

    /// The `$elemMatch` group (and its array path) of the predicate whose
    /// bounds [`Self::intervals`] starts from on `path`, if it has one.
    pub fn elem_match_of(&self, path: &str, same_collation: bool) -> Option<(usize, &str)> {
        let (_, first) = self
            .preds
            .iter()
            .find(|(p, pred)| p == path && (!pred.strings || same_collation))?;
        let g = first.group?;
        Some((g, self.group_paths.get(g)?.as_str()))
    }

    /// Whether the query's top-level equalities imply a partial index's
    /// filter: every path the partial filter reads is pinned by an equality
    /// and the pinned values satisfy it.
    pub fn implies(&self, partial_doc: &Document, partial: &Filter) -> bool {
        let mut pinned = Document::new();
        for (k, _) in partial_doc {
            if k.starts_with('$') || k.contains('.') {
                return false;
            }
            match self.eqs.iter().find(|(p, _)| p == k) {
                Some((_, v)) => {
                    pinned.insert(k.clone(), v.clone());
                }
                None => return false,
            }
        }
        partial
            .matches(&pinned, &Vars::with_now(bson::DateTime::now()))
            .unwrap_or(false)
    }
}
