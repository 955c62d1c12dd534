//! The ordered set of byte strings an index keeps its entries in, packed to
//! cost a few bytes per entry beyond the entry itself.
//!
//! Most entries live in the *base*: one sorted run of strings stored back to
//! back in a single buffer, with a `u32` offset per string (about 4 bytes of
//! overhead, against some 35 for a boxed string in a `BTreeSet`). The base
//! is never edited in the middle. Strings inserted since it was built go to
//! a small `BTreeSet` (the *delta*), and removed base strings are marked by
//! position (*tombstones*); reads merge the base and the delta and skip the
//! tombstones. When the delta and the tombstones together outgrow a fraction
//! of the base, they are merged into a fresh base, so an insert costs
//! amortised O(1) copies on top of its O(log n) search. A string greater
//! than every other one (ascending `_id`s, ascending record ids) is appended
//! to the base directly, without going through the delta.
//!
//! The base sits behind an `Arc`: a clone of the set (a collection copied on
//! write while a reader holds a snapshot) shares it and copies only the
//! delta and the tombstones. A set whose base is shared sends even appends
//! to the delta, so the reader's snapshot never changes.

use std::collections::{BTreeSet, btree_set};
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

/// Pending changes (delta strings plus tombstones) are merged into the base
/// once they exceed `base.len() / MERGE_FRACTION`...
const MERGE_FRACTION: usize = 8;
/// ...or this many, whichever is larger (so that a small set does not
/// rebuild its base on every insert).
const MERGE_MIN: usize = 64;

/// A delta string, held inline up to 24 bytes (an `_id` index entry of an
/// ObjectId or a number, record id included): the delta's B-tree compares
/// strings in its nodes without following a pointer to each, which, with
/// keys inserted in random order, cost a cache miss per comparison.
type DeltaString = smallvec::SmallVec<[u8; 24]>;

/// Byte strings in ascending order, stored back to back. Not `Clone`: a
/// base is shared, never copied.
#[derive(Default)]
struct Run {
    bytes: Vec<u8>,
    /// Where each string ends in `bytes`; string `i` starts where string
    /// `i - 1` ends (at 0 for the first). `u32` keeps the overhead at 4 bytes
    /// a string and limits a run to 4 GiB: strings that would not fit stay in
    /// the delta.
    ends: Vec<u32>,
}

impl Run {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    fn last(&self) -> Option<&[u8]> {
        self.len().checked_sub(1).map(|i| self.get(i))
    }

    /// Append `s`, which must sort after every string already here. False
    /// (and nothing appended) when the run would outgrow `u32` offsets.
    fn push(&mut self, s: &[u8]) -> bool {
        let Ok(end) = u32::try_from(self.bytes.len() + s.len()) else {
            return false;
        };
        // `Vec`'s own doubling: growing by less was tried (less unused
        // capacity) and left the server's resident size no smaller, the
        // allocator keeping more freed old buffers resident for a while.
        self.bytes.extend_from_slice(s);
        self.ends.push(end);
        true
    }

