//! Extended-permission (ioctl and netlink message) decisions kept per triple, kind and driver, as the kernel keeps
//! xperms nodes beside each AVC entry, in the same design as the main table: fixed sets of
//! seqlock-protected slots, all atomics, read without locks or writes; every entry tagged with
//! the seqno of the policy that made it, so a policy change retires them all at once without a
//! walk or a clear, and an insert reuses their slots first. The size never changes.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering::*};

use seaccess_types::{ClassId, Sid, XpermsDecision};

use crate::table::{seqlock_release, seqlock_take};

pub(crate) type XpKey = (Sid, Sid, ClassId);

/// The kind of extended permission an entry is for (the kernel's AVC_EXT_IOCTL and
/// AVC_EXT_NLMSG): their driver maps and decisions are apart.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum XpKind {
    Ioctl = 0,
    Nlmsg = 1,
}

const WAYS: usize = 4;

/// Whether `driver` is flagged in a driver bitmap.
pub(crate) fn flagged(map: &[u32; 8], driver: u8) -> bool {
    map[usize::from(driver >> 5)] & (1 << (driver & 31)) != 0
}

/// One entry: a seqlock version, the key, and `N` words of payload.
struct Slot<const N: usize> {
    /// version | tag << 32. The version is odd while a writer fills the slot; the tag is the
    /// main table's permissive-grant tag (0: no grant).
    head: AtomicU64,
    /// ssid << 32 | tsid; 0 when empty (SID 0 is never valid).
    sids: AtomicU64,
    /// class | driver << 16 | kind << 24 | seqno << 32.
    meta: AtomicU64,
    data: [AtomicU64; N],
}

