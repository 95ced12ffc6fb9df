//! The security server: the current policy generation, its atomic replacement by a load or
//! reload (the kernel's security_load_policy) or a boolean commit, and the listeners told of
//! each change (see `listeners`).

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;
use seaccess_policy::{read_policy, Policy};
// A listener that panicked must not wedge every later change, so a poisoned lock is used as is.
use seaccess_types::{lock, Registration, Seqno, Sid};

use crate::compiled::Compiled;
use crate::error::{Result, SecurityError};
use crate::generation::Generation;
use crate::listeners::{delivering, Listeners};
use crate::sidtab::{Contexts, SidTable};

/// A change of the current generation.
pub(crate) enum Change {
    /// The pending boolean values become current.
    Commit,
    /// A new policy replaces the current one.
    Reload(Box<Policy>),
}

thread_local! {
    /// This thread is running prepare listeners, with the change lock held: a change it asks
    /// for is made after the one being prepared, by the same call.
    static PREPARING: Cell<bool> = const { Cell::new(false) };
}

/// Marks prepare listeners running on this thread; the mark goes even if one panics.
struct Preparing;

impl Preparing {
    fn start() -> Preparing {
        PREPARING.with(|p| p.set(true));
        Preparing
    }
}

impl Drop for Preparing {
    fn drop(&mut self) {
        PREPARING.with(|p| p.set(false));
    }
}

/// The security server: the current policy generation, replaced atomically by loads and
/// boolean commits, and the booleans set but not yet committed.
pub struct SecurityServer {
    pub(crate) current: ArcSwap<Generation>,
    /// Pending boolean values. Replaced together with the current generation on a reload, under
    /// this lock, so that a boolean name resolved under it indexes the right list.
    pub(crate) pending: Mutex<Vec<bool>>,
    /// Serialises changes, from building a generation to publishing it: prepare listeners run
    /// under it, change listeners do not.
    changing: Mutex<()>,
    /// Changes asked for by prepare listeners, made right after the one being prepared.
    deferred: Mutex<VecDeque<Change>>,
    listeners: Arc<Listeners>,
    /// The SID table every generation of this server shares (a reload and a commit hand it on).
    sids: Arc<SidTable>,
}

/// Every lock of a [`SecurityServer`] held at once, for a process about to fork (see
/// [`SecurityServer::fork_guard`]). Dropping it releases them (in the parent);
/// [`ForkGuard::child`] first resets what only another thread of the parent could have ended.
pub struct ForkGuard<'a> {
    // Fields drop in declaration order: the reverse of the order they were taken in.
    sids: crate::sidtab::Held<'a>,
    listeners: crate::listeners::Held<'a>,
    pending: MutexGuard<'a, Vec<bool>>,
    deferred: MutexGuard<'a, VecDeque<Change>>,
    changing: MutexGuard<'a, ()>,
}

impl ForkGuard<'_> {
    /// In the child of the fork (its only thread): a change notification another thread was
    /// delivering at the fork is queued again, to be delivered in full at the child's next
    /// change (a listener in a child may so be told of one seqno twice, never of none); then
    /// every lock is released.
    pub fn child(self) {
        let ForkGuard {
            sids,
            listeners,
            pending,
            deferred,
            changing,
        } = self;
        listeners.child();
        drop((sids, pending, deferred, changing));
    }
}

impl SecurityServer {
    /// Loads a policy image.
    pub fn from_bytes(data: &[u8]) -> Result<SecurityServer> {
        let policy = read_policy(data).map_err(|e| SecurityError::Policy(Arc::new(e)))?;
        Ok(SecurityServer::new(policy))
    }

    /// Loads a policy image it owns, freeing the image once it is parsed: the indexes are then
    /// built without the file's bytes beside them (on Debian's policy, 2.1 of the 9.4 MB a load
    /// held at its peak).
    pub fn from_image(data: Vec<u8>) -> Result<SecurityServer> {
        let policy = read_policy(&data).map_err(|e| SecurityError::Policy(Arc::new(e)))?;
        drop(data);
        Ok(SecurityServer::new(policy))
    }

    pub fn new(policy: Policy) -> SecurityServer {
        let bools: Vec<bool> = policy.bools.iter().map(|b| b.state).collect();
        let sids = Arc::new(SidTable::new());
        let g = Self::generation(policy, sids.clone(), bools.clone(), Seqno(1));
        SecurityServer {
            sids,
            current: ArcSwap::from_pointee(g),
            pending: Mutex::new(bools),
            changing: Mutex::new(()),
            deferred: Mutex::new(VecDeque::new()),
            listeners: Arc::new(Listeners::default()),
        }
    }

    fn generation(
        policy: Policy,
        sids: Arc<SidTable>,
        bools: Vec<bool>,
        seqno: Seqno,
    ) -> Generation {
        let ctx = Arc::new(Contexts::new(&policy));
        Generation::new(Arc::new(Compiled::new(policy)), sids, ctx, bools, seqno)
    }

    /// Replaces the policy with a new image, atomically for every thread, with the next seqno.
    /// SIDs keep standing for the same context text; booleans the new policy shares by name
    /// keep their current values (as the kernel preserves them across a reload), and pending
    /// values are reset to the current ones (as selinuxfs recreates its boolean files). On
    /// error the old policy stays.
    pub fn reload(&self, data: &[u8]) -> Result<Seqno> {
        let policy = read_policy(data).map_err(|e| SecurityError::Policy(Arc::new(e)))?;
        Ok(self.change(Change::Reload(Box::new(policy))))
    }

