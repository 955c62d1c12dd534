//! Spilling: the record chunks of collections nobody is using, moved out of
//! memory into a temporary file, and read back the first time a reader
//! needs them.
//!
//! The engine holds every record in memory, as mongod's in-memory storage
//! engine does. A course run, though, leaves each variant's database behind
//! for the shell, and at large scale those databases add up to more than a
//! laptop should give a teaching tool. So the store has a budget for the
//! record bytes it keeps resident, and a pass (run by the server every
//! second) writes the chunks of the coldest collections to one anonymous
//! file when the budget is exceeded: a file with no name, deleted by the
//! system when the process ends, whose space is given back (a hole punched)
//! as soon as no collection refers to a chunk any more. Nothing else about
//! a collection changes: its indexes stay in memory, counts and sizes are
//! those of the same bytes, and a spilled chunk read back is the same
//! bytes. This is a cache, not persistence: nothing survives the process.

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::unix::fs::FileExt;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

/// Extents start on a page boundary, so that a punched hole frees whole
/// blocks.
const ALIGN: u64 = 4096;

/// The anonymous file chunks are spilled to.
#[derive(Debug)]
pub struct SpillFile {
    file: File,
    /// Where the next extent goes: extents are appended, and the space of
    /// a released one is returned to the file system, not reused.
    end: Mutex<u64>,
}

impl SpillFile {
    /// A new file in the system's temporary directory, with no name.
    pub fn new() -> io::Result<Arc<Self>> {
        Ok(Arc::new(SpillFile {
            file: tempfile::tempfile()?,
            end: Mutex::new(0),
        }))
    }

    /// Write `bytes` to a new extent of the file.
    pub fn write(self: &Arc<Self>, bytes: &[u8]) -> io::Result<Arc<Extent>> {
        let offset = {
            let mut end = self.end.lock();
            let at = *end;
            *end = (at + bytes.len() as u64).div_ceil(ALIGN) * ALIGN;
            at
        };
        write_at(&self.file, bytes, offset)?;
        Ok(Arc::new(Extent {
            file: self.clone(),
            offset,
            len: bytes.len(),
        }))
    }
}

/// One chunk's bytes in the spill file; the space is released when the
/// last chunk that refers to it goes.
#[derive(Debug)]
pub struct Extent {
    file: Arc<SpillFile>,
    offset: u64,
    len: usize,
}

impl Extent {
    fn read(&self) -> io::Result<Box<[u8]>> {
        let mut bytes = vec![0; self.len].into_boxed_slice();
        read_at(&self.file.file, &mut bytes, self.offset)?;
        Ok(bytes)
    }
}

impl Drop for Extent {
    fn drop(&mut self) {
        punch_hole(&self.file.file, self.offset, self.len as u64);
    }
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    file.write_all_at(bytes, offset)
}

#[cfg(unix)]
fn read_at(file: &File, bytes: &mut [u8], offset: u64) -> io::Result<()> {
    file.read_exact_at(bytes, offset)
}

/// Elsewhere nothing is spilled: the first pass fails to write, and the
/// server stops trying (records stay in memory).
#[cfg(not(unix))]
fn write_at(_file: &File, _bytes: &[u8], _offset: u64) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "spilling needs positioned file I/O",
    ))
}

#[cfg(not(unix))]
fn read_at(_file: &File, _bytes: &mut [u8], _offset: u64) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "spilling needs positioned file I/O",
    ))
}

/// Give a released extent's space back to the file system. An economy, not
/// a duty: a file system (or a system) that cannot punch holes keeps the
/// space until the process ends.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn punch_hole(file: &File, offset: u64, len: u64) {
    let _ = rustix::fs::fallocate(
        file,
        rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
        offset,
        len.div_ceil(ALIGN) * ALIGN,
    );
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn punch_hole(_file: &File, _offset: u64, _len: u64) {}

/// A chunk whose bytes are in the spill file, and in memory too once a
/// reader has needed them (until the next pass lets that copy go).
#[derive(Debug)]
pub struct Spilled {
    extent: Arc<Extent>,
    loaded: OnceLock<Box<[u8]>>,
}

impl Spilled {
    pub fn new(extent: Arc<Extent>) -> Self {
        Spilled {
            extent,
            loaded: OnceLock::new(),
        }
    }

    /// The chunk's bytes, read back from the file on first use.
    ///
    /// # Panics
    /// When the file cannot be read back: the storage under the engine
    /// failed, which mongod too treats as fatal. The server turns a panic
    /// into an error reply for the one command that met it.
    pub fn bytes(&self) -> &[u8] {
        self.loaded.get_or_init(|| self.read_passing())
    }

    /// The chunk's bytes read from the file for one reader, leaving the
    /// chunk as it was: a whole-collection scan reads each chunk once, and
    /// keeping every one in memory would bring the whole collection back
    /// until the next spill pass. Panics as [`Spilled::bytes`] does.
    pub fn read_passing(&self) -> Box<[u8]> {
        match self.extent.read() {
            Ok(bytes) => bytes,
            Err(e) => panic!("a spilled chunk could not be read back from its file: {e}"),
        }
    }

    /// The chunk's length, without reading it back.
    pub fn len(&self) -> usize {
        self.extent.len
    }

    /// Whether its bytes are in memory.
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    /// The same extent, not loaded: what a pass puts in place of a chunk
    /// read back since it was spilled.
    pub fn unloaded(&self) -> Self {
        Spilled::new(self.extent.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_bytes_read_back_as_written() {
        let file = SpillFile::new().unwrap();
        let a: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let b = vec![7u8; 10];
        let (ea, eb) = (file.write(&a).unwrap(), file.write(&b).unwrap());
        assert_eq!(ea.offset % ALIGN, 0);
        assert_eq!(eb.offset % ALIGN, 0);
        let (sa, sb) = (Spilled::new(ea), Spilled::new(eb));
        assert!(!sa.is_loaded());
        assert_eq!(sb.bytes(), &b[..]);
        assert_eq!(sa.bytes(), &a[..]);
        assert!(sa.is_loaded());
        let again = sa.unloaded();
        assert!(!again.is_loaded());
        assert_eq!(again.len(), a.len());
        drop(sa);
        // The extent outlives the first chunk that referred to it.
        assert_eq!(again.bytes(), &a[..]);
    }
}
