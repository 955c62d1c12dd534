//! The query planner: which ways of reading a collection can answer a query.
//!
//! It walks the parsed filter ([`Filter`]: the same tree execution matches
//! with, so there is one reading of the query language) and turns the
//! predicates it can serve from an index — equalities, `$in`, the four
//! range operators, `$ne`, `$regex` and `$elemMatch` — into per-field index
//! bounds; an IXSCAN's key filter is a part of that same tree. Every non-hidden index whose
//! bounds constrain it, or whose order provides the requested sort, becomes a
//! candidate plan; a top-level `$or` whose every branch is indexable becomes
//! an OR plan; a collection scan is the fallback. Choosing among candidates is
//! the executor's job ([`super::exec::choose`]): like mongod's multi-planner
//! it races them. The full filter is always re-applied to fetched documents,
//! so bounds only ever need to be a superset of the matches; only a covered
//! plan (no FETCH) relies on bounds being exact. A `find` with `min`/`max`
//! is not planned: like mongod it scans the hinted index between those two
//! whole keys ([`KeyRange`]).

mod bounds;

use bson::{Bson, Document};

use super::catalog::Collection;
use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::filter::{CmpOp, Filter, Node, Op, Pred};
use super::index::Index;
use super::sort::SortSpec;

pub use bounds::{Interval, PathPredicates, collect_predicates};

/// How to scan one index.
#[derive(Debug, Clone)]
pub struct IxScanPlan {
    /// Position of the index in the collection's index list.
    pub index: usize,
    /// Per index field, the intervals to scan, in ascending value order.
    pub bounds: Vec<Vec<Interval>>,
    /// How many leading fields narrow the key range (equalities, then at most
    /// one range); the rest are only reported.
    pub scan_fields: usize,
    /// Forward or backward (to provide a descending sort).
    pub forward: bool,
    /// Conditions on the index's own fields that gave no exact bounds (an
    /// unanchored regex, `$mod`, `$type`, `$ne`, `$nin`, `$not`), tested
    /// against each key before anything is fetched, as mongod does: those
    /// predicates of the query's parsed filter.
    pub key_filter: Option<Box<Filter>>,
    /// Counting only, from one contiguous key range: mongod's `COUNT_SCAN`.
    pub count_scan: bool,
    /// One key per distinct value of the first field: mongod's
    /// `DISTINCT_SCAN` (forward, one range).
    pub distinct: bool,
    /// The `min`/`max` options of `find`: one range of whole keys, from
    /// `min` (inclusive) to `max` (exclusive) in index order, instead of
    /// per-field bounds. mongod's "simple range" scan; its explain shows
    /// empty `indexBounds`.
    pub key_range: Option<KeyRange>,
}

/// Whole index keys bounding a `min`/`max` scan, one value per index field,
/// field names stripped (mongod's finished min and max objects).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRange {
    pub min: Vec<Bson>,
    pub max: Vec<Bson>,
}

/// A query plan: a tree of stages, leaves first in execution.
#[derive(Debug, Clone)]
pub enum Plan {
    CollScan,
    IdHack(Bson),
    IxScan(IxScanPlan),
    /// Load documents and apply the filter (`residual` is what explain
    /// shows; the whole filter is applied).
    Fetch {
        child: Box<Plan>,
        residual: Option<Document>,
    },
    Or(Vec<Plan>),
    Sort {
        child: Box<Plan>,
        spec: SortSpec,
        pattern: Document,
        limit: Option<u64>,
    },
    Skip(Box<Plan>, u64),
    Limit(Box<Plan>, u64),
    Projection {
        child: Box<Plan>,
        kind: ProjectionKind,
        spec: Document,
    },
}

impl Plan {
    /// The index the plan reads, or `None` for a collection scan.
    pub fn index_name(&self, c: &Collection) -> Option<String> {
        match self {
            Plan::IxScan(p) => c.indexes().get(p.index).map(|i| i.spec.name.clone()),
            Plan::IdHack(_) => Some("_id_".into()),
            Plan::Or(children) => children.iter().find_map(|p| p.index_name(c)),
            Plan::Fetch { child, .. }
            | Plan::Sort { child, .. }
            | Plan::Skip(child, _)
            | Plan::Limit(child, _)
            | Plan::Projection { child, .. } => child.index_name(c),
            Plan::CollScan => None,
        }
    }
}

/// mongod's three projection stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectionKind {
    Simple,
    Default,
    Covered,
}

