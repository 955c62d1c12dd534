//! Parsing: a recursive-descent parser from tokens to the [`Program`] tree.
//! It accepts exactly the documented subset and names anything else as
//! "not supported" (with its position) instead of guessing.

use super::ast::{BinOp, Expr, ExprKind, Program, Stmt, StmtKind};
use super::lexer::{Tok, Token, tokenize};
use super::names::check_db_name;
use super::{DialectError, Pos};
use crate::locale::Message;

/// Parse a whole program. Pure: no I/O.
pub fn parse_program(src: &str) -> Result<Program, DialectError> {
    let tokens = tokenize(src)?;
    let mut p = Parser {
        tokens,
        i: 0,
        depth: 0,
    };
    let stmts = p.stmts(false)?;
    Ok(Program { stmts })
}

/// How deep the syntax tree may nest: brackets, calls, `for` bodies and
/// chains alike (`1+1+…`, `db.a.a.…`, `x[0][0]…` and `.limit(1).limit(1)…`
/// each add a level per link). The evaluator and printer recurse over the
/// tree, so this bound is what keeps hostile or generated input from
/// overflowing the stack; anything deeper is a SyntaxError at the spot
/// where the limit is crossed.
pub const MAX_DEPTH: u32 = 200;

/// An expression and the depth of its tree (a leaf is 1).
type Sized = (Expr, u32);

struct Parser {
    tokens: Vec<Token>,
    i: usize,
    depth: u32,
}

impl Parser {
    fn peek(&self) -> &Token {
        // `tokenize` always ends with Eof and `bump` never moves past it.
        &self.tokens[self.i.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, k: usize) -> &Token {
        &self.tokens[(self.i + k).min(self.tokens.len() - 1)]
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.tokens.len() - 1 {
            self.i += 1;
        }
        t
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(&self.peek().tok, Tok::Punct(q) if *q == p)
    }

    fn is_ident(&self, name: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == name)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, p: &str) -> Result<Pos, DialectError> {
        if self.is_punct(p) {
            Ok(self.bump().pos)
        } else {
            Err(self.unexpected(Message::new("expected '{p}'").arg("p", p)))
        }
    }

    fn unexpected(&self, wanted: impl Into<Message>) -> DialectError {
        let t = self.peek();
        let what = match &t.tok {
            Tok::Eof => Message::new("end of input"),
            Tok::Ident(s) => Message::new("'{s}'").arg("s", s),
            Tok::Num(n) => Message::new("number {n}").arg("n", n),
            Tok::Str(_) => Message::new("string"),
            Tok::Regex { .. } => Message::new("regular expression"),
            Tok::Punct(p) => Message::new("'{s}'").arg("s", p),
            Tok::Word(w) => Message::new("'{s}'").arg("s", w),
        };
        DialectError::syntax(
            Message::new("unexpected {what}, {wanted}")
                .arg_msg("what", what)
                .arg_msg("wanted", wanted.into()),
            t.pos,
        )
    }

