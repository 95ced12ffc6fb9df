//! The process's kernel as each call finds it: loaded at the first call that needs it from the
//! policy the process names, and brought to its `seaccess run` session's state ([`kernel()`],
//! [`for_check`]). The kernel itself, and loading an image into it, are [`crate::kernel`]'s.
//!
//! Fail closed: `SEACCESS_POLICY` is looked at once. Unset, the process is "SELinux disabled"
//! (ENOENT, as libselinux without selinuxfs). Set to a policy that cannot be read or parsed,
//! the process is closed: checks answer EACCES, other calls the load's errno, the failure is
//! logged once and the file never read again, until a load ([`crate::kernel::load`]) succeeds.
//!
//! A secure-execution process (set-user-ID, set-group-ID or with file capabilities: the
//! kernel's AT_SECURE, what glibc's `secure_getenv` tests) runs with its caller's environment,
//! so it reads no `SEACCESS_*` variable ([`crate::kernel::env`]): its policy is the system's,
//! the one /etc/selinux/config's SELINUXTYPE names (`policy/policy.N` under its root, the
//! highest N installed, as libselinux's selinux_mkload_policy finds it), and a configuration
//! that names no installed policy closes the process as an unloadable SEACCESS_POLICY does. It
//! is never "SELinux disabled": a caller must not be able to switch a setuid program's checks
//! off.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering::*};
use std::sync::{MutexGuard, OnceLock};

use seaccess_engine::Engine;
use seaccess_types::lock;

use crate::callbacks;
use crate::ffi::{Errno, Res, EACCES, ENOENT};
use crate::kernel::{self, secure_execution, Kernel, LOADING};

/// The environment variable naming the policy to load at the first call that needs one.
pub const POLICY_ENV: &str = "SEACCESS_POLICY";
/// The environment variable naming a subjects file (see [`crate::proccon`]).
pub const SUBJECTS_ENV: &str = "SEACCESS_SUBJECTS";

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
    let k = match kernel::loaded() {
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
    let k = match kernel::loaded() {
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
        if let Some(k) = kernel::loaded() {
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
                .map(kernel::install)
                .map_err(|e| (kernel::engine_errno(&e), e.to_string())),
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
    let set: Vec<&str> = [POLICY_ENV, SUBJECTS_ENV, callbacks::AUDIT_ENV]
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
