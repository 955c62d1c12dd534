//! Where the cache model's pages are: a collection's records and an
//! index's entries laid out in leaf pages as the size model lays them out
//! (`size_model`), kept up to date as writes change them.
//!
//! - Records fill 32 KiB pages in record-id order, each record costing a
//!   key cell (the record id) and a value cell (the document), as in the
//!   size model. New records go on the last page, or open a new one when
//!   it is full; an update changes its page's bytes in place; a delete
//!   leaves its page smaller. A record's page is found by binary search
//!   over the pages' first slots.
//! - Index entries fill 16 KiB pages in key order, a B-tree's leaves: an
//!   entry goes on the page whose first key is the greatest not above it,
//!   and a page that outgrows 16 KiB splits, in the middle (as WiredTiger
//!   splits a page filled by random inserts, leaving both halves half
//!   full) or, when the new entry is the page's last, at that entry (an
//!   append split: pages filled in key order stay full).
//!
//! A page's bytes are its uncompressed image: page header plus cells, what
//! WiredTiger counts when it reads the page into its cache. Every layout
//! has its own file number, shared by its clones (a snapshot of a
//! collection is the same file) and new when the contents are rebuilt.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::size_model::{CELL_HEADER, COLLECTION_PAGE, INDEX_PAGE, PAGE_HEADER, record_id_len};

/// A file number no other layout has.
fn new_file() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The pages of a collection's records, by slot.
#[derive(Debug, Clone)]
pub struct RecordPages {
    file: u64,
    /// The first slot of each page, ascending.
    starts: Vec<usize>,
    /// Each page's bytes (header plus cells).
    bytes: Vec<u64>,
}

impl Default for RecordPages {
    fn default() -> Self {
        RecordPages {
            file: new_file(),
            starts: Vec::new(),
            bytes: Vec::new(),
        }
    }
}

/// A record's key and value cells.
fn record_cell(slot: usize, len: usize) -> u64 {
    (CELL_HEADER * 2 + record_id_len(slot as u64 + 1) + len) as u64
}

impl RecordPages {
    /// The file number.
    pub fn file(&self) -> u64 {
        self.file
    }

    /// Number of pages.
    pub fn pages(&self) -> usize {
        self.starts.len()
    }

    /// The page of `slot` and its bytes.
    pub fn page_of(&self, slot: usize) -> Option<(u64, u64)> {
        let page = self.starts.partition_point(|&s| s <= slot).checked_sub(1)?;
        Some((page as u64, self.bytes[page]))
    }

    /// A record of `len` bytes went into new slot `slot`: its page.
    pub fn pushed(&mut self, slot: usize, len: usize) -> (u64, u64) {
        let cell = record_cell(slot, len);
        match self.bytes.last_mut() {
            Some(last) if *last + cell <= COLLECTION_PAGE as u64 || *last == PAGE_HEADER => {
                *last += cell;
            }
            _ => {
                self.starts.push(slot);
                self.bytes.push(PAGE_HEADER + cell);
            }
        }
        let page = self.starts.len() - 1;
        (page as u64, self.bytes[page])
    }

    /// The record in `slot` changed from `old` to `new` bytes (0: gone).
    pub fn resized(&mut self, slot: usize, old: usize, new: usize) -> Option<(u64, u64)> {
        let page = self.starts.partition_point(|&s| s <= slot).checked_sub(1)?;
        let b = &mut self.bytes[page];
        let old_cell = record_cell(slot, old);
        let new_cell = if new == 0 { 0 } else { record_cell(slot, new) };
        *b = (*b + new_cell).saturating_sub(old_cell).max(PAGE_HEADER);
        Some((page as u64, *b))
    }

    /// The total bytes of every page.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }
}

/// One index page: its number and bytes.
#[derive(Debug, Clone, Copy)]
struct IndexPage {
    id: u64,
    bytes: u64,
}

/// The pages of an index, by first key.
#[derive(Debug, Clone)]
pub struct IndexPages {
    file: u64,
    next_id: u64,
    /// Each page by its first entry (the first page's is empty, below
    /// every entry).
    pages: BTreeMap<Vec<u8>, IndexPage>,
}

impl Default for IndexPages {
    fn default() -> Self {
        IndexPages {
            file: new_file(),
            next_id: 0,
            pages: BTreeMap::new(),
        }
    }
}

/// An index entry's key cell (key and record id) and value cell.
fn entry_cell(entry: &[u8]) -> u64 {
    let key = entry.len().saturating_sub(8);
    let mut rid = [0u8; 8];
    if let Some(tail) = entry.get(key..) {
        rid.copy_from_slice(tail);
    }
    (CELL_HEADER * 2 + key + record_id_len(u64::from_be_bytes(rid))) as u64
}

fn below(entry: &[u8]) -> (Bound<&[u8]>, Bound<&[u8]>) {
    (Bound::Unbounded, Bound::Included(entry))
}

impl IndexPages {
    /// The file number.
    pub fn file(&self) -> u64 {
        self.file
    }

    /// Number of pages.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }

    /// The total bytes of every page.
    pub fn total_bytes(&self) -> u64 {
        self.pages.values().map(|p| p.bytes).sum()
    }

    /// The page an entry is (or would be) on, and its bytes.
    pub fn page_of(&self, entry: &[u8]) -> (u64, u64) {
        self.pages
            .range::<[u8], _>(below(entry))
            .next_back()
            .map_or((0, PAGE_HEADER), |(_, p)| (p.id, p.bytes))
    }

    /// Forget every page and start a new file.
    pub fn reset(&mut self) {
        *self = IndexPages::default();
    }

