//! Dependency analysis: which top-level fields of its input documents a
//! pipeline can read, as mongod's `DepsTracker` works them out, so that the
//! `$cursor` decodes only those fields of each stored record (mongod hands
//! its pipeline only the fields it depends on, by a projection pushed into
//! the query layer).
//!
//! The analysis walks the stages in order. A stage that passes its input on
//! (`$match`, `$addFields`, `$unwind`, `$sort`, `$lookup`, …) adds the
//! fields it reads and the walk goes on; a stage whose output is made only
//! of what it computes (`$group`, an inclusion `$project`,
//! `$replaceRoot`, `$count`) adds what it reads and ends the walk. Reaching
//! the end of the pipeline (the documents are returned or written as they
//! are), a reference to `$$ROOT` or `$$CURRENT`, or any stage or operator
//! this module does not know, means the whole document. The answer may
//! name more fields than are read (a field an earlier stage computes, a
//! `$literal` that looks like a path), never fewer: a document missing a
//! field the pipeline reads would change its answer.

use std::collections::BTreeSet;

use bson::{Bson, Document};

/// The top-level fields of its input that `stages` can read, or `None`
/// when they may read the whole document.
pub(crate) fn top_level_fields<'a>(
    stages: impl IntoIterator<Item = &'a Document>,
) -> Option<BTreeSet<String>> {
    let mut deps = Deps::default();
    for stage in stages {
        let mut entries = stage.iter();
        let (Some((name, spec)), None) = (entries.next(), entries.next()) else {
            return None;
        };
        if deps.stage(name, spec)? == Flow::Ends {
            return Some(deps.fields);
        }
    }
    // The documents leave the pipeline as they are.
    None
}

/// Whether the walk goes on after a stage.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    PassesOn,
    Ends,
}

#[derive(Default)]
struct Deps {
    fields: BTreeSet<String>,
}

/// The first part of a dotted path.
fn top(path: &str) -> &str {
    path.split('.').next().unwrap_or(path)
}

impl Deps {
    fn field(&mut self, path: &str) {
        self.fields.insert(top(path).to_owned());
    }

    /// One stage; `None` when it may read the whole document.
    fn stage(&mut self, name: &str, spec: &Bson) -> Option<Flow> {
        match name {
            "$match" => {
                self.filter(spec.as_document()?)?;
                Some(Flow::PassesOn)
            }
            "$limit" | "$skip" | "$unset" => Some(Flow::PassesOn),
            "$addFields" | "$set" => {
                for (k, v) in spec.as_document()? {
                    // `{"a.b": …}` merges into the input's `a`.
                    self.field(k);
                    self.expr(v)?;
                }
                Some(Flow::PassesOn)
            }
            "$project" => self.project(spec.as_document()?),
            "$unwind" => {
                let path = match spec {
                    Bson::String(p) => p,
                    Bson::Document(d) => d.get_str("path").ok()?,
                    _ => return None,
                };
                self.field(path.strip_prefix('$')?);
                Some(Flow::PassesOn)
            }
            "$sort" => {
                for (k, _) in spec.as_document()? {
                    self.field(k);
                }
                Some(Flow::PassesOn)
            }
            "$group" => {
                for (k, v) in spec.as_document()? {
                    if k == "_id" {
                        self.expr(v)?;
                    } else {
                        self.accumulator(v)?;
                    }
                }
                Some(Flow::Ends)
            }
            "$replaceRoot" => {
                self.expr(spec.as_document()?.get("newRoot")?)?;
                Some(Flow::Ends)
            }
            "$replaceWith" => {
                self.expr(spec)?;
                Some(Flow::Ends)
            }
            "$count" => Some(Flow::Ends),
            "$sortByCount" => {
                self.expr(spec)?;
                Some(Flow::Ends)
            }
            "$lookup" => {
                let d = spec.as_document()?;
                if let Ok(local) = d.get_str("localField") {
                    self.field(local);
                }
                if let Some(Bson::Document(vars)) = d.get("let") {
                    for (_, v) in vars {
                        self.expr(v)?;
                    }
                }
                // The sub-pipeline reads the foreign documents; the joined
                // array is added to the input.
                Some(Flow::PassesOn)
            }
            "$graphLookup" => {
                self.expr(spec.as_document()?.get("startWith")?)?;
                Some(Flow::PassesOn)
            }
            // Its sub-pipeline reads another collection; the input passes.
            "$unionWith" => Some(Flow::PassesOn),
            _ => None,
        }
    }

