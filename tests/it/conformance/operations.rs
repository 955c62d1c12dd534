//! Executing one unified-format operation through the official driver, and
//! turning its result or error into the shapes the expectations describe.
//!
//! Options are deserialized from the operation's arguments straight into the
//! driver's option structs (they use the spec's camelCase names), so every
//! argument the driver knows reaches the server the way an application would
//! send it. The few operations the Rust driver lacks (collection `bulkWrite`,
//! legacy `count`, `modifyCollection`) are emulated with `runCommand`.

use std::collections::HashMap;

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;
use mongodb::error::{Error, ErrorKind, WriteFailure};
use mongodb::options::UpdateModifications;
use mongodb::{Client, Collection, Database, IndexModel};
use serde::de::DeserializeOwned;

use super::bulk;

/// An entity of the test's entity map.
#[derive(Clone)]
pub enum Entity {
    Client(Client),
    Database(Database),
    Collection(Collection<Document>),
}

/// An error as the `expectError` assertions see it.
#[derive(Debug, Clone, Default)]
pub struct ErrorInfo {
    /// Raised by the driver itself (validation, network, server selection).
    pub client: bool,
    pub code: Option<i32>,
    pub code_name: Option<String>,
    pub message: String,
    pub labels: Vec<String>,
    /// The partial result of a failed bulk write / insertMany.
    pub partial: Option<Bson>,
    /// The server's error reply, as far as the driver keeps it.
    pub response: Option<Document>,
}

/// Why an operation did not produce a result.
#[derive(Debug)]
pub enum OpFailure {
    /// The operation failed (may be what the test expects).
    Error(Box<ErrorInfo>),
    /// The runner cannot execute it: the test is skipped.
    Unsupported(String),
    /// The test file is malformed or the runner has a bug.
    Runner(String),
}

impl From<Error> for OpFailure {
    fn from(e: Error) -> Self {
        // The Rust driver refuses w:0 for every operation but insert, before
        // sending anything; tests of unacknowledged writes cannot run through it.
        if let ErrorKind::InvalidArgument { message, .. } = e.kind.as_ref()
            && message.starts_with("Unacknowledged write concerns are not supported")
        {
            return OpFailure::Unsupported(
                "the Rust driver refuses unacknowledged (w:0) writes".into(),
            );
        }
        OpFailure::Error(Box::new(error_info(&e)))
    }
}

pub type OpResult = Result<Option<Bson>, OpFailure>;

/// Flattens a driver error for the `expectError` assertions.
pub fn error_info(e: &Error) -> ErrorInfo {
    let mut info = ErrorInfo {
        message: e.to_string(),
        labels: e.labels().iter().cloned().collect(),
        ..ErrorInfo::default()
    };
    match e.kind.as_ref() {
        ErrorKind::Command(c) => {
            // The server's own message: the driver's Display wraps it in
            // "Kind: Command failed: ..." which makes for noisy reasons.
            info.message.clone_from(&c.message);
            info.code = Some(c.code);
            info.code_name = Some(c.code_name.clone());
            info.response = Some(
                doc! {"ok": 0, "code": c.code, "codeName": &c.code_name, "errmsg": &c.message},
            );
        }
        ErrorKind::Write(WriteFailure::WriteError(w)) => {
            info.message.clone_from(&w.message);
            info.code = Some(w.code);
            info.code_name.clone_from(&w.code_name);
        }
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => {
            info.message.clone_from(&w.message);
            info.code = Some(w.code);
            info.code_name = Some(w.code_name.clone());
        }
        ErrorKind::InsertMany(im) => {
            if let Some(w) = im.write_errors.as_ref().and_then(|w| w.first()) {
                info.message.clone_from(&w.message);
                info.code = Some(w.code);
                info.code_name.clone_from(&w.code_name);
            } else if let Some(w) = &im.write_concern_error {
                info.code = Some(w.code);
                info.code_name = Some(w.code_name.clone());
            }
        }
        ErrorKind::BulkWrite(_) => {}
        _ => info.client = true,
    }
    if let Some(raw) = e.server_response()
        && let Ok(d) = raw.to_document()
    {
        info.response = Some(d);
    }
    info
}