    /// Lay out `entries`, in key order, on full pages (a bulk build).
    pub fn rebuild<'a>(&mut self, entries: impl Iterator<Item = &'a [u8]>) {
        self.reset();
        let mut current = IndexPage {
            id: 0,
            bytes: PAGE_HEADER,
        };
        let mut first: Vec<u8> = Vec::new();
        for e in entries {
            let cell = entry_cell(e);
            if current.bytes + cell > INDEX_PAGE as u64 && current.bytes > PAGE_HEADER {
                self.pages.insert(std::mem::take(&mut first), current);
                self.next_id += 1;
                current = IndexPage {
                    id: self.next_id,
                    bytes: PAGE_HEADER,
                };
                first = e.to_vec();
            }
            current.bytes += cell;
        }
        self.pages.insert(first, current);
        self.next_id += 1;
    }

    /// Each page's number and bytes, in key order.
    pub fn each(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.pages.values().map(|p| (p.id, p.bytes))
    }

    /// `entry` was added to the index; `page_entries(lo, hi)` lists the
    /// index's entries in a range (the new one included). Returns the page
    /// it is on after any split, and its bytes.
    pub fn added<'a, I: Iterator<Item = &'a [u8]>>(
        &mut self,
        entry: &[u8],
        page_entries: impl FnOnce(Bound<&[u8]>, Bound<&[u8]>) -> I,
    ) -> (u64, u64) {
        if self.pages.is_empty() {
            self.pages.insert(
                Vec::new(),
                IndexPage {
                    id: self.next_id,
                    bytes: PAGE_HEADER,
                },
            );
            self.next_id += 1;
        }
        let cell = entry_cell(entry);
        let Some((lo, page)) = self.pages.range_mut::<[u8], _>(below(entry)).next_back() else {
            return (0, PAGE_HEADER);
        };
        page.bytes += cell;
        if page.bytes <= INDEX_PAGE as u64 {
            return (page.id, page.bytes);
        }
        let total = page.bytes;
        let lo = lo.clone();
        let hi = self
            .pages
            .range::<[u8], _>((Bound::Excluded(&lo[..]), Bound::Unbounded))
            .next()
            .map(|(k, _)| k.clone());
        let hi_bound = hi.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        // One pass: the entry past half the cells, and whether the new
        // entry is the page's last.
        let half = (total - PAGE_HEADER) / 2;
        let (mut sum, mut left, mut split, mut last_is_new) = (0u64, 0u64, None, false);
        for e in page_entries(Bound::Included(&lo[..]), hi_bound) {
            if split.is_none() && sum >= half && e != lo.as_slice() {
                split = Some(e.to_vec());
                left = sum;
            }
            sum += entry_cell(e);
            last_is_new = e == entry;
        }
        let (split, left) = if last_is_new && entry != lo.as_slice() {
            (entry.to_vec(), total - PAGE_HEADER - cell)
        } else {
            match split {
                Some(s) => (s, left),
                None => return self.page_of(entry),
            }
        };
        if let Some(p) = self.pages.get_mut(&lo) {
            p.bytes = PAGE_HEADER + left;
        }
        let right = IndexPage {
            id: self.next_id,
            bytes: total - left,
        };
        self.next_id += 1;
        self.pages.insert(split, right);
        self.page_of(entry)
    }

    /// `entry` left the index: its page, now smaller.
    pub fn removed(&mut self, entry: &[u8]) -> (u64, u64) {
        let cell = entry_cell(entry);
        match self.pages.range_mut::<[u8], _>(below(entry)).next_back() {
            Some((_, p)) => {
                p.bytes = p.bytes.saturating_sub(cell).max(PAGE_HEADER);
                (p.id, p.bytes)
            }
            None => (0, PAGE_HEADER),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(k: u64) -> Vec<u8> {
        let mut e = k.to_be_bytes().to_vec();
        e.extend_from_slice(&k.to_be_bytes());
        e
    }

    /// Insert `keys` one by one into a sorted set and the page layout.
    fn fill(keys: impl Iterator<Item = u64>) -> IndexPages {
        let mut set = std::collections::BTreeSet::new();
        let mut pages = IndexPages::default();
        for k in keys {
            let e = entry(k);
            set.insert(e.clone());
            pages.added(&e, |lo, hi| {
                set.range::<[u8], _>((lo, hi)).map(Vec::as_slice)
            });
        }
        pages
    }

    #[test]
    fn in_order_inserts_fill_pages_and_random_ones_leave_them_part_full() {
        let n = 20_000u64;
        let ordered = fill(0..n);
        let mut rebuilt = IndexPages::default();
        let entries: Vec<Vec<u8>> = (0..n).map(entry).collect();
        rebuilt.rebuild(entries.iter().map(Vec::as_slice));
        let pages = |p: &IndexPages| p.pages() as f64;
        assert!((pages(&ordered) - pages(&rebuilt)).abs() <= 1.0);
        // A permutation of the same keys.
        let shuffled = fill((0..n).map(|i| (i * 7919) % n));
        let ratio = pages(&shuffled) / pages(&rebuilt);
        assert!((1.2..=2.0).contains(&ratio), "{ratio}");
        assert_eq!(ordered.total_bytes(), rebuilt.total_bytes());
    }

    #[test]
    fn records_fill_pages_in_order() {
        let mut r = RecordPages::default();
        for slot in 0..1000 {
            r.pushed(slot, 1000);
        }
        // 1,006-byte cells, 32 to a 32 KiB page.
        assert_eq!(r.pages(), 1000usize.div_ceil(32));
        assert_eq!(r.page_of(31).map(|p| p.0), Some(0));
        assert_eq!(r.page_of(32).map(|p| p.0), Some(1));
        let before = r.page_of(40).map(|p| p.1).unwrap_or(0);
        r.resized(40, 1000, 0);
        assert_eq!(r.page_of(40).map(|p| p.1), Some(before - 1006));
    }
}
