//! The modelled WiredTiger cache: which pages of the collections and
//! indexes would be in mongod's cache, and what reading them in and
//! writing them out would cost.
//!
//! Nothing here holds data: the engine keeps everything in memory. The
//! model keeps, per server, the *identity* and size of the pages a
//! WiredTiger cache of the configured size would hold. Collections and
//! indexes are laid out in leaf pages as the size model lays them out
//! ([`layout`]); touching a document or an index entry requests its page
//! from the cache, which reads it in when absent (counted as bytes and
//! pages read into cache), evicts the least recently used pages once past
//! the eviction target (80% of the maximum, WiredTiger's
//! `eviction_target`) and writes dirty pages out (bytes written from
//! cache) when they are evicted or when dirty bytes pass the dirty target
//! (5%, `eviction_dirty_target`). `docs/CACHE_MODEL.md` states every
//! assumption; every figure is modelled, and labelled so where reported.
//!
//! A touch costs a thread-local look-up when it finds the page the
//! running operation touched last (a cursor stays positioned on its page,
//! as WiredTiger's hazard pointers keep it), and otherwise one lock and
//! one hash probe into a slab-backed LRU list: no allocation per touch.

pub mod config;
pub mod layout;

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use bson::{Bson, Document, doc};
use parking_lot::Mutex;

pub use config::{CacheConfigError, default_cache_size, parse_runtime_config, parse_size};

/// WiredTiger's `eviction_target`: eviction starts past this share of the
/// maximum (in percent).
pub const EVICTION_TARGET: u64 = 80;
/// WiredTiger's `eviction_trigger`: past this share, application threads
/// evict too (in percent).
pub const EVICTION_TRIGGER: u64 = 95;
/// WiredTiger's `eviction_dirty_target`: dirty pages are written out past
/// this share of the maximum (in percent).
pub const EVICTION_DIRTY_TARGET: u64 = 5;

/// The modelled device a page is read from: sequential bandwidth, in
/// bytes per second (a cloud SSD volume's 250 MB/s).
pub const DEVICE_BYTES_PER_SEC: u64 = 250_000_000;
/// The modelled device's latency per page read, in microseconds.
pub const DEVICE_LATENCY_MICROS: u64 = 100;

/// The modelled time to read `pages` pages of `bytes` bytes in all.
pub fn read_micros(bytes: u64, pages: u64) -> u64 {
    pages * DEVICE_LATENCY_MICROS + bytes.saturating_mul(1_000_000) / DEVICE_BYTES_PER_SEC
}

/// One page: the file (a collection's records or one index) and its
/// number in that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageKey {
    pub file: u64,
    pub page: u64,
}

/// A hasher for [`PageKey`]s: two integers mixed by multiplication (the
/// keys are not chosen by an adversary).
#[derive(Default)]
pub struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type PageMap = HashMap<PageKey, u32, BuildHasherDefault<PageHasher>>;

/// No node.
const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    key: PageKey,
    bytes: u64,
    dirty: bool,
    prev: u32,
    next: u32,
}

/// The cache's counters, as `serverStatus().wiredTiger.cache` reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub maximum_bytes: u64,
    pub bytes_in_cache: u64,
    pub pages_in_cache: u64,
    pub bytes_read: u64,
    pub pages_read: u64,
    pub pages_requested: u64,
    pub bytes_written: u64,
    pub pages_written: u64,
    pub dirty_bytes: u64,
    pub dirty_pages: u64,
    pub evicted_by_application: u64,
    pub unmodified_evicted: u64,
    pub modified_evicted: u64,
}

