//! The `$merge` stage's specification, checked as mongod 7.0 checks it
//! before the pipeline runs.
//!
//! `on` is one field path or a non-empty array of distinct ones (51186,
//! 51187, 51134, 31465); a target that exists needs a unique, non-partial
//! index whose keys are exactly the `on` fields, in any order, and a target
//! that does not exist can only be matched on `_id` (51183). `whenMatched` is
//! a mode name or an update pipeline (51191), and `let` goes only with a
//! pipeline (51199); `whenNotMatched` is `insert`, `discard` or `fail`.
//! The per-document rules (an `on` value that is missing, null or an array)
//! are applied while merging, by [`on_key`].

use bson::{Bson, Document};

use crate::catalog::Collection;
use crate::error::{EngineError, ErrorCode, Result};
use crate::value;

/// What to do with an input document that matched a target document.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum WhenMatched {
    Replace,
    KeepExisting,
    Merge,
    Fail,
    /// An update pipeline, `$$new` bound to the input document.
    Pipeline(Vec<Document>),
}

/// What to do with an input document that matched nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum WhenNotMatched {
    Insert,
    Discard,
    Fail,
}

/// A parsed `$merge` specification.
#[derive(Debug, Clone)]
pub(super) struct MergeSpec {
    pub db: String,
    pub coll: String,
    /// The `on` fields, `["_id"]` by default.
    pub on: Vec<String>,
    pub when_matched: WhenMatched,
    pub when_not_matched: WhenNotMatched,
    pub let_vars: Option<Document>,
}

const FIELDS: &[&str] = &[
    "into",
    "on",
    "let",
    "whenMatched",
    "whenNotMatched",
    "targetCollectionVersion",
];

fn located(code: i32, msg: impl Into<String>) -> EngineError {
    EngineError::new(ErrorCode(code), msg)
}

fn wrong_type(field: &str, v: &Bson, want: &str) -> EngineError {
    EngineError::new(
        ErrorCode::TYPE_MISMATCH,
        format!(
            "BSON field '$merge.{field}' is the wrong type '{}', expected type '{want}'",
            value::type_alias(v)
        ),
    )
}

