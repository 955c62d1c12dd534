//! Aggregation pipelines: parsing stages and running them over a stream of
//! documents. `$out` and `$merge` are not handled here: the engine splits
//! them off and performs the write itself.
//!
//! Each stage is parsed once into a typed [`Stage`] (so a malformed stage
//! fails before any document is read) and then applied to the whole batch
//! in turn. The stage families live in submodules: `shape` (reshaping one
//! document: `$project`, `$addFields`, `$unwind`, …), `group` (`$group`,
//! `$bucket`, `$sortByCount`, …) and `join` (reading other collections).

pub(crate) mod deps;
mod group;
mod join;
pub(crate) mod optimize;
mod shape;
mod spill;

use bson::{Bson, Document};
use rand::SeedableRng;
use rand::seq::SliceRandom;

use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::expr::{Expr, Vars, err};
use super::filter::Filter;
use super::sort::SortSpec;
use super::value;

/// What a pipeline may read besides its input: other collections of the same
/// database (`$lookup`, `$graphLookup`, `$unionWith`).
///
/// Object-safe: stages receive it as `&dyn Source`.
pub trait Source {
    /// Every document of `collection`, in record order (empty if absent).
    fn collection_docs(&self, collection: &str) -> Result<Vec<Document>>;

    /// The documents of `collection` whose value at the dotted `path` equals
    /// one of `values`, with the query language's semantics (an array field
    /// matches through its elements, a missing field matches null), in
    /// record order. `$lookup` and `$graphLookup` ask for their matches
    /// this way; the default scans `collection_docs`, and a catalog may
    /// override it to answer from an index.
    fn docs_matching_any(
        &self,
        collection: &str,
        path: &str,
        values: &[Bson],
        collation: Option<&Collation>,
    ) -> Result<Vec<Document>> {
        let parts: Vec<&str> = path.split('.').collect();
        Ok(self
            .collection_docs(collection)?
            .into_iter()
            .filter(|d| doc_matches_any(d, &parts, values, collation))
            .collect())
    }

    /// The results of `stages` run over `collection` (what `$unionWith`
    /// reads), when the source plans such reads itself (a catalog plans
    /// them as a top-level `aggregate`); `None` runs the stages over
    /// `collection_docs`.
    fn run_pipeline(
        &self,
        _collection: &str,
        _stages: &[Document],
        _vars: &Vars,
    ) -> Option<Result<Vec<Document>>> {
        None
    }
}

/// Whether the values at `parts` in `doc` (with query semantics) include
/// one of `values`.
pub(crate) fn doc_matches_any(
    doc: &Document,
    parts: &[&str],
    values: &[Bson],
    collation: Option<&Collation>,
) -> bool {
    find_path_values(doc, parts)
        .iter()
        .any(|v| values.iter().any(|w| value::values_equal(v, w, collation)))
}

/// The values a query sees at a dotted path: arrays are matched both as a
/// whole and through their elements, numeric parts index arrays, and a path
/// that leads nowhere yields null (which is how `{a: null}` matches a
/// missing field).
pub fn find_path_values(doc: &Document, parts: &[&str]) -> Vec<Bson> {
    let mut out = Vec::new();
    collect_values(&Bson::Document(doc.clone()), parts, &mut out);
    if out.is_empty() {
        out.push(Bson::Null);
    }
    out
}

fn collect_values(v: &Bson, parts: &[&str], out: &mut Vec<Bson>) {
    let Some((first, rest)) = parts.split_first() else {
        if let Bson::Array(items) = v {
            out.extend(items.iter().cloned());
        }
        out.push(v.clone());
        return;
    };
    match v {
        Bson::Document(d) => {
            if let Some(x) = d.get(*first) {
                collect_values(x, rest, out);
            }
        }
        Bson::Array(items) => {
            if let Ok(i) = first.parse::<usize>()
                && let Some(x) = items.get(i)
            {
                collect_values(x, rest, out);
            }
            for item in items {
                if let Bson::Document(_) = item {
                    collect_values(item, parts, out);
                }
            }
        }
        _ => {}
    }
}