impl CacheStats {
    /// `serverStatus().wiredTiger.cache`, under mongod's names.
    pub fn to_document(&self) -> Document {
        let n = |v: u64| Bson::Int64(i64::try_from(v).unwrap_or(i64::MAX));
        doc! {
            "maximum bytes configured": n(self.maximum_bytes),
            "bytes currently in the cache": n(self.bytes_in_cache),
            "bytes read into cache": n(self.bytes_read),
            "bytes written from cache": n(self.bytes_written),
            "pages currently held in the cache": n(self.pages_in_cache),
            "pages read into cache": n(self.pages_read),
            "pages requested from the cache": n(self.pages_requested),
            "pages written from cache": n(self.pages_written),
            "tracked dirty bytes in the cache": n(self.dirty_bytes),
            "tracked dirty pages in the cache": n(self.dirty_pages),
            "pages evicted by application threads": n(self.evicted_by_application),
            "unmodified pages evicted": n(self.unmodified_evicted),
            "modified pages evicted": n(self.modified_evicted),
            "eviction target": n(EVICTION_TARGET),
            "eviction trigger": n(EVICTION_TRIGGER),
            "schemalab": {
                "modelled": true,
                "cacheModel": MODEL_VERSION,
                "deviceBytesPerSec": n(DEVICE_BYTES_PER_SEC),
                "deviceLatencyMicros": n(DEVICE_LATENCY_MICROS),
            },
        }
    }
}

/// Names the model, reported next to its figures.
pub const MODEL_VERSION: &str = "schemalab-wt-cache/1";

#[derive(Debug)]
struct Inner {
    map: PageMap,
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used: the next to evict.
    tail: u32,
    /// Pages in the order they became dirty (some since written or gone).
    dirty_order: VecDeque<PageKey>,
    stats: CacheStats,
    /// The last `wiredTigerEngineRuntimeConfig` string set.
    runtime_config: String,
}

/// One server's modelled cache. Shared by the engine's clones.
#[derive(Debug)]
pub struct Cache {
    inner: Mutex<Inner>,
}

/// What one touch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Touched {
    /// Bytes read into the cache (0: the page was there).
    pub bytes_read: u64,
}

impl Cache {
    /// An empty cache of `max_bytes`.
    pub fn new(max_bytes: u64) -> Self {
        Cache {
            inner: Mutex::new(Inner {
                map: PageMap::default(),
                nodes: Vec::new(),
                free: Vec::new(),
                head: NIL,
                tail: NIL,
                dirty_order: VecDeque::new(),
                runtime_config: String::new(),
                stats: CacheStats {
                    maximum_bytes: max_bytes,
                    ..CacheStats::default()
                },
            }),
        }
    }

    /// The counters now.
    pub fn stats(&self) -> CacheStats {
        self.inner.lock().stats.clone()
    }

    /// The configured maximum.
    pub fn max_bytes(&self) -> u64 {
        self.inner.lock().stats.maximum_bytes
    }

    /// The last `wiredTigerEngineRuntimeConfig` set (empty at start).
    pub fn runtime_config(&self) -> String {
        self.inner.lock().runtime_config.clone()
    }

    /// Record a new `wiredTigerEngineRuntimeConfig`, returning the last.
    pub fn swap_runtime_config(&self, config: String) -> String {
        std::mem::replace(&mut self.inner.lock().runtime_config, config)
    }

    /// Change the maximum (`cache_size` at run time), evicting at once
    /// what no longer fits under the eviction target.
    pub fn set_max_bytes(&self, max_bytes: u64) -> u64 {
        let mut inner = self.inner.lock();
        let was = std::mem::replace(&mut inner.stats.maximum_bytes, max_bytes);
        inner.evict(NIL);
        inner.write_dirty();
        was
    }

    /// Empty the cache as a clean restart would (schemalab's
    /// `schemalabEvictCache`, which measures an operation cold): dirty
    /// pages are written out first (`bytes written from cache`), then every
    /// page is dropped. The cumulative counters stay; dropping pages this
    /// way is not counted as eviction.
    pub fn evict_all(&self) {
        let mut inner = self.inner.lock();
        let (bytes, pages) = (inner.stats.dirty_bytes, inner.stats.dirty_pages);
        inner.stats.bytes_written += bytes;
        inner.stats.pages_written += pages;
        inner.map.clear();
        inner.nodes.clear();
        inner.free.clear();
        inner.dirty_order.clear();
        inner.head = NIL;
        inner.tail = NIL;
        inner.stats.bytes_in_cache = 0;
        inner.stats.pages_in_cache = 0;
        inner.stats.dirty_bytes = 0;
        inner.stats.dirty_pages = 0;
    }

