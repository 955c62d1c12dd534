//! Collection-level `bulkWrite`, which the Rust driver does not offer (it has
//! only the 8.0 `Client::bulk_write`). It is emulated the way the CRUD spec
//! tells drivers to implement it on a 7.0 server: the models are validated
//! client-side, grouped into `insert`/`update`/`delete` commands (runs of
//! one kind when ordered, one command per kind when unordered), sent with
//! `runCommand`, and their replies merged into a BulkWriteResult.

use bson::{Bson, Document, doc, oid::ObjectId};

use super::operations::{ErrorInfo, OpFailure, OpResult, error_info};
use mongodb::Collection;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Insert,
    Update,
    Delete,
}

/// One validated model: its kind, the statement to send, its position.
struct Statement {
    kind: Kind,
    body: Document,
    index: usize,
}

fn client_error(msg: impl Into<String>) -> OpFailure {
    OpFailure::Error(Box::new(ErrorInfo {
        client: true,
        message: msg.into(),
        ..ErrorInfo::default()
    }))
}

fn first_key_is_operator(d: &Document) -> Option<bool> {
    d.keys().next().map(|k| k.starts_with('$'))
}

/// Turns one request model into a command statement, validating it as a
/// driver would before anything is sent.
fn statement(
    index: usize,
    model: &Document,
    inserted: &mut Document,
) -> Result<Statement, OpFailure> {
    let Some((name, Bson::Document(m))) = model.iter().next() else {
        return Err(OpFailure::Runner(format!("bad bulk model {model}")));
    };
    let filter = m.get_document("filter").cloned().unwrap_or_default();
    let copy = |body: &mut Document, keys: &[&str]| {
        for k in keys {
            if let Some(v) = m.get(*k) {
                body.insert(*k, v.clone());
            }
        }
    };
    let (kind, body) = match name.as_str() {
        "insertOne" => {
            let mut d = m.get_document("document").cloned().unwrap_or_default();
            if !d.contains_key("_id") {
                // Drivers generate `_id` client-side so they can report it.
                let mut with_id = doc! {"_id": ObjectId::new()};
                with_id.extend(d);
                d = with_id;
            }
            inserted.insert(
                index.to_string(),
                d.get("_id").cloned().unwrap_or(Bson::Null),
            );
            (Kind::Insert, d)
        }
        "updateOne" | "updateMany" => {
            let update = m.get("update").cloned().unwrap_or(Bson::Null);
            match &update {
                Bson::Document(u) if first_key_is_operator(u) == Some(true) => {}
                Bson::Array(_) => {}
                _ => {
                    return Err(client_error(
                        "update document must contain only atomic modifiers",
                    ));
                }
            }
            let mut body = doc! {"q": filter, "u": update};
            if name == "updateMany" {
                body.insert("multi", true);
            }
            copy(
                &mut body,
                &["upsert", "arrayFilters", "collation", "hint", "sort"],
            );
            (Kind::Update, body)
        }
        "replaceOne" => {
            let replacement = m.get_document("replacement").cloned().unwrap_or_default();
            if first_key_is_operator(&replacement) == Some(true) {
                return Err(client_error(
                    "replacement document must not contain atomic modifiers",
                ));
            }
            let mut body = doc! {"q": filter, "u": replacement};
            copy(&mut body, &["upsert", "collation", "hint", "sort"]);
            (Kind::Update, body)
        }
        "deleteOne" | "deleteMany" => {
            let mut body = doc! {"q": filter, "limit": i32::from(name == "deleteOne")};
            copy(&mut body, &["collation", "hint"]);
            (Kind::Delete, body)
        }
        other => return Err(OpFailure::Unsupported(format!("bulkWrite model {other}"))),
    };
    Ok(Statement { kind, body, index })
}

#[derive(Default)]
struct Totals {
    inserted: i64,
    matched: i64,
    modified: i64,
    deleted: i64,
    upserted: Document,
}

fn as_i64(v: Option<&Bson>) -> i64 {
    match v {
        Some(Bson::Int32(i)) => i64::from(*i),
        Some(Bson::Int64(i)) => *i,
        #[allow(clippy::cast_possible_truncation)]
        Some(Bson::Double(d)) => *d as i64,
        _ => 0,
    }
}

