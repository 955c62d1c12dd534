//! Find projections: inclusion, exclusion, dotted paths, the positional `$`,
//! `$slice`, `$elemMatch`, and computed fields (literals and aggregation
//! expressions, as mongod 4.4+ accepts in `find`).
//!
//! The spec parses into a tree keyed by path component, following mongod's
//! projection parser: the first inclusion or exclusion (other than `_id`)
//! fixes the projection's kind, `$slice` alone leaves it open (exclusion by
//! default), `$elemMatch` and expressions make it an inclusion. Applying an
//! inclusion keeps included fields in document order, then appends computed
//! fields in spec order; an exclusion removes fields in place.

use bson::{Bson, Document, doc};

use super::error::{EngineError, ErrorCode, Result};
use super::expr::{Expr, Vars};
use super::filter::Filter;

/// What one projected path does.
#[derive(Debug, Clone)]
enum Item {
    Include,
    Exclude,
    Sub(Tree),
    Slice {
        skip: Option<i64>,
        limit: i64,
    },
    /// `field.$`: keep the element the query matched.
    Positional,
    /// `{field: {$elemMatch: …}}`, matched as the equivalent query.
    ElemMatch(Box<Filter>),
    Computed(Box<Expr>),
}

/// The children of one level of the projection, in spec order.
#[derive(Debug, Clone, Default)]
struct Tree {
    children: Vec<(String, Item)>,
}

