//! Per-thread stripe numbers, the one facility behind every per-thread counter of the process:
//! the cache's statistics ([`crate::CacheStats`]) and the object manager's hook counters.
//!
//! Each live thread owns one number below [`OWNED`], taken when it first counts and given back
//! when it exits, so that the counters of its stripe are written by it alone: plain loads and
//! stores, not locked adds. Past [`OWNED`] live threads, the rest share [`SHARED`] and count
//! with atomic adds: slower, never wrong. A stripe number changes hands only through the free
//! list's lock, which orders the old owner's stores before the new owner's.

use std::cell::{Cell, RefCell};
use std::sync::{Mutex, MutexGuard, Once};

/// Stripe numbers a thread can own alone.
pub const OWNED: usize = 64;
/// The number shared by the threads beyond the first [`OWNED`]: a counter array sized
/// `OWNED + 1` has a place for it.
pub const SHARED: usize = OWNED;

/// Numbers no live thread owns. Taken only when a thread first counts and when it exits.
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static FREE_INIT: Once = Once::new();

/// This thread's claim on its number; gives it back when the thread exits.
struct Owned(usize);

impl Drop for Owned {
    fn drop(&mut self) {
        // Anything this thread counts from now on (in later destructors) goes to the shared
        // stripe.
        let _ = CACHED.try_with(|c| c.set(SHARED));
        if self.0 != SHARED {
            free_list().push(self.0);
        }
    }
}

thread_local! {
    /// The number, read on every count: a plain cell with no destructor, so reading it needs
    /// no initialisation check. `usize::MAX` until the thread first claims.
    static CACHED: Cell<usize> = const { Cell::new(usize::MAX) };
    /// Holds the number until the thread exits.
    static CLAIM: RefCell<Option<Owned>> = const { RefCell::new(None) };
}

fn free_list() -> MutexGuard<'static, Vec<usize>> {
    seaccess_types::lock(&FREE)
}

fn init_free_list() {
    FREE_INIT.call_once(|| *free_list() = (0..OWNED).rev().collect());
}

/// The calling thread's number as it stands, in one thread-local read: below [`SHARED`] when
/// the thread owns one, which is all a counter's hit path asks (one comparison); [`SHARED`],
/// or `usize::MAX` before the thread first claims, send the count the cold way ([`current`]).
#[inline(always)]
pub fn cached() -> usize {
    CACHED.with(Cell::get)
}

/// The calling thread's number, claimed now if it has none: its own, or [`SHARED`].
#[inline(always)]
pub fn current() -> usize {
    let v = cached();
    if v != usize::MAX {
        return v;
    }
    claim()
}

#[cold]
fn claim() -> usize {
    init_free_list();
    let n = free_list().pop().unwrap_or(SHARED);
    // A thread being torn down can no longer hold a claim: it counts in the shared stripe.
    let n = if CLAIM.try_with(|c| *c.borrow_mut() = Some(Owned(n))).is_ok() {
        n
    } else {
        if n != SHARED {
            free_list().push(n);
        }
        SHARED
    };
    CACHED.with(|c| c.set(n));
    n
}

/// The free list's lock, held across a fork once per process, after every cache's
/// `Avc::fork_guard` (it nests in no other lock: two caches' guards each taking it would wait on
/// themselves). The list is filled first, so that no thread is inside its one-time
/// initialisation at the fork. Numbers owned by threads the child does not have stay theirs:
/// the child's threads count in the others, or shared.
pub fn hold() -> MutexGuard<'static, Vec<usize>> {
    init_free_list();
    free_list()
}
