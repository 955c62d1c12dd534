//! Sorted runs on disk, for a `$sort` that passes its memory limit when it
//! may use the disk, as mongod's sorter spills.
//!
//! The items are the `$sort` buffer's: a document's sort values encoded as
//! an index key, then its BSON (`keystring::keyed`), ordered by the key's
//! bytes. When the buffer passes the limit, what it holds is sorted and
//! written to a temporary file of its own (a run: each item as its length
//! and its bytes), and its memory goes. Once the input ends, the runs and
//! the items still in memory are merged, with one read buffer per run.
//! Equal keys keep their input order: a run holds a stretch of input that
//! comes after every earlier run's, and the merge takes the earlier run's
//! item first on a tie.
//!
//! The files have no name (`tempfile::tempfile`) and go when the sort ends
//! or the process does.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use crate::error::{EngineError, ErrorCode, Result};
use crate::keystring::key_of;

/// Each run's read buffer during the merge.
const READ_BUFFER: usize = 64 << 10;

/// The runs a sort has written so far.
#[derive(Debug, Default)]
pub(crate) struct Runs {
    runs: Vec<Run>,
    /// Bytes written to the runs' files in all.
    written: u64,
}

#[derive(Debug)]
struct Run {
    file: File,
    items: u64,
}

impl Runs {
    /// How many runs were written.
    pub(crate) fn count(&self) -> usize {
        self.runs.len()
    }

    /// Bytes written to disk.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Sort `items` (stably, by key) and write them out as one run,
    /// leaving `items` empty and its memory freed.
    pub(crate) fn spill(&mut self, items: &mut Vec<Box<[u8]>>) -> Result<()> {
        sort(items);
        let written = write_run(items).map_err(|e| io_error("write", &e))?;
        self.written += written.1;
        self.runs.push(written.0);
        *items = Vec::new();
        Ok(())
    }

    /// Hand every item, from the runs and from `last` (the input that came
    /// after them, still in memory), to `each` in order. With no run, that
    /// is `last` sorted.
    pub(crate) fn merge(
        self,
        mut last: Vec<Box<[u8]>>,
        each: &mut dyn FnMut(Box<[u8]>) -> Result<()>,
    ) -> Result<()> {
        sort(&mut last);
        if self.runs.is_empty() {
            return last.into_iter().try_for_each(each);
        }
        let mut sources = Vec::with_capacity(self.runs.len() + 1);
        for run in self.runs {
            sources.push(Source::open(run).map_err(|e| io_error("read", &e))?);
        }
        sources.push(Source::Memory(last.into_iter()));
        let mut heads = BinaryHeap::with_capacity(sources.len());
        for (source, s) in sources.iter_mut().enumerate() {
            if let Some(item) = s.next().map_err(|e| io_error("read", &e))? {
                heads.push(Head { item, source });
            }
        }
        while let Some(Head { item, source }) = heads.pop() {
            if let Some(next) = sources[source].next().map_err(|e| io_error("read", &e))? {
                heads.push(Head { item: next, source });
            }
            each(item)?;
        }
        Ok(())
    }
}

/// Sort items by key; stable, so equal keys keep input order.
fn sort(items: &mut [Box<[u8]>]) {
    items.sort_by(|a, b| key_of(a).cmp(key_of(b)));
}

fn write_run(items: &[Box<[u8]>]) -> io::Result<(Run, u64)> {
    let mut out = BufWriter::with_capacity(READ_BUFFER, tempfile::tempfile()?);
    let mut written = 0u64;
    for item in items {
        // An item is one document of at most 16 MiB and its key.
        let len = u32::try_from(item.len()).map_err(io::Error::other)?;
        out.write_all(&len.to_le_bytes())?;
        out.write_all(item)?;
        written += 4 + item.len() as u64;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    let run = Run {
        file,
        items: items.len() as u64,
    };
    Ok((run, written))
}

/// Where the merge takes its next item from.
enum Source {
    Disk { reader: BufReader<File>, left: u64 },
    Memory(std::vec::IntoIter<Box<[u8]>>),
}

impl Source {
    fn open(mut run: Run) -> io::Result<Source> {
        run.file.seek(SeekFrom::Start(0))?;
        Ok(Source::Disk {
            reader: BufReader::with_capacity(READ_BUFFER, run.file),
            left: run.items,
        })
    }

    fn next(&mut self) -> io::Result<Option<Box<[u8]>>> {
        match self {
            Source::Memory(items) => Ok(items.next()),
            Source::Disk { left: 0, .. } => Ok(None),
            Source::Disk { reader, left } => {
                *left -= 1;
                let mut len = [0u8; 4];
                reader.read_exact(&mut len)?;
                let mut item = vec![0u8; u32::from_le_bytes(len) as usize].into_boxed_slice();
                reader.read_exact(&mut item)?;
                Ok(Some(item))
            }
        }
    }
}

/// A source's next item, ordered for a max-heap so that the least key, and
/// on a tie the earliest source, comes out first.
struct Head {
    item: Box<[u8]>,
    source: usize,
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        key_of(&other.item)
            .cmp(key_of(&self.item))
            .then(other.source.cmp(&self.source))
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

fn io_error(what: &str, e: &io::Error) -> EngineError {
    EngineError::new(
        ErrorCode::INTERNAL_ERROR,
        format!("$sort could not {what} its temporary file: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keystring::{keyed, payload_of};
    use proptest::prelude::*;

    fn item(key: u8, seq: u32) -> Box<[u8]> {
        keyed::<()>(&[key], |out| {
            out.extend_from_slice(&seq.to_le_bytes());
            Ok(())
        })
        .unwrap()
    }

    proptest! {
        /// Spilling at any points and merging gives what one stable sort of
        /// the whole input gives, ties (few distinct keys) in input order.
        #[test]
        fn spilled_runs_merge_into_the_stable_order(
            keys in prop::collection::vec(0u8..6, 0..300),
            cuts in prop::collection::vec(any::<bool>(), 300),
        ) {
            let input: Vec<Box<[u8]>> =
                keys.iter().enumerate().map(|(i, k)| item(*k, i as u32)).collect();
            let mut expected = input.clone();
            sort(&mut expected);

            let mut runs = Runs::default();
            let mut held = Vec::new();
            let mut spills = 0;
            for (i, it) in input.into_iter().enumerate() {
                held.push(it);
                if cuts[i] {
                    runs.spill(&mut held).unwrap();
                    spills += 1;
                    prop_assert!(held.is_empty());
                }
            }
            prop_assert_eq!(runs.count(), spills);
            let on_disk: u64 = expected.len() as u64 * 4
                + expected.iter().map(|i| i.len() as u64).sum::<u64>()
                - held.iter().map(|i| 4 + i.len() as u64).sum::<u64>();
            prop_assert_eq!(runs.written(), on_disk);
            let mut merged = Vec::new();
            runs.merge(held, &mut |i| {
                merged.push(i);
                Ok(())
            })
            .unwrap();
            prop_assert_eq!(
                merged.iter().map(|i| payload_of(i).to_vec()).collect::<Vec<_>>(),
                expected.iter().map(|i| payload_of(i).to_vec()).collect::<Vec<_>>()
            );
        }
    }
}
