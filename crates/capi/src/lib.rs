//! libseaccess: seaccess behind libselinux's C API, so that an object manager written for
//! libselinux (`avc_has_perm`, `security_compute_av`, `selinux_check_access`, ...) runs on
//! seaccess by relinking, without a kernel that runs SELinux.
//!
//! libselinux is a process-global API, so this library keeps one global "kernel" (a security
//! server, its access vector cache and its enforcing mode), loaded by [`seaccess_load_policy`]
//! or, at the first call that needs it, from the `SEACCESS_POLICY` environment variable. With no
//! policy named, every call fails as libselinux's does on a kernel without SELinux (mostly
//! ENOENT). A named policy that cannot be loaded closes the process instead: every check denies
//! (EACCES) and every other call fails with the load's errno until a load succeeds (see
//! `state`); it is never taken for "SELinux disabled".
//!
//! No program callback runs with a library lock held, and the cache follows a reload before
//! the callbacks are told of it. The library is fork-safe: `pthread_atfork` handlers hold
//! every lock across a fork and repair in the child what other threads left half done (see
//! `fork`).
//!
//! Every exported function runs its body through [`ffi::guard`], which catches panics so that
//! none crosses into C, and turns errors into libselinux's `-1` and errno. The crate allows
//! unsafe code (rustc counts every exported symbol as such); each unsafe block says why it is
//! sound in its SAFETY comment.

#![allow(unsafe_code)]

mod admin;
mod audit;
mod avc;
mod avc_life;
mod booleans;
mod callbacks;
mod compute;
mod context;
mod decision;
mod execfilecon;
mod ffi;
mod filecon;
mod fork;
mod front;
#[cfg(test)]
mod front_tests;
mod interpose;
mod kernel;
mod load;
mod lookup;
mod mapping;
mod matchpathcon;
mod memo;
mod names;
mod notify;
mod objects;
#[cfg(test)]
mod park;
mod paths;
mod proccon;
mod publish;
mod restorecon;
#[cfg(test)]
mod retry_tests;
mod selabel;
mod session;
mod seusers;
mod sid;
mod state;
mod status;
mod thread;
mod translate;
mod usercon;

pub use ffi::Errno;

/// What the fork handlers hold across a fork ([`fork`] is the mechanism; the list is here, where
/// every module is declared, so that the tables register with `fork` without `fork` naming them
/// back). Taken in the order every path of the library nests them: the load lock, the server's
/// locks, the cache's, the callbacks, the SID table, the interned names, then the tables that
/// nest in no other lock.
fn hold_for_fork() -> fork::Held {
    // First: a session's statistics slot (its holder then takes the cache's statistics lock);
    // in the child it also ends an apply of the session's state another thread was making.
    let session = session::hold();
    let loading = seaccess_types::lock(&kernel::LOADING);
    let k = kernel::loaded();
    let server = k.map(|k| k.server.fork_guard());
    let avc = k.map(|k| k.avc.fork_guard());
    let (callbacks, sids, names) = (callbacks::hold(), sid::hold(), ffi::hold_names());
    let tables = (
        mapping::hold(),
        matchpathcon::hold(),
        restorecon::hold(),
        proccon::hold(),
        paths::hold(),
        status::hold(),
        // Last: a lookup compiles and frees expressions under a handle's lock.
        seaccess_label::jit::fork_guard(),
        // The statistics stripes' free list, the process's (nests in no other lock).
        seaccess_avc::stripe::hold(),
    );
    fork::Held {
        // Released in the reverse order: a tuple drops its fields first to last.
        tables: Box::new((tables, names, sids, callbacks)),
        avc,
        server,
        loading: Box::new((session, loading)),
    }
}
pub use load::{seaccess_load_policy, seaccess_reload_policy};
