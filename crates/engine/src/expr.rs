//! Aggregation expressions: parsing `{$add: ["$a", 1]}`-style values into a
//! typed tree and evaluating it against a document.
//!
//! Used by `$project`/`$addFields`/`$group` and friends in the pipeline, by
//! `$expr` in filters and by update pipelines. This file holds the tree, the
//! parser, field paths, variables and the operators that evaluate their
//! arguments lazily (`$cond`, `$and`, `$map`, …); the eager operator families
//! live in the submodules, one per family of the manual's operator index.

mod arith;
mod array;
mod calendar;
mod convert;
mod date;
mod date_string;
mod string;
mod zone;

use std::borrow::Cow;
use std::collections::HashMap;

use bson::{Bson, Document};

use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::value;

pub(crate) use arith::{Num, add_values};

/// Variables visible to an expression: `$$NOW`, `let` variables, `$lookup`'s
/// `let`, `$map`'s `as`, and so on. `$$ROOT` and `$$CURRENT` are the document
/// being evaluated and are not stored here.
///
/// The collation of the command travels with the variables because every
/// comparison an expression makes (`$eq`, `$in`, `$setUnion`, …) must honour it.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    values: HashMap<String, Bson>,
    /// `CURRENT` when `$let` rebinds it (field paths then read from it);
    /// kept apart so that the common case costs field paths nothing.
    current: Option<Box<Bson>>,
    collation: Option<Collation>,
}

impl Vars {
    /// Variables with `$$NOW` bound to `now`.
    pub fn with_now(now: bson::DateTime) -> Self {
        let mut v = Self::default();
        v.set("NOW", Bson::DateTime(now));
        v
    }

    /// Bind `name` (without the `$$`).
    pub fn set(&mut self, name: impl Into<String>, value: Bson) {
        let name = name.into();
        if name == "CURRENT" {
            self.current = Some(Box::new(value));
        } else {
            self.values.insert(name, value);
        }
    }

    /// Look up `name` (without the `$$`).
    pub fn get(&self, name: &str) -> Option<&Bson> {
        if name == "CURRENT" {
            return self.current.as_deref();
        }
        self.values.get(name)
    }

    /// Evaluate each field of a `let` document against `root` and bind it.
    pub fn bind_let(&mut self, spec: &Document, root: &Document) -> Result<()> {
        for (name, value) in spec {
            check_user_var_name(name)?;
            let expr = Expr::parse(value)?;
            let v = expr.eval(root, self)?.unwrap_or(Bson::Null);
            self.set(name.clone(), v);
        }
        Ok(())
    }

    /// Use `collation` for string comparisons made by expressions and stages.
    pub fn set_collation(&mut self, collation: Option<Collation>) {
        self.collation = collation;
    }

    /// The collation in force (`None`: binary comparison).
    pub fn collation(&self) -> Option<&Collation> {
        self.collation.as_ref()
    }
}

/// A parsed aggregation expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A constant value.
    Literal(Bson),
    /// `"$a.b"`: a path into `$$CURRENT`.
    Field(Vec<String>),
    /// `"$$name.a.b"`: a variable, optionally followed by a path.
    Var { name: String, path: Vec<String> },
    /// `{a: <expr>, b: <expr>}`: a document built field by field.
    Object(Vec<(String, Expr)>),
    /// `[<expr>, …]`.
    Array(Vec<Expr>),
    /// An operator with positional arguments (`{$add: [..]}`).
    Call { op: String, args: Vec<Expr> },
    /// An operator with named arguments (`{$filter: {input, as, cond}}`).
    Named {
        op: String,
        args: Vec<(String, Expr)>,
    },
}

/// Build an error with a numeric code, as mongod's "Location" errors are.
pub(crate) fn err(code: i32, msg: impl Into<String>) -> EngineError {
    EngineError::new(ErrorCode(code), msg)
}

/// The `$type` name of a possibly missing value, as error messages print it.
pub(crate) fn type_name(v: Option<&Bson>) -> &'static str {
    v.map_or("missing", value::type_alias)
}

/// Null, undefined and missing all count as "nullish" for most operators.
pub(crate) fn nullish(v: Option<&Bson>) -> bool {
    matches!(v, None | Some(Bson::Null) | Some(Bson::Undefined))
}

/// Aggregation truthiness: false, null, undefined, missing and zero are false.
pub(crate) fn truthy(v: Option<&Bson>) -> bool {
    match v {
        None | Some(Bson::Null) | Some(Bson::Undefined) | Some(Bson::Boolean(false)) => false,
        Some(n) if value::is_number(n) => value::as_f64(n).is_some_and(|f| f != 0.0),
        Some(_) => true,
    }
}

/// Compare two possibly missing values: missing sorts below everything.
pub(crate) fn compare_opt(
    a: Option<&Bson>,
    b: Option<&Bson>,
    collation: Option<&Collation>,
) -> std::cmp::Ordering {
    match (a, b) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => value::compare(x, y, collation),
    }
}

/// Operators that take a document of named arguments.
const NAMED_OPS: &[&str] = &[
    "$filter",
    "$map",
    "$reduce",
    "$let",
    "$switch",
    "$dateToString",
    "$dateFromString",
    "$dateTrunc",
    "$dateAdd",
    "$dateSubtract",
    "$dateDiff",
    "$dateToParts",
    "$dateFromParts",
    "$regexMatch",
    "$regexFind",
    "$regexFindAll",
    "$trim",
    "$ltrim",
    "$rtrim",
    "$convert",
    "$getField",
    "$setField",
    "$unsetField",
    "$sortArray",
    "$zip",
    "$replaceOne",
    "$replaceAll",
    "$firstN",
    "$lastN",
    "$maxN",
    "$minN",
];

