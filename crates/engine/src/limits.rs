//! The limits the engine enforces on what a client sends and on what a
//! command may build, each with mongod 7.0's value and error.
//!
//! Every walk of the engine that recurses over a document, a path or an
//! expression relies on these bounds: requests deeper than
//! [`MAX_BSON_DEPTH`] are refused at the door (wire layer), paths longer
//! than it are refused where they are parsed, values built at run time are
//! checked where they grow ($reduce, between stages), and nothing deeper than
//! [`MAX_USER_STORAGE_DEPTH`] is ever stored. The checks here are iterative,
//! so they cannot themselves overflow the stack. COMPAT.md lists every limit.

use bson::{Bson, Document, RawDocument};

use super::error::{EngineError, ErrorCode, Result};

/// mongod's `BSONDepth::kDefaultMaxAllowableDepth` (`maxBSONDepth`): the
/// deepest BSON a server accepts or produces.
pub const MAX_BSON_DEPTH: usize = 200;

/// mongod's `BSONDepth::getMaxDepthForUserStorage()`: 200 minus 20 levels
/// kept for system use. Deeper documents are never stored.
pub const MAX_USER_STORAGE_DEPTH: usize = 180;

/// mongod's error for a match-expression path longer than
/// [`MAX_USER_STORAGE_DEPTH`] parts.
pub const MATCH_PATH_TOO_LONG: ErrorCode = ErrorCode(5729100);

/// The nesting depth of a document (`{}` is 1, `{a: {}}` is 2), or `None`
/// once it exceeds `limit`. Iterative. Walked in place by
/// [`codec::walk`](super::codec::walk), which frames and checks each
/// element as `bson`'s iterator does: a level whose next element is
/// malformed is left there, as it was when this walked `bson`'s iterator
/// (malformed bytes are the parser's to report).
pub fn raw_depth_within(doc: &RawDocument, limit: usize) -> Option<usize> {
    use super::codec::walk::Doc;
    let mut stack = vec![Doc::from_raw(doc).iter()];
    let mut max = 1;
    while let Some(top) = stack.last_mut() {
        match top.next().map(|r| r.and_then(|(_, value)| value.nested())) {
            None | Some(Err(_)) => {
                stack.pop();
            }
            Some(Ok(None)) => {}
            Some(Ok(Some(child))) => {
                if stack.len() >= limit {
                    return None;
                }
                stack.push(child.iter());
                max = max.max(stack.len());
            }
        }
    }
    Some(max)
}

