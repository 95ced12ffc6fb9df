//! Statistics kept per thread and summed when read, so that a hit writes only to a cache line
//! its own thread owns.
//!
//! Each live thread counts in the stripe of its number ([`crate::stripe`], which the object
//! manager's hook counters use too), so its counts are plain loads and stores, not locked adds.
//! Past [`OWNED`] live threads, the rest share one stripe and count with atomic adds: slower,
//! never wrong.
//!
//! Finding a thread's stripe through a `thread_local!` is a call to `__tls_get_addr` in a shared
//! library (the general-dynamic TLS model), a tenth of a cache hit. So a caller that knows a
//! cheap identity of the calling thread (the C library passes the thread pointer) counts
//! through [`Stats::bump_as`] instead: the identity hashes to one of [`HINTED`] stripes of its
//! own, which the first identity to count in it claims for good; an identity whose two
//! candidate stripes are taken by others counts in the shared stripe.
//!
//! A reset does not write the counters (a thread may be adding to its stripe at that moment):
//! it records their sums as the new zero.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::stripe::{self, OWNED, SHARED};

/// Stripes claimed by thread identities ([`Stats::bump_as`]); a power of two.
const HINTED: usize = 64;

/// The statistics' lock, held across a fork (see `Avc::fork_guard`). The stripe numbers' free
/// list is the process's, held once whatever the number of caches ([`stripe::hold`]).
pub(crate) struct Held<'a> {
    _zero: std::sync::MutexGuard<'a, CacheStats>,
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
    /// The thread identity that claimed this stripe (hinted stripes only); 0 while unclaimed.
    owner: AtomicU64,
}

impl Counters {
    #[inline(always)]
    fn get(&self, which: Counter) -> &AtomicU64 {
        match which {
            Counter::Hit => &self.hits,
            Counter::Miss => &self.misses,
            Counter::Allocation => &self.allocations,
            Counter::Reclaim => &self.reclaims,
            Counter::Free => &self.frees,
        }
    }

    /// Adds to a counter only its owner writes.
    #[inline(always)]
    fn add_owned(&self, which: Counter, n: u64) {
        let f = self.get(which);
        f.store(f.load(Relaxed).wrapping_add(n), Relaxed);
    }

    fn add_to(&self, s: &mut CacheStats) {
        s.hits = s.hits.wrapping_add(self.hits.load(Relaxed));
        s.misses = s.misses.wrapping_add(self.misses.load(Relaxed));
        s.allocations = s.allocations.wrapping_add(self.allocations.load(Relaxed));
        s.reclaims = s.reclaims.wrapping_add(self.reclaims.load(Relaxed));
        s.frees = s.frees.wrapping_add(self.frees.load(Relaxed));
    }
}

pub(crate) struct Stats {
    /// In place, not boxed: a hit then adds to its stripe at an offset from the cache's own
    /// address, one pointer load fewer.
    stripes: [Counters; OWNED + 1],
    hinted: [Counters; HINTED],
    /// The sums at the last reset: what reads as zero.
    zero: std::sync::Mutex<CacheStats>,
}

