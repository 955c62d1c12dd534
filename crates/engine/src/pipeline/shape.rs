//! Stages that reshape one document at a time: `$project`, `$unset`,
//! `$addFields`/`$set` and `$unwind`.

use bson::{Bson, Document};

use super::{get_dotted, get_dotted_mut, remove_dotted, set_dotted};
use crate::error::Result;
use crate::expr::{Expr, Vars, err};
use crate::value;

/// One node of a projection tree.
#[derive(Debug, Clone)]
enum Node {
    Include,
    Exclude,
    Computed(Expr),
    Sub(Vec<(String, Node)>),
}

fn find<'a>(tree: &'a [(String, Node)], key: &str) -> Option<&'a Node> {
    tree.iter().find(|(k, _)| k == key).map(|(_, n)| n)
}

fn find_mut<'a>(tree: &'a mut [(String, Node)], key: &str) -> Option<&'a mut Node> {
    tree.iter_mut().find(|(k, _)| k == key).map(|(_, n)| n)
}

/// Insert `node` at a dotted path, failing on a path collision.
fn insert_path(
    tree: &mut Vec<(String, Node)>,
    path: &[&str],
    node: Node,
    full: &str,
) -> Result<()> {
    let collision = || {
        err(
            31250,
            format!("Invalid $project :: caused by :: Path collision at {full}"),
        )
    };
    let Some((first, rest)) = path.split_first() else {
        return Ok(());
    };
    if rest.is_empty() {
        if find(tree, first).is_some() {
            return Err(collision());
        }
        tree.push(((*first).to_string(), node));
        return Ok(());
    }
    if find(tree, first).is_none() {
        tree.push(((*first).to_string(), Node::Sub(Vec::new())));
    }
    match find_mut(tree, first) {
        Some(Node::Sub(children)) => insert_path(children, rest, node, full),
        _ => Err(collision()),
    }
}

fn check_field(name: &str, stage: &str) -> Result<()> {
    crate::limits::check_field_path(name)?;
    if name.is_empty() {
        return Err(err(
            40352,
            format!(
                "Invalid {stage} :: caused by :: FieldPath cannot be constructed with empty string"
            ),
        ));
    }
    if name.starts_with('$') {
        return Err(err(
            16410,
            format!(
                "Invalid {stage} :: caused by :: FieldPath field names may not start with '$'. Consider using $getField or $setField."
            ),
        ));
    }
    if name.split('.').any(str::is_empty) {
        return Err(err(
            15998,
            format!(
                "Invalid {stage} :: caused by :: FieldPath field names may not be empty strings."
            ),
        ));
    }
    Ok(())
}

fn is_operator_doc(d: &Document) -> bool {
    d.keys().next().is_some_and(|k| k.starts_with('$'))
}

/// A `$project` (or `$unset`) specification.
#[derive(Debug, Clone)]
pub(super) struct Projection {
    tree: Vec<(String, Node)>,
    inclusion: bool,
}

impl Projection {
    pub(super) fn parse(spec: &Document) -> Result<Projection> {
        if spec.is_empty() {
            return Err(err(
                51272,
                "Invalid $project :: caused by :: projection specification must have at least one field",
            ));
        }
        let mut tree = Vec::new();
        let mut mode: Option<bool> = None;
        Self::parse_level(spec, "", &mut tree, &mut mode)?;
        // `{_id: 1}` alone is an inclusion projection, `{_id: 0}` an exclusion.
        let inclusion = mode.unwrap_or_else(|| matches!(find(&tree, "_id"), Some(Node::Include)));
        if inclusion && find(&tree, "_id").is_none() {
            tree.insert(0, ("_id".to_string(), Node::Include));
        }
        Ok(Projection { tree, inclusion })
    }

