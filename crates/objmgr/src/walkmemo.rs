//! A walk's memo: the "nothing beyond POSIX here" fast path taken from one directory to a
//! whole walk. A list of directories that an object manager walks again and again (the chain
//! above a dentry, in the kernel's terms) remembers that every one of them held the last
//! epoch's search grant ([`crate::grant`]), so a warm walk is two loads and a comparison
//! whatever its depth, instead of one grant load per directory, each on its own blob.
//!
//! The memo is exactly the conjunction of the directories' grants, and ends when any of them
//! could: a policy change or a credential change gives another epoch id; a relabel of any
//! inode anywhere in the process bumps one generation ([`relabeled`], from
//! [`crate::InodeSec::set_sid`] after the new SID is stored), which every memo carries.
//! Relabels are rare next to walks, so one process-wide count costs a walk a load of a line
//! that stays shared, and spares a relabel from finding the walks through a directory.
//!
//! A memo is recorded only by a walk whose every directory held the grant (never by one that
//! went to the cache), so it never stands for a decision a grant would not: a denial, an
//! audited grant or a permissive one is never remembered.

use std::sync::atomic::{AtomicU64, Ordering::*};

/// Relabels so far, in the whole process. Bumped after the new SID is stored, so a walk that
/// loads the new count reads the new SID's grants (cleared at the relabel's start) and never
/// the old SID's.
static RELABELS: AtomicU64 = AtomicU64::new(0);

/// Called by every relabel, once its new SID is stored.
pub(crate) fn relabeled() {
    RELABELS.fetch_add(1, AcqRel);
}

/// The relabel count now: loaded before any directory's grant is, so that a relabel the
/// grants missed makes the memo written from them stale.
#[inline(always)]
pub(crate) fn generation() -> u64 {
    RELABELS.load(Acquire)
}

/// The memo word: the epoch id in the high half, the relabel count in the low half. Once the
/// count passes `u32::MAX` no memo is written or matched (the fast path ends; a memo can then
/// never match a count it was not written at).
#[inline(always)]
fn word(id: u32, generation: u64) -> Option<u64> {
    (id != 0 && generation <= u64::from(u32::MAX)).then_some((u64::from(id) << 32) | generation)
}

/// What one walk remembers (see the module docs). It stands for the list of directories the
/// walk returns: a walk whose list changes (a rename moved a directory above it) must start
/// with a new memo or [`WalkMemo::forget`] the old one.
#[derive(Debug, Default)]
pub struct WalkMemo(AtomicU64);

impl WalkMemo {
    pub const fn new() -> WalkMemo {
        WalkMemo(AtomicU64::new(0))
    }

    /// Forgets what the walk remembered (its list of directories changed).
    pub fn forget(&self) {
        self.0.store(0, Release);
    }

    /// Whether every directory of the walk held epoch `id`'s search at relabel count
    /// `generation` (loaded by [`generation`] now).
    #[inline(always)]
    pub(crate) fn holds(&self, id: u32, generation: u64) -> bool {
        word(id, generation).is_some_and(|w| self.0.load(Acquire) == w)
    }

    /// Remembers that every directory held epoch `id`'s search, their grants loaded after the
    /// relabel count `generation` was.
    #[inline(always)]
    pub(crate) fn record(&self, id: u32, generation: u64) {
        if let Some(w) = word(id, generation) {
            self.0.store(w, Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_holds_for_its_epoch_until_any_relabel() {
        let m = WalkMemo::new();
        let g = generation();
        assert!(!m.holds(0, g), "epoch 0 holds nothing");
        m.record(0, g);
        assert!(!m.holds(0, g));
        m.record(7, g);
        assert!(m.holds(7, g) && !m.holds(8, g));
        relabeled();
        assert!(!m.holds(7, generation()), "a relabel anywhere ends it");
        m.record(7, generation());
        assert!(m.holds(7, generation()));
        m.forget();
        assert!(!m.holds(7, generation()));
    }

    #[test]
    fn past_the_counts_range_nothing_is_remembered() {
        let m = WalkMemo::new();
        let past = u64::from(u32::MAX) + 1;
        m.record(7, past);
        assert!(
            !m.holds(7, past) && !m.holds(7, 0),
            "no word for a count past 32 bits"
        );
        m.record(7, u64::from(u32::MAX));
        assert!(m.holds(7, u64::from(u32::MAX)) && !m.holds(7, past));
    }
}
