//! Why a document fails a filter, in the shape mongod 5.0+ gives a failed
//! document validation (`errInfo.details`).
//!
//! The filter is read as mongod's optimiser leaves it: the top-level
//! entries and the clauses of any `$and` among them are one list of
//! clauses, one per operator (`{a: {$gt: 1, $lt: 5}}` is two), and a list of
//! one clause is that clause. Each clause reports its `operatorName`, its
//! `specifiedAs` (the clause as written) and a `reason`, with the values it
//! considered; logical operators report the clauses that decided the
//! outcome (`clausesNotSatisfied`, or `clausesSatisfied` under a negation),
//! and `$jsonSchema` its rules (`filter::schema`). Each clause is matched
//! by parsing it as a filter of its own, so the outcome is the one the whole
//! filter reached; this runs only for a document that already failed.

use bson::{Bson, Document, doc};

use super::Filter;
use super::schema::Schema;
use crate::collation::Collation;
use crate::error::Result;
use crate::expr::{Expr, Vars};
use crate::value;

/// mongod's `internalQueryMaxDocValidationErrorConsideredValues`: at most
/// this many `consideredValues`, then `consideredValuesTruncated: true`.
const MAX_CONSIDERED_VALUES: usize = 10;

/// One clause of a filter, as written.
enum Clause {
    And(Vec<Clause>),
    Or(Vec<Clause>),
    Nor(Vec<Clause>),
    Schema(Document),
    Expr(Bson),
    /// A path operator: the path, the operator (`$eq` for a literal), and
    /// the clause as written (`{path: {$op: arg}}` or `{path: literal}`).
    Leaf {
        path: String,
        op: String,
        spec: Document,
    },
    /// `{path: {$not: …}}`: the clause as written and the negated clauses.
    Not {
        spec: Document,
        inner: Vec<Clause>,
    },
    Always(bool, Document),
}

/// The clauses of a filter document, `$and`s flattened.
fn clauses(query: &Document) -> Vec<Clause> {
    let mut out = Vec::new();
    for (key, v) in query {
        match key.as_str() {
            "$and" => {
                for child in each_doc(v) {
                    out.extend(clauses(child));
                }
            }
            "$or" | "$nor" => {
                let children = each_doc(v).map(|c| one(clauses(c))).collect();
                out.push(if key == "$or" {
                    Clause::Or(children)
                } else {
                    Clause::Nor(children)
                });
            }
            "$jsonSchema" => {
                if let Bson::Document(d) = v {
                    out.push(Clause::Schema(d.clone()));
                }
            }
            "$expr" => out.push(Clause::Expr(v.clone())),
            "$alwaysTrue" | "$alwaysFalse" => {
                out.push(Clause::Always(key == "$alwaysTrue", doc! {key: v.clone()}));
            }
            k if k.starts_with('$') => {}
            path => field_clauses(path, v, &mut out),
        }
    }
    out
}

fn each_doc(v: &Bson) -> impl Iterator<Item = &Document> {
    let items: &[Bson] = match v {
        Bson::Array(a) => a,
        _ => &[],
    };
    items.iter().filter_map(Bson::as_document)
}

/// A list of clauses as one clause.
fn one(mut list: Vec<Clause>) -> Clause {
    if list.len() == 1 {
        list.remove(0)
    } else {
        Clause::And(list)
    }
}

fn field_clauses(path: &str, v: &Bson, out: &mut Vec<Clause>) {
    let ops = match v {
        Bson::Document(d) if super::is_operator_document(d) => d,
        Bson::RegularExpression(_) => {
            out.push(Clause::Leaf {
                path: path.to_string(),
                op: "$regex".into(),
                spec: doc! {path: v.clone()},
            });
            return;
        }
        _ => {
            out.push(Clause::Leaf {
                path: path.to_string(),
                op: "$eq".into(),
                spec: doc! {path: v.clone()},
            });
            return;
        }
    };
    for (op, arg) in ops {
        match op.as_str() {
            "$options" if ops.contains_key("$regex") => {}
            "$regex" => {
                let mut spec = doc! {"$regex": arg.clone()};
                if let Some(o) = ops.get("$options") {
                    spec.insert("$options", o.clone());
                }
                out.push(Clause::Leaf {
                    path: path.to_string(),
                    op: op.clone(),
                    spec: doc! {path: spec},
                });
            }
            "$not" => {
                let mut inner = Vec::new();
                field_clauses(path, arg, &mut inner);
                out.push(Clause::Not {
                    spec: doc! {path: {"$not": arg.clone()}},
                    inner,
                });
            }
            _ => out.push(Clause::Leaf {
                path: path.to_string(),
                op: op.clone(),
                spec: doc! {path: {op.clone(): arg.clone()}},
            }),
        }
    }
}

