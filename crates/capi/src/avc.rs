//! libselinux's userspace AVC (avc.h) on seaccess's cache: SIDs, checks with their audit
//! records, statistics, and selinux_check_access.
//!
//! `struct avc_entry_ref` is ignored: the seaccess cache's lookup is already lock-free and
//! cheaper than following a hint, so a reference is neither read nor written.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::Ordering::*;

use seaccess_types::{AccessVector, AvDecision, ClassId, HandleUnknown, LabelServer, ServerError, Sid};

use crate::audit::{self, Audited};
use crate::callbacks::{self, AVC_OPEN};
use crate::ffi::{self, Errno, Res, EACCES, EINVAL, ENOENT};
use crate::sid::{self, SecurityId};
use crate::lookup;
use crate::memo;
use crate::state::{self, Kernel};
use crate::thread;

/// libselinux's `struct av_decision`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct AvDecisionC {
    pub allowed: u32,
    pub decided: u32,
    pub auditallow: u32,
    pub auditdeny: u32,
    pub seqno: c_uint,
    pub flags: c_uint,
}

impl From<&AvDecision> for AvDecisionC {
    fn from(d: &AvDecision) -> Self {
        AvDecisionC {
            allowed: d.allowed.0,
            decided: d.decided.0,
            auditallow: d.auditallow.0,
            auditdeny: d.auditdeny.0,
            seqno: d.seqno.0,
            flags: d.flags.0,
        }
    }
}

impl AvDecisionC {
    fn audited(&self) -> Audited {
        Audited { allowed: self.allowed, auditallow: self.auditallow, auditdeny: self.auditdeny }
    }
}

/// libselinux's `struct selinux_opt`.
#[repr(C)]
pub struct SelinuxOpt {
    pub kind: c_int,
    pub value: *const c_char,
}