/// Operators taking positional arguments, with their fixed arity if any.
const POSITIONAL_OPS: &[(&str, Option<usize>)] = &[
    ("$add", None),
    ("$subtract", Some(2)),
    ("$multiply", None),
    ("$divide", Some(2)),
    ("$mod", Some(2)),
    ("$abs", Some(1)),
    ("$ceil", Some(1)),
    ("$floor", Some(1)),
    ("$round", None),
    ("$trunc", None),
    ("$sqrt", Some(1)),
    ("$pow", Some(2)),
    ("$exp", Some(1)),
    ("$ln", Some(1)),
    ("$log10", Some(1)),
    ("$log", Some(2)),
    ("$eq", Some(2)),
    ("$ne", Some(2)),
    ("$gt", Some(2)),
    ("$gte", Some(2)),
    ("$lt", Some(2)),
    ("$lte", Some(2)),
    ("$cmp", Some(2)),
    ("$and", None),
    ("$or", None),
    ("$not", Some(1)),
    ("$cond", Some(3)),
    ("$ifNull", None),
    ("$size", Some(1)),
    ("$arrayElemAt", Some(2)),
    ("$first", Some(1)),
    ("$last", Some(1)),
    ("$slice", None),
    ("$in", Some(2)),
    ("$concatArrays", None),
    ("$isArray", Some(1)),
    ("$indexOfArray", None),
    ("$range", None),
    ("$reverseArray", Some(1)),
    ("$setUnion", None),
    ("$setIntersection", None),
    ("$setDifference", Some(2)),
    ("$setEquals", None),
    ("$setIsSubset", Some(2)),
    ("$anyElementTrue", Some(1)),
    ("$allElementsTrue", Some(1)),
    ("$arrayToObject", Some(1)),
    ("$objectToArray", Some(1)),
    ("$concat", None),
    ("$toUpper", Some(1)),
    ("$toLower", Some(1)),
    ("$substr", Some(3)),
    ("$substrBytes", Some(3)),
    ("$substrCP", Some(3)),
    ("$strLenCP", Some(1)),
    ("$strLenBytes", Some(1)),
    ("$split", Some(2)),
    ("$indexOfBytes", None),
    ("$indexOfCP", None),
    ("$strcasecmp", Some(2)),
    ("$type", Some(1)),
    ("$toString", Some(1)),
    ("$toInt", Some(1)),
    ("$toLong", Some(1)),
    ("$toDouble", Some(1)),
    ("$toDecimal", Some(1)),
    ("$toBool", Some(1)),
    ("$toDate", Some(1)),
    ("$toObjectId", Some(1)),
    ("$isNumber", Some(1)),
    ("$mergeObjects", None),
    ("$bsonSize", Some(1)),
    ("$sum", None),
    ("$avg", None),
    ("$min", None),
    ("$max", None),
    ("$stdDevPop", None),
    ("$stdDevSamp", None),
    ("$year", None),
    ("$month", None),
    ("$dayOfMonth", None),
    ("$hour", None),
    ("$minute", None),
    ("$second", None),
    ("$millisecond", None),
    ("$dayOfWeek", None),
    ("$dayOfYear", None),
    ("$week", None),
    ("$isoWeek", None),
    ("$isoWeekYear", None),
    ("$isoDayOfWeek", None),
    ("$rand", Some(0)),
    ("$sin", Some(1)),
    ("$cos", Some(1)),
    ("$tan", Some(1)),
    ("$asin", Some(1)),
    ("$acos", Some(1)),
    ("$atan", Some(1)),
    ("$atan2", Some(2)),
    ("$sinh", Some(1)),
    ("$cosh", Some(1)),
    ("$tanh", Some(1)),
    ("$asinh", Some(1)),
    ("$acosh", Some(1)),
    ("$atanh", Some(1)),
    ("$degreesToRadians", Some(1)),
    ("$radiansToDegrees", Some(1)),
    ("$binarySize", Some(1)),
    ("$tsSecond", Some(1)),
    ("$tsIncrement", Some(1)),
];

/// Operators mongod has that the engine does not evaluate: they fail with
/// `NotImplemented` rather than pretending the name is unknown.
const UNSUPPORTED_OPS: &[&str] = &[
    "$function",
    "$accumulator",
    "$meta",
    "$median",
    "$percentile",
    "$toHashedIndexKey",
];

/// Date-part operators, which also accept `{date, timezone}`.
const DATE_PARTS: &[&str] = &[
    "$year",
    "$month",
    "$dayOfMonth",
    "$hour",
    "$minute",
    "$second",
    "$millisecond",
    "$dayOfWeek",
    "$dayOfYear",
    "$week",
    "$isoWeek",
    "$isoWeekYear",
    "$isoDayOfWeek",
];

/// The ways a field path string can go wrong, as mongod words them.
fn parse_path(s: &str) -> Result<Vec<String>> {
    if s.is_empty() {
        return Err(err(
            16872,
            "'$' by itself is not a valid FieldPath".to_string(),
        ));
    }
    super::limits::check_field_path(s)?;
    let parts: Vec<String> = s.split('.').map(str::to_string).collect();
    if parts.iter().any(String::is_empty) {
        return Err(err(
            15998,
            "FieldPath field names may not be empty strings.",
        ));
    }
    if parts.iter().skip(1).any(|p| p.starts_with('$')) {
        return Err(err(
            16410,
            "FieldPath field names may not start with '$'. Consider using $getField or $setField.",
        ));
    }
    Ok(parts)
}

fn parse_string(s: &str) -> Result<Expr> {
    if let Some(rest) = s.strip_prefix("$$") {
        let mut parts = parse_path(rest)?;
        let name = parts.remove(0);
        return Ok(Expr::Var { name, path: parts });
    }
    if let Some(rest) = s.strip_prefix('$') {
        return Ok(Expr::Field(parse_path(rest)?));
    }
    Ok(Expr::Literal(Bson::String(s.to_string())))
}

fn parse_args(v: &Bson) -> Result<Vec<Expr>> {
    match v {
        Bson::Array(items) => items.iter().map(Expr::parse).collect(),
        other => Ok(vec![Expr::parse(other)?]),
    }
}

