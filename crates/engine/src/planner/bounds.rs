//! Index bounds: the value intervals a filter's predicates allow on each
//! path, in mongod's notation (`"[5, 5]"`, `"(5, inf.0]"`, `"[\"a\", {})"`).
//!
//! Ranges are type-bracketed as mongod brackets them: `$gt: 5` scans the
//! numbers above 5 up to infinity and never strings, because a comparison
//! only matches values of the same canonical type.
//!
//! A `$regex` scans the strings its match could start with — `/^abc/` the
//! range `["abc", "abd")`, any other regex every string `["", {})` — plus the
//! regex itself as a point, since a stored regex equal to the pattern matches
//! too. Only a literal prefix anchored at the start gives the tight range, as
//! in mongod's `IndexBoundsBuilder::simpleRegex`.

use std::cmp::Ordering;

use bson::{Bson, Document, oid::ObjectId};

use super::{has_strings, index_friendly};
use crate::collation::Collation;
use crate::expr::Vars;
use crate::filter::{CmpOp, Filter, Node, Op, Pred};
use crate::value;

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

    /// Whether `v` lies inside the interval.
    pub fn contains(&self, v: &Bson) -> bool {
        let lo = value::compare(&self.lo, v, None);
        let hi = value::compare(v, &self.hi, None);
        (lo == Ordering::Less || (lo == Ordering::Equal && self.lo_incl))
            && (hi == Ordering::Less || (hi == Ordering::Equal && self.hi_incl))
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
fn range(op: CmpOp, v: &Bson) -> Option<Interval> {
    // MinKey and MaxKey compare with every value.
    match (op, v) {
        (CmpOp::Gte, Bson::MinKey) | (CmpOp::Lte, Bson::MaxKey) => return Some(Interval::all()),
        (CmpOp::Gt, Bson::MinKey) => {
            return Some(Interval {
                lo_incl: false,
                ..Interval::all()
            });
        }
        (CmpOp::Lt, Bson::MaxKey) => {
            return Some(Interval {
                hi_incl: false,
                ..Interval::all()
            });
        }
        _ => {}
    }
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
        Bson::Timestamp(_) => (
            Bson::Timestamp(bson::Timestamp {
                time: 0,
                increment: 0,
            }),
            Bson::Timestamp(bson::Timestamp {
                time: u32::MAX,
                increment: u32::MAX,
            }),
            true,
        ),
        // Objects sort after strings and before arrays.
        Bson::Document(_) => (
            Bson::Document(Document::new()),
            Bson::Array(Vec::new()),
            false,
        ),
        _ => return None,
    };
    Some(match op {
        CmpOp::Gt | CmpOp::Gte => Interval {
            lo: v.clone(),
            lo_incl: op == CmpOp::Gte,
            hi: max,
            hi_incl: max_incl,
        },
        _ => Interval {
            lo: min,
            lo_incl: true,
            hi: v.clone(),
            hi_incl: op == CmpOp::Lte,
        },
    })
}

/// The keys a null equality can match: `[undefined, undefined]` and
/// `[null, null]`.
fn null_points() -> Vec<Interval> {
    vec![
        Interval::point(&Bson::Undefined),
        Interval::point(&Bson::Null),
    ]
}

/// One predicate on one path, as intervals.
#[derive(Debug, Clone)]
struct IndexPred {
    intervals: Vec<Interval>,
    strings: bool,
    /// A regex's string ranges hold in binary order only: an index with a
    /// collation stores collation keys, not the strings.
    binary_only: bool,
    /// Predicates of one `$elemMatch` share a group: they constrain the same
    /// array element, so their bounds may be intersected even on a multikey
    /// field.
    group: Option<usize>,
}

