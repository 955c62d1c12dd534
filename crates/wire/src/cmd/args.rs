//! Reading command fields with mongod's type rules and error messages.
//!
//! mongod's IDL parser complains as `BSON field 'find.filter' is the wrong
//! type 'string', expected type 'object'` (TypeMismatch, 14); numeric fields
//! accept any number type, boolean fields accept numbers too.

use bson::{Bson, Document};

use super::CommandDoc;
use schemalab_engine::value::{as_i64, type_alias};
use schemalab_engine::{EngineError, ErrorCode, Result};

/// TypeMismatch for `field` holding `value` where `expected` was wanted
/// (`expected` is already quoted, e.g. `'object'` or `[long, int]`).
pub fn wrong_type(field: &str, value: &Bson, expected: &str) -> EngineError {
    let expected = if expected.starts_with('[') {
        format!("types {expected}")
    } else {
        format!("type {expected}")
    };
    EngineError::type_mismatch(format!(
        "BSON field '{field}' is the wrong type '{}', expected {expected}",
        type_alias(value)
    ))
}

/// A required field that is missing (IDLFailedToParse, 40414).
pub fn missing(field: &str) -> EngineError {
    EngineError::new(
        ErrorCode(40414),
        format!("BSON field '{field}' is missing but a required field"),
    )
}

/// The collection named by the command's first field.
pub fn collection(cmd: &CommandDoc, command: &str) -> Result<String> {
    match cmd.body.get(command) {
        Some(Bson::String(name)) if !name.is_empty() => Ok(name.clone()),
        Some(Bson::String(_)) => Err(EngineError::new(
            ErrorCode::INVALID_NAMESPACE,
            format!("Invalid namespace specified '{}.'", cmd.db),
        )),
        Some(other) => Err(EngineError::new(
            ErrorCode::INVALID_NAMESPACE,
            format!("collection name has invalid type {}", type_alias(other)),
        )),
        None => Err(missing(command)),
    }
}

/// An optional sub-document.
pub fn doc(cmd: &CommandDoc, command: &str, field: &str) -> Result<Option<Document>> {
    match cmd.body.get(field) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::Document(d)) => Ok(Some(d.clone())),
        Some(other) => Err(wrong_type(&format!("{command}.{field}"), other, "'object'")),
    }
}

/// An optional sub-document inside a statement (`updates.0.q`...).
pub fn doc_in(d: &Document, path: &str, field: &str) -> Result<Option<Document>> {
    match d.get(field) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::Document(d)) => Ok(Some(d.clone())),
        Some(other) => Err(wrong_type(&format!("{path}.{field}"), other, "'object'")),
    }
}

/// An optional boolean; numbers count as booleans, as in mongod.
pub fn bool_in(d: &Document, path: &str, field: &str) -> Result<Option<bool>> {
    match d.get(field) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::Boolean(b)) => Ok(Some(*b)),
        Some(v @ (Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_))) => Ok(
            Some(schemalab_engine::value::as_f64(v).is_some_and(|f| f != 0.0)),
        ),
        Some(other) => Err(wrong_type(&format!("{path}.{field}"), other, "'bool'")),
    }
}

/// An optional boolean field of the command.
pub fn bool(cmd: &CommandDoc, command: &str, field: &str) -> Result<Option<bool>> {
    bool_in(&cmd.body, command, field)
}

/// An optional integer of any numeric type.
pub fn int_in(d: &Document, path: &str, field: &str) -> Result<Option<i64>> {
    match d.get(field) {
        None | Some(Bson::Null) => Ok(None),
        Some(v @ (Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_))) => {
            match as_i64(v) {
                Some(i) => Ok(Some(i)),
                None => Err(EngineError::bad_value(format!(
                    "BSON field '{path}.{field}' value must be an integer"
                ))),
            }
        }
        Some(other) => Err(wrong_type(
            &format!("{path}.{field}"),
            other,
            "'[long, int, decimal, double]'",
        )),
    }
}

/// An optional integer field of the command.
pub fn int(cmd: &CommandDoc, command: &str, field: &str) -> Result<Option<i64>> {
    int_in(&cmd.body, command, field)
}

/// An optional non-negative integer (`skip`, `batchSize`).
pub fn non_negative(cmd: &CommandDoc, command: &str, field: &str) -> Result<Option<i64>> {
    let value = int(cmd, command, field)?;
    if let Some(v) = value
        && v < 0
    {
        return Err(EngineError::bad_value(format!(
            "BSON field '{field}' value must be >= 0, actual value '{v}'"
        )));
    }
    Ok(value)
}

