//! Statistics kept per thread and summed when read, so that a hit writes only to a cache line
//! its own thread owns.
//!
//! Each live thread owns one stripe of counters (taken when it first counts, given back when it
//! exits), so its counts are plain loads and stores, not locked adds. Past [`OWNED`] live
//! threads, the rest share one stripe and count with atomic adds: slower, never wrong.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// Stripes a thread can own alone.
const OWNED: usize = 64;
/// The stripe shared by threads beyond the first [`OWNED`].
const SHARED: usize = OWNED;

/// Stripe numbers no live thread owns. Taken only when a thread first counts and when it exits.
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static FREE_INIT: std::sync::Once = std::sync::Once::new();

/// This thread's claim on its stripe; gives it back when the thread exits.
struct Owned(usize);

impl Drop for Owned {
    fn drop(&mut self) {
        // Anything this thread counts from now on (in later destructors) goes to the shared stripe.
        let _ = CACHED.try_with(|c| c.set(SHARED));
        if self.0 != SHARED {
            free_list().push(self.0);
        }
    }
}

fn free_list() -> std::sync::MutexGuard<'static, Vec<usize>> {
    seaccess_types::lock(&FREE)
}

thread_local! {
    /// The stripe number, read on every count: a plain cell with no destructor, so reading it
    /// needs no initialisation check.
    static CACHED: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
    /// Holds the stripe until the thread exits.
    static CLAIM: std::cell::RefCell<Option<Owned>> = const { std::cell::RefCell::new(None) };
}

/// This thread's stripe number.
#[inline(always)]
fn stripe() -> usize {
    let v = CACHED.with(|c| c.get());
    if v != usize::MAX {
        return v;
    }
    claim()
}

#[cold]
fn claim() -> usize {
    FREE_INIT.call_once(|| {
        *free_list() = (0..OWNED).rev().collect();
    });
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

/// One stripe, alone on its cache lines (128 bytes: adjacent-line prefetch pairs 64-byte lines),
/// so that threads counting in different stripes never share a line.
#[repr(align(128))]
#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    allocations: AtomicU64,
    reclaims: AtomicU64,
    frees: AtomicU64,
}

pub(crate) struct Stats {
    stripes: Box<[Counters; OWNED + 1]>,
}

#[derive(Copy, Clone)]
pub(crate) enum Counter {
    Hit,
    Miss,
    Allocation,
    Reclaim,
    Free,
}

/// The kernel's avc/cache_stats, summed over threads.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    pub allocations: u64,
    pub reclaims: u64,
    pub frees: u64,
}

impl CacheStats {
    /// The text of selinuxfs's avc/cache_stats (one line of values, summed over threads).
    pub fn to_text(&self) -> String {
        format!(
            "lookups hits misses allocations reclaims frees\n{} {} {} {} {} {}\n",
            self.lookups, self.hits, self.misses, self.allocations, self.reclaims, self.frees
        )
    }
}

impl Stats {
    pub fn new() -> Stats {
        Stats { stripes: Box::new(std::array::from_fn(|_| Counters::default())) }
    }

    #[inline(always)]
    pub fn bump(&self, which: Counter, n: u64) {
        let i = stripe();
        let Some(c) = self.stripes.get(i) else { return };
        let f = match which {
            Counter::Hit => &c.hits,
            Counter::Miss => &c.misses,
            Counter::Allocation => &c.allocations,
            Counter::Reclaim => &c.reclaims,
            Counter::Free => &c.frees,
        };
        if i == SHARED {
            f.fetch_add(n, Relaxed);
        } else {
            // Only this thread writes its stripe (a stripe changes hands through FREE's lock,
            // which orders the old owner's stores before the new owner's).
            f.store(f.load(Relaxed).wrapping_add(n), Relaxed);
        }
    }

    pub fn sum(&self) -> CacheStats {
        let mut s = CacheStats::default();
        for c in self.stripes.iter() {
            s.hits += c.hits.load(Relaxed);
            s.misses += c.misses.load(Relaxed);
            s.allocations += c.allocations.load(Relaxed);
            s.reclaims += c.reclaims.load(Relaxed);
            s.frees += c.frees.load(Relaxed);
        }
        s.lookups = s.hits + s.misses;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each stripe on cache lines of its own.
    #[test]
    fn stripes_do_not_share_cache_lines() {
        assert_eq!(std::mem::align_of::<Counters>(), 128);
        assert_eq!(std::mem::size_of::<Counters>(), 128);
    }

    /// More threads than stripes, coming and going: no count is lost.
    #[test]
    fn counts_are_exact_with_many_threads() {
        let stats = Stats::new();
        std::thread::scope(|sc| {
            for _ in 0..3 {
                for _ in 0..(OWNED + 16) {
                    sc.spawn(|| {
                        for _ in 0..1000 {
                            stats.bump(Counter::Hit, 1);
                        }
                        stats.bump(Counter::Miss, 2);
                    });
                }
            }
        });
        let s = stats.sum();
        assert_eq!(s.hits, 3 * (OWNED as u64 + 16) * 1000);
        assert_eq!(s.misses, 3 * (OWNED as u64 + 16) * 2);
        assert_eq!(s.lookups, s.hits + s.misses);
    }
}