/// The indexable predicates of a filter, by path.
#[derive(Debug, Clone, Default)]
pub struct PathPredicates {
    preds: Vec<(String, IndexPred)>,
    /// Paths with a predicate that gave no bounds, or bounds that are only a
    /// superset of its matches (an unanchored `$regex`).
    inexact: Vec<String>,
    /// Whether every predicate became a bound (no `$or`, `$ne`, `$regex`…).
    pub all_exact: bool,
    /// Top-level equalities, for partial-index implication.
    eqs: Vec<(String, Bson)>,
    groups: usize,
    /// Per `$elemMatch` group, the path of the array it matches elements of.
    group_paths: Vec<String>,
}

/// Collect the predicates of a parsed filter.
pub fn collect_predicates(filter: &Filter) -> PathPredicates {
    collect_node(filter.root())
}

/// Collect the predicates of one node of a parsed filter (an `$or`
/// branch).
pub(crate) fn collect_node(node: &Node) -> PathPredicates {
    let mut out = PathPredicates {
        all_exact: true,
        ..Default::default()
    };
    out.walk(node, "", None);
    out
}

fn joined(prefix: &str, path: &[String]) -> String {
    let path = path.join(".");
    if prefix.is_empty() {
        path
    } else {
        format!("{prefix}.{path}")
    }
}

impl PathPredicates {
    /// Walk the conjunction under `node`: `$and`s are entered, other
    /// logical and expression nodes only make the filter inexact.
    fn walk(&mut self, node: &Node, prefix: &str, group: Option<usize>) {
        match node {
            Node::And(children) => {
                for child in children {
                    self.walk(child, prefix, group);
                }
            }
            Node::Path { path, pred, op } => {
                let path = joined(prefix, path);
                self.predicate(&path, *op, pred, group);
                if group.is_some() {
                    self.all_exact = false;
                }
            }
            // `$or`, `$nor`, `$expr`, `$jsonSchema`, `$alwaysTrue`,
            // `$alwaysFalse`, `$comment`.
            _ => self.all_exact = false,
        }
    }

    fn eq(&mut self, path: &str, v: &Bson, group: Option<usize>) {
        if index_friendly(v) {
            self.push(path, vec![Interval::point(v)], has_strings(v), group);
        } else if matches!(v, Bson::Null) {
            // mongod's bounds for null: the null and undefined keys (a
            // missing field is keyed null); the filter decides.
            self.push(path, null_points(), false, group);
            self.inexact(path);
        } else {
            self.inexact(path);
        }
    }

