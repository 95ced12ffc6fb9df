//! The process's one "kernel": the security server, the access vector cache in front of it and
//! the enforcing mode, loaded once and then only changed in place (a policy reload goes through
//! the server, an `avc_reset` flushes the cache).
//!
//! Fail closed: `SEACCESS_POLICY` is looked at once. Unset, the process is "SELinux disabled"
//! (ENOENT, as libselinux without selinuxfs). Set to a policy that cannot be read or parsed,
//! the process is closed: checks answer EACCES, other calls the load's errno, the failure is
//! logged once and the file never read again, until a load ([`load`]) succeeds.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};

use seaccess_avc::{Avc, DEFAULT_CAPACITY};
use seaccess_security::SecurityServer;
use seaccess_types::{lock, Registration, Seqno};

use crate::callbacks;
use crate::ffi::{Errno, Res, EACCES, EINVAL, ENOENT};

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
/// Serialises first loads, so that two do not both build a kernel; held only while a policy is
/// read and installed, never while a callback runs (a callback may call anything, a load
/// included), and taken by the fork handlers (see [`crate::fork`]).
pub(crate) static LOADING: Mutex<()> = Mutex::new(());

/// What `SEACCESS_POLICY` gave, decided once: [`UNDECIDED`], [`DISABLED`] (not set), or the
/// errno (positive) of the load of the policy it names that failed. Never read again once
/// decided: the file is not re-read and the failure not re-logged at every call.
static ENV: AtomicI32 = AtomicI32::new(UNDECIDED);
const UNDECIDED: i32 = 0;
const DISABLED: i32 = -1;

/// The kernel, loading it from `SEACCESS_POLICY` if no policy is loaded yet. Without one: ENOENT
/// (what libselinux reports without selinuxfs) when no policy is named, or the errno of the
/// named policy's failed load (the process is then closed, see [`for_check`]).
#[inline]
pub(crate) fn kernel() -> Res<&'static Kernel> {
    match KERNEL.get() {
        Some(k) => Ok(k),
        None => from_env(),
    }
}

/// The kernel for an access check (selinux_check_access, avc_has_perm, security_compute_av):
/// None when no policy is named (SELinux disabled: libselinux's checks then pass or fail as on
/// a kernel without SELinux), and EACCES when a named policy could not be loaded. A process
/// that names a policy and cannot load it denies everything until a load succeeds: it fails
/// closed, never open.
#[inline]
pub(crate) fn for_check() -> Res<Option<&'static Kernel>> {
    match KERNEL.get() {
        Some(k) => Ok(Some(k)),
        None => match from_env() {
            Ok(k) => Ok(Some(k)),
            Err(_) if ENV.load(Acquire) == DISABLED => Ok(None),
            Err(_) => Err(EACCES),
        },
    }
}

/// [`for_check`] for the checks that fail with ENOENT when SELinux is disabled.
#[inline]
pub(crate) fn for_check_enabled() -> Res<&'static Kernel> {
    for_check()?.ok_or(ENOENT)
}

/// The kernel if a policy is loaded, without loading one.
pub(crate) fn loaded() -> Option<&'static Kernel> {
    KERNEL.get()
}

/// The kernel if a policy is loaded or loadable, without an error.
pub(crate) fn enabled() -> Option<&'static Kernel> {
    kernel().ok()
}

/// is_selinux_enabled: a policy is loaded, or one was named and could not be loaded. SELinux is
/// then meant to be on, and a program that checks only when it is on must go on checking (and
/// be denied), not skip its checks as on a system without SELinux.
pub(crate) fn meant_to_be_on() -> bool {
    enabled().is_some() || ENV.load(Acquire) > 0
}

#[cold]
fn from_env() -> Res<&'static Kernel> {
    crate::fork::register();
    if let Some(e) = decided(ENV.load(Acquire)) {
        return Err(e);
    }
    let (e, why) = {
        let _g = lock(&LOADING);
        if let Some(k) = KERNEL.get() {
            return Ok(k);
        }
        if let Some(e) = decided(ENV.load(Acquire)) {
            return Err(e);
        }
        let Some(path) = std::env::var_os(POLICY_ENV) else {
            ENV.store(DISABLED, Release);
            return Err(ENOENT);
        };
        let path = path.to_string_lossy().into_owned();
        match read_policy(&path) {
            Ok(server) => return Ok(install(server)),
            Err((e, why)) => {
                ENV.store(e.0, Release);
                (e, why)
            }
        }
    };
    // Logged once, by the thread that tried, with no lock held: the log callback may call
    // back into the library.
    callbacks::log(callbacks::SELINUX_ERROR, &format!("seaccess: cannot load policy {why}; denying every access until a policy is loaded\n"));
    Err(e)
}

