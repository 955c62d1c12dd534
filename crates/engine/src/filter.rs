//! The query language: parsing a filter document into a typed predicate tree
//! and matching documents against it with mongod's semantics (implicit array
//! traversal, numeric path components, type bracketing, null versus missing).
//!
//! A filter parses into a tree of [`Node`]s: logical nodes (`$and`, `$or`,
//! `$nor`), `$expr`, `$jsonSchema`, and *path* nodes that apply one
//! [`Pred`] to every value a dotted path reaches (see `path`). A path node
//! matches when any reached value satisfies its predicate; the negations
//! (`$ne`, `$nin`, `$not`, `$exists: false`) wrap the whole path test, so
//! `{a: {$ne: 1}}` rejects `{a: [1, 2]}`.
//!
//! The tree is also what the planner reads (`planner::bounds`): each path
//! node keeps the operator it was written with ([`Op`]) and the filter keeps
//! which nodes each top-level entry gave, so that a plan's key filter is a
//! part of the tree and its explain text the entries as written.

mod failure;
mod path;
mod raw;
mod regex;
mod schema;

use std::cmp::Ordering;

use bson::{Bson, Document};

use super::collation::Collation;
use super::error::{EngineError, Result};
use super::expr::{Expr, Vars};
use super::value::{self, canonical_rank};

pub(crate) use path::{array_index, candidates};
pub use regex::MAX_REGEX_PATTERN_BYTES;
use regex::Pattern;

/// The outcome of matching one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchDetails {
    /// Whether the document matched.
    pub matched: bool,
    /// For the positional `$` operator (update and projection): the index of
    /// the first array element that satisfied the query along an array path.
    pub array_position: Option<usize>,
}

/// A parsed filter.
#[derive(Debug, Clone)]
pub struct Filter {
    source: Document,
    collation: Option<Collation>,
    root: Node,
    /// Per top-level entry of `source`, in order, how many of the root's
    /// children it parsed into: the planner splits a filter by entry.
    spans: Vec<usize>,
    /// Whether [`Filter::match_raw`] can answer (no `$expr`, no
    /// `$jsonSchema`: those read the decoded document).
    raw: bool,
}

/// One top-level entry of a filter: its key and value as written and the
/// nodes they parsed into.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<'f> {
    pub key: &'f str,
    pub value: &'f Bson,
    pub nodes: &'f [Node],
}

/// The operator a path predicate was written with (`Value` for a literal
/// value or regex). Matching ignores it; the planner reads it, because
/// mongod's planner treats alike-matching operators differently (`$ne`
/// gives bounds, `$not: {$eq}` does not; `$all` gives none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Value,
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    Nin,
    Exists,
    Type,
    Size,
    Mod,
    Regex,
    All,
    ElemMatch,
    Not,
    Bits(BitTest),
}

impl Op {
    /// The operator's name as written (`""` for a literal).
    pub(crate) fn key(self) -> &'static str {
        match self {
            Op::Value => "",
            Op::Eq => "$eq",
            Op::Ne => "$ne",
            Op::Gt => "$gt",
            Op::Gte => "$gte",
            Op::Lt => "$lt",
            Op::Lte => "$lte",
            Op::In => "$in",
            Op::Nin => "$nin",
            Op::Exists => "$exists",
            Op::Type => "$type",
            Op::Size => "$size",
            Op::Mod => "$mod",
            Op::Regex => "$regex",
            Op::All => "$all",
            Op::ElemMatch => "$elemMatch",
            Op::Not => "$not",
            Op::Bits(BitTest::AllSet) => "$bitsAllSet",
            Op::Bits(BitTest::AllClear) => "$bitsAllClear",
            Op::Bits(BitTest::AnySet) => "$bitsAnySet",
            Op::Bits(BitTest::AnyClear) => "$bitsAnyClear",
        }
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Lt,
    Lte,
    Gt,
    Gte,
}

/// A `$type` selector: one BSON type number, or every number type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeSel {
    Code(i32),
    Number,
}

impl TypeSel {
    pub(crate) fn matches(self, v: &Bson) -> bool {
        match self {
            TypeSel::Number => value::is_number(v),
            TypeSel::Code(c) => value::type_number(v) == c,
        }
    }
}

/// Which bit test a `$bits…` operator performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BitTest {
    AllSet,
    AllClear,
    AnySet,
    AnyClear,
}

