//! The catalog: databases, collections and their records.

use bson::{Bson, Document};

use super::CreateIndexesOutcome;
use super::error::{EngineError, Result};

/// Every database of the engine.
#[derive(Debug, Default)]
pub struct Catalog {}

impl Catalog {
    pub fn create_indexes(
        &mut self,
        _db: &str,
        _coll: &str,
        _specs: &[Document],
    ) -> Result<CreateIndexesOutcome> {
        Err(EngineError::not_implemented("createIndexes"))
    }
    pub fn list_indexes(&self, _db: &str, _coll: &str) -> Result<Vec<Document>> {
        Err(EngineError::not_implemented("listIndexes"))
    }
    pub fn drop_indexes(&mut self, _db: &str, _coll: &str, _which: &Bson) -> Result<usize> {
        Err(EngineError::not_implemented("dropIndexes"))
    }
    pub fn create_collection(&mut self, _db: &str, _coll: &str, _options: &Document) -> Result<()> {
        Err(EngineError::not_implemented("create"))
    }
    pub fn drop_collection(&mut self, _db: &str, _coll: &str) -> bool {
        false
    }
    pub fn drop_database(&mut self, _db: &str) -> bool {
        false
    }
    pub fn list_collections(&self, _db: &str, _filter: &Document) -> Result<Vec<Document>> {
        Ok(vec![])
    }
    pub fn list_databases(&self) -> Vec<Document> {
        vec![]
    }
    pub fn rename_collection(&mut self, _from: &str, _to: &str, _drop_target: bool) -> Result<()> {
        Err(EngineError::not_implemented("renameCollection"))
    }
    pub fn coll_stats(&self, _db: &str, _coll: &str, _scale: i64) -> Result<Document> {
        Err(EngineError::not_implemented("collStats"))
    }
    pub fn db_stats(&self, _db: &str, _scale: i64) -> Result<Document> {
        Err(EngineError::not_implemented("dbStats"))
    }
    pub fn expire_ttl(&mut self, _now: bson::DateTime) -> u64 {
        0
    }
}
