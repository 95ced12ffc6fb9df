//! Extended permissions (ioctl and netlink commands): the kernel's
//! security_compute_xperms_decision and avc_has_extended_perms.

use seaccess_policy::{RuleKind, XpermsKind, XpermsRuleKind};
use seaccess_types::{AccessVector, ClassId, Sid, XpermsDecision};

use crate::error::{Result, SecurityError};
use crate::generation::Generation;

/// Which kind of extended permission a query is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum XpermKind {
    Ioctl,
    Nlmsg,
}

impl Generation {
    /// The drivers (ioctl) or message-type high bytes (netlink) that have extended-permission
    /// rules for this triple: for any other driver the base permission alone decides.
    pub fn xperm_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: XpermKind,
    ) -> Result<[u32; 8]> {
        let mut d = [0u32; 8];
        self.each_xperm(ssid, tsid, class, Some(kind), |x, _| match x.kind {
            XpermsKind::IoctlDriver => {
                for (w, p) in d.iter_mut().zip(x.perms.iter()) {
                    *w |= p;
                }
            }
            XpermsKind::IoctlFunction | XpermsKind::Nlmsg => {
                d[usize::from(x.driver >> 5)] |= 1 << (x.driver & 31)
            }
            XpermsKind::Unknown(_) => {}
        })?;
        Ok(d)
    }

    /// The kernel's security_compute_xperms_decision for one driver.
    pub fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: XpermKind,
        driver: u8,
    ) -> Result<XpermsDecision> {
        let mut out = XpermsDecision {
            driver,
            ..Default::default()
        };
        let bit = |v: &[u32; 8], b: u8| v[usize::from(b >> 5)] & (1 << (b & 31)) != 0;
        self.each_xperm(ssid, tsid, class, Some(kind), |x, rule| {
            let whole = match x.kind {
                XpermsKind::IoctlDriver => true,
                XpermsKind::IoctlFunction | XpermsKind::Nlmsg => false,
                XpermsKind::Unknown(_) => return,
            };
            if whole && !bit(&x.perms, driver) || !whole && x.driver != driver {
                return;
            }
            let dst = match rule {
                XpermsRuleKind::Allowed => &mut out.allowed,
                XpermsRuleKind::AuditAllow => &mut out.auditallow,
                XpermsRuleKind::DontAudit => &mut out.dontaudit,
            };
            for (w, p) in dst.iter_mut().zip(x.perms.iter()) {
                *w |= if whole { u32::MAX } else { *p };
            }
        })?;
        Ok(out)
    }

    /// The ioctl drivers flagged for the triple (see [`Generation::xperm_drivers`]), or None
    /// when no extended-permission rule of any kind covers it: the kernel's `xperms.len == 0`,
    /// when the base permission alone decides. Since Linux 5.10 an auditallowx or dontauditx
    /// rule turns checking on as an allowx rule does, and since 6.13 a netlink-message rule
    /// does too (services_compute_xperms_drivers sets `len` for every kind), so an nlmsg rule
    /// alone denies every ioctl command. The kernel flags drivers of both kinds in one map but
    /// decides a driver only from rules of the asked kind (`base_perms`, `base_perm`), so a
    /// driver only nlmsg rules name is denied either way; the map here holds ioctl drivers.
    pub fn ioctl_drivers(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Option<[u32; 8]>> {
        let mut any = false;
        self.each_xperm(ssid, tsid, class, None, |_, _| any = true)?;
        if !any {
            return Ok(None);
        }
        self.xperm_drivers(ssid, tsid, class, XpermKind::Ioctl)
            .map(Some)
    }

    /// The netlink message-type high bytes flagged for the triple by nlmsg rules, or None when
    /// no extended-permission rule of any kind covers it (as [`Generation::ioctl_drivers`]).
    pub fn nlmsg_drivers(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Option<[u32; 8]>> {
        let mut any = false;
        self.each_xperm(ssid, tsid, class, None, |_, _| any = true)?;
        if !any {
            return Ok(None);
        }
        self.xperm_drivers(ssid, tsid, class, XpermKind::Nlmsg)
            .map(Some)
    }

    /// The kernel's ioctl decision for command `cmd` (driver in the high byte, function in the
    /// low one), as avc_has_extended_perms makes it: the base `ioctl` permission must be
    /// allowed; once any extended-permission rule (allowx, auditallowx or dontauditx, as
    /// Linux 5.10 and later, of either kind, as 6.13 and later) covers the triple, only
    /// commands ioctl allowx rules list are allowed (a driver with no rule at all is denied). Returns (allowed, audited): a grant is
    /// audited when the base permission is auditallow'ed and the command auditallowx'ed, a
    /// denial unless the base permission is dontaudit'ed or the command dontauditx'ed.
    pub fn check_ioctl(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        cmd: u16,
    ) -> Result<(bool, bool)> {
        let d = self.compute_av(ssid, tsid, class)?;
        let bit = self
            .c
            .policy
            .perm_bit(u32::from(class.0), "ioctl")
            .ok_or_else(|| SecurityError::UnknownPermission {
                class: self.class_name(class).unwrap_or("?").into(),
                perm: "ioctl".into(),
                near: String::new(),
            })?;
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

    /// Calls `f` on every enabled extended-permission rule for the triple of this kind (None:
    /// of every kind, those the kernel does not know included, as they turn checking on too).
    fn each_xperm(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: Option<XpermKind>,
        mut f: impl FnMut(&seaccess_policy::Xperms, XpermsRuleKind),
    ) -> Result<()> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        let cl = self.check_class(class)?;
        let c = &*self.c;
        let tattrs = &c.attrs[t.ty as usize - 1];
        for &sa in c.attrs[s.ty as usize - 1].iter() {
            for rule in c.av.run(sa, cl as u16) {
                let rk = match rule.kind {
                    RuleKind::Xperms(k) => k,
                    RuleKind::Av(_) | RuleKind::Type(_) => continue,
                };
                let Some(x) = c.xperms.get(rule.data as usize) else {
                    continue;
                };
                let matches_kind = match (kind, x.kind) {
                    (None, _) => true,
                    (
                        Some(XpermKind::Ioctl),
                        XpermsKind::IoctlFunction | XpermsKind::IoctlDriver,
                    ) => true,
                    (Some(XpermKind::Nlmsg), XpermsKind::Nlmsg) => true,
                    (Some(XpermKind::Ioctl), XpermsKind::Nlmsg | XpermsKind::Unknown(_)) => false,
                    (
                        Some(XpermKind::Nlmsg),
                        XpermsKind::IoctlFunction
                        | XpermsKind::IoctlDriver
                        | XpermsKind::Unknown(_),
                    ) => false,
                };
                if matches_kind
                    && self.on(rule.branch)
                    && tattrs.binary_search(&rule.target).is_ok()
                {
                    f(x, rk);
                }
            }
        }
        Ok(())
    }
}
