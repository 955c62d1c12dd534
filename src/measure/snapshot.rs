//! Snapshots of documents, to measure a write by what it changed when its
//! reply has no counts: each document of the collection the write names
//! (findAndModify's, `$out`'s or `$merge`'s target), or of every
//! collection of its database (but `system.*`) when it names none, as its
//! collection and `_id` → a digest of its bytes.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;
use mongodb::Client;

use super::figures::WriteMetrics;

/// Collection and `_id` (as mongosh prints it) → a digest of the bytes.
pub type Snapshot = BTreeMap<(String, String), u64>;

/// What a write without counts can change: one collection when the
/// command names it (findAndModify's collection, the target of `$out` or
/// `$merge`), else every collection of its database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub db: String,
    pub coll: Option<String>,
}

impl Scope {
    /// The scope of `cmd`, sent to `db`.
    pub fn of(db: &str, cmd: &Document) -> Scope {
        let whole = Scope {
            db: db.to_string(),
            coll: None,
        };
        let Some(name) = cmd.keys().next() else {
            return whole;
        };
        let target = match name.as_str() {
            "findAndModify" | "findandmodify" => cmd.get_str(name).ok().map(|c| (None, c)),
            "aggregate" => cmd
                .get_array("pipeline")
                .ok()
                .and_then(|p| p.last())
                .and_then(Bson::as_document)
                .and_then(|last| {
                    let spec = last.get("$out").or_else(|| {
                        last.get_document("$merge")
                            .ok()
                            .and_then(|m| m.get("into"))
                            .or_else(|| last.get("$merge"))
                    })?;
                    match spec {
                        Bson::String(c) => Some((None, c.as_str())),
                        Bson::Document(d) => Some((d.get_str("db").ok(), d.get_str("coll").ok()?)),
                        _ => None,
                    }
                }),
            _ => None,
        };
        match target {
            Some((other_db, coll)) => Scope {
                db: other_db.unwrap_or(db).to_string(),
                coll: Some(coll.to_string()),
            },
            None => whole,
        }
    }
}

/// Every document in `scope`, digested.
pub async fn snapshot(client: &Client, scope: &Scope) -> Result<Snapshot, String> {
    let database = client.database(&scope.db);
    let mut out = Snapshot::new();
    let names = match &scope.coll {
        Some(c) => vec![c.clone()],
        None => database
            .list_collection_names()
            .await
            .map_err(|e| e.to_string())?,
    };
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
    fn a_write_is_snapshot_where_it_can_change_documents() {
        let scope = |cmd: Document| Scope::of("d", &cmd);
        let one = |db: &str, c: &str| Scope {
            db: db.into(),
            coll: Some(c.into()),
        };
        assert_eq!(
            scope(doc! {"findAndModify": "a", "query": {}}),
            one("d", "a")
        );
        assert_eq!(
            scope(doc! {"aggregate": "a", "pipeline": [{"$match": {}}, {"$out": "b"}]}),
            one("d", "b")
        );
        assert_eq!(
            scope(doc! {"aggregate": "a", "pipeline": [{"$merge": {"into": "c", "on": "_id"}}]}),
            one("d", "c")
        );
        assert_eq!(
            scope(doc! {"aggregate": "a", "pipeline": [{"$merge": "c"}]}),
            one("d", "c")
        );
        assert_eq!(
            scope(
                doc! {"aggregate": "a", "pipeline": [{"$merge": {"into": {"db": "e", "coll": "c"}}}]}
            ),
            one("e", "c")
        );
        assert_eq!(
            scope(doc! {"aggregate": "a", "pipeline": [{"$out": {"db": "e", "coll": "c"}}]}),
            one("e", "c")
        );
        assert_eq!(scope(doc! {"insert": "a"}).coll, None);
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