impl ProjectionKind {
    /// The stage name.
    pub fn stage(self) -> &'static str {
        match self {
            ProjectionKind::Simple => "PROJECTION_SIMPLE",
            ProjectionKind::Default => "PROJECTION_DEFAULT",
            ProjectionKind::Covered => "PROJECTION_COVERED",
        }
    }
}

impl Plan {
    /// Whether the plan reads documents (has a FETCH or a COLLSCAN).
    pub fn fetches(&self) -> bool {
        match self {
            Plan::CollScan | Plan::IdHack(_) | Plan::Fetch { .. } => true,
            Plan::IxScan(_) => false,
            Plan::Or(children) => children.iter().any(Plan::fetches),
            Plan::Sort { child, .. }
            | Plan::Skip(child, _)
            | Plan::Limit(child, _)
            | Plan::Projection { child, .. } => child.fetches(),
        }
    }

    /// Whether the plan sorts in memory.
    pub fn sorts(&self) -> bool {
        match self {
            Plan::Sort { .. } => true,
            Plan::Or(children) => children.iter().any(Plan::sorts),
            Plan::Fetch { child, .. }
            | Plan::Skip(child, _)
            | Plan::Limit(child, _)
            | Plan::Projection { child, .. } => child.sorts(),
            _ => false,
        }
    }

    /// mongod's `planSummary`: the access paths, e.g. `IXSCAN { a: 1 }`,
    /// `COLLSCAN`, `IDHACK`.
    pub fn summary(&self, c: &Collection) -> String {
        match self {
            Plan::CollScan => "COLLSCAN".into(),
            Plan::IdHack(_) => "IDHACK".into(),
            Plan::IxScan(p) => {
                let name = if p.count_scan {
                    "COUNT_SCAN"
                } else if p.distinct {
                    "DISTINCT_SCAN"
                } else {
                    "IXSCAN"
                };
                let key = c.indexes().get(p.index).map(|i| {
                    let parts: Vec<String> = i
                        .spec
                        .key
                        .iter()
                        .map(|(k, v)| format!("{k}: {v}"))
                        .collect();
                    parts.join(", ")
                });
                format!("{name} {{ {} }}", key.unwrap_or_default())
            }
            Plan::Or(children) => children
                .iter()
                .map(|p| p.summary(c))
                .collect::<Vec<_>>()
                .join(", "),
            Plan::Sort { child, .. }
            | Plan::Fetch { child, .. }
            | Plan::Skip(child, _)
            | Plan::Limit(child, _)
            | Plan::Projection { child, .. } => child.summary(c),
        }
    }

    /// The stage chain from the root down the first children, e.g.
    /// `"FETCH<-IXSCAN"`.
    pub fn chain(&self) -> String {
        let (name, child): (&str, Option<&Plan>) = match self {
            Plan::CollScan => ("COLLSCAN", None),
            Plan::IdHack(_) => ("IDHACK", None),
            Plan::IxScan(p) if p.count_scan => ("COUNT_SCAN", None),
            Plan::IxScan(p) if p.distinct => ("DISTINCT_SCAN", None),
            Plan::IxScan(_) => ("IXSCAN", None),
            Plan::Fetch { child, .. } => ("FETCH", Some(child)),
            Plan::Or(children) => ("OR", children.first()),
            Plan::Sort { child, .. } => ("SORT", Some(child)),
            Plan::Skip(child, _) => ("SKIP", Some(child)),
            Plan::Limit(child, _) => ("LIMIT", Some(child)),
            Plan::Projection { child, kind, .. } => (kind.stage(), Some(child)),
        };
        match child {
            Some(c) => format!("{name}<-{}", c.chain()),
            None => name.to_string(),
        }
    }
}

/// What a query asks for, as the planner needs it.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    /// The parsed filter: the planner reads its predicate tree, the
    /// executor matches with it.
    pub filter: &'a Filter,
    pub sort: Option<&'a SortSpec>,
    pub projection: Option<&'a Document>,
    pub skip: u64,
    pub limit: Option<u64>,
    pub hint: Option<&'a Bson>,
    pub collation: Option<&'a Collation>,
    /// Only the number of matches is needed (`count`, or an aggregation
    /// whose later stages read no field): an exact index scan needs no FETCH.
    pub count: bool,
    /// `distinct` on this field: an index led by it may be read one key per
    /// value.
    pub distinct: Option<&'a str>,
    /// `find`'s `min` and `max` options (index-key bounds over the hinted
    /// index); an empty document is the same as none.
    pub min: Option<&'a Document>,
    pub max: Option<&'a Document>,
}