/// A predicate on the values one path reaches.
#[derive(Debug, Clone)]
pub(crate) enum Pred {
    Cmp(CmpOp, Bson),
    In {
        values: Vec<Bson>,
        patterns: Vec<Pattern>,
        /// The values in mongod's order, for a binary search, when there
        /// are enough of them to be worth it (`$in` of thousands of ids).
        sorted: Option<Box<[Bson]>>,
    },
    Regex(Pattern),
    Exists,
    Type(Vec<TypeSel>),
    Size(i64),
    Mod(i64, i64),
    Bits(BitTest, u64),
    ElemMatchObject(Box<Node>),
    ElemMatchValue(Vec<(Op, Pred)>),
    /// True unless every inner predicate holds (`$not`, `$ne`, `$nin`, …).
    Not(Vec<Pred>),
    /// Matches nothing (`$all: []`).
    Never,
}

/// A node of the parsed filter tree. `$comment` parses into
/// `Const(true)`, so that every top-level entry has a node.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    And(Vec<Node>),
    Or(Vec<Node>),
    Nor(Vec<Node>),
    Path {
        path: Vec<String>,
        pred: Pred,
        op: Op,
    },
    Expr(Box<Expr>),
    Const(bool),
    Schema(Box<schema::Schema>),
}

/// Where in the filter a document is being parsed.
#[derive(Debug, Clone, Copy)]
struct ParseCtx {
    /// `$expr` is only allowed outside `$elemMatch`.
    allow_expr: bool,
    /// Nesting of logical operators, `$not` and `$elemMatch`.
    depth: usize,
}

/// mongod's limit on the nesting of a query tree; it also keeps hostile
/// filters from exhausting the stack.
const MAX_DEPTH: usize = 100;

impl ParseCtx {
    fn deeper(self) -> Result<ParseCtx> {
        if self.depth >= MAX_DEPTH {
            return Err(EngineError::bad_value(format!(
                "exceeded maximum query tree depth of {MAX_DEPTH}"
            )));
        }
        Ok(ParseCtx {
            depth: self.depth + 1,
            ..self
        })
    }
}

fn unknown_operator(name: &str) -> EngineError {
    EngineError::bad_value(format!("unknown operator: {name}"))
}

fn split_path(field: &str) -> Vec<String> {
    field.split('.').map(str::to_string).collect()
}

/// `BSONElement::trueValue`: false for false, null, undefined and zero.
fn true_value(v: &Bson) -> bool {
    match v {
        Bson::Boolean(b) => *b,
        Bson::Null | Bson::Undefined => false,
        Bson::Int32(i) => *i != 0,
        Bson::Int64(i) => *i != 0,
        Bson::Double(d) => *d != 0.0,
        Bson::Decimal128(_) => value::as_f64(v).is_some_and(|d| d != 0.0),
        _ => true,
    }
}

/// Whether a document is an operator expression (`{$gt: 1}`) rather than a
/// literal; DBRef-shaped documents (`{$ref, $id}`) are literals.
fn is_operator_document(d: &Document) -> bool {
    match d.keys().next() {
        Some(k) => k.starts_with('$') && !matches!(k.as_str(), "$ref" | "$id" | "$db"),
        None => false,
    }
}

fn is_top_level_operator(name: &str) -> bool {
    matches!(
        name,
        "$and"
            | "$or"
            | "$nor"
            | "$expr"
            | "$where"
            | "$text"
            | "$comment"
            | "$jsonSchema"
            | "$alwaysTrue"
            | "$alwaysFalse"
            | "$sampleRate"
    )
}

fn parse_document(query: &Document, ctx: ParseCtx) -> Result<Node> {
    Ok(parse_entries(query, ctx)?.0)
}

/// Parse a document's entries into an `And`, and how many children each
/// entry gave.
fn parse_entries(query: &Document, ctx: ParseCtx) -> Result<(Node, Vec<usize>)> {
    let mut children = Vec::new();
    let mut spans = Vec::with_capacity(query.len());
    for (key, value) in query {
        let before = children.len();
        if key.starts_with('$') {
            children.push(parse_top_level(key, value, ctx)?);
        } else {
            parse_field(key, value, ctx, &mut children)?;
        }
        spans.push(children.len() - before);
    }
    Ok((Node::And(children), spans))
}

