//! The security server's calls that libselinux makes through selinuxfs (access, create,
//! relabel, member, validatetrans, context, enforce, deny_unknown, policyvers), with the
//! kernel's answers and errno values: an undefined context is EINVAL, a relabel the
//! validatetrans rules forbid EPERM, and without a policy everything is ENOENT.
//!
//! Without mcstrans, each call's translated and `_raw` forms are the same.

use std::ffi::{c_char, c_int};
use std::sync::atomic::Ordering::*;

use seaccess_security::SecurityError;
use seaccess_types::{ClassId, HandleUnknown, Sid};

use crate::decision::{unknown_class_decision, AvDecisionC};
use crate::ffi::{self, Res, EACCES, EINVAL, EPERM};
use crate::kernel::Kernel;
use crate::mapping;
use crate::state;

fn sid_of(k: &Kernel, ctx: *const c_char) -> Res<Sid> {
    k.server
        .context_to_sid(ffi::str_arg(ctx)?)
        .map_err(|_| EINVAL)
}

/// The kernel's decision for a triple: contexts and decision of one generation. A class in the
/// program's numbering (selinux_set_mapping) is the policy's class its map names, and the
/// decision comes back in the program's bits (libselinux's compute_av.c).
pub(crate) fn compute_av(
    k: &Kernel,
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
) -> Res<AvDecisionC> {
    let g = k.server.snapshot();
    let s = g.context_to_sid(ffi::str_arg(scon)?).map_err(|_| EINVAL)?;
    let t = g.context_to_sid(ffi::str_arg(tcon)?).map_err(|_| EINVAL)?;
    let m = mapping::in_use(&g);
    let class = m.as_ref().map_or(tclass, |m| m.unmap_class(tclass));
    let d = match g.compute_av(s, t, ClassId(class)) {
        Ok(d) => d,
        Err(SecurityError::InvalidClass(_)) => unknown_class_decision(&g, s, class),
        Err(_) => return Err(EINVAL),
    };
    let mut c = AvDecisionC::from(&d);
    if let Some(m) = m {
        m.map_decision(tclass, &mut c);
    }
    Ok(c)
}

#[no_mangle]
pub extern "C" fn security_compute_av_flags_raw(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    _requested: u32,
    avd: *mut AvDecisionC,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::for_check_enabled()?;
        if avd.is_null() {
            return Err(EINVAL);
        }
        let d = compute_av(k, scon, tcon, tclass)?;
        ffi::out(avd, d)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn security_compute_av_flags(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    requested: u32,
    avd: *mut AvDecisionC,
) -> c_int {
    security_compute_av_flags_raw(scon, tcon, tclass, requested, avd)
}

/// Leaves `avd->flags` as it was, as libselinux does for binary compatibility.
#[no_mangle]
pub extern "C" fn security_compute_av_raw(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    _requested: u32,
    avd: *mut AvDecisionC,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::for_check_enabled()?;
        if avd.is_null() {
            return Err(EINVAL);
        }
        let mut c = compute_av(k, scon, tcon, tclass)?;
        c.flags = ffi::read(avd)?.flags;
        ffi::out(avd, c)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn security_compute_av(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    requested: u32,
    avd: *mut AvDecisionC,
) -> c_int {
    security_compute_av_raw(scon, tcon, tclass, requested, avd)
}

#[derive(Copy, Clone)]
enum Rule {
    Create,
    Relabel,
    Member,
}

/// A new context by type_transition, type_change or type_member rules. A result the policy
/// does not define is EACCES while enforcing, and returned all the same while permissive (the
/// kernel's compute_sid_handle_invalid_context).
fn compute_sid(
    scon: *const c_char,
    tcon: *const c_char,
    class: u16,
    rule: Rule,
    name: Option<&str>,
    newcon: *mut *mut c_char,
) -> Res<c_int> {
    let k = state::kernel()?;
    if newcon.is_null() {
        return Err(EINVAL);
    }
    let g = k.server.snapshot();
    let s = g.context_to_sid(ffi::str_arg(scon)?).map_err(|_| EINVAL)?;
    let t = g.context_to_sid(ffi::str_arg(tcon)?).map_err(|_| EINVAL)?;
    let c = ClassId(mapping::kernel_class(&g, class));
    let r = match rule {
        Rule::Create => g.compute_create(s, t, c, name),
        Rule::Relabel => g.compute_relabel(s, t, c),
        Rule::Member => g.compute_member(s, t, c),
    };
    let text = match r {
        Ok(sid) => g.sid_to_context(sid).map_err(|_| EINVAL)?,
        Err(SecurityError::InvalidComputedContext(text)) if !k.enforcing.load(Acquire) => text,
        Err(SecurityError::InvalidComputedContext(_)) => return Err(EACCES),
        Err(_) => return Err(EINVAL),
    };
    ffi::out(newcon, ffi::c_string(&text)?)?;
    Ok(0)
}

#[no_mangle]
pub extern "C" fn security_compute_create_name_raw(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    objname: *const c_char,
    newcon: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        compute_sid(
            scon,
            tcon,
            tclass,
            Rule::Create,
            ffi::opt_str_arg(objname)?,
            newcon,
        )
    })
}

#[no_mangle]
pub extern "C" fn security_compute_create_name(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    objname: *const c_char,
    newcon: *mut *mut c_char,
) -> c_int {
    security_compute_create_name_raw(scon, tcon, tclass, objname, newcon)
}

#[no_mangle]
pub extern "C" fn security_compute_create_raw(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    newcon: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        compute_sid(scon, tcon, tclass, Rule::Create, None, newcon)
    })
}

#[no_mangle]
pub extern "C" fn security_compute_create(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    newcon: *mut *mut c_char,
) -> c_int {
    security_compute_create_raw(scon, tcon, tclass, newcon)
}

