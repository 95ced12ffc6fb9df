//! The process's one "kernel": the security server, the access vector cache in front of it and
//! the enforcing mode, loaded once and then only changed in place (a policy reload goes through
//! the server, an `avc_reset` flushes the cache).
//!
//! Fail closed: `SEACCESS_POLICY` is looked at once. Unset, the process is "SELinux disabled"
//! (ENOENT, as libselinux without selinuxfs). Set to a policy that cannot be read or parsed,
//! the process is closed: checks answer EACCES, other calls the load's errno, the failure is
//! logged once and the file never read again, until a load ([`load`]) succeeds.
//!
//! A secure-execution process (set-user-ID, set-group-ID or with file capabilities: the
//! kernel's AT_SECURE, what glibc's `secure_getenv` tests) runs with its caller's environment,
//! so it reads no `SEACCESS_*` variable ([`env`]): its policy is the system's, the one
//! /etc/selinux/config's SELINUXTYPE names (`policy/policy.N` under its root, the highest N
//! installed, as libselinux's selinux_mkload_policy finds it), and a configuration that names
//! no installed policy closes the process as an unloadable SEACCESS_POLICY does. It is never
//! "SELinux disabled": a caller must not be able to switch a setuid program's checks off.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::*};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use seaccess_avc::Avc;
use seaccess_engine::{Engine, EngineError};
use seaccess_security::{Generation, SecurityServer};
use seaccess_types::{lock, Registration, Seqno};

use crate::callbacks;
use crate::ffi::{Errno, Res, EACCES, EINVAL, ENOENT};

/// The environment variable naming the policy to load at the first call that needs one.
pub const POLICY_ENV: &str = "SEACCESS_POLICY";

/// Whether this process runs in secure-execution mode: the kernel set AT_SECURE because the
/// exec changed its credentials (set-user-ID, set-group-ID, file capabilities) or an LSM asked
/// for it. Its environment then comes from a caller who may not be trusted with what the
/// process can do.
pub(crate) fn secure_execution() -> bool {
    // SAFETY: getauxval takes a number and reads the auxiliary vector the kernel gave the
    // process at exec, which nothing writes afterwards; it has no other effect.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// The `SEACCESS_*` variable `name`, as glibc's secure_getenv gives it: None in a
/// secure-execution process, whatever its environment holds. Every variable that chooses a
/// policy or a subject is read through this.
pub(crate) fn env(name: &str) -> Option<OsString> {
    if secure_execution() {
        return None;
    }
    std::env::var_os(name)
}

/// Where the process's policy comes from, decided once.
enum Source {
    /// The policy file to load: SEACCESS_POLICY's, or in a secure-execution process the
    /// system's.
    File(PathBuf),
    /// An ordinary process without SEACCESS_POLICY: SELinux disabled.
    Disabled,
    /// A secure-execution process whose system configuration names no installed policy: why.
    Missing(String),
}

static SOURCE: OnceLock<Source> = OnceLock::new();

/// The policy's source, decided under LOADING (held by the caller), so that no fork happens
/// while it is decided (the fork handlers take LOADING first).
fn source_held(_loading: &MutexGuard<'_, ()>) -> &'static Source {
    SOURCE.get_or_init(|| {
        if !secure_execution() {
            return match std::env::var_os(POLICY_ENV) {
                Some(p) => Source::File(PathBuf::from(p)),
                None => Source::Disabled,
            };
        }
        match crate::paths::installed_policy() {
            Some(p) => Source::File(PathBuf::from(p)),
            None => Source::Missing(format!(
                "of this set-user-ID, set-group-ID or capability-raising program: the system configuration ({}, SELINUXTYPE) names no installed policy under {}/policy",
                crate::paths::CONFIG,
                crate::paths::policy_root()
            )),
        }
    })
}

/// The policy file the process loads (or loaded) by itself, None when it has none to load
/// (selinux_current_policy_path).
pub(crate) fn policy_path() -> Option<&'static PathBuf> {
    let s = match SOURCE.get() {
        Some(s) => s,
        None => source_held(&lock(&LOADING)),
    };
    match s {
        Source::File(p) => Some(p),
        Source::Disabled | Source::Missing(_) => None,
    }
}

pub(crate) struct Kernel {
    /// The policy opened, reloaded and checked against by numbers through the one front door
    /// (crates/engine): its security server and the cache following it are `server` and `avc`.
    pub engine: Engine,
    /// The engine's security server.
    pub server: Arc<SecurityServer>,
    /// The engine's cache, the one for the process's life: avc_reset and avc_destroy flush it
    /// in place, so that a check reaches it through a plain pointer, with no reference counted
    /// and no per-thread copy to keep current.
    pub avc: Arc<Avc>,
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

    /// Runs `f` with the current policy generation, again with the new one whenever it halts
    /// with [`Halt::Stale`] (the policy changed between resolving its numbers and deciding),
    /// through the engine's one retry loop ([`Engine::with_generation`]). A check that never
    /// settles (the policy changed [`seaccess_engine::RETRIES`] times under it) is refused with
    /// EACCES: an enforcing path fails closed.
    pub fn with_generation<T>(&self, mut f: impl FnMut(&Generation) -> Result<T, Halt>) -> Res<T> {
        let r = self.engine.with_generation(|g| match f(g.policy()) {
            Ok(v) => Ok(Ok(v)),
            Err(Halt::Errno(e)) => Ok(Err(e)),
            Err(Halt::Stale { asked, answered }) => Err(EngineError::Stale { asked, answered }),
        });
        r.unwrap_or(Err(EACCES))
    }
}

/// Why a check made in one generation stops short of an answer: an errno for the caller, or
/// the policy changed under it ([`Kernel::with_generation`] runs it again).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Halt {
    /// The caller's error.
    Errno(Errno),
    /// Numbers resolved under generation `asked`, the cache answering from `answered`.
    Stale { asked: Seqno, answered: Seqno },
}

