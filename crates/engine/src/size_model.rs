//! The size model: what WiredTiger would need on disk for a collection and
//! its indexes.
//!
//! Without WiredTiger there is no file to measure, so `storageSize` and index
//! sizes are *modelled* from the real documents and the real index keys, as
//! `docs/SIZE_MODEL.md` explains:
//!
//! - collection: records in record-id order are packed into 32 KiB leaf pages;
//!   each page (record-id cells plus document bytes) is really compressed
//!   with snappy, a page header is added, and the block is rounded up to the
//!   4 KiB allocation unit;
//! - index: entries in key order on ~16 KiB pages; each key is stored with the
//!   prefix it shares with the previous key on the page removed (mongod turns
//!   on WiredTiger's prefix compression for indexes), plus cell headers and
//!   the record id; each page is rounded up to 4 KiB.
//!
//! Each file also carries one 4 KiB descriptor block. Every figure produced
//! here is reported with `sizesModelled: true` and [`MODEL_VERSION`].
//! Document sizes and counts are never modelled: they are exact.

use bson::{Document, doc};

use super::catalog::Collection;
use super::index::Index;

/// Names the model and its calibration, reported next to every figure.
pub const MODEL_VERSION: &str = "schemalab-wt-model/2";

/// WiredTiger's allocation unit.
const ALLOCATION_UNIT: u64 = 4096;
/// Collection leaf pages (`leaf_page_max` for collections).
pub(crate) const COLLECTION_PAGE: usize = 32 * 1024;
/// Index leaf pages (`leaf_page_max` for indexes).
pub(crate) const INDEX_PAGE: usize = 16 * 1024;
/// Page header plus block header of a WiredTiger page.
pub(crate) const PAGE_HEADER: u64 = 40;
/// Cell header bytes for one key or value cell.
pub(crate) const CELL_HEADER: usize = 2;
/// WiredTiger caps the prefix it will share with the previous key.
const MAX_PREFIX: usize = 256;

/// Modelled sizes of one collection, in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionSizes {
    pub storage_size: u64,
    /// (index name, modelled size) in index order.
    pub index_sizes: Vec<(String, u64)>,
}

impl CollectionSizes {
    /// Sum of the index sizes.
    pub fn total_index_size(&self) -> u64 {
        self.index_sizes.iter().map(|(_, s)| s).sum()
    }

    /// Storage plus indexes.
    pub fn total_size(&self) -> u64 {
        self.storage_size + self.total_index_size()
    }
}

fn round_up(n: u64) -> u64 {
    n.div_ceil(ALLOCATION_UNIT) * ALLOCATION_UNIT
}

/// The bytes WiredTiger's packed integer format needs for a record id.
pub(crate) fn record_id_len(rid: u64) -> usize {
    match rid {
        0..=1023 => 2,
        1024..=262_143 => 3,
        262_144..=67_108_863 => 4,
        _ => 5,
    }
}

/// Model the storage size of documents given in record order.
pub fn storage_size<'a>(records: impl Iterator<Item = (u64, &'a [u8])>) -> u64 {
    storage_size_with(records, compressed_len)
}

/// [`storage_size`], each full page's compressed length given by
/// `compressed`.
fn storage_size_with<'a>(
    records: impl Iterator<Item = (u64, &'a [u8])>,
    compressed: impl Fn(&mut snap::raw::Encoder, &[u8]) -> usize,
) -> u64 {
    let mut total = ALLOCATION_UNIT;
    let mut page: Vec<u8> = Vec::with_capacity(COLLECTION_PAGE);
    let mut encoder = snap::raw::Encoder::new();
    let mut flush = |page: &mut Vec<u8>| {
        if page.is_empty() {
            return 0;
        }
        let compressed = compressed(&mut encoder, page);
        page.clear();
        round_up(PAGE_HEADER + compressed as u64)
    };
    for (rid, bytes) in records {
        let cell = CELL_HEADER * 2 + record_id_len(rid) + bytes.len();
        if !page.is_empty() && page.len() + cell > COLLECTION_PAGE {
            total += flush(&mut page);
        }
        // The record-id key cell, then the value cell with the document.
        page.extend_from_slice(&[0x80; CELL_HEADER]);
        page.extend_from_slice(&rid.to_be_bytes()[8 - record_id_len(rid)..]);
        page.extend_from_slice(&[0x81; CELL_HEADER]);
        page.extend_from_slice(bytes);
    }
    total + flush(&mut page)
}

