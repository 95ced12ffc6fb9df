//! libselinux's userspace AVC (avc.h) on seaccess's cache: checks with their audit records,
//! computations on SIDs, and selinux_check_access. The AVC's life (open, reset, destroy), its
//! SIDs and statistics are in [`crate::avc_life`], below the class map these checks speak.
//!
//! `struct avc_entry_ref` is ignored: the seaccess cache's lookup is already lock-free and
//! cheaper than following a hint, so a reference is neither read nor written.
//!
//! One generation per answer: a check takes its decision, its SIDs' validity and (for
//! selinux_check_access) its class and permission numbers from one policy generation. The hit path
//! compares seqnos: the decision's (from the cache), each SID's (the generation that defined its
//! context, [`SecurityId::resolved`]) and the names' ([`crate::lookup`]); any mismatch, as a reload
//! in between gives, sends the check the full way, which takes the server's current generation,
//! resolves everything in it, takes the cache's decision only if it is of that generation
//! ([`seaccess_avc::Avc::check_at`]) and writes the record by it; when the cache answered from
//! another generation (a reload landed in between), the whole check runs again on the new one,
//! through the engine's one retry loop ([`Kernel::with_generation`]). So no answer pairs one
//! policy's class numbers or contexts with another's decision, every decision comes from the cache,
//! and a context the current policy does not define is EINVAL however the process used it before.
//! Numbers a program passes in (avc_has_perm's class and permissions, from string_to_security_class
//! and string_to_av_perm) are the current policy's, as libselinux's are the kernel's: a program
//! that keeps them across a reload that renumbers classes gets the answer for whatever they mean in
//! the new policy, on libselinux as here.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::Ordering::*;

use seaccess_engine::Kept;
use seaccess_security::{Generation, SecurityError};
use seaccess_types::{AccessVector, AvDecision, ClassId, HandleUnknown, Seqno, ServerError, Sid};

use crate::audit::{self, Audited};
use crate::avc_life::open;
use crate::callbacks::{self, AVC_OPEN};
use crate::decision::{unknown_class_decision, AvDecisionC};
use crate::ffi::{self, Res, EACCES, EINVAL};
use crate::front;
use crate::front::query::Granted;
use crate::kernel::{Halt, Kernel};
use crate::lookup;
use crate::mapping;
use crate::memo;
use crate::sid::{self, SecurityId};
use crate::state;
use crate::thread;

impl AvDecisionC {
    fn audited(&self) -> Audited {
        Audited {
            allowed: self.allowed,
            auditallow: self.auditallow,
            auditdeny: self.auditdeny,
        }
    }
}

/// libselinux's `struct avc_entry_ref` (ignored, see the module's doc).
#[repr(C)]
pub struct AvcEntryRef {
    pub ae: *mut c_void,
}

/// libselinux's avd_init: what a failed check leaves in the caller's decision.
fn avd_init(g: &Generation) -> AvDecisionC {
    AvDecisionC {
        auditdeny: u32::MAX,
        seqno: g.seqno().0,
        ..AvDecisionC::default()
    }
}

/// libselinux's avc_has_perm_noaudit on seaccess's cache, for SIDs resolved in generation `g`:
/// the decision of `g`, and whether the request goes through (EACCES when denied and
/// enforced). A context `g` does not define is EINVAL when the cache enforces, and a pass with
/// nothing allowed when it does not (libselinux ignores the kernel's EINVAL in permissive
/// mode). One cache lookup per check, as libselinux counts it.
pub(crate) fn check(
    k: &Kernel,
    g: &Generation,
    s: Res<Sid>,
    t: Res<Sid>,
    class: u16,
    requested: u32,
) -> Result<(AvDecisionC, Res<()>), Halt> {
    let (Ok(s), Ok(t)) = (s, t) else {
        return if k.avc.enforcing() {
            Err(EINVAL.into())
        } else {
            Ok((avd_init(g), Ok(())))
        };
    };
    let (d, enforced) = decision(k, g, s, t, class, requested)?;
    // An empty request is refused when enforcing (libselinux: `if (!requested || denied)`).
    let refused = enforced || (requested == 0 && k.avc.enforcing() && !d.flags.permissive());
    Ok(((&d).into(), if refused { Err(EACCES) } else { Ok(()) }))
}

