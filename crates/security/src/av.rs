//! Access decisions: the kernel's context_struct_compute_av and security_compute_av.

use seaccess_policy::{AvKind, Context, RuleKind};
use seaccess_types::{AccessVector, AvDecision, ClassId, DecisionFlags, Sid};

use crate::constraint;
use crate::error::Result;
use crate::explain::DenialReason;
use crate::generation::Generation;

/// The three vectors a decision is built from, as the computation narrows them.
pub(crate) struct TeResult {
    pub(crate) allowed: u32,
    pub(crate) auditallow: u32,
    pub(crate) auditdeny: u32,
}

impl Generation {
    /// The type-enforcement rules alone: every (source attribute, target attribute) pair's
    /// allow, auditallow and dontaudit rules, conditional ones if their branch is enabled.
    pub(crate) fn te(
        &self,
        stype: u32,
        ttype: u32,
        class: u32,
        disabled: Option<&mut Vec<(u32, u32)>>,
    ) -> TeResult {
        let c = &*self.c;
        let mut r = TeResult {
            allowed: 0,
            auditallow: 0,
            auditdeny: u32::MAX,
        };
        let tattrs = &c.attrs[ttype as usize - 1];
        let mut disabled = disabled;
        let class = class as u16;
        for &sa in c.attrs[stype as usize - 1].iter() {
            // Both the run and the target's attributes are sorted: walk them together.
            let mut ti = 0;
            for rule in c.av.run(sa, class) {
                while ti < tattrs.len() && tattrs[ti] < rule.target {
                    ti += 1;
                }
                if ti == tattrs.len() {
                    break;
                }
                let kind = match rule.kind {
                    RuleKind::Av(k) => k,
                    RuleKind::Type(_) | RuleKind::Xperms(_) => continue,
                };
                if tattrs[ti] != rule.target {
                    continue;
                }
                if !self.on(rule.branch) {
                    if let Some(d) = disabled.as_deref_mut() {
                        if kind == AvKind::Allowed {
                            d.push((rule.branch, rule.data));
                        }
                    }
                    continue;
                }
                match kind {
                    AvKind::Allowed => r.allowed |= rule.data,
                    AvKind::AuditAllow => r.auditallow |= rule.data,
                    AvKind::AuditDeny => r.auditdeny &= rule.data,
                }
            }
        }
        r
    }

    /// The kernel's context_struct_compute_av: rules, then constraints, then the role check on
    /// process transitions, then type bounds. Returns (allowed, auditallow, auditdeny).
    pub(crate) fn compute(
        &self,
        s: &Context,
        t: &Context,
        class: u32,
        mut why: Option<&mut Vec<(u32, DenialReason)>>,
    ) -> TeResult {
        let c = &*self.c;
        let p = &c.policy;
        let mut disabled = why.as_ref().map(|_| Vec::new());
        let mut r = self.te(s.ty, t.ty, class, disabled.as_mut());
        if let (Some(w), Some(d)) = (why.as_deref_mut(), disabled) {
            self.rule_reasons(r.allowed, &d, w);
        }
        let cls = &p.classes[class as usize - 1];
        for (i, k) in cls.constraints.iter().enumerate() {
            if k.perms & r.allowed != 0 && !constraint::eval(p, &k.expr, s, t, None) {
                if let Some(w) = why.as_deref_mut() {
                    for bit in AccessVector(k.perms & r.allowed).bits() {
                        w.push((bit, self.constraint_reason(i, k, s, t)));
                    }
                }
                r.allowed &= !k.perms;
            }
        }
        if class == c.process_class
            && r.allowed & c.process_trans_perms != 0
            && s.role != t.role
            && !c.role_allow.contains(&(s.role, t.role))
        {
            if let Some(w) = why.as_deref_mut() {
                for bit in AccessVector(r.allowed & c.process_trans_perms).bits() {
                    w.push((bit, self.role_reason(s, t)));
                }
            }
            r.allowed &= !c.process_trans_perms;
        }
        self.mask_bounds(s, t, class, &mut r, why);
        r
    }

    pub(crate) fn decision(&self, s: &Context, r: &TeResult) -> AvDecision {
        let mut flags = DecisionFlags::default();
        if self.c.policy.permissive.get(s.ty) {
            flags = DecisionFlags::PERMISSIVE;
        }
        AvDecision {
            allowed: AccessVector(r.allowed),
            decided: AccessVector::ALL,
            auditallow: AccessVector(r.auditallow),
            auditdeny: AccessVector(r.auditdeny),
            seqno: self.seqno,
            flags,
        }
    }

    /// The decision for source context `s` acting on target context `t` of class `class`.
    /// Errors when either context is not valid in this generation's policy.
    pub fn compute_av_contexts(
        &self,
        s: &Context,
        t: &Context,
        class: ClassId,
    ) -> Result<AvDecision> {
        self.check_context(s)?;
        self.check_context(t)?;
        self.compute_av_valid(s, t, class)
    }

    /// The kernel's security_compute_av: what `ssid` may do to `tsid` of class `class`.
    pub fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        self.compute_av_valid(s, t, class)
    }

    fn compute_av_valid(&self, s: &Context, t: &Context, class: ClassId) -> Result<AvDecision> {
        let cl = self.check_class(class)?;
        let r = self.compute(s, t, cl, None);
        Ok(self.decision(s, &r))
    }
}
