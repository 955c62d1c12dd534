//! The process's allocator: mimalloc, tuned for an engine that allocates
//! and frees many small values and must give freed memory back. The only
//! `unsafe` of the workspace is here (one call into mimalloc).

/// mimalloc: the engine allocates and frees many small values (documents,
/// index keys); mimalloc does this faster than the system allocator and
/// gives freed pages back to the system (a dropped database's memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc keeps freed pages for a second (its default purge delay)
/// before giving them back, so that memory freed and allocated again
/// within a step is not faulted in anew: returning every page at once cost
/// a fifth of a course run's CPU in page faults. The engine says when to
/// give everything back at once (`schemalab_engine::release`): after a
/// database is dropped, and from the server once a second, so that a
/// process gone idle after a run does not keep what it freed.
pub fn tune() {
    schemalab_engine::release::set_hook(collect_freed_memory);
    disable_transparent_huge_pages();
}

/// mimalloc asks the kernel for transparent huge pages on its arenas
/// (`madvise`), and the kernel then backs them with 2 MiB pages: zeroing
/// each one on first touch (a seventh of a large lesson's load step in a
/// profile), and keeping a whole one resident while any of it is in use,
/// whatever the allocator has given back inside it. Measured with the
/// process's huge pages off, every lesson ran as fast or faster at large
/// scale (one-to-squillions 15.5 -> 12.3 s, computed 28.6 -> 26.3 s), with
/// lower peaks (case-study 1900 -> 1800 MiB), and 1M small documents held
/// about 10 MiB less. A `mongod` this process starts inherits the setting,
/// which MongoDB's production notes for 7.0 recommend too. Where the kernel
/// refuses, nothing changes.
fn disable_transparent_huge_pages() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

/// mimalloc's forced collect: the calling thread's free pages go back to
/// the arenas, and every arena's pending purges (the whole program's) are
/// done now.
#[allow(unsafe_code)]
fn collect_freed_memory() {
    // SAFETY: `mi_collect` only walks mimalloc's own structures; it may be
    // called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[cfg(test)]
mod tests {
    /// The process's transparent huge pages are off once the allocator is
    /// tuned, as the kernel reports them (`THP_enabled` in
    /// `/proc/self/status`, Linux 5.0 on; older kernels skip the check).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn tuning_the_allocator_turns_transparent_huge_pages_off() {
        super::disable_transparent_huge_pages();
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().ok(),
            Some(true)
        );
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        if let Some(line) = status.lines().find(|l| l.starts_with("THP_enabled:")) {
            assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
        }
    }
}