fn parse_named(op: &str, v: &Bson) -> Result<Vec<(String, Expr)>> {
    let Bson::Document(d) = v else {
        let (code, msg) = match op {
            "$filter" => (
                28646,
                "$filter only supports an object as its argument".to_string(),
            ),
            "$map" => (
                16878,
                "$map only supports an object as its argument".to_string(),
            ),
            "$reduce" => (
                40075,
                format!("{op} only supports an object as its argument"),
            ),
            "$let" => (
                16874,
                "$let only supports an object as its argument".to_string(),
            ),
            "$dateToString" => (
                18629,
                format!("{op} only supports an object as its argument"),
            ),
            "$dateFromString" => (
                40540,
                format!("{op} only supports an object as an argument"),
            ),
            "$dateFromParts" => (
                40519,
                format!("{op} only supports an object as its argument"),
            ),
            "$dateToParts" => (
                40524,
                format!("{op} only supports an object as its argument"),
            ),
            "$dateTrunc" => (
                5439007,
                format!("{op} only supports an object as its argument"),
            ),
            "$dateAdd" | "$dateSubtract" => {
                (5166400, format!("{op} expects an object as its argument"))
            }
            "$dateDiff" => (
                5166301,
                format!("{op} only supports an object as its argument"),
            ),
            "$switch" => (
                40060,
                format!(
                    "$switch requires an object as an argument, found: {}",
                    value::type_alias(v)
                ),
            ),
            "$convert" => (
                9,
                format!(
                    "$convert expects an object of named arguments but found: {}",
                    value::type_alias(v)
                ),
            ),
            "$zip" => (
                34460,
                format!(
                    "$zip only supports an object as an argument, found {}",
                    value::type_alias(v)
                ),
            ),
            _ => (
                40485,
                format!(
                    "{op} only supports an object as its argument, found: {}",
                    value::type_alias(v)
                ),
            ),
        };
        return Err(err(code, msg));
    };
    check_named(op, d)?;
    let mut out = Vec::with_capacity(d.len());
    for (k, val) in d {
        let e = match (op, k.as_str()) {
            ("$let", "vars") => {
                let Bson::Document(vars) = val else {
                    return Err(err(10065, "invalid parameter: expected an object (vars)"));
                };
                let mut fields = Vec::new();
                for (name, ve) in vars {
                    check_user_var_name(name)?;
                    fields.push((name.clone(), Expr::parse(ve)?));
                }
                Expr::Object(fields)
            }
            ("$switch", "branches") => {
                let Bson::Array(branches) = val else {
                    return Err(err(
                        40061,
                        format!(
                            "$switch expected an array for 'branches', found: {}",
                            value::type_alias(val)
                        ),
                    ));
                };
                let mut parsed = Vec::new();
                for b in branches {
                    let Bson::Document(bd) = b else {
                        return Err(err(
                            40062,
                            format!(
                                "$switch expected each branch to be an object, found: {}",
                                value::type_alias(b)
                            ),
                        ));
                    };
                    let mut case = None;
                    let mut then = None;
                    for (bk, bv) in bd {
                        match bk.as_str() {
                            "case" => case = Some(Expr::parse(bv)?),
                            "then" => then = Some(Expr::parse(bv)?),
                            other => {
                                return Err(err(
                                    40063,
                                    format!(
                                        "$switch found an unknown argument to a branch: {other}"
                                    ),
                                ));
                            }
                        }
                    }
                    let case = case.ok_or_else(|| {
                        err(
                            40064,
                            "$switch requires each branch have a 'case' expression",
                        )
                    })?;
                    let then = then.ok_or_else(|| {
                        err(
                            40065,
                            "$switch requires each branch have a 'then' expression.",
                        )
                    })?;
                    parsed.push(Expr::Array(vec![case, then]));
                }
                Expr::Array(parsed)
            }
            ("$sortArray", "sortBy") => Expr::Literal(val.clone()),
            // A field name is a plain string or a constant expression, as
            // `{$literal: "$price"}` for a name that starts with `$`.
            ("$setField" | "$getField" | "$unsetField", "field") => match val {
                Bson::String(_) => Expr::Literal(val.clone()),
                other => Expr::parse(other)?,
            },
            _ => Expr::parse(val)?,
        };
        out.push((k.clone(), e));
    }
    Ok(out)
}

/// mongod's rule for a variable a user defines (`$let` vars, `as` of
/// `$map`/`$filter`): a lowercase or non-ASCII first character, then
/// letters, digits, `_` or non-ASCII. `CURRENT` may be rebound; the other
/// system variables (`ROOT`, `REMOVE`, `NOW`, …) may not.
pub(crate) fn check_user_var_name(name: &str) -> Result<()> {
    if name == "CURRENT" {
        return Ok(());
    }
    let Some(first) = name.chars().next() else {
        return Err(err(16866, "empty variable names are not allowed"));
    };
    if !first.is_ascii_lowercase() && first.is_ascii() {
        return Err(err(
            16867,
            format!("'{name}' starts with an invalid character for a user variable name"),
        ));
    }
    if let Some(bad) = name
        .chars()
        .skip(1)
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || !c.is_ascii()))
    {
        return Err(err(
            16868,
            format!("'{name}' contains an invalid character for a variable name: '{bad}'"),
        ));
    }
    Ok(())
}

/// The argument checks mongod makes while parsing a named-argument
/// operator, before any document is seen.
fn check_named(op: &str, d: &Document) -> Result<()> {
    match op {
        "$switch" => {
            if let Some(k) = d
                .keys()
                .find(|k| !matches!(k.as_str(), "branches" | "default"))
            {
                return Err(err(
                    40067,
                    format!("$switch found an unknown argument: {k}"),
                ));
            }
            let no_branches = match d.get("branches") {
                None => true,
                Some(Bson::Array(b)) => b.is_empty(),
                Some(_) => false,
            };
            if no_branches {
                return Err(err(40068, "$switch requires at least one branch."));
            }
        }
        "$convert" => {
            if let Some(k) = d
                .keys()
                .find(|k| !matches!(k.as_str(), "input" | "to" | "onError" | "onNull"))
            {
                return Err(err(9, format!("$convert found an unknown argument: {k}")));
            }
            if !d.contains_key("input") {
                return Err(err(9, "Missing 'input' parameter to $convert"));
            }
            if !d.contains_key("to") {
                return Err(err(9, "Missing 'to' parameter to $convert"));
            }
        }
        "$zip" => {
            let mut inputs = 0;
            let mut defaults = 0;
            let mut longest = false;
            for (k, v) in d {
                match (k.as_str(), v) {
                    ("inputs", Bson::Array(a)) => inputs = a.len(),
                    ("inputs", other) => {
                        return Err(err(
                            34461,
                            format!(
                                "inputs must be an array of expressions, found {}",
                                value::type_alias(other)
                            ),
                        ));
                    }
                    ("defaults", Bson::Array(a)) => defaults = a.len(),
                    ("defaults", other) => {
                        return Err(err(
                            34462,
                            format!(
                                "defaults must be an array of expressions, found {}",
                                value::type_alias(other)
                            ),
                        ));
                    }
                    ("useLongestLength", Bson::Boolean(b)) => longest = *b,
                    ("useLongestLength", other) => {
                        return Err(err(
                            34463,
                            format!(
                                "useLongestLength must be a bool, found {}",
                                value::type_alias(other)
                            ),
                        ));
                    }
                    (other, _) => {
                        return Err(err(
                            34464,
                            format!("$zip found an unknown argument: {other}"),
                        ));
                    }
                }
            }
            if inputs == 0 {
                return Err(err(34465, "$zip requires at least one input array"));
            }
            if defaults > 0 && !longest {
                return Err(err(
                    34466,
                    "cannot specify defaults unless useLongestLength is true",
                ));
            }
            if defaults > 0 && defaults != inputs {
                return Err(err(34467, "defaults and inputs must have the same length"));
            }
        }
        "$map" | "$filter" => {
            if let Some(Bson::String(name)) = d.get("as") {
                check_user_var_name(name)?;
            }
        }
        _ => {}
    }
    Ok(())
}

