//! The leaf operators of an update (`$set`, `$inc`, `$push`, …): parsing one
//! `field: argument` pair and applying it to the value found at that field,
//! or producing the value to create when the field is missing.

use std::cmp::Ordering;

use bson::{Bson, Document, Timestamp, doc};

use super::arith::{self, ArithOp};
use super::display;
use crate::collation::Collation;
use crate::error::{EngineError, Result};
use crate::filter::Filter;
use crate::value::{self, compare, is_number, type_alias, values_equal};

use super::Env;

/// How `$push` sorts (`$sort: 1` or `$sort: {field: -1, …}`).
#[derive(Debug, Clone)]
pub enum PushSort {
    Whole(bool),
    Fields(Vec<(String, bool)>),
}

/// `$push` with its modifiers.
#[derive(Debug, Clone)]
pub struct PushSpec {
    pub each: Vec<Bson>,
    pub position: Option<i64>,
    pub slice: Option<i64>,
    pub sort: Option<PushSort>,
}

/// How `$pull` recognises elements to remove.
#[derive(Debug, Clone)]
pub enum PullMatcher {
    /// A plain value: equal elements go.
    Equal(Bson),
    /// A query on embedded documents (`{score: {$lt: 5}}`).
    Object(Box<Filter>),
    /// Operators on the element itself (`{$gte: 6}`, a regex), matched on
    /// the element wrapped in a one-field document.
    Wrapped(Box<Filter>),
}

/// The field the wrapped `$pull` matcher puts each element under.
pub const PULL_WRAP: &str = "__pull_element";

/// `and`, `or` or `xor` of `$bit`.
#[derive(Debug, Clone, Copy)]
pub enum BitOp {
    And,
    Or,
    Xor,
}

/// One leaf operation.
#[derive(Debug, Clone)]
pub enum Op {
    Set(Bson),
    SetOnInsert(Bson),
    Unset,
    Inc(Bson),
    Mul(Bson),
    Min(Bson),
    Max(Bson),
    CurrentDate {
        timestamp: bool,
    },
    Push(PushSpec),
    AddToSet(Vec<Bson>),
    Pop {
        first: bool,
    },
    Pull(PullMatcher),
    PullAll(Vec<Bson>),
    Bit(Vec<(BitOp, Bson)>),
    /// The destination of a `$rename`: takes the value moved from `from`.
    RenameTo,
    /// The source of a `$rename`: only reserves the path against conflicts;
    /// the value is moved before the tree is applied.
    RenameFrom,
}

impl Op {
    /// Parse the argument of `operator` for the field named `field`.
    pub fn parse(
        operator: &str,
        field: &str,
        arg: &Bson,
        collation: Option<&Collation>,
    ) -> Result<Op> {
        let elem = || display::element(field, arg);
        Ok(match operator {
            "$set" => Op::Set(arg.clone()),
            "$setOnInsert" => Op::SetOnInsert(arg.clone()),
            "$unset" => Op::Unset,
            "$inc" | "$mul" => {
                if !is_number(arg) {
                    let verb = if operator == "$inc" {
                        "increment"
                    } else {
                        "multiply"
                    };
                    return Err(EngineError::type_mismatch(format!(
                        "Cannot {verb} with non-numeric argument: {{{}}}",
                        elem()
                    )));
                }
                if operator == "$inc" {
                    Op::Inc(arg.clone())
                } else {
                    Op::Mul(arg.clone())
                }
            }
            "$min" => Op::Min(arg.clone()),
            "$max" => Op::Max(arg.clone()),
            "$currentDate" => parse_current_date(arg)?,
            "$push" => Op::Push(parse_push(arg)?),
            "$addToSet" => Op::AddToSet(parse_add_to_set(arg, collation)?),
            "$pop" => {
                let n = value::as_f64(arg).ok_or_else(|| {
                    EngineError::failed_to_parse(format!("Expected a number in: {}", elem()))
                })?;
                if n == 1.0 {
                    Op::Pop { first: false }
                } else if n == -1.0 {
                    Op::Pop { first: true }
                } else {
                    return Err(EngineError::failed_to_parse(format!(
                        "$pop expects 1 or -1, found: {}",
                        n.trunc()
                    )));
                }
            }
            "$pull" => Op::Pull(parse_pull(arg, collation)?),
            "$pullAll" => match arg {
                Bson::Array(a) => Op::PullAll(a.clone()),
                other => {
                    return Err(EngineError::bad_value(format!(
                        "$pullAll requires an array argument but was given a {}",
                        type_alias(other)
                    )));
                }
            },
            "$bit" => Op::Bit(parse_bit(field, arg)?),
            _ => return Err(unknown_modifier(operator)),
        })
    }

