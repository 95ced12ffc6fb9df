//! The SID table: stable 32-bit identifiers for contexts, shared by every thread.

use std::sync::{Arc, RwLock};

use rustc_hash::FxHashMap;
use seaccess_policy::Context;
use seaccess_types::Sid;

#[derive(Default)]
struct Inner {
    by_ctx: FxHashMap<Arc<Context>, Sid>,
    by_sid: Vec<Option<Arc<Context>>>,
}

/// Maps contexts to SIDs and back. Initial SIDs keep the numbers the policy gives them; other
/// contexts get the next free number the first time they are seen, and keep it.
pub struct SidTable {
    inner: RwLock<Inner>,
}

impl SidTable {
    pub(crate) fn new(initial: impl IntoIterator<Item = (u32, Context)>) -> SidTable {
        let mut inner = Inner::default();
        for (sid, ctx) in initial {
            let ctx = Arc::new(ctx);
            let i = sid as usize;
            if inner.by_sid.len() <= i {
                inner.by_sid.resize(i + 1, None);
            }
            inner.by_sid[i] = Some(ctx.clone());
            // Two initial SIDs may share a context; lookups by context return the first.
            inner.by_ctx.entry(ctx).or_insert(Sid(sid));
        }
        if inner.by_sid.is_empty() {
            inner.by_sid.push(None);
        }
        SidTable { inner: RwLock::new(inner) }
    }

    /// The SID of `ctx`, allocating one if it has none yet.
    pub(crate) fn sid_of(&self, ctx: Context) -> Sid {
        if let Ok(g) = self.inner.read() {
            if let Some(&s) = g.by_ctx.get(&ctx) {
                return s;
            }
        }
        let mut g = match self.inner.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(&s) = g.by_ctx.get(&ctx) {
            return s;
        }
        let sid = Sid(g.by_sid.len() as u32);
        let ctx = Arc::new(ctx);
        g.by_sid.push(Some(ctx.clone()));
        g.by_ctx.insert(ctx, sid);
        sid
    }

    pub(crate) fn context(&self, sid: Sid) -> Option<Arc<Context>> {
        let g = match self.inner.read() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        g.by_sid.get(sid.0 as usize).and_then(|c| c.clone())
    }

    /// How many SIDs are in use.
    pub fn len(&self) -> usize {
        match self.inner.read() {
            Ok(g) => g.by_ctx.len(),
            Err(p) => p.into_inner().by_ctx.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
