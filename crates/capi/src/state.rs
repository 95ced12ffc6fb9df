//! The process's one "kernel": the security server, the access vector cache in front of it and
//! the enforcing mode, loaded once and then only replaced in part (a policy reload goes through
//! the server, an `avc_reset` swaps in a fresh cache).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};

use arc_swap::ArcSwap;
use seaccess_avc::{Avc, DEFAULT_CAPACITY};
use seaccess_security::SecurityServer;
use seaccess_types::{lock, Registration, Seqno};

use crate::callbacks;
use crate::lookup;
use crate::ffi::{Errno, Res, EINVAL, ENOENT};

/// The environment variable naming the policy to load at the first call that needs one.
pub const POLICY_ENV: &str = "SEACCESS_POLICY";

/// The access vector cache and its subscription to the server's policy changes.
pub(crate) struct Cache {
    pub avc: Arc<Avc>,
    _following: Registration,
}

pub(crate) struct Kernel {
    pub server: Arc<SecurityServer>,
    pub cache: ArcSwap<Cache>,
    /// Counts the swaps of `cache`, so that a thread knows its copy is stale.
    generation: AtomicU64,
    /// The kernel's enforcing mode (security_getenforce); enforcing at load, as a kernel booted
    /// with enforcing=1.
    pub enforcing: AtomicBool,
    /// avc_open was given AVC_OPT_SETENFORCE: the cache keeps its own mode and does not follow
    /// security_setenforce (libselinux's avc_setenforce).
    pub avc_own_mode: AtomicBool,
    _policyload: Registration,
}

thread_local! {
    /// This thread's copy of the current cache and the generation it was current in: a check
    /// reads the cache through it, so that the hit path takes no reference (an atomic write to
    /// a line every thread shares) and no arc-swap load (its debt slots cost a check a third of
    /// its instructions, callgrind). A thread holds on to a replaced cache until its next check.
    static CURRENT: RefCell<Option<(u64, Arc<Cache>)>> = const { RefCell::new(None) };
}

impl Kernel {
    pub fn avc(&self) -> Arc<Avc> {
        self.cache.load_full().avc.clone()
    }

    /// Runs `f` on the current cache.
    #[inline]
    pub fn with_avc<T>(&self, f: impl FnOnce(&Avc) -> Res<T>) -> Res<T> {
        let generation = self.generation.load(Acquire);
        let mut f = Some(f);
        // Takes `f` only to run it, so that when this answers None, `f` is still there.
        let mut run = |c: &RefCell<Option<(u64, Arc<Cache>)>>| {
            {
                // A check made from a callback inside a check on this thread shares the borrow;
                // only a stale copy needs the exclusive one.
                let cur = c.try_borrow().ok()?;
                if let Some((g, cache)) = &*cur {
                    if *g == generation {
                        return f.take().map(|f| f(&cache.avc));
                    }
                }
            }
            let mut cur = c.try_borrow_mut().ok()?;
            let (_, cache) = cur.insert((generation, self.cache.load_full()));
            let cache = cache.clone();
            drop(cur);
            f.take().map(|f| f(&cache.avc))
        };
        if let Ok(Some(r)) = CURRENT.try_with(|c| run(c)) {
            return r;
        }
        // A thread being torn down, or a stale copy still borrowed by an outer check.
        let cache = self.cache.load_full();
        f.take().map_or(Err(EINVAL), |f| f(&cache.avc))
    }

    /// Replaces the cache with an empty one (libselinux's avc_reset flushes every entry and
    /// zeroes the statistics), in the current mode.
    pub fn reset_cache(&self) {
        let enforcing = self.cache.load().avc.enforcing();
        let c = new_cache(&self.server);
        c.avc.set_enforcing(enforcing);
        self.cache.store(Arc::new(c));
        self.generation.fetch_add(1, AcqRel);
    }
}

fn new_cache(server: &Arc<SecurityServer>) -> Cache {
    let avc = Arc::new(Avc::new(server.clone(), DEFAULT_CAPACITY));
    let following = avc.follow(&**server);
    Cache { avc, _following: following }
}

static KERNEL: OnceLock<Kernel> = OnceLock::new();
/// Serialises loads, so that two first loads do not both build a kernel.
static LOADING: Mutex<()> = Mutex::new(());

/// The kernel, loading it from `SEACCESS_POLICY` if no policy is loaded yet; ENOENT (what
/// libselinux reports without selinuxfs) when there is none.
#[inline]
pub(crate) fn kernel() -> Res<&'static Kernel> {
    match KERNEL.get() {
        Some(k) => Ok(k),
        None => from_env(),
    }
}

/// The kernel if a policy is loaded or loadable, without an error.
pub(crate) fn enabled() -> Option<&'static Kernel> {
    kernel().ok()
}

#[cold]
fn from_env() -> Res<&'static Kernel> {
    let Some(path) = std::env::var_os(POLICY_ENV) else { return Err(ENOENT) };
    let _g = lock(&LOADING);
    if let Some(k) = KERNEL.get() {
        return Ok(k);
    }
    let data = std::fs::read(&path).map_err(|_| ENOENT)?;
    let server = SecurityServer::from_bytes(&data).map_err(|e| {
        callbacks::log(callbacks::SELINUX_ERROR, &format!("seaccess: cannot load policy {}: {e}\n", path.to_string_lossy()));
        ENOENT
    })?;
    Ok(install(server))
}

fn install(server: SecurityServer) -> &'static Kernel {
    let server = Arc::new(server);
    let policyload = server.on_policy_change(|seqno: Seqno| {
        lookup::policy_changed(seqno.0);
        callbacks::policy_loaded(seqno.0);
    });
    KERNEL.get_or_init(|| Kernel {
        cache: ArcSwap::from_pointee(new_cache(&server)),
        generation: AtomicU64::new(0),
        server,
        enforcing: AtomicBool::new(true),
        avc_own_mode: AtomicBool::new(false),
        _policyload: policyload,
    })
}

/// Loads the policy image at `path`, or reloads it if a policy is loaded.
pub(crate) fn load(path: &str) -> Res<()> {
    let data = std::fs::read(path).map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
    let _g = lock(&LOADING);
    match KERNEL.get() {
        Some(k) => {
            k.server.reload(&data).map_err(|e| {
                callbacks::log(callbacks::SELINUX_ERROR, &format!("seaccess: cannot load policy {path}: {e}\n"));
                EINVAL
            })?;
        }
        None => {
            let server = SecurityServer::from_bytes(&data).map_err(|e| {
                callbacks::log(callbacks::SELINUX_ERROR, &format!("seaccess: cannot load policy {path}: {e}\n"));
                EINVAL
            })?;
            install(server);
        }
    }
    Ok(())
}

/// security_setenforce: the kernel's mode, and the cache's unless it keeps its own.
pub(crate) fn set_enforcing(k: &Kernel, on: bool) {
    let was = k.enforcing.swap(on, AcqRel);
    if was == on {
        return;
    }
    if !k.avc_own_mode.load(Acquire) {
        k.cache.load().avc.set_enforcing(on);
    }
    callbacks::enforcing_changed(on);
}
