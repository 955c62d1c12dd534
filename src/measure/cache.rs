//! Bytes read into the cache: per operation ([`CacheRead`]) and the
//! server's `serverStatus().wiredTiger.cache` counters ([`stats`]) that
//! the working-set figure takes deltas of.
//!
//! On the embedded engine the cache is a model (docs/CACHE_MODEL.md), and
//! schemalab can empty it (`setParameter: {schemalabEvictCache: true}`),
//! so an operation's figure is **cold**: what it reads into a cache that
//! holds none of its pages, as after a restart. mongod has no such switch:
//! there the figure is the profiler's `storage.data.bytesRead` of the run,
//! as the server's cache stood, and is marked so (`cold: false`).

use bson::{Bson, Document, doc};
use mongodb::Client;
use serde::{Deserialize, Serialize};

/// Bytes (and pages) one operation read into the cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheRead {
    /// Bytes read into the cache (`storage.data.bytesRead`).
    pub bytes: i64,
    /// Pages read in, when the server counts them (`null` from a profiler).
    #[serde(default)]
    pub pages: Option<i64>,
    /// The cache was emptied first: the operation's cold figure. `false`:
    /// the server's cache stood as it was (a real server's profiler).
    pub cold: bool,
    /// The figure comes from the embedded engine's cache model.
    pub modelled: bool,
}

/// The `wiredTiger.cache` counters the course reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheCounters {
    pub maximum_bytes: i64,
    pub bytes_read: i64,
    pub pages_read: i64,
    /// The section carries `schemalab.modelled`.
    pub modelled: bool,
}

fn int(d: &Document, k: &str) -> Option<i64> {
    match d.get(k)? {
        Bson::Int32(n) => Some(i64::from(*n)),
        Bson::Int64(n) => Some(*n),
        Bson::Double(f) => Some(*f as i64),
        _ => None,
    }
}

/// `serverStatus().wiredTiger.cache`'s counters now.
pub async fn stats(client: &Client) -> Result<CacheCounters, String> {
    let status = client
        .database("admin")
        .run_command(doc! {"serverStatus": 1, "wiredTiger": 1})
        .await
        .map_err(|e| e.to_string())?;
    let cache = status
        .get_document("wiredTiger")
        .and_then(|w| w.get_document("cache"))
        .map_err(|_| "serverStatus has no wiredTiger.cache section".to_string())?;
    let field = |k: &str| int(cache, k).ok_or_else(|| format!("wiredTiger.cache has no '{k}'"));
    Ok(CacheCounters {
        maximum_bytes: field("maximum bytes configured")?,
        bytes_read: field("bytes read into cache")?,
        pages_read: field("pages read into cache")?,
        modelled: cache
            .get_document("schemalab")
            .ok()
            .and_then(|s| s.get_bool("modelled").ok())
            .unwrap_or(false),
    })
}

/// Empty the server's cache (schemalab's `schemalabEvictCache`); an error
/// on a server that has no such switch. One round trip: a caller that
/// needs the counters after asks [`stats`].
pub async fn evict(client: &Client) -> Result<(), String> {
    client
        .database("admin")
        .run_command(doc! {"setParameter": 1, "schemalabEvictCache": true})
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Set the cache's maximum (`wiredTigerEngineRuntimeConfig:
/// "cache_size=<n>B"`), as mongod sets WiredTiger's at run time.
pub async fn set_size(client: &Client, bytes: i64) -> Result<(), String> {
    client
        .database("admin")
        .run_command(doc! {
            "setParameter": 1,
            "wiredTigerEngineRuntimeConfig": format!("cache_size={bytes}B"),
        })
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// What was read in between two readings of the counters.
pub fn delta(before: &CacheCounters, after: &CacheCounters) -> CacheRead {
    CacheRead {
        bytes: (after.bytes_read - before.bytes_read).max(0),
        pages: Some((after.pages_read - before.pages_read).max(0)),
        cold: true,
        modelled: after.modelled,
    }
}

/// `storage.data.bytesRead` of a profiler entry (0 when it has none, as
/// mongod leaves `storage` out of an operation that read nothing in).
fn entry_bytes(e: &Document) -> i64 {
    e.get_document("storage")
        .and_then(|s| s.get_document("data"))
        .ok()
        .and_then(|d| int(d, "bytesRead"))
        .unwrap_or(0)
}

/// The bytes a read's profiler entries read in, summed.
pub fn from_profile(entries: &[Document], cold: bool) -> CacheRead {
    CacheRead {
        bytes: entries.iter().map(entry_bytes).sum(),
        pages: None,
        cold,
        modelled: cold,
    }
}

/// The bytes a write's own commands read in: the profiler's entries but
/// the reads (`query`, `getmore`), which include the snapshots a write
/// without counts is measured by.
pub fn from_write_profile(entries: &[Document], cold: bool) -> CacheRead {
    let writes: Vec<Document> = entries
        .iter()
        .filter(|e| !matches!(e.get_str("op"), Ok("query" | "getmore")))
        .cloned()
        .collect();
    from_profile(&writes, cold)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiler_entries_add_up_and_reads_are_left_out_of_a_write() {
        let entries = vec![
            doc! {"op": "update", "storage": {"data": {"bytesRead": 32768_i64}}},
            doc! {"op": "query", "storage": {"data": {"bytesRead": 1000}}},
            doc! {"op": "insert"},
        ];
        assert_eq!(from_profile(&entries, false).bytes, 33768);
        let w = from_write_profile(&entries, true);
        assert_eq!((w.bytes, w.cold), (32768, true));
    }
}