    /// The number of strings less than `s`, or less than or equal to it
    /// with `include_equal`: where a range from `s` included (excluded)
    /// starts, and where one up to `s` excluded (included) ends.
    fn count_below(&self, s: &[u8], include_equal: bool) -> usize {
        // Appends probe past the last string: answer that without a search.
        match self.last() {
            None => return 0,
            Some(last) if last < s => return self.len(),
            _ => {}
        }
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let below = if include_equal {
                self.get(mid) <= s
            } else {
                self.get(mid) < s
            };
            if below {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// [`Run::count_below`] when every string before `start` is known to
    /// be below `s`: galloping forward from `start` (1, 2, 4, … strings
    /// on), then a binary search of the last step, so that the end of a
    /// short range costs a comparison or two near its start instead of a
    /// search of the whole run. Where the strings at `start` are not
    /// below `s` (a range that ends before it starts) the answer is
    /// `start`.
    fn count_below_from(&self, start: usize, s: &[u8], include_equal: bool) -> usize {
        let below = |i: usize| {
            if include_equal {
                self.get(i) <= s
            } else {
                self.get(i) < s
            }
        };
        let n = self.len();
        let (mut lo, mut step) = (start.min(n), 1usize);
        let mut hi = loop {
            let probe = lo.saturating_add(step - 1);
            if probe >= n {
                break n;
            }
            if !below(probe) {
                break probe;
            }
            lo = probe + 1;
            step = step.saturating_mul(2);
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The position of `s`, if present.
    fn find(&self, s: &[u8]) -> Option<usize> {
        let i = self.count_below(s, false);
        (i < self.len() && self.get(i) == s).then_some(i)
    }
}

/// A sorted set of byte strings (see the module documentation).
#[derive(Clone, Default)]
pub struct KeySet {
    base: Arc<Run>,
    /// Positions of removed base strings.
    tombstones: BTreeSet<usize>,
    /// Strings inserted since the base was built; never one the base holds
    /// (live or tombstoned), so the two never yield the same string.
    delta: BTreeSet<DeltaString>,
    /// Total length of the delta's strings, to know whether a merge fits.
    delta_bytes: usize,
}

impl KeySet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.base.len() - self.tombstones.len() + self.delta.len()
    }

    /// Whether the set holds no string.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the set holds `s`.
    #[cfg(test)]
    pub fn contains(&self, s: &[u8]) -> bool {
        match self.base.find(s) {
            Some(i) => !self.tombstones.contains(&i),
            None => self.delta.contains(s),
        }
    }

    /// Add `s`; false if it was already there.
    pub fn insert(&mut self, s: &[u8]) -> bool {
        if let Some(i) = self.base.find(s) {
            // Present, or removed since the base was built: revive it.
            return self.tombstones.remove(&i);
        }
        let after_base = self.base.last().is_none_or(|last| last < s);
        self.insert_outside_base(s, after_base)
    }

    /// Add `s`, which lies between `lo` and `hi` (both included), unless
    /// the set holds a string in that range: false, and nothing added, if
    /// it does. One search of the base where a check followed by an insert
    /// takes three: a unique index's insert, whose range is every entry of
    /// one key.
    pub fn insert_if_none_in(&mut self, lo: &[u8], hi: &[u8], s: &[u8]) -> bool {
        debug_assert!(lo <= s && s <= hi);
        let start = self.base.count_below(lo, false);
        let mut end = start;
        while end < self.base.len() && self.base.get(end) <= hi {
            if !self.tombstones.contains(&end) {
                return false;
            }
            end += 1;
        }
        if self
            .delta
            .range::<[u8], _>((Bound::Included(lo), Bound::Included(hi)))
            .next()
            .is_some()
        {
            return false;
        }
        // Only removed base strings lie in the range: `s` may be one.
        if let Some(i) = (start..end).find(|&i| self.base.get(i) == s) {
            return self.tombstones.remove(&i);
        }
        self.insert_outside_base(s, start == self.base.len())
    }

    /// Add `s`, which the base does not hold (`after_base`: it sorts after
    /// every base string); false if the delta already holds it.
    fn insert_outside_base(&mut self, s: &[u8], after_base: bool) -> bool {
        let past_the_end = after_base && self.delta.last().is_none_or(|last| &**last < s);
        if past_the_end
            && let Some(base) = Arc::get_mut(&mut self.base)
            && base.push(s)
        {
            return true;
        }
        if !self.delta.insert(DeltaString::from_slice(s)) {
            return false;
        }
        self.delta_bytes += s.len();
        self.merge_if_due();
        true
    }

    /// Remove `s`; false if it was not there.
    pub fn remove(&mut self, s: &[u8]) -> bool {
        if let Some(i) = self.base.find(s) {
            if !self.tombstones.insert(i) {
                return false;
            }
            self.merge_if_due();
            return true;
        }
        if !self.delta.remove(s) {
            return false;
        }
        self.delta_bytes -= s.len();
        true
    }

    /// Make room for `strings` more strings of `bytes` bytes in all, to be
    /// appended in order (an index build's): they then fill buffers of the
    /// right size instead of doubling into them.
    pub fn reserve(&mut self, strings: usize, bytes: usize) {
        if let Some(base) = Arc::get_mut(&mut self.base) {
            base.bytes.reserve(bytes);
            base.ends.reserve(strings);
        }
    }

    /// Remove every string.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Every string in order.
    pub fn iter(&self) -> Range<'_> {
        self.range(Bound::Unbounded, Bound::Unbounded)
    }

    /// The strings between `lo` and `hi`, in order either way. A range whose
    /// start lies past its end is empty.
    pub fn range<'a>(&'a self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Range<'a> {
        let front = match lo {
            Bound::Included(s) => self.base.count_below(s, false),
            Bound::Excluded(s) => self.base.count_below(s, true),
            Bound::Unbounded => 0,
        };
        // Every string before `front` is below a bound past the start, so
        // the end is found from the start (a point lookup's range holds
        // one string or none).
        let back = match hi {
            Bound::Included(s) => self.base.count_below_from(front, s, true),
            Bound::Excluded(s) => self.base.count_below_from(front, s, false),
            Bound::Unbounded => self.base.len(),
        };
        // `BTreeSet::range` panics on a range that ends before it starts.
        let delta = (!is_empty_range(lo, hi)).then(|| self.delta.range::<[u8], _>((lo, hi)));
        Range {
            base: &self.base,
            tombstones: &self.tombstones,
            front,
            back: back.max(front),
            delta,
            delta_front: None,
            delta_back: None,
        }
    }

