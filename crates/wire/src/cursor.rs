//! The server's cursor table: query plans and results that did not fit in
//! one batch.
//!
//! A `find` cursor holds its plan, not its results: the first batch is
//! produced by running the plan (an [`schemalab_engine::exec::FindStream`])
//! until the batch is full, and each `getMore` continues it where the last
//! batch stopped, over the collection snapshot the `find` took (a write
//! after the `find` is not seen; see COMPAT.md). Commands whose results are
//! computed whole (`aggregate`, `listCollections`, `listIndexes`) park what
//! the first batch does not carry. Either way a cursor lives under a random
//! non-zero id until it is exhausted, `killCursors` drops it or it times
//! out. Batches follow mongod's sizing: the first holds at most 101
//! documents unless `batchSize` says otherwise, and every batch stops
//! before its array would pass 16 MiB, counting each element's type byte
//! and index key as well as its document (but always carries one
//! document), so that the reply stays under mongod's 16 MiB + 16 KiB
//! internal limit however small the documents are. One document is read
//! ahead of each batch, to answer id 0 when nothing remains, as before.
//!
//! Cursors are bounded: a cursor idle longer than mongod's
//! `cursorTimeoutMillis` is killed (by the monitor every minute, and
//! whenever a cursor is opened), and at most [`MAX_OPEN_CURSORS`] cursors
//! holding at most [`MAX_PARKED_BYTES`] between them stay open; opening one
//! more kills the least recently used. A killed cursor answers `getMore`
//! with 43 CursorNotFound, as mongod's do.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bson::{Bson, Document, RawArrayBuf, RawDocumentBuf};
use parking_lot::Mutex;

use schemalab_engine::{EngineError, ErrorCode, Result};

/// Documents in a first batch when the client gives no `batchSize`.
pub const DEFAULT_FIRST_BATCH: usize = 101;
/// The most bytes one batch array may take: its documents and, per
/// element, the overhead [`element_overhead`] counts.
pub const MAX_BATCH_BYTES: usize = 16 * 1024 * 1024;

/// What the `index`-th element of a batch array takes beyond its
/// document: the type byte, the decimal key (`"0"`, `"1"`, … `"123456"`)
/// and the key's terminating nul. Counting only documents let a batch of
/// small documents carry up to ~8 bytes per document more than 16 MiB,
/// which the reply's 16 KiB of headroom does not cover.
fn element_overhead(index: usize) -> usize {
    let digits = index.checked_ilog10().map_or(1, |d| d as usize + 1);
    1 + digits + 1
}
/// How long an unused cursor lives by default, as mongod's
/// `cursorTimeoutMillis` (`setParameter` changes
/// `limits::CURSOR_TIMEOUT_MILLIS`).
pub const CURSOR_TIMEOUT: Duration = Duration::from_secs(600);
/// The most cursors open at once on one server.
pub const MAX_OPEN_CURSORS: usize = 10_000;
/// The most bytes of results the open cursors may hold between them.
pub const MAX_PARKED_BYTES: u64 = 256 * 1024 * 1024;

/// The idle timeout in force for the running command (its server's
/// `cursorTimeoutMillis`).
pub fn cursor_timeout() -> Duration {
    Duration::from_millis(schemalab_engine::limits::CURSOR_TIMEOUT_MILLIS.get())
}

/// The idle timeout `params` set (for the monitor, outside any command).
pub fn cursor_timeout_of(params: &schemalab_engine::limits::Params) -> Duration {
    Duration::from_millis(params.get(&schemalab_engine::limits::CURSOR_TIMEOUT_MILLIS))
}

/// Where a cursor's documents come from, one at a time.
pub trait Source: Send {
    /// The next document, or `None` at the end.
    fn next_doc(&mut self) -> Result<Option<RawDocumentBuf>>;
    /// The approximate bytes the source holds for the cursor (not the
    /// collection it reads, which is shared with the catalog).
    fn held_bytes(&self) -> u64;
    /// A batch is complete: report what it cost (the profiler's figures).
    fn end_batch(&mut self) {}
}

/// Results computed whole (`listCollections`, `listIndexes`, pipelines that
/// do not stream), handed out from memory.
struct Materialised {
    docs: std::vec::IntoIter<Document>,
    bytes: u64,
}