    /// Whether applying this operation to a missing field creates it (so a
    /// path blocked by a scalar is an error rather than a no-op).
    pub fn creates(&self, is_insert: bool) -> bool {
        match self {
            Op::Unset | Op::Pop { .. } | Op::Pull(_) | Op::PullAll(_) | Op::RenameFrom => false,
            Op::SetOnInsert(_) => is_insert,
            _ => true,
        }
    }

    /// The value to create at a missing field, if any. `path` is the full
    /// dotted path of the field.
    pub fn on_missing(&self, env: &Env<'_>, path: &str) -> Result<Option<Bson>> {
        Ok(match self {
            Op::Set(v) | Op::Min(v) | Op::Max(v) | Op::Inc(v) => Some(v.clone()),
            Op::SetOnInsert(v) => env.ctx.is_insert.then(|| v.clone()),
            Op::Mul(v) => {
                Some(arith::apply(ArithOp::Mul, &Bson::Int32(0), v).unwrap_or(Bson::Int32(0)))
            }
            Op::CurrentDate { timestamp } => Some(current_date(*timestamp, env)),
            Op::Push(spec) => {
                let mut arr = Vec::new();
                push_into(&mut arr, spec, env.collation);
                Some(Bson::Array(arr))
            }
            Op::AddToSet(values) => {
                let mut arr = Vec::new();
                add_to_set(&mut arr, values, env.collation);
                Some(Bson::Array(arr))
            }
            Op::Bit(ops) => Some(bit(&Bson::Int32(0), ops).unwrap_or(Bson::Int32(0))),
            Op::RenameTo => env.renamed.get(path).cloned(),
            Op::Unset | Op::Pop { .. } | Op::Pull(_) | Op::PullAll(_) | Op::RenameFrom => None,
        })
    }