impl Tree {
    fn get(&self, name: &str) -> Option<&Item> {
        self.children
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, i)| i)
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut Item> {
        self.children
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, i)| i)
    }

    fn remove(&mut self, name: &str) {
        self.children.retain(|(n, _)| n != name);
    }

    /// mongod's `addNodeAtPath`, with its path-collision errors.
    fn add(&mut self, parts: &[&str], full: &str, item: Item) -> Result<()> {
        let Some((first, rest)) = parts.split_first() else {
            return Ok(());
        };
        if rest.is_empty() {
            if self.get(first).is_some() {
                return Err(EngineError::new(
                    ErrorCode(31250),
                    format!("Path collision at {full}"),
                ));
            }
            self.children.push((first.to_string(), item));
            return Ok(());
        }
        if self.get(first).is_none() {
            self.children
                .push((first.to_string(), Item::Sub(Tree::default())));
        }
        match self.get_mut(first) {
            Some(Item::Sub(t)) => t.add(rest, full, item),
            _ => {
                let tail = full.split_once('.').map_or("", |(_, t)| t);
                Err(EngineError::new(
                    ErrorCode(31249),
                    format!("Path collision at {full} remaining portion {tail}"),
                ))
            }
        }
    }

    /// The subtree at `parts`, created if absent (mongod's
    /// `findLastInnerNodeOnPath` followed by an insertion).
    fn subtree(&mut self, parts: &[&str], full: &str) -> Result<&mut Tree> {
        let Some((first, rest)) = parts.split_first() else {
            return Ok(self);
        };
        if self.get(first).is_none() {
            self.children
                .push((first.to_string(), Item::Sub(Tree::default())));
        }
        match self.get_mut(first) {
            Some(Item::Sub(t)) => t.subtree(rest, full),
            _ => Err(EngineError::new(
                ErrorCode(31250),
                format!("Path collision at {full}"),
            )),
        }
    }

    fn has_computed(&self) -> bool {
        self.children.iter().any(|(_, i)| match i {
            Item::Computed(_) => true,
            Item::Sub(t) => t.has_computed(),
            _ => false,
        })
    }

    fn has_positional(&self) -> bool {
        self.children.iter().any(|(_, i)| match i {
            Item::Positional => true,
            Item::Sub(t) => t.has_positional(),
            _ => false,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Inclusion,
    Exclusion,
}

/// A parsed projection.
#[derive(Debug, Clone)]
pub struct Projection {
    source: Document,
    kind: Kind,
    root: Tree,
}

/// State of the parse, as in mongod's `ParseContext`.
#[derive(Default)]
struct ParseCtx {
    kind: Option<Kind>,
    has_positional: bool,
    has_elem_match: bool,
    has_slice: bool,
    id_included: bool,
    id_excluded: bool,
}

fn is_inclusion_or_exclusion(v: &Bson) -> bool {
    matches!(
        v,
        Bson::Boolean(_) | Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_)
    )
}

fn truthy(v: &Bson) -> bool {
    match v {
        Bson::Boolean(b) => *b,
        other => super::value::as_f64(other).is_some_and(|f| f != 0.0),
    }
}

impl ParseCtx {
    fn element(&mut self, tree: &mut Tree, name: &str, v: &Bson, top: bool) -> Result<()> {
        super::limits::check_field_path(name)?;
        let positional = name.ends_with(".$");
        if name.contains(".$.") {
            return Err(EngineError::new(
                ErrorCode(31394),
                "As of 4.4, it's illegal to specify positional operator in the middle of a path.Positional projection may only be used at the end, for example: a.b.$. If the query previously used a form like a.b.$.d, remove the parts following the '$' and the results will be equivalent.",
            ));
        }
        if let Bson::Document(sub) = v {
            if positional {
                return Err(EngineError::new(
                    ErrorCode(31271),
                    "positional projection cannot be used with an expression or sub object",
                ));
            }
            return self.sub_object(tree, name, sub, top);
        }
        if is_inclusion_or_exclusion(v) {
            let is_id = top && name == "_id";
            if truthy(v) {
                if positional {
                    if self.has_positional {
                        return Err(EngineError::new(
                            ErrorCode(31276),
                            "Cannot specify more than one positional projection per query.",
                        ));
                    }
                    if self.has_elem_match {
                        return Err(EngineError::new(
                            ErrorCode(31256),
                            "Cannot specify positional operator and $elemMatch.",
                        ));
                    }
                    if name == ".$" {
                        return Err(EngineError::new(
                            ErrorCode(5392900),
                            format!("Projection on field {name} is invalid"),
                        ));
                    }
                    let base = &name[..name.len() - 2];
                    let parts: Vec<&str> = base.split('.').collect();
                    tree.add(&parts, base, Item::Positional)?;
                    self.has_positional = true;
                } else {
                    let parts: Vec<&str> = name.split('.').collect();
                    tree.add(&parts, name, Item::Include)?;
                    if is_id {
                        self.id_included = true;
                    }
                }
                if !is_id {
                    if self.kind == Some(Kind::Exclusion) {
                        return Err(EngineError::new(
                            ErrorCode(31253),
                            format!("Cannot do inclusion on field {name} in exclusion projection"),
                        ));
                    }
                    self.kind = Some(Kind::Inclusion);
                }
            } else {
                if positional {
                    return Err(EngineError::new(
                        ErrorCode(31395),
                        "positional projection cannot be used with exclusion",
                    ));
                }
                let parts: Vec<&str> = name.split('.').collect();
                tree.add(&parts, name, Item::Exclude)?;
                if is_id {
                    self.id_excluded = true;
                } else {
                    if self.kind == Some(Kind::Inclusion) {
                        return Err(EngineError::new(
                            ErrorCode(31254),
                            format!("Cannot do exclusion on field {name} in inclusion projection"),
                        ));
                    }
                    self.kind = Some(Kind::Exclusion);
                }
            }
            return Ok(());
        }
        if positional {
            return Err(EngineError::new(
                ErrorCode(31308),
                "positional projection cannot be used with a literal",
            ));
        }
        // Any other value is a literal or an expression operand ("$a").
        let expr = Expr::parse(v)?;
        let parts: Vec<&str> = name.split('.').collect();
        tree.add(&parts, name, Item::Computed(Box::new(expr)))?;
        if self.kind == Some(Kind::Exclusion) {
            return Err(EngineError::new(
                ErrorCode(31310),
                format!("Cannot use an expression {name}: {v} in an exclusion projection"),
            ));
        }
        self.kind = Some(Kind::Inclusion);
        Ok(())
    }

    fn sub_object(&mut self, tree: &mut Tree, name: &str, sub: &Document, top: bool) -> Result<()> {
        if sub.is_empty() {
            return Err(EngineError::new(
                ErrorCode(51270),
                format!("Invalid empty sub-projection: {name}"),
            ));
        }
        let parts: Vec<&str> = name.split('.').collect();
        if sub.len() == 1
            && let Some((op, arg)) = sub.iter().next()
            && op.starts_with('$')
        {
            match op.as_str() {
                "$slice" => {
                    let item = parse_slice(arg)?;
                    tree.add(&parts, name, item)?;
                    self.has_slice = true;
                }
                "$elemMatch" => {
                    let Bson::Document(spec) = arg else {
                        return Err(EngineError::new(
                            ErrorCode(31274),
                            format!(
                                "elemMatch: Invalid argument, object required, but got {}",
                                super::value::type_alias(arg)
                            ),
                        ));
                    };
                    if self.has_positional {
                        return Err(EngineError::new(
                            ErrorCode(31255),
                            "Cannot specify positional operator and $elemMatch.",
                        ));
                    }
                    if parts.len() != 1 || !top {
                        return Err(EngineError::new(
                            ErrorCode(31275),
                            "Cannot use $elemMatch projection on a nested field.",
                        ));
                    }
                    let filter = Filter::parse(&doc! {name: {"$elemMatch": spec.clone()}}, None)?;
                    tree.add(&parts, name, Item::ElemMatch(Box::new(filter)))?;
                    self.has_elem_match = true;
                }
                "$meta" => return Err(EngineError::not_implemented("$meta projection")),
                _ => {
                    let expr = Expr::parse(&Bson::Document(sub.clone())).map_err(|e| {
                        if e.code == ErrorCode::INVALID_PIPELINE_OPERATOR
                            && e.message.contains(op.as_str())
                        {
                            EngineError::new(ErrorCode(31325), format!("Unknown expression {op}"))
                        } else {
                            e
                        }
                    })?;
                    if self.kind == Some(Kind::Exclusion) {
                        return Err(EngineError::new(
                            ErrorCode(31252),
                            "Cannot use expression other than $meta in exclusion projection",
                        ));
                    }
                    self.kind = Some(Kind::Inclusion);
                    tree.add(&parts, name, Item::Computed(Box::new(expr)))?;
                }
            }
            return Ok(());
        }
        // A sub-projection: `{a: {b: 1}}` means `{"a.b": 1}`.
        let child = tree.subtree(&parts, name)?;
        for (k, v) in sub {
            self.element(child, k, v, false)?;
        }
        Ok(())
    }
}

fn parse_slice(arg: &Bson) -> Result<Item> {
    let int = |v: &Bson| {
        super::value::as_f64(v).map_or(0, |f| {
            f.trunc().clamp(i32::MIN as f64, i32::MAX as f64) as i64
        })
    };
    if super::value::is_number(arg) {
        return Ok(Item::Slice {
            skip: None,
            limit: int(arg),
        });
    }
    if let Bson::Array(a) = arg {
        if a.len() != 2 {
            return Err(EngineError::new(
                ErrorCode(31272),
                "$slice array argument should be of form [skip, limit]",
            ));
        }
        if !super::value::is_number(&a[0]) {
            return Err(EngineError::new(
                ErrorCode(31257),
                format!(
                    "$slice expects the skip argument to be a number, got {}",
                    super::value::type_alias(&a[0])
                ),
            ));
        }
        if !super::value::is_number(&a[1]) {
            return Err(EngineError::new(
                ErrorCode(31258),
                format!(
                    "$slice expects the limit argument to be a number, got {}",
                    super::value::type_alias(&a[1])
                ),
            ));
        }
        let limit = int(&a[1]);
        if limit <= 0 {
            return Err(EngineError::new(
                ErrorCode(31259),
                format!("$slice limit must be positive, got {limit}"),
            ));
        }
        return Ok(Item::Slice {
            skip: Some(int(&a[0])),
            limit,
        });
    }
    Err(EngineError::new(
        ErrorCode(31273),
        "$slice only supports numbers and [skip, limit] arrays",
    ))
}

fn slice(v: &Bson, skip: Option<i64>, limit: i64) -> Bson {
    let Bson::Array(a) = v else {
        return v.clone();
    };
    let len = a.len() as i64;
    let (start, count) = match skip {
        None if limit >= 0 => (0, limit),
        None => ((len + limit).max(0), len),
        Some(s) if s < 0 => ((len + s).max(0), limit),
        Some(s) => (s.min(len), limit),
    };
    let end = start.saturating_add(count).min(len);
    Bson::Array(a[start as usize..end.max(start) as usize].to_vec())
}

/// What applying needs besides the tree.
struct ApplyCtx<'a> {
    root: &'a Document,
    position: Option<usize>,
    vars: &'a Vars,
}

