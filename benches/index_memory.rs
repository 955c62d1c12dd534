//! What an index costs in heap bytes per entry, measured by the allocator.
//!
//! This binary counts the heap bytes requested and freed (`stats_alloc`
//! around the system allocator; requested sizes, before any rounding by the
//! allocator), builds `_id` indexes of 1,000,000 entries (int32 in ascending
//! order, as `memory_small` in `benches/engine.rs` loads them; int32
//! shuffled; ascending ObjectIds) and reports what each grew the heap by per
//! entry, beside the target for the packed entry set
//! (`engine::index::keyset`): at most twice the entry and its 4-byte
//! offset. `cargo bench --bench index_memory` prints the figures.
#![allow(clippy::unwrap_used)]

use bson::oid::ObjectId;
use bson::{Bson, doc};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use schemalab_engine::index::{Index, IndexSpec};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

/// The system allocator, counting what it hands out and takes back.
#[global_allocator]
static ALLOCATOR: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const ENTRIES: i32 = 1_000_000;

/// Heap bytes per entry of an `_id` index built by inserting `ids` in
/// order, and the entries' average length (key and record id).
fn bytes_per_entry(ids: &[Bson]) -> (f64, f64) {
    let region = Region::new(ALLOCATOR);
    let mut index = Index::new(IndexSpec::id_index());
    for (rid, id) in ids.iter().enumerate() {
        let keys = index.keys_for(&doc! {"_id": id.clone()}).unwrap();
        index.insert_keys(&keys, rid as u64);
    }
    let change = region.change();
    // Live bytes: what was requested less what was freed (`stats_alloc`
    // counts a reallocation's growth or shrinkage in these two as well).
    let grown = change.bytes_allocated as f64 - change.bytes_deallocated as f64;
    assert_eq!(index.len(), ids.len());
    let entry_bytes: usize = index.entries().map(<[u8]>::len).sum();
    let n = ids.len() as f64;
    (grown / n, entry_bytes as f64 / n)
}

fn main() {
    let ascending: Vec<Bson> = (0..ENTRIES).map(Bson::Int32).collect();
    let mut shuffled = ascending.clone();
    shuffled.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(7));
    // ObjectIds made by one process ascend, as a driver's do.
    let object_ids: Vec<Bson> = (0..ENTRIES)
        .map(|_| Bson::ObjectId(ObjectId::new()))
        .collect();
    for (what, ids) in [
        ("int32 ascending", &ascending),
        ("int32 shuffled", &shuffled),
        ("ObjectId ascending", &object_ids),
    ] {
        let (per_entry, entry_len) = bytes_per_entry(ids);
        // The entry and its 4-byte offset, in buffers at most half unused
        // (a `Vec` doubles); the `BTreeSet` of boxed entries this replaced
        // took 48 to 56 bytes here.
        let target = 2.0 * (entry_len + 4.0);
        println!(
            "index_memory: {ENTRIES} `_id` entries, {what} ({entry_len:.1}-byte entries): \
             {per_entry:.1} heap bytes per entry (target <= {target:.1})"
        );
    }
}