    /// An identifier, or a syntax error saying `what` was expected (an
    /// English msgid, looked up in the learner's language).
    fn ident(&mut self, what: &'static str) -> Result<(String, Pos), DialectError> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                Ok((s, self.bump().pos))
            }
            _ => Err(self.unexpected(Message::new("expected {what}").arg_msg("what", what.into()))),
        }
    }

    fn enter(&mut self) -> Result<(), DialectError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep(self.peek().pos));
        }
        Ok(())
    }

    /// The depth of a node whose deepest child is `child` levels deep,
    /// refused once it (plus the statements around it) passes the limit.
    fn grow(&self, child: u32, pos: Pos) -> Result<u32, DialectError> {
        let d = child + 1;
        if d > MAX_DEPTH {
            return Err(too_deep(pos));
        }
        Ok(d)
    }

    /// Statements until end of input, or until `}` when `in_block`.
    fn stmts(&mut self, in_block: bool) -> Result<Vec<Stmt>, DialectError> {
        let mut out = Vec::new();
        loop {
            while self.eat_punct(";") {}
            match &self.peek().tok {
                Tok::Eof if in_block => return Err(self.unexpected("expected '}'")),
                Tok::Eof => return Ok(out),
                Tok::Punct("}") if in_block => return Ok(out),
                _ => {}
            }
            let stmt = self.stmt()?;
            out.push(stmt);
            // A statement ends at `;`, a newline, `}` or the end.
            let t = self.peek();
            let ends = matches!(t.tok, Tok::Eof | Tok::Punct(";"))
                || t.newline_before
                || (in_block && matches!(t.tok, Tok::Punct("}")))
                || matches!(out.last().map(|s| &s.kind), Some(StmtKind::ForOf { .. }));
            if !ends {
                return Err(self.unexpected("expected ';' or a new line"));
            }
        }
    }

    fn stmt(&mut self) -> Result<Stmt, DialectError> {
        let t = self.peek().clone();
        let pos = t.pos;
        if let Tok::Ident(word) = &t.tok {
            let next = self.peek_at(1);
            let next_is_word = matches!(next.tok, Tok::Ident(_)) && !next.newline_before;
            match word.as_str() {
                "show" if next_is_word => {
                    self.bump();
                    let (what, wpos) = self.ident("what to show")?;
                    return match what.as_str() {
                        "collections" | "tables" => Ok(Stmt {
                            pos,
                            kind: StmtKind::Show("collections".into()),
                        }),
                        "dbs" | "databases" => Ok(Stmt {
                            pos,
                            kind: StmtKind::Show("dbs".into()),
                        }),
                        other => Err(DialectError::unsupported(
                            Message::new("show {other}").arg("other", other),
                            wpos,
                        )),
                    };
                }
                "use" if matches!(next.tok, Tok::Word(_)) => {
                    self.bump();
                    let t = self.bump();
                    let Tok::Word(name) = t.tok else {
                        return Err(DialectError::syntax("expected a database name", t.pos));
                    };
                    check_db_name(&name).map_err(|e| e.at_statement(t.pos))?;
                    return Ok(Stmt {
                        pos,
                        kind: StmtKind::Use(name),
                    });
                }
                "it" if next.newline_before || matches!(next.tok, Tok::Eof | Tok::Punct(";")) => {
                    self.bump();
                    return Ok(Stmt {
                        pos,
                        kind: StmtKind::It,
                    });
                }
                "const" | "let" | "var" => {
                    self.bump();
                    return self.declaration(word == "const", pos);
                }
                "for" => {
                    self.bump();
                    return self.for_of(pos);
                }
                "if" | "while" | "do" | "function" | "class" | "return" | "switch" | "try"
                | "throw" | "async" | "await" | "import" | "export" | "delete" | "typeof"
                | "yield" | "break" | "continue" => {
                    return Err(DialectError::unsupported(
                        Message::new("'{word}'").arg("word", word),
                        pos,
                    ));
                }
                _ => {}
            }
            if let Some(Tok::Punct("=")) = Some(&next.tok) {
                let name = word.clone();
                self.bump();
                self.bump();
                let value = self.expr()?;
                return Ok(Stmt {
                    pos,
                    kind: StmtKind::Assign { name, value },
                });
            }
        }
        // A statement starting with `{` is an object literal, as mongosh's REPL
        // reads it (there are no bare blocks in the dialect).
        let e = self.expr()?;
        if self.is_punct("=") || self.is_punct("+=") || self.is_punct("-=") {
            return Err(DialectError::unsupported(
                "assignment to anything but a plain name",
                self.peek().pos,
            ));
        }
        Ok(Stmt {
            pos,
            kind: StmtKind::Expr(e),
        })
    }

    fn declaration(&mut self, constant: bool, pos: Pos) -> Result<Stmt, DialectError> {
        let mut decls = Vec::new();
        loop {
            if self.is_punct("{") || self.is_punct("[") {
                return Err(DialectError::unsupported(
                    "destructuring declarations",
                    self.peek().pos,
                ));
            }
            let (name, npos) = self.ident("a variable name")?;
            if is_reserved(&name) {
                return Err(DialectError::syntax(
                    Message::new("'{name}' cannot be a variable name").arg("name", &name),
                    npos,
                ));
            }
            let init = if self.eat_punct("=") {
                Some(self.expr()?)
            } else if constant {
                return Err(DialectError::syntax(
                    "missing initializer in const declaration",
                    self.peek().pos,
                ));
            } else {
                None
            };
            decls.push((name, init));
            if !self.eat_punct(",") {
                break;
            }
        }
        Ok(Stmt {
            pos,
            kind: StmtKind::Let { constant, decls },
        })
    }

    fn for_of(&mut self, pos: Pos) -> Result<Stmt, DialectError> {
        self.expect_punct("(")?;
        if !(self.is_ident("const") || self.is_ident("let") || self.is_ident("var")) {
            return Err(DialectError::unsupported(
                "this form of 'for' (only `for (const x of …) { … }` is)",
                self.peek().pos,
            ));
        }
        self.bump();
        let (name, _) = self.ident("a loop variable name")?;
        if !self.is_ident("of") {
            return Err(DialectError::unsupported(
                "this form of 'for' (only `for (const x of …) { … }` is)",
                self.peek().pos,
            ));
        }
        self.bump();
        let iterable = self.expr()?;
        self.expect_punct(")")?;
        self.enter()?;
        let body = if self.eat_punct("{") {
            let b = self.stmts(true)?;
            self.expect_punct("}")?;
            b
        } else {
            vec![self.stmt()?]
        };
        self.depth -= 1;
        Ok(Stmt {
            pos,
            kind: StmtKind::ForOf {
                name,
                iterable,
                body,
            },
        })
    }

    fn expr(&mut self) -> Result<Expr, DialectError> {
        self.expr_sized().map(|(e, _)| e)
    }

    fn expr_sized(&mut self) -> Result<Sized, DialectError> {
        self.enter()?;
        // Deep (but allowed) nesting must not depend on the caller's stack.
        let e = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.additive());
        self.depth -= 1;
        let e = e?;
        if let Tok::Punct(p) = self.peek().tok
            && matches!(
                p,
                "==="
                    | "!=="
                    | "=="
                    | "!="
                    | "<"
                    | ">"
                    | "<="
                    | ">="
                    | "&&"
                    | "||"
                    | "??"
                    | "?"
                    | "=>"
                    | "**"
                    | "&"
                    | "|"
                    | "^"
                    | "++"
                    | "--"
            )
        {
            return Err(DialectError::unsupported(
                Message::new("the '{p}' operator").arg("p", p),
                self.peek().pos,
            ));
        }
        Ok(e)
    }

    fn additive(&mut self) -> Result<Sized, DialectError> {
        let (mut left, mut depth) = self.multiplicative()?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct("+") => BinOp::Add,
                Tok::Punct("-") => BinOp::Sub,
                _ => return Ok((left, depth)),
            };
            let pos = self.bump().pos;
            let (right, rd) = self.multiplicative()?;
            depth = self.grow(depth.max(rd), pos)?;
            left = Expr {
                pos,
                kind: ExprKind::Binary {
                    op,
                    left: Box::new(left),
                    right: Box::new(right),
                },
            };
        }
    }

    fn multiplicative(&mut self) -> Result<Sized, DialectError> {
        let (mut left, mut depth) = self.unary()?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct("*") => BinOp::Mul,
                Tok::Punct("/") => BinOp::Div,
                Tok::Punct("%") => BinOp::Rem,
                _ => return Ok((left, depth)),
            };
            let pos = self.bump().pos;
            let (right, rd) = self.unary()?;
            depth = self.grow(depth.max(rd), pos)?;
            left = Expr {
                pos,
                kind: ExprKind::Binary {
                    op,
                    left: Box::new(left),
                    right: Box::new(right),
                },
            };
        }
    }

    fn unary(&mut self) -> Result<Sized, DialectError> {
        let pos = self.peek().pos;
        if self.eat_punct("-") {
            self.enter()?;
            let inner = self.unary();
            self.depth -= 1;
            let (inner, d) = inner?;
            return Ok((
                Expr {
                    pos,
                    kind: ExprKind::Neg(Box::new(inner)),
                },
                self.grow(d, pos)?,
            ));
        }
        if self.eat_punct("+") {
            self.enter()?;
            let inner = self.unary();
            self.depth -= 1;
            return inner;
        }
        if let Tok::Punct(p @ ("!" | "~" | "++" | "--" | "...")) = self.peek().tok {
            return Err(DialectError::unsupported(
                Message::new("the '{p}' operator").arg("p", p),
                pos,
            ));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Sized, DialectError> {
        let (mut e, mut depth) = self.primary()?;
        loop {
            let pos = self.peek().pos;
            if self.eat_punct(".") {
                let (name, _) = self.ident("a property name after '.'")?;
                depth = self.grow(depth, pos)?;
                e = Expr {
                    pos,
                    kind: ExprKind::Member {
                        object: Box::new(e),
                        name,
                    },
                };
            } else if self.eat_punct("[") {
                let (index, id) = self.expr_sized()?;
                self.expect_punct("]")?;
                depth = self.grow(depth.max(id), pos)?;
                e = Expr {
                    pos,
                    kind: ExprKind::Index {
                        object: Box::new(e),
                        index: Box::new(index),
                    },
                };
            } else if self.is_punct("(") {
                let (args, ad) = self.args()?;
                depth = self.grow(depth.max(ad), pos)?;
                e = Expr {
                    pos: e.pos,
                    kind: ExprKind::Call {
                        callee: Box::new(e),
                        args,
                    },
                };
            } else if self.is_punct("?.") {
                return Err(DialectError::unsupported("optional chaining '?.'", pos));
            } else {
                return Ok((e, depth));
            }
        }
    }

    /// Call arguments and the depth of the deepest one.
    fn args(&mut self) -> Result<(Vec<Expr>, u32), DialectError> {
        self.expect_punct("(")?;
        let mut args = Vec::new();
        let mut depth = 0;
        loop {
            if self.eat_punct(")") {
                return Ok((args, depth));
            }
            if self.is_punct("...") {
                return Err(DialectError::unsupported(
                    "spread arguments '...'",
                    self.peek().pos,
                ));
            }
            let (a, d) = self.expr_sized()?;
            depth = depth.max(d);
            args.push(a);
            if !self.eat_punct(",") {
                self.expect_punct(")")?;
                return Ok((args, depth));
            }
        }
    }

    fn primary(&mut self) -> Result<Sized, DialectError> {
        let t = self.peek().clone();
        let pos = t.pos;
        let mut depth = 1;
        let kind = match t.tok {
            Tok::Num(n) => {
                self.bump();
                ExprKind::Number(n)
            }
            Tok::Str(s) => {
                self.bump();
                ExprKind::Str(s)
            }
            Tok::Regex { pattern, flags } => {
                self.bump();
                ExprKind::Regex { pattern, flags }
            }
            Tok::Ident(word) => {
                self.bump();
                match word.as_str() {
                    "true" => ExprKind::Bool(true),
                    "false" => ExprKind::Bool(false),
                    "null" => ExprKind::Null,
                    "undefined" => ExprKind::Undefined,
                    "new" => {
                        let (callee, _) = self.ident("a constructor name after 'new'")?;
                        let args = if self.is_punct("(") {
                            let (args, ad) = self.args()?;
                            depth = self.grow(ad, pos)?;
                            args
                        } else {
                            Vec::new()
                        };
                        ExprKind::New { callee, args }
                    }
                    "function" | "async" | "await" | "this" | "typeof" | "class" | "yield"
                    | "delete" | "void" => {
                        return Err(DialectError::unsupported(
                            Message::new("'{word}'").arg("word", word),
                            pos,
                        ));
                    }
                    w if is_reserved(w) => {
                        return Err(DialectError::syntax(
                            Message::new("unexpected keyword '{w}'").arg("w", w),
                            pos,
                        ));
                    }
                    _ => {
                        if self.is_punct("=>") {
                            return Err(DialectError::unsupported("arrow functions", pos));
                        }
                        ExprKind::Ident(word)
                    }
                }
            }
            Tok::Punct("(") => {
                self.bump();
                if self.is_punct(")") {
                    return Err(DialectError::unsupported("arrow functions", pos));
                }
                let e = self.expr_sized()?;
                if self.is_punct(",") {
                    return Err(DialectError::unsupported(
                        "the comma operator or arrow functions",
                        self.peek().pos,
                    ));
                }
                self.expect_punct(")")?;
                if self.is_punct("=>") {
                    return Err(DialectError::unsupported("arrow functions", pos));
                }
                return Ok(e);
            }
            Tok::Punct("[") => {
                self.bump();
                self.enter()?;
                let mut items = Vec::new();
                let mut inner = 0;
                loop {
                    if self.eat_punct("]") {
                        break;
                    }
                    if self.is_punct(",") {
                        return Err(DialectError::unsupported(
                            "array holes (empty elements)",
                            self.peek().pos,
                        ));
                    }
                    if self.is_punct("...") {
                        return Err(DialectError::unsupported(
                            "spread elements '...'",
                            self.peek().pos,
                        ));
                    }
                    let (item, d) = self.expr_sized()?;
                    inner = inner.max(d);
                    items.push(item);
                    if !self.eat_punct(",") {
                        self.expect_punct("]")?;
                        break;
                    }
                }
                self.depth -= 1;
                depth = self.grow(inner, pos)?;
                ExprKind::Array(items)
            }
            Tok::Punct("{") => {
                self.bump();
                self.enter()?;
                let (fields, inner) = self.object_fields()?;
                self.depth -= 1;
                depth = self.grow(inner, pos)?;
                ExprKind::Object(fields)
            }
            Tok::Punct(p) => {
                if p == "..." {
                    return Err(DialectError::unsupported("spread syntax '...'", pos));
                }
                return Err(self.unexpected("expected an expression"));
            }
            Tok::Eof | Tok::Word(_) => return Err(self.unexpected("expected an expression")),
        };
        Ok((Expr { pos, kind }, depth))
    }

    /// Object literal fields (after `{`) and the depth of the deepest value.
    fn object_fields(&mut self) -> Result<(Vec<(String, Expr)>, u32), DialectError> {
        let mut fields: Vec<(String, Expr)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut depth = 0;
        loop {
            if self.eat_punct("}") {
                return Ok((fields, depth));
            }
            let t = self.peek().clone();
            let key = match &t.tok {
                Tok::Ident(s) | Tok::Str(s) => s.clone(),
                Tok::Num(n) => format_number_key(*n),
                Tok::Punct("[") => {
                    return Err(DialectError::unsupported("computed property names", t.pos));
                }
                Tok::Punct("...") => {
                    return Err(DialectError::unsupported("object spread '...'", t.pos));
                }
                _ => return Err(self.unexpected("expected a property name")),
            };
            // JavaScript keeps the last of two equal keys; BSON documents
            // hold one. A duplicate is an error here, so every reader of
            // the literal (the write gate, lint, the evaluator) sees the
            // same single value.
            if !seen.insert(key.clone()) {
                return Err(DialectError::syntax(
                    Message::new("duplicate key '{key}' in an object literal").arg("key", &key),
                    t.pos,
                ));
            }
            self.bump();
            let value = if self.eat_punct(":") {
                let (v, d) = self.expr_sized()?;
                depth = depth.max(d);
                v
            } else if matches!(t.tok, Tok::Ident(_)) && (self.is_punct(",") || self.is_punct("}")) {
                // Shorthand `{ name }` reads the binding `name`.
                Expr {
                    pos: t.pos,
                    kind: ExprKind::Ident(key.clone()),
                }
            } else if self.is_punct("(") {
                return Err(DialectError::unsupported(
                    "method definitions in object literals",
                    self.peek().pos,
                ));
            } else {
                return Err(self.unexpected("expected ':'"));
            };
            fields.push((key, value));
            if !self.eat_punct(",") {
                self.expect_punct("}")?;
                return Ok((fields, depth));
            }
        }
    }
}

fn too_deep(pos: Pos) -> DialectError {
    DialectError::syntax(
        Message::new("expression nested too deeply (the shell dialect allows {max} levels)")
            .arg("max", MAX_DEPTH),
        pos,
    )
}

fn format_number_key(n: f64) -> String {
    super::print::format_number(n)
}

fn is_reserved(w: &str) -> bool {
    matches!(
        w,
        "break"
            | "case"
            | "catch"
            | "class"
            | "const"
            | "continue"
            | "debugger"
            | "default"
            | "delete"
            | "do"
            | "else"
            | "export"
            | "extends"
            | "finally"
            | "for"
            | "function"
            | "if"
            | "import"
            | "in"
            | "instanceof"
            | "let"
            | "new"
            | "return"
            | "super"
            | "switch"
            | "this"
            | "throw"
            | "try"
            | "typeof"
            | "var"
            | "void"
            | "while"
            | "with"
            | "yield"
            | "true"
            | "false"
            | "null"
    )
}