impl<'a> Query<'a> {
    /// A plain query: the filter and nothing else.
    pub fn new(filter: &'a Filter) -> Self {
        Query {
            filter,
            sort: None,
            projection: None,
            skip: 0,
            limit: None,
            hint: None,
            collation: None,
            count: false,
            distinct: None,
            min: None,
            max: None,
        }
    }
}

/// Whether mongod tests a predicate against index keys (inside IXSCAN) when
/// it is on an index field but gave no exact bounds: an unanchored regex,
/// `$mod`, `$type`, `$ne`, `$nin`, `$not`.
fn on_keys_op(op: Op) -> bool {
    matches!(
        op,
        Op::Regex | Op::Mod | Op::Type | Op::Ne | Op::Nin | Op::Not
    )
}

/// The top-level conditions of `filter` that can be tested on the keys of
/// `index` (its non-multikey fields, binary order), as a parsed filter, and
/// the rest of the filter as written (what FETCH's explain shows).
fn key_filter(
    filter: &Filter,
    index: &Index,
    preds: &PathPredicates,
) -> Option<(Filter, Document)> {
    if index.spec.collation.is_some() {
        return None;
    }
    let multikey = index.multikey_paths();
    let field_ok = |path: &str| {
        index
            .spec
            .fields
            .iter()
            .enumerate()
            .any(|(i, (f, _))| f == path && multikey.get(i).is_none_or(|p| p.is_empty()))
    };
    let mut on_keys = Document::new();
    let mut nodes = Vec::new();
    let mut spans = Vec::new();
    let mut rest = Document::new();
    for entry in filter.entries() {
        let (path, cond) = (entry.key, entry.value);
        if path.starts_with('$') || !field_ok(path) {
            rest.insert(path, cond.clone());
            continue;
        }
        let ops: Vec<Op> = entry
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Path { op, .. } => Some(*op),
                _ => None,
            })
            .collect();
        match (ops.as_slice(), cond) {
            // A literal regex: on the keys unless its bounds are exact.
            ([Op::Value], Bson::RegularExpression(_)) if preds.dropped(path, true, true) => {
                on_keys.insert(path, cond.clone());
                nodes.extend(entry.nodes.iter().cloned());
                spans.push(entry.nodes.len());
            }
            (_, Bson::Document(written)) if ops.iter().all(|op| *op != Op::Value) => {
                let regex_exact = ops.contains(&Op::Regex) && !preds.dropped(path, true, true);
                let moves = |op: Op| on_keys_op(op) && !(op == Op::Regex && regex_exact);
                let moved_nodes: Vec<Node> = entry
                    .nodes
                    .iter()
                    .filter(|n| matches!(n, Node::Path { op, .. } if moves(*op)))
                    .cloned()
                    .collect();
                // The operators as written, split by their parsed
                // predicates' fate (`$options` goes with its `$regex`).
                let moved_keys: Vec<&str> = ops
                    .iter()
                    .filter(|op| moves(**op))
                    .map(|op| op.key())
                    .collect();
                let mut moved = Document::new();
                let mut kept = Document::new();
                for (op, arg) in written {
                    let key = if op == "$options" {
                        "$regex"
                    } else {
                        op.as_str()
                    };
                    if moved_keys.contains(&key) {
                        moved.insert(op.clone(), arg.clone());
                    } else {
                        kept.insert(op.clone(), arg.clone());
                    }
                }
                if !moved.is_empty() {
                    on_keys.insert(path, moved);
                    spans.push(moved_nodes.len());
                    nodes.extend(moved_nodes);
                }
                if !kept.is_empty() {
                    rest.insert(path, kept);
                }
            }
            _ => {
                rest.insert(path, cond.clone());
            }
        }
    }
    (!on_keys.is_empty()).then(|| (filter.part(on_keys, nodes, spans), rest))
}

/// Whether a value can bound an index scan as a point: arrays match both as
/// a whole and by element, and null matches missing fields, so those are
/// left to the filter.
pub fn index_friendly(v: &Bson) -> bool {
    !matches!(
        v,
        Bson::Array(_)
            | Bson::Null
            | Bson::Undefined
            | Bson::RegularExpression(_)
            | Bson::MinKey
            | Bson::MaxKey
    ) && !matches!(v, Bson::Double(d) if d.is_nan())
}

pub(crate) fn has_strings(v: &Bson) -> bool {
    match v {
        Bson::String(_) | Bson::Symbol(_) => true,
        Bson::Document(d) => d.values().any(has_strings),
        Bson::Array(a) => a.iter().any(has_strings),
        _ => false,
    }
}

