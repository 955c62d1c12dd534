//! The database profiler: the `profile` command (what `db.setProfilingLevel`
//! sends) and the `system.profile` entries written for each profiled
//! operation, with mongod's field names (`op`, `ns`, `command`,
//! `keysExamined`, `docsExamined`, `nreturned`, `keysInserted`,
//! `keysDeleted`, `nMatched`/`nModified`/`ninserted`/`ndeleted`, `millis`,
//! `planSummary`, `ts`).

use bson::{Bson, Document, RawDocumentBuf, doc};

use super::{CommandDoc, Context, args};
use schemalab_engine::metrics::OpMetrics;
use schemalab_engine::{EngineError, Result};

/// A parsed `profile` command.
#[derive(Debug, Clone)]
pub struct Profile {
    level: i32,
    slow_ms: Option<i64>,
}

fn number(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

impl Profile {
    /// Parse `{profile: <level>, slowms?, sampleRate?, filter?}`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let level = match cmd.body.get("profile").and_then(number) {
            Some(l) if l.fract() == 0.0 && (-1.0..=2.0).contains(&l) => l as i32,
            Some(_) => {
                return Err(EngineError::bad_value(
                    "Invalid profiling level: must be -1, 0, 1 or 2",
                ));
            }
            None => {
                return Err(args::wrong_type(
                    "profile.profile",
                    cmd.body.get("profile").unwrap_or(&Bson::Null),
                    "'long'",
                ));
            }
        };
        let slow_ms = match cmd.body.get("slowms") {
            None => None,
            Some(v) => Some(
                number(v).ok_or_else(|| args::wrong_type("profile.slowms", v, "'long'"))? as i64,
            ),
        };
        Ok(Profile { level, slow_ms })
    }

    /// Set the level; the reply reports the previous one as `was`.
    pub fn apply(&self, ctx: &Context<'_>) -> Document {
        let (was, slow_ms) = ctx
            .engine
            .set_profiling(ctx.db, Some(self.level), self.slow_ms);
        doc! {"was": was, "slowms": slow_ms, "sampleRate": 1.0}
    }
}

/// The profiler's `op` for a command, or `None` if it is not profiled.
pub fn op_of(command: &str) -> Option<&'static str> {
    Some(match command {
        "find" => "query",
        "getMore" => "getmore",
        "insert" => "insert",
        "update" => "update",
        "delete" => "remove",
        "aggregate" | "count" | "distinct" | "findAndModify" | "findandmodify" => "command",
        _ => return None,
    })
}

fn batch_len(reply: &Document) -> Option<i64> {
    let cursor = reply.get_document("cursor").ok()?;
    cursor
        .get_array("firstBatch")
        .or_else(|_| cursor.get_array("nextBatch"))
        .ok()
        .map(|b| b.len() as i64)
}

fn int(reply: &Document, key: &str) -> Option<i64> {
    match reply.get(key)? {
        Bson::Int32(n) => Some(i64::from(*n)),
        Bson::Int64(n) => Some(*n),
        Bson::Double(d) => Some(*d as i64),
        _ => None,
    }
}

/// The `system.profile` entry of one operation.
pub fn entry(
    op: &str,
    cmd: &CommandDoc,
    reply: &RawDocumentBuf,
    m: &OpMetrics,
    millis: i64,
    now: bson::DateTime,
    client: Option<std::net::SocketAddr>,
) -> Document {
    let name = cmd.body.keys().next().cloned().unwrap_or_default();
    let coll = match name.as_str() {
        "getMore" => cmd.body.get_str("collection").unwrap_or_default(),
        _ => cmd.body.get_str(&name).unwrap_or_default(),
    };
    let reply = reply.to_document().unwrap_or_default();
    let mut command = cmd.body.clone();
    if let Some(docs) = &cmd.raw_documents {
        let docs: Vec<Bson> = docs
            .iter()
            .filter_map(|d| d.to_document().ok().map(Bson::Document))
            .collect();
        command.insert("documents", docs);
    }
    let mut e = doc! {
        "op": op,
        "ns": format!("{}.{coll}", cmd.db),
        "command": command,
        "keysExamined": m.keys_examined as i64,
        "docsExamined": m.docs_examined as i64,
    };
    let write =
        matches!(op, "insert" | "update" | "remove") || name.eq_ignore_ascii_case("findAndModify");
    match op {
        "update" => {
            e.insert("nMatched", int(&reply, "n").unwrap_or(0));
            e.insert("nModified", int(&reply, "nModified").unwrap_or(0));
            if reply.contains_key("upserted") {
                e.insert("upsert", true);
            }
        }
        "insert" => {
            e.insert("ninserted", int(&reply, "n").unwrap_or(0));
        }
        "remove" => {
            e.insert("ndeleted", int(&reply, "n").unwrap_or(0));
        }
        _ => {}
    }
    if write {
        e.insert("keysInserted", m.keys_inserted as i64);
        e.insert("keysDeleted", m.keys_deleted as i64);
    }
    e.insert("numYield", 0);
    // What the modelled cache read in for this operation; mongod leaves
    // `storage` out when the operation read nothing from disk.
    if m.bytes_read > 0 {
        let micros = schemalab_engine::cache::read_micros(m.bytes_read, m.pages_read);
        e.insert(
            "storage",
            doc! {"data": {
                "bytesRead": i64::try_from(m.bytes_read).unwrap_or(i64::MAX),
                "timeReadingMicros": i64::try_from(micros).unwrap_or(i64::MAX),
            }},
        );
    }
    if let Some(n) = batch_len(&reply) {
        e.insert("nreturned", n);
    }
    if let Some(id) = reply
        .get_document("cursor")
        .ok()
        .and_then(|c| c.get("id"))
        .filter(|id| !matches!(id, Bson::Int64(0) | Bson::Int32(0)))
    {
        e.insert("cursorid", id.clone());
    }
    let ok = reply.get("ok").and_then(number).unwrap_or(1.0);
    if ok == 0.0 {
        e.insert("ok", 0.0);
        if let Ok(msg) = reply.get_str("errmsg") {
            e.insert("errMsg", msg);
        }
        if let Ok(name) = reply.get_str("codeName") {
            e.insert("errName", name);
        }
        if let Some(code) = int(&reply, "code") {
            e.insert("errCode", code);
        }
    }
    e.insert("protocol", "op_msg");
    e.insert("millis", millis);
    if let Some(p) = &m.plan_summary {
        e.insert("planSummary", p.clone());
    }
    e.insert("ts", now);
    e.insert(
        "client",
        client.map_or_else(|| "127.0.0.1".to_string(), |a| a.ip().to_string()),
    );
    e.insert("allUsers", Vec::<Bson>::new());
    e.insert("user", "");
    e
}