/// The values at a dotted path with arrays expanded into their elements
/// (an array is never a value itself here): what `$lookup` joins on and
/// what `$graphLookup` follows. Empty when the path leads nowhere.
pub(crate) fn expanded_values(doc: &Document, parts: &[&str]) -> Vec<Bson> {
    fn walk(v: &Bson, parts: &[&str], out: &mut Vec<Bson>) {
        match (parts.split_first(), v) {
            (None, Bson::Array(items)) => out.extend(items.iter().cloned()),
            (None, other) => out.push(other.clone()),
            (Some((first, rest)), Bson::Document(d)) => {
                if let Some(x) = d.get(*first) {
                    walk(x, rest, out);
                }
            }
            (Some(_), Bson::Array(items)) => {
                for item in items {
                    if let Bson::Document(_) = item {
                        walk(item, parts, out);
                    }
                }
            }
            (Some(_), _) => {}
        }
    }
    let mut out = Vec::new();
    if let Some((first, rest)) = parts.split_first()
        && let Some(v) = doc.get(*first)
    {
        walk(v, rest, &mut out);
    }
    out
}

/// Read a dotted path without array traversal (as `$unwind` does).
pub fn get_dotted<'a>(doc: &'a Document, path: &[String]) -> Option<&'a Bson> {
    let (first, rest) = path.split_first()?;
    let v = doc.get(first)?;
    if rest.is_empty() {
        return Some(v);
    }
    match v {
        Bson::Document(d) => get_dotted(d, rest),
        _ => None,
    }
}

/// [`get_dotted`], for changing the value in place.
pub(crate) fn get_dotted_mut<'a>(doc: &'a mut Document, path: &[String]) -> Option<&'a mut Bson> {
    let (first, rest) = path.split_first()?;
    let v = doc.get_mut(first)?;
    if rest.is_empty() {
        return Some(v);
    }
    match v {
        Bson::Document(d) => get_dotted_mut(d, rest),
        _ => None,
    }
}

/// Write a dotted path, creating (or replacing non-documents with)
/// intermediate documents.
pub(crate) fn set_dotted(doc: &mut Document, path: &[String], value: Bson) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        doc.insert(first.clone(), value);
        return;
    }
    if !matches!(doc.get(first), Some(Bson::Document(_))) {
        doc.insert(first.clone(), Document::new());
    }
    if let Some(Bson::Document(sub)) = doc.get_mut(first) {
        set_dotted(sub, rest, value);
    }
}

/// Remove a dotted path (no array traversal).
pub(crate) fn remove_dotted(doc: &mut Document, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        doc.remove(first);
    } else if let Some(Bson::Document(sub)) = doc.get_mut(first) {
        remove_dotted(sub, rest);
    }
}

/// Where a pipeline is being parsed, which decides the error for stages
/// that may not appear there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Nesting {
    Top,
    Lookup,
    Facet,
    UnionWith,
}

/// One parsed stage.
#[derive(Debug, Clone)]
enum Stage {
    Match(Document, Filter),
    Project(shape::Projection),
    AddFields(shape::AddFields),
    ReplaceRoot(Expr, &'static str),
    Unwind(shape::Unwind),
    Group(group::Group),
    Sort(SortSpec),
    Skip(u64),
    Limit(u64),
    Count(String),
    SortByCount(Expr),
    Bucket(group::Bucket),
    BucketAuto(group::BucketAuto),
    Lookup(Box<join::Lookup>),
    GraphLookup(Box<join::GraphLookup>),
    UnionWith(Box<join::UnionWith>),
    Facet(Vec<(String, Pipeline)>),
    Sample(usize),
    Documents(Expr),
    Redact(Expr),
}

/// A parsed pipeline.
#[derive(Debug, Clone)]
pub struct Pipeline {
    stages: Vec<Document>,
    parsed: Vec<Stage>,
}

/// What running stages needs besides the documents.
pub(crate) struct Ctx<'a> {
    pub source: &'a dyn Source,
    pub vars: &'a Vars,
}

impl Ctx<'_> {
    fn collation(&self) -> Option<&Collation> {
        self.vars.collation()
    }
}

fn number_arg(v: &Bson) -> Option<i64> {
    if value::is_number(v) {
        value::as_i64(v)
    } else {
        None
    }
}

impl Pipeline {
    /// Parse a pipeline. An unknown stage fails with mongod's error
    /// (code 40324, "Unrecognized pipeline stage name: '$foo'").
    pub fn parse(stages: &[Document]) -> Result<Pipeline> {
        Self::parse_nested(stages, Nesting::Top)
    }