fn parse_top_level(key: &str, value: &Bson, ctx: ParseCtx) -> Result<Node> {
    Ok(match key {
        "$and" | "$or" | "$nor" => {
            let Bson::Array(items) = value else {
                return Err(EngineError::bad_value(format!("{key} must be an array")));
            };
            if items.is_empty() {
                return Err(EngineError::bad_value(
                    "$and/$or/$nor must be a nonempty array",
                ));
            }
            let mut children = Vec::with_capacity(items.len());
            for item in items {
                let Bson::Document(d) = item else {
                    return Err(EngineError::bad_value(
                        "$or/$and/$nor entries need to be full objects",
                    ));
                };
                children.push(parse_document(d, ctx.deeper()?)?);
            }
            match key {
                "$and" => Node::And(children),
                "$or" => Node::Or(children),
                _ => Node::Nor(children),
            }
        }
        "$expr" => {
            if !ctx.allow_expr {
                return Err(EngineError::bad_value(
                    "$expr can only be applied to the top-level document",
                ));
            }
            Node::Expr(Box::new(Expr::parse(value)?))
        }
        // Matches everything; a node so that the planner sees it.
        "$comment" => Node::Const(true),
        "$jsonSchema" => {
            let Bson::Document(d) = value else {
                return Err(EngineError::type_mismatch("$jsonSchema must be an object"));
            };
            Node::Schema(Box::new(schema::Schema::parse(d)?))
        }
        "$alwaysTrue" | "$alwaysFalse" => {
            if value::as_i64(value) != Some(1) {
                return Err(EngineError::failed_to_parse(format!(
                    "{key} must be an integer value of 1"
                )));
            }
            Node::Const(key == "$alwaysTrue")
        }
        "$where" | "$text" | "$sampleRate" => return Err(EngineError::not_implemented(key)),
        other => {
            return Err(EngineError::bad_value(format!(
                "unknown top level operator: {other}. If you have a field name that starts with a '$' symbol, consider using $getField or $setField."
            )));
        }
    })
}

fn parse_field(field: &str, value: &Bson, ctx: ParseCtx, out: &mut Vec<Node>) -> Result<()> {
    super::limits::check_match_path(field)?;
    let path = split_path(field);
    match value {
        Bson::RegularExpression(r) => out.push(Node::Path {
            path,
            pred: Pred::Regex(Pattern::new(&r.pattern, &r.options)?),
            op: Op::Value,
        }),
        Bson::Document(d) if is_operator_document(d) => {
            for (op, pred) in parse_operators(field, d, ctx)? {
                out.push(Node::Path {
                    path: path.clone(),
                    pred,
                    op,
                });
            }
        }
        other => out.push(Node::Path {
            path,
            pred: Pred::Cmp(CmpOp::Eq, other.clone()),
            op: Op::Value,
        }),
    }
    Ok(())
}

/// Parse an operator document (`{$gt: 1, $lt: 5}`) into one predicate per
/// operator; they are ANDed, each over its own traversal of the path.
fn parse_operators(field: &str, ops: &Document, ctx: ParseCtx) -> Result<Vec<(Op, Pred)>> {
    let mut preds = Vec::new();
    let mut regex: Option<&Bson> = None;
    let mut options: Option<&Bson> = None;
    for (op, arg) in ops {
        let pred = match op.as_str() {
            "$eq" => (Op::Eq, Pred::Cmp(CmpOp::Eq, arg.clone())),
            "$ne" => {
                if matches!(arg, Bson::RegularExpression(_)) {
                    return Err(EngineError::bad_value("Can't have regex as arg to $ne."));
                }
                (Op::Ne, Pred::Not(vec![Pred::Cmp(CmpOp::Eq, arg.clone())]))
            }
            "$gt" => (Op::Gt, Pred::Cmp(CmpOp::Gt, arg.clone())),
            "$gte" => (Op::Gte, Pred::Cmp(CmpOp::Gte, arg.clone())),
            "$lt" => (Op::Lt, Pred::Cmp(CmpOp::Lt, arg.clone())),
            "$lte" => (Op::Lte, Pred::Cmp(CmpOp::Lte, arg.clone())),
            "$in" => (Op::In, parse_in(arg, "$in")?),
            "$nin" => (Op::Nin, Pred::Not(vec![parse_in(arg, "$nin")?])),
            "$exists" => {
                if true_value(arg) {
                    (Op::Exists, Pred::Exists)
                } else {
                    (Op::Exists, Pred::Not(vec![Pred::Exists]))
                }
            }
            "$type" => (Op::Type, Pred::Type(parse_type(arg)?)),
            "$size" => (Op::Size, Pred::Size(parse_size(arg)?)),
            "$mod" => (Op::Mod, parse_mod(arg)?),
            "$regex" => {
                regex = Some(arg);
                continue;
            }
            "$options" => {
                options = Some(arg);
                continue;
            }
            "$all" => {
                preds.extend(
                    parse_all(field, arg, ctx)?
                        .into_iter()
                        .map(|p| (Op::All, p)),
                );
                continue;
            }
            "$elemMatch" => (Op::ElemMatch, parse_elem_match(field, arg, ctx)?),
            "$not" => (Op::Not, parse_not(field, arg, ctx)?),
            "$bitsAllSet" => bits(BitTest::AllSet, op, arg)?,
            "$bitsAllClear" => bits(BitTest::AllClear, op, arg)?,
            "$bitsAnySet" => bits(BitTest::AnySet, op, arg)?,
            "$bitsAnyClear" => bits(BitTest::AnyClear, op, arg)?,
            "$near" | "$nearSphere" | "$geoWithin" | "$geoIntersects" | "$within"
            | "$maxDistance" | "$minDistance" | "$box" | "$center" | "$centerSphere"
            | "$polygon" | "$geometry" => return Err(EngineError::not_implemented(op.as_str())),
            other => return Err(unknown_operator(other)),
        };
        preds.push(pred);
    }
    if let Some(p) = parse_regex(regex, options)? {
        preds.push((Op::Regex, p));
    }
    Ok(preds)
}

