//! The syntax tree: what the parser produces and the evaluator walks. Every
//! statement and expression node carries the [`Pos`] where it starts.

use super::Pos;

/// A parsed program: statements in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub stmts: Vec<Stmt>,
}

/// One statement with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub pos: Pos,
    pub kind: StmtKind,
}

/// The statement shapes of the dialect.
#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    /// An expression whose value the shell prints.
    Expr(Expr),
    /// `const x = …` / `let x = …` (several declarators allowed).
    Let {
        constant: bool,
        decls: Vec<(String, Option<Expr>)>,
    },
    /// `x = …` for an existing `let` binding.
    Assign { name: String, value: Expr },
    /// `for (const x of <expr>) { … }`.
    ForOf {
        name: String,
        iterable: Expr,
        body: Vec<Stmt>,
    },
    /// `show collections`, `show dbs`.
    Show(String),
    /// `use <db>`.
    Use(String),
    /// `it`: the next batch of the last cursor.
    It,
}

/// One expression with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub pos: Pos,
    pub kind: ExprKind,
}

/// Binary arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }
}

/// The expression shapes of the dialect.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Number(f64),
    Str(String),
    Bool(bool),
    Null,
    Undefined,
    Regex {
        pattern: String,
        flags: String,
    },
    Ident(String),
    Array(Vec<Expr>),
    /// Keys in source order; the parser refuses duplicate keys.
    Object(Vec<(String, Expr)>),
    Member {
        object: Box<Expr>,
        name: String,
    },
    Index {
        object: Box<Expr>,
        index: Box<Expr>,
    },
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    New {
        callee: String,
        args: Vec<Expr>,
    },
    Neg(Box<Expr>),
    Binary {
        op: BinOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
}
