//! Snapshots of a database's documents, to measure a write by what it
//! changed when its reply has no counts: each document of each collection
//! (but `system.*`) as its collection and `_id` → a digest of its bytes.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use bson::{Bson, doc};
use futures_util::TryStreamExt;
use mongodb::Client;

use super::figures::WriteMetrics;

/// Collection and `_id` (as mongosh prints it) → a digest of the bytes.
pub type Snapshot = BTreeMap<(String, String), u64>;

/// Every document of `db`, digested.
pub async fn snapshot(client: &Client, db: &str) -> Result<Snapshot, String> {
    let database = client.database(db);
    let mut out = Snapshot::new();
    let names = database
        .list_collection_names()
        .await
        .map_err(|e| e.to_string())?;
    for name in names.into_iter().filter(|n| !n.starts_with("system.")) {
        let mut cursor = database
            .collection::<bson::RawDocumentBuf>(&name)
            .find(doc! {})
            .await
            .map_err(|e| e.to_string())?;
        while let Some(raw) = cursor.try_next().await.map_err(|e| e.to_string())? {
            let id = raw
                .get("_id")
                .ok()
                .flatten()
                .and_then(|v| v.to_raw_bson().try_into().ok())
                .map_or_else(String::new, |b: Bson| crate::dialect::print::inspect(&b));
            let mut h = std::collections::hash_map::DefaultHasher::new();
            raw.as_bytes().hash(&mut h);
            out.insert((name.clone(), id), h.finish());
        }
    }
    Ok(out)
}

/// What changed between two snapshots, as a write's figures: `n` counts
/// the documents inserted, changed or removed, `nModified` the changed.
pub fn effect(before: &Snapshot, after: &Snapshot) -> WriteMetrics {
    let changed = after
        .iter()
        .filter(|(k, h)| before.get(*k).is_some_and(|b| b != *h))
        .count() as i64;
    let inserted = after.keys().filter(|k| !before.contains_key(*k)).count() as i64;
    let removed = before.keys().filter(|k| !after.contains_key(*k)).count() as i64;
    WriteMetrics {
        n: changed + inserted + removed,
        n_modified: changed,
        n_upserted: 0,
        keys_inserted: None,
        keys_deleted: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(items: &[(&str, &str, u64)]) -> Snapshot {
        items
            .iter()
            .map(|(c, id, h)| ((c.to_string(), id.to_string()), *h))
            .collect()
    }

    #[test]
    fn an_effect_counts_inserted_changed_and_removed_documents() {
        let before = snap(&[("a", "1", 10), ("a", "2", 20), ("b", "1", 30)]);
        let after = snap(&[
            ("a", "1", 10),
            ("a", "2", 21),
            ("b", "2", 40),
            ("b", "3", 50),
        ]);
        let w = effect(&before, &after);
        // Changed a/2; inserted b/2, b/3; removed b/1.
        assert_eq!((w.n, w.n_modified), (4, 1));
        assert_eq!(effect(&after, &after).n, 0);
    }
}