/// Whether `value` nests more than `limit` documents or arrays (a scalar
/// has depth 0, `{}` and `[]` depth 1). Iterative.
pub fn bson_exceeds(value: &Bson, limit: usize) -> bool {
    let mut stack: Vec<(&Bson, usize)> = vec![(value, 0)];
    let nested = |c: &&Bson| matches!(c, Bson::Document(_) | Bson::Array(_));
    while let Some((v, depth)) = stack.pop() {
        if !nested(&v) {
            continue;
        }
        if depth + 1 > limit {
            return true;
        }
        match v {
            Bson::Document(d) => stack.extend(d.values().filter(nested).map(|c| (c, depth + 1))),
            Bson::Array(a) => stack.extend(a.iter().filter(nested).map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Whether a document nests deeper than `limit` (the document itself is
/// level 1).
pub fn doc_exceeds(doc: &Document, limit: usize) -> bool {
    limit == 0 || doc.values().any(|v| bson_exceeds(v, limit - 1))
}

/// A request document deeper than mongod accepts off the network.
pub fn check_request_depth(doc: &RawDocument) -> Result<()> {
    match raw_depth_within(doc, MAX_BSON_DEPTH) {
        Some(_) => Ok(()),
        None => Err(EngineError::new(
            ErrorCode::OVERFLOW,
            format!("BSONObj exceeds maximum nested object depth: {MAX_BSON_DEPTH}"),
        )),
    }
}

/// An inserted document deeper than mongod stores (its `fixDocumentForInsert`).
pub fn check_insert_depth(doc: &RawDocument) -> Result<()> {
    match raw_depth_within(doc, MAX_USER_STORAGE_DEPTH) {
        Some(_) => Ok(()),
        None => Err(EngineError::new(
            ErrorCode::OVERFLOW,
            format!(
                "cannot insert document because it exceeds {MAX_USER_STORAGE_DEPTH} levels of nesting"
            ),
        )),
    }
}

/// An updated (or replacing, or upserted) document deeper than mongod
/// stores (its update storage validation).
pub fn check_update_depth(doc: &Document) -> Result<()> {
    if doc_exceeds(doc, MAX_USER_STORAGE_DEPTH) {
        return Err(update_too_deep());
    }
    Ok(())
}

/// [`check_update_depth`] of an encoded document.
pub fn check_update_depth_raw(doc: &RawDocument) -> Result<()> {
    match raw_depth_within(doc, MAX_USER_STORAGE_DEPTH) {
        Some(_) => Ok(()),
        None => Err(update_too_deep()),
    }
}

/// mongod's storage-validation error for an update result that nests too
/// deep.
pub fn update_too_deep() -> EngineError {
    EngineError::new(
        ErrorCode::OVERFLOW,
        format!("Document exceeds maximum nesting depth of {MAX_USER_STORAGE_DEPTH}"),
    )
}

/// mongod's error when a document built by an expression or a stage is too
/// deep to become BSON.
pub fn output_too_deep() -> EngineError {
    EngineError::new(
        ErrorCode::OVERFLOW,
        format!(
            "cannot convert document to BSON because it exceeds the limit of {MAX_BSON_DEPTH} levels of nesting"
        ),
    )
}

/// A document produced by a stage or an expression must fit in BSON's
/// depth.
pub fn check_output_depth(doc: &Document) -> Result<()> {
    if doc_exceeds(doc, MAX_BSON_DEPTH) {
        return Err(output_too_deep());
    }
    Ok(())
}

/// A value produced at run time (by `$reduce`, say) nests deeper than any
/// document may.
pub fn check_value_depth(value: &Bson) -> Result<()> {
    if bson_exceeds(value, MAX_BSON_DEPTH) {
        return Err(output_too_deep());
    }
    Ok(())
}

/// Number of parts of a dotted path.
fn parts(path: &str) -> usize {
    path.bytes().filter(|&b| b == b'.').count() + 1
}

/// An aggregation field path (`$a.b`, a `$project`/`$addFields` key, a sort
/// key) longer than mongod's `FieldPath` allows.
pub fn check_field_path(path: &str) -> Result<()> {
    if parts(path) > MAX_BSON_DEPTH {
        return Err(EngineError::new(
            ErrorCode::OVERFLOW,
            "FieldPath is too long",
        ));
    }
    Ok(())
}

/// A query-filter path longer than mongod's match-expression parser allows.
pub fn check_match_path(path: &str) -> Result<()> {
    if parts(path) > MAX_USER_STORAGE_DEPTH {
        return Err(EngineError::new(
            MATCH_PATH_TOO_LONG,
            "FieldPath is too long",
        ));
    }
    Ok(())
}

/// An update path that, if created, would nest deeper than mongod stores.
pub fn check_update_path(path: &str) -> Result<()> {
    if parts(path) > MAX_USER_STORAGE_DEPTH {
        return Err(update_too_deep());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bson::{RawDocumentBuf, doc};

    fn nested(depth: usize) -> Document {
        let mut d = doc! {"x": 1};
        for _ in 1..depth {
            d = doc! {"a": d};
        }
        d
    }

    #[test]
    fn depths_count_like_mongod() {
        let raw = RawDocumentBuf::from_document(&nested(180)).unwrap();
        assert_eq!(raw_depth_within(&raw, 180), Some(180));
        assert!(check_insert_depth(&raw).is_ok());
        let raw = RawDocumentBuf::from_document(&nested(181)).unwrap();
        assert_eq!(raw_depth_within(&raw, 180), None);
        assert_eq!(
            check_insert_depth(&raw).unwrap_err().code,
            ErrorCode::OVERFLOW
        );
        assert!(!doc_exceeds(&nested(180), 180));
        assert!(doc_exceeds(&nested(181), 180));
        assert!(check_update_depth(&nested(181)).is_err());
        // The encoded update check agrees with the decoded one, message too.
        let raw = |d| RawDocumentBuf::from_document(&d).unwrap();
        assert!(check_update_depth_raw(&raw(nested(180))).is_ok());
        assert_eq!(
            check_update_depth_raw(&raw(nested(181))).unwrap_err(),
            check_update_depth(&nested(181)).unwrap_err()
        );
        assert!(!bson_exceeds(&Bson::Array(vec![]), 1));
        assert!(bson_exceeds(&Bson::Array(vec![Bson::Array(vec![])]), 1));
    }

    #[test]
    fn checkpoints_obey_the_deadline_and_the_client() {
        let past = Operation {
            deadline: Some(std::time::Instant::now()),
            ..Operation::default()
        };
        let code = run_as(past, || {
            (0..CHECK_EVERY)
                .find_map(|_| checkpoint().err())
                .map(|e| e.code)
        });
        assert_eq!(code, Some(ErrorCode::MAX_TIME_MS_EXPIRED));
        let gone = Operation {
            client_gone: Some(Probe(std::sync::Arc::new(|| true))),
            ..Operation::default()
        };
        let err = run_as(gone, || check_now().unwrap_err());
        assert_eq!(err.code, ErrorCode::CLIENT_DISCONNECT);
        // Outside an operation nothing is bounded, and the previous
        // operation is restored after a nested one.
        assert!(check_now().is_ok());
        let outer = Operation {
            allow_disk_use: Some(true),
            ..Operation::default()
        };
        run_as(outer, || {
            let refused = Operation {
                allow_disk_use: Some(false),
                ..Operation::default()
            };
            run_as(refused, || assert!(!allow_disk_use()));
            assert!(allow_disk_use());
        });
        // Saying nothing follows `allowDiskUseByDefault`, true as on mongod.
        run_as(Operation::default(), || assert!(allow_disk_use()));
    }

    /// Each parameter sits at its own index, and two servers' values are
    /// their own: setting one leaves the other, and code outside any
    /// operation, at the default.
    #[test]
    fn every_server_has_its_own_parameters() {
        for (i, p) in params().into_iter().enumerate() {
            assert_eq!(p.index, i, "{}", p.name);
        }
        let (a, b) = (
            std::sync::Arc::new(Params::default()),
            std::sync::Arc::new(Params::default()),
        );
        assert_eq!(a.set(&SORT_MEMORY, 5), SORT_MEMORY.default_value());
        let on = |params: &std::sync::Arc<Params>| Operation {
            params: Some(params.clone()),
            ..Operation::default()
        };
        assert_eq!(run_as(on(&a), || SORT_MEMORY.get()), 5);
        assert_eq!(run_as(on(&b), || SORT_MEMORY.get()), HUNDRED_MB);
        assert_eq!(SORT_MEMORY.get(), HUNDRED_MB);
        // A nested operation keeps its server's parameters when it says so.
        run_as(on(&a), || {
            let nested = Operation {
                params: params_in_force(),
                ..Operation::default()
            };
            assert_eq!(run_as(nested, || SORT_MEMORY.get()), 5);
        });
    }

    /// A value built by an expression is bounded at 16 MiB (10334), a
    /// string at 16 MiB (16493), and an array growing value by value stops
    /// as it passes the bound.
    #[test]
    fn built_values_are_bounded() {
        let small = Bson::Array(vec![Bson::Int32(1); 1000]);
        assert!(check_built(&small).is_ok());
        let big = Bson::Array(vec![Bson::String("x".repeat(1000)); 17_000]);
        let err = check_built(&big).unwrap_err();
        assert_eq!(err.code, ErrorCode::BSON_OBJECT_TOO_LARGE);
        assert!(
            err.message.starts_with("BSONObj size: 17153005 "),
            "{}",
            err.message
        );
        let long = Bson::String("y".repeat(MAX_STRING_BYTES));
        assert_eq!(check_built(&long).unwrap_err().code, ErrorCode(16493));
        let mut growing = Growing::default();
        let added = (0..20_000)
            .take_while(|_| growing.add(1005).is_ok())
            .count();
        assert_eq!(added, 16_643);
        assert_eq!(approx_size_within(&small, 100), None);
        assert_eq!(approx_size_within(&small, 1 << 20), Some((8005, 1001)));
    }

    /// Work counted in large units is checked at once; outside an
    /// operation nothing is bounded.
    #[test]
    fn large_steps_are_checkpoints_at_once() {
        let past = Operation {
            deadline: Some(std::time::Instant::now()),
            ..Operation::default()
        };
        let code = run_as(past.clone(), || {
            checkpoint_work(CHECK_EVERY.into()).err().map(|e| e.code)
        });
        assert_eq!(code, Some(ErrorCode::MAX_TIME_MS_EXPIRED));
        // Small units add up to a check.
        let code = run_as(past, || {
            (0..CHECK_EVERY)
                .find_map(|_| checkpoint_work(1).err())
                .map(|e| e.code)
        });
        assert_eq!(code, Some(ErrorCode::MAX_TIME_MS_EXPIRED));
        assert!(checkpoint_work(u64::MAX).is_ok());
    }

    /// What stages hold adds up across them within one operation, is
    /// given back when they let go, and is bounded by the server's
    /// `schemalabOperationMemoryBytes`.
    #[test]
    fn stages_hold_memory_within_the_operation_budget() {
        let params = std::sync::Arc::new(Params::default());
        params.set(&OPERATION_MEMORY, 1000);
        let op = Operation {
            params: Some(params),
            ..Operation::default()
        };
        run_as(op, || {
            let mut a = Held::new();
            a.add(600).unwrap();
            {
                let mut b = Held::new();
                let err = b.add(500).unwrap_err();
                assert_eq!(err.code, ErrorCode::EXCEEDED_MEMORY_LIMIT);
                assert!(
                    err.message.contains("Memory limit: 1000 bytes"),
                    "{}",
                    err.message
                );
            }
            // `b` gave its bytes back; `a` may shrink and grow again.
            a.set(100).unwrap();
            let mut c = Held::new();
            c.add(850).unwrap();
            assert!(a.add(100).is_err());
        });
        // Outside an operation nothing is counted.
        let mut free = Held::new();
        assert!(free.add(u64::MAX / 2).is_ok());
    }

    #[test]
    fn path_lengths() {
        let p = vec!["a"; 200].join(".");
        assert!(check_field_path(&p).is_ok());
        assert!(check_field_path(&format!("{p}.a")).is_err());
        let p = vec!["a"; 181].join(".");
        assert_eq!(check_match_path(&p).unwrap_err().code, MATCH_PATH_TOO_LONG);
    }
}

// ---------------------------------------------------------------------------
// The running operation: deadline (`maxTimeMS`), cancellation (the client
// went away), `allowDiskUse`.
// ---------------------------------------------------------------------------

/// What bounds one command while it runs. The wire layer installs it for
/// the duration of a command ([`run_as`]); the engine's loops call
/// [`checkpoint`], which costs a counter increment except every
/// [`CHECK_EVERY`]th call, when it reads the clock and the cancel flag.
/// Engine calls made outside a command (tests, the TUI's own loaders) run
/// unbounded.
#[derive(Debug, Clone, Default)]
pub struct Operation {
    /// `maxTimeMS` as an instant.
    pub deadline: Option<std::time::Instant>,
    /// Asks whether the client has gone (the wire layer peeks at its
    /// socket), so that its operation stops.
    pub client_gone: Option<Probe>,
    /// The command's `allowDiskUse`, if given.
    pub allow_disk_use: Option<bool>,
    /// Set by `killOp`: the operation stops at its next checkpoint.
    pub killed: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The server parameters in force (the engine's own, see
    /// [`Params`]); without them, every [`Param`] reads its default.
    pub params: Option<std::sync::Arc<Params>>,
}

/// A cheap question the running operation may ask (is the client gone?).
#[derive(Clone)]
pub struct Probe(pub std::sync::Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Probe")
    }
}

/// How many checkpoints pass between two looks at the clock.
pub const CHECK_EVERY: u32 = 128;

struct Current {
    op: Operation,
    ticks: u32,
    /// Bytes the operation's stages hold ([`Held`]), against
    /// [`OPERATION_MEMORY`].
    held: u64,
}

thread_local! {
    static CURRENT: std::cell::RefCell<Option<Current>> = const { std::cell::RefCell::new(None) };
}

/// Restores the previous operation when dropped, panics included.
struct Restore(Option<Current>);

impl Drop for Restore {
    fn drop(&mut self) {
        let prev = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

/// Run `f` as `op`: every [`checkpoint`] inside it on this thread obeys
/// `op`'s deadline and cancellation.
pub fn run_as<T>(op: Operation, f: impl FnOnce() -> T) -> T {
    crate::cache::release_held();
    let prev = CURRENT.with(|c| {
        c.borrow_mut().replace(Current {
            op,
            ticks: 0,
            held: 0,
        })
    });
    let _restore = Restore(prev);
    f()
}

/// mongod's error when `maxTimeMS` runs out.
pub fn max_time_expired() -> EngineError {
    EngineError::new(
        ErrorCode::MAX_TIME_MS_EXPIRED,
        "operation exceeded time limit",
    )
}

/// mongod's error for an operation whose client went away.
pub fn interrupted() -> EngineError {
    EngineError::new(
        ErrorCode::CLIENT_DISCONNECT,
        "operation was interrupted because a client disconnected",
    )
}

/// mongod's error for an operation ended by `killOp`.
pub fn killed() -> EngineError {
    EngineError::new(ErrorCode::INTERRUPTED, "operation was interrupted")
}

/// The running operation's `killOp` flag, for a nested operation (a
/// `getMore`'s own time budget) to keep.
pub fn kill_flag() -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|cur| cur.op.killed.clone()))
}

/// Check the running operation's deadline and cancellation, cheaply: call
/// it once per document or per step of any loop a client can make long.
pub fn checkpoint() -> Result<()> {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        let Some(cur) = c.as_mut() else {
            return Ok(());
        };
        cur.ticks = cur.ticks.wrapping_add(1);
        if cur.ticks % CHECK_EVERY != 0 {
            return Ok(());
        }
        check(&cur.op)
    })
}

/// [`checkpoint`] for a step that did `units` checkpoints' worth of work
/// at once (a value of `units` elements built or walked): the operation is
/// checked whenever the counter passes a multiple of [`CHECK_EVERY`], so
/// that the time from a deadline or a `killOp` to the error stays bounded
/// however large each step is.
pub fn checkpoint_work(units: u64) -> Result<()> {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        let Some(cur) = c.as_mut() else {
            return Ok(());
        };
        let before = cur.ticks;
        let units = u32::try_from(units).unwrap_or(u32::MAX);
        cur.ticks = cur.ticks.wrapping_add(units.max(1));
        if units < CHECK_EVERY && before / CHECK_EVERY == cur.ticks / CHECK_EVERY {
            return Ok(());
        }
        check(&cur.op)
    })
}

/// Check the running operation now, whatever the counter says (before
/// and after a step that cannot check inside itself, such as a regex).
pub fn check_now() -> Result<()> {
    CURRENT.with(|c| match c.borrow().as_ref() {
        Some(cur) => check(&cur.op),
        None => Ok(()),
    })
}

fn check(op: &Operation) -> Result<()> {
    if op.client_gone.as_ref().is_some_and(|p| (p.0)()) {
        return Err(interrupted());
    }
    if op
        .killed
        .as_ref()
        .is_some_and(|k| k.load(std::sync::atomic::Ordering::Relaxed))
    {
        return Err(killed());
    }
    if op.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
        return Err(max_time_expired());
    }
    Ok(())
}