    /// Merge the delta and drop the tombstones into a fresh base once they
    /// are due (see [`MERGE_FRACTION`]).
    fn merge_if_due(&mut self) {
        let pending = self.delta.len() + self.tombstones.len();
        if pending <= MERGE_MIN.max(self.base.len() / MERGE_FRACTION) {
            return;
        }
        let removed: usize = self
            .tombstones
            .iter()
            .map(|&i| self.base.get(i).len())
            .sum();
        let bytes = self.base.bytes.len() - removed + self.delta_bytes;
        if u32::try_from(bytes).is_err() {
            // Too large for one run: the delta keeps the rest.
            return;
        }
        let mut run = Run {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(self.len()),
        };
        for s in self.iter() {
            // Fits: the total was checked above.
            run.push(s);
        }
        self.base = Arc::new(run);
        self.tombstones.clear();
        self.delta.clear();
        self.delta_bytes = 0;
    }
}

impl fmt::Debug for KeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Whether `(lo, hi)` can hold nothing because it ends before it starts (or
/// where it starts, with either end excluded).
fn is_empty_range(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
    match (lo, hi) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
            a >= b
        }
        _ => false,
    }
}

/// The strings of a [`KeySet`] in a range: the base's and the delta's,
/// merged in order, without the tombstoned ones.
pub struct Range<'a> {
    base: &'a Run,
    tombstones: &'a BTreeSet<usize>,
    /// The base positions not yet yielded: `front..back`.
    front: usize,
    back: usize,
    /// The delta strings not yet yielded: `delta_front`, then what `delta`
    /// still holds, then `delta_back` (each side's next one is taken out of
    /// `delta` to compare it with the base's).
    delta: Option<btree_set::Range<'a, DeltaString>>,
    delta_front: Option<&'a [u8]>,
    delta_back: Option<&'a [u8]>,
}

impl<'a> Range<'a> {
    fn is_tombstoned(&self, i: usize) -> bool {
        !self.tombstones.is_empty() && self.tombstones.contains(&i)
    }

    /// The next base string from the front, past tombstones.
    fn base_front(&mut self) -> Option<&'a [u8]> {
        while self.front < self.back && self.is_tombstoned(self.front) {
            self.front += 1;
        }
        let base: &'a Run = self.base;
        (self.front < self.back).then(|| base.get(self.front))
    }

    /// The next base string from the back, past tombstones.
    fn base_back(&mut self) -> Option<&'a [u8]> {
        while self.front < self.back && self.is_tombstoned(self.back - 1) {
            self.back -= 1;
        }
        let base: &'a Run = self.base;
        (self.front < self.back).then(|| base.get(self.back - 1))
    }

    fn delta_front(&mut self) -> Option<&'a [u8]> {
        if self.delta_front.is_none() {
            self.delta_front = match self.delta.as_mut().and_then(Iterator::next) {
                Some(s) => Some(&**s),
                // The delta's last string may be waiting at the back.
                None => self.delta_back.take(),
            };
        }
        self.delta_front
    }

    fn delta_back(&mut self) -> Option<&'a [u8]> {
        if self.delta_back.is_none() {
            self.delta_back = match self.delta.as_mut().and_then(DoubleEndedIterator::next_back) {
                Some(s) => Some(&**s),
                None => self.delta_front.take(),
            };
        }
        self.delta_back
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match (self.base_front(), self.delta_front()) {
            (Some(b), Some(d)) if b < d => {
                self.front += 1;
                Some(b)
            }
            (Some(b), None) => {
                self.front += 1;
                Some(b)
            }
            (_, Some(_)) => self.delta_front.take(),
            (None, None) => None,
        }
    }
}