    pub(crate) fn parse_nested(stages: &[Document], nesting: Nesting) -> Result<Pipeline> {
        let mut parsed = Vec::with_capacity(stages.len());
        for (i, stage) in stages.iter().enumerate() {
            parsed.push(parse_stage(stage, i, stages.len(), nesting)?);
        }
        Ok(Pipeline {
            stages: stages.to_vec(),
            parsed,
        })
    }

    /// Parse a pipeline given as a BSON array (inside `$lookup`, `$facet`…).
    pub(crate) fn parse_value(v: &Bson, nesting: Nesting, what: &str) -> Result<Pipeline> {
        let Bson::Array(items) = v else {
            return Err(err(
                14,
                format!(
                    "'{what}' option must be an array, not {}",
                    value::type_alias(v)
                ),
            ));
        };
        let mut docs = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Bson::Document(d) => docs.push(d.clone()),
                other => {
                    return Err(err(
                        14,
                        format!(
                            "Each element of the '{what}' array must be an object, but found {}",
                            value::type_alias(other)
                        ),
                    ));
                }
            }
        }
        Self::parse_nested(&docs, nesting)
    }

    /// The stages as given.
    pub fn stages(&self) -> &[Document] {
        &self.stages
    }

    /// Run the pipeline over `input`.
    pub fn run(
        &self,
        input: Vec<Document>,
        source: &dyn Source,
        vars: &Vars,
    ) -> Result<Vec<Document>> {
        self.run_range(0..self.parsed.len(), input, source, vars)
    }

    /// Run only the stages in `range` (used to slip `$lookup`'s equality
    /// match in after a leading `$documents`).
    pub(crate) fn run_range(
        &self,
        range: std::ops::Range<usize>,
        input: Vec<Document>,
        source: &dyn Source,
        vars: &Vars,
    ) -> Result<Vec<Document>> {
        let ctx = Ctx { source, vars };
        let mut docs = input;
        let stages = self.parsed.get(range).unwrap_or_default();
        for (i, stage) in stages.iter().enumerate() {
            super::limits::check_now()?;
            // A `$sort` buffers its whole input (unless a `$limit` follows,
            // which mongod turns into a bounded top-k).
            if matches!(stage, Stage::Sort(_))
                && !matches!(stages.get(i + 1), Some(Stage::Limit(_)))
            {
                sort_memory_check(&docs)?;
            }
            docs = run_stage(stage, docs, &ctx)?;
        }
        Ok(docs)
    }

    /// Number of stages.
    pub(crate) fn len(&self) -> usize {
        self.parsed.len()
    }

    /// Run the stages over the few documents one input document became
    /// (a pipeline that [`Pipeline::streams`], fed per document): the
    /// running operation is checked by the cheap counted checkpoint, not
    /// the clock-and-socket check [`Pipeline::run`] makes before each stage.
    pub(crate) fn run_streaming(
        &self,
        input: Vec<Document>,
        source: &dyn Source,
        vars: &Vars,
    ) -> Result<Vec<Document>> {
        let ctx = Ctx { source, vars };
        let mut docs = input;
        for stage in &self.parsed {
            super::limits::checkpoint()?;
            docs = run_stage(stage, docs, &ctx)?;
        }
        Ok(docs)
    }

    /// Whether every stage passes documents on one at a time and reads no
    /// other collection (`$match`, `$project`, `$addFields`, `$unset`,
    /// `$replaceRoot`, `$unwind`), so that it can run per document.
    pub(crate) fn streams(&self) -> bool {
        self.parsed.iter().all(|s| {
            matches!(
                s,
                Stage::Match(..)
                    | Stage::Project(_)
                    | Stage::AddFields(_)
                    | Stage::ReplaceRoot(..)
                    | Stage::Unwind(_)
            )
        })
    }

    /// When this pipeline is one `$unionWith`, the collection it reads and
    /// its sub-pipeline's stages.
    pub(crate) fn union_with(&self) -> Option<(&str, &[Document])> {
        match self.parsed.as_slice() {
            [Stage::UnionWith(u)] => Some((u.coll(), u.stages())),
            _ => None,
        }
    }

    /// When this pipeline is one `$sort`, a buffer to feed it one document
    /// at a time, which holds each encoded ([`SortBuffer`]).
    pub(crate) fn sort_buffer(&self) -> Option<SortBuffer<'_>> {
        match self.parsed.as_slice() {
            [Stage::Sort(spec)] => Some(SortBuffer {
                spec,
                items: Vec::new(),
                memory: 0,
                limit: super::limits::SORT_MEMORY.get(),
                bounded: !super::limits::allow_disk_use(),
                fed: 0,
                total: 0,
                runs: spill::Runs::default(),
            }),
            _ => None,
        }
    }

    /// When this pipeline is one `$group`, that group as a sink to feed
    /// documents to one at a time, so that its input is never held.
    pub(crate) fn group_sink(&self) -> Option<group::GroupSink<'_>> {
        match self.parsed.as_slice() {
            [Stage::Group(g)] => Some(g.sink()),
            _ => None,
        }
    }

    /// When this pipeline is one `$project` that a record's bytes can
    /// answer, that projection ([`shape::RawProjection`]).
    pub(crate) fn raw_projection(&self) -> Option<shape::RawProjection> {
        match self.parsed.as_slice() {
            [Stage::Project(p)] => p.raw_plan(),
            _ => None,
        }
    }
}

