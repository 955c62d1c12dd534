//! mongod's pipeline rewrites, applied to the stage documents before a
//! pipeline runs (and before it is explained, so explain shows what ran).
//!
//! The rewrites are the ones the MongoDB manual lists under "Aggregation
//! Pipeline Optimization" for 7.0: `$match` + `$match` merged under `$and`;
//! `$sort` + `$match` swapped; `$skip` + `$limit` reordered (the limit grows
//! by the skip); `$limit` + `$limit` and `$skip` + `$skip` coalesced; `$skip`
//! and `$limit` moved ahead of `$project`/`$addFields`/`$set`/`$unset`, and
//! `$limit` ahead of a `$lookup` (which neither adds nor drops documents);
//! `$sort` + `$limit` coalesced into a top-k sort; a `$match` split into its
//! top-level conditions, each moved ahead of the reshaping stages and
//! `$lookup`s whose output it does not read; `$lookup` + `$unwind` of its
//! `as` field absorbed into the `$lookup` (`unwinding`), and a following
//! `$match` on the joined field absorbed too (`matching`).
//!
//! Each rewritten stage keeps two forms: what explain shows (mongod's form,
//! such as `{$sort: {sortKey, limit}}`) and the plain stages that compute
//! it, so execution uses the stage code every pipeline uses.

use bson::{Bson, Document, doc};

/// One stage after optimisation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Opt {
    /// A stage as written.
    Plain(Document),
    /// `$sort` with a top-k `limit`.
    SortLimit(Document, u64),
    /// `$lookup` with an absorbed `$unwind` (its spec) and `$match` (the
    /// condition as written after the unwind, on the `as` field).
    Lookup {
        spec: Document,
        unwind: Option<Bson>,
        matching: Option<Document>,
    },
}

impl Opt {
    /// The stage as mongod's explain shows it.
    pub(crate) fn shown(&self) -> Document {
        match self {
            Opt::Plain(d) => d.clone(),
            Opt::SortLimit(spec, n) => {
                doc! {"$sort": {"sortKey": spec.clone(), "limit": *n as i64}}
            }
            Opt::Lookup {
                spec,
                unwind,
                matching,
            } => {
                let mut s = spec.clone();
                if let Some(u) = unwind {
                    let mut unwinding = doc! {"preserveNullAndEmptyArrays": false};
                    if let Bson::Document(u) = u {
                        if let Some(p) = u.get("preserveNullAndEmptyArrays") {
                            unwinding.insert("preserveNullAndEmptyArrays", p.clone());
                        }
                        if let Some(i) = u.get("includeArrayIndex") {
                            unwinding.insert("includeArrayIndex", i.clone());
                        }
                    }
                    s.insert("unwinding", unwinding);
                }
                if let Some(m) = matching {
                    let m = strip_prefix(m, as_field(spec).unwrap_or(""));
                    s.insert("matching", crate::explain::parsed_query(&m));
                }
                doc! {"$lookup": s}
            }
        }
    }

    /// The plain stages that compute it.
    pub(crate) fn runnable(&self) -> Vec<Document> {
        match self {
            Opt::Plain(d) => vec![d.clone()],
            Opt::SortLimit(spec, n) => {
                vec![doc! {"$sort": spec.clone()}, doc! {"$limit": *n as i64}]
            }
            Opt::Lookup {
                spec,
                unwind,
                matching,
            } => {
                let mut out = vec![doc! {"$lookup": spec.clone()}];
                if let Some(u) = unwind {
                    out.push(doc! {"$unwind": u.clone()});
                }
                if let Some(m) = matching {
                    out.push(doc! {"$match": m.clone()});
                }
                out
            }
        }
    }

    /// The stage name (`$match`, `$sort`, …).
    pub(crate) fn name(&self) -> &str {
        match self {
            Opt::Plain(d) => d.keys().next().map_or("", String::as_str),
            Opt::SortLimit(..) => "$sort",
            Opt::Lookup { .. } => "$lookup",
        }
    }
}

fn as_field(spec: &Document) -> Option<&str> {
    spec.get_str("as").ok()
}

fn plain<'a>(o: &'a Opt, name: &str) -> Option<&'a Bson> {
    match o {
        Opt::Plain(d) if d.len() == 1 => d.get(name),
        _ => None,
    }
}

fn count(v: &Bson) -> Option<u64> {
    match v {
        Bson::Int32(n) if *n >= 0 => Some(*n as u64),
        Bson::Int64(n) if *n >= 0 => Some(*n as u64),
        Bson::Double(d) if *d >= 0.0 && d.fract() == 0.0 => Some(*d as u64),
        _ => None,
    }
}

