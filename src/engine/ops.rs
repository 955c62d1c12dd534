//! The CRUD and aggregation operations over the catalog.

use bson::{Bson, Document, RawDocumentBuf};

use super::catalog::Catalog;
use super::error::{EngineError, Result};
use super::*;

pub(super) fn insert(
    _c: &mut Catalog,
    _db: &str,
    _coll: &str,
    _docs: Vec<RawDocumentBuf>,
    _ordered: bool,
) -> Result<InsertOutcome> {
    Err(EngineError::not_implemented("insert"))
}
pub(super) fn find(
    _c: &Catalog,
    _db: &str,
    _coll: &str,
    _req: &FindRequest,
    _now: bson::DateTime,
) -> Result<Vec<Document>> {
    Err(EngineError::not_implemented("find"))
}
pub(super) fn update(
    _c: &mut Catalog,
    _db: &str,
    _coll: &str,
    _s: &[UpdateStatement],
    _ordered: bool,
    _now: bson::DateTime,
) -> Result<UpdateOutcome> {
    Err(EngineError::not_implemented("update"))
}
pub(super) fn delete(
    _c: &mut Catalog,
    _db: &str,
    _coll: &str,
    _s: &[DeleteStatement],
    _ordered: bool,
    _now: bson::DateTime,
) -> Result<DeleteOutcome> {
    Err(EngineError::not_implemented("delete"))
}
pub(super) fn find_and_modify(
    _c: &mut Catalog,
    _db: &str,
    _coll: &str,
    _r: &FindAndModifyRequest,
    _now: bson::DateTime,
) -> Result<FindAndModifyOutcome> {
    Err(EngineError::not_implemented("findAndModify"))
}
pub(super) fn pipeline_writes(pipeline: &[Document]) -> bool {
    pipeline
        .last()
        .and_then(|s| s.keys().next())
        .is_some_and(|k| k == "$out" || k == "$merge")
}
pub(super) fn aggregate_write(
    _c: &mut Catalog,
    _db: &str,
    _coll: Option<&str>,
    _p: &[Document],
    _o: &AggregateOptions,
    _now: bson::DateTime,
) -> Result<Vec<Document>> {
    Err(EngineError::not_implemented("aggregate"))
}
pub(super) fn aggregate(
    _c: &Catalog,
    _db: &str,
    _coll: Option<&str>,
    _p: &[Document],
    _o: &AggregateOptions,
    _now: bson::DateTime,
) -> Result<Vec<Document>> {
    Err(EngineError::not_implemented("aggregate"))
}
pub(super) fn count(
    _c: &Catalog,
    _db: &str,
    _coll: &str,
    _r: &CountRequest,
    _now: bson::DateTime,
) -> Result<u64> {
    Err(EngineError::not_implemented("count"))
}
#[allow(clippy::too_many_arguments)]
pub(super) fn distinct(
    _c: &Catalog,
    _db: &str,
    _coll: &str,
    _key: &str,
    _f: &Document,
    _col: Option<&Document>,
    _now: bson::DateTime,
) -> Result<Vec<Bson>> {
    Err(EngineError::not_implemented("distinct"))
}