fn parse_stage(stage: &Document, index: usize, total: usize, nesting: Nesting) -> Result<Stage> {
    if stage.len() != 1 {
        return Err(err(
            40323,
            "A pipeline stage specification object must contain exactly one field.",
        ));
    }
    let Some((name, spec)) = stage.iter().next() else {
        return Err(err(
            40323,
            "A pipeline stage specification object must contain exactly one field.",
        ));
    };
    let name = name.as_str();
    let spec_doc = || -> Result<&Document> {
        match spec {
            Bson::Document(d) => Ok(d),
            other => Err(err(
                match name {
                    "$match" => 15959,
                    "$project" => 15969,
                    "$addFields" | "$set" => 40272,
                    "$group" => 15947,
                    "$sort" => 15973,
                    "$lookup" => 9,
                    "$facet" => 15955,
                    "$bucket" => 40201,
                    "$graphLookup" => 40103,
                    "$replaceRoot" => 40229,
                    "$sample" => 28745,
                    _ => 9,
                },
                match name {
                    "$match" => "the match filter must be an expression in an object".to_string(),
                    "$project" => "$project specification must be an object".to_string(),
                    "$group" => "a group's fields must be specified in an object".to_string(),
                    "$sort" => "the $sort key specification must be an object".to_string(),
                    _ => format!(
                        "{name} argument must be an object, but found: {} of type {}",
                        other,
                        value::type_alias(other)
                    ),
                },
            )),
        }
    };
    Ok(match name {
        "$match" => {
            let d = spec_doc()?;
            Stage::Match(d.clone(), Filter::parse(d, None)?)
        }
        "$project" => Stage::Project(shape::Projection::parse(spec_doc()?)?),
        "$addFields" | "$set" => Stage::AddFields(shape::AddFields::parse(spec_doc()?, name)?),
        "$unset" => Stage::Project(shape::Projection::parse_unset(spec)?),
        "$replaceRoot" => {
            let d = spec_doc()?;
            let Some(root) = d.get("newRoot") else {
                return Err(err(
                    40231,
                    "no newRoot specified for the $replaceRoot stage",
                ));
            };
            if let Some(k) = d.keys().find(|k| *k != "newRoot") {
                return Err(err(
                    40230,
                    format!(
                        "unrecognized option to $replaceRoot stage: {k}, only valid option is 'newRoot'."
                    ),
                ));
            }
            Stage::ReplaceRoot(Expr::parse(root)?, "newRoot")
        }
        "$replaceWith" => Stage::ReplaceRoot(Expr::parse(spec)?, "replacement document"),
        "$unwind" => Stage::Unwind(shape::Unwind::parse(spec)?),
        "$group" => Stage::Group(group::Group::parse(spec_doc()?)?),
        "$sort" => {
            let d = spec_doc()?;
            if d.is_empty() {
                return Err(err(15976, "$sort stage must have at least one sort key"));
            }
            Stage::Sort(SortSpec::parse(d)?)
        }
        "$skip" => match number_arg(spec) {
            Some(n) if n >= 0 => Stage::Skip(n as u64),
            Some(n) => {
                return Err(err(
                    15956,
                    format!(
                        "invalid argument to $skip stage: Expected a non-negative number in: $skip: {n}"
                    ),
                ));
            }
            None => {
                return Err(err(
                    15972,
                    format!("invalid argument to $skip stage: Expected a number in: $skip: {spec}"),
                ));
            }
        },
        "$limit" => match number_arg(spec) {
            Some(n) if n > 0 => Stage::Limit(n as u64),
            Some(n) => {
                return Err(err(
                    15958,
                    format!(
                        "invalid argument to $limit stage: Expected a positive number in: $limit: {n}"
                    ),
                ));
            }
            None => {
                return Err(err(
                    15957,
                    format!(
                        "invalid argument to $limit stage: Expected a number in: $limit: {spec}"
                    ),
                ));
            }
        },
        "$count" => {
            let Bson::String(s) = spec else {
                return Err(err(40156, "the count field must be a non-empty string"));
            };
            if s.is_empty() {
                return Err(err(40157, "the count field must be a non-empty string"));
            }
            if s.starts_with('$') {
                return Err(err(40158, "the count field cannot be a $-prefixed path"));
            }
            if s.contains('.') {
                return Err(err(40160, "the count field cannot contain '.'"));
            }
            Stage::Count(s.clone())
        }
        "$sortByCount" => {
            let ok = match spec {
                Bson::String(s) => s.starts_with('$'),
                Bson::Document(d) => d.keys().next().is_some_and(|k| k.starts_with('$')),
                _ => false,
            };
            if !ok {
                return Err(err(
                    40148,
                    "the sortByCount field must be defined as a $-prefixed path or an expression",
                ));
            }
            Stage::SortByCount(Expr::parse(spec)?)
        }
        "$bucket" => Stage::Bucket(group::Bucket::parse(spec_doc()?)?),
        "$bucketAuto" => Stage::BucketAuto(group::BucketAuto::parse(spec_doc()?)?),
        "$lookup" => Stage::Lookup(Box::new(join::Lookup::parse(spec_doc()?)?)),
        "$graphLookup" => Stage::GraphLookup(Box::new(join::GraphLookup::parse(spec_doc()?)?)),
        "$unionWith" => Stage::UnionWith(Box::new(join::UnionWith::parse(spec)?)),
        "$facet" => {
            if nesting == Nesting::Facet {
                return Err(err(
                    40600,
                    "$facet is not allowed to be used within a $facet stage",
                ));
            }
            let d = spec_doc()?;
            if d.is_empty() {
                return Err(err(
                    40169,
                    "the $facet specification must be a non-empty object",
                ));
            }
            let mut facets = Vec::with_capacity(d.len());
            for (k, v) in d {
                if k.starts_with('$') || k.contains('.') {
                    return Err(err(
                        40174,
                        format!("FieldPath field names may not start with '$' or contain '.': {k}"),
                    ));
                }
                let p = Pipeline::parse_value(v, Nesting::Facet, k)?;
                if p.stages.is_empty() {
                    return Err(err(
                        40171,
                        format!("$facet pipeline '{k}' must not be empty"),
                    ));
                }
                facets.push((k.clone(), p));
            }
            Stage::Facet(facets)
        }
        "$sample" => {
            let d = spec_doc()?;
            match d.get("size").and_then(number_arg) {
                Some(n) if n >= 0 => Stage::Sample(n as usize),
                Some(_) => return Err(err(28747, "size argument to $sample must not be negative")),
                None => return Err(err(28749, "$sample stage must specify a size")),
            }
        }
        "$redact" => Stage::Redact(Expr::parse(spec)?),
        "$documents" => {
            if index != 0 {
                return Err(err(
                    40602,
                    "$documents is only valid as the first stage in a pipeline",
                ));
            }
            Stage::Documents(Expr::parse(spec)?)
        }
        "$out" | "$merge" => {
            let (code, msg) = match nesting {
                Nesting::Facet => (
                    40600,
                    format!("{name} is not allowed to be used within a $facet stage"),
                ),
                Nesting::Lookup => (
                    51047,
                    format!("{name} is not allowed within a $lookup's sub-pipeline"),
                ),
                Nesting::UnionWith => (
                    31441,
                    format!("{name} is not allowed within a $unionWith's sub-pipeline"),
                ),
                Nesting::Top if index + 1 == total => {
                    return Err(EngineError::not_implemented(format!(
                        "{name} outside the engine's write path"
                    )));
                }
                Nesting::Top => (
                    40601,
                    format!("{name} can only be the final stage in the pipeline"),
                ),
            };
            return Err(err(code, msg));
        }
        "$collStats" | "$indexStats" | "$currentOp" | "$listSessions" | "$planCacheStats" => {
            if index != 0 || nesting != Nesting::Top {
                return Err(err(
                    40602,
                    format!("{name} is only valid as the first stage in a pipeline"),
                ));
            }
            return Err(EngineError::not_implemented(format!(
                "{name} outside the engine's command path"
            )));
        }
        "$geoNear"
        | "$search"
        | "$searchMeta"
        | "$vectorSearch"
        | "$setWindowFields"
        | "$densify"
        | "$fill"
        | "$changeStream"
        | "$listSearchIndexes"
        | "$changeStreamSplitLargeEvent"
        | "$shardedDataDistribution"
        | "$listLocalSessions" => {
            return Err(EngineError::not_implemented(format!("the {name} stage")));
        }
        other => {
            return Err(EngineError::new(
                ErrorCode::UNRECOGNIZED_STAGE,
                format!("Unrecognized pipeline stage name: '{other}'"),
            ));
        }
    })
}