/// The parameters of the running operation's server, for a nested
/// operation (a `getMore`'s own time budget) to keep.
pub fn params_in_force() -> Option<std::sync::Arc<Params>> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|cur| cur.op.params.clone()))
}

/// Run `f` on the running operation's server parameters (its modelled
/// cache among them), if an operation is running.
pub(crate) fn with_params<R>(f: impl FnOnce(&Params) -> R) -> Option<R> {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .and_then(|cur| cur.op.params.as_deref())
            .map(f)
    })
}

/// The running operation's deadline, if any.
pub fn deadline() -> Option<std::time::Instant> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|cur| cur.op.deadline))
}

/// Whether the running operation may exceed the blocking-stage memory
/// limits: its `allowDiskUse`, else `allowDiskUseByDefault` (true, as on
/// mongod 6.0 and later). The engine cannot spill to disk, so where mongod
/// would write temporary files it keeps the data in memory; with
/// `allowDiskUse: false` (or the parameter false) it stops at the limit
/// with mongod's error.
pub fn allow_disk_use() -> bool {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .and_then(|cur| cur.op.allow_disk_use)
            .unwrap_or(ALLOW_DISK_USE_BY_DEFAULT.get() != 0)
    })
}

// ---------------------------------------------------------------------------
// Server parameters: each engine has its own values (as each mongod
// process has), which `setParameter` changes and every operation the
// engine runs reads through its [`Operation::params`].
// ---------------------------------------------------------------------------

