//! Record storage: a collection's documents as raw BSON, packed one after
//! another into large chunks instead of one allocation each.
//!
//! A record is addressed by its slot (its record id less the collection's
//! first id), and the slot holds where the bytes are: a chunk and an
//! offset, 8 bytes in all. The BSON length prefix says how long the record
//! is, so nothing else is kept per record. A chunk is shared (`Arc`) by
//! every copy of the collection: a reader's snapshot, or another collection
//! that `$out` filled with the same records. A writer appends only to a
//! chunk this heap opened itself, copying it first if a snapshot still
//! shares it (`Arc::make_mut`), and overwrites a record in place only when
//! nobody else can see its chunk (`Arc::get_mut`); otherwise the new bytes
//! are appended and the old ones become dead.
//!
//! Dead bytes are reclaimed two ways: a chunk with no live record left is
//! released at once, and when the dead bytes reach half the live ones (and
//! at least a chunk's worth) the chunks that are at least half dead have
//! their live records moved to the open chunk and are released. The heap
//! never holds more than about 1.5 times its live bytes for long.
//!
//! A chunk other than the open one can be spilled ([`Heap::spill`]): its
//! bytes move to the store's spill file and come back into memory when a
//! reader first needs them. A writer that would change a spilled chunk
//! appends instead, as it does when a chunk is shared.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io;
use std::sync::Arc;

use bson::RawDocument;

use super::spill::{SpillFile, Spilled};
use crate::cache::{self, layout::RecordPages};

/// A chunk fills up to this size; a record of more than a quarter of it
/// gets a chunk of its own, so that a chunk is never mostly slack.
pub const CHUNK_BYTES: usize = 1 << 20;

/// The dead bytes tolerated before a compaction is considered.
const COMPACT_MIN: u64 = CHUNK_BYTES as u64;

/// Where a record's bytes are; `chunk == u32::MAX` for a deleted record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Loc {
    chunk: u32,
    offset: u32,
}

impl Loc {
    const EMPTY: Loc = Loc {
        chunk: u32::MAX,
        offset: 0,
    };

    fn is_live(self) -> bool {
        self.chunk != u32::MAX
    }
}

/// A chunk's bytes: in memory, or in the spill file.
#[derive(Debug)]
pub(super) enum ChunkBuf {
    Mem(Vec<u8>),
    Spilled(Spilled),
}

impl Default for ChunkBuf {
    fn default() -> Self {
        ChunkBuf::Mem(Vec::new())
    }
}

impl ChunkBuf {
    /// The chunk's length, without reading a spilled chunk back.
    fn len(&self) -> usize {
        match self {
            ChunkBuf::Mem(v) => v.len(),
            ChunkBuf::Spilled(s) => s.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the chunk keeps in memory now.
    fn resident(&self) -> usize {
        match self {
            ChunkBuf::Mem(v) => v.capacity(),
            ChunkBuf::Spilled(s) if s.is_loaded() => s.len(),
            ChunkBuf::Spilled(_) => 0,
        }
    }

    /// The bytes as a vector to append to, read back first if spilled.
    fn in_memory(&mut self) -> &mut Vec<u8> {
        if let ChunkBuf::Spilled(s) = self {
            *self = ChunkBuf::Mem(s.bytes().to_vec());
        }
        match self {
            ChunkBuf::Mem(v) => v,
            ChunkBuf::Spilled(_) => unreachable!("read back into memory just above"),
        }
    }
}

impl std::ops::Deref for ChunkBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ChunkBuf::Mem(v) => v,
            ChunkBuf::Spilled(s) => s.bytes(),
        }
    }
}

/// A writer's own copy of a shared chunk is in memory.
impl Clone for ChunkBuf {
    fn clone(&self) -> Self {
        ChunkBuf::Mem(self.to_vec())
    }
}

type Chunk = Arc<ChunkBuf>;

/// The chunks one spill pass has written, by the address of the in-memory
/// chunk (kept alive here, so that the address stays its own): a chunk that
/// several collections share is written once.
#[derive(Default)]
pub struct Spilling {
    written: HashMap<usize, (Chunk, Chunk)>,
}