impl From<Errno> for Halt {
    fn from(e: Errno) -> Halt {
        Halt::Errno(e)
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
    let k = match KERNEL.get() {
        Some(k) => k,
        None => from_env()?,
    };
    // In a `seaccess run` session, the session's mode and booleans (one load when unchanged).
    crate::session::sync(k);
    Ok(k)
}

/// The kernel for an access check (selinux_check_access, avc_has_perm, security_compute_av):
/// None when no policy is named (SELinux disabled: libselinux's checks then pass or fail as on
/// a kernel without SELinux), and EACCES when a named policy could not be loaded. A process
/// that names a policy and cannot load it denies everything until a load succeeds: it fails
/// closed, never open.
#[inline]
pub(crate) fn for_check() -> Res<Option<&'static Kernel>> {
    let k = match KERNEL.get() {
        Some(k) => k,
        None => match from_env() {
            Ok(k) => k,
            Err(_) if ENV.load(Acquire) == DISABLED => return Ok(None),
            Err(_) => return Err(EACCES),
        },
    };
    crate::session::sync(k);
    Ok(Some(k))
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
    let loaded = {
        let g = lock(&LOADING);
        if let Some(k) = KERNEL.get() {
            return Ok(k);
        }
        if let Some(e) = decided(ENV.load(Acquire)) {
            return Err(e);
        }
        let loaded = match source_held(&g) {
            Source::Disabled => {
                ENV.store(DISABLED, Release);
                return Err(ENOENT);
            }
            Source::Missing(why) => Err((ENOENT, why.clone())),
            Source::File(path) => Engine::open(path)
                .map(install)
                .map_err(|e| (engine_errno(&e), e.to_string())),
        };
        match loaded {
            Ok(k) => Ok(k),
            Err((e, why)) => {
                ENV.store(e.0, Release);
                Err((e, why))
            }
        }
    };
    // Logged once, by the thread that tried, with no lock held: the log callback may call
    // back into the library.
    ignored_variables();
    let (e, why) = match loaded {
        Ok(k) => return Ok(k),
        Err(x) => x,
    };
    callbacks::log(
        callbacks::SELINUX_ERROR,
        &format!(
            "seaccess: cannot load policy {why}; denying every access until a policy is loaded\n"
        ),
    );
    Err(e)
}

