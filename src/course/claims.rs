//! The claim `check` language and the `{{ expr }}` prose placeholders: a
//! comparison of two arithmetic expressions over measured metrics such as
//! `naive.coll.readings.count >= 100 * bucket.coll.buckets.count`.
//!
//! Parsing is pure and reports 1-based character columns, so lint can point
//! inside a TOML string or a Markdown line. Evaluation asks a
//! [`MetricSource`] for each metric; a missing metric is an error value that
//! makes the claim fail with the reason, never a panic. Reasons and errors
//! are [`Message`]s, so a report renders them in its reader's language;
//! the figures, metric names and operators inside them stay as written.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::locale::Message;
use crate::place::line_col;

/// A parse error at a 1-based character column of the parsed text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (column {col})")]
pub struct ClaimError {
    pub message: Message,
    pub col: usize,
}

impl ClaimError {
    /// The error with its column, for any language (its `Display` is the
    /// English).
    pub fn to_message(&self) -> Message {
        Message::new("{m} (column {col})")
            .arg_msg("m", self.message.clone())
            .arg("col", self.col)
    }
}

/// A value: checks compare numbers, or strings for equality.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Val {
    Num(f64),
    Str(String),
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Num(n) => f.write_str(&format_number(*n)),
            Val::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// A number as prose shows it: integers plainly, others with at most two
/// decimals (trailing zeros dropped), large ones rounded.
pub fn format_number(n: f64) -> String {
    if !n.is_finite() {
        return n.to_string();
    }
    if n.fract() == 0.0 && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    if n.abs() >= 100.0 {
        return format!("{}", n.round() as i64);
    }
    let s = format!("{n:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Per-collection metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollField {
    Count,
    Size,
    AvgObjSize,
    MaxObjSize,
    StorageSize,
    TotalIndexSize,
    NIndexes,
    Index(String),
}

/// Per-operation metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpField {
    NReturned,
    KeysExamined,
    DocsExamined,
    BytesExamined,
    BytesRead,
    Ratio,
    Millis,
    Stages,
    Index,
    N,
    NModified,
    NUpserted,
    BytesReturned,
    KeysInserted,
    KeysDeleted,
    ExpectedError,
    Error,
}

impl OpField {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "nReturned" => OpField::NReturned,
            "keysExamined" => OpField::KeysExamined,
            "docsExamined" => OpField::DocsExamined,
            "bytesExamined" => OpField::BytesExamined,
            "bytesRead" => OpField::BytesRead,
            "ratio" => OpField::Ratio,
            "millis" => OpField::Millis,
            "stages" => OpField::Stages,
            "index" => OpField::Index,
            "n" => OpField::N,
            "nModified" => OpField::NModified,
            "nUpserted" => OpField::NUpserted,
            "bytesReturned" => OpField::BytesReturned,
            "keysInserted" => OpField::KeysInserted,
            "keysDeleted" => OpField::KeysDeleted,
            "expectedError" => OpField::ExpectedError,
            "error" => OpField::Error,
            _ => return None,
        })
    }

    /// The name as written in checks.
    pub fn name(self) -> &'static str {
        match self {
            OpField::NReturned => "nReturned",
            OpField::KeysExamined => "keysExamined",
            OpField::DocsExamined => "docsExamined",
            OpField::BytesExamined => "bytesExamined",
            OpField::BytesRead => "bytesRead",
            OpField::Ratio => "ratio",
            OpField::Millis => "millis",
            OpField::Stages => "stages",
            OpField::Index => "index",
            OpField::N => "n",
            OpField::NModified => "nModified",
            OpField::NUpserted => "nUpserted",
            OpField::BytesReturned => "bytesReturned",
            OpField::KeysInserted => "keysInserted",
            OpField::KeysDeleted => "keysDeleted",
            OpField::ExpectedError => "expectedError",
            OpField::Error => "error",
        }
    }
}

const OP_FIELDS: &str = "nReturned, keysExamined, docsExamined, bytesExamined, bytesRead, ratio, millis, stages, index, bytesReturned, n, nModified, nUpserted, keysInserted, keysDeleted, expectedError, error";
const COLL_FIELDS: &str =
    "count, size, avgObjSize, maxObjSize, storageSize, totalIndexSize, nindexes, index.<name>";

