//! The limits the engine enforces on what a client sends and on what a
//! command may build, each with mongod 7.0's value and error.
//!
//! Every walk of the engine that recurses over a document, a path or an
//! expression relies on these bounds: requests deeper than
//! [`MAX_BSON_DEPTH`] are refused at the door (wire layer), paths longer
//! than it are refused where they are parsed, values built at run time are
//! checked where they grow ($reduce, between stages), and nothing deeper than
//! [`MAX_USER_STORAGE_DEPTH`] is ever stored. The checks here are iterative,
//! so they cannot themselves overflow the stack. COMPAT.md lists every limit.

use bson::{Bson, Document, RawBsonRef, RawDocument};

use super::error::{EngineError, ErrorCode, Result};

/// mongod's `BSONDepth::kDefaultMaxAllowableDepth` (`maxBSONDepth`): the
/// deepest BSON a server accepts or produces.
pub const MAX_BSON_DEPTH: usize = 200;

/// mongod's `BSONDepth::getMaxDepthForUserStorage()`: 200 minus 20 levels
/// kept for system use. Deeper documents are never stored.
pub const MAX_USER_STORAGE_DEPTH: usize = 180;

/// mongod's error for a match-expression path longer than
/// [`MAX_USER_STORAGE_DEPTH`] parts.
pub const MATCH_PATH_TOO_LONG: ErrorCode = ErrorCode(5729100);

/// The nesting depth of a document (`{}` is 1, `{a: {}}` is 2), or `None`
/// once it exceeds `limit`. Iterative.
pub fn raw_depth_within(doc: &RawDocument, limit: usize) -> Option<usize> {
    let mut stack = vec![doc.into_iter()];
    let mut max = 1;
    while let Some(top) = stack.last_mut() {
        match top.next() {
            None => {
                stack.pop();
            }
            Some(Ok((_, value))) => {
                let child = match value {
                    RawBsonRef::Document(d) => Some(d),
                    RawBsonRef::Array(a) => RawDocument::from_bytes(a.as_bytes()).ok(),
                    RawBsonRef::JavaScriptCodeWithScope(c) => Some(c.scope),
                    _ => None,
                };
                if let Some(child) = child {
                    if stack.len() >= limit {
                        return None;
                    }
                    stack.push(child.into_iter());
                    max = max.max(stack.len());
                }
            }
            // Malformed bytes are the parser's to report.
            Some(Err(_)) => {
                stack.pop();
            }
        }
    }
    Some(max)
}

/// Whether `value` nests more than `limit` documents or arrays (a scalar
/// has depth 0, `{}` and `[]` depth 1). Iterative.
pub fn bson_exceeds(value: &Bson, limit: usize) -> bool {
    let mut stack: Vec<(&Bson, usize)> = vec![(value, 0)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Bson>> = match v {
            Bson::Document(d) => Box::new(d.values()),
            Bson::Array(a) => Box::new(a.iter()),
            _ => continue,
        };
        if depth + 1 > limit {
            return true;
        }
        for c in children {
            if matches!(c, Bson::Document(_) | Bson::Array(_)) {
                stack.push((c, depth + 1));
            }
        }
    }
    false
}

/// Whether a document nests deeper than `limit` (the document itself is
/// level 1).
pub fn doc_exceeds(doc: &Document, limit: usize) -> bool {
    limit == 0 || doc.values().any(|v| bson_exceeds(v, limit - 1))
}

/// A request document deeper than mongod accepts off the network.
pub fn check_request_depth(doc: &RawDocument) -> Result<()> {
    match raw_depth_within(doc, MAX_BSON_DEPTH) {
        Some(_) => Ok(()),
        None => Err(EngineError::new(
            ErrorCode::OVERFLOW,
            format!("BSONObj exceeds maximum nested object depth: {MAX_BSON_DEPTH}"),
        )),
    }
}

/// An inserted document deeper than mongod stores (its `fixDocumentForInsert`).
pub fn check_insert_depth(doc: &RawDocument) -> Result<()> {
    match raw_depth_within(doc, MAX_USER_STORAGE_DEPTH) {
        Some(_) => Ok(()),
        None => Err(EngineError::new(
            ErrorCode::OVERFLOW,
            format!(
                "cannot insert document because it exceeds {MAX_USER_STORAGE_DEPTH} levels of nesting"
            ),
        )),
    }
}

