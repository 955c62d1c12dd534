//! The update tree: every operator path of an update document merged into
//! one tree of field names, as mongod builds it. Building the tree finds
//! conflicting paths (`{$set: {a: 1}, $inc: {"a.b": 1}}`); walking it applies
//! the leaves in mongod's order (field names lexicographically, numeric names
//! numerically) and expands the positional `$`, `$[]` and `$[<id>]`.

use std::cmp::Ordering;

use bson::Bson;

use super::Env;
use super::display;
use super::modifier::Op;
use crate::error::{EngineError, ErrorCode, Result};

/// mongod's cap on how far a numeric path may pad an array with nulls.
const MAX_PADDING: usize = 1_500_000;

/// A node of the update tree.
#[derive(Debug, Clone)]
pub enum Node {
    Leaf(Op),
    Object(ObjectNode),
    Array(ArrayNode),
}

/// Children addressed by field name (or array index), plus the positional
/// `$` child.
#[derive(Debug, Clone, Default)]
pub struct ObjectNode {
    pub children: Vec<(String, Node)>,
    pub positional: Option<Box<Node>>,
}

/// Children applied to array elements: `$[]` and `$[<id>]`.
#[derive(Debug, Clone, Default)]
pub struct ArrayNode {
    pub all: Option<Box<Node>>,
    pub filtered: Vec<(String, Node)>,
}

