//! The process's one "kernel" once it is loaded: the security server, the access vector cache
//! in front of it and the enforcing mode ([`Kernel`]), made from a policy image once
//! ([`load`], [`load_bytes`], [`install`]) and then only changed in place (a policy reload goes
//! through the server, an `avc_reset` flushes the cache, [`set_enforcing`] switches the mode).
//!
//! This is the bottom of the library's state: it names no module that asks for the kernel.
//! Finding the policy to load at the first call that needs one (`SEACCESS_POLICY`, or the
//! system's in a secure-execution process), and keeping the kernel in step with a `seaccess run`
//! session at each call, are [`crate::state`]'s, above the modules they call.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};

use seaccess_avc::Avc;
use seaccess_engine::{Engine, EngineError};
use seaccess_security::{Generation, SecurityServer};
use seaccess_types::{lock, Registration, Seqno};

use crate::callbacks;
use crate::ffi::{Errno, Res, EACCES, EINVAL};

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

/// The process's kernel: the policy behind one front door, its enforcing mode and the cache's.
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

/// The kernel if a policy is loaded, without loading one.
pub(crate) fn loaded() -> Option<&'static Kernel> {
    KERNEL.get()
}

/// The errno for a policy the engine could not open: the file's ([`file_errno`]), else EINVAL
/// (bytes that are not a policy this library loads).
pub(crate) fn engine_errno(e: &EngineError) -> Errno {
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
pub(crate) fn install(engine: Engine) -> &'static Kernel {
    crate::fork::register();
    callbacks::open_audit_sink(env(callbacks::AUDIT_ENV));
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