/// libselinux's `struct avc_entry_ref` (ignored, see the module's doc).
#[repr(C)]
pub struct AvcEntryRef {
    pub ae: *mut c_void,
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

/// libselinux's avd_init: what a failed check leaves in the caller's decision.
fn avd_init(k: &Kernel) -> AvDecisionC {
    AvDecisionC { auditdeny: u32::MAX, seqno: k.server.seqno().0, ..AvDecisionC::default() }
}

/// libselinux's avc_has_perm_noaudit on seaccess's cache: the decision, and whether the request
/// goes through (EACCES when denied and enforced). A context the policy does not define is
/// EINVAL when the cache enforces, and a pass with nothing allowed when it does not (libselinux
/// ignores the kernel's EINVAL in permissive mode). One cache lookup per check, as libselinux
/// counts it.
#[inline(always)]
pub(crate) fn check(k: &Kernel, s: Res<Sid>, t: Res<Sid>, class: u16, requested: u32) -> Result<(AvDecisionC, Res<()>), Errno> {
    let (Ok(s), Ok(t)) = (s, t) else {
        return if k.avc.enforcing() { Err(EINVAL) } else { Ok((avd_init(k), Ok(()))) };
    };
    if requested != 0 {
        match k.avc.verdict_as(s, t, ClassId(class), AccessVector(requested), thread::id()) {
            Ok(v) => return Ok(((&v.decision).into(), if v.enforced { Err(EACCES) } else { Ok(()) })),
            Err(ServerError::InvalidClass(_)) => {}
            Err(_) => return Err(EINVAL),
        }
    }
    check_rest(k, s, t, class, requested)
}

/// The hit path of a check: the cached decision when both SIDs are resolved, the cache holds
/// the triple and its decision allows every requested permission (counted as one lookup).
/// None sends the check the full way ([`check`]), which counts it instead.
#[inline(always)]
fn hit(k: &Kernel, s: &SecurityId, t: &SecurityId, class: u16, requested: u32) -> Option<AvDecision> {
    // An empty request is refused when enforcing: the full way decides it.
    if requested == 0 {
        return None;
    }
    k.avc.allowed_hit_as(s.resolved()?, t.resolved()?, ClassId(class), AccessVector(requested), thread::id())
}

/// The audit record of a granted check, if the decision auditallows a requested permission.
#[inline(always)]
fn audit_grant(s: &SecurityId, t: &SecurityId, class: u16, requested: u32, d: &AvDecision, auditdata: *mut c_void) {
    let a = Audited { allowed: d.allowed.0, auditallow: d.auditallow.0, auditdeny: d.auditdeny.0 };
    audit::audit(s, t, class, requested, &a, 0, auditdata);
}

/// An empty request, or a class the policy does not define.
#[cold]
#[inline(never)]
fn check_rest(k: &Kernel, s: Sid, t: Sid, class: u16, requested: u32) -> Result<(AvDecisionC, Res<()>), Errno> {
    let avc = &k.avc;
    let d = match avc.decide(s, t, ClassId(class)) {
        Ok(d) => d,
        Err(ServerError::InvalidClass(_)) => crate::compute::unknown_class_decision(k, class),
        Err(_) => return Err(EINVAL),
    };
    // An empty request is refused when enforcing (libselinux: `if (!requested || denied)`).
    let denied = requested & !d.allowed.0;
    let refused = (requested == 0 || denied != 0) && avc.enforcing() && !d.flags.permissive();
    Ok(((&d).into(), if refused { Err(EACCES) } else { Ok(()) }))
}

/// Marks the AVC open (libselinux's avc_init_internal), following the kernel's mode unless
/// `own` gives it one.
fn open(k: &Kernel, own: Option<bool>) {
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

/// Closes the AVC: its callbacks are forgotten and its cache emptied. Unlike libselinux's, the
/// SIDs stay valid (they are interned for the process's life).
#[no_mangle]
pub extern "C" fn avc_destroy() {
    ffi::guard((), || {
        AVC_OPEN.store(false, Release);
        callbacks::forget_avc_callbacks();
        if let Some(k) = state::enabled() {
            k.reset_cache();
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
    let k = state::kernel()?;
    let n = seaccess_security::INITIAL_SID_NAMES.iter().position(|&x| !x.is_empty() && x == name).ok_or(ENOENT)?;
    let sid = k.server.initial_sid(n as u32).ok_or(ENOENT)?;
    k.server.sid_to_context(sid).map_err(|_| ENOENT)
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
pub extern "C" fn security_get_initial_context_raw(name: *const c_char, con: *mut *mut c_char) -> c_int {
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
pub extern "C" fn security_get_initial_context(name: *const c_char, con: *mut *mut c_char) -> c_int {
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

#[no_mangle]
pub extern "C" fn avc_has_perm_noaudit(
    ssid: *mut SecurityId,
    tsid: *mut SecurityId,
    tclass: u16,
    requested: u32,
    _aeref: *mut AvcEntryRef,
    avd: *mut AvDecisionC,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        let (sc, tc) = sid::from_ptrs(ssid, tsid)?;
        if let Some(d) = hit(k, sc, tc, tclass, requested) {
            if !avd.is_null() {
                ffi::out(avd, AvDecisionC::from(&d))?;
            }
            return Ok(0);
        }
        has_perm_noaudit_full(k, sc, tc, tclass, requested, avd)
    })
}

#[cold]
#[inline(never)]
fn has_perm_noaudit_full(k: &Kernel, sc: &SecurityId, tc: &SecurityId, tclass: u16, requested: u32, avd: *mut AvDecisionC) -> Res<c_int> {
    if !avd.is_null() {
        ffi::out(avd, avd_init(k))?;
    }
    let (s, t) = (sc.resolve(&k.server), tc.resolve(&k.server));
    let (d, rc) = check(k, s, t, tclass, requested)?;
    if !avd.is_null() {
        ffi::out(avd, d)?;
    }
    rc.map(|()| 0)
}

#[no_mangle]
pub extern "C" fn avc_has_perm(
    ssid: *mut SecurityId,
    tsid: *mut SecurityId,
    tclass: u16,
    requested: u32,
    _aeref: *mut AvcEntryRef,
    auditdata: *mut c_void,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        let (sc, tc) = sid::from_ptrs(ssid, tsid)?;
        if let Some(d) = hit(k, sc, tc, tclass, requested) {
            audit_grant(sc, tc, tclass, requested, &d, auditdata);
            return Ok(0);
        }
        has_perm_full(k, sc, tc, tclass, requested, auditdata)
    })
}

/// avc_has_perm past the hit path: a miss, a denial, an unresolved context or an empty request.
#[cold]
#[inline(never)]
fn has_perm_full(k: &Kernel, sc: &SecurityId, tc: &SecurityId, tclass: u16, requested: u32, auditdata: *mut c_void) -> Res<c_int> {
    let (s, t) = (sc.resolve(&k.server), tc.resolve(&k.server));
    let (d, rc) = match check(k, s, t, tclass, requested) {
        Ok(x) => x,
        Err(e) => (avd_init(k), Err(e)),
    };
    let result = if rc.is_ok() { 0 } else { -1 };
    audit::audit(sc, tc, tclass, requested, &d.audited(), result, auditdata);
    rc.map(|()| 0)
}

#[no_mangle]
pub extern "C" fn avc_audit(
    ssid: *mut SecurityId,
    tsid: *mut SecurityId,
    tclass: u16,
    requested: u32,
    avd: *mut AvDecisionC,
    result: c_int,
    auditdata: *mut c_void,
) {
    ffi::guard((), || {
        let s = sid::from_ptr(ssid)?;
        let t = sid::from_ptr(tsid)?;
        if avd.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: a non-NULL pointer to the caller's `struct av_decision`, read once.
        let d = unsafe { avd.read() };
        audit::audit(s, t, tclass, requested, &d.audited(), result, auditdata);
        Ok(())
    })
}

/// The statistics as libselinux counts them for callers that pass no entry reference: every
/// check is an entry-reference miss and one cache lookup.
#[no_mangle]
pub extern "C" fn avc_cache_stats(p: *mut AvcCacheStats) {
    ffi::guard((), || {
        let s = state::enabled().map(|k| k.avc.cache_stats()).unwrap_or_default();
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
            &format!("avc:  {n} SID entries and {n}/{n} buckets used, longest chain length {}\n", n.min(1)),
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

#[no_mangle]
pub extern "C" fn avc_netlink_check_nb() -> c_int {
    0
}

/// libselinux's selinux_check_access: 0 when allowed (or when no policy is loaded: SELinux
/// disabled), -1 with errno EACCES when denied; an unknown class or permission is allowed when
/// the policy allows unknown permissions, else EINVAL.
#[no_mangle]
pub extern "C" fn selinux_check_access(
    scon: *const c_char,
    tcon: *const c_char,
    class: *const c_char,
    perm: *const c_char,
    aux: *mut c_void,
) -> c_int {
    ffi::guard(-1, || {
        let Some(k) = state::enabled() else { return Ok(0) };
        if !AVC_OPEN.load(Relaxed) {
            open(k, None);
        }
        let seed = lookup::key();
        let (s, t, c, av) = match memo::query(k, seed, scon, tcon, class, perm)? {
            Some(x) => x,
            None => match unknown_class_perm(k, ffi::str_arg(class)?, ffi::str_arg(perm)?)? {
                Some((c, av)) => (memo::context(seed, scon)?.1, memo::context(seed, tcon)?.1, c, av),
                None => return Ok(0),
            },
        };
        if let Some(d) = hit(k, s, t, c.0, av.0) {
            audit_grant(s, t, c.0, av.0, &d, aux);
            return Ok(0);
        }
        has_perm_full(k, s, t, c.0, av.0, aux)
    })
}

/// The class and permission of names the string cache did not answer: the policy's, if it
/// has them after all; else the log line and libselinux's answer for an unknown name, None
/// (the check passes) under allow-unknown policies and EINVAL otherwise.
#[cold]
fn unknown_class_perm(k: &Kernel, class: &str, perm: &str) -> Res<Option<(ClassId, AccessVector)>> {
    let unknown = |what: String| {
        callbacks::log(callbacks::SELINUX_ERROR, &what);
        if k.server.snapshot().handle_unknown() == HandleUnknown::Allow {
            Ok(None)
        } else {
            Err(EINVAL)
        }
    };
    let Ok(c) = crate::names::class_value(class) else { return unknown(format!("Unknown class {class}")) };
    let Ok(av) = crate::names::perm_value(c, perm) else {
        return unknown(format!("Unknown permission {perm} for class {class}"));
    };
    Ok(Some((c, av)))
}
