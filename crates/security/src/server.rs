//! The security server: decisions on one immutable policy generation, and the atomic switch from
//! one generation to the next.

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use seaccess_policy::{avtab, defaults, fsuse, read_policy, Context, Level, Policy, Range, OBJECT_R};
use seaccess_types::{AccessVector, AvDecision, ClassId, DecisionFlags, Seqno, Sid, XpermsDecision};

use crate::compiled::{Compiled, ALWAYS};
use crate::constraint;
use crate::context::{check_valid, context_to_string, parse_context};
use crate::error::{Result, SecurityError};
use crate::sidtab::{Contexts, SidTable};

/// Why a permission was denied.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DenialReason {
    /// No allow rule grants it.
    NoAllowRule,
    /// Only conditional rules grant it, and their conditions are false now; the booleans named
    /// are those the conditions read.
    BooleanOff { booleans: Vec<String> },
    /// A constraint (or, when `mls`, an MLS constraint) of the class forbids it.
    Constraint { index: usize, mls: bool, expression: String },
    /// A process transition that changes role, with no role allow rule for the pair.
    RoleAllow { from: String, to: String },
    /// The source type is bounded and its bound does not have the permission.
    TypeBounds { bound: String },
}

/// A decision with a reason for each denied permission bit.
#[derive(Clone, Debug)]
pub struct Explanation {
    pub decision: AvDecision,
    pub reasons: Vec<(u32, DenialReason)>,
}

/// Which kind of extended permission a query is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum XpermKind {
    Ioctl,
    Nlmsg,
}

/// One policy generation: the compiled policy, its SID table, the boolean values and the
/// conditional branches they enable, and the generation's seqno. Immutable once published.
pub struct Generation {
    pub(crate) c: Arc<Compiled>,
    pub(crate) sids: Arc<SidTable>,
    ctx: Arc<Contexts>,
    bools: Vec<bool>,
    enabled: Vec<bool>,
    seqno: Seqno,
}

struct TeResult {
    allowed: u32,
    auditallow: u32,
    auditdeny: u32,
}

impl Generation {
    fn new(c: Arc<Compiled>, sids: Arc<SidTable>, ctx: Arc<Contexts>, bools: Vec<bool>, seqno: Seqno) -> Generation {
        let mut enabled = Vec::with_capacity(c.policy.conds.len() * 2);
        for node in &c.policy.conds {
            let state = constraint::eval_cond(&node.expr, &bools);
            enabled.push(state == Some(true));
            enabled.push(state == Some(false));
        }
        Generation { c, sids, ctx, bools, enabled, seqno }
    }

    pub fn policy(&self) -> &Policy {
        &self.c.policy
    }

    pub fn seqno(&self) -> Seqno {
        self.seqno
    }

    /// How many rules the policy has: (unconditional, conditional). The rules themselves live
    /// in the server's indexes, not in [`Generation::policy`].
    pub fn rule_counts(&self) -> (usize, usize) {
        self.c.rule_counts
    }

    pub fn sid_table(&self) -> &SidTable {
        &self.sids
    }

    fn on(&self, branch: u32) -> bool {
        branch == ALWAYS || self.enabled.get(branch as usize).copied().unwrap_or(false)
    }

    // ---- contexts and SIDs ----

    pub fn parse_context(&self, s: &str) -> Result<Context> {
        parse_context(&self.c.policy, s)
    }

    pub fn context_to_sid(&self, s: &str) -> Result<Sid> {
        Ok(self.intern(self.parse_context(s)?))
    }

    pub fn context_struct_to_sid(&self, c: Context) -> Result<Sid> {
        check_valid(&self.c.policy, "", &c)?;
        Ok(self.intern(c))
    }

    /// The SID of a valid context, remembering its parsed form for this policy.
    fn intern(&self, c: Context) -> Sid {
        let sid = self.sids.sid_of(&context_to_string(&self.c.policy, &c));
        if self.ctx.get(sid).is_none() {
            self.ctx.set(sid, c);
        }
        sid
    }

    /// The context a SID stands for under this policy. A SID first seen under an earlier
    /// policy is parsed anew; if its context is not valid any more, it is treated as the
    /// unlabeled initial SID's context, as the kernel does after a reload.
    pub fn sid_context(&self, sid: Sid) -> Result<&Context> {
        if let Some(c) = self.ctx.get(sid) {
            return Ok(c);
        }
        let text = self.sids.text(sid).ok_or(SecurityError::InvalidSid(sid))?;
        let c = match parse_context(&self.c.policy, &text) {
            Ok(c) => c,
            Err(_) => self.ctx.get(Sid(UNLABELED)).ok_or(SecurityError::InvalidSid(sid))?.clone(),
        };
        self.ctx.set(sid, c).ok_or(SecurityError::InvalidSid(sid))
    }