impl Expr {
    /// Parse an expression. Unknown `$operators` fail with
    /// `InvalidPipelineOperator` (168), naming the operator.
    pub fn parse(value: &Bson) -> Result<Expr> {
        match value {
            Bson::String(s) => parse_string(s),
            Bson::Array(items) => Ok(Expr::Array(
                items.iter().map(Expr::parse).collect::<Result<_>>()?,
            )),
            Bson::Document(d) => Self::parse_document(d),
            other => Ok(Expr::Literal(other.clone())),
        }
    }

    fn parse_document(d: &Document) -> Result<Expr> {
        let Some((first, arg)) = d.iter().next() else {
            return Ok(Expr::Object(Vec::new()));
        };
        if !first.starts_with('$') {
            let mut fields = Vec::with_capacity(d.len());
            for (k, v) in d {
                if k.starts_with('$') {
                    return Err(err(
                        16404,
                        format!(
                            "FieldPath field names may not start with '$'. Consider using $getField or $setField. Field: {k}"
                        ),
                    ));
                }
                if k.contains('.') {
                    return Err(err(
                        16412,
                        format!(
                            "FieldPath field names may not contain '.'. Consider using $getField or $setField. Field: {k}"
                        ),
                    ));
                }
                fields.push((k.clone(), Expr::parse(v)?));
            }
            return Ok(Expr::Object(fields));
        }
        if d.len() > 1 {
            return Err(err(
                15983,
                format!(
                    "an expression specification must contain exactly one field, the name of the expression. Found {} fields in {}",
                    d.len(),
                    d
                ),
            ));
        }
        let op = first.as_str();
        if op == "$literal" || op == "$const" {
            return Ok(Expr::Literal(arg.clone()));
        }
        if op == "$cond"
            && let Bson::Document(cd) = arg
        {
            let mut parts = [None, None, None];
            for (k, v) in cd {
                let slot = match k.as_str() {
                    "if" => 0,
                    "then" => 1,
                    "else" => 2,
                    other => {
                        return Err(err(
                            17083,
                            format!("Unrecognized parameter to $cond: {other}"),
                        ));
                    }
                };
                parts[slot] = Some(Expr::parse(v)?);
            }
            let [i, t, e] = parts;
            let i = i.ok_or_else(|| err(17080, "Missing 'if' parameter to $cond"))?;
            let t = t.ok_or_else(|| err(17081, "Missing 'then' parameter to $cond"))?;
            let e = e.ok_or_else(|| err(17082, "Missing 'else' parameter to $cond"))?;
            return Ok(Expr::Call {
                op: op.to_string(),
                args: vec![i, t, e],
            });
        }
        if op == "$getField" && !matches!(arg, Bson::Document(_)) {
            return Ok(Expr::Named {
                op: op.to_string(),
                args: vec![("field".to_string(), Expr::Literal(arg.clone()))],
            });
        }
        if DATE_PARTS.contains(&op) {
            if let Bson::Document(dd) = arg
                && dd.contains_key("date")
            {
                let date = Expr::parse(dd.get("date").unwrap_or(&Bson::Null))?;
                let mut args = vec![date];
                if let Some(tz) = dd.get("timezone") {
                    args.push(Expr::parse(tz)?);
                }
                return Ok(Expr::Call {
                    op: op.to_string(),
                    args,
                });
            }
            let args = match arg {
                Bson::Array(items) if items.len() == 1 => vec![Expr::parse(&items[0])?],
                Bson::Array(items) => {
                    return Err(err(
                        40536,
                        format!(
                            "{op} accepts exactly one argument if given an array, but was given {}",
                            items.len()
                        ),
                    ));
                }
                other => vec![Expr::parse(other)?],
            };
            return Ok(Expr::Call {
                op: op.to_string(),
                args,
            });
        }
        if NAMED_OPS.contains(&op) {
            return Ok(Expr::Named {
                op: op.to_string(),
                args: parse_named(op, arg)?,
            });
        }
        if UNSUPPORTED_OPS.contains(&op) {
            return Err(EngineError::not_implemented(format!("the {op} expression")));
        }
        let Some((_, arity)) = POSITIONAL_OPS.iter().find(|(name, _)| *name == op) else {
            return Err(EngineError::new(
                ErrorCode::INVALID_PIPELINE_OPERATOR,
                format!("Unrecognized expression '{op}'"),
            ));
        };
        let args = match (op, arg) {
            // `{$rand: {}}` is how the manual spells a call without arguments.
            ("$rand", Bson::Document(d)) if d.is_empty() => Vec::new(),
            _ => parse_args(arg)?,
        };
        if let Some(n) = arity
            && args.len() != *n
        {
            return Err(err(
                16020,
                format!(
                    "Expression {op} takes exactly {n} arguments. {} were passed in.",
                    args.len()
                ),
            ));
        }
        check_arity_range(op, args.len())?;
        Ok(Expr::Call {
            op: op.to_string(),
            args,
        })
    }

