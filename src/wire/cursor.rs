//! The server's cursor table: query results that did not fit in one batch.
//!
//! A command that returns a cursor (`find`, `aggregate`, `listCollections`,
//! `listIndexes`) runs to completion in the engine; what the first batch
//! does not carry is parked here under a random non-zero id until `getMore`
//! drains it or `killCursors` drops it. Batches follow mongod's sizing: the
//! first holds at most 101 documents unless `batchSize` says otherwise, and
//! every batch stops before 16 MiB (but always carries one document).
//!
//! Parked results are bounded: a cursor idle longer than mongod's
//! `cursorTimeoutMillis` is killed (by the monitor every minute, and
//! whenever a cursor is opened), and at most [`MAX_OPEN_CURSORS`] cursors
//! holding at most [`MAX_PARKED_BYTES`] between them stay open; opening one
//! more kills the least recently used. A killed cursor answers `getMore`
//! with 43 CursorNotFound, as mongod's do.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bson::{Document, RawArrayBuf, RawDocumentBuf};
use parking_lot::Mutex;

use crate::engine::{EngineError, ErrorCode, Result};

/// Documents in a first batch when the client gives no `batchSize`.
pub const DEFAULT_FIRST_BATCH: usize = 101;
/// The most bytes of documents in one batch.
pub const MAX_BATCH_BYTES: usize = 16 * 1024 * 1024;
/// How long an unused cursor lives by default, as mongod's
/// `cursorTimeoutMillis` (`setParameter` changes
/// `limits::CURSOR_TIMEOUT_MILLIS`).
pub const CURSOR_TIMEOUT: Duration = Duration::from_secs(600);
/// The most cursors open at once on one server.
pub const MAX_OPEN_CURSORS: usize = 10_000;
/// The most bytes of results the open cursors may hold between them.
pub const MAX_PARKED_BYTES: u64 = 256 * 1024 * 1024;

/// The idle timeout in force.
pub fn cursor_timeout() -> Duration {
    Duration::from_millis(crate::engine::limits::CURSOR_TIMEOUT_MILLIS.get())
}

/// One open cursor.
#[derive(Debug)]
struct Cursor {
    /// `db.coll`, checked against each `getMore`.
    ns: String,
    remaining: std::vec::IntoIter<Document>,
    /// The approximate size of what it holds, for [`MAX_PARKED_BYTES`].
    bytes: u64,
    /// For the idle timeout.
    last_used: Instant,
}

/// Every open cursor of a server, shared by its connections (a driver may
/// run `getMore` on a different pooled connection than the `find`).
#[derive(Debug, Default)]
pub struct CursorTable {
    cursors: Mutex<HashMap<i64, Cursor>>,
}

/// What `killCursors` found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KillOutcome {
    pub killed: Vec<i64>,
    pub not_found: Vec<i64>,
}

fn internal(e: impl std::fmt::Display) -> EngineError {
    EngineError::new(ErrorCode::INTERNAL_ERROR, e.to_string())
}

/// Move documents from `source` into a batch, up to `max_docs` and the byte
/// limit. Looks ahead through `as_slice` so that a document that does not
/// fit stays in `source`.
fn fill(source: &mut std::vec::IntoIter<Document>, max_docs: Option<usize>) -> Result<RawArrayBuf> {
    let mut batch = RawArrayBuf::new();
    let mut count = 0usize;
    let mut bytes = 0usize;
    while max_docs.is_none_or(|m| count < m) {
        let Some(doc) = source.as_slice().first() else {
            break;
        };
        let raw = RawDocumentBuf::from_document(doc).map_err(internal)?;
        let len = raw.as_bytes().len();
        // Every document a command returns fits mongod's internal BSON
        // limit (16 MiB plus 16 KiB of headroom), or the command fails.
        if len > crate::engine::limits::MAX_INTERNAL_OBJECT_SIZE {
            return Err(crate::engine::limits::object_too_large(len));
        }
        if count > 0 && bytes + len > MAX_BATCH_BYTES {
            break;
        }
        source.next();
        bytes += len;
        count += 1;
        batch.push(raw);
    }
    Ok(batch)
}