/// Generation `g`'s decision through the cache, and whether the denial of a requested
/// permission stands; [`Halt::Stale`] when the cache has moved on from `g` (a reload landed
/// since `g` was taken): the caller's [`Kernel::with_generation`] runs the check again.
fn decision(
    k: &Kernel,
    g: &Generation,
    s: Sid,
    t: Sid,
    class: u16,
    requested: u32,
) -> Result<(AvDecision, bool), Halt> {
    #[cfg(test)]
    crate::park::parked(crate::park::At::Decide);
    let stale = |answered| Halt::Stale {
        asked: g.seqno(),
        answered,
    };
    match k
        .avc
        .check_at(s, t, ClassId(class), AccessVector(requested), g.seqno())
    {
        Ok(Ok(v)) => Ok((v.decision, v.enforced)),
        Ok(Err(answered)) => Err(stale(answered)),
        // A class number the cache's generation does not define: if that is `g`, the kernel's
        // answer for an undefined class; else `g` is stale.
        Err(ServerError::InvalidClass(_)) => match k.server.seqno() {
            now if now == g.seqno() => Ok(decide_in(k, g, s, t, class, requested)?),
            now => Err(stale(now)),
        },
        Err(_) => Err(EINVAL.into()),
    }
}

/// A check in the program's own numbering (selinux_set_mapping): the decision for the policy's
/// class and bits the map gives in generation `g`, through the cache, turned back into the
/// program's bits (libselinux's map_decision), then granted or refused on those bits as
/// libselinux's avc_has_perm_noaudit does: refused when a requested bit is not allowed or
/// nothing is requested, unless permissive. The program's own numbers are written into `avd`
/// and named in the record.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn has_perm_mapped(
    k: &Kernel,
    sc: &SecurityId,
    tc: &SecurityId,
    tclass: u16,
    requested: u32,
    avd: *mut AvDecisionC,
    audit: bool,
    auditdata: *mut c_void,
) -> Res<c_int> {
    k.with_generation(|g| {
        let m = mapping::current(g);
        has_perm_mapped_in(
            k,
            g,
            m.as_deref(),
            sc,
            tc,
            tclass,
            requested,
            avd,
            audit,
            auditdata,
        )
    })
}

/// [`has_perm_mapped`] in generation `g` and the one snapshot `m` of the map the caller took:
/// the program's numbers are turned into the policy's, the decision back into the program's
/// and the record named, all by `m`.
#[allow(clippy::too_many_arguments)]
fn has_perm_mapped_in(
    k: &Kernel,
    g: &Generation,
    m: Option<&mapping::Resolved>,
    sc: &SecurityId,
    tc: &SecurityId,
    tclass: u16,
    requested: u32,
    avd: *mut AvDecisionC,
    audit: bool,
    auditdata: *mut c_void,
) -> Result<c_int, Halt> {
    if !avd.is_null() {
        ffi::out(avd, avd_init(g))?;
    }
    let checked = match (sc.resolve(g), tc.resolve(g)) {
        (Ok(s), Ok(t)) => {
            let (kclass, kreq) = m.map_or((tclass, requested), |m| {
                (m.unmap_class(tclass), m.unmap_perm(tclass, requested))
            });
            decision(k, g, s, t, kclass, kreq).map(|(d, _)| {
                let mut c = AvDecisionC::from(&d);
                if let Some(m) = m {
                    m.map_decision(tclass, &mut c);
                }
                let refused = (requested == 0 || requested & !c.allowed != 0)
                    && k.avc.enforcing()
                    && !d.flags.permissive();
                (c, if refused { Err(EACCES) } else { Ok(()) })
            })
        }
        _ if k.avc.enforcing() => Err(EINVAL.into()),
        _ => Ok((avd_init(g), Ok(()))),
    };
    let (d, rc) = match checked {
        Ok(x) => x,
        Err(Halt::Errno(e)) if audit => (avd_init(g), Err(e)),
        Err(e) => return Err(e),
    };
    if !avd.is_null() {
        ffi::out(avd, d)?;
    }
    if audit {
        let result = if rc.is_ok() { 0 } else { -1 };
        audit::audit(
            Some(g),
            m,
            sc,
            tc,
            tclass,
            requested,
            &d.audited(),
            result,
            auditdata,
        );
    }
    Ok(rc.map(|()| 0)?)
}