    /// Evaluate against `root` (`$$ROOT`/`$$CURRENT`). `Ok(None)` means the
    /// result is *missing* (a field path that leads nowhere), which `$project`
    /// omits and comparisons treat as below null.
    pub fn eval(&self, root: &Document, vars: &Vars) -> Result<Option<Bson>> {
        match self {
            Expr::Literal(v) => Ok(Some(v.clone())),
            // `$let` may rebind `CURRENT`, which field paths read from.
            Expr::Field(path) => Ok(match vars.current.as_deref() {
                None => get_path(root, path),
                Some(Bson::Document(current)) => get_path(current, path),
                Some(other) => traverse(other, path),
            }),
            Expr::Var { name, path } => {
                let base = match name.as_str() {
                    "ROOT" | "CURRENT" => match vars.get(name) {
                        Some(v) => v.clone(),
                        None => Bson::Document(root.clone()),
                    },
                    "REMOVE" => return Ok(None),
                    "NOW" => vars
                        .get("NOW")
                        .cloned()
                        .unwrap_or(Bson::DateTime(bson::DateTime::now())),
                    other => match vars.get(other) {
                        Some(v) => v.clone(),
                        None => {
                            return Err(err(17276, format!("Use of undefined variable: {other}")));
                        }
                    },
                };
                if path.is_empty() {
                    Ok(Some(base))
                } else {
                    Ok(traverse(&base, path))
                }
            }
            // Sized field by field, each value before it is copied in, so
            // that `{l: "$$value", r: "$$value"}` doubling stops at 16 MiB
            // without making the copy that passes it.
            Expr::Object(fields) => {
                let mut out = Document::new();
                let mut size = 5;
                for (k, e) in fields {
                    if let Some(v) = sized(e, root, vars, &mut size, k.len() as u64 + 2)? {
                        out.insert(k.clone(), v);
                    }
                }
                Ok(Some(Bson::Document(out)))
            }
            Expr::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut size = 5;
                for e in items {
                    // A missing element becomes null inside an array literal.
                    let v = sized(e, root, vars, &mut size, 4)?;
                    out.push(v.unwrap_or(Bson::Null));
                }
                Ok(Some(Bson::Array(out)))
            }
            Expr::Call { op, args } => built(eval_call(op, args, root, vars)?),
            Expr::Named { op, args } => built(eval_named(op, args, root, vars)?),
        }
    }

    /// [`Expr::eval`], borrowing the value where it already exists (a
    /// literal, or a field path that crosses no array) instead of copying
    /// it: for operators that only read their arguments.
    pub fn eval_cow<'a>(
        &'a self,
        root: &'a Document,
        vars: &'a Vars,
    ) -> Result<Option<Cow<'a, Bson>>> {
        let found = match self {
            Expr::Literal(v) => Some(Some(v)),
            Expr::Field(path) => match vars.current.as_deref() {
                None => path_ref(root, path),
                Some(Bson::Document(current)) => path_ref(current, path),
                Some(other) => traverse_ref(other, path),
            },
            // A bound variable (`$$value` in a `$reduce`) is read in place,
            // not copied, by the operators that only read it.
            Expr::Var { name, path } if !matches!(name.as_str(), "REMOVE" | "NOW") => {
                match vars.get(name) {
                    Some(v) => traverse_ref(v, path),
                    None => None,
                }
            }
            _ => None,
        };
        match found {
            Some(v) => Ok(v.map(Cow::Borrowed)),
            None => Ok(self.eval(root, vars)?.map(Cow::Owned)),
        }
    }

    /// Evaluate to a value, turning missing into null.
    pub fn eval_or_null(&self, root: &Document, vars: &Vars) -> Result<Bson> {
        Ok(self.eval(root, vars)?.unwrap_or(Bson::Null))
    }

    /// Whether this is a field path (`"$a"`), as some stages require.
    pub fn is_field_path(&self) -> bool {
        matches!(self, Expr::Field(_))
    }

    /// Whether evaluating this can never fail: constants, field paths,
    /// the system variables that are always bound, and documents and
    /// arrays built of those. (A user variable can be unbound, and an
    /// operator can fail on its input.)
    pub(crate) fn cannot_fail(&self) -> bool {
        match self {
            Expr::Literal(_) | Expr::Field(_) => true,
            Expr::Var { name, .. } => {
                matches!(name.as_str(), "ROOT" | "CURRENT" | "REMOVE" | "NOW")
            }
            Expr::Object(fields) => fields.iter().all(|(_, e)| e.cannot_fail()),
            Expr::Array(items) => items.iter().all(Expr::cannot_fail),
            Expr::Call { .. } | Expr::Named { .. } => false,
        }
    }
}

/// A value an operator or a literal document or array built: within
/// mongod's 16 MiB ([`limits::check_built`](super::limits::check_built)),
/// so that no value can grow past it by doubling, and the walk counted as
/// the operation's work.
fn built(v: Option<Bson>) -> Result<Option<Bson>> {
    if let Some(v) = &v {
        super::limits::check_built(v)?;
    }
    Ok(v)
}

/// One field or element of a document or array literal, counted into
/// `size` (the literal's [`approx_size`](super::limits::approx_size) so far,
/// `overhead` for its name or index) and refused before it is copied when
/// the literal would pass 16 MiB.
fn sized(
    e: &Expr,
    root: &Document,
    vars: &Vars,
    size: &mut u64,
    overhead: u64,
) -> Result<Option<Bson>> {
    use super::limits::{MAX_VALUE_BYTES, approx_size, approx_size_within, value_too_large};
    let Some(v) = e.eval_cow(root, vars)? else {
        return Ok(None);
    };
    let room = MAX_VALUE_BYTES.saturating_sub(*size + overhead);
    let Some((bytes, walked)) = approx_size_within(&v, room) else {
        return Err(value_too_large(*size + overhead + approx_size(&v)));
    };
    *size += overhead + bytes;
    if walked >= u64::from(super::limits::CHECK_EVERY) {
        super::limits::checkpoint_work(walked / u64::from(super::limits::CHECK_EVERY))?;
    }
    Ok(Some(v.into_owned()))
}

fn check_arity_range(op: &str, n: usize) -> Result<()> {
    if op == "$ifNull" && n < 2 {
        return Err(err(
            1257300,
            format!("$ifNull needs at least two arguments, had: {n}"),
        ));
    }
    let (min, max) = match op {
        "$round" | "$trunc" => (1, 2),
        "$slice" => (2, 3),
        "$indexOfArray" | "$indexOfBytes" | "$indexOfCP" => (2, 4),
        "$range" => (2, 3),
        "$ifNull" => (2, usize::MAX),
        "$setEquals" => (2, usize::MAX),
        _ => return Ok(()),
    };
    if n < min || n > max {
        let msg = if max == usize::MAX {
            format!("Expression {op} takes at least {min} arguments, and {n} were passed in.")
        } else {
            format!(
                "Expression {op} takes at least {min} arguments, and at most {max}, but {n} were passed in."
            )
        };
        return Err(err(16020, msg));
    }
    Ok(())
}

/// `$a.b.c` on a document, with aggregation's array traversal: a path
/// through an array of documents yields the array of each element's value.
pub fn get_path(doc: &Document, path: &[String]) -> Option<Bson> {
    let (first, rest) = path.split_first()?;
    let v = doc.get(first)?;
    if rest.is_empty() {
        Some(v.clone())
    } else {
        traverse(v, rest)
    }
}