/// Bounds of one index for a filter: per field its intervals, plus whether
/// every predicate of the filter became an exact bound.
struct IndexBounds {
    bounds: Vec<Vec<Interval>>,
    /// Fields that got bounds from a predicate.
    constrained: Vec<bool>,
    exact: bool,
}

fn bounds_for(
    index: &Index,
    preds: &PathPredicates,
    query_collation: Option<&Collation>,
) -> IndexBounds {
    let spec = &index.spec;
    let index_collation = spec.collation.as_ref();
    let same_collation = index_collation == query_collation;
    let mut out = IndexBounds {
        bounds: Vec::with_capacity(spec.fields.len()),
        constrained: Vec::with_capacity(spec.fields.len()),
        exact: preds.all_exact && !index.is_multikey(),
    };
    let multikey = index.multikey_paths();
    for (i, (path, _)) in spec.fields.iter().enumerate() {
        let field_multikey = multikey.get(i).is_some_and(|p| !p.is_empty());
        // Intervals intersect in the index's key order; predicates compared
        // under another collation were already left out.
        match preds.intervals(path, field_multikey, same_collation, index_collation) {
            Some(iv) => {
                out.bounds.push(iv);
                out.constrained.push(true);
            }
            None => {
                out.bounds.push(vec![Interval::all()]);
                out.constrained.push(false);
            }
        }
    }
    // Fields that go through one array are keyed per element, so their
    // bounds may be compounded only when a single `$elemMatch` on that array
    // (or inside its elements) constrains both; otherwise the later field
    // scans all its values, as mongod does.
    for i in 1..spec.fields.len() {
        if !out.constrained[i] {
            continue;
        }
        let conflict = (0..i).filter(|&j| out.constrained[j]).any(|j| {
            let (Some(mi), Some(mj)) = (multikey.get(i), multikey.get(j)) else {
                return false;
            };
            let shared: Vec<&String> = mi.intersection(mj).collect();
            if shared.is_empty() {
                return false;
            }
            match (
                preds.elem_match_of(&spec.fields[i].0, same_collation),
                preds.elem_match_of(&spec.fields[j].0, same_collation),
            ) {
                (Some((gi, array)), Some((gj, _))) if gi == gj => !shared
                    .iter()
                    .all(|m| array == m.as_str() || array.starts_with(&format!("{m}."))),
                _ => true,
            }
        });
        if conflict {
            out.bounds[i] = vec![Interval::all()];
            out.constrained[i] = false;
        }
    }
    // Every filtered path must be an index field with its bounds applied.
    for path in preds.paths() {
        let pos = spec.fields.iter().position(|(p, _)| p == path);
        if pos.is_none_or(|i| !out.constrained[i])
            || preds.dropped(path, same_collation, index_collation.is_none())
        {
            out.exact = false;
        }
    }
    out
}

/// How many leading fields narrow the scan: equality prefix plus one range.
fn scan_fields(b: &IndexBounds) -> usize {
    let mut n = 0;
    for (iv, constrained) in b.bounds.iter().zip(&b.constrained) {
        if !constrained {
            break;
        }
        n += 1;
        if !iv.iter().all(Interval::is_point) {
            break;
        }
    }
    n
}

/// Whether an index scan provides `sort`, and in which direction.
fn provides_sort(
    index: &Index,
    b: &IndexBounds,
    sort: &SortSpec,
    query_collation: Option<&Collation>,
) -> Option<bool> {
    let fields = &index.spec.fields;
    let point = |i: usize| b.constrained[i] && b.bounds[i].len() == 1 && b.bounds[i][0].is_point();
    let multikey = |i: usize| index.multikey_paths().get(i).is_some_and(|p| !p.is_empty());
    // A sort key pinned to one value by an equality needs no ordering, except
    // on a multikey field: there a document's sort key is its smallest or
    // largest element, not the value the query matched.
    let keys: Vec<&(String, bool)> = sort
        .keys
        .iter()
        .filter(|(p, _)| {
            !fields
                .iter()
                .enumerate()
                .any(|(i, (f, _))| f == p && point(i) && !multikey(i))
        })
        .collect();
    if keys.is_empty() {
        return Some(true);
    }
    if index.spec.collation.as_ref() != query_collation {
        return None;
    }
    let start = (0..fields.len())
        .find(|&i| !point(i))
        .unwrap_or(fields.len());
    let mut direction = None;
    for (k, (path, asc)) in keys.iter().enumerate() {
        let (field, field_asc) = fields.get(start + k)?;
        if field != path {
            return None;
        }
        if multikey(start + k) {
            return None;
        }
        let same = asc == field_asc;
        match direction {
            None => direction = Some(same),
            Some(d) if d != same => return None,
            _ => {}
        }
    }
    direction
}