    /// One parsed predicate on `path`, by the operator it was written with.
    fn predicate(&mut self, path: &str, op: Op, pred: &Pred, group: Option<usize>) {
        match (op, pred) {
            (Op::Value, Pred::Regex(re)) | (Op::Regex, Pred::Regex(re)) => {
                self.regex(path, &re.pattern, &re.options, group)
            }
            (Op::Value | Op::Eq, Pred::Cmp(CmpOp::Eq, v)) => {
                if group.is_none() {
                    self.eqs.push((path.to_string(), v.clone()));
                }
                self.eq(path, v, group)
            }
            // `$ne` scans around the value; the filter decides (a multikey
            // document may hold the value in another element).
            (Op::Ne, Pred::Not(inner)) => match inner.as_slice() {
                [Pred::Cmp(CmpOp::Eq, v)] if index_friendly(v) || matches!(v, Bson::Null) => {
                    let below = Interval {
                        lo: Bson::MinKey,
                        lo_incl: true,
                        hi: v.clone(),
                        hi_incl: false,
                    };
                    let above = Interval {
                        lo: v.clone(),
                        lo_incl: false,
                        hi: Bson::MaxKey,
                        hi_incl: true,
                    };
                    self.push(path, vec![below, above], has_strings(v), group);
                    self.inexact(path);
                }
                _ => self.inexact(path),
            },
            (Op::Gt | Op::Gte | Op::Lt | Op::Lte, Pred::Cmp(cmp, v)) => match range(*cmp, v) {
                Some(iv) => self.push(path, vec![iv], has_strings(v), group),
                None => self.inexact(path),
            },
            (
                Op::In,
                Pred::In {
                    values, patterns, ..
                },
            ) if patterns.is_empty()
                && !values.is_empty()
                && values
                    .iter()
                    .all(|i| index_friendly(i) || matches!(i, Bson::Null)) =>
            {
                let mut points: Vec<Interval> = values
                    .iter()
                    .filter(|i| !matches!(i, Bson::Null))
                    .map(Interval::point)
                    .collect();
                if values.iter().any(|i| matches!(i, Bson::Null)) {
                    points.extend(null_points());
                    self.inexact(path);
                }
                points.sort_by(|a, b| value::compare(&a.lo, &b.lo, None));
                points.dedup_by(|a, b| value::compare(&a.lo, &b.lo, None).is_eq());
                self.push(path, points, values.iter().any(has_strings), group);
            }
            (Op::ElemMatch, Pred::ElemMatchValue(_) | Pred::ElemMatchObject(_)) => {
                let g = self.groups;
                self.groups += 1;
                self.group_paths.push(path.to_string());
                self.all_exact = false;
                match pred {
                    Pred::ElemMatchValue(preds) => {
                        for (op, p) in preds {
                            self.predicate(path, *op, p, Some(g));
                        }
                    }
                    // An object form led by a top-level operator (`$and`,
                    // `$or`, …) bounds nothing.
                    Pred::ElemMatchObject(node) => match node.as_ref() {
                        Node::And(children)
                            if children
                                .first()
                                .is_some_and(|c| !matches!(c, Node::Path { .. })) =>
                        {
                            self.inexact(path)
                        }
                        other => self.walk(other, path, Some(g)),
                    },
                    _ => self.inexact(path),
                }
            }
            // Everything else (`$all`, `$not`, `$nin`, `$exists`, `$type`,
            // `$mod`, `$size`, bit tests) is left to the filter.
            _ => self.inexact(path),
        }
    }

    /// A regex predicate: its bounds, exact only for a plain literal prefix.
    fn regex(&mut self, path: &str, pattern: &str, options: &str, group: Option<usize>) {
        let (intervals, exact) = regex_intervals(pattern, options);
        self.preds.push((
            path.to_string(),
            IndexPred {
                intervals,
                strings: false,
                binary_only: true,
                group,
            },
        ));
        if !exact {
            self.inexact(path);
        }
    }