/// The working-set run's metrics (`variant.workingSet.<field>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsField {
    /// Bytes read into the cache per 100 requests, in steady state.
    BytesRead,
    /// Pages read into the cache per 100 requests, in steady state.
    PagesRead,
    /// The cache's size for the run, in bytes.
    CacheSize,
}

impl WsField {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "bytesRead" => WsField::BytesRead,
            "pagesRead" => WsField::PagesRead,
            "cacheSize" => WsField::CacheSize,
            _ => return None,
        })
    }

    /// The name as written in checks.
    pub fn name(self) -> &'static str {
        match self {
            WsField::BytesRead => "bytesRead",
            WsField::PagesRead => "pagesRead",
            WsField::CacheSize => "cacheSize",
        }
    }
}

const WS_FIELDS: &str = "bytesRead, pagesRead, cacheSize";

/// What a metric is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Coll { name: String, field: CollField },
    Op { id: String, field: OpField },
    WorkingSet { field: WsField },
}

/// `variant.coll.<name>.<field>` or `variant.op.<id>.<field>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metric {
    pub variant: String,
    pub target: Target,
    /// 1-based column where the metric starts in the parsed text.
    pub col: usize,
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Coll { name, field } => {
                let field = match field {
                    CollField::Count => "count".to_string(),
                    CollField::Size => "size".into(),
                    CollField::AvgObjSize => "avgObjSize".into(),
                    CollField::MaxObjSize => "maxObjSize".into(),
                    CollField::StorageSize => "storageSize".into(),
                    CollField::TotalIndexSize => "totalIndexSize".into(),
                    CollField::NIndexes => "nindexes".into(),
                    CollField::Index(i) => format!("index.{i}"),
                };
                write!(f, "{}.coll.{name}.{field}", self.variant)
            }
            Target::Op { id, field } => write!(f, "{}.op.{id}.{}", self.variant, field.name()),
            Target::WorkingSet { field } => {
                write!(f, "{}.workingSet.{}", self.variant, field.name())
            }
        }
    }
}

/// Where metric values come from (the run's measurements).
pub trait MetricSource {
    /// The metric's value, or why there is none.
    fn metric(&self, m: &Metric) -> Result<Val, Message>;
}

/// Arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
}

/// An arithmetic expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Str(String),
    Metric(Metric),
    Bin(ArithOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Every metric the expression reads, in source order.
    pub fn metrics(&self) -> Vec<&Metric> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a Metric>) {
        match self {
            Expr::Metric(m) => out.push(m),
            Expr::Bin(_, a, b) => {
                a.collect(out);
                b.collect(out);
            }
            Expr::Num(_) | Expr::Str(_) => {}
        }
    }

    /// The expression's value.
    pub fn eval(&self, src: &dyn MetricSource) -> Result<Val, Message> {
        match self {
            Expr::Num(n) => Ok(Val::Num(*n)),
            Expr::Str(s) => Ok(Val::Str(s.clone())),
            Expr::Metric(m) => src.metric(m).map_err(|why| {
                Message::new("{outer}: {cause}")
                    .arg("outer", m)
                    .arg_msg("cause", why)
            }),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(src)?, b.eval(src)?);
                let (Val::Num(x), Val::Num(y)) = (&a, &b) else {
                    return Err(Message::new("cannot do arithmetic on text ({a} and {b})")
                        .arg("a", &a)
                        .arg("b", &b));
                };
                Ok(Val::Num(match op {
                    ArithOp::Add => x + y,
                    ArithOp::Sub => x - y,
                    ArithOp::Mul => x * y,
                    ArithOp::Div if *y == 0.0 => {
                        return Err(
                            Message::new("division by zero ({x} / 0)").arg("x", format_number(*x))
                        );
                    }
                    ArithOp::Div => x / y,
                }))
            }
        }
    }
}

/// A parsed `check`.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub left: Expr,
    pub op: CmpOp,
    pub right: Expr,
}

/// The verdict on one check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub passed: bool,
    /// The left and right values when both could be computed.
    pub left: Option<Val>,
    pub right: Option<Val>,
    /// Why it passed or failed, e.g. `12000 >= 6000` or a missing metric
    /// (a string in JSON, in the report's language).
    pub reason: Message,
}