    /// Resolves every SID given so far under this generation's policy, as the kernel converts
    /// its SID table while loading a policy: the cost of a reload falls on the loader, not on
    /// the first access decisions after it.
    fn resolve_all_sids(&self) {
        for sid in self.sids.dynamic() {
            let _ = self.sid_context(sid);
        }
    }

    pub fn sid_to_context(&self, sid: Sid) -> Result<String> {
        Ok(context_to_string(&self.c.policy, self.sid_context(sid)?))
    }

    pub fn context_string(&self, c: &Context) -> String {
        context_to_string(&self.c.policy, c)
    }

    /// The class with this name.
    pub fn class(&self, name: &str) -> Result<ClassId> {
        match self.c.policy.class_value(name) {
            Some(v) => Ok(ClassId(v as u16)),
            None => Err(SecurityError::UnknownClass(name.into())),
        }
    }

    pub fn class_name(&self, class: ClassId) -> Result<&str> {
        self.c.policy.class_names.name(class.0.into()).ok_or(SecurityError::InvalidClass(class.0.into()))
    }

    /// The access vector of the named permissions of a class.
    pub fn perms(&self, class: ClassId, names: &[&str]) -> Result<AccessVector> {
        let cname = self.class_name(class)?;
        let mut v = 0u32;
        for n in names {
            match self.c.policy.perm_bit(class.0.into(), n) {
                Some(b) => v |= 1 << b,
                None => return Err(SecurityError::UnknownPermission { class: cname.into(), perm: (*n).into() }),
            }
        }
        Ok(AccessVector(v))
    }

    pub fn perm_name(&self, class: ClassId, bit: u32) -> Option<&str> {
        self.c.policy.perm_name(class.0.into(), bit)
    }

    // ---- access decisions ----

    fn check_class(&self, class: ClassId) -> Result<u32> {
        let v = u32::from(class.0);
        if v == 0 || v as usize > self.c.policy.classes.len() {
            return Err(SecurityError::InvalidClass(v));
        }
        Ok(v)
    }