fn approx_doc_size(d: &Document) -> u64 {
    d.iter()
        .map(|(k, v)| k.len() as u64 + 2 + schemalab_engine::limits::approx_size(v))
        .sum::<u64>()
        + 5
}

impl Materialised {
    fn new(docs: Vec<Document>) -> Self {
        let bytes = docs.iter().map(approx_doc_size).sum();
        Materialised {
            docs: docs.into_iter(),
            bytes,
        }
    }
}

impl Source for Materialised {
    fn next_doc(&mut self) -> Result<Option<RawDocumentBuf>> {
        let Some(doc) = self.docs.next() else {
            return Ok(None);
        };
        self.bytes = self.bytes.saturating_sub(approx_doc_size(&doc));
        schemalab_engine::codec::encode(&doc)
            .map(Some)
            .map_err(internal)
    }

    fn held_bytes(&self) -> u64 {
        self.bytes
    }
}

/// A `find` plan, continued batch by batch over its snapshot.
impl Source for schemalab_engine::exec::FindStream {
    fn next_doc(&mut self) -> Result<Option<RawDocumentBuf>> {
        self.next_raw()
    }

    fn held_bytes(&self) -> u64 {
        0
    }

    fn end_batch(&mut self) {
        self.report();
    }
}

/// An aggregation whose stages stream, continued batch by batch.
impl Source for schemalab_engine::exec::AggStream {
    fn next_doc(&mut self) -> Result<Option<RawDocumentBuf>> {
        self.next_raw()
    }

    fn held_bytes(&self) -> u64 {
        schemalab_engine::exec::AggStream::held_bytes(self)
    }

    fn end_batch(&mut self) {
        self.report();
    }
}

/// One open cursor: its source (a plan's state, or what is left of
/// materialised results) and the document read ahead of the last batch.
struct Cursor {
    /// `db.coll`, checked against each `getMore`.
    ns: String,
    source: Box<dyn Source>,
    /// The next document, read to learn whether the cursor is exhausted
    /// (or left over because it did not fit the last batch's bytes).
    pending: Option<RawDocumentBuf>,
    /// An error met while reading ahead, returned by the next `getMore`
    /// (as mongod fails the `getMore` whose batch meets it).
    failed: Option<EngineError>,
    /// The approximate size of what it holds, for [`MAX_PARKED_BYTES`].
    bytes: u64,
    /// For the idle timeout.
    last_used: Instant,
    /// What is left of the opening command's `maxTimeMS`: as in mongod,
    /// the limit bounds the cursor's work across its `getMore`s.
    budget: Option<Duration>,
    /// The session (`lsid`) that opened it: a `getMore` from another
    /// session is refused, as mongod refuses it.
    lsid: Option<Bson>,
}

impl std::fmt::Debug for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("ns", &self.ns)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl Cursor {
    fn new(ns: String, source: Box<dyn Source>) -> Self {
        Cursor {
            ns,
            source,
            pending: None,
            failed: None,
            bytes: 0,
            last_used: Instant::now(),
            budget: None,
            lsid: None,
        }
    }

    /// Move documents from the source into a batch, up to `max_docs` and
    /// the byte limit (a document that does not fit stays pending), then
    /// read one ahead to learn whether more remain. Returns the batch and
    /// whether the cursor is exhausted.
    fn fill(&mut self, max_docs: Option<usize>) -> Result<(RawArrayBuf, bool)> {
        let mut batch = RawArrayBuf::new();
        let mut count = 0usize;
        let mut bytes = 0usize;
        let mut ended = false;
        while max_docs.is_none_or(|m| count < m) {
            let raw = match self.pending.take() {
                Some(raw) => raw,
                None => match self.source.next_doc()? {
                    Some(raw) => raw,
                    None => {
                        ended = true;
                        break;
                    }
                },
            };
            let len = raw.as_bytes().len();
            // Every document a command returns fits mongod's internal BSON
            // limit (16 MiB plus 16 KiB of headroom), or the command fails.
            if len > schemalab_engine::limits::MAX_INTERNAL_OBJECT_SIZE {
                return Err(schemalab_engine::limits::object_too_large(len));
            }
            let cost = len + element_overhead(count);
            if count > 0 && bytes + cost > MAX_BATCH_BYTES {
                self.pending = Some(raw);
                break;
            }
            bytes += cost;
            count += 1;
            batch.push(raw);
        }
        if !ended && self.pending.is_none() {
            match self.source.next_doc() {
                Ok(Some(raw)) => self.pending = Some(raw),
                Ok(None) => ended = true,
                Err(e) => self.failed = Some(e),
            }
        }
        self.source.end_batch();
        self.bytes = self.source.held_bytes()
            + self
                .pending
                .as_ref()
                .map_or(0, |raw| raw.as_bytes().len() as u64);
        Ok((batch, ended))
    }
}

