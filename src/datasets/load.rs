//! Loading a dataset into a database through the official driver: drop each
//! collection, then insert the stream in batches of raw BSON, generated and
//! encoded on a thread of their own while the previous batch is inserted.
//!
//! Against a real server schemalab must never touch data it did not make, so
//! the database name is checked before anything else happens.

use std::time::{Duration, Instant};

use bson::{Document, RawDocumentBuf};
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
///
/// Generation and inserting overlap: the documents are generated and
/// encoded to raw BSON on a blocking thread of the runtime, which hands
/// whole batches to this task through a channel holding one batch, so at
/// most two finished batches exist at once (one waiting, one being
/// inserted) besides the one being built. The batches, their order and
/// every document's bytes are those of the stream.
pub async fn load_with(
    catalog: &Catalog,
    client: &Client,
    db: &str,
    name: &str,
    scale: Scale,
    seed: u64,
    progress: impl FnMut(Progress),
) -> Result<LoadReport, DatasetError> {
    check_db_name(db)?;
    let started = Instant::now();
    let stream = catalog.generate(name, scale, seed)?;
    let counts = stream.counts().to_vec();
    let database = client.database(db);
    for (collection, _) in &counts {
        database.collection::<Document>(collection).drop().await?;
    }
    let report = insert_batches(&database, &counts, stream.into_phases(), progress).await?;
    Ok(LoadReport {
        database: db.to_string(),
        collections: report,
        elapsed: started.elapsed(),
    })
}

/// One batch for one `insert_many`, encoded on the generating thread.
struct Batch {
    collection: &'static str,
    docs: Vec<RawDocumentBuf>,
}

/// Inserts `phases` (each collection's name and documents, in order) into
/// `database` in batches of [`BATCH`], split at collection boundaries,
/// reporting `progress` after each batch, then creates the collections of
/// `counts` that got no document. Returns each collection with the number
/// of documents inserted.
async fn insert_batches<I>(
    database: &mongodb::Database,
    counts: &[(String, u64)],
    phases: impl Iterator<Item = (&'static str, I)> + Send + 'static,
    mut progress: impl FnMut(Progress),
) -> Result<Vec<(String, u64)>, DatasetError>
where
    I: Iterator<Item = Document>,
{
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Batch, DatasetError>>(1);
    let generator = tokio::task::spawn_blocking(move || generate_batches(phases, &tx));
    let mut report: Vec<(String, u64)> = Vec::new();
    let mut done = 0u64;
    let inserted = async {
        while let Some(batch) = rx.recv().await {
            let Batch { collection, docs } = batch?;
            let n = docs.len() as u64;
            database
                .collection::<RawDocumentBuf>(collection)
                .insert_many(docs)
                .await?;
            done += n;
            let inserted = match report.last_mut() {
                Some((c, k)) if c.as_str() == collection => {
                    *k += n;
                    *k
                }
                _ => {
                    report.push((collection.to_string(), n));
                    n
                }
            };
            let collection_total = counts
                .iter()
                .find(|(c, _)| c == collection)
                .map_or(0, |(_, n)| *n);
            progress(Progress {
                collection: collection.to_string(),
                inserted,
                collection_total,
                done,
                total,
            });
        }
        Ok::<(), DatasetError>(())
    }
    .await;
    // Closing the channel stops the generator at its next batch; waiting
    // for it leaves no work running behind this load.
    drop(rx);
    if let Err(e) = generator.await
        && e.is_panic()
    {
        std::panic::resume_unwind(e.into_panic());
    }
    inserted?;
    // Collections with no documents still exist, empty, after a load.
    for (collection, n) in counts {
        if *n == 0 {
            database.create_collection(collection).await?;
            report.push((collection.clone(), 0));
        }
    }
    Ok(report)
}

/// The generating side of [`insert_batches`]: builds and encodes each
/// batch, sends it, and stops at the first encoding error (sent on) or
/// once the receiver is gone.
fn generate_batches<I>(
    phases: impl Iterator<Item = (&'static str, I)>,
    tx: &tokio::sync::mpsc::Sender<Result<Batch, DatasetError>>,
) where
    I: Iterator<Item = Document>,
{
    for (collection, docs) in phases {
        let mut docs = docs.peekable();
        while docs.peek().is_some() {
            let encoded: Result<Vec<RawDocumentBuf>, DatasetError> = docs
                .by_ref()
                .take(BATCH)
                .map(|d| RawDocumentBuf::from_document(&d).map_err(DatasetError::from))
                .collect();
            let failed = encoded.is_err();
            let batch = encoded.map(|docs| Batch { collection, docs });
            if tx.blocking_send(batch).is_err() || failed {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use bson::doc;

    use super::*;
    use schemalab_engine::Engine;
    use schemalab_wire::spawn_background;

    fn numbered(n: u64, bad: Option<u64>) -> impl Iterator<Item = Document> {
        (0..n).map(move |i| {
            if Some(i) == bad {
                doc! { "_id": i as i64, "a\0b": 1 }
            } else {
                doc! { "_id": i as i64 }
            }
        })
    }

    /// An error on the generating thread ends the load with that error;
    /// the batches before it are in, the rest never generated.
    #[tokio::test]
    async fn an_encoding_error_on_the_generating_thread_is_the_loads_error() {
        let server = spawn_background(Engine::new()).unwrap();
        let client = Client::with_uri_str(server.uri()).await.unwrap();
        let db = client.database("schemalab_enc");
        let n = BATCH as u64 + 5;
        let counts = vec![("a".to_string(), n), ("b".to_string(), 3)];
        let phases = vec![
            (
                "a",
                Box::new(numbered(n, Some(BATCH as u64 + 2))) as super::super::DocIter,
            ),
            ("b", Box::new(numbered(3, None))),
        ];
        let err = insert_batches(&db, &counts, phases.into_iter(), |_| {})
            .await
            .unwrap_err();
        assert!(matches!(err, DatasetError::RawBson(_)), "{err}");
        let a = db.collection::<Document>("a");
        assert_eq!(a.count_documents(doc! {}).await.unwrap(), BATCH as u64);
        let names = db.list_collection_names().await.unwrap();
        assert_eq!(names, ["a"]);
        server.shutdown();
    }

    /// A generator that panics panics the load, as it did when the
    /// generator ran inside it.
    #[tokio::test]
    #[should_panic(expected = "the generator broke")]
    async fn a_panicking_generator_panics_the_load() {
        let server = spawn_background(Engine::new()).unwrap();
        let client = Client::with_uri_str(server.uri()).await.unwrap();
        let db = client.database("schemalab_panic");
        let counts = vec![("a".to_string(), 3)];
        let docs = numbered(3, None).inspect(|d| {
            assert_ne!(d.get_i64("_id"), Ok(2), "the generator broke");
        });
        let phases = vec![("a", Box::new(docs) as super::super::DocIter)];
        let _ = insert_batches(&db, &counts, phases.into_iter(), |_| {}).await;
    }
}