/// Generation `g`'s own decision, for a class number the cache reports undefined while `g` is
/// its current generation (the kernel's answer for an undefined class number), and whether the
/// denial of a requested permission stands by the cache's mode.
#[cold]
#[inline(never)]
fn decide_in(
    k: &Kernel,
    g: &Generation,
    s: Sid,
    t: Sid,
    class: u16,
    requested: u32,
) -> Res<(AvDecision, bool)> {
    let d = match g.compute_av(s, t, ClassId(class)) {
        Ok(d) => d,
        Err(SecurityError::InvalidClass(_)) => unknown_class_decision(g, s, class),
        Err(_) => return Err(EINVAL),
    };
    let enforced = requested & !d.allowed.0 != 0 && k.avc.enforcing() && !d.flags.permissive();
    Ok((d, enforced))
}

/// The hit path of a check: the cached decision when both SIDs are resolved in the generation
/// the decision is of, the cache holds the triple and its decision allows every requested
/// permission (counted as one lookup). None sends the check the full way ([`check`]), which
/// counts it instead (a decision of another generation than the SIDs' is counted twice).
#[inline(always)]
fn hit(
    k: &Kernel,
    s: &SecurityId,
    t: &SecurityId,
    class: u16,
    requested: u32,
) -> Option<AvDecision> {
    // An empty request is refused when enforcing: the full way decides it.
    if requested == 0 {
        return None;
    }
    // Both SIDs kept by one generation, used only with a decision of it (the engine's rule).
    let (ss, ts, at) = Kept::both(s.kept(), t.kept())?;
    k.avc.allowed_hit_as(
        ss,
        ts,
        ClassId(class),
        AccessVector(requested),
        at,
        thread::id(),
    )
}

/// The audit record of a granted check, if the decision auditallows a requested permission,
/// named by the decision's generation. False when that generation is no longer the current
/// one: the caller then checks the full way, whose decision and record are of one generation.
#[inline(always)]
fn audit_grant(
    k: &Kernel,
    s: &SecurityId,
    t: &SecurityId,
    class: u16,
    requested: u32,
    d: &AvDecision,
    auditdata: *mut c_void,
) -> bool {
    // A granted check (nothing denied, something requested: what `hit` returns) is audited
    // only for what the decision auditallows, as audit::audited says of it.
    if requested & d.auditallow.0 == 0 {
        return true;
    }
    // Built here and passed by reference: with the decision passed whole, the hit stored it
    // to the stack before the test above (callgrind: 19 instructions a call).
    let a = Audited {
        allowed: d.allowed.0,
        auditallow: d.auditallow.0,
        auditdeny: d.auditdeny.0,
    };
    record_grant(k, s, t, class, requested, d.seqno, &a, auditdata)
}

