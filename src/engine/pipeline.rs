//! Aggregation pipelines: parsing stages and running them over a stream of
//! documents. `$out` and `$merge` are not handled here: the engine splits
//! them off and performs the write itself.

use bson::Document;

use super::error::{EngineError, ErrorCode, Result};
use super::expr::Vars;

/// What a pipeline may read besides its input: other collections of the same
/// database (`$lookup`, `$graphLookup`, `$unionWith`).
pub trait Source {
    /// Every document of `collection`, in record order (empty if absent).
    fn collection_docs(&self, collection: &str) -> Result<Vec<Document>>;
}

/// A parsed pipeline.
#[derive(Debug, Clone)]
pub struct Pipeline {
    stages: Vec<Document>,
}

impl Pipeline {
    /// Parse a pipeline. An unknown stage fails with mongod's error
    /// (code 40324, "Unrecognized pipeline stage name: '$foo'").
    pub fn parse(stages: &[Document]) -> Result<Pipeline> {
        for stage in stages {
            if let Some(name) = stage.keys().next() {
                return Err(EngineError::new(
                    ErrorCode::UNRECOGNIZED_STAGE,
                    format!("Unrecognized pipeline stage name: '{name}'"),
                ));
            }
        }
        Ok(Pipeline {
            stages: stages.to_vec(),
        })
    }

    /// The stages as given.
    pub fn stages(&self) -> &[Document] {
        &self.stages
    }

    /// Run the pipeline over `input`.
    pub fn run(
        &self,
        input: Vec<Document>,
        _source: &dyn Source,
        _vars: &Vars,
    ) -> Result<Vec<Document>> {
        Ok(input)
    }
}
