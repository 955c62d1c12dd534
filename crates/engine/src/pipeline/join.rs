//! Stages that read other collections through the pipeline's `Source`: `$lookup`
//! (equality, `let`/`pipeline`, and the combined 5.0 form), `$graphLookup`
//! and `$unionWith`.

use bson::{Bson, Document};

use super::{Ctx, Nesting, Pipeline, doc_matches_any, expanded_values, set_dotted};
use crate::error::{EngineError, Result};
use crate::expr::{Expr, err};
use crate::filter::Filter;
use crate::value;

fn string_field(spec: &Document, key: &str, stage: &str) -> Result<Option<String>> {
    match spec.get(key) {
        None => Ok(None),
        Some(Bson::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(err(
            if stage == "$graphLookup" { 40103 } else { 9 },
            format!(
                "{stage} argument '{key}: {other}' must be a string, is type {}",
                value::type_alias(other)
            ),
        )),
    }
}

fn dotted(s: &str) -> Vec<String> {
    s.split('.').map(str::to_string).collect()
}

/// A parsed `$lookup`.
#[derive(Debug, Clone)]
pub(super) struct Lookup {
    from: String,
    local_field: Option<String>,
    foreign_field: Option<String>,
    as_field: Vec<String>,
    let_vars: Option<Document>,
    pipeline: Option<Pipeline>,
}

impl Lookup {
    pub(super) fn parse(spec: &Document) -> Result<Lookup> {
        for k in spec.keys() {
            if !matches!(
                k.as_str(),
                "from" | "localField" | "foreignField" | "as" | "let" | "pipeline"
            ) {
                return Err(err(9, format!("unknown argument to $lookup: {k}")));
            }
        }
        let from = match spec.get("from") {
            Some(Bson::String(s)) => s.clone(),
            Some(Bson::Document(_)) => {
                return Err(EngineError::not_implemented(
                    "$lookup from another database",
                ));
            }
            Some(other) => {
                return Err(err(
                    9,
                    format!(
                        "$lookup argument 'from: {other}' must be a string, is type {}",
                        value::type_alias(other)
                    ),
                ));
            }
            None if spec.contains_key("pipeline") => String::new(),
            None => return Err(err(9, "must specify 'from' field for a $lookup")),
        };
        let local_field = string_field(spec, "localField", "$lookup")?;
        let foreign_field = string_field(spec, "foreignField", "$lookup")?;
        let as_field = string_field(spec, "as", "$lookup")?
            .ok_or_else(|| err(9, "must specify 'as' field for a $lookup"))?;
        if local_field.is_some() != foreign_field.is_some() {
            return Err(err(
                9,
                "$lookup requires both or neither of 'localField' and 'foreignField' to be specified",
            ));
        }
        let let_vars = match spec.get("let") {
            None => None,
            Some(Bson::Document(d)) => Some(d.clone()),
            Some(other) => {
                return Err(err(
                    9,
                    format!(
                        "$lookup argument 'let: {other}' must be an object, is type {}",
                        value::type_alias(other)
                    ),
                ));
            }
        };
        let pipeline = match spec.get("pipeline") {
            None => None,
            Some(p) => Some(Pipeline::parse_value(p, Nesting::Lookup, "pipeline")?),
        };
        if pipeline.is_none() && local_field.is_none() {
            return Err(err(
                9,
                "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified",
            ));
        }
        if let_vars.is_some() && pipeline.is_none() {
            return Err(err(9, "$lookup with 'let' must also specify a 'pipeline'"));
        }
        Ok(Lookup {
            from,
            local_field,
            foreign_field,
            as_field: dotted(&as_field),
            let_vars,
            pipeline,
        })
    }

    pub(super) fn run(&self, docs: Vec<Document>, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
        let coll = ctx.collation();
        // Without an equality part every document sees the whole collection.
        let whole = if self.local_field.is_none() && !self.from.is_empty() {
            Some(ctx.source.collection_docs(&self.from)?)
        } else {
            None
        };
        let mut out = Vec::with_capacity(docs.len());
        // What the stage has gathered so far, against the operation's
        // budget: nested `$lookup`s each hold their own.
        let mut held = crate::limits::Held::new();
        for mut d in docs {
            crate::limits::checkpoint()?;
            let local_values = self.local_field.as_ref().map(|lf| {
                let parts: Vec<&str> = lf.split('.').collect();
                // A local array joins through its elements; nothing at all
                // (missing, or an empty array) joins as null.
                let mut values = expanded_values(&d, &parts);
                if values.is_empty() {
                    values.push(Bson::Null);
                }
                values
            });
            let candidates = match (&local_values, &self.foreign_field) {
                (Some(values), Some(ff)) if !self.from.is_empty() => {
                    ctx.source.docs_matching_any(&self.from, ff, values, coll)?
                }
                _ => whole.clone().unwrap_or_default(),
            };
            let matched = match &self.pipeline {
                None => candidates,
                Some(p) => {
                    let mut vars = ctx.vars.clone();
                    if let Some(l) = &self.let_vars {
                        vars.bind_let(l, &d)?;
                    }
                    match (&local_values, &self.foreign_field) {
                        // No `from`: the pipeline opens with `$documents`,
                        // and the equality match goes right after it.
                        (Some(values), Some(ff)) if self.from.is_empty() => {
                            let parts: Vec<&str> = ff.split('.').collect();
                            let first = p.run_range(0..1, Vec::new(), ctx.source, &vars)?;
                            let kept = first
                                .into_iter()
                                .filter(|f| doc_matches_any(f, &parts, values, coll))
                                .collect();
                            p.run_range(1..p.len(), kept, ctx.source, &vars)?
                        }
                        _ => p.run(candidates, ctx.source, &vars)?,
                    }
                }
            };
            let limit = crate::limits::LOOKUP_INTERMEDIATE_BYTES.get();
            let mut total = 0u64;
            for m in &matched {
                total += crate::value::bson_size(m) as u64;
                if total > limit {
                    return Err(crate::error::EngineError::new(
                        crate::error::ErrorCode(4568),
                        format!(
                            "Total size of documents in {} matching pipeline's $lookup stage exceeds {limit} bytes",
                            self.from
                        ),
                    ));
                }
            }
            held.add(total)?;
            set_dotted(
                &mut d,
                &self.as_field,
                Bson::Array(matched.into_iter().map(Bson::Document).collect()),
            );
            out.push(d);
        }
        Ok(out)
    }
}

/// A parsed `$graphLookup`.
#[derive(Debug, Clone)]
pub(super) struct GraphLookup {
    from: String,
    start_with: Expr,
    connect_from: String,
    connect_to: String,
    as_field: String,
    max_depth: Option<i64>,
    depth_field: Option<Vec<String>>,
    restrict: Option<(Document, Filter)>,
}

impl GraphLookup {
    pub(super) fn parse(spec: &Document) -> Result<GraphLookup> {
        for k in spec.keys() {
            if !matches!(
                k.as_str(),
                "from"
                    | "startWith"
                    | "connectFromField"
                    | "connectToField"
                    | "as"
                    | "maxDepth"
                    | "depthField"
                    | "restrictSearchWithMatch"
            ) {
                return Err(err(40104, format!("Unknown argument to $graphLookup: {k}")));
            }
        }
        let req = |k: &str| -> Result<String> {
            string_field(spec, k, "$graphLookup")?.ok_or_else(|| {
                err(
                    40105,
                    format!("$graphLookup requires '{k}' to be specified"),
                )
            })
        };
        let from = req("from")?;
        let connect_from = req("connectFromField")?;
        let connect_to = req("connectToField")?;
        let as_field = req("as")?;
        let start_with = Expr::parse(
            spec.get("startWith")
                .ok_or_else(|| err(40105, "$graphLookup requires 'startWith' to be specified"))?,
        )?;
        let max_depth = match spec.get("maxDepth") {
            None => None,
            Some(v) if value::is_number(v) => match value::as_i64(v) {
                Some(n) if n >= 0 => Some(n),
                _ => {
                    return Err(err(
                        40101,
                        format!("maxDepth requires a nonnegative argument, found: {v}"),
                    ));
                }
            },
            Some(v) => {
                return Err(err(
                    40100,
                    format!(
                        "maxDepth must be numeric, found type: {}",
                        value::type_alias(v)
                    ),
                ));
            }
        };
        let depth_field = string_field(spec, "depthField", "$graphLookup")?.map(|s| dotted(&s));
        let restrict = match spec.get("restrictSearchWithMatch") {
            None => None,
            Some(Bson::Document(d)) => Some((d.clone(), Filter::parse(d, None)?)),
            Some(other) => {
                return Err(err(
                    40185,
                    format!(
                        "restrictSearchWithMatch must be an object, found {}",
                        value::type_alias(other)
                    ),
                ));
            }
        };
        Ok(GraphLookup {
            from,
            start_with,
            connect_from,
            connect_to,
            as_field,
            max_depth,
            depth_field,
            restrict,
        })
    }

    pub(super) fn run(&self, docs: Vec<Document>, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
        let coll = ctx.collation();
        let restrict = match (&self.restrict, coll) {
            (Some((spec, _)), Some(c)) => Some(Filter::parse(spec, Some(c))?),
            (Some((_, f)), None) => Some(f.clone()),
            (None, _) => None,
        };
        let from_parts: Vec<&str> = self.connect_from.split('.').collect();
        let mut out = Vec::with_capacity(docs.len());
        let mut held = crate::limits::Held::new();
        for mut d in docs {
            let start = self.start_with.eval_or_null(&d, ctx.vars)?;
            let mut frontier = match start {
                Bson::Array(items) => items,
                other => vec![other],
            };
            // Hashed, so that a wide frontier is not compared with every
            // value queried before (quadratic, and not interruptible).
            let mut queried = Seen::new(coll);
            let mut seen_ids = Seen::new(coll);
            let mut found: Vec<Bson> = Vec::new();
            let mut depth = 0i64;
            // mongod's `maxMemoryUsageBytes`: what the search has visited
            // plus its frontier, for this input document.
            let limit = crate::limits::GRAPH_LOOKUP_MEMORY.get();
            let mut used: u64 = frontier.iter().map(crate::limits::approx_size).sum();
            while !frontier.is_empty() {
                let mut fresh = Vec::with_capacity(frontier.len());
                for v in frontier {
                    crate::limits::checkpoint()?;
                    if queried.insert(&v) {
                        fresh.push(v);
                    }
                }
                frontier = fresh;
                if frontier.is_empty() {
                    break;
                }
                let matches =
                    ctx.source
                        .docs_matching_any(&self.from, &self.connect_to, &frontier, coll)?;
                let mut next = Vec::new();
                for m in matches {
                    crate::limits::checkpoint()?;
                    if let Some(f) = &restrict
                        && !f.matches(&m, ctx.vars)?
                    {
                        continue;
                    }
                    let id = m.get("_id").cloned().unwrap_or(Bson::Null);
                    if !seen_ids.insert(&id) {
                        continue;
                    }
                    used += crate::limits::approx_size(&id);
                    let values = expanded_values(&m, &from_parts);
                    used += values.iter().map(crate::limits::approx_size).sum::<u64>();
                    next.extend(values);
                    let mut m = m;
                    if let Some(df) = &self.depth_field {
                        set_dotted(&mut m, df, Bson::Int64(depth));
                    }
                    let m = Bson::Document(m);
                    let size = crate::limits::approx_size(&m);
                    used += size;
                    held.add(size)?;
                    if used >= limit {
                        return Err(err(
                            40099,
                            "$graphLookup reached maximum memory consumption",
                        ));
                    }
                    found.push(m);
                }
                if self.max_depth.is_some_and(|max| depth >= max) {
                    break;
                }
                depth += 1;
                frontier = next;
            }
            d.insert(self.as_field.clone(), found);
            out.push(d);
        }
        Ok(out)
    }
}

/// Values seen by a `$graphLookup`, hashed by their index key and
/// confirmed by comparison under the collation.
struct Seen<'c> {
    coll: Option<&'c crate::collation::Collation>,
    buckets: std::collections::HashMap<Vec<u8>, Vec<Bson>>,
}

