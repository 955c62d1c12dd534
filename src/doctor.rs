//! `schemalab doctor`: what the course needs of a server, checked on that
//! server before a class relies on it. Each check runs one real command
//! (as the course would run it) in the learner's own scratch database
//! (`schemalab_[<learner>_]doctor`, dropped afterwards) and says what works,
//! what degrades (a figure the course then shows as "not reported") and
//! what fails (the course cannot run). Nothing is assumed from the server's
//! name or version alone.

use bson::{Document, doc};
use futures_util::TryStreamExt;
use mongodb::Client;

use crate::course::DbNames;
use crate::locale::Message;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Works as the course needs.
    Ok,
    /// Works, but a figure or feature degrades (the detail says which).
    Degraded,
    /// The course cannot run this way.
    Failed,
    /// Information, not a verdict.
    Info,
}

impl Status {
    /// The mark shown before the check.
    pub fn mark(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Degraded => "!",
            Status::Failed => "✗",
            Status::Info => "·",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: Message,
    pub status: Status,
    pub detail: Message,
}

/// Every check, in order.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    /// True when no check failed (degraded ones allowed).
    pub fn usable(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Failed)
    }

    fn push(&mut self, name: &'static str, status: Status, detail: Message) {
        self.checks.push(Check {
            name: Message::new(name),
            status,
            detail,
        });
    }
}

/// Clock difference past which the report warns: timings, TTL indexes and
/// `$$NOW` in lessons are compared with this machine's time.
const SKEW_WARN_SECS: i64 = 5;
/// Free disk below which the report warns: the large scale loads a few
/// hundred MiB per lesson.
const FREE_WARN_BYTES: f64 = 2.0 * 1024.0 * 1024.0 * 1024.0;