fn bits(test: BitTest, op: &str, arg: &Bson) -> Result<(Op, Pred)> {
    Ok((Op::Bits(test), Pred::Bits(test, parse_bitmask(op, arg)?)))
}

fn parse_regex(regex: Option<&Bson>, options: Option<&Bson>) -> Result<Option<Pred>> {
    let opts = match options {
        None => None,
        Some(Bson::String(s)) => Some(s.as_str()),
        Some(_) => return Err(EngineError::bad_value("$options has to be a string")),
    };
    let Some(regex) = regex else {
        if opts.is_some() {
            return Err(EngineError::bad_value("$options needs a $regex"));
        }
        return Ok(None);
    };
    let pattern = match regex {
        Bson::String(s) => Pattern::new(s, opts.unwrap_or(""))?,
        Bson::RegularExpression(r) => {
            if let Some(o) = opts
                && !o.is_empty()
                && !r.options.is_empty()
            {
                return Err(EngineError::bad_value(
                    "options set in both $regex and $options",
                ));
            }
            let o = if r.options.is_empty() {
                opts.unwrap_or("")
            } else {
                r.options.as_str()
            };
            Pattern::new(&r.pattern, o)?
        }
        _ => return Err(EngineError::bad_value("$regex has to be a string")),
    };
    Ok(Some(Pred::Regex(pattern)))
}

fn parse_in(arg: &Bson, op: &str) -> Result<Pred> {
    let Bson::Array(items) = arg else {
        return Err(EngineError::bad_value(format!("{op} needs an array")));
    };
    let mut values = Vec::new();
    let mut patterns = Vec::new();
    for item in items {
        match item {
            Bson::RegularExpression(r) => patterns.push(Pattern::new(&r.pattern, &r.options)?),
            Bson::Document(d) if is_operator_document(d) => {
                return Err(EngineError::bad_value("cannot nest $ under $in"));
            }
            other => values.push(other.clone()),
        }
    }
    let sorted = (values.len() >= SORTED_IN_FROM).then(|| {
        let mut sorted = values.clone();
        sorted.sort_by(|a, b| value::compare(a, b, None));
        sorted.into_boxed_slice()
    });
    Ok(Pred::In {
        values,
        patterns,
        sorted,
    })
}

/// From how many values an `$in` is searched rather than scanned.
const SORTED_IN_FROM: usize = 16;

/// Whether `v` equals one of an `$in`'s values, by a binary search of the
/// sorted values where that gives the same answer as `compare_match`'s
/// equality: always without a collation (equality is `compare` being
/// `Equal`, NaN equal to NaN, never across type brackets), and with one
/// only when no value holds a string.
fn in_values_match(
    values: &[Bson],
    sorted: Option<&[Bson]>,
    v: &Bson,
    coll: Option<&Collation>,
) -> bool {
    match sorted {
        Some(sorted) if coll.is_none() || !has_text(v) => sorted
            .binary_search_by(|probe| value::compare(probe, v, None))
            .is_ok(),
        _ => values
            .iter()
            .any(|rhs| compare_match(CmpOp::Eq, rhs, Some(v), coll)),
    }
}

/// Whether a value holds a string anywhere (where a collation matters).
fn has_text(v: &Bson) -> bool {
    match v {
        Bson::String(_) | Bson::Symbol(_) => true,
        Bson::Array(items) => items.iter().any(has_text),
        Bson::Document(d) => d.values().any(has_text),
        Bson::JavaScriptCodeWithScope(c) => c.scope.values().any(has_text),
        _ => false,
    }
}

