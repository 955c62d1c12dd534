//! Aggregation expressions: parsing `{$add: ["$a", 1]}`-style values into a
//! typed tree and evaluating it against a document.
//!
//! Used by `$project`/`$addFields`/`$group` and friends in the pipeline, by
//! `$expr` in filters and by update pipelines.

use std::collections::HashMap;

use bson::{Bson, Document};

use super::error::{EngineError, Result};

/// Variables visible to an expression: `$$NOW`, `let` variables, `$lookup`'s
/// `let`, `$map`'s `as`, and so on. `$$ROOT` and `$$CURRENT` are the document
/// being evaluated and are not stored here.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    values: HashMap<String, Bson>,
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
        self.values.insert(name.into(), value);
    }

    /// Look up `name` (without the `$$`).
    pub fn get(&self, name: &str) -> Option<&Bson> {
        self.values.get(name)
    }

    /// Evaluate each field of a `let` document against `root` and bind it.
    pub fn bind_let(&mut self, spec: &Document, root: &Document) -> Result<()> {
        for (name, value) in spec {
            let expr = Expr::parse(value)?;
            let v = expr.eval(root, self)?.unwrap_or(Bson::Null);
            self.set(name.clone(), v);
        }
        Ok(())
    }
}

/// A parsed aggregation expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A constant value.
    Literal(Bson),
}

impl Expr {
    /// Parse an expression. Unknown `$operators` fail with
    /// `InvalidPipelineOperator` (168), naming the operator.
    pub fn parse(value: &Bson) -> Result<Expr> {
        Ok(Expr::Literal(value.clone()))
    }

    /// Evaluate against `root` (`$$ROOT`/`$$CURRENT`). `Ok(None)` means the
    /// result is *missing* (a field path that leads nowhere), which `$project`
    /// omits and comparisons treat as below null.
    pub fn eval(&self, _root: &Document, _vars: &Vars) -> Result<Option<Bson>> {
        match self {
            Expr::Literal(v) => Ok(Some(v.clone())),
        }
    }
}

/// Placeholder until the expression evaluator lands.
pub fn unsupported(op: &str) -> EngineError {
    EngineError::not_implemented(op.to_string())
}
