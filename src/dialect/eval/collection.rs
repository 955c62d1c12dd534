//! Collection and cursor methods: each mongosh call becomes the database
//! command a driver would send (`find`, `insert`, `update`, `findAndModify`,
//! `createIndexes` …), and each reply is shaped into the result object
//! mongosh prints.

use bson::{Bson, Document, doc, oid::ObjectId};
use futures_util::TryStreamExt;

use super::{
    Args, COLL_METHODS, CURSOR_METHODS, CursorKind, CursorSpec, DialectError, Pos, R, Session,
    Value, as_f64, driver_err, js_number, sanitize, sanitize_doc, scale_arg, to_doc, type_err,
};
use crate::dialect::suggest::suggest;
use crate::locale::Message;

/// Options mongosh passes straight through to the `find` command.
const FIND_OPTIONS: &[&str] = &[
    "sort",
    "projection",
    "skip",
    "limit",
    "hint",
    "batchSize",
    "collation",
    "maxTimeMS",
    "comment",
    "allowDiskUse",
    "min",
    "max",
    "returnKey",
    "showRecordId",
    "let",
];

pub(super) fn find_spec(db: &str, coll: &str, args: Vec<(Value, Pos)>) -> R<CursorSpec> {
    let pos = args.first().map(|a| a.1).unwrap_or_default();
    let mut a = Args::new(args, pos, "find()".into());
    let filter = a.opt_doc("filter")?.unwrap_or_default();
    let mut options = Document::new();
    if let Some(p) = a.opt_doc("projection")? {
        options.insert("projection", p);
    }
    if let Some(o) = a.opt_doc("options")? {
        for (k, v) in o {
            if FIND_OPTIONS.contains(&k.as_str()) {
                options.insert(k, v);
            }
        }
    }
    a.done()?;
    Ok(CursorSpec {
        db: db.into(),
        coll: coll.into(),
        kind: CursorKind::Find { filter, options },
        explain: None,
        executed: false,
    })
}

pub(super) fn aggregate_spec(
    db: &str,
    coll: &str,
    args: Vec<(Value, Pos)>,
    pos: Pos,
) -> R<CursorSpec> {
    let mut a = Args::new(args, pos, "aggregate()".into());
    let mut pipeline = Vec::new();
    let mut options = Document::new();
    match a.next_value() {
        None => {}
        Some((Value::Bson(Bson::Array(stages)), p)) => {
            for s in stages {
                match s {
                    Bson::Document(d) => pipeline.push(d),
                    _ => return Err(type_err("each pipeline stage must be an object", p)),
                }
            }
            if let Some(o) = a.opt_doc("options")? {
                options = o;
            }
        }
        // mongosh also accepts stages as separate arguments.
        Some((first, p)) => {
            pipeline.push(to_doc(first, p, "pipeline stage")?);
            for (v, p) in a.rest() {
                pipeline.push(to_doc(v, p, "pipeline stage")?);
            }
        }
    }
    a.done()?;
    let explain = match options.remove("explain") {
        Some(Bson::Boolean(true)) => Some("queryPlanner".to_string()),
        _ => None,
    };
    Ok(CursorSpec {
        db: db.into(),
        coll: coll.into(),
        kind: CursorKind::Aggregate { pipeline, options },
        explain,
        executed: false,
    })
}

fn verbosity(v: Option<(Value, Pos)>) -> R<String> {
    Ok(match v {
        None | Some((Value::Bson(Bson::Undefined), _)) => "queryPlanner".into(),
        Some((Value::Bson(Bson::Boolean(true)), _)) => "allPlansExecution".into(),
        Some((Value::Bson(Bson::Boolean(false)), _)) => "queryPlanner".into(),
        Some((Value::Bson(Bson::String(s)), p)) => match s.as_str() {
            "queryPlanner" | "executionStats" | "allPlansExecution" => s,
            other => {
                return Err(DialectError::Type {
                    message: Message::new("unknown explain verbosity '{other}'")
                        .arg("other", other),
                    suggestion: suggest(
                        other,
                        ["queryPlanner", "executionStats", "allPlansExecution"],
                    ),
                    pos: Some(p),
                });
            }
        },
        Some((v, p)) => {
            return Err(type_err(
                Message::new("explain verbosity must be a string, not {type}")
                    .arg("type", v.type_name()),
                p,
            ));
        }
    })
}

