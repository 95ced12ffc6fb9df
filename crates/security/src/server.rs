//! The security server: the current policy generation, its atomic replacement by a load or
//! reload (the kernel's security_load_policy), and the listeners told of each change.

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use seaccess_policy::{read_policy, Policy};
use seaccess_types::{AvDecision, ClassId, Seqno, Sid};

use crate::compiled::Compiled;
use crate::error::{Result, SecurityError};
use crate::generation::Generation;
use crate::sidtab::{Contexts, SidTable};

/// The security server: the current policy generation, replaced atomically by loads and
/// boolean commits, and the booleans set but not yet committed.
pub struct SecurityServer {
    pub(crate) current: ArcSwap<Generation>,
    /// Pending boolean values; the lock also serialises commits and reloads.
    pub(crate) pending: Mutex<Vec<bool>>,
    listeners: Mutex<Vec<seaccess_types::ChangeFn>>,
    prepares: Mutex<Vec<seaccess_types::PrepareFn>>,
}

impl SecurityServer {
    /// Loads a policy image.
    pub fn from_bytes(data: &[u8]) -> Result<SecurityServer> {
        let policy = read_policy(data).map_err(|e| SecurityError::Policy(Arc::new(e)))?;
        Ok(SecurityServer::new(policy))
    }

    pub fn new(policy: Policy) -> SecurityServer {
        let bools: Vec<bool> = policy.bools.iter().map(|b| b.state).collect();
        let g = Self::generation(policy, Arc::new(SidTable::new()), bools.clone(), Seqno(1));
        SecurityServer { current: ArcSwap::from_pointee(g), pending: Mutex::new(bools), listeners: Mutex::new(Vec::new()), prepares: Mutex::new(Vec::new()) }
    }

    fn generation(policy: Policy, sids: Arc<SidTable>, bools: Vec<bool>, seqno: Seqno) -> Generation {
        let ctx = Arc::new(Contexts::new(&policy));
        Generation::new(Arc::new(Compiled::new(policy)), sids, ctx, bools, seqno)
    }

    /// Replaces the policy with a new image, atomically for every thread, with the next seqno.
    /// SIDs keep standing for the same context text; booleans the new policy shares by name
    /// keep their current values (as the kernel preserves them across a reload). On error the
    /// old policy stays.
    pub fn reload(&self, data: &[u8]) -> Result<Seqno> {
        let policy = read_policy(data).map_err(|e| SecurityError::Policy(Arc::new(e)))?;
        let mut pending = lock(&self.pending);
        let old = self.current.load_full();
        let bools: Vec<bool> = policy
            .bools
            .iter()
            .map(|b| old.boolean(&b.name).unwrap_or(b.state))
            .collect();
        let seqno = Seqno(old.seqno.0.wrapping_add(1));
        let g = Self::generation(policy, old.sids.clone(), bools.clone(), seqno);
        g.resolve_all_sids();
        self.publish(g);
        *pending = bools;
        self.notify(seqno);
        Ok(seqno)
    }

    /// Calls `f` with the new seqno after every reload and boolean commit, before the call that
    /// made the change returns: how a cache learns to drop its decisions (the kernel's
    /// avc_ss_reset, libselinux's avc_add_callback).
    pub fn on_policy_change(&self, f: impl Fn(Seqno) + Send + Sync + 'static) {
        lock(&self.listeners).push(Box::new(f));
    }

    /// Calls `f` with each new generation before it is published, while every thread still
    /// gets the old one: how a cache computes its decisions under the new policy ahead of the
    /// switch ([`seaccess_types::AccessServer`] answers from that generation alone, with its
    /// seqno). Runs serialised with every other change, on the changing thread.
    pub fn on_policy_prepare(&self, f: impl Fn(&dyn seaccess_types::AccessServer) + Send + Sync + 'static) {
        lock(&self.prepares).push(Box::new(f));
    }

    /// Prepares listeners for `g`, then makes it the current generation.
    pub(crate) fn publish(&self, g: Generation) {
        for f in lock(&self.prepares).iter() {
            f(&g);
        }
        self.current.store(Arc::new(g));
    }

    pub(crate) fn notify(&self, seqno: Seqno) {
        for f in lock(&self.listeners).iter() {
            f(seqno);
        }
    }

    /// The current generation; hold it to make several queries against one policy state.
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

    pub fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision> {
        self.current.load().compute_av(ssid, tsid, class)
    }
}

/// A listener that panicked must not wedge every later change, so a poisoned lock is used as is.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}