fn positional(v: &Bson, position: Option<usize>) -> Result<Option<Bson>> {
    let Bson::Array(a) = v else {
        return Ok(Some(v.clone()));
    };
    let Some(p) = position else {
        return Err(EngineError::new(
            ErrorCode(51246),
            "positional operator '.$' couldn't find a matching element in the array",
        ));
    };
    match a.get(p) {
        Some(e) => Ok(Some(Bson::Array(vec![e.clone()]))),
        None => Err(EngineError::new(
            ErrorCode(51247),
            "positional operator '.$' element mismatch",
        )),
    }
}

fn elem_match(filter: &Filter, field: &str, ctx: &ApplyCtx<'_>) -> Result<Option<Bson>> {
    let details = filter.match_details(ctx.root, ctx.vars)?;
    let (Some(p), Some(Bson::Array(a))) = (details.array_position, ctx.root.get(field)) else {
        return Ok(None);
    };
    Ok(a.get(p).map(|e| Bson::Array(vec![e.clone()])))
}

fn include(tree: &Tree, doc: &Document, ctx: &ApplyCtx<'_>, top: bool) -> Result<Document> {
    let mut out = Document::new();
    for (k, v) in doc {
        let value = match tree.get(k) {
            Some(Item::Include) => Some(v.clone()),
            Some(Item::Sub(t)) => match v {
                Bson::Document(d) => Some(Bson::Document(include(t, d, ctx, false)?)),
                Bson::Array(a) => Some(Bson::Array(include_array(t, a, ctx)?)),
                _ => None,
            },
            Some(Item::Slice { skip, limit }) => Some(slice(v, *skip, *limit)),
            Some(Item::Positional) => positional(v, ctx.position)?,
            Some(Item::ElemMatch(f)) if top => elem_match(f, k, ctx)?,
            _ => None,
        };
        if let Some(value) = value {
            out.insert(k.clone(), value);
        }
    }
    add_computed(tree, &mut out, ctx)?;
    Ok(out)
}

