//! The process's one "kernel": the security server, the access vector cache in front of it and
//! the enforcing mode, loaded once and then only changed in place (a policy reload goes through
//! the server, an `avc_reset` flushes the cache).

use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};

use seaccess_avc::{Avc, DEFAULT_CAPACITY};
use seaccess_security::SecurityServer;
use seaccess_types::{lock, Registration, Seqno};

use crate::callbacks;
use crate::ffi::{Errno, Res, EINVAL, ENOENT};

/// The environment variable naming the policy to load at the first call that needs one.
pub const POLICY_ENV: &str = "SEACCESS_POLICY";

pub(crate) struct Kernel {
    pub server: Arc<SecurityServer>,
    /// The one cache, for the process's life: avc_reset and avc_destroy flush it in place, so
    /// that a check reaches it through a plain pointer, with no reference counted and no
    /// per-thread copy to keep current.
    pub avc: Arc<Avc>,
    /// The cache's subscription to the server's policy changes.
    _following: Registration,
    /// The kernel's enforcing mode (security_getenforce); enforcing at load, as a kernel booted
    /// with enforcing=1.
    pub enforcing: AtomicBool,
    /// avc_open was given AVC_OPT_SETENFORCE: the cache keeps its own mode and does not follow
    /// security_setenforce (libselinux's avc_setenforce).
    pub avc_own_mode: AtomicBool,
    _policyload: Registration,
}

impl Kernel {
    /// Empties the cache (libselinux's avc_reset flushes every entry and zeroes the
    /// statistics); the mode stays.
    pub fn reset_cache(&self) {
        self.avc.flush();
    }
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
        callbacks::policy_loaded(seqno.0);
    });
    KERNEL.get_or_init(|| {
        let avc = Arc::new(Avc::new(server.clone(), DEFAULT_CAPACITY));
        let following = avc.follow(&*server);
        Kernel {
        avc,
        _following: following,
        server,
        enforcing: AtomicBool::new(true),
        avc_own_mode: AtomicBool::new(false),
        _policyload: policyload,
        }
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
        k.avc.set_enforcing(on);
    }
    callbacks::enforcing_changed(on);
}