#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn record_grant(
    k: &Kernel,
    s: &SecurityId,
    t: &SecurityId,
    class: u16,
    requested: u32,
    at: Seqno,
    a: &Audited,
    auditdata: *mut c_void,
) -> bool {
    let g = k.server.snapshot();
    if g.seqno() != at {
        return false;
    }
    audit::audit(Some(&g), None, s, t, class, requested, a, 0, auditdata);
    true
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
        // The thread's front first, as avc_has_perm's.
        if let Some(d) = front::decision(ssid, tsid, tclass, requested) {
            if !avd.is_null() {
                ffi::out(avd, d)?;
            }
            return Ok(0);
        }
        Ok(has_perm_noaudit_past_front(
            ssid, tsid, tclass, requested, avd,
        ))
    })
}

/// avc_has_perm_noaudit past the thread's front, in its own guard (see
/// [`has_perm_past_front`]).
#[inline(never)]
extern "C" fn has_perm_noaudit_past_front(
    ssid: *mut SecurityId,
    tsid: *mut SecurityId,
    tclass: u16,
    requested: u32,
    avd: *mut AvDecisionC,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::for_check_enabled()?;
        let at = front::stamp(&k.avc);
        let (sc, tc) = sid::from_ptrs(ssid, tsid)?;
        if mapping::active() {
            return has_perm_mapped(
                k,
                sc,
                tc,
                tclass,
                requested,
                avd,
                false,
                std::ptr::null_mut(),
            );
        }
        if let Some(d) = hit(k, sc, tc, tclass, requested) {
            front::fill(&k.avc, at, ssid, tsid, tclass, &d);
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
fn has_perm_noaudit_full(
    k: &Kernel,
    sc: &SecurityId,
    tc: &SecurityId,
    tclass: u16,
    requested: u32,
    avd: *mut AvDecisionC,
) -> Res<c_int> {
    k.with_generation(|g| {
        if !avd.is_null() {
            ffi::out(avd, avd_init(g))?;
        }
        let (s, t) = (sc.resolve(g), tc.resolve(g));
        let (d, rc) = check(k, g, s, t, tclass, requested)?;
        if !avd.is_null() {
            ffi::out(avd, d)?;
        }
        Ok(rc.map(|()| 0)?)
    })
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
        // The thread's front first, in as few instructions as it takes: a grant this thread
        // was given under the cache's current state. The rest of the way is out of line, so
        // that its registers are not saved here.
        if front::hit(ssid, tsid, tclass, requested) {
            return Ok(0);
        }
        Ok(has_perm_past_front(
            ssid, tsid, tclass, requested, auditdata,
        ))
    })
}

/// avc_has_perm past the thread's front, in its own guard. `extern "C"`, which cannot unwind
/// (a panic that escaped would abort): the export's guard then has nothing to catch from the
/// call, which becomes a jump, and the front's way saves no registers for it.
#[inline(never)]
extern "C" fn has_perm_past_front(
    ssid: *mut SecurityId,
    tsid: *mut SecurityId,
    tclass: u16,
    requested: u32,
    auditdata: *mut c_void,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::for_check_enabled()?;
        let at = front::stamp(&k.avc);
        let (sc, tc) = sid::from_ptrs(ssid, tsid)?;
        if mapping::active() {
            return has_perm_mapped(
                k,
                sc,
                tc,
                tclass,
                requested,
                std::ptr::null_mut(),
                true,
                auditdata,
            );
        }
        if let Some(d) = hit(k, sc, tc, tclass, requested) {
            front::fill(&k.avc, at, ssid, tsid, tclass, &d);
            if audit_grant(k, sc, tc, tclass, requested, &d, auditdata) {
                return Ok(0);
            }
        }
        has_perm_full(k, sc, tc, tclass, requested, auditdata)
    })
}

/// avc_has_perm past the hit path: a miss, a denial, an unresolved context or an empty request.
#[cold]
#[inline(never)]
fn has_perm_full(
    k: &Kernel,
    sc: &SecurityId,
    tc: &SecurityId,
    tclass: u16,
    requested: u32,
    auditdata: *mut c_void,
) -> Res<c_int> {
    k.with_generation(|g| has_perm_in(k, g, sc, tc, tclass, requested, auditdata))
}