    fn push(&mut self, path: &str, intervals: Vec<Interval>, strings: bool, group: Option<usize>) {
        self.preds.push((
            path.to_string(),
            IndexPred {
                intervals,
                strings,
                binary_only: false,
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
    /// `same_collation`: the index collation is the query's; `binary`: the
    /// index has none.
    pub fn dropped(&self, path: &str, same_collation: bool, binary: bool) -> bool {
        self.inexact.iter().any(|p| p == path)
            || self.preds.iter().any(|(p, pred)| {
                p == path && ((pred.strings && !same_collation) || (pred.binary_only && !binary))
            })
    }

    /// The intervals on `path`, or `None` when no predicate bounds it. On a
    /// multikey field only one predicate (with its `$elemMatch` siblings) is
    /// used: different predicates may be satisfied by different elements.
    /// `collation` is the index's: intervals are intersected in key order.
    pub fn intervals(
        &self,
        path: &str,
        multikey: bool,
        same_collation: bool,
        collation: Option<&Collation>,
    ) -> Option<Vec<Interval>> {
        let binary = collation.is_none();
        let mut usable = self
            .preds
            .iter()
            .filter(|(p, pred)| {
                p == path && (!pred.strings || same_collation) && (!pred.binary_only || binary)
            })
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

/// The intervals of a regex predicate and whether they are exact (hold
/// exactly its matches, so no filter need re-check the keys): the strings the
/// literal prefix starts, or all strings, then the regex itself.
pub fn regex_intervals(pattern: &str, options: &str) -> (Vec<Interval>, bool) {
    let (prefix, exact) = simple_prefix(pattern, options);
    let strings = if prefix.is_empty() {
        Interval {
            lo: Bson::String(String::new()),
            lo_incl: true,
            hi: Bson::Document(Document::new()),
            hi_incl: false,
        }
    } else {
        let hi = prefix_successor(&prefix)
            .map(Bson::String)
            .unwrap_or_else(|| Bson::Document(Document::new()));
        Interval {
            lo: Bson::String(prefix),
            lo_incl: true,
            hi,
            hi_incl: false,
        }
    };
    // Stored regexes compare flags as a set; sorting them keeps the point
    // where a stored regex with the same flags in another order sorts.
    let mut flags: Vec<char> = options.chars().collect();
    flags.sort_unstable();
    let re = Bson::RegularExpression(bson::Regex {
        pattern: pattern.to_string(),
        options: flags.into_iter().collect(),
    });
    (vec![strings, Interval::point(&re)], exact)
}

/// The smallest string above every string starting with `prefix`: the last
/// byte incremented, as mongod does (`"abc"` → `"abd"`). When that byte is a
/// UTF-8 continuation or DEL, incrementing it would not be UTF-8, so the last
/// character is replaced by the next one instead, which bounds the same
/// strings (and a few more the filter rejects). `None` when no string is
/// above (the prefix ends in the last code point).
fn prefix_successor(prefix: &str) -> Option<String> {
    let mut bytes = prefix.as_bytes().to_vec();
    if let Some(last) = bytes.last_mut()
        && *last < 0x7F
    {
        *last += 1;
        return String::from_utf8(bytes).ok();
    }
    let mut chars: Vec<char> = prefix.chars().collect();
    let last = chars.pop()?;
    let next = (u32::from(last) + 1..=u32::from(char::MAX)).find_map(char::from_u32)?;
    chars.push(next);
    Some(chars.into_iter().collect())
}

/// Whether a `|` not escaped by a backslash occurs (mongod, too, does not
/// look at `\Q…\E` or classes here: `^[|]` is never simple).
fn has_alternation(pattern: &str) -> bool {
    let mut backslashes = 0;
    for c in pattern.chars() {
        match c {
            '\\' => backslashes += 1,
            '|' if backslashes % 2 == 0 => return true,
            _ => backslashes = 0,
        }
    }
    false
}

/// The literal prefix every match of an anchored regex starts with, and
/// whether the regex is exactly "starts with that prefix". mongod's rules:
/// anchored by `^` (not with the `m` flag, where `^` also matches after a
/// newline) or `\A`; no `|` anywhere; flags only `m`, `s`, `x`; the prefix
/// stops at the first metacharacter, and a `*` or `?` drops the character
/// it makes optional.
pub fn simple_prefix(pattern: &str, options: &str) -> (String, bool) {
    let (rest, multiline_ok) = if let Some(r) = pattern.strip_prefix("\\A") {
        (r, true)
    } else if let Some(r) = pattern.strip_prefix('^') {
        (r, false)
    } else {
        return (String::new(), false);
    };
    if has_alternation(rest) {
        return (String::new(), false);
    }
    let mut extended = false;
    for flag in options.chars() {
        match flag {
            'm' if multiline_ok => {}
            's' => {}
            'x' => extended = true,
            _ => return (String::new(), false),
        }
    }
    let mut prefix = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => {
                prefix.pop();
                return (prefix, false);
            }
            '\\' => match chars.next() {
                Some('Q') => {
                    // `\Q…\E` quotes everything inside.
                    while let Some(q) = chars.next() {
                        if q == '\\' && chars.peek() == Some(&'E') {
                            chars.next();
                            break;
                        }
                        prefix.push(q);
                    }
                }
                // A letter or digit after `\` is a class, an assertion or a
                // back-reference: not a literal.
                Some(e) if e.is_ascii_alphanumeric() => return (prefix, false),
                Some(e) => prefix.push(e),
                None => return (prefix, false),
            },
            '.' => {
                // A trailing `.*` accepts any rest: still exactly a prefix.
                let trailing_any = chars.next() == Some('*') && chars.next().is_none();
                let exact = trailing_any && !prefix.is_empty();
                return (prefix, exact);
            }
            '^' | '$' | '[' | '(' | ')' | '+' | '{' => return (prefix, false),
            '#' if extended => return (prefix, false),
            c if extended && (c.is_ascii_whitespace() || c == '\u{0B}') => {}
            c => prefix.push(c),
        }
    }
    let exact = !prefix.is_empty();
    (prefix, exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_prefixes_as_mongod_reads_them() {
        let p = |re: &str, o: &str| simple_prefix(re, o);
        assert_eq!(p("^foo", ""), ("foo".into(), true));
        assert_eq!(p("\\Afoo", ""), ("foo".into(), true));
        assert_eq!(p("^f?oo", ""), ("".into(), false));
        assert_eq!(p("^fz?oo", ""), ("f".into(), false));
        assert_eq!(p("^foo", "m"), ("".into(), false));
        assert_eq!(p("\\Afoo", "m"), ("foo".into(), true));
        assert_eq!(p("\\Afoo", "mi"), ("".into(), false));
        assert_eq!(p("^foo", "i"), ("".into(), false));
        assert_eq!(p("^foo", "s"), ("foo".into(), true));
        assert_eq!(p("foo", ""), ("".into(), false));
        assert_eq!(
            p("\\Af \t\u{0B}o\n\ro  \\ \\# #comment", "mx"),
            ("foo #".into(), false)
        );
        assert_eq!(p("^\\Qasdf\\E", ""), ("asdf".into(), true));
        assert_eq!(p("^\\Qasdf", ""), ("asdf".into(), true));
        assert_eq!(p("^\\Qas.*df\\E", ""), ("as.*df".into(), true));
        assert_eq!(p("^\\Qas\\E\\\\E\\Q$df\\E", ""), ("as\\E$df".into(), true));
        assert_eq!(p("^(a(a|$)|b", ""), ("".into(), false));
        assert_eq!(p("^a\\\\|b", ""), ("".into(), false));
        assert_eq!(p("^a\\|b", ""), ("a|b".into(), true));
        assert_eq!(p("^\\|1\\|2\\|\\|", ""), ("|1|2||".into(), true));
        assert_eq!(p("^\\Q|\\E", ""), ("".into(), false));
        assert_eq!(p("^[|]", ""), ("".into(), false));
        assert_eq!(p("^abc.*", ""), ("abc".into(), true));
        assert_eq!(p("^abc.*f", ""), ("abc".into(), false));
        assert_eq!(p("^abc$", ""), ("abc".into(), false));
        assert_eq!(p("^ab\\d", ""), ("ab".into(), false));
        assert_eq!(p("^a\\.b", ""), ("a.b".into(), true));
        assert_eq!(p("^", ""), ("".into(), false));
    }

    #[test]
    fn prefix_bounds_end_at_the_successor() {
        let (iv, exact) = regex_intervals("^abc", "");
        assert!(exact);
        assert_eq!(iv[0].render(false), "[\"abc\", \"abd\")");
        assert_eq!(iv[1].render(false), "[/^abc/, /^abc/]");
        let (iv, exact) = regex_intervals("abc", "i");
        assert!(!exact);
        assert_eq!(iv[0].render(false), "[\"\", {})");
        assert_eq!(iv[1].render(false), "[/abc/i, /abc/i]");
        assert_eq!(prefix_successor("a\u{7F}"), Some("a\u{80}".into()));
        assert_eq!(prefix_successor("\u{BF}"), Some("\u{C0}".into()));
        assert_eq!(prefix_successor("\u{10FFFF}"), None);
    }
}