impl<const N: usize> Default for Slot<N> {
    fn default() -> Self {
        Slot {
            head: AtomicU64::new(0),
            sids: AtomicU64::new(0),
            meta: AtomicU64::new(0),
            data: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// Where a slot's key and seqno live, packed as in the slot.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
struct Tag {
    sids: u64,
    /// class | driver << 16 | kind << 24 (no seqno).
    what: u64,
}

impl Tag {
    fn new(key: XpKey, kind: XpKind, driver: u8) -> Tag {
        let what = u64::from(key.2 .0) | (u64::from(driver) << 16) | ((kind as u64) << 24);
        Tag {
            sids: (u64::from(key.0 .0) << 32) | u64::from(key.1 .0),
            what,
        }
    }
    fn meta(self, seqno: u32) -> u64 {
        self.what | (u64::from(seqno) << 32)
    }
    fn hash(self) -> u64 {
        (self.sids ^ (self.what << 17)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

impl<const N: usize> Slot<N> {
    /// The payload and grant tag if the slot holds `tag`'s entry of policy `seqno`.
    fn read(&self, tag: Tag, seqno: u32) -> Option<([u64; N], u8)> {
        let h = self.head.load(Acquire);
        if h & 1 != 0
            || self.sids.load(Relaxed) != tag.sids
            || self.meta.load(Relaxed) != tag.meta(seqno)
        {
            return None;
        }
        let data = std::array::from_fn(|i| self.data[i].load(Relaxed));
        fence(Acquire);
        (self.head.load(Relaxed) == h).then_some((data, (h >> 32) as u8))
    }

    /// Takes the slot for writing; None if another writer holds it.
    fn lock(&self) -> Option<u64> {
        seqlock_take(&self.head)
    }

    fn unlock(&self, h: u64, grant_tag: u8) {
        seqlock_release(&self.head, h, u64::from(grant_tag));
    }

    /// The slot's seqno if it holds an entry (read without the seqlock: only a hint).
    fn occupant(&self) -> Option<u32> {
        (self.sids.load(Relaxed) != 0).then(|| (self.meta.load(Relaxed) >> 32) as u32)
    }

    /// Empties and releases the slot if a writer held it at a fork (as the main table's
    /// `Slot::unstick`); only in the child, before it runs a second thread.
    fn unstick(&self) {
        let h = self.head.load(Acquire);
        if h & 1 == 0 {
            return;
        }
        self.sids.store(0, Relaxed);
        self.meta.store(0, Relaxed);
        for w in &self.data {
            w.store(0, Relaxed);
        }
        self.unlock(h - 1, 0);
    }
}

#[repr(align(128))]
struct Set<const N: usize> {
    slots: [Slot<N>; WAYS],
}

/// A fixed set-associative table of `N`-word entries.
struct Table<const N: usize> {
    sets: Box<[Set<N>]>,
    mask: usize,
    next_victim: AtomicU32,
}

impl<const N: usize> Table<N> {
    fn new(capacity: usize) -> Self {
        let nsets = capacity.div_ceil(WAYS).max(1).next_power_of_two();
        let sets = (0..nsets)
            .map(|_| Set {
                slots: std::array::from_fn(|_| Slot::default()),
            })
            .collect();
        Table {
            sets,
            mask: nsets - 1,
            next_victim: AtomicU32::new(0),
        }
    }

    fn set(&self, tag: Tag) -> &Set<N> {
        &self.sets[(tag.hash() >> 40) as usize & self.mask]
    }

    fn get(&self, tag: Tag, seqno: u32) -> Option<([u64; N], u8)> {
        self.set(tag).slots.iter().find_map(|s| s.read(tag, seqno))
    }

    /// Stores an entry of policy `seqno` (the key's own slot, else a free or older one, else a
    /// victim); skipped if the slot is busy.
    fn insert(&self, tag: Tag, seqno: u32, data: [u64; N]) {
        let set = self.set(tag);
        let own = set.slots.iter().position(|s| {
            s.sids.load(Relaxed) == tag.sids && s.meta.load(Relaxed) as u32 as u64 == tag.what
        });
        let free = || set.slots.iter().position(|s| s.occupant() != Some(seqno));
        let i = own
            .or_else(free)
            .unwrap_or_else(|| self.next_victim.fetch_add(1, Relaxed) as usize % WAYS);
        let Some(slot) = set.slots.get(i) else { return };
        let Some(h) = slot.lock() else { return };
        slot.sids.store(tag.sids, Relaxed);
        slot.meta.store(tag.meta(seqno), Relaxed);
        for (w, d) in slot.data.iter().zip(data) {
            w.store(d, Relaxed);
        }
        slot.unlock(h, 0);
    }

    /// Changes the entry of `tag` and policy `seqno` in place, under its slot lock, if present.
    fn update(&self, tag: Tag, seqno: u32, f: impl Fn(&[AtomicU64; N]), grant_tag: Option<u8>) {
        for slot in self.set(tag).slots.iter() {
            if slot.read(tag, seqno).is_none() {
                continue;
            }
            let Some(h) = slot.lock() else { return };
            let mut kept = (h >> 32) as u8;
            // Re-check under the lock: the slot may have been refilled since.
            let same =
                slot.sids.load(Relaxed) == tag.sids && slot.meta.load(Relaxed) == tag.meta(seqno);
            if same {
                f(&slot.data);
                if let Some(t) = grant_tag {
                    kept = t;
                }
            }
            slot.unlock(h, kept);
            if same {
                return;
            }
        }
    }

    fn unstick(&self) {
        for slot in self.sets.iter().flat_map(|s| s.slots.iter()) {
            slot.unstick();
        }
    }

    /// Empties every slot under its lock (a flush), waiting out a writer that holds one.
    fn clear(&self) {
        for slot in self.sets.iter().flat_map(|s| s.slots.iter()) {
            if slot.sids.load(Relaxed) == 0 {
                continue;
            }
            let h = loop {
                match slot.lock() {
                    Some(h) => break h,
                    None => std::hint::spin_loop(),
                }
            };
            slot.sids.store(0, Relaxed);
            slot.meta.store(0, Relaxed);
            for w in &slot.data {
                w.store(0, Relaxed);
            }
            slot.unlock(h, 0);
        }
    }

    /// Entries of policy `seqno`.
    fn live(&self, seqno: u32) -> usize {
        self.sets
            .iter()
            .flat_map(|s| s.slots.iter())
            .filter(|s| s.occupant() == Some(seqno))
            .count()
    }

    fn capacity(&self) -> usize {
        self.sets.len() * WAYS
    }
}

fn pack(v: &[u32; 8]) -> [u64; 4] {
    std::array::from_fn(|i| u64::from(v[2 * i]) | (u64::from(v[2 * i + 1]) << 32))
}

fn unpack(w: &[u64]) -> [u32; 8] {
    std::array::from_fn(|i| w.get(i / 2).map_or(0, |x| (x >> (32 * (i % 2))) as u32))
}

/// The drivers map of a triple: four words of bitmap and one saying whether any rule covers it.
const DRIVER_WORDS: usize = 5;
/// A driver's decision: allowed, auditallow and dontaudit, four words each.
const DECISION_WORDS: usize = 12;

pub(crate) struct XpermCache {
    drivers: Table<DRIVER_WORDS>,
    decisions: Table<DECISION_WORDS>,
}

impl XpermCache {
    /// Room for at least `capacity` triples' driver maps and as many driver decisions.
    pub fn new(capacity: usize) -> XpermCache {
        XpermCache {
            drivers: Table::new(capacity),
            decisions: Table::new(capacity),
        }
    }

    /// The cached driver map of a triple under policy `latest`: Some(None) when no rule covers
    /// the triple, None when not cached.
    pub fn drivers(&self, key: XpKey, kind: XpKind, latest: u32) -> Option<Option<[u32; 8]>> {
        let (w, _) = self.drivers.get(Tag::new(key, kind, 0), latest)?;
        Some((w[4] != 0).then(|| unpack(&w[..4])))
    }

    pub fn store_drivers(&self, key: XpKey, kind: XpKind, flagged: Option<[u32; 8]>, seqno: u32) {
        let [a, b, c, d] = pack(&flagged.unwrap_or_default());
        self.drivers.insert(
            Tag::new(key, kind, 0),
            seqno,
            [a, b, c, d, u64::from(flagged.is_some())],
        );
    }

    /// The cached decision of a driver under policy `latest`, unless it holds a permissive
    /// grant of another mode epoch than `tag`'s (as the main table's entries).
    pub fn decision(
        &self,
        key: XpKey,
        kind: XpKind,
        driver: u8,
        latest: u32,
        tag: u8,
    ) -> Option<XpermsDecision> {
        let (w, t) = self.decisions.get(Tag::new(key, kind, driver), latest)?;
        if t != 0 && t != tag {
            return None;
        }
        Some(XpermsDecision {
            driver,
            allowed: unpack(&w[0..4]),
            auditallow: unpack(&w[4..8]),
            dontaudit: unpack(&w[8..12]),
        })
    }

    pub fn store_decision(&self, key: XpKey, kind: XpKind, xpd: XpermsDecision, seqno: u32) {
        let mut w = [0u64; DECISION_WORDS];
        for (i, v) in [&xpd.allowed, &xpd.auditallow, &xpd.dontaudit]
            .into_iter()
            .enumerate()
        {
            w[4 * i..4 * i + 4].copy_from_slice(&pack(v));
        }
        self.decisions
            .insert(Tag::new(key, kind, xpd.driver), seqno, w);
    }

    /// A permissive grant of one command: allowed from now on, so it is reported once (the
    /// kernel's avc_xperms_allow_perm), on the driver's decision of policy `latest` only. Only
    /// a driver that has a decision can hold the grant. `tag` as for the main table's grants.
    pub fn grant(
        &self,
        key: XpKey,
        kind: XpKind,
        driver: u8,
        func: u8,
        latest: u32,
        tag: Option<u8>,
    ) {
        let bit = 1u64 << (u32::from(func & 63));
        let word = usize::from(func >> 6);
        self.decisions.update(
            Tag::new(key, kind, driver),
            latest,
            |data| {
                if let Some(w) = data.get(word) {
                    w.fetch_or(bit, Relaxed);
                }
            },
            tag,
        );
    }

    /// Empties and releases every slot a writer held at a fork; only in the child.
    pub fn unstick(&self) {
        self.drivers.unstick();
        self.decisions.unstick();
    }

    /// Driver maps and driver decisions held for policy `seqno`.
    /// Empties both tables (a flush).
    pub fn clear(&self) {
        self.drivers.clear();
        self.decisions.clear();
    }

    pub fn live(&self, seqno: u32) -> (usize, usize) {
        (self.drivers.live(seqno), self.decisions.live(seqno))
    }

    /// How many driver maps and driver decisions the cache can hold.
    pub fn capacity(&self) -> (usize, usize) {
        (self.drivers.capacity(), self.decisions.capacity())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn decisions_round_trip_and_grants_set_one_command() {
        let c = XpermCache::new(16);
        let key = (Sid(1), Sid(2), ClassId(3));
        let mut xpd = XpermsDecision {
            driver: 0x89,
            ..Default::default()
        };
        xpd.allowed[7] = 1 << 31;
        xpd.auditallow[1] = 1 << 1;
        xpd.dontaudit[0] = 1;
        c.store_decision(key, XpKind::Ioctl, xpd, 5);
        assert_eq!(c.decision(key, XpKind::Ioctl, 0x89, 5, 0), Some(xpd));
        assert_eq!(c.decision(key, XpKind::Ioctl, 0x88, 5, 0), None);
        assert_eq!(
            c.decision(key, XpKind::Ioctl, 0x89, 6, 0),
            None,
            "an entry of policy 5 answered for policy 6"
        );
        for func in [33u8, 200] {
            c.grant(key, XpKind::Ioctl, 0x89, func, 5, Some(3));
        }
        let got = c.decision(key, XpKind::Ioctl, 0x89, 5, 3).unwrap();
        assert!(
            got.allows(33)
                && got.allows(200)
                && got.allows(255)
                && !got.allows(34)
                && !got.allows(32)
        );
        assert_eq!(
            (got.auditallow, got.dontaudit),
            (xpd.auditallow, xpd.dontaudit)
        );
        assert_eq!(
            c.decision(key, XpKind::Ioctl, 0x89, 5, 4),
            None,
            "a grant of epoch 3 answered in epoch 4"
        );
        // A grant on a decision of another policy changes nothing.
        c.store_decision(key, XpKind::Ioctl, xpd, 5);
        c.grant(key, XpKind::Ioctl, 0x89, 34, 4, None);
        assert_eq!(c.decision(key, XpKind::Ioctl, 0x89, 5, 0), Some(xpd));
        // Driver maps: none, or some.
        c.store_drivers(key, XpKind::Ioctl, None, 5);
        assert_eq!(c.drivers(key, XpKind::Ioctl, 5), Some(None));
        let mut map = [0u32; 8];
        map[4] = 1 << 9;
        c.store_drivers(key, XpKind::Ioctl, Some(map), 5);
        assert_eq!(c.drivers(key, XpKind::Ioctl, 5), Some(Some(map)));
        assert_eq!(c.live(5), (1, 1));
        // A netlink message type's entries are apart from the ioctl driver's of the same number.
        assert_eq!(c.drivers(key, XpKind::Nlmsg, 5), None);
        assert_eq!(c.decision(key, XpKind::Nlmsg, 0x89, 5, 0), None);
        c.store_decision(
            key,
            XpKind::Nlmsg,
            XpermsDecision {
                driver: 0x89,
                ..Default::default()
            },
            5,
        );
        assert!(!c
            .decision(key, XpKind::Nlmsg, 0x89, 5, 0)
            .unwrap()
            .allows(255));
        assert!(c
            .decision(key, XpKind::Ioctl, 0x89, 5, 0)
            .unwrap()
            .allows(255));
    }
}