/// [`get_path`] by reference: `Some(value)` when the path resolves without
/// crossing an array (`Some(None)`: missing), `None` when it crosses one and
/// the result has to be built.
fn path_ref<'a>(doc: &'a Document, path: &[String]) -> Option<Option<&'a Bson>> {
    let Some((first, rest)) = path.split_first() else {
        return Some(None);
    };
    match doc.get(first) {
        None => Some(None),
        Some(v) => traverse_ref(v, rest),
    }
}

/// [`traverse`] by reference, as [`path_ref`].
fn traverse_ref<'a>(v: &'a Bson, path: &[String]) -> Option<Option<&'a Bson>> {
    if path.is_empty() {
        return Some(Some(v));
    }
    match v {
        Bson::Document(d) => path_ref(d, path),
        Bson::Array(_) => None,
        _ => Some(None),
    }
}

/// Continue a field path into a value.
pub fn traverse(v: &Bson, path: &[String]) -> Option<Bson> {
    if path.is_empty() {
        return Some(v.clone());
    }
    match v {
        Bson::Document(d) => get_path(d, path),
        Bson::Array(items) => Some(Bson::Array(
            items
                .iter()
                .filter_map(|e| match e {
                    Bson::Document(d) => get_path(d, path),
                    Bson::Array(_) => traverse(e, path),
                    _ => None,
                })
                .collect(),
        )),
        _ => None,
    }
}

fn eval_all(args: &[Expr], root: &Document, vars: &Vars) -> Result<Vec<Option<Bson>>> {
    args.iter().map(|a| a.eval(root, vars)).collect()
}

fn eval_call(op: &str, args: &[Expr], root: &Document, vars: &Vars) -> Result<Option<Bson>> {
    let coll = vars.collation();
    match op {
        "$and" => {
            for a in args {
                if !truthy(a.eval(root, vars)?.as_ref()) {
                    return Ok(Some(Bson::Boolean(false)));
                }
            }
            return Ok(Some(Bson::Boolean(true)));
        }
        "$or" => {
            for a in args {
                if truthy(a.eval(root, vars)?.as_ref()) {
                    return Ok(Some(Bson::Boolean(true)));
                }
            }
            return Ok(Some(Bson::Boolean(false)));
        }
        "$cond" => {
            let pick = if truthy(args[0].eval(root, vars)?.as_ref()) {
                1
            } else {
                2
            };
            return args[pick].eval(root, vars);
        }
        "$ifNull" => {
            let (last, init) = args.split_last().ok_or_else(|| err(1, "$ifNull"))?;
            for a in init {
                let v = a.eval(root, vars)?;
                if !nullish(v.as_ref()) {
                    return Ok(v);
                }
            }
            return last.eval(root, vars);
        }
        _ => {}
    }
    if op == "$mergeObjects" || array::BY_REFERENCE.contains(&op) {
        let held = args
            .iter()
            .map(|a| a.eval_cow(root, vars))
            .collect::<Result<Vec<_>>>()?;
        let vals: Vec<Option<&Bson>> = held.iter().map(Option::as_deref).collect();
        if op == "$mergeObjects" {
            return merge_objects(vals);
        }
        if let Some(r) = array::call_ref(op, &vals, coll) {
            return r;
        }
    }
    let vals = eval_all(args, root, vars)?;
    match op {
        "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" | "$cmp" => {
            use std::cmp::Ordering::*;
            let c = compare_opt(vals[0].as_ref(), vals[1].as_ref(), coll);
            let b = match op {
                "$eq" => c == Equal,
                "$ne" => c != Equal,
                "$gt" => c == Greater,
                "$gte" => c != Less,
                "$lt" => c == Less,
                "$lte" => c != Greater,
                _ => {
                    return Ok(Some(Bson::Int32(match c {
                        Less => -1,
                        Equal => 0,
                        Greater => 1,
                    })));
                }
            };
            Ok(Some(Bson::Boolean(b)))
        }
        "$not" => Ok(Some(Bson::Boolean(!truthy(vals[0].as_ref())))),
        "$bsonSize" => match &vals[0] {
            v if nullish(v.as_ref()) => Ok(Some(Bson::Null)),
            Some(Bson::Document(d)) => Ok(Some(Bson::Int32(value::bson_size(d) as i32))),
            other => Err(err(
                31393,
                format!(
                    "$bsonSize requires a document input, found: {}",
                    type_name(other.as_ref())
                ),
            )),
        },
        "$rand" => Ok(Some(Bson::Double(rand::random::<f64>()))),
        "$binarySize" => match &vals[0] {
            v if nullish(v.as_ref()) => Ok(Some(Bson::Null)),
            Some(Bson::String(s)) => Ok(Some(Bson::Int32(s.len() as i32))),
            Some(Bson::Binary(b)) => Ok(Some(Bson::Int32(b.bytes.len() as i32))),
            other => Err(err(
                51276,
                format!(
                    "$binarySize requires a string or BinData argument, found: {}",
                    type_name(other.as_ref())
                ),
            )),
        },
        "$tsSecond" | "$tsIncrement" => match &vals[0] {
            v if nullish(v.as_ref()) => Ok(Some(Bson::Null)),
            Some(Bson::Timestamp(t)) => Ok(Some(Bson::Int64(i64::from(if op == "$tsSecond" {
                t.time
            } else {
                t.increment
            })))),
            other => Err(err(
                5687301,
                format!(
                    "Argument to {op} must be a timestamp, but is {}",
                    type_name(other.as_ref())
                ),
            )),
        },
        _ => {
            if let Some(r) = arith::call(op, &vals) {
                return r;
            }
            if let Some(r) = array::call(op, &vals, coll) {
                return r;
            }
            if let Some(r) = string::call(op, &vals) {
                return r;
            }
            if let Some(r) = convert::call(op, &vals) {
                return r;
            }
            if let Some(r) = date::call(op, &vals) {
                return r;
            }
            Err(EngineError::new(
                ErrorCode::INVALID_PIPELINE_OPERATOR,
                format!("Unrecognized expression '{op}'"),
            ))
        }
    }
}

