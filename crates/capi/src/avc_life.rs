//! The userspace AVC's life and its SIDs (avc.h): avc_open and avc_init, avc_reset,
//! avc_destroy, the SID calls and the initial contexts, the statistics, and the netlink calls
//! that stand for the kernel's notifications. The checks, which speak the program's class
//! numbering (selinux_set_mapping), are in avc.rs, above the class map; these are below it, so
//! that setting a map can reset the cache.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::Ordering::*;

use crate::callbacks::{self, AVC_OPEN};
use crate::ffi::{self, Res, EINVAL, ENOENT};
use crate::kernel::Kernel;
use crate::sid::{self, SecurityId};
use crate::state;

/// libselinux's `struct selinux_opt`.
#[repr(C)]
pub struct SelinuxOpt {
    pub kind: c_int,
    pub value: *const c_char,
}

/// libselinux's `struct avc_cache_stats`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct AvcCacheStats {
    pub entry_lookups: c_uint,
    pub entry_hits: c_uint,
    pub entry_misses: c_uint,
    pub entry_discards: c_uint,
    pub cav_lookups: c_uint,
    pub cav_hits: c_uint,
    pub cav_probes: c_uint,
    pub cav_misses: c_uint,
}

const AVC_OPT_SETENFORCE: c_int = 1;

/// Marks the AVC open (libselinux's avc_init_internal), following the kernel's mode unless
/// `own` gives it one.
pub(crate) fn open(k: &Kernel, own: Option<bool>) {
    match own {
        Some(on) => {
            k.avc_own_mode.store(true, Release);
            k.avc.set_enforcing(on);
        }
        None => {
            k.avc_own_mode.store(false, Release);
            k.avc.set_enforcing(k.enforcing.load(Acquire));
        }
    }
    AVC_OPEN.store(true, Release);
}

#[no_mangle]
pub extern "C" fn avc_open(opts: *const SelinuxOpt, nopts: c_uint) -> c_int {
    ffi::guard(-1, || {
        if opts.is_null() && nopts != 0 {
            return Err(EINVAL);
        }
        let mut own = None;
        for i in 0..nopts as usize {
            // SAFETY: the caller passes an array of `nopts` options (checked non-NULL above).
            let o = unsafe { &*opts.add(i) };
            if o.kind == AVC_OPT_SETENFORCE {
                own = Some(!o.value.is_null());
            }
        }
        let k = state::kernel()?;
        open(k, own);
        Ok(0)
    })
}

