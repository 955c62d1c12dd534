//! Stages that reshape one document at a time: `$project`, `$unset`,
//! `$addFields`/`$set` and `$unwind`.

use bson::{Bson, Document};

use super::{get_dotted, get_dotted_mut, remove_dotted, set_dotted};
use crate::engine::error::Result;
use crate::engine::expr::{Expr, Vars, err};
use crate::engine::value;

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
    crate::engine::limits::check_field_path(name)?;
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
        crate::engine::limits::check_output_depth(&out)?;
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
        crate::engine::limits::check_output_depth(&out)?;
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
        crate::engine::limits::check_output_depth(&doc)?;
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

    pub(super) fn apply(&self, doc: Document, out: &mut Vec<Document>) {
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
                for (i, item) in items.into_iter().enumerate() {
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
    }
}