impl MergeSpec {
    /// Parse the `$merge` argument; `db` is the command's database.
    pub(super) fn parse(db: &str, spec: &Bson) -> Result<MergeSpec> {
        let spec = match spec {
            Bson::String(s) => bson::doc! {"into": s.clone()},
            Bson::Document(d) => d.clone(),
            other => {
                return Err(located(
                    51182,
                    format!(
                        "$merge only supports a string or object argument, not {}",
                        value::type_alias(other)
                    ),
                ));
            }
        };
        if let Some(k) = spec.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(located(
                40415,
                format!("BSON field '$merge.{k}' is an unknown field."),
            ));
        }
        let (tdb, tcoll) = match spec.get("into") {
            Some(Bson::String(s)) => (db.to_string(), s.clone()),
            Some(Bson::Document(d)) => (
                d.get_str("db").unwrap_or(db).to_string(),
                d.get_str("coll")
                    .map_err(|_| EngineError::failed_to_parse("$merge 'into' requires 'coll'"))?
                    .to_string(),
            ),
            Some(other) => {
                return Err(located(
                    51178,
                    format!(
                        "$merge 'into' field must be either a string or an object, but found {}",
                        value::type_alias(other)
                    ),
                ));
            }
            None => {
                return Err(located(
                    40414,
                    "BSON field '$merge.into' is missing but a required field",
                ));
            }
        };
        let on = match spec.get("on") {
            None => vec!["_id".to_string()],
            Some(Bson::String(s)) => vec![s.clone()],
            Some(Bson::Array(items)) => {
                if items.is_empty() {
                    return Err(located(
                        51187,
                        "If explicitly specifying $merge 'on', must include at least one field",
                    ));
                }
                let mut fields: Vec<String> = Vec::new();
                for item in items {
                    let Bson::String(s) = item else {
                        return Err(located(
                            51134,
                            format!(
                                "$merge 'on' array elements must be strings, but found {}",
                                value::type_alias(item)
                            ),
                        ));
                    };
                    if fields.contains(s) {
                        return Err(located(31465, format!("Found a duplicate field '{s}'")));
                    }
                    fields.push(s.clone());
                }
                fields
            }
            Some(other) => {
                return Err(located(
                    51186,
                    format!(
                        "$merge 'on' field  must be either a string or an array of strings, but found {}",
                        value::type_alias(other)
                    ),
                ));
            }
        };
        let when_matched = match spec.get("whenMatched") {
            None => WhenMatched::Merge,
            Some(Bson::String(s)) => match s.as_str() {
                "replace" => WhenMatched::Replace,
                "keepExisting" => WhenMatched::KeepExisting,
                "merge" => WhenMatched::Merge,
                "fail" => WhenMatched::Fail,
                other => {
                    return Err(EngineError::bad_value(format!(
                        "Enumeration value '{other}' for field 'whenMatched' is not a valid value."
                    )));
                }
            },
            Some(Bson::Array(stages)) => WhenMatched::Pipeline(
                stages
                    .iter()
                    .map(|s| match s {
                        Bson::Document(d) => Ok(d.clone()),
                        other => Err(wrong_type("whenMatched", other, "object")),
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
            Some(other) => {
                return Err(located(
                    51191,
                    format!(
                        "$merge 'whenMatched' field  must be either a string or an array, but found {}",
                        value::type_alias(other)
                    ),
                ));
            }
        };
        let when_not_matched = match spec.get("whenNotMatched") {
            None => WhenNotMatched::Insert,
            Some(Bson::String(s)) => match s.as_str() {
                "insert" => WhenNotMatched::Insert,
                "discard" => WhenNotMatched::Discard,
                "fail" => WhenNotMatched::Fail,
                other => {
                    return Err(EngineError::bad_value(format!(
                        "Enumeration value '{other}' for field 'whenNotMatched' is not a valid value."
                    )));
                }
            },
            Some(other) => return Err(wrong_type("whenNotMatched", other, "string")),
        };
        let let_vars = match spec.get("let") {
            None => None,
            Some(Bson::Document(d)) => Some(d.clone()),
            Some(other) => return Err(wrong_type("let", other, "object")),
        };
        if let_vars.is_some() {
            let mode = match &when_matched {
                WhenMatched::Pipeline(_) => None,
                WhenMatched::Replace => Some("replace"),
                WhenMatched::KeepExisting => Some("keepExisting"),
                WhenMatched::Merge => Some("merge"),
                WhenMatched::Fail => Some("fail"),
            };
            if let Some(mode) = mode {
                return Err(located(
                    51199,
                    format!("Cannot use 'let' variables with 'whenMatched: {mode}' mode"),
                ));
            }
        }
        Ok(MergeSpec {
            db: tdb,
            coll: tcoll,
            on,
            when_matched,
            when_not_matched,
            let_vars,
        })
    }

    /// mongod's check that the `on` fields identify at most one target
    /// document: `target` is the target collection, `None` if it does not
    /// exist.
    pub(super) fn check_unique_on(&self, target: Option<&Collection>) -> Result<()> {
        let is_id = self.on.len() == 1 && self.on[0] == "_id";
        let supported = match target {
            None => is_id,
            Some(c) => c.indexes().iter().any(|i| {
                let spec = &i.spec;
                spec.unique
                    && spec.partial.is_none()
                    && spec.key.len() == self.on.len()
                    && spec
                        .key
                        .iter()
                        .all(|(k, v)| value::is_number(v) && self.on.contains(k))
            }),
        };
        if supported {
            Ok(())
        } else {
            Err(located(
                51183,
                "Cannot find index to verify that join fields will be unique",
            ))
        }
    }
}

/// The `on` key of input document `d`: each `on` field's value, by its
/// dotted path without looking into arrays. A missing `_id` is left out
/// (the document gets a new one); other missing, null or undefined values
/// are 51132, arrays 51185.
pub(super) fn on_key(d: &Document, on: &[String]) -> Result<Document> {
    let mut key = Document::new();
    for field in on {
        let v = nested(d, field);
        match v {
            None if field == "_id" => {}
            Some(Bson::Array(_)) => {
                return Err(located(
                    51185,
                    format!("$merge write error: 'on' field '{field}' is an array"),
                ));
            }
            None | Some(Bson::Null) | Some(Bson::Undefined) => {
                return Err(located(
                    51132,
                    format!(
                        "$merge write error: 'on' field '{field}' cannot be missing, null, undefined or an array"
                    ),
                ));
            }
            Some(v) => {
                key.insert(field.clone(), v.clone());
            }
        }
    }
    Ok(key)
}

/// The value at a dotted path, through documents only.
fn nested<'a>(d: &'a Document, path: &str) -> Option<&'a Bson> {
    let mut parts = path.split('.');
    let mut cur = d.get(parts.next()?)?;
    for p in parts {
        cur = match cur {
            Bson::Document(sub) => sub.get(p)?,
            _ => return None,
        };
    }
    Some(cur)
}