/// An optional array of documents.
pub fn docs_in(d: &Document, path: &str, field: &str) -> Result<Option<Vec<Document>>> {
    match d.get(field) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Bson::Document(d) => Ok(d.clone()),
                other => Err(wrong_type(
                    &format!("{path}.{field}.{i}"),
                    other,
                    "'object'",
                )),
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(other) => Err(wrong_type(&format!("{path}.{field}"), other, "'array'")),
    }
}

/// An optional array of documents in the command.
pub fn docs(cmd: &CommandDoc, command: &str, field: &str) -> Result<Option<Vec<Document>>> {
    docs_in(&cmd.body, command, field)
}

/// An optional string field.
pub fn string(cmd: &CommandDoc, command: &str, field: &str) -> Result<Option<String>> {
    match cmd.body.get(field) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(wrong_type(&format!("{command}.{field}"), other, "'string'")),
    }
}

/// The `cursor.batchSize` of a cursor-returning command (`aggregate`,
/// `listCollections`, `listIndexes`).
pub fn cursor_batch_size(cmd: &CommandDoc, command: &str) -> Result<Option<usize>> {
    let Some(cursor) = doc(cmd, command, "cursor")? else {
        return Ok(None);
    };
    let size = int_in(&cursor, &format!("{command}.cursor"), "batchSize")?;
    match size {
        Some(s) if s < 0 => Err(EngineError::bad_value(format!(
            "BSON field 'batchSize' value must be >= 0, actual value '{s}'"
        ))),
        Some(s) => Ok(Some(usize::try_from(s).unwrap_or(usize::MAX))),
        None => Ok(None),
    }
}

/// `hint`: an index name or key pattern.
pub fn hint(d: &Document, path: &str) -> Result<Option<Bson>> {
    match d.get("hint") {
        None | Some(Bson::Null) => Ok(None),
        Some(h @ (Bson::String(_) | Bson::Document(_))) => Ok(Some(h.clone())),
        Some(other) => Err(wrong_type(
            &format!("{path}.hint"),
            other,
            "'[string, object]'",
        )),
    }
}

/// Fields any command may carry that say nothing about what it does: they
/// are accepted and ignored (the engine has no sessions, replication or
/// API versioning to honour).
pub const GENERIC_FIELDS: &[&str] = &[
    "$db",
    "lsid",
    "$clusterTime",
    "$readPreference",
    "readConcern",
    "writeConcern",
    "apiVersion",
    "apiStrict",
    "apiDeprecationErrors",
    "comment",
    "maxTimeMS",
    "recoveryToken",
    "$client",
    "$audit",
    "mayBypassWriteBlocking",
    "bypassDocumentValidation",
];

/// Generic arguments mongod's IDL accepts on every command besides
/// [`GENERIC_FIELDS`]: internal, sharding and replication fields a driver
/// or a router may attach. They are ignored, never refused.
const IDL_GENERIC_FIELDS: &[&str] = &[
    "txnNumber",
    "autocommit",
    "startTransaction",
    "stmtId",
    "$configServerState",
    "$configTime",
    "$topologyTime",
    "$gleStats",
    "$oplogQueryData",
    "$queryOptions",
    "$replData",
    "databaseVersion",
    "shardVersion",
    "allowImplicitCollectionCreation",
    "clientOperationKey",
    "tracking_info",
    "coordinator",
    "help",
    "usesDefaultMaxTimeMS",
    "versionContext",
];

/// mongod's IDL refusal of a field a command does not define (40415).
pub fn unknown_field(path: &str, field: &str) -> EngineError {
    EngineError::new(
        ErrorCode(40415),
        format!("BSON field '{path}.{field}' is an unknown field."),
    )
}

/// Refuse (40415) any top-level field of `cmd` other than its name, the
/// generic arguments and `known`, as mongod's IDL parser does.
pub fn reject_unknown(cmd: &CommandDoc, command: &str, known: &[&str]) -> Result<()> {
    for key in cmd.body.keys().skip(1) {
        let k = key.as_str();
        if !known.contains(&k) && !GENERIC_FIELDS.contains(&k) && !IDL_GENERIC_FIELDS.contains(&k) {
            return Err(unknown_field(command, k));
        }
    }
    Ok(())
}

/// Refuse (40415) any field of a statement (`updates.N`, `deletes.N`)
/// outside `known`.
pub fn reject_unknown_in(d: &Document, path: &str, known: &[&str]) -> Result<()> {
    match d.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(unknown_field(path, k)),
        None => Ok(()),
    }
}

/// The command's fields other than its name and the generic ones.
pub fn options(cmd: &CommandDoc) -> Document {
    cmd.body
        .iter()
        .skip(1)
        .filter(|(k, _)| !GENERIC_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