impl<'a> DoubleEndedIterator for Range<'a> {
    fn next_back(&mut self) -> Option<&'a [u8]> {
        match (self.base_back(), self.delta_back()) {
            (Some(b), Some(d)) if b > d => {
                self.back -= 1;
                Some(b)
            }
            (Some(b), None) => {
                self.back -= 1;
                Some(b)
            }
            (_, Some(_)) => self.delta_back.take(),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// Short strings over a few byte values, so that operations collide,
    /// share prefixes and meet the extreme bytes.
    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(vec![0x00u8, 0x01, 0x7F, 0xFF]), 0..5)
    }

    fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
        prop_oneof![
            Just(Bound::Unbounded),
            key().prop_map(Bound::Included),
            key().prop_map(Bound::Excluded),
        ]
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(Vec<u8>),
        /// `insert_if_none_in(prefix + [0x00], prefix + [0xFF], prefix +
        /// [byte])`: a unique index's insert of one key.
        InsertUnique(Vec<u8>, u8),
        Remove(Vec<u8>),
        /// Insert many strings at once (enough to force merges).
        InsertMany(Vec<Vec<u8>>),
        RemoveMany(Vec<Vec<u8>>),
        /// Append `n` strings, each past every other (the push path).
        Append(usize),
        /// Read a range, taking from the front (true) or the back (false)
        /// as listed, then the rest from the front.
        Scan(Bound<Vec<u8>>, Bound<Vec<u8>>, Vec<bool>),
        /// Keep a clone, to check later that writes did not reach it.
        Snapshot,
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => key().prop_map(Op::Insert),
            6 => (key(), prop::sample::select(vec![0x00u8, 0x01, 0x7F, 0xFF]))
                .prop_map(|(k, b)| Op::InsertUnique(k, b)),
            6 => key().prop_map(Op::Remove),
            1 => prop::collection::vec(key(), 0..100).prop_map(Op::InsertMany),
            1 => prop::collection::vec(key(), 0..200).prop_map(Op::RemoveMany),
            2 => (0usize..100).prop_map(Op::Append),
            6 => (bound(), bound(), prop::collection::vec(any::<bool>(), 0..12))
                .prop_map(|(lo, hi, sides)| Op::Scan(lo, hi, sides)),
            1 => Just(Op::Snapshot),
            1 => Just(Op::Clear),
        ]
    }

    fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        b.as_ref().map(|v| &v[..])
    }

    /// What a range holds, by the definition rather than `BTreeSet::range`
    /// (which panics on inverted ranges).
    fn model_range(
        model: &BTreeSet<Vec<u8>>,
        lo: &Bound<Vec<u8>>,
        hi: &Bound<Vec<u8>>,
    ) -> VecDeque<Vec<u8>> {
        model
            .iter()
            .filter(|s| match lo {
                Bound::Included(l) => *s >= l,
                Bound::Excluded(l) => *s > l,
                Bound::Unbounded => true,
            })
            .filter(|s| match hi {
                Bound::Included(h) => *s <= h,
                Bound::Excluded(h) => *s < h,
                Bound::Unbounded => true,
            })
            .cloned()
            .collect()
    }

    fn assert_same(set: &KeySet, model: &BTreeSet<Vec<u8>>) {
        assert_eq!(set.len(), model.len());
        let forward: Vec<&[u8]> = set.iter().collect();
        let expected: Vec<&[u8]> = model.iter().map(|v| &v[..]).collect();
        assert_eq!(forward, expected);
        let mut backward: Vec<&[u8]> = set.iter().rev().collect();
        backward.reverse();
        assert_eq!(backward, expected);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn behaves_as_a_btreeset(ops in prop::collection::vec(op(), 1..200)) {
            let mut set = KeySet::new();
            let mut model = BTreeSet::<Vec<u8>>::new();
            let mut snapshots = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(k) => {
                        prop_assert_eq!(set.insert(&k), model.insert(k.clone()));
                        prop_assert!(set.contains(&k));
                    }
                    Op::InsertUnique(prefix, byte) => {
                        let with = |b: u8| [&prefix[..], &[b]].concat();
                        let (lo, hi, k) = (with(0x00), with(0xFF), with(byte));
                        let taken = model.range(lo.clone()..=hi.clone()).next().is_some();
                        prop_assert_eq!(set.insert_if_none_in(&lo, &hi, &k), !taken);
                        if !taken {
                            model.insert(k.clone());
                        }
                        prop_assert!(set.contains(&k) || taken);
                    }
                    Op::Remove(k) => {
                        prop_assert_eq!(set.remove(&k), model.remove(&k));
                        prop_assert!(!set.contains(&k));
                    }
                    Op::InsertMany(keys) => {
                        for k in keys {
                            prop_assert_eq!(set.insert(&k), model.insert(k));
                        }
                    }
                    Op::RemoveMany(keys) => {
                        for k in keys {
                            prop_assert_eq!(set.remove(&k), model.remove(&k));
                        }
                    }
                    Op::Append(n) => {
                        for _ in 0..n {
                            let mut k = model.last().cloned().unwrap_or_default();
                            match k.last_mut() {
                                Some(b) if *b < 0xFF => *b += 1,
                                _ => k.push(0x01),
                            }
                            prop_assert!(set.insert(&k));
                            model.insert(k);
                        }
                    }
                    Op::Scan(lo, hi, sides) => {
                        let mut expected = model_range(&model, &lo, &hi);
                        let mut range = set.range(as_ref(&lo), as_ref(&hi));
                        for front in sides {
                            let (got, want) = if front {
                                (range.next(), expected.pop_front())
                            } else {
                                (range.next_back(), expected.pop_back())
                            };
                            prop_assert_eq!(got, want.as_deref());
                        }
                        let rest: Vec<&[u8]> = range.collect();
                        let want: Vec<&[u8]> = expected.iter().map(|v| &v[..]).collect();
                        prop_assert_eq!(rest, want);
                    }
                    Op::Snapshot => snapshots.push((set.clone(), model.clone())),
                    Op::Clear => {
                        set.clear();
                        model.clear();
                    }
                }
                prop_assert_eq!(set.len(), model.len());
            }
            assert_same(&set, &model);
            for (snapshot, then) in &snapshots {
                assert_same(snapshot, then);
            }
        }
    }

    #[test]
    fn appends_go_to_the_base_and_inserts_merge_into_it() {
        let mut set = KeySet::new();
        for i in 0u32..1000 {
            set.insert(&i.to_be_bytes());
        }
        assert_eq!(set.base.len(), 1000, "in-order inserts are appends");
        assert!(set.delta.is_empty());
        // Out of order: the delta takes them until a merge is due.
        for i in (1000u32..2000).rev() {
            set.insert(&i.to_be_bytes());
        }
        assert!(set.delta.len() <= MERGE_MIN.max(set.base.len() / MERGE_FRACTION));
        assert_eq!(set.len(), 2000);
        let all: Vec<Vec<u8>> = set.iter().map(<[u8]>::to_vec).collect();
        let expected: Vec<Vec<u8>> = (0u32..2000).map(|i| i.to_be_bytes().to_vec()).collect();
        assert_eq!(all, expected);
    }

    #[test]
    fn a_shared_base_is_never_written() {
        let mut set = KeySet::new();
        for i in 0u32..10 {
            set.insert(&i.to_be_bytes());
        }
        let snapshot = set.clone();
        set.insert(&10u32.to_be_bytes());
        set.remove(&0u32.to_be_bytes());
        assert_eq!(snapshot.len(), 10);
        assert_eq!(snapshot.iter().next(), Some(&0u32.to_be_bytes()[..]));
        assert_eq!(set.len(), 10);
        assert_eq!(set.iter().next(), Some(&1u32.to_be_bytes()[..]));
    }
}