/// One document a [`SortBuffer`] holds, in one allocation: its BSON behind
/// its sort key ([`super::keystring::keyed`]).
type Sortable = Box<[u8]>;

/// A `$sort` fed its input one document at a time, as the `$cursor`
/// streams it: each document is held encoded (its BSON, a third to a fifth
/// of its decoded size) after its sort values encoded as an index key
/// ([`SortSpec::encoded_key`], whose byte order is the sort's order), and
/// handed on decoded one at a time once the input is exhausted. Its memory
/// is counted as [`sort_memory_check`] counts a held input, against the
/// same limit; past it, the sort stops with mongod's error when it may not
/// use the disk, and otherwise writes what it holds to disk as a sorted run
/// ([`spill::Runs`]) and merges the runs at the end, as mongod's sorter
/// does.
pub(crate) struct SortBuffer<'s> {
    spec: &'s SortSpec,
    items: Vec<Sortable>,
    /// What the documents held now count against the limit.
    memory: u64,
    limit: u64,
    bounded: bool,
    /// How many documents it was fed, and what they counted in all.
    fed: usize,
    total: u64,
    runs: spill::Runs,
}

/// What a finished [`SortBuffer`] did, for its explain entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SortStats {
    /// The documents sorted, in all (`totalDataSizeSortedBytesEstimate`).
    pub sorted_bytes: u64,
    /// Runs written to disk (`spills`).
    pub spills: u64,
    /// Bytes written to disk (`spilledDataStorageSize`).
    pub spilled_bytes: u64,
}

