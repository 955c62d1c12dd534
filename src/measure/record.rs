//! The recorder: an [`Observer`] that keeps what a statement sent. Reads
//! (find, aggregate without `$out`/`$merge`, count, distinct) are kept
//! whole, to be explained as sent. Writes are kept as their figures: the
//! counts in the reply of `insert`, `update` and `delete`, and for a write
//! whose reply has no counts (findAndModify, aggregate with `$merge` or
//! `$out`) what it changed in the database, from a snapshot taken just
//! before it and one just after ([`super::snapshot`]). The time spent
//! snapshotting is kept apart, so it never counts as the write's.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bson::{Bson, Document};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use mongodb::Client;

use super::figures::WriteMetrics;
use super::snapshot::{Scope, Snapshot, effect, snapshot};
use crate::dialect::{Observer, Reply};

/// A read command as it was sent.
#[derive(Debug, Clone)]
pub struct SentRead {
    pub db: String,
    pub command: Document,
}

/// What a command is, for measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// find, count, distinct, or an aggregate that writes nothing.
    Read,
    /// insert, update, delete: the reply counts what they did.
    CountedWrite,
    /// findAndModify, or an aggregate with `$merge` or `$out`: the reply
    /// does not say how many documents changed.
    SilentWrite,
    /// Anything else (indexes, stats, catalog).
    Other,
}

/// What kind of command `cmd` is (its first key names it).
pub fn classify(cmd: &Document) -> Class {
    let Some(name) = cmd.keys().next() else {
        return Class::Other;
    };
    match name.as_str() {
        "find" | "count" | "distinct" => Class::Read,
        "aggregate" => {
            let writes = cmd.get_array("pipeline").is_ok_and(|p| {
                p.iter().any(|s| {
                    s.as_document()
                        .is_some_and(|d| d.contains_key("$merge") || d.contains_key("$out"))
                })
            });
            if writes {
                Class::SilentWrite
            } else {
                Class::Read
            }
        }
        "insert" | "update" | "delete" => Class::CountedWrite,
        "findAndModify" | "findandmodify" => Class::SilentWrite,
        _ => Class::Other,
    }
}

/// The write figures in an `insert`, `update` or `delete` reply: `n`
/// counts the documents inserted, matched (upserts included) or deleted,
/// as the server does.
fn reply_counts(reply: &Document) -> WriteMetrics {
    let int = |k: &str| match reply.get(k) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Double(n)) => *n as i64,
        _ => 0,
    };
    WriteMetrics {
        n: int("n"),
        n_modified: int("nModified"),
        n_upserted: reply.get_array("upserted").map_or(0, |a| a.len() as i64),
        keys_inserted: None,
        keys_deleted: None,
    }
}

#[derive(Default)]
struct Recording {
    reads: Vec<SentRead>,
    writes: Vec<WriteMetrics>,
    /// The snapshot taken before the silent write in flight.
    before: Option<Snapshot>,
    /// A snapshot that failed: the write's figures cannot be trusted.
    error: Option<String>,
    /// Time spent snapshotting.
    overhead: Duration,
}

/// Records what a session sends; clones share one recording.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Recording>>);

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    fn lock(&self) -> MutexGuard<'_, Recording> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The read commands sent, in order.
    pub fn reads(&self) -> Vec<SentRead> {
        self.lock().reads.clone()
    }

    /// The writes' figures, in order; an error when one could not be
    /// measured.
    pub fn writes(&self) -> Result<Vec<WriteMetrics>, String> {
        let r = self.lock();
        match &r.error {
            Some(e) => Err(e.clone()),
            None => Ok(r.writes.clone()),
        }
    }

    /// Milliseconds spent snapshotting around silent writes.
    pub fn overhead_millis(&self) -> f64 {
        self.lock().overhead.as_secs_f64() * 1000.0
    }

    async fn take_snapshot(&self, client: &Client, scope: &Scope) -> Option<Snapshot> {
        let started = Instant::now();
        let s = snapshot(client, scope).await;
        let mut r = self.lock();
        r.overhead += started.elapsed();
        match s {
            Ok(s) => Some(s),
            Err(e) => {
                r.error.get_or_insert(e);
                None
            }
        }
    }
}

impl Observer for Recorder {
    fn before<'a>(
        &'a mut self,
        client: &'a Client,
        db: &'a str,
        cmd: &'a Document,
    ) -> BoxFuture<'a, ()> {
        async move {
            match classify(cmd) {
                Class::Read => self.lock().reads.push(SentRead {
                    db: db.to_string(),
                    command: cmd.clone(),
                }),
                Class::SilentWrite => {
                    let before = self.take_snapshot(client, &Scope::of(db, cmd)).await;
                    self.lock().before = before;
                }
                Class::CountedWrite | Class::Other => {}
            }
        }
        .boxed()
    }

    fn after<'a>(
        &'a mut self,
        client: &'a Client,
        db: &'a str,
        cmd: &'a Document,
        reply: Reply<'a>,
    ) -> BoxFuture<'a, ()> {
        async move {
            match (classify(cmd), reply) {
                (Class::CountedWrite, Reply::Document(r)) => {
                    self.lock().writes.push(reply_counts(r));
                }
                (Class::SilentWrite, Reply::Document(_) | Reply::Cursor) => {
                    let before = self.lock().before.take();
                    let after = self.take_snapshot(client, &Scope::of(db, cmd)).await;
                    if let (Some(b), Some(a)) = (before, after) {
                        self.lock().writes.push(effect(&b, &a));
                    }
                }
                _ => {}
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn commands_are_classified_by_what_they_do() {
        assert_eq!(classify(&doc! {"find": "c", "filter": {}}), Class::Read);
        assert_eq!(classify(&doc! {"distinct": "c", "key": "a"}), Class::Read);
        assert_eq!(
            classify(&doc! {"aggregate": "c", "pipeline": [{"$match": {}}], "cursor": {}}),
            Class::Read
        );
        assert_eq!(
            classify(
                &doc! {"aggregate": "c", "pipeline": [{"$merge": {"into": "d"}}], "cursor": {}}
            ),
            Class::SilentWrite
        );
        assert_eq!(
            classify(&doc! {"findAndModify": "c", "query": {}}),
            Class::SilentWrite
        );
        assert_eq!(
            classify(&doc! {"insert": "c", "documents": []}),
            Class::CountedWrite
        );
        assert_eq!(classify(&doc! {"createIndexes": "c"}), Class::Other);
        assert_eq!(classify(&doc! {}), Class::Other);
    }

    #[test]
    fn an_update_reply_counts_matches_changes_and_upserts() {
        let w = reply_counts(
            &doc! {"n": 3, "nModified": 2, "upserted": [{"index": 0, "_id": 1}], "ok": 1.0},
        );
        assert_eq!((w.n, w.n_modified, w.n_upserted), (3, 2, 1));
        let w = reply_counts(&doc! {"n": 5_i64, "ok": 1.0});
        assert_eq!((w.n, w.n_modified, w.n_upserted), (5, 0, 0));
    }
}
