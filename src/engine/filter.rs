//! The query language: parsing a filter document into a typed predicate tree
//! and matching documents against it with mongod's semantics (implicit array
//! traversal, numeric path components, type bracketing, null versus missing).

use bson::{Bson, Document};

use super::collation::Collation;
use super::error::{EngineError, Result};
use super::expr::Vars;

/// The outcome of matching one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchDetails {
    /// Whether the document matched.
    pub matched: bool,
    /// For the positional `$` operator (update and projection): the index of
    /// the first array element that satisfied the query along an array path.
    pub array_position: Option<usize>,
}

/// A parsed filter.
#[derive(Debug, Clone)]
pub struct Filter {
    source: Document,
    collation: Option<Collation>,
}

impl Filter {
    /// Parse a filter document. Unknown operators fail with BadValue (2)
    /// "unknown operator: $foo"; unsupported ones ($where, $text, geo) with
    /// a clear not-supported error.
    pub fn parse(query: &Document, collation: Option<&Collation>) -> Result<Filter> {
        Ok(Filter {
            source: query.clone(),
            collation: collation.cloned(),
        })
    }

    /// The filter as given.
    pub fn source(&self) -> &Document {
        &self.source
    }

    /// Whether the filter matches every document (`{}`).
    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }

    /// Match a document.
    pub fn matches(&self, doc: &Document, vars: &Vars) -> Result<bool> {
        Ok(self.match_details(doc, vars)?.matched)
    }

    /// Match a document, also reporting the matched array position.
    pub fn match_details(&self, _doc: &Document, _vars: &Vars) -> Result<MatchDetails> {
        if self.source.is_empty() {
            return Ok(MatchDetails {
                matched: true,
                array_position: None,
            });
        }
        Err(EngineError::not_implemented("query filters"))
    }

    /// The top-level equality conditions (`{a: 1}`, `{a: {$eq: 1}}`, and those
    /// inside a top-level `$and`), as (path, value) pairs: what an upsert
    /// seeds its new document with and what an index can look up directly.
    pub fn equalities(&self) -> Vec<(String, Bson)> {
        Vec::new()
    }
}