/// The name the server would give an index on `keys` (`a_1_b_-1`).
pub fn index_name(keys: &Document) -> String {
    keys.iter()
        .map(|(k, v)| {
            let v = match v {
                Bson::String(s) => s.clone(),
                other => match as_f64(other) {
                    Some(n) => crate::dialect::print::format_number(n),
                    None => other.to_string(),
                },
            };
            format!("{k}_{v}")
        })
        .collect::<Vec<_>>()
        .join("_")
}

fn has_operators(d: &Document) -> bool {
    d.keys().next().is_some_and(|k| k.starts_with('$'))
}

/// The first write error in a write command's reply, as an error value.
fn write_error(reply: &Document, bulk: bool) -> Option<DialectError> {
    let errs = reply.get_array("writeErrors").ok()?;
    let first = errs.first()?.as_document()?;
    let code = first.get("code").and_then(as_f64).unwrap_or(0.0) as i32;
    let message = first.get_str("errmsg").unwrap_or("write error").to_string();
    Some(if bulk {
        DialectError::BulkWrite {
            code,
            message,
            pos: None,
        }
    } else {
        DialectError::server(code, first.get_str("codeName").unwrap_or(""), message)
    })
}

fn count_of(reply: &Document, key: &str) -> i64 {
    reply.get(key).and_then(as_f64).unwrap_or(0.0) as i64
}

fn num(n: i64) -> Bson {
    js_number(n as f64)
}

impl Session {
    async fn write(&self, db: &str, cmd: Document, bulk: bool) -> R<Document> {
        let reply = self.command(db, cmd).await?;
        if let Some(e) = write_error(&reply, bulk) {
            return Err(e);
        }
        if let Ok(wce) = reply.get_document("writeConcernError") {
            return Err(DialectError::server(
                wce.get("code").and_then(as_f64).unwrap_or(0.0) as i32,
                wce.get_str("codeName").unwrap_or(""),
                wce.get_str("errmsg").unwrap_or("write concern error"),
            ));
        }
        Ok(reply)
    }

    /// Run a find/aggregate spec and return the driver cursor.
    pub(super) async fn open(&self, spec: &CursorSpec) -> R<mongodb::Cursor<Document>> {
        let cmd = if spec.executed {
            // An empty cursor: what a finished `$out`/`$merge` pipeline
            // has left to give.
            doc! { "aggregate": 1, "pipeline": [{ "$documents": [] }], "cursor": {} }
        } else {
            cursor_command(spec)
        };
        self.cursor(&spec.db, cmd).await
    }

    pub(super) async fn run_all(&self, spec: &CursorSpec) -> R<Vec<Document>> {
        if spec.executed {
            return Ok(Vec::new());
        }
        let cursor = self.open(spec).await?;
        cursor.try_collect().await.map_err(driver_err)
    }

    pub(super) async fn explain(&self, spec: &CursorSpec, verbosity: &str) -> R<Document> {
        let mut inner = cursor_command(spec);
        if matches!(spec.kind, CursorKind::Find { .. }) {
            inner.remove("batchSize");
        }
        self.command(&spec.db, doc! { "explain": inner, "verbosity": verbosity })
            .await
    }

    async fn count_documents(
        &self,
        db: &str,
        coll: &str,
        filter: Document,
        options: &Document,
    ) -> R<i64> {
        let mut pipeline = vec![doc! { "$match": filter }];
        if let Some(s) = options.get("skip") {
            pipeline.push(doc! { "$skip": s.clone() });
        }
        if let Some(l) = options.get("limit") {
            pipeline.push(doc! { "$limit": l.clone() });
        }
        pipeline.push(doc! { "$group": { "_id": 1, "n": { "$sum": 1 } } });
        let mut cmd = doc! { "aggregate": coll, "pipeline": pipeline, "cursor": {} };
        for k in ["hint", "collation", "maxTimeMS", "comment"] {
            if let Some(v) = options.get(k) {
                cmd.insert(k, v.clone());
            }
        }
        let docs: Vec<Document> = self
            .cursor(db, cmd)
            .await?
            .try_collect()
            .await
            .map_err(driver_err)?;
        Ok(docs
            .first()
            .and_then(|d| d.get("n"))
            .and_then(as_f64)
            .unwrap_or(0.0) as i64)
    }