/// A limit or switch that `setParameter` can change: its name, default and
/// slot in a server's [`Params`].
#[derive(Debug)]
pub struct Param {
    /// mongod's name for it.
    pub name: &'static str,
    /// Its place in [`params`] and in [`Params`].
    index: usize,
    default: u64,
    /// A boolean parameter (`true`/`false` on the wire, 1/0 here).
    pub boolean: bool,
}

impl Param {
    const fn new(index: usize, name: &'static str, default: u64) -> Self {
        Self {
            name,
            index,
            default,
            boolean: false,
        }
    }

    const fn flag(index: usize, name: &'static str, default: bool) -> Self {
        Self {
            name,
            index,
            default: default as u64,
            boolean: true,
        }
    }

    /// The value in force for the running operation: its server's, or the
    /// default outside an operation of a server.
    pub fn get(&self) -> u64 {
        CURRENT.with(
            |c| match c.borrow().as_ref().and_then(|cur| cur.op.params.as_ref()) {
                Some(params) => params.get(self),
                None => self.default,
            },
        )
    }

    /// mongod's default.
    pub fn default_value(&self) -> u64 {
        self.default
    }
}

/// One server's values of every [`Param`] (an engine's: its clones share
/// them), starting at mongod's defaults.
#[derive(Debug)]
pub struct Params {
    values: [std::sync::atomic::AtomicU64; PARAM_COUNT],
    /// The server's modelled WiredTiger cache, sized by
    /// `wiredTigerEngineRuntimeConfig` (`cache_size`).
    cache: crate::cache::Cache,
}