/// Whether a projection is inclusion-only over plain fields all in `fields`.
fn covered_by(projection: &Document, index: &Index) -> bool {
    let in_index = |p: &str| index.spec.fields.iter().any(|(f, _)| f == p);
    let mut id_ok = in_index("_id");
    let mut any = false;
    for (k, v) in projection {
        let on = match v {
            Bson::Boolean(b) => *b,
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => {
                super::value::as_f64(v).is_some_and(|n| n != 0.0)
            }
            _ => return false,
        };
        if k == "_id" {
            if !on {
                id_ok = true;
            }
            continue;
        }
        if !on || k.starts_with('$') || k.contains('$') || !in_index(k) {
            return false;
        }
        any = true;
    }
    any && id_ok
}

/// The projection stage mongod would use for a projection spec.
pub fn projection_kind(projection: &Document) -> ProjectionKind {
    let simple = projection.iter().all(|(k, v)| {
        !k.contains('.')
            && !k.contains('$')
            && matches!(
                v,
                Bson::Boolean(_) | Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_)
            )
    });
    let inclusion = projection
        .iter()
        .filter(|(k, _)| k.as_str() != "_id")
        .all(|(_, v)| {
            super::value::as_f64(v).is_some_and(|n| n != 0.0) || v.as_bool() == Some(true)
        });
    if simple && inclusion {
        ProjectionKind::Simple
    } else {
        ProjectionKind::Default
    }
}

/// Wrap an access path with the stages the query needs above it.
fn finish(mut plan: Plan, q: &Query<'_>, sort_provided: bool, covered: bool) -> Plan {
    let limit = q.limit.filter(|l| *l > 0);
    if let Some(sort) = q.sort.filter(|s| !s.keys.is_empty())
        && !sort_provided
    {
        let mut pattern = Document::new();
        for (p, asc) in &sort.keys {
            pattern.insert(p.clone(), if *asc { 1 } else { -1 });
        }
        plan = Plan::Sort {
            child: Box::new(plan),
            spec: sort.clone(),
            pattern,
            limit: limit.map(|l| l + q.skip),
        };
        if q.skip > 0 {
            plan = Plan::Skip(Box::new(plan), q.skip);
        }
    } else {
        if q.skip > 0 {
            // Skipped results need no document when nothing is left to
            // filter: the SKIP goes under the FETCH, as in mongod.
            plan = match plan {
                Plan::Fetch {
                    child,
                    residual: None,
                } => Plan::Fetch {
                    child: Box::new(Plan::Skip(child, q.skip)),
                    residual: None,
                },
                other => Plan::Skip(Box::new(other), q.skip),
            };
        }
        if let Some(l) = limit {
            plan = Plan::Limit(Box::new(plan), l);
        }
    }
    if let Some(p) = q.projection.filter(|p| !p.is_empty()) {
        plan = Plan::Projection {
            child: Box::new(plan),
            kind: if covered {
                ProjectionKind::Covered
            } else {
                projection_kind(p)
            },
            spec: p.clone(),
        };
    }
    plan
}