fn parse_type(arg: &Bson) -> Result<Vec<TypeSel>> {
    fn one(v: &Bson) -> Result<TypeSel> {
        match v {
            Bson::String(s) if s == "number" => Ok(TypeSel::Number),
            Bson::String(s) => value::type_number_of_alias(s)
                .map(TypeSel::Code)
                .ok_or_else(|| EngineError::bad_value(format!("Unknown type name alias: {s}"))),
            v if value::is_number(v) => {
                let code = value::as_i64(v)
                    .filter(|c| matches!(c, -1 | 1..=19 | 127))
                    .ok_or_else(|| {
                        EngineError::bad_value(format!(
                            "Invalid numerical type code: {}",
                            value::as_f64(v).unwrap_or(f64::NAN)
                        ))
                    })?;
                Ok(TypeSel::Code(code as i32))
            }
            _ => Err(EngineError::type_mismatch(
                "type must be represented as a number or a string",
            )),
        }
    }
    match arg {
        Bson::Array(items) => items.iter().map(one).collect(),
        other => Ok(vec![one(other)?]),
    }
}

fn parse_size(arg: &Bson) -> Result<i64> {
    if !value::is_number(arg) {
        return Err(EngineError::bad_value("$size needs a number"));
    }
    let n =
        value::as_i64(arg).ok_or_else(|| EngineError::bad_value("$size must be a whole number"))?;
    if n < 0 {
        return Err(EngineError::bad_value("$size may not be negative"));
    }
    if n > i64::from(i32::MAX) {
        return Err(EngineError::bad_value(
            "$size must be representable as a 32-bit integer",
        ));
    }
    Ok(n)
}

fn parse_mod(arg: &Bson) -> Result<Pred> {
    let Bson::Array(items) = arg else {
        return Err(EngineError::bad_value(
            "malformed mod, needs to be an array",
        ));
    };
    if items.len() < 2 {
        return Err(EngineError::bad_value("malformed mod, not enough elements"));
    }
    if items.len() > 2 {
        return Err(EngineError::bad_value("malformed mod, too many elements"));
    }
    let int = |v: &Bson, what: &str| -> Result<i64> {
        if !value::is_number(v) {
            return Err(EngineError::bad_value(format!(
                "malformed mod, {what} not a number"
            )));
        }
        let f = value::as_f64(v).unwrap_or(f64::NAN);
        if !f.is_finite() {
            return Err(EngineError::bad_value(format!(
                "malformed mod, {what} value is invalid :: caused by :: Unable to coerce NaN/Inf to integral type"
            )));
        }
        Ok(match v {
            Bson::Int32(i) => i64::from(*i),
            Bson::Int64(i) => *i,
            // Doubles and decimals truncate toward zero, saturating.
            _ => f.trunc() as i64,
        })
    };
    let divisor = int(&items[0], "divisor")?;
    let remainder = int(&items[1], "remainder")?;
    if divisor == 0 {
        return Err(EngineError::bad_value("divisor cannot be 0"));
    }
    Ok(Pred::Mod(divisor, remainder))
}

fn parse_bitmask(op: &str, arg: &Bson) -> Result<u64> {
    match arg {
        Bson::Array(positions) => {
            let mut mask = 0u64;
            for p in positions {
                let bit = value::as_i64(p).filter(|b| *b >= 0).ok_or_else(|| {
                    EngineError::bad_value(format!("bit positions must be an integer but got: {p}"))
                })?;
                if bit < 64 {
                    mask |= 1u64 << bit;
                }
            }
            Ok(mask)
        }
        v if value::is_number(v) => match value::as_i64(v) {
            Some(m) if m >= 0 => Ok(m as u64),
            _ => Err(EngineError::bad_value(format!(
                "{op} takes an Array, a number, or a BinData but received: {v}"
            ))),
        },
        Bson::Binary(_) => Err(EngineError::not_implemented(format!("{op} with BinData"))),
        other => Err(EngineError::bad_value(format!(
            "{op} takes an Array, a number, or a BinData but received: {other}"
        ))),
    }
}