    /// Request `key` (of `bytes` bytes now) from the cache, reading it in
    /// when absent; `dirty` when the caller modifies it.
    pub fn touch(&self, key: PageKey, bytes: u64, dirty: bool) -> Touched {
        let mut inner = self.inner.lock();
        inner.stats.pages_requested += 1;
        let touched = match inner.map.get(&key).copied() {
            Some(i) => {
                let old = inner.nodes[i as usize].bytes;
                if old != bytes {
                    inner.nodes[i as usize].bytes = bytes;
                    inner.stats.bytes_in_cache = inner.stats.bytes_in_cache - old + bytes;
                    if inner.nodes[i as usize].dirty {
                        inner.stats.dirty_bytes = inner.stats.dirty_bytes - old + bytes;
                    }
                }
                inner.unlink(i);
                inner.push_front(i);
                Touched::default()
            }
            None => {
                let i = inner.alloc(Node {
                    key,
                    bytes,
                    dirty: false,
                    prev: NIL,
                    next: NIL,
                });
                inner.map.insert(key, i);
                inner.push_front(i);
                inner.stats.bytes_in_cache += bytes;
                inner.stats.pages_in_cache += 1;
                inner.stats.bytes_read += bytes;
                inner.stats.pages_read += 1;
                Touched { bytes_read: bytes }
            }
        };
        if let Some(&i) = inner.map.get(&key)
            && dirty
            && !inner.nodes[i as usize].dirty
        {
            inner.nodes[i as usize].dirty = true;
            inner.stats.dirty_bytes += inner.nodes[i as usize].bytes;
            inner.stats.dirty_pages += 1;
            inner.dirty_order.push_back(key);
        }
        let head = inner.head;
        inner.evict(head);
        inner.write_dirty();
        touched
    }
}