/// The plan an index gives a query, if it may serve it.
fn index_plan(
    c: &Collection,
    pos: usize,
    q: &Query<'_>,
    preds: &PathPredicates,
    hinted: bool,
) -> Option<Plan> {
    let index = &c.indexes()[pos];
    let spec = &index.spec;
    if spec.hidden && !hinted {
        return None;
    }
    // A hinted index is used as told, even a partial or sparse one that
    // misses documents (mongod does the same; see SERVER-26413).
    if let Some((partial_doc, partial)) = &spec.partial
        && !hinted
        && !preds.implies(partial_doc, partial)
    {
        return None;
    }
    let b = bounds_for(index, preds, q.collation);
    let sort_dir = q
        .sort
        .filter(|s| !s.keys.is_empty())
        .and_then(|s| provides_sort(index, &b, s, q.collation));
    let any_bound = b.constrained.iter().any(|x| *x);
    if spec.sparse && !any_bound && !hinted {
        return None;
    }
    // A sparse index holds no key for a missing field, so it cannot answer
    // a query that matches missing fields (bounds holding null).
    if spec.sparse
        && !hinted
        && b.bounds
            .iter()
            .zip(&b.constrained)
            .any(|(iv, c)| *c && iv.iter().any(|i| i.contains(&Bson::Null)))
    {
        return None;
    }
    if !hinted && !b.constrained[0] && sort_dir.is_none() {
        return None;
    }
    let forward = sort_dir.unwrap_or(true);
    let mut b = b;
    // The scan narrows by its leading fields only; bounds on later fields
    // are left to the filter, so they make the plan inexact.
    let narrowed = scan_fields(&b);
    if b.constrained.iter().skip(narrowed).any(|c| *c) {
        b.exact = false;
    }
    let keyed = if b.exact {
        None
    } else {
        key_filter(q.filter, index, preds)
    };
    // A count needs no documents when the bounds are exact; one contiguous
    // range (one interval per field, nothing to skip or sort) is a
    // COUNT_SCAN.
    let count_only = q.count && b.exact && q.sort.is_none() && q.projection.is_none();
    let count_scan = count_only && b.bounds.iter().all(|f| f.len() == 1);
    let scan = Plan::IxScan(IxScanPlan {
        index: pos,
        scan_fields: scan_fields(&b),
        bounds: b.bounds,
        forward,
        key_filter: keyed.as_ref().map(|(k, _)| Box::new(k.clone())),
        count_scan,
        distinct: false,
        key_range: None,
    });
    if count_only {
        return Some(finish(scan, q, sort_dir.is_some(), true));
    }
    let covered = b.exact
        && spec.collation.is_none()
        && q.projection.is_some_and(|p| covered_by(p, index))
        && q.sort.is_none_or(|s| {
            s.keys
                .iter()
                .all(|(k, _)| spec.fields.iter().any(|(f, _)| f == k))
        });
    let access = if covered {
        scan
    } else {
        let residual = match &keyed {
            Some((_, rest)) => (!rest.is_empty()).then(|| rest.clone()),
            None => (!b.exact && !q.filter.is_empty()).then(|| q.filter.source().clone()),
        };
        Plan::Fetch {
            child: Box::new(scan),
            residual,
        }
    };
    Some(finish(access, q, sort_dir.is_some(), covered))
}

/// An OR plan for a top-level `$or` whose every branch can use an index.
fn or_plan(c: &Collection, q: &Query<'_>) -> Option<Plan> {
    let branches = q.filter.entries().into_iter().find_map(|e| match e.nodes {
        [Node::Or(branches)] if e.key == "$or" => Some(branches),
        _ => None,
    })?;
    let mut scans = Vec::new();
    for branch in branches {
        let preds = bounds::collect_node(branch);
        let mut best: Option<(usize, IxScanPlan)> = None;
        for (pos, index) in c.indexes().iter().enumerate() {
            if index.spec.hidden || index.spec.partial.is_some() {
                continue;
            }
            let b = bounds_for(index, &preds, q.collation);
            if !b.constrained[0] {
                continue;
            }
            let n = scan_fields(&b);
            if best.as_ref().is_none_or(|(m, _)| n > *m) {
                best = Some((
                    n,
                    IxScanPlan {
                        index: pos,
                        scan_fields: n,
                        bounds: b.bounds,
                        forward: true,
                        key_filter: None,
                        count_scan: false,
                        distinct: false,
                        key_range: None,
                    },
                ));
            }
        }
        scans.push(Plan::IxScan(best?.1));
    }
    let access = Plan::Fetch {
        child: Box::new(Plan::Or(scans)),
        residual: Some(q.filter.source().clone()),
    };
    Some(finish(access, q, false, false))
}

/// Find the index a hint names (by name or key pattern).
pub fn hinted_index(c: &Collection, hint: &Bson) -> Result<Option<usize>> {
    let bad = || {
        EngineError::new(
            ErrorCode::BAD_VALUE,
            "hint provided does not correspond to an existing index",
        )
    };
    match hint {
        Bson::String(name) => c
            .indexes()
            .iter()
            .position(|i| &i.spec.name == name)
            .map(Some)
            .ok_or_else(bad),
        Bson::Document(d) if d.is_empty() => Ok(None),
        Bson::Document(d) if d.contains_key("$natural") => Ok(None),
        Bson::Document(d) => c
            .indexes()
            .iter()
            .position(|i| super::value::compare_documents(&i.spec.key, d, None).is_eq())
            .map(Some)
            .ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// Whether mongod's `_id` fast path applies: the filter is exactly
/// `{_id: <scalar>}` (or `{_id: {$eq: scalar}}`) and nothing needs ordering.
fn idhack_value<'a>(q: &Query<'a>) -> Option<&'a Bson> {
    if q.hint.is_some() || q.sort.is_some_and(|s| !s.keys.is_empty()) || q.skip > 0 {
        return None;
    }
    let v = match q.filter.entries().as_slice() {
        [entry] if entry.key == "_id" => match entry.nodes {
            [
                Node::Path {
                    pred: Pred::Cmp(CmpOp::Eq, v),
                    op: Op::Value | Op::Eq,
                    ..
                },
            ] => v,
            _ => return None,
        },
        _ => return None,
    };
    // An embedded document is a plain value unless it is an operator
    // document (mongod's isSimpleIdQuery).
    if !index_friendly(v)
        || matches!(v, Bson::Document(d) if d.keys().any(|k| k.starts_with('$')))
        || (has_strings(v) && q.collation.is_some())
    {
        return None;
    }
    Some(v)
}