/// One stored record, borrowed from the heap that holds it; another heap
/// can store it by sharing its chunk ([`Heap::push_shared`]).
#[derive(Clone, Copy)]
pub struct Record<'a> {
    chunk: &'a Chunk,
    raw: &'a RawDocument,
}

impl<'a> Record<'a> {
    /// The record as a raw document.
    pub fn as_raw(&self) -> &'a RawDocument {
        self.raw
    }
}

impl std::ops::Deref for Record<'_> {
    type Target = RawDocument;
    fn deref(&self) -> &RawDocument {
        self.raw
    }
}

impl fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.raw, f)
    }
}

/// The records of one collection, by slot.
#[derive(Clone, Default)]
pub struct Heap {
    chunks: Vec<Chunk>,
    /// Live bytes in each chunk, to release a chunk once it has none and
    /// to pick the chunks a compaction rewrites.
    live_bytes: Vec<u64>,
    /// Indexes of released chunks, reused before the list grows.
    free: Vec<u32>,
    /// The chunk new records are appended to: always one this heap opened.
    open: Option<u32>,
    slots: Vec<Loc>,
    live: usize,
    /// The exact sum of the live records' sizes.
    data_size: u64,
    /// The sum of the chunks' lengths: live plus dead bytes.
    stored: u64,
    /// Where the records are in the cache model's pages.
    pages: RecordPages,
}

impl fmt::Debug for Heap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Heap")
            .field("chunks", &self.chunks.len())
            .field("slots", &self.slots.len())
            .field("live", &self.live)
            .field("data_size", &self.data_size)
            .field("stored", &self.stored)
            .finish()
    }
}

/// The record whose bytes start at `offset` in `chunk`, if they are one.
fn record_at(chunk: &[u8], offset: usize) -> Option<&RawDocument> {
    let head = chunk.get(offset..offset.checked_add(4)?)?;
    let len = usize::try_from(i32::from_le_bytes(head.try_into().ok()?)).ok()?;
    RawDocument::from_bytes(chunk.get(offset..offset.checked_add(len)?)?).ok()
}

impl Heap {
    /// Number of slots, live or not: the next record goes in this one.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Number of live records.
    pub fn live(&self) -> usize {
        self.live
    }

    /// The exact sum of the live records' BSON sizes.
    pub fn data_size(&self) -> u64 {
        self.data_size
    }

    /// Bytes held in chunks, live or dead (what the heap costs).
    #[cfg(test)]
    pub fn stored_bytes(&self) -> u64 {
        self.stored
    }