/// What a clause needs to be matched and explained.
struct Ctx<'a> {
    doc: &'a Document,
    collation: Option<&'a Collation>,
}

impl Ctx<'_> {
    fn matches(&self, c: &Clause) -> Result<bool> {
        Ok(match c {
            Clause::And(list) => {
                for x in list {
                    if !self.matches(x)? {
                        return Ok(false);
                    }
                }
                true
            }
            Clause::Or(list) => {
                for x in list {
                    if self.matches(x)? {
                        return Ok(true);
                    }
                }
                false
            }
            Clause::Nor(list) => {
                for x in list {
                    if self.matches(x)? {
                        return Ok(false);
                    }
                }
                true
            }
            Clause::Schema(s) => self.parsed(&doc! {"$jsonSchema": s.clone()})?,
            Clause::Expr(e) => self.parsed(&doc! {"$expr": e.clone()})?,
            Clause::Leaf { spec, .. } | Clause::Not { spec, .. } => self.parsed(spec)?,
            Clause::Always(b, _) => *b,
        })
    }

    fn parsed(&self, query: &Document) -> Result<bool> {
        Filter::parse(query, self.collation)?.matches(self.doc, &Vars::default())
    }

    /// The details of a clause that failed (or, `inverted`, matched under
    /// a negation).
    fn details(&self, c: &Clause, inverted: bool) -> Result<Document> {
        Ok(match c {
            Clause::And(list) => {
                let mut entries = Vec::new();
                for (i, x) in list.iter().enumerate() {
                    // Normal: the clauses that failed; inverted (the `$and`
                    // matched): every clause.
                    if inverted || !self.matches(x)? {
                        entries.push(self.entry(i, x, inverted)?);
                    }
                }
                logical("$and", inverted, entries)
            }
            Clause::Or(list) => {
                let mut entries = Vec::new();
                for (i, x) in list.iter().enumerate() {
                    if !inverted || self.matches(x)? {
                        entries.push(self.entry(i, x, inverted)?);
                    }
                }
                logical("$or", inverted, entries)
            }
            Clause::Nor(list) => {
                let mut entries = Vec::new();
                for (i, x) in list.iter().enumerate() {
                    if inverted || self.matches(x)? {
                        entries.push(self.entry(i, x, !inverted)?);
                    }
                }
                logical("$nor", inverted, entries)
            }
            Clause::Schema(spec) => {
                if inverted {
                    doc! {"operatorName": "$jsonSchema", "reason": "schema matched"}
                } else {
                    Schema::parse(spec)?.details(self.doc)
                }
            }
            Clause::Expr(e) => {
                let result = Expr::parse(e)?
                    .eval(self.doc, &Vars::default())?
                    .unwrap_or(Bson::Null);
                doc! {
                    "operatorName": "$expr",
                    "specifiedAs": {"$expr": e.clone()},
                    "reason": if inverted { "expression did match" } else { "expression did not match" },
                    "expressionResult": result,
                }
            }
            Clause::Always(b, spec) => {
                let name = spec.keys().next().cloned().unwrap_or_default();
                doc! {
                    "operatorName": name,
                    "specifiedAs": spec.clone(),
                    "reason": if *b { "expression always evaluates to true" } else { "expression always evaluates to false" },
                }
            }
            Clause::Not { inner, .. } => {
                let inner = match inner.as_slice() {
                    [single] => self.details(single, !inverted)?,
                    list => {
                        let mut entries = Vec::new();
                        for (i, x) in list.iter().enumerate() {
                            entries.push(self.entry(i, x, !inverted)?);
                        }
                        logical("$and", !inverted, entries)
                    }
                };
                doc! {"operatorName": "$not", "details": inner}
            }
            Clause::Leaf { path, op, spec } => self.leaf(path, op, spec, inverted),
        })
    }

    fn entry(&self, i: usize, c: &Clause, inverted: bool) -> Result<Bson> {
        Ok(Bson::Document(doc! {
            "index": i32::try_from(i).unwrap_or(i32::MAX),
            "details": self.details(c, inverted)?,
        }))
    }

    /// A path operator's details, as mongod's `generatePathError` writes
    /// them: a missing field, a type the operator cannot apply to, or the
    /// operator's own reason, with the values it considered.
    fn leaf(&self, path: &str, op: &str, spec: &Document, inverted: bool) -> Document {
        // `$ne`, `$nin` and `$exists: false` are negations in mongod: their
        // reason is their positive operator's, inverted.
        let negative = matches!(op, "$ne" | "$nin")
            || (op == "$exists"
                && spec
                    .get(path)
                    .and_then(Bson::as_document)
                    .and_then(|d| d.get("$exists"))
                    .is_some_and(|v| !super::true_value(v)));
        let inverted = inverted != negative;
        let mut out = doc! {"operatorName": op, "specifiedAs": spec.clone()};
        let (normal, flipped) = reasons(op);
        if op == "$exists" {
            out.insert("reason", if inverted { flipped } else { normal });
            return out;
        }
        let whole = matches!(op, "$size" | "$elemMatch" | "$all");
        let values = values_at(self.doc, path, !whole);
        match &values {
            None => {
                out.insert("reason", "field was missing");
            }
            Some(vals) => {
                let expected = expected_types(op);
                if !expected.is_empty()
                    && !vals
                        .iter()
                        .any(|v| expected.contains(&value::type_alias(v)))
                {
                    out.insert("reason", "type did not match");
                    insert_types(&mut out, vals);
                    let mut names: Vec<&str> = expected.to_vec();
                    names.sort_unstable();
                    if names.len() == 1 {
                        out.insert("expectedType", names[0]);
                    } else {
                        out.insert("expectedTypes", names);
                    }
                } else {
                    out.insert("reason", if inverted { flipped } else { normal });
                }
                match vals.as_slice() {
                    [single] => {
                        out.insert("consideredValue", single.clone());
                    }
                    many => {
                        let kept = many.len().min(MAX_CONSIDERED_VALUES);
                        out.insert("consideredValues", many[..kept].to_vec());
                        if kept < many.len() {
                            out.insert("consideredValuesTruncated", true);
                        }
                    }
                }
                if op == "$type" {
                    insert_types(&mut out, vals);
                }
            }
        }
        out
    }
}

