//! The SID table: stable 32-bit identifiers for contexts, shared by every thread.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rustc_hash::FxHashMap;
use seaccess_policy::{Context, MAX_INITIAL_SID};
use seaccess_types::Sid;

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    match l.read() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    match l.write() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

#[derive(Default)]
struct Registry {
    by_str: FxHashMap<Arc<str>, Sid>,
    /// Indexed by SID; None for the initial SIDs, whose contexts each policy gives.
    strs: Vec<Option<Arc<str>>>,
}

/// Stable 32-bit SIDs for contexts, shared by every policy generation of one server and by
/// every thread. Initial SIDs keep the numbers the policy gives them (1 to 256); every other
/// context gets the next free number the first time it is seen, and keeps it across boolean
/// commits and policy reloads. A SID stands for the context's canonical text, so after a
/// reload it means the same context under the new policy (or unlabeled, if no longer valid).
pub struct SidTable {
    inner: RwLock<Registry>,
}

impl SidTable {
    pub(crate) fn new() -> SidTable {
        let reg = Registry { by_str: FxHashMap::default(), strs: vec![None; MAX_INITIAL_SID as usize + 1] };
        SidTable { inner: RwLock::new(reg) }
    }

    /// The SID of a context's canonical text, allocating one if it has none yet.
    pub(crate) fn sid_of(&self, canonical: &str) -> Sid {
        if let Some(&s) = read(&self.inner).by_str.get(canonical) {
            return s;
        }
        let mut g = write(&self.inner);
        if let Some(&s) = g.by_str.get(canonical) {
            return s;
        }
        let sid = Sid(g.strs.len() as u32);
        let text: Arc<str> = canonical.into();
        g.strs.push(Some(text.clone()));
        g.by_str.insert(text, sid);
        sid
    }

    /// The canonical text a dynamic SID stands for (None for initial and unknown SIDs).
    pub(crate) fn text(&self, sid: Sid) -> Option<Arc<str>> {
        read(&self.inner).strs.get(sid.0 as usize).cloned().flatten()
    }

    /// How many SIDs have been given to contexts (initial SIDs not counted).
    pub fn len(&self) -> usize {
        read(&self.inner).by_str.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The contexts of SIDs under one policy, filled as SIDs are used: shared by the generations
/// that differ only in booleans.
pub(crate) struct Contexts {
    slots: RwLock<Vec<Option<Arc<Context>>>>,
}

impl Contexts {
    pub(crate) fn new(initial: impl IntoIterator<Item = (u32, Context)>) -> Contexts {
        let mut v: Vec<Option<Arc<Context>>> = vec![None; MAX_INITIAL_SID as usize + 1];
        for (sid, c) in initial {
            if let Some(slot) = v.get_mut(sid as usize) {
                *slot = Some(Arc::new(c));
            }
        }
        Contexts { slots: RwLock::new(v) }
    }

    pub(crate) fn get(&self, sid: Sid) -> Option<Arc<Context>> {
        read(&self.slots).get(sid.0 as usize).cloned().flatten()
    }

    pub(crate) fn set(&self, sid: Sid, c: Arc<Context>) {
        let mut g = write(&self.slots);
        let i = sid.0 as usize;
        if g.len() <= i {
            g.resize(i + 1, None);
        }
        g[i] = Some(c);
    }
}

/// The kernel's initial SID names, by number.
pub const INITIAL_SID_NAMES: [&str; 28] = [
    "",
    "kernel",
    "security",
    "unlabeled",
    "fs",
    "file",
    "file_labels",
    "init",
    "any_socket",
    "port",
    "netif",
    "netmsg",
    "node",
    "igmp_packet",
    "icmp_socket",
    "tcp_socket",
    "sysctl_modprobe",
    "sysctl",
    "sysctl_fs",
    "sysctl_kernel",
    "sysctl_net",
    "sysctl_net_unix",
    "sysctl_vm",
    "sysctl_dev",
    "kmod",
    "policy",
    "scmp_packet",
    "devnull",
];