/// `{field: cond}` with the leading `prefix.` removed from field paths.
fn strip_prefix(m: &Document, prefix: &str) -> Document {
    let mut out = Document::new();
    let lead = format!("{prefix}.");
    for (k, v) in m {
        let key = k.strip_prefix(&lead).map_or(k.clone(), str::to_string);
        out.insert(key, v.clone());
    }
    out
}

/// The field paths a match condition reads, or `None` when it cannot be
/// told (`$expr`, `$where`, `$text`, …).
fn match_paths(cond: &Document, out: &mut Vec<String>) -> bool {
    for (k, v) in cond {
        match k.as_str() {
            "$and" | "$or" | "$nor" => {
                let Bson::Array(items) = v else { return false };
                for item in items {
                    let Bson::Document(d) = item else {
                        return false;
                    };
                    if !match_paths(d, out) {
                        return false;
                    }
                }
            }
            "$comment" => {}
            k if k.starts_with('$') => return false,
            _ => out.push(k.clone()),
        }
    }
    true
}

fn overlaps(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}

/// What a stage leaves unchanged, for moving a `$match` ahead of it.
enum Keeps {
    /// Every field but these.
    AllBut(Vec<String>),
    /// Only these fields, unchanged (an inclusion `$project`).
    Only(Vec<String>),
}