fn parse_all(field: &str, arg: &Bson, ctx: ParseCtx) -> Result<Vec<Pred>> {
    let Bson::Array(items) = arg else {
        return Err(EngineError::bad_value("$all needs an array"));
    };
    if items.is_empty() {
        return Ok(vec![Pred::Never]);
    }
    let is_elem_match = |v: &Bson| matches!(v, Bson::Document(d) if d.keys().next().is_some_and(|k| k == "$elemMatch"));
    if is_elem_match(&items[0]) {
        let mut preds = Vec::new();
        for item in items {
            match item {
                Bson::Document(d) if is_elem_match(item) => {
                    for (_, v) in d {
                        preds.push(parse_elem_match(field, v, ctx)?);
                    }
                }
                _ => {
                    return Err(EngineError::bad_value(
                        "$all/$elemMatch has to be consistent",
                    ));
                }
            }
        }
        return Ok(preds);
    }
    let mut preds = Vec::new();
    for item in items {
        match item {
            Bson::RegularExpression(r) => {
                preds.push(Pred::Regex(Pattern::new(&r.pattern, &r.options)?))
            }
            Bson::Document(d) if is_operator_document(d) => {
                if d.keys().next().is_some_and(|k| k == "$elemMatch") {
                    return Err(EngineError::bad_value(
                        "$all/$elemMatch has to be consistent",
                    ));
                }
                return Err(EngineError::bad_value("no $ expressions in $all"));
            }
            other => preds.push(Pred::Cmp(CmpOp::Eq, other.clone())),
        }
    }
    Ok(preds)
}

fn parse_elem_match(field: &str, arg: &Bson, ctx: ParseCtx) -> Result<Pred> {
    let Bson::Document(d) = arg else {
        return Err(EngineError::bad_value("$elemMatch needs an Object"));
    };
    let inner = ParseCtx {
        allow_expr: false,
        ..ctx.deeper()?
    };
    let value_form = d
        .keys()
        .next()
        .is_some_and(|k| is_operator_document(d) && (k == "$not" || !is_top_level_operator(k)));
    if value_form {
        Ok(Pred::ElemMatchValue(parse_operators(field, d, inner)?))
    } else {
        Ok(Pred::ElemMatchObject(Box::new(parse_document(d, inner)?)))
    }
}

fn parse_not(field: &str, arg: &Bson, ctx: ParseCtx) -> Result<Pred> {
    match arg {
        Bson::RegularExpression(r) => Ok(Pred::Not(vec![Pred::Regex(Pattern::new(
            &r.pattern, &r.options,
        )?)])),
        Bson::Document(d) => {
            if d.is_empty() {
                return Err(EngineError::bad_value("$not cannot be empty"));
            }
            if let Some(k) = d.keys().next()
                && !k.starts_with('$')
            {
                return Err(unknown_operator(k));
            }
            let inner = parse_operators(field, d, ctx.deeper()?)?;
            Ok(Pred::Not(inner.into_iter().map(|(_, p)| p).collect()))
        }
        _ => Err(EngineError::bad_value("$not needs a regex or a document")),
    }
}

/// `$ne`/`$not` and friends apply to the whole path, the rest to each value.
impl Pred {
    /// Whether an array at the end of the path is also tested element by
    /// element.
    fn expands_leaf(&self) -> bool {
        !matches!(
            self,
            Pred::Exists | Pred::Size(_) | Pred::ElemMatchObject(_) | Pred::ElemMatchValue(_)
        )
    }

    /// Test the values `path` reaches in `doc`; returns (matched, position).
    fn matches_path(
        &self,
        doc: &Document,
        path: &[String],
        coll: Option<&Collation>,
    ) -> (bool, Option<usize>) {
        if let Pred::Not(inner) = self {
            let all = inner.iter().all(|p| p.matches_path(doc, path, coll).0);
            return (!all, None);
        }
        for c in candidates(doc, path, self.expands_leaf()) {
            let (ok, inner_pos) = self.matches_value(c.value, coll);
            if ok {
                return (true, c.position.or(inner_pos));
            }
        }
        (false, None)
    }

    /// Test one value (`None` is missing) without array traversal; the
    /// position is that of a matching element for `$elemMatch`.
    fn matches_value(&self, v: Option<&Bson>, coll: Option<&Collation>) -> (bool, Option<usize>) {
        let plain = |b: bool| (b, None);
        match self {
            Pred::Cmp(op, rhs) => plain(compare_match(*op, rhs, v, coll)),
            Pred::In {
                values,
                patterns,
                sorted,
            } => plain(match v {
                None => values
                    .iter()
                    .any(|rhs| compare_match(CmpOp::Eq, rhs, None, coll)),
                Some(v) => {
                    in_values_match(values, sorted.as_deref(), v, coll)
                        || patterns.iter().any(|p| p.matches_value(v))
                }
            }),
            Pred::Regex(p) => plain(v.is_some_and(|v| p.matches_value(v))),
            Pred::Exists => plain(v.is_some()),
            Pred::Type(sels) => plain(v.is_some_and(|v| sels.iter().any(|s| s.matches(v)))),
            Pred::Size(n) => plain(matches!(v, Some(Bson::Array(a)) if a.len() as i64 == *n)),
            Pred::Mod(d, r) => plain(v.is_some_and(|v| mod_match(v, *d, *r))),
            Pred::Bits(test, mask) => plain(v.is_some_and(|v| bits_match(v, *test, *mask))),
            Pred::ElemMatchObject(node) => {
                let Some(Bson::Array(items)) = v else {
                    return plain(false);
                };
                for (i, item) in items.iter().enumerate() {
                    let hit = match item {
                        Bson::Document(d) => node.eval_plain(d, coll),
                        Bson::Array(a) => node.eval_plain(&path::array_as_document(a), coll),
                        _ => false,
                    };
                    if hit {
                        return (true, Some(i));
                    }
                }
                plain(false)
            }
            Pred::ElemMatchValue(preds) => {
                let Some(Bson::Array(items)) = v else {
                    return plain(false);
                };
                for (i, item) in items.iter().enumerate() {
                    if preds
                        .iter()
                        .all(|(_, p)| p.matches_value(Some(item), coll).0)
                    {
                        return (true, Some(i));
                    }
                }
                plain(false)
            }
            Pred::Not(inner) => plain(!inner.iter().all(|p| p.matches_value(v, coll).0)),
            Pred::Never => plain(false),
        }
    }
}

