//! The AVC's audit record in libselinux's text (its avc.c avc_audit, which differs from the
//! kernel's): `avc:  denied  { read } for <supplement> scontext=... tcontext=... tclass=file
//! permissive=0`, laid out by [`seaccess_avc::LibselinuxRecord`] (beside the kernel's format)
//! and sent to the log callback with type SELINUX_AVC. The class and permissions are
//! named by the policy generation the check's decision is of, so that a record written while a
//! reload renumbers classes names what was decided.

use std::ffi::c_void;

use seaccess_avc::LibselinuxRecord;
use seaccess_security::Generation;

use crate::callbacks;
use crate::mapping::Resolved;
use crate::names;
use crate::sid::SecurityId;

/// What a check decided, as far as auditing needs it.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Audited {
    pub allowed: u32,
    pub auditallow: u32,
    pub auditdeny: u32,
}

/// libselinux's avc_audit: which permissions a check's record lists (none: no record) and
/// whether it is a denial. `result` is the check's return value (0 granted, else refused).
#[inline(always)]
pub(crate) fn audited(requested: u32, d: &Audited, result: i32) -> (u32, bool) {
    let denied = requested & !d.allowed;
    if denied != 0 {
        (denied & d.auditdeny, true)
    } else if requested == 0 || result != 0 {
        (requested, true)
    } else {
        (requested & d.auditallow, false)
    }
}

/// Writes the record of one check, if it needs one, naming the class and permissions as
/// generation `g` (the decision's) does (none without a policy), through the program's map `m`
/// when the numbers are its own (selinux_set_mapping). The contexts are read only for a
/// record: most checks write none, and this is on every check's path.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn audit(
    g: Option<&Generation>,
    m: Option<&Resolved>,
    scon: &SecurityId,
    tcon: &SecurityId,
    class: u16,
    requested: u32,
    d: &Audited,
    result: i32,
    auditdata: *mut c_void,
) {
    let (audited, denied) = audited(requested, d, result);
    if audited != 0 {
        record(
            g,
            m,
            scon.text(),
            tcon.text(),
            class,
            audited,
            denied,
            result,
            auditdata,
        );
    }
}

#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn record(
    g: Option<&Generation>,
    m: Option<&Resolved>,
    scon: &str,
    tcon: &str,
    class: u16,
    audited: u32,
    denied: bool,
    result: i32,
    auditdata: *mut c_void,
) {
    let (names, unnamed) = g.map_or((Vec::new(), audited), |g| {
        names::perm_names(g, m, class, audited)
    });
    let line = LibselinuxRecord {
        denied,
        permissive: result == 0,
        scontext: scon,
        tcontext: tcon,
        tclass: g.and_then(|g| names::class_name_in(g, m, class)),
    }
    .render(&names, unnamed, |room| {
        callbacks::audit_supplement(auditdata, class, room)
    });
    callbacks::log(callbacks::SELINUX_AVC, &line);
}

#[cfg(test)]
mod tests {
    use super::*;

    // libselinux 3.4 avc.c avc_audit: denied bits audited by auditdeny; a refused or empty
    // request lists what was requested; a grant only its auditallow bits.
    #[test]
    fn which_permissions_a_record_lists() {
        let d = Audited {
            allowed: 0b0011,
            auditallow: 0b0001,
            auditdeny: 0b0100,
        };
        assert_eq!(audited(0b1100, &d, -1), (0b0100, true));
        assert_eq!(audited(0b0011, &d, 0), (0b0001, false));
        assert_eq!(audited(0b0010, &d, 0), (0, false));
        assert_eq!(audited(0, &d, -1), (0, true));
        assert_eq!(audited(0b0010, &d, -1), (0b0010, true));
    }
}