/// How many compressed page sizes [`compressed_len`] remembers (16 bytes
/// of key and 8 of length each): pages of some 8 GiB of documents.
const PAGE_CACHE_ENTRIES: usize = 1 << 18;

/// A page's snappy-compressed length. The answer depends on the page's
/// bytes alone, and an experiment's variants hold many identical pages
/// (each starts as a copy of one load, sharing its records), so lengths
/// already computed are remembered by the page's 128-bit xxh3 digest:
/// hashing runs several times faster than compressing, and a digest
/// collision between two different pages is a chance of the order of
/// 2^-128 per pair.
fn compressed_len(encoder: &mut snap::raw::Encoder, page: &[u8]) -> usize {
    static CACHE: std::sync::OnceLock<parking_lot::Mutex<std::collections::HashMap<u128, usize>>> =
        std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = xxhash_rust::xxh3::xxh3_128(page);
    if let Some(&n) = cache.lock().get(&key) {
        return n;
    }
    let n = compress(encoder, page);
    let mut cache = cache.lock();
    if cache.len() >= PAGE_CACHE_ENTRIES {
        cache.clear();
    }
    cache.insert(key, n);
    n
}

/// A page's length once snappy has compressed it (its own length if it
/// could not be), into a buffer kept per thread (`compress_vec` would
/// allocate and zero a new one for every page).
fn compress(encoder: &mut snap::raw::Encoder, page: &[u8]) -> usize {
    thread_local! {
        static OUT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    OUT.with_borrow_mut(|out| {
        let need = snap::raw::max_compress_len(page.len());
        if out.len() < need {
            out.resize(need, 0);
        }
        encoder.compress(page, out).unwrap_or(page.len())
    })
}

/// Model the size of an index from its entries in key order.
pub fn index_size(index: &Index) -> u64 {
    let id_index = index.spec.name == "_id_";
    let mut total = ALLOCATION_UNIT;
    let mut page_bytes = 0usize;
    let mut prev: &[u8] = &[];
    for entry in index.entries() {
        let (key, rid_bytes) = entry.split_at(entry.len() - 8);
        let mut rid = [0u8; 8];
        rid.copy_from_slice(rid_bytes);
        let rid_len = record_id_len(u64::from_be_bytes(rid));
        // The `_id` index keeps the record id as the value; other indexes
        // append it to the key and store an empty value.
        let (key_len, value_len) = if id_index {
            (key.len(), CELL_HEADER + rid_len)
        } else {
            (key.len() + rid_len, 0)
        };
        let shared = if page_bytes == 0 {
            0
        } else {
            common_prefix(prev, key).min(MAX_PREFIX)
        };
        let cell = CELL_HEADER + key_len - shared + value_len;
        // The page header shares the 16 KiB block with the cells: a page
        // fills to `INDEX_PAGE - PAGE_HEADER` so the block stays 16 KiB
        // (filling to 16 KiB and adding the header would round every page
        // up to 20 KiB, 25% too big; see docs/SIZE_MODEL.md).
        if page_bytes + cell > INDEX_PAGE - PAGE_HEADER as usize {
            total += round_up(PAGE_HEADER + page_bytes as u64);
            page_bytes = CELL_HEADER + key_len + value_len;
        } else {
            page_bytes += cell;
        }
        prev = key;
    }
    if page_bytes > 0 {
        total += round_up(PAGE_HEADER + page_bytes as u64);
    }
    total
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Modelled sizes of a collection.
pub fn collection_sizes(c: &Collection) -> CollectionSizes {
    CollectionSizes {
        storage_size: storage_size(c.records().map(|(rid, raw)| (rid, raw.as_bytes()))),
        index_sizes: c
            .indexes()
            .iter()
            .map(|i| (i.spec.name.clone(), index_size(i)))
            .collect(),
    }
}

/// The block that says where modelled figures came from.
pub fn provenance() -> Document {
    doc! {
        "engine": "schemalab embedded engine",
        "sizesModelled": true,
        "sizeModel": MODEL_VERSION,
        "modelledFields": ["storageSize", "freeStorageSize", "indexSizes", "indexSize", "totalIndexSize", "totalSize", "sizeOnDisk"],
    }
}

/// A figure as mongod's `appendNumber` writes it: int32 when it fits,
/// int64 otherwise (mongosh shows the former as a plain number).
fn number(n: i64) -> bson::Bson {
    match i32::try_from(n) {
        Ok(small) => bson::Bson::Int32(small),
        Err(_) => bson::Bson::Int64(n),
    }
}

fn scaled(n: u64, scale: i64) -> bson::Bson {
    number((n / scale.max(1) as u64) as i64)
}

/// `collStats` for one collection (without `ok`).
pub fn coll_stats(ns: &str, c: &Collection, scale: i64) -> Document {
    let sizes = collection_sizes(c);
    let count = c.len() as i64;
    let size = c.data_size();
    let mut index_sizes = Document::new();
    for (name, s) in &sizes.index_sizes {
        index_sizes.insert(name.clone(), scaled(*s, scale));
    }
    let avg = if count > 0 { size as i64 / count } else { 0 };
    doc! {
        "ns": ns,
        "size": scaled(size, scale),
        "count": number(count),
        "avgObjSize": number(avg),
        "numOrphanDocs": 0,
        "storageSize": scaled(sizes.storage_size, scale),
        "freeStorageSize": 0,
        "capped": false,
        "nindexes": c.indexes().len() as i32,
        "indexBuilds": [],
        "totalIndexSize": scaled(sizes.total_index_size(), scale),
        "totalSize": scaled(sizes.total_size(), scale),
        "indexSizes": index_sizes,
        "scaleFactor": scale as i32,
        "schemalab": provenance(),
    }
}

/// `dbStats` for a database (without `ok`).
pub fn db_stats<'a>(
    db: &str,
    collections: impl Iterator<Item = &'a Collection>,
    scale: i64,
) -> Document {
    let (mut n, mut objects, mut data, mut storage, mut indexes, mut index_size) =
        (0i64, 0i64, 0u64, 0u64, 0i64, 0u64);
    for c in collections {
        let sizes = collection_sizes(c);
        n += 1;
        objects += c.len() as i64;
        data += c.data_size();
        storage += sizes.storage_size;
        indexes += c.indexes().len() as i64;
        index_size += sizes.total_index_size();
    }
    let avg = if objects > 0 {
        data as f64 / objects as f64
    } else {
        0.0
    };
    doc! {
        "db": db,
        "collections": n,
        "views": 0,
        "objects": objects,
        "avgObjSize": avg,
        "dataSize": (data / scale.max(1) as u64) as f64,
        "storageSize": (storage / scale.max(1) as u64) as f64,
        "indexes": indexes,
        "indexSize": (index_size / scale.max(1) as u64) as f64,
        "totalSize": ((storage + index_size) / scale.max(1) as u64) as f64,
        "scaleFactor": scale,
        // No `fsUsedSize`/`fsTotalSize`: an in-memory engine has no
        // filesystem to measure, and a made-up figure would mislead.
        "schemalab": provenance(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of `n` records of `len` bytes each, filled by `fill`.
    fn records(n: u64, len: usize, fill: impl Fn(u64, usize) -> u8) -> Vec<(u64, Vec<u8>)> {
        (1..=n)
            .map(|rid| (rid, (0..len).map(|i| fill(rid, i)).collect()))
            .collect()
    }

    /// The same figure as compressing every page afresh, whether the
    /// pages were seen before or not, and a page of other content never
    /// takes a remembered length.
    #[test]
    fn remembered_page_lengths_are_the_lengths_of_those_pages() {
        // The same pages, each compressed afresh, without the cache.
        let direct = |recs: &[(u64, Vec<u8>)]| {
            storage_size_with(recs.iter().map(|(rid, b)| (*rid, b.as_slice())), compress)
        };
        let modelled = |recs: &[(u64, Vec<u8>)]| {
            storage_size(recs.iter().map(|(rid, b)| (*rid, b.as_slice())))
        };
        // Compressible and incompressible records of the same sizes, so
        // their pages have the same lengths but not the same bytes.
        let zeros = records(300, 700, |_, _| 0);
        let noise = records(300, 700, |rid, i| {
            ((rid << 20 | i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
        });
        for recs in [&zeros, &noise, &zeros, &noise] {
            assert_eq!(modelled(recs), direct(recs));
        }
        assert!(modelled(&noise) > 2 * modelled(&zeros));
    }
}