    /// Apply to the existing value `v` of the field `name` (full path
    /// `path`); returns whether it changed.
    pub fn on_existing(&self, v: &mut Bson, name: &str, path: &str, env: &Env<'_>) -> Result<bool> {
        let coll = env.collation;
        let new = match self {
            Op::Set(x) => x.clone(),
            Op::SetOnInsert(x) => {
                if !env.ctx.is_insert {
                    return Ok(false);
                }
                x.clone()
            }
            Op::Unset | Op::RenameFrom => return Ok(false),
            Op::Inc(x) | Op::Mul(x) => {
                let (op, opname) = match self {
                    Op::Inc(_) => (ArithOp::Add, "$inc"),
                    _ => (ArithOp::Mul, "$mul"),
                };
                if !is_number(v) {
                    return Err(EngineError::type_mismatch(format!(
                        "Cannot apply {opname} to a value of non-numeric type. {} has the field '{name}' of non-numeric type {}",
                        display::id_braced(env.id.as_ref()),
                        type_alias(v)
                    )));
                }
                arith::apply(op, v, x).ok_or_else(|| {
                    EngineError::bad_value(format!(
                        "Failed to apply {opname} operations to current value ({}) for document {}",
                        arith::debug_string(v),
                        display::id_braced(env.id.as_ref())
                    ))
                })?
            }
            Op::Min(x) => {
                if compare(x, v, coll) != Ordering::Less {
                    return Ok(false);
                }
                x.clone()
            }
            Op::Max(x) => {
                if compare(x, v, coll) != Ordering::Greater {
                    return Ok(false);
                }
                x.clone()
            }
            Op::CurrentDate { timestamp } => {
                *v = current_date(*timestamp, env);
                return Ok(true);
            }
            Op::Push(spec) => {
                let Bson::Array(arr) = v else {
                    return Err(EngineError::bad_value(format!(
                        "The field '{name}' must be an array but is of type {} in document {}",
                        type_alias(v),
                        display::id_braced(env.id.as_ref())
                    )));
                };
                let mut next = arr.clone();
                push_into(&mut next, spec, coll);
                Bson::Array(next)
            }
            Op::AddToSet(values) => {
                let Bson::Array(arr) = v else {
                    return Err(EngineError::bad_value(format!(
                        "Cannot apply $addToSet to non-array field. Field named '{name}' has non-array type {}",
                        type_alias(v)
                    )));
                };
                let before = arr.len();
                add_to_set(arr, values, coll);
                return Ok(arr.len() != before);
            }
            Op::Pop { first } => {
                let Bson::Array(arr) = v else {
                    return Err(EngineError::type_mismatch(format!(
                        "Path '{path}' contains an element of non-array type '{}'",
                        type_alias(v)
                    )));
                };
                if arr.is_empty() {
                    return Ok(false);
                }
                if *first {
                    arr.remove(0);
                } else {
                    arr.pop();
                }
                return Ok(true);
            }
            Op::Pull(m) => {
                let Bson::Array(arr) = v else {
                    return Err(EngineError::bad_value(
                        "Cannot apply $pull to a non-array value",
                    ));
                };
                let mut kept = Vec::with_capacity(arr.len());
                for e in arr.iter() {
                    if !pull_matches(m, e, env)? {
                        kept.push(e.clone());
                    }
                }
                if kept.len() == arr.len() {
                    return Ok(false);
                }
                *arr = kept;
                return Ok(true);
            }
            Op::PullAll(values) => {
                let Bson::Array(arr) = v else {
                    return Err(EngineError::bad_value(
                        "Cannot apply $pullAll to a non-array value",
                    ));
                };
                let before = arr.len();
                arr.retain(|e| !values.iter().any(|x| values_equal(e, x, coll)));
                return Ok(arr.len() != before);
            }
            Op::Bit(ops) => {
                if !matches!(v, Bson::Int32(_) | Bson::Int64(_)) {
                    return Err(EngineError::bad_value(format!(
                        "Cannot apply $bit to a value of non-integral type.{} has the field {name} of non-integer type {}",
                        display::id_braced(env.id.as_ref()),
                        type_alias(v)
                    )));
                }
                bit(v, ops).unwrap_or_else(|| v.clone())
            }
            Op::RenameTo => match env.renamed.get(path) {
                Some(x) => {
                    *v = x.clone();
                    return Ok(true);
                }
                None => return Ok(false),
            },
        };
        if identical(v, &new) {
            return Ok(false);
        }
        *v = new;
        Ok(true)
    }
}

/// mongod's error for an operator it does not know.
pub fn unknown_modifier(name: &str) -> EngineError {
    EngineError::failed_to_parse(format!(
        "Unknown modifier: {name}. Expected a valid update modifier or pipeline-style update specified as an array"
    ))
}

/// Binary identity: same types, same values, same field order. `$set` to an
/// identical value is a no-op; `1` to `1.0` is a change.
pub fn identical(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Double(x), Bson::Double(y)) => x.to_bits() == y.to_bits(),
        (Bson::Document(x), Bson::Document(y)) => documents_identical(x, y),
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| identical(p, q))
        }
        _ => a == b,
    }
}