impl SortStats {
    /// A sort of `docs` held in memory, never spilled.
    pub(crate) fn in_memory(docs: &[Document]) -> SortStats {
        SortStats {
            sorted_bytes: docs.iter().map(sort_held_size).sum(),
            ..SortStats::default()
        }
    }
}

impl SortBuffer<'_> {
    /// Add one input document.
    pub(crate) fn add(&mut self, d: &Document, ctx: &Ctx<'_>) -> Result<()> {
        super::limits::checkpoint()?;
        let size = sort_held_size(d);
        self.total += size;
        self.memory += size;
        if self.bounded && self.memory > self.limit {
            return Err(super::limits::blocking_stage_too_big(&format!(
                "Sort exceeded memory limit of {} bytes, but did not opt in to external sorting.",
                self.limit
            )));
        }
        let key = self.spec.encoded_key(d, ctx.collation());
        let item = super::keystring::keyed(&key, |out| super::codec::encode_into(d, out))
            .map_err(|e| EngineError::bad_value(format!("invalid document: {e}")))?;
        self.items.push(item);
        self.fed += 1;
        if self.memory > self.limit {
            self.runs.spill(&mut self.items)?;
            self.memory = 0;
        }
        Ok(())
    }

    /// How many documents it was fed.
    pub(crate) fn len(&self) -> usize {
        self.fed
    }

    /// The documents in sort order (ties in input order, as the whole
    /// `$sort` orders them), each decoded as it is handed to `each`.
    pub(crate) fn finish_each(
        self,
        each: &mut dyn FnMut(Document) -> Result<()>,
    ) -> Result<SortStats> {
        let stats = SortStats {
            sorted_bytes: self.total,
            spills: self.runs.count() as u64,
            spilled_bytes: self.runs.written(),
        };
        let mut hand_on = |item: Sortable| -> Result<()> {
            super::limits::checkpoint()?;
            let bytes = super::keystring::payload_of(&item);
            // Bytes this buffer encoded: a failure here is the engine's.
            let raw = bson::RawDocument::from_bytes(bytes).map_err(|e| {
                EngineError::new(ErrorCode::INTERNAL_ERROR, format!("corrupt record: {e}"))
            })?;
            each(super::catalog::to_document(raw)?)
        };
        self.runs.merge(self.items, &mut hand_on)?;
        Ok(stats)
    }
}