impl<'c> Seen<'c> {
    fn new(coll: Option<&'c crate::collation::Collation>) -> Self {
        Seen {
            coll,
            buckets: std::collections::HashMap::new(),
        }
    }

    /// Add `v`; false when an equal value was seen before.
    fn insert(&mut self, v: &Bson) -> bool {
        let bucket = self
            .buckets
            .entry(crate::keystring::encode_single(v, self.coll))
            .or_default();
        if bucket.iter().any(|o| value::values_equal(o, v, self.coll)) {
            return false;
        }
        bucket.push(v.clone());
        true
    }
}

/// A parsed `$unionWith`.
#[derive(Debug, Clone)]
pub(super) struct UnionWith {
    coll: String,
    pipeline: Option<Pipeline>,
}

impl UnionWith {
    /// The collection it reads (empty for a collection-less sub-pipeline).
    pub(super) fn coll(&self) -> &str {
        &self.coll
    }

    /// Its sub-pipeline's stages as written.
    pub(super) fn stages(&self) -> &[Document] {
        self.pipeline.as_ref().map_or(&[][..], |p| p.stages())
    }

    pub(super) fn parse(spec: &Bson) -> Result<UnionWith> {
        match spec {
            Bson::String(s) => Ok(UnionWith {
                coll: s.clone(),
                pipeline: None,
            }),
            Bson::Document(d) => {
                for k in d.keys() {
                    if !matches!(k.as_str(), "coll" | "pipeline") {
                        return Err(err(
                            40415,
                            format!("BSON field '$unionWith.{k}' is an unknown field."),
                        ));
                    }
                }
                let coll = match d.get("coll") {
                    Some(Bson::String(s)) => s.clone(),
                    None if d.contains_key("pipeline") => String::new(),
                    _ => {
                        return Err(err(
                            40414,
                            "BSON field '$unionWith.coll' is missing but a required field",
                        ));
                    }
                };
                let pipeline = match d.get("pipeline") {
                    Some(p) => Some(Pipeline::parse_value(p, Nesting::UnionWith, "pipeline")?),
                    None => None,
                };
                Ok(UnionWith { coll, pipeline })
            }
            other => Err(err(
                14,
                format!(
                    "the $unionWith stage specification must be an object or string, but found {}",
                    value::type_alias(other)
                ),
            )),
        }
    }

    pub(super) fn run(&self, mut docs: Vec<Document>, ctx: &Ctx<'_>) -> Result<Vec<Document>> {
        let stages = self.pipeline.as_ref().map_or(&[][..], |p| p.stages());
        let planned = if self.coll.is_empty() {
            None
        } else {
            ctx.source.run_pipeline(&self.coll, stages, ctx.vars)
        };
        let other = match planned {
            Some(result) => result?,
            None => {
                let other = if self.coll.is_empty() {
                    Vec::new()
                } else {
                    ctx.source.collection_docs(&self.coll)?
                };
                match &self.pipeline {
                    Some(p) => p.run(other, ctx.source, ctx.vars)?,
                    None => other,
                }
            }
        };
        docs.extend(other);
        Ok(docs)
    }
}
