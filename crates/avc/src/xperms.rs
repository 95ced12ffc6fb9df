//! Extended-permission (ioctl) decisions kept per triple and per driver, as the kernel keeps
//! xperms nodes beside each AVC entry: read without locks (papaya's maps), tagged with the seqno
//! of the policy that made them, bounded, and dropped on every policy change.

use papaya::HashMap;
use rustc_hash::FxBuildHasher;
use seaccess_types::{ClassId, Sid, XpermsDecision};

pub(crate) type XpKey = (Sid, Sid, ClassId);

/// Which drivers have rules for a triple (None: no extended-permission rule covers it).
#[derive(Copy, Clone)]
struct Drivers {
    seqno: u32,
    flagged: Option<[u32; 8]>,
}

#[derive(Copy, Clone)]
struct Decision {
    seqno: u32,
    xpd: XpermsDecision,
    /// As the main table's grant tag: 0, or the permissive epoch a grant was made in.
    tag: u8,
}

pub(crate) struct XpermCache {
    capacity: usize,
    drivers: HashMap<XpKey, Drivers, FxBuildHasher>,
    decisions: HashMap<(XpKey, u8), Decision, FxBuildHasher>,
}

/// Whether `driver` is flagged in a driver bitmap.
pub(crate) fn flagged(map: &[u32; 8], driver: u8) -> bool {
    map[usize::from(driver >> 5)] & (1 << (driver & 31)) != 0
}

impl XpermCache {
    /// Room for `capacity` triples and as many driver decisions.
    pub fn new(capacity: usize) -> XpermCache {
        XpermCache {
            capacity: capacity.max(1),
            drivers: HashMap::builder().hasher(FxBuildHasher).build(),
            decisions: HashMap::builder().hasher(FxBuildHasher).build(),
        }
    }

    /// The cached driver map of a triple under policy `latest`: Some(None) when no rule covers
    /// the triple, None when not cached.
    pub fn drivers(&self, key: XpKey, latest: u32) -> Option<Option<[u32; 8]>> {
        let m = self.drivers.pin();
        m.get(&key).filter(|d| d.seqno == latest).map(|d| d.flagged)
    }

    pub fn store_drivers(&self, key: XpKey, flagged: Option<[u32; 8]>, seqno: u32) {
        let m = self.drivers.pin();
        // Bounded by starting over: misses are rare, and a full map is mostly cold entries.
        if m.len() >= self.capacity {
            m.clear();
        }
        m.insert(key, Drivers { seqno, flagged });
    }

    /// The cached decision of a driver under policy `latest`, unless it holds a permissive
    /// grant of another epoch than `tag`'s.
    pub fn decision(&self, key: XpKey, driver: u8, latest: u32, tag: u8) -> Option<XpermsDecision> {
        let m = self.decisions.pin();
        m.get(&(key, driver)).filter(|d| d.seqno == latest && (d.tag == 0 || d.tag == tag)).map(|d| d.xpd)
    }

    pub fn store_decision(&self, key: XpKey, xpd: XpermsDecision, seqno: u32) {
        let m = self.decisions.pin();
        if m.len() >= self.capacity {
            m.clear();
        }
        m.insert((key, xpd.driver), Decision { seqno, xpd, tag: 0 });
    }

    /// A permissive grant of one command: allowed from now on, so it is reported once (the
    /// kernel's avc_xperms_allow_perm). Only a driver that has a decision can hold the grant.
    /// `tag` as for the main table's grants.
    pub fn grant(&self, key: XpKey, driver: u8, func: u8, latest: u32, tag: Option<u8>) {
        let m = self.decisions.pin();
        m.compute(
            (key, driver),
            |cur| match cur {
                Some((_, d)) if d.seqno == latest => {
                    let mut d = *d;
                    d.xpd.allowed[usize::from(func >> 5)] |= 1 << (func & 31);
                    if let Some(t) = tag {
                        d.tag = t;
                    }
                    papaya::Operation::Insert(d)
                }
                _ => papaya::Operation::Abort(()),
            },
        );
    }

    pub fn clear(&self) {
        self.drivers.pin().clear();
        self.decisions.pin().clear();
    }

    /// Triples and driver decisions held (current or stale).
    pub fn len(&self) -> (usize, usize) {
        (self.drivers.len(), self.decisions.len())
    }
}