/// Says, once, that a secure-execution process ignores the `SEACCESS_*` variables its caller
/// set: a user who sets them sees why they change nothing.
fn ignored_variables() {
    if !secure_execution() {
        return;
    }
    let set: Vec<&str> = [POLICY_ENV, crate::proccon::SUBJECTS_ENV]
        .into_iter()
        .filter(|v| std::env::var_os(v).is_some())
        .collect();
    if set.is_empty() {
        return;
    }
    let policy = policy_path().map_or_else(|| "none".to_string(), |p| p.display().to_string());
    callbacks::log(
        callbacks::SELINUX_INFO,
        &format!("seaccess: a set-user-ID, set-group-ID or capability-raising program ignores {}; policy: {policy}\n", set.join(" and ")),
    );
}

/// What `ENV` says without a load: the error to answer, or None if undecided.
fn decided(env: i32) -> Option<Errno> {
    match env {
        UNDECIDED => None,
        DISABLED => Some(ENOENT),
        e => Some(Errno(e)),
    }
}

/// The errno for a policy the engine could not open: the file's ([`file_errno`]), else EINVAL
/// (bytes that are not a policy this library loads).
fn engine_errno(e: &EngineError) -> Errno {
    match e {
        EngineError::Read(e) => file_errno(e),
        _ => EINVAL,
    }
}

/// The errno for a policy file that cannot be read: the system's when opening or reading it
/// failed, EFBIG when it is larger than any policy, EINVAL when it is not a regular file.
fn file_errno(e: &seaccess_policy::PolicyError) -> Errno {
    match e {
        seaccess_policy::PolicyError::Io { source, .. } => Errno(
            source
                .raw_os_error()
                .filter(|&n| n > 0)
                .unwrap_or(libc::EIO),
        ),
        seaccess_policy::PolicyError::TooLarge { .. } => Errno(libc::EFBIG),
        _ => EINVAL,
    }
}

/// Makes `engine` the process's kernel (called under LOADING, with no kernel yet). The engine's
/// cache follows the server before the library's own listener is registered, and the listener
/// moves the cache to the new policy itself before anything else: a program's callbacks
/// (SELINUX_CB_POLICYLOAD, AVC_CALLBACK_RESET) see the new policy, as libselinux resets its
/// cache before calling them.
fn install(engine: Engine) -> &'static Kernel {
    crate::fork::register();
    KERNEL.get_or_init(|| {
        let server = engine.server().clone();
        let avc = engine.avc().clone();
        let weak = Arc::downgrade(&avc);
        let policyload = server.on_policy_change(move |seqno: Seqno| {
            if let Some(avc) = weak.upgrade() {
                avc.policy_changed(seqno);
            }
            callbacks::policy_loaded(seqno.0);
            crate::notify::changed();
        });
        Kernel {
            engine,
            avc,
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
    let failed = |e: EngineError| {
        // The engine names bytes "policy image": the log names what the caller loaded.
        let why = match &e {
            EngineError::Load { source, .. } => source.to_string(),
            e => e.to_string(),
        };
        // No lock held: the log callback may call back into the library.
        callbacks::log(
            callbacks::SELINUX_ERROR,
            &format!("seaccess: cannot load policy {path}: {why}\n"),
        );
        engine_errno(&e)
    };
    let k = match KERNEL.get() {
        Some(k) => k,
        None => match first_load(data) {
            Ok(None) => return Ok(()),
            Ok(Some(k)) => k,
            Err(e) => return Err(failed(e)),
        },
    };
    k.engine.reload_bytes(data).map_err(failed)?;
    Ok(())
}

/// Installs the policy image `data` as the first kernel: None once installed, or the kernel
/// another thread installed first (to be reloaded).
fn first_load(data: &[u8]) -> Result<Option<&'static Kernel>, EngineError> {
    let _g = lock(&LOADING);
    if let Some(k) = KERNEL.get() {
        return Ok(Some(k));
    }
    install(Engine::from_bytes(data)?);
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
