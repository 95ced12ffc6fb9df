//! The cache's storage: a set-associative table of seqlock-protected slots, all atomics.
//!
//! A hit reads one set (four slots, two cache lines) and writes nothing: each slot carries a
//! version that is odd while a writer fills it, and a reader that sees the version change
//! while it read simply counts a miss. Writers (misses, flushes) take a slot by moving its
//! version from even to odd with one compare-and-swap; a writer that loses the race skips the
//! store, so concurrent misses on one key may compute twice but store once. Entries of an older
//! policy are never cleared: a lookup ignores them and an insert takes their slot first.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering::*};

use seaccess_types::{AccessVector, AvDecision, ClassId, DecisionFlags, Seqno, Sid};

pub(crate) const WAYS: usize = 4;

/// One entry in four words: the first holds the seqlock version (low half) with the class,
/// the decision's flags and the grant tag (high half), so one load both checks the lock and
/// the class.
#[derive(Default)]
struct Slot {
    /// version | class << 32 | flags << 48 | tag << 56. The version is odd while a writer fills
    /// the slot. The tag is 0, or the low byte of the permissive-mode epoch in which a
    /// permission the policy denies was granted into `grants` (see [`Table::get`]).
    ///
    /// Why 32 bits of version are enough: a reader is fooled only if, between its two loads of
    /// the head, exactly a multiple of 2^31 writes complete on this one slot. Each write is a
    /// miss that evicts here (one in four of a set's, round robin) after a decision computed
    /// by the server, so that is billions of misses while one thread stays between two loads
    /// with nothing between them that blocks: only a debugger holding that one thread could
    /// arrange it, and it can write the process's memory anyway. The head has no room for more
    /// bits without a fifth word, which every hit would read.
    head: AtomicU64,
    /// ssid << 32 | tsid; 0 when empty (SID 0 is never valid).
    sids: AtomicU64,
    /// allowed | auditallow << 32.
    grants: AtomicU64,
    /// seqno | auditdeny << 32 (the seqno low, so that a hit compares it without a shift).
    seq_audit: AtomicU64,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) struct Key {
    sids: u64,
    class: u16,
}

impl Key {
    #[inline(always)]
    pub fn new(ssid: Sid, tsid: Sid, class: ClassId) -> Key {
        Key {
            sids: (u64::from(ssid.0) << 32) | u64::from(tsid.0),
            class: class.0,
        }
    }
    /// (source, target, class).
    pub fn parts(&self) -> (Sid, Sid, ClassId) {
        (
            Sid((self.sids >> 32) as u32),
            Sid(self.sids as u32),
            ClassId(self.class),
        )
    }

    /// The head of an answerable untagged entry of this key, under [`MATCH`]: even version,
    /// this class, no tag.
    #[inline(always)]
    fn want(&self) -> u64 {
        u64::from(self.class) << 32
    }