fn keeps(o: &Opt) -> Option<Keeps> {
    match o {
        Opt::Lookup {
            spec,
            unwind: None,
            matching: None,
        } => Some(Keeps::AllBut(vec![as_field(spec)?.to_string()])),
        Opt::Plain(d) => {
            let (name, spec) = d.iter().next()?;
            match name.as_str() {
                "$addFields" | "$set" => {
                    Some(Keeps::AllBut(spec.as_document()?.keys().cloned().collect()))
                }
                "$unset" => match spec {
                    Bson::String(s) => Some(Keeps::AllBut(vec![s.clone()])),
                    Bson::Array(a) => Some(Keeps::AllBut(
                        a.iter()
                            .map(|v| v.as_str().map(str::to_string))
                            .collect::<Option<_>>()?,
                    )),
                    _ => None,
                },
                "$project" => {
                    let spec = spec.as_document()?;
                    let flag = |v: &Bson| match v {
                        Bson::Boolean(b) => Some(*b),
                        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => {
                            Some(super::value::as_f64(v).is_some_and(|n| n != 0.0))
                        }
                        _ => None,
                    };
                    let mut included = Vec::new();
                    let mut excluded = Vec::new();
                    let mut id_excluded = false;
                    for (k, v) in spec {
                        match flag(v) {
                            Some(true) => included.push(k.clone()),
                            Some(false) if k == "_id" => id_excluded = true,
                            Some(false) => excluded.push(k.clone()),
                            None => return None,
                        }
                    }
                    if !included.is_empty() {
                        if !id_excluded && !included.iter().any(|k| k == "_id") {
                            included.push("_id".into());
                        }
                        Some(Keeps::Only(included))
                    } else {
                        if id_excluded {
                            excluded.push("_id".into());
                        }
                        Some(Keeps::AllBut(excluded))
                    }
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a condition reading `paths` reads the same values before the
/// stage as after it.
fn independent(paths: &[String], k: &Keeps) -> bool {
    match k {
        Keeps::AllBut(changed) => !paths.iter().any(|p| changed.iter().any(|c| overlaps(p, c))),
        Keeps::Only(kept) => paths.iter().all(|p| {
            kept.iter()
                .any(|c| p == c || p.starts_with(&format!("{c}.")))
        }),
    }
}

/// Split a `$match` into the conditions that may move ahead of a stage and
/// those that must stay.
fn split_match(m: &Document, k: &Keeps) -> (Document, Document) {
    let mut movable = Document::new();
    let mut stays = Document::new();
    for (key, v) in m {
        let single = doc! {key.clone(): v.clone()};
        let mut paths = Vec::new();
        if match_paths(&single, &mut paths) && !paths.is_empty() && independent(&paths, k) {
            movable.insert(key.clone(), v.clone());
        } else {
            stays.insert(key.clone(), v.clone());
        }
    }
    (movable, stays)
}

fn match_of(o: &Opt) -> Option<&Document> {
    plain(o, "$match")?.as_document()
}

/// Apply one rewrite at `i` (looking at `i` and `i + 1`); true if changed.
fn rewrite_at(v: &mut Vec<Opt>, i: usize) -> bool {
    let (a, b) = (&v[i], &v[i + 1]);
    // $match + $match
    if let (Some(x), Some(y)) = (match_of(a), match_of(b)) {
        let merged = doc! {"$match": {"$and": [x.clone(), y.clone()]}};
        v[i] = Opt::Plain(merged);
        v.remove(i + 1);
        return true;
    }
    // $sort + $match, $sort + $limit
    let sort_spec = match a {
        Opt::SortLimit(s, n) => Some((s.clone(), Some(*n))),
        Opt::Plain(_) => plain(a, "$sort")
            .and_then(Bson::as_document)
            .map(|s| (s.clone(), None)),
        _ => None,
    };
    if let Some((spec, limit)) = &sort_spec {
        // A top-k sort keeps its place: filtering first would change which
        // documents it keeps.
        if match_of(b).is_some() && limit.is_none() {
            v.swap(i, i + 1);
            return true;
        }
        if let Some(n) = plain(b, "$limit").and_then(count) {
            let n = limit.map_or(n, |l| l.min(n));
            v[i] = Opt::SortLimit(spec.clone(), n);
            v.remove(i + 1);
            return true;
        }
    }
    // $skip + $limit, $limit + $limit, $skip + $skip
    if let (Some(s), Some(l)) = (
        plain(a, "$skip").and_then(count),
        plain(b, "$limit").and_then(count),
    ) {
        v[i] = Opt::Plain(doc! {"$limit": (s + l) as i64});
        v[i + 1] = Opt::Plain(doc! {"$skip": s as i64});
        return true;
    }
    if let (Some(x), Some(y)) = (
        plain(a, "$limit").and_then(count),
        plain(b, "$limit").and_then(count),
    ) {
        v[i] = Opt::Plain(doc! {"$limit": x.min(y) as i64});
        v.remove(i + 1);
        return true;
    }
    if let (Some(x), Some(y)) = (
        plain(a, "$skip").and_then(count),
        plain(b, "$skip").and_then(count),
    ) {
        v[i] = Opt::Plain(doc! {"$skip": (x + y) as i64});
        v.remove(i + 1);
        return true;
    }
    // $skip / $limit ahead of stages that keep the document count.
    let reshapes = matches!(a.name(), "$project" | "$addFields" | "$set" | "$unset")
        && matches!(a, Opt::Plain(_));
    let plain_lookup = matches!(a, Opt::Lookup { unwind: None, .. });
    if (reshapes && (plain(b, "$skip").is_some() || plain(b, "$limit").is_some()))
        || (plain_lookup && plain(b, "$limit").is_some())
    {
        v.swap(i, i + 1);
        return true;
    }
    // $lookup + $unwind of its `as` field
    if let Opt::Lookup {
        spec,
        unwind: None,
        matching: None,
    } = a
        && let Some(u) = plain(b, "$unwind")
    {
        let path = match u {
            Bson::String(s) => Some(s.as_str()),
            Bson::Document(d) => d.get_str("path").ok(),
            _ => None,
        };
        if let (Some(path), Some(as_f)) = (path, as_field(spec))
            && path.strip_prefix('$') == Some(as_f)
        {
            let spec = spec.clone();
            v[i] = Opt::Lookup {
                spec,
                unwind: Some(u.clone()),
                matching: None,
            };
            v.remove(i + 1);
            return true;
        }
    }
    // $lookup (unwinding) + $match on the joined field
    if let Opt::Lookup {
        spec,
        unwind: Some(u),
        matching,
    } = a
        && let Some(m) = match_of(b)
        && let Some(as_f) = as_field(spec)
    {
        let mut changed = vec![as_f.to_string()];
        if let Bson::Document(u) = u
            && let Ok(index_field) = u.get_str("includeArrayIndex")
        {
            changed.push(index_field.to_string());
        }
        let keep = Keeps::AllBut(changed);
        let (movable, stays) = split_match(m, &keep);
        if !movable.is_empty() {
            let lookup = a.clone();
            let mut out = vec![Opt::Plain(doc! {"$match": movable}), lookup];
            if !stays.is_empty() {
                out.push(Opt::Plain(doc! {"$match": stays}));
            }
            v.splice(i..i + 2, out);
            return true;
        }
        // Every condition reads the joined field: absorb it.
        let mut paths = Vec::new();
        if match_paths(m, &mut paths) && paths.iter().all(|p| p.starts_with(&format!("{as_f}."))) {
            let merged = match matching {
                Some(prev) => doc! {"$and": [prev.clone(), m.clone()]},
                None => m.clone(),
            };
            v[i] = Opt::Lookup {
                spec: spec.clone(),
                unwind: Some(u.clone()),
                matching: Some(merged),
            };
            v.remove(i + 1);
            return true;
        }
    }
    // $match ahead of a reshaping stage or a $lookup, for the conditions
    // that do not read what it changes.
    if let Some(m) = match_of(b)
        && let Some(k) = keeps(a)
    {
        let (movable, stays) = split_match(m, &k);
        if !movable.is_empty() {
            let stage = a.clone();
            let mut out = vec![Opt::Plain(doc! {"$match": movable}), stage];
            if !stays.is_empty() {
                out.push(Opt::Plain(doc! {"$match": stays}));
            }
            v.splice(i..i + 2, out);
            return true;
        }
    }
    false
}

/// Rewrite a (valid, already parsed) pipeline as mongod 7.0 would.
pub(crate) fn optimize(stages: &[Document]) -> Vec<Opt> {
    let mut v: Vec<Opt> = stages
        .iter()
        .map(|s| match s.get("$lookup") {
            Some(Bson::Document(spec)) if s.len() == 1 => Opt::Lookup {
                spec: spec.clone(),
                unwind: None,
                matching: None,
            },
            _ => Opt::Plain(s.clone()),
        })
        .collect();
    // Each rewrite shortens the pipeline or moves a $match/$limit/$skip
    // earlier, so this ends; the bound guards against a cycle all the same.
    for _ in 0..(stages.len() + 1) * 16 {
        let mut changed = false;
        let mut i = 0;
        while i + 1 < v.len() {
            if rewrite_at(&mut v, i) {
                changed = true;
                i = i.saturating_sub(1);
            } else {
                i += 1;
            }
        }
        if !changed {
            break;
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(stages: &[Document]) -> Vec<Document> {
        optimize(stages).iter().map(Opt::shown).collect()
    }

    #[test]
    fn sort_limit_coalesce_through_project() {
        let got = shown(&[
            doc! {"$sort": {"a": 1}},
            doc! {"$project": {"b": 0}},
            doc! {"$limit": 5},
        ]);
        assert_eq!(
            got,
            vec![
                doc! {"$sort": {"sortKey": {"a": 1}, "limit": 5i64}},
                doc! {"$project": {"b": 0}}
            ]
        );
    }

    #[test]
    fn skip_limit_reorder() {
        let got = shown(&[doc! {"$skip": 10}, doc! {"$limit": 5}]);
        assert_eq!(got, vec![doc! {"$limit": 15i64}, doc! {"$skip": 10i64}]);
    }

    #[test]
    fn match_split_around_add_fields() {
        let got = shown(&[
            doc! {"$addFields": {"x": {"$add": ["$a", 1]}}},
            doc! {"$match": {"x": 2, "b": 3}},
        ]);
        assert_eq!(
            got,
            vec![
                doc! {"$match": {"b": 3}},
                doc! {"$addFields": {"x": {"$add": ["$a", 1]}}},
                doc! {"$match": {"x": 2}}
            ]
        );
    }

    #[test]
    fn lookup_unwind_match_absorbed() {
        let lookup = doc! {"from": "o", "localField": "k", "foreignField": "k", "as": "j"};
        let got = shown(&[
            doc! {"$lookup": lookup.clone()},
            doc! {"$unwind": "$j"},
            doc! {"$match": {"j.x": 1, "y": 2}},
        ]);
        let mut want = lookup.clone();
        want.insert("unwinding", doc! {"preserveNullAndEmptyArrays": false});
        want.insert("matching", doc! {"x": {"$eq": 1}});
        assert_eq!(got, vec![doc! {"$match": {"y": 2}}, doc! {"$lookup": want}]);
    }

    #[test]
    fn match_stays_behind_a_top_k_sort() {
        let stages = [
            doc! {"$sort": {"a": 1}},
            doc! {"$limit": 2},
            doc! {"$match": {"b": 1}},
        ];
        assert_eq!(
            shown(&stages),
            vec![
                doc! {"$sort": {"sortKey": {"a": 1}, "limit": 2i64}},
                doc! {"$match": {"b": 1}}
            ]
        );
    }

    #[test]
    fn expr_match_stays_behind_projection() {
        let stages = [
            doc! {"$project": {"a": 1}},
            doc! {"$match": {"$expr": {"$eq": ["$a", 1]}}},
        ];
        assert_eq!(shown(&stages), stages.to_vec());
    }
}