/// `{cursor: {<batch_key>: [...], id, ns}}`.
fn cursor_reply(batch_key: &str, batch: RawArrayBuf, id: i64, ns: &str) -> RawDocumentBuf {
    let mut cursor = RawDocumentBuf::new();
    cursor.append(batch_key, batch);
    cursor.append("id", id);
    cursor.append("ns", ns);
    let mut reply = RawDocumentBuf::new();
    reply.append("cursor", cursor);
    reply
}

impl CursorTable {
    /// Answer a cursor-returning command: the first batch, and a parked
    /// cursor for the rest unless `single_batch` or nothing remains.
    pub fn open(
        &self,
        ns: String,
        docs: Vec<Document>,
        batch_size: Option<usize>,
        single_batch: bool,
    ) -> Result<RawDocumentBuf> {
        let mut remaining = docs.into_iter();
        let limit = Some(batch_size.unwrap_or(DEFAULT_FIRST_BATCH));
        let batch = fill(&mut remaining, limit)?;
        let id = if single_batch || remaining.len() == 0 {
            0
        } else {
            self.park(ns.clone(), remaining)
        };
        Ok(cursor_reply("firstBatch", batch, id, &ns))
    }

    fn park(&self, ns: String, remaining: std::vec::IntoIter<Document>) -> i64 {
        let bytes = remaining
            .as_slice()
            .iter()
            .map(|d| {
                d.iter()
                    .map(|(k, v)| k.len() as u64 + 2 + crate::engine::limits::approx_size(v))
                    .sum::<u64>()
                    + 5
            })
            .sum();
        let mut cursors = self.cursors.lock();
        let timeout = cursor_timeout();
        cursors.retain(|_, c| c.last_used.elapsed() < timeout);
        let mut held: u64 = cursors.values().map(|c| c.bytes).sum();
        while !cursors.is_empty()
            && (cursors.len() >= MAX_OPEN_CURSORS || held + bytes > MAX_PARKED_BYTES)
        {
            let Some((&oldest, _)) = cursors.iter().min_by_key(|(_, c)| c.last_used) else {
                break;
            };
            if let Some(c) = cursors.remove(&oldest) {
                held -= c.bytes;
            }
        }
        let id = loop {
            // Positive and non-zero: 0 means "exhausted" on the wire.
            let id = rand::random::<i64>() & i64::MAX;
            if id != 0 && !cursors.contains_key(&id) {
                break id;
            }
        };
        cursors.insert(
            id,
            Cursor {
                ns,
                remaining,
                bytes,
                last_used: Instant::now(),
            },
        );
        id
    }

    /// The next batch of cursor `id`, which must belong to `ns`.
    pub fn get_more(&self, id: i64, ns: &str, batch_size: Option<usize>) -> Result<RawDocumentBuf> {
        let mut cursor = {
            let mut cursors = self.cursors.lock();
            match cursors.get(&id) {
                None => {
                    return Err(EngineError::new(
                        ErrorCode::CURSOR_NOT_FOUND,
                        format!("cursor id {id} not found"),
                    ));
                }
                Some(c) if c.ns != ns => {
                    return Err(EngineError::new(
                        ErrorCode::UNAUTHORIZED,
                        format!(
                            "Requested getMore on namespace '{ns}', but cursor belongs to a different namespace {}",
                            c.ns
                        ),
                    ));
                }
                Some(_) => {}
            }
            // Taken out while the batch is built so other connections are
            // not held up by the serialisation.
            match cursors.remove(&id) {
                Some(c) => c,
                None => {
                    return Err(EngineError::new(
                        ErrorCode::CURSOR_NOT_FOUND,
                        "cursor vanished",
                    ));
                }
            }
        };
        let batch = fill(&mut cursor.remaining, batch_size)?;
        let next_id = if cursor.remaining.len() == 0 {
            0
        } else {
            cursor.last_used = Instant::now();
            self.cursors.lock().insert(id, cursor);
            id
        };
        Ok(cursor_reply("nextBatch", batch, next_id, ns))
    }

