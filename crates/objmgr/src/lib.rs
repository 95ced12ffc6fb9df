//! The seaccess object manager: the kernel's SELinux hooks (hooks.c) and security blobs
//! (objsec.h) for userspace object managers, with split credentials and three fast paths.
//!
//! A service guarding its objects calls a hook at each operation, with the acting task and the
//! objects' blobs; the hook asks exactly the permissions the kernel's hook asks for that
//! operation, through the access vector cache, and writes the kernel's audit record. Hooks ask
//! only the cache ([`seaccess_avc::Avc`]) and, for labels of new objects, the security server's
//! seam ([`seaccess_types::LabelServer`]); only SIDs, class numbers and bit vectors cross
//! them. This crate must never depend on the policy reader or the security server crates.
//!
//! The classes and permissions the hooks enforce are one static table in our own numbering
//! ([`classes`]), mapped onto each policy before the policy is published ([`classmap`]); a check
//! translates with the map of the very policy whose decision it gets.

#![forbid(unsafe_code)]

pub mod audit;
pub mod blobs;
mod check;
pub mod classes;
pub mod classmap;
pub mod counters;
pub mod cred;
mod error;
pub mod fastpath;
mod grant;
pub mod hooks;
mod vfs;
mod walkmemo;

use std::sync::Arc;

use seaccess_avc::Avc;
use seaccess_types::{LabelServer, PolicyEvents, Registration};

pub use audit::AuditData;
pub use blobs::{FileSec, InodeSec, Labeling, SockSec, SuperSec};
pub use check::Checked;
pub use classes::{Class, ClassDef, CLASSES};
pub use classmap::{ClassMap, ClassMaps};
pub use counters::{Counters, Hook};
pub use cred::{Cred, OverrideGuard, PreparedCred, Task, TaskRef};
pub use error::{errno, ObjmgrError, Result};
pub use fastpath::FastPaths;
pub use walkmemo::WalkMemo;

/// [`ObjectManager::context_of`] with names already taken, for a hook naming several SIDs by
/// one generation.
pub(crate) fn context_in(
    names: &dyn seaccess_types::PolicyNames,
    sid: seaccess_types::Sid,
) -> Result<String> {
    names.sid_to_context(sid).ok_or(ObjmgrError::Server(
        seaccess_types::ServerError::InvalidSid(sid),
    ))
}

/// An object manager: the hooks over one cache and one security server.
pub struct ObjectManager {
    server: Arc<dyn LabelServer>,
    avc: Arc<Avc>,
    maps: Arc<ClassMaps>,
    fast: FastPaths,
    counters: Counters,
    epochs: grant::Epochs,
    /// The server's [`LabelServer::initial_sids_numbered`], asked once: a socket check then
    /// tells an initial SID by its number alone.
    numbered_initials: bool,
    _prepare: Registration,
}

impl ObjectManager {
    /// An object manager enforcing [`CLASSES`] with `avc` (which should follow `events`, see
    /// [`Avc::follow`]) over `server`, remapping its classes before each policy change `events`
    /// announces is published.
    pub fn new(
        server: Arc<dyn LabelServer>,
        events: &dyn PolicyEvents,
        avc: Arc<Avc>,
    ) -> ObjectManager {
        let maps = Arc::new(ClassMaps::new(CLASSES, &*server));
        let m = maps.clone();
        let prepare = events.on_policy_prepare(Box::new(move |next| m.prepare(next)));
        let fast = FastPaths::default();
        let switches = fast.switch_counter();
        avc.on_reset(move |_| {
            switches.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        });
        let numbered_initials = server.initial_sids_numbered();
        ObjectManager {
            server,
            avc,
            maps,
            fast,
            counters: Counters::default(),
            epochs: grant::Epochs::default(),
            numbered_initials,
            _prepare: prepare,
        }
    }

    /// The cache the hooks ask.
    pub fn avc(&self) -> &Arc<Avc> {
        &self.avc
    }

    /// The security server's labeling seam.
    pub fn server(&self) -> &Arc<dyn LabelServer> {
        &self.server
    }

    /// The class maps (the newest is what a check starts with).
    pub fn class_maps(&self) -> &ClassMaps {
        &self.maps
    }

    /// The fast-path switches.
    pub fn fast_paths(&self) -> &FastPaths {
        &self.fast
    }

    /// The capabilities of the newest policy (what hooks consult, as the kernel's
    /// selinux_policycap_*()): one load.
    #[inline(always)]
    pub fn policy_caps(&self) -> seaccess_types::PolicyCaps {
        self.maps.policy_caps()
    }

    /// The context text of `sid` under the current policy; a SID the policy cannot name is an
    /// invalid argument (EINVAL), as security_sid_to_context fails for the kernel's hooks.
    pub fn context_of(&self, sid: seaccess_types::Sid) -> Result<String> {
        context_in(&*self.server.names(), sid)
    }

    /// The hooks' cache lookup counts.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
}