/// Closes the AVC: its callbacks are forgotten, its cache emptied and its SIDs retired (their
/// memory given back, as libselinux frees them). Where libselinux's freed SIDs are dangling
/// pointers, ours are refused with EINVAL.
#[no_mangle]
pub extern "C" fn avc_destroy() {
    ffi::guard((), || {
        AVC_OPEN.store(false, Release);
        callbacks::forget_avc_callbacks();
        if let Some(k) = state::enabled() {
            k.reset_cache();
        }
        // The fronts' query entries compare arguments with the SIDs' texts, which retiring
        // zeroes: the stamp moves before (a comparison that read a zeroed byte then sees the
        // new stamp when it reads it again, front::query) as well as after.
        if let Some(k) = state::enabled() {
            crate::front::invalidate(&k.avc);
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        }
        // libselinux frees its SIDs here (sidtab_destroy): a long-running program that opens
        // and destroys the AVC gets its memory back; a SID kept past this is EINVAL.
        sid::retire();
        // The fronts' entries are keyed by the retired SIDs' pointers.
        if let Some(k) = state::enabled() {
            crate::front::invalidate(&k.avc);
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn avc_reset() -> c_int {
    ffi::guard(-1, || {
        ffi::set_errno(0);
        if !AVC_OPEN.load(Acquire) {
            return Ok(0);
        }
        if let Some(k) = state::enabled() {
            k.reset_cache();
        }
        Ok(callbacks::run_reset_callbacks())
    })
}

/// Nothing to reclaim: the cache evicts as it inserts (libselinux's is a no-op too).
#[no_mangle]
pub extern "C" fn avc_cleanup() {}

#[no_mangle]
pub extern "C" fn avc_context_to_sid_raw(ctx: *const c_char, out: *mut *mut SecurityId) -> c_int {
    ffi::guard(-1, || {
        if out.is_null() {
            return Err(EINVAL);
        }
        let s = sid::intern(ffi::str_arg(ctx)?)?;
        ffi::out(out, sid::as_ptr(s))?;
        Ok(0)
    })
}

/// Without mcstrans, translated and raw contexts are the same.
#[no_mangle]
pub extern "C" fn avc_context_to_sid(ctx: *const c_char, out: *mut *mut SecurityId) -> c_int {
    avc_context_to_sid_raw(ctx, out)
}

#[no_mangle]
pub extern "C" fn avc_sid_to_context_raw(sid: *mut SecurityId, ctx: *mut *mut c_char) -> c_int {
    ffi::guard(-1, || {
        if ctx.is_null() {
            return Err(EINVAL);
        }
        ffi::out(ctx, std::ptr::null_mut())?;
        let s = sid::from_ptr(sid)?;
        ffi::out(ctx, ffi::c_string(s.text())?)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn avc_sid_to_context(sid: *mut SecurityId, ctx: *mut *mut c_char) -> c_int {
    avc_sid_to_context_raw(sid, ctx)
}

/// The context of an initial SID by name (`kernel`, `unlabeled`, ...), as selinuxfs's
/// initial_contexts directory gives it; ENOENT for a name the policy does not define.
pub(crate) fn initial_context(name: &str) -> Res<String> {
    let g = state::kernel()?.server.snapshot();
    let n = seaccess_security::INITIAL_SID_NAMES
        .iter()
        .position(|&x| !x.is_empty() && x == name)
        .ok_or(ENOENT)?;
    let sid = g.initial_sid(n as u32).ok_or(ENOENT)?;
    g.sid_to_context(sid).map_err(|_| ENOENT)
}

#[no_mangle]
pub extern "C" fn avc_get_initial_sid(name: *const c_char, out: *mut *mut SecurityId) -> c_int {
    ffi::guard(-1, || {
        if out.is_null() {
            return Err(EINVAL);
        }
        let ctx = initial_context(ffi::str_arg(name)?)?;
        ffi::out(out, sid::as_ptr(sid::intern(&ctx)?))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn security_get_initial_context_raw(
    name: *const c_char,
    con: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        if con.is_null() {
            return Err(EINVAL);
        }
        let ctx = initial_context(ffi::str_arg(name)?)?;
        ffi::out(con, ffi::c_string(&ctx)?)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn security_get_initial_context(
    name: *const c_char,
    con: *mut *mut c_char,
) -> c_int {
    security_get_initial_context_raw(name, con)
}

/// Counts a reference; the SID is never freed. Returns the new count (libselinux 3.4 returns 1
/// and counts nothing).
#[no_mangle]
pub extern "C" fn sidget(sid: *mut SecurityId) -> c_int {
    ffi::guard(-1, || Ok(sid::from_ptr(sid)?.get() as c_int))
}

#[no_mangle]
pub extern "C" fn sidput(sid: *mut SecurityId) -> c_int {
    ffi::guard(-1, || Ok(sid::from_ptr(sid)?.put() as c_int))
}

/// The statistics as libselinux counts them for callers that pass no entry reference: every
/// check is an entry-reference miss and one cache lookup.
#[no_mangle]
pub extern "C" fn avc_cache_stats(p: *mut AvcCacheStats) {
    ffi::guard((), || {
        let s = state::enabled()
            .map(|k| k.avc.cache_stats())
            .unwrap_or_default();
        let n = |v: u64| v as c_uint;
        ffi::out(
            p,
            AvcCacheStats {
                entry_lookups: n(s.lookups),
                entry_hits: 0,
                entry_misses: n(s.lookups),
                entry_discards: 0,
                cav_lookups: n(s.lookups),
                cav_hits: n(s.hits),
                cav_probes: n(s.hits),
                cav_misses: n(s.misses),
            },
        )
    })
}

#[no_mangle]
pub extern "C" fn avc_av_stats() {
    ffi::guard((), || {
        let h = state::kernel()?.avc.hash_stats();
        callbacks::log(
            callbacks::SELINUX_INFO,
            &format!(
                "avc:  {} AV entries and {}/{} buckets used, longest chain length {}\n",
                h.entries, h.buckets_used, h.buckets, h.longest_chain
            ),
        );
        Ok(())
    })
}

/// The SID table is an index with one SID per slot: every SID its own bucket.
#[no_mangle]
pub extern "C" fn avc_sid_stats() {
    ffi::guard((), || {
        let n = sid::count();
        callbacks::log(
            callbacks::SELINUX_INFO,
            &format!(
                "avc:  {n} SID entries and {n}/{n} buckets used, longest chain length {}\n",
                n.min(1)
            ),
        );
        Ok(())
    })
}

/// Policy changes reach the cache directly from the in-process security server, so there is no
/// netlink socket: these succeed and do nothing.
#[no_mangle]
pub extern "C" fn avc_netlink_open(_blocking: c_int) -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn avc_netlink_loop() {}

#[no_mangle]
pub extern "C" fn avc_netlink_close() {}

/// Takes the notifications that arrived (see [`crate::notify`]); the cache has already
/// followed each change.
#[no_mangle]
pub extern "C" fn avc_netlink_check_nb() -> c_int {
    ffi::guard(-1, || {
        crate::notify::drain();
        Ok(0)
    })
}

/// A descriptor that becomes readable at every policy load, boolean commit and enforcing
/// switch (an eventfd standing for libselinux's netlink socket); read it with
/// avc_netlink_check_nb.
#[no_mangle]
pub extern "C" fn avc_netlink_acquire_fd() -> c_int {
    ffi::guard(-1, crate::notify::fd)
}

#[no_mangle]
pub extern "C" fn avc_netlink_release_fd() {}

/// The old initialisation (callbacks for memory, logging, threads and locks): the cache opened
/// as avc_open does; this library allocates and locks by itself, and its log goes through
/// selinux_set_callback.
#[no_mangle]
pub extern "C" fn avc_init(
    _prefix: *const c_char,
    _mem: *const c_void,
    _log: *const c_void,
    _thread: *const c_void,
    _lock: *const c_void,
) -> c_int {
    avc_open(std::ptr::null(), 0)
}
