//! The inode's remembered grant: the "nothing beyond POSIX here" fast path extended from a
//! directory's search to the permissions a stat, an open and the VFS's permission check ask.
//!
//! An inode remembers, for the last (credential SID, policy seqno) that was granted something
//! on it cleanly (allowed by the policy itself, nothing to audit, not a permissive domain's,
//! decided in enforcing mode with no mode switch during the check: [`crate::Checked::clean`]
//! and `ObjectManager::may_remember`), which permissions were granted. A warm check is then
//! one load, one comparison and one mask test, with no cache lookup and no read of the
//! inode's SID.
//!
//! The (credential SID, seqno) pair is interned as a 32-bit epoch id ([`Epochs`]; ids are never
//! reused, and none is given once they run out), which each credential keeps for the seqno it
//! was interned at and for its own SID only ([`CredEpoch`] checks it), so that the id and the
//! permissions fit one `AtomicU64` and a reader never sees half of a grant. What ends a grant:
//! - a policy change or boolean commit: a new seqno, so a new epoch id, which no inode holds;
//! - a credential change or override: another SID, so another epoch id (a new credential of
//!   the same SID shares its id, as it shares its decisions);
//! - a relabel: [`InodeGrant::begin_relabel`] before the SID is stored clears the grant and
//!   holds recording off, and [`InodeGrant::end_relabel`] after it counts the relabel (see
//!   [`crate::InodeSec::set_sid`]); a check records only if the inode's relabel count is the
//!   one it saw before reading the SID. The count has 64 bits, so it cannot come back during
//!   one check;
//! - an enforcing switch needs nothing: only grants the policy itself made are remembered,
//!   and those hold in either mode; a grant read in permissive mode is never remembered.
//!
//! A denial or an auditallow'ed grant is never remembered, so it always reaches the cache and
//! its record.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::Mutex;

use seaccess_types::{Seqno, Sid};

use crate::classes::{common_file, dir};

/// The permissions a grant can remember (our bits; the same in every file class, `search`
/// only in `dir`): what path walks, getattr, the VFS's permission check and open ask.
const REMEMBERED: u32 = common_file::IOCTL
    | common_file::READ
    | common_file::WRITE
    | common_file::GETATTR
    | common_file::APPEND
    | common_file::EXECUTE
    | common_file::OPEN
    | dir::SEARCH;

/// Where `search` (bit 28) and `open` (bit 18) go in the 16 bits a grant keeps: on bits of
/// ours that are never remembered (`create`, `quotaon`).
const SEARCH_AT: u32 = 3;
const OPEN_AT: u32 = 15;

/// `perms` (our bits of a file class) in the 16 bits a grant keeps, or None if a permission
/// of it is never remembered.
#[inline(always)]
pub(crate) const fn compact(perms: u32) -> Option<u16> {
    if perms & !REMEMBERED != 0 || perms == 0 {
        return None;
    }
    // Bits 0-14 but `create`: every remembered permission below bit 15 is there.
    let low = perms & 0x7ff7;
    let open = ((perms >> common_file::OPEN.trailing_zeros()) & 1) << OPEN_AT;
    let search = ((perms >> dir::SEARCH.trailing_zeros()) & 1) << SEARCH_AT;
    Some((low | open | search) as u16)
}

/// `search` of a directory, compacted.
pub(crate) const SEARCH: u16 = match compact(dir::SEARCH) {
    Some(c) => c,
    None => 0,
};
/// `getattr`, compacted.
pub(crate) const GETATTR: u16 = match compact(common_file::GETATTR) {
    Some(c) => c,
    None => 0,
};

/// The word's layout: epoch id (bits 32-63; 0 is no one), the word taken (bit 31: a relabel
/// in progress, or a grant being recorded), the granted permissions (bits 0-15).
const TAKEN: u64 = 1 << 31;

/// One inode's remembered grant.
///
/// A check that may record a grant takes [`InodeGrant::seen`] before it reads the inode's SID,
/// and [`InodeGrant::record`] lands only if no relabel of the inode ended since. Relabels are
/// counted in 64 bits beside the word, not in the word: at one relabel a nanosecond the count
/// would come back after 584 years, so it cannot come back during one check (a 15-bit
/// generation in the word came back after 16,384 relabels, and a check parked that long stored
/// the old label's grant). Recording and relabelling exclude each other through the word's
/// taken bit, so the count is compared while no relabel can begin, and a relabel that begins
/// after the record clears what it stored.
#[derive(Debug, Default)]
pub struct InodeGrant {
    word: AtomicU64,
    /// Relabels ended: bumped by each after its new SID is stored, before the word is given
    /// back.
    relabels: AtomicU64,
}