impl Default for Params {
    fn default() -> Self {
        Params::with_cache_size(crate::cache::config::machine_default())
    }
}

impl Params {
    /// mongod's defaults, with a cache of `cache_size` bytes.
    pub fn with_cache_size(cache_size: u64) -> Self {
        Params {
            values: params().map(|p| std::sync::atomic::AtomicU64::new(p.default)),
            cache: crate::cache::Cache::new(cache_size),
        }
    }

    /// The server's modelled cache.
    pub fn cache(&self) -> &crate::cache::Cache {
        &self.cache
    }

    /// `param`'s value on this server.
    pub fn get(&self, param: &Param) -> u64 {
        self.values[param.index].load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Set `param` on this server, returning its old value.
    pub fn set(&self, param: &Param, v: u64) -> u64 {
        self.values[param.index].swap(v, std::sync::atomic::Ordering::Relaxed)
    }
}

const HUNDRED_MB: u64 = 100 * 1024 * 1024;

/// `$sort` in a pipeline (and a find's SORT stage).
pub static SORT_MEMORY: Param = Param::new(
    4,
    "internalQueryMaxBlockingSortMemoryUsageBytes",
    HUNDRED_MB,
);
/// `$group`'s groups and accumulators.
pub static GROUP_MEMORY: Param =
    Param::new(5, "internalDocumentSourceGroupMaxMemoryBytes", HUNDRED_MB);
/// One `$push` accumulator.
pub static PUSH_BYTES: Param = Param::new(6, "internalQueryMaxPushBytes", HUNDRED_MB);
/// One `$addToSet` accumulator.
pub static ADD_TO_SET_BYTES: Param = Param::new(7, "internalQueryMaxAddToSetBytes", HUNDRED_MB);
/// `$graphLookup`'s visited set and queue (`maxMemoryUsageBytes`).
pub static GRAPH_LOOKUP_MEMORY: Param = Param::new(
    8,
    "internalDocumentSourceGraphLookupMaxMemoryBytes",
    HUNDRED_MB,
);
/// The values one `$range` may produce (16 bytes each).
pub static RANGE_BYTES: Param = Param::new(3, "internalQueryMaxRangeBytes", HUNDRED_MB);
/// Idle cursors are killed after this long (milliseconds).
pub static CURSOR_TIMEOUT_MILLIS: Param = Param::new(9, "cursorTimeoutMillis", 10 * 60 * 1000);
/// Whether an operation that does not say `allowDiskUse` may go past the
/// blocking-stage limits (mongod 6.0 and later: true).
pub static ALLOW_DISK_USE_BY_DEFAULT: Param = Param::flag(2, "allowDiskUseByDefault", true);

/// How large an explain may grow before the rest of its plan trees are
/// left out, each stage replaced by a warning (mongod: 10 MiB).
pub static EXPLAIN_SIZE_THRESHOLD: Param = Param::new(
    1,
    "internalQueryExplainSizeThresholdBytes",
    10 * 1024 * 1024,
);

/// The record bytes the engine keeps in memory before it spills the
/// chunks of its least recently used collections to a temporary file
/// (schemalab's own parameter; mongod's nearest is the WiredTiger cache
/// size, `wiredTigerCacheSizeGB`).
pub static RECORD_CACHE_BYTES: Param = Param::new(0, "schemalabRecordCacheBytes", 512 << 20);

/// The documents one `$lookup` may gather into one input's `as` array
/// (mongod: 100 MB; past it, 4568). The array may pass 16 MiB on its way
/// (a later stage can shrink the document), as on mongod.
pub static LOOKUP_INTERMEDIATE_BYTES: Param = Param::new(
    10,
    "internalLookupStageIntermediateDocumentMaxSizeBytes",
    HUNDRED_MB,
);

/// The bytes one operation's stages may hold at once (schemalab's own
/// parameter; mongod has no per-operation bound and relies on each stage's
/// limit and on spilling, which this engine does for `$sort` only): the
/// groups of `$group`, the buffer of `$sort`, the arrays `$lookup` and
/// `$graphLookup` gather, the outputs of `$facet` and `$unwind`, counted as
/// BSON sizes ([`approx_size`]). Past it the operation fails with 146
/// `ExceededMemoryLimit`, so that no single aggregate can take the server
/// out of memory.
pub static OPERATION_MEMORY: Param = Param::new(11, "schemalabOperationMemoryBytes", 1 << 30);

/// How many parameters there are.
const PARAM_COUNT: usize = 12;

/// Every parameter `setParameter`/`getParameter` know, each at its index.
pub fn params() -> [&'static Param; PARAM_COUNT] {
    [
        &RECORD_CACHE_BYTES,
        &EXPLAIN_SIZE_THRESHOLD,
        &ALLOW_DISK_USE_BY_DEFAULT,
        &RANGE_BYTES,
        &SORT_MEMORY,
        &GROUP_MEMORY,
        &PUSH_BYTES,
        &ADD_TO_SET_BYTES,
        &GRAPH_LOOKUP_MEMORY,
        &CURSOR_TIMEOUT_MILLIS,
        &LOOKUP_INTERMEDIATE_BYTES,
        &OPERATION_MEMORY,
    ]
}

/// mongod's 16 MiB string limit (`BSONObjMaxUserSize`): `$concat` and the
/// other string builders refuse to build longer strings.
pub const MAX_STRING_BYTES: usize = 16 * 1024 * 1024;

/// A result document larger than mongod's internal BSON limit (16 MiB plus
/// 16 KiB), mongod's "BSONObj size … is invalid".
pub const MAX_INTERNAL_OBJECT_SIZE: usize = 16 * 1024 * 1024 + 16 * 1024;

/// mongod's error for a result document over [`MAX_INTERNAL_OBJECT_SIZE`].
pub fn object_too_large(size: usize) -> EngineError {
    EngineError::new(
        ErrorCode::BSON_OBJECT_TOO_LARGE,
        format!(
            "BSONObj size: {size} (0x{size:X}) is invalid. Size must be between 0 and {MAX_INTERNAL_OBJECT_SIZE}(16MB)"
        ),
    )
}

/// An approximation of the memory a value takes (mongod's
/// `Value::getApproximateSize`): its BSON size, counted iteratively.
pub fn approx_size(value: &Bson) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total += match v {
            Bson::Document(d) => {
                for (k, c) in d {
                    total += k.len() as u64 + 2;
                    stack.push(c);
                }
                5
            }
            Bson::Array(a) => {
                for c in a {
                    // Array keys are decimal indexes.
                    total += 4;
                    stack.push(c);
                }
                5
            }
            Bson::String(s) | Bson::Symbol(s) | Bson::JavaScriptCode(s) => s.len() as u64 + 5,
            Bson::Binary(b) => b.bytes.len() as u64 + 5,
            Bson::RegularExpression(r) => (r.pattern.len() + r.options.len()) as u64 + 2,
            Bson::JavaScriptCodeWithScope(c) => {
                stack.extend(c.scope.values());
                c.code.len() as u64 + 14
            }
            Bson::Decimal128(_) => 16,
            Bson::ObjectId(_) => 12,
            Bson::Boolean(_) => 1,
            Bson::Null | Bson::Undefined | Bson::MinKey | Bson::MaxKey => 0,
            Bson::Int32(_) => 4,
            _ => 8,
        };
    }
    total
}