/// mongod's plan for `distinct` when an index is led by the field (not
/// multikey, the query's collation) and the filter is answered exactly by
/// one range of its bounds: PROJECTION_COVERED over DISTINCT_SCAN.
fn distinct_plan(c: &Collection, q: &Query<'_>, key: &str) -> Option<Plan> {
    let preds = collect_predicates(q.filter);
    for (pos, index) in c.indexes().iter().enumerate() {
        let spec = &index.spec;
        if spec.hidden
            || spec.partial.is_some()
            || spec.fields.first().is_none_or(|(f, _)| f != key)
            || index
                .multikey_paths()
                .first()
                .is_some_and(|p| !p.is_empty())
            || spec.collation.as_ref() != q.collation
        {
            continue;
        }
        let b = bounds_for(index, &preds, q.collation);
        let one_range = b.bounds.first().is_some_and(|iv| iv.len() == 1)
            && b.constrained.iter().skip(1).all(|c| !*c);
        if !one_range || (!q.filter.is_empty() && !b.exact) {
            continue;
        }
        let scan = Plan::IxScan(IxScanPlan {
            index: pos,
            scan_fields: usize::from(b.constrained[0]),
            bounds: b.bounds,
            forward: true,
            key_filter: None,
            count_scan: false,
            distinct: true,
            key_range: None,
        });
        return Some(Plan::Projection {
            child: Box::new(scan),
            kind: ProjectionKind::Covered,
            spec: bson::doc! {key: 1, "_id": 0},
        });
    }
    None
}

/// Every candidate plan for `q`, in index order, COLLSCAN when none applies.
pub fn candidates(c: &Collection, q: &Query<'_>) -> Result<Vec<Plan>> {
    let min = q.min.filter(|d| !d.is_empty());
    let max = q.max.filter(|d| !d.is_empty());
    if min.is_some() || max.is_some() {
        return min_max_plan(c, q, min, max).map(|p| vec![p]);
    }
    if let Some(key) = q.distinct
        && q.hint.is_none()
        && let Some(plan) = distinct_plan(c, q, key)
    {
        return Ok(vec![plan]);
    }
    if let Some(hint) = q.hint {
        let preds = collect_predicates(q.filter);
        return Ok(match hinted_index(c, hint)? {
            Some(pos) => index_plan(c, pos, q, &preds, true).into_iter().collect(),
            None => vec![finish(collscan(q), q, false, false)],
        });
    }
    if let Some(id) = idhack_value(q) {
        let mut plan = Plan::IdHack(id.clone());
        if let Some(p) = q.projection.filter(|p| !p.is_empty()) {
            plan = Plan::Projection {
                child: Box::new(plan),
                kind: projection_kind(p),
                spec: p.clone(),
            };
        }
        return Ok(vec![plan]);
    }
    let preds = collect_predicates(q.filter);
    let mut out: Vec<Plan> = (0..c.indexes().len())
        .filter_map(|pos| index_plan(c, pos, q, &preds, false))
        .collect();
    if let Some(or) = or_plan(c, q) {
        out.push(or);
    }
    if out.is_empty() {
        out.push(finish(collscan(q), q, false, false));
    }
    Ok(out)
}

/// Whether a `min` or `max` document fits an index: exactly its key
/// pattern's fields, in order; a string, object or array bound only when the
/// index compares strings as the query does (mongod's
/// `indexCompatibleMaxMin`).
fn fits_min_max(bound: &Document, index: &Index, query_collation: Option<&Collation>) -> bool {
    let same_collation = index.spec.collation.as_ref() == query_collation;
    bound.len() == index.spec.fields.len()
        && bound
            .iter()
            .zip(&index.spec.fields)
            .all(|((k, v), (f, _))| k == f && (same_collation || !collatable(v)))
}