    /// A query filter: each field it names, and what its `$expr` reads.
    fn filter(&mut self, filter: &Document) -> Option<()> {
        for (k, v) in filter {
            match k.as_str() {
                "$and" | "$or" | "$nor" => {
                    for clause in v.as_array()? {
                        self.filter(clause.as_document()?)?;
                    }
                }
                "$expr" => self.expr(v)?,
                "$comment" => {}
                // `$where`, `$text`, `$jsonSchema`, …: the whole document.
                k if k.starts_with('$') => return None,
                k => self.field(k),
            }
        }
        Some(())
    }

    /// `$project`: an inclusion (or computed fields) ends the walk with the
    /// fields it names; an exclusion passes the rest on.
    fn project(&mut self, spec: &Document) -> Option<Flow> {
        let excluded = |v: &Bson| match v {
            Bson::Boolean(b) => !b,
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => {
                crate::value::as_f64(v) == Some(0.0)
            }
            _ => false,
        };
        // A nested projection (`{a: {b: 0}}`) is an inclusion or an
        // exclusion by its leaves: not worked out here.
        let nested = |v: &Bson| {
            v.as_document()
                .and_then(|d| d.keys().next())
                .is_some_and(|k| !k.starts_with('$'))
        };
        if spec.values().any(nested) {
            return None;
        }
        let mut others = spec.iter().filter(|(k, _)| *k != "_id").peekable();
        let exclusion = match others.peek() {
            None => spec.get("_id").is_some_and(excluded),
            Some(_) => others.all(|(_, v)| excluded(v)),
        };
        if exclusion {
            return Some(Flow::PassesOn);
        }
        let mut keeps_id = true;
        for (k, v) in spec {
            if k == "_id" && excluded(v) {
                keeps_id = false;
                continue;
            }
            self.field(k);
            self.expr(v)?;
        }
        if keeps_id {
            self.field("_id");
        }
        Some(Flow::Ends)
    }

    /// An accumulator (`{$sum: …}`, `{$top: {sortBy, output}}`, …).
    fn accumulator(&mut self, acc: &Bson) -> Option<()> {
        let d = acc.as_document()?;
        for (op, arg) in d {
            match op.as_str() {
                "$accumulator" | "$function" => return None,
                "$top" | "$topN" | "$bottom" | "$bottomN" => {
                    let a = arg.as_document()?;
                    for (k, _) in a.get_document("sortBy").ok()? {
                        self.field(k);
                    }
                    for (k, v) in a {
                        if k != "sortBy" {
                            self.expr(v)?;
                        }
                    }
                }
                _ => self.expr(arg)?,
            }
        }
        Some(())
    }