/// The stripe of thread identity `thread` (first choice; the second is its neighbour). Thread
/// pointers are page aligned and a stack's size apart, so the low bits say nothing: a
/// multiplication brings every bit to the top.
#[inline(always)]
fn hinted_stripe(thread: u64) -> usize {
    (thread.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - HINTED.trailing_zeros())) as usize
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
        Stats {
            stripes: std::array::from_fn(|_| Counters::default()),
            hinted: std::array::from_fn(|_| Counters::default()),
            zero: std::sync::Mutex::new(CacheStats::default()),
        }
    }

    /// Holds the statistics' lock.
    pub fn hold(&self) -> Held<'_> {
        Held {
            _zero: seaccess_types::lock(&self.zero),
        }
    }

    /// Counts for the calling thread. An owned stripe's number is below [`SHARED`], and the
    /// one comparison that says so also rules out the shared stripe and a thread that has not
    /// claimed one yet (`usize::MAX`), which go the cold way: three tests on every hit before.
    #[inline(always)]
    pub fn bump(&self, which: Counter, n: u64) {
        let i = stripe::cached();
        if i < SHARED {
            if let Some(c) = self.stripes.get(i) {
                // Only this thread writes its stripe (a number changes hands through the free
                // list's lock, which orders the old owner's stores before the new owner's).
                return c.add_owned(which, n);
            }
        }
        self.bump_unowned(which, n);
    }

    /// [`Stats::bump`] for a thread without a stripe of its own: it claims one if it has not
    /// tried yet, else counts in the shared stripe.
    #[cold]
    #[inline(never)]
    fn bump_unowned(&self, which: Counter, n: u64) {
        let i = stripe::current();
        let Some(c) = self.stripes.get(i) else { return };
        if i == SHARED {
            c.get(which).fetch_add(n, Relaxed);
        } else {
            c.add_owned(which, n);
        }
    }

    /// Counts for the thread whose identity is `thread`: nonzero, and no other live thread's
    /// (the thread pointer). A later thread with a dead one's identity takes over its stripe,
    /// which is sound because the two never count at once. 0 counts as [`Stats::bump`] does.
    #[inline(always)]
    pub fn bump_as(&self, thread: u64, which: Counter, n: u64) {
        if let Some(c) = self.hinted.get(hinted_stripe(thread)) {
            if c.owner.load(Relaxed) == thread && thread != 0 {
                return c.add_owned(which, n);
            }
        }
        self.bump_second(thread, which, n);
    }

    /// The hit counter of the stripe thread identity `thread` owns (claiming a free one of its
    /// two, as a count would), for a caller that counts that thread's hits itself; None for
    /// identity 0 or when both of its stripes are other identities'. Only that thread may add
    /// to it, with a load and a store, as [`Counters::add_owned`] does.
    pub fn own_hits(&self, thread: u64) -> Option<&AtomicU64> {
        self.owned(thread).map(|c| &c.hits)
    }

    /// An identity that does not own its first stripe: its second, claimed if free (either
    /// first), else the shared stripe.
    #[cold]
    #[inline(never)]
    fn bump_second(&self, thread: u64, which: Counter, n: u64) {
        if thread == 0 {
            return self.bump(which, n);
        }
        match self.owned(thread) {
            Some(c) => c.add_owned(which, n),
            None => {
                if let Some(c) = self.stripes.get(SHARED) {
                    c.get(which).fetch_add(n, Relaxed);
                }
            }
        }
    }

    /// The stripe identity `thread` (nonzero) owns of its two, claiming a free one if it owns
    /// neither; None when both are other identities'.
    fn owned(&self, thread: u64) -> Option<&Counters> {
        if thread == 0 {
            return None;
        }
        let i = hinted_stripe(thread);
        let pair = [self.hinted.get(i), self.hinted.get(i ^ 1)];
        let mine = pair
            .iter()
            .flatten()
            .find(|c| c.owner.load(Relaxed) == thread);
        mine.or_else(|| {
            pair.iter().flatten().find(|c| {
                c.owner
                    .compare_exchange(0, thread, Relaxed, Relaxed)
                    .is_ok()
            })
        })
        .copied()
    }

    /// The counters' sums since they were created, wrapping.
    fn raw(&self) -> CacheStats {
        let mut s = CacheStats::default();
        for c in self.stripes.iter().chain(self.hinted.iter()) {
            c.add_to(&mut s);
        }
        s
    }

    pub fn sum(&self) -> CacheStats {
        // Under the lock, so that a reset between the two reads cannot make the sums negative.
        let z = seaccess_types::lock(&self.zero);
        let raw = self.raw();
        let mut s = CacheStats {
            lookups: 0,
            hits: raw.hits.wrapping_sub(z.hits),
            misses: raw.misses.wrapping_sub(z.misses),
            allocations: raw.allocations.wrapping_sub(z.allocations),
            reclaims: raw.reclaims.wrapping_sub(z.reclaims),
            frees: raw.frees.wrapping_sub(z.frees),
        };
        drop(z);
        s.lookups = s.hits.wrapping_add(s.misses);
        s
    }

    /// Makes every counter read as zero from now on. A count made while this runs is counted
    /// before or after it, never lost or counted twice.
    pub fn reset(&self) {
        let mut z = seaccess_types::lock(&self.zero);
        *z = self.raw();
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

    /// Resets racing counts never make a sum go negative (wrap) or exceed what was counted,
    /// and after the last reset exactly what is counted next is read.
    #[test]
    fn a_reset_racing_counts_reads_sane_sums() {
        let stats = Stats::new();
        let done = std::sync::atomic::AtomicBool::new(false);
        const PER: u64 = 200_000;
        std::thread::scope(|sc| {
            for t in 1..=2u64 {
                let (stats, done) = (&stats, &done);
                sc.spawn(move || {
                    for _ in 0..PER {
                        stats.bump_as(t << 12, Counter::Hit, 1);
                    }
                    done.store(true, Relaxed);
                });
            }
            while !done.load(Relaxed) {
                stats.reset();
                let s = stats.sum();
                assert!(s.hits <= 2 * PER, "{s:?}");
            }
        });
        assert!(stats.sum().hits <= 2 * PER);
        stats.reset();
        assert_eq!(stats.sum(), CacheStats::default());
        for _ in 0..7 {
            stats.bump_as(1 << 12, Counter::Miss, 1);
        }
        assert_eq!((stats.sum().misses, stats.sum().lookups), (7, 7));
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