fn runner(msg: impl Into<String>) -> OpFailure {
    OpFailure::Runner(msg.into())
}

/// Deserializes the driver's option struct from `args` without `positional`.
fn options<T: DeserializeOwned>(args: &Document, positional: &[&str]) -> Result<T, OpFailure> {
    let mut rest = args.clone();
    for k in positional {
        rest.remove(*k);
    }
    bson::from_document(rest).map_err(|e| runner(format!("options {args}: {e}")))
}

fn doc_arg(args: &Document, key: &str) -> Result<Document, OpFailure> {
    match args.get(key) {
        Some(Bson::Document(d)) => Ok(d.clone()),
        None => Ok(Document::new()),
        Some(other) => Err(runner(format!("argument {key} is not a document: {other}"))),
    }
}

fn pipeline_arg(args: &Document, key: &str) -> Result<Vec<Document>, OpFailure> {
    let arr = args
        .get_array(key)
        .map_err(|_| runner(format!("argument {key} missing")))?;
    arr.iter()
        .map(|s| {
            s.as_document()
                .cloned()
                .ok_or_else(|| runner("pipeline stage is not a document"))
        })
        .collect()
}

fn update_arg(args: &Document) -> Result<UpdateModifications, OpFailure> {
    match args.get("update") {
        Some(Bson::Document(d)) => Ok(UpdateModifications::Document(d.clone())),
        Some(Bson::Array(_)) => Ok(UpdateModifications::Pipeline(pipeline_arg(args, "update")?)),
        other => Err(runner(format!("bad update argument {other:?}"))),
    }
}

fn ids_document(ids: &HashMap<usize, Bson>) -> Document {
    let mut keys: Vec<_> = ids.keys().copied().collect();
    keys.sort_unstable();
    keys.into_iter()
        .map(|k| (k.to_string(), ids[&k].clone()))
        .collect()
}

fn count(n: u64) -> Bson {
    Bson::Int64(i64::try_from(n).unwrap_or(i64::MAX))
}

/// Runs `name` with `args` on `target`.
pub async fn execute(target: &Entity, name: &str, args: &Document) -> OpResult {
    match target {
        Entity::Collection(coll) => collection_op(coll, name, args).await,
        Entity::Database(db) => database_op(db, name, args).await,
        Entity::Client(_) => Err(OpFailure::Unsupported(format!("client.{name}"))),
    }
}

