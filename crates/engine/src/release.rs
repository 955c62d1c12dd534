//! Giving freed memory back to the system at the moments it matters.
//!
//! A lesson's databases are dropped between runs, and whoever watches the
//! workbench's memory expects it to fall then. An allocator that returns
//! freed pages at once pays a page fault for every page it hands out again
//! a moment later (a fifth of a course run's CPU when measured); one that
//! waits keeps a dropped database resident in a process that has gone
//! idle, since it only looks at what to return when it is asked for
//! memory. So the allocator may wait, and [`give_back`] is called when a
//! large amount has just been freed (after a collection or database is
//! dropped, or an index built from its sorted keys) and by the server
//! after its spill pass, once it has been idle a whole second.
//!
//! The engine forbids unsafe code and does not know which allocator the
//! program uses, so the program registers what "give it back now" means
//! ([`set_hook`]); without a hook, [`give_back`] does nothing.

use std::sync::OnceLock;

static HOOK: OnceLock<fn()> = OnceLock::new();

/// Register the function that returns freed memory to the system (for
/// mimalloc, a forced collect). Only the first call takes effect; `false`
/// if a hook was already set.
pub fn set_hook(hook: fn()) -> bool {
    HOOK.set(hook).is_ok()
}

/// Return the memory freed so far to the system now, if the program said
/// how.
pub fn give_back() {
    if let Some(hook) = HOOK.get() {
        hook();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use bson::rawdoc;

    use crate::Engine;

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn count() {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }

    /// The only test in this binary that sets the hook: other tests may
    /// drop databases meanwhile, so only increases are asserted.
    #[test]
    fn dropping_a_database_or_collection_calls_the_hook() {
        assert!(super::set_hook(count));
        assert!(
            !super::set_hook(count),
            "a second hook must not replace the first"
        );
        let engine = Engine::new();
        for coll in ["a", "b"] {
            engine
                .insert("release_test", coll, vec![rawdoc! {"x": 1}], true)
                .unwrap();
        }
        let before = CALLS.load(Ordering::SeqCst);
        assert!(engine.drop_collection("release_test", "a").unwrap());
        let after_collection = CALLS.load(Ordering::SeqCst);
        assert!(after_collection > before);
        assert!(engine.drop_database("release_test"));
        assert!(CALLS.load(Ordering::SeqCst) > after_collection);
    }
}
