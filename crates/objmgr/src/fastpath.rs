//! The fast paths, each switchable at run time so that its value can be measured, and each
//! keeping the kernel's guarantees: a policy change, a relabel or a credential change is seen
//! at the next operation, and a denial is still audited.
//!
//! - Revalidation skip (2007): a read or write of an open file is not checked again while the
//!   task's SID, the inode's SID and the policy seqno are those the open was checked with.
//! - The socket's remembered grant, the same lesson for a socket's sends and receives: a socket
//!   remembers what the last (credential SID, seqno) was granted on it with nothing to audit,
//!   as an inode does (below), so a warm send is one comparison and one mask test
//!   ([`crate::grant`]; [`FastPaths::set_sockets`]). The lab's experiments that measure the
//!   cache on every send (chatroom, hackbench) turn it off.
//! - Directory search cache (2025, the kernel's per-task avdcache): each credential keeps the
//!   last few directory search decisions, tagged with their seqno.
//! - "Nothing beyond POSIX here" (Linus's proposal), extended: an inode remembers what the last
//!   (credential SID, seqno) was granted on it with nothing to audit (search, getattr, read,
//!   write, open, ...: [`crate::grant`]), so the walk's check of a directory, a stat's getattr
//!   and an open's checks of a warm inode are one comparison and one mask test, and no cache
//!   lookup; and a walk the object manager keeps may remember that each of its directories
//!   held the search ([`crate::WalkMemo`]), so a warm walk is one comparison at any depth. One
//!   switch ([`FastPaths::set_posix`]) turns the whole of it on or off.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::Arc;

use seaccess_types::{Seqno, Sid};

/// Which fast paths are on (all by default), and the enforcing-switch count that decides
/// whether a grant may be remembered. Kept inside the object manager itself, so that testing
/// a switch reads a line every hook reads anyway; only the switch count is shared (with the
/// cache's reset callback).
#[derive(Debug)]
pub struct FastPaths {
    revalidate: AtomicBool,
    search_cache: AtomicBool,
    posix: AtomicBool,
    sockets: AtomicBool,
    /// Bumped after every enforcing switch (and cache reset). A check remembers its grant only
    /// if no switch happened while it ran: a decision read in permissive mode may hold
    /// permissions granted only because the mode was permissive, and the cache's own epoch
    /// tags are not visible here.
    switches: Arc<AtomicU64>,
}