/// `$mergeObjects` over evaluated operands (also the `$group` accumulator).
pub(crate) fn merge_objects<'a>(
    vals: impl IntoIterator<Item = Option<&'a Bson>>,
) -> Result<Option<Bson>> {
    let mut out = Document::new();
    for v in vals {
        match v {
            None | Some(Bson::Null) | Some(Bson::Undefined) => {}
            Some(Bson::Document(d)) => {
                for (k, x) in d {
                    out.insert(k.clone(), x.clone());
                }
            }
            Some(other) => {
                return Err(err(
                    40400,
                    format!(
                        "$mergeObjects requires object inputs, but input {} is of type {}",
                        other,
                        value::type_alias(other)
                    ),
                ));
            }
        }
    }
    Ok(Some(Bson::Document(out)))
}

fn named<'a>(args: &'a [(String, Expr)], key: &str) -> Option<&'a Expr> {
    args.iter().find(|(k, _)| k == key).map(|(_, e)| e)
}

/// The variable name given to `as`, defaulting to `this`.
fn var_name(args: &[(String, Expr)], key: &str, op: &str) -> Result<String> {
    match named(args, key) {
        None => Ok("this".to_string()),
        Some(Expr::Literal(Bson::String(s))) if !s.is_empty() => Ok(s.clone()),
        Some(_) => Err(err(
            16866,
            format!("{op}: 'as' must be a valid variable name"),
        )),
    }
}

fn eval_named(
    op: &str,
    args: &[(String, Expr)],
    root: &Document,
    vars: &Vars,
) -> Result<Option<Bson>> {
    match op {
        "$filter" | "$map" => {
            let allowed: &[&str] = if op == "$filter" {
                &["input", "as", "cond", "limit"]
            } else {
                &["input", "as", "in"]
            };
            if let Some((k, _)) = args.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
                let code = if op == "$filter" { 28647 } else { 16879 };
                return Err(err(code, format!("Unrecognized parameter to {op}: {k}")));
            }
            let body_key = if op == "$filter" { "cond" } else { "in" };
            let input = named(args, "input")
                .ok_or_else(|| err(28648, format!("Missing 'input' parameter to {op}")))?;
            let body = named(args, body_key)
                .ok_or_else(|| err(28650, format!("Missing '{body_key}' parameter to {op}")))?;
            let name = var_name(args, "as", op)?;
            let input = input.eval(root, vars)?;
            let items = match input {
                v if nullish(v.as_ref()) => return Ok(Some(Bson::Null)),
                Some(Bson::Array(items)) => items,
                other => {
                    let (code, msg) = if op == "$filter" {
                        (28651, "input to $filter must be an array not")
                    } else {
                        (16883, "input to $map must be an array not")
                    };
                    return Err(err(code, format!("{msg} {}", type_name(other.as_ref()))));
                }
            };
            let limit = match named(args, "limit") {
                None => None,
                Some(l) => match l.eval(root, vars)? {
                    v if nullish(v.as_ref()) => None,
                    Some(v) => match value::as_i64(&v) {
                        Some(n) if n > 0 => Some(n as usize),
                        _ => {
                            return Err(err(
                                327391,
                                format!("$filter: limit must be greater than 0: {v}"),
                            ));
                        }
                    },
                    None => None,
                },
            };
            let mut scope = vars.clone();
            let mut out = Vec::new();
            // The output is sized as it grows: a `$map` of millions of
            // values stops at 16 MiB, not after building them all.
            let mut size = super::limits::Growing::default();
            for item in items {
                super::limits::checkpoint()?;
                scope.set(name.clone(), item.clone());
                let r = body.eval(root, &scope)?;
                if op == "$filter" {
                    if truthy(r.as_ref()) {
                        size.add(super::limits::approx_size(&item))?;
                        out.push(item);
                        if limit.is_some_and(|l| out.len() >= l) {
                            break;
                        }
                    }
                } else {
                    let v = r.unwrap_or(Bson::Null);
                    size.add(super::limits::approx_size(&v))?;
                    out.push(v);
                }
            }
            Ok(Some(Bson::Array(out)))
        }
        "$reduce" => {
            if let Some((k, _)) = args
                .iter()
                .find(|(k, _)| !matches!(k.as_str(), "input" | "initialValue" | "in"))
            {
                return Err(err(
                    40076,
                    format!("$reduce found an unknown argument: {k}"),
                ));
            }
            let input = named(args, "input")
                .ok_or_else(|| err(40077, "$reduce requires 'input' to be specified"))?;
            let init = named(args, "initialValue")
                .ok_or_else(|| err(40078, "$reduce requires 'initialValue' to be specified"))?;
            let body = named(args, "in")
                .ok_or_else(|| err(40079, "$reduce requires 'in' to be specified"))?;
            let items = match input.eval(root, vars)? {
                v if nullish(v.as_ref()) => return Ok(Some(Bson::Null)),
                Some(Bson::Array(items)) => items,
                other => {
                    return Err(err(
                        40080,
                        format!(
                            "$reduce requires that 'input' be an array, found: {}",
                            other.map_or("missing".to_string(), |v| v.to_string())
                        ),
                    ));
                }
            };
            let mut acc = init.eval(root, vars)?;
            let mut scope = vars.clone();
            for item in items {
                super::limits::checkpoint()?;
                scope.set("this", item);
                scope.set("value", acc.unwrap_or(Bson::Null));
                acc = body.eval(root, &scope)?;
                // The accumulated value may grow a level per item: stop
                // at BSON's depth rather than build what nothing can walk.
                // (Its size is bounded where each step builds it.)
                if let Some(v @ (Bson::Document(_) | Bson::Array(_))) = &acc {
                    super::limits::check_value_depth(v)?;
                }
            }
            Ok(acc)
        }
        "$let" => {
            if let Some((k, _)) = args
                .iter()
                .find(|(k, _)| !matches!(k.as_str(), "vars" | "in"))
            {
                return Err(err(16875, format!("Unrecognized parameter to $let: {k}")));
            }
            let Some(Expr::Object(defs)) = named(args, "vars") else {
                return Err(err(16876, "Missing 'vars' parameter to $let"));
            };
            let body =
                named(args, "in").ok_or_else(|| err(16877, "Missing 'in' parameter to $let"))?;
            let mut scope = vars.clone();
            for (name, e) in defs {
                // Definitions see the outer scope, not each other.
                let v = e.eval(root, vars)?.unwrap_or(Bson::Null);
                scope.set(name.clone(), v);
            }
            body.eval(root, &scope)
        }
        "$switch" => {
            if let Some(Expr::Array(branches)) = named(args, "branches") {
                for b in branches {
                    if let Expr::Array(pair) = b
                        && truthy(pair[0].eval(root, vars)?.as_ref())
                    {
                        return pair[1].eval(root, vars);
                    }
                }
            }
            match named(args, "default") {
                Some(d) => d.eval(root, vars),
                None => Err(err(
                    40066,
                    "$switch could not find a matching branch for an input, and no default was specified.",
                )),
            }
        }
        "$getField" | "$setField" | "$unsetField" => {
            let field = match named(args, "field") {
                Some(Expr::Literal(Bson::String(s))) => s.clone(),
                Some(Expr::Literal(other)) if op == "$getField" => {
                    return Err(err(
                        3041704,
                        format!(
                            "{op} requires 'field' to evaluate to type String, but got {}",
                            value::type_alias(other)
                        ),
                    ));
                }
                _ => {
                    return Err(err(
                        4161106,
                        format!(
                            "{op} requires 'field' to evaluate to a constant, but got a non-constant argument"
                        ),
                    ));
                }
            };
            let input = match named(args, "input") {
                Some(e) => e.eval(root, vars)?,
                None if op == "$getField" => Some(Bson::Document(root.clone())),
                None => {
                    return Err(err(
                        4161102,
                        format!("{op} requires 'input' to be specified"),
                    ));
                }
            };
            let doc = match input {
                v if nullish(v.as_ref()) => {
                    return Ok(if op == "$getField" && v.is_none() {
                        None
                    } else {
                        Some(Bson::Null)
                    });
                }
                Some(Bson::Document(d)) => d,
                Some(other) if op == "$getField" => {
                    let _ = other;
                    return Ok(None);
                }
                _ => {
                    return Err(err(
                        4161105,
                        format!("{op} requires 'input' to evaluate to type Object"),
                    ));
                }
            };
            match op {
                "$getField" => Ok(doc.get(&field).cloned()),
                "$unsetField" => {
                    let mut d = doc;
                    d.remove(&field);
                    Ok(Some(Bson::Document(d)))
                }
                _ => {
                    let val = match named(args, "value") {
                        Some(e) => e.eval(root, vars)?,
                        None => {
                            return Err(err(4161103, "$setField requires 'value' to be specified"));
                        }
                    };
                    let mut d = doc;
                    match val {
                        None => {
                            d.remove(&field);
                        }
                        Some(v) => {
                            d.insert(field, v);
                        }
                    }
                    Ok(Some(Bson::Document(d)))
                }
            }
        }
        _ => {
            let mut vals: Vec<(String, Option<Bson>)> = Vec::with_capacity(args.len());
            for (k, e) in args {
                let v = match (op, k.as_str()) {
                    ("$sortArray", "sortBy") => match e {
                        Expr::Literal(l) => Some(l.clone()),
                        other => other.eval(root, vars)?,
                    },
                    _ => e.eval(root, vars)?,
                };
                vals.push((k.clone(), v));
            }
            let nv = NamedVals(vals);
            if let Some(r) = array::call_named(op, &nv, vars.collation()) {
                return r;
            }
            if let Some(r) = string::call_named(op, &nv) {
                return r;
            }
            if let Some(r) = convert::call_named(op, &nv) {
                return r;
            }
            if let Some(r) = date::call_named(op, &nv) {
                return r;
            }
            Err(EngineError::new(
                ErrorCode::INVALID_PIPELINE_OPERATOR,
                format!("Unrecognized expression '{op}'"),
            ))
        }
    }
}