    #[inline(always)]
    fn hash(&self) -> u64 {
        // A multiplicative mix: SIDs are small consecutive integers, so spread them.
        let x = self.sids ^ (u64::from(self.class) << 17);
        x.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

const VERSION: u64 = 0xffff_ffff;
/// The grant tag's bits in a slot's head.
const TAG: u64 = 0xff << 56;
/// The bits of a slot's head one comparison tests on a hit: the version's low bit (set while a
/// writer fills the slot), the class and the grant tag.
const MATCH: u64 = 1 | (0xffff << 32) | TAG;

/// Takes a seqlock word for writing (even to odd) with one compare-and-swap; None if another
/// writer holds it. Shared by the main table's slots and the ioctl cache's.
pub(crate) fn seqlock_take(head: &AtomicU64) -> Option<u64> {
    let h = head.load(Relaxed);
    if h & 1 != 0 {
        return None;
    }
    head.compare_exchange(h, h + 1, Acquire, Relaxed).ok()?;
    fence(Release);
    Some(h)
}

/// Releases a seqlock word taken at `h`: the next even version, with `high` in the upper half.
pub(crate) fn seqlock_release(head: &AtomicU64, h: u64, high: u64) {
    let version = (h & VERSION).wrapping_add(2) & VERSION;
    head.store(version | (high << 32), Release);
}

/// The decision flags a slot keeps (the kernel defines only AVD_FLAGS_PERMISSIVE); the byte
/// above them holds the grant tag.
const FLAGS: u16 = 0xff;

/// Whether an entry with grant tag `tag` may answer a lookup made under tag `current`: an
/// untagged entry always; a tagged one only in the permissive epoch that granted it. Epochs
/// are odd while permissive and even while enforcing, and tags are only ever taken from odd
/// epochs, so no tagged entry ever answers in enforcing mode, however the counter wraps.
#[inline(always)]
fn accepts(tag: u8, current: u8) -> bool {
    tag == 0 || tag == current
}

/// The mode epoch a lookup is made under, whole as the cache's state word holds it (its high
/// half): the hit takes the grant tag out of it only for an entry that carries one, rather than
/// on every lookup.
#[derive(Copy, Clone)]
pub(crate) struct Epoch(u64);

impl Epoch {
    /// The epoch of a state word (mode epoch in the high half).
    #[inline(always)]
    pub fn of_state(word: u64) -> Epoch {
        Epoch(word)
    }

    /// The grant tag: the epoch's low byte.
    #[inline(always)]
    fn tag(self) -> u8 {
        (self.0 >> 32) as u8
    }

    /// The epoch whose grant tag is `tag`.
    #[cfg(test)]
    fn tagged(tag: u8) -> Epoch {
        Epoch(u64::from(tag) << 32)
    }
}

impl Slot {
    /// The slot's decision for `key` of policy `latest`, if it may answer under the grant tag
    /// of epoch `current` (flags returned without the tag).
    ///
    /// The head is tested with one masked comparison against the key's (`want`): an even
    /// version, the key's class and no grant tag, which is every entry but a permissive grant.
    /// Only an entry that fails it is looked at again, for a tag that may answer now.
    #[inline(always)]
    fn read(&self, key: Key, latest: u32, current: Epoch) -> Option<AvDecision> {
        let h1 = self.head.load(Acquire);
        if h1 & MATCH != key.want() && !Self::tagged_match(h1, key, current) {
            return None;
        }
        if self.sids.load(Relaxed) != key.sids {
            return None;
        }
        let g = self.grants.load(Relaxed);
        let a = self.seq_audit.load(Relaxed);
        fence(Acquire);
        if self.head.load(Relaxed) != h1 || a as u32 != latest {
            return None;
        }
        Some(AvDecision {
            allowed: AccessVector(g as u32),
            decided: AccessVector::ALL,
            auditallow: AccessVector((g >> 32) as u32),
            auditdeny: AccessVector((a >> 32) as u32),
            seqno: Seqno(latest),
            flags: DecisionFlags(u32::from((h1 >> 48) as u16 & FLAGS)),
        })
    }

    /// Whether a head that failed the one-comparison test is still the key's entry, holding a
    /// permissive grant that may answer under tag `current` (see [`accepts`]).
    #[inline(always)]
    fn tagged_match(h: u64, key: Key, current: Epoch) -> bool {
        h & (MATCH & !TAG) == key.want() && Self::tag_accepted(h, current)
    }

    /// Out of line: only an entry of the key's class that carries a grant tag comes here, so the
    /// hit never takes the tag out of the epoch.
    #[cold]
    #[inline(never)]
    fn tag_accepted(h: u64, current: Epoch) -> bool {
        accepts((h >> 56) as u8, current.tag())
    }

    /// Takes the slot for writing; None if another writer holds it.
    fn lock(&self) -> Option<u64> {
        seqlock_take(&self.head)
    }

    /// Releases the slot with a new class and flags (grant tag in the high byte).
    fn unlock(&self, h: u64, class: u16, flags: u16) {
        seqlock_release(&self.head, h, u64::from(class) | (u64::from(flags) << 16));
    }

    fn class(&self) -> u16 {
        (self.head.load(Relaxed) >> 32) as u16
    }

    fn fill(&self, key: Key, d: &AvDecision) {
        self.sids.store(key.sids, Relaxed);
        self.grants.store(
            u64::from(d.allowed.0) | (u64::from(d.auditallow.0) << 32),
            Relaxed,
        );
        self.seq_audit.store(
            u64::from(d.seqno.0) | (u64::from(d.auditdeny.0) << 32),
            Relaxed,
        );
    }

    /// The key of the slot's entry if it is one of policy `seqno`, read consistently.
    fn key_of(&self, seqno: u32) -> Option<Key> {
        let h = self.head.load(Acquire);
        let sids = self.sids.load(Relaxed);
        let a = self.seq_audit.load(Relaxed);
        fence(Acquire);
        (h & 1 == 0 && sids != 0 && a as u32 == seqno && self.head.load(Relaxed) == h).then_some(
            Key {
                sids,
                class: (h >> 32) as u16,
            },
        )
    }

    /// The key of the slot's entry if it is one of policy `seqno` carrying a grant tag other
    /// than 0 and `keep`.
    fn tagged_key_of(&self, seqno: u32, keep: u8) -> Option<Key> {
        let h = self.head.load(Acquire);
        let tag = (h >> 56) as u8;
        if tag == 0 || tag == keep {
            return None;
        }
        self.key_of(seqno)
    }

    /// The slot's seqno if it holds an entry (read without the seqlock: only a hint).
    fn occupant(&self) -> Option<u32> {
        (self.sids.load(Relaxed) != 0).then(|| self.seq_audit.load(Relaxed) as u32)
    }

    /// In the child of a fork, whose only thread is the one that forked: if a writer of the
    /// parent held the slot at the fork (its version odd), that writer is not in the child to
    /// release it, so the slot is emptied and released here, or a flush would wait on it
    /// forever. Sound only with no other thread running.
    fn unstick(&self) {
        let h = self.head.load(Acquire);
        if h & 1 == 0 {
            return;
        }
        self.sids.store(0, Relaxed);
        self.grants.store(0, Relaxed);
        self.seq_audit.store(0, Relaxed);
        self.unlock(h - 1, 0, 0);
    }

    /// Empties the slot under its lock, waiting out a writer that holds it, so that a reader
    /// sees the whole entry or none.
    fn clear(&self) {
        if self.sids.load(Relaxed) == 0 {
            return;
        }
        let h = loop {
            match self.lock() {
                Some(h) => break h,
                None => std::hint::spin_loop(),
            }
        };
        self.sids.store(0, Relaxed);
        self.grants.store(0, Relaxed);
        self.seq_audit.store(0, Relaxed);
        self.unlock(h, 0, 0);
    }
}

#[repr(align(128))]
#[derive(Default)]
struct Set {
    slots: [Slot; WAYS],
}

/// What an insert did, for the statistics.
pub(crate) enum Stored {
    /// Into an empty slot, or over an entry of an older policy.
    Fresh { freed_stale: bool },
    /// Over a current entry: a reclaim.
    Evicted,
    /// Updated the entry for the same key.
    Updated,
    /// Not stored (slot busy).
    Skipped,
}

pub(crate) struct Table {
    sets: Box<[Set]>,
    mask: usize,
    /// Round-robin victim choice; written only by inserts.
    next_victim: AtomicU32,
}

impl Table {
    /// A table of at least `capacity` entries (rounded up to a power of two of sets).
    pub fn new(capacity: usize) -> Table {
        let nsets = capacity.div_ceil(WAYS).max(1).next_power_of_two();
        let sets: Box<[Set]> = (0..nsets).map(|_| Set::default()).collect();
        Table {
            sets,
            mask: nsets - 1,
            next_victim: AtomicU32::new(0),
        }
    }

    pub fn capacity(&self) -> usize {
        self.sets.len() * WAYS
    }

    /// Empties and releases every slot a writer held at a fork (see [`Slot::unstick`]); only in
    /// the child, before it runs a second thread.
    pub fn unstick(&self) {
        for slot in self.sets.iter().flat_map(|s| s.slots.iter()) {
            slot.unstick();
        }
    }

    pub fn buckets(&self) -> usize {
        self.sets.len()
    }

    /// The key's two candidate sets (two-choice hashing: a set overflows only when both do).
    #[inline(always)]
    fn sets_of(&self, key: Key) -> (usize, usize) {
        let h = key.hash();
        (self.first(h), self.second(h))
    }

    #[inline(always)]
    fn first(&self, h: u64) -> usize {
        (h >> 40) as usize & self.mask
    }

    #[inline(always)]
    fn second(&self, h: u64) -> usize {
        let b = (h >> 20) as usize & self.mask;
        if b == self.first(h) {
            b ^ (1 & self.mask)
        } else {
            b
        }
    }

    /// An answerable entry for `key` in one set. A key may have copies in both of its sets
    /// (two threads missing on it at once choose a set each), so a copy of an older policy, or
    /// one holding a grant of another mode epoch, is passed over rather than ending the search.
    #[inline(always)]
    fn find(&self, set: usize, key: Key, latest: u32, epoch: Epoch) -> Option<AvDecision> {
        // `get`, not an index: no panic site in the library (an empty result is a miss).
        for slot in &self.sets.get(set)?.slots {
            if let Some(d) = slot.read(key, latest, epoch) {
                return Some(d);
            }
        }
        None
    }

    /// The cached decision for `key` made under policy `latest`, if any, and if it holds no
    /// permissive grant other than one of `epoch`'s grant tag (its low byte).
    #[inline(always)]
    pub fn get(&self, key: Key, latest: u32, epoch: Epoch) -> Option<AvDecision> {
        let h = key.hash();
        if let Some(d) = self.find(self.first(h), key, latest, epoch) {
            return Some(d);
        }
        self.find(self.second(h), key, latest, epoch)
    }

    /// How full a set is with entries of `latest` (free and stale slots do not count).
    fn load(&self, set: usize, latest: u32) -> usize {
        self.sets[set]
            .slots
            .iter()
            .filter(|s| s.occupant() == Some(latest))
            .count()
    }

    pub fn insert(&self, key: Key, d: &AvDecision, latest: u32) -> Stored {
        let (a, b) = self.sets_of(key);
        // Where the key already is, else the emptier of its two sets.
        let in_b = self.sets[b]
            .slots
            .iter()
            .any(|s| s.sids.load(Relaxed) == key.sids && s.class() == key.class);
        let set = if in_b
            || (self.load(b, latest) < self.load(a, latest)
                && !self.sets[a]
                    .slots
                    .iter()
                    .any(|s| s.sids.load(Relaxed) == key.sids && s.class() == key.class))
        {
            &self.sets[b]
        } else {
            &self.sets[a]
        };
        // The same key, else an empty or stale slot, else a victim.
        let mut pick = None;
        let mut fresh = None;
        for (i, slot) in set.slots.iter().enumerate() {
            if slot.sids.load(Relaxed) == key.sids && slot.class() == key.class {
                // The key's own slot: an update, or a new entry where the old one is dead.
                let what = if slot.occupant() == Some(latest) {
                    Stored::Updated
                } else {
                    Stored::Fresh { freed_stale: true }
                };
                pick = Some((i, what));
                break;
            }
            if fresh.is_none() {
                match slot.occupant() {
                    None => fresh = Some((i, Stored::Fresh { freed_stale: false })),
                    Some(s) if s != latest => {
                        fresh = Some((i, Stored::Fresh { freed_stale: true }))
                    }
                    _ => {}
                }
            }
        }
        let (i, what) = match pick.or(fresh) {
            Some(p) => p,
            None => (
                (self.next_victim.fetch_add(1, Relaxed) as usize) % WAYS,
                Stored::Evicted,
            ),
        };
        let slot = &set.slots[i];
        let Some(h) = slot.lock() else {
            return Stored::Skipped;
        };
        slot.fill(key, d);
        // A fresh decision holds no grant: the tag is cleared.
        slot.unlock(h, key.class, d.flags.0 as u16 & FLAGS);
        what
    }

    /// Adds permissions to a cached entry of policy `latest` (a permissive grant), if present.
    /// A grant of permissive mode carries its epoch's `tag` (odd, never 0), which then limits
    /// the whole entry to that epoch; a permissive domain's grant (`tag` None) holds in every
    /// mode and leaves the tag as it is.
    pub fn grant(&self, key: Key, perms: AccessVector, latest: u32, tag: Option<u8>) {
        let (a, b) = self.sets_of(key);
        for slot in self.sets[a].slots.iter().chain(self.sets[b].slots.iter()) {
            // A hint read without the seqlock, whatever the entry's tag: checked again below
            // under the lock.
            if slot.sids.load(Relaxed) != key.sids
                || slot.class() != key.class
                || slot.occupant() != Some(latest)
            {
                continue;
            }
            let Some(h) = slot.lock() else { return };
            let mut head = (h >> 48) as u16;
            // Re-check under the lock, seqno included, as avc_update_node does: the slot may
            // have been refilled since, with this key's decision of a newer policy.
            let same = slot.sids.load(Relaxed) == key.sids
                && (h >> 32) as u16 == key.class
                && slot.seq_audit.load(Relaxed) as u32 == latest;
            if same {
                slot.grants.fetch_or(u64::from(perms.0), Relaxed);
                if let Some(t) = tag {
                    head = (head & FLAGS) | (u16::from(t) << 8);
                }
            }
            slot.unlock(h, (h >> 32) as u16, head);
            if same {
                return;
            }
        }
    }

    /// The keys of the entries of policy `seqno` holding a permissive grant of a tag other
    /// than `keep`: those a mode switch has made unanswerable.
    pub fn tagged_keys(&self, seqno: u32, keep: u8) -> Vec<Key> {
        self.sets
            .iter()
            .flat_map(|set| {
                set.slots
                    .iter()
                    .filter_map(|s| s.tagged_key_of(seqno, keep))
            })
            .collect()
    }

    /// The keys of the entries of policy `seqno`.
    pub fn live_keys(&self, seqno: u32) -> Vec<Key> {
        self.sets
            .iter()
            .flat_map(|set| set.slots.iter().filter_map(|s| s.key_of(seqno)))
            .collect()
    }

    /// Empties every slot (a flush): the entries are gone, not merely retired, whatever their
    /// policy.
    pub fn clear(&self) {
        for slot in self.sets.iter().flat_map(|set| set.slots.iter()) {
            slot.clear();
        }
    }

    /// (entries, sets in use, the most entries in one set) for entries of policy `latest`.
    pub fn occupancy(&self, latest: u32) -> (usize, usize, usize) {
        let (mut entries, mut used, mut longest) = (0, 0, 0);
        for set in self.sets.iter() {
            let n = set
                .slots
                .iter()
                .filter(|s| s.occupant() == Some(latest))
                .count();
            entries += n;
            used += usize::from(n > 0);
            longest = longest.max(n);
        }
        (entries, used, longest)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn dec(allowed: u32, seqno: u32) -> AvDecision {
        AvDecision {
            allowed: AccessVector(allowed),
            seqno: Seqno(seqno),
            ..AvDecision::deny_all(Seqno(seqno))
        }
    }

    // A slot a writer held at a fork stays odd in the child, where that writer does not exist:
    // a flush would spin on it forever. `unstick` (the child's repair) empties and releases it,
    // and leaves the other entries alone.
    #[test]
    fn a_slot_held_at_a_fork_is_released_in_the_child() {
        let t = std::sync::Arc::new(Table::new(16));
        let k = |s: u32| Key::new(Sid(s), Sid(s + 1), ClassId(3));
        t.insert(k(1), &dec(5, 1), 1);
        t.insert(k(7), &dec(6, 1), 1);
        let held = t
            .sets
            .iter()
            .flat_map(|s| s.slots.iter())
            .find(|s| s.sids.load(Relaxed) == k(1).sids)
            .unwrap();
        // The writer takes the slot and is gone (never releases it).
        assert!(held.lock().is_some());
        assert!(
            t.get(k(1), 1, Epoch::tagged(0)).is_none(),
            "a held slot is read as a miss"
        );
        t.unstick();
        assert!(
            t.get(k(1), 1, Epoch::tagged(0)).is_none(),
            "the half-written entry is emptied"
        );
        assert_eq!(
            t.get(k(7), 1, Epoch::tagged(0)).map(|d| d.allowed.0),
            Some(6),
            "other entries stay"
        );
        assert_eq!(held.head.load(Relaxed) & 1, 0);
        t.insert(k(1), &dec(8, 1), 1);
        assert_eq!(
            t.get(k(1), 1, Epoch::tagged(0)).map(|d| d.allowed.0),
            Some(8),
            "the slot is usable again"
        );
        // A flush ends, within a deadline.
        let (tx, rx) = std::sync::mpsc::channel();
        let t2 = t.clone();
        std::thread::spawn(move || {
            t2.clear();
            let _ = tx.send(());
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_secs(10)).is_ok(),
            "the flush waited on a slot held at the fork"
        );
    }

    #[test]
    fn insert_get_evict_retire() {
        let t = Table::new(8);
        assert_eq!(t.capacity(), 8);
        let k = |s: u32| Key::new(Sid(s), Sid(s + 1), ClassId(3));
        assert!(t.get(k(1), 1, Epoch::tagged(0)).is_none());
        t.insert(k(1), &dec(5, 1), 1);
        assert_eq!(
            t.get(k(1), 1, Epoch::tagged(0)).map(|d| d.allowed.0),
            Some(5)
        );
        // An entry of another policy is not returned.
        assert!(t.get(k(1), 2, Epoch::tagged(0)).is_none());
        // Many keys: the table never holds more than its capacity, and every present entry
        // is the one stored for its key.
        for s in 1..200 {
            t.insert(k(s), &dec(s, 1), 1);
        }
        let (entries, _, longest) = t.occupancy(1);
        assert!(entries <= 8 && longest <= WAYS);
        for s in 1..200 {
            if let Some(d) = t.get(k(s), 1, Epoch::tagged(0)) {
                assert_eq!(d.allowed.0, s);
            }
        }
        t.grant(k(199), AccessVector(0x100), 1, None);
        if let Some(d) = t.get(k(199), 1, Epoch::tagged(0)) {
            assert_eq!(d.allowed.0, 199 | 0x100);
        }
        // Entries of an older policy are dead: not returned, not counted, and reused first.
        assert_eq!(t.occupancy(2).0, 0);
        assert!(matches!(
            t.insert(k(500), &dec(7, 2), 2),
            Stored::Fresh { freed_stale: true }
        ));
        assert_eq!(
            t.get(k(500), 2, Epoch::tagged(0)).map(|d| d.allowed.0),
            Some(7)
        );
        // The live keys of a policy are exactly its entries, whole.
        let live = t.live_keys(2);
        assert_eq!(live, vec![k(500)]);
        assert_eq!(live[0].parts(), (Sid(500), Sid(501), ClassId(3)));
        let mut old = t.live_keys(1);
        old.sort_by_key(|k| k.sids);
        assert_eq!(old.len(), t.occupancy(1).0);
        assert!(old.iter().all(|k| t.get(*k, 1, Epoch::tagged(0)).is_some()));
    }

    #[test]
    fn a_tagged_grant_answers_only_in_its_epoch() {
        let t = Table::new(8);
        let k = Key::new(Sid(1), Sid(2), ClassId(3));
        t.insert(k, &dec(1, 1), 1);
        // Granted in permissive epoch 3: answers under tag 3 only, not in the enforcing epoch
        // after it (4) nor in a later permissive one (5).
        t.grant(k, AccessVector(2), 1, Some(3));
        assert_eq!(t.get(k, 1, Epoch::tagged(3)).map(|d| d.allowed.0), Some(3));
        assert!(t.get(k, 1, Epoch::tagged(4)).is_none() && t.get(k, 1, Epoch::tagged(5)).is_none());
        assert_eq!(t.tagged_keys(1, 5), vec![k]);
        assert!(t.tagged_keys(1, 3).is_empty());
        // The flags are returned without the tag.
        assert_eq!(
            t.get(k, 1, Epoch::tagged(3)).map(|d| d.flags),
            Some(DecisionFlags::default())
        );
        // A fresh decision clears the tag.
        t.insert(k, &dec(1, 1), 1);
        assert_eq!(t.get(k, 1, Epoch::tagged(4)).map(|d| d.allowed.0), Some(1));
        assert!(t.tagged_keys(1, 5).is_empty());
        // A permissive domain's grant is untagged and answers in every epoch.
        t.grant(k, AccessVector(4), 1, None);
        assert_eq!(t.get(k, 1, Epoch::tagged(4)).map(|d| d.allowed.0), Some(5));
    }

    /// Fills a slot of one set by hand, as a racing insert may.
    fn put(t: &Table, set: usize, way: usize, key: Key, d: &AvDecision) {
        let slot = &t.sets[set].slots[way];
        let h = slot.lock().unwrap();
        slot.fill(key, d);
        slot.unlock(h, key.class, d.flags.0 as u16);
    }

    /// Two threads missing on one key may store it in both of its sets. A stale copy in the
    /// first set must not hide the current one in the second, nor the ones stored after the
    /// next policy change.
    #[test]
    fn a_stale_copy_in_the_first_set_does_not_hide_the_key() {
        let t = Table::new(64);
        let k = Key::new(Sid(7), Sid(9), ClassId(2));
        let (a, b) = t.sets_of(k);
        assert_ne!(a, b);
        put(&t, a, 0, k, &dec(1, 1));
        put(&t, b, 0, k, &dec(2, 2));
        assert_eq!(
            t.get(k, 2, Epoch::tagged(0)).map(|d| d.allowed.0),
            Some(2),
            "the current copy in the second set"
        );
        // The next policy's decision is stored where the key is; it must then hit, every time.
        t.insert(k, &dec(3, 3), 3);
        for _ in 0..3 {
            assert_eq!(
                t.get(k, 3, Epoch::tagged(0)).map(|d| d.allowed.0),
                Some(3),
                "the key misses forever"
            );
        }
    }

    /// A grant lands only on the entry of the decision's seqno (the kernel's avc_update_node),
    /// past a stale copy of the key in the first set.
    #[test]
    fn a_grant_lands_on_the_entry_of_its_seqno_only() {
        let t = Table::new(64);
        let k = Key::new(Sid(7), Sid(9), ClassId(2));
        let (a, b) = t.sets_of(k);
        put(&t, a, 0, k, &dec(1, 1));
        put(&t, b, 0, k, &dec(2, 2));
        t.grant(k, AccessVector(0x10), 2, None);
        assert_eq!(
            t.get(k, 2, Epoch::tagged(0)).map(|d| d.allowed.0),
            Some(0x12),
            "the grant was lost on the stale copy"
        );
        // A grant made on a decision of policy 1 does not reach policy 2's entry.
        t.grant(k, AccessVector(0x100), 1, None);
        assert_eq!(
            t.get(k, 2, Epoch::tagged(0)).map(|d| d.allowed.0),
            Some(0x12)
        );
    }

    /// A reader sees a whole entry or none: a writer flips one slot between three
    /// self-consistent entries (two keys of one class under policy 1, and the first key again
    /// under policy 2, each with its own permissions), while readers check that every entry
    /// they are given is exactly the one stored for its key and seqno, never one entry's
    /// permissions with another's key or seqno (a torn read past the seqlock).
    #[test]
    fn a_read_racing_a_writer_is_whole_or_none() {
        use std::sync::atomic::AtomicBool;
        use std::time::{Duration, Instant};
        let t = Table::new(4);
        let (k1, k2) = (
            Key::new(Sid(1), Sid(2), ClassId(3)),
            Key::new(Sid(5), Sid(6), ClassId(3)),
        );
        let entry = |allowed: u32, seqno: u32| AvDecision {
            allowed: AccessVector(allowed),
            auditallow: AccessVector(!allowed),
            auditdeny: AccessVector(allowed.rotate_left(7)),
            ..AvDecision::deny_all(Seqno(seqno))
        };
        let entries = [
            (k1, entry(0x1111, 1)),
            (k2, entry(0x2222_0000, 1)),
            (k1, entry(0x4040_4040, 2)),
        ];
        let stop = AtomicBool::new(false);
        let deadline = Instant::now() + Duration::from_millis(700);
        let (reads, torn) = std::thread::scope(|sc| {
            sc.spawn(|| {
                let mut i = 0;
                while !stop.load(Relaxed) {
                    let (k, d) = &entries[i % entries.len()];
                    put(&t, 0, 0, *k, d);
                    i += 1;
                }
            });
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    sc.spawn(|| {
                        let (mut reads, mut torn) = (0u64, Vec::new());
                        while Instant::now() < deadline {
                            for (k, want) in &entries {
                                if let Some(got) = t.sets[0].slots[0].read(*k, want.seqno.0, Epoch::tagged(0)) {
                                    reads += 1;
                                    let whole = entries.iter().any(|(k2, d)| k2 == k && d.seqno == got.seqno && *d == got);
                                    if !whole && torn.len() < 5 {
                                        torn.push(format!("{k:?} wanted {want:?} or another whole entry of its key, read {got:?}"));
                                    }
                                }
                            }
                        }
                        (reads, torn)
                    })
                })
                .collect();
            let out = readers.into_iter().map(|r| r.join().unwrap()).fold(
                (0, Vec::new()),
                |mut acc, (n, tv)| {
                    acc.0 += n;
                    acc.1.extend(tv);
                    acc
                },
            );
            stop.store(true, Relaxed);
            out
        });
        assert!(
            reads > 1000,
            "only {reads} whole reads: the race did not happen"
        );
        assert!(torn.is_empty(), "torn reads: {torn:#?}");
    }
}