    fn parse_level(
        spec: &Document,
        prefix: &str,
        tree: &mut Vec<(String, Node)>,
        mode: &mut Option<bool>,
    ) -> Result<()> {
        for (k, v) in spec {
            check_field(k, "$project")?;
            let full = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            let path: Vec<&str> = k.split('.').collect();
            let node = match v {
                Bson::Document(d) if d.is_empty() => {
                    return Err(err(
                        51270,
                        format!(
                            "Invalid $project :: caused by :: An empty sub-projection is not a valid value. Found empty object at path {full}"
                        ),
                    ));
                }
                Bson::Document(d) if !is_operator_doc(d) => {
                    let mut children = Vec::new();
                    Self::parse_level(d, &full, &mut children, mode)?;
                    Node::Sub(children)
                }
                Bson::Boolean(_)
                | Bson::Int32(_)
                | Bson::Int64(_)
                | Bson::Double(_)
                | Bson::Decimal128(_) => {
                    let include = match v {
                        Bson::Boolean(b) => *b,
                        n => value::as_f64(n).is_some_and(|f| f != 0.0),
                    };
                    if full == "_id" {
                        if include {
                            Node::Include
                        } else {
                            Node::Exclude
                        }
                    } else {
                        match (*mode, include) {
                            (Some(false), true) => {
                                return Err(err(
                                    31253,
                                    format!(
                                        "Invalid $project :: caused by :: Cannot do inclusion on field {full} in exclusion projection"
                                    ),
                                ));
                            }
                            (Some(true), false) => {
                                return Err(err(
                                    31254,
                                    format!(
                                        "Invalid $project :: caused by :: Cannot do exclusion on field {full} in inclusion projection"
                                    ),
                                ));
                            }
                            _ => *mode = Some(include),
                        }
                        if include {
                            Node::Include
                        } else {
                            Node::Exclude
                        }
                    }
                }
                other => {
                    if *mode == Some(false) {
                        return Err(err(
                            31252,
                            "Invalid $project :: caused by :: Cannot use expression other than $meta in exclusion projection",
                        ));
                    }
                    *mode = Some(true);
                    Node::Computed(Expr::parse(other)?)
                }
            };
            insert_path(tree, &path, node, &full)?;
        }
        Ok(())
    }

    /// `$unset`: a field name or an array of them, as an exclusion.
    pub(super) fn parse_unset(spec: &Bson) -> Result<Projection> {
        let names: Vec<String> = match spec {
            Bson::String(s) => vec![s.clone()],
            Bson::Array(items) => {
                if items.is_empty() {
                    return Err(err(
                        31119,
                        "$unset specification must be a string or an array with at least one field",
                    ));
                }
                items
                    .iter()
                    .map(|i| match i {
                        Bson::String(s) => Ok(s.clone()),
                        _ => Err(err(31120, "$unset specification must be a string or an array containing only string values")),
                    })
                    .collect::<Result<_>>()?
            }
            _ => {
                return Err(err(
                    31002,
                    "$unset specification must be a string or an array",
                ));
            }
        };
        let mut tree = Vec::new();
        for n in &names {
            check_field(n, "$unset")?;
            let path: Vec<&str> = n.split('.').collect();
            insert_path(&mut tree, &path, Node::Exclude, n)?;
        }
        Ok(Projection {
            tree,
            inclusion: false,
        })
    }

    pub(super) fn apply(&self, doc: &Document, vars: &Vars) -> Result<Document> {
        let out = if self.inclusion {
            include(&self.tree, doc, doc, vars)?
        } else {
            exclude(&self.tree, doc)
        };
        crate::limits::check_output_depth(&out)?;
        Ok(out)
    }
}

impl Projection {
    /// This projection as a [`RawProjection`], when every field it keeps
    /// or computes can be read from a record's bytes without decoding the
    /// record: a flat inclusion (no dotted paths) of top-level fields,
    /// `_id` kept or excluded, and computed fields that are constants,
    /// top-level field paths or the document's size
    /// (`{$bsonSize: "$$ROOT"}`). `None` for anything else.
    pub(super) fn raw_plan(&self) -> Option<RawProjection> {
        if !self.inclusion {
            return None;
        }
        let mut include = Vec::new();
        let mut computed = Vec::new();
        for (k, node) in &self.tree {
            match node {
                Node::Include => include.push(k.clone()),
                // Only `_id` may be excluded from an inclusion.
                Node::Exclude => {}
                Node::Computed(e) => computed.push((k.clone(), RawValue::of(e)?)),
                Node::Sub(_) => return None,
            }
        }
        Some(RawProjection { include, computed })
    }
}

/// A computed field of a [`RawProjection`].
#[derive(Debug, Clone)]
enum RawValue {
    Literal(Bson),
    /// `"$name"`: a top-level field, left out when missing.
    Field(String),
    /// `{$bsonSize: "$$ROOT"}`.
    RootSize,
}