#[no_mangle]
pub extern "C" fn security_compute_relabel_raw(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    newcon: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        compute_sid(scon, tcon, tclass, Rule::Relabel, None, newcon)
    })
}

#[no_mangle]
pub extern "C" fn security_compute_relabel(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    newcon: *mut *mut c_char,
) -> c_int {
    security_compute_relabel_raw(scon, tcon, tclass, newcon)
}

#[no_mangle]
pub extern "C" fn security_compute_member_raw(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    newcon: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        compute_sid(scon, tcon, tclass, Rule::Member, None, newcon)
    })
}

#[no_mangle]
pub extern "C" fn security_compute_member(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    newcon: *mut *mut c_char,
) -> c_int {
    security_compute_member_raw(scon, tcon, tclass, newcon)
}

/// May `newcon` (the task) relabel an object of `tclass` from `scon` to `tcon`? 0, or -1 with
/// EPERM when the validatetrans rules forbid it (selinuxfs's validatetrans file takes
/// "old new class task").
#[no_mangle]
pub extern "C" fn security_validatetrans_raw(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    newcon: *const c_char,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        let g = k.server.snapshot();
        let old = g.context_to_sid(ffi::str_arg(scon)?).map_err(|_| EINVAL)?;
        let new = g.context_to_sid(ffi::str_arg(tcon)?).map_err(|_| EINVAL)?;
        let task = g
            .context_to_sid(ffi::str_arg(newcon)?)
            .map_err(|_| EINVAL)?;
        match g.validate_transition(old, new, task, ClassId(mapping::kernel_class(&g, tclass))) {
            Ok(()) => Ok(0),
            Err(SecurityError::TransitionDenied { .. }) => Err(EPERM),
            Err(_) => Err(EINVAL),
        }
    })
}

#[no_mangle]
pub extern "C" fn security_validatetrans(
    scon: *const c_char,
    tcon: *const c_char,
    tclass: u16,
    newcon: *const c_char,
) -> c_int {
    security_validatetrans_raw(scon, tcon, tclass, newcon)
}

#[no_mangle]
pub extern "C" fn security_check_context_raw(con: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        sid_of(k, con)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn security_check_context(con: *const c_char) -> c_int {
    security_check_context_raw(con)
}

/// The context as the policy writes it (levels and categories in canonical form).
#[no_mangle]
pub extern "C" fn security_canonicalize_context_raw(
    con: *const c_char,
    canoncon: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        if canoncon.is_null() {
            return Err(EINVAL);
        }
        let g = k.server.snapshot();
        let sid = g.context_to_sid(ffi::str_arg(con)?).map_err(|_| EINVAL)?;
        let text = g.sid_to_context(sid).map_err(|_| EINVAL)?;
        ffi::out(canoncon, ffi::c_string(&text)?)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn security_canonicalize_context(
    con: *const c_char,
    canoncon: *mut *mut c_char,
) -> c_int {
    security_canonicalize_context_raw(con, canoncon)
}

#[no_mangle]
pub extern "C" fn security_getenforce() -> c_int {
    ffi::guard(-1, || {
        Ok(c_int::from(state::kernel()?.enforcing.load(Acquire)))
    })
}

#[no_mangle]
pub extern "C" fn security_setenforce(value: c_int) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        // A session's mode is the session's: written to its view's `enforce`, where the
        // supervisor checks `security { setenforce }` (sel_write_enforce).
        if let Some(r) = crate::session::write("enforce", if value != 0 { b"1" } else { b"0" }) {
            return r.map(|_| 0);
        }
        crate::kernel::set_enforcing(k, value != 0);
        Ok(0)
    })
}

/// 1 when the policy denies unknown classes and permissions, 0 when it allows them.
#[no_mangle]
pub extern "C" fn security_deny_unknown() -> c_int {
    ffi::guard(-1, || {
        Ok(c_int::from(
            state::kernel()?.server.snapshot().handle_unknown() != HandleUnknown::Allow,
        ))
    })
}

/// 1 when the policy rejects unknown classes and permissions (handle_unknown reject: it would
/// not load on a kernel whose classes it lacks), 0 otherwise.
#[no_mangle]
pub extern "C" fn security_reject_unknown() -> c_int {
    ffi::guard(-1, || {
        Ok(c_int::from(
            state::kernel()?.server.snapshot().handle_unknown() == HandleUnknown::Reject,
        ))
    })
}

/// checkreqprot: 0, what every kernel since 6.4 has (the value can no longer be set).
#[no_mangle]
pub extern "C" fn security_get_checkreqprot() -> c_int {
    ffi::guard(-1, || {
        state::kernel()?;
        Ok(0)
    })
}

/// 1 when the loaded policy is an MLS one, 0 when it is not or none is loaded.
#[no_mangle]
pub extern "C" fn is_selinux_mls_enabled() -> c_int {
    ffi::guard(0, || {
        Ok(state::kernel().map_or(0, |k| c_int::from(k.server.snapshot().policy().mls)))
    })
}

/// The newest policy version seaccess reads (the kernel's POLICYDB_VERSION_MAX).
#[no_mangle]
pub extern "C" fn security_policyvers() -> c_int {
    ffi::guard(-1, || {
        state::kernel()?;
        Ok(seaccess_policy::VERSION_MAX as c_int)
    })
}

/// 1 once a policy is loaded (or loadable from SEACCESS_POLICY), and when SEACCESS_POLICY names
/// a policy that could not be loaded (SELinux is meant to be on, and every check denies); 0
/// when no policy is named.
#[no_mangle]
pub extern "C" fn is_selinux_enabled() -> c_int {
    ffi::guard(0, || Ok(c_int::from(state::meant_to_be_on())))
}