/// [`approx_size`] of a document.
pub fn approx_doc_size(doc: &Document) -> u64 {
    doc.iter()
        .map(|(k, v)| k.len() as u64 + 2 + approx_size(v))
        .sum::<u64>()
        + 5
}

/// The memory an accumulator over values may use before `$push` and
/// `$addToSet` fail with mongod's 146 `ExceededMemoryLimit`.
pub fn accumulator_too_big(op: &str, limit: u64) -> EngineError {
    EngineError::new(
        ErrorCode::EXCEEDED_MEMORY_LIMIT,
        format!("{op} used too much memory and cannot spill to disk. Memory limit: {limit} bytes"),
    )
}

/// A blocking stage went over its memory limit without `allowDiskUse`:
/// mongod's 292.
pub fn blocking_stage_too_big(message: &str) -> EngineError {
    EngineError::new(ErrorCode::QUERY_EXCEEDED_MEMORY_LIMIT, message.to_string())
}

/// The most a value built while evaluating an expression may take
/// (16 MiB and mongod's 16 KiB allowance for internal objects,
/// [`MAX_INTERNAL_OBJECT_SIZE`]), measured as [`approx_size`] counts it. On
/// mongod a value this large fails when the document holding it becomes
/// BSON (10334); here it fails where it is built, so that a value doubled
/// in a `$reduce` cannot grow past it first (COMPAT.md).
pub const MAX_VALUE_BYTES: u64 = MAX_INTERNAL_OBJECT_SIZE as u64;