impl Check {
    /// Parse a whole check.
    pub fn parse(src: &str) -> Result<Check, ClaimError> {
        let mut p = Parser::new(src)?;
        let left = p.expr()?;
        let Some(Tok::Cmp(op)) = p.peek_tok() else {
            return Err(p.err_here(
                "expected a comparison (<, <=, >, >=, == or !=) between two expressions",
            ));
        };
        p.pos += 1;
        let right = p.expr()?;
        p.end()?;
        Ok(Check { left, op, right })
    }

    /// Every metric the check reads.
    pub fn metrics(&self) -> Vec<&Metric> {
        let mut m = self.left.metrics();
        m.extend(self.right.metrics());
        m
    }

    /// Evaluate against measurements; a missing metric or a type mismatch
    /// fails the claim with the reason.
    pub fn evaluate(&self, src: &dyn MetricSource) -> Verdict {
        let (l, r) = match (self.left.eval(src), self.right.eval(src)) {
            (Ok(l), Ok(r)) => (l, r),
            (Err(e), _) | (_, Err(e)) => {
                return Verdict {
                    passed: false,
                    left: None,
                    right: None,
                    reason: e,
                };
            }
        };
        let sym = self.op.symbol();
        let passed = match (&l, &r) {
            (Val::Num(a), Val::Num(b)) => match self.op {
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                CmpOp::Gt => a > b,
                CmpOp::Ge => a >= b,
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
            },
            (Val::Str(a), Val::Str(b)) => match self.op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                _ => {
                    return Verdict {
                        passed: false,
                        reason: Message::new(
                            "text compares only with == and != ({left} {op} {right})",
                        )
                        .arg("left", &l)
                        .arg("op", sym)
                        .arg("right", &r),
                        left: Some(l),
                        right: Some(r),
                    };
                }
            },
            _ => {
                return Verdict {
                    passed: false,
                    reason: Message::new("cannot compare a number with text ({left} {op} {right})")
                        .arg("left", &l)
                        .arg("op", sym)
                        .arg("right", &r),
                    left: Some(l),
                    right: Some(r),
                };
            }
        };
        let reason = Message::new(if passed {
            "{left} {op} {right}"
        } else {
            "not {left} {op} {right}"
        })
        .arg("left", &l)
        .arg("op", sym)
        .arg("right", &r);
        Verdict {
            passed,
            left: Some(l),
            right: Some(r),
            reason,
        }
    }
}

/// Parse a lone expression (a `{{ }}` placeholder's content).
pub fn parse_expr(src: &str) -> Result<Expr, ClaimError> {
    let mut p = Parser::new(src)?;
    let e = p.expr()?;
    p.end()?;
    Ok(e)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Path(Vec<String>),
    Arith(ArithOp),
    Cmp(CmpOp),
    LParen,
    RParen,
}

