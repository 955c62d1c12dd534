//! Updates: replacement documents, update operators (`$set`, `$push` with
//! modifiers, positional `$`, `$[]`, `$[<id>]` with arrayFilters, …) and
//! update pipelines, applied to one document at a time.
//!
//! An operator update is parsed once into a tree of paths (`update::tree`),
//! which is where mongod's parse-time errors come from (conflicting paths,
//! unknown operators, unused array filters). Applying walks that tree over
//! the document in mongod's order, so the resulting field order, no-op
//! detection and error messages match a real server.
//!
//! The caller (the write path) owns the checks that need the stored
//! document: that `_id` did not change, the document size, validation and
//! index maintenance.

mod arith;
pub(crate) mod display;
mod modifier;
mod seed;
mod tree;

use std::collections::HashMap;

use bson::{Bson, Document, doc};

use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::expr::Vars;
use super::filter::Filter;
use super::pipeline::{Pipeline, Source};

pub use seed::upsert_seed;

use modifier::Op;
use tree::{ObjectNode, Part};

/// What the update is applied in the context of.
#[derive(Debug, Clone)]
pub struct ApplyContext<'a> {
    /// The array index the query matched, for the positional `$`.
    pub array_position: Option<usize>,
    /// True when building an upserted document (`$setOnInsert` applies).
    pub is_insert: bool,
    /// For `$currentDate` and `$$NOW`.
    pub now: bson::DateTime,
    /// Variables for update pipelines (`let`).
    pub vars: &'a Vars,
}

/// The update operators mongod knows, in the order it documents them.
const OPERATORS: &[&str] = &[
    "$currentDate",
    "$inc",
    "$min",
    "$max",
    "$mul",
    "$rename",
    "$set",
    "$setOnInsert",
    "$unset",
    "$addToSet",
    "$pop",
    "$pull",
    "$push",
    "$pullAll",
    "$bit",
];

/// Stages an update pipeline may contain.
const PIPELINE_STAGES: &[&str] = &[
    "$addFields",
    "$set",
    "$project",
    "$unset",
    "$replaceRoot",
    "$replaceWith",
];

/// Aggregation stages that exist but are refused inside updates (others
/// are unknown stages altogether).
const OTHER_STAGES: &[&str] = &[
    "$match",
    "$group",
    "$sort",
    "$limit",
    "$skip",
    "$lookup",
    "$unwind",
    "$count",
    "$facet",
    "$bucket",
    "$bucketAuto",
    "$sortByCount",
    "$sample",
    "$out",
    "$merge",
    "$graphLookup",
    "$unionWith",
    "$densify",
    "$fill",
    "$setWindowFields",
    "$redact",
    "$geoNear",
    "$indexStats",
    "$collStats",
    "$documents",
    "$changeStream",
    "$search",
    "$currentOp",
    "$listSessions",
];

#[derive(Debug, Clone)]
enum Kind {
    Replacement(Document),
    Operators {
        root: ObjectNode,
        /// (from, to) of each `$rename`, in destination order.
        renames: Vec<(String, String)>,
        filters: HashMap<String, Filter>,
    },
    Pipeline(Vec<Document>),
}

/// A parsed update.
#[derive(Debug, Clone)]
pub struct Update {
    source: Bson,
    kind: Kind,
    collation: Option<Collation>,
}

/// What the apply walk needs besides the tree.
#[derive(Debug)]
pub(crate) struct Env<'a> {
    ctx: &'a ApplyContext<'a>,
    collation: Option<&'a Collation>,
    /// The document's `_id`, for error messages.
    id: Option<Bson>,
    /// Values moved by `$rename`, keyed by destination path.
    renamed: HashMap<String, Bson>,
    filters: &'a HashMap<String, Filter>,
}

impl Env<'_> {
    /// Does array element `elem` satisfy the array filter `id`?
    fn element_matches(&self, id: &str, elem: &Bson) -> Result<bool> {
        match self.filters.get(id) {
            Some(f) => f.matches(&doc! {id: elem.clone()}, self.ctx.vars),
            None => Ok(false),
        }
    }
}