/// Run every check against `client` with the databases `names` gives.
pub async fn examine(client: &Client, names: &DbNames, embedded: bool) -> Report {
    let mut r = Report::default();
    let admin = client.database("admin");
    // Who answers: version and topology, from `hello` and `buildInfo`.
    let hello = match admin.run_command(doc! {"hello": 1}).await {
        Ok(h) => h,
        Err(e) => {
            r.push(
                "server",
                Status::Failed,
                Message::new("no answer to hello: {e}").arg("e", brief(&e)),
            );
            return r;
        }
    };
    let version = admin
        .run_command(doc! {"buildInfo": 1})
        .await
        .ok()
        .and_then(|b| b.get_str("version").ok().map(str::to_string))
        .unwrap_or_default();
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    let topology = if embedded {
        Message::new("schemalab's embedded engine (a standalone)")
    } else if hello.get_str("msg").is_ok_and(|m| m == "isdbgrid") {
        Message::new("a sharded cluster (mongos)")
    } else if let Ok(set) = hello.get_str("setName") {
        Message::new("replica set {set}").arg("set", set)
    } else {
        Message::new("a standalone")
    };
    r.push(
        "server",
        match major {
            0..=4 => Status::Failed,
            5 => Status::Degraded,
            _ => Status::Ok,
        },
        match major {
            0..=4 => Message::new(
                "MongoDB {version}, {topology}: the course needs 5.0 or later (it is written for 7.0)",
            ),
            5 => Message::new(
                "MongoDB {version}, {topology}: works; explain output and a few operators differ from the 7.0 the course is written for",
            ),
            _ => Message::new("MongoDB {version}, {topology}"),
        }
        .arg("version", if version.is_empty() { "?" } else { &version })
        .arg_msg("topology", topology),
    );
    // This machine's clock against the server's.
    if let Ok(t) = hello.get_datetime("localTime") {
        let skew = (t.timestamp_millis() - bson::DateTime::now().timestamp_millis()) / 1000;
        r.push(
            "clock",
            if skew.abs() > SKEW_WARN_SECS {
                Status::Degraded
            } else {
                Status::Ok
            },
            Message::new("the server's clock is {s} s from this machine's").arg("s", skew),
        );
    }
    r.push(
        "databases",
        Status::Info,
        Message::new("this machine's runs write only databases starting {prefix}")
            .arg("prefix", names.prefix()),
    );
    let db_name = format!("{}doctor", names.prefix());
    let db = client.database(&db_name);
    // Writing and dropping what the course writes.
    let wrote = db
        .collection::<Document>("probe")
        .insert_one(doc! {"_id": 1, "x": "schemalab doctor"})
        .await;
    match &wrote {
        Ok(_) => r.push(
            "writing",
            Status::Ok,
            Message::new("created and wrote {db}").arg("db", &db_name),
        ),
        Err(e) => r.push(
            "writing",
            Status::Failed,
            Message::new(
                "cannot write {db} ({e}): the course creates, fills and drops such databases, so the user needs readWrite on them (or readWriteAnyDatabase)",
            )
            .arg("db", &db_name)
            .arg("e", brief(e)),
        ),
    }
    if wrote.is_ok() {
        let _ = db
            .collection::<Document>("probe")
            .create_index(mongodb::IndexModel::builder().keys(doc! {"x": 1}).build())
            .await;
        // Sizes: `$collStats`, as the course measures every collection.
        let sized = async {
            db.collection::<Document>("probe")
                .aggregate([doc! {"$collStats": {"storageStats": {}}}])
                .await?
                .try_collect::<Vec<Document>>()
                .await
        }
        .await;
        match sized {
            Ok(_) => r.push(
                "sizes",
                Status::Ok,
                Message::new("$collStats answers: collection and index sizes are measured"),
            ),
            Err(e) => r.push(
                "sizes",
                Status::Degraded,
                Message::new(
                    "$collStats refused ({e}): the course falls back to the collStats command",
                )
                .arg("e", brief(&e)),
            ),
        }
        // The profiler: index keys a write inserted and deleted come from it.
        let profiled = db.run_command(doc! {"profile": 2}).await;
        let _ = db.run_command(doc! {"profile": 0}).await;
        match profiled {
            Ok(_) => r.push(
                "profiler",
                Status::Ok,
                Message::new("allowed: writes' index keys inserted and deleted are measured"),
            ),
            Err(e) => r.push(
                "profiler",
                Status::Degraded,
                Message::new(
                    "refused ({e}): writes' index key counts show as \"not reported\" (Atlas shared tiers refuse the profiler)",
                )
                .arg("e", brief(&e)),
            ),
        }
        // Free space where the data goes.
        match db
            .run_command(doc! {"dbStats": 1, "freeStorage": 1})
            .await
            .ok()
            .and_then(|s| {
                let total = number(&s, "fsTotalSize")?;
                let used = number(&s, "fsUsedSize")?;
                Some(total - used)
            }) {
            Some(free) => r.push(
                "disk",
                if free < FREE_WARN_BYTES {
                    Status::Degraded
                } else {
                    Status::Ok
                },
                Message::new("{free} free on the server's data volume (the large scale needs a few hundred MiB per lesson)")
                    .arg("free", crate::course::report::human_bytes(free)),
            ),
            None if embedded => r.push(
                "disk",
                Status::Ok,
                Message::new("in memory: the embedded engine writes nothing to disk"),
            ),
            None => r.push(
                "disk",
                Status::Info,
                Message::new("not reported by the server"),
            ),
        }
    }
    let dropped = db.drop().await;
    if let (Ok(_), Err(e)) = (&wrote, dropped) {
        r.push(
            "dropping",
            Status::Failed,
            Message::new("cannot drop {db} ({e}): every run starts by dropping its databases")
                .arg("db", &db_name)
                .arg("e", brief(&e)),
        );
    }
    r
}

/// A driver error in one line: the server's code, name and words, or the
/// driver's own message.
fn brief(e: &mongodb::error::Error) -> String {
    match e.kind.as_ref() {
        mongodb::error::ErrorKind::Command(c) => {
            format!("{} {}: {}", c.code, c.code_name, c.message)
        }
        mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(w)) => {
            format!("{}: {}", w.code, w.message)
        }
        other => other.to_string(),
    }
}

fn number(d: &Document, key: &str) -> Option<f64> {
    match d.get(key)? {
        bson::Bson::Double(x) => Some(*x),
        bson::Bson::Int32(x) => Some(f64::from(*x)),
        bson::Bson::Int64(x) => Some(*x as f64),
        _ => None,
    }
}