/// Characters that end an index name inside a metric path (`-` does not:
/// descending index names such as `ts_-1` contain it).
fn ends_index_name(c: char) -> bool {
    c.is_whitespace() || "()<>=!+*/\"'".contains(c)
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ClaimError> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    let err = |message: Message, i: usize| ClaimError {
        message,
        col: i + 1,
    };
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let tok = match c {
            '(' => {
                i += 1;
                Tok::LParen
            }
            ')' => {
                i += 1;
                Tok::RParen
            }
            '+' | '-' | '*' | '/' => {
                i += 1;
                Tok::Arith(match c {
                    '+' => ArithOp::Add,
                    '-' => ArithOp::Sub,
                    '*' => ArithOp::Mul,
                    _ => ArithOp::Div,
                })
            }
            '<' | '>' | '=' | '!' => {
                let eq = chars.get(i + 1) == Some(&'=');
                i += if eq { 2 } else { 1 };
                Tok::Cmp(match (c, eq) {
                    ('<', false) => CmpOp::Lt,
                    ('<', true) => CmpOp::Le,
                    ('>', false) => CmpOp::Gt,
                    ('>', true) => CmpOp::Ge,
                    ('=', true) => CmpOp::Eq,
                    ('!', true) => CmpOp::Ne,
                    _ => {
                        return Err(err(
                            Message::new("unexpected '{c}' (did you mean {c}=?)").arg("c", c),
                            start,
                        ));
                    }
                })
            }
            '"' | '\'' => {
                i += 1;
                let mut s = String::new();
                loop {
                    match chars.get(i) {
                        None => return Err(err("unterminated string".into(), start)),
                        Some(&q) if q == c => {
                            i += 1;
                            break;
                        }
                        Some('\\') if i + 1 < chars.len() => {
                            s.push(chars[i + 1]);
                            i += 2;
                        }
                        Some(&ch) => {
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                Tok::Str(s)
            }
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len()
                    && (chars[i].is_ascii_digit()
                        || chars[i] == '.'
                        || chars[i] == '_'
                        || ((chars[i] == 'e' || chars[i] == 'E') && i > start))
                {
                    // An exponent sign belongs to the number.
                    if (chars[i] == 'e' || chars[i] == 'E')
                        && matches!(chars.get(i + 1), Some('-') | Some('+'))
                    {
                        i += 1;
                    }
                    i += 1;
                }
                let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
                let n = text.parse::<f64>().map_err(|_| {
                    err(
                        Message::new("'{text}' is not a number").arg("text", &text),
                        start,
                    )
                })?;
                Tok::Num(n)
            }
            c if is_ident_char(c) => {
                let mut segs = Vec::new();
                loop {
                    let s0 = i;
                    // After `index.` the whole index name is one segment.
                    let index_name = segs.len() >= 4 && segs.get(3).is_some_and(|s| s == "index");
                    while i < chars.len()
                        && if index_name {
                            !ends_index_name(chars[i])
                        } else {
                            is_ident_char(chars[i])
                        }
                    {
                        i += 1;
                    }
                    if i == s0 {
                        return Err(err("expected a name after '.'".into(), i));
                    }
                    segs.push(chars[s0..i].iter().collect::<String>());
                    if !index_name && chars.get(i) == Some(&'.') {
                        i += 1;
                    } else {
                        break;
                    }
                }
                Tok::Path(segs)
            }
            other => {
                return Err(err(
                    Message::new("unexpected character '{c}'").arg("c", other),
                    start,
                ));
            }
        };
        out.push((tok, start + 1));
    }
    Ok(out)
}

/// How deeply a check may nest (parentheses and operator chains alike).
pub const MAX_CHECK_DEPTH: usize = 100;

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    /// Parentheses open around the current token.
    nesting: usize,
    /// Column just past the end of the text, for "expected … at end".
    end_col: usize,
}

impl Parser {
    fn new(src: &str) -> Result<Self, ClaimError> {
        Ok(Parser {
            toks: lex(src)?,
            pos: 0,
            nesting: 0,
            end_col: src.chars().count() + 1,
        })
    }

    fn peek_tok(&self) -> Option<Tok> {
        self.toks.get(self.pos).map(|(t, _)| t.clone())
    }

