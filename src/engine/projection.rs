//! Find projections: inclusion, exclusion, dotted paths, the positional `$`,
//! `$slice` and `$elemMatch`.

use bson::Document;

use super::error::{EngineError, Result};
use super::expr::Vars;

/// A parsed projection.
#[derive(Debug, Clone)]
pub struct Projection {
    source: Document,
}

impl Projection {
    /// Parse a projection document; mixing inclusion and exclusion (other
    /// than `_id`) fails with mongod's error.
    pub fn parse(spec: &Document) -> Result<Projection> {
        Ok(Projection {
            source: spec.clone(),
        })
    }

    /// Whether the projection uses the positional `$` operator and therefore
    /// needs the matched array position from the filter.
    pub fn needs_position(&self) -> bool {
        false
    }

    /// Project one document. `array_position` comes from
    /// [`super::filter::MatchDetails`].
    pub fn apply(
        &self,
        doc: &Document,
        _array_position: Option<usize>,
        _vars: &Vars,
    ) -> Result<Document> {
        if self.source.is_empty() {
            return Ok(doc.clone());
        }
        Err(EngineError::not_implemented("projections"))
    }
}