/// mongod's comparison predicate on one value: values of different
/// canonical types never match (type bracketing), except that missing
/// equals null and MinKey/MaxKey bound everything; NaN only equals NaN.
fn compare_match(op: CmpOp, rhs: &Bson, v: Option<&Bson>, coll: Option<&Collation>) -> bool {
    let Some(v) = v else {
        return matches!(rhs, Bson::Null) && matches!(op, CmpOp::Eq | CmpOp::Lte | CmpOp::Gte);
    };
    if canonical_rank(v) != canonical_rank(rhs) {
        return bracket_mismatch(op, rhs);
    }
    if value::is_number(v) {
        let lnan = value::as_f64(v).is_some_and(f64::is_nan);
        let rnan = value::as_f64(rhs).is_some_and(f64::is_nan);
        if lnan || rnan {
            let both = lnan && rnan;
            return match op {
                CmpOp::Lt | CmpOp::Gt => false,
                CmpOp::Eq | CmpOp::Lte | CmpOp::Gte => both,
            };
        }
    }
    ordering_matches(op, value::compare(v, rhs, coll))
}

/// A comparison between values of different canonical types: only
/// MinKey/MaxKey on the right bound everything.
fn bracket_mismatch(op: CmpOp, rhs: &Bson) -> bool {
    match rhs {
        Bson::MaxKey => matches!(op, CmpOp::Lt | CmpOp::Lte),
        Bson::MinKey => matches!(op, CmpOp::Gt | CmpOp::Gte),
        _ => false,
    }
}

/// Whether the value's ordering against the operand satisfies `op`.
fn ordering_matches(op: CmpOp, ord: Ordering) -> bool {
    match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::Lte => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::Gte => ord != Ordering::Less,
    }
}

fn mod_match(v: &Bson, divisor: i64, remainder: i64) -> bool {
    let x = match v {
        Bson::Int32(i) => i64::from(*i),
        Bson::Int64(i) => *i,
        Bson::Double(_) | Bson::Decimal128(_) => match value::as_f64(v) {
            Some(f) if f.is_finite() => f.trunc() as i64,
            _ => return false,
        },
        _ => return false,
    };
    x.wrapping_rem(divisor) == remainder
}

fn bits_match(v: &Bson, test: BitTest, mask: u64) -> bool {
    let bits = match v {
        Bson::Int32(i) => i64::from(*i) as u64,
        Bson::Int64(i) => *i as u64,
        Bson::Double(d) if d.fract() == 0.0 && d.abs() < 9.2e18 => *d as i64 as u64,
        _ => return false,
    };
    match test {
        BitTest::AllSet => bits & mask == mask,
        BitTest::AllClear => bits & mask == 0,
        BitTest::AnySet => bits & mask != 0,
        BitTest::AnyClear => bits & mask != mask,
    }
}

/// `$expr` truthiness: false, null, undefined, zero and missing are false.
fn expr_truthy(v: Option<&Bson>) -> bool {
    v.is_some_and(true_value)
}

