//! The cache designs the kernel and libselinux went through, for comparison only: never on the
//! production path. Each keeps (source SID, target SID, class) -> decision and, on a miss, asks
//! the same security server; each takes its lock(s) on every lookup, as the original did.
//!
//! They answer decisions only: none has an enforcing mode or records permissive grants, so the
//! enforcing-switch check (`seaccess_testkit::enforcing`) has nothing to hold them to; a design
//! that gains a permissive mode must implement its `ModeSwitching` and pass it.

use std::sync::{Arc, Mutex, RwLock};

use rustc_hash::FxHashMap;
use seaccess_types::{lock, AccessServer, AvDecision, ClassId, ServerError, Sid};

/// Anything that answers decisions through a cache: the production AVC and the designs.
pub trait DecisionCache: Send + Sync {
    fn name(&self) -> &'static str;
    fn decide(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision, ServerError>;
}

impl DecisionCache for seaccess_avc::Avc {
    fn name(&self) -> &'static str {
        "seaccess"
    }
    // An object manager calling `Avc::decide` gets it inlined; so must the measured loop, which
    // reaches it through this trait from another module (a plain `#[inline]` was not honoured
    // there once the bench moved into modules, and the call alone cost 3-4 ns of an 8-ns hit).
    #[inline(always)]
    fn decide(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision, ServerError> {
        seaccess_avc::Avc::decide(self, ssid, tsid, class)
    }
}

type Key = (u32, u32, u16);
/// One hash chain: the entries whose keys hash to one bucket.
type Chain = Vec<(Key, AvDecision)>;

fn key(s: Sid, t: Sid, c: ClassId) -> Key {
    (s.0, t.0, c.0)
}

/// The kernel's AVC_CACHE_SLOTS.
const BUCKETS: usize = 512;
/// Buckets per lock in the block-locked design.
const BLOCK: usize = 16;

fn bucket(k: &Key) -> usize {
    // The kernel's avc_hash: (ssid ^ (tsid << 2) ^ (tclass << 4)) & (AVC_CACHE_SLOTS - 1).
    ((k.0 ^ (k.1 << 2) ^ (u32::from(k.2) << 4)) as usize) & (BUCKETS - 1)
}

/// One global mutex held across the whole check, miss included: libselinux's AVC, and the
/// kernel's before 2001.
pub struct GlobalMutex {
    server: Arc<dyn AccessServer>,
    map: Mutex<FxHashMap<Key, AvDecision>>,
}

/// One global reader-writer lock: readers share it, a miss takes it for writing.
pub struct GlobalRwLock {
    server: Arc<dyn AccessServer>,
    map: RwLock<FxHashMap<Key, AvDecision>>,
}

/// A mutex per hash bucket (2001's per-entry locking, at bucket grain).
pub struct BucketMutex {
    server: Arc<dyn AccessServer>,
    buckets: Box<[Mutex<Chain>]>,
}

/// A reader-writer lock per hash bucket.
pub struct BucketRwLock {
    server: Arc<dyn AccessServer>,
    buckets: Box<[RwLock<Chain>]>,
}

/// A mutex per block of sixteen buckets.
pub struct BlockMutex {
    server: Arc<dyn AccessServer>,
    blocks: Box<[Mutex<Vec<Chain>>]>,
}

impl GlobalMutex {
    pub fn new(server: Arc<dyn AccessServer>) -> Self {
        GlobalMutex {
            server,
            map: Mutex::new(FxHashMap::default()),
        }
    }
}
impl GlobalRwLock {
    pub fn new(server: Arc<dyn AccessServer>) -> Self {
        GlobalRwLock {
            server,
            map: RwLock::new(FxHashMap::default()),
        }
    }
}
impl BucketMutex {
    pub fn new(server: Arc<dyn AccessServer>) -> Self {
        BucketMutex {
            server,
            buckets: (0..BUCKETS).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }
}
impl BucketRwLock {
    pub fn new(server: Arc<dyn AccessServer>) -> Self {
        BucketRwLock {
            server,
            buckets: (0..BUCKETS).map(|_| RwLock::new(Vec::new())).collect(),
        }
    }
}
impl BlockMutex {
    pub fn new(server: Arc<dyn AccessServer>) -> Self {
        BlockMutex {
            server,
            blocks: (0..BUCKETS / BLOCK)
                .map(|_| Mutex::new(vec![Vec::new(); BLOCK]))
                .collect(),
        }
    }
}

impl DecisionCache for GlobalMutex {
    fn name(&self) -> &'static str {
        "global_mutex"
    }
    fn decide(&self, s: Sid, t: Sid, c: ClassId) -> Result<AvDecision, ServerError> {
        let mut m = lock(&self.map);
        if let Some(d) = m.get(&key(s, t, c)) {
            return Ok(*d);
        }
        let d = self.server.compute_av(s, t, c)?;
        m.insert(key(s, t, c), d);
        Ok(d)
    }
}

impl DecisionCache for GlobalRwLock {
    fn name(&self) -> &'static str {
        "global_rwlock"
    }
    fn decide(&self, s: Sid, t: Sid, c: ClassId) -> Result<AvDecision, ServerError> {
        if let Some(d) = self
            .map
            .read()
            .ok()
            .and_then(|m| m.get(&key(s, t, c)).copied())
        {
            return Ok(d);
        }
        let d = self.server.compute_av(s, t, c)?;
        if let Ok(mut m) = self.map.write() {
            m.insert(key(s, t, c), d);
        }
        Ok(d)
    }
}

impl DecisionCache for BucketMutex {
    fn name(&self) -> &'static str {
        "bucket_mutex"
    }
    fn decide(&self, s: Sid, t: Sid, c: ClassId) -> Result<AvDecision, ServerError> {
        let k = key(s, t, c);
        let mut b = lock(&self.buckets[bucket(&k)]);
        if let Some((_, d)) = b.iter().find(|(x, _)| *x == k) {
            return Ok(*d);
        }
        let d = self.server.compute_av(s, t, c)?;
        b.push((k, d));
        Ok(d)
    }
}

impl DecisionCache for BucketRwLock {
    fn name(&self) -> &'static str {
        "bucket_rwlock"
    }
    fn decide(&self, s: Sid, t: Sid, c: ClassId) -> Result<AvDecision, ServerError> {
        let k = key(s, t, c);
        let b = &self.buckets[bucket(&k)];
        if let Some(d) = b
            .read()
            .ok()
            .and_then(|v| v.iter().find(|(x, _)| *x == k).map(|(_, d)| *d))
        {
            return Ok(d);
        }
        let d = self.server.compute_av(s, t, c)?;
        if let Ok(mut v) = b.write() {
            v.push((k, d));
        }
        Ok(d)
    }
}

impl DecisionCache for BlockMutex {
    fn name(&self) -> &'static str {
        "block_mutex"
    }
    fn decide(&self, s: Sid, t: Sid, c: ClassId) -> Result<AvDecision, ServerError> {
        let k = key(s, t, c);
        let i = bucket(&k);
        let mut block = lock(&self.blocks[i / BLOCK]);
        let b = &mut block[i % BLOCK];
        if let Some((_, d)) = b.iter().find(|(x, _)| *x == k) {
            return Ok(*d);
        }
        let d = self.server.compute_av(s, t, c)?;
        b.push((k, d));
        Ok(d)
    }
}
