//! The SID table: stable 32-bit identifiers for contexts, shared by every thread.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockWriteGuard};

use once_cell::race::OnceBox;

use seaccess_policy::{Context, PolicyTables, MAX_INITIAL_SID};
use seaccess_types::lock::{read, write};
use seaccess_types::{PolicyCap, Sid};

use crate::context::context_to_string;

struct Registry {
    /// Keyed by text clients supply, so hashed with std's randomly keyed SipHash: a fixed hash
    /// (Fx) would let chosen context strings pile into one bucket.
    by_str: HashMap<Arc<str>, Sid>,
    /// Indexed by SID; None for the initial SIDs, whose contexts each policy gives.
    strs: Vec<Option<Arc<str>>>,
}

/// Stable 32-bit SIDs for contexts, shared by every policy generation of one server and by
/// every thread. Initial SIDs keep the numbers the policy gives them (1 to 256) and are found
/// by their context first (see `Contexts`); every other context gets the next free number the
/// first time it is seen, and keeps it across boolean commits and policy reloads. A SID stands
/// for the context's canonical text, so after a reload it means the same context under the new
/// policy (or unlabeled, if no longer valid). One case gives two SIDs one context, as in the
/// kernel, whose sidtab conversion keeps every SID: a reload giving an initial SID the context
/// of an existing dynamic SID. That SID keeps working, and lookups of the text find the initial
/// SID, so the table still gives each context one SID for the current policy.
pub struct SidTable {
    inner: RwLock<Registry>,
}

impl SidTable {
    pub(crate) fn new() -> SidTable {
        let reg = Registry {
            by_str: HashMap::new(),
            strs: vec![None; MAX_INITIAL_SID as usize + 1],
        };
        SidTable {
            inner: RwLock::new(reg),
        }
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

    /// Holds the table's lock (for a fork: see `SecurityServer::fork_guard`).
    pub(crate) fn hold(&self) -> Held<'_> {
        Held(write(&self.inner))
    }

    /// The canonical text a dynamic SID stands for (None for initial and unknown SIDs).
    pub(crate) fn text(&self, sid: Sid) -> Option<Arc<str>> {
        read(&self.inner)
            .strs
            .get(sid.0 as usize)
            .cloned()
            .flatten()
    }

    /// Every SID given to a context so far (initial SIDs not counted).
    pub(crate) fn dynamic(&self) -> Vec<Sid> {
        let g = read(&self.inner);
        g.strs
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_some())
            .map(|(i, _)| Sid(i as u32))
            .collect()
    }

    /// How many SIDs have been given to contexts (initial SIDs not counted).
    pub fn len(&self) -> usize {
        read(&self.inner).by_str.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The SID table's lock, held (see [`SidTable::hold`]).
pub(crate) struct Held<'a>(#[allow(dead_code)] RwLockWriteGuard<'a, Registry>);

/// Slots for SIDs: bucket `b` holds 2^(b+6) of them, allocated when first needed, so that the
/// buckets together cover every 32-bit SID and a slot never moves once made.
const FIRST_BUCKET_BITS: u32 = 6;
const BUCKETS: usize = 27;

/// Which bucket and slot hold a SID's context.
fn locate(sid: Sid) -> (usize, usize) {
    let i = u64::from(sid.0) + (1 << FIRST_BUCKET_BITS);
    let b = (63 - i.leading_zeros() - FIRST_BUCKET_BITS) as usize;
    (b, (i - (1u64 << (b as u32 + FIRST_BUCKET_BITS))) as usize)
}

/// The contexts of SIDs under one policy, filled as SIDs are used (or all at once when a policy
/// is loaded): shared by the generations that differ only in booleans. Reading takes no lock
/// and writes nothing shared, since every access decision reads two.
///
/// Buckets and slots are filled racing (`race::OnceBox`: threads that find one empty each make
/// it, the first stored is kept), never with one thread waiting for another's: a process forked
/// while a thread of it fills one (a `OnceLock` then marked "being filled") would have its
/// child wait forever for a thread the child does not have.
pub(crate) struct Contexts {
    buckets: [OnceBox<Box<[OnceBox<Context>]>>; BUCKETS],
    /// The initial SID of each initial context text under this policy, so that a context is
    /// found by its initial SID before any dynamic SID is made for it (the kernel's
    /// sidtab_set_initial hashes initial SIDs with the dynamic ones). Initial SIDs sharing a
    /// context are found as the lowest of them, as the kernel's hash keeps only the first.
    initial: HashMap<Box<str>, Sid>,
}

impl Contexts {
    pub(crate) fn new(p: &PolicyTables) -> Contexts {
        let mut c = Contexts {
            buckets: std::array::from_fn(|_| OnceBox::new()),
            initial: HashMap::new(),
        };
        let mut isids: Vec<_> = p.ocontexts.initial_sids.iter().collect();
        isids.sort_by_key(|s| s.sid);
        // A policy written before `init` had a context of its own does not declare
        // userspace_initial_context; the kernel's policydb_load_isids then ignores init's
        // context and gives it the kernel SID's, so early processes keep the kernel's label.
        let init_own = p.policycaps.get(PolicyCap::UserspaceInitialContext.bit());
        for s in isids {
            if s.sid == SECINITSID_INIT && !init_own {
                continue;
            }
            c.set_initial(p, Sid(s.sid), &s.context);
            if s.sid == SECINITSID_KERNEL && !init_own {
                c.set_initial(p, Sid(SECINITSID_INIT), &s.context);
            }
        }
        c
    }

    fn set_initial(&mut self, p: &PolicyTables, sid: Sid, context: &Context) {
        self.initial
            .entry(context_to_string(p, context).into())
            .or_insert(sid);
        self.set(sid, context.clone());
    }