fn logical(name: &str, inverted: bool, entries: Vec<Bson>) -> Document {
    let field = if inverted {
        "clausesSatisfied"
    } else {
        "clausesNotSatisfied"
    };
    doc! {"operatorName": name, field: entries}
}

/// `consideredType` / `consideredTypes` (sorted, as mongod's set).
fn insert_types(out: &mut Document, vals: &[Bson]) {
    let mut types: Vec<&str> = vals.iter().map(value::type_alias).collect();
    types.sort_unstable();
    types.dedup();
    match types.as_slice() {
        [] => {}
        [one] => {
            out.insert("consideredType", *one);
        }
        many => {
            out.insert("consideredTypes", many.to_vec());
        }
    }
}

/// mongod's reasons, as given and under a negation.
fn reasons(op: &str) -> (&'static str, &'static str) {
    match op {
        "$in" | "$nin" => (
            "no matching value found in array",
            "matching value found in array",
        ),
        "$exists" => ("path does not exist", "path does exist"),
        "$type" => ("type did not match", "type did match"),
        "$size" => (
            "array length was not equal to given size",
            "array length was equal to given size",
        ),
        "$mod" => (
            "$mod did not evaluate to expected remainder",
            "$mod did evaluate to expected remainder",
        ),
        "$regex" => (
            "regular expression did not match",
            "regular expression did match",
        ),
        "$all" => (
            "array did not contain all specified values",
            "array did contain all specified values",
        ),
        "$elemMatch" => (
            "array did not satisfy the child predicate",
            "array did satisfy the child predicate",
        ),
        "$bitsAllSet" | "$bitsAllClear" | "$bitsAnySet" | "$bitsAnyClear" => (
            "bitwise operator failed to match",
            "bitwise operator matched successfully",
        ),
        _ => ("comparison failed", "comparison succeeded"),
    }
}

/// The types an operator applies to (empty: any).
fn expected_types(op: &str) -> &'static [&'static str] {
    match op {
        "$regex" => &["string", "symbol", "regex"],
        "$mod" => &["int", "long", "double", "decimal"],
        "$size" | "$elemMatch" => &["array"],
        "$bitsAllSet" | "$bitsAllClear" | "$bitsAnySet" | "$bitsAnyClear" => {
            &["int", "long", "double", "decimal", "binData"]
        }
        _ => &[],
    }
}

/// The values a dotted path reaches, arrays along the way traversed; at the
/// end an array gives its elements (`expand`) or itself. `None` when the
/// path reaches nothing (an empty array at the end is reached).
fn values_at(doc: &Document, path: &str, expand: bool) -> Option<Vec<Bson>> {
    let parts: Vec<&str> = path.split('.').collect();
    let mut out = Vec::new();
    let mut found = false;
    walk(doc, &parts, expand, &mut out, &mut found);
    found.then_some(out)
}

fn walk(doc: &Document, parts: &[&str], expand: bool, out: &mut Vec<Bson>, found: &mut bool) {
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    let Some(v) = doc.get(*first) else {
        return;
    };
    descend(v, rest, expand, out, found);
}