/// mongod's error for a value over [`MAX_VALUE_BYTES`] (arrays and
/// documents; strings fail earlier, with 16493).
pub fn value_too_large(size: u64) -> EngineError {
    EngineError::new(
        ErrorCode::BSON_OBJECT_TOO_LARGE,
        format!(
            "BSONObj size: {size} (0x{size:X}) is invalid. Size must be between 0 and {MAX_INTERNAL_OBJECT_SIZE}(16MB)"
        ),
    )
}

/// mongod's error for a string of 16 MiB or more (`RCString::create`).
pub fn string_too_long() -> EngineError {
    EngineError::new(ErrorCode(16493), "Tried to create string longer than 16MB")
}

/// [`approx_size`] of `value` and how many values it walked, or `None`
/// as soon as the size passes `limit`. Iterative.
pub fn approx_size_within(value: &Bson, limit: u64) -> Option<(u64, u64)> {
    let mut total = 0u64;
    let mut walked = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        walked += 1;
        total += match v {
            Bson::Document(d) => {
                for (k, c) in d {
                    total += k.len() as u64 + 2;
                    stack.push(c);
                }
                5
            }
            Bson::Array(a) => {
                total += 4 * a.len() as u64;
                stack.extend(a.iter());
                5
            }
            other => approx_size(other),
        };
        if total > limit {
            return None;
        }
    }
    Some((total, walked))
}

