//! The three fast paths, each switchable at run time so that its value can be measured, and
//! each keeping the kernel's guarantees: a policy change, a relabel or a credential change is
//! seen at the next operation, and a denial is still audited.
//!
//! - Revalidation skip (2007): a read or write of an open file is not checked again while the
//!   task's SID, the inode's SID and the policy seqno are those the open was checked with.
//! - Directory search cache (2025, the kernel's per-task avdcache): each credential keeps the
//!   last few directory search decisions, tagged with their seqno.
//! - "Nothing beyond POSIX here" (Linus's proposal): an inode remembers the (credential SID,
//!   seqno) that last searched it with the search allowed and nothing to audit, so the walk's
//!   check of that directory is one comparison and no cache lookup.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

use seaccess_types::{Seqno, Sid};

/// Which fast paths are on (all by default).
#[derive(Debug)]
pub struct FastPaths {
    revalidate: AtomicBool,
    search_cache: AtomicBool,
    posix: AtomicBool,
}

impl Default for FastPaths {
    fn default() -> FastPaths {
        FastPaths { revalidate: AtomicBool::new(true), search_cache: AtomicBool::new(true), posix: AtomicBool::new(true) }
    }
}

impl FastPaths {
    /// Sets every fast path on or off.
    pub fn set_all(&self, on: bool) {
        self.set_revalidate(on);
        self.set_search_cache(on);
        self.set_posix(on);
    }
    pub fn set_revalidate(&self, on: bool) {
        self.revalidate.store(on, Relaxed);
    }
    pub fn set_search_cache(&self, on: bool) {
        self.search_cache.store(on, Relaxed);
    }
    pub fn set_posix(&self, on: bool) {
        self.posix.store(on, Relaxed);
    }
    #[inline(always)]
    pub fn revalidate(&self) -> bool {
        self.revalidate.load(Relaxed)
    }
    #[inline(always)]
    pub fn search_cache(&self) -> bool {
        self.search_cache.load(Relaxed)
    }
    #[inline(always)]
    pub fn posix(&self) -> bool {
        self.posix.load(Relaxed)
    }
}

/// The "nothing beyond POSIX here" mark of one inode: (credential SID << 32 | seqno), or a
/// token with SID 0 (no credential has SID 0) that a relabel writes, a new one each time, so
/// that a check racing the relabel cannot leave a mark made under the old SID (see
/// [`PosixMark::record`]).
#[derive(Debug)]
pub struct PosixMark(AtomicU64);

impl PosixMark {
    pub fn new() -> PosixMark {
        PosixMark(AtomicU64::new(0))
    }

    fn key(sid: Sid, seqno: Seqno) -> u64 {
        (u64::from(sid.0) << 32) | u64::from(seqno.0)
    }

    /// The mark as it is now, to be passed back to [`PosixMark::record`].
    #[inline(always)]
    pub fn load(&self) -> u64 {
        self.0.load(Acquire)
    }

    /// Whether `sid` searched here under policy `seqno` with nothing to audit.
    #[inline(always)]
    pub fn holds(&self, sid: Sid, seqno: Seqno) -> bool {
        self.0.load(Acquire) == Self::key(sid, seqno)
    }

    /// Marks a silent grant by `sid` under `seqno`, unless the mark changed since `seen` was
    /// loaded (before the inode's SID was read for the check): then a relabel came between
    /// and the grant may be for the old SID.
    pub fn record(&self, seen: u64, sid: Sid, seqno: Seqno) {
        let _ = self.0.compare_exchange(seen, Self::key(sid, seqno), AcqRel, Relaxed);
    }

    /// Forgets the mark (a relabel): a fresh token, never equal to one read before.
    pub fn forget(&self) {
        let _ = self.0.fetch_update(AcqRel, Acquire, |v| Some(if v >> 32 == 0 { (v + 1) & 0xffff_ffff } else { 1 }));
    }
}

impl Default for PosixMark {
    fn default() -> Self {
        Self::new()
    }
}

/// A credential's directory search decisions (the kernel's avdcache). Not yet built: every
/// lookup misses.
#[derive(Debug, Default)]
pub struct SearchCache {}

impl SearchCache {
    pub fn new() -> SearchCache {
        SearchCache {}
    }
}