/// The pipeline source of an update pipeline: updates may not read other
/// collections.
struct NoSource;

impl Source for NoSource {
    fn collection_docs(&self, _collection: &str) -> Result<Vec<Document>> {
        Ok(Vec::new())
    }
}

impl Update {
    /// Parse an update: a replacement document, an operator document or a
    /// pipeline (array). `array_filters` are the `arrayFilters` option.
    pub fn parse(
        update: &Bson,
        array_filters: &[Document],
        collation: Option<&Collation>,
    ) -> Result<Update> {
        let kind = match update {
            Bson::Array(stages) => {
                if !array_filters.is_empty() {
                    return Err(EngineError::failed_to_parse(
                        "arrayFilters may not be specified for pipeline-style updates",
                    ));
                }
                Kind::Pipeline(parse_pipeline(stages)?)
            }
            Bson::Document(d) => {
                let first_is_operator = d.keys().next().is_some_and(|k| k.starts_with('$'));
                if first_is_operator {
                    parse_operators(update, d, array_filters, collation)?
                } else {
                    parse_replacement(update, d, array_filters)?
                }
            }
            _ => {
                return Err(EngineError::failed_to_parse(
                    "Update argument must be either an object or an array",
                ));
            }
        };
        Ok(Update {
            source: update.clone(),
            kind,
            collation: collation.cloned(),
        })
    }

    /// The update as given.
    pub fn source(&self) -> &Bson {
        &self.source
    }