impl RawValue {
    fn of(e: &Expr) -> Option<RawValue> {
        match e {
            Expr::Literal(v) => Some(RawValue::Literal(v.clone())),
            Expr::Field(path) if path.len() == 1 => Some(RawValue::Field(path[0].clone())),
            Expr::Call { op, args } if op == "$bsonSize" => match args.as_slice() {
                [Expr::Var { name, path }] if name == "ROOT" && path.is_empty() => {
                    Some(RawValue::RootSize)
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// A record whose bytes could not be read: the engine stored them, so
/// this is an internal error, as for every stored-record decode.
fn corrupt(e: impl std::fmt::Display) -> crate::error::EngineError {
    crate::error::EngineError::new(
        crate::error::ErrorCode::INTERNAL_ERROR,
        format!("corrupt record: {e}"),
    )
}

/// A `$project` answered from a stored record's bytes (see
/// [`Projection::raw_plan`]): what the decoded `$project` returns for that
/// record, with only the values it outputs decoded. It is used where the
/// stage reads the records straight from the collection, where `$$ROOT`
/// is the stored document and `CURRENT` is not rebound.
#[derive(Debug, Clone)]
pub(crate) struct RawProjection {
    /// Top-level fields kept (`_id` among them unless excluded).
    include: Vec<String>,
    /// Computed fields, in the specification's order.
    computed: Vec<(String, RawValue)>,
}

impl RawProjection {
    /// The projected document of the record `raw`. As with the decoded
    /// record, a repeated name takes its first place and its last value;
    /// the size is the stored document's, as mongod's `$bsonSize` of
    /// `$$ROOT` is.
    pub(crate) fn apply(&self, raw: &bson::RawDocument) -> Result<Document> {
        use crate::codec::walk::{Doc, Value};
        let decode = |v: Value<'_>| v.decode().map_err(corrupt);
        let doc = Doc::from_raw(raw);
        let mut out = Document::new();
        // Kept fields in the document's own order…
        if !self.include.is_empty() {
            for element in doc.iter() {
                let (k, _) = element.map_err(corrupt)?;
                if out.contains_key(k) || !self.include.iter().any(|f| f == k) {
                    continue;
                }
                if let Some(v) = doc.get_last(k).map_err(corrupt)? {
                    out.insert(k, decode(v)?);
                }
            }
        }
        // …then computed fields, in the specification's order.
        for (k, v) in &self.computed {
            let value = match v {
                RawValue::Literal(v) => Some(v.clone()),
                RawValue::Field(f) => doc.get_last(f).map_err(corrupt)?.map(decode).transpose()?,
                RawValue::RootSize => Some(Bson::Int32(raw.as_bytes().len() as i32)),
            };
            if let Some(value) = value {
                out.insert(k.clone(), value);
            }
        }
        crate::limits::check_output_depth(&out)?;
        Ok(out)
    }
}

fn has_computed(tree: &[(String, Node)]) -> bool {
    tree.iter().any(|(_, n)| match n {
        Node::Computed(_) => true,
        Node::Sub(c) => has_computed(c),
        _ => false,
    })
}

fn include(
    tree: &[(String, Node)],
    doc: &Document,
    root: &Document,
    vars: &Vars,
) -> Result<Document> {
    let mut out = Document::new();
    // Kept fields come first, in the document's own order…
    for (k, v) in doc {
        match find(tree, k) {
            Some(Node::Include) => {
                out.insert(k.clone(), v.clone());
            }
            Some(Node::Sub(children)) => match v {
                Bson::Document(d) => {
                    out.insert(k.clone(), include(children, d, root, vars)?);
                }
                Bson::Array(items) => {
                    out.insert(k.clone(), include_array(children, items, root, vars)?);
                }
                _ => {}
            },
            _ => {}
        }
    }
    // …then computed fields, in the specification's order.
    for (k, node) in tree {
        match node {
            Node::Computed(e) => {
                if let Some(v) = e.eval(root, vars)? {
                    out.insert(k.clone(), v);
                }
            }
            Node::Sub(children)
                if has_computed(children)
                    && !matches!(doc.get(k), Some(Bson::Document(_) | Bson::Array(_))) =>
            {
                let sub = include(children, &Document::new(), root, vars)?;
                out.insert(k.clone(), sub);
            }
            _ => {}
        }
    }
    Ok(out)
}

fn include_array(
    tree: &[(String, Node)],
    items: &[Bson],
    root: &Document,
    vars: &Vars,
) -> Result<Bson> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Bson::Document(d) => out.push(Bson::Document(include(tree, d, root, vars)?)),
            Bson::Array(inner) => out.push(include_array(tree, inner, root, vars)?),
            _ if has_computed(tree) => {
                out.push(Bson::Document(include(tree, &Document::new(), root, vars)?));
            }
            _ => {}
        }
    }
    Ok(Bson::Array(out))
}

fn exclude(tree: &[(String, Node)], doc: &Document) -> Document {
    let mut out = Document::new();
    for (k, v) in doc {
        match find(tree, k) {
            Some(Node::Exclude) => {}
            Some(Node::Sub(children)) => {
                out.insert(k.clone(), exclude_value(children, v));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

fn exclude_value(tree: &[(String, Node)], v: &Bson) -> Bson {
    match v {
        Bson::Document(d) => Bson::Document(exclude(tree, d)),
        Bson::Array(items) => Bson::Array(items.iter().map(|i| exclude_value(tree, i)).collect()),
        other => other.clone(),
    }
}

/// An `$addFields`/`$set` specification: computed fields merged into the
/// document, nested documents merging into existing embedded documents.
#[derive(Debug, Clone)]
pub(super) struct AddFields {
    tree: Vec<(String, Node)>,
}

impl AddFields {
    pub(super) fn parse(spec: &Document, stage: &str) -> Result<AddFields> {
        let mut tree = Vec::new();
        Self::parse_level(spec, "", &mut tree, stage)?;
        Ok(AddFields { tree })
    }

    fn parse_level(
        spec: &Document,
        prefix: &str,
        tree: &mut Vec<(String, Node)>,
        stage: &str,
    ) -> Result<()> {
        for (k, v) in spec {
            check_field(k, stage)?;
            let full = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            let node = match v {
                Bson::Document(d) if !d.is_empty() && !is_operator_doc(d) => {
                    let mut children = Vec::new();
                    Self::parse_level(d, &full, &mut children, stage)?;
                    Node::Sub(children)
                }
                other => Node::Computed(Expr::parse(other)?),
            };
            let path: Vec<&str> = k.split('.').collect();
            insert_path(tree, &path, node, &full)?;
        }
        Ok(())
    }

    pub(super) fn apply(&self, doc: &Document, vars: &Vars) -> Result<Document> {
        let out = add(&self.tree, doc, doc, vars)?;
        crate::limits::check_output_depth(&out)?;
        Ok(out)
    }

    /// [`AddFields::apply`] on a document the stage owns: with only
    /// top-level fields, every value is computed from the input first and
    /// then set in place, so the document (arrays included) is not copied.
    pub(super) fn apply_owned(&self, mut doc: Document, vars: &Vars) -> Result<Document> {
        if self.tree.iter().any(|(_, n)| matches!(n, Node::Sub(_))) {
            return self.apply(&doc, vars);
        }
        let mut values = Vec::with_capacity(self.tree.len());
        for (_, node) in &self.tree {
            if let Node::Computed(e) = node {
                values.push(e.eval(&doc, vars)?);
            }
        }
        for ((k, _), v) in self.tree.iter().zip(values) {
            match v {
                Some(v) => {
                    doc.insert(k.clone(), v);
                }
                None => {
                    doc.remove(k);
                }
            }
        }
        crate::limits::check_output_depth(&doc)?;
        Ok(doc)
    }
}

fn add(tree: &[(String, Node)], doc: &Document, root: &Document, vars: &Vars) -> Result<Document> {
    let mut out = doc.clone();
    for (k, node) in tree {
        match node {
            Node::Computed(e) => match e.eval(root, vars)? {
                Some(v) => {
                    out.insert(k.clone(), v);
                }
                None => {
                    out.remove(k);
                }
            },
            Node::Sub(children) => {
                let new = match doc.get(k) {
                    Some(Bson::Document(d)) => Bson::Document(add(children, d, root, vars)?),
                    Some(Bson::Array(items)) => add_array(children, items, root, vars)?,
                    _ => Bson::Document(add(children, &Document::new(), root, vars)?),
                };
                out.insert(k.clone(), new);
            }
            _ => {}
        }
    }
    Ok(out)
}

fn add_array(
    tree: &[(String, Node)],
    items: &[Bson],
    root: &Document,
    vars: &Vars,
) -> Result<Bson> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(match item {
            Bson::Document(d) => Bson::Document(add(tree, d, root, vars)?),
            Bson::Array(inner) => add_array(tree, inner, root, vars)?,
            _ => Bson::Document(add(tree, &Document::new(), root, vars)?),
        });
    }
    Ok(Bson::Array(out))
}

/// A parsed `$unwind`.
#[derive(Debug, Clone)]
pub(super) struct Unwind {
    path: Vec<String>,
    index_field: Option<Vec<String>>,
    preserve: bool,
}

fn unwind_path(s: &str) -> Result<Vec<String>> {
    let Some(rest) = s.strip_prefix('$') else {
        return Err(err(
            28818,
            format!("path option to $unwind stage should be prefixed with a '$': {s}"),
        ));
    };
    if rest.is_empty() || rest.split('.').any(|p| p.is_empty() || p.starts_with('$')) {
        return Err(err(
            28818,
            format!("path option to $unwind stage is not a valid field path: {s}"),
        ));
    }
    Ok(rest.split('.').map(str::to_string).collect())
}

impl Unwind {
    pub(super) fn parse(spec: &Bson) -> Result<Unwind> {
        match spec {
            Bson::String(s) => Ok(Unwind {
                path: unwind_path(s)?,
                index_field: None,
                preserve: false,
            }),
            Bson::Document(d) => {
                let mut u = Unwind {
                    path: Vec::new(),
                    index_field: None,
                    preserve: false,
                };
                for (k, v) in d {
                    match (k.as_str(), v) {
                        ("path", Bson::String(s)) => u.path = unwind_path(s)?,
                        ("path", other) => {
                            return Err(err(
                                28808,
                                format!(
                                    "expected a string as the path for $unwind stage, got {}",
                                    value::type_alias(other)
                                ),
                            ));
                        }
                        ("includeArrayIndex", Bson::String(s)) => {
                            if s.is_empty() || s.starts_with('$') {
                                return Err(err(
                                    28822,
                                    format!(
                                        "includeArrayIndex option to $unwind stage should not be prefixed with a '$': {s}"
                                    ),
                                ));
                            }
                            u.index_field = Some(s.split('.').map(str::to_string).collect());
                        }
                        ("includeArrayIndex", other) => {
                            return Err(err(
                                28810,
                                format!(
                                    "expected a non-empty string for the includeArrayIndex  option to $unwind stage, got {}",
                                    value::type_alias(other)
                                ),
                            ));
                        }
                        ("preserveNullAndEmptyArrays", Bson::Boolean(b)) => u.preserve = *b,
                        ("preserveNullAndEmptyArrays", other) => {
                            return Err(err(
                                28809,
                                format!(
                                    "expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage, got {}",
                                    value::type_alias(other)
                                ),
                            ));
                        }
                        (other, _) => {
                            return Err(err(
                                28811,
                                format!("unrecognized option to $unwind stage: {other}"),
                            ));
                        }
                    }
                }
                if u.path.is_empty() {
                    return Err(err(28812, "no path specified to $unwind stage"));
                }
                Ok(u)
            }
            other => Err(err(
                15981,
                format!(
                    "expected either a string or an object as specification for $unwind stage, got {}",
                    value::type_alias(other)
                ),
            )),
        }
    }

    /// Unwind `doc` into `out`. Each output is a checkpoint of the running
    /// operation and is counted in `held` (a copy of the rest of the
    /// document per element: an array of a million values beside a
    /// kilobyte is a gigabyte).
    pub(super) fn apply(
        &self,
        doc: Document,
        out: &mut Vec<Document>,
        held: &mut crate::limits::Held,
    ) -> crate::error::Result<()> {
        let with_index = |mut d: Document, idx: Bson| {
            if let Some(f) = &self.index_field {
                set_dotted(&mut d, f, idx);
            }
            d
        };
        match get_dotted(&doc, &self.path) {
            Some(Bson::Array(items)) if !items.is_empty() => {
                // Take the array out once, so that each output copies the
                // rest of the document and not the whole array again.
                let mut base = doc;
                let taken =
                    get_dotted_mut(&mut base, &self.path).map(|v| std::mem::replace(v, Bson::Null));
                let Some(Bson::Array(items)) = taken else {
                    unreachable!("an array was read at this path just above");
                };
                let base_size = base
                    .iter()
                    .map(|(k, v)| k.len() as u64 + 2 + crate::limits::approx_size(v))
                    .sum::<u64>()
                    + 5;
                for (i, item) in items.into_iter().enumerate() {
                    crate::limits::checkpoint()?;
                    held.add(base_size + crate::limits::approx_size(&item))?;
                    let mut d = base.clone();
                    set_dotted(&mut d, &self.path, item);
                    out.push(with_index(d, Bson::Int64(i as i64)));
                }
            }
            Some(Bson::Array(_)) => {
                if self.preserve {
                    let mut d = doc;
                    remove_dotted(&mut d, &self.path);
                    out.push(with_index(d, Bson::Null));
                }
            }
            None | Some(Bson::Null) | Some(Bson::Undefined) => {
                if self.preserve {
                    out.push(with_index(doc, Bson::Null));
                }
            }
            Some(_) => out.push(with_index(doc, Bson::Null)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use bson::{Bson, Document, RawDocumentBuf, doc};
    use proptest::prelude::*;

    use super::Projection;
    use crate::catalog::to_document;
    use crate::expr::Vars;

    fn value() -> impl Strategy<Value = Bson> {
        let leaf = prop_oneof![
            Just(Bson::Null),
            any::<i32>().prop_map(Bson::Int32),
            "[a-z]{0,6}".prop_map(Bson::String),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
                proptest::collection::vec(("[ab]", inner), 0..3)
                    .prop_map(|kv| Bson::Document(kv.into_iter().collect())),
            ]
        })
    }

    /// A stored record written element by element, so that a name may
    /// repeat (a document decoded from it keeps one of each).
    fn record() -> impl Strategy<Value = RawDocumentBuf> {
        proptest::collection::vec(
            (
                prop_oneof![Just("_id"), Just("a"), Just("b"), Just("c")],
                value(),
            ),
            0..6,
        )
        .prop_map(|elements| {
            let mut raw = RawDocumentBuf::new();
            for (k, v) in elements {
                let v = bson::RawBson::try_from(v).expect("a value of the strategy");
                raw.append(k, v);
            }
            raw
        })
    }

    /// Projections a record's bytes can answer.
    fn raw_spec() -> impl Strategy<Value = Document> {
        prop_oneof![
            Just(doc! {"_id": 0, "s": {"$bsonSize": "$$ROOT"}}),
            Just(doc! {"a": 1, "b": true}),
            Just(doc! {"_id": 0, "c": 1, "x": "$b", "k": {"$literal": 5}, "t": "text"}),
            Just(doc! {"b": 1, "_id": 1, "n": "$a", "s": {"$bsonSize": "$$ROOT"}}),
            Just(doc! {"c": 1, "q": "$missing", "a": 1.0}),
            Just(doc! {"_id": 1}),
        ]
    }

    proptest! {
        /// The raw projection returns what the decoded `$project` returns
        /// for the same record, except that the size is the stored
        /// bytes' (mongod's `$bsonSize` of `$$ROOT`), which differs from
        /// the decoded document's only when a name repeats.
        #[test]
        fn raw_projection_matches_the_decoded_project(raw in record(), spec in raw_spec()) {
            let projection = Projection::parse(&spec).expect("a valid projection");
            let plan = projection.raw_plan().expect("answerable from bytes");
            let decoded = to_document(&raw).expect("a well-formed record");
            let mut expected = projection.apply(&decoded, &Vars::default()).expect("projects");
            if expected.contains_key("s") {
                expected.insert("s", raw.as_bytes().len() as i32);
            }
            let got = plan.apply(&raw).expect("projects");
            prop_assert_eq!(
                got.iter().collect::<Vec<_>>(),
                expected.iter().collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn the_size_is_the_stored_documents() {
        let raw = bson::rawdoc! {"_id": 1, "a": "xyz"};
        let decoded = to_document(&raw).expect("a well-formed record");
        let spec = doc! {"_id": 0, "s": {"$bsonSize": "$$ROOT"}};
        let plan = Projection::parse(&spec).unwrap().raw_plan().unwrap();
        let n = raw.as_bytes().len() as i32;
        assert_eq!(n, crate::value::bson_size(&decoded) as i32);
        assert_eq!(plan.apply(&raw).unwrap(), doc! {"s": n});
    }

    #[test]
    fn projections_that_need_the_decoded_document_have_no_raw_plan() {
        for spec in [
            doc! {"a.b": 1},
            doc! {"a": {"b": 1}},
            doc! {"a": 0},
            doc! {"x": {"$add": [1, 2]}},
            doc! {"x": "$a.b"},
            doc! {"s": {"$bsonSize": "$a"}},
            doc! {"s": {"$bsonSize": "$$CURRENT"}},
        ] {
            let projection = Projection::parse(&spec).unwrap();
            assert!(projection.raw_plan().is_none(), "{spec}");
        }
    }
}
