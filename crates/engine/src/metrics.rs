//! What one operation did, gathered while it runs, for the profiler
//! (`system.profile`, as mongod's database profiler records it).
//!
//! The wire layer opens a measurement around a command ([`begin`] /
//! [`end`]); the executor adds the keys and documents its winning plans
//! examined and the plan summary, and the catalog adds the index keys each
//! write inserted and deleted. Commands run synchronously on one thread, so
//! the measurement is thread-local; outside a measurement nothing is kept.

use std::cell::RefCell;

/// The figures of one operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpMetrics {
    pub keys_examined: u64,
    pub docs_examined: u64,
    pub keys_inserted: u64,
    pub keys_deleted: u64,
    /// mongod's `planSummary` of the operation's first planned read.
    pub plan_summary: Option<String>,
    /// Bytes the modelled cache read in for this operation
    /// (`storage.data.bytesRead`).
    pub bytes_read: u64,
    /// Pages the modelled cache read in for this operation.
    pub pages_read: u64,
}

thread_local! {
    static CURRENT: RefCell<Option<OpMetrics>> = const { RefCell::new(None) };
}

/// Start measuring an operation on this thread.
pub fn begin() {
    CURRENT.with(|c| *c.borrow_mut() = Some(OpMetrics::default()));
}

/// Stop measuring and return what was measured.
pub fn end() -> Option<OpMetrics> {
    CURRENT.with(|c| c.borrow_mut().take())
}

fn with(f: impl FnOnce(&mut OpMetrics)) {
    CURRENT.with(|c| {
        if let Some(m) = c.borrow_mut().as_mut() {
            f(m);
        }
    });
}

/// A plan examined keys and documents.
pub(crate) fn examined(keys: u64, docs: u64) {
    with(|m| {
        m.keys_examined += keys;
        m.docs_examined += docs;
    });
}

/// A write inserted and deleted index keys.
pub(crate) fn keys_written(inserted: u64, deleted: u64) {
    with(|m| {
        m.keys_inserted += inserted;
        m.keys_deleted += deleted;
    });
}

/// The plan of the operation's first read.
pub(crate) fn plan_summary(summary: impl FnOnce() -> String) {
    with(|m| {
        if m.plan_summary.is_none() {
            m.plan_summary = Some(summary());
        }
    });
}

/// The modelled cache read a page of `bytes` bytes in for the operation.
pub(crate) fn read_into_cache(bytes: u64) {
    with(|m| {
        m.bytes_read += bytes;
        m.pages_read += 1;
    });
}