fn collatable(v: &Bson) -> bool {
    matches!(
        v,
        Bson::String(_) | Bson::Symbol(_) | Bson::Document(_) | Bson::Array(_)
    )
}

/// The plan of a `find` with `min` and/or `max`, as mongod 7.0 builds it
/// (`QueryPlanner::plan`): no planning, one scan of the hinted index from
/// the `min` key (inclusive) to the `max` key (exclusive), a missing bound
/// being the start or the end of the index; then a FETCH applying the whole
/// filter, unless the filter is empty and the projection is covered.
fn min_max_plan(
    c: &Collection,
    q: &Query<'_>,
    min: Option<&Document>,
    max: Option<&Document>,
) -> Result<Plan> {
    // That `min` and `max` name the same fields (51176) was checked when
    // the request was read (`ops::find_run`).
    let pos = match q.hint {
        Some(Bson::Document(h)) if h.contains_key("$natural") => {
            return Err(EngineError::new(
                ErrorCode::NO_QUERY_EXECUTION_PLANS,
                "min and max are incompatible with $natural",
            ));
        }
        Some(h) => hinted_index(c, h)?,
        None => None,
    };
    let Some(index) = pos.and_then(|p| c.indexes().get(p)) else {
        return Err(EngineError::new(
            ErrorCode(51173),
            "When using min()/max() a hint of which index to use must be provided",
        ));
    };
    let pos = pos.unwrap_or_default();
    if [min, max]
        .into_iter()
        .flatten()
        .any(|b| !fits_min_max(b, index, q.collation))
    {
        return Err(EngineError::new(
            ErrorCode(51174),
            "The index chosen is not compatible with min/max",
        ));
    }
    let spec = &index.spec;
    // A missing bound is the first (or last) key in index order.
    let finish_bound = |b: Option<&Document>, start: bool| -> Vec<Bson> {
        match b {
            Some(d) => d.values().cloned().collect(),
            None => spec
                .fields
                .iter()
                .map(|(_, asc)| {
                    if *asc == start {
                        Bson::MinKey
                    } else {
                        Bson::MaxKey
                    }
                })
                .collect(),
        }
    };
    let range = KeyRange {
        min: finish_bound(min, true),
        max: finish_bound(max, false),
    };
    let collation = spec.collation.as_ref();
    if range.encode(&spec.fields, collation, true) >= range.encode(&spec.fields, collation, false) {
        return Err(EngineError::new(
            ErrorCode(51175),
            "The value provided for min() does not come before the value provided for max() in the hinted index",
        ));
    }
    let whole = IndexBounds {
        bounds: vec![vec![Interval::all()]; spec.fields.len()],
        constrained: vec![false; spec.fields.len()],
        exact: false,
    };
    let sort = q.sort.filter(|s| !s.keys.is_empty());
    let sort_dir = sort.and_then(|s| provides_sort(index, &whole, s, q.collation));
    let covered = q.filter.is_empty()
        && !index.is_multikey()
        && spec.collation.is_none()
        && q.projection.is_some_and(|p| covered_by(p, index))
        && sort.is_none_or(|s| {
            s.keys
                .iter()
                .all(|(k, _)| spec.fields.iter().any(|(f, _)| f == k))
        });
    let scan = Plan::IxScan(IxScanPlan {
        index: pos,
        bounds: whole.bounds,
        scan_fields: 0,
        forward: sort_dir.unwrap_or(true),
        key_filter: None,
        count_scan: false,
        distinct: false,
        key_range: Some(range),
    });
    let access = if covered {
        scan
    } else {
        Plan::Fetch {
            child: Box::new(scan),
            residual: (!q.filter.is_empty()).then(|| q.filter.source().clone()),
        }
    };
    Ok(finish(access, q, sort_dir.is_some(), covered))
}

impl KeyRange {
    /// The `min` (`start`) or `max` key as index key bytes (without the
    /// end marker): byte order is index order.
    pub fn encode(
        &self,
        fields: &[(String, bool)],
        collation: Option<&Collation>,
        start: bool,
    ) -> Vec<u8> {
        let values = if start { &self.min } else { &self.max };
        let mut out = Vec::new();
        for (v, (_, asc)) in values.iter().zip(fields) {
            let mut part = Vec::new();
            super::keystring::append_value(&mut part, v, collation);
            if !asc {
                for b in &mut part {
                    *b = !*b;
                }
            }
            out.extend(part);
        }
        out
    }
}

fn collscan(_q: &Query<'_>) -> Plan {
    Plan::CollScan
}