impl Default for FastPaths {
    fn default() -> FastPaths {
        FastPaths {
            revalidate: AtomicBool::new(true),
            search_cache: AtomicBool::new(true),
            posix: AtomicBool::new(true),
            sockets: AtomicBool::new(true),
            switches: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl FastPaths {
    /// Sets every fast path on or off.
    pub fn set_all(&self, on: bool) {
        self.set_revalidate(on);
        self.set_search_cache(on);
        self.set_posix(on);
        self.set_sockets(on);
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
    pub fn set_sockets(&self, on: bool) {
        self.sockets.store(on, Relaxed);
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
    #[inline(always)]
    pub fn sockets(&self) -> bool {
        self.sockets.load(Relaxed)
    }

    /// What records an enforcing switch or a cache reset (for the cache's reset callback).
    pub(crate) fn switch_counter(&self) -> Arc<AtomicU64> {
        self.switches.clone()
    }

    /// The switch count now, to be compared after a check.
    #[inline(always)]
    pub(crate) fn switches(&self) -> u64 {
        self.switches.load(Acquire)
    }
}

/// How many directory decisions a credential keeps (the kernel's avdcache keeps 4).
const SLOTS: usize = 4;

/// Which directory permissions a slot records (those a walk, a readdir or a write to a
/// directory asks through inode_permission), as 3 bits.
const SEARCH: u64 = 1;
const READ: u64 = 2;
const WRITE: u64 = 4;
const SEQ_BITS: u32 = 29;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// A credential's directory search decisions (the kernel's per-task avdcache, 2025): a few
/// slots, each one `u64` holding (directory SID, policy seqno, the permissions granted), so a
/// reader never sees half of an entry and no lock is taken.
///
/// Unlike the kernel's, a slot holds only grants the policy itself made with nothing to audit
/// (see [`crate::Checked::clean`]), never a whole decision: a hit is silent, so a denial and an
/// auditallow'ed grant always go to the cache and write their record there, and a grant made
/// only because the mode was permissive is never remembered. The key is the directory's SID,
/// so a relabel needs no invalidation; the owner is the credential itself (immutable), so a
/// credential change starts with an empty cache, and the cache is made for the credential's
/// SID, which every lookup and insert checks, so that it never answers for another SID
/// whatever state a credential is built from. The seqno is kept in 29 bits: a stale slot
/// could match again only after 2^29 policy changes.
#[derive(Debug)]
pub struct SearchCache {
    /// The subject SID the decisions are for.
    owner: Sid,
    slots: [AtomicU64; SLOTS],
    spot: AtomicU32,
}

impl SearchCache {
    /// An empty cache of `owner`'s decisions.
    pub fn new(owner: Sid) -> SearchCache {
        SearchCache {
            owner,
            slots: Default::default(),
            spot: AtomicU32::new(0),
        }
    }

    /// The slot bits for our `dir` permissions, or None if they are not all kept here.
    pub(crate) fn bits(perms: u32) -> Option<u64> {
        use crate::classes::dir;
        if perms & !(dir::SEARCH | dir::READ | dir::WRITE) != 0 || perms == 0 {
            return None;
        }
        let mut b = 0;
        if perms & dir::SEARCH != 0 {
            b |= SEARCH;
        }
        if perms & dir::READ != 0 {
            b |= READ;
        }
        if perms & dir::WRITE != 0 {
            b |= WRITE;
        }
        Some(b)
    }

    fn tag(isid: Sid, seqno: Seqno) -> u64 {
        (u64::from(isid.0) << 32) | ((u64::from(seqno.0) & SEQ_MASK) << 3)
    }

    /// Whether `bits` (from [`SearchCache::bits`]) were granted to `ssid` on a directory of
    /// SID `isid` under policy `seqno`.
    #[inline]
    pub(crate) fn lookup(&self, ssid: Sid, isid: Sid, seqno: Seqno, bits: u64) -> bool {
        if ssid != self.owner {
            return false;
        }
        let tag = Self::tag(isid, seqno);
        let start = self.spot.load(Relaxed) as usize;
        for i in 0..SLOTS {
            let j = (start + SLOTS - i) % SLOTS;
            let Some(slot) = self.slots.get(j) else {
                continue;
            };
            let v = slot.load(Acquire);
            if v & !7 == tag && v & bits == bits {
                if i != 0 {
                    self.spot.store(j as u32, Relaxed);
                }
                return true;
            }
        }
        false
    }

    /// Remembers that `bits` were granted to `ssid` on `isid` under `seqno`: added to the slot
    /// already holding that directory and seqno, else written over the next slot; nothing if
    /// the cache is another SID's.
    pub(crate) fn insert(&self, ssid: Sid, isid: Sid, seqno: Seqno, bits: u64) {
        if ssid != self.owner {
            return;
        }
        let tag = Self::tag(isid, seqno);
        for slot in &self.slots {
            let v = slot.load(Acquire);
            if v & !7 == tag {
                // Another thread may have replaced the slot meanwhile; then write ours anew.
                if slot.compare_exchange(v, v | bits, AcqRel, Relaxed).is_ok() {
                    return;
                }
            }
        }
        let j = (self.spot.load(Relaxed) as usize + 1) % SLOTS;
        if let Some(slot) = self.slots.get(j) {
            slot.store(tag | bits, Release);
            self.spot.store(j as u32, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classes::dir;

    #[test]
    fn a_slot_answers_only_for_its_directory_seqno_and_permissions() {
        let c = SearchCache::new(Sid(1));
        let search = SearchCache::bits(dir::SEARCH).unwrap_or(0);
        let read = SearchCache::bits(dir::READ).unwrap_or(0);
        assert_eq!(SearchCache::bits(dir::ADD_NAME), None);
        assert!(!c.lookup(Sid(1), Sid(5), Seqno(1), search));
        c.insert(Sid(1), Sid(5), Seqno(1), search);
        assert!(c.lookup(Sid(1), Sid(5), Seqno(1), search));
        assert!(!c.lookup(Sid(1), Sid(5), Seqno(1), read));
        assert!(!c.lookup(Sid(1), Sid(5), Seqno(2), search));
        assert!(!c.lookup(Sid(1), Sid(6), Seqno(1), search));
        c.insert(Sid(1), Sid(5), Seqno(1), read);
        assert!(c.lookup(Sid(1), Sid(5), Seqno(1), search | read));
        for s in 10..14 {
            c.insert(Sid(1), Sid(s), Seqno(1), search);
        }
        assert!(
            !c.lookup(Sid(1), Sid(5), Seqno(1), search),
            "four newer directories pushed it out"
        );
        assert!(
            c.lookup(Sid(1), Sid(13), Seqno(1), search)
                && c.lookup(Sid(1), Sid(10), Seqno(1), search)
        );
        assert!(
            !c.lookup(Sid(2), Sid(13), Seqno(1), search),
            "the cache is SID 1's"
        );
        c.insert(Sid(2), Sid(20), Seqno(1), search);
        assert!(
            !c.lookup(Sid(1), Sid(20), Seqno(1), search)
                && !c.lookup(Sid(2), Sid(20), Seqno(1), search)
        );
    }
}