async fn collection_op(coll: &Collection<Document>, name: &str, args: &Document) -> OpResult {
    use mongodb::options::*;
    let filter = || doc_arg(args, "filter");
    let result = match name {
        "insertOne" => {
            let document = doc_arg(args, "document")?;
            let o: InsertOneOptions = options(args, &["document"])?;
            let r = coll.insert_one(document).with_options(o).await?;
            Bson::Document(doc! {"insertedId": r.inserted_id})
        }
        "insertMany" => return insert_many(coll, args).await,
        "find" => {
            let o: FindOptions = options(args, &["filter"])?;
            let docs: Vec<Document> = coll
                .find(filter()?)
                .with_options(o)
                .await?
                .try_collect()
                .await?;
            Bson::Array(docs.into_iter().map(Bson::Document).collect())
        }
        "findOne" => {
            let o: FindOneOptions = options(args, &["filter"])?;
            coll.find_one(filter()?)
                .with_options(o)
                .await?
                .map_or(Bson::Null, Bson::Document)
        }
        "aggregate" => {
            let o: AggregateOptions = options(args, &["pipeline"])?;
            let docs: Vec<Document> = coll
                .aggregate(pipeline_arg(args, "pipeline")?)
                .with_options(o)
                .await?
                .try_collect()
                .await?;
            Bson::Array(docs.into_iter().map(Bson::Document).collect())
        }
        "countDocuments" => {
            let o: CountOptions = options(args, &["filter"])?;
            count(coll.count_documents(filter()?).with_options(o).await?)
        }
        "estimatedDocumentCount" => {
            let o: EstimatedDocumentCountOptions = options(args, &[])?;
            count(coll.estimated_document_count().with_options(o).await?)
        }
        "count" => {
            // The legacy `count` helper is gone from the Rust driver; send the
            // command it would have sent.
            let mut cmd = doc! {"count": coll.name(), "query": filter()?};
            for k in ["skip", "limit", "collation", "hint", "comment"] {
                if let Some(v) = args.get(k) {
                    cmd.insert(k, v.clone());
                }
            }
            let reply = coll
                .client()
                .database(coll.namespace().db.as_str())
                .run_command(cmd)
                .await?;
            reply.get("n").cloned().unwrap_or(Bson::Null)
        }
        "distinct" => {
            let field = args
                .get_str("fieldName")
                .map_err(|_| runner("distinct without fieldName"))?;
            let o: DistinctOptions = options(args, &["fieldName", "filter"])?;
            Bson::Array(coll.distinct(field, filter()?).with_options(o).await?)
        }
        "updateOne" | "updateMany" => {
            let o: UpdateOptions = options(args, &["filter", "update"])?;
            let r = if name == "updateOne" {
                coll.update_one(filter()?, update_arg(args)?)
                    .with_options(o)
                    .await?
            } else {
                coll.update_many(filter()?, update_arg(args)?)
                    .with_options(o)
                    .await?
            };
            update_result(&r)
        }
        "replaceOne" => {
            let o: ReplaceOptions = options(args, &["filter", "replacement"])?;
            let r = coll
                .replace_one(filter()?, doc_arg(args, "replacement")?)
                .with_options(o)
                .await?;
            update_result(&r)
        }
        "deleteOne" | "deleteMany" => {
            let o: DeleteOptions = options(args, &["filter"])?;
            let r = if name == "deleteOne" {
                coll.delete_one(filter()?).with_options(o).await?
            } else {
                coll.delete_many(filter()?).with_options(o).await?
            };
            Bson::Document(doc! {"deletedCount": count(r.deleted_count)})
        }
        "findOneAndDelete" => {
            let o: FindOneAndDeleteOptions = options(args, &["filter"])?;
            let r = coll.find_one_and_delete(filter()?).with_options(o).await?;
            r.map_or(Bson::Null, Bson::Document)
        }
        "findOneAndReplace" => {
            let o: FindOneAndReplaceOptions = options(args, &["filter", "replacement"])?;
            let r = coll
                .find_one_and_replace(filter()?, doc_arg(args, "replacement")?)
                .with_options(o)
                .await?;
            r.map_or(Bson::Null, Bson::Document)
        }
        "findOneAndUpdate" => {
            let o: FindOneAndUpdateOptions = options(args, &["filter", "update"])?;
            let r = coll
                .find_one_and_update(filter()?, update_arg(args)?)
                .with_options(o)
                .await?;
            r.map_or(Bson::Null, Bson::Document)
        }
        "bulkWrite" => return bulk::bulk_write(coll, args).await,
        "createIndex" => {
            let keys = doc_arg(args, "keys")?;
            let o: IndexOptions = options(args, &["keys"])?;
            let model = IndexModel::builder().keys(keys).options(o).build();
            Bson::String(coll.create_index(model).await?.index_name)
        }
        "dropIndex" => {
            let name = args
                .get_str("name")
                .map_err(|_| runner("dropIndex without name"))?;
            coll.drop_index(name).await?;
            return Ok(None);
        }
        "listIndexes" => {
            let models: Vec<IndexModel> = coll.list_indexes().await?.try_collect().await?;
            let docs = models
                .into_iter()
                .map(|m| bson::to_bson(&m).map_err(|e| runner(e.to_string())))
                .collect::<Result<Vec<_>, _>>()?;
            Bson::Array(docs)
        }
        other => return Err(OpFailure::Unsupported(format!("collection.{other}"))),
    };
    Ok(Some(result))
}