/// mongod's `validateLSID`: a cursor opened in a session serves only that
/// session's `getMore`s, and one opened outside any session serves none
/// made in a session.
fn check_session(id: i64, cursor: Option<&Bson>, request: Option<&Bson>) -> Result<()> {
    match (cursor, request) {
        (None, Some(req)) => Err(EngineError::new(
            ErrorCode(50736),
            format!(
                "Cannot run getMore on cursor {id}, which was not created in a session, in session {}",
                show_lsid(req)
            ),
        )),
        (Some(cur), None) => Err(EngineError::new(
            ErrorCode(50737),
            format!(
                "Cannot run getMore on cursor {id}, which was created in session {}, without an lsid",
                show_lsid(cur)
            ),
        )),
        (Some(cur), Some(req)) if session_id(cur) != session_id(req) => Err(EngineError::new(
            ErrorCode(50738),
            format!(
                "Cannot run getMore on cursor {id}, which was created in session {}, in session {}",
                show_lsid(cur),
                show_lsid(req)
            ),
        )),
        _ => Ok(()),
    }
}

/// What identifies a session: its `lsid.id` (the whole value if it is not
/// a document).
fn session_id(lsid: &Bson) -> Option<&Bson> {
    match lsid {
        Bson::Document(d) => d.get("id"),
        other => Some(other),
    }
}