impl Node {
    /// Evaluate; the position is mongod's "elemMatchKey": within an `$and`
    /// the last child that found one wins, `$or`/`$nor` report none.
    fn eval(
        &self,
        doc: &Document,
        coll: Option<&Collation>,
        vars: &Vars,
    ) -> Result<(bool, Option<usize>)> {
        Ok(match self {
            Node::And(children) => {
                let mut pos = None;
                for child in children {
                    let (ok, p) = child.eval(doc, coll, vars)?;
                    if !ok {
                        return Ok((false, None));
                    }
                    pos = p.or(pos);
                }
                (true, pos)
            }
            Node::Or(children) => {
                for child in children {
                    if child.eval(doc, coll, vars)?.0 {
                        return Ok((true, None));
                    }
                }
                (false, None)
            }
            Node::Nor(children) => {
                for child in children {
                    if child.eval(doc, coll, vars)?.0 {
                        return Ok((false, None));
                    }
                }
                (true, None)
            }
            Node::Path { path, pred, .. } => pred.matches_path(doc, path, coll),
            Node::Expr(e) => (expr_truthy(e.eval(doc, vars)?.as_ref()), None),
            Node::Const(b) => (*b, None),
            Node::Schema(s) => (s.matches_document(doc), None),
        })
    }

    /// Evaluate a node that cannot contain `$expr` (inside `$elemMatch`).
    fn eval_plain(&self, doc: &Document, coll: Option<&Collation>) -> bool {
        matches!(self.eval(doc, coll, &Vars::default()), Ok((true, _)))
    }
}

impl Filter {
    /// Parse a filter document. Unknown operators fail with BadValue (2)
    /// "unknown operator: $foo"; unsupported ones ($where, $text, geo) with
    /// a clear not-supported error.
    pub fn parse(query: &Document, collation: Option<&Collation>) -> Result<Filter> {
        let (root, spans) = parse_entries(
            query,
            ParseCtx {
                allow_expr: true,
                depth: 0,
            },
        )?;
        Ok(Filter {
            source: query.clone(),
            collation: collation.cloned(),
            raw: root.raw_capable(),
            root,
            spans,
        })
    }

    /// A filter of some of this one's top-level entries (whole, or with
    /// some of their operators), already parsed: `source` is what they say
    /// as written, `nodes` their predicates. The planner's key filters are
    /// built this way.
    pub(crate) fn part(&self, source: Document, nodes: Vec<Node>, spans: Vec<usize>) -> Filter {
        let root = Node::And(nodes);
        Filter {
            source,
            collation: self.collation.clone(),
            raw: root.raw_capable(),
            root,
            spans,
        }
    }

    /// The root of the parsed tree (an `And` of the top-level entries'
    /// nodes).
    pub(crate) fn root(&self) -> &Node {
        &self.root
    }

    /// The top-level entries, as written and as parsed.
    pub(crate) fn entries(&self) -> Vec<Entry<'_>> {
        let Node::And(children) = &self.root else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(self.spans.len());
        let mut at = 0;
        for ((key, value), n) in self.source.iter().zip(&self.spans) {
            let end = (at + n).min(children.len());
            out.push(Entry {
                key,
                value,
                nodes: &children[at.min(end)..end],
            });
            at = end;
        }
        out
    }

    /// The filter as given.
    pub fn source(&self) -> &Document {
        &self.source
    }

    /// Whether the filter matches every document (`{}`).
    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }

    /// Match a document.
    pub fn matches(&self, doc: &Document, vars: &Vars) -> Result<bool> {
        Ok(self.match_details(doc, vars)?.matched)
    }

    /// Match a document, also reporting the matched array position.
    pub fn match_details(&self, doc: &Document, vars: &Vars) -> Result<MatchDetails> {
        let evaluated = self.root.eval(doc, self.collation.as_ref(), vars);
        // A regex that ran out of budget deep in a predicate is an error,
        // not a non-match.
        super::limits::take_pending()?;
        let (matched, pos) = evaluated?;
        Ok(MatchDetails {
            matched,
            array_position: if matched { pos } else { None },
        })
    }

    /// The top-level equality conditions (`{a: 1}`, `{a: {$eq: 1}}`, and those
    /// inside a top-level `$and`), as (path, value) pairs: what an upsert
    /// seeds its new document with and what an index can look up directly.
    pub fn equalities(&self) -> Vec<(String, Bson)> {
        let mut out = Vec::new();
        collect_equalities(&self.source, &mut out);
        out
    }
}

fn collect_equalities(query: &Document, out: &mut Vec<(String, Bson)>) {
    for (key, value) in query {
        if key == "$and" {
            if let Bson::Array(items) = value {
                for item in items {
                    if let Bson::Document(d) = item {
                        collect_equalities(d, out);
                    }
                }
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        match value {
            Bson::RegularExpression(_) => {}
            Bson::Document(d) if is_operator_document(d) => {
                if let Some(v) = d.get("$eq") {
                    out.push((key.clone(), v.clone()));
                }
            }
            other => out.push((key.clone(), other.clone())),
        }
    }
}

#[cfg(test)]
mod tests;