fn include_array(tree: &Tree, items: &[Bson], ctx: &ApplyCtx<'_>) -> Result<Vec<Bson>> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Bson::Document(d) => out.push(Bson::Document(include(tree, d, ctx, false)?)),
            Bson::Array(a) => out.push(Bson::Array(include_array(tree, a, ctx)?)),
            // Scalars have no fields to include.
            _ => {}
        }
    }
    Ok(out)
}

/// Append computed fields in spec order, creating the documents on their
/// path (and applying to each document of an array on the way, as
/// `$addFields` does).
fn add_computed(tree: &Tree, out: &mut Document, ctx: &ApplyCtx<'_>) -> Result<()> {
    for (k, item) in &tree.children {
        match item {
            Item::Computed(e) => {
                if let Some(v) = e.eval(ctx.root, ctx.vars)? {
                    out.insert(k.clone(), v);
                }
            }
            Item::Sub(t) if t.has_computed() => {
                let current = out.remove(k);
                let updated = match current {
                    Some(Bson::Document(mut d)) => {
                        add_computed(t, &mut d, ctx)?;
                        Bson::Document(d)
                    }
                    Some(Bson::Array(items)) => {
                        let mut next = Vec::with_capacity(items.len());
                        for item in items {
                            let mut d = match item {
                                Bson::Document(d) => d,
                                _ => Document::new(),
                            };
                            add_computed(t, &mut d, ctx)?;
                            next.push(Bson::Document(d));
                        }
                        Bson::Array(next)
                    }
                    _ => {
                        let mut d = Document::new();
                        add_computed(t, &mut d, ctx)?;
                        Bson::Document(d)
                    }
                };
                out.insert(k.clone(), updated);
            }
            _ => {}
        }
    }
    Ok(())
}