/// mongod's `LogicalSessionId` as its messages print it: the id, the
/// user's digest (here always the unauthenticated user's, SHA-256 of the
/// empty name) and two empty fields.
fn show_lsid(lsid: &Bson) -> String {
    let id = match session_id(lsid) {
        Some(Bson::Binary(b)) if b.bytes.len() == 16 => {
            let h: String = b.bytes.iter().map(|x| format!("{x:02x}")).collect();
            format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            )
        }
        Some(other) => other.to_string(),
        None => lsid.to_string(),
    };
    format!("{id} - 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= -  - ")
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
    /// Answer a cursor-returning command whose results were computed
    /// whole: the first batch, and a parked cursor for the rest unless
    /// `single_batch` or nothing remains.
    pub fn open(
        &self,
        lsid: Option<&Bson>,
        ns: String,
        docs: Vec<Document>,
        batch_size: Option<usize>,
        single_batch: bool,
    ) -> Result<RawDocumentBuf> {
        self.open_source(
            lsid,
            ns,
            Box::new(Materialised::new(docs)),
            batch_size,
            single_batch,
        )
    }

    /// Answer a cursor-returning command from a source (a `find` plan that
    /// has not run yet): the first batch is produced by running it until
    /// the batch is full, and the cursor keeps the source to continue.
    pub fn open_source(
        &self,
        lsid: Option<&Bson>,
        ns: String,
        source: Box<dyn Source>,
        batch_size: Option<usize>,
        single_batch: bool,
    ) -> Result<RawDocumentBuf> {
        let mut cursor = Cursor::new(ns.clone(), source);
        cursor.lsid = lsid.cloned();
        let limit = Some(batch_size.unwrap_or(DEFAULT_FIRST_BATCH));
        let (batch, ended) = cursor.fill(limit)?;
        cursor.budget = schemalab_engine::limits::deadline()
            .map(|d| d.saturating_duration_since(Instant::now()));
        let id = if single_batch || ended {
            0
        } else {
            self.park(cursor)
        };
        Ok(cursor_reply("firstBatch", batch, id, &ns))
    }

    fn park(&self, mut cursor: Cursor) -> i64 {
        let bytes = cursor.bytes;
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
        cursor.last_used = Instant::now();
        cursors.insert(id, cursor);
        id
    }

    /// The next batch of cursor `id`, which must belong to `ns`: its plan
    /// continues where the last batch stopped.
    pub fn get_more(
        &self,
        id: i64,
        ns: &str,
        batch_size: Option<usize>,
        lsid: Option<&Bson>,
    ) -> Result<RawDocumentBuf> {
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
                Some(c) => check_session(id, c.lsid.as_ref(), lsid)?,
            }
            // Taken out while the batch is built so other connections are
            // not held up by the plan or the serialisation.
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
        // An error met reading ahead ends the cursor with this getMore.
        if let Some(e) = cursor.failed.take() {
            return Err(e);
        }
        let started = Instant::now();
        let filled = match cursor.budget {
            Some(budget) => {
                let op = schemalab_engine::limits::Operation {
                    deadline: Some(started + budget),
                    killed: schemalab_engine::limits::kill_flag(),
                    params: schemalab_engine::limits::params_in_force(),
                    ..Default::default()
                };
                schemalab_engine::limits::run_as(op, || cursor.fill(batch_size))
            }
            None => cursor.fill(batch_size),
        };
        if let Some(budget) = &mut cursor.budget {
            *budget = budget.saturating_sub(started.elapsed());
        }
        let (batch, ended) = filled?;
        let next_id = if ended {
            0
        } else {
            cursor.last_used = Instant::now();
            self.cursors.lock().insert(id, cursor);
            id
        };
        Ok(cursor_reply("nextBatch", batch, next_id, ns))
    }

    /// The bytes the open cursors hold between them (what counts against
    /// [`MAX_PARKED_BYTES`]).
    pub fn held_bytes(&self) -> u64 {
        self.cursors.lock().values().map(|c| c.bytes).sum()
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
        let first = table.open(None, "d.c".into(), docs, None, false).unwrap();
        let (n, id) = batch(&first, "firstBatch");
        assert_eq!(n, DEFAULT_FIRST_BATCH);
        assert_ne!(id, 0);
        assert!(table.get_more(id, "d.other", None, None).is_err());
        let more = table.get_more(id, "d.c", Some(100), None).unwrap();
        assert_eq!(batch(&more, "nextBatch"), (100, id));
        let rest = table.get_more(id, "d.c", None, None).unwrap();
        assert_eq!(batch(&rest, "nextBatch"), (49, 0));
        assert!(table.is_empty());
        let gone = table.get_more(id, "d.c", None, None).unwrap_err();
        assert_eq!(gone.code, ErrorCode::CURSOR_NOT_FOUND);
    }

    #[test]
    fn batches_stop_before_sixteen_mebibytes() {
        let table = CursorTable::default();
        let big = "x".repeat(1024 * 1024);
        let docs = (0..20).map(|i| doc! {"i": i, "s": big.clone()}).collect();
        let first = table.open(None, "d.c".into(), docs, None, false).unwrap();
        let (n, id) = batch(&first, "firstBatch");
        assert_eq!(n, 15);
        let rest = table.get_more(id, "d.c", None, None).unwrap();
        assert_eq!(batch(&rest, "nextBatch"), (5, 0));
    }

    /// A source of `n` documents of exactly `size` bytes each.
    struct Sized {
        left: usize,
        doc: RawDocumentBuf,
    }

    impl Sized {
        fn new(n: usize, size: usize) -> Self {
            // `{s: "<pad>"}`: 4 (length) + 1 (type) + 2 ("s\0") + 4 (string
            // length) + pad + 1 (nul) + 1 (the document's nul) = pad + 13.
            assert!(size >= 13);
            let doc = RawDocumentBuf::from_document(&doc! {"s": "x".repeat(size - 13)}).unwrap();
            assert_eq!(doc.as_bytes().len(), size);
            Sized { left: n, doc }
        }
    }

    impl Source for Sized {
        fn next_doc(&mut self) -> Result<Option<RawDocumentBuf>> {
            if self.left == 0 {
                return Ok(None);
            }
            self.left -= 1;
            Ok(Some(self.doc.clone()))
        }

        fn held_bytes(&self) -> u64 {
            0
        }
    }

    /// Over 16 MiB of documents of many sizes, the smallest included, every
    /// reply stays within mongod's internal limit, every batch array within
    /// 16 MiB, each full batch holds as many documents as fit (one more
    /// would pass 16 MiB), and every document is handed out once.
    #[test]
    fn every_batch_fits_the_reply_limit_whatever_the_document_size() {
        use schemalab_engine::limits::MAX_INTERNAL_OBJECT_SIZE;
        for size in [
            13, 14, 17, 31, 64, 100, 257, 1_000, 4_099, 65_536, 1_048_577,
        ] {
            let n = (40 * 1024 * 1024) / size + 3;
            let table = CursorTable::default();
            let first = table
                .open_source(
                    None,
                    "d.c".into(),
                    Box::new(Sized::new(n, size)),
                    Some(n),
                    false,
                )
                .unwrap();
            let mut replies = vec![(first, "firstBatch")];
            let mut seen = 0;
            loop {
                let (reply, key) = replies.last().unwrap();
                let len = reply.as_bytes().len();
                assert!(
                    len <= MAX_INTERNAL_OBJECT_SIZE,
                    "size {size}: reply of {len}"
                );
                let cursor = reply.get_document("cursor").unwrap();
                let array = cursor.get_array(key).unwrap();
                let array_len = array.as_bytes().len();
                // The array's own header (length) and trailing nul.
                assert!(array_len - 5 <= MAX_BATCH_BYTES, "size {size}: {array_len}");
                let count = array.into_iter().count();
                seen += count;
                let id = cursor.get_i64("id").unwrap();
                if id == 0 {
                    break;
                }
                let next = size + element_overhead(count);
                assert!(
                    array_len - 5 + next > MAX_BATCH_BYTES,
                    "size {size}: a batch of {count} stopped early"
                );
                replies.push((
                    table.get_more(id, "d.c", Some(n), None).unwrap(),
                    "nextBatch",
                ));
            }
            assert_eq!(seen, n, "size {size}");
            assert!(replies.len() >= 3, "size {size}: {} batches", replies.len());
        }
    }

    #[test]
    fn element_overhead_counts_the_key_digits() {
        assert_eq!(element_overhead(0), 3);
        assert_eq!(element_overhead(9), 3);
        assert_eq!(element_overhead(10), 4);
        assert_eq!(element_overhead(999_999), 8);
        assert_eq!(element_overhead(1_000_000), 9);
    }

    #[test]
    fn single_batch_and_empty_results_leave_no_cursor() {
        let table = CursorTable::default();
        let docs = (0..5).map(|i| doc! {"i": i}).collect();
        let reply = table.open(None, "d.c".into(), docs, Some(2), true).unwrap();
        assert_eq!(batch(&reply, "firstBatch"), (2, 0));
        let reply = table
            .open(None, "d.c".into(), Vec::new(), Some(0), false)
            .unwrap();
        assert_eq!(batch(&reply, "firstBatch"), (0, 0));
        assert!(table.is_empty());
        let kept = table
            .open(None, "d.c".into(), vec![doc! {}], Some(0), false)
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

#[cfg(test)]
mod stream_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bson::{Bson, doc};
    use schemalab_engine::{Engine, FindRequest};

    fn load(engine: &Engine, n: i32) {
        let docs = (0..n)
            .map(|i| RawDocumentBuf::from_document(&doc! {"_id": i, "s": "x".repeat(100)}).unwrap())
            .collect();
        engine.insert("d", "c", docs, true).unwrap();
    }

    fn ids(reply: &RawDocumentBuf, key: &str) -> (Vec<i32>, i64) {
        let reply = reply.to_document().unwrap();
        let cursor = reply.get_document("cursor").unwrap();
        let ids = cursor
            .get_array(key)
            .unwrap()
            .iter()
            .map(|d| match d {
                Bson::Document(d) => d.get_i32("_id").unwrap(),
                other => panic!("{other}"),
            })
            .collect();
        (ids, cursor.get_i64("id").unwrap())
    }

    /// A `find({})` cursor with batchSize 2 hands out every document
    /// exactly once, in order, across getMores; an insert after the cursor
    /// opened is not seen (the cursor reads the snapshot its find took).
    #[test]
    fn find_cursor_streams_every_document_once_over_its_snapshot() {
        let engine = Engine::new();
        load(&engine, 1_001);
        let table = CursorTable::default();
        let stream = engine
            .find_stream("d", "c", &FindRequest::default())
            .unwrap();
        let first = table
            .open_source(None, "d.c".into(), Box::new(stream), Some(2), false)
            .unwrap();
        let (mut seen, mut id) = ids(&first, "firstBatch");
        assert_eq!(seen, vec![0, 1]);
        assert_ne!(id, 0);
        let late = RawDocumentBuf::from_document(&doc! {"_id": 5_000, "s": "late"}).unwrap();
        engine.insert("d", "c", vec![late], true).unwrap();
        while id != 0 {
            let more = table.get_more(id, "d.c", Some(2), None).unwrap();
            let (batch, next) = ids(&more, "nextBatch");
            assert!(batch.len() <= 2);
            seen.extend(batch);
            id = next;
        }
        assert_eq!(seen, (0..1_001).collect::<Vec<_>>());
        assert!(table.is_empty());
        // A new find sees the insert.
        let all = engine.find("d", "c", &FindRequest::default()).unwrap();
        assert_eq!(all.len(), 1_002);
    }

    /// What open cursors hold does not grow with the collection: the plan
    /// has produced the batch and one document read ahead, no more.
    #[test]
    fn open_find_cursors_hold_a_batch_not_the_collection() {
        let mut held = Vec::new();
        for n in [1_000, 20_000] {
            let engine = Engine::new();
            load(&engine, n);
            let table = CursorTable::default();
            for _ in 0..20 {
                let stream = engine
                    .find_stream("d", "c", &FindRequest::default())
                    .unwrap();
                let mut cursor = Cursor::new("d.c".into(), Box::new(stream));
                let (batch, ended) = cursor.fill(Some(1)).unwrap();
                assert_eq!(batch.into_iter().count(), 1);
                assert!(!ended);
                table.park(cursor);
            }
            assert_eq!(table.len(), 20);
            held.push(table.held_bytes());
        }
        // The batch read ahead (one ~120-byte document per cursor), whatever
        // the collection's size.
        assert_eq!(held[0], held[1]);
        assert!(held[0] < 20 * 200, "{held:?}");
    }

    /// A pipeline whose stages stream answers, batch by batch, what the
    /// whole run answers, and its cursor holds a plan, not the results.
    #[test]
    fn streaming_aggregate_matches_the_whole_run() {
        let engine = Engine::new();
        let docs = (0..3_000)
            .map(|i| {
                RawDocumentBuf::from_document(&doc! {"_id": i, "a": [i, i + 1], "k": i % 3})
                    .unwrap()
            })
            .collect();
        engine.insert("d", "c", docs, true).unwrap();
        let pipeline = vec![
            doc! {"$match": {"k": {"$ne": 1}}},
            doc! {"$set": {"b": {"$add": ["$_id", 1]}}},
            doc! {"$unwind": "$a"},
            doc! {"$project": {"a": 1, "b": 1}},
            doc! {"$skip": 3},
            doc! {"$limit": 1_500},
        ];
        let opts = schemalab_engine::AggregateOptions::default();
        let whole = engine.aggregate("d", Some("c"), &pipeline, &opts).unwrap();
        assert_eq!(whole.len(), 1_500);
        let stream = engine
            .aggregate_stream("d", "c", &pipeline, &opts)
            .unwrap()
            .expect("streams");
        let table = CursorTable::default();
        let reply = table
            .open_source(None, "d.c".into(), Box::new(stream), Some(2), false)
            .unwrap();
        let take = |reply: &RawDocumentBuf, key: &str| {
            let reply = reply.to_document().unwrap();
            let cursor = reply.get_document("cursor").unwrap();
            let docs: Vec<Document> = cursor
                .get_array(key)
                .unwrap()
                .iter()
                .filter_map(|d| d.as_document().cloned())
                .collect();
            (docs, cursor.get_i64("id").unwrap())
        };
        let (mut seen, mut id) = take(&reply, "firstBatch");
        assert!(table.held_bytes() < 1_000);
        while id != 0 {
            let (batch, next) = take(
                &table.get_more(id, "d.c", Some(7), None).unwrap(),
                "nextBatch",
            );
            seen.extend(batch);
            id = next;
        }
        assert_eq!(seen, whole);
        // A blocking stage runs whole.
        let grouped = vec![doc! {"$group": {"_id": "$k"}}];
        assert!(
            engine
                .aggregate_stream("d", "c", &grouped, &opts)
                .unwrap()
                .is_none()
        );
    }

    /// The plan itself has materialised only the documents handed out.
    #[test]
    fn a_find_stream_materialises_only_what_it_hands_out() {
        let engine = Engine::new();
        load(&engine, 5_000);
        let mut stream = engine
            .find_stream("d", "c", &FindRequest::default())
            .unwrap();
        for _ in 0..3 {
            assert!(stream.next_raw().unwrap().is_some());
        }
        assert_eq!(stream.produced(), 3);
    }
}
