//! Array, set and object-shaping operators (`$size`, `$slice`, `$in`,
//! `$setUnion`, `$zip`, `$sortArray`, `$objectToArray`, …).

use bson::{Bson, Document};

use super::{NamedVals, err, nullish, truthy, type_name};
use crate::collation::Collation;
use crate::error::Result;
use crate::sort::SortSpec;
use crate::value;

fn show(v: Option<&Bson>) -> String {
    v.map_or("missing".to_string(), |b| b.to_string())
}

fn int_arg(v: &Bson) -> Option<i64> {
    if value::is_number(v) {
        value::as_i64(v)
    } else {
        None
    }
}

/// Deduplicate under the collation, keeping the first occurrence.
/// Values as a set under `coll`: each value filed under its index key
/// (`keystring`, whose encoding is equal for values that compare equal,
/// as `$group` finds its groups) and confirmed by comparison, so that a
/// lookup is a hash probe and the set operators run in O(n), not O(n²)
/// (40,000 elements took seconds and could not be interrupted). Each
/// insertion and lookup is a checkpoint of the running operation.
struct ValueSet<'a> {
    coll: Option<&'a Collation>,
    buckets: std::collections::HashMap<Vec<u8>, Vec<Bson>>,
}

impl<'a> ValueSet<'a> {
    fn new(coll: Option<&'a Collation>) -> Self {
        ValueSet {
            coll,
            buckets: std::collections::HashMap::new(),
        }
    }

    fn of(values: &[Bson], coll: Option<&'a Collation>) -> Result<Self> {
        let mut set = ValueSet::new(coll);
        for v in values {
            set.insert(v)?;
        }
        Ok(set)
    }

    /// Add `v`; false when an equal value is already there.
    fn insert(&mut self, v: &Bson) -> Result<bool> {
        crate::limits::checkpoint()?;
        let coll = self.coll;
        let bucket = self
            .buckets
            .entry(crate::keystring::encode_single(v, coll))
            .or_default();
        if bucket.iter().any(|o| value::values_equal(o, v, coll)) {
            return Ok(false);
        }
        bucket.push(v.clone());
        Ok(true)
    }

    fn contains(&self, v: &Bson) -> Result<bool> {
        crate::limits::checkpoint()?;
        Ok(self
            .buckets
            .get(&crate::keystring::encode_single(v, self.coll))
            .is_some_and(|b| b.iter().any(|o| value::values_equal(o, v, self.coll))))
    }