/// What one document held by a `$sort` counts against its memory limit.
fn sort_held_size(d: &Document) -> u64 {
    d.iter()
        .map(|(k, v)| k.len() as u64 + 2 + super::limits::approx_size(v))
        .sum::<u64>()
        + 5
}

/// mongod's blocking-sort memory limit for an aggregate `$sort`.
fn sort_memory_check(docs: &[Document]) -> Result<()> {
    if super::limits::allow_disk_use() {
        return Ok(());
    }
    let limit = super::limits::SORT_MEMORY.get();
    let mut bytes = 0u64;
    for d in docs {
        super::limits::checkpoint()?;
        bytes += sort_held_size(d);
        if bytes > limit {
            return Err(super::limits::blocking_stage_too_big(&format!(
                "Sort exceeded memory limit of {limit} bytes, but did not opt in to external sorting."
            )));
        }
    }
    Ok(())
}

/// The output of a stage that nests its input deeper (`$group`'s `$push`,
/// `$lookup`'s `as`, `$facet`) must still fit in BSON's depth.
fn depth_checked(docs: Vec<Document>) -> Result<Vec<Document>> {
    for d in &docs {
        super::limits::check_output_depth(d)?;
    }
    Ok(docs)
}

fn run_stage(stage: &Stage, docs: Vec<Document>, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
    Ok(match stage {
        Stage::Match(spec, filter) => {
            let reparsed;
            let filter = match ctx.collation() {
                Some(c) => {
                    reparsed = Filter::parse(spec, Some(c))?;
                    &reparsed
                }
                None => filter,
            };
            let mut out = Vec::with_capacity(docs.len());
            for d in docs {
                super::limits::checkpoint()?;
                if filter.matches(&d, ctx.vars)? {
                    out.push(d);
                }
            }
            out
        }
        // Each input is let go once projected.
        Stage::Project(p) => docs
            .into_iter()
            .map(|d| super::limits::checkpoint().and_then(|()| p.apply(&d, ctx.vars)))
            .collect::<Result<_>>()?,
        // Changed in place: the stage owns its input.
        Stage::AddFields(a) => docs
            .into_iter()
            .map(|d| super::limits::checkpoint().and_then(|()| a.apply_owned(d, ctx.vars)))
            .collect::<Result<_>>()?,
        Stage::ReplaceRoot(e, what) => {
            let mut out = Vec::with_capacity(docs.len());
            for d in docs {
                super::limits::checkpoint()?;
                match e.eval(&d, ctx.vars)? {
                    Some(Bson::Document(nd)) => {
                        super::limits::check_output_depth(&nd)?;
                        out.push(nd)
                    }
                    other => {
                        let (shown, ty) = match &other {
                            Some(v) => (v.to_string(), value::type_alias(v)),
                            None => ("MISSING".to_string(), "missing"),
                        };
                        return Err(err(
                            40228,
                            format!(
                                "'{what}' must evaluate to an object, but resulting value was: {shown}. Type of resulting value: '{ty}'. Input document: {d}"
                            ),
                        ));
                    }
                }
            }
            out
        }
        Stage::Unwind(u) => {
            let mut out = Vec::with_capacity(docs.len());
            let mut held = super::limits::Held::new();
            for d in docs {
                u.apply(d, &mut out, &mut held)?;
            }
            out
        }
        Stage::Group(g) => depth_checked(g.run(docs, ctx)?)?,
        Stage::Sort(spec) => {
            // The sort values once per document, not once per comparison.
            let coll = ctx.collation();
            let mut keyed: Vec<(Box<[Bson]>, Document)> = docs
                .into_iter()
                .map(|d| (spec.keys_of(&d, coll), d))
                .collect();
            keyed.sort_by(|a, b| spec.compare_keys(&a.0, &b.0, coll));
            keyed.into_iter().map(|(_, d)| d).collect()
        }
        Stage::Skip(n) => docs.into_iter().skip(*n as usize).collect(),
        Stage::Limit(n) => docs.into_iter().take(*n as usize).collect(),
        Stage::Count(name) => {
            if docs.is_empty() {
                Vec::new()
            } else {
                let n = docs.len();
                let v = i32::try_from(n).map_or(Bson::Int64(n as i64), Bson::Int32);
                let mut d = Document::new();
                d.insert(name.clone(), v);
                vec![d]
            }
        }
        Stage::SortByCount(e) => group::sort_by_count(e, docs, ctx)?,
        Stage::Bucket(b) => depth_checked(b.run(docs, ctx)?)?,
        Stage::BucketAuto(b) => depth_checked(b.run(docs, ctx)?)?,
        Stage::Lookup(l) => depth_checked(l.run(docs, ctx)?)?,
        Stage::GraphLookup(g) => depth_checked(g.run(docs, ctx)?)?,
        Stage::UnionWith(u) => u.run(docs, ctx)?,
        Stage::Facet(facets) => {
            let mut out = Document::new();
            let mut held = super::limits::Held::new();
            for (name, p) in facets {
                let r = p.run(docs.clone(), ctx.source, ctx.vars)?;
                held.add(r.iter().map(sort_held_size).sum())?;
                out.insert(
                    name.clone(),
                    r.into_iter().map(Bson::Document).collect::<Vec<_>>(),
                );
            }
            depth_checked(vec![out])?
        }
        Stage::Sample(n) => {
            let mut docs = docs;
            // A fixed seed keeps lessons and tests reproducible.
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5c4e_3a1a);
            docs.shuffle(&mut rng);
            docs.truncate(*n);
            docs
        }
        Stage::Redact(e) => {
            let mut vars = ctx.vars.clone();
            for name in ["KEEP", "PRUNE", "DESCEND"] {
                vars.set(name, Bson::String(format!("$${name}")));
            }
            let mut out = Vec::with_capacity(docs.len());
            for d in docs {
                super::limits::checkpoint()?;
                vars.set("ROOT", Bson::Document(d.clone()));
                if let Some(kept) = redact(e, &d, &vars)? {
                    out.push(kept);
                }
            }
            out
        }
        Stage::Documents(e) => match e.eval(&Document::new(), ctx.vars)? {
            Some(Bson::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Bson::Document(d) => out.push(d),
                        other => {
                            return Err(err(
                                40228,
                                format!(
                                    "'newRoot' expression must evaluate to an object, but resulting value was: {other}. Type of resulting value: '{}'.",
                                    value::type_alias(&other)
                                ),
                            ));
                        }
                    }
                }
                out
            }
            other => {
                return Err(err(
                    5858203,
                    format!(
                        "error during $documents: expected an array, found {}",
                        super::expr::type_name(other.as_ref())
                    ),
                ));
            }
        },
    })
}