/// avc_has_perm with everything resolved in generation `g`: the SIDs' validity, the decision,
/// and the class and permissions the caller resolved in `g` or passed in.
fn has_perm_in(
    k: &Kernel,
    g: &Generation,
    sc: &SecurityId,
    tc: &SecurityId,
    tclass: u16,
    requested: u32,
    auditdata: *mut c_void,
) -> Result<c_int, Halt> {
    let (s, t) = (sc.resolve(g), tc.resolve(g));
    let (d, rc) = match check(k, g, s, t, tclass, requested) {
        Ok(x) => x,
        Err(Halt::Errno(e)) => (avd_init(g), Err(e)),
        Err(stale) => return Err(stale),
    };
    let result = if rc.is_ok() { 0 } else { -1 };
    audit::audit(
        Some(g),
        None,
        sc,
        tc,
        tclass,
        requested,
        &d.audited(),
        result,
        auditdata,
    );
    Ok(rc.map(|()| 0)?)
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
        // The caller's decision and numbers: named by the current generation.
        let g = state::enabled().map(|k| k.server.snapshot());
        let m = g.as_deref().and_then(mapping::in_use);
        audit::audit(
            g.as_deref(),
            m.as_deref(),
            s,
            t,
            tclass,
            requested,
            &d.audited(),
            result,
            auditdata,
        );
        Ok(())
    })
}

fn compute_sid_pair(
    ssid: *mut SecurityId,
    tsid: *mut SecurityId,
    tclass: u16,
    newsid: *mut *mut SecurityId,
    member: bool,
) -> ffi::Res<c_int> {
    let (s, t) = sid::from_ptrs(ssid, tsid)?;
    let g = state::kernel()?.server.snapshot();
    let (a, b) = (
        g.context_to_sid(s.text()).map_err(|_| EINVAL)?,
        g.context_to_sid(t.text()).map_err(|_| EINVAL)?,
    );
    let c = seaccess_types::ClassId(mapping::kernel_class(&g, tclass));
    let r = if member {
        g.compute_member(a, b, c)
    } else {
        g.compute_create(a, b, c, None)
    };
    let ctx = g
        .sid_to_context(r.map_err(|_| EINVAL)?)
        .map_err(|_| EINVAL)?;
    ffi::out(newsid, sid::as_ptr(sid::intern(&ctx)?))?;
    Ok(0)
}

/// security_compute_create on two SIDs (avc_compute_create), the new SID interned.
#[no_mangle]
pub extern "C" fn avc_compute_create(
    ssid: *mut SecurityId,
    tsid: *mut SecurityId,
    tclass: u16,
    newsid: *mut *mut SecurityId,
) -> c_int {
    ffi::guard(-1, || compute_sid_pair(ssid, tsid, tclass, newsid, false))
}

#[no_mangle]
pub extern "C" fn avc_compute_member(
    ssid: *mut SecurityId,
    tsid: *mut SecurityId,
    tclass: u16,
    newsid: *mut *mut SecurityId,
) -> c_int {
    ffi::guard(-1, || compute_sid_pair(ssid, tsid, tclass, newsid, true))
}

/// libselinux's selinux_check_access: 0 when allowed (or when no policy is named: SELinux
/// disabled), -1 with errno EACCES when denied or when a named policy could not be loaded; an
/// unknown class or permission is allowed when the policy allows unknown permissions, else
/// EINVAL.
#[no_mangle]
pub extern "C" fn selinux_check_access(
    scon: *const c_char,
    tcon: *const c_char,
    class: *const c_char,
    perm: *const c_char,
    aux: *mut c_void,
) -> c_int {
    ffi::guard(-1, || {
        // The thread's front first: this query's four strings, granted under the cache's
        // current state. The rest of the way is out of line (as avc_has_perm's).
        match front::query::hit([scon, tcon, class, perm]) {
            Ok(()) => Ok(0),
            Err(([scon, tcon, class, perm], rewritten)) => Ok(check_access_past_front(
                scon, tcon, class, perm, aux, rewritten,
            )),
        }
    })
}

