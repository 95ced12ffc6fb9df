//! A decision as libselinux hands it to C (`struct av_decision`), and the kernel's decision for
//! a class the policy does not define: what the checks (avc.rs), the security server's calls
//! (compute.rs) and the class map (mapping.rs) all speak, kept below the three of them.

use std::ffi::c_uint;

use seaccess_security::Generation;
use seaccess_types::{AccessVector, AvDecision, DecisionFlags, HandleUnknown, Sid};

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

/// What the kernel answers selinuxfs's access file for source `ssid` and a class generation
/// `g`'s policy does not define (services.c, security_compute_av_user): class 0 gets
/// everything when the policy allows unknown classes and nothing otherwise; a number past the
/// policy's classes gets nothing (context_struct_compute_av's "Invalid class"). Either way the
/// decision carries the source's permissive flag, which security_compute_av_user sets from the
/// source type before it looks at the class: libselinux's avc_has_perm_noaudit then grants a
/// permissive domain's request, as the kernel's avc_denied does. A SID `g` cannot resolve gets
/// no flag (the kernel's `goto out` comes before it).
pub(crate) fn unknown_class_decision(g: &Generation, ssid: Sid, class: u16) -> AvDecision {
    let mut d = AvDecision::deny_all(g.seqno());
    if g.sid_context(ssid)
        .is_ok_and(|c| g.policy().permissive.get(c.ty))
    {
        d.flags = DecisionFlags::PERMISSIVE;
    }
    if class == 0 && g.handle_unknown() == HandleUnknown::Allow {
        d.allowed = AccessVector::ALL;
    }
    d
}