/// What `ENV` says without a load: the error to answer, or None if undecided.
fn decided(env: i32) -> Option<Errno> {
    match env {
        UNDECIDED => None,
        DISABLED => Some(ENOENT),
        e => Some(Errno(e)),
    }
}

/// The security server of the policy image at `path`, or the errno and the log line's reason
/// (the file, and why).
fn read_policy(path: &str) -> Result<SecurityServer, (Errno, String)> {
    let data = seaccess_policy::read_file(path).map_err(|e| (file_errno(&e), e.to_string()))?;
    SecurityServer::from_bytes(&data).map_err(|e| (EINVAL, format!("{path}: {e}")))
}

/// The errno for a policy file that cannot be read: the system's when opening or reading it
/// failed, EFBIG when it is larger than any policy, EINVAL when it is not a regular file.
fn file_errno(e: &seaccess_policy::PolicyError) -> Errno {
    match e {
        seaccess_policy::PolicyError::Io { source, .. } => Errno(source.raw_os_error().filter(|&n| n > 0).unwrap_or(libc::EIO)),
        seaccess_policy::PolicyError::TooLarge { .. } => Errno(libc::EFBIG),
        _ => EINVAL,
    }
}

/// Makes `server` the process's kernel (called under LOADING, with no kernel yet). The cache
/// follows the server before the library's own listener is registered, and the listener moves
/// the cache to the new policy itself before anything else: a program's callbacks
/// (SELINUX_CB_POLICYLOAD, AVC_CALLBACK_RESET) see the new policy, as libselinux resets its
/// cache before calling them.
fn install(server: SecurityServer) -> &'static Kernel {
    crate::fork::register();
    let server = Arc::new(server);
    KERNEL.get_or_init(|| {
        let avc = Arc::new(Avc::new(server.clone(), DEFAULT_CAPACITY));
        let following = avc.follow(&*server);
        let weak = Arc::downgrade(&avc);
        let policyload = server.on_policy_change(move |seqno: Seqno| {
            if let Some(avc) = weak.upgrade() {
                avc.policy_changed(seqno);
            }
            callbacks::policy_loaded(seqno.0);
            crate::notify::changed();
        });
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

/// Loads the policy image at `path`, or reloads it if a policy is loaded. A reload holds no
/// library lock (the server serialises changes), so that the callbacks it runs may load too.
pub(crate) fn load(path: &str) -> Res<()> {
    let data = seaccess_policy::read_file(path).map_err(|e| file_errno(&e))?;
    load_bytes(&data, path)
}

/// Loads the policy image `data` (named `path` in messages), or reloads it if a policy is
/// loaded (security_load_policy's write to selinuxfs's `load`).
pub(crate) fn load_bytes(data: &[u8], path: &str) -> Res<()> {
    crate::fork::register();
    let failed = |e: seaccess_security::SecurityError| {
        // No lock held: the log callback may call back into the library.
        callbacks::log(callbacks::SELINUX_ERROR, &format!("seaccess: cannot load policy {path}: {e}\n"));
        EINVAL
    };
    let k = match KERNEL.get() {
        Some(k) => k,
        None => match first_load(data) {
            Ok(None) => return Ok(()),
            Ok(Some(k)) => k,
            Err(e) => return Err(failed(e)),
        },
    };
    k.server.reload(data).map_err(failed)?;
    Ok(())
}

/// Installs the policy image `data` as the first kernel: None once installed, or the kernel
/// another thread installed first (to be reloaded).
fn first_load(data: &[u8]) -> Result<Option<&'static Kernel>, seaccess_security::SecurityError> {
    let _g = lock(&LOADING);
    if let Some(k) = KERNEL.get() {
        return Ok(Some(k));
    }
    install(SecurityServer::from_bytes(data)?);
    Ok(None)
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
    crate::notify::changed();
}