/// selinux_check_access past the thread's front, in its own guard (see
/// [`has_perm_past_front`]).
#[inline(never)]
extern "C" fn check_access_past_front(
    scon: *const c_char,
    tcon: *const c_char,
    class: *const c_char,
    perm: *const c_char,
    aux: *mut c_void,
    rewritten: bool,
) -> c_int {
    ffi::guard(-1, || {
        let Some(k) = state::for_check()? else {
            return Ok(0);
        };
        if !AVC_OPEN.load(Relaxed) {
            open(k, None);
        }
        if mapping::active() {
            return check_access_mapped(scon, tcon, class, perm, aux);
        }
        let stamp = front::stamp(&k.avc);
        let seed = lookup::key();
        let args = [scon, tcon, class, perm];
        // An error (a NULL argument, a context that is not UTF-8) is the full way's to order
        // with the names' (an unknown name answers first, as in libselinux).
        if let Some((s, t, c, av, at, ni)) = memo::query(k, seed, args, rewritten).ok().flatten() {
            let (sp, tp) = (sid::as_ptr(s), sid::as_ptr(t));
            // The SID-keyed table, for numbers of the generation it holds grants of.
            if let Some(under) = front::hit_at(sp, tp, c.0, av.0, at) {
                if let Some(ni) = ni {
                    front::query::fill(&k.avc, under, args, (s, t), ni, Granted::Front);
                }
                return Ok(0);
            }
            if let Some(d) = hit(k, s, t, c.0, av.0).filter(|d| d.seqno.0 == at) {
                front::fill(&k.avc, stamp, sp, tp, c.0, &d);
                if let Some(ni) = ni {
                    let how = Granted::Decision(av.0, &d);
                    front::query::fill(&k.avc, stamp, args, (s, t), ni, how);
                }
                if audit_grant(k, s, t, c.0, av.0, &d, aux) {
                    return Ok(0);
                }
            }
        }
        check_access_full(k, seed, args, aux)
    })
}

/// selinux_check_access past its hit path (a denial, a miss, names or contexts resolved in
/// another generation than the cache's decision, unknown names, bad arguments): everything
/// resolved in the current generation (through the string cache, which a call that came this
/// way has just filled), in libselinux's order (checkAccess.c): the names first, an unknown one
/// answered by handle_unknown whatever the contexts (libselinux interns a context without
/// looking at it), then the check, where a context the policy cannot take is EINVAL when
/// enforcing and a pass when not (the kernel's EINVAL, which libselinux's avc_has_perm ignores
/// in permissive mode).
#[cold]
#[inline(never)]
fn check_access_full(
    k: &Kernel,
    seed: u64,
    [scon, tcon, class, perm]: [*const c_char; 4],
    aux: *mut c_void,
) -> Res<c_int> {
    let (sb, tb) = (ffi::bytes_arg(scon)?, ffi::bytes_arg(tcon)?);
    let (cb, pb) = (ffi::bytes_arg(class)?, ffi::bytes_arg(perm)?);
    k.with_generation(|g| {
        let (c, av) = match lookup::class_perm(g, seed, cb, pb) {
            Some(((c, av, _), _)) => (c, av),
            None => match unknown_class_perm(g, cb, pb)? {
                Some(x) => x,
                None => return Ok(0),
            },
        };
        // Only a context that is not UTF-8 fails here; it names nothing in any policy.
        let (Ok((_, s)), Ok((_, t))) = (lookup::context(seed, sb), lookup::context(seed, tb))
        else {
            return undefined_context(k);
        };
        has_perm_in(k, g, s, t, c.0, av.0, aux)
    })
}