    /// Every value of `values` is in the set.
    fn contains_all(&self, values: &[Bson]) -> Result<bool> {
        for v in values {
            if !self.contains(v)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// `items` without repeats (under `coll`), in their order.
fn dedup<'v>(
    items: impl IntoIterator<Item = &'v Bson>,
    coll: Option<&Collation>,
) -> Result<Vec<Bson>> {
    let mut seen = ValueSet::new(coll);
    let mut out = Vec::new();
    for v in items {
        if seen.insert(v)? {
            out.push(v.clone());
        }
    }
    Ok(out)
}

/// Whether every set of `sets` holds `v`.
fn all_contain(sets: &[ValueSet<'_>], v: &Bson) -> Result<bool> {
    for s in sets {
        if !s.contains(v)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn sorted(mut items: Vec<Bson>, coll: Option<&Collation>) -> Vec<Bson> {
    items.sort_by(|a, b| value::compare(a, b, coll));
    items
}

/// The operators that only read their array arguments: they take them by
/// reference, so that a field path is not copied out of its document first.
pub(super) const BY_REFERENCE: &[&str] = &[
    "$size",
    "$isArray",
    "$arrayElemAt",
    "$first",
    "$last",
    "$slice",
    "$in",
    "$concatArrays",
];

/// The operators of [`BY_REFERENCE`].
pub(super) fn call_ref(
    op: &str,
    vals: &[Option<&Bson>],
    coll: Option<&Collation>,
) -> Option<Result<Option<Bson>>> {
    Some(match op {
        "$size" => match vals[0] {
            Some(Bson::Array(a)) => Ok(Some(Bson::Int32(a.len() as i32))),
            other => Err(err(
                17124,
                format!(
                    "The argument to $size must be an array. Type of argument: {}",
                    type_name(other)
                ),
            )),
        },
        "$isArray" => Ok(Some(Bson::Boolean(matches!(vals[0], Some(Bson::Array(_)))))),
        "$arrayElemAt" => array_elem_at(vals),
        "$first" | "$last" => match vals[0] {
            v if nullish(v) => Ok(Some(Bson::Null)),
            Some(Bson::Array(a)) => Ok(if op == "$first" {
                a.first().cloned()
            } else {
                a.last().cloned()
            }),
            other => Err(err(
                28689,
                format!(
                    "{op}'s argument must be an array, but is {}",
                    type_name(other)
                ),
            )),
        },
        "$slice" => slice(vals),
        "$in" => {
            match vals[1] {
                Some(Bson::Array(a)) => Ok(Some(Bson::Boolean(vals[0].is_some_and(|needle| {
                    a.iter().any(|o| value::values_equal(o, needle, coll))
                })))),
                other => Err(err(
                    40081,
                    format!(
                        "$in requires an array as a second argument, found: {}",
                        type_name(other)
                    ),
                )),
            }
        }
        "$concatArrays" => {
            // Sized before it is built: doubling an array in a `$reduce`
            // stops at 16 MiB without making the copy that passes it.
            // (A null or a wrong type is answered below, in order.)
            let mut size = 5u64;
            let mut arrays = true;
            for &v in vals {
                let Some(a @ Bson::Array(_)) = v else {
                    arrays = false;
                    break;
                };
                let limit = crate::limits::MAX_VALUE_BYTES;
                size += crate::limits::approx_size_within(a, limit).map_or(limit, |(s, _)| s) - 5;
            }
            if arrays && size > crate::limits::MAX_VALUE_BYTES {
                return Some(Err(crate::limits::value_too_large(size)));
            }
            let mut out = Vec::new();
            for &v in vals {
                match v {
                    x if nullish(x) => return Some(Ok(Some(Bson::Null))),
                    Some(Bson::Array(a)) => out.extend(a.iter().cloned()),
                    other => {
                        return Some(Err(err(
                            28664,
                            format!(
                                "$concatArrays only supports arrays, not {}",
                                type_name(other)
                            ),
                        )));
                    }
                }
            }
            Ok(Some(Bson::Array(out)))
        }
        _ => return None,
    })
}

pub(super) fn call(
    op: &str,
    vals: &[Option<Bson>],
    coll: Option<&Collation>,
) -> Option<Result<Option<Bson>>> {
    Some(match op {
        "$indexOfArray" => index_of_array(vals, coll),
        "$range" => range(vals),
        "$reverseArray" => match &vals[0] {
            v if nullish(v.as_ref()) => Ok(Some(Bson::Null)),
            Some(Bson::Array(a)) => Ok(Some(Bson::Array(a.iter().rev().cloned().collect()))),
            other => Err(err(
                34435,
                format!(
                    "The argument to $reverseArray must be an array, but was of type: {}",
                    type_name(other.as_ref())
                ),
            )),
        },
        "$setUnion" | "$setIntersection" | "$setDifference" | "$setEquals" | "$setIsSubset" => {
            set_op(op, vals, coll)
        }
        "$anyElementTrue" | "$allElementsTrue" => match &vals[0] {
            Some(Bson::Array(a)) => Ok(Some(Bson::Boolean(if op == "$anyElementTrue" {
                a.iter().any(|v| truthy(Some(v)))
            } else {
                a.iter().all(|v| truthy(Some(v)))
            }))),
            other => Err(err(
                if op == "$anyElementTrue" {
                    17041
                } else {
                    17040
                },
                format!(
                    "{op}'s argument must be an array, but is {}",
                    type_name(other.as_ref())
                ),
            )),
        },
        "$objectToArray" => match &vals[0] {
            v if nullish(v.as_ref()) => Ok(Some(Bson::Null)),
            Some(Bson::Document(d)) => Ok(Some(Bson::Array(
                d.iter()
                    .map(|(k, v)| Bson::Document(bson::doc! {"k": k.clone(), "v": v.clone()}))
                    .collect(),
            ))),
            other => Err(err(
                40390,
                format!(
                    "$objectToArray requires a document input, found: {}",
                    type_name(other.as_ref())
                ),
            )),
        },
        "$arrayToObject" => array_to_object(&vals[0]),
        _ => return None,
    })
}

fn array_elem_at(vals: &[Option<&Bson>]) -> Result<Option<Bson>> {
    let (a, i) = (vals[0], vals[1]);
    if nullish(a) || nullish(i) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(arr)) = a else {
        return Err(err(
            28689,
            format!(
                "$arrayElemAt's first argument must be an array, but is {}",
                type_name(a)
            ),
        ));
    };
    let Some(iv) = i.filter(|v| value::is_number(v)) else {
        return Err(err(
            28690,
            format!(
                "$arrayElemAt's second argument must be a numeric value, but is {}",
                type_name(i)
            ),
        ));
    };
    let Some(idx) = value::as_i64(iv).filter(|n| i32::try_from(*n).is_ok()) else {
        return Err(err(
            28691,
            format!(
                "$arrayElemAt's second argument must be representable as a 32-bit integer: {iv}"
            ),
        ));
    };
    let pos = if idx < 0 { arr.len() as i64 + idx } else { idx };
    Ok(usize::try_from(pos).ok().and_then(|p| arr.get(p)).cloned())
}

fn slice(vals: &[Option<&Bson>]) -> Result<Option<Bson>> {
    if vals.iter().any(|v| nullish(*v)) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(arr)) = vals[0] else {
        return Err(err(
            28724,
            format!(
                "First argument to $slice must be an array, but is of type: {}",
                type_name(vals[0])
            ),
        ));
    };
    let mut nums = Vec::with_capacity(2);
    for (i, v) in vals[1..].iter().enumerate() {
        let (which, code) = if i == 0 {
            ("Second", 28725)
        } else {
            ("Third", 28727)
        };
        match v {
            Some(b) if value::is_number(b) => {
                match value::as_i64(b).filter(|n| i32::try_from(*n).is_ok()) {
                    Some(n) => nums.push(n),
                    None => {
                        return Err(err(
                            code + 1,
                            format!(
                                "{which} argument to $slice can't be represented as a 32-bit integer: {b}"
                            ),
                        ));
                    }
                }
            }
            other => {
                return Err(err(
                    code,
                    format!(
                        "{which} argument to $slice must be {}, but is of type: {}",
                        if i == 0 { "a numeric value" } else { "numeric" },
                        type_name(*other)
                    ),
                ));
            }
        }
    }
    let len = arr.len() as i64;
    let (start, count) = match nums.as_slice() {
        [n] if *n >= 0 => (0, *n),
        [n] => ((len + n).max(0), len),
        [p, n] => {
            if *n <= 0 {
                return Err(err(
                    28729,
                    format!("Third argument to $slice must be positive: {n}"),
                ));
            }
            let s = if *p < 0 {
                (len + p).max(0)
            } else {
                (*p).min(len)
            };
            (s, *n)
        }
        _ => (0, 0),
    };
    let out = arr
        .iter()
        .skip(start as usize)
        .take(count.max(0) as usize)
        .cloned()
        .collect();
    Ok(Some(Bson::Array(out)))
}

fn index_of_array(vals: &[Option<Bson>], coll: Option<&Collation>) -> Result<Option<Bson>> {
    let arr = match &vals[0] {
        v if nullish(v.as_ref()) => return Ok(Some(Bson::Null)),
        Some(Bson::Array(a)) => a,
        other => {
            return Err(err(
                40090,
                format!(
                    "$indexOfArray requires an array as a first argument, found: {}",
                    type_name(other.as_ref())
                ),
            ));
        }
    };
    let needle = vals[1].clone().unwrap_or(Bson::Null);
    let bound = |i: usize, default: usize| -> Result<usize> {
        match vals.get(i) {
            None => Ok(default),
            Some(v) => match v.as_ref().and_then(int_arg) {
                Some(n) if n >= 0 => Ok(n as usize),
                Some(_) => Err(err(
                    40097,
                    format!(
                        "$indexOfArray requires a nonnegative {} index",
                        if i == 2 { "starting" } else { "ending" }
                    ),
                )),
                None => Err(err(
                    40096,
                    format!(
                        "$indexOfArray requires an integral {} index, found a value of type: {}",
                        if i == 2 { "starting" } else { "ending" },
                        type_name(v.as_ref())
                    ),
                )),
            },
        }
    };
    let start = bound(2, 0)?;
    let end = bound(3, arr.len())?.min(arr.len());
    let found = (start..end).find(|&i| value::values_equal(&arr[i], &needle, coll));
    Ok(Some(Bson::Int32(found.map_or(-1, |i| i as i32))))
}

fn range(vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    let get = |i: usize, code: i32, what: &str| -> Result<i64> {
        let v = vals.get(i).and_then(|v| v.as_ref());
        match v {
            Some(b) if value::is_number(b) => value::as_i64(b)
                .filter(|n| i32::try_from(*n).is_ok())
                .ok_or_else(|| {
                    err(
                        code + 1,
                        format!("$range requires a {what} that can be represented as a 32-bit integer, found value: {b}"),
                    )
                }),
            other => Err(err(
                code,
                format!(
                    "$range requires a numeric {what}, found value of type: {}",
                    type_name(other)
                ),
            )),
        }
    };
    let start = get(0, 34443, "starting value")?;
    let end = get(1, 34445, "ending value")?;
    let step = if vals.len() > 2 {
        get(2, 34447, "step value")?
    } else {
        1
    };
    if step == 0 {
        return Err(err(34449, "$range requires a non-zero step value"));
    }
    // mongod refuses ranges whose values would take more than
    // `internalQueryMaxRangeBytes` (100 MB, 16 bytes a value), so that a
    // stray `$range: [0, 2147483647]` cannot exhaust memory.
    let count = if step > 0 {
        (end - start).max(0) / step + i64::from((end - start).max(0) % step != 0)
    } else {
        (start - end).max(0) / -step + i64::from((start - end).max(0) % -step != 0)
    };
    let needed = 24 + count.max(0) as u64 * 16;
    let limit = crate::limits::RANGE_BYTES.get();
    if needed >= limit {
        return Err(crate::error::EngineError::new(
            crate::error::ErrorCode::EXCEEDED_MEMORY_LIMIT,
            format!(
                "$range would use too much memory ({needed} bytes) and cannot spill to disk. Memory limit: {limit} bytes"
            ),
        ));
    }
    // And, as every value an expression builds, within 16 MiB (8 bytes a
    // value as `approx_size` counts them): sized before it is built.
    let size = 5 + count.max(0) as u64 * 8;
    if size > crate::limits::MAX_VALUE_BYTES {
        return Err(crate::limits::value_too_large(size));
    }
    let mut out = Vec::with_capacity(count as usize);
    let mut i = start;
    while (step > 0 && i < end) || (step < 0 && i > end) {
        out.push(Bson::Int32(i as i32));
        i += step;
    }
    Ok(Some(Bson::Array(out)))
}

fn set_op(op: &str, vals: &[Option<Bson>], coll: Option<&Collation>) -> Result<Option<Bson>> {
    let null_ok = matches!(op, "$setUnion" | "$setIntersection" | "$setDifference");
    let mut sets: Vec<&Vec<Bson>> = Vec::with_capacity(vals.len());
    for (i, v) in vals.iter().enumerate() {
        match v {
            Some(Bson::Array(a)) => sets.push(a),
            x if null_ok && nullish(x.as_ref()) => return Ok(Some(Bson::Null)),
            other => {
                let (code, msg) = match op {
                    "$setUnion" => (
                        17043,
                        "All operands of $setUnion must be arrays. One argument is of type:"
                            .to_string(),
                    ),
                    "$setIntersection" => (
                        17047,
                        "All operands of $setIntersection must be arrays. One argument is of type:"
                            .to_string(),
                    ),
                    "$setDifference" => (
                        if i == 0 { 17048 } else { 17049 },
                        format!(
                            "both operands of $setDifference must be arrays. {} argument is of type:",
                            if i == 0 { "First" } else { "Second" }
                        ),
                    ),
                    "$setEquals" => (
                        17044,
                        format!(
                            "All operands of $setEquals must be arrays. {}-th argument is of type:",
                            i + 1
                        ),
                    ),
                    _ => (
                        if i == 0 { 17046 } else { 17042 },
                        format!(
                            "both operands of $setIsSubset must be arrays. {} argument is of type:",
                            if i == 0 { "First" } else { "Second" }
                        ),
                    ),
                };
                return Err(err(code, format!("{msg} {}", type_name(other.as_ref()))));
            }
        }
    }
    let out = match op {
        // mongod builds union and intersection in an ordered set, so they
        // come out sorted; a difference keeps the first operand's order.
        "$setUnion" => Bson::Array(sorted(dedup(sets.into_iter().flatten(), coll)?, coll)),
        "$setIntersection" => {
            let Some((first, rest)) = sets.split_first() else {
                return Ok(Some(Bson::Array(Vec::new())));
            };
            let rest = rest
                .iter()
                .map(|s| ValueSet::of(s, coll))
                .collect::<Result<Vec<_>>>()?;
            let mut kept = Vec::new();
            for v in dedup(first.iter(), coll)? {
                if all_contain(&rest, &v)? {
                    kept.push(v);
                }
            }
            Bson::Array(sorted(kept, coll))
        }
        "$setDifference" => {
            let other = ValueSet::of(sets[1], coll)?;
            let mut kept = Vec::new();
            for v in dedup(sets[0].iter(), coll)? {
                if !other.contains(&v)? {
                    kept.push(v);
                }
            }
            Bson::Array(kept)
        }
        "$setEquals" => {
            let first = ValueSet::of(sets[0], coll)?;
            let mut equal = true;
            for s in &sets[1..] {
                if !first.contains_all(s)? || !ValueSet::of(s, coll)?.contains_all(sets[0])? {
                    equal = false;
                    break;
                }
            }
            Bson::Boolean(equal)
        }
        _ => Bson::Boolean(ValueSet::of(sets[1], coll)?.contains_all(sets[0])?),
    };
    Ok(Some(out))
}

fn array_to_object(v: &Option<Bson>) -> Result<Option<Bson>> {
    let arr = match v {
        x if nullish(x.as_ref()) => return Ok(Some(Bson::Null)),
        Some(Bson::Array(a)) => a,
        other => {
            return Err(err(
                40386,
                format!(
                    "$arrayToObject requires an array input, found: {}",
                    type_name(other.as_ref())
                ),
            ));
        }
    };
    let mut out = Document::new();
    for item in arr {
        match item {
            Bson::Document(d) => {
                if d.len() != 2 || !d.contains_key("k") || !d.contains_key("v") {
                    return Err(err(
                        40392,
                        format!(
                            "$arrayToObject requires an object keys of 'k' and 'v'. Found incorrect number of keys:{}",
                            d.len()
                        ),
                    ));
                }
                let Some(Bson::String(k)) = d.get("k") else {
                    return Err(err(
                        40394,
                        format!(
                            "$arrayToObject requires an object with keys 'k' and 'v', where the value of 'k' must be of type string. Found type: {}",
                            type_name(d.get("k"))
                        ),
                    ));
                };
                out.insert(k.clone(), d.get("v").cloned().unwrap_or(Bson::Null));
            }
            Bson::Array(pair) => {
                if pair.len() != 2 {
                    return Err(err(
                        40397,
                        format!(
                            "$arrayToObject requires an array of size 2 arrays,found array of size: {}",
                            pair.len()
                        ),
                    ));
                }
                let Bson::String(k) = &pair[0] else {
                    return Err(err(
                        40395,
                        format!(
                            "$arrayToObject requires an array of key-value pairs, where the key must be of type string. Found key type: {}",
                            value::type_alias(&pair[0])
                        ),
                    ));
                };
                out.insert(k.clone(), pair[1].clone());
            }
            other => {
                return Err(err(
                    40398,
                    format!(
                        "Unrecognised input type format for $arrayToObject: {}",
                        value::type_alias(other)
                    ),
                ));
            }
        }
    }
    Ok(Some(Bson::Document(out)))
}

/// Sort values by a `$sortArray` `sortBy` (a direction or a sort document).
pub(crate) fn sort_values(
    items: &mut [Bson],
    sort_by: &Bson,
    coll: Option<&Collation>,
) -> Result<()> {
    match sort_by {
        Bson::Document(spec) => {
            let spec = SortSpec::parse(spec)?;
            let empty = Document::new();
            items.sort_by(|a, b| {
                let da = if let Bson::Document(d) = a { d } else { &empty };
                let db = if let Bson::Document(d) = b { d } else { &empty };
                match (a, b) {
                    (Bson::Document(_), Bson::Document(_)) => spec.compare(da, db, coll),
                    _ => value::compare(a, b, coll),
                }
            });
            Ok(())
        }
        v if value::as_i64(v) == Some(1) || value::as_i64(v) == Some(-1) => {
            let desc = value::as_i64(v) == Some(-1);
            items.sort_by(|a, b| {
                let c = value::compare(a, b, coll);
                if desc { c.reverse() } else { c }
            });
            Ok(())
        }
        _ => Err(err(
            2942507,
            "$sortArray requires sortBy to be either 1 or -1 or a document",
        )),
    }
}

pub(super) fn call_named(
    op: &str,
    a: &NamedVals,
    coll: Option<&Collation>,
) -> Option<Result<Option<Bson>>> {
    Some(match op {
        "$sortArray" => (|| {
            if let Some(k) = a.unknown(&["input", "sortBy"]) {
                return Err(err(
                    2942504,
                    format!("$sortArray found an unknown argument: {k}"),
                ));
            }
            let sort_by = a
                .get("sortBy")
                .ok_or_else(|| err(2942503, "$sortArray requires sortBy to be specified"))?;
            match a.get("input") {
                v if nullish(v) => Ok(Some(Bson::Null)),
                Some(Bson::Array(items)) => {
                    let mut items = items.clone();
                    sort_values(&mut items, sort_by, coll)?;
                    Ok(Some(Bson::Array(items)))
                }
                other => Err(err(
                    2942504,
                    format!(
                        "The input argument to $sortArray must be an array, but was of type: {}",
                        type_name(other)
                    ),
                )),
            }
        })(),
        "$zip" => zip(a),
        "$firstN" | "$lastN" | "$maxN" | "$minN" => (|| {
            let n = match a.get("n") {
                Some(v) => match int_arg(v) {
                    Some(n) if n > 0 => n as usize,
                    _ => {
                        return Err(err(
                            5787908,
                            format!("Value for 'n' must be a positive integral value, found {v}"),
                        ));
                    }
                },
                None => return Err(err(5787906, format!("Missing value for 'n' in {op}"))),
            };
            let items = match a.get("input") {
                Some(Bson::Array(items)) => items.clone(),
                v if nullish(v) && matches!(op, "$maxN" | "$minN") => return Ok(Some(Bson::Null)),
                other => {
                    return Err(err(
                        5788200,
                        format!("Input must be an array, found {}", show(other)),
                    ));
                }
            };
            let out: Vec<Bson> = match op {
                "$firstN" => items.into_iter().take(n).collect(),
                "$lastN" => {
                    let skip = items.len().saturating_sub(n);
                    items.into_iter().skip(skip).collect()
                }
                _ => {
                    let mut vs: Vec<Bson> =
                        items.into_iter().filter(|v| !nullish(Some(v))).collect();
                    vs.sort_by(|x, y| {
                        let c = value::compare(x, y, coll);
                        if op == "$maxN" { c.reverse() } else { c }
                    });
                    vs.truncate(n);
                    vs
                }
            };
            Ok(Some(Bson::Array(out)))
        })(),
        _ => return None,
    })
}

fn zip(a: &NamedVals) -> Result<Option<Bson>> {
    let Some(Bson::Array(inputs)) = a.get("inputs") else {
        if nullish(a.get("inputs")) && a.has("inputs") {
            return Ok(Some(Bson::Null));
        }
        return Err(err(
            34460,
            "$zip requires an array of expressions for 'inputs'",
        ));
    };
    let longest = matches!(a.get("useLongestLength"), Some(Bson::Boolean(true)));
    let defaults: Vec<Bson> = match a.get("defaults") {
        Some(Bson::Array(d)) => {
            if !longest {
                return Err(err(
                    34466,
                    "cannot specify defaults unless useLongestLength is true",
                ));
            }
            if d.len() != inputs.len() {
                return Err(err(34467, "defaults and inputs must have the same length"));
            }
            d.clone()
        }
        _ => vec![Bson::Null; inputs.len()],
    };
    let mut arrays = Vec::with_capacity(inputs.len());
    for v in inputs {
        match v {
            Bson::Null | Bson::Undefined => return Ok(Some(Bson::Null)),
            Bson::Array(x) => arrays.push(x),
            other => {
                return Err(err(
                    34468,
                    format!("$zip found a non-array expression in input: {other}"),
                ));
            }
        }
    }
    let len = arrays.iter().map(|x| x.len());
    let n = if longest { len.max() } else { len.min() }.unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(Bson::Array(
            arrays
                .iter()
                .enumerate()
                .map(|(j, x)| x.get(i).cloned().unwrap_or_else(|| defaults[j].clone()))
                .collect(),
        ));
    }
    Ok(Some(Bson::Array(out)))
}

#[cfg(test)]
mod set_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::expr::{Expr, Vars};
    use crate::limits::{Operation, run_as};
    use bson::doc;
    use proptest::prelude::*;

    fn eval(op: &str, args: Vec<Bson>, coll: Option<Collation>) -> Result<Option<Bson>> {
        let mut vars = Vars::default();
        vars.set_collation(coll);
        let args: Vec<Bson> = args
            .into_iter()
            .map(|a| bson::bson!({"$literal": a}))
            .collect();
        Expr::parse(&Bson::Document(doc! {op: args}))?.eval(&Document::new(), &vars)
    }

    /// The definitions, pairwise, as they were written before the sets.
    fn naive(op: &str, sets: &[Vec<Bson>], coll: Option<&Collation>) -> Bson {
        let has = |s: &[Bson], v: &Bson| s.iter().any(|o| value::values_equal(o, v, coll));
        let dedup = |items: Vec<Bson>| {
            let mut out: Vec<Bson> = Vec::new();
            for v in items {
                if !has(&out, &v) {
                    out.push(v);
                }
            }
            out
        };
        match op {
            "$setUnion" => Bson::Array(sorted(dedup(sets.concat()), coll)),
            "$setIntersection" => Bson::Array(sorted(
                dedup(
                    sets[0]
                        .iter()
                        .filter(|v| sets[1..].iter().all(|s| has(s, v)))
                        .cloned()
                        .collect(),
                ),
                coll,
            )),
            "$setDifference" => Bson::Array(dedup(
                sets[0]
                    .iter()
                    .filter(|v| !has(&sets[1], v))
                    .cloned()
                    .collect(),
            )),
            "$setEquals" => {
                Bson::Boolean(sets.iter().all(|s| {
                    s.iter().all(|v| has(&sets[0], v)) && sets[0].iter().all(|v| has(s, v))
                }))
            }
            _ => Bson::Boolean(sets[0].iter().all(|v| has(&sets[1], v))),
        }
    }

    fn value() -> impl Strategy<Value = Bson> {
        prop_oneof![
            (0..6i32).prop_map(Bson::Int32),
            (0..6i64).prop_map(Bson::Int64),
            (0..6i32).prop_map(|i| Bson::Double(f64::from(i))),
            Just(Bson::Double(0.5)),
            Just(Bson::Double(f64::NAN)),
            Just(Bson::Null),
            prop_oneof![Just("a"), Just("A"), Just("b"), Just("é"), Just("E")]
                .prop_map(|s| Bson::String(s.into())),
            (0..3i32).prop_map(|i| Bson::Array(vec![Bson::Int32(i)])),
            (0..3i32).prop_map(|i| Bson::Document(doc! {"k": i})),
        ]
    }

    proptest! {
        /// Hashed sets answer what the pairwise definitions answer, with
        /// and without a case-insensitive collation, mixed numeric types,
        /// NaN, arrays and documents included.
        #[test]
        fn hashed_sets_agree_with_the_pairwise_definitions(
            sets in proptest::collection::vec(proptest::collection::vec(value(), 0..8), 2..4),
            insensitive in any::<bool>(),
        ) {
            let coll = insensitive
                .then(|| Collation::parse(&doc! {"locale": "en", "strength": 2}).unwrap())
                .flatten();
            for op in ["$setUnion", "$setIntersection", "$setDifference", "$setEquals", "$setIsSubset"] {
                let args = match op {
                    "$setDifference" | "$setIsSubset" => sets[..2].to_vec(),
                    _ => sets.clone(),
                };
                let got = eval(op, args.iter().cloned().map(Bson::Array).collect(), coll.clone())
                    .unwrap()
                    .unwrap();
                // Debug text, so that NaN equals NaN.
                prop_assert_eq!(
                    format!("{got:?}"),
                    format!("{:?}", naive(op, &args, coll.as_ref())),
                    "{}",
                    op
                );
            }
        }
    }

    /// 40,000 elements a side: answered (a pairwise scan took seconds), and
    /// an operation whose time is up stops inside the operator with 50
    /// MaxTimeMSExpired instead of finishing it.
    #[test]
    fn large_sets_are_answered_and_interruptible() {
        let a: Vec<Bson> = (0..40_000).map(Bson::Int32).collect();
        let b: Vec<Bson> = (20_000..60_000).map(Bson::Int64).collect();
        let args = || vec![Bson::Array(a.clone()), Bson::Array(b.clone())];
        let union = eval("$setUnion", args(), None).unwrap().unwrap();
        assert_eq!(union.as_array().unwrap().len(), 60_000);
        let both = eval("$setIntersection", args(), None).unwrap().unwrap();
        assert_eq!(both.as_array().unwrap().len(), 20_000);
        let expired = Operation {
            deadline: Some(std::time::Instant::now()),
            ..Operation::default()
        };
        for op in [
            "$setUnion",
            "$setIntersection",
            "$setDifference",
            "$setEquals",
            "$setIsSubset",
        ] {
            let e = run_as(expired.clone(), || eval(op, args(), None)).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::MAX_TIME_MS_EXPIRED, "{op}");
        }
    }
}