/// What a check saw of the inode's relabels before it read the SID (from [`InodeGrant::seen`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seen(u64);

impl InodeGrant {
    pub fn new() -> InodeGrant {
        InodeGrant::default()
    }

    /// Whether epoch `id` was granted every permission of `need` (compacted, not empty) here;
    /// never for id 0, whose words hold no permissions.
    #[inline(always)]
    pub(crate) fn holds(&self, id: u32, need: u16) -> bool {
        // One mask and one comparison: the id's half and the needed bits at once (the walk
        // hoists both constants out of its loop). The taken bit is outside the mask: a word
        // taken by a record still holds what it held.
        let mask = 0xffff_ffff_0000_0000 | u64::from(need);
        self.word.load(Acquire) & mask == (u64::from(id) << 32) | u64::from(need)
    }

    /// The relabels so far, to be passed back to [`InodeGrant::record`]: taken before the
    /// inode's SID is read for the check (this load's Acquire keeps the SID's read after it).
    #[inline(always)]
    pub(crate) fn seen(&self) -> Seen {
        Seen(self.relabels.load(Acquire))
    }

    /// Remembers that epoch `id` was granted `perms` (compacted), unless a relabel ended since
    /// `seen` was taken (the grant may be for the old SID) or one is in progress. Permissions
    /// granted to the same epoch add up. Gives up, remembering nothing, when the word is taken
    /// (a relabel, or another record): a fast path may always forget.
    pub(crate) fn record(&self, seen: Seen, id: u32, perms: u16) {
        if id == 0 {
            return;
        }
        let w = self.word.load(Acquire);
        if w & TAKEN != 0
            || self
                .word
                .compare_exchange(w, w | TAKEN, AcqRel, Relaxed)
                .is_err()
        {
            return;
        }
        // The word is ours: no relabel begins until it is given back, and every relabel that
        // ended did so before we took it (its bump is seen here).
        let new = if self.relabels.load(Acquire) != seen.0 {
            w
        } else if (w >> 32) as u32 == id {
            w | u64::from(perms)
        } else {
            (u64::from(id) << 32) | u64::from(perms)
        };
        self.word.store(new, Release);
    }

    /// A relabel starts: the grant is gone and nothing is recorded until
    /// [`InodeGrant::end_relabel`], so a check that read the old SID cannot leave a grant
    /// behind. Waits while the word is taken: by another relabel of the inode (were the two to
    /// overlap, the first one's end would reopen recording while the second's SID is still to
    /// be stored, and a grant for the first's SID could outlive it), or by a record (a load
    /// and a store). Relabels are rare and both critical sections short, so the wait is a
    /// short spin.
    pub(crate) fn begin_relabel(&self) {
        loop {
            let w = self.word.load(Acquire);
            if w & TAKEN == 0
                && self
                    .word
                    .compare_exchange_weak(w, TAKEN, AcqRel, Relaxed)
                    .is_ok()
            {
                return;
            }
            std::hint::spin_loop();
            std::thread::yield_now();
        }
    }

    /// The new SID is stored: one more relabel ended, so no check that took
    /// [`InodeGrant::seen`] before can record; grants may be recorded again (by checks that
    /// take it from now on, and so read the new SID).
    pub(crate) fn end_relabel(&self) {
        self.relabels.fetch_add(1, AcqRel);
        self.word.store(0, Release);
    }
}

/// Epoch ids are never reused for another (SID, seqno), across every object manager of the
/// process: a credential keeps the id it got from one, and may be used with another.
static NEXT_EPOCH: AtomicU32 = AtomicU32::new(1);

/// The epoch ids of the newest seqno's (credential SID, seqno) pairs (only the newest seqno's
/// are kept: an older one's grants no longer answer).
#[derive(Debug, Default)]
pub(crate) struct Epochs {
    ids: Mutex<(u32, HashMap<u32, u32>)>,
}