    fn col(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end_col, |(_, c)| *c)
    }

    fn err_here(&self, message: &'static str) -> ClaimError {
        let message = Message::new(message);
        ClaimError {
            message: if self.pos < self.toks.len() {
                message
            } else {
                Message::new("{m} (at end)").arg_msg("m", message)
            },
            col: self.col(),
        }
    }

    fn end(&self) -> Result<(), ClaimError> {
        if self.pos < self.toks.len() {
            Err(self.err_here("unexpected text after the expression"))
        } else {
            Ok(())
        }
    }

    fn expr(&mut self) -> Result<Expr, ClaimError> {
        self.sum().map(|(e, _)| e)
    }

    /// The depth of a node over a child `child` levels deep, refused past
    /// [`MAX_CHECK_DEPTH`] (evaluating and dropping recurse over the tree).
    fn grow(&self, child: usize, col: usize) -> Result<usize, ClaimError> {
        if child + 1 > MAX_CHECK_DEPTH {
            return Err(ClaimError {
                message: Message::new("expression nested too deeply (a check allows {max} levels)")
                    .arg("max", MAX_CHECK_DEPTH),
                col,
            });
        }
        Ok(child + 1)
    }

    fn sum(&mut self) -> Result<(Expr, usize), ClaimError> {
        let (mut e, mut depth) = self.term()?;
        while let Some(Tok::Arith(op @ (ArithOp::Add | ArithOp::Sub))) = self.peek_tok() {
            let col = self.col();
            self.pos += 1;
            let (r, rd) = self.term()?;
            depth = self.grow(depth.max(rd), col)?;
            e = Expr::Bin(op, Box::new(e), Box::new(r));
        }
        Ok((e, depth))
    }

    fn term(&mut self) -> Result<(Expr, usize), ClaimError> {
        let (mut e, mut depth) = self.factor()?;
        while let Some(Tok::Arith(op @ (ArithOp::Mul | ArithOp::Div))) = self.peek_tok() {
            let col = self.col();
            self.pos += 1;
            let (r, rd) = self.factor()?;
            depth = self.grow(depth.max(rd), col)?;
            e = Expr::Bin(op, Box::new(e), Box::new(r));
        }
        Ok((e, depth))
    }

    fn factor(&mut self) -> Result<(Expr, usize), ClaimError> {
        let col = self.col();
        let Some(tok) = self.peek_tok() else {
            return Err(self.err_here("expected a number, a metric, a string or '('"));
        };
        self.pos += 1;
        match tok {
            Tok::Num(n) => Ok((Expr::Num(n), 1)),
            Tok::Str(s) => Ok((Expr::Str(s), 1)),
            Tok::LParen => {
                // Parentheses recurse without adding a node: bound them too.
                self.nesting += 1;
                if self.nesting > MAX_CHECK_DEPTH {
                    return Err(ClaimError {
                        message: Message::new(
                            "expression nested too deeply (a check allows {max} levels)",
                        )
                        .arg("max", MAX_CHECK_DEPTH),
                        col,
                    });
                }
                let e = self.sum();
                self.nesting -= 1;
                let e = e?;
                if self.peek_tok() != Some(Tok::RParen) {
                    return Err(self.err_here("expected ')'"));
                }
                self.pos += 1;
                Ok(e)
            }
            Tok::Path(segs) => metric(&segs, col).map(|m| (Expr::Metric(m), 1)),
            _ => {
                self.pos -= 1;
                Err(self.err_here("expected a number, a metric, a string or '('"))
            }
        }
    }
}

fn metric(segs: &[String], col: usize) -> Result<Metric, ClaimError> {
    let err = |message: Message| ClaimError { message, col };
    let path = segs.join(".");
    match segs {
        [variant, kind, rest @ ..] if kind == "coll" => {
            let field = match rest {
                [_, f] => match f.as_str() {
                    "count" => CollField::Count,
                    "size" => CollField::Size,
                    "avgObjSize" => CollField::AvgObjSize,
                    "maxObjSize" => CollField::MaxObjSize,
                    "storageSize" => CollField::StorageSize,
                    "totalIndexSize" => CollField::TotalIndexSize,
                    "nindexes" => CollField::NIndexes,
                    other => {
                        return Err(err(Message::new(
                            "unknown collection metric '{field}' in '{path}' (one of {known})",
                        )
                        .arg("field", other)
                        .arg("path", &path)
                        .arg("known", COLL_FIELDS)));
                    }
                },
                [_, i, name] if i == "index" => CollField::Index(name.clone()),
                _ => {
                    return Err(err(Message::new(
                        "'{path}' is not <variant>.coll.<collection>.<{known}>",
                    )
                    .arg("path", &path)
                    .arg("known", COLL_FIELDS)));
                }
            };
            Ok(Metric {
                variant: variant.clone(),
                target: Target::Coll {
                    name: rest[0].clone(),
                    field,
                },
                col,
            })
        }
        [variant, kind, id, f] if kind == "op" => {
            let field = OpField::parse(f).ok_or_else(|| {
                err(
                    Message::new("unknown operation metric '{field}' in '{path}' (one of {known})")
                        .arg("field", f)
                        .arg("path", &path)
                        .arg("known", OP_FIELDS),
                )
            })?;
            Ok(Metric {
                variant: variant.clone(),
                target: Target::Op {
                    id: id.clone(),
                    field,
                },
                col,
            })
        }
        [variant, kind, f] if kind == "workingSet" => {
            let field = WsField::parse(f).ok_or_else(|| {
                err(
                    Message::new("unknown working-set metric '{field}' in '{path}' (one of {known})")
                        .arg("field", f)
                        .arg("path", &path)
                        .arg("known", WS_FIELDS),
                )
            })?;
            Ok(Metric {
                variant: variant.clone(),
                target: Target::WorkingSet { field },
                col,
            })
        }
        _ => Err(err(Message::new(
            "'{path}' is not a metric: write <variant>.coll.<collection>.<field>, <variant>.op.<operation>.<field> or <variant>.workingSet.<field>",
        )
        .arg("path", &path))),
    }
}