/// selinux_check_access's answer for a context no policy defines, which cannot be made a SID
/// (it is not UTF-8): what the check of a SID of it answers ([`check`]).
fn undefined_context(k: &Kernel) -> Result<c_int, Halt> {
    if k.avc.enforcing() {
        Err(EINVAL.into())
    } else {
        Ok(0)
    }
}

/// selinux_check_access once the program set a map, as libselinux's checkAccess.c: the names
/// through the program's numbering (string_to_security_class, string_to_av_perm), a name the
/// map or the policy lacks logged and answered by handle_unknown, then avc_has_perm on the
/// program's numbers. One generation and one snapshot of the map serve the names, the bits and
/// the record: libselinux reads its map three times here, and a map switched by another thread
/// in between resolved the permission by one map and read its bit by the other (a grant of a
/// permission nobody asked about).
#[cold]
#[inline(never)]
fn check_access_mapped(
    scon: *const c_char,
    tcon: *const c_char,
    class: *const c_char,
    perm: *const c_char,
    aux: *mut c_void,
) -> Res<c_int> {
    let k = state::for_check_enabled()?;
    let (sb, tb) = (ffi::bytes_arg(scon)?, ffi::bytes_arg(tcon)?);
    let (cb, pb) = (ffi::bytes_arg(class)?, ffi::bytes_arg(perm)?);
    k.with_generation(|g| {
        let m = mapping::current(g);
        let names = known_names(
            g,
            cb,
            pb,
            |c| crate::names::class_number(g, m.as_deref(), c).ok(),
            |c, p| crate::names::perm_bits(g, m.as_deref(), c, p).ok(),
        )?;
        let Some((sclass, av)) = names else {
            return Ok(0);
        };
        let sid = |b: &[u8]| std::str::from_utf8(b).ok().map(sid::intern);
        let (Some(s), Some(t)) = (sid(sb), sid(tb)) else {
            return undefined_context(k);
        };
        let (s, t) = (s?, t?);
        has_perm_mapped_in(
            k,
            g,
            m.as_deref(),
            s,
            t,
            sclass,
            av,
            std::ptr::null_mut(),
            true,
            aux,
        )
    })
}

/// The class and permission of names the string cache did not find in generation `g`: `g`'s,
/// if it has them after all (a name too long to cache); else libselinux's answer for an unknown
/// name ([`known_names`]).
#[cold]
fn unknown_class_perm(
    g: &Generation,
    class: &[u8],
    perm: &[u8],
) -> Res<Option<(ClassId, AccessVector)>> {
    known_names(
        g,
        class,
        perm,
        |c| g.class(c).ok(),
        |c, p| g.perms(c, &[p]).ok(),
    )
}

/// libselinux's checkAccess.c on a class and a permission name: the class through `class_of`,
/// then the permission through `perm_of`; a name that is not UTF-8 (no class's or
/// permission's) or that they do not find is logged and answered by `g`'s handle_unknown: None
/// (the check passes) under allow, EINVAL otherwise.
fn known_names<C: Copy, A>(
    g: &Generation,
    class: &[u8],
    perm: &[u8],
    class_of: impl FnOnce(&str) -> Option<C>,
    perm_of: impl FnOnce(C, &str) -> Option<A>,
) -> Res<Option<(C, A)>> {
    let unknown = |what: String| {
        callbacks::log(callbacks::SELINUX_ERROR, &what);
        if g.handle_unknown() == HandleUnknown::Allow {
            Ok(None)
        } else {
            Err(EINVAL)
        }
    };
    let cn = String::from_utf8_lossy(class);
    let Some(c) = std::str::from_utf8(class).ok().and_then(class_of) else {
        return unknown(format!("Unknown class {cn}"));
    };
    let Some(av) = std::str::from_utf8(perm).ok().and_then(|p| perm_of(c, p)) else {
        let pn = String::from_utf8_lossy(perm);
        return unknown(format!("Unknown permission {pn} for class {cn}"));
    };
    Ok(Some((c, av)))
}
