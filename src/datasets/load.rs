//! Loading a dataset into a database through the official driver: drop each
//! collection, then insert the stream in batches.
//!
//! Against a real server schemalab must never touch data it did not make, so
//! the database name is checked before anything else happens.

use std::time::{Duration, Instant};

use bson::Document;
use mongodb::Client;

use super::{Catalog, DatasetError, Scale};

/// Every database schemalab writes starts with this.
pub const SAFE_DB_PREFIX: &str = "schemalab_";

/// Documents per `insert_many` call: large enough to amortise round trips,
/// small enough to stay far below the 48 MB message limit.
pub const BATCH: usize = 10_000;

/// Where a load is, reported after every batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub collection: String,
    /// Documents of this collection inserted so far.
    pub inserted: u64,
    /// Documents of this collection in all.
    pub collection_total: u64,
    /// Documents of every collection inserted so far.
    pub done: u64,
    /// Documents of the whole dataset.
    pub total: u64,
}

/// What a load did.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadReport {
    pub database: String,
    /// Each collection with the number of documents inserted.
    pub collections: Vec<(String, u64)>,
    pub elapsed: Duration,
}

/// Refuses any database name outside `schemalab_*`.
pub fn check_db_name(db: &str) -> Result<(), DatasetError> {
    if db.len() > SAFE_DB_PREFIX.len() && db.starts_with(SAFE_DB_PREFIX) {
        Ok(())
    } else {
        Err(DatasetError::UnsafeDatabase(db.to_string()))
    }
}

/// Drops and reloads dataset `name` (built-in catalog) into database `db`.
pub async fn load(
    client: &Client,
    db: &str,
    name: &str,
    scale: Scale,
    seed: u64,
    progress: impl FnMut(Progress),
) -> Result<LoadReport, DatasetError> {
    check_db_name(db)?;
    load_with(
        &Catalog::builtin()?,
        client,
        db,
        name,
        scale,
        seed,
        progress,
    )
    .await
}

/// Drops and reloads dataset `name` with `catalog`'s parameters.
pub async fn load_with(
    catalog: &Catalog,
    client: &Client,
    db: &str,
    name: &str,
    scale: Scale,
    seed: u64,
    mut progress: impl FnMut(Progress),
) -> Result<LoadReport, DatasetError> {
    check_db_name(db)?;
    let started = Instant::now();
    let stream = catalog.generate(name, scale, seed)?;
    let counts = stream.counts().to_vec();
    let total = stream.total();
    let database = client.database(db);
    for (collection, _) in &counts {
        database.collection::<Document>(collection).drop().await?;
    }
    let mut report = Vec::new();
    let mut done = 0u64;
    let mut batch: Vec<Document> = Vec::with_capacity(BATCH);
    let mut current: Option<(String, u64)> = None;
    let mut stream = stream.peekable();
    while let Some((collection, doc)) = stream.next() {
        batch.push(doc);
        let boundary = match stream.peek() {
            Some((next, _)) => *next != collection,
            None => true,
        };
        if batch.len() < BATCH && !boundary {
            continue;
        }
        let n = batch.len() as u64;
        database
            .collection::<Document>(&collection)
            .insert_many(batch.drain(..))
            .await?;
        done += n;
        let inserted = match &mut current {
            Some((c, k)) if *c == collection => {
                *k += n;
                *k
            }
            _ => {
                if let Some(prev) = current.take() {
                    report.push(prev);
                }
                current = Some((collection.clone(), n));
                n
            }
        };
        let collection_total = counts
            .iter()
            .find(|(c, _)| *c == collection)
            .map_or(0, |(_, n)| *n);
        progress(Progress {
            collection,
            inserted,
            collection_total,
            done,
            total,
        });
    }
    report.extend(current);
    // Collections with no documents still exist, empty, after a load.
    for (collection, n) in &counts {
        if *n == 0 {
            database.create_collection(collection).await?;
            report.push((collection.clone(), 0));
        }
    }
    Ok(LoadReport {
        database: db.to_string(),
        collections: report,
        elapsed: started.elapsed(),
    })
}