/// [`identical`] for documents (order-sensitive, unlike `Document`'s `==`).
pub fn documents_identical(x: &Document, y: &Document) -> bool {
    x.len() == y.len()
        && x.iter()
            .zip(y.iter())
            .all(|((ka, va), (kb, vb))| ka == kb && identical(va, vb))
}

fn current_date(timestamp: bool, env: &Env<'_>) -> Bson {
    if timestamp {
        let secs = env.ctx.now.timestamp_millis().div_euclid(1000);
        Bson::Timestamp(Timestamp {
            time: u32::try_from(secs).unwrap_or(0),
            increment: 1,
        })
    } else {
        Bson::DateTime(env.ctx.now)
    }
}

fn parse_current_date(arg: &Bson) -> Result<Op> {
    match arg {
        Bson::Boolean(_) => Ok(Op::CurrentDate { timestamp: false }),
        Bson::Document(d) => {
            let mut timestamp = false;
            for (k, v) in d {
                if k != "$type" {
                    return Err(EngineError::bad_value(format!(
                        "Unrecognized $currentDate option: {k}"
                    )));
                }
                timestamp = match v {
                    Bson::String(s) if s == "date" => false,
                    Bson::String(s) if s == "timestamp" => true,
                    _ => {
                        return Err(EngineError::bad_value(
                            "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}",
                        ));
                    }
                };
            }
            if d.is_empty() {
                return Err(EngineError::bad_value(
                    "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}",
                ));
            }
            Ok(Op::CurrentDate { timestamp })
        }
        other => Err(EngineError::bad_value(format!(
            "{} is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({{$type: 'timestamp/date'}}).",
            type_alias(other)
        ))),
    }
}

fn integral(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(i) => Some(i64::from(*i)),
        Bson::Int64(i) => Some(*i),
        Bson::Double(d) if d.fract() == 0.0 && d.is_finite() => Some(*d as i64),
        Bson::Decimal128(_) => value::as_i64(v),
        _ => None,
    }
}

fn parse_push(arg: &Bson) -> Result<PushSpec> {
    let single = || PushSpec {
        each: vec![arg.clone()],
        position: None,
        slice: None,
        sort: None,
    };
    let Bson::Document(d) = arg else {
        return Ok(single());
    };
    let Some(each) = d.get("$each") else {
        return Ok(single());
    };
    let Bson::Array(each) = each else {
        return Err(EngineError::bad_value(format!(
            "The argument to $each in $push must be an array but it was of type: {}",
            type_alias(each)
        )));
    };
    let mut spec = PushSpec {
        each: each.clone(),
        position: None,
        slice: None,
        sort: None,
    };
    for (k, v) in d {
        match k.as_str() {
            "$each" => {}
            "$slice" => {
                spec.slice = Some(integral(v).ok_or_else(|| {
                    EngineError::bad_value(format!(
                        "The value for $slice must be an integer value but was given type: {}",
                        type_alias(v)
                    ))
                })?);
            }
            "$position" => {
                spec.position = Some(integral(v).ok_or_else(|| {
                    EngineError::bad_value(format!(
                        "The value for $position must be an integer value, not of type: {}",
                        type_alias(v)
                    ))
                })?);
            }
            "$sort" => spec.sort = Some(parse_push_sort(v)?),
            other => {
                return Err(EngineError::bad_value(format!(
                    "Unrecognized clause in $push: {other}"
                )));
            }
        }
    }
    Ok(spec)
}

fn sort_direction(v: &Bson) -> Option<bool> {
    let x = value::as_f64(v)?;
    if x == 1.0 {
        Some(true)
    } else if x == -1.0 {
        Some(false)
    } else {
        None
    }
}