/// A `{{ expr }}` placeholder found in prose.
#[derive(Debug, Clone, PartialEq)]
pub struct Placeholder {
    /// Byte range of the whole `{{ … }}` in the text.
    pub range: std::ops::Range<usize>,
    pub expr: Expr,
}

/// A placeholder that does not parse, at a 1-based line and column of the
/// prose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceholderError {
    pub line: usize,
    pub col: usize,
    pub message: Message,
}

/// Find and parse every `{{ … }}` in `text`.
pub fn placeholders(text: &str) -> (Vec<Placeholder>, Vec<PlaceholderError>) {
    let (mut ok, mut errs) = (Vec::new(), Vec::new());
    let mut from = 0;
    while let Some(rel) = text[from..].find("{{") {
        let open = from + rel;
        let inner_start = open + 2;
        let Some(close_rel) = text[inner_start..].find("}}") else {
            let (line, col) = line_col(text, open);
            errs.push(PlaceholderError {
                line,
                col,
                message: "'{{' without a closing '}}'".into(),
            });
            break;
        };
        let close = inner_start + close_rel;
        let inner = &text[inner_start..close];
        match parse_expr(inner) {
            Ok(expr) => ok.push(Placeholder {
                range: open..close + 2,
                expr,
            }),
            Err(e) => {
                // Columns inside the placeholder, translated to the prose.
                let at = inner
                    .char_indices()
                    .nth(e.col.saturating_sub(1))
                    .map_or(close, |(b, _)| inner_start + b);
                let (line, col) = line_col(text, at);
                errs.push(PlaceholderError {
                    line,
                    col,
                    message: e.message,
                });
            }
        }
        from = close + 2;
    }
    (ok, errs)
}

/// Replace every placeholder by its measured value, or by `…` when there is
/// no run (`src` is `None`) or the value cannot be computed.
pub fn render_prose(text: &str, src: Option<&dyn MetricSource>) -> String {
    render_prose_marked(text, src, |v| v.unwrap_or_else(|| "…".to_string()))
}

/// [`render_prose`], each placeholder's text passed through `mark`: the
/// formatted value, or `None` before a run (the reader makes measured
/// figures stand out and says how to measure the missing ones).
pub fn render_prose_marked(
    text: &str,
    src: Option<&dyn MetricSource>,
    mark: impl Fn(Option<String>) -> String,
) -> String {
    let (found, _) = placeholders(text);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for p in found {
        out.push_str(&text[last..p.range.start]);
        let value = src.and_then(|s| p.expr.eval(s).ok()).map(|v| match v {
            Val::Num(n) => format_number(n),
            Val::Str(s) => s,
        });
        out.push_str(&mark(value));
        last = p.range.end;
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names_may_hold_dashes_and_dots() {
        let c = Check::parse("a.coll.x.index.ts_-1 - 3 > 0").unwrap();
        let m = c.metrics();
        assert_eq!(
            m[0].target,
            Target::Coll {
                name: "x".into(),
                field: CollField::Index("ts_-1".into())
            }
        );
        let e = parse_expr("a.coll.x.index.a.b_1").unwrap();
        assert_eq!(e.metrics()[0].to_string(), "a.coll.x.index.a.b_1");
    }

    #[test]
    fn precedence() {
        struct Z;
        impl MetricSource for Z {
            fn metric(&self, _: &Metric) -> Result<Val, Message> {
                Err(Message::verbatim("none"))
            }
        }
        let e = parse_expr("1 + 2 * (3 - 1) / 4").unwrap();
        assert_eq!(e.eval(&Z), Ok(Val::Num(2.0)));
    }

    #[test]
    fn numbers_format() {
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(2.5), "2.5");
        assert_eq!(format_number(1.23456), "1.23");
        assert_eq!(format_number(1234.6), "1235");
    }
}