    /// Drop cursors by id.
    pub fn kill(&self, ids: &[i64]) -> KillOutcome {
        let mut cursors = self.cursors.lock();
        let mut outcome = KillOutcome::default();
        for &id in ids {
            if cursors.remove(&id).is_some() {
                outcome.killed.push(id);
            } else {
                outcome.not_found.push(id);
            }
        }
        outcome
    }

    /// Drop cursors idle for longer than `timeout`; returns how many went.
    pub fn reap_idle(&self, timeout: Duration) -> usize {
        let mut cursors = self.cursors.lock();
        let before = cursors.len();
        cursors.retain(|_, c| c.last_used.elapsed() < timeout);
        before - cursors.len()
    }

    /// How many cursors are open.
    pub fn len(&self) -> usize {
        self.cursors.lock().len()
    }

    /// Whether no cursor is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bson::doc;

    fn batch(reply: &RawDocumentBuf, key: &str) -> (usize, i64) {
        let reply = reply.to_document().unwrap();
        let cursor = reply.get_document("cursor").unwrap();
        (
            cursor.get_array(key).unwrap().len(),
            cursor.get_i64("id").unwrap(),
        )
    }

    #[test]
    fn default_first_batch_then_rest() {
        let table = CursorTable::default();
        let docs = (0..250).map(|i| doc! {"i": i}).collect();
        let first = table.open("d.c".into(), docs, None, false).unwrap();
        let (n, id) = batch(&first, "firstBatch");
        assert_eq!(n, DEFAULT_FIRST_BATCH);
        assert_ne!(id, 0);
        assert!(table.get_more(id, "d.other", None).is_err());
        let more = table.get_more(id, "d.c", Some(100)).unwrap();
        assert_eq!(batch(&more, "nextBatch"), (100, id));
        let rest = table.get_more(id, "d.c", None).unwrap();
        assert_eq!(batch(&rest, "nextBatch"), (49, 0));
        assert!(table.is_empty());
        let gone = table.get_more(id, "d.c", None).unwrap_err();
        assert_eq!(gone.code, ErrorCode::CURSOR_NOT_FOUND);
    }

    #[test]
    fn batches_stop_before_sixteen_mebibytes() {
        let table = CursorTable::default();
        let big = "x".repeat(1024 * 1024);
        let docs = (0..20).map(|i| doc! {"i": i, "s": big.clone()}).collect();
        let first = table.open("d.c".into(), docs, None, false).unwrap();
        let (n, id) = batch(&first, "firstBatch");
        assert_eq!(n, 15);
        let rest = table.get_more(id, "d.c", None).unwrap();
        assert_eq!(batch(&rest, "nextBatch"), (5, 0));
    }

    #[test]
    fn single_batch_and_empty_results_leave_no_cursor() {
        let table = CursorTable::default();
        let docs = (0..5).map(|i| doc! {"i": i}).collect();
        let reply = table.open("d.c".into(), docs, Some(2), true).unwrap();
        assert_eq!(batch(&reply, "firstBatch"), (2, 0));
        let reply = table
            .open("d.c".into(), Vec::new(), Some(0), false)
            .unwrap();
        assert_eq!(batch(&reply, "firstBatch"), (0, 0));
        assert!(table.is_empty());
        let kept = table
            .open("d.c".into(), vec![doc! {}], Some(0), false)
            .unwrap();
        let (_, id) = batch(&kept, "firstBatch");
        assert_eq!(
            table.kill(&[id, 5]),
            KillOutcome {
                killed: vec![id],
                not_found: vec![5]
            }
        );
    }
}