/// A value an expression built must fit [`MAX_VALUE_BYTES`] (and a string
/// mongod's 16 MiB); walking it counts as work for the running operation's
/// [`checkpoint_work`]. Constants and values read from the document are
/// not built and need no check.
pub fn check_built(value: &Bson) -> Result<()> {
    match value {
        Bson::String(s) => {
            if s.len() >= MAX_STRING_BYTES {
                return Err(string_too_long());
            }
            // Building a string is work too: a unit a kilobyte.
            if s.len() >= 1024 {
                checkpoint_work(s.len() as u64 / 1024)?;
            }
            Ok(())
        }
        Bson::Array(_) | Bson::Document(_) => match approx_size_within(value, MAX_VALUE_BYTES) {
            Some((_, walked)) => {
                if walked >= u64::from(CHECK_EVERY) {
                    checkpoint_work(walked / u64::from(CHECK_EVERY))?;
                }
                Ok(())
            }
            None => Err(value_too_large(approx_size(value))),
        },
        _ => Ok(()),
    }
}

/// The size of an array being built value by value (`$map`, `$filter`,
/// `$split`, `$range`): each addition is counted before the next is made,
/// so the array stops at [`MAX_VALUE_BYTES`] instead of being built first.
#[derive(Debug, Default)]
pub struct Growing {
    bytes: u64,
}

impl Growing {
    /// Count one more element of `bytes` ([`approx_size`]; its index key is
    /// counted here).
    pub fn add(&mut self, bytes: u64) -> Result<()> {
        self.bytes += bytes + 4;
        if self.bytes + 5 > MAX_VALUE_BYTES {
            return Err(value_too_large(self.bytes + 5));
        }
        checkpoint()
    }
}

/// Bytes a stage holds on behalf of the running operation (its groups, its
/// buffer, the arrays it gathers), counted against [`OPERATION_MEMORY`]
/// and given back when dropped.
#[derive(Debug, Default)]
pub struct Held {
    bytes: u64,
}

impl Held {
    /// Nothing held yet.
    pub fn new() -> Self {
        Held { bytes: 0 }
    }

    /// Hold `bytes` more.
    pub fn add(&mut self, bytes: u64) -> Result<()> {
        self.set(self.bytes.saturating_add(bytes))
    }

    /// Hold `bytes` in all (more or less than before).
    pub fn set(&mut self, bytes: u64) -> Result<()> {
        let old = std::mem::replace(&mut self.bytes, bytes);
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            let Some(cur) = c.as_mut() else {
                return Ok(());
            };
            cur.held = cur.held.saturating_sub(old).saturating_add(bytes);
            if bytes <= old {
                return Ok(());
            }
            let limit = cur
                .op
                .params
                .as_ref()
                .map_or(OPERATION_MEMORY.default, |p| p.get(&OPERATION_MEMORY));
            if cur.held > limit {
                return Err(operation_too_big(cur.held, limit));
            }
            Ok(())
        })
    }

    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let bytes = self.bytes;
        // A thread-local being torn down holds nothing to give back.
        let _ = CURRENT.try_with(|c| {
            if let Some(cur) = c.borrow_mut().as_mut() {
                cur.held = cur.held.saturating_sub(bytes);
            }
        });
    }
}

/// The running operation went over [`OPERATION_MEMORY`]: mongod's 146
/// `ExceededMemoryLimit`.
pub fn operation_too_big(held: u64, limit: u64) -> EngineError {
    EngineError::new(
        ErrorCode::EXCEEDED_MEMORY_LIMIT,
        format!(
            "Operation used too much memory ({held} bytes held by its stages) and cannot spill to disk. Memory limit: {limit} bytes (schemalabOperationMemoryBytes)"
        ),
    )
}

thread_local! {
    static PENDING: std::cell::RefCell<Option<EngineError>> = const { std::cell::RefCell::new(None) };
}

/// Record an error found deep inside a walk that cannot return one (a
/// regex inside a filter predicate); the walk's entry point reports it
/// with [`take_pending`]. The first error wins.
pub fn raise(err: EngineError) {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if p.is_none() {
            *p = Some(err);
        }
    });
}

/// The error [`raise`]d since the last call, if any.
pub fn take_pending() -> Result<()> {
    match PENDING.with(|p| p.borrow_mut().take()) {
        Some(err) => Err(err),
        None => Ok(()),
    }
}