fn descend(v: &Bson, rest: &[&str], expand: bool, out: &mut Vec<Bson>, found: &mut bool) {
    if rest.is_empty() {
        *found = true;
        match v {
            Bson::Array(a) if expand => out.extend(a.iter().cloned()),
            other => out.push(other.clone()),
        }
        return;
    }
    match v {
        Bson::Document(d) => walk(d, rest, expand, out, found),
        Bson::Array(a) => {
            if let Ok(i) = rest[0].parse::<usize>()
                && let Some(x) = a.get(i)
            {
                descend(x, &rest[1..], expand, out, found);
            }
            for x in a {
                if let Bson::Document(d) = x {
                    walk(d, rest, expand, out, found);
                }
            }
        }
        _ => {}
    }
}

impl Filter {
    /// mongod's `errInfo.details` for a document this filter (a collection
    /// validator) rejects.
    pub fn failure_details(&self, doc: &Document) -> Result<Document> {
        let ctx = Ctx {
            doc,
            collation: self.collation.as_ref(),
        };
        let list = clauses(&self.source);
        match list.as_slice() {
            [single] => ctx.details(single, false),
            _ => ctx.details(&Clause::And(list), false),
        }
    }
}

#[cfg(test)]
mod tests {
    use bson::{Document, doc};

    use crate::filter::Filter;

    fn why(filter: Document, d: Document) -> Document {
        Filter::parse(&filter, None)
            .unwrap()
            .failure_details(&d)
            .unwrap()
    }

    #[test]
    fn nested_and_is_flattened_into_the_top_level_clauses() {
        let got = why(
            doc! {"$and": [{"a": 1}, {"b": 2}], "c": 3},
            doc! {"a": 1, "b": 0, "c": 0},
        );
        assert_eq!(
            got,
            doc! {"operatorName": "$and", "clausesNotSatisfied": [
                {"index": 1, "details": {"operatorName": "$eq", "specifiedAs": {"b": 2},
                  "reason": "comparison failed", "consideredValue": 0}},
                {"index": 2, "details": {"operatorName": "$eq", "specifiedAs": {"c": 3},
                  "reason": "comparison failed", "consideredValue": 0}},
            ]}
        );
    }

    #[test]
    fn or_child_with_two_clauses_is_an_and() {
        let got = why(doc! {"$or": [{"a": 1, "b": 1}, {"c": 1}]}, doc! {"a": 1});
        let clauses = got.get_array("clausesNotSatisfied").unwrap();
        let first = clauses[0]
            .as_document()
            .unwrap()
            .get_document("details")
            .unwrap();
        assert_eq!(first.get_str("operatorName").unwrap(), "$and");
        assert_eq!(first.get_array("clausesNotSatisfied").unwrap().len(), 1);
        let second = clauses[1]
            .as_document()
            .unwrap()
            .get_document("details")
            .unwrap();
        assert_eq!(second.get_str("reason").unwrap(), "field was missing");
    }

    #[test]
    fn not_inverts_its_clause() {
        let got = why(doc! {"a": {"$not": {"$gt": 5}}}, doc! {"a": 7});
        assert_eq!(
            got,
            doc! {"operatorName": "$not", "details": {
                "operatorName": "$gt", "specifiedAs": {"a": {"$gt": 5}},
                "reason": "comparison succeeded", "consideredValue": 7,
            }}
        );
    }

    #[test]
    fn negative_operators_give_the_inverted_reason() {
        let got = why(doc! {"a": {"$nin": [1, 2]}}, doc! {"a": 2});
        assert_eq!(
            got.get_str("reason").unwrap(),
            "matching value found in array"
        );
        let got = why(doc! {"a": {"$exists": false}}, doc! {"a": 2});
        assert_eq!(got.get_str("reason").unwrap(), "path does exist");
    }

    #[test]
    fn considered_values_stop_at_ten() {
        let many: Vec<i32> = (0..12).collect();
        let got = why(doc! {"a": {"$gt": 100}}, doc! {"a": many});
        assert_eq!(got.get_array("consideredValues").unwrap().len(), 10);
        assert!(got.get_bool("consideredValuesTruncated").unwrap());
        let got = why(doc! {"a": {"$gt": 100}}, doc! {"a": [1, 2]});
        assert!(got.get("consideredValuesTruncated").is_none());
    }

    #[test]
    fn dotted_paths_through_arrays_consider_every_value() {
        let got = why(
            doc! {"items.qty": {"$gte": 10}},
            doc! {"items": [{"qty": 1}, {"qty": 2}, {"other": 1}]},
        );
        assert_eq!(got.get_array("consideredValues").unwrap().len(), 2);
        let got = why(doc! {"items.qty": {"$gte": 10}}, doc! {"items": []});
        assert_eq!(got.get_str("reason").unwrap(), "field was missing");
    }
}