fn parse_push_sort(v: &Bson) -> Result<PushSort> {
    match v {
        Bson::Document(d) => {
            if d.is_empty() {
                return Err(EngineError::bad_value(
                    "The $sort pattern is empty when it should be a set of fields.",
                ));
            }
            let mut fields = Vec::new();
            for (k, dir) in d {
                if k.is_empty() || k.split('.').any(str::is_empty) {
                    return Err(EngineError::bad_value(format!(
                        "The $sort field is a dotted field but has an empty part: {k}"
                    )));
                }
                if k.starts_with('$') {
                    return Err(EngineError::bad_value(format!(
                        "The $sort field cannot start with $: {k}"
                    )));
                }
                let asc = sort_direction(dir).ok_or_else(|| {
                    EngineError::bad_value("The $sort element value must be either 1 or -1")
                })?;
                fields.push((k.clone(), asc));
            }
            Ok(PushSort::Fields(fields))
        }
        other => sort_direction(other).map(PushSort::Whole).ok_or_else(|| {
            EngineError::bad_value(
                "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields",
            )
        }),
    }
}

fn sort_key<'a>(v: &'a Bson, path: &str) -> &'a Bson {
    let mut cur = v;
    for part in path.split('.') {
        match cur {
            Bson::Document(d) => match d.get(part) {
                Some(x) => cur = x,
                None => return &Bson::Null,
            },
            _ => return &Bson::Null,
        }
    }
    cur
}

fn push_into(arr: &mut Vec<Bson>, spec: &PushSpec, coll: Option<&Collation>) {
    let len = i64::try_from(arr.len()).unwrap_or(i64::MAX);
    let at = match spec.position {
        None => len,
        Some(p) if p < 0 => (len + p).max(0),
        Some(p) => p.min(len),
    };
    let at = usize::try_from(at).unwrap_or(arr.len()).min(arr.len());
    arr.splice(at..at, spec.each.iter().cloned());
    match &spec.sort {
        Some(PushSort::Whole(asc)) => arr.sort_by(|a, b| {
            let o = compare(a, b, coll);
            if *asc { o } else { o.reverse() }
        }),
        Some(PushSort::Fields(fields)) => arr.sort_by(|a, b| {
            for (path, asc) in fields {
                let o = compare(sort_key(a, path), sort_key(b, path), coll);
                if o != Ordering::Equal {
                    return if *asc { o } else { o.reverse() };
                }
            }
            Ordering::Equal
        }),
        None => {}
    }
    if let Some(slice) = spec.slice {
        let n = usize::try_from(slice.unsigned_abs()).unwrap_or(usize::MAX);
        if slice >= 0 {
            arr.truncate(n);
        } else if n < arr.len() {
            arr.drain(..arr.len() - n);
        }
    }
}

fn parse_add_to_set(arg: &Bson, _coll: Option<&Collation>) -> Result<Vec<Bson>> {
    if let Bson::Document(d) = arg
        && let Some((first, each)) = d.iter().next()
        && first == "$each"
    {
        let Bson::Array(values) = each else {
            return Err(EngineError::bad_value(format!(
                "The argument to $each in $addToSet must be an array but it was of type {}",
                type_alias(each)
            )));
        };
        if d.len() != 1 {
            return Err(EngineError::bad_value(format!(
                "Found unexpected fields after $each in $addToSet: {}",
                display::value(arg)
            )));
        }
        return Ok(values.clone());
    }
    Ok(vec![arg.clone()])
}

fn add_to_set(arr: &mut Vec<Bson>, values: &[Bson], coll: Option<&Collation>) {
    for v in values {
        if !arr.iter().any(|e| values_equal(e, v, coll)) {
            arr.push(v.clone());
        }
    }
}

/// Query operators that apply to a value rather than name a field: a `$pull`
/// condition starting with one of these is matched against each element.
fn is_value_operator(name: &str) -> bool {
    matches!(
        name,
        "$eq"
            | "$ne"
            | "$gt"
            | "$gte"
            | "$lt"
            | "$lte"
            | "$in"
            | "$nin"
            | "$exists"
            | "$type"
            | "$mod"
            | "$regex"
            | "$options"
            | "$size"
            | "$all"
            | "$elemMatch"
            | "$not"
            | "$bitsAllSet"
            | "$bitsAllClear"
            | "$bitsAnySet"
            | "$bitsAnyClear"
            | "$geoWithin"
            | "$geoIntersects"
            | "$near"
            | "$nearSphere"
            | "$within"
    )
}

