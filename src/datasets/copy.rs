//! Copying a freshly loaded dataset from one `schemalab_*` database into
//! another on the server, so the variants of an experiment load the seeded
//! dataset once: each collection goes through
//! `aggregate([{ $out: { db, coll } }])` (mongod 4.4 and later, and the
//! embedded engine), which writes the documents in the order it reads them.
//!
//! Only what a load makes is copied: plain collections, no options, no
//! index but `_id`. Anything else is refused before the target is touched,
//! so a caller can fall back to loading.

use bson::{Document, RawDocumentBuf, doc};
use futures_util::TryStreamExt;
use mongodb::Client;

use super::DatasetError;
use super::load::check_db_name;

/// Replaces database `dst` with a copy of every collection of `src`: the
/// same documents in the same natural order, empty collections too, only
/// the `_id` index. Both names must pass [`check_db_name`]. Fails with
/// [`DatasetError::NotCopyable`], before `dst` is dropped, when `src` holds
/// something a load does not make (a view, collection options, another
/// index).
pub async fn copy_database(client: &Client, src: &str, dst: &str) -> Result<(), DatasetError> {
    check_db_name(src)?;
    check_db_name(dst)?;
    let refuse = |reason: String| DatasetError::NotCopyable {
        src: src.to_string(),
        dst: dst.to_string(),
        reason,
    };
    if src == dst {
        return Err(refuse("a database cannot be copied onto itself".into()));
    }
    let source = client.database(src);
    let specs: Vec<Document> = source
        .run_cursor_command(doc! { "listCollections": 1 })
        .await?
        .with_type::<Document>()
        .try_collect()
        .await?;
    let mut names = Vec::with_capacity(specs.len());
    for spec in &specs {
        let name = spec
            .get_str("name")
            .map_err(|_| refuse("listCollections gave an entry without a name".into()))?;
        if spec.get_str("type").unwrap_or("collection") != "collection" {
            return Err(refuse(format!("{name} is not a plain collection")));
        }
        if spec.get_document("options").is_ok_and(|o| !o.is_empty()) {
            return Err(refuse(format!("{name} was created with options")));
        }
        let indexes = source
            .collection::<RawDocumentBuf>(name)
            .list_index_names()
            .await?;
        if indexes != ["_id_"] {
            return Err(refuse(format!(
                "{name} has indexes other than _id ({})",
                indexes.join(", ")
            )));
        }
        names.push(name.to_string());
    }
    let target = client.database(dst);
    target.drop().await?;
    for name in &names {
        source
            .collection::<RawDocumentBuf>(name)
            .aggregate([doc! { "$out": { "db": dst, "coll": name } }])
            .await?;
    }
    // `$out` of nothing may leave no collection behind: a load leaves an
    // empty one.
    let made = target.list_collection_names().await?;
    for name in &names {
        if !made.contains(name) {
            target.create_collection(name).await?;
        }
    }
    Ok(())
}