    async fn update(&self, db: &str, coll: &str, stmt: Document, many: bool) -> R<Value> {
        let mut stmt = stmt;
        stmt.insert("multi", many);
        let reply = self
            .write(db, doc! { "update": coll, "updates": [stmt] }, false)
            .await?;
        let upserted = reply.get_array("upserted").cloned().unwrap_or_default();
        let upserted_id = upserted
            .first()
            .and_then(|u| u.as_document())
            .and_then(|u| u.get("_id").cloned())
            .unwrap_or(Bson::Null);
        let n = count_of(&reply, "n");
        Ok(Value::Bson(Bson::Document(doc! {
            "acknowledged": true,
            "insertedId": upserted_id,
            "matchedCount": num(n - upserted.len() as i64),
            "modifiedCount": num(count_of(&reply, "nModified")),
            "upsertedCount": num(upserted.len() as i64),
        })))
    }

    pub(super) async fn coll_method(
        &mut self,
        db: &str,
        coll: &str,
        name: &str,
        args: Vec<(Value, Pos)>,
        pos: Pos,
    ) -> R<Value> {
        let what = format!("db.{coll}.{name}()");
        match name {
            "find" => return Ok(Value::Cursor(Box::new(find_spec(db, coll, args)?))),
            "aggregate" => {
                let mut spec = aggregate_spec(db, coll, args, pos)?;
                if let Some(v) = &spec.explain {
                    return Ok(Value::Bson(Bson::Document(self.explain(&spec, v).await?)));
                }
                // mongosh runs a pipeline that writes ($out, $merge) at
                // once, even when nothing iterates the cursor.
                if writes_output(&spec) {
                    self.run_all(&spec).await?;
                    spec.executed = true;
                }
                return Ok(Value::Cursor(Box::new(spec)));
            }
            _ => {}
        }
        let mut a = Args::new(args, pos, what.clone());
        let v = match name {
            "getName" => Value::Bson(Bson::String(coll.to_string())),
            "findOne" => {
                let mut spec = find_spec(db, coll, a.rest())?;
                if let CursorKind::Find { options, .. } = &mut spec.kind {
                    options.insert("limit", 1);
                    options.insert("singleBatch", true);
                }
                let docs = self.run_all(&spec).await?;
                Value::Bson(
                    docs.into_iter()
                        .next()
                        .map(Bson::Document)
                        .unwrap_or(Bson::Null),
                )
            }
            "insertOne" => {
                let mut d = sanitize_doc(a.doc("document")?);
                let _opts = a.opt_doc("options")?;
                let id = ensure_id(&mut d);
                self.write(db, doc! { "insert": coll, "documents": [d] }, false)
                    .await?;
                Value::Bson(Bson::Document(
                    doc! { "acknowledged": true, "insertedId": id },
                ))
            }
            "insertMany" => {
                let (v, p) = a.value("documents")?;
                let Value::Bson(Bson::Array(items)) = v else {
                    return Err(type_err("insertMany() needs an array of documents", p));
                };
                let opts = a.opt_doc("options")?.unwrap_or_default();
                let mut docs = Vec::with_capacity(items.len());
                let mut ids = Document::new();
                for (i, item) in items.into_iter().enumerate() {
                    let Bson::Document(d) = sanitize(item) else {
                        return Err(type_err("insertMany() needs an array of documents", p));
                    };
                    let mut d = d;
                    ids.insert(i.to_string(), ensure_id(&mut d));
                    docs.push(Bson::Document(d));
                }
                let ordered = opts.get_bool("ordered").unwrap_or(true);
                self.write(
                    db,
                    doc! { "insert": coll, "documents": docs, "ordered": ordered },
                    true,
                )
                .await?;
                Value::Bson(Bson::Document(
                    doc! { "acknowledged": true, "insertedIds": ids },
                ))
            }
            "updateOne" | "updateMany" | "replaceOne" => {
                let filter = sanitize_doc(a.doc("filter")?);
                let (uv, up) = a.value("update")?;
                let u = match uv {
                    Value::Bson(Bson::Document(d)) => {
                        if name == "replaceOne" && has_operators(&d) {
                            return Err(type_err(
                                "Replacement document must not contain atomic operators",
                                up,
                            ));
                        }
                        if name != "replaceOne" && !has_operators(&d) {
                            return Err(type_err("Update document requires atomic operators", up));
                        }
                        Bson::Document(sanitize_doc(d))
                    }
                    Value::Bson(Bson::Array(stages)) if name != "replaceOne" => {
                        sanitize(Bson::Array(stages))
                    }
                    other => {
                        return Err(type_err(
                            Message::new("update must be an object, not {type}")
                                .arg("type", other.type_name()),
                            up,
                        ));
                    }
                };
                let opts = a.opt_doc("options")?.unwrap_or_default();
                let mut stmt = doc! { "q": filter, "u": u };
                copy_opts(
                    &opts,
                    &mut stmt,
                    &[
                        ("upsert", "upsert"),
                        ("arrayFilters", "arrayFilters"),
                        ("hint", "hint"),
                        ("collation", "collation"),
                    ],
                );
                self.update(db, coll, stmt, name == "updateMany").await?
            }
            "deleteOne" | "deleteMany" => {
                let filter = sanitize_doc(a.opt_doc("filter")?.unwrap_or_default());
                let opts = a.opt_doc("options")?.unwrap_or_default();
                let mut stmt = doc! { "q": filter, "limit": i32::from(name == "deleteOne") };
                copy_opts(
                    &opts,
                    &mut stmt,
                    &[("hint", "hint"), ("collation", "collation")],
                );
                let reply = self
                    .write(db, doc! { "delete": coll, "deletes": [stmt] }, false)
                    .await?;
                Value::Bson(Bson::Document(
                    doc! { "acknowledged": true, "deletedCount": num(count_of(&reply, "n")) },
                ))
            }
            "findOneAndUpdate" | "findOneAndReplace" | "findOneAndDelete" => {
                let filter = sanitize_doc(a.doc("filter")?);
                let mut cmd = doc! { "findAndModify": coll, "query": filter };
                if name == "findOneAndDelete" {
                    cmd.insert("remove", true);
                } else {
                    let (uv, up) = a.value("update")?;
                    let u = match uv {
                        Value::Bson(Bson::Document(d)) => {
                            if name == "findOneAndReplace" && has_operators(&d) {
                                return Err(type_err(
                                    "Replacement document must not contain atomic operators",
                                    up,
                                ));
                            }
                            if name == "findOneAndUpdate" && !has_operators(&d) {
                                return Err(type_err(
                                    "Update document requires atomic operators",
                                    up,
                                ));
                            }
                            Bson::Document(sanitize_doc(d))
                        }
                        Value::Bson(Bson::Array(stages)) if name == "findOneAndUpdate" => {
                            sanitize(Bson::Array(stages))
                        }
                        other => {
                            return Err(type_err(
                                Message::new("update must be an object, not {type}")
                                    .arg("type", other.type_name()),
                                up,
                            ));
                        }
                    };
                    cmd.insert("update", u);
                }
                let opts = a.opt_doc("options")?.unwrap_or_default();
                let new = opts
                    .get_str("returnDocument")
                    .map(|s| s == "after")
                    .unwrap_or(false)
                    || opts.get_bool("returnNewDocument").unwrap_or(false);
                if name != "findOneAndDelete" {
                    cmd.insert("new", new);
                }
                copy_opts(
                    &opts,
                    &mut cmd,
                    &[
                        ("projection", "fields"),
                        ("sort", "sort"),
                        ("upsert", "upsert"),
                        ("arrayFilters", "arrayFilters"),
                        ("hint", "hint"),
                        ("collation", "collation"),
                    ],
                );
                let reply = self.command(db, cmd).await?;
                Value::Bson(reply.get("value").cloned().unwrap_or(Bson::Null))
            }
            "bulkWrite" => {
                let (v, p) = a.value("operations")?;
                let Value::Bson(Bson::Array(ops)) = v else {
                    return Err(type_err("bulkWrite() needs an array of operations", p));
                };
                let opts = a.opt_doc("options")?.unwrap_or_default();
                self.bulk_write(db, coll, ops, opts.get_bool("ordered").unwrap_or(true), p)
                    .await?
            }
            "countDocuments" => {
                let filter = sanitize_doc(a.opt_doc("filter")?.unwrap_or_default());
                let opts = a.opt_doc("options")?.unwrap_or_default();
                Value::Bson(num(self.count_documents(db, coll, filter, &opts).await?))
            }
            "estimatedDocumentCount" => {
                let _opts = a.opt_doc("options")?;
                let reply = self.command(db, doc! { "count": coll }).await?;
                Value::Bson(num(count_of(&reply, "n")))
            }
            "count" => {
                let filter = sanitize_doc(a.opt_doc("filter")?.unwrap_or_default());
                let _opts = a.opt_doc("options")?;
                let reply = self
                    .command(db, doc! { "count": coll, "query": filter })
                    .await?;
                Value::Bson(num(count_of(&reply, "n")))
            }
            "distinct" => {
                let key = a.string("field")?;
                let filter = sanitize_doc(a.opt_doc("filter")?.unwrap_or_default());
                let reply = self
                    .command(db, doc! { "distinct": coll, "key": key, "query": filter })
                    .await?;
                Value::Bson(reply.get("values").cloned().unwrap_or(Bson::Array(vec![])))
            }
            "createIndex" | "createIndexes" => {
                let specs: Vec<Document> = if name == "createIndex" {
                    vec![a.doc("keys")?]
                } else {
                    let (v, p) = a.value("index key list")?;
                    let Value::Bson(Bson::Array(list)) = v else {
                        return Err(type_err(
                            "createIndexes() needs an array of key documents",
                            p,
                        ));
                    };
                    list.into_iter()
                        .map(|b| match b {
                            Bson::Document(d) => Ok(d),
                            _ => Err(type_err("each index key must be an object", p)),
                        })
                        .collect::<R<_>>()?
                };
                let opts = a.opt_doc("options")?.unwrap_or_default();
                let mut names = Vec::new();
                let mut indexes = Vec::new();
                for key in specs {
                    let mut spec = doc! { "key": key.clone() };
                    spec.extend(opts.clone());
                    let index_name = match spec.get_str("name") {
                        Ok(n) => n.to_string(),
                        Err(_) => index_name(&key),
                    };
                    spec.insert("name", index_name.clone());
                    names.push(Bson::String(index_name));
                    indexes.push(Bson::Document(spec));
                }
                self.command(db, doc! { "createIndexes": coll, "indexes": indexes })
                    .await?;
                if name == "createIndex" {
                    names
                        .into_iter()
                        .next()
                        .map(Value::Bson)
                        .unwrap_or(Value::Bson(Bson::Null))
                } else {
                    Value::Bson(Bson::Array(names))
                }
            }
            "dropIndex" | "dropIndexes" => {
                let which = match a.next_value() {
                    None if name == "dropIndexes" => Bson::String("*".into()),
                    Some((
                        Value::Bson(b @ (Bson::String(_) | Bson::Document(_) | Bson::Array(_))),
                        _,
                    )) => b,
                    Some((v, p)) => {
                        return Err(type_err(
                            Message::new("index must be a name or key document, not {type}")
                                .arg("type", v.type_name()),
                            p,
                        ));
                    }
                    None => {
                        return Err(type_err(
                            "dropIndex() needs an index name or key document",
                            pos,
                        ));
                    }
                };
                let reply = self
                    .command(db, doc! { "dropIndexes": coll, "index": which })
                    .await?;
                Value::Bson(Bson::Document(strip_cluster_fields(reply)))
            }
            "getIndexes" => {
                let docs: Vec<Document> = self
                    .cursor(db, doc! { "listIndexes": coll })
                    .await?
                    .try_collect()
                    .await
                    .map_err(driver_err)?;
                Value::Bson(Bson::Array(docs.into_iter().map(Bson::Document).collect()))
            }
            "stats" | "dataSize" | "storageSize" | "totalIndexSize" => {
                let scale = scale_arg(&mut a)?;
                let reply = self
                    .command(db, doc! { "collStats": coll, "scale": scale })
                    .await?;
                match name {
                    "stats" => Value::Bson(Bson::Document(reply)),
                    "dataSize" => Value::Bson(reply.get("size").cloned().unwrap_or(Bson::Int32(0))),
                    other => Value::Bson(reply.get(other).cloned().unwrap_or(Bson::Int32(0))),
                }
            }
            "drop" => match self.command(db, doc! { "drop": coll }).await {
                Ok(_) => Value::Bson(Bson::Boolean(true)),
                // Dropping a missing collection is not an error in mongosh.
                Err(DialectError::Server { code: 26, .. }) => Value::Bson(Bson::Boolean(false)),
                Err(e) => return Err(e),
            },
            "explain" => Value::Explainable {
                db: db.into(),
                coll: coll.into(),
                verbosity: verbosity(a.next_value())?,
            },
            other => {
                return Err(DialectError::Type {
                    message: Message::new("db.{coll}.{other} is not a function")
                        .arg("coll", coll)
                        .arg("other", other),
                    suggestion: suggest(other, COLL_METHODS.iter().copied()),
                    pos: Some(pos),
                });
            }
        };
        a.done()?;
        Ok(v)
    }