/// One component of an update path.
#[derive(Debug, Clone, PartialEq)]
pub enum Part<'a> {
    Field(&'a str),
    Positional,
    All,
    Filtered(&'a str),
}

impl<'a> Part<'a> {
    pub fn of(s: &'a str) -> Part<'a> {
        if s == "$" {
            Part::Positional
        } else if s == "$[]" {
            Part::All
        } else if let Some(id) = s.strip_prefix("$[").and_then(|r| r.strip_suffix(']')) {
            Part::Filtered(id)
        } else {
            Part::Field(s)
        }
    }

    fn is_array_part(&self) -> bool {
        matches!(self, Part::All | Part::Filtered(_))
    }
}

/// mongod's order of sibling fields: numeric names numerically, before or
/// after others by plain string comparison.
pub fn field_order(a: &str, b: &str) -> Ordering {
    match (array_index(a), array_index(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

/// A path component that addresses an array element: digits without a
/// leading zero.
pub fn array_index(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

fn conflict(full: &str, at: &str) -> EngineError {
    EngineError::new(
        ErrorCode::CONFLICTING_UPDATE_OPERATORS,
        format!("Updating the path '{full}' would create a conflict at '{at}'"),
    )
}

impl ObjectNode {
    /// Insert `leaf` at `parts` (the components of `full`).
    pub fn insert(&mut self, parts: &[&str], full: &str, leaf: Op) -> Result<()> {
        insert_object(self, parts, 0, full, &leaf)
    }

    /// Sort children into application order, recursively.
    pub fn finish(&mut self) {
        self.children.sort_by(|a, b| field_order(&a.0, &b.0));
        for (_, c) in &mut self.children {
            c.finish();
        }
        if let Some(p) = &mut self.positional {
            p.finish();
        }
    }

    fn child(&self, name: &str) -> Option<&Node> {
        self.children
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
    }

    fn creating_child(&self, is_insert: bool) -> Option<&str> {
        self.children
            .iter()
            .find(|(_, c)| c.creates(is_insert))
            .map(|(n, _)| n.as_str())
            .or_else(|| {
                self.positional
                    .as_ref()
                    .filter(|p| p.creates(is_insert))
                    .map(|_| "$")
            })
    }
}

fn insert_object(
    o: &mut ObjectNode,
    parts: &[&str],
    i: usize,
    full: &str,
    leaf: &Op,
) -> Result<()> {
    let (last, want_array) = shape(parts, i);
    let slot = match Part::of(parts[i]) {
        Part::Field(name) => match o.children.iter().position(|(n, _)| n == name) {
            Some(at) => &mut o.children[at].1,
            None => {
                o.children
                    .push((name.to_string(), fresh(last, want_array, leaf)));
                let at = o.children.len() - 1;
                return continue_fresh(&mut o.children[at].1, parts, i, full, leaf);
            }
        },
        Part::Positional => match &mut o.positional {
            Some(b) => b.as_mut(),
            None => {
                let b = o.positional.insert(Box::new(fresh(last, want_array, leaf)));
                return continue_fresh(b, parts, i, full, leaf);
            }
        },
        _ => return Err(conflict(full, &parts[..=i].join("."))),
    };
    descend(slot, parts, i, full, leaf)
}

fn insert_array(a: &mut ArrayNode, parts: &[&str], i: usize, full: &str, leaf: &Op) -> Result<()> {
    let (last, want_array) = shape(parts, i);
    let slot = match Part::of(parts[i]) {
        Part::All => match &mut a.all {
            Some(b) => b.as_mut(),
            None => {
                let b = a.all.insert(Box::new(fresh(last, want_array, leaf)));
                return continue_fresh(b, parts, i, full, leaf);
            }
        },
        Part::Filtered(id) => match a.filtered.iter().position(|(n, _)| n == id) {
            Some(at) => &mut a.filtered[at].1,
            None => {
                a.filtered
                    .push((id.to_string(), fresh(last, want_array, leaf)));
                let at = a.filtered.len() - 1;
                return continue_fresh(&mut a.filtered[at].1, parts, i, full, leaf);
            }
        },
        _ => return Err(conflict(full, &parts[..=i].join("."))),
    };
    descend(slot, parts, i, full, leaf)
}

/// (is `parts[i]` the last component, must its node hold array children?)
fn shape(parts: &[&str], i: usize) -> (bool, bool) {
    let last = i + 1 == parts.len();
    let want_array = !last && Part::of(parts[i + 1]).is_array_part();
    (last, want_array)
}

/// A node just created for `parts[i]`: done if it is the leaf, otherwise
/// keep inserting below it.
fn continue_fresh(node: &mut Node, parts: &[&str], i: usize, full: &str, leaf: &Op) -> Result<()> {
    if i + 1 == parts.len() {
        return Ok(());
    }
    descend(node, parts, i, full, leaf)
}

/// Continue below the node of `parts[i]`, which must be an inner node of
/// the kind the next component needs.
fn descend(node: &mut Node, parts: &[&str], i: usize, full: &str, leaf: &Op) -> Result<()> {
    let (last, want_array) = shape(parts, i);
    if last {
        return Err(conflict(full, &parts[..=i].join(".")));
    }
    match node {
        Node::Object(o) if !want_array => insert_object(o, parts, i + 1, full, leaf),
        Node::Array(a) if want_array => insert_array(a, parts, i + 1, full, leaf),
        _ => Err(conflict(full, &parts[..=i].join("."))),
    }
}

fn fresh(last: bool, want_array: bool, leaf: &Op) -> Node {
    if last {
        Node::Leaf(leaf.clone())
    } else if want_array {
        Node::Array(ArrayNode::default())
    } else {
        Node::Object(ObjectNode::default())
    }
}

impl Node {
    fn finish(&mut self) {
        match self {
            Node::Leaf(_) => {}
            Node::Object(o) => o.finish(),
            Node::Array(a) => {
                if let Some(x) = &mut a.all {
                    x.finish();
                }
                for (_, c) in &mut a.filtered {
                    c.finish();
                }
            }
        }
    }

    /// Whether applying this subtree where its path is missing creates
    /// something (and so must report a path blocked by a scalar).
    fn creates(&self, is_insert: bool) -> bool {
        match self {
            Node::Leaf(op) => op.creates(is_insert),
            Node::Object(o) => o.creating_child(is_insert).is_some(),
            Node::Array(_) => true,
        }
    }

    /// Combine two subtrees that land on the same element at apply time
    /// (`a.$[].b` with `a.0.c`); two leaves on one path conflict.
    fn merge(&self, other: &Node, path: &str) -> Result<Node> {
        let clash = || {
            EngineError::new(
                ErrorCode::CONFLICTING_UPDATE_OPERATORS,
                format!("Update created a conflict at '{path}'"),
            )
        };
        match (self, other) {
            (Node::Object(a), Node::Object(b)) => {
                let mut out = a.clone();
                for (name, child) in &b.children {
                    match out.children.iter_mut().find(|(n, _)| n == name) {
                        Some((_, mine)) => *mine = mine.merge(child, &format!("{path}.{name}"))?,
                        None => out.children.push((name.clone(), child.clone())),
                    }
                }
                out.positional = match (&a.positional, &b.positional) {
                    (Some(x), Some(y)) => Some(Box::new(x.merge(y, &format!("{path}.$"))?)),
                    (x, y) => x.clone().or_else(|| y.clone()),
                };
                out.children.sort_by(|p, q| field_order(&p.0, &q.0));
                Ok(Node::Object(out))
            }
            (Node::Array(a), Node::Array(b)) => {
                let mut out = a.clone();
                out.all = match (&a.all, &b.all) {
                    (Some(x), Some(y)) => Some(Box::new(x.merge(y, &format!("{path}.$[]"))?)),
                    (x, y) => x.clone().or_else(|| y.clone()),
                };
                for (id, child) in &b.filtered {
                    match out.filtered.iter_mut().find(|(n, _)| n == id) {
                        Some((_, mine)) => *mine = mine.merge(child, &format!("{path}.$[{id}]"))?,
                        None => out.filtered.push((id.clone(), child.clone())),
                    }
                }
                Ok(Node::Array(out))
            }
            _ => Err(clash()),
        }
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn not_viable(name: &str, parent_name: &str, parent: &Bson) -> EngineError {
    EngineError::new(
        ErrorCode::PATH_NOT_VIABLE,
        format!(
            "Cannot create field '{name}' in element {{{}}}",
            display::element(parent_name, parent)
        ),
    )
}

/// Apply an object node to `target` (a document or array) reached by
/// `path` (empty at the root).
pub fn apply_object(
    node: &ObjectNode,
    target: &mut Bson,
    path: &str,
    env: &Env<'_>,
) -> Result<bool> {
    let merged;
    let children: &[(String, Node)] = match &node.positional {
        None => &node.children,
        Some(pos) => {
            let index = env.ctx.array_position.ok_or_else(|| {
                EngineError::bad_value(
                    "The positional operator did not find the match needed from the query.",
                )
            })?;
            let name = index.to_string();
            let mut list = node.children.clone();
            match list.iter_mut().find(|(n, _)| *n == name) {
                Some((_, c)) => *c = c.merge(pos, &join(path, &name))?,
                None => list.push((name, (**pos).clone())),
            }
            list.sort_by(|a, b| field_order(&a.0, &b.0));
            merged = list;
            &merged
        }
    };
    let mut changed = false;
    for (name, child) in children {
        let child_path = join(path, name);
        match target {
            Bson::Document(d) => {
                if matches!(child, Node::Leaf(Op::Unset)) {
                    changed |= d.remove(name).is_some();
                    continue;
                }
                match d.get_mut(name) {
                    Some(v) => changed |= apply_node(child, v, name, &child_path, env)?,
                    None => {
                        if let Some(v) = create(child, &child_path, env)? {
                            d.insert(name.clone(), v);
                            changed = true;
                        }
                    }
                }
            }
            Bson::Array(arr) => {
                let Some(i) = array_index(name) else {
                    if child.creates(env.ctx.is_insert) {
                        let parent_name = path.rsplit('.').next().unwrap_or(path);
                        return Err(not_viable(name, parent_name, target));
                    }
                    continue;
                };
                changed |= apply_at_index(child, arr, i, &child_path, env)?;
            }
            _ => return Ok(changed),
        }
    }
    Ok(changed)
}

fn apply_at_index(
    child: &Node,
    arr: &mut Vec<Bson>,
    i: usize,
    path: &str,
    env: &Env<'_>,
) -> Result<bool> {
    let name = i.to_string();
    if i < arr.len() {
        if matches!(child, Node::Leaf(Op::Unset)) {
            // $unset on an array element leaves a null hole, as mongod does.
            let was_null = matches!(arr[i], Bson::Null);
            arr[i] = Bson::Null;
            return Ok(!was_null);
        }
        return apply_node(child, &mut arr[i], &name, path, env);
    }
    let Some(v) = create(child, path, env)? else {
        return Ok(false);
    };
    if i - arr.len() > MAX_PADDING {
        return Err(EngineError::bad_value(format!(
            "can't backfill array to larger than {MAX_PADDING} elements"
        )));
    }
    arr.resize(i, Bson::Null);
    arr.push(v);
    Ok(true)
}

/// Apply `node` to the existing value `v` of the field `name`.
fn apply_node(node: &Node, v: &mut Bson, name: &str, path: &str, env: &Env<'_>) -> Result<bool> {
    match node {
        Node::Leaf(op) => op.on_existing(v, name, path, env),
        Node::Object(o) => match v {
            Bson::Document(_) | Bson::Array(_) => apply_object(o, v, path, env),
            _ => match o.creating_child(env.ctx.is_insert) {
                // An array update below a scalar: mongod reports the path
                // that had to exist.
                Some(child) if matches!(o.child(child), Some(Node::Array(_))) => {
                    Err(EngineError::bad_value(format!(
                        "The path '{}' must exist in the document in order to apply array updates.",
                        join(path, child)
                    )))
                }
                Some(child) => Err(not_viable(child, name, v)),
                None => Ok(false),
            },
        },
        Node::Array(a) => match v {
            Bson::Array(arr) => apply_array(a, arr, path, env),
            other => Err(EngineError::bad_value(format!(
                "Cannot apply array updates to non-array element {}",
                display::element(name, other)
            ))),
        },
    }
}

fn apply_array(node: &ArrayNode, arr: &mut Vec<Bson>, path: &str, env: &Env<'_>) -> Result<bool> {
    let mut changed = false;
    for i in 0..arr.len() {
        let mut hits: Vec<&Node> = Vec::new();
        if let Some(all) = &node.all {
            hits.push(all);
        }
        for (id, child) in &node.filtered {
            if env.element_matches(id, &arr[i])? {
                hits.push(child);
            }
        }
        let elem_path = join(path, &i.to_string());
        let owned;
        let node = match hits.as_slice() {
            [] => continue,
            [one] => *one,
            [first, rest @ ..] => {
                let mut acc = (*first).clone();
                for n in rest {
                    acc = acc.merge(n, &elem_path)?;
                }
                owned = acc;
                &owned
            }
        };
        changed |= apply_at_index(node, arr, i, &elem_path, env)?;
    }
    Ok(changed)
}

/// The value to create for `node` where its path is missing.
fn create(node: &Node, path: &str, env: &Env<'_>) -> Result<Option<Bson>> {
    match node {
        Node::Leaf(op) => op.on_missing(env, path),
        Node::Object(o) => {
            let mut fresh = Bson::Document(bson::Document::new());
            let changed = apply_object(o, &mut fresh, path, env)?;
            Ok(changed.then_some(fresh))
        }
        Node::Array(_) => Err(EngineError::bad_value(format!(
            "The path '{path}' must exist in the document in order to apply array updates."
        ))),
    }
}