fn exclude(tree: &Tree, doc: &Document, ctx: &ApplyCtx<'_>, top: bool) -> Result<Document> {
    let mut out = Document::new();
    for (k, v) in doc {
        let value = match tree.get(k) {
            Some(Item::Exclude) => None,
            Some(Item::Sub(t)) => match v {
                Bson::Document(d) => Some(Bson::Document(exclude(t, d, ctx, false)?)),
                Bson::Array(a) => Some(Bson::Array(exclude_array(t, a, ctx)?)),
                other => Some(other.clone()),
            },
            Some(Item::Slice { skip, limit }) => Some(slice(v, *skip, *limit)),
            Some(Item::ElemMatch(f)) if top => elem_match(f, k, ctx)?,
            _ => Some(v.clone()),
        };
        if let Some(value) = value {
            out.insert(k.clone(), value);
        }
    }
    Ok(out)
}

fn exclude_array(tree: &Tree, items: &[Bson], ctx: &ApplyCtx<'_>) -> Result<Vec<Bson>> {
    items
        .iter()
        .map(|item| {
            Ok(match item {
                Bson::Document(d) => Bson::Document(exclude(tree, d, ctx, false)?),
                Bson::Array(a) => Bson::Array(exclude_array(tree, a, ctx)?),
                other => other.clone(),
            })
        })
        .collect()
}

impl Projection {
    /// Parse a projection document; mixing inclusion and exclusion (other
    /// than `_id`) fails with mongod's error (31253/31254).
    pub fn parse(spec: &Document) -> Result<Projection> {
        let mut ctx = ParseCtx::default();
        let mut root = Tree::default();
        let mut id_specified = false;
        for (k, v) in spec {
            id_specified |= k == "_id" || k.starts_with("_id.");
            ctx.element(&mut root, k, v, true)?;
        }
        let kind = match ctx.kind {
            Some(k) => k,
            None if ctx.has_slice => {
                if ctx.id_included {
                    Kind::Inclusion
                } else {
                    Kind::Exclusion
                }
            }
            None if ctx.has_elem_match || ctx.id_included => Kind::Inclusion,
            None => Kind::Exclusion,
        };
        if !id_specified && kind == Kind::Inclusion {
            root.children.insert(0, ("_id".to_string(), Item::Include));
        }
        if kind == Kind::Exclusion && ctx.id_included {
            root.remove("_id");
        }
        Ok(Projection {
            source: spec.clone(),
            kind,
            root,
        })
    }

    /// The projection as given.
    pub fn source(&self) -> &Document {
        &self.source
    }

    /// Whether the projection uses the positional `$` operator and therefore
    /// needs the matched array position from the filter.
    pub fn needs_position(&self) -> bool {
        self.root.has_positional()
    }