fn update_result(r: &mongodb::results::UpdateResult) -> Bson {
    let mut d = doc! {
        "matchedCount": count(r.matched_count),
        "modifiedCount": count(r.modified_count),
        "upsertedCount": i64::from(r.upserted_id.is_some()),
    };
    if let Some(id) = &r.upserted_id {
        d.insert("upsertedId", id.clone());
    }
    Bson::Document(d)
}

async fn insert_many(coll: &Collection<Document>, args: &Document) -> OpResult {
    let docs: Vec<Document> = pipeline_arg(args, "documents")?;
    let ordered = args.get_bool("ordered").unwrap_or(true);
    let o: mongodb::options::InsertManyOptions = options(args, &["documents"])?;
    match coll.insert_many(docs.clone()).with_options(o).await {
        Ok(r) => Ok(Some(Bson::Document(
            doc! {"insertedIds": ids_document(&r.inserted_ids)},
        ))),
        Err(e) => {
            let mut info = error_info(&e);
            if let ErrorKind::InsertMany(im) = e.kind.as_ref() {
                // The driver keeps the inserted ids private; with one batch
                // they follow from the failed indexes and `ordered`.
                let failed: Vec<usize> =
                    im.write_errors.iter().flatten().map(|w| w.index).collect();
                let first = failed.iter().min().copied().unwrap_or(docs.len());
                let mut ids = Document::new();
                for (i, d) in docs.iter().enumerate() {
                    let ok = if ordered {
                        i < first
                    } else {
                        !failed.contains(&i)
                    };
                    if ok {
                        ids.insert(i.to_string(), d.get("_id").cloned().unwrap_or(Bson::Null));
                    }
                }
                info.partial = Some(Bson::Document(doc! {
                    "insertedCount": i64::try_from(ids.len()).unwrap_or(0),
                    "insertedIds": ids,
                    "matchedCount": 0_i64,
                    "modifiedCount": 0_i64,
                    "deletedCount": 0_i64,
                    "upsertedCount": 0_i64,
                    "upsertedIds": {},
                }));
            }
            Err(OpFailure::Error(Box::new(info)))
        }
    }
}

async fn database_op(db: &Database, name: &str, args: &Document) -> OpResult {
    use mongodb::options::*;
    let result = match name {
        "aggregate" => {
            let o: AggregateOptions = options(args, &["pipeline"])?;
            let docs: Vec<Document> = db
                .aggregate(pipeline_arg(args, "pipeline")?)
                .with_options(o)
                .await?
                .try_collect()
                .await?;
            Bson::Array(docs.into_iter().map(Bson::Document).collect())
        }
        "runCommand" => {
            let cmd = doc_arg(args, "command")?;
            Bson::Document(db.run_command(cmd).await?)
        }
        "createCollection" => {
            let coll = args
                .get_str("collection")
                .map_err(|_| runner("createCollection without collection"))?;
            let o: CreateCollectionOptions = options(args, &["collection"])?;
            db.create_collection(coll).with_options(o).await?;
            return Ok(None);
        }
        "dropCollection" => {
            let coll = args
                .get_str("collection")
                .map_err(|_| runner("dropCollection without collection"))?;
            db.collection::<Document>(coll).drop().await?;
            return Ok(None);
        }
        "modifyCollection" => {
            // Not a Rust driver helper: send `collMod` as it would.
            let coll = args
                .get_str("collection")
                .map_err(|_| runner("modifyCollection without collection"))?;
            let mut cmd = doc! {"collMod": coll};
            for (k, v) in args.iter().filter(|(k, _)| k.as_str() != "collection") {
                cmd.insert(k, v.clone());
            }
            db.run_command(cmd).await?;
            return Ok(None);
        }
        other => return Err(OpFailure::Unsupported(format!("database.{other}"))),
    };
    Ok(Some(result))
}