/// `$redact` on one (sub)document: the expression decides, with the
/// document as `$$CURRENT`, whether to keep it whole, prune it, or descend
/// into its embedded documents (also those inside arrays).
fn redact(e: &Expr, doc: &Document, vars: &Vars) -> Result<Option<Document>> {
    let decision = e.eval(doc, vars)?;
    match decision.as_ref().and_then(Bson::as_str) {
        Some("$$KEEP") => Ok(Some(doc.clone())),
        Some("$$PRUNE") => Ok(None),
        Some("$$DESCEND") => {
            let mut out = Document::new();
            for (k, v) in doc {
                match v {
                    Bson::Document(sub) => {
                        if let Some(kept) = redact(e, sub, vars)? {
                            out.insert(k.clone(), kept);
                        }
                    }
                    Bson::Array(items) => {
                        out.insert(k.clone(), redact_array(e, items, vars)?);
                    }
                    other => {
                        out.insert(k.clone(), other.clone());
                    }
                }
            }
            Ok(Some(out))
        }
        _ => Err(err(
            17053,
            format!(
                "$redact's expression should not return anything aside from the variables $$KEEP, $$DESCEND, and $$PRUNE, but returned {}",
                decision.map_or("MISSING".to_string(), |v| v.to_string())
            ),
        )),
    }
}

fn redact_array(e: &Expr, items: &[Bson], vars: &Vars) -> Result<Bson> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Bson::Document(sub) => {
                if let Some(kept) = redact(e, sub, vars)? {
                    out.push(Bson::Document(kept));
                }
            }
            Bson::Array(inner) => out.push(redact_array(e, inner, vars)?),
            other => out.push(other.clone()),
        }
    }
    Ok(Bson::Array(out))
}