    /// Makes a change and announces it; returns its seqno. Prepare listeners see the new
    /// generation before it is published; change listeners are told after every lock is
    /// released, and before this returns unless it was called from a listener (then the
    /// change is announced after the notification being delivered, or, from a prepare
    /// listener, made right after the change being prepared).
    pub(crate) fn change(&self, c: Change) -> Seqno {
        if PREPARING.with(Cell::get) {
            let mut d = lock(&self.deferred);
            d.push_back(c);
            // The change lock is held below this call on this thread, so the seqno is known:
            // after the generation being prepared and the changes deferred before this one.
            return Seqno(self.current.load().seqno.0.wrapping_add(1 + d.len() as u32));
        }
        // Earlier changes are announced before this one is published, so that a change
        // listener finds the generation it is told of current (unless listeners change it).
        let guard = loop {
            if !delivering() {
                self.listeners.wait_idle();
            }
            let g = lock(&self.changing);
            if delivering() || self.listeners.is_idle() {
                break g;
            }
        };
        let mut next = Some(c);
        let mut first = None;
        while let Some(c) = next {
            let old = self.current.load_full();
            let seqno = Seqno(old.seqno.0.wrapping_add(1));
            let (g, reset) = match c {
                Change::Commit => {
                    let bools = lock(&self.pending).clone();
                    (
                        Generation::new(
                            old.c.clone(),
                            old.sids.clone(),
                            old.ctx.clone(),
                            bools,
                            seqno,
                        ),
                        None,
                    )
                }
                Change::Reload(policy) => {
                    let bools: Vec<bool> = policy
                        .bools
                        .iter()
                        .map(|b| old.boolean(&b.name).unwrap_or(b.state))
                        .collect();
                    let g = Self::generation(*policy, old.sids.clone(), bools.clone(), seqno);
                    g.resolve_all_sids();
                    (g, Some(bools))
                }
            };
            {
                let _p = Preparing::start();
                self.listeners.prepare(&g);
            }
            {
                let mut pending = lock(&self.pending);
                self.current.store(Arc::new(g));
                if let Some(b) = reset {
                    *pending = b;
                }
            }
            self.listeners.queue(seqno);
            first.get_or_insert(seqno);
            next = lock(&self.deferred).pop_front();
        }
        drop(guard);
        if !delivering() {
            self.listeners.wait_idle();
        }
        first.unwrap_or_else(|| self.seqno())
    }

    /// Calls `f` with the seqno of every reload and boolean commit, once each, in order, until
    /// the returned registration is dropped: how a cache learns to drop its decisions (the
    /// kernel's avc_ss_reset, libselinux's avc_add_callback). Runs outside the server's locks,
    /// so `f` may itself commit booleans or reload (that change is announced after this one).
    pub fn on_policy_change(&self, f: impl Fn(Seqno) + Send + Sync + 'static) -> Registration {
        self.listeners.add_change(Arc::new(f))
    }

    /// Calls `f` with each new generation before it is published, while every thread still
    /// gets the old one, until the returned registration is dropped: how a cache computes its
    /// decisions under the new policy ahead of the switch ([`seaccess_types::AccessServer`]
    /// answers from that generation alone, with its seqno). Runs on the changing thread, one
    /// change at a time; a change `f` makes is made after the one it prepares.
    pub fn on_policy_prepare(
        &self,
        f: impl Fn(&dyn seaccess_types::AccessServer) + Send + Sync + 'static,
    ) -> Registration {
        self.listeners.add_prepare(Arc::new(f))
    }

    /// Holds every lock of the server until the guard is dropped, for a process that forks
    /// while other threads may be using the server (a C library's `pthread_atfork` handlers:
    /// take it in the prepare handler; drop it in the parent's, call [`ForkGuard::child`] in
    /// the child's). A child then never inherits a lock held by a thread it does not have.
    /// Waits for a change being made (building and preparing a generation) to be published;
    /// does not wait for change listeners, which run outside every lock (see
    /// [`ForkGuard::child`]). Must not be called from a prepare listener (its thread holds the
    /// change lock). Queries are not stopped: they take no lock but the SID table's, held here.
    pub fn fork_guard(&self) -> ForkGuard<'_> {
        // The order every path nests them in: a change holds `changing` while it takes the
        // others, and the listeners' and SID table's locks nest in none of them.
        let changing = lock(&self.changing);
        let deferred = lock(&self.deferred);
        let pending = lock(&self.pending);
        let listeners = self.listeners.hold();
        let sids = self.sids.hold();
        ForkGuard {
            sids,
            listeners,
            pending,
            deferred,
            changing,
        }
    }

    /// How many listeners are registered: (prepare, change).
    pub fn listener_count(&self) -> (usize, usize) {
        self.listeners.count()
    }

    /// The current generation; hold it to make several queries against one policy state. The
    /// server takes no class or permission number: numbers come from a generation and are
    /// answered by that generation (see the crate's docs, "One generation").
    pub fn snapshot(&self) -> Arc<Generation> {
        self.current.load_full()
    }

    pub fn seqno(&self) -> Seqno {
        self.current.load().seqno
    }

    pub fn context_to_sid(&self, s: &str) -> Result<Sid> {
        self.current.load().context_to_sid(s)
    }

    pub fn sid_to_context(&self, sid: Sid) -> Result<String> {
        self.current.load().sid_to_context(sid)
    }
}
