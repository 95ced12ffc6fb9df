//! fork: a child forked while other threads are inside the library finds no lock held and
//! nothing half done. libselinux takes no lock unless the program gives it some, so programs
//! that fork (daemons, servers forking workers) do not expect a library to hang their child.
//!
//! `pthread_atfork` handlers, registered once (when the library is loaded, and at the latest at
//! the first call that makes state: see [`register`]), hold every lock of the library, and of
//! the security server and cache it reaches, across the fork: the prepare handler takes them
//! (waiting for a policy being loaded or a change being built to finish), the parent's handler
//! releases them, and the child's repairs what another thread of the parent left half done (a
//! cache entry being written, a change notification being delivered: see
//! `seaccess_security::ForkGuard::child` and `seaccess_avc::ForkGuard::child`) and then
//! releases them.
//!
//! The locks are taken in the order every path of the library nests them: the load lock, the
//! server's (its change lock first), the cache's, then the library's own tables, each of which
//! nests in no other. No program callback runs under any of them, so a callback may fork.

use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering::*};

/// What the prepare handler holds until the parent's or the child's handler runs, as the crate
/// root lists it (`crate::hold_for_fork`, beside the declarations of the modules it names):
/// this module is the mechanism and names none of them, so that each may make sure the
/// handlers are registered ([`register`]) before it makes state, without an import cycle.
/// Fields drop in declaration order: the reverse of the order they are taken in.
pub(crate) struct Held {
    /// The library's own tables (callbacks, SIDs, names, then those nesting in no other lock),
    /// released first; nothing in them is left half done by another thread.
    pub tables: Box<dyn Any>,
    /// The cache's locks, if a policy is loaded.
    pub avc: Option<seaccess_avc::ForkGuard<'static>>,
    /// The security server's locks, its change lock first, if a policy is loaded.
    pub server: Option<seaccess_security::ForkGuard<'static>>,
    /// A `seaccess run` session's statistics slot, then the load lock (taken first: no policy
    /// is half installed across a fork).
    pub loading: Box<dyn Any>,
}

thread_local! {
    /// The forking thread's locks: the handlers of one fork run on the thread that forks (and
    /// the child's only thread is its copy).
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

static REGISTERED: AtomicBool = AtomicBool::new(false);

/// Registers the handlers, once per process.
#[inline]
pub(crate) fn register() {
    if REGISTERED.load(Relaxed) || REGISTERED.swap(true, AcqRel) {
        return;
    }
    // SAFETY: the three handlers are `extern "C" fn()` that live for the process (this library
    // is never unloaded while the process runs: it is linked, not dlopen'ed and closed); they
    // do not panic (a panic cannot unwind out of an `extern "C"` function).
    unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
}

/// Registered when the library is loaded, before any thread can be inside it: a child forked
/// during the first call (a lazy load of SEACCESS_POLICY) is covered too.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static AT_LOAD: extern "C" fn() = at_load;

#[cfg(target_os = "linux")]
extern "C" fn at_load() {
    register();
}

extern "C" fn prepare() {
    let held = crate::hold_for_fork();
    let _ = HELD.try_with(|h| {
        if let Ok(mut h) = h.try_borrow_mut() {
            *h = Some(held);
        }
    });
}

fn take() -> Option<Held> {
    HELD.try_with(|h| h.try_borrow_mut().ok().and_then(|mut h| h.take()))
        .ok()
        .flatten()
}

extern "C" fn parent() {
    drop(take());
}

extern "C" fn child() {
    let Some(Held {
        tables,
        avc,
        server,
        loading,
    }) = take()
    else {
        return;
    };
    drop(tables);
    if let Some(a) = avc {
        a.child();
    }
    if let Some(s) = server {
        s.child();
    }
    drop(loading);
}