    /// The type-enforcement rules alone: every (source attribute, target attribute) pair's
    /// allow, auditallow and dontaudit rules, conditional ones if their branch is enabled.
    fn te(&self, stype: u32, ttype: u32, class: u32, disabled: Option<&mut Vec<(u32, u32)>>) -> TeResult {
        let c = &*self.c;
        let mut r = TeResult { allowed: 0, auditallow: 0, auditdeny: u32::MAX };
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
                if tattrs[ti] != rule.target || rule.specified & avtab::AV == 0 {
                    continue;
                }
                if !self.on(rule.branch) {
                    if let Some(d) = disabled.as_deref_mut() {
                        if rule.specified == avtab::ALLOWED {
                            d.push((rule.branch, rule.data));
                        }
                    }
                    continue;
                }
                match rule.specified {
                    avtab::ALLOWED => r.allowed |= rule.data,
                    avtab::AUDITALLOW => r.auditallow |= rule.data,
                    _ => r.auditdeny &= rule.data,
                }
            }
        }
        r
    }

    /// The kernel's context_struct_compute_av: rules, then constraints, then the role check on
    /// process transitions, then type bounds. Returns (allowed, auditallow, auditdeny).
    fn compute(&self, s: &Context, t: &Context, class: u32, mut why: Option<&mut Vec<(u32, DenialReason)>>) -> TeResult {
        let c = &*self.c;
        let p = &c.policy;
        let mut disabled = why.as_ref().map(|_| Vec::new());
        let mut r = self.te(s.ty, t.ty, class, disabled.as_mut());
        if let (Some(w), Some(d)) = (why.as_deref_mut(), disabled) {
            let missing = !r.allowed;
            for bit in AccessVector(missing).bits() {
                let mut bools: Vec<String> = Vec::new();
                for (branch, data) in &d {
                    if data & (1 << bit) != 0 {
                        let node = &p.conds[(*branch / 2) as usize];
                        for e in &node.expr {
                            if e.boolean != 0 {
                                let n = p.bool_names.name(e.boolean).unwrap_or("?").to_string();
                                if !bools.contains(&n) {
                                    bools.push(n);
                                }
                            }
                        }
                    }
                }
                w.push((bit, if bools.is_empty() { DenialReason::NoAllowRule } else { DenialReason::BooleanOff { booleans: bools } }));
            }
        }
        let cls = &p.classes[class as usize - 1];
        for (i, k) in cls.constraints.iter().enumerate() {
            if k.perms & r.allowed != 0 && !constraint::eval(p, &k.expr, s, t, None) {
                if let Some(w) = why.as_deref_mut() {
                    for bit in AccessVector(k.perms & r.allowed).bits() {
                        w.push((
                            bit,
                            DenialReason::Constraint {
                                index: i,
                                mls: constraint::is_mls(&k.expr),
                                expression: constraint::describe(p, &k.expr),
                            },
                        ));
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
                    w.push((
                        bit,
                        DenialReason::RoleAllow {
                            from: p.role_names.name(s.role).unwrap_or("?").into(),
                            to: p.role_names.name(t.role).unwrap_or("?").into(),
                        },
                    ));
                }
            }
            r.allowed &= !c.process_trans_perms;
        }
        // Type bounds: a bounded source type never gets more than its bound would, computed the
        // same way (recursively) with the bound in place of the type, and the target's bound in
        // place of a bounded target type.
        let sb = p.types[s.ty as usize - 1].bounds;
        if sb != 0 && r.allowed != 0 {
            let lo_s = Context { ty: sb, ..s.clone() };
            let tb = p.types[t.ty as usize - 1].bounds;
            let lo_t = if tb != 0 { Context { ty: tb, ..t.clone() } } else { t.clone() };
            let lo = self.compute(&lo_s, &lo_t, class, None);
            let masked = r.allowed & !lo.allowed;
            if masked != 0 {
                if let Some(w) = why {
                    for bit in AccessVector(masked).bits() {
                        w.push((bit, DenialReason::TypeBounds { bound: p.type_names.name(sb).unwrap_or("?").into() }));
                    }
                }
                r.allowed &= !masked;
            }
        }
        r
    }

    fn decision(&self, s: &Context, r: &TeResult) -> AvDecision {
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
    pub fn compute_av_contexts(&self, s: &Context, t: &Context, class: ClassId) -> Result<AvDecision> {
        let cl = self.check_class(class)?;
        let r = self.compute(s, t, cl, None);
        Ok(self.decision(s, &r))
    }

    /// The kernel's security_compute_av: what `ssid` may do to `tsid` of class `class`.
    pub fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        self.compute_av_contexts(s, t, class)
    }

    /// The decision together with a reason for each permission it denies.
    pub fn explain(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Explanation> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        let cl = self.check_class(class)?;
        let mut reasons = Vec::new();
        let r = self.compute(s, t, cl, Some(&mut reasons));
        reasons.sort_by_key(|(b, _)| *b);
        Ok(Explanation { decision: self.decision(s, &r), reasons })
    }

    /// The drivers (ioctl) or message-type high bytes (netlink) that have extended-permission
    /// rules for this triple: for any other driver the base permission alone decides.
    pub fn xperm_drivers(&self, ssid: Sid, tsid: Sid, class: ClassId, kind: XpermKind) -> Result<[u32; 8]> {
        let mut d = [0u32; 8];
        self.each_xperm(ssid, tsid, class, kind, |x, _| {
            if x.specified == avtab::XPERMS_IOCTLDRIVER {
                for (w, p) in d.iter_mut().zip(x.perms.iter()) {
                    *w |= p;
                }
            } else {
                d[usize::from(x.driver >> 5)] |= 1 << (x.driver & 31);
            }
        })?;
        Ok(d)
    }

    /// The kernel's security_compute_xperms_decision for one driver.
    pub fn compute_xperms(&self, ssid: Sid, tsid: Sid, class: ClassId, kind: XpermKind, driver: u8) -> Result<XpermsDecision> {
        let mut out = XpermsDecision { driver, ..Default::default() };
        let bit = |v: &[u32; 8], b: u8| v[usize::from(b >> 5)] & (1 << (b & 31)) != 0;
        self.each_xperm(ssid, tsid, class, kind, |x, specified| {
            let whole = x.specified == avtab::XPERMS_IOCTLDRIVER;
            if whole && !bit(&x.perms, driver) || !whole && x.driver != driver {
                return;
            }
            let dst = match specified {
                avtab::XPERMS_ALLOWED => &mut out.allowed,
                avtab::XPERMS_AUDITALLOW => &mut out.auditallow,
                _ => &mut out.dontaudit,
            };
            for (w, p) in dst.iter_mut().zip(x.perms.iter()) {
                *w |= if whole { u32::MAX } else { *p };
            }
        })?;
        Ok(out)
    }

    /// The drivers flagged for the triple (see [`Generation::xperm_drivers`]), or None when no
    /// ioctl extended-permission rule of any kind covers it: the kernel's `xperms.len == 0`,
    /// when the base permission alone decides. Since Linux 5.10 an auditallowx or dontauditx
    /// rule turns checking on as an allowx rule does.
    pub fn ioctl_drivers(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Option<[u32; 8]>> {
        let mut any = false;
        self.each_xperm(ssid, tsid, class, XpermKind::Ioctl, |_, _| any = true)?;
        if !any {
            return Ok(None);
        }
        self.xperm_drivers(ssid, tsid, class, XpermKind::Ioctl).map(Some)
    }

    /// The kernel's ioctl decision for command `cmd` (driver in the high byte, function in the
    /// low one), as avc_has_extended_perms makes it: the base `ioctl` permission must be
    /// allowed; once any extended-permission rule (allowx, auditallowx or dontauditx, as
    /// Linux 5.10 and later) covers the triple, only commands allowx rules list are allowed (a
    /// driver with no rule at all is denied). Returns (allowed, audited): a grant is
    /// audited when the base permission is auditallow'ed and the command auditallowx'ed, a
    /// denial unless the base permission is dontaudit'ed or the command dontauditx'ed.
    pub fn check_ioctl(&self, ssid: Sid, tsid: Sid, class: ClassId, cmd: u16) -> Result<(bool, bool)> {
        let d = self.compute_av(ssid, tsid, class)?;
        let bit = self
            .c
            .policy
            .perm_bit(u32::from(class.0), "ioctl")
            .ok_or_else(|| SecurityError::UnknownPermission { class: self.class_name(class).unwrap_or("?").into(), perm: "ioctl".into() })?;
        let base = AccessVector(1 << bit);
        let (driver, func) = ((cmd >> 8) as u8, cmd as u8);
        let drivers = self.ioctl_drivers(ssid, tsid, class)?;
        let xpd = match drivers {
            Some(dr) if dr[usize::from(driver >> 5)] & (1 << (driver & 31)) != 0 => {
                Some(self.compute_xperms(ssid, tsid, class, XpermKind::Ioctl, driver)?)
            }
            _ => None,
        };
        let mut allowed = d.allowed.contains(base);
        if drivers.is_some() && allowed {
            allowed = xpd.as_ref().is_some_and(|x| x.allows(func));
        }
        let audited = if allowed {
            d.auditallow.contains(base) && xpd.as_ref().is_none_or(|x| x.audits_allow(func))
        } else {
            d.auditdeny.contains(base) && !xpd.as_ref().is_some_and(|x| x.dontaudits(func))
        };
        Ok((allowed, audited))
    }

    fn each_xperm(&self, ssid: Sid, tsid: Sid, class: ClassId, kind: XpermKind, mut f: impl FnMut(&seaccess_policy::Xperms, u16)) -> Result<()> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        let cl = self.check_class(class)?;
        let c = &*self.c;
        let tattrs = &c.attrs[t.ty as usize - 1];
        for &sa in c.attrs[s.ty as usize - 1].iter() {
            for rule in c.av.run(sa, cl as u16) {
                if rule.specified & avtab::XPERMS == 0 {
                    continue;
                }
                let Some(x) = c.policy.xperms.get(rule.data as usize) else { continue };
                let matches_kind = match kind {
                    XpermKind::Ioctl => x.specified != avtab::XPERMS_NLMSG,
                    XpermKind::Nlmsg => x.specified == avtab::XPERMS_NLMSG,
                };
                if matches_kind && self.on(rule.branch) && tattrs.binary_search(&rule.target).is_ok() {
                    f(x, rule.specified);
                }
            }
        }
        Ok(())
    }

    // ---- new contexts ----

    /// The kernel's security_transition_sid (with an object name: filename transitions too).
    pub fn compute_create(&self, ssid: Sid, tsid: Sid, class: ClassId, name: Option<&str>) -> Result<Sid> {
        self.compute_sid(ssid, tsid, class, avtab::TRANSITION, name)
    }

    /// The kernel's security_change_sid (type_change rules).
    pub fn compute_relabel(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Sid> {
        self.compute_sid(ssid, tsid, class, avtab::CHANGE, None)
    }

    /// The kernel's security_member_sid (type_member rules).
    pub fn compute_member(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Sid> {
        self.compute_sid(ssid, tsid, class, avtab::MEMBER, None)
    }

    fn compute_sid(&self, ssid: Sid, tsid: Sid, class: ClassId, specified: u16, name: Option<&str>) -> Result<Sid> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        let new = self.compute_context(s, t, class, specified, name)?;
        if !self.c.policy.context_is_valid(&new) {
            return Err(SecurityError::InvalidComputedContext(self.context_string(&new)));
        }
        Ok(self.intern(new))
    }

    /// The new context, before the validity check.
    pub fn compute_context(&self, s: &Context, t: &Context, class: ClassId, specified: u16, name: Option<&str>) -> Result<Context> {
        let c = &*self.c;
        let p = &c.policy;
        let cl = u32::from(class.0);
        let cladatum = p.classes.get((cl as usize).wrapping_sub(1));
        let sock = c.is_socket(cl);
        let objectish = !(cl == c.process_class || sock);
        let user = match specified {
            avtab::MEMBER => t.user,
            _ if cladatum.is_some_and(|d| d.default_user == defaults::TARGET) => t.user,
            _ => s.user,
        };
        let mut role = match cladatum.map(|d| d.default_role) {
            Some(defaults::SOURCE) => s.role,
            Some(defaults::TARGET) => t.role,
            _ if objectish => OBJECT_R,
            _ => s.role,
        };
        let mut ty = match cladatum.map(|d| d.default_type) {
            Some(defaults::SOURCE) => s.ty,
            Some(defaults::TARGET) => t.ty,
            _ if objectish => t.ty,
            _ => s.ty,
        };
        if let (Ok(st), Ok(tt), Ok(k)) = (u16::try_from(s.ty), u16::try_from(t.ty), u16::try_from(cl)) {
            let run = c.types.run(st, k);
            let from = run.partition_point(|r| r.target < tt);
            let hit = run[from..]
                .iter()
                .take_while(|r| r.target == tt)
                .find(|r| r.specified == specified && self.on(r.branch));
            if let Some(r) = hit {
                ty = r.data;
            }
        }
        if let Some(name) = name {
            if c.ftrans_ttypes.get(t.ty) {
                if let Some(list) = c.ftrans.get(&(t.ty, cl, Box::<str>::from(name))) {
                    if let Some((_, otype)) = list.iter().find(|(stypes, _)| stypes.get(s.ty - 1)) {
                        ty = *otype;
                    }
                }
            }
        }
        if specified == avtab::TRANSITION {
            if let Some(&nr) = c.role_trans.get(&(s.role, t.ty, cl)) {
                role = nr;
            }
        }
        let range = if p.mls { Some(self.mls_compute(s, t, cl, specified, sock)?) } else { None };
        Ok(Context { user, role, ty, range })
    }

    fn mls_compute(&self, s: &Context, t: &Context, class: u32, specified: u16, sock: bool) -> Result<Range> {
        let c = &*self.c;
        let (Some(sr), Some(tr)) = (&s.range, &t.range) else {
            return Err(SecurityError::InvalidComputedContext("context without a level in an MLS policy".into()));
        };
        let low = |r: &Range| Range { low: r.low.clone(), high: r.low.clone() };
        let high = |r: &Range| Range { low: r.high.clone(), high: r.high.clone() };
        if specified == avtab::TRANSITION {
            if let Some(r) = c.range_trans.get(&(s.ty, t.ty, class)) {
                return Ok(r.clone());
            }
            let dr = c.policy.classes.get((class as usize).wrapping_sub(1)).map_or(0, |d| d.default_range);
            match dr {
                defaults::SOURCE_LOW => return Ok(low(sr)),
                defaults::SOURCE_HIGH => return Ok(high(sr)),
                defaults::SOURCE_LOW_HIGH => return Ok(sr.clone()),
                defaults::TARGET_LOW => return Ok(low(tr)),
                defaults::TARGET_HIGH => return Ok(high(tr)),
                defaults::TARGET_LOW_HIGH => return Ok(tr.clone()),
                defaults::GLBLUB => return glblub(sr, tr),
                _ => {}
            }
        }
        if specified != avtab::MEMBER && (class == c.process_class || sock) {
            Ok(sr.clone())
        } else {
            Ok(low(sr))
        }
    }

    /// The kernel's security_validate_transition: may an object of `class` go from `old` to
    /// `new`, relabelled by `task`? Every validatetrans and mlsvalidatetrans rule must hold.
    pub fn validate_transition(&self, old: Sid, new: Sid, task: Sid, class: ClassId) -> Result<()> {
        let o = self.sid_context(old)?;
        let n = self.sid_context(new)?;
        let t = self.sid_context(task)?;
        let cl = self.check_class(class)?;
        let p = &self.c.policy;
        for k in &p.classes[cl as usize - 1].validatetrans {
            if !constraint::eval(p, &k.expr, o, n, Some(t)) {
                return Err(SecurityError::TransitionDenied {
                    old: self.context_string(o),
                    new: self.context_string(n),
                    task: self.context_string(t),
                    class: p.classes[cl as usize - 1].name.to_string(),
                });
            }
        }
        Ok(())
    }

    // ---- booleans ----

    /// (name, value) of every boolean in this generation.
    pub fn booleans(&self) -> Vec<(String, bool)> {
        self.c.policy.bools.iter().zip(&self.bools).map(|(b, v)| (b.name.to_string(), *v)).collect()
    }

    pub fn boolean(&self, name: &str) -> Result<bool> {
        let v = self.c.policy.bool_names.value(name).ok_or_else(|| SecurityError::UnknownBoolean(name.into()))?;
        Ok(self.bools[v as usize - 1])
    }

    // ---- object contexts ----

    fn ctx_sid(&self, c: &Context) -> Sid {
        self.intern(c.clone())
    }

    /// The SID of initial SID number `n` as the policy defines it.
    pub fn initial_sid(&self, n: u32) -> Option<Sid> {
        self.c.policy.ocontexts.initial_sids.iter().find(|s| s.sid == n).map(|s| Sid(s.sid))
    }

    fn initial_or_null(&self, n: u32) -> Sid {
        self.initial_sid(n).unwrap_or(Sid::NULL)
    }

    /// How a filesystem type is labelled: its fs_use behaviour and SID, or None.
    pub fn fs_use(&self, fstype: &str) -> Option<(FsUseBehavior, Sid)> {
        let f = self.c.policy.ocontexts.fs_use.iter().find(|f| &*f.fstype == fstype)?;
        let b = match f.behavior {
            fsuse::XATTR => FsUseBehavior::Xattr,
            fsuse::TRANS => FsUseBehavior::Trans,
            _ => FsUseBehavior::Task,
        };
        Some((b, self.ctx_sid(&f.context)))
    }

    /// The kernel's security_genfs_sid: the entry with the longest path that prefixes `path`
    /// (and matches the class, or is for every class).
    pub fn genfs_sid(&self, fstype: &str, path: &str, class: ClassId) -> Option<Sid> {
        let g = self.c.policy.genfs.iter().find(|g| &*g.fstype == fstype)?;
        let e = g
            .entries
            .iter()
            .find(|e| (e.class == 0 || e.class == u32::from(class.0)) && path.starts_with(&*e.path))?;
        Some(self.ctx_sid(&e.context))
    }

    pub fn port_sid(&self, protocol: u8, port: u16) -> Sid {
        let o = &self.c.policy.ocontexts;
        match o.ports.iter().find(|c| c.protocol == u32::from(protocol) && c.low <= u32::from(port) && u32::from(port) <= c.high) {
            Some(c) => self.ctx_sid(&c.context),
            None => self.initial_or_null(9),
        }
    }

    pub fn netif_sid(&self, name: &str) -> Sid {
        match self.c.policy.ocontexts.netifs.iter().find(|c| &*c.name == name) {
            Some(c) => self.ctx_sid(&c.context),
            None => self.initial_or_null(10),
        }
    }

    pub fn node_sid(&self, addr: std::net::IpAddr) -> Sid {
        let o = &self.c.policy.ocontexts;
        let hit = match addr {
            std::net::IpAddr::V4(a) => {
                let a = a.octets();
                o.nodes.iter().find(|n| (0..4).all(|i| a[i] & n.mask[i] == n.addr[i])).map(|n| &n.context)
            }
            std::net::IpAddr::V6(a) => {
                let a = a.octets();
                o.nodes6.iter().find(|n| (0..16).all(|i| a[i] & n.mask[i] == n.addr[i])).map(|n| &n.context)
            }
        };
        match hit {
            Some(c) => self.ctx_sid(c),
            None => self.initial_or_null(12),
        }
    }
}

/// How a filesystem's objects get their labels (fs_use_xattr, fs_use_trans, fs_use_task).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FsUseBehavior {
    Xattr,
    Trans,
    Task,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// The kernel's mls_context_glblub: the greatest lower bound of the low levels and the least
/// upper bound of the high levels; an empty intersection is an error.
fn glblub(a: &Range, b: &Range) -> Result<Range> {
    use seaccess_policy::Ebitmap;
    let low_sens = a.low.sens.max(b.low.sens);
    let low_cats = Ebitmap::from_bits(a.low.cats.iter().filter(|c| b.low.cats.get(*c)));
    let high_sens = a.high.sens.min(b.high.sens);
    let high_cats = Ebitmap::from_bits(a.high.cats.iter().filter(|c| b.high.cats.get(*c)));
    let r = Range { low: Level { sens: low_sens, cats: low_cats }, high: Level { sens: high_sens, cats: high_cats } };
    if !seaccess_policy::level_dom(&r.high, &r.low) {
        return Err(SecurityError::InvalidComputedContext("default_range glblub: the ranges do not overlap".into()));
    }
    Ok(r)
}

/// The kernel's initial SID for objects whose label is missing or no longer valid.
const UNLABELED: u32 = 3;


/// The security server: the current policy generation, replaced atomically by loads and
/// boolean commits, and the booleans set but not yet committed.
pub struct SecurityServer {
    current: ArcSwap<Generation>,
    /// Pending boolean values; the lock also serialises commits and reloads.
    pending: Mutex<Vec<bool>>,
    listeners: Mutex<Vec<seaccess_types::ChangeFn>>,
    prepares: Mutex<Vec<seaccess_types::PrepareFn>>,
}

impl SecurityServer {
    /// Loads a policy image.
    pub fn from_bytes(data: &[u8]) -> Result<SecurityServer> {
        let policy = read_policy(data).map_err(|e| SecurityError::Policy(Arc::new(e)))?;
        Ok(SecurityServer::new(policy))
    }

    pub fn new(policy: Policy) -> SecurityServer {
        let bools: Vec<bool> = policy.bools.iter().map(|b| b.state).collect();
        let g = Self::generation(policy, Arc::new(SidTable::new()), bools.clone(), Seqno(1));
        SecurityServer { current: ArcSwap::from_pointee(g), pending: Mutex::new(bools), listeners: Mutex::new(Vec::new()), prepares: Mutex::new(Vec::new()) }
    }

    fn generation(policy: Policy, sids: Arc<SidTable>, bools: Vec<bool>, seqno: Seqno) -> Generation {
        let initial: Vec<(u32, Context)> =
            policy.ocontexts.initial_sids.iter().map(|s| (s.sid, s.context.clone())).collect();
        let ctx = Arc::new(Contexts::new(initial));
        Generation::new(Arc::new(Compiled::new(policy)), sids, ctx, bools, seqno)
    }

    /// Replaces the policy with a new image, atomically for every thread, with the next seqno.
    /// SIDs keep standing for the same context text; booleans the new policy shares by name
    /// keep their current values (as the kernel preserves them across a reload). On error the
    /// old policy stays.
    pub fn reload(&self, data: &[u8]) -> Result<Seqno> {
        let policy = read_policy(data).map_err(|e| SecurityError::Policy(Arc::new(e)))?;
        let mut pending = lock(&self.pending);
        let old = self.current.load_full();
        let bools: Vec<bool> = policy
            .bools
            .iter()
            .map(|b| old.boolean(&b.name).unwrap_or(b.state))
            .collect();
        let seqno = Seqno(old.seqno.0.wrapping_add(1));
        let g = Self::generation(policy, old.sids.clone(), bools.clone(), seqno);
        g.resolve_all_sids();
        self.publish(g);
        *pending = bools;
        self.notify(seqno);
        Ok(seqno)
    }

    /// Calls `f` with the new seqno after every reload and boolean commit, before the call that
    /// made the change returns: how a cache learns to drop its decisions (the kernel's
    /// avc_ss_reset, libselinux's avc_add_callback).
    pub fn on_policy_change(&self, f: impl Fn(Seqno) + Send + Sync + 'static) {
        lock(&self.listeners).push(Box::new(f));
    }

    /// Calls `f` with each new generation before it is published, while every thread still
    /// gets the old one: how a cache computes its decisions under the new policy ahead of the
    /// switch ([`seaccess_types::AccessServer`] answers from that generation alone, with its
    /// seqno). Runs serialised with every other change, on the changing thread.
    pub fn on_policy_prepare(&self, f: impl Fn(&dyn seaccess_types::AccessServer) + Send + Sync + 'static) {
        lock(&self.prepares).push(Box::new(f));
    }

    /// Prepares listeners for `g`, then makes it the current generation.
    fn publish(&self, g: Generation) {
        for f in lock(&self.prepares).iter() {
            f(&g);
        }
        self.current.store(Arc::new(g));
    }

    fn notify(&self, seqno: Seqno) {
        for f in lock(&self.listeners).iter() {
            f(seqno);
        }
    }

    /// The current generation; hold it to make several queries against one policy state.
    pub fn snapshot(&self) -> Arc<Generation> {
        self.current.load_full()
    }

    pub fn seqno(&self) -> Seqno {
        self.current.load().seqno
    }

    pub fn context_to_sid(&self, s: &str) -> Result<Sid> {
        self.current.load().context_to_sid(s)
    }

    pub fn sid_to_context(&self, sid: Sid) -> Result<String> {
        self.current.load().sid_to_context(sid)
    }

    pub fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision> {
        self.current.load().compute_av(ssid, tsid, class)
    }

    /// Sets a boolean's pending value; it takes effect at the next commit.
    pub fn set_boolean(&self, name: &str, value: bool) -> Result<()> {
        let g = self.current.load();
        let v = g.c.policy.bool_names.value(name).ok_or_else(|| SecurityError::UnknownBoolean(name.into()))?;
        let mut pending = match self.pending.lock() {
            Ok(p) => p,
            Err(p) => p.into_inner(),
        };
        if let Some(slot) = pending.get_mut(v as usize - 1) {
            *slot = value;
        }
        Ok(())
    }

    /// The pending value of a boolean.
    pub fn pending_boolean(&self, name: &str) -> Result<bool> {
        let g = self.current.load();
        let v = g.c.policy.bool_names.value(name).ok_or_else(|| SecurityError::UnknownBoolean(name.into()))?;
        let pending = match self.pending.lock() {
            Ok(p) => p,
            Err(p) => p.into_inner(),
        };
        Ok(pending.get(v as usize - 1).copied().unwrap_or(false))
    }

    /// Makes every pending boolean value current, all at once, as a new generation with the next
    /// seqno. Returns the new seqno.
    pub fn commit_booleans(&self) -> Seqno {
        let pending = lock(&self.pending);
        let old = self.current.load_full();
        let seqno = Seqno(old.seqno.0.wrapping_add(1));
        let g = Generation::new(old.c.clone(), old.sids.clone(), old.ctx.clone(), pending.clone(), seqno);
        self.publish(g);
        self.notify(seqno);
        seqno
    }
}

fn server_error(e: SecurityError) -> seaccess_types::ServerError {
    match e {
        SecurityError::InvalidSid(s) => seaccess_types::ServerError::InvalidSid(s),
        SecurityError::InvalidClass(c) => seaccess_types::ServerError::InvalidClass(ClassId(c as u16)),
        other => seaccess_types::ServerError::Other(other.to_string()),
    }
}

/// One policy generation answers through the cache's seam too: what a change's prepare
/// listeners are given (see [`SecurityServer::on_policy_prepare`]).
impl seaccess_types::AccessServer for Generation {
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> std::result::Result<AvDecision, seaccess_types::ServerError> {
        Generation::compute_av(self, ssid, tsid, class).map_err(server_error)
    }

    fn xperm_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<(Option<[u32; 8]>, Seqno), seaccess_types::ServerError> {
        let d = self.ioctl_drivers(ssid, tsid, class).map_err(server_error)?;
        Ok((d, self.seqno))
    }

    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> std::result::Result<(XpermsDecision, Seqno), seaccess_types::ServerError> {
        let x = Generation::compute_xperms(self, ssid, tsid, class, XpermKind::Ioctl, driver).map_err(server_error)?;
        Ok((x, self.seqno))
    }

    fn seqno(&self) -> Seqno {
        self.seqno
    }

    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        Generation::sid_to_context(self, sid).ok()
    }

    fn class_name(&self, class: ClassId) -> Option<String> {
        Generation::class_name(self, class).ok().map(String::from)
    }

    fn perm_name(&self, class: ClassId, bit: u32) -> Option<String> {
        Generation::perm_name(self, class, bit).map(String::from)
    }
}

