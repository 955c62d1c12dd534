//! The profiler around a write: switched on (level 2) before it runs,
//! then off, its fresh entries taken and `system.profile` dropped, so the
//! next operation starts afresh (mongod allows the drop once profiling is
//! off).

use futures_util::TryStreamExt;
use mongodb::Client;

/// Profile every operation on `db` from now on.
pub async fn start(client: &Client, db: &str) -> Result<(), String> {
    client
        .database(db)
        .run_command(bson::doc! {"profile": 2})
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Stop profiling `db` and take the entries recorded since the last take
/// (`seen` of them were there before); `None` when the profiler cannot be
/// read.
pub async fn take(client: &Client, db: &str, seen: &mut usize) -> Option<Vec<bson::Document>> {
    let database = client.database(db);
    database.run_command(bson::doc! {"profile": 0}).await.ok()?;
    let entries: Vec<bson::Document> = database
        .collection::<bson::Document>("system.profile")
        .find(bson::doc! {})
        .await
        .ok()?
        .try_collect()
        .await
        .unwrap_or_default();
    let fresh = entries.get(*seen..).unwrap_or(&[]).to_vec();
    if database
        .run_command(bson::doc! {"drop": "system.profile"})
        .await
        .is_ok()
    {
        *seen = 0;
    } else {
        *seen = entries.len();
    }
    Some(fresh)
}