    /// An aggregation expression: every field path it names (`"$a.b"` reads
    /// `a`); `$$ROOT`, `$$CURRENT` and the operators that read the current
    /// document implicitly read it whole.
    fn expr(&mut self, e: &Bson) -> Option<()> {
        match e {
            Bson::String(s) => {
                if let Some(var) = s.strip_prefix("$$") {
                    if matches!(top(var), "ROOT" | "CURRENT") {
                        return None;
                    }
                } else if let Some(path) = s.strip_prefix('$') {
                    self.field(path);
                }
            }
            Bson::Array(items) => {
                for item in items {
                    self.expr(item)?;
                }
            }
            Bson::Document(d) => {
                for (k, v) in d {
                    match k.as_str() {
                        "$literal" => {}
                        "$getField" | "$setField" | "$unsetField" | "$function"
                        | "$accumulator" | "$where" => return None,
                        _ => self.expr(v)?,
                    }
                }
            }
            _ => {}
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn fields(stages: &[Document]) -> Option<Vec<String>> {
        top_level_fields(stages).map(|s| s.into_iter().collect())
    }

    #[test]
    fn a_group_reads_its_key_and_accumulators() {
        let p =
            [doc! {"$group": {"_id": "$post_id", "n": {"$sum": 1}, "last": {"$max": "$at.day"}}}];
        assert_eq!(fields(&p), Some(vec!["at".into(), "post_id".into()]));
    }

    #[test]
    fn stages_before_the_group_add_what_they_read() {
        let p = [
            doc! {"$match": {"status": "open", "$or": [{"a.b": 1}, {"$expr": {"$gt": ["$c", "$d"]}}]}},
            doc! {"$unwind": "$tags"},
            doc! {"$set": {"k": {"$toUpper": "$tags"}}},
            doc! {"$sort": {"when": -1}},
            doc! {"$group": {"_id": "$k", "top": {"$top": {"sortBy": {"score": 1}, "output": "$title"}}}},
        ];
        assert_eq!(
            fields(&p),
            Some(
                [
                    "a", "c", "d", "k", "score", "status", "tags", "title", "when"
                ]
                .map(String::from)
                .to_vec()
            )
        );
    }

    #[test]
    fn an_inclusion_projection_ends_the_walk_and_keeps_id() {
        let p = [
            doc! {"$project": {"a": 1, "b": {"$add": ["$x", 1]}}},
            doc! {"$out": "t"},
        ];
        assert_eq!(
            fields(&p),
            Some(["_id", "a", "b", "x"].map(String::from).to_vec())
        );
        let no_id = [
            doc! {"$project": {"_id": 0, "a": "$author_id"}},
            doc! {"$out": "t"},
        ];
        assert_eq!(
            fields(&no_id),
            Some(["a", "author_id"].map(String::from).to_vec())
        );
    }

    #[test]
    fn the_whole_document_when_it_leaves_or_is_named() {
        // Returned or written as it is.
        assert_eq!(fields(&[doc! {"$match": {"a": 1}}]), None);
        assert_eq!(fields(&[doc! {"$set": {"a": 1}}, doc! {"$out": "t"}]), None);
        // An exclusion passes the rest on, `_id` alone too; a nested
        // projection is not worked out.
        assert_eq!(fields(&[doc! {"$project": {"a": 0}}]), None);
        assert_eq!(
            fields(&[doc! {"$project": {"_id": 0}}, doc! {"$count": "n"}]),
            Some(vec![])
        );
        assert_eq!(
            fields(&[doc! {"$project": {"_id": 0}}, doc! {"$out": "t"}]),
            None
        );
        assert_eq!(fields(&[doc! {"$project": {"a": {"b": 1}}}]), None);
        // $$ROOT, $$CURRENT and the implicit readers.
        assert_eq!(
            fields(&[doc! {"$group": {"_id": "$a", "all": {"$push": "$$ROOT"}}}]),
            None
        );
        assert_eq!(fields(&[doc! {"$replaceWith": "$$CURRENT.inner"}]), None);
        assert_eq!(
            fields(&[doc! {"$project": {"v": {"$getField": "a.b"}}}]),
            None
        );
        assert_eq!(
            fields(&[doc! {"$match": {"$where": "true"}}, doc! {"$count": "n"}]),
            None
        );
        // A stage this module does not know.
        assert_eq!(fields(&[doc! {"$facet": {"a": [{"$count": "n"}]}}]), None);
    }

    #[test]
    fn literals_and_variables_read_no_field() {
        let p = [doc! {"$group": {
            "_id": {"$literal": "$notAField"},
            "v": {"$sum": {"$let": {"vars": {"x": 2}, "in": {"$multiply": ["$$x", "$n"]}}}},
        }}];
        assert_eq!(fields(&p), Some(vec!["n".into()]));
    }

    #[test]
    fn joins_read_their_local_side_only() {
        let p = [
            doc! {"$lookup": {"from": "b", "localField": "ref.id", "foreignField": "_id", "as": "j"}},
            doc! {"$lookup": {"from": "c", "let": {"v": "$w"}, "pipeline": [{"$replaceWith": "$$ROOT"}], "as": "k"}},
            doc! {"$unionWith": {"coll": "d", "pipeline": [{"$project": {"z": 1}}]}},
            doc! {"$count": "n"},
        ];
        assert_eq!(fields(&p), Some(["ref", "w"].map(String::from).to_vec()));
    }
}