/// Runs `bulkWrite` with `args` (`requests`, `ordered`, `let`, `comment`,
/// `bypassDocumentValidation`).
pub async fn bulk_write(coll: &Collection<Document>, args: &Document) -> OpResult {
    let models = args
        .get_array("requests")
        .map_err(|_| OpFailure::Runner("bulkWrite without requests".into()))?;
    if models.is_empty() {
        return Err(client_error("bulkWrite requires at least one request"));
    }
    let ordered = args.get_bool("ordered").unwrap_or(true);
    let mut inserted = Document::new();
    let mut statements = Vec::new();
    for (i, m) in models.iter().enumerate() {
        let m = m
            .as_document()
            .ok_or_else(|| OpFailure::Runner("bulk model is not a document".into()))?;
        statements.push(statement(i, m, &mut inserted)?);
    }
    let unacknowledged = coll
        .write_concern()
        .and_then(|wc| wc.w.as_ref())
        .is_some_and(|w| matches!(w, mongodb::options::Acknowledgment::Nodes(0)));

    // Batches: runs of one kind if ordered, one per kind otherwise.
    let mut batches: Vec<Vec<Statement>> = Vec::new();
    if ordered {
        for s in statements {
            match batches.last_mut() {
                Some(b) if b[0].kind == s.kind => b.push(s),
                _ => batches.push(vec![s]),
            }
        }
    } else {
        for kind in [Kind::Insert, Kind::Update, Kind::Delete] {
            let b: Vec<Statement> = statements
                .iter()
                .filter(|s| s.kind == kind)
                .map(|s| Statement {
                    kind,
                    body: s.body.clone(),
                    index: s.index,
                })
                .collect();
            if !b.is_empty() {
                batches.push(b);
            }
        }
    }

    let db = coll.client().database(coll.namespace().db.as_str());
    let mut totals = Totals::default();
    let mut first_error: Option<ErrorInfo> = None;
    let mut failed_inserts: Vec<usize> = Vec::new();
    let mut stopped_at: Option<usize> = None;
    for batch in &batches {
        let (cmd_name, list) = match batch[0].kind {
            Kind::Insert => ("insert", "documents"),
            Kind::Update => ("update", "updates"),
            Kind::Delete => ("delete", "deletes"),
        };
        let mut cmd = doc! {
            cmd_name: coll.name(),
            list: batch.iter().map(|s| Bson::Document(s.body.clone())).collect::<Vec<_>>(),
            "ordered": ordered,
        };
        if batch[0].kind != Kind::Insert
            && let Some(v) = args.get("let")
        {
            cmd.insert("let", v.clone());
        }
        if batch[0].kind != Kind::Delete
            && let Some(v) = args.get("bypassDocumentValidation")
        {
            cmd.insert("bypassDocumentValidation", v.clone());
        }
        if let Some(v) = args.get("comment") {
            cmd.insert("comment", v.clone());
        }
        if let Some(wc) = coll.write_concern()
            && let Ok(wc) = bson::to_bson(wc)
        {
            cmd.insert("writeConcern", wc);
        }
        let reply = match db.run_command(cmd).await {
            Ok(r) => r,
            Err(e) => {
                let mut info = error_info(&e);
                info.partial = None;
                first_error.get_or_insert(info);
                break;
            }
        };
        let n = as_i64(reply.get("n"));
        let upserted = reply.get_array("upserted").cloned().unwrap_or_default();
        match batch[0].kind {
            Kind::Insert => totals.inserted += n,
            Kind::Update => {
                totals.matched += n - i64::try_from(upserted.len()).unwrap_or(0);
                totals.modified += as_i64(reply.get("nModified"));
                for u in upserted.iter().filter_map(Bson::as_document) {
                    let local = usize::try_from(as_i64(u.get("index"))).unwrap_or(0);
                    if let Some(s) = batch.get(local) {
                        totals.upserted.insert(
                            s.index.to_string(),
                            u.get("_id").cloned().unwrap_or(Bson::Null),
                        );
                    }
                }
            }
            Kind::Delete => totals.deleted += n,
        }
        if let Ok(errs) = reply.get_array("writeErrors") {
            for w in errs.iter().filter_map(Bson::as_document) {
                let local = usize::try_from(as_i64(w.get("index"))).unwrap_or(0);
                if let Some(s) = batch.get(local) {
                    if s.kind == Kind::Insert {
                        failed_inserts.push(s.index);
                    }
                    if ordered {
                        stopped_at = Some(s.index);
                    }
                }
                first_error.get_or_insert(ErrorInfo {
                    code: w.get_i32("code").ok(),
                    code_name: w.get_str("codeName").ok().map(str::to_owned),
                    message: w.get_str("errmsg").unwrap_or("").to_owned(),
                    response: Some(w.clone()),
                    ..ErrorInfo::default()
                });
            }
        }
        if let Ok(wce) = reply.get_document("writeConcernError") {
            first_error.get_or_insert(ErrorInfo {
                code: wce.get_i32("code").ok(),
                code_name: wce.get_str("codeName").ok().map(str::to_owned),
                message: wce.get_str("errmsg").unwrap_or("").to_owned(),
                response: Some(wce.clone()),
                ..ErrorInfo::default()
            });
        }
        if ordered && first_error.is_some() {
            break;
        }
    }
    // Only ids of inserts that happened are reported.
    let inserted: Document = inserted
        .into_iter()
        .filter(|(k, _)| {
            let i: usize = k.parse().unwrap_or(usize::MAX);
            !failed_inserts.contains(&i) && stopped_at.is_none_or(|s| i < s)
        })
        .collect();
    let result = doc! {
        "deletedCount": totals.deleted,
        "insertedCount": totals.inserted,
        "insertedIds": inserted,
        "matchedCount": totals.matched,
        "modifiedCount": totals.modified,
        "upsertedCount": i64::try_from(totals.upserted.len()).unwrap_or(0),
        "upsertedIds": totals.upserted,
    };
    match first_error {
        Some(mut info) => {
            info.partial = Some(Bson::Document(result));
            Err(OpFailure::Error(Box::new(info)))
        }
        None if unacknowledged => Ok(None),
        None => Ok(Some(Bson::Document(result))),
    }
}