    async fn bulk_write(
        &self,
        db: &str,
        coll: &str,
        ops: Vec<Bson>,
        ordered: bool,
        p: Pos,
    ) -> R<Value> {
        let mut inserted = Document::new();
        let mut upserted = Document::new();
        let (mut matched, mut modified, mut deleted) = (0i64, 0i64, 0i64);
        let mut first_error: Option<DialectError> = None;
        for (i, op) in ops.into_iter().enumerate() {
            let Bson::Document(op) = op else {
                return Err(type_err("each bulkWrite operation must be an object", p));
            };
            let Some((kind, body)) = op.into_iter().next() else {
                return Err(type_err("empty bulkWrite operation", p));
            };
            let Bson::Document(body) = sanitize(body) else {
                return Err(type_err(
                    Message::new("bulkWrite {kind} must be an object").arg("kind", kind),
                    p,
                ));
            };
            let filter = body.get_document("filter").cloned().unwrap_or_default();
            let result: R<()> = async {
                match kind.as_str() {
                    "insertOne" => {
                        let mut d = body
                            .get_document("document")
                            .cloned()
                            .map_err(|_| type_err("insertOne needs { document }", p))?;
                        let id = ensure_id(&mut d);
                        self.write(db, doc! { "insert": coll, "documents": [d] }, true)
                            .await?;
                        inserted.insert(i.to_string(), id);
                    }
                    "updateOne" | "updateMany" | "replaceOne" => {
                        let u = if kind == "replaceOne" {
                            Bson::Document(body.get_document("replacement").cloned().map_err(
                                |_| type_err("replaceOne needs { filter, replacement }", p),
                            )?)
                        } else {
                            body.get("update").cloned().ok_or_else(|| {
                                type_err(
                                    Message::new("{kind} needs { filter, update }")
                                        .arg("kind", &kind),
                                    p,
                                )
                            })?
                        };
                        let mut stmt = doc! { "q": filter, "u": u, "multi": kind == "updateMany" };
                        copy_opts(
                            &body,
                            &mut stmt,
                            &[
                                ("upsert", "upsert"),
                                ("arrayFilters", "arrayFilters"),
                                ("hint", "hint"),
                                ("collation", "collation"),
                            ],
                        );
                        let reply = self
                            .write(db, doc! { "update": coll, "updates": [stmt] }, true)
                            .await?;
                        let ups = reply.get_array("upserted").cloned().unwrap_or_default();
                        if let Some(id) = ups
                            .first()
                            .and_then(|u| u.as_document())
                            .and_then(|u| u.get("_id"))
                        {
                            upserted.insert(i.to_string(), id.clone());
                        }
                        matched += count_of(&reply, "n") - ups.len() as i64;
                        modified += count_of(&reply, "nModified");
                    }
                    "deleteOne" | "deleteMany" => {
                        let mut stmt =
                            doc! { "q": filter, "limit": i32::from(kind == "deleteOne") };
                        copy_opts(
                            &body,
                            &mut stmt,
                            &[("hint", "hint"), ("collation", "collation")],
                        );
                        let reply = self
                            .write(db, doc! { "delete": coll, "deletes": [stmt] }, true)
                            .await?;
                        deleted += count_of(&reply, "n");
                    }
                    other => {
                        return Err(DialectError::Type {
                            message: Message::new("unknown bulkWrite operation '{other}'")
                                .arg("other", other),
                            suggestion: suggest(
                                other,
                                [
                                    "insertOne",
                                    "updateOne",
                                    "updateMany",
                                    "replaceOne",
                                    "deleteOne",
                                    "deleteMany",
                                ],
                            ),
                            pos: Some(p),
                        });
                    }
                }
                Ok(())
            }
            .await;
            if let Err(e) = result {
                if ordered || !matches!(e, DialectError::BulkWrite { .. }) {
                    return Err(e);
                }
                first_error.get_or_insert(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        Ok(Value::Bson(Bson::Document(doc! {
            "acknowledged": true,
            "insertedCount": num(inserted.len() as i64),
            "insertedIds": inserted,
            "matchedCount": num(matched),
            "modifiedCount": num(modified),
            "deletedCount": num(deleted),
            "upsertedCount": num(upserted.len() as i64),
            "upsertedIds": upserted,
        })))
    }

    pub(super) async fn cursor_method(
        &mut self,
        mut spec: CursorSpec,
        name: &str,
        args: Vec<(Value, Pos)>,
        pos: Pos,
    ) -> R<Value> {
        let mut a = Args::new(args, pos, format!("cursor.{name}()"));
        let is_find = matches!(spec.kind, CursorKind::Find { .. });
        let opt_key = match name {
            "sort" | "projection" | "collation" => Some(name),
            "limit" | "skip" | "batchSize" | "maxTimeMS" => Some(name),
            "hint" | "comment" => Some(name),
            _ => None,
        };
        if let Some(key) = opt_key {
            let (v, p) = a.value(key)?;
            let Value::Bson(b) = v else {
                return Err(type_err(
                    Message::new("{key} cannot take a {type}")
                        .arg("key", key)
                        .arg("type", v.type_name()),
                    p,
                ));
            };
            if matches!(key, "sort" | "projection" | "collation") && !matches!(b, Bson::Document(_))
            {
                return Err(type_err(
                    Message::new("{key}() needs an object").arg("key", key),
                    p,
                ));
            }
            if matches!(key, "limit" | "skip" | "batchSize" | "maxTimeMS") && as_f64(&b).is_none() {
                return Err(type_err(
                    Message::new("{key}() needs a number").arg("key", key),
                    p,
                ));
            }
            a.done()?;
            match &mut spec.kind {
                CursorKind::Find { options, .. } => {
                    options.insert(key, b);
                }
                CursorKind::Aggregate { options, .. } => match key {
                    "batchSize" | "maxTimeMS" | "hint" | "comment" | "collation" => {
                        options.insert(key, b);
                    }
                    _ => {
                        return Err(DialectError::unsupported(
                            Message::new("{key}() on an aggregate cursor (add a ${key} stage)")
                                .arg("key", key),
                            pos,
                        ));
                    }
                },
            }
            return Ok(Value::Cursor(Box::new(spec)));
        }
        let v = match name {
            "pretty" => Value::Cursor(Box::new(spec.clone())),
            "allowDiskUse" => {
                match &mut spec.kind {
                    CursorKind::Find { options, .. } | CursorKind::Aggregate { options, .. } => {
                        options.insert("allowDiskUse", true);
                    }
                }
                Value::Cursor(Box::new(spec.clone()))
            }
            "toArray" => Value::Bson(Bson::Array(
                self.run_all(&spec)
                    .await?
                    .into_iter()
                    .map(Bson::Document)
                    .collect(),
            )),
            "itcount" => Value::Bson(num(self.run_all(&spec).await?.len() as i64)),
            "count" | "size" if is_find => {
                let CursorKind::Find { filter, options } = &spec.kind else {
                    unreachable_find()?
                };
                let mut opts = Document::new();
                for k in ["hint", "collation", "maxTimeMS"] {
                    if let Some(v) = options.get(k) {
                        opts.insert(k, v.clone());
                    }
                }
                // cursor.size() honours skip/limit; count() ignores them, as in mongosh.
                if name == "size" {
                    for k in ["skip", "limit"] {
                        if let Some(v) = options.get(k) {
                            opts.insert(k, v.clone());
                        }
                    }
                }
                let mut cmd = doc! { "count": &spec.coll, "query": filter.clone() };
                cmd.extend(opts);
                let reply = self.command(&spec.db, cmd).await?;
                Value::Bson(num(count_of(&reply, "n")))
            }
            "explain" => {
                let v = verbosity(a.next_value())?;
                Value::Bson(Bson::Document(self.explain(&spec, &v).await?))
            }
            "forEach" | "map" => {
                return Err(DialectError::unsupported(
                    Message::new("cursor.{name}() (callbacks need functions); use for (const doc of cursor) { … }").arg("name", name),
                    pos,
                ));
            }
            "next" | "hasNext" | "close" | "isExhausted" => {
                return Err(DialectError::unsupported(
                    Message::new(
                        "cursor.{name}(); print the cursor, use `it`, toArray() or a for-of loop",
                    )
                    .arg("name", name),
                    pos,
                ));
            }
            other => {
                return Err(DialectError::Type {
                    message: Message::new("cursor.{other} is not a function").arg("other", other),
                    suggestion: suggest(other, CURSOR_METHODS.iter().copied()),
                    pos: Some(pos),
                });
            }
        };
        a.done()?;
        Ok(v)
    }
}

fn unreachable_find<T>() -> R<T> {
    Err(DialectError::driver("internal: cursor kind changed"))
}

/// Give the document an `_id` (a new ObjectId) if it has none, first in
/// field order as mongosh does, and return it.
fn ensure_id(d: &mut Document) -> Bson {
    if let Some(id) = d.get("_id") {
        return id.clone();
    }
    let id = Bson::ObjectId(ObjectId::new());
    let mut with_id = doc! { "_id": id.clone() };
    with_id.extend(std::mem::take(d));
    *d = with_id;
    id
}

/// Drop the replica-set gossip fields mongosh does not show, and print
/// integral doubles the way the Node driver decodes them.
pub(super) fn strip_cluster_fields(reply: Document) -> Document {
    reply
        .into_iter()
        .filter(|(k, _)| !k.starts_with('$') && k != "operationTime")
        .map(|(k, v)| {
            let v = match v {
                Bson::Double(d) => js_number(d),
                other => other,
            };
            (k, v)
        })
        .collect()
}

fn copy_opts(from: &Document, to: &mut Document, pairs: &[(&str, &str)]) {
    for (src, dst) in pairs {
        if let Some(v) = from.get(*src) {
            to.insert(*dst, v.clone());
        }
    }
}

/// The database command a cursor spec runs.
pub(super) fn cursor_command(spec: &CursorSpec) -> Document {
    match &spec.kind {
        CursorKind::Find { filter, options } => {
            let mut cmd = doc! { "find": &spec.coll, "filter": sanitize_doc(filter.clone()) };
            for (k, v) in options {
                if k == "limit" {
                    // A negative limit means "one batch of |n|", as in the legacy shell.
                    if let Some(n) = as_f64(v) {
                        if n < 0.0 {
                            cmd.insert("limit", js_number(-n));
                            cmd.insert("singleBatch", true);
                            continue;
                        }
                        if n == 0.0 {
                            continue;
                        }
                    }
                }
                cmd.insert(k.clone(), v.clone());
            }
            cmd
        }
        CursorKind::Aggregate { pipeline, options } => {
            let mut cursor = Document::new();
            let mut cmd = doc! {
                "aggregate": &spec.coll,
                "pipeline": pipeline.iter().cloned().map(|d| Bson::Document(sanitize_doc(d))).collect::<Vec<_>>(),
            };
            for (k, v) in options {
                if k == "batchSize" {
                    cursor.insert("batchSize", v.clone());
                } else if k != "cursor" {
                    cmd.insert(k.clone(), v.clone());
                }
            }
            cmd.insert("cursor", cursor);
            cmd
        }
    }
}

/// Whether an aggregate's last stage writes a collection.
fn writes_output(spec: &CursorSpec) -> bool {
    match &spec.kind {
        CursorKind::Aggregate { pipeline, .. } => pipeline
            .last()
            .and_then(|stage| stage.keys().next())
            .is_some_and(|k| k == "$out" || k == "$merge"),
        CursorKind::Find { .. } => false,
    }
}