impl Epochs {
    /// The epoch id of `sid` under `seqno` (0 if ids have run out, or if another thread holds
    /// the table: then nothing is remembered this time). Never waits: a process forked while a
    /// thread of it held the table would leave its child waiting forever for a thread it does
    /// not have, and the grants are only a fast path.
    pub(crate) fn intern(&self, sid: Sid, seqno: Seqno) -> u32 {
        let Some(mut g) = seaccess_types::lock::try_lock(&self.ids) else {
            return 0;
        };
        let (at, ids) = &mut *g;
        if *at != seqno.0 {
            *at = seqno.0;
            ids.clear();
        }
        *ids.entry(sid.0).or_insert_with(|| {
            NEXT_EPOCH
                .fetch_update(Relaxed, Relaxed, |n| n.checked_add(1))
                .unwrap_or(0)
        })
    }
}

/// A credential's epoch id for the seqno it was interned at: (seqno << 32) | id, 0 when none;
/// keyed by the SID it is kept for, which every use checks, so that an id is never read for
/// another SID whatever state a credential is built from.
#[derive(Debug)]
pub(crate) struct CredEpoch {
    sid: Sid,
    word: AtomicU64,
}

impl CredEpoch {
    /// An empty one, for `sid`.
    pub(crate) fn new(sid: Sid) -> CredEpoch {
        CredEpoch {
            sid,
            word: AtomicU64::new(0),
        }
    }

    /// The id, if it was interned for `sid` under `seqno`.
    #[inline(always)]
    pub(crate) fn get(&self, sid: Sid, seqno: Seqno) -> Option<u32> {
        let e = self.word.load(Relaxed);
        (self.sid == sid && (e >> 32) as u32 == seqno.0 && e as u32 != 0).then_some(e as u32)
    }

    /// Keeps `id`, interned for `sid` under `seqno` (not if it is kept for another SID).
    pub(crate) fn set(&self, sid: Sid, seqno: Seqno, id: u32) {
        if self.sid == sid {
            self.word
                .store((u64::from(seqno.0) << 32) | u64::from(id), Relaxed);
        }
    }
}

impl crate::ObjectManager {
    /// The epoch id of `cred` under the newest policy the cache knows of, with that seqno: two
    /// loads and a comparison when the credential has it already.
    #[inline(always)]
    pub(crate) fn epoch(&self, cred: &crate::Cred) -> (u32, Seqno) {
        let seqno = self.avc().seqno();
        match cred.epoch.get(cred.sid(), seqno) {
            Some(id) => (id, seqno),
            None => (self.intern_epoch(cred, seqno), seqno),
        }
    }

    #[cold]
    #[inline(never)]
    fn intern_epoch(&self, cred: &crate::Cred, seqno: Seqno) -> u32 {
        let id = self.epochs.intern(cred.sid(), seqno);
        cred.epoch.set(cred.sid(), seqno, id);
        id
    }