/// An updated (or replacing, or upserted) document deeper than mongod
/// stores (its update storage validation).
pub fn check_update_depth(doc: &Document) -> Result<()> {
    if doc_exceeds(doc, MAX_USER_STORAGE_DEPTH) {
        return Err(update_too_deep());
    }
    Ok(())
}

/// mongod's storage-validation error for an update result that nests too
/// deep.
pub fn update_too_deep() -> EngineError {
    EngineError::new(
        ErrorCode::OVERFLOW,
        format!("Document exceeds maximum nesting depth of {MAX_USER_STORAGE_DEPTH}"),
    )
}

/// mongod's error when a document built by an expression or a stage is too
/// deep to become BSON.
pub fn output_too_deep() -> EngineError {
    EngineError::new(
        ErrorCode::OVERFLOW,
        format!(
            "cannot convert document to BSON because it exceeds the limit of {MAX_BSON_DEPTH} levels of nesting"
        ),
    )
}

/// A document produced by a stage or an expression must fit in BSON's
/// depth.
pub fn check_output_depth(doc: &Document) -> Result<()> {
    if doc_exceeds(doc, MAX_BSON_DEPTH) {
        return Err(output_too_deep());
    }
    Ok(())
}

/// A value produced at run time (by `$reduce`, say) nests deeper than any
/// document may.
pub fn check_value_depth(value: &Bson) -> Result<()> {
    if bson_exceeds(value, MAX_BSON_DEPTH) {
        return Err(output_too_deep());
    }
    Ok(())
}

/// Number of parts of a dotted path.
fn parts(path: &str) -> usize {
    path.bytes().filter(|&b| b == b'.').count() + 1
}

/// An aggregation field path (`$a.b`, a `$project`/`$addFields` key, a sort
/// key) longer than mongod's `FieldPath` allows.
pub fn check_field_path(path: &str) -> Result<()> {
    if parts(path) > MAX_BSON_DEPTH {
        return Err(EngineError::new(
            ErrorCode::OVERFLOW,
            "FieldPath is too long",
        ));
    }
    Ok(())
}

/// A query-filter path longer than mongod's match-expression parser allows.
pub fn check_match_path(path: &str) -> Result<()> {
    if parts(path) > MAX_USER_STORAGE_DEPTH {
        return Err(EngineError::new(
            MATCH_PATH_TOO_LONG,
            "FieldPath is too long",
        ));
    }
    Ok(())
}

/// An update path that, if created, would nest deeper than mongod stores.
pub fn check_update_path(path: &str) -> Result<()> {
    if parts(path) > MAX_USER_STORAGE_DEPTH {
        return Err(update_too_deep());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bson::{RawDocumentBuf, doc};

    fn nested(depth: usize) -> Document {
        let mut d = doc! {"x": 1};
        for _ in 1..depth {
            d = doc! {"a": d};
        }
        d
    }

    #[test]
    fn depths_count_like_mongod() {
        let raw = RawDocumentBuf::from_document(&nested(180)).unwrap();
        assert_eq!(raw_depth_within(&raw, 180), Some(180));
        assert!(check_insert_depth(&raw).is_ok());
        let raw = RawDocumentBuf::from_document(&nested(181)).unwrap();
        assert_eq!(raw_depth_within(&raw, 180), None);
        assert_eq!(
            check_insert_depth(&raw).unwrap_err().code,
            ErrorCode::OVERFLOW
        );
        assert!(!doc_exceeds(&nested(180), 180));
        assert!(doc_exceeds(&nested(181), 180));
        assert!(check_update_depth(&nested(181)).is_err());
        assert!(!bson_exceeds(&Bson::Array(vec![]), 1));
        assert!(bson_exceeds(&Bson::Array(vec![Bson::Array(vec![])]), 1));
    }

    #[test]
    fn path_lengths() {
        let p = vec!["a"; 200].join(".");
        assert!(check_field_path(&p).is_ok());
        assert!(check_field_path(&format!("{p}.a")).is_err());
        let p = vec!["a"; 181].join(".");
        assert_eq!(check_match_path(&p).unwrap_err().code, MATCH_PATH_TOO_LONG);
    }
}
