//! Updates: replacement documents, update operators (`$set`, `$push` with
//! modifiers, positional `$`, `$[]`, `$[<id>]` with arrayFilters, …) and
//! update pipelines, applied to one document at a time.

use bson::{Bson, Document};

use super::collation::Collation;
use super::error::{EngineError, Result};
use super::expr::Vars;

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

/// A parsed update.
#[derive(Debug, Clone)]
pub struct Update {
    source: Bson,
}

impl Update {
    /// Parse an update: a replacement document, an operator document or a
    /// pipeline (array). `array_filters` are the `arrayFilters` option.
    pub fn parse(
        update: &Bson,
        _array_filters: &[Document],
        _collation: Option<&Collation>,
    ) -> Result<Update> {
        Ok(Update {
            source: update.clone(),
        })
    }

    /// Whether this is a replacement document.
    pub fn is_replacement(&self) -> bool {
        matches!(&self.source, Bson::Document(d) if d.keys().next().is_none_or(|k| !k.starts_with('$')))
    }

    /// Apply to `doc` in place; returns whether the document changed.
    pub fn apply(&self, _doc: &mut Document, _ctx: &ApplyContext<'_>) -> Result<bool> {
        Err(EngineError::not_implemented("updates"))
    }
}

/// The document an upsert starts from: the filter's equality fields (dotted
/// paths expanded into subdocuments, `_id` included). Conflicting paths fail
/// as mongod does.
pub fn upsert_seed(_filter: &Document) -> Result<Document> {
    Ok(Document::new())
}