/// How a cache follows the server's changes ([`SecurityServer::on_policy_prepare`] and
/// [`SecurityServer::on_policy_change`]).
impl seaccess_types::PolicyEvents for SecurityServer {
    fn on_policy_prepare(&self, f: seaccess_types::PrepareFn) {
        SecurityServer::on_policy_prepare(self, f);
    }

    fn on_policy_change(&self, f: seaccess_types::ChangeFn) {
        SecurityServer::on_policy_change(self, f);
    }
}

/// The seam the access vector cache calls through: the current generation's answers.
impl seaccess_types::AccessServer for SecurityServer {
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> std::result::Result<AvDecision, seaccess_types::ServerError> {
        seaccess_types::AccessServer::compute_av(&**self.current.load(), ssid, tsid, class)
    }

    fn xperm_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<(Option<[u32; 8]>, Seqno), seaccess_types::ServerError> {
        seaccess_types::AccessServer::xperm_drivers(&**self.current.load(), ssid, tsid, class)
    }

    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> std::result::Result<(XpermsDecision, Seqno), seaccess_types::ServerError> {
        seaccess_types::AccessServer::compute_xperms(&**self.current.load(), ssid, tsid, class, driver)
    }

    fn seqno(&self) -> Seqno {
        self.current.load().seqno
    }

    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        seaccess_types::AccessServer::sid_to_context(&**self.current.load(), sid)
    }

    fn class_name(&self, class: ClassId) -> Option<String> {
        seaccess_types::AccessServer::class_name(&**self.current.load(), class)
    }

    fn perm_name(&self, class: ClassId, bit: u32) -> Option<String> {
        seaccess_types::AccessServer::perm_name(&**self.current.load(), class, bit)
    }
}