/// Evaluated named arguments.
pub(crate) struct NamedVals(Vec<(String, Option<Bson>)>);

impl NamedVals {
    /// The value of argument `key`, `None` if absent or missing.
    pub(crate) fn get(&self, key: &str) -> Option<&Bson> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_ref())
    }

    /// Whether the argument was given at all.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    /// The first argument name not in `allowed`.
    pub(crate) fn unknown(&self, allowed: &[&str]) -> Option<&str> {
        self.0
            .iter()
            .map(|(k, _)| k.as_str())
            .find(|k| !allowed.contains(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn ev(e: Bson, d: Document) -> Result<Option<Bson>> {
        Expr::parse(&e)?.eval(&d, &Vars::default())
    }

    #[test]
    fn field_path_traverses_arrays() {
        let d = doc! {"a": [{"b": 1}, {"c": 2}, {"b": [3]}, 5]};
        assert_eq!(
            ev(Bson::String("$a.b".into()), d).unwrap(),
            Some(Bson::Array(vec![
                Bson::Int32(1),
                Bson::Array(vec![Bson::Int32(3)])
            ]))
        );
    }

    #[test]
    fn unknown_operator_is_168() {
        let e = Expr::parse(&Bson::Document(doc! {"$foo": 1})).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PIPELINE_OPERATOR);
        assert_eq!(e.message, "Unrecognized expression '$foo'");
    }

    fn value() -> impl proptest::strategy::Strategy<Value = Bson> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Bson::Null),
            (0i32..3).prop_map(Bson::Int32),
            Just(Bson::String("s".into())),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
                proptest::collection::vec((prop_oneof![Just("a"), Just("b")], inner), 0..3)
                    .prop_map(|kv| Bson::Document(
                        kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                    )),
            ]
        })
    }

    proptest::proptest! {
        /// Field paths read by reference give what the copying evaluation
        /// gives, through documents, arrays, scalars and `$$CURRENT`.
        #[test]
        fn borrowed_evaluation_agrees_with_copying_evaluation(
            doc in value(),
            path in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just("a"), proptest::strategy::Just("b")
            ], 1..4),
            current in proptest::option::of(value()),
        ) {
            let root = match doc {
                Bson::Document(d) => d,
                other => doc! {"a": other},
            };
            let field = Bson::String(format!("${}", path.join(".")));
            let vars = Vars {
                current: current.map(Box::new),
                ..Vars::default()
            };
            let e = Expr::parse(&field).unwrap();
            let owned = e.eval(&root, &vars).unwrap();
            let cow = e.eval_cow(&root, &vars).unwrap().map(Cow::into_owned);
            proptest::prop_assert_eq!(&cow, &owned);
        }
    }

    #[test]
    fn every_operator_said_to_borrow_its_arguments_is_handled_by_reference() {
        for op in array::BY_REFERENCE {
            assert!(array::call_ref(op, &[None, None], None).is_some(), "{op}");
        }
    }

    #[test]
    fn missing_is_below_null() {
        let r = ev(Bson::Document(doc! {"$lt": ["$x", null]}), doc! {}).unwrap();
        assert_eq!(r, Some(Bson::Boolean(true)));
    }
}
