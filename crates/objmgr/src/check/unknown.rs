//! What the policy does not define, as the kernel's security server answers it: a class
//! (security_compute_av when unmap_class finds none: handle_unknown's everything or nothing,
//! with the source's permissive flag set first) and permissions of a class it defines
//! (map_decision: allowed under handle_unknown allow, else denied and in auditdeny), and what
//! access(2)'s audit_access makes of them (avc_audit_required).

use seaccess_avc::Verdict;
use seaccess_types::{AccessVector, AvDecision, HandleUnknown, Seqno, Sid};

use super::Checked;
use crate::classes::Class;
use crate::classmap::{ClassMap, Translated};
use crate::error::Result;
use crate::ObjectManager;

impl ObjectManager {
    /// The cache's verdict `v` on the permissions of `t` the policy defines, with those it
    /// lacks (`t.unknown`) added as the kernel's map_decision adds them: allowed under
    /// handle_unknown allow; else denied, and audited since map_decision puts them in
    /// auditdeny. With a denial the record lists denied permissions only
    /// (avc_audit_required), so a grant the policy auditallow's is not in it.
    pub(super) fn mapped_verdict(&self, map: &ClassMap, t: &Translated, v: Verdict) -> Checked {
        let mut c = Checked::from(v);
        if t.unknown != 0 && map.handle_unknown() != HandleUnknown::Allow {
            c.unknown = t.unknown;
            c.audited_unknown = t.unknown;
            if v.denied.is_empty() {
                c.audited = AccessVector::NONE;
            }
            c.enforced |= self.avc.enforcing() && !v.decision.flags.permissive();
        }
        c
    }

    /// avc_audit_required's `auditdeny` argument for access(2) (FILE__AUDIT_ACCESS): a denial
    /// (of any permission, the policy's or one it lacks) is not audited, whatever was denied,
    /// when the decision's auditdeny lacks the class's `audit_access`: a dontaudit rule for
    /// it, or, when the policy does not define it, handle_unknown allow (map_decision puts a
    /// permission the policy lacks in auditdeny only under deny). A class the policy lacks
    /// keeps its record (avd_init's auditdeny is all ones).
    pub(crate) fn dontaudit_access(&self, class: Class, v: &mut Checked) {
        if (v.denied.is_empty() && v.unknown == 0) || v.unknown_class {
            return;
        }
        let Some(map) = self.maps.for_seqno(v.decision.seqno) else {
            return;
        };
        let Ok(t) = map.translate(class, crate::classes::common_file::AUDIT_ACCESS) else {
            return;
        };
        let in_auditdeny = if t.unknown != 0 {
            map.handle_unknown() != HandleUnknown::Allow
        } else {
            v.decision.auditdeny.0 & t.perms.0 != 0
        };
        if !in_auditdeny {
            v.audited = AccessVector::NONE;
            v.audited_unknown = 0;
        }
    }

    /// `perms` of a class the policy of `map` does not define, for `ssid` on `tsid` (the
    /// kernel's security_compute_av when unmap_class finds no class): everything or nothing,
    /// as handle_unknown says, a denial audited (avd_init's auditdeny is all ones). The
    /// decision carries the source's permissive flag, which security_compute_av sets before it
    /// looks the class up, so that avc_denied lets a permissive domain through (permissive=1
    /// in the record). The flag is read from the cache's decision for the same SIDs on a class
    /// the policy defines, asked for no permission so that nothing is granted; `Err` with the
    /// seqno of the policy the cache answered from when that is not `map`'s.
    pub(super) fn unknown_class(
        &self,
        map: &ClassMap,
        ssid: Sid,
        tsid: Sid,
        perms: u32,
    ) -> Result<std::result::Result<Checked, Seqno>> {
        let mut d = AvDecision::deny_all(map.seqno());
        // A policy defining none of our classes gives no flag to read: the denial then stands
        // in enforcing mode (fails closed).
        if let Some(probe) = map.defined_class() {
            match self
                .avc
                .check_at(ssid, tsid, probe, AccessVector::NONE, map.seqno())?
            {
                Ok(v) => d.flags = v.decision.flags,
                Err(at) => return Ok(Err(at)),
            }
        }
        if map.handle_unknown() == HandleUnknown::Allow {
            d.allowed = AccessVector::ALL;
            return Ok(Ok(Checked {
                decision: d,
                denied: AccessVector::NONE,
                unknown: 0,
                enforced: false,
                audited: AccessVector::NONE,
                audited_unknown: 0,
                unknown_class: true,
            }));
        }
        Ok(Ok(Checked {
            decision: d,
            denied: AccessVector::NONE,
            unknown: perms,
            enforced: self.avc.enforcing() && !d.flags.permissive(),
            audited: AccessVector::NONE,
            audited_unknown: perms,
            unknown_class: true,
        }))
    }
}