    /// The top-level fields this update removes, when removing them is all
    /// it does (`$unset` of top-level fields other than `_id`): such an
    /// update can be applied to a record's bytes by leaving those elements
    /// out ([`crate::codec::without_fields`]).
    pub fn unset_only(&self) -> Option<Vec<&str>> {
        let Kind::Operators { root, renames, .. } = &self.kind else {
            return None;
        };
        if !renames.is_empty() || root.positional.is_some() {
            return None;
        }
        root.children
            .iter()
            .map(|(name, node)| match node {
                tree::Node::Leaf(modifier::Op::Unset) if name != "_id" => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Whether this is a replacement document.
    pub fn is_replacement(&self) -> bool {
        matches!(self.kind, Kind::Replacement(_))
    }

    /// Whether this is an update pipeline.
    pub fn is_pipeline(&self) -> bool {
        matches!(self.kind, Kind::Pipeline(_))
    }

    /// The document an upsert with this update starts from: the filter's
    /// equalities for operator updates and pipelines, only its `_id` for a
    /// replacement (as mongod does).
    pub fn upsert_seed(&self, filter: &Document) -> Result<Document> {
        if self.is_replacement() {
            seed::id_seed(filter)
        } else {
            seed::upsert_seed(filter)
        }
    }

    /// Apply to `doc` in place; returns whether the document changed. On
    /// error `doc` is left as it was.
    ///
    /// A replacement or pipeline result without `_id` keeps the original's
    /// `_id` (first, as mongod stores it). Whether `_id` was *changed* is for
    /// the caller to check (ImmutableField, code 66), as are size limits.
    pub fn apply(&self, doc: &mut Document, ctx: &ApplyContext<'_>) -> Result<bool> {
        match &self.kind {
            Kind::Replacement(replacement) => Ok(replace(doc, replacement.clone())),
            Kind::Pipeline(stages) => {
                let pipeline = Pipeline::parse(stages)?;
                let mut out = pipeline.run(vec![doc.clone()], &NoSource, ctx.vars)?;
                if out.len() != 1 {
                    return Err(EngineError::bad_value(
                        "An update pipeline must produce exactly one document",
                    ));
                }
                let result = out.remove(0);
                Ok(replace(doc, result))
            }
            Kind::Operators {
                root,
                renames,
                filters,
            } => {
                let mut env = Env {
                    ctx,
                    collation: self.collation.as_ref(),
                    id: doc.get("_id").cloned(),
                    renamed: HashMap::new(),
                    filters,
                };
                let mut work = Bson::Document(doc.clone());
                let mut changed = false;
                for (from, to) in renames {
                    changed |= take_rename_source(&mut work, from, to, &mut env)?;
                }
                changed |= tree::apply_object(root, &mut work, "", &env)?;
                if let Bson::Document(d) = work {
                    *doc = d;
                }
                Ok(changed)
            }
        }
    }
}

/// Replace `doc` by `new`, keeping the original `_id` when `new` has none.
fn replace(doc: &mut Document, new: Document) -> bool {
    let mut next = Document::new();
    if !new.contains_key("_id")
        && let Some(id) = doc.get("_id")
    {
        next.insert("_id", id.clone());
    }
    next.extend(new);
    let changed = !modifier::documents_identical(doc, &next);
    *doc = next;
    changed
}

fn parse_replacement(update: &Bson, d: &Document, array_filters: &[Document]) -> Result<Kind> {
    for key in d.keys() {
        if key.starts_with('$') {
            return Err(EngineError::new(
                ErrorCode::DOLLAR_PREFIXED_FIELD_NAME,
                format!(
                    "The dollar ($) prefixed field '{key}' in '{key}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith."
                ),
            ));
        }
    }
    // Array filters are never used by a replacement.
    if let Some(f) = array_filters.first() {
        let id = filter_identifier(f)?;
        return Err(EngineError::failed_to_parse(format!(
            "The array filter for identifier '{id}' was not used in the update {}",
            display::value(update)
        )));
    }
    Ok(Kind::Replacement(d.clone()))
}

fn parse_pipeline(stages: &[Bson]) -> Result<Vec<Document>> {
    let mut out = Vec::with_capacity(stages.len());
    for stage in stages {
        let Bson::Document(s) = stage else {
            return Err(EngineError::type_mismatch(
                "Each element of the 'pipeline' array must be an object",
            ));
        };
        let name = s.keys().next().map(String::as_str).unwrap_or("");
        if s.len() != 1 {
            return Err(EngineError::new(
                ErrorCode(40323),
                "A pipeline stage specification object must contain exactly one field.",
            ));
        }
        if !PIPELINE_STAGES.contains(&name) {
            if OTHER_STAGES.contains(&name) {
                return Err(EngineError::new(
                    ErrorCode::INVALID_OPTIONS,
                    format!("{name} is not allowed to be used within an update"),
                ));
            }
            return Err(EngineError::new(
                ErrorCode::UNRECOGNIZED_STAGE,
                format!("Unrecognized pipeline stage name: '{name}'"),
            ));
        }
        out.push(s.clone());
    }
    Ok(out)
}

/// The identifier an array filter's top-level fields start with (looking
/// inside top-level `$and`/`$or`/`$nor`).
fn filter_identifier(f: &Document) -> Result<String> {
    fn collect(f: &Document, out: &mut Vec<String>) {
        for (k, v) in f {
            if matches!(k.as_str(), "$and" | "$or" | "$nor") {
                if let Bson::Array(items) = v {
                    for item in items {
                        if let Bson::Document(d) = item {
                            collect(d, out);
                        }
                    }
                }
            } else if k.starts_with('$') {
                // $expr, $comment, …: no field name.
            } else {
                out.push(k.split('.').next().unwrap_or("").to_string());
            }
        }
    }
    let mut ids = Vec::new();
    collect(f, &mut ids);
    let Some(first) = ids.first().cloned() else {
        return Err(EngineError::failed_to_parse(
            "Cannot use an expression without a top-level field name in arrayFilters",
        ));
    };
    if let Some(other) = ids.iter().find(|i| **i != first) {
        return Err(EngineError::failed_to_parse(format!(
            "Error parsing array filter :: caused by :: Expected a single top-level field name, found '{first}' and '{other}'"
        )));
    }
    let mut chars = first.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_alphanumeric());
    if !valid {
        return Err(EngineError::bad_value(format!(
            "Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '{first}'"
        )));
    }
    Ok(first)
}

fn parse_array_filters(
    array_filters: &[Document],
    collation: Option<&Collation>,
) -> Result<(Vec<String>, HashMap<String, Filter>)> {
    let mut order = Vec::new();
    let mut filters = HashMap::new();
    for f in array_filters {
        let id = filter_identifier(f)?;
        if filters.contains_key(&id) {
            return Err(EngineError::failed_to_parse(format!(
                "Found multiple array filters with the same top-level field name {id}"
            )));
        }
        filters.insert(id.clone(), Filter::parse(f, collation)?);
        order.push(id);
    }
    Ok((order, filters))
}

/// Check an update path's components; returns them.
fn split_path(path: &str) -> Result<Vec<&str>> {
    if path.is_empty() {
        return Err(EngineError::new(
            ErrorCode::EMPTY_FIELD_NAME,
            "An empty update path is not valid.",
        ));
    }
    super::limits::check_update_path(path)?;
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(EngineError::new(
            ErrorCode::EMPTY_FIELD_NAME,
            format!("The update path '{path}' contains an empty field name, which is not allowed."),
        ));
    }
    let positional = parts.iter().filter(|p| **p == "$").count();
    if positional > 1 {
        return Err(EngineError::bad_value(format!(
            "Too many positional (i.e. '$') elements found in path '{path}'"
        )));
    }
    match Part::of(parts[0]) {
        Part::Positional => {
            return Err(EngineError::bad_value(format!(
                "Cannot have positional (i.e. '$') element in the first position in path '{path}'"
            )));
        }
        Part::All | Part::Filtered(_) => {
            return Err(EngineError::bad_value(format!(
                "Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '{path}'"
            )));
        }
        Part::Field(_) => {}
    }
    for p in &parts {
        if let Part::Field(name) = Part::of(p)
            && name.starts_with('$')
        {
            return Err(EngineError::new(
                ErrorCode::DOLLAR_PREFIXED_FIELD_NAME,
                format!(
                    "The dollar ($) prefixed field '{name}' in '{path}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith."
                ),
            ));
        }
    }
    Ok(parts)
}

fn parse_operators(
    update: &Bson,
    d: &Document,
    array_filters: &[Document],
    collation: Option<&Collation>,
) -> Result<Kind> {
    let (filter_order, filters) = parse_array_filters(array_filters, collation)?;
    let mut root = ObjectNode::default();
    let mut renames = Vec::new();
    let mut used_ids: Vec<String> = Vec::new();
    for (operator, spec) in d {
        if !OPERATORS.contains(&operator.as_str()) {
            return Err(modifier::unknown_modifier(operator));
        }
        let Bson::Document(fields) = spec else {
            return Err(EngineError::failed_to_parse(format!(
                "Modifiers operate on fields but we found type {} instead. For example: {{$mod: {{<field>: ...}}}} not {{{}}}",
                crate::value::type_alias(spec),
                display::element(operator, spec)
            )));
        };
        for (path, arg) in fields {
            let parts = split_path(path)?;
            for p in &parts {
                if let Part::Filtered(id) = Part::of(p) {
                    if !filters.contains_key(id) {
                        return Err(EngineError::bad_value(format!(
                            "No array filter found for identifier '{id}' in path '{path}'"
                        )));
                    }
                    used_ids.push(id.to_string());
                }
            }
            if operator == "$rename" {
                let to = parse_rename(path, arg)?;
                let to_parts = split_path(&to)?;
                root.insert(&to_parts, &to, Op::RenameTo)?;
                root.insert(&parts, path, Op::RenameFrom)?;
                renames.push((path.clone(), to));
                continue;
            }
            let last = parts.last().copied().unwrap_or("");
            let op = Op::parse(operator, last, arg, collation)?;
            root.insert(&parts, path, op)?;
        }
    }
    // mongod keeps array filters in a map: the first unused one in
    // identifier order is reported.
    let mut filter_order = filter_order;
    filter_order.sort();
    for id in filter_order {
        if !used_ids.contains(&id) {
            return Err(EngineError::failed_to_parse(format!(
                "The array filter for identifier '{id}' was not used in the update {}",
                display::value(update)
            )));
        }
    }
    root.finish();
    renames.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(Kind::Operators {
        root,
        renames,
        filters,
    })
}

/// Validate `{$rename: {from: to}}`; returns `to`.
fn parse_rename(from: &str, arg: &Bson) -> Result<String> {
    let Bson::String(to) = arg else {
        return Err(EngineError::bad_value(format!(
            "The 'to' field for $rename must be a string: {}",
            display::element(from, arg)
        )));
    };
    let dynamic = |p: &str| p.split('.').any(|c| !matches!(Part::of(c), Part::Field(_)));
    if dynamic(from) {
        return Err(EngineError::bad_value(format!(
            "The source field for $rename may not be dynamic: {from}"
        )));
    }
    if dynamic(to) {
        return Err(EngineError::bad_value(format!(
            "The destination field for $rename may not be dynamic: {to}"
        )));
    }
    if from == to {
        return Err(EngineError::bad_value(format!(
            "The source and target field for $rename must differ: {}",
            display::element(from, arg)
        )));
    }
    let prefix =
        |a: &str, b: &str| b.len() > a.len() && b.starts_with(a) && b.as_bytes()[a.len()] == b'.';
    if prefix(from, to) || prefix(to, from) {
        return Err(EngineError::bad_value(format!(
            "The source and target field for $rename must not be on the same path: {}",
            display::element(from, arg)
        )));
    }
    Ok(to.clone())
}

fn id_for_rename(env: &Env<'_>) -> String {
    match &env.id {
        Some(id) => display::element("_id", id),
        None => "no id".to_string(),
    }
}

/// First phase of `$rename`: check both paths, detach the source value and
/// keep it for the destination leaf. Returns whether something was removed.
fn take_rename_source(work: &mut Bson, from: &str, to: &str, env: &mut Env<'_>) -> Result<bool> {
    let parts: Vec<&str> = from.split('.').collect();
    // Find the source, noting any array on the way.
    let mut cur: &Bson = work;
    let mut through_array: Option<String> = None;
    let mut prev_name = "";
    for p in &parts {
        let next = match cur {
            Bson::Document(d) => d.get(*p),
            Bson::Array(a) => {
                if through_array.is_none() {
                    through_array = Some(prev_name.to_string());
                }
                tree::array_index(p).and_then(|i| a.get(i))
            }
            _ => None,
        };
        match next {
            Some(v) => cur = v,
            None => return Ok(false),
        }
        prev_name = p;
    }
    if let Some(array_name) = through_array {
        return Err(EngineError::bad_value(format!(
            "The source field cannot be an array element, '{from}' in doc with {} has an array field called '{array_name}'",
            id_for_rename(env)
        )));
    }
    // No array may stand on the destination path.
    let to_parts: Vec<&str> = to.split('.').collect();
    let mut cur: &Bson = work;
    for p in &to_parts[..to_parts.len().saturating_sub(1)] {
        let Bson::Document(d) = cur else { break };
        match d.get(*p) {
            Some(Bson::Array(_)) => {
                return Err(EngineError::bad_value(format!(
                    "The destination field cannot be an array element, '{to}' in doc with {} has an array field called '{p}'",
                    id_for_rename(env)
                )));
            }
            Some(v) => cur = v,
            None => break,
        }
    }
    // Detach the source: every step is a document, as checked above.
    let mut cur: &mut Bson = work;
    for p in &parts[..parts.len() - 1] {
        let Bson::Document(d) = cur else {
            return Ok(false);
        };
        match d.get_mut(*p) {
            Some(v) => cur = v,
            None => return Ok(false),
        }
    }
    let Bson::Document(d) = cur else {
        return Ok(false);
    };
    let Some(value) = d.remove(parts[parts.len() - 1]) else {
        return Ok(false);
    };
    env.renamed.insert(to.to_string(), value);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacement_upsert_seeds_only_id() {
        let u = Update::parse(&Bson::Document(doc! {"b": 2}), &[], None).unwrap();
        // Conflicting non-_id paths do not matter to a replacement.
        let seed = u.upsert_seed(&doc! {"a": 1, "a.x": 2, "_id": 5}).unwrap();
        assert_eq!(seed, doc! {"_id": 5});
        let u = Update::parse(&Bson::Document(doc! {"$set": {"b": 2}}), &[], None).unwrap();
        assert!(u.upsert_seed(&doc! {"a": 1, "a.x": 2}).is_err());
        assert!(!u.is_pipeline() && !u.is_replacement());
    }
}