fn parse_pull(arg: &Bson, coll: Option<&Collation>) -> Result<PullMatcher> {
    match arg {
        Bson::Document(d) => {
            let first_is_value_op = d.keys().next().is_some_and(|k| is_value_operator(k));
            if first_is_value_op {
                let f = Filter::parse(&doc! {PULL_WRAP: arg.clone()}, coll)?;
                Ok(PullMatcher::Wrapped(Box::new(f)))
            } else {
                Ok(PullMatcher::Object(Box::new(Filter::parse(d, coll)?)))
            }
        }
        Bson::RegularExpression(_) => {
            let f = Filter::parse(&doc! {PULL_WRAP: arg.clone()}, coll)?;
            Ok(PullMatcher::Wrapped(Box::new(f)))
        }
        other => Ok(PullMatcher::Equal(other.clone())),
    }
}

fn pull_matches(m: &PullMatcher, e: &Bson, env: &Env<'_>) -> Result<bool> {
    match m {
        PullMatcher::Equal(v) => Ok(values_equal(e, v, env.collation)),
        PullMatcher::Object(f) => match e {
            Bson::Document(d) => f.matches(d, env.ctx.vars),
            _ => Ok(false),
        },
        PullMatcher::Wrapped(f) => f.matches(&doc! {PULL_WRAP: e.clone()}, env.ctx.vars),
    }
}

fn parse_bit(field: &str, arg: &Bson) -> Result<Vec<(BitOp, Bson)>> {
    let Bson::Document(d) = arg else {
        return Err(EngineError::bad_value(format!(
            "The $bit modifier is not compatible with a {}. You must pass in an embedded document: {{$bit: {{field: {{and/or/xor: #}}}}",
            type_alias(arg)
        )));
    };
    if d.is_empty() {
        return Err(EngineError::bad_value(format!(
            "You must pass in at least one bitwise operation. The format is: {{$bit: {{field: {{and/or/xor: #}}}}. Field: {field}"
        )));
    }
    let mut ops = Vec::new();
    for (k, v) in d {
        let op = match k.as_str() {
            "and" => BitOp::And,
            "or" => BitOp::Or,
            "xor" => BitOp::Xor,
            other => {
                return Err(EngineError::bad_value(format!(
                    "The $bit modifier only supports 'and', 'or', and 'xor', not '{other}' which is an unknown operator: {{{}}}",
                    display::element(k, v)
                )));
            }
        };
        if !matches!(v, Bson::Int32(_) | Bson::Int64(_)) {
            return Err(EngineError::bad_value(format!(
                "The $bit modifier field must be an Integer(32/64 bit); a '{}' is not supported here: {{{}}}",
                type_alias(v),
                display::element(k, v)
            )));
        }
        ops.push((op, v.clone()));
    }
    Ok(ops)
}

fn bit(v: &Bson, ops: &[(BitOp, Bson)]) -> Option<Bson> {
    let mut cur = v.clone();
    for (op, x) in ops {
        cur = match (&cur, x) {
            (Bson::Int32(a), Bson::Int32(b)) => Bson::Int32(match op {
                BitOp::And => a & b,
                BitOp::Or => a | b,
                BitOp::Xor => a ^ b,
            }),
            _ => {
                let a = value::as_i64(&cur)?;
                let b = value::as_i64(x)?;
                Bson::Int64(match op {
                    BitOp::And => a & b,
                    BitOp::Or => a | b,
                    BitOp::Xor => a ^ b,
                })
            }
        };
    }
    Some(cur)
}