    /// Project one document. `array_position` comes from
    /// [`super::filter::MatchDetails`].
    pub fn apply(
        &self,
        doc: &Document,
        array_position: Option<usize>,
        vars: &Vars,
    ) -> Result<Document> {
        if self.source.is_empty() {
            return Ok(doc.clone());
        }
        let ctx = ApplyCtx {
            root: doc,
            position: array_position,
            vars,
        };
        match self.kind {
            Kind::Inclusion => include(&self.root, doc, &ctx, true),
            Kind::Exclusion => exclude(&self.root, doc, &ctx, true),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p(spec: Document, d: Document) -> Document {
        Projection::parse(&spec)
            .unwrap()
            .apply(&d, None, &Vars::default())
            .unwrap()
    }

    #[test]
    fn inclusion_and_exclusion() {
        let d = doc! {"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 1, "x": 0}, 5]};
        assert_eq!(p(doc! {"a": 1}, d.clone()), doc! {"_id": 1, "a": 1});
        assert_eq!(p(doc! {"a": 1, "_id": 0}, d.clone()), doc! {"a": 1});
        assert_eq!(
            p(doc! {"b.c": 1}, d.clone()),
            doc! {"_id": 1, "b": {"c": 2}}
        );
        assert_eq!(
            p(doc! {"e.c": 1}, d.clone()),
            doc! {"_id": 1, "e": [{"c": 1}]}
        );
        assert_eq!(
            p(doc! {"e.c": 0, "b": 0}, d.clone()),
            doc! {"_id": 1, "a": 1, "e": [{"x": 0}, 5]}
        );
        assert_eq!(p(doc! {"_id": 0}, doc! {"_id": 1, "a": 2}), doc! {"a": 2});
    }

    #[test]
    fn mixing_is_refused() {
        let e = Projection::parse(&doc! {"a": 1, "b": 0}).unwrap_err();
        assert_eq!(e.code, ErrorCode(31254));
        assert_eq!(
            e.message,
            "Cannot do exclusion on field b in inclusion projection"
        );
        let e = Projection::parse(&doc! {"a": 0, "b": 1}).unwrap_err();
        assert_eq!(e.code, ErrorCode(31253));
        let e = Projection::parse(&doc! {"a": 1, "a.b": 1}).unwrap_err();
        assert_eq!(e.code, ErrorCode(31249));
    }

    #[test]
    fn slice_elem_match_positional() {
        let d = doc! {"_id": 1, "a": [1, 2, 3, 4], "b": 0};
        assert_eq!(
            p(doc! {"a": {"$slice": 2}}, d.clone()),
            doc! {"_id": 1, "a": [1, 2], "b": 0}
        );
        assert_eq!(
            p(doc! {"a": {"$slice": -1}}, d.clone()),
            doc! {"_id": 1, "a": [4], "b": 0}
        );
        assert_eq!(
            p(doc! {"a": {"$slice": [1, 2]}}, d.clone()),
            doc! {"_id": 1, "a": [2, 3], "b": 0}
        );
        assert_eq!(
            p(doc! {"a": {"$elemMatch": {"$gt": 2}}}, d.clone()),
            doc! {"_id": 1, "a": [3]}
        );
        let proj = Projection::parse(&doc! {"a.$": 1}).unwrap();
        assert!(proj.needs_position());
        assert_eq!(
            proj.apply(&d, Some(2), &Vars::default()).unwrap(),
            doc! {"_id": 1, "a": [3]}
        );
        assert_eq!(
            proj.apply(&d, None, &Vars::default()).unwrap_err().code,
            ErrorCode(51246)
        );
    }

    #[test]
    fn literals_are_computed() {
        let d = doc! {"_id": 1, "a": 1};
        assert_eq!(p(doc! {"x": "hi"}, d.clone()), doc! {"_id": 1, "x": "hi"});
        assert_eq!(p(doc! {"x": {"$literal": 1}, "_id": 0}, d).len(), 1);
    }
}