    /// The initial SID standing for a context text under this policy.
    pub(crate) fn initial_sid(&self, canonical: &str) -> Option<Sid> {
        self.initial.get(canonical).copied()
    }

    pub(crate) fn get(&self, sid: Sid) -> Option<&Context> {
        let (b, i) = locate(sid);
        self.buckets.get(b)?.get()?.get(i)?.get()
    }

    /// Remembers a SID's context; a context already there stays (both would be the same).
    pub(crate) fn set(&self, sid: Sid, c: Context) -> Option<&Context> {
        let (b, i) = locate(sid);
        let bucket = self.buckets.get(b)?.get_or_init(|| {
            #[cfg(test)]
            tests::filling();
            Box::new(
                (0..1usize << (b as u32 + FIRST_BUCKET_BITS))
                    .map(|_| OnceBox::new())
                    .collect(),
            )
        });
        Some(bucket.get(i)?.get_or_init(|| {
            #[cfg(test)]
            tests::filling();
            Box::new(c)
        }))
    }
}

/// The kernel's initial SID numbers (flask.h) that policy capabilities concern.
const SECINITSID_KERNEL: u32 = 1;
const SECINITSID_INIT: u32 = 7;

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::cell::RefCell;
    use std::sync::mpsc;
    use std::time::Duration;

    thread_local! {
        /// Run by this thread inside its next fill of a bucket or a slot.
        static WHILE_FILLING: RefCell<Option<Box<dyn FnOnce()>>> = const { RefCell::new(None) };
    }

    pub(super) fn filling() {
        if let Some(f) = WHILE_FILLING.with(|w| w.borrow_mut().take()) {
            f();
        }
    }

    impl Contexts {
        fn empty() -> Contexts {
            Contexts {
                buckets: std::array::from_fn(|_| OnceBox::new()),
                initial: HashMap::new(),
            }
        }
    }

    fn context(ty: u32) -> Context {
        Context {
            user: 1,
            role: 1,
            ty,
            range: None,
        }
    }

    /// Thread A stops inside its fill of `a_sid`'s bucket or slot, as a thread of a parent
    /// stops for good at a fork (the child does not have it); thread B then sets `b_sid`, and
    /// must not wait for A. Returns what B's set gave and what the table holds once A is let go.
    fn set_while_another_fills(a_sid: u32, b_sid: u32) -> (Option<Context>, [Option<Context>; 2]) {
        let ctx = Arc::new(Contexts::empty());
        // A bucket to exist already when the test is about a slot.
        if a_sid == b_sid {
            ctx.set(Sid(a_sid ^ 1), context(9));
        }
        let (inside, entered) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let a = {
            let ctx = ctx.clone();
            std::thread::spawn(move || {
                WHILE_FILLING.with(|w| {
                    *w.borrow_mut() = Some(Box::new(move || {
                        inside.send(()).unwrap();
                        released.recv().unwrap();
                    }))
                });
                ctx.set(Sid(a_sid), context(1)).cloned()
            })
        };
        entered
            .recv_timeout(Duration::from_secs(10))
            .expect("A fills");
        let (done, b_done) = mpsc::channel();
        let b = {
            let ctx = ctx.clone();
            std::thread::spawn(move || done.send(ctx.set(Sid(b_sid), context(2)).cloned()))
        };
        let got = b_done.recv_timeout(Duration::from_secs(5));
        release.send(()).unwrap();
        a.join().unwrap();
        b.join().unwrap().ok();
        let got = got.expect("B waited for A's fill");
        (
            got,
            [ctx.get(Sid(a_sid)).cloned(), ctx.get(Sid(b_sid)).cloned()],
        )
    }

    /// A fork while a thread fills a bucket or a slot must leave the child nothing to wait on:
    /// the child's thread is B here, and A the parent's thread it does not have. (Seen in
    /// tests/capi's `fork` as a child hung in `OnceLock::initialize` under `Contexts::set`.)
    #[test]
    fn a_fill_never_waits_for_another_threads() {
        // A fresh bucket: B makes its own, A's is dropped and A's context lands in B's.
        let (got, held) = set_while_another_fills(100, 101);
        assert_eq!(got, Some(context(2)));
        assert_eq!(held, [Some(context(1)), Some(context(2))]);
        // The same slot: B stores first, and A's set gives the stored context (the same one
        // whoever stores it, for a SID's context never changes under one policy).
        let (got, held) = set_while_another_fills(300, 300);
        assert_eq!(got, Some(context(2)));
        assert_eq!(held, [Some(context(2)), Some(context(2))]);
    }

    /// Context text comes from clients: its map must be keyed per process (and here per table),
    /// or chosen strings collide in one bucket.
    #[test]
    fn context_text_hashes_are_keyed() {
        use std::hash::BuildHasher;
        let (a, b) = (SidTable::new(), SidTable::new());
        let h = |t: &SidTable| {
            read(&t.inner)
                .by_str
                .hasher()
                .hash_one("system_u:object_r:etc_t:s0")
        };
        assert_ne!(h(&a), h(&b));
    }

    #[test]
    fn every_sid_has_its_own_slot() {
        let mut seen = std::collections::HashSet::new();
        for s in (0..5000).chain([u32::MAX - 1, u32::MAX]) {
            let (b, i) = locate(Sid(s));
            assert!(
                b < BUCKETS && i < 1 << (b as u32 + FIRST_BUCKET_BITS),
                "{s}"
            );
            assert!(seen.insert((b, i)), "{s}");
        }
        assert_eq!(locate(Sid(0)), (0, 0));
        assert_eq!(locate(Sid(64)), (1, 0));
        assert_eq!(locate(Sid(u32::MAX)).0, BUCKETS - 1);
    }
}