    /// Whether `cred` was granted `need` (compacted) on `inode` under the newest policy, with
    /// the "nothing beyond POSIX" fast path on.
    #[inline(always)]
    pub(crate) fn granted(&self, cred: &crate::Cred, inode: &crate::InodeSec, need: u16) -> bool {
        self.fast_paths().posix() && inode.grant.holds(self.epoch(cred).0, need)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacting_keeps_the_remembered_permissions_apart() {
        let all = [
            common_file::IOCTL,
            common_file::READ,
            common_file::WRITE,
            common_file::GETATTR,
            common_file::APPEND,
            common_file::EXECUTE,
            common_file::OPEN,
            dir::SEARCH,
        ];
        let mut seen = 0u16;
        for p in all {
            let c = compact(p).unwrap_or(0);
            assert_eq!(c.count_ones(), 1, "{p:#x}");
            assert_eq!(seen & c, 0, "{p:#x} shares a bit");
            seen |= c;
        }
        assert_eq!(
            compact(common_file::READ | common_file::OPEN),
            Some(compact(common_file::READ).unwrap_or(0) | compact(common_file::OPEN).unwrap_or(0))
        );
        assert_eq!(compact(common_file::SETATTR), None);
        assert_eq!(compact(dir::ADD_NAME | dir::SEARCH), None);
        assert_eq!(compact(0), None);
    }

    #[test]
    fn a_grant_holds_for_its_epoch_and_permissions_until_a_relabel() {
        let g = InodeGrant::new();
        let (r, w) = (
            compact(common_file::READ).unwrap_or(0),
            compact(common_file::WRITE).unwrap_or(0),
        );
        assert!(!g.holds(0, r), "no one holds epoch 0");
        let seen = g.seen();
        g.record(seen, 7, r);
        assert!(g.holds(7, r) && !g.holds(7, r | w) && !g.holds(8, r));
        g.record(g.seen(), 7, w);
        assert!(g.holds(7, r | w));
        g.record(g.seen(), 8, w);
        assert!(
            g.holds(8, w) && !g.holds(8, r) && !g.holds(7, w),
            "another epoch replaces it"
        );
        // A check that took its view before a relabel records nothing, during or after it.
        let before = g.seen();
        g.begin_relabel();
        assert!(!g.holds(8, w));
        let during = g.seen();
        g.record(before, 8, w);
        g.record(during, 8, w);
        assert!(!g.holds(8, w));
        g.end_relabel();
        g.record(before, 8, w);
        g.record(during, 8, w);
        assert!(!g.holds(8, w));
        g.record(g.seen(), 8, w);
        assert!(g.holds(8, w));
    }

    /// Issue 19, items 2 and 10: the view a check took on a cold inode (the word then back to
    /// what it was after every relabel), before 1, 2, or 16,384 relabels and more, never lets
    /// its grant land; one taken after them does.
    #[test]
    fn a_view_taken_before_any_number_of_relabels_never_records() {
        let w = compact(common_file::WRITE).unwrap_or(0);
        for n in [1u32, 2, 16_384, 32_768, 65_536] {
            let g = InodeGrant::new();
            let before = g.seen();
            for _ in 0..n {
                g.begin_relabel();
                g.end_relabel();
            }
            g.record(before, 8, w);
            assert!(
                !g.holds(8, w),
                "a grant seen before {n} relabels was recorded"
            );
            g.record(g.seen(), 8, w);
            assert!(g.holds(8, w), "after {n} relabels");
        }
    }

    #[test]
    fn a_credentials_epoch_answers_only_for_its_sid() {
        let e = CredEpoch::new(Sid(5));
        e.set(Sid(5), Seqno(1), 7);
        assert_eq!(e.get(Sid(5), Seqno(1)), Some(7));
        assert_eq!(e.get(Sid(5), Seqno(2)), None);
        assert_eq!(e.get(Sid(6), Seqno(1)), None, "kept for SID 5");
        e.set(Sid(6), Seqno(1), 9);
        assert_eq!(
            e.get(Sid(5), Seqno(1)),
            Some(7),
            "an id of another SID is not kept"
        );
        assert_eq!(e.get(Sid(6), Seqno(1)), None);
    }

    #[test]
    fn epoch_ids_are_per_sid_and_seqno() {
        let e = Epochs::default();
        let a = e.intern(Sid(5), Seqno(1));
        assert_ne!(a, 0);
        assert_eq!(e.intern(Sid(5), Seqno(1)), a);
        let b = e.intern(Sid(6), Seqno(1));
        let c = e.intern(Sid(5), Seqno(2));
        assert!(b != a && c != a && c != b);
        assert_ne!(
            e.intern(Sid(5), Seqno(1)),
            a,
            "interned again after another seqno's: a fresh id"
        );
    }

    #[test]
    fn an_intern_never_waits() {
        let e = Epochs::default();
        let held = e.ids.lock();
        // As in a child forked while another thread held the table: nothing remembered, at once.
        let (tx, rx) = std::sync::mpsc::channel();
        let got = std::thread::scope(|s| {
            s.spawn(|| tx.send(e.intern(Sid(5), Seqno(1))));
            let got = rx.recv_timeout(std::time::Duration::from_secs(5));
            drop(held);
            got
        });
        assert_eq!(got, Ok(0), "an intern waited for the table");
        assert_ne!(e.intern(Sid(5), Seqno(1)), 0);
    }

    #[test]
    fn overlapping_relabels_take_turns() {
        let g = InodeGrant::new();
        let w = compact(common_file::WRITE).unwrap_or(0);
        let second_began = std::sync::atomic::AtomicBool::new(false);
        g.begin_relabel();
        std::thread::scope(|s| {
            s.spawn(|| {
                g.begin_relabel();
                second_began.store(true, SeqCst);
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(
                !second_began.load(SeqCst),
                "a second relabel began while the first was in progress"
            );
            g.end_relabel();
            while !second_began.load(SeqCst) {
                std::thread::yield_now();
            }
        });
        // The second relabel is still in progress: its SID is not stored yet, so no grant may
        // be recorded (a check would have read the first relabel's SID).
        g.record(g.seen(), 8, w);
        assert!(!g.holds(8, w));
        g.end_relabel();
        g.record(g.seen(), 8, w);
        assert!(g.holds(8, w));
    }
}