    fn record(&self, loc: Loc) -> Option<Record<'_>> {
        if !loc.is_live() {
            return None;
        }
        let chunk = self.chunks.get(loc.chunk as usize)?;
        let raw = record_at(chunk, loc.offset as usize)?;
        Some(Record { chunk, raw })
    }

    /// The bytes of this heap's chunks held in memory, counting a chunk
    /// already in `seen` (shared with a heap counted before) as nothing.
    pub fn resident(&self, seen: &mut HashSet<usize>) -> u64 {
        self.chunks
            .iter()
            .filter(|c| seen.insert(Arc::as_ptr(c) as usize))
            .map(|c| c.resident() as u64)
            .sum()
    }

    /// Move every chunk but the open one to `file`, and let go of the
    /// in-memory copy of any chunk read back since it was spilled. Returns
    /// the bytes that left memory for good: those of chunks no other heap
    /// shares.
    pub fn spill(&mut self, file: &Arc<SpillFile>, pass: &mut Spilling) -> io::Result<u64> {
        let mut freed = 0u64;
        for c in 0..self.chunks.len() {
            if self.open == Some(c as u32) {
                continue;
            }
            let chunk = &self.chunks[c];
            let spilled = match &**chunk {
                ChunkBuf::Mem(v) if v.is_empty() => continue,
                ChunkBuf::Mem(v) => {
                    let key = Arc::as_ptr(chunk) as usize;
                    let alone = Arc::strong_count(chunk) == 1;
                    let spilled = match pass.written.get(&key) {
                        Some((_, spilled)) => spilled.clone(),
                        None => {
                            let spilled = Arc::new(ChunkBuf::Spilled(Spilled::new(file.write(v)?)));
                            pass.written.insert(key, (chunk.clone(), spilled.clone()));
                            spilled
                        }
                    };
                    if alone {
                        freed += v.capacity() as u64;
                    }
                    spilled
                }
                ChunkBuf::Spilled(s) if s.is_loaded() => {
                    if Arc::strong_count(chunk) == 1 {
                        freed += s.len() as u64;
                    }
                    Arc::new(ChunkBuf::Spilled(s.unloaded()))
                }
                ChunkBuf::Spilled(_) => continue,
            };
            self.chunks[c] = spilled;
        }
        Ok(freed)
    }

    /// The record in slot `i`, if it is live.
    pub fn get(&self, i: usize) -> Option<Record<'_>> {
        self.record(*self.slots.get(i)?)
    }

    /// The live records from slot `from` on, with their slots, in order.
    pub fn iter_from(&self, from: usize) -> impl DoubleEndedIterator<Item = (usize, Record<'_>)> {
        self.slots
            .get(from..)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .filter_map(move |(i, &loc)| self.record(loc).map(|r| (from + i, r)))
    }

    /// Visit every live record with its slot, in order, as
    /// [`Heap::iter_from`]`(0)` yields them, without bringing spilled chunks
    /// back into memory for good: a chunk in the file is read into a buffer
    /// of this scan's own while the slots stay in it ([`Spilled::read_passing`]).
    /// A chunk met again after the scan has moved on (a record rewritten
    /// into a later chunk) is read back as any reader reads it, so that no
    /// order of slots reads a chunk more than twice. An index build scans
    /// a whole collection this way; `visit`'s first error stops the scan.
    pub fn scan<E>(
        &self,
        mut visit: impl FnMut(usize, &RawDocument) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut passing: Option<(u32, Box<[u8]>)> = None;
        let mut passed = HashSet::new();
        for (i, &loc) in self.slots.iter().enumerate() {
            if !loc.is_live() {
                continue;
            }
            let Some(chunk) = self.chunks.get(loc.chunk as usize) else {
                continue;
            };
            let bytes: &[u8] = match &**chunk {
                ChunkBuf::Spilled(s) if !s.is_loaded() && !passed.contains(&loc.chunk) => {
                    let current = passing.as_ref().map(|(c, _)| *c);
                    if current != Some(loc.chunk) {
                        if let Some(c) = current {
                            passed.insert(c);
                        }
                        passing = Some((loc.chunk, s.read_passing()));
                    }
                    passing.as_ref().map_or(&[][..], |(_, b)| &b[..])
                }
                other => other,
            };
            if let Some(raw) = record_at(bytes, loc.offset as usize) {
                visit(i, raw)?;
            }
        }
        Ok(())
    }

    /// The first live slot at or after `from`.
    pub fn live_from(&self, from: usize) -> Option<usize> {
        self.slots
            .get(from..)?
            .iter()
            .position(|l| l.is_live())
            .map(|i| from + i)
    }

    /// Store a record's bytes in a new slot.
    pub fn push(&mut self, bytes: &[u8]) {
        let loc = self.append(bytes);
        self.written(self.slots.len(), bytes.len());
        self.slots.push(loc);
        self.live += 1;
        self.data_size += bytes.len() as u64;
    }

    /// Store another heap's record in a new slot, sharing its chunk rather
    /// than copying its bytes.
    pub fn push_shared(&mut self, record: Record<'_>) {
        let bytes = record.raw.as_bytes();
        let base = record.chunk[..].as_ptr() as usize;
        let offset = bytes.as_ptr() as usize - base;
        let chunk = match self.chunks.len().checked_sub(1) {
            // Records are copied in order, so they mostly come from the
            // chunk adopted last.
            Some(last) if Arc::ptr_eq(&self.chunks[last], record.chunk) => last,
            _ => self.add_chunk(record.chunk.clone()),
        };
        let n = bytes.len() as u64;
        self.live_bytes[chunk] += n;
        self.written(self.slots.len(), bytes.len());
        self.slots.push(Loc {
            chunk: chunk as u32,
            offset: offset as u32,
        });
        self.live += 1;
        self.data_size += n;
    }

    /// Put `bytes` in place of the live record in slot `i`.
    pub fn replace(&mut self, i: usize, bytes: &[u8]) {
        let Some(&old) = self.slots.get(i) else {
            return;
        };
        let Some(old_len) = self.record(old).map(|r| r.raw.as_bytes().len()) else {
            return;
        };
        let n = bytes.len();
        self.resized(i, old_len, n);
        let c = old.chunk as usize;
        if n <= old_len
            && let Some(ChunkBuf::Mem(chunk)) = Arc::get_mut(&mut self.chunks[c])
        {
            // Nobody else sees this chunk: overwrite, leaving the shrink
            // as dead bytes at the record's end.
            let at = old.offset as usize;
            chunk[at..at + n].copy_from_slice(bytes);
            let shrink = (old_len - n) as u64;
            self.live_bytes[c] -= shrink;
            self.data_size -= shrink;
        } else {
            let loc = self.append(bytes);
            self.slots[i] = loc;
            self.data_size += n as u64;
            self.release(old, old_len);
        }
        self.maybe_compact();
    }

    /// Delete the record in slot `i`; whether there was one.
    pub fn remove(&mut self, i: usize) -> bool {
        let Some(&old) = self.slots.get(i) else {
            return false;
        };
        let Some(old_len) = self.record(old).map(|r| r.raw.as_bytes().len()) else {
            return false;
        };
        self.slots[i] = Loc::EMPTY;
        self.resized(i, old_len, 0);
        self.live -= 1;
        self.release(old, old_len);
        self.maybe_compact();
        true
    }

    /// The cache model: a new record of `len` bytes in `slot` dirties
    /// its page.
    fn written(&mut self, slot: usize, len: usize) {
        let (page, bytes) = self.pages.pushed(slot, len);
        cache::touch(self.pages.file(), page, bytes, true);
    }

    /// The cache model: the record in `slot` changed size (0: deleted),
    /// dirtying its page.
    fn resized(&mut self, slot: usize, old: usize, new: usize) {
        if let Some((page, bytes)) = self.pages.resized(slot, old, new) {
            cache::touch(self.pages.file(), page, bytes, true);
        }
    }

    /// The cache model: the record in `slot` is read, its page requested.
    pub fn touch(&self, slot: usize) {
        if let Some((page, bytes)) = self.pages.page_of(slot) {
            cache::touch(self.pages.file(), page, bytes, false);
        }
    }

    /// The cache model's pages of these records.
    pub fn pages(&self) -> &RecordPages {
        &self.pages
    }

    /// Delete every record and every slot.
    pub fn clear(&mut self) {
        *self = Heap::default();
    }

    /// Account for `len` bytes at `loc` no longer being live.
    fn release(&mut self, loc: Loc, len: usize) {
        let c = loc.chunk as usize;
        self.data_size -= len as u64;
        self.live_bytes[c] -= len as u64;
        if self.live_bytes[c] == 0 {
            if self.open == Some(loc.chunk) {
                // The open chunk is emptied for reuse, not released.
                if let Some(ChunkBuf::Mem(chunk)) = Arc::get_mut(&mut self.chunks[c]) {
                    self.stored -= chunk.len() as u64;
                    chunk.clear();
                    return;
                }
                self.open = None;
            }
            self.release_chunk(c);
        }
    }

    fn release_chunk(&mut self, c: usize) {
        self.stored -= self.chunks[c].len() as u64;
        self.chunks[c] = Chunk::default();
        self.live_bytes[c] = 0;
        self.free.push(c as u32);
    }

    fn add_chunk(&mut self, chunk: Chunk) -> usize {
        self.stored += chunk.len() as u64;
        match self.free.pop() {
            Some(c) => {
                self.chunks[c as usize] = chunk;
                c as usize
            }
            None => {
                self.chunks.push(chunk);
                self.live_bytes.push(0);
                self.chunks.len() - 1
            }
        }
    }

    /// Copy `bytes` into a chunk; where they went.
    fn append(&mut self, bytes: &[u8]) -> Loc {
        let n = bytes.len();
        if n > CHUNK_BYTES / 4 {
            let c = self.add_chunk(Arc::new(ChunkBuf::Mem(bytes.to_vec())));
            self.live_bytes[c] += n as u64;
            return Loc {
                chunk: c as u32,
                offset: 0,
            };
        }
        let c = match self.open {
            Some(c) if self.chunks[c as usize].len() + n <= CHUNK_BYTES => c as usize,
            _ => {
                // A heap that has filled a chunk is likely to fill the next:
                // it gets its whole size at once, without the doubling.
                let cap = if self.stored >= CHUNK_BYTES as u64 {
                    CHUNK_BYTES
                } else {
                    0
                };
                let c = self.add_chunk(Arc::new(ChunkBuf::Mem(Vec::with_capacity(cap))));
                self.open = Some(c as u32);
                c
            }
        };
        let chunk = Arc::make_mut(&mut self.chunks[c]).in_memory();
        if chunk.capacity() - chunk.len() < n {
            // Grow by doubling up to a full chunk, so a small collection
            // stays small and a full chunk has no slack.
            let want = (chunk.capacity() * 2)
                .clamp(4096, CHUNK_BYTES)
                .max(chunk.len() + n);
            chunk.reserve_exact(want - chunk.len());
        }
        let offset = chunk.len();
        chunk.extend_from_slice(bytes);
        self.live_bytes[c] += n as u64;
        self.stored += n as u64;
        Loc {
            chunk: c as u32,
            offset: offset as u32,
        }
    }

    /// Move the live records out of the chunks that are at least half dead,
    /// once the dead bytes are worth it.
    fn maybe_compact(&mut self) {
        // Saturating: a record shared twice counts twice as live.
        let dead = self.stored.saturating_sub(self.data_size);
        if dead < COMPACT_MIN || dead * 2 < self.data_size {
            return;
        }
        let sparse: Vec<bool> = self
            .chunks
            .iter()
            .zip(&self.live_bytes)
            .map(|(c, &live)| !c.is_empty() && live * 2 <= c.len() as u64)
            .collect();
        if let Some(o) = self.open
            && sparse[o as usize]
        {
            self.open = None;
        }
        let mut buf = Vec::new();
        for i in 0..self.slots.len() {
            let loc = self.slots[i];
            if !loc.is_live() || !sparse.get(loc.chunk as usize).copied().unwrap_or(false) {
                continue;
            }
            let Some(r) = self.record(loc) else {
                continue;
            };
            buf.clear();
            buf.extend_from_slice(r.raw.as_bytes());
            self.live_bytes[loc.chunk as usize] -= buf.len() as u64;
            self.slots[i] = self.append(&buf);
        }
        for (c, was_sparse) in sparse.into_iter().enumerate() {
            if was_sparse {
                self.release_chunk(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{RawDocumentBuf, doc};
    use proptest::prelude::*;

    fn record(i: u32, pad: usize) -> RawDocumentBuf {
        RawDocumentBuf::from_document(&doc! {"_id": i, "p": "x".repeat(pad)}).unwrap()
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push(usize),
        Replace(usize, usize),
        Remove(usize),
        Snapshot,
        DropSnapshots,
        Share(usize),
        /// Spill the main heap, or the heap that shares its records.
        Spill(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Pads up to 400 kB, past the own-chunk threshold.
        let pad = prop_oneof![0usize..64, 0usize..4000, 200_000usize..400_000];
        prop_oneof![
            6 => pad.clone().prop_map(Op::Push),
            3 => (any::<usize>(), pad).prop_map(|(i, p)| Op::Replace(i, p)),
            3 => any::<usize>().prop_map(Op::Remove),
            1 => Just(Op::Snapshot),
            1 => Just(Op::DropSnapshots),
            1 => any::<usize>().prop_map(Op::Share),
            1 => any::<bool>().prop_map(Op::Spill),
        ]
    }

    fn check(heap: &Heap, model: &[Option<Vec<u8>>]) {
        assert_eq!(heap.slots(), model.len());
        let live: Vec<(usize, Vec<u8>)> = model
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.clone().map(|r| (i, r)))
            .collect();
        let got: Vec<(usize, Vec<u8>)> = heap
            .iter_from(0)
            .map(|(i, r)| (i, r.as_bytes().to_vec()))
            .collect();
        assert_eq!(got, live);
        let mut scanned = Vec::new();
        heap.scan(|i, r| {
            scanned.push((i, r.as_bytes().to_vec()));
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(scanned, live, "a scan yields what iteration yields");
        let back: Vec<usize> = heap.iter_from(0).rev().map(|(i, _)| i).collect();
        assert_eq!(back, live.iter().rev().map(|(i, _)| *i).collect::<Vec<_>>());
        assert_eq!(heap.live(), live.len());
        let size: usize = live.iter().map(|(_, r)| r.len()).sum();
        assert_eq!(heap.data_size(), size as u64);
        assert!(heap.stored_bytes() >= heap.data_size());
        for (i, r) in model.iter().enumerate() {
            assert_eq!(heap.get(i).map(|r| r.as_bytes().to_vec()), r.clone());
            let next = model[i..].iter().position(Option::is_some).map(|k| i + k);
            assert_eq!(heap.live_from(i), next);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The heap against a vector of optional byte strings, with
        /// snapshots (clones) that must keep what they saw, a second heap
        /// that shares records, and spilling at any point.
        #[test]
        fn heap_agrees_with_a_vector(ops in proptest::collection::vec(op(), 1..120)) {
            let file = SpillFile::new().unwrap();
            let mut heap = Heap::default();
            let mut model: Vec<Option<Vec<u8>>> = Vec::new();
            let mut snapshots: Vec<(Heap, Vec<Option<Vec<u8>>>)> = Vec::new();
            let mut other = Heap::default();
            let mut other_model = Vec::new();
            // `$out` shares each record once.
            let mut shared = std::collections::HashSet::new();
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Push(pad) => {
                        let r = record(n as u32, pad);
                        heap.push(r.as_bytes());
                        model.push(Some(r.into_bytes()));
                    }
                    Op::Replace(i, pad) if !model.is_empty() => {
                        let i = i % model.len();
                        if model[i].is_some() {
                            shared.remove(&i);
                            let r = record(n as u32, pad);
                            heap.replace(i, r.as_bytes());
                            model[i] = Some(r.into_bytes());
                        }
                    }
                    Op::Remove(i) if !model.is_empty() => {
                        let i = i % model.len();
                        prop_assert_eq!(heap.remove(i), model[i].is_some());
                        model[i] = None;
                    }
                    Op::Snapshot => snapshots.push((heap.clone(), model.clone())),
                    Op::DropSnapshots => snapshots.clear(),
                    Op::Spill(main) => {
                        let before = if main { heap.stored_bytes() } else { other.stored_bytes() };
                        let target = if main { &mut heap } else { &mut other };
                        target.spill(&file, &mut Spilling::default()).unwrap();
                        // Every chunk but the open one left memory.
                        let open = target.open.map_or(0, |o| target.chunks[o as usize].resident());
                        prop_assert_eq!(target.resident(&mut HashSet::new()), open as u64);
                        prop_assert_eq!(target.stored_bytes(), before);
                    }
                    Op::Share(i) if !model.is_empty() => {
                        let i = i % model.len();
                        if let Some(r) = heap.get(i).filter(|_| shared.insert(i)) {
                            other.push_shared(r);
                            other_model.push(model[i].clone());
                        }
                    }
                    _ => {}
                }
                check(&heap, &model);
            }
            for (snap, m) in &snapshots {
                check(snap, m);
            }
            check(&other, &other_model);
        }
    }

    #[test]
    fn small_records_share_chunks_and_dead_space_is_reclaimed() {
        let mut heap = Heap::default();
        let r = record(1, 30);
        let n = 100_000;
        for _ in 0..n {
            heap.push(r.as_bytes());
        }
        let size = (n * r.as_bytes().len()) as u64;
        assert_eq!(heap.data_size(), size);
        // Packed: whole chunks, no per-record allocation.
        assert!(heap.chunks.len() <= (size as usize).div_ceil(CHUNK_BYTES));
        // Growing every record moves it; the dead copies are reclaimed.
        let big = record(1, 60);
        for i in 0..n {
            heap.replace(i, big.as_bytes());
        }
        let live = heap.data_size();
        assert_eq!(live, (n * big.as_bytes().len()) as u64);
        assert!(
            heap.stored_bytes() * 2 <= live * 3 + 2 * COMPACT_MIN,
            "{} stored for {live} live",
            heap.stored_bytes()
        );
        // Deleting every record releases every chunk but the open one.
        for i in 0..n {
            assert!(heap.remove(i));
        }
        assert_eq!(heap.stored_bytes(), 0);
        assert!(heap.chunks.iter().filter(|c| c.resident() > 0).count() <= 1);
    }

    #[test]
    fn spilled_chunks_leave_memory_and_come_back_on_use() {
        let file = SpillFile::new().unwrap();
        let mut heap = Heap::default();
        let r = record(1, 1000);
        for _ in 0..3000 {
            heap.push(r.as_bytes());
        }
        let mut shared = Heap::default();
        shared.push_shared(heap.get(0).unwrap());
        let before = heap.resident(&mut HashSet::new());
        assert!(before >= heap.data_size());
        let mut pass = Spilling::default();
        let freed = heap.spill(&file, &mut pass).unwrap();
        // The first chunk is shared, so it is not freed; the open one stays.
        let open = heap.chunks[heap.open.unwrap() as usize].resident() as u64;
        assert_eq!(heap.resident(&mut HashSet::new()), open);
        assert!(
            freed >= before - open - CHUNK_BYTES as u64,
            "{freed} of {before}"
        );
        // The sharing heap spilled in the same pass reuses the extent.
        shared.spill(&file, &mut pass).unwrap();
        assert!(Arc::ptr_eq(&shared.chunks[0], &heap.chunks[0]));
        drop(pass);
        // Reading a record brings its chunk back, and only that one.
        assert_eq!(heap.get(1500).unwrap().as_bytes(), r.as_bytes());
        let back = heap.resident(&mut HashSet::new());
        assert!(back > open && back <= open + CHUNK_BYTES as u64, "{back}");
        // A second pass lets the loaded copy go without writing again.
        heap.spill(&file, &mut Spilling::default()).unwrap();
        assert_eq!(heap.resident(&mut HashSet::new()), open);
        // A scan reads every record and leaves the spilled chunks in the
        // file; its first error stops it.
        let mut seen = 0;
        heap.scan(|_, raw| {
            assert_eq!(raw.as_bytes(), r.as_bytes());
            seen += 1;
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(seen, 3000);
        assert_eq!(heap.resident(&mut HashSet::new()), open);
        let mut visits = 0;
        let stopped = heap.scan(|i, _| {
            visits += 1;
            if i == 2000 { Err(i) } else { Ok(()) }
        });
        assert_eq!((stopped, visits), (Err(2000), 2001));
        // Writes to spilled records land in memory; reads see them.
        let big = record(2, 1200);
        heap.replace(10, big.as_bytes());
        assert!(heap.remove(11));
        assert_eq!(heap.get(10).unwrap().as_bytes(), big.as_bytes());
        assert!(heap.get(11).is_none());
        assert_eq!(heap.get(12).unwrap().as_bytes(), r.as_bytes());
    }

    #[test]
    fn a_snapshot_keeps_the_bytes_it_saw() {
        let mut heap = Heap::default();
        heap.push(record(1, 10).as_bytes());
        let snap = heap.clone();
        heap.replace(0, record(2, 5).as_bytes());
        assert_eq!(snap.get(0).unwrap().as_bytes(), record(1, 10).as_bytes());
        assert_eq!(heap.get(0).unwrap().as_bytes(), record(2, 5).as_bytes());
    }
}