impl Inner {
    fn alloc(&mut self, node: Node) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    fn unlink(&mut self, i: u32) {
        let Node { prev, next, .. } = self.nodes[i as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
    }

    fn push_front(&mut self, i: u32) {
        let head = self.head;
        self.nodes[i as usize].prev = NIL;
        self.nodes[i as usize].next = head;
        if head == NIL {
            self.tail = i;
        } else {
            self.nodes[head as usize].prev = i;
        }
        self.head = i;
    }

    fn share(&self, percent: u64) -> u64 {
        self.stats.maximum_bytes / 100 * percent + self.stats.maximum_bytes % 100 * percent / 100
    }

    /// Evict least recently used pages, never `keep` (the page just
    /// requested), until the cache is back under the eviction target.
    fn evict(&mut self, keep: u32) {
        let target = self.share(EVICTION_TARGET);
        if self.stats.bytes_in_cache <= target {
            return;
        }
        let by_application = self.stats.bytes_in_cache > self.share(EVICTION_TRIGGER);
        while self.stats.bytes_in_cache > target {
            let victim = self.tail;
            if victim == NIL || victim == keep {
                return;
            }
            self.unlink(victim);
            let node = self.nodes[victim as usize];
            self.map.remove(&node.key);
            self.free.push(victim);
            self.stats.bytes_in_cache -= node.bytes;
            self.stats.pages_in_cache -= 1;
            if node.dirty {
                self.stats.dirty_bytes -= node.bytes;
                self.stats.dirty_pages -= 1;
                self.stats.bytes_written += node.bytes;
                self.stats.pages_written += 1;
                self.stats.modified_evicted += 1;
            } else {
                self.stats.unmodified_evicted += 1;
            }
            if by_application {
                self.stats.evicted_by_application += 1;
            }
        }
    }

    /// Write the oldest dirty pages out (they stay cached, clean) until
    /// dirty bytes are under the dirty target.
    fn write_dirty(&mut self) {
        let target = self.share(EVICTION_DIRTY_TARGET);
        while self.stats.dirty_bytes > target {
            let Some(key) = self.dirty_order.pop_front() else {
                return;
            };
            let Some(&i) = self.map.get(&key) else {
                continue;
            };
            let node = &mut self.nodes[i as usize];
            if !node.dirty {
                continue;
            }
            node.dirty = false;
            let bytes = node.bytes;
            self.stats.dirty_bytes -= bytes;
            self.stats.dirty_pages -= 1;
            self.stats.bytes_written += bytes;
            self.stats.pages_written += 1;
        }
        if self.stats.dirty_pages == 0 {
            self.dirty_order.clear();
        } else if self.dirty_order.len() > 2 * self.stats.dirty_pages as usize + 1024 {
            // Evicted dirty pages left their keys behind: keep the live
            // ones, in order.
            let (map, nodes) = (&self.map, &self.nodes);
            self.dirty_order
                .retain(|k| map.get(k).is_some_and(|&i| nodes[i as usize].dirty));
        }
    }
}

/// How many pages an operation holds positioned (its cursors' pages): a
/// touch of one of them is not a new request.
const HELD: usize = 4;

thread_local! {
    /// The pages the running operation touched last (and whether it
    /// dirtied them), most recent first.
    static HELD_PAGES: Cell<[(PageKey, bool); HELD]> =
        const { Cell::new([(PageKey { file: u64::MAX, page: u64::MAX }, false); HELD]) };
}

/// Forget the pages held: a new operation starts with no cursor
/// positioned.
pub(crate) fn release_held() {
    HELD_PAGES.with(|h| {
        h.set(
            [(
                PageKey {
                    file: u64::MAX,
                    page: u64::MAX,
                },
                false,
            ); HELD],
        )
    });
}

/// The running operation touches page `page` of `file` (`bytes` bytes):
/// requested from the running server's cache unless the operation holds
/// it already; `dirty` when it modifies it. Outside an operation (engine
/// calls not made through the wire layer) nothing is modelled.
pub(crate) fn touch(file: u64, page: u64, bytes: u64, dirty: bool) {
    let key = PageKey { file, page };
    let held = HELD_PAGES.with(|h| {
        let mut pages = h.get();
        match pages.iter().position(|(k, _)| *k == key) {
            Some(at) if pages[at].1 || !dirty => {
                // Most recent first, so that a scan's index page and
                // record page both stay held.
                pages[..=at].rotate_right(1);
                h.set(pages);
                true
            }
            at => {
                let at = at.unwrap_or(HELD - 1);
                pages[..=at].rotate_right(1);
                pages[0] = (key, dirty);
                h.set(pages);
                false
            }
        }
    });
    if held {
        return;
    }
    let touched = crate::limits::with_params(|p| p.cache().touch(key, bytes, dirty));
    if let Some(t) = touched
        && t.bytes_read > 0
    {
        crate::metrics::read_into_cache(t.bytes_read);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(page: u64) -> PageKey {
        PageKey { file: 1, page }
    }

    #[test]
    fn evicting_all_empties_the_cache_and_writes_dirty_pages() {
        let c = Cache::new(1 << 20);
        c.touch(key(0), 1000, false);
        c.touch(key(1), 500, true);
        c.evict_all();
        let s = c.stats();
        assert_eq!(
            (s.bytes_in_cache, s.pages_in_cache, s.dirty_bytes),
            (0, 0, 0)
        );
        assert_eq!((s.bytes_written, s.pages_written), (500, 1));
        // The next touch reads the page in again.
        assert_eq!(c.touch(key(0), 1000, false).bytes_read, 1000);
    }

    /// The layout of the size model's calibration collection
    /// (`{_id: <int32>, a: "hello world"}` inserted in order): the figures
    /// docs/CACHE_MODEL.md quotes. `CACHE_MODEL_N` sets the count.
    #[test]
    fn the_calibration_collection_is_laid_out_like_the_size_model() {
        let n: i32 = std::env::var("CACHE_MODEL_N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        let engine = crate::Engine::new();
        let docs = (0..n)
            .map(|i| bson::RawDocumentBuf::from_document(&doc! {"_id": i, "a": "hello world"}))
            .collect::<std::result::Result<Vec<_>, _>>()
            .unwrap_or_default();
        assert!(engine.insert("cal", "c", docs, true).is_ok());
        let cat = engine.store.snapshot_one("cal", "c");
        let Some(c) = cat.collection("cal", "c") else {
            panic!("the collection exists");
        };
        let records = c.record_pages();
        let id = c.indexes()[0].pages();
        let sizes = crate::size_model::collection_sizes(c);
        eprintln!(
            "n={n} data={} record pages={} bytes={} storageSize={} | _id pages={} bytes={} modelled _id_={}",
            c.data_size(),
            records.pages(),
            records.total_bytes(),
            sizes.storage_size,
            id.pages(),
            id.total_bytes(),
            sizes.index_sizes[0].1,
        );
        // Records: uncompressed pages hold the documents plus 7 bytes of
        // cells each; the size model's file is those pages compressed.
        let per_doc = 33 + 4 + crate::size_model::record_id_len(u64::from(n.unsigned_abs()));
        let full = (COLLECTION_PAGE_BYTES - 40) / per_doc as u64;
        let expected = (n as u64).div_ceil(full);
        assert!(
            records.pages() as u64 >= expected
                && records.pages() as u64 <= expected + expected / 50 + 1
        );
        assert!(records.total_bytes() > sizes.storage_size);
        // Index: without prefix compression, more pages than the size
        // model's 16 KiB blocks, by less than half again.
        let blocks = (sizes.index_sizes[0].1 - 4096) / 16_384;
        assert!(id.pages() as u64 >= blocks && (id.pages() as u64) < blocks * 3 / 2 + 2);
    }

    const COLLECTION_PAGE_BYTES: u64 = crate::size_model::COLLECTION_PAGE as u64;

    #[test]
    fn a_cold_read_reads_and_a_warm_one_does_not() {
        let c = Cache::new(1 << 20);
        assert_eq!(c.touch(key(0), 1000, false).bytes_read, 1000);
        assert_eq!(c.touch(key(0), 1000, false).bytes_read, 0);
        let s = c.stats();
        assert_eq!(
            (s.pages_read, s.pages_requested, s.bytes_read),
            (1, 2, 1000)
        );
        assert_eq!(s.bytes_in_cache, 1000);
    }

    #[test]
    fn the_lru_evicts_past_the_target_and_stays_under_the_maximum() {
        let c = Cache::new(10_000);
        for pass in 0..3 {
            for p in 0..20 {
                c.touch(key(p), 1000, false);
                assert!(c.stats().bytes_in_cache <= 8_000, "pass {pass} page {p}");
            }
        }
        let s = c.stats();
        // A scan larger than the cache reads every page every time.
        assert_eq!(s.pages_read, 60);
        assert_eq!(s.unmodified_evicted, 60 - 8);
        // The most recent pages are the ones kept.
        assert_eq!(c.touch(key(19), 1000, false).bytes_read, 0);
        assert_eq!(c.touch(key(0), 1000, false).bytes_read, 1000);
    }

    #[test]
    fn dirty_pages_are_written_when_evicted_or_past_the_dirty_target() {
        let c = Cache::new(100_000);
        c.touch(key(0), 4000, true);
        assert_eq!(c.stats().dirty_bytes, 4000);
        assert_eq!(c.stats().bytes_written, 0);
        // 5% of 100,000 is 5,000: a second dirty page writes the first.
        c.touch(key(1), 4000, true);
        let s = c.stats();
        assert_eq!(
            (s.bytes_written, s.pages_written, s.dirty_bytes),
            (4000, 1, 4000)
        );
        // Shrinking the cache evicts, writing the dirty page.
        c.set_max_bytes(1000);
        let s = c.stats();
        assert_eq!(s.bytes_in_cache, 0);
        assert_eq!(s.modified_evicted, 1);
        assert_eq!(s.bytes_written, 8000);
    }
}
